"""The drawing model: ground levels of detail, skirts, water, flora thinning, views."""

from __future__ import annotations

import numpy as np
import pytest

from tests.world.worlds import Biome, Entity, Feature, Place, Terrain, Vegetation, World, example_prefabs
from veduta.world import Generator
from veduta.world import draw as D

MODELS = {
    "grass_tuft": D.ModelDraw("grass_tuft", (6,), (), 30.0, 0.35),
    "poppy": D.ModelDraw("poppy", (30, 10), (10.0,), 40.0, 0.45),
    "tree": D.ModelDraw("tree", (152, 40, 20), (15.0, 35.0), 80.0, 2.0),
    "oak": D.ModelDraw("oak", (900, 400, 200, 12), (20.0, 45.0, 90.0), 160.0, 4.0),
    "keep": D.ModelDraw("keep", (100,), (), 0.0, 5.0),
    "hall": D.ModelDraw("hall", (100,), (), 0.0, 5.0),
    "well": D.ModelDraw("well", (50,), (), 0.0, 1.0),
    "hero": D.ModelDraw("hero", (272,), (), 0.0, 1.0),
}


def flat_world(**kw):
    return World(biomes=[Biome("plain", "grass", 1)], **kw)


def ortho(size, y=30.0):
    return {"type": "orthographic", "fov_deg": 0.0, "size": size, "near": 0.1, "far": 100.0,
            "position": [0.0, y, 0.0], "look_at": [0.0, 0.0, 0.0]}


def test_flat_ground_is_one_quad_per_chunk_without_skirts():
    gen = Generator(flat_world(), {})
    cg = D.chunk_ground(gen, 0, 0)
    assert cg.grids == (16,) and cg.triangles == (2,) and cg.skirt_triangles == (0,) and cg.water_triangles == 0
    mesh = D.ground_mesh(gen, 0, 0)
    assert mesh["triangles"].shape == (2, 3) and len(mesh["vertices"]) == 4


def test_the_finest_grid_passes_within_6_cm_and_the_next_coarser_does_not(example):
    seen = set()
    for cx in range(-6, 6):
        for cz in range(-6, 6):
            cg = D.chunk_ground(example, cx, cz)
            g = cg.grid
            seen.add(g)
            assert np.abs(D.interpolate(cg.ground, g) - cg.ground).max() <= D.TOLERANCE_MM
            if cg.biome.min() == cg.biome.max() and g < 16:
                assert np.abs(D.interpolate(cg.ground, 2 * g) - cg.ground).max() > D.TOLERANCE_MM
            if cg.biome.min() != cg.biome.max():
                assert g <= 2
            # every coarser level is the next grid, and coarser levels draw no more
            assert list(cg.grids) == [x for x in D.GRIDS if x >= g]
            assert list(cg.triangles) == sorted(cg.triangles, reverse=True)
    assert len(seen) >= 3


def test_biome_edges_on_flat_ground_are_kept_at_one_cell():
    w = World(biomes=[Biome("plain", "grass", 1), Biome("forest", "moss", 1)], biome_scale=8)
    gen = Generator(w, {})
    mixed = [(cx, cz) for cx in range(-4, 4) for cz in range(-4, 4)
             if len(set(gen.biomes(cx * 16, cz * 16, 16, 16).ravel().tolist())) > 1]
    assert mixed
    cg = D.chunk_ground(gen, *mixed[0])
    assert cg.grid == 1
    # flat runs merge along x, but never across a biome edge
    b = cg.biome
    runs = sum(1 + int((b[j, 1:] != b[j, :-1]).sum()) for j in range(16))
    assert cg.triangles[0] == 2 * runs < 2 * 256
    mesh = D.ground_mesh(gen, *mixed[0])
    assert len(mesh["triangles"]) == cg.triangles[0]
    # a one-biome flat chunk is one quad
    one = [(cx, cz) for cx in range(-4, 4) for cz in range(-4, 4) if (cx, cz) not in mixed]
    if one:
        assert D.chunk_ground(gen, *one[0]).triangles == (2,)


def test_ground_mesh_faces_up_and_matches_the_count(example):
    for cx, cz, level in ((0, 0, 0), (-2, 1, 0), (3, -4, 1)):
        cg = D.chunk_ground(example, cx, cz)
        m = D.ground_mesh(example, cx, cz, level)
        assert len(m["triangles"]) == cg.triangles[level] and m["grid"] == cg.grids[level]
        v = m["vertices"][m["triangles"]]
        n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
        assert (n[:, 1] > 0).all()
        assert m["vertices"][:, 0].min() == cx * 16 and m["vertices"][:, 0].max() == cx * 16 + 16


def test_skirts_hang_below_edges_that_are_not_straight(example):
    cg = D.chunk_ground(example, 0, 0)
    edges = D.edge_profiles(cg.ground)
    for e, depth in zip(edges, cg.skirt_edges, strict=True):
        assert depth == (0 if D.straight(e) else int(e.max() - e.min()))
    sk = D.skirt_mesh(example, 0, 0)
    assert len(sk["triangles"]) == cg.skirt_triangles[0] > 0
    assert sk["vertices"][:, 1].min() * 1000 == pytest.approx(cg.ground.min() - max(cg.skirt_edges), abs=1)
    assert D.straight(np.array([0, 5, 10, 15])) and not D.straight(np.array([0, 5, 11, 15]))
    gen = Generator(flat_world(terrain=Terrain(relief=0.0)), {})
    assert D.skirt_mesh(gen, 0, 0)["triangles"].shape == (0, 3)


def test_water_quads_cover_every_cell_with_a_corner_under_water(example):
    cg = D.chunk_ground(example, -2, 1)  # mirror_lake
    ground = cg.ground
    lv = example.terrain.water_levels(-32, 16, 17, 17)
    under = ground < lv
    corner = under[:-1, :-1] | under[:-1, 1:] | under[1:, :-1] | under[1:, 1:]
    assert (cg.water_cell == corner).all() and corner.any()
    m = D.water_mesh(example, -2, 1)
    assert len(m["triangles"]) == cg.water_triangles > 0
    # the quads cover exactly the water cells
    covered = np.zeros((16, 16), dtype=bool)
    for a, b in zip(m["vertices"][0::4], m["vertices"][3::4], strict=True):
        covered[int(a[2]) - 16, int(a[0]) + 32:int(b[0]) + 32] = True
    assert (covered == corner).all()
    assert D.chunk_ground(example, 5, 5).water_triangles == 0


def test_drawn_height_is_within_6_cm_and_on_the_finest_grid(example):
    for x, z in ((5, 5), (-30, 20), (121, -39), (17, -3), (-100, 60)):
        q = example.query(x, z)
        assert abs(q["drawn_height"] - q["height"]) <= 0.06 + 1e-9
    # on a grid-1 chunk the drawn height is the centre height exactly
    for cx in range(-4, 4):
        cg = D.chunk_ground(example, cx, 0)
        if cg.grid == 1:
            x, z = cx * 16 + 3, 5
            assert example.drawn_height(x, z) == (int(cg.ground[5, 3]) + int(cg.ground[6, 4])) >> 1
            break


def test_thinning_keeps_a_nested_seeded_half_then_quarter():
    h = np.arange(1 << 16, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    k0, k1, k2 = (D.thin_keep(h, np.full(len(h), k)) for k in (0, 1, 2))
    assert k0.all()
    assert abs(k1.mean() - 0.5) < 0.02 and abs(k2.mean() - 0.25) < 0.02
    assert not (k2 & ~k1).any()  # the quarter is half of the half


def test_rule_cost_counts_plants_and_thins_them(example):
    near = D.rule_cost(example, "grass", MODELS, 0, 0, 32, 32)
    assert near["count"] > 0 and near["triangles"] == near["count"] * 6 == near["full_triangles"]
    assert D.rule_cost(example, "grass", MODELS, 0, 0, 32, 32, distance=31)["triangles"] == 0  # past draw_distance
    far = D.rule_cost(example, "poppies", MODELS, -20, 0, 16, 16, distance=20)
    assert 0 < far["triangles"] < far["count"] * 10  # level 1: about half drawn, with 10 triangles each
    grove = D.rule_cost(example, "oak_grove", MODELS, 28, -2, 24, 24)
    assert grove["kind"] == "prefab" and grove["triangles"] == grove["count"] * 900
    assert D.rule_cost(example, "grass", {}, 0, 0, 8, 8)["missing"] == ["grass_tuft"]


def test_ortho_camera_counts_0866_size_and_reaches_its_half_width():
    gen = Generator(flat_world(), {})
    cam = D.make_camera(ortho(12))
    assert cam.effective(np.array([1.0, 50.0])).tolist() == [0.866 * 12] * 2
    assert D.view_reach(gen, ortho(12)) == pytest.approx(8.0)  # 12 x 4/3 wide
    assert D.loaded_radius(gen) == 16.0


def test_perspective_distances_are_as_through_a_60_degree_lens():
    rec = {"type": "perspective", "fov_deg": 30.0, "size": 0.0, "near": 0.1, "far": 50.0,
           "position": [0.0, 5.0, 10.0], "look_at": [0.0, 0.0, 0.0]}
    cam = D.make_camera(rec)
    assert cam.effective(np.array([10.0]))[0] == pytest.approx(10 * np.tan(np.radians(15)) / np.tan(np.radians(30)))
    planes = cam.planes()
    assert ((planes[:, :3] @ np.array([0.0, 0.0, 0.0]) + planes[:, 3]) >= 0).all()  # looks at the origin
    assert not ((planes[:, :3] @ np.array([0.0, 0.0, 30.0]) + planes[:, 3]) >= 0).all()  # behind it


def test_views_cull_chunks_and_count_levels():
    w = flat_world(camera=None, entities=[Entity("player", kind="player", model="hero")])
    gen = Generator(w, {})
    v = D.Drawer(gen, MODELS, ortho(12)).view((0, 0))
    # a top-down 16 x 12 m view around the origin sees 4 chunks' corners of the 9 loaded
    assert v["chunks"] == 9 and v["chunks_drawn"] == 4
    assert v["ground"] == 4 * 2 and v["entities"] == 272 and v["triangles"] == 8 + 272
    wide = D.Drawer(gen, MODELS, ortho(60, y=30)).view((0, 0))
    assert wide["chunks_drawn"] == 9


def test_a_view_draws_structures_and_flora(example):
    d = D.Drawer(example, MODELS)
    v = d.view((120, -40), "capital")
    assert v["entities"] >= 100  # the keep of the capital at least
    assert v["triangles"] == v["ground"] + v["skirts"] + v["water"] + v["flora"] + v["entities"]
    start = d.view((0, 0))
    assert start["flora"] > 0 and start["plants_drawn"] > 0
    # without models nothing but the ground is drawn, and the missing ones are named
    bare = D.Drawer(example, {}).view((0, 0))
    assert bare["flora"] == bare["entities"] == 0 and "grass_tuft" in D.Drawer(example, {}).missing_models | {
        "grass_tuft"}


def test_loaded_window_and_places_with_missing_prefabs():
    gen = Generator(flat_world(view=2, places=[Place("ghost", "nope", 3, 3)]), example_prefabs())
    assert len(D.loaded_chunks(gen, (0, 0))) == 25
    assert D.loaded_chunks(gen, (0, 0))[0] == (-2, -2)
    assert D.Drawer(gen, MODELS).view((3, 3))["entities"] == 0


def test_flat_world_features_do_not_change_the_counts_of_far_chunks():
    w = flat_world(features=[Feature("h", "hill", 0, 0, 8, has_height=True, height=3.0, falloff=0, roughness=0)],
                   vegetation=[Vegetation("grass", model="grass_tuft", density=0.5)])
    gen = Generator(w, {})
    assert D.chunk_ground(gen, 0, 0).grid < 16
    assert D.chunk_ground(gen, 5, 5).triangles == (2,)


def test_the_drawing_bench_runs():
    from veduta.world.bench import bench_draw

    r = bench_draw(repeat=1, chunks=3, valley=False)
    assert r["ground_lod_one_chunk_ms"] > 0 and r["chunk_terrain_layers_floor_ms"] > 0
