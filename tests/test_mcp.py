"""veduta mcp: the real server as a subprocess, driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from tests.gamerepo import BAD  # noqa: E402

ASSETS = Path(__file__).resolve().parent.parent / "assets"


@pytest.fixture(scope="module")
def valley(tmp_path_factory) -> Path:
    """A game with the sample assets (the valley world, its prefabs and models), nothing cooked."""
    root = tmp_path_factory.mktemp("mcp") / "game"
    shutil.copytree(ASSETS, root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    return root


def session(root: Path, body) -> None:
    """Start ``veduta mcp --root ROOT`` and run ``await body(client)``."""

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "veduta.cli", "mcp", "--root", str(root)],
                                       cwd=str(root.parent))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    await client.initialize()
                    await body(client)

    anyio.run(main)


def test_tools_results_and_errors(valley):
    async def body(c: ClientSession):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) >= {"cook", "dump", "verify", "inspect_model", "world_query", "world_map"}
        for t in tools.values():
            assert t.description and len(t.description) > 40, t.name
            assert t.input_schema["type"] == "object"
        assert tools["world_query"].input_schema["required"] == ["world", "cell"]

        r = await c.call_tool("cook", {"sources": ["models/crate.vmodel"]})
        assert not r.is_error and r.structured_content["ok"] is True
        assert r.structured_content["summary"]["cooked"] == 1
        assert json.loads(r.content[0].text) == r.structured_content

        r = await c.call_tool("dump", {"path": "assets/.cooked/models/crate.vda"})
        assert [ch["type"] for ch in r.structured_content["chunks"]] == ["META", "MESH"]
        r = await c.call_tool("verify", {"paths": ["assets/.cooked/models/crate.vda", "nope.vda"]})
        assert [f["ok"] for f in r.structured_content["files"]] == [True, False]

        r = await c.call_tool("inspect_model", {"model": "crate"})
        assert r.structured_content["status"] == "ok" and r.structured_content["name"] == "crate"

        r = await c.call_tool("world_query", {"world": "valley", "cell": [-70, 0]})
        assert not r.is_error, r.content
        assert r.structured_content["owner"] == {"kind": "place", "name": "village_well", "prefab": "well"}

        r = await c.call_tool("world_map", {"world": "valley", "at": [-70, 0], "size": [40, 30]})
        image = r.content[0]
        assert image.type == "image" and image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
        assert r.structured_content == {"world": "valley", "at": [-70, 0], "size": [40, 30], "origin": [-90, -15],
                                        "scale": 8, "width": 320, "height": 240}

        # user mistakes: tool errors naming the problem; the server answers on
        for name, args, said in [
            ("world_query", {"world": "nowhere", "cell": [0, 0]}, 'no world "nowhere"'),
            ("world_query", {"world": "valley", "cell": [0]}, "cell"),
            ("world_query", {"world": "valley", "cell": [1 << 30, 0]}, "far outside"),
            ("world_map", {"world": "valley", "size": [0, 5]}, "size 0,5 out of range"),
            ("inspect_model", {"model": "ghost"}, 'no model named "ghost"'),
            ("dump", {"path": "nope.vda"}, "nope.vda"),
            ("cook", {"sources": ["models/ghost.vmodel"]}, "no such source"),
            ("no_such_tool", {}, "no_such_tool"),
        ]:
            r = await c.call_tool(name, args)
            assert r.is_error, (name, args)
            assert said in r.content[0].text, (name, r.content[0].text)
        r = await c.call_tool("world_query", {"world": "valley", "cell": [0, 0]})
        assert not r.is_error

    session(valley, body)


def test_cook_reports_every_diagnostic(valley, tmp_path):
    root = tmp_path / "game"
    shutil.copytree(valley / "assets" / "models", root / "assets" / "models")
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    (root / "assets/models/crate.vmodel").write_text(BAD)

    async def body(c: ClientSession):
        r = await c.call_tool("cook", {})
        assert not r.is_error  # a source with errors is data, not a tool error
        d = r.structured_content
        assert d["ok"] is False and d["summary"]["failed"] == 1
        assert {"file": "assets/models/crate.vmodel", "line": 5, "col": 68, "path": "parts[1].segments",
                "severity": "error", "message": "2 out of range [3, 256]"} in d["diagnostics"]

    session(root, body)


def test_concurrent_calls_are_all_answered(valley):
    async def body(c: ClientSession):
        results: dict[int, object] = {}

        async def call(i: int):
            if i % 3 == 0:
                results[i] = await c.call_tool("world_query", {"world": "valley", "cell": [i, -i]})
            elif i % 3 == 1:
                results[i] = await c.call_tool("inspect_model", {"model": "crate"})
            else:
                results[i] = await c.call_tool("world_query", {"world": "nowhere", "cell": [0, 0]})

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(call, i)
        assert len(results) == 12
        for i, r in results.items():
            assert r.is_error == (i % 3 == 2)
            if i % 3 == 0:
                assert r.structured_content["cell"] == [i, -i]

    session(valley, body)


def test_cook_does_not_import_the_sdk(valley):
    code = ("import sys, veduta.cli as c; c.main(['cook', 'models/crate.vmodel']); "
            "bad = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'pydantic', 'starlette'))); "
            "print('IMPORTED', bad)")
    cp = subprocess.run([sys.executable, "-c", code], cwd=valley, capture_output=True, text=True, timeout=300)
    assert "IMPORTED []" in cp.stdout, cp.stdout + cp.stderr
    code = "import sys, veduta.dodo; print('IMPORTED', sorted(m for m in sys.modules if m.startswith('mcp')))"
    cp = subprocess.run([sys.executable, "-c", code], cwd=valley, capture_output=True, text=True, timeout=300)
    assert "IMPORTED []" in cp.stdout, cp.stdout + cp.stderr
