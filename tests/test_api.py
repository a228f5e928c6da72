"""veduta.api: the tools as functions returning the --json data (the CLI and MCP faces call them)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from bench.games import sample_game
from tests.gamerepo import BAD
from veduta import api
from veduta.base.errors import VdaError, VedutaError
from veduta.base.project import Project


def test_cook_returns_summary_and_every_diagnostic_and_prints_nothing(game, here, capsys):
    game.write("models/crate.vmodel", BAD)
    r = api.cook(here)
    assert capsys.readouterr().out == ""
    assert r["ok"] is False
    assert r["summary"] == {
        "cooked": 3,
        "up_to_date": 0,
        "restored": 0,
        "failed": 1,
        "removed": [],
        "with_failed_dependency": 0,
        "warnings": 0,
        "standing_warnings": 0,
        "strict": False,
    }
    d = r["diagnostics"]
    assert {x["file"] for x in d} == {"assets/models/crate.vmodel"}
    assert {
        "file": "assets/models/crate.vmodel",
        "line": 5,
        "col": 68,
        "path": "parts[1].segments",
        "severity": "error",
        "message": "2 out of range [3, 256]",
    } in d
    assert d == sorted(d, key=lambda x: (x["line"], x["col"])) and len(d) >= 3
    assert gc.get_freeze_count() == 0  # a long-lived server must not keep every run's tasks
    # the same run again: the failed source fails again, the others are up to date
    r2 = api.cook(here)
    assert r2["summary"]["up_to_date"] == 3 and r2["diagnostics"] == d


def test_cook_named_sources_and_in_parallel(game, here):
    r = api.cook(here, ["assets/models/crate.vmodel", "models/tree.vmodel"])
    assert r["ok"] and r["summary"]["cooked"] == 2
    assert game.cooked("models/crate.vda").exists() and not game.cooked("models/props/barrel.vda").exists()
    game.write("models/crate.vmodel", BAD)
    serial = api.cook(here, ["models/crate.vmodel"])
    game.write("models/tree.vmodel", BAD)
    par = api.cook(here, [], jobs=2)  # worker processes: diagnostics travel back with the failure
    assert par["summary"]["failed"] == 2 and par["summary"]["cooked"] == 2  # barrel, tree_far
    crate = [x for x in par["diagnostics"] if x["file"].endswith("crate.vmodel")]
    assert crate == serial["diagnostics"]


def test_cook_unknown_source_is_named(game, here):
    for bad in ("models/nope.vmodel", "assets/models/../../dodo.py", "/etc/passwd"):
        with pytest.raises(VedutaError, match="no such source"):
            api.cook(here, [bad])


def test_cook_warnings_are_kept_with_the_success(game, here):
    game.write(
        "models/crate.vmodel",
        """{"veduta": "model/1",
      "lod": [ { "distance": 10, "model": "ghost" } ],
      "parts": [ { "shape": "box", "size": [1, 1, 1] } ] }""",
    )
    r = api.cook(here, ["models/crate.vmodel"])
    assert r["ok"] and r["summary"]["cooked"] == 1
    assert r["diagnostics"] == [
        {
            "file": "assets/models/crate.vmodel",
            "line": 2,
            "col": 43,
            "path": "lod[0].model",
            "severity": "warning",
            "message": 'model "ghost" does not exist (not checked)',
            "code": "MISSING_REFERENCE",
        }
    ]


def test_dump_and_verify(game, here):
    api.cook(here)
    d = api.dump(here, "assets/.cooked/models/crate.vda")
    assert d["file"] == "assets/.cooked/models/crate.vda"
    assert [c["type"] for c in d["chunks"]] == ["META", "MESH"]
    full = api.dump(here, "assets/.cooked/models/crate.vda", full=True)
    assert len(full["chunks"][1]["body"]["vertices"]) == 24
    p = game.cooked("models/crate.vda")
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(VdaError, match="CRC mismatch"):
        api.dump(here, str(p))
    v = api.verify(here, [str(p), "assets/.cooked/models/tree.vda", "nope.vda"])
    assert v["ok"] is False
    assert [f["ok"] for f in v["files"]] == [False, True, False]
    assert v["files"][1] == {
        "file": "assets/.cooked/models/tree.vda",
        "ok": True,
        "kind": "model",
        "name": "tree",
        "compiler": v["files"][1]["compiler"],
        "current": True,
    }
    assert "chunk MESH, byte" in v["files"][0]["error"] and "cannot read" in v["files"][2]["error"]


def test_verify_json_is_the_api_data(game):
    subprocess.run([sys.executable, "-m", "veduta", "cook"], cwd=game.root, capture_output=True, timeout=300)
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "verify", "--json", "assets/.cooked/models/crate.vda", "nope.vda"],
        cwd=game.root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert cp.returncode == 1
    old = os.getcwd()
    os.chdir(game.root)
    try:
        assert json.loads(cp.stdout) == api.verify(None, ["assets/.cooked/models/crate.vda", "nope.vda"])
    finally:
        os.chdir(old)


def test_world_tools_name_the_mistake(game, here):
    with pytest.raises(VedutaError, match='no world "nowhere"'):
        api.world_query(here, "nowhere", (0, 0))
    with pytest.raises(VedutaError, match="not two whole numbers"):
        api.world_query(here, "nowhere", (0.5, 0))
    with pytest.raises(VedutaError, match="far outside"):
        api.world_query(here, "nowhere", (1 << 30, 0))
    with pytest.raises(VedutaError, match="size 0,4 out of range"):
        api.world_map(here, "nowhere", (0, 0), (0, 4))
    with pytest.raises(VedutaError, match="scale 17 out of range"):
        api.world_map(here, "nowhere", (0, 0), (4, 4), 17)


@pytest.fixture(scope="module")
def valley(tmp_path_factory):
    """A game with the sample world, its prefabs and what they name (nothing cooked yet)."""

    root = tmp_path_factory.mktemp("valley") / "game"
    sample_game(root)
    return root


def test_world_query_and_map_data_equal_the_cli_json(valley):
    old = os.getcwd()
    os.chdir(valley)
    try:
        project = Project.at(".")
        q = api.world_query(project, "valley", (-70, 0))
        m = api.world_map(project, "valley", (-70, 0), (40, 30))
    finally:
        os.chdir(old)
    assert q["cell"] == [-70, 0] and q["owner"] == {"kind": "place", "name": "village_well", "prefab": "well"}
    png = m.pop("png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert {k: m[k] for k in ("world", "at", "size", "origin", "scale")} == {
        "world": "valley",
        "at": [-70, 0],
        "size": [40, 30],
        "origin": [-90, -15],
        "scale": 8,
    }
    box = m["map_box"]
    assert (box[2] - box[0], box[3] - box[1]) == (320, 240) and (m["width"], m["height"]) > (320, 240)
    assert [(b["biome"], b["material"], b["colour"]) for b in m["biomes"]] == [
        ("meadow", "grass", "#4f9a45"),
        ("forest", "leaf", "#3f8f3a"),
        ("heath", "bark", "#6b4a2b"),
    ]

    def cli(*args):
        cp = subprocess.run(
            [sys.executable, "-m", "veduta", *args], cwd=valley, capture_output=True, text=True, timeout=300
        )
        assert cp.returncode == 0, cp.stderr
        return json.loads(cp.stdout)

    assert cli("world", "query", "valley", "-70,0", "--json") == q
    assert cli("world", "map", "valley", "--at", "-70,0", "--size", "40,30", "--out", "m.png", "--json") == m
    assert (valley / "m.png").read_bytes() == png


def test_cook_leaves_the_game_lock_free(game, here):
    import fcntl

    api.cook(here, ["models/crate.vmodel"])
    with open(game.root / "cache" / "cook.lock", "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if this process still held it


def test_a_full_dump_leaves_later_dumps_summarised(here):
    """--full switches the shared array declarations for one dump only, even where one declaration
    stands in several fields (a mesh and its levels)."""
    api.cook(here)
    path = "assets/.cooked/models/tree.vda"
    before = api.dump(here, path)
    assert isinstance(before["chunks"][1]["body"]["vertices"], dict)  # summarised: count and sha256
    full = api.dump(here, path, full=True)
    assert isinstance(full["chunks"][1]["body"]["vertices"], list)
    assert api.dump(here, path) == before
