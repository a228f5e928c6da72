"""A content gate CI can trust (issue 27), each case a real CLI run in a temporary game: exit
codes, the located diagnostic and its code.

- failures propagate: a prefab naming a model that failed, a world naming that prefab, a material
  naming a texture that failed, each get ``DEPENDENCY_FAILED`` at the reference, naming the
  source that failed; the summary counts them;
- ``veduta check --strict`` (or ``strict = true`` in [tool.veduta]): every warning is an error,
  and so are inspect's error findings (a place in water), located and with their codes, in
  text, json and github formats; ``doit cook`` and ``veduta cook`` exit 1 on warnings, cooked
  files still written, the summary saying why;
- warnings persist with the cooked file's state: a no-op cook says how many stand, ``veduta
  check`` shows them for fresh sources.
"""

from __future__ import annotations

import json

import pytest

from tests.gamerepo import Game

BROKEN = '{ "veduta": "model/1", "parts": [ { "shape": "box", "size": [1, 1, 1], "radius": 2 } ] }\n'
SHED = """{
  "veduta": "prefab/1",
  "footprint": [2, 2],
  "entities": [ { "name": "a", "kind": "prop", "model": "broken" } ]
}
"""
HUT = SHED.replace('"broken"', '"crate"')
GROUND = '{ "veduta": "material/1" }\n'
WORLD = """{
  "veduta": "world/1",
  "extent": 4,
  "biomes": [ { "name": "meadow", "ground": "ground" } ],
  "features": [ { "name": "pond", "kind": "lake", "cell": [10, 10], "radius": 6, "depth": 2 } ],
  "places": [ { "name": "home", "prefab": "shed", "cell": [-20, -20] },
              { "name": "wet", "prefab": "hut", "cell": [10, 10] } ]
}
"""
BAD_TEXTURE = '{ "veduta": "texture/1", "size": [8, 8], "layers": [ { "type": "fill", "color": "#12" } ] }\n'
PAINT = '{ "veduta": "material/1", "texture": "stone" }\n'


def lines(cp) -> list[str]:
    return cp.stdout.splitlines()


def as_json(cp) -> list[dict]:
    return [json.loads(line) for line in cp.stdout.splitlines()]


@pytest.fixture
def village(game: Game) -> Game:
    """The test game, plus a prefab whose model is broken, a prefab of the crate, and a world
    placing the first on dry land and the second in its pond."""
    game.write("models/broken.vmodel", BROKEN)
    game.write("prefabs/shed.vprefab", SHED)
    game.write("prefabs/hut.vprefab", HUT)
    game.write("materials/ground.vmaterial", GROUND)
    game.write("worlds/w.vworld", WORLD)
    return game


SHED_FAILED = (
    'assets/prefabs/shed.vprefab:4:57: entities[0].model: warning: model "broken" failed to cook '
    "(assets/models/broken.vmodel has errors)"
)
WORLD_FAILED = (
    'assets/worlds/w.vworld:6:43: places[0].prefab: warning: prefab "shed" names model "broken", '
    "which failed to cook (assets/models/broken.vmodel has errors)"
)


def test_a_failed_model_propagates_to_its_prefab_and_on_to_the_world(village):
    cp = village.cook()
    assert cp.returncode == 1
    assert lines(cp)[:3] == [
        "assets/models/broken.vmodel:1:82: parts[0].radius: not used by shape box",
        SHED_FAILED,
        WORLD_FAILED,
    ], cp.stdout
    assert "1 failed, 2 with a failed dependency (" in cp.stdout
    # the prefab and the world are cooked (their files only name the model)
    assert village.cooked("prefabs/shed.vda").is_file() and village.cooked("worlds/w.vda").is_file()
    # on every cook while the model fails, and with codes in json
    cp = village.cook(env={"VEDUTA_FORMAT": "json"})
    got = [(d["file"], d["line"], d["col"], d["code"]) for d in as_json(cp) if d.get("code") == "DEPENDENCY_FAILED"]
    assert got == [
        ("assets/prefabs/shed.vprefab", 4, 57, "DEPENDENCY_FAILED"),
        ("assets/worlds/w.vworld", 6, 43, "DEPENDENCY_FAILED"),
    ]
    # veduta check says the same, writing nothing
    cp = village.veduta("check")
    assert cp.returncode == 1 and SHED_FAILED in lines(cp) and WORLD_FAILED in lines(cp), cp.stdout
    summary = json.loads(village.veduta("cook", "--json").stdout)["summary"]
    assert (summary["failed"], summary["with_failed_dependency"]) == (1, 2)
    # fixed: nothing is said any more
    village.write("models/broken.vmodel", BROKEN.replace(', "radius": 2', ""))
    cp = village.cook()
    assert cp.returncode == 0 and "failed to cook" not in cp.stdout and "with a failed dependency" not in cp.stdout


def test_a_failed_texture_propagates_to_its_material(game):
    game.write("textures/stone.vtexture", BAD_TEXTURE)
    game.write("materials/paint.vmaterial", PAINT)
    cp = game.cook(env={"VEDUTA_FORMAT": "json"})
    found = {(d["file"], d["path"], d.get("code")): d for d in as_json(cp)}
    d = found[("assets/materials/paint.vmaterial", "texture", "DEPENDENCY_FAILED")]
    assert (d["line"], d["col"], d["severity"]) == (1, 38, "warning")
    assert d["message"] == 'texture "stone" failed to cook (assets/textures/stone.vtexture has errors)'
    assert cp.returncode == 1 and "1 with a failed dependency" in cp.stderr


WATER = (
    "assets/worlds/w.vworld:7:57: places[1].cell: place wet (prefab hut) at cell [10, 10] stands in water "
    "(a vertex of its footprint [9, 9] + 2 x 2 is under water)"
)


@pytest.fixture
def warned(village: Game) -> Game:
    """No error, one warning (the shed names a model that does not exist), and an error finding of
    inspect world only (the hut stands in the pond)."""
    (village.root / "assets/models/broken.vmodel").unlink()
    return village


def test_check_keeps_the_specs_severities_unless_strict(warned):
    cp = warned.veduta("check")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert lines(cp) == [
        'assets/prefabs/shed.vprefab:4:57: entities[0].model: warning: model "broken" does not exist (not checked)'
    ]
    cp = warned.veduta("check", "--strict")
    assert cp.returncode == 1
    assert lines(cp) == [
        'assets/prefabs/shed.vprefab:4:57: entities[0].model: model "broken" does not exist (not checked)',
        "assets/worlds/w.vworld:6:43: places[0].prefab: model broken (used by prefab shed) does "
        "not exist: those entities draw nothing",
        WATER,
    ], cp.stdout
    assert "3 errors (3 of them by --strict: warnings and inspect's error findings), 0 warnings" in cp.stderr
    got = json.loads(warned.veduta("check", "--strict", "--json").stdout)
    assert not got["ok"] and got["strict"] and got["strict_errors"] == 3
    assert [(d["file"], d["line"], d["col"], d["severity"], d["code"]) for d in got["diagnostics"]] == [
        ("assets/prefabs/shed.vprefab", 4, 57, "error", "MISSING_REFERENCE"),
        ("assets/worlds/w.vworld", 6, 43, "error", "WORLD_MODEL_MISSING"),
        ("assets/worlds/w.vworld", 7, 57, "error", "WORLD_PLACE_WATER"),
    ]
    gh = warned.veduta("check", "--strict", "--format", "github")
    assert (
        gh.returncode == 1
        and "::error file=assets/worlds/w.vworld,line=7,col=57,title=WORLD_PLACE_WATER::places[1].cell: place wet"
        in gh.stdout
    )
    # inspect's findings of a source with errors are not run (its errors say enough)
    warned.write("worlds/w.vworld", WORLD.replace('"extent": 4', '"extent": 0'))
    got = json.loads(warned.veduta("check", "--strict", "--json", "worlds/w.vworld").stdout)
    assert [d["path"] for d in got["diagnostics"]] == ["extent"]


def test_strict_cooks_fail_on_warnings_and_still_write(warned):
    assert warned.cook().returncode == 0  # the spec's severities: a missing model is a warning
    cp = warned.veduta("cook", "--strict")
    assert cp.returncode == 1
    assert "cook: 1 warning stands in 1 up-to-date source (veduta check lists them)" in cp.stdout
    assert "cook: failed: 1 warning (--strict makes every warning an error; the cooked files are written)" in cp.stdout
    (warned.root / "pyproject.toml").write_text("[tool.veduta]\nstrict = true\n")
    for cook in (lambda: warned.cook(), lambda: warned.veduta("cook")):
        cp = cook()
        assert cp.returncode == 1 and "strict = true in [tool.veduta] makes every warning an error" in cp.stdout
    warned.write("prefabs/shed.vprefab", SHED.replace('"broken"', '"tree"'))  # the warning gone
    cp = warned.cook()
    assert cp.returncode == 0 and "failed" not in cp.stdout.replace("0 failed", ""), cp.stdout
    assert warned.cooked("prefabs/shed.vda").is_file()
    # the check is strict by the same setting: the place in water stands
    cp = warned.veduta("check")
    assert cp.returncode == 1 and lines(cp) == [WATER], cp.stdout
    assert "by strict = true in [tool.veduta]" in cp.stderr
    result = json.loads(warned.veduta("cook", "--json").stdout)
    assert result["ok"] and result["summary"]["strict"] is True


def test_strict_must_be_true_or_false(game):
    (game.root / "pyproject.toml").write_text("[tool.veduta]\nstrict = 1\n")
    for cp in (game.cook(), game.veduta("check")):
        assert cp.returncode == 2 and "[tool.veduta] strict: expected true or false" in cp.stdout + cp.stderr
        assert "Traceback" not in cp.stderr


def test_warnings_persist_across_a_no_op(warned):
    warning = (
        'assets/prefabs/shed.vprefab:4:57: entities[0].model: warning: model "broken" does not exist (not checked)'
    )
    cp = warned.cook()
    assert warning in lines(cp)
    cp = warned.cook()  # a no-op: one line, not the list
    assert warning not in lines(cp)
    assert "cook: 1 warning stands in 1 up-to-date source (veduta check lists them)" in lines(cp)
    assert "cook: 0 cooked" in cp.stdout
    cp = warned.veduta("check")  # the fresh source's warning, as its cook gave it
    assert cp.returncode == 0 and lines(cp) == [warning]
    assert "8 sources (8 known good by their fresh cooked files)" in cp.stderr and ", 1 warning" in cp.stderr
    got = json.loads(warned.veduta("check", "--json").stdout)
    assert got["compiled"] == 0 and [d["code"] for d in got["diagnostics"]] == ["MISSING_REFERENCE"]
    # the same as a compile gives it
    assert json.loads(warned.veduta("check", "--all", "--json").stdout)["diagnostics"] == got["diagnostics"]
    # without the cook's state (cache/ deleted) the check compiles the source to find its warnings
    import shutil

    shutil.rmtree(warned.root / "cache")
    got = json.loads(warned.veduta("check", "--json").stdout)
    assert [d["code"] for d in got["diagnostics"]] == ["MISSING_REFERENCE"] and got["compiled"] == 8
