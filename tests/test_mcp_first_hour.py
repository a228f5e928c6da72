"""An agent's first hour with ``veduta mcp``, through the MCP SDK's own client over stdio and
nothing else (no docs, no file access): discover the game, read the format, write a model (a
mistake first), look at it, make a prefab of it, place it in the sample world, inspect, cook.
Then progress notifications and cancellation of a long call."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tests import test_mcp  # noqa: E402
from tests.gamerepo import GATE_WAIT  # noqa: E402
from tests.test_mcp import REPO, text_of  # noqa: E402

sample_game = test_mcp.sample_game  # the fixture: a game repo of the sample assets, nothing cooked

#: a street lamp, with two mistakes an agent makes: a cylinder's segments below 3, a box's size of two numbers
LAMP_WRONG = """{
  "veduta": "model/1",
  "pivot": "bottom-center",
  "parts": [
    { "shape": "cylinder", "radius": 0.06, "height": 2.6, "segments": 2, "position": [0, 1.3, 0],
      "material": "iron_dark" },
    { "shape": "box", "size": [0.3, 0.3], "position": [0, 2.75, 0], "material": "lamp_glas" }
  ]
}
"""
#: the errors mended; the material's name still misspelt (a warning: the cook writes it, without the material)
LAMP_TYPO = LAMP_WRONG.replace('"segments": 2', '"segments": 8').replace("[0.3, 0.3]", "[0.3, 0.3, 0.3]")
LAMP = LAMP_TYPO.replace("lamp_glas", "lamp_glass")
PREFAB = """{
  "veduta": "prefab/1",
  "footprint": [1, 1],
  "tags": ["lamp"],
  "entities": [ { "name": "lamp", "kind": "light", "model": "street_lamp",
                  "hitbox": { "min": [-0.2, 0, -0.2], "max": [0.2, 2.9, 0.2] } } ]
}
"""


def col(text: str, line: int, what: str) -> int:
    """The 1-based column of *what* on line *line* of *text*."""
    return text.splitlines()[line - 1].index(what) + 1


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def image_of(result) -> bytes:
    images = [c for c in result.content if c.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    return base64.b64decode(images[0].data)


async def _session(root: Path, body, argv: list[str] | None = None, env: dict[str, str] | None = None):
    """``await body(session)`` with ``veduta mcp`` serving *root* (or ``python *argv*``; in the
    environment *env*, by default only PYTHONPATH), its stderr in server.log beside *root*."""
    params = StdioServerParameters(
        command=sys.executable,
        args=argv or ["-m", "veduta", "mcp", "--root", str(root)],
        cwd=str(root),
        env=env or {"PYTHONPATH": str(REPO)},
    )
    with open(root.parent / "server.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)


def test_an_agents_first_hour(sample_game):
    lamp_source = sample_game / "assets/models/street_lamp.vmodel"
    world_before = (sample_game / "assets/worlds/valley.vworld").read_text()
    sources = sorted(p for p in (sample_game / "assets").rglob("*") if p.suffix.startswith(".v") and p.is_file())

    async def hour(s: ClientSession) -> dict:
        r: dict = {"init": None}
        r["tools"] = {t.name: t for t in (await s.list_tools()).tools}
        r["assets"] = await s.call_tool("list_assets", {})
        r["resources"] = (await s.list_resources()).resources
        r["templates"] = (await s.list_resource_templates()).resource_templates
        r["schema"] = (await s.read_resource("veduta://schema/model")).contents[0]
        r["format"] = (await s.read_resource("veduta://format/model")).contents[0]
        r["crate"] = (await s.read_resource("veduta://source/model/crate")).contents[0]
        r["wrong"] = await s.call_tool("write_source", {"kind": "model", "name": "street_lamp", "text": LAMP_WRONG})
        r["after_wrong"] = lamp_source.exists()
        r["typo"] = await s.call_tool("write_source", {"kind": "model", "name": "street_lamp", "text": LAMP_TYPO})
        r["written"] = await s.call_tool("write_source", {"kind": "model", "name": "street_lamp", "text": LAMP})
        r["inspect_model"] = await s.call_tool("inspect_model", {"model": "street_lamp"})
        r["preview"] = await s.call_tool("preview_model", {"model": "street_lamp"})
        r["prefab"] = await s.call_tool("write_source", {"kind": "prefab", "name": "street_lamp", "text": PREFAB})
        r["inspect_prefab"] = await s.call_tool("inspect_prefab", {"prefab": "street_lamp"})
        r["place"] = await s.call_tool(
            "world_place", {"world": "valley", "name": "square_lamp", "prefab": "street_lamp", "near": [-66, 4]}
        )
        cell = r["place"].structured_content["cell"]
        r["query"] = await s.call_tool("world_query", {"world": "valley", "cell": cell})
        r["inspect"] = await s.call_tool("inspect_world", {"world": "valley", "sheet": True})
        r["cook"] = await s.call_tool("cook", {})
        r["listed_after"] = await s.call_tool("list_assets", {"kind": "model"})
        r["resources_after"] = (await s.list_resources()).resources
        r["lamp_resource"] = (await s.read_resource("veduta://source/model/street_lamp")).contents[0]
        return r

    r = asyncio.run(_session(sample_game, hour))

    # discover: every source, by kind and name, none cooked yet, no errors
    assets = r["assets"].structured_content
    assert not r["assets"].is_error and json.loads(text_of(r["assets"])) == assets
    assert [a["path"] for a in assets["assets"]] == [str(p.relative_to(sample_game)) for p in sources]
    assert assets["counts"]["never_cooked"] == len(sources) and assets["counts"]["failed"] == 0
    crate = next(a for a in assets["assets"] if a["name"] == "crate")
    assert crate == {
        "kind": "model",
        "name": "crate",
        "path": "assets/models/crate.vmodel",
        "state": "never_cooked",
        "errors": 0,
        "warnings": 0,
    }
    uris = {str(x.uri) for x in r["resources"]}
    assert {
        "veduta://schema/model",
        "veduta://format/model",
        "veduta://source/model/crate",
        "veduta://source/world/valley",
    } <= uris
    assert len([u for u in uris if u.startswith("veduta://source/")]) == len(sources)
    assert {t.uri_template for t in r["templates"]} >= {"veduta://source/model/{name}", "veduta://source/world/{name}"}

    # read the format: the schema says what a part is; the doc has the reference; a source to learn from
    schema = json.loads(r["schema"].text)
    assert schema["$schema"].startswith("https://json-schema.org/") and "parts" in schema["required"]
    assert "cylinder" in json.dumps(schema["properties"]["parts"])
    assert r["format"].mime_type == "text/markdown" and r["format"].text.startswith("# Model format reference")
    assert r["crate"].text == (sample_game / "assets/models/crate.vmodel").read_text()

    # a mistake: refused, every error located, nothing written
    wrong = r["wrong"]
    assert wrong.is_error and not r["after_wrong"]
    refusal = wrong.structured_content
    assert refusal["refused"] is True
    assert [(f["line"], f["col"], f["path"], f["severity"], f["code"]) for f in refusal["findings"]] == [
        (5, col(LAMP_WRONG, 5, "2, "), "parts[0].segments", "error", "MODEL_SOURCE_ERROR"),
        (7, col(LAMP_WRONG, 7, "[0.3, 0.3]"), "parts[1].size", "error", "MODEL_SOURCE_ERROR"),
    ]
    assert refusal["findings"][0]["message"] == "2 out of range [3, 256]"
    assert {f["file"] for f in refusal["findings"]} == {"assets/models/street_lamp.vmodel"}
    assert "nothing was written" in text_of(wrong) and "parts[0].segments" in text_of(wrong)

    # mended: written, with a warning that names the material meant
    typo = r["typo"].structured_content
    assert (typo["action"], typo["written"], typo["path"]) == ("created", True, "assets/models/street_lamp.vmodel")
    assert [(d["line"], d["path"], d["code"], d["message"]) for d in typo["diagnostics"]] == [
        (
            7,
            "parts[1].material",
            "MISSING_REFERENCE",
            'material "lamp_glas" does not exist (not checked); did you mean lamp_glass?',
        )
    ]
    # and replaced: what changed is said
    written = r["written"].structured_content
    assert (written["action"], written["written"], written["diagnostics"]) == ("replaced", True, [])
    assert written["changes"] == [
        {"path": "parts[1].material", "change": "changed", "old": "lamp_glas", "new": "lamp_glass"}
    ]
    assert written["lines"] == {"added": 1, "removed": 1}
    assert lamp_source.read_text() == LAMP

    # look at it: an image comes back, the size the data says, with no file written
    preview = r["preview"]
    assert not preview.is_error, text_of(preview)
    drawn = preview.structured_content
    assert png_size(image_of(preview)) == (drawn["width"], drawn["height"])
    triangles = r["inspect_model"].structured_content["triangles"]
    assert drawn["model"] == "street_lamp" and drawn["levels"][0]["triangles"] == triangles > 12
    assert drawn["findings"] == [] and drawn["out"] is None
    assert not list(sample_game.glob("*.png"))

    # a prefab of it, placed in the valley where it fits
    assert r["prefab"].structured_content["action"] == "created"
    prefab = r["inspect_prefab"].structured_content
    assert prefab["triangles"] == drawn["levels"][0]["triangles"] and prefab["footprint"] == [1, 1]
    place = r["place"].structured_content
    assert not r["place"].is_error and place["written"] and place["prefab"] == "street_lamp"
    cell = place["cell"]
    assert max(abs(cell[0] + 66), abs(cell[1] - 4)) <= 32
    assert r["query"].structured_content["owner"]["name"] == "square_lamp"
    world_after = json.loads((sample_game / "assets/worlds/valley.vworld").read_text())
    assert {"name": "square_lamp", "prefab": "street_lamp", "cell": cell} in world_after["places"]
    assert [p for p in world_after["places"] if p["name"] != "square_lamp"] == json.loads(world_before)["places"]

    # inspect: no error, the lamp is among the places, and the sheet comes back as an image
    inspect = r["inspect"].structured_content
    assert not r["inspect"].is_error and inspect["status"] == "ok"
    assert not [f for f in inspect["findings"] if f["severity"] == "error"]
    assert "square_lamp" in [p["name"] for p in inspect["places"]]
    assert png_size(image_of(r["inspect"]))[0] > 0 and "sheet" not in inspect

    # cook: everything, the new model and prefab among it
    cook = r["cook"].structured_content
    assert cook["ok"] is True and cook["summary"]["failed"] == 0
    assert cook["summary"]["cooked"] + cook["summary"]["up_to_date"] == len(sources) + 2
    assert (sample_game / "assets/.cooked/models/street_lamp.vda").is_file()
    assert (sample_game / "assets/.cooked/prefabs/street_lamp.vda").is_file()
    models = {a["name"]: a for a in r["listed_after"].structured_content["assets"]}
    assert models["street_lamp"]["state"] == "fresh" and all(a["state"] == "fresh" for a in models.values())
    assert "veduta://source/model/street_lamp" in {str(x.uri) for x in r["resources_after"]}
    assert r["lamp_resource"].text == LAMP
    # every tool says what it does to the game, and what it returns
    for name, tool in r["tools"].items():
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None, name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name


def test_progress_is_reported_and_a_cancelled_call_stops(sample_game):
    """list_assets checks every source: with a progress token, the client hears how far it got
    (at least the start and the end, whatever the machine's speed); a call cancelled by the client
    stops, and the server answers the next one."""
    models = sample_game / "assets/models"
    for i in range(200):  # enough sources that the check takes several batches
        shutil.copy(models / "crate.vmodel", models / f"crate_{i:03d}.vmodel")

    async def body(s: ClientSession):
        heard: list[tuple[float, float | None, str | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            heard.append((done, total, message))

        whole = await s.call_tool("list_assets", {}, progress_callback=progress)
        first_run = list(heard)
        heard.clear()
        started = asyncio.Event()

        async def note(done, total, message):
            started.set()
            heard.append((done, total, message))

        call = asyncio.ensure_future(s.call_tool("check", {"jobs": 1}, progress_callback=note))
        await asyncio.wait_for(started.wait(), 120)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        after = await s.call_tool("world_query", {"world": "valley", "cell": [0, 0]})
        return whole, first_run, after

    whole, heard, after = asyncio.run(_session(sample_game, body))
    assert not whole.is_error
    total = len(whole.structured_content["assets"])
    samples = sum(1 for p in (REPO / "assets").rglob("*.v*") if ".cooked" not in p.parts and p.suffix != ".vda")
    assert total == samples + 200
    assert len(heard) >= 2
    assert heard[0][0] == 0 and heard[-1][0] == heard[-1][1] == total
    assert [h[0] for h in heard] == sorted(h[0] for h in heard) and {h[1] for h in heard} == {total}
    assert heard[-1][2] == f"checked {total} of {total} sources"
    assert not after.is_error and after.structured_content["world"] == "valley"


@pytest.mark.skipif(sys.platform == "win32", reason="holds the world's edit lock with fcntl")
def test_a_cancelled_write_writes_nothing(sample_game):
    """A world written while another process edits it waits for that edit's lock; the client
    cancels meanwhile: once the lock is free the write stops, and the source is as it was."""
    import fcntl
    import os

    from veduta.base.project import Project
    from veduta.tools.world_edit import edit_lock_path

    source = sample_game / "assets/worlds/valley.vworld"
    before = source.read_bytes()
    changed = before.decode().replace('"village_well"', '"town_well"')
    lock = edit_lock_path(Project.at(str(sample_game)), "valley")
    os.makedirs(os.path.dirname(lock), exist_ok=True)

    async def body(s: ClientSession):
        heard: list[str | None] = []
        waiting = asyncio.Event()

        async def progress(done, total, message):
            heard.append(message)
            waiting.set()

        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process is editing the valley
        try:
            call = asyncio.ensure_future(
                s.call_tool(
                    "write_source", {"kind": "world", "name": "valley", "text": changed}, progress_callback=progress
                )
            )
            await asyncio.wait_for(waiting.wait(), 120)  # the write is under way, waiting for the lock
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        finally:
            os.close(fd)  # the other edit is done
        # this one takes the lock after the cancelled write let it go
        after = await s.call_tool("write_source", {"kind": "world", "name": "valley", "text": changed, "dry_run": True})
        return heard, after

    heard, after = asyncio.run(_session(sample_game, body))
    assert heard == ["checking world valley (waiting for the world's edit lock)"]
    assert source.read_bytes() == before
    dry = after.structured_content
    assert (dry["action"], dry["written"]) == ("replaced", False)
    assert [c["path"] for c in dry["changes"]] == ["places[0]", "places[0]"]


def test_a_world_edit_reports_its_stages(sample_game):
    """The world edits take progress (LAYOUT.md's convention): over MCP, with a token, the client
    hears the first and the last stage of a terrain edit, whatever the machine's speed."""

    async def body(s: ClientSession):
        heard: list[tuple[float, float | None, str | None]] = []

        async def progress(done, total, message):
            heard.append((done, total, message))

        res = await s.call_tool(
            "world_terrain",
            {"world": "valley", "name": "mound", "kind": "hill", "cell": [40, 40], "radius": 12, "dry_run": True},
            progress_callback=progress,
        )
        return res, heard

    res, heard = asyncio.run(_session(sample_game, body))
    assert not res.is_error and res.structured_content["written"] is False
    assert heard[0] == (1, 4, "ground before") and heard[-1] == (4, 4, "report")


def test_a_cook_reports_progress_and_a_cancelled_cook_leaves_the_game_whole(sample_game):
    """A cook tells the client of every source it reaches (the last report is the end); a cook
    cancelled part way stops as Ctrl-C stops it: the files it cooked are whole, the lock is free,
    and the next cook cooks the rest."""
    models = sample_game / "assets/models"
    for i in range(150):
        shutil.copy(models / "tree.vmodel", models / f"tree_{i:03d}.vmodel")
    total = len([p for p in (sample_game / "assets").rglob("*.v*") if p.is_file()])

    async def body(s: ClientSession):
        heard: list[tuple[float, float | None, str | None]] = []
        started = asyncio.Event()

        async def note(done, total, message):
            heard.append((done, total, message))
            if done >= 10:
                started.set()

        call = asyncio.ensure_future(s.call_tool("cook", {"jobs": 1}, progress_callback=note))
        await asyncio.wait_for(started.wait(), 300)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        cancelled = list(heard)
        heard.clear()

        async def progress(done, total, message):
            heard.append((done, total, message))

        rest = await s.call_tool("cook", {"jobs": 1}, progress_callback=progress)
        again = await s.call_tool("cook", {})
        check = await s.call_tool("check", {})
        return cancelled, rest, list(heard), again, check

    cancelled, rest, heard, again, check = asyncio.run(_session(sample_game, body))
    looking = [h for h in cancelled if h[1] is None]  # (while it lists the sources: the total not known yet)
    assert looking and cancelled[: len(looking)] == looking == [(0, None, "looking at the sources")] * len(looking)
    assert all(h[1] == total for h in cancelled[len(looking) : -1])
    summary = rest.structured_content["summary"]
    assert not rest.is_error and rest.structured_content["ok"]
    assert summary["failed"] == 0 and summary["cooked"] + summary["up_to_date"] + summary["restored"] == total, summary
    assert 0 < summary["cooked"] < total  # the cancelled cook had cooked some, and stopped before the end
    assert heard[-1][0] == heard[-1][1] == total and heard[-1][2].startswith(f"cooked {summary['cooked']}, ")
    assert again.structured_content["summary"]["up_to_date"] == total
    assert check.structured_content["ok"] and check.structured_content["fresh"] == total
    cooked = sorted((sample_game / "assets/.cooked").rglob("*.vda"))
    assert len(cooked) == total


def test_inspect_world_of_every_chunk_reports_progress_and_writes_every_view(sample_game):
    """inspect_world with all_views over MCP (the SDK's client, a progress token): the client hears
    the views counted up to the last, gets the summed-up chunk views as structured content and
    finds every view in the JSON Lines file it asked for; a file name that is not .jsonl is a tool
    error before anything is counted."""
    valley = sample_game / "assets/worlds/valley.vworld"
    valley.write_text(
        valley.read_text()
        .replace('"extent": 64', '"extent": 16', 1)
        .replace('"cell": [-800, 0],  "radius": 640', '"cell": [-100, 0],  "radius": 20')
    )

    async def body(s: ClientSession):
        heard: list[tuple[float, float | None, str | None]] = []

        async def progress(done, total, message):
            heard.append((done, total, message))

        res = await s.call_tool(
            "inspect_world",
            {"world": "valley", "all_views": True, "views_file": "views.jsonl"},
            progress_callback=progress,
        )
        wrong = await s.call_tool("inspect_world", {"world": "valley", "all_views": True, "views_file": "views.json"})
        return res, heard, wrong

    res, heard, wrong = asyncio.run(_session(sample_game, body))
    assert not res.is_error, text_of(res)
    r = res.structured_content
    assert [v["name"] for v in r["views"]] == ["start", "place village_well", "place keeper_cottage"]
    a = r["all_views"]
    assert a["views"] == 1024 and sum(a["histogram"]["views"]) == 1024 and r["views_file"] == "views.jsonl"
    assert heard and heard[-1] == (1024, 1024, "views")
    assert [d for d, _, _ in heard] == sorted(d for d, _, _ in heard)
    listed = [json.loads(line) for line in (sample_game / "views.jsonl").read_text().splitlines()]
    assert listed[:3] == r["views"] and len(listed) == 3 + 1024 and listed[3]["name"] == "chunk -16,-16"
    assert max(v["triangles"] for v in listed[3:]) == a["triangles"]["max"] == a["worst"][0]["triangles"]
    assert wrong.is_error and "must end in .jsonl" in text_of(wrong)
    assert not (sample_game / "views.json").exists()


#: ``veduta mcp`` whose cook's check of each source it has no record of (tasks.check_fresh, while
#: it lists the sources, before any is cooked) writes the run's start and the source in
#: GATE.started, then waits until the file GATE exists (at most 300 s).
GATED_LISTING_MCP = (
    """
import os, sys, time
"""
    + GATE_WAIT
    + """
import veduta.cook.tasks as tasks
real = tasks.check_fresh
def gated(*args, **kwargs):
    wait_for_gate(f"{args[5]} {args[1]}")
    return real(*args, **kwargs)
tasks.check_fresh = gated
from veduta.faces.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
)


def _models_game(root: Path, total: int, part) -> Path:
    """A game at *root* of *total* models ``models/m0000.vmodel``... of one part each (*part(i)*);
    returns its cooked models' folder."""
    models = root / "assets" / "models"
    models.mkdir(parents=True)
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    for i in range(total):
        (models / f"m{i:04d}.vmodel").write_text(json.dumps({"veduta": "model/1", "parts": [part(i)]}))
    return root / "assets" / ".cooked" / "models"


def test_a_cook_cancelled_while_it_lists_the_sources_stops_there_and_writes_nothing(tmp_path):
    """A cook (notifications/cancelled) cancelled while it still looks at the sources, before any
    is cooked (held there by a gate in the server until the server has heard the cancel), stops
    there: it looks at no more than a few dozen more sources, writes no cooked file, and lets the
    cook lock go (the next cook, of one source, writes that one). Before, the cancel was heard only
    once the cooking began, after every source of the game had been looked at."""
    root = tmp_path / "game"
    total = 400
    cooked = _models_game(root, total, lambda i: {"shape": "box", "size": [1, 1 + i % 5, 1]})
    gate = tmp_path / "gate"
    calls = Path(f"{gate}.started")

    def on_disk() -> list[str]:
        return sorted(p.name for p in cooked.iterdir()) if cooked.is_dir() else []

    async def body(s: ClientSession):
        call = asyncio.ensure_future(s.call_tool("cook", {"jobs": 2}))
        while not calls.exists():  # the cook looks at its first source, and is held there
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await s.send_ping()  # answered after the cancel was handled (the server reads in order)
        gate.touch()
        # this one waits for the cook lock, which the cancelled cook holds until it has ended
        one = await s.call_tool("cook", {"sources": ["models/m0000.vmodel"]})
        return one, on_disk()

    argv = ["-c", GATED_LISTING_MCP, "mcp", "--root", str(root)]
    one, after = asyncio.run(_session(root, body, argv, {"PYTHONPATH": str(REPO), "GATE": str(gate)}))
    assert not one.is_error and one.structured_content["summary"]["cooked"] == 1, one
    assert after == ["m0000.vda"]  # the cancelled cook wrote nothing, and left no temporary file
    runs: dict[str, list[str]] = {}
    for line in calls.read_text().splitlines():
        start, rel = line.split(" ", 1)
        runs.setdefault(start, []).append(rel)
    first = runs[min(runs, key=int)]
    assert first == [f"models/m{i:04d}.vmodel" for i in range(len(first))]
    assert len(first) < total, len(first)  # it stopped while it looked at the sources


def test_a_cancelled_cook_stops_its_pool_at_once(tmp_path):
    """hostile4 #9: a cook of a few thousand models in a pool of two workers, cancelled part way
    (notifications/cancelled), stops as Ctrl-C stops it: its workers are stopped (the batches a
    worker had queued are not cooked), so the cooked files written after the cancel are at most
    the batches in flight then (workers x BATCH); no temporary file is left; a cook of the rest
    then makes every file fresh."""
    from veduta.cook.ahead import BATCH

    root = tmp_path / "game"
    total = 3000
    cooked = _models_game(root, total, lambda i: {"shape": "sphere", "radius": 1 + i % 7, "segments": 24, "rings": 12})

    def on_disk() -> int:
        return len(list(cooked.glob("*.vda"))) if cooked.is_dir() else 0

    async def body(s: ClientSession):
        started = asyncio.Event()

        async def note(done, total, message):
            if done >= 6 * BATCH:
                started.set()

        call = asyncio.ensure_future(s.call_tool("cook", {"jobs": 2}, progress_callback=note))
        await asyncio.wait_for(started.wait(), 600)
        at_cancel = on_disk()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # this one waits for the cook lock, which the cancelled cook holds until it has ended
        one = await s.call_tool("cook", {"sources": ["models/m0000.vmodel"]})
        after = on_disk()
        temps = sorted(p.name for p in cooked.iterdir() if not p.name.endswith(".vda"))
        rest = await s.call_tool("cook", {"jobs": 2})
        return at_cancel, one, after, temps, rest

    at_cancel, one, after, temps, rest = asyncio.run(_session(root, body))
    assert not one.is_error
    assert 0 <= after - at_cancel <= 2 * BATCH, (at_cancel, after)
    assert after < total and temps == []
    summary = rest.structured_content["summary"]
    assert rest.structured_content["ok"] and summary["cooked"] + summary["up_to_date"] == total, summary
    assert on_disk() == total
