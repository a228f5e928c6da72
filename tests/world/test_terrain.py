"""Biomes, relief, features and water: the rules, and scalar == vectorised."""

from __future__ import annotations

import numpy as np
import pytest

from tests.world.worlds import Biome, Feature, Terrain, example_prefabs, example_world
from veduta.world import NO_WATER, Generator
from veduta.world.query import query


def gen(**changes):
    return Generator(example_world(**changes), example_prefabs())


def flat(features, **terrain):
    """A flat world (no relief) with only the given features, no structures."""
    return Generator(
        example_world(
            terrain=Terrain(relief=0.0, **terrain),
            features=features,
            sites=None,
            places=None,
            scatter=None,
            vegetation=None,
        ),
        {},
    )


@pytest.mark.parametrize("weights,scale", [((3, 1), 16), ((1, 2, 3, 2), 16), ((5, 1, 1), 32)])
def test_biome_shares_follow_weights(weights, scale):
    biomes = [Biome(f"b{i}", "g", w) for i, w in enumerate(weights)]
    shares = np.zeros(len(weights))
    for seed in (1, 2):
        g = gen(biomes=biomes, biome_scale=scale, seed=seed)
        b = g.biomes(-512, -512, 1024, 1024)
        shares += np.bincount(b.ravel(), minlength=len(weights)) / b.size / 2
    want = np.asarray(weights) / sum(weights)
    assert np.abs(shares - want).max() < 0.03, (shares, want)


def test_adjacent_in_list_means_adjacent_on_map():
    g = gen(biomes=[Biome(f"b{i}", "g", 1) for i in range(5)], biome_scale=64)
    b = g.biomes(-256, -256, 512, 512)
    jumps = np.concatenate([np.abs(np.diff(b, axis=0)).ravel(), np.abs(np.diff(b, axis=1)).ravel()])
    assert (jumps > 1).mean() < 0.002
    assert (jumps == 1).any()


def test_single_biome():
    g = gen(biomes=[Biome("only", "g", 7)])
    assert not g.biomes(-40, -40, 80, 80).any()
    assert query(g, 3, -4)["biome"] == "only"


def test_no_terrain_is_flat():
    g = Generator(example_world(terrain=None, features=None, sites=None, places=None), {})
    assert not g.heights(-50, -50, 100, 100).any()
    level, wet = g.water(-50, -50, 100, 100)
    assert (level == NO_WATER).all() and not wet.any()


def test_relief_amplitude():
    g = Generator(
        example_world(terrain=Terrain(relief=4.0, relief_scale=32), features=None, sites=None, places=None), {}
    )
    h = g.heights(-300, -300, 600, 600)
    assert h.min() >= -4000 and h.max() <= 4000
    assert h.max() - h.min() > 2000  # it does roll
    assert np.abs(np.diff(h, axis=1)).max() < 1000  # smoothly


def test_hill_raises_to_its_height():
    g = flat([Feature("h", "hill", 5, -7, 20, has_height=True, height=9.0)])
    h = g.heights(-30, -40, 70, 70)
    assert h[-7 + 40, 5 + 30] == 9000
    assert h.max() == 9000
    # nothing at and beyond the radius, less and less toward it
    assert h[-7 + 40, 5 + 30 + 20] == 0 and h[-7 + 40 + 20, 5 + 30] == 0
    row = h[-7 + 40, 5 + 30 : 5 + 30 + 21]
    assert np.all(np.diff(row) <= 0)


def test_negative_hill_is_a_hollow():
    g = flat([Feature("h", "hill", 0, 0, 10, has_height=True, height=-3.0)])
    assert g.heights(0, 0, 1, 1)[0, 0] == -3000


def test_plain_levels_a_hill():
    feats = [
        Feature("h", "hill", 0, 0, 30, has_height=True, height=10.0),
        Feature("p", "plain", 8, 0, 10, has_height=True, height=4.0, falloff=3),
    ]
    g = flat(feats)
    h = g.heights(-40, -40, 80, 80)
    xs, zs = np.meshgrid(np.arange(-40, 40), np.arange(-40, 40))
    d2 = (xs - 8) ** 2 + zs**2
    assert (h[d2 < 7 * 7] == 4000).all()  # inside radius - falloff: exactly its level
    # its level from the ground at its centre when it has no height
    g2 = flat([feats[0], Feature("p", "plain", 8, 0, 10, falloff=3)])
    centre = flat([feats[0]]).heights(8, 0, 1, 1)[0, 0]
    h2 = g2.heights(-40, -40, 80, 80)
    assert (h2[d2 < 7 * 7] == centre).all()
    # beyond the radius the hill is untouched
    untouched = flat([feats[0]]).heights(-40, -40, 80, 80)
    assert (h2[d2 >= 10 * 10] == untouched[d2 >= 10 * 10]).all()


def test_lake_floods_where_the_rules_say():
    lake = Feature("l", "lake", 0, 0, 12, has_height=True, height=1.0, depth=3.0, falloff=4, roughness=0.0)
    g = flat([lake])
    h = g.heights(-30, -30, 61, 61)
    assert h[30, 30] == 1000 - 3000  # the bottom, depth below the level at the centre
    level, wet = g.water(-30, -30, 60, 60)
    xs, zs = np.meshgrid(np.arange(-30, 30) + 0.5, np.arange(-30, 30) + 0.5)
    d = np.hypot(xs, zs)
    assert wet[d < 11].all() and not wet[d > 13].any()
    assert (level[d < 11] == 1000).all()
    assert (level[d > 13.5] == NO_WATER).all()
    # the dry rim: 2 cells 5 cm above the water, then the shore back to the ground (0)
    vx, vz = np.meshgrid(np.arange(-30, 31), np.arange(-30, 31))
    dv = np.hypot(vx, vz)
    assert (h[(dv >= 12.01) & (dv < 13.99)] == 1050).all()
    assert (h[dv >= 18.01] == 0).all()
    assert (h[dv < 11.99] < 1000).all()


def test_lake_level_from_the_ground_at_its_centre():
    feats = [
        Feature("h", "hill", 0, 0, 40, has_height=True, height=20.0),
        Feature("l", "lake", 10, 0, 5, depth=2.0, roughness=0.5),
    ]
    g = flat(feats)
    level_at_centre = flat(feats[:1]).heights(10, 0, 1, 1)[0, 0]
    level, wet = g.water(9, -1, 2, 2)
    assert (level == level_at_centre).all() and wet.all()


def test_wandering_radius_is_seeded_and_bounded():
    lake = Feature("l", "lake", 0, 0, 40, has_height=True, height=0.0, depth=3.0, roughness=1.0)
    a, b = (
        flat(
            [lake],
        ),
        Generator(
            example_world(
                seed=8, terrain=Terrain(), features=[lake], sites=None, places=None, scatter=None, vegetation=None
            ),
            {},
        ),
    )
    wa, wb = a.water(-70, -70, 140, 140)[1], b.water(-70, -70, 140, 140)[1]
    assert (wa != wb).any()
    xs, zs = np.meshgrid(np.arange(-70, 70) + 0.5, np.arange(-70, 70) + 0.5)
    d = np.hypot(xs, zs)
    assert wa[d < 19].all() and not wa[d > 61].any()
    # the shore wanders: the wet radius differs by direction
    assert wa[70, 70 + 25 :].sum() != wa[70 + 25 :, 70].sum() or wa[70, :45].sum() != wa[:45, 70].sum()


def test_sea_level_floods_low_ground_and_lakes():
    feats = [
        Feature("hollow", "hill", 0, 0, 10, has_height=True, height=-5.0),
        Feature("l", "lake", 40, 0, 5, has_height=True, height=-3.0, depth=1.0, roughness=0),
    ]
    g = flat(feats, sea=True, sea_level=-1.0)
    level, wet = g.water(-20, -20, 70, 40)
    assert (level >= -1000).all()
    assert wet[20, 20] and level[20, 20] == -1000  # the hollow's centre
    assert wet[20, 60] and level[20, 60] == -1000  # the lake rose to the sea
    assert not wet[0, 0]  # flat ground at 0 stays dry


def test_feature_order_matters():
    hill = Feature("h", "hill", 0, 0, 10, has_height=True, height=5.0)
    plain = Feature("p", "plain", 0, 0, 10, has_height=True, height=1.0, falloff=2)
    assert flat([hill, plain]).heights(0, 0, 1, 1)[0, 0] == 1000
    assert flat([plain, hill]).heights(0, 0, 1, 1)[0, 0] == 6000


def test_scalar_ground_water_biome_equal_vectorised(example):
    t = example.terrain
    for x0, z0 in ((-40, 10), (5, -70), (115, -45), (-160, -8)):
        g = t.ground(x0, z0, 17, 13)
        lv = t.water_levels(x0, z0, 17, 13)
        b = t.biomes(x0, z0, 17, 13)
        for j in range(0, 13, 2):
            for i in range(0, 17, 3):
                assert g[j, i] == t.ground_at(x0 + i, z0 + j)
                assert lv[j, i] == t.water_level_at(x0 + i, z0 + j)
                assert b[j, i] == t.biome_at(x0 + i, z0 + j)


def test_rectangles_agree_with_each_other(example):
    big = example.heights(-80, -80, 160, 160)
    small = example.heights(-13, 7, 30, 21)
    assert (big[7 + 80 : 28 + 80, -13 + 80 : 17 + 80] == small).all()
    lb, wb = example.water(-80, -80, 160, 160)
    ls, ws = example.water(-31, 12, 9, 9)
    assert (lb[92:101, 49:58] == ls).all() and (wb[92:101, 49:58] == ws).all()


@pytest.mark.parametrize("weights", [(3, 1), (1, 2, 3, 2), (5, 1, 1), (1, 0, 1), (7,), (200, 1, 1, 200)])
def test_biome_cuts_give_the_equalised_biome_of_every_field_value(weights):
    """Terrain.biomes compares the biome field with cuts on it (field_cuts) instead of equalising
    every cell: the biome is the one the equalised field gives, for every value the field can
    take (and one beyond each end)."""
    from veduta.world.tables import equalise
    from veduta.world.terrain import BIOME_OCTAVES, field_cuts

    total = sum(weights)
    thresholds = np.cumsum(np.asarray(weights, dtype=np.int64))[:-1] * 65536
    span = ((1 << BIOME_OCTAVES) - 1) * 32768
    f = np.arange(-span - 1, span + 2, dtype=np.int64)
    want = np.searchsorted(thresholds, equalise(f) * total, side="right")
    cuts = np.asarray(field_cuts(thresholds.tolist(), total), dtype=np.int64)
    assert (np.searchsorted(cuts, f, side="right") == want).all()
    assert len(set(want.tolist())) == sum(1 for w in weights if w)
    g = gen(biomes=[Biome(f"b{i}", "g", w) for i, w in enumerate(weights)], biome_scale=8)
    xs, zs = np.arange(-40, 40), np.arange(-30, 30)
    assert g.biomes(-40, -30, 80, 60).tolist() == [[g.terrain.biome_at(x, z) for x in xs.tolist()] for z in zs.tolist()]
