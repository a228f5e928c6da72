"""Property tests over random worlds: the scalar query path equals the rectangle path, and
rectangles agree with each other wherever they overlap."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.world.test_generator import busy_prefabs
from tests.world.worlds import Biome, Feature, Place, Scatter, Site, Terrain, Vegetation, World
from veduta.world import Generator
from veduta.world.cover import NONE, STRUCTURE
from veduta.world.query import query

kinds = st.sampled_from(["hill", "plain", "lake", "sea"])
feature = st.builds(
    Feature,
    name=st.sampled_from(["a", "b", "c", "d"]),
    kind=kinds,
    x=st.integers(-30, 30),
    z=st.integers(-30, 30),
    radius=st.integers(1, 25),
    has_height=st.booleans(),
    height=st.floats(-5, 5, width=32),
    depth=st.floats(0.125, 4, width=32),
    falloff=st.integers(0, 8),
    roughness=st.floats(0, 1, width=32),
)
world = st.builds(
    World,
    seed=st.integers(0, 2**64 - 1),
    cell=st.sampled_from([0.5, 1.0, 2.5]),
    chunk=st.sampled_from([4, 8, 16]),
    extent=st.just(8),
    biome_scale=st.integers(4, 40),
    biomes=st.just([Biome("plain", "grass", 2), Biome("forest", "moss", 1), Biome("sand", "sand", 1)]),
    terrain=st.builds(
        Terrain,
        relief=st.floats(0, 6, width=32),
        relief_scale=st.integers(4, 40),
        sea=st.booleans(),
        sea_level=st.floats(-2, 1, width=32),
    ),
    features=st.lists(feature, max_size=4),
    scatter=st.just([Scatter("tree", None, 0.3)]),
    sites=st.just([Site("village", ["village", "hut"], None, 20, 0.7), Site("watch", ["tower"], ["sand"], 14, 1.0)]),
    places=st.lists(
        st.builds(
            Place,
            name=st.sampled_from(["p", "q"]),
            prefab=st.sampled_from(["city", "hut"]),
            x=st.integers(-20, 20),
            z=st.integers(-20, 20),
            rotation=st.sampled_from([0, 90, 180, 270]),
        ),
        max_size=2,
    ),
    vegetation=st.just(
        [
            Vegetation("grass", model="tuft", density=0.5, scale_min=0.5, scale_max=1.5),
            Vegetation("grove", prefab="oak", density=0.4, area=True, x=3, z=-2, radius=9),
        ]
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world, st.integers(-40, 20), st.integers(-40, 20))
def test_query_equals_layers_in_random_worlds(w, x0, z0):
    g = Generator(w, busy_prefabs())
    lay = g.layers(x0, z0, 20, 20)
    for j in range(0, 20, 3):
        for i in range(0, 20, 3):
            q = query(g, x0 + i, z0 + j)
            assert round(q["height"] * 1000) == lay.centre[j, i]
            assert q["water"]["wet"] == bool(lay.wet[j, i])
            assert q["biome"] == g.p.biome_names[lay.biome[j, i]]
            kind = int(lay.owner_kind[j, i])
            if kind == NONE:
                assert q["owner"] is None
            elif kind == STRUCTURE:
                assert q["owner"]["name"] == lay.structures[lay.owner_index[j, i]].name
            else:
                assert q["owner"]["kind"] in ("scatter", "vegetation")
            assert len(q["plants"]) == sum(bool(pa.mask[j, i]) for pa in lay.plants)
    # overlapping rectangles agree
    part = g.heights(x0 + 5, z0 + 3, 9, 11)
    assert (lay.ground[3:14, 5:14] == part).all()
    t = g.terrain
    for j in range(0, 21, 5):
        for i in range(0, 21, 5):
            assert t.ground(x0 + i, z0 + j, 1, 1)[0, 0] == t.ground_at(x0 + i, z0 + j)
            assert t.water_levels(x0 + i, z0 + j, 1, 1)[0, 0] == t.water_level_at(x0 + i, z0 + j)
    assert np.isin(lay.owner_kind, [0, 1, 2, 3]).all()
