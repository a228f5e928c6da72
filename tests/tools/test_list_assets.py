"""list_assets: every source's kind, name, path and state, with the error and warning counts the
cook's own checks find."""

from __future__ import annotations

import pytest

from tests.gamerepo import BAD, Game
from veduta import api
from veduta.base.errors import UsageError

GHOST_LOD = """{"veduta": "model/1",
  "lod": [ { "distance": 10, "model": "ghost" } ],
  "parts": [ { "shape": "box", "size": [1, 1, 1] } ] }"""


def states(project, kind=None) -> dict[str, tuple[str, int, int]]:
    return {a["name"]: (a["state"], a["errors"], a["warnings"]) for a in api.list_assets(project, kind)["assets"]}


def test_states_follow_the_cook(game: Game, here):
    listed = api.list_assets(here)
    assert listed["assets"] == [
        {
            "kind": "model",
            "name": "crate",
            "path": "assets/models/crate.vmodel",
            "state": "never_cooked",
            "errors": 0,
            "warnings": 0,
        },
        {
            "kind": "model",
            "name": "barrel",
            "path": "assets/models/props/barrel.vmodel",
            "state": "never_cooked",
            "errors": 0,
            "warnings": 0,
        },
        {
            "kind": "model",
            "name": "tree",
            "path": "assets/models/tree.vmodel",
            "state": "never_cooked",
            "errors": 0,
            "warnings": 0,
        },
        {
            "kind": "model",
            "name": "tree_far",
            "path": "assets/models/tree_far.vmodel",
            "state": "never_cooked",
            "errors": 0,
            "warnings": 0,
        },
    ]
    assert listed["counts"] == {"fresh": 0, "stale": 0, "failed": 0, "never_cooked": 4} and listed["problems"] == []
    game.write("models/crate.vmodel", GHOST_LOD)  # a warning
    api.cook(here, jobs=1)
    assert states(here) == {
        "crate": ("fresh", 0, 1),
        "barrel": ("fresh", 0, 0),
        "tree": ("fresh", 0, 0),
        "tree_far": ("fresh", 0, 0),
    }
    game.write("models/tree_far.vmodel", BAD)  # tree names it as its far level: tree is stale too
    game.write("models/props/barrel.vmodel", (game.root / "assets/models/props/barrel.vmodel").read_text() + " ")
    check = api.check(here, full=True)
    got = states(here)
    # (tree's far level names tree_far, which fails: DEPENDENCY_FAILED there, a warning)
    assert got == {
        "crate": ("fresh", 0, 1),
        "barrel": ("stale", 0, 0),
        "tree": ("stale", 0, 1),
        "tree_far": ("failed", check["errors"], 0),
    }
    assert check["errors"] >= 3 and check["warnings"] == 2
    api.cook(here, jobs=1)
    assert states(here)["tree_far"][0] == "failed"  # its cooked file is gone: the cook refused it


def test_one_kind_and_an_unknown_kind(game: Game, here):
    game.write("materials/wood.vmaterial", '{"veduta": "material/1", "albedo": "#806040"}')
    assert states(here, "material") == {"wood": ("never_cooked", 0, 0)}
    assert set(states(here, "model")) == {"crate", "barrel", "tree", "tree_far"}
    assert states(here, "world") == {}
    with pytest.raises(UsageError, match=r'no asset kind "materail" \(did you mean material\?\)'):
        api.list_assets(here, "materail")


def test_a_duplicate_name_fails_both_sources(game: Game, here):
    game.write("models/more/crate.vmodel", (game.root / "assets/models/crate.vmodel").read_text())
    got = api.list_assets(here, "model")["assets"]
    crates = [(a["path"], a["state"], a["errors"]) for a in got if a["name"] == "crate"]
    assert crates == [("assets/models/crate.vmodel", "failed", 1), ("assets/models/more/crate.vmodel", "failed", 1)]
