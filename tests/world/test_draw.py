"""The drawing model: ground levels of detail, skirts, water, flora thinning, views."""

from __future__ import annotations

import numpy as np
import pytest

from tests.world.worlds import Biome, Entity, Feature, Place, Terrain, Vegetation, World, example_prefabs
from veduta.world import Generator
from veduta.world import draw as D
from veduta.world.draw import drawn_height
from veduta.world.query import query

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
    return {
        "type": "orthographic",
        "fov_deg": 0.0,
        "size": size,
        "near": 0.1,
        "far": 100.0,
        "position": [0.0, y, 0.0],
        "look_at": [0.0, 0.0, 0.0],
    }


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
    mixed = [
        (cx, cz)
        for cx in range(-4, 4)
        for cz in range(-4, 4)
        if len(set(gen.biomes(cx * 16, cz * 16, 16, 16).ravel().tolist())) > 1
    ]
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
        covered[int(a[2]) - 16, int(a[0]) + 32 : int(b[0]) + 32] = True
    assert (covered == corner).all()
    assert D.chunk_ground(example, 5, 5).water_triangles == 0


def test_drawn_height_is_within_6_cm_and_on_the_finest_grid(example):
    for x, z in ((5, 5), (-30, 20), (121, -39), (17, -3), (-100, 60)):
        q = query(example, x, z)
        assert abs(q["drawn_height"] - q["height"]) <= 0.06 + 1e-9
    # on a grid-1 chunk the drawn height is the centre height exactly
    for cx in range(-4, 4):
        cg = D.chunk_ground(example, cx, 0)
        if cg.grid == 1:
            x, z = cx * 16 + 3, 5
            assert drawn_height(example, x, z) == (int(cg.ground[5, 3]) + int(cg.ground[6, 4])) >> 1
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
    rec = {
        "type": "perspective",
        "fov_deg": 30.0,
        "size": 0.0,
        "near": 0.1,
        "far": 50.0,
        "position": [0.0, 5.0, 10.0],
        "look_at": [0.0, 0.0, 0.0],
    }
    cam = D.make_camera(rec)
    assert cam.effective(np.array([10.0]))[0] == pytest.approx(10 * np.tan(np.radians(15)) / np.tan(np.radians(30)))
    planes = cam.planes()
    assert ((planes[:, :3] @ np.array([0.0, 0.0, 0.0]) + planes[:, 3]) >= 0).all()  # looks at the origin
    assert not ((planes[:, :3] @ np.array([0.0, 0.0, 30.0]) + planes[:, 3]) >= 0).all()  # behind it


def test_views_cull_chunks_and_count_levels():
    w = flat_world(camera=None, entities=[Entity("player", kind="player", model="hero")])
    gen = Generator(w, {})
    v = D.Drawer(gen, MODELS, ortho(12)).view((0, 0))
    # a top-down 16 x 12 m view around the origin sees 4 chunks' corners of the 9 of the window;
    # the chunks the engine may keep beyond it are out of sight, so the window is the worst
    assert v["window"] == {"chunks": 9, "triangles": v["triangles"]} and v["chunks"] == 9 and v["kept"] == [0, 0]
    assert v["chunks_drawn"] == 4
    assert v["ground"] == 4 * 2 and v["entities"] == 272 and v["triangles"] == 8 + 272
    wide = D.Drawer(gen, MODELS, ortho(60, y=30)).view((0, 0))
    # an 80 x 60 m one (x within 40 m, z within 30 m of the focus) sees the chunks kept beyond
    # the window too, except those south (z 32..48 m): 16 loaded and drawn at worst, kept north
    assert wide["chunks"] == wide["chunks_drawn"] == 16 and wide["window"] == {"chunks": 9, "triangles": 9 * 2 + 272}
    assert wide["triangles"] == 16 * 2 + 272 and wide["kept"][1] == -1


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
        "grass_tuft"
    }


def test_loaded_window_and_places_with_missing_prefabs():
    gen = Generator(flat_world(view=2, places=[Place("ghost", "nope", 3, 3)]), example_prefabs())
    assert len(D.loaded_chunks(gen, (0, 0))) == 25
    assert D.loaded_chunks(gen, (0, 0))[0] == (-2, -2)
    assert D.Drawer(gen, MODELS).view((3, 3))["entities"] == 0


def _engine_walk(view: int, steps: int, seed: int):
    """The engine's streaming rule (world-format.md, "Cells and chunks") on a random walk of the
    focus's chunk (king moves, sometimes a stand or a jump of two): the window of chunks within
    view is loaded, a loaded chunk is unloaded when it is more than view + 1 away.  Yields the
    focus's chunk and the loaded chunks after each step."""
    rng = np.random.default_rng(seed)
    f = (0, 0)
    loaded = {(x, z) for x in range(-view, view + 1) for z in range(-view, view + 1)}
    for _ in range(steps):
        dx, dz = (int(v) for v in rng.integers(-1, 2, size=2) * (2 if rng.random() < 0.05 else 1))
        f = (f[0] + dx, f[1] + dz)
        loaded = {c for c in loaded if max(abs(c[0] - f[0]), abs(c[1] - f[1])) <= view + 1}
        loaded |= {(f[0] + x, f[1] + z) for x in range(-view, view + 1) for z in range(-view, view + 1)}
        yield f, loaded


@pytest.mark.parametrize("view", [1, 2, 3])
def test_the_kept_sides_hold_whatever_the_engine_can_have_loaded(view):
    gen = Generator(flat_world(view=view), {})
    c = gen.p.chunk
    window = D.loaded_chunks(gen, (0, 0))
    grown = {side: set(D.loaded_chunks(gen, (0, 0), side)) for side in D.KEPT_SIDES}
    # the window is (2v+1)^2, each grown window (2v+2)^2, and together they are every chunk
    # the engine can hold around a focus, the (2v+3)^2 within view + 1
    assert len(window) == (2 * view + 1) ** 2 and len(set(window)) == len(window)
    assert all(len(g) == (2 * view + 2) ** 2 and set(window) < g for g in grown.values())
    assert set().union(*grown.values()) == {
        (x, z) for x in range(-view - 1, view + 2) for z in range(-view - 1, view + 2)
    }
    # the engine never holds more than one of them: walks of 3000 steps
    most, seen = 0, set()
    for f, loaded in _engine_walk(view, 3000, seed=view):
        cell = (f[0] * c + 3, f[1] * c + c - 1)  # any cell of the focus's chunk
        sides = [s for s in D.KEPT_SIDES if loaded <= set(D.loaded_chunks(gen, cell, s))]
        assert sides, (f, sorted(loaded))
        most = max(most, len(loaded))
        if len(loaded) == (2 * view + 2) ** 2:
            seen.add(next(s for s in sides if loaded == set(D.loaded_chunks(gen, cell, s))))
    assert most == (2 * view + 2) ** 2 and seen == set(D.KEPT_SIDES)


def test_views_count_the_chunks_the_engine_keeps_beyond_the_window():
    """A village (150 triangles) two chunks east of the focus's chunk: outside the window of
    view 1, inside what the engine keeps loaded after the focus came from the east."""
    gen = Generator(flat_world(places=[Place("far_village", "village", 40, 8)]), example_prefabs())
    cam = ortho(80)  # sees 107 x 80 m: every chunk within 2 of the focus
    v = D.Drawer(gen, MODELS, cam).view((8, 8))
    assert v["window"] == {"chunks": 9, "triangles": 9 * 2}
    assert v["kept"][0] == 1 and v["chunks"] == 16 and v["chunks_drawn"] == 16
    assert v["ground"] == 16 * 2 and v["entities"] == 150 and v["triangles"] == 182
    assert D.Drawer(gen, MODELS, cam).view((8, 8), kept=False)["triangles"] == 18
    # mirrored: the village two chunks west, north, in a corner
    for cell, side in (((-24, 8), -1), ((8, -24), None), ((-24, -24), -1), ((40, 40), 1)):
        g = Generator(flat_world(places=[Place("v", "village", *cell)]), example_prefabs())
        w = D.Drawer(g, MODELS, cam).view((8, 8))
        assert w["entities"] == 150 and w["window"]["triangles"] == 18, cell
        if side is not None:
            assert w["kept"][0] == side
        if cell[1] < 0:
            assert w["kept"][1] == -1
        if cell == (40, 40):
            assert w["kept"] == [1, 1]


def test_flat_world_features_do_not_change_the_counts_of_far_chunks():
    w = flat_world(
        features=[Feature("h", "hill", 0, 0, 8, has_height=True, height=3.0, falloff=0, roughness=0)],
        vegetation=[Vegetation("grass", model="grass_tuft", density=0.5)],
    )
    gen = Generator(w, {})
    assert D.chunk_ground(gen, 0, 0).grid < 16
    assert D.chunk_ground(gen, 5, 5).triangles == (2,)


def test_the_drawing_bench_runs():
    from bench.world import bench_draw

    r = bench_draw(repeat=1, chunks=3, valley=False)
    assert r["ground_lod_one_chunk_ms"] > 0 and r["chunk_terrain_layers_floor_ms"] > 0
