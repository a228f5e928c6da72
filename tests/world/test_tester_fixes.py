"""Defects a new-user tester found in the world tools (each test fails without its fix)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from veduta.cli import main
from veduta.cook.project import Project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def game(tmp_path, monkeypatch):
    """A copy of the sample game's sources (no cooked files), its Project; the cwd is its root."""
    root = tmp_path / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    monkeypatch.chdir(root)
    return Project.at(str(root))


def _valley(project) -> Path:
    return Path(project.source_path("worlds/valley.vworld"))


# -- 1: an edit keeps the source's mode, writes a symlink's target, refuses a read-only source ----


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes and symlinks")
def test_edit_keeps_mode_and_symlink(game, tmp_path, capsys):
    path = _valley(game)
    os.chmod(path, 0o640)
    assert main(["world", "remove", "valley", "poppies"]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and "poppies" not in path.read_text()
    # a symlinked source: the link stays, its target is edited
    target = tmp_path / "shared" / "valley.vworld"
    target.parent.mkdir()
    shutil.move(str(path), target)
    os.chmod(target, 0o664)
    path.symlink_to(target)
    assert main(["world", "remove", "valley", "mill_pond"]) == 0
    assert path.is_symlink() and os.readlink(path) == str(target)
    assert "mill_pond" not in target.read_text() and stat.S_IMODE(target.stat().st_mode) == 0o664
    assert not [p for p in target.parent.iterdir() if p.name != "valley.vworld"]  # no temp file left
    capsys.readouterr()


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_edit_refuses_a_read_only_source(game, capsys):
    path = _valley(game)
    old = path.read_bytes()
    os.chmod(path, 0o444)
    try:
        assert main(["world", "remove", "valley", "poppies"]) == 1
        err = capsys.readouterr().err
        assert "valley.vworld is read-only (mode 444), so nothing was written" in err
        assert main(["world", "remove", "valley", "poppies", "--json"]) == 1
        r = json.loads(capsys.readouterr().out)
        assert r["refused"] is True and "read-only" in r["message"]
        # a dry run writes nothing, so it still reports
        assert main(["world", "remove", "valley", "poppies", "--dry-run"]) == 0
    finally:
        os.chmod(path, 0o644)
    assert path.read_bytes() == old


# -- 2, 3, 4: inspect world --at / --sheet, world map limits -----------------------------------------


def test_inspect_world_refuses_a_focus_outside_the_world(game, capsys):
    for at in ("3000,0", "1024,0", "0,-1025"):
        assert main(["inspect", "world", "valley", "--at", at]) == 2
        err = capsys.readouterr().err
        assert err.startswith("veduta: focus cell ") and "its cells are -1024..1023" in err, err
    assert main(["inspect", "world", "valley", "--at", "1023,-1024"]) in (0, 1)
    assert "at 1023,-1024" in capsys.readouterr().out


def test_inspect_world_sheet_cannot_write(game, tmp_path, capsys):
    (tmp_path / "d.png").mkdir()
    (tmp_path / "f").write_text("")
    for sheet, why in ((tmp_path / "d.png", "it is a folder"), (tmp_path / "f" / "x.png", "is not a folder"),
                       (tmp_path / "none" / "x.png", "no folder")):
        assert main(["inspect", "world", "valley", "--sheet", str(sheet)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"veduta: cannot write {sheet}: ") and why in err, err
    assert not (tmp_path / "none").exists()


def test_world_map_limits_pixels_and_makes_no_folders(game, tmp_path, capsys):
    assert main(["world", "map", "valley", "--out", str(tmp_path / "m.png"), "--size", "2048,2048",
                 "--scale", "16"]) == 2
    assert "over the 16777216 pixel limit" in capsys.readouterr().err
    out = tmp_path / "none" / "x.png"
    assert main(["world", "map", "valley", "--out", str(out), "--size", "16,16"]) == 1
    assert f"cannot write {out}: no folder" in capsys.readouterr().err
    assert not out.parent.exists()
    assert main(["world", "map", "valley", "--out", str(tmp_path / "m.png"), "--size", "16,16"]) == 0
    assert (tmp_path / "m.png").read_bytes().startswith(b"\x89PNG")


# -- 5, 6, 9, 12, 14: JSON refusals, exit codes, findings always, neutral wording, one message -----


def _refusal(capsys) -> dict:
    cap = capsys.readouterr()
    r = json.loads(cap.out)
    assert set(r) == {"refused", "message", "findings"} and r["refused"] is True, r
    return r


def test_every_json_refusal_is_json(game, capsys):
    base = ["world"]
    cases = [
        (["remove", "valley", "nothere"], 2, 'no feature, vegetation rule or place named "nothere"'),
        (["terrain", "valley", "B", "--kind", "hill", "--cell", "0,0", "--radius", "3"], 2, "not a valid name"),
        (["place", "valley", "inn", "cottage", "--near", "0,0", "--search", "999"], 2, "search 999 out of range"),
        (["vegetation", "valley", "v", "--model", "grass_tuft", "--density", "0.1", "--cell", "0,0"], 2,
         "an area needs both cell and radius"),
        (["remove", "nope", "x"], 2, 'no world "nope" under '),
        (["place", "valley", "inn", "nope", "--cell", "0,0"], 2, 'prefab "nope" does not exist'),
        (["place", "valley", "inn", "cottage", "--cell", "-40,12"], 1, "is refused (WORLD_PLACE_BIOME"),
    ]
    for argv, code, text in cases:
        assert main(base + argv + ["--json"]) == code, argv
        r = _refusal(capsys)
        assert text in r["message"], r
        # and without --json: one veduta: line, the same exit code
        assert main(base + argv) == code
        cap = capsys.readouterr()
        assert cap.out == "" and cap.err.startswith("veduta: ") and text in cap.err


def test_no_valid_cell_carries_counts(game, capsys):
    assert main(["world", "place", "valley", "inn", "cottage", "--near", "-1024,0", "--search", "2", "--json"]) == 1
    r = _refusal(capsys)
    assert "no valid cell" in r["message"] and r["findings"]
    assert all(set(f) == {"code", "severity", "message", "count"} for f in r["findings"])
    assert sum(f["count"] for f in r["findings"]) == 13  # the cells within 2 of the corner
    assert {f["code"] for f in r["findings"]} <= {"WORLD_PLACE_OUTSIDE", "WORLD_PLACE_WATER", "WORLD_PLACE_BIOME"}


def test_exit_codes(game, tmp_path, capsys):
    models = Path(game.assets) / "models"
    (models / "badm.vmodel").write_text('{ "veduta": "model/1", "parts": [ { "shape": "box", "radius": 1 } ] }')
    png = str(tmp_path / "x.png")
    usage = [["inspect", "model", "nope"], ["inspect", "prefab", "nope"], ["inspect", "world", "nope"],
             ["world", "query", "nope", "0,0"], ["preview", "model", "ghost", "--out", png],
             ["preview", "texture", "ghost", "--out", png],
             ["world", "place", "valley", "inn", "cottage", "--near", "0,0", "--search", "999"],
             ["world", "vegetation", "valley", "v", "--model", "grass_tuft", "--density", "0.1", "--cell", "0,0"]]
    for argv in usage:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "veduta" in err and "Traceback" not in err
    # problems in assets: 1
    for argv in (["inspect", "model", "badm"], ["preview", "model", "badm", "--out", png]):
        assert main(argv) == 1, argv
        capsys.readouterr()


def test_missing_assets_have_findings_and_one_message(game, capsys):
    for kind in ("model", "prefab", "world"):
        assert main(["inspect", kind, "nope", "--json"]) == 2
        r = json.loads(capsys.readouterr().out)
        assert r["status"] == "missing" and r["findings"] == []
        assert r["errors"] == [{"message": f'no {kind} "nope" under {game.assets}/{kind}s/'}]
    assert main(["world", "query", "nope", "0,0"]) == 2
    assert capsys.readouterr().err.endswith(f': no world "nope" under {game.assets}/worlds/\n')
    assert main(["world", "remove", "nope", "x"]) == 2
    assert capsys.readouterr().err == f'veduta: no world "nope" under {game.assets}/worlds/\n'


def test_ambiguous_name_message_names_no_parameter(game, capsys):
    from veduta import api
    from veduta.errors import UsageError

    api.world_place(game, "valley", "mill_pond", "cottage", near=(-70, 0))
    with pytest.raises(UsageError) as e:
        api.world_remove(game, "valley", "mill_pond")
    msg = str(e.value)
    assert msg == '"mill_pond" names a feature and a place; say which list: features or places'
    assert main(["world", "remove", "valley", "mill_pond", "--from", "places"]) == 0
