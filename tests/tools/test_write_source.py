"""write_source: a source checked by the cook's own checks, refused with every located error and
nothing written, or written atomically; what changed; the tools that read it see it at once."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from tests.gamerepo import CRATE, Game
from veduta import api
from veduta.base.errors import UsageError

LAMP = """{
  "veduta": "model/1",
  "pivot": "bottom-center",
  "parts": [
    { "shape": "cylinder", "radius": 0.05, "height": 2, "segments": 8, "position": [0, 1, 0] },
    { "shape": "sphere", "radius": 0.2, "segments": 8, "rings": 4, "position": [0, 2.1, 0] }
  ]
}
"""

#: LAMP with two mistakes: a radius out of range, a box's size of two numbers
LAMP_BAD = LAMP.replace('"radius": 0.05', '"radius": -1').replace(
    '{ "shape": "sphere", "radius": 0.2, "segments": 8, "rings": 4,', '{ "shape": "box", "size": [1, 2],'
)


def test_a_source_with_errors_is_refused_with_every_error_located_and_nothing_is_written(game: Game, here):
    with pytest.raises(api_refused()) as got:
        api.write_source(here, "model", "lamp", LAMP_BAD)
    findings = got.value.findings
    assert findings == [
        {
            "code": "MODEL_SOURCE_ERROR",
            "severity": "error",
            "message": "-1 out of range (must be > 0)",
            "file": "assets/models/lamp.vmodel",
            "line": 5,
            "col": 38,
            "path": "parts[0].radius",
        },
        {
            "code": "MODEL_SOURCE_ERROR",
            "severity": "error",
            "message": "expected an array of 3 numbers, found 2 items",
            "file": "assets/models/lamp.vmodel",
            "line": 6,
            "col": 31,
            "path": "parts[1].size",
        },
    ]
    message = str(got.value)
    assert message.startswith("model lamp has 2 errors, so nothing was written to assets/models/lamp.vmodel")
    assert "assets/models/lamp.vmodel:5:38: parts[0].radius: -1 out of range (must be > 0)" in message
    assert not (game.root / "assets/models/lamp.vmodel").exists()
    # an existing source is kept byte for byte
    before = (game.root / "assets/models/crate.vmodel").read_bytes()
    with pytest.raises(api_refused()):
        api.write_source(here, "model", "crate", '{"veduta": "model/1"')
    assert (game.root / "assets/models/crate.vmodel").read_bytes() == before


def test_a_new_source_is_created_where_the_cook_looks_and_every_tool_sees_it(game: Game, here):
    api.cook(here, jobs=1)  # a long-lived process (the MCP server) that cooked before the write
    r = api.write_source(here, "model", "lamp", LAMP)
    assert r == {
        "kind": "model",
        "name": "lamp",
        "path": "assets/models/lamp.vmodel",
        "action": "created",
        "written": True,
        "dry_run": False,
        "bytes": len(LAMP.encode()),
        "changes": [],
        "more_changes": 0,
        "lines": {"added": LAMP.count("\n"), "removed": 0},
        "diagnostics": [],
    }
    assert (game.root / "assets/models/lamp.vmodel").read_text() == LAMP
    triangles = api.inspect_model(here, "lamp")["triangles"]
    assert {a["name"]: a["state"] for a in api.list_assets(here, "model")["assets"]}["lamp"] == "never_cooked"
    drawn = api.preview_model(here, "lamp", str(game.root / "lamp.png"))  # cooks it, then draws it
    assert drawn["levels"][0]["triangles"] == triangles > 0
    assert {a["name"]: a["state"] for a in api.list_assets(here, "model")["assets"]}["lamp"] == "fresh"
    # a material and a model naming it, written one after the other, are seen together
    api.write_source(here, "material", "red", '{"veduta": "material/1", "albedo": "#ff0000"}\n')
    box = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "material": "red"}]}\n'
    assert api.write_source(here, "model", "red_box", box)["diagnostics"] == []
    preview = api.preview_model(here, "red_box", str(game.root / "red_box.png"))
    assert preview["messages"] == [] and preview["findings"] == []


def test_replacing_a_source_says_what_changed(game: Game, here):
    path = game.root / "assets/models/crate.vmodel"
    os.chmod(path, 0o640)
    new = CRATE.replace('"size": [1, 1, 1]', '"size": [1, 2, 1]').replace('"pivot": "bottom-center",\n', "")
    r = api.write_source(here, "model", "crate", new)
    assert r["action"] == "replaced" and r["written"] is True
    assert r["changes"] == [
        {"path": "pivot", "change": "removed", "old": "bottom-center"},
        {"path": "parts[0].size", "change": "changed", "old": [1, 1, 1], "new": [1, 2, 1]},
    ]
    assert r["lines"] == {"added": 1, "removed": 2}
    assert path.read_text() == new and stat.S_IMODE(path.stat().st_mode) == 0o640
    again = api.write_source(here, "model", "crate", new)
    assert (again["action"], again["written"], again["changes"]) == ("unchanged", False, [])


def test_a_source_in_a_sub_folder_is_replaced_where_it_is_and_a_link_keeps_pointing(game: Game, here, tmp_path):
    barrel = game.root / "assets/models/props/barrel.vmodel"
    text = barrel.read_text().replace("0.4", "0.5")
    r = api.write_source(here, "model", "barrel", text)
    assert r["path"] == "assets/models/props/barrel.vmodel" and barrel.read_text() == text
    assert not (game.root / "assets/models/barrel.vmodel").exists()
    real = tmp_path / "shared_tree.vmodel"
    tree = game.root / "assets/models/tree.vmodel"
    real.write_text(tree.read_text())
    tree.unlink()
    tree.symlink_to(real)
    api.write_source(here, "model", "tree", LAMP)
    assert tree.is_symlink() and real.read_text() == LAMP


def test_a_dry_run_checks_and_writes_nothing(game: Game, here):
    r = api.write_source(here, "model", "lamp", LAMP, dry_run=True)
    assert (r["action"], r["written"], r["dry_run"]) == ("created", False, True)
    assert not (game.root / "assets/models/lamp.vmodel").exists()
    with pytest.raises(api_refused()):
        api.write_source(here, "model", "lamp", LAMP_BAD, dry_run=True)


def test_warnings_come_back_and_a_close_name_is_suggested(game: Game, here):
    text = LAMP.replace(
        '"pivot": "bottom-center",', '"pivot": "bottom-center",\n  "lod": [{"distance": 20, "model": "tree_fa"}],'
    )
    r = api.write_source(here, "model", "lamp", text)
    assert r["written"] and [(d["severity"], d["code"], d["message"]) for d in r["diagnostics"]] == [
        ("warning", "MISSING_REFERENCE", 'model "tree_fa" does not exist (not checked); did you mean tree_far or tree?')
    ]


@pytest.mark.parametrize(
    ("kind", "name", "message"),
    [
        ("model", "Lamp", "'Lamp' is not an asset name: 1-64 characters of a-z, 0-9, _ and -"),
        ("model", "../lamp", "'../lamp' is not an asset name"),
        ("model", "", "'' is not an asset name"),
        ("model", "a" * 65, "is not an asset name"),
        (
            "modle",
            "lamp",
            'no asset kind "modle" (did you mean model?) (want one of model, texture, material, scene, '
            "prefab, world, map)",
        ),
    ],
)
def test_a_name_must_be_an_asset_name_and_a_kind_a_kind(game: Game, here, kind, name, message):
    with pytest.raises(UsageError) as got:
        api.write_source(here, kind, name, LAMP)
    assert message in str(got.value)
    assert sorted(p.name for p in (game.root / "assets/models").iterdir()) == [
        "crate.vmodel",
        "props",
        "tree.vmodel",
        "tree_far.vmodel",
    ]


def test_a_name_two_sources_share_is_refused(game: Game, here):
    game.write("models/more/crate.vmodel", CRATE)
    with pytest.raises(
        UsageError,
        match=r'model name "crate" is used by several sources \(models/crate.vmodel, '
        r"models/more/crate.vmodel\)",
    ):
        api.write_source(here, "model", "crate", LAMP)


def test_text_that_is_not_unicode_or_too_large_is_refused(game: Game, here):
    with pytest.raises(UsageError, match="not Unicode text"):
        api.write_source(here, "model", "lamp", '{"veduta": "model/1", "name": "\udcff"}')
    from veduta.tools.write_source import MAX_SOURCE_BYTES

    with pytest.raises(UsageError, match=f"more than the {MAX_SOURCE_BYTES:,} bytes"):
        api.write_source(here, "model", "lamp", " " * (MAX_SOURCE_BYTES + 1))
    assert not (game.root / "assets/models/lamp.vmodel").exists()


def test_a_world_written_while_an_edit_holds_it_waits_for_the_edit(game: Game, here):
    from veduta.tools.world_edit import edit_lock

    world = '{"veduta": "world/1", "seed": 1, "biomes": [{"name": "meadow", "ground": "grass"}]}\n'
    done = threading.Event()
    errors: list[BaseException] = []

    def write():
        try:
            api.write_source(here, "world", "tiny", world)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        done.set()

    with edit_lock(here, "tiny"):
        t = threading.Thread(target=write)
        t.start()
        assert not done.wait(0.5)  # it waits as long as the edit holds the lock
        assert not (game.root / "assets/worlds/tiny.vworld").exists()
    t.join(60)
    assert done.is_set() and not errors, errors
    assert json.loads((game.root / "assets/worlds/tiny.vworld").read_text())["seed"] == 1


def api_refused():
    from veduta.tools.write_source import SourceRefused

    return SourceRefused
