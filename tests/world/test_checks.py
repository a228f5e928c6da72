"""place_findings: each WORLD_PLACE_* finding both ways, and a missing prefab's place owning its cell."""

from __future__ import annotations

import numpy as np
import pytest

from tests.world.worlds import Place, example_prefabs, example_world
from veduta.world import Generator
from veduta.world.checks import place_findings, place_footprint
from veduta.world.entities import chunk_entities
from veduta.world.query import query


def codes(findings):
    return [f["code"] for f in findings]


def test_the_spec_capital_is_clean(example):
    out = place_findings(example, "capital", "city", (120, -40), 90)
    assert not [f for f in out if f["severity"] == "error"], out


def test_water(example):
    out = place_findings(example, "jetty", "village", (-30, 20))
    assert "WORLD_PLACE_WATER" in codes(out)
    assert out[codes(out).index("WORLD_PLACE_WATER")]["place"] == "jetty"
    assert "WORLD_PLACE_WATER" not in codes(place_findings(example, "jetty", "village", (-30, 60)))


def test_overlap_and_moving_a_place(example):
    out = place_findings(example, "market", "village", (122, -40))
    f = [f for f in out if f["code"] == "WORLD_PLACE_OVERLAP"]
    assert f and f[0]["other"] == "capital" and f[0]["cell"] == [122, -40]
    # the capital itself, moved by two cells, is not compared with its old self
    assert "WORLD_PLACE_OVERLAP" not in codes(place_findings(example, "capital", "city", (122, -40), 90))


def test_biome(example):
    b = example.biomes(-200, -200, 400, 400)
    forest = example.p.biome_index("forest")
    plain = example.p.biome_index("plain")
    j, i = np.argwhere(b == forest)[0]
    out = place_findings(example, "hall", "village", (int(i) - 200, int(j) - 200))
    assert "WORLD_PLACE_BIOME" in codes(out)
    assert out[codes(out).index("WORLD_PLACE_BIOME")]["biome"] == "forest"
    j, i = np.argwhere(b == plain)[0]
    assert "WORLD_PLACE_BIOME" not in codes(place_findings(example, "hall", "village", (int(i) - 200, int(j) - 200)))


def test_distance(example):
    # capital (city, 9 x 12 cells at x 116..124) and a village 11 cells east: the village keeps 20 m from cities
    out = place_findings(example, "market", "village", (140, -40))
    f = [f for f in out if f["code"] == "WORLD_PLACE_DISTANCE"]
    assert f and f[0]["other"] == "capital" and "20 m" in f[0]["message"]
    assert "WORLD_PLACE_DISTANCE" not in codes(place_findings(example, "market", "village", (160, -40)))


def test_missing_prefab_and_outside(example):
    out = place_findings(example, "ghost", "nope", (0, 0))
    assert codes(out)[0] == "WORLD_PREFAB_MISSING" and out[0]["prefab"] == "nope"
    assert codes(place_findings(example, "far", "city", (9000, 0))) == ["WORLD_PLACE_OUTSIDE"]
    n = example.p.cells
    assert codes(place_findings(example, "edge", "city", (n - 2, 0))) == ["WORLD_PLACE_OUTSIDE"]
    assert "WORLD_PLACE_OUTSIDE" not in codes(place_findings(example, "edge", "city", (n - 8, 0)))


def test_drops_site(example):
    site = next(s for s in example.structures_in(-300, -300, 600, 600) if s.kind == "site")
    out = place_findings(example, "tower", "oak", (site.x0, site.z0))
    f = [f for f in out if f["code"] == "WORLD_PLACE_DROPS_SITE"]
    assert f and f[0]["other"] == site.name and f[0]["severity"] == "note"
    far = place_findings(example, "tower", "oak", (site.x0 - 40, site.z0 - 40))
    assert site.name not in [f.get("other") for f in far]
    # the world's own capital already dropped what it drops: reported the same way
    gen = Generator(example_world(places=[Place("capital", "city", site.x0, site.z0, 0)]), example_prefabs())
    assert site.name in [
        f["other"]
        for f in place_findings(gen, "capital", "city", (site.x0, site.z0))
        if f["code"] == "WORLD_PLACE_DROPS_SITE"
    ]


def test_footprint_turns(example):
    assert place_footprint(example, "city", (120, -40), 90) == (116, -46, 9, 12)
    assert place_footprint(example, "city", (120, -40), 0) == (114, -44, 12, 9)
    assert place_footprint(example, "nope", (3, 4), 90) == (3, 4, 1, 1)


@pytest.mark.parametrize("cell", [(120, -40)])
def test_missing_prefab_place_owns_its_cell(cell):
    prefabs = example_prefabs()
    del prefabs["city"]
    gen = Generator(example_world(), prefabs)
    q = query(gen, *cell)
    assert q["owner"] == {"kind": "place", "name": "capital", "prefab": "city"}
    beside = query(gen, cell[0] + 1, cell[1])["owner"]
    assert beside is None or beside["name"] != "capital"
    # it spawns nothing, and the rectangle path agrees with the scalar one
    c = gen.p.chunk
    names = [e["name"] for e in chunk_entities(gen, cell[0] // c, cell[1] // c)]
    assert "capital" not in names
    lay = gen.chunk_layers(cell[0] // c, cell[1] // c)
    j, i = cell[1] - lay.z0, cell[0] - lay.x0
    assert lay.structures[int(lay.owner_index[j, i])].name == "capital"
