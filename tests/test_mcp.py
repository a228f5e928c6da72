"""``veduta mcp``: the real server as a subprocess, driven by the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import games

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TOOLS = {
    "list_assets",
    "write_source",
    "cook",
    "check",
    "why",
    "monitor_status",
    "inspect_model",
    "inspect_prefab",
    "inspect_world",
    "world_query",
    "world_map",
    "world_place",
    "world_terrain",
    "world_vegetation",
    "world_remove",
    "dump",
    "verify",
    "export_gltf",
    "preview_model",
    "preview_texture",
    "preview_world",
    "deps",
    "rename",
    "report",
}


@pytest.fixture
def sample_game(tmp_path) -> Path:
    """A game repo holding the repository's sample assets (nothing cooked)."""
    root = tmp_path / "game"
    games.sample_game(root)
    return root


def serve(root: Path, body):
    """Start ``veduta mcp --root ROOT`` and run ``await body(session)`` against it."""

    async def main():
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "veduta", "mcp", "--root", str(root)],
            cwd=str(root),
            env={"PYTHONPATH": str(REPO)},
        )  # the veduta under test
        with open(root / "server.log", "w") as log:
            async with stdio_client(params, errlog=log) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    return asyncio.run(main())


def cli_json(root: Path, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "veduta", *args, "--json"], cwd=root, capture_output=True, text=True, check=False
    )
    return json.loads(out.stdout)


CRATE_BIGGER = (REPO / "assets/models/crate.vmodel").read_text().replace('"size": [1, 1, 1]', '"size": [2, 2, 2]')


def image_of(result) -> bytes:
    """The one PNG image of a tool result."""
    images = [c for c in result.content if c.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    return base64.b64decode(images[0].data)


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_tools_are_listed_with_descriptions_and_typed_inputs(sample_game):
    async def body(s):
        return (await s.list_tools()).tools

    tools = {t.name: t for t in serve(sample_game, body)}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert len(t.description) > 40, t.name
        assert t.input_schema["type"] == "object"
    cell = tools["world_query"].input_schema["properties"]["cell"]
    assert cell["type"] == "array" and cell["minItems"] == cell["maxItems"] == 2
    assert [i["type"] for i in cell["prefixItems"]] == ["integer", "integer"]
    assert set(tools["world_query"].input_schema["required"]) == {"world", "cell"}
    kind = tools["world_terrain"].input_schema["properties"]["kind"]
    assert kind["enum"] == ["hill", "plain", "lake", "sea"]
    assert "metres" in tools["world_terrain"].description and "cells" in tools["world_vegetation"].description
    hints = {
        name: (t.annotations.read_only_hint, t.annotations.destructive_hint, t.annotations.idempotent_hint)
        for name, t in tools.items()
    }
    reads = {
        "list_assets",
        "check",
        "why",
        "monitor_status",
        "inspect_model",
        "dump",
        "verify",
        "deps",
    }
    assert {name for name, h in hints.items() if h[0]} == reads
    assert {name for name, h in hints.items() if h[1]} == {
        "write_source",
        "world_place",
        "world_terrain",
        "world_vegetation",
        "world_remove",
        "export_gltf",
        "rename",
        # they write the file asked for (out=, sheet=, views_file=, html=), replacing one that is there
        "inspect_world",
        "preview_model",
        "preview_texture",
        "preview_world",
        "report",
    }
    assert {name for name, h in hints.items() if not h[2]} == {"world_place", "rename"}
    assert hints["cook"] == (False, False, True)
    for t in tools.values():
        assert t.annotations.open_world_hint is False and t.output_schema["type"] == "object", t.name
    listed = tools["list_assets"].output_schema
    asset = listed["$defs"][listed["properties"]["assets"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert asset["required"] == ["kind", "name", "path", "state", "errors", "warnings"]
    assert asset["properties"]["state"]["enum"] == ["fresh", "stale", "failed", "never_cooked"]
    assert set(tools["write_source"].input_schema["required"]) == {"kind", "name", "text"}
    assert tools["write_source"].input_schema["properties"]["kind"]["enum"] == [
        "model",
        "texture",
        "material",
        "scene",
        "prefab",
        "world",
        "map",
    ]


def test_each_tool_returns_its_cli_json(sample_game):
    async def body(s):
        out = {}
        out["cook"] = await s.call_tool("cook", {})
        out["cook_again"] = await s.call_tool("cook", {"sources": ["models/crate.vmodel"]})
        out["query"] = await s.call_tool("world_query", {"world": "valley", "cell": [3, -4]})
        out["model"] = await s.call_tool("inspect_model", {"model": "tree"})
        out["prefab"] = await s.call_tool("inspect_prefab", {"prefab": "cottage"})
        out["world"] = await s.call_tool("inspect_world", {"world": "valley"})
        out["map"] = await s.call_tool("world_map", {"world": "valley", "at": [-60, 0], "size": [40, 30]})
        out["dump"] = await s.call_tool("dump", {"path": "assets/.cooked/models/crate.vda"})
        out["verify"] = await s.call_tool(
            "verify", {"paths": ["assets/.cooked/models/crate.vda", "assets/.cooked/worlds/valley.vda"]}
        )
        out["check"] = await s.call_tool("check", {})
        out["why"] = await s.call_tool("why", {})
        out["monitor"] = await s.call_tool("monitor_status", {})
        out["gltf"] = await s.call_tool("export_gltf", {"model": "tree", "out": "tree.glb"})
        out["gltf_world"] = await s.call_tool(
            "export_gltf", {"world": "valley", "chunk": [-4, 1], "radius": 2, "levels": True, "out": "valley.glb"}
        )
        out["preview"] = await s.call_tool("preview_model", {"model": "tree", "out": "tree.png"})
        out["list"] = await s.call_tool("list_assets", {"kind": "prefab"})
        out["write"] = await s.call_tool(
            "write_source", {"kind": "model", "name": "crate", "dry_run": True, "text": CRATE_BIGGER}
        )
        out["texture"] = await s.call_tool("preview_texture", {"texture": "hero", "out": "hero.png"})
        out["view"] = await s.call_tool("preview_world", {"world": "valley", "at": [-66, 4], "scale": 1})
        return out

    r = serve(sample_game, body)
    for name, res in r.items():
        assert not res.is_error, (name, text_of(res))
        assert json.loads(text_of(res)) == res.structured_content, name
    cook = r["cook"].structured_content
    assert cook["ok"] is True and cook["summary"]["cooked"] > 40 and cook["summary"]["failed"] == 0
    assert r["cook_again"].structured_content["summary"]["up_to_date"] == 1
    assert (sample_game / "assets/.cooked/worlds/valley.vda").is_file()
    assert r["query"].structured_content == cli_json(sample_game, "world", "query", "valley", "3,-4")
    assert r["model"].structured_content == cli_json(sample_game, "inspect", "model", "tree")
    assert r["prefab"].structured_content == cli_json(sample_game, "inspect", "prefab", "cottage")
    assert r["world"].structured_content == cli_json(sample_game, "inspect", "world", "valley")
    assert r["dump"].structured_content == cli_json(sample_game, "dump", "assets/.cooked/models/crate.vda")
    assert r["verify"].structured_content["ok"] is True
    assert r["check"].structured_content["ok"] is True
    assert r["why"].structured_content["stale"] == []
    assert r["monitor"].structured_content == cli_json(sample_game, "watch", "--status")
    assert r["monitor"].structured_content["running"] is False
    assert (sample_game / "tree.glb").read_bytes()[:4] == b"glTF"
    assert (sample_game / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r["gltf"].structured_content == cli_json(sample_game, "export", "gltf", "tree", "--out", "tree.glb")
    assert r["gltf_world"].structured_content == cli_json(
        sample_game,
        "export",
        "gltf",
        "--world",
        "valley",
        "--chunk",
        "-4,1",
        "--radius",
        "2",
        "--levels",
        "--out",
        "valley.glb",
    )
    assert {c["level"] for c in r["gltf_world"].structured_content["chunks"]} == {0, 1, 2}
    assert r["preview"].structured_content == cli_json(sample_game, "preview", "model", "tree", "--out", "tree.png")
    assert png_size(image_of(r["preview"])) == (
        r["preview"].structured_content["width"],
        r["preview"].structured_content["height"],
    )
    assert r["list"].structured_content == cli_json(sample_game, "list", "prefab")
    assert [a["name"] for a in r["list"].structured_content["assets"]] == ["camp", "cottage", "oak", "tree", "well"]
    (sample_game / "crate.json").write_text(CRATE_BIGGER)
    assert r["write"].structured_content == cli_json(sample_game, "write", "model", "crate", "crate.json", "--dry-run")
    assert r["write"].structured_content["changes"] == [
        {"path": "parts[0].size", "change": "changed", "old": [1, 1, 1], "new": [2, 2, 2]}
    ]
    texture = r["texture"].structured_content
    png = image_of(r["texture"])
    assert (sample_game / "hero.png").read_bytes() == png and png_size(png) == (texture["width"], texture["height"])
    assert (texture["texture"], texture["size"], texture["out"]) == ("hero", [64, 32], "hero.png")
    assert texture["frames"] == 8 and texture["clips"] == ["idle", "jump", "walk"]
    # the map: a PNG image of size x scale pixels, and its metadata as structured content
    meta = r["map"].structured_content
    png = image_of(r["map"])
    assert meta == cli_json(
        sample_game, "world", "map", "valley", "--at", "-60,0", "--size", "40,30", "--out", "map.png"
    )
    assert (sample_game / "map.png").read_bytes() == png
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    box = meta["map_box"]
    assert (width, height) == (meta["width"], meta["height"])
    assert (box[2] - box[0], box[3] - box[1]) == (40 * meta["scale"], 30 * meta["scale"])
    # the camera's view from a start cell, the draw report beside it
    view = r["view"].structured_content
    png = image_of(r["view"])
    assert view == cli_json(
        sample_game, "preview", "world", "valley", "--at", "-66,4", "--scale", "1", "--out", "view.png"
    ) | {"out": None}
    assert (sample_game / "view.png").read_bytes() == png and png_size(png) == (view["width"], view["height"])
    assert view["frames"][0]["width"] == 320 and view["draw"]["budget"] == 1200


def test_user_mistakes_are_tool_errors_and_the_server_goes_on(sample_game):
    async def body(s):
        out = {}
        out["unknown_world"] = await s.call_tool("world_query", {"world": "atlantis", "cell": [0, 0]})
        out["bad_cell"] = await s.call_tool("world_query", {"world": "valley", "cell": [1]})
        out["unknown_model"] = await s.call_tool("inspect_model", {"model": "ghost"})
        out["overlap"] = await s.call_tool(
            "world_place", {"world": "valley", "name": "second_well", "prefab": "well", "cell": [-70, 0]}
        )
        out["remove_none"] = await s.call_tool("world_remove", {"world": "valley", "name": "nothing_here"})
        out["bad_kind"] = await s.call_tool(
            "world_terrain", {"world": "valley", "name": "h", "kind": "volcano", "cell": [0, 0], "radius": 4}
        )
        out["still_up"] = await s.call_tool("world_query", {"world": "valley", "cell": [0, 0]})
        return out

    before = (sample_game / "assets/worlds/valley.vworld").read_bytes()
    r = serve(sample_game, body)
    assert r["unknown_world"].is_error and '"atlantis"' in text_of(r["unknown_world"])
    assert r["bad_cell"].is_error and "cell" in text_of(r["bad_cell"])
    assert r["unknown_model"].is_error and '"ghost"' in text_of(r["unknown_model"])
    assert r["overlap"].is_error and "WORLD_PLACE_OVERLAP" in text_of(r["overlap"])
    assert r["remove_none"].is_error and "nothing_here" in text_of(r["remove_none"])
    assert r["bad_kind"].is_error and "volcano" in text_of(r["bad_kind"])
    assert not r["still_up"].is_error and r["still_up"].structured_content["world"] == "valley"
    assert (sample_game / "assets/worlds/valley.vworld").read_bytes() == before


def test_concurrent_calls_are_answered_and_edits_of_one_world_never_interleave(sample_game):
    source = sample_game / "assets/worlds/valley.vworld"
    before = source.read_bytes()
    names = [f"well_{i}" for i in range(4)]

    async def body(s):
        queries = [s.call_tool("world_query", {"world": "valley", "cell": [x, -x]}) for x in range(6)]
        places = [
            s.call_tool("world_place", {"world": "valley", "name": n, "prefab": "well", "near": [-66, 4]})
            for n in names
        ]
        placed = await asyncio.gather(*queries, *places)
        inspected = await s.call_tool("inspect_world", {"world": "valley"})
        dry = await s.call_tool(
            "world_terrain",
            {
                "world": "valley",
                "name": "mound",
                "kind": "hill",
                "cell": [40, 40],
                "radius": 6,
                "height": 3,
                "dry_run": True,
            },
        )
        veg = await s.call_tool(
            "world_vegetation",
            {
                "world": "valley",
                "name": "tufts",
                "model": "grass_tuft",
                "density": 0.2,
                "cell": [-60, 10],
                "radius": 5,
                "dry_run": True,
            },
        )
        removed = await asyncio.gather(*[s.call_tool("world_remove", {"world": "valley", "name": n}) for n in names])
        return placed, inspected, dry, veg, removed

    placed, inspected, dry, veg, removed = serve(sample_game, body)
    for res in placed + removed + [inspected, dry, veg]:
        assert not res.is_error, text_of(res)
    cells = [tuple(r.structured_content["cell"]) for r in placed[6:]]
    assert len(set(cells)) == 4  # each edit saw the ones before it: four wells, four cells
    findings = inspected.structured_content["findings"]
    assert not [f for f in findings if f["code"] == "WORLD_PLACE_OVERLAP"]
    assert {"before", "after", "places_in_water"} <= set(dry.structured_content)
    assert {"plants", "triangles", "warnings"} <= set(veg.structured_content)
    assert source.read_bytes() == before  # four adds and four removes give the author's bytes back


def test_the_cook_never_imports_the_sdk(sample_game):
    code = (
        "import sys\nfrom veduta.faces.cli.main import main\nrc = main(['cook'])\n"
        "assert rc == 0, rc\nassert not [m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')]\n"
        "import veduta.dodo, veduta.api\nassert 'mcp' not in sys.modules\nprint('light')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=sample_game, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("light")


def _children_of_server(root: Path) -> set[int]:
    """The processes whose parent is the ``veduta mcp --root ROOT`` server (its cook workers)."""
    proc = Path("/proc")
    server, parents = None, {}
    for p in proc.iterdir():
        if not p.name.isdigit():
            continue
        try:
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            stat = (p / "stat").read_text()
        except OSError:
            continue
        if b"mcp" in cmd and str(root).encode() in cmd:
            server = int(p.name)
        parents[int(p.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return {pid for pid, ppid in parents.items() if ppid == server} if server else set()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts the server's processes in /proc")
def test_cook_jobs_two_cooks_in_worker_processes_byte_for_byte_as_jobs_one(sample_game, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(sample_game, other)

    def cook(root: Path, jobs: int) -> tuple[dict, set[int]]:
        seen: set[int] = set()

        async def body(s):
            call = asyncio.ensure_future(s.call_tool("cook", {"jobs": jobs}))
            while not call.done():  # the server's child processes while it cooks
                seen.update(_children_of_server(root))
                await asyncio.sleep(0.02)
            return await call

        res = serve(root, body)
        assert not res.is_error, text_of(res)
        return res.structured_content, seen

    two, workers_two = cook(sample_game, 2)
    one, workers_one = cook(other, 1)
    assert two["ok"] and one["ok"] and two["summary"]["cooked"] == one["summary"]["cooked"] > 40
    assert two == one
    assert workers_two and not workers_one  # jobs=2: the cook-ahead pool; jobs=1: the server's own process

    def cooked(root: Path) -> dict[str, bytes]:
        base = root / "assets/.cooked"
        return {str(f.relative_to(base)): f.read_bytes() for f in sorted(base.rglob("*.vda"))}

    assert cooked(sample_game) == cooked(other) and len(cooked(other)) == two["summary"]["cooked"]

    async def bad(s):
        return [await s.call_tool("cook", {"jobs": n}) for n in (0, 5000)]

    for res in serve(sample_game, bad):
        assert res.is_error and "jobs" in text_of(res)


def test_paths_are_confined_to_the_game_root(sample_game, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (sample_game / "escape").symlink_to(outside)  # a link inside the root to a folder outside it
    root = str(sample_game.resolve())

    async def body(s):
        out = {"cook": await s.call_tool("cook", {"sources": ["models/crate.vmodel"]})}
        out["dump_abs"] = await s.call_tool("dump", {"path": "/etc/passwd"})
        out["dump_up"] = await s.call_tool("dump", {"path": "../outside/x.vda"})
        out["dump_in"] = await s.call_tool("dump", {"path": str(sample_game / "assets/.cooked/models/crate.vda")})
        out["verify_one_out"] = await s.call_tool(
            "verify", {"paths": ["assets/.cooked/models/crate.vda", "escape/x.vda"]}
        )
        out["gltf_out"] = await s.call_tool("export_gltf", {"model": "crate", "out": "escape/crate.glb"})
        out["gltf_up"] = await s.call_tool("export_gltf", {"model": "crate", "out": "assets/../../crate.glb"})
        out["preview_out"] = await s.call_tool("preview_model", {"model": "crate", "out": str(outside / "c.png")})
        out["preview_in"] = await s.call_tool("preview_model", {"model": "crate", "out": "previews/crate.png"})
        # a written file is named for its format, and is not put among the sources
        out["gltf_named_wrong"] = await s.call_tool("export_gltf", {"model": "crate", "out": "pyproject.toml"})
        out["preview_named_wrong"] = await s.call_tool("preview_model", {"model": "crate", "out": "README"})
        out["preview_in_assets"] = await s.call_tool(
            "preview_model", {"model": "crate", "out": "assets/textures/crate.png"}
        )
        # sources are under assets/ only (a source file outside it is no source of this game)
        out["check_up"] = await s.call_tool("check", {"sources": ["../stray.vmodel"]})
        out["why_up"] = await s.call_tool("why", {"sources": ["../stray.vmodel"]})
        out["cook_up"] = await s.call_tool("cook", {"sources": ["../stray.vmodel"]})
        return out

    (sample_game / "previews").mkdir()  # no folder is made for an output (tests/test_named_files.py)
    (sample_game / "stray.vmodel").write_bytes((sample_game / "assets/models/crate.vmodel").read_bytes())
    (sample_game / "pyproject.toml").write_text("[tool.veduta]\n")
    before = {p: p.read_bytes() for p in [sample_game / "pyproject.toml", *sample_game.glob("assets/textures/*")]}
    r = serve(sample_game, body)
    assert "must end in .glb" in text_of(r["gltf_named_wrong"]) and r["gltf_named_wrong"].is_error
    assert "must end in .png" in text_of(r["preview_named_wrong"]) and r["preview_named_wrong"].is_error
    assert r["preview_in_assets"].is_error and "assets folder" in text_of(r["preview_in_assets"])
    assert {p: p.read_bytes() for p in before} == before and not (sample_game / "README").exists()
    for name in ("check_up", "why_up", "cook_up"):
        assert r[name].is_error and "no such source" in text_of(r[name]), (name, text_of(r[name]))
    for name in ("dump_abs", "dump_up", "verify_one_out", "gltf_out", "gltf_up", "preview_out"):
        assert r[name].is_error, name
        assert f"outside the game root {root}" in text_of(r[name]), text_of(r[name])
    assert "escape/x.vda" in text_of(r["verify_one_out"]) and '"/etc/passwd"' in text_of(r["dump_abs"])
    for name in ("cook", "dump_in", "preview_in"):
        assert not r[name].is_error, (name, text_of(r[name]))
    assert r["dump_in"].structured_content["chunks"][0]["meta"]["name"] == "crate"
    assert list(outside.iterdir()) == [] and not (tmp_path / "crate.glb").exists()
    assert (sample_game / "previews/crate.png").is_file()
    # the command line names any file its user likes (docs/mcp.md)
    assert cli_json(sample_game, "export", "gltf", "crate", "--out", str(outside / "c.glb"))["bytes"] > 0


def test_check_jobs_finds_what_one_process_finds(sample_game):
    broken = sample_game / "assets/models/broken.vmodel"
    broken.write_text('{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "radius": 2}]}\n')
    paint = sample_game / "assets/models/crate.vmodel"
    paint.write_text(paint.read_text().replace('"crate_wood"', '"crate_wod"'))  # a warning

    async def body(s):
        return [await s.call_tool("check", args) for args in ({"jobs": 1}, {"jobs": 2}, {})]

    one, two, default = serve(sample_game, body)
    for res in (one, two, default):
        assert not res.is_error, text_of(res)
    assert one.structured_content == two.structured_content == default.structured_content
    got = one.structured_content
    assert (got["ok"], got["errors"], got["warnings"], got["compiled"]) == (False, 1, 1, 58)
    assert got == cli_json(sample_game, "check", "-n", "2")


def test_the_format_docs_ship_with_the_package():
    """veduta://format/<kind> reads docs/formats/<kind>.md from the installed package (the
    veduta/docs/formats link, package data in pyproject.toml), so a wheel carries them."""
    import tomllib

    from veduta import api
    from veduta.base.kinds import NAMES

    for kind in NAMES:
        assert api.format_doc(kind) == (REPO / "docs/formats" / f"{kind}.md").read_text(encoding="utf-8")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "docs/formats/*.md" in config["tool"]["setuptools"]["package-data"]["veduta"]
    assert (REPO / "veduta/docs/formats").resolve() == (REPO / "docs/formats").resolve()


def test_without_the_sdk_the_message_names_an_install_command_that_works(sample_game):
    """No SDK importable: exit 2 with the command that installs the mcp extra's requirement into
    the Python running veduta (pip, given that command, finds nothing to parse wrong)."""
    import shlex
    import tomllib

    code = "import sys\nsys.modules['mcp'] = None\nfrom veduta.faces.cli.main import main\nsys.exit(main(['mcp']))\n"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=sample_game,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert out.returncode == 2 and out.stdout == ""
    message = out.stderr.strip()
    assert message.startswith("veduta mcp: the MCP SDK (") and "cannot be imported here" in message
    command = shlex.split(message.split("install it into this environment with: ", 1)[1])
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["mcp"]
    assert command[:4] == [sys.executable, "-m", "pip", "install"] and len(command) == 5
    from packaging.requirements import Requirement

    assert Requirement(command[4]) == Requirement(extra[0])
    # the command as given: pip accepts it (here the SDK is installed, so nothing is fetched)
    check = subprocess.run(
        [*command[:4], "--no-index", "--dry-run", command[4]], capture_output=True, text=True, timeout=300
    )
    assert check.returncode == 0, check.stderr


def test_deps_rename_and_report_over_mcp(sample_game):
    async def body(s):
        out = {}
        out["deps"] = await s.call_tool("deps", {"name": "bark", "reverse": True})
        out["all"] = await s.call_tool("deps", {"name": "valley", "depth": 0, "dot": True})
        out["orphans"] = await s.call_tool("deps", {"orphans": True})
        out["dry"] = await s.call_tool("rename", {"kind": "material", "old": "bark", "new": "wood", "dry_run": True})
        out["taken"] = await s.call_tool("rename", {"kind": "material", "old": "bark", "new": "leaf"})
        out["unknown"] = await s.call_tool("deps", {"name": "barkk"})
        out["cook"] = await s.call_tool("cook", {})
        out["report"] = await s.call_tool("report", {"html": "report.html"})
        out["outside"] = await s.call_tool("report", {"html": "../report.html"})
        return out

    async def rename(s):
        return {"rename": await s.call_tool("rename", {"kind": "material", "old": "bark", "new": "wood"})}

    r = serve(sample_game, body)
    for name in ("deps", "all", "orphans", "dry", "cook", "report"):
        assert not r[name].is_error, (name, text_of(r[name]))
        assert json.loads(text_of(r[name])) == r[name].structured_content, name
    assert r["deps"].structured_content == cli_json(sample_game, "deps", "bark", "--reverse")
    assert r["all"].structured_content == cli_json(sample_game, "deps", "valley", "--depth", "all", "--dot")
    assert r["all"].structured_content["dot"].startswith("digraph deps {")
    assert r["orphans"].structured_content["unused"] == [
        {"kind": "material", "name": "ground", "source": "materials/ground.vmaterial"}
    ]
    dry = r["dry"].structured_content
    assert dry["written"] is False and len(dry["edits"]) == 5 and dry["to"] == "assets/materials/wood.vmaterial"
    assert r["taken"].is_error and 'material "leaf" exists already' in text_of(r["taken"])
    assert r["unknown"].is_error and 'no asset "barkk" (did you mean bark or brick?)' in text_of(r["unknown"])
    report = r["report"].structured_content
    assert report["html"] == "report.html" and (sample_game / "report.html").is_file()
    assert report["total"]["cooked"] == report["total"]["assets"] > 50
    assert r["outside"].is_error and "outside the game root" in text_of(r["outside"])
    r = serve(sample_game, rename)
    assert json.loads(text_of(r["rename"])) == r["rename"].structured_content
    assert r["rename"].structured_content["written"] is True
    assert (sample_game / "assets/materials/wood.vmaterial").is_file()
    assert not (sample_game / "assets/materials/bark.vmaterial").exists()


def test_check_and_cook_take_strict_as_the_cli_does(sample_game):
    """The gate over MCP: ``strict`` makes a warning fail check and cook, as --strict does."""
    paint = sample_game / "assets/models/crate.vmodel"
    paint.write_text(paint.read_text().replace('"crate_wood"', '"crate_wod"'))  # a warning

    async def body(s):
        return [
            await s.call_tool(tool, args)
            for tool, args in (
                ("check", {"jobs": 1}),
                ("check", {"jobs": 1, "strict": True}),
                ("cook", {"jobs": 1}),
                ("cook", {"jobs": 1, "strict": True}),
            )
        ]

    check, check_strict, cook, cook_strict = serve(sample_game, body)
    assert check.structured_content["ok"] and not check_strict.structured_content["ok"]
    cli = cli_json(sample_game, "check", "-n", "1", "--strict")  # (after the cook: its sources are fresh)
    assert check_strict.structured_content["diagnostics"] == cli["diagnostics"] and not cli["ok"]
    assert [d["severity"] for d in check_strict.structured_content["diagnostics"]] == ["error"]
    assert cook.structured_content["ok"] and cook.structured_content["summary"]["warnings"] == 1
    summary = cook_strict.structured_content["summary"]
    assert not cook_strict.structured_content["ok"] and summary["strict"] and summary["standing_warnings"] == 1


def test_docs_table_lists_every_tool_with_its_hints():
    """docs/mcp.md's table of tools has one row per tool, and its hints (R, D, I) are the
    annotations the server gives (a tool that writes a file when asked is not read-only)."""
    from veduta.faces.mcp.server import TOOLS

    rows: dict[str, str] = {}
    for line in (REPO / "docs" / "mcp.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.replace("\\|", "/").strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[0].strip("`") in TOOLS:
            assert cells[0].strip("`") not in rows, cells[0]
            rows[cells[0].strip("`")] = cells[2]
    assert set(rows) == set(TOOLS)
    for name, a in TOOLS.items():
        want = [h for h, on in (("R", a.read_only_hint), ("D", a.destructive_hint), ("I", a.idempotent_hint)) if on]
        assert rows[name].split() == want, name


def test_the_read_only_tools_write_nothing(sample_game):
    """Every tool annotated readOnlyHint, called through the SDK's client on a game never cooked
    (where a tool that cooks what is stale would write), leaves every file of the game as it was
    (once inspect_prefab, world_query and world_map cooked, and previews wrote `out`, under that
    hint). A tool's mistake (a missing argument) is a tool error, which writes nothing either."""
    import os

    from veduta.faces.mcp.server import TOOLS

    args = {
        "list_assets": {},
        "check": {},
        "why": {},
        "monitor_status": {},
        "inspect_model": {"model": "crate"},
        "dump": {"path": "assets/models/crate.vmodel"},
        "verify": {"paths": ["assets/models/crate.vmodel"]},
        "deps": {},
    }
    assert set(args) == {n for n, a in TOOLS.items() if a.read_only_hint}

    def files() -> dict[str, tuple[int, int]]:
        found = {}
        for d, _dirs, names in os.walk(sample_game):
            for n in names:
                if n != "server.log":
                    st = os.stat(os.path.join(d, n))
                    found[os.path.join(d, n)] = (st.st_size, st.st_mtime_ns)
        return found

    before = files()

    async def body(s):
        for name, a in args.items():
            r = await s.call_tool(name, a)
            assert r.content, name

    serve(sample_game, body)
    assert files() == before


def test_two_writes_of_one_source_at_once_take_turns(sample_game):
    """Two write_source calls of one model at the same time: the second reports the change from
    what the first wrote (once both reported the original size as old, and the second's report
    hid that it wrote over the first's)."""
    texts = {n: CRATE_BIGGER.replace('"size": [2, 2, 2]', f'"size": [{n}, {n}, {n}]') for n in (2, 3)}

    async def body(s):
        return await asyncio.gather(
            *(s.call_tool("write_source", {"kind": "model", "name": "crate", "text": t}) for t in texts.values())
        )

    results = serve(sample_game, body)
    olds = {}
    for n, r in zip(texts, results, strict=True):
        assert not r.is_error, text_of(r)
        (c,) = [c for c in r.structured_content["changes"] if c["path"] == "parts[0].size"]
        olds[n] = c["old"]
    first = next(n for n, old in olds.items() if old == [1, 1, 1])  # the call that went first
    (second,) = set(texts) - {first}
    assert olds[second] == [first] * 3, olds  # changed from what the first wrote
    assert (sample_game / "assets/models/crate.vmodel").read_text() == texts[second]


def test_world_edits_answer_by_their_output_schema(sample_game):
    """world_place at a given cell (searched is null) and world_terrain that leaves places in water
    (their names) answer with their result, not a schema error after the edit was written."""
    shutil.copytree(sample_game, sample_game.parent / "twin")

    async def body(s):
        place = await s.call_tool("world_place", {"world": "valley", "name": "w2", "prefab": "well", "cell": [-40, 20]})
        sea = await s.call_tool(
            "world_terrain", {"world": "valley", "name": "flood", "kind": "lake", "cell": [-66, 4], "radius": 40}
        )
        return place, sea

    place, sea = serve(sample_game, body)
    assert not place.is_error and not sea.is_error, (text_of(place), text_of(sea))
    assert place.structured_content["searched"] is None and place.structured_content["written"] is True
    wet = sea.structured_content["places_in_water"]
    assert wet and all(isinstance(n, str) for n in wet)
    twin = sample_game.parent / "twin"
    cli_place = cli_json(twin, "world", "place", "valley", "w2", "well", "--cell=-40,20")
    cli_sea = cli_json(twin, "world", "terrain", "valley", "flood", "--kind", "lake", "--cell=-66,4", "--radius", "40")
    assert place.structured_content["cell"] == cli_place["cell"] and wet == cli_sea["places_in_water"]
    assert (sample_game / "assets/worlds/valley.vworld").read_bytes() == (
        twin / "assets/worlds/valley.vworld"
    ).read_bytes()
