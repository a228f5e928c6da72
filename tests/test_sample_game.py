"""The sample game in assets/ is exemplary: it cooks and checks without a warning, every model and
prefab inspects clean, and its world stays within the console's triangle budget in every view the
inspect sheet shows (the start cell and each place), with every feature of the formats still in
it.  Run as a new user would, from the command line, on a copy of the game."""

from __future__ import annotations

import json

import pytest

from tests.gamerepo import REPO, sample_game
from veduta.base.kinds import KINDS


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    g = sample_game(tmp_path_factory.mktemp("sample") / "game")
    cp = g.veduta("cook")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return g


def _names(folder: str, suffix: str) -> list[str]:
    return sorted(p.name[: -len(suffix)] for p in (REPO / "assets" / folder).rglob("*" + suffix))


def test_it_cooks_and_checks_without_a_warning(game):
    cp = game.veduta("check", "--all", "--json")
    result = json.loads(cp.stdout)
    assert cp.returncode == 0 and result["diagnostics"] == [], result["diagnostics"]
    assert "warning" not in game.veduta("cook").stdout


def test_every_model_and_prefab_inspects_clean(game):
    for kind, folder, suffix in (("model", "models", ".vmodel"), ("prefab", "prefabs", ".vprefab")):
        for name in _names(folder, suffix):
            report = json.loads(game.veduta("inspect", kind, name, "--json").stdout)
            assert report["status"] == "ok" and report["findings"] == [], (kind, name, report["findings"])


def test_the_world_keeps_the_budget_in_every_view_of_the_sheet(game, tmp_path):
    sheet = tmp_path / "valley.png"
    cp = game.veduta("inspect", "world", "valley", "--json", "--sheet", str(sheet))
    report = json.loads(cp.stdout)
    assert cp.returncode == 0 and report["findings"] == [], report["findings"]
    views = {v["name"]: v["triangles"] for v in report["views"]}
    assert set(views) == {"start", "place village_well", "place keeper_cottage"}
    assert max(views.values()) <= report["budget"] == 1200, views
    assert sheet.stat().st_size > 0


def test_it_still_shows_every_feature():
    """Every kind of source, every model shape, every world feature kind, vegetation by model and
    by prefab, with and without an area, scatter, sites, places, persistent entities, a parent,
    levels of detail with and without their own geometry."""
    text = {k.name: "".join(p.read_text() for p in (REPO / "assets" / k.folder).rglob("*" + k.suffix)) for k in KINDS}
    assert all(text.values())
    for shape in ("box", "cylinder", "sphere", "plane", "extrude", "lathe", "mirror"):
        assert f'"shape": "{shape}"' in text["model"], shape
    world = json.loads((REPO / "assets/worlds/valley.vworld").read_text())
    assert {f["kind"] for f in world["features"]} == {"hill", "plain", "lake", "sea"}
    veg = world["vegetation"]
    assert {("model" in v, "cell" in v) for v in veg} == {(True, False), (False, True), (False, False), (True, True)}
    assert world["scatter"] and world["sites"] and world["places"] and world["entities"]
    assert '"parent":' in text["prefab"] and '"lod":' in text["model"] and '"model": "tree_far"' in text["model"]
