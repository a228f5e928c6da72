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

from tests import test_mcp  # noqa: E402
from tests.test_mcp import REPO, text_of  # noqa: E402

sample_game = test_mcp.sample_game  # the fixture: a game repo of the sample assets


async def _agent(root: Path, tag: str, calls: list[tuple[str, dict]], ready: asyncio.Barrier | None = None) -> list:
    """Start a server for *root*, wait for *ready* (every agent started), make *calls* in order."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "veduta", "mcp", "--root", str(root)],
        cwd=str(root),
        env={"PYTHONPATH": str(REPO)},
    )
    with open(root.parent / f"server-{tag}.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                if ready is not None:
                    await ready.wait()  # the agents' calls overlap, however long each server took to start
                return [await session.call_tool(name, args) for name, args in calls]


def test_two_servers_editing_one_world_lose_no_edit(sample_game):
    """Two agents (two servers, as two processes) place wells near one cell at the same time:
    every edit is written, each on the result of the ones before it (no edit written over, none
    refused because the other server wrote first)."""
    source = sample_game / "assets/worlds/valley.vworld"
    names = {tag: [f"{tag}_well_{i}" for i in range(6)] for tag in ("a", "b")}

    async def both():
        ready = asyncio.Barrier(len(names))
        return await asyncio.gather(
            *[
                _agent(
                    sample_game,
                    tag,
                    [("world_place", {"world": "valley", "name": n, "prefab": "well", "near": [40, 40]}) for n in ns],
                    ready,
                )
                for tag, ns in names.items()
            ]
        )

    results = [r for rs in asyncio.run(both()) for r in rs]
    for res in results:
        assert not res.is_error, text_of(res)
        assert res.structured_content["written"] is True
    cells = {tuple(r.structured_content["cell"]) for r in results}
    assert len(cells) == 12  # each edit saw every edit written before it
    placed = re.findall(r'"name": "([ab]_well_\d)"', source.read_text())
    assert sorted(placed) == sorted(n for ns in names.values() for n in ns)


def test_check_and_why_take_the_paths_the_tools_report(sample_game):
    """An agent feeds a path the tools report (why's and a diagnostic's ``file``: from the game root)
    back to check and why, as it may to cook, and gets what the CLI gives for it."""
    import json
    import subprocess

    (sample_game / "assets/models/broken.vmodel").write_text('{"veduta": "model/1", "parts": 3}\n')
    shutil.copy(sample_game / "assets/models/crate.vmodel", sample_game.parent / "stray.vmodel")  # outside the game
    calls = [
        ("why", {}),
        ("check", {"sources": ["assets/models/broken.vmodel"]}),
        ("why", {"sources": ["assets/models/crate.vmodel", "models/barrel.vmodel"]}),
        ("check", {"sources": ["../stray.vmodel"]}),
        ("check", {"sources": ["assets/../dodo.py"]}),
    ]
    why_all, check, why, up, outside = asyncio.run(_agent(sample_game, "paths", calls))
    stale = {s["file"]: s for s in why_all.structured_content["stale"]}
    assert "assets/models/broken.vmodel" in stale
    assert not check.is_error, text_of(check)
    cli = subprocess.run(
        [sys.executable, "-m", "veduta", "check", "assets/models/broken.vmodel", "--json"],
        cwd=sample_game,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO)},
    )
    assert check.structured_content == json.loads(cli.stdout)
    assert check.structured_content["checked"] == 1 and check.structured_content["errors"] >= 1
    assert not why.is_error, text_of(why)
    assert [s["source"] for s in why.structured_content["stale"]] == ["models/barrel.vmodel", "models/crate.vmodel"]
    for res in (up, outside):  # still only source files under assets/
        assert res.is_error and "no such source" in text_of(res), text_of(res)


def test_export_gltf_without_a_model_or_a_world_says_what_it_needs(sample_game):
    neither, both = asyncio.run(
        _agent(
            sample_game,
            "export",
            [
                ("export_gltf", {"out": "x.glb"}),
                ("export_gltf", {"out": "x.glb", "model": "crate", "world": "valley", "chunk": [0, 0]}),
            ],
        )
    )
    assert neither.is_error and "needs a model name, or a world with a chunk" in text_of(neither)
    assert "not both" not in text_of(neither)  # it was told "not both" when it gave neither
    assert both.is_error and "not both" in text_of(both)
    assert not (sample_game / "x.glb").exists()


def test_terrain_and_place_inputs_say_their_units_defaults_and_ranges(sample_game):
    """What an agent reads before its first call: a hill's height is added, a plain's, lake's or
    sea's is a level; the defaults; the ranges the core enforces are in the schema."""

    async def body():
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "veduta", "mcp", "--root", str(sample_game)],
            cwd=str(sample_game),
            env={"PYTHONPATH": str(REPO)},
        )
        async with stdio_client(params, errlog=open(sample_game.parent / "server-list.log", "w")) as (read, write):
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


def test_vegetation_over_the_triangle_budget_is_a_warning_of_its_report(sample_game):
    """world-format.md: plant it with world_vegetation, "heed its warnings": a grove that takes its
    view far over the 1200-triangle budget says so in the report, a tuft or two does not."""
    import json
    import subprocess

    grove = {
        "world": "valley",
        "name": "grove",
        "prefab": "oak",
        "density": 0.3,
        "cell": [40, 40],
        "radius": 10,
        "dry_run": True,
    }
    tuft = {
        "world": "valley",
        "name": "tuft",
        "model": "grass_tuft",
        "density": 0.05,
        "cell": [40, 40],
        "radius": 2,
        "dry_run": True,
    }
    heavy, light = asyncio.run(_agent(sample_game, "veg", [("world_vegetation", grove), ("world_vegetation", tuft)]))
    r = heavy.structured_content
    assert r["view"]["triangles"] > r["view"]["budget"] and r["triangles"] * 10 >= r["view"]["budget"]
    budget = [w for w in r["warnings"] if w["code"] == "WORLD_CHUNK_BUDGET"]
    assert len(budget) == 1 and w_mentions(budget[0]["message"], r)
    assert light.structured_content["triangles"] * 10 < light.structured_content["view"]["budget"]
    assert not [w for w in light.structured_content["warnings"] if w["code"] == "WORLD_CHUNK_BUDGET"]
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "veduta",
            "world",
            "vegetation",
            "valley",
            "grove",
            "--prefab",
            "oak",
            "--density",
            "0.3",
            "--cell",
            "40,40",
            "--radius",
            "10",
            "--dry-run",
            "--json",
        ],
        cwd=sample_game,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO)},
    )
    assert json.loads(cli.stdout) == r


def w_mentions(message: str, report: dict) -> bool:
    """The warning gives the figures an author acts on: the view's total, the rule's share, the budget."""
    v = report["view"]
    return all(str(n) in message for n in (v["triangles"], v["without_rule"], report["triangles"], v["budget"]))
