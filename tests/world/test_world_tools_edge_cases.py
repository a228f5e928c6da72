"""The world tools at their edges: file modes and links, refusals, limits, labels, exit codes."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from bench.games import sample_game
from veduta.base.project import Project
from veduta.faces.cli.main import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def game(tmp_path, monkeypatch):
    """A copy of the sample game's sources (no cooked files), its Project; the cwd is its root."""
    root = tmp_path / "game"
    sample_game(root)
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
    for sheet, why in (
        (tmp_path / "d.png", "it is a folder"),
        (tmp_path / "f" / "x.png", "is not a folder"),
        (tmp_path / "none" / "x.png", "no folder"),
    ):
        assert main(["inspect", "world", "valley", "--sheet", str(sheet)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"veduta: cannot write {sheet}: ") and why in err, err
    assert not (tmp_path / "none").exists()


def test_world_maps_pixel_limit_is_said_as_it_is(game, tmp_path, capsys, monkeypatch):
    """The usage error names the limit from its constant (it said 4096 x 4096 whatever it was)."""
    from veduta.tools import world_query

    args = ["world", "map", "valley", "--out", str(tmp_path / "m.png"), "--cells", "64,64", "--scale", "16"]
    monkeypatch.setattr(world_query, "MAX_MAP_PIXELS", 1000 * 1000)
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "veduta world map: 64 x 64 cells at scale 16 is 1024 x 1024 pixels, "
        "over the 1000000 pixel limit (1000 x 1000): lower the scale or the size\n"
    )
    monkeypatch.setattr(world_query, "MAX_MAP_PIXELS", 1_000_001)
    assert main(args) == 2
    assert "over the 1000001 pixel limit: lower the scale or the size\n" in capsys.readouterr().err
    assert not (tmp_path / "m.png").exists()


def test_world_map_limits_pixels_and_makes_no_folders(game, tmp_path, capsys):
    assert (
        main(["world", "map", "valley", "--out", str(tmp_path / "m.png"), "--size", "2048,2048", "--scale", "16"]) == 2
    )
    assert "over the 16777216 pixel limit (4096 x 4096): lower the scale or the size" in capsys.readouterr().err
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
        (
            ["vegetation", "valley", "v", "--model", "grass_tuft", "--density", "0.1", "--cell", "0,0"],
            2,
            "an area needs both cell and radius",
        ),
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
    usage = [
        ["inspect", "model", "nope"],
        ["inspect", "prefab", "nope"],
        ["inspect", "world", "nope"],
        ["world", "query", "nope", "0,0"],
        ["preview", "model", "ghost", "--out", png],
        ["preview", "texture", "ghost", "--out", png],
        ["world", "place", "valley", "inn", "cottage", "--near", "0,0", "--search", "999"],
        ["world", "vegetation", "valley", "v", "--model", "grass_tuft", "--density", "0.1", "--cell", "0,0"],
    ]
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
    from veduta.base.errors import UsageError

    api.world_place(game, "valley", "mill_pond", "cottage", near=(-70, 0))
    with pytest.raises(UsageError) as e:
        api.world_remove(game, "valley", "mill_pond")
    msg = str(e.value)
    assert msg == '"mill_pond" names a feature and a place; say which list: features or places'
    assert main(["world", "remove", "valley", "mill_pond", "--from", "places"]) == 0


# -- 7, 13: broken or missing vegetation assets: one warning naming the asset ------------------------


def test_vegetation_warns_once_and_names_broken_assets(game, capsys):
    assets = Path(game.assets)
    (assets / "models" / "badm.vmodel").write_text(
        '{ "veduta": "model/1", "parts": [ { "shape": "box", "radius": 1 } ] }'
    )
    (assets / "prefabs" / "brk.vprefab").write_text('{ "veduta": "prefab/1", "footprint": [1, 1], "bogus": 1 }')
    (assets / "prefabs" / "badp.vprefab").write_text(
        json.dumps(
            {
                "veduta": "prefab/1",
                "footprint": [1, 1],
                "entities": [
                    {"name": "a", "kind": "prop", "model": "badm"},
                    {"name": "b", "kind": "prop", "model": "ghost"},
                ],
            }
        )
    )
    area = ["--cell", "-82,16", "--radius", "9", "--dry-run", "--json"]

    def warnings(*what: str) -> list[tuple[str, str]]:
        assert main(["world", "vegetation", "valley", "v", *what, "--density", "0.3", *area]) == 0
        return [(w["code"], w["message"]) for w in json.loads(capsys.readouterr().out)["warnings"]]

    w = warnings("--model", "ghost")
    assert [c for c, _ in w] == ["WORLD_MODEL_MISSING"] and '"ghost"' in w[0][1]  # once, not also MISSING_REFERENCE
    w = warnings("--model", "badm")
    assert w == [
        (
            "WORLD_MODEL_INVALID",
            'model "badm" has errors (veduta inspect model badm): the rule plants it, but nothing is drawn',
        )
    ]
    w = warnings("--prefab", "brk")
    assert [c for c, _ in w] == ["WORLD_PREFAB_INVALID"] and '"brk" has errors' in w[0][1]  # not ..._EMPTY
    w = warnings("--prefab", "badp")
    assert [c for c, _ in w] == ["WORLD_MODEL_INVALID", "WORLD_MODEL_MISSING"]
    assert '"badm", which has errors' in w[0][1] and '"ghost", which does not exist' in w[1][1]


# -- 8: added elements follow their neighbours' spacing ----------------------------------------------


def test_new_elements_copy_compact_and_aligned_neighbours():
    from veduta.source.jsonedit import append_item, replace_item

    compact = '{"veduta":"world/1","seed":1,"places":[{"name":"a","prefab":"well","cell":[5,5]}]}'
    assert (
        append_item(compact, "places", {"name": "b", "prefab": "well", "cell": [0, 0]})
        == compact[:-2] + ',{"name":"b","prefab":"well","cell":[0,0]}]}'
    )
    tabs = '{\n\t"biomes":[{"name":"m","ground":"grass"}],\n\t"places":[]\n}'
    assert (
        append_item(tabs, "places", {"name": "b", "prefab": "well", "cell": [0, 0]})
        == '{\n\t"biomes":[{"name":"m","ground":"grass"}],\n\t"places":[\n\t\t{"name":"b","prefab":"well",'
        '"cell":[0,0]}\n\t]\n}'
    )
    table = (
        '{ "vegetation": [\n'
        '    { "name": "grass",     "model": "grass_tuft", "density": 0.35 },\n'
        '    { "name": "oak_grove", "prefab": "oak", "density": 0.3 }\n  ] }'
    )
    new = append_item(table, "vegetation", {"name": "ferns", "model": "fern", "density": 0.2})
    assert new.splitlines()[3] == '    { "name": "ferns",     "model": "fern", "density": 0.2 }'
    new = replace_item(table, "vegetation", 0, {"name": "g", "model": "grass_tuft", "density": 0.5})
    assert new.splitlines()[1] == '    { "name": "g",         "model": "grass_tuft", "density": 0.5 },'
    # equal widths by chance are not a table: no padding
    plain = '{"p": [{"name": "aa", "prefab": "x"}, {"name": "bb", "prefab": "y"}]}'
    assert append_item(plain, "p", {"name": "c", "prefab": "z"}).endswith(', {"name": "c", "prefab": "z"}]}')


def test_sample_valley_vegetation_is_aligned(game, capsys):
    assert (
        main(
            [
                "world",
                "vegetation",
                "valley",
                "ferns",
                "--model",
                "grass_tuft",
                "--density",
                "0.2",
                "--biomes",
                "forest",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        '    { "name": "ferns",       "model": "grass_tuft", "density": 0.2, "biomes": ["forest"] }\n'
        in _valley(game).read_text()
    )


# -- 10: the text terrain report says when it is sampled ---------------------------------------------


def test_terrain_text_says_sampled(game, capsys):
    argv = [
        "world",
        "terrain",
        "valley",
        "big",
        "--kind",
        "hill",
        "--cell",
        "0,0",
        "--radius",
        "600",
        "--height",
        "5",
        "--dry-run",
    ]
    assert main(argv + ["--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    step = r["before"]["step"]
    assert step == 3
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"mean {r['before']['mean']:g} (sampled every {step} cells)" in out
    assert f"mean {r['after']['mean']:g} (sampled every {step} cells)" in out
    assert (
        main(
            [
                "world",
                "terrain",
                "valley",
                "small",
                "--kind",
                "hill",
                "--cell",
                "0,0",
                "--radius",
                "5",
                "--height",
                "1",
                "--dry-run",
            ]
        )
        == 0
    )
    assert "sampled" not in capsys.readouterr().out


# -- 11: sheet labels do not overlap ---------------------------------------------------------------


def test_sheet_labels_do_not_overlap():
    from PIL import Image, ImageDraw

    from veduta.tools.mapimage import Mark, _font, label_box, place_labels

    img = Image.new("RGB", (400, 400))
    draw = ImageDraw.Draw(img)
    font = _font()
    marks = [
        Mark(200, 200, 6, "start: 5,350 triangles", (255, 255, 255), "view"),
        Mark(200, 200, 6, "at 0,0: 5,350 triangles", (255, 255, 255), "view"),
        Mark(202, 201, 8, "WORLD_CHUNK_BUDGET", (250, 170, 20), "finding"),
        Mark(390, 5, 8, "WORLD_PLACE_WATER", (230, 30, 30), "finding"),
    ]
    taken = [label_box(draw, (206, 195), "a map label", font)]
    placed, dropped = place_labels(draw, font, marks, img.size, taken=taken)
    assert len(placed) == 4 and not dropped
    boxes = taken + [p["box"] for p in placed]
    for i, a in enumerate(boxes):
        assert 0 <= a[0] and 0 <= a[1] and a[2] <= 400 and a[3] <= 400
        for b in boxes[i + 1 :]:
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1]), (a, b)


def test_out_of_range_values_of_the_new_element_are_usage_mistakes(game, capsys):
    old = _valley(game).read_bytes()
    assert (
        main(
            ["world", "terrain", "valley", "bump", "--kind", "hill", "--cell", "0,0", "--radius", "0", "--height", "2"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith('veduta: feature "bump" would make world valley invalid') and ".radius: 0 out of range" in err
    assert main(["world", "vegetation", "valley", "v", "--model", "grass_tuft", "--density", "5", "--json"]) == 2
    r = _refusal(capsys)
    assert [(f["path"], f["message"]) for f in r["findings"]] == [("vegetation[4].density", "5 out of range (0, 1]")]
    assert _valley(game).read_bytes() == old
