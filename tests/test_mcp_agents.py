"""Several agents at once: ``veduta mcp`` servers (real subprocesses, the SDK's own client) on one game."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def game(tmp_path) -> Path:
    root = tmp_path / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    return root


async def _agent(root: Path, tag: str, calls: list[tuple[str, dict]], ready: asyncio.Barrier | None = None) -> list:
    """Start a server for *root*, wait for *ready* (every agent started), make *calls* in order."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "veduta", "mcp", "--root", str(root)],
                                   cwd=str(root), env={"PYTHONPATH": str(REPO)})
    with open(root.parent / f"server-{tag}.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                if ready is not None:
                    await ready.wait()  # the agents' calls overlap, however long each server took to start
                return [await session.call_tool(name, args) for name, args in calls]


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_two_servers_editing_one_world_lose_no_edit(game):
    """Two agents (two servers, as two processes) place wells near one cell at the same time:
    every edit is written, each on the result of the ones before it (no edit written over, none
    refused because the other server wrote first)."""
    source = game / "assets/worlds/valley.vworld"
    names = {tag: [f"{tag}_well_{i}" for i in range(6)] for tag in ("a", "b")}

    async def both():
        ready = asyncio.Barrier(len(names))
        return await asyncio.gather(*[
            _agent(game, tag, [("world_place", {"world": "valley", "name": n, "prefab": "well", "near": [40, 40]})
                               for n in ns], ready) for tag, ns in names.items()])

    results = [r for rs in asyncio.run(both()) for r in rs]
    for res in results:
        assert not res.is_error, text_of(res)
        assert res.structured_content["written"] is True
    cells = {tuple(r.structured_content["cell"]) for r in results}
    assert len(cells) == 12  # each edit saw every edit written before it
    placed = re.findall(r'"name": "([ab]_well_\d)"', source.read_text())
    assert sorted(placed) == sorted(n for ns in names.values() for n in ns)


def test_check_and_why_take_the_paths_the_tools_report(game):
    """An agent feeds a path the tools report (why's and a diagnostic's ``file``: from the game root)
    back to check and why, as it may to cook, and gets what the CLI gives for it."""
    import json
    import subprocess

    (game / "assets/models/broken.vmodel").write_text('{"veduta": "model/1", "parts": 3}\n')
    shutil.copy(game / "assets/models/crate.vmodel", game.parent / "stray.vmodel")  # a source outside the game
    calls = [("why", {}), ("check", {"sources": ["assets/models/broken.vmodel"]}),
             ("why", {"sources": ["assets/models/crate.vmodel", "models/barrel.vmodel"]}),
             ("check", {"sources": ["../stray.vmodel"]}),
             ("check", {"sources": ["assets/../dodo.py"]})]
    why_all, check, why, up, outside = asyncio.run(_agent(game, "paths", calls))
    stale = {s["file"]: s for s in why_all.structured_content["stale"]}
    assert "assets/models/broken.vmodel" in stale
    assert not check.is_error, text_of(check)
    cli = subprocess.run([sys.executable, "-m", "veduta", "check", "assets/models/broken.vmodel", "--json"],
                         cwd=game, capture_output=True, text=True, env={"PYTHONPATH": str(REPO)})
    assert check.structured_content == json.loads(cli.stdout)
    assert check.structured_content["checked"] == 1 and check.structured_content["errors"] >= 1
    assert not why.is_error, text_of(why)
    assert [s["source"] for s in why.structured_content["stale"]] == ["models/barrel.vmodel", "models/crate.vmodel"]
    for res in (up, outside):  # still only source files under assets/
        assert res.is_error and "no such source" in text_of(res), text_of(res)


def test_export_gltf_without_a_model_or_a_world_says_what_it_needs(game):
    neither, both = asyncio.run(_agent(game, "export", [
        ("export_gltf", {"out": "x.glb"}),
        ("export_gltf", {"out": "x.glb", "model": "crate", "world": "valley", "chunk": [0, 0]})]))
    assert neither.is_error and "needs a model name, or a world with a chunk" in text_of(neither)
    assert "not both" not in text_of(neither)  # it was told "not both" when it gave neither
    assert both.is_error and "not both" in text_of(both)
    assert not (game / "x.glb").exists()


def test_terrain_and_place_inputs_say_their_units_defaults_and_ranges(game):
    """What an agent reads before its first call: a hill's height is added, a plain's, lake's or
    sea's is a level; the defaults; the ranges the core enforces are in the schema."""

    async def body():
        params = StdioServerParameters(command=sys.executable, args=["-m", "veduta", "mcp", "--root", str(game)],
                                       cwd=str(game), env={"PYTHONPATH": str(REPO)})
        async with stdio_client(params, errlog=open(game.parent / "server-list.log", "w")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return {t.name: t for t in (await session.list_tools()).tools}

    tools = asyncio.run(body())
    terrain = tools["world_terrain"].input_schema["properties"]
    height = terrain["height"]["description"]
    assert "added" in height and "level" in height and "default 4" in height
    assert "default lake 2, sea 8" in terrain["depth"]["description"]
    assert "0..1" in terrain["roughness"]["description"]
    assert (terrain["radius"]["minimum"], terrain["radius"]["maximum"]) == (1, 16384)
    place = tools["world_place"].input_schema["properties"]
    assert (place["search"]["minimum"], place["search"]["maximum"]) == (1, 256)
    assert "+Y" in place["rotation"]["description"]
