"""The world at scale (issue 22): the fast paths agree with the full-resolution computation.

Site decisions made in tables agree with the one-by-one decisions; pads at scattered vertices
with the pads of a rectangle; bounds of the ground and water over blocks hold every vertex's
value; the extremes of a disc found by branch and bound are within their tolerance (exact with
none); structure changes compared table against table equal those compared by name; the cells
a vegetation rule takes over a rectangle equal what the chunks hold. Then the whole of the
largest legal world (the sample valley at extent 512: 268 million cells, minutes for the code
that computed every vertex and decided every site one by one), checked against the
full-resolution answer on windows of it.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.world.test_generator import busy_prefabs, busy_world
from tests.world.worlds import Feature, Place, Site, Terrain, Vegetation, example_prefabs, example_world
from veduta import api
from veduta.base.project import Project
from veduta.world import Generator
from veduta.world import draw as D
from veduta.world import structures as st
from veduta.world.areas import Bounds, extremes, ground_summary, structure_changes
from veduta.world.bounds import ground_bounds, water_bounds
from veduta.world.intmath import hash2_grid
from veduta.world.structures import PAD_BLEND
from veduta.world.terrain import NO_WATER

REPO = Path(__file__).resolve().parents[2]


def _watery(**changes):
    """The busy world with lakes and seas of every shape, a sunken hill and a plain."""
    w = busy_world(**changes)
    w.terrain = Terrain(relief=3.0, relief_scale=40)
    w.features = list(w.features) + [
        Feature("lake2", "lake", 5, 5, 40, roughness=0.5),
        Feature("sea2", "sea", -150, 80, 70, has_height=True, height=-0.3, roughness=0.9, falloff=12),
        Feature("dip", "hill", 60, 60, 50, has_height=True, height=-4.0),
        Feature("flat", "plain", -60, -60, 50, falloff=20),
        Feature("pond", "lake", -62, -58, 9, depth=1.0, falloff=1, roughness=0.0),
    ]
    return w


WORLDS = {
    "busy": lambda: (busy_world(), busy_prefabs()),
    "watery": lambda: (_watery(), busy_prefabs()),
    "sea level": lambda: (
        busy_world(terrain=Terrain(relief=3.0, relief_scale=40, sea=True, sea_level=0.2)),
        busy_prefabs(),
    ),
    # a small world: regions at its edges are outside it
    "small": lambda: (busy_world(extent=4), busy_prefabs()),
    # a missing prefab and a rule with none
    "broken": lambda: (
        busy_world(
            sites=[
                Site("village", ["village", "ghost"], None, 16, 0.9),
                Site("nothing", [], None, 20, 0.9),
                Site("hamlet", ["hut"], None, 9, 1.0),
            ]
        ),
        busy_prefabs(),
    ),
}


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_site_tables_decide_as_one_by_one(name):
    world, prefabs = WORLDS[name]()
    bulk, single = Generator(world, prefabs), Generator(world, prefabs)
    codes: Counter[int] = Counter()
    for i in range(len(bulk.p.sites)):
        t = bulk.structs.table(i, -14, -12, 28, 26)
        js, ks = np.nonzero(np.ones((t.nh, t.nw), dtype=bool))
        reasons = bulk.structs.reasons(t, js, ks)
        for j, k, why in zip(js.tolist(), ks.tolist(), reasons, strict=True):
            rx, rz = t.rx0 + k, t.rz0 + j
            d = single.structs._decide(i, rx, rz)
            assert bulk.structs._from_table(t, rx, rz) == d, (name, i, rx, rz)
            assert why == d.reason
            codes[int(t.code[j, k])] += 1
    expected = {
        "busy": {st.STANDS, st.CHANCE, st.TOO_LARGE, st.BIOME, st.PLACE, st.SITE},
        "watery": {st.STANDS, st.WATER, st.SITE},
        "sea level": {st.STANDS, st.WATER},
        "small": {st.STANDS, st.OUTSIDE},
        "broken": {st.STANDS, st.MISSING, st.NO_PREFABS},
    }[name]
    assert expected <= set(codes), codes


def test_structures_in_a_large_rectangle_come_from_tables():
    world, prefabs = WORLDS["watery"]()
    bulk, single = Generator(world, prefabs), Generator(world, prefabs)
    structs = bulk.structures_in(-200, -200, 400, 400)
    assert any(bulk.structs._tables) and len(structs) > 200
    assert structs == sorted(structs, key=lambda s: s.order)
    for s in structs:
        if s.kind == "site":
            assert single.structs.site(s.rule, *s.region).structure == s
    arrays = bulk.structs.arrays(-200, -200, 400, 400)
    assert [(int(a), int(b), int(c)) for a, b, c in zip(arrays.x0, arrays.z0, arrays.level, strict=True)] == [
        (s.x0, s.z0, s.level_mm) for s in structs
    ]


def test_a_generator_built_like_another_decides_as_a_new_one():
    """The world after an edit shares what it draws alike with the one before it; its decisions
    are those of a generator of its own."""
    world, prefabs = WORLDS["watery"]()
    before = Generator(world, prefabs)
    before.structures_in(-300, -300, 600, 600)
    for change in (
        {"features": list(world.features) + [Feature("big", "sea", 0, 0, 120, has_height=True, height=0.5)]},
        {"places": [Place("capital", "city", 30, 30, 0), Place("inn", "hut", -20, 10, 90)]},
    ):
        edited, _ = WORLDS["watery"]()
        for k, v in change.items():
            setattr(edited, k, v)
        like = Generator(edited, prefabs, like=before)
        assert like.structs.shared is before.structs.shared
        own = Generator(edited, prefabs)
        assert like.structures_in(-300, -300, 600, 600) == own.structures_in(-300, -300, 600, 600)
    other = busy_world(sites=[Site("village", ["village"], None, 20, 0.5)])
    assert Generator(other, prefabs, like=before).structs.shared is not before.structs.shared


def test_heights_at_scattered_vertices_equal_heights():
    world, prefabs = WORLDS["watery"]()
    g = Generator(world, prefabs)
    full = g.heights(-200, -150, 400, 300)
    assert (full != g.terrain.ground(-200, -150, 400, 300)).sum() > 10_000  # many pads
    rng = np.random.default_rng(1)
    xs, zs = rng.integers(-200, 200, 20_000), rng.integers(-150, 150, 20_000)
    assert (g.heights_at(xs, zs) == full[zs + 150, xs + 200]).all()
    gx, gz = np.meshgrid(np.arange(-200, 200), np.arange(-150, 150))
    assert (g.heights_at(gx.ravel(), gz.ravel()).reshape(300, 400) == full).all()


@pytest.mark.parametrize("name", ["watery", "sea level"])
def test_bounds_hold_every_vertex(name):
    world, prefabs = WORLDS[name]()
    g = Generator(world, prefabs)
    X0 = Z0 = -300
    full = g.heights(X0, Z0, 601, 601)
    base = g.terrain.ground(X0, Z0, 601, 601)
    water = g.terrain.water_levels(X0, Z0, 601, 601)
    sa = g.structs.arrays(X0, Z0, 601, 601, PAD_BLEND + 1)
    b = Bounds(g, X0, Z0, 300, 300, sa)
    rng = np.random.default_rng(2)
    for S in (16, 64, 256):
        bx0 = X0 + S * rng.integers(0, 600 // S, 400)
        bz0 = Z0 + S * rng.integers(0, 600 // S, 400)
        lo, hi = b(bx0, bz0, S)
        glo, ghi = ground_bounds(g.terrain, bx0, bz0, S)
        wlo, whi = water_bounds(g.terrain, bx0, bz0, S)
        for k, (x, z) in enumerate(zip((bx0 - X0).tolist(), (bz0 - Z0).tolist(), strict=True)):
            sl = (slice(z, z + S + 1), slice(x, x + S + 1))
            assert lo[k] <= full[sl].min() and full[sl].max() <= hi[k]
            assert glo[k] <= base[sl].min() and base[sl].max() <= ghi[k]
            assert wlo[k] <= water[sl].min() and water[sl].max() <= whi[k]
            if whi[k] == NO_WATER:
                assert (water[sl] == NO_WATER).all()
    # the first cut of an area (a tiling, cheaper bounds for the finer octaves) holds too
    gx = np.arange(X0, 300, 64)
    bx0, bz0 = (a.ravel() for a in np.meshgrid(gx, gx))
    lo, hi = b(bx0, bz0, 64, tiling=True)
    for k, (x, z) in enumerate(zip((bx0 - X0).tolist(), (bz0 - Z0).tolist(), strict=True)):
        sl = (slice(z, z + 65), slice(x, x + 65))
        assert lo[k] <= full[sl].min() and full[sl].max() <= hi[k]


@pytest.mark.parametrize("falloff", [0, 1, 3])
def test_bounds_hold_beside_a_plain_without_falloff(falloff):
    """A plain with falloff 0 has no ramp (inner and outer radius equal): the ground outside it is
    untouched, and its bounds must say so. They once put every block beside such a plain at the
    plain's level, so a site table kept a site in water that one-by-one decisions refused
    (hypothesis found it: seed 1, a plain of radius 1 at the origin, sea level 0)."""
    from tests.world.worlds import Biome, Scatter, World

    world = World(
        name="test",
        seed=1,
        cell=0.5,
        chunk=4,
        extent=8,
        biome_scale=4,
        biomes=[Biome("plain", "grass", 2), Biome("forest", "moss", 1), Biome("sand", "sand", 1)],
        scatter=[Scatter("tree", None, 0.3)],
        sites=[Site("village", ["village", "hut"], None, 20, 0.7), Site("watch", ["tower"], ["sand"], 14, 1.0)],
        terrain=Terrain(relief=1.0, relief_scale=4, sea=True, sea_level=0.0),
        features=[Feature("a", "plain", 0, 0, 1, has_height=False, falloff=falloff, roughness=0.0)],
    )
    g = Generator(world, busy_prefabs())
    X0 = Z0 = -40
    base = g.terrain.ground(X0, Z0, 81, 81)
    for S in (1, 2, 4, 6, 8):
        gx = np.arange(X0, 40 - S + 1)
        bx0, bz0 = (a.ravel() for a in np.meshgrid(gx, gx))
        lo, hi = ground_bounds(g.terrain, bx0, bz0, S)
        for k, (x, z) in enumerate(zip((bx0 - X0).tolist(), (bz0 - Z0).tolist(), strict=True)):
            block = base[z : z + S + 1, x : x + S + 1]
            assert lo[k] <= block.min() and block.max() <= hi[k], (S, x + X0, z + Z0)
    one = Generator(world, busy_prefabs()).structs
    for i, rule in enumerate(g.p.sites):
        s = rule.spacing
        t = g.structs.table(i, -80 // s, -80 // s, 160 // s, 160 // s)
        for j in range(t.code.shape[0]):
            for k in range(t.code.shape[1]):
                stands = one.site(i, t.rx0 + k, t.rz0 + j).structure is not None
                assert (t.code[j, k] == st.STANDS) == stands, (rule.tag, t.rx0 + k, t.rz0 + j)


@pytest.mark.parametrize("x, z, r", [(0, 0, 290), (-150, 80, 120), (60, 60, 200), (-62, -58, 40), (-290, 0, 100)])
def test_extremes_of_a_disc(x, z, r):
    world, prefabs = WORLDS["watery"]()
    g = Generator(world, prefabs)
    full = g.heights(x - r, z - r, 2 * r + 1, 2 * r + 1)
    vx, vz = np.meshgrid(np.arange(x - r, x + r + 1), np.arange(z - r, z + r + 1))
    disc = full[(vx - x) ** 2 + (vz - z) ** 2 <= r * r]
    sa = g.structs.arrays(x - r, z - r, 2 * r + 1, 2 * r + 1, PAD_BLEND + 1)
    centre = int(full[r, r])
    assert extremes(g, x, z, r, sa, (centre, centre), tol=0) == (disc.min(), disc.max())
    lo, hi = extremes(g, x, z, r, sa, (centre, centre), tol=60)
    assert disc.min() <= lo <= disc.min() + 60 and disc.max() - 60 <= hi <= disc.max()
    assert lo in disc and hi in disc  # values of vertices of the disc


def test_ground_summary_of_a_disc():
    """min and max within 6 cm (tol), the mean over the samples every step vertices."""
    world, prefabs = WORLDS["watery"]()
    g = Generator(world, prefabs)
    x, z, r = 10, -20, 300
    full = g.heights(x - r, z - r, 2 * r + 1, 2 * r + 1)
    vx, vz = np.meshgrid(np.arange(x - r, x + r + 1), np.arange(z - r, z + r + 1))
    inside = (vx - x) ** 2 + (vz - z) ** 2 <= r * r
    s = ground_summary(g, x, z, r, tol=60, side=64)
    step = s["step"]
    assert step == 10
    samples = full[::step, ::step][inside[::step, ::step]]
    assert s["mean_mm"] == int(samples.sum()) / samples.size
    assert abs(s["mean_mm"] - full[inside].mean()) <= 60  # the mean of every vertex, within 6 cm
    assert full[inside].min() <= s["min"] <= full[inside].min() + 60
    assert full[inside].max() - 60 <= s["max"] <= full[inside].max()
    assert s["centre"] == full[r, r]


def test_structure_changes_by_table_equal_by_name():
    from veduta.world.areas import _place_changes, _site_changes_by_name

    world, prefabs = WORLDS["watery"]()
    before = Generator(world, prefabs)
    for change in (
        {"features": list(world.features) + [Feature("big", "sea", 0, 0, 90, has_height=True, height=0.5)]},
        {"features": list(world.features) + [Feature("up", "hill", 40, -40, 150, has_height=True, height=3)]},
        {"places": [Place("capital", "city", 30, 30, 0), Place("inn", "hut", -20, 10, 90)]},
    ):
        edited, _ = WORLDS["watery"]()
        for k, v in change.items():
            setattr(edited, k, v)
        after = Generator(edited, prefabs, like=before)
        fast = structure_changes(before, after, -250, -250, 500, 500)
        b, a = Generator(world, prefabs), Generator(edited, prefabs)
        slow = _place_changes(b, a, -250, -250, 500, 500) + _site_changes_by_name(b, a, -250, -250, 500, 500)
        assert fast == slow
        assert fast and {c["change"] for c in fast} & {"dropped", "pad", "added"}


def test_rule_cells_equal_what_the_chunks_hold():
    from veduta.world.cover import VEGETATION

    world = example_world(
        vegetation=[
            Vegetation("moss", prefab="tree", density=0.3),
            Vegetation("grove", prefab="oak", density=0.4, area=True, x=-40, z=20, radius=70),
            Vegetation("grass", model="grass_tuft", density=0.3, biomes=["plain"]),
            Vegetation("poppies", model="poppy", density=0.5, area=True, x=-20, z=8, radius=60),
        ],
        sites=[Site("village", ["village"], None, 24, 0.8)],
    )
    g = Generator(world, example_prefabs())
    x0, z0, w, h = -96, -32, 112, 96  # whole chunks: the lake, a village or two, the capital's edge
    for rule in range(4):
        cells = g.rule_cells(rule, x0, z0, w, h)
        whole = np.zeros((h, w), dtype=bool)
        for cz in range(z0 // 16, (z0 + h) // 16):
            for cx in range(x0 // 16, (x0 + w) // 16):
                lay = g.chunk_layers(cx, cz)
                sl = (slice(cz * 16 - z0, cz * 16 - z0 + 16), slice(cx * 16 - x0, cx * 16 - x0 + 16))
                if g.p.vegetation[rule].model:
                    whole[sl] = next(pa for pa in lay.plants if pa.rule == rule).mask
                else:
                    whole[sl] = (lay.owner_kind == VEGETATION) & (lay.owner_index == rule)
        assert (cells == whole).all() and whole.sum() > 20, rule


# -- the largest legal world -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def largest(tmp_path_factory):
    """The sample game with valley grown to the largest legal extent (512 chunks of 16 cells of
    1 m: cells -8192..8191 on each axis)."""
    root = tmp_path_factory.mktemp("largest") / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    valley = root / "assets" / "worlds" / "valley.vworld"
    valley.write_text(valley.read_text().replace('"extent": 64', '"extent": 512', 1))
    return Project.at(str(root))


def _generators(project, element):
    """(before, after): generators of valley and of valley with one more feature, each its own."""
    from veduta.tools.world_edit import _compile_new, _edit_text, load_world_source

    ws = load_world_source(project, "valley")
    rec, _ = _compile_new(ws, _edit_text(ws, "features", dict(element), None), "check")
    return ws.generator(ws.world), ws.generator(rec)


@pytest.mark.parametrize(
    "element, windows",
    [
        (
            {"name": "dome", "kind": "hill", "cell": [0, 0], "radius": 16384, "height": 3},
            [(160, -100, 128, 128), (-860, -60, 128, 128), (4000, -6000, 256, 256)],
        ),
        (
            {"name": "ocean", "kind": "sea", "cell": [-600, 0], "radius": 8000, "height": -0.5},
            [(-680, -60, 128, 128), (6900, 200, 256, 256), (-8192, -2000, 200, 200)],
        ),
    ],
)
def test_a_feature_the_size_of_the_largest_world(largest, element, windows):
    """A feature over the whole of the largest world: its report against the full-resolution
    answer on windows of it (the ground's extremes are at the east ridge and the west sea; every
    site and place of a window, decided one by one, changes as the report says)."""
    from veduta.world.areas import _place_changes, _site_changes_by_name

    r = api.world_terrain(
        largest,
        "valley",
        element["name"],
        element["kind"],
        element["cell"],
        element["radius"],
        height=element["height"],
        dry_run=True,
    )
    assert not r["written"] and r["before"]["step"] > 1
    before, after = _generators(largest, element)
    x, z, rad = *element["cell"], element["radius"]
    assert r["before"]["centre"] * 1000 == before.heights(x, z, 1, 1)[0, 0]
    assert r["after"]["centre"] * 1000 == after.heights(x, z, 1, 1)[0, 0]
    changes = r["changes"]
    assert len(changes) > 10_000  # the whole world's sites
    for wx, wz, w, h in windows:
        for key, gen in (("before", before), ("after", after)):
            vx, vz = np.meshgrid(np.arange(wx, wx + w + 1), np.arange(wz, wz + h + 1))
            g = gen.heights(wx, wz, w + 1, h + 1)[(vx - x) ** 2 + (vz - z) ** 2 <= rad * rad]
            lo, hi = round(r[key]["min"] * 1000), round(r[key]["max"] * 1000)
            assert lo <= g.min() + 60 and hi >= g.max() - 60, (key, wx, wz)
        b, a = _generators(largest, element)  # decided one by one, by name
        expect = _place_changes(b, a, wx, wz, w, h) + _site_changes_by_name(b, a, wx, wz, w, h)
        names = {c["name"] for c in expect}
        got = [c for c in changes if c["name"] in names]
        assert got == expect, (wx, wz)
        inside = [
            c
            for c in changes
            if c["kind"] == "site" and wx - 64 <= c["cell"][0] < wx + w and wz - 64 <= c["cell"][1] < wz + h
        ]
        assert {c["name"] for c in inside} >= names
    # the extremes of the disc are where they are known to be: the east ridge's top, the sea's floor
    assert r["before"]["max"] >= 13.815 and r["before"]["min"] <= -8.44


def test_the_largest_world_from_the_command_line(largest, capsys, monkeypatch):
    """The text report lists the first changes and counts the rest; --json lists them all."""
    from veduta.faces.cli.main import main

    monkeypatch.chdir(largest.root)
    argv = [
        "world",
        "terrain",
        "valley",
        "dome",
        "--kind",
        "hill",
        "--cell",
        "0,0",
        "--radius",
        "16384",
        "--height",
        "3",
        "--dry-run",
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert main(argv + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    lines = text.splitlines()
    assert len(lines) < 60  # not one line per site: the rest are counted
    more = next(line for line in lines if line.startswith("  ... and "))
    assert f"... and {len(report['changes']) - 40} more:" in more and "--json lists every change" in more
    assert "(sampled every" in text


# -- the drawing model's chunks, in one pass ---------------------------------------------------------


def _reference_chunk(drawer, cx, cz):
    """A chunk's drawing data as the drawer made it chunk by chunk before issue 22: its own layers,
    each prefab instance's entities one by one."""
    from veduta.world import draw as D
    from veduta.world.cover import SCATTER, STRUCTURE, VEGETATION
    from veduta.world.entities import prefab_instance
    from veduta.world.generator import metres
    from veduta.world.intmath import hash2_grid

    gen, p = drawer.gen, drawer.gen.p
    c, cm = p.chunk, p.cell_mm
    lay = gen.layers(cx * c, cz * c, c, c)
    water = gen.terrain.water_levels(cx * c, cz * c, c + 1, c + 1)
    ents = []
    for j, i in zip(*np.nonzero((lay.owner_kind == SCATTER) | (lay.owner_kind == VEGETATION)), strict=True):
        kind, idx = int(lay.owner_kind[j, i]), int(lay.owner_index[j, i])
        prefab = p.scatter[idx].prefab if kind == SCATTER else p.vegetation[idx].prefab
        x, z = cx * c + int(i), cz * c + int(j)
        origin = ((2 * x + 1) * cm / 2000.0, metres(lay.centre[j, i]), (2 * z + 1) * cm / 2000.0)
        ents += prefab_instance(gen.prefabs[prefab].record, f"c{x}_{z}", origin, 0, {})
    parts = [drawer._entities(ents)]
    xs = np.arange(cx * c, cx * c + c, dtype=np.int64)
    zs = np.arange(cz * c, cz * c + c, dtype=np.int64)
    covered = lay.owner_kind == STRUCTURE
    for pa in lay.plants:
        r = p.vegetation[pa.rule]
        mask = pa.mask & ~covered
        if mask.any() and r.model in drawer.index:
            mi = drawer.index[r.model]
            pos = np.stack([pa.x_mm[mask], pa.y_mm[mask], pa.z_mm[mask]], axis=-1) / 1000.0
            parts.append(
                D.Things.of(
                    pos,
                    drawer._rad[mi] * pa.scale[mask] / 1000.0,
                    np.full(int(mask.sum()), mi),
                    hash2_grid(r.key, xs, zs)[mask],
                )
            )
    ground = D.chunk_ground(gen, cx, cz)
    return ground, D.Things.join(parts), water


def _rows(things):
    return sorted(
        zip(
            *(getattr(things, f).tolist() for f in ("model", "radius", "thin", "flora")),
            things.pos.tolist(),
            strict=True,
        )
    )


@pytest.mark.parametrize("name", ["watery", "busy"])
def test_chunks_in_one_pass_equal_chunk_by_chunk(name):
    from tests.world.test_draw import MODELS
    from veduta.world import draw as D

    world, prefabs = WORLDS[name]()
    world.vegetation = [
        Vegetation("grass", model="grass_tuft", density=0.3),
        Vegetation("oaks", prefab="oak", density=0.05),
        Vegetation("poppies", model="poppy", density=0.4, area=True, x=0, z=0, radius=40),
    ]
    prefabs = dict(prefabs)
    from tests.world.worlds import Entity, Prefab

    # a prefab with a parent chain (children at their parents' positions), one entity invisible
    prefabs["oak"] = Prefab(
        "oak",
        (1.0, 1.0),
        tags=["tree"],
        entities=[
            Entity("trunk", model="oak", position=(0.3, 0.0, -0.2)),
            Entity("crown", model="tree", position=(0.1, 2.0, 0.05), parent="trunk"),
            Entity("bird", model="poppy", position=(0.0, 0.7, 0.0), parent="crown"),
            Entity("ghost", model="tree", visible=False),
        ],
    )
    gen = Generator(world, prefabs)
    bulk, single = D.Drawer(gen, MODELS), D.Drawer(gen, MODELS)
    keys = [(cx, cz) for cz in range(-7, 5) for cx in range(-9, 6)]
    bulk.prepare(keys)
    for cx, cz in keys:
        got = bulk.chunk(cx, cz)
        ground, things, _ = _reference_chunk(single, cx, cz)
        g = got.ground
        assert (g.grids, g.triangles, g.skirt_triangles, g.skirt_edges, g.water_triangles, g.y_min, g.y_max) == (
            ground.grids,
            ground.triangles,
            ground.skirt_triangles,
            ground.skirt_edges,
            ground.water_triangles,
            ground.y_min,
            ground.y_max,
        ), (cx, cz)
        assert (g.water_cell == ground.water_cell).all() and (g.water_level == ground.water_level).all()
        assert _rows(got.things) == _rows(things), (cx, cz)
        # the structures touching the chunk (ChunkBlock.touching), in canonical order
        c = gen.p.chunk
        touching = [st.name for st in gen.structs.in_rect(cx * c, cz * c, c, c)]
        assert [st.name for st in got.structures] == touching, (cx, cz)
    assert bulk.missing_models == single.missing_models
    assert any(bulk.chunk(cx, cz).structures for cx, cz in keys)


def test_many_views_in_one_pass_equal_one_by_one(example):
    from tests.world.test_draw import MODELS
    from veduta.world import draw as D

    cells = [(f"v{k}", ((k * 37) % 400 - 200, (k * 53) % 300 - 150)) for k in range(30)]
    bulk = D.Drawer(example, MODELS).views(cells)
    one = [D.Drawer(example, MODELS).view(cell, name) for name, cell in cells]
    assert bulk == one


# -- views, many at once ------------------------------------------------------------------------------


def _reference_view(self, cell, name="", kept=True):
    """A view as Drawer.view costed it one view at a time before issue 22 (its arithmetic; the
    chunks from the drawer)."""
    gen = self.gen
    origin = D.focus_origin(gen, cell)
    cam = D.make_camera(self.camera, origin)
    planes = cam.planes()
    eye = np.asarray(cam.eye)
    window_keys = D.loaded_chunks(gen, cell)
    sides = D.KEPT_SIDES if kept else ()
    keys = self.keys(cell, kept)
    at = {k: i for i, k in enumerate(keys)}
    chunks = [self.chunk(cx, cz) for cx, cz in keys]
    n = len(chunks)
    # the ground of every chunk that may be loaded (0 when culled)
    ground = np.zeros((3, n), dtype=np.int64)  # ground, skirts, water
    boxes = np.stack([ch.box for ch in chunks])  # (n, 2, 3)
    visible = D._boxes_visible(planes, boxes)
    near = np.clip(eye, boxes[:, 0], boxes[:, 1])
    dist = cam.effective(np.linalg.norm(near - eye, axis=1))
    lod = D.lod_distance(gen)
    for i in np.flatnonzero(visible).tolist():
        cg = chunks[i].ground
        k = D.ground_level(cg, float(dist[i]), lod)
        ground[:, i] = (cg.triangles[k], cg.skirt_triangles[k], cg.water_triangles)
    # things: each chunk's, each structure's (spawned whole while a chunk it touches is
    # loaded) and the persistent entities, with the part they belong to
    structs: dict = {}
    for ch in chunks:
        structs.update((st.name, st) for st in ch.structures)
    snames = sorted(structs)
    sidx = {nm: j for j, nm in enumerate(snames)}
    touches = [{sidx[st.name] for st in ch.structures} for ch in chunks]
    parts = (
        [ch.things for ch in chunks]
        + [self._structure(structs[nm]) for nm in snames]
        + [self._entities(D._persistent(gen, origin))]
    )
    things = D.Things.join(parts)
    owner = np.repeat(np.arange(len(parts)), [len(t.model) for t in parts])
    P, R, M, H, F = things.pos, things.radius, things.model, things.thin, things.flora
    tris = np.zeros(len(M), dtype=np.int64)
    if len(M):
        inside = ((P @ planes[:, :3].T + planes[:, 3]) >= -R[:, None]).all(axis=1)
        de = cam.effective(np.maximum(0.0, np.linalg.norm(P - eye, axis=1) - R))
        for mi in np.unique(M[inside]).tolist():
            sel = inside & (M == mi)
            model = self.models[self.names[mi]]
            level = model.level(de[sel])
            t = self._tris[mi][level]
            keep = model.drawn(de[sel]) & (~F[sel] | D.thin_keep(H[sel], level))
            tris[sel] = np.where(keep, t, 0)
    per = np.zeros((4, len(parts)), dtype=np.int64)  # flora, entities, plants drawn, entities drawn
    for row, w in enumerate((tris * F, tris * ~F, (tris > 0) & F, (tris > 0) & ~F)):
        per[row] = np.bincount(owner, weights=w, minlength=len(parts)).astype(np.int64)

    def figures(loaded: list[tuple[int, int]]) -> dict[str, int]:
        idx = [at[k] for k in loaded]
        own = idx + [n + j for j in sorted(set().union(*(touches[i] for i in idx)))] + [len(parts) - 1]
        g = ground[:, idx].sum(axis=1).tolist()
        f = per[:, own].sum(axis=1).tolist()
        out = {
            "chunks": len(idx),
            "chunks_drawn": int(visible[idx].sum()),
            "ground": g[0],
            "skirts": g[1],
            "water": g[2],
            "flora": f[0],
            "entities": f[1],
            "plants_drawn": f[2],
            "entities_drawn": f[3],
        }
        out["triangles"] = out["ground"] + out["skirts"] + out["water"] + out["flora"] + out["entities"]
        return out

    window = figures(window_keys)
    worst, side = window, [0, 0]
    for sx, sz in sides:
        f = figures(D.loaded_chunks(gen, cell, (sx, sz)))
        if f["triangles"] > worst["triangles"]:
            worst, side = f, [sx, sz]
    return {
        "name": name,
        "focus": [int(cell[0]), int(cell[1])],
        **worst,
        "kept": side,
        "window": {"chunks": window["chunks"], "triangles": window["triangles"]},
    }


def _views_worlds(**world):
    from tests.world.worlds import Entity, Prefab, example_prefabs, example_world

    prefabs = example_prefabs()
    prefabs["oak"] = Prefab(
        "oak",
        (1.0, 1.0),
        tags=["tree"],
        entities=[
            Entity("trunk", model="oak", position=(0.3, 0.0, -0.2)),
            Entity("crown", model="tree", position=(0.1, 2.0, 0.05), parent="trunk"),
        ],
    )
    veg = [
        Vegetation("grass", model="grass_tuft", density=0.3),
        Vegetation("oaks", prefab="oak", density=0.05),
        Vegetation("poppies", model="poppy", density=0.4, area=True, x=0, z=0, radius=40),
    ]
    yield "example", Generator(example_world(vegetation=veg, **world), prefabs), None
    yield (
        "busy, ortho",
        Generator(
            busy_world(
                vegetation=veg,
                view=2,
                **world,
                entities=[
                    Entity("player", kind="player", model="hero"),
                    Entity("lamp", model="well", position=(1.0, 2.0, 0.5), parent="player"),
                ]
                # a chain of 18 parents: its last links are cut after 16 (placed at their offsets alone)
                + [
                    Entity(
                        f"link{i}",
                        model="poppy",
                        position=(0.5, 0.25, -0.5),
                        parent="lamp" if i == 0 else f"link{i - 1}",
                    )
                    for i in range(18)
                ],
            ),
            prefabs,
        ),
        {
            "type": "orthographic",
            "fov_deg": 0.0,
            "size": 30.0,
            "near": 0.1,
            "far": 100.0,
            "position": [0.0, 30.0, 5.0],
            "look_at": [0.0, 0.0, 0.0],
        },
    )


@pytest.mark.parametrize("kept", [True, False])
def test_views_many_at_once_equal_one_at_a_time(kept):
    from tests.world.test_draw import MODELS

    for name, gen, camera in _views_worlds():
        cells = [(f"v{k}", ((k * 37) % 400 - 200, (k * 53) % 300 - 150)) for k in range(40)]
        cells += [(f"row{k}", (k * 16 + 8, -8)) for k in range(-6, 6)]  # neighbours, as --all walks
        bulk = D.Drawer(gen, MODELS, camera).views(cells, kept)
        ref = D.Drawer(gen, MODELS, camera)
        one = [_reference_view(ref, cell, nm, kept) for nm, cell in cells]
        assert bulk == one, name
        assert any(v["flora"] for v in bulk) and any(v["entities"] for v in bulk), name
        if kept and camera is None:
            assert any(v["kept"] != [0, 0] for v in bulk), name


def test_all_views_summary_and_file_hold_every_view_as_one_at_a_time(tmp_path, monkeypatch):
    """inspect world --all on worlds of 12 x 12 chunks (144 views each, in batches of 5 so that the
    summary is made across batches and a row in several, chunks computed 3 rows at a time so that
    a view's rows come from two blocks, as on the largest world): the file lists every view as the
    one-at-a-time reference costs it, and the summary (counts, figures, histogram, worst views,
    views over the budget) is what that list says."""
    import json as js

    from tests.world.test_draw import MODELS
    from veduta.tools import inspect_world as IW

    monkeypatch.setattr(D, "SWEEP_BATCH", 5)
    monkeypatch.setattr(D, "SWEEP_ROWS", 3)
    monkeypatch.setattr(IW, "OVER_LISTED", 5)
    for name, gen, _ in _views_worlds(extent=6):
        ref = D.Drawer(gen, MODELS)
        e, c = gen.p.extent, gen.p.chunk
        cells = [(f"chunk {cx},{cz}", (cx * c + c // 2, cz * c + c // 2)) for cz in range(-e, e) for cx in range(-e, e)]
        every = [_reference_view(ref, cell, nm) for nm, cell in cells]
        tris = [v["triangles"] for v in every]
        n = len(every)
        # a budget some views are over and some not (the sample worlds draw little)
        budget = sorted(tris)[n // 2]
        monkeypatch.setattr(IW, "FRAME_BUDGET", budget)
        path = tmp_path / f"{name}.jsonl"
        r = IW.report_world(gen, MODELS, all_views=True, views_file=str(path))
        named = r["views"]
        assert [v["name"] for v in named] == ["start"] + [f"place {pl.name}" for pl in gen.p.places], name
        listed = [js.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert listed[: len(named)] == named and listed[len(named) :] == every, name
        a = r["all_views"]
        assert a["views"] == n == 144 and a["over_budget"] == sum(t > budget for t in tris) > 0, name
        assert a["triangles"] == {
            "min": min(tris),
            "median": sorted(tris)[(n - 1) // 2],
            "max": max(tris),
            "mean": round(sum(tris) / n, 1),
        }, name
        hist = a["histogram"]["views"]
        assert (
            sum(hist) == n
            and all(hist[k] == sum(t // IW.HISTOGRAM_BIN == k for t in tris) for k in range(len(hist)))
            and hist[-1]
        ), name
        order = sorted(range(n), key=lambda k: (-tris[k], k))[: IW.WORST_VIEWS]
        assert a["worst"] == [every[k] for k in order], name
        assert a["over"] == [v["focus"] for v in every if v["triangles"] > budget][:5], name
        top = max(named + every, key=lambda v: v["triangles"])
        assert r["worst_view"] == {"name": top["name"], "triangles": top["triangles"]}, name
        (f,) = [f for f in r["findings"] if f["code"] == "WORLD_CHUNK_BUDGET"]
        over = sum(v["triangles"] > budget for v in named + every)
        assert f["view"] == top["name"] and f"; {over - 1} other view(s) over too" in f["message"], name
        # without a file or all_views: the same named views and findings, nothing else
        plain = IW.report_world(gen, MODELS)
        assert plain["views"] == named and "all_views" not in plain and "views_file" not in plain


def test_a_camera_loading_many_chunks_counts_fewer_views_a_batch(monkeypatch):
    """A batch of chunk_views holds at most about SWEEP_PAIRS (view, thing) pairs (a large view
    over dense flora made batches of 1,024 views x every thing of hundreds of chunks: gigabytes):
    batches shrink, the views do not change."""
    from tests.world.test_draw import MODELS

    name, gen, camera = next(iter(_views_worlds(extent=5)))
    e = gen.p.extent
    whole = [v for cols in D.Drawer(gen, MODELS, camera).chunk_views(True) for v in cols.dicts()]
    monkeypatch.setattr(D, "SWEEP_PAIRS", 1)  # one view a batch, whatever the things
    batches = list(D.Drawer(gen, MODELS, camera).chunk_views(True))
    assert {len(b.dicts()) for b in batches} == {1} and len(batches) == (2 * e) ** 2, name
    assert [v for cols in batches for v in cols.dicts()] == whole


@pytest.mark.parametrize("kept", [True, False])
def test_chunk_views_in_one_pass_equal_views(kept, monkeypatch):
    """Drawer.chunk_views (the one pass of --all) gives, view for view, what Drawer.views gives
    at the same chunk centres: the whole world and windows of it (at its edges, and one of a
    single chunk), rows in several batches and blocks."""
    from tests.world.test_draw import MODELS

    monkeypatch.setattr(D, "SWEEP_BATCH", 4)
    monkeypatch.setattr(D, "SWEEP_ROWS", 2)
    for name, gen, camera in _views_worlds(extent=5):
        e, c = gen.p.extent, gen.p.chunk
        for window in (None, (-5, -5, 1, 2), (2, 3, 5, 5), (0, 0, 1, 1), (-7, 4, 9, 9)):
            got = [v for cols in D.Drawer(gen, MODELS, camera).chunk_views(kept, window=window) for v in cols.dicts()]
            x0, z0, x1, z1 = window or (-e, -e, e, e)
            cells = [
                (f"chunk {cx},{cz}", (cx * c + c // 2, cz * c + c // 2))
                for cz in range(max(z0, -e), min(z1, e))
                for cx in range(max(x0, -e), min(x1, e))
            ]
            assert got == D.Drawer(gen, MODELS, camera).views(cells, kept), (name, window)
            assert any(v["flora"] for v in got) or window == (0, 0, 1, 1), (name, window)


def test_rows_join_each_chunks_things_as_things_of_gives_them():
    """Drawer._rows joins the things of its rows once (Loaded.joined: chunk i's are [cuts[i],
    cuts[i + 1]) of them, as things_of gathers them chunk by chunk, rows across blocks), and the
    planes' parts at them (Loaded.sides_of: each block's made once, ChunkBlock.sides) are
    _point_sides of the joined things, n0 . p + r within a float's error."""
    from tests.world.test_draw import MODELS

    for name, gen, camera in _views_worlds(extent=5):
        drawer = D.Drawer(gen, MODELS, camera)
        e = gen.p.extent
        blocks = {b: drawer.block(-e, -e + 2 * b, 2 * e, 2) for b in range(e)}  # rows 2 by 2
        n0 = drawer._cameras(np.zeros((1, 3)))[1][0][:, :3]
        for lo, hi in ((-e, -e), (-e + 1, 2), (-3, e - 1)):
            loaded, _ = drawer._rows(blocks, lo, hi)
            assert loaded.joined is not None and loaded.sides_of is not None
            joined, cuts = loaded.joined
            nk = (hi - lo + 1) * 2 * e
            assert len(cuts) == nk + 1 and cuts[-1] == len(joined.model) > 0, (name, lo)
            for i in range(nk):
                one = loaded.things_of(np.array([i]))
                for f in D.THING_FIELDS:
                    assert np.array_equal(getattr(joined, f)[cuts[i] : cuts[i + 1]], getattr(one, f)), (name, lo, i)
            sides = loaded.sides_of(n0)
            assert np.array_equal(sides, D._point_sides(n0, joined)), (name, lo)
            assert np.allclose(sides, n0 @ joined.pos.T + joined.radius, rtol=0, atol=1e-9), (name, lo)
        assert all(b.sides is not None for b in blocks.values()), name


def test_lengths_are_numpys_norms():
    """_lengths gives np.linalg.norm(v, axis=1)'s floats, bit for bit, at every scale."""
    rng = np.random.default_rng(7)
    v = np.concatenate(
        [rng.normal(size=(4000, 3)) * s for s in (1e-9, 1e-3, 1.0, 16.0, 1e3, 8192.0, 1e150)]
        + [np.zeros((1, 3)), np.array([[3.0, 4.0, 12.0], [-0.0, 5e-324, 1.0]])]
    )
    assert np.array_equal(D._lengths(v), np.linalg.norm(v, axis=1))


def test_chunk_views_of_a_camera_near_straight_down_equal_views():
    """A camera so nearly straight down that each view decides on its own whether to turn its up
    to -z (the rounding of the view's origin tips it, 1e-6 of sideways direction): chunk_views
    culls nothing by the camera at the origin then (Drawer._near_straight_down), and gives what
    Drawer.views gives, view for view. Found by review: the camera at the origin took it for
    straight down, 70 of the 100 views not, and two views lost triangles."""
    from tests.world.test_draw import MODELS

    name, gen, _ = next(_views_worlds(extent=5))
    e, c = gen.p.extent, gen.p.chunk
    cells = [(f"chunk {cx},{cz}", (cx * c + c // 2, cz * c + c // 2)) for cz in range(-e, e) for cx in range(-e, e)]

    def down(x: float) -> bool:  # as Drawer._cameras decides it at the origin
        f = -np.array([x, 20.0, 0.0])
        f = f / np.linalg.norm(f)
        return bool(np.linalg.norm(np.cross(f, [0.0, 1.0, 0.0])) < 1e-6)

    lo, hi = 0.0, 1e-4
    for _ in range(200):  # the largest sideways offset still straight down at the origin
        lo, hi = ((lo + hi) / 2, hi) if down((lo + hi) / 2) else (lo, (lo + hi) / 2)
    xs = [lo]
    for _ in range(12):
        xs.append(float(np.nextafter(xs[-1], 1.0)))
    split = 0  # cameras whose views do not all decide as the origin does
    for x in [xs[0], xs[4], xs[8], xs[12]]:
        cam = {
            "type": "perspective",
            "fov_deg": 60.0,
            "size": 0.0,
            "near": 0.1,
            "far": 100.0,
            "position": [x, 20.0, 0.0],
            "look_at": [0.0, 0.0, 0.0],
        }
        drawer = D.Drawer(gen, MODELS, cam)
        got = [v for cols in drawer.chunk_views(True) for v in cols.dicts()]
        assert drawer._near_straight_down(), x
        assert got == D.Drawer(gen, MODELS, cam).views(cells, True), (name, x)
        origins = np.array([[cx * c + c / 2 + 0.5, 0.0, cz * c + c / 2 + 0.5] for _, (cx, cz) in cells])
        planes = drawer._cameras(np.vstack([np.zeros((1, 3)), origins]))[1]
        split += bool((np.abs(planes[1:, :, :3] - planes[0, :, :3]).max(axis=(1, 2)) > 0.1).any())
    assert split, "no camera of these tipped at some views: the test no longer tests the case"


def _camera(kind: str, fov: float, size: float, near: float, far: float, position, look_at) -> dict:
    keys = ("type", "fov_deg", "size", "near", "far", "position", "look_at")
    return dict(zip(keys, (kind, fov, size, near, far, list(position), list(look_at)), strict=True))


@pytest.mark.parametrize(
    "camera",
    [
        None,  # the world's own
        _camera("perspective", 70.0, 0.0, 0.1, 60.0, (0.0, 40.0, 3.0), (0.0, 0.0, 0.0)),
        _camera("perspective", 40.0, 0.0, 0.5, 80.0, (-3.0, 1.5, 25.0), (4.0, 1.0, -20.0)),
        _camera("orthographic", 0.0, 24.0, 0.1, 90.0, (20.0, 25.0, -20.0), (0.0, 0.0, 0.0)),
    ],
    ids=["own", "steep", "low", "ortho"],
)
def test_chunk_views_by_planes_moved_from_the_origin_equal_views(camera, monkeypatch):
    """chunk_views culls each view's chunks and things by the camera at the origin moved to the
    view, testing as the reference does only what is within MAYBE_MARGIN of a plane: view for
    view what Drawer.views gives, with steep, low and orthographic cameras, in batches across
    rows; the shortcut is taken in every batch, and the moved planes are within the bound it
    measured of each view's own at the corners of the cube it was measured for and at the
    views' origins."""
    from tests.world.test_draw import MODELS

    monkeypatch.setenv("VEDUTA_JIT", "0")  # (the numpy path's shortcut: the compiled loop takes none)
    monkeypatch.setattr(D, "SWEEP_BATCH", 7)
    monkeypatch.setattr(D, "SWEEP_ROWS", 2)
    taken = []
    real = D.Drawer._sure_planes

    def spy(self, origins, planes, big):
        got = real(self, origins, planes, big)
        taken.append(got is not None)
        if got is not None:
            n0, dv, band = got
            # points as far out as big on each axis, and the views' origins
            corners = np.concatenate([np.array(np.meshgrid(*[[-big, big]] * 3)).reshape(3, -1).T, origins])
            own = np.einsum("cj,vkj->vkc", corners, planes[:, :, :3]) + planes[:, :, 3:]
            moved = np.einsum("cj,kj->kc", corners, n0)[None] + dv[:, :, None]
            assert np.abs(own - moved).max() < band / 4
        return got

    monkeypatch.setattr(D.Drawer, "_sure_planes", spy)
    for name, gen, _ in _views_worlds(extent=5):
        e, c = gen.p.extent, gen.p.chunk
        cells = [(f"chunk {cx},{cz}", (cx * c + c // 2, cz * c + c // 2)) for cz in range(-e, e) for cx in range(-e, e)]
        taken.clear()
        got = [v for cols in D.Drawer(gen, MODELS, camera).chunk_views(True) for v in cols.dicts()]
        assert got == D.Drawer(gen, MODELS, camera).views(cells, True), name
        assert taken and all(taken), name
        assert sum(v["triangles"] for v in got) > 0, name


def test_levels_of_every_model_at_once_equal_model_by_model():
    """Drawer._drawn_sel with the level table (chunk_views) decides each thing as model by model
    does (ModelDraw.level, drawn, thin_keep): at distances on and around every level's start and
    draw_distance, plants and entities, models of no levels and of no draw_distance; and a model
    whose starts are not sorted goes model by model."""
    from tests.world.test_draw import MODELS

    name, gen, _ = next(_views_worlds(extent=2))
    drawer = D.Drawer(gen, MODELS)
    rng = np.random.default_rng(5)
    marks = sorted({x for m in MODELS.values() for x in (*m.distances, m.draw_distance)})
    dist = np.concatenate(
        [[0.0, 1e4], marks, np.nextafter(marks, 0.0), np.nextafter(marks, 1e9), rng.random(400) * 200]
    )
    n = len(dist) * len(MODELS)
    things = D.Things(
        np.stack([np.tile(dist, len(MODELS)), np.zeros(n), np.zeros(n)], axis=1),
        np.zeros(n),
        np.repeat(np.arange(len(MODELS)), len(dist)),
        rng.integers(0, 2**63, n, dtype=np.uint64),
        rng.random(n) < 0.5,
    )
    args = (things, np.arange(n), np.zeros(n, dtype=np.int64), np.zeros((1, 3)), np.zeros((1, 6, 4)), False, 1.0, 0.0)
    inside = np.ones(n, dtype=bool)
    by_model = drawer._drawn_sel(*args, inside)
    at_once = drawer._drawn_sel(*args, inside, True)
    for a, b in zip(by_model, at_once, strict=True):
        assert a.dtype == b.dtype and (a == b).all()
    assert len(set(by_model[2].tolist())) == 4 and by_model[4].any() and not by_model[4].all()
    assert drawer._level_table() is not None
    odd = dict(MODELS, oak=D.ModelDraw("oak", (900, 400, 200, 12), (45.0, 20.0, 90.0), 160.0, 4.0))
    assert D.Drawer(gen, odd)._level_table() is None


@pytest.mark.parametrize(
    "window",
    [
        (-8, -4, 4, 4),  # the village, the mill pond, the keeper's cottage
        (-56, -8, -44, 4),  # the west sea's coast
        (10, -6, 20, 2),  # the east ridge
        (-512, -512, -500, -505),  # the north-west corner
        (505, 500, 512, 512),  # the south-east corner
        (300, -200, 310, -195),  # far from everything the world names
    ],
)
def test_chunk_views_of_the_largest_world_equal_views(largest, window):
    """The one pass of --all on windows of the largest world (a million views, minutes with a
    view's chunks computed per view) gives, view for view, what Drawer.views gives there."""
    from veduta.tools.inspect_world import load_world, model_draws, needed_models

    world, prefabs, _ = load_world(largest, "valley")
    gen = Generator(world, prefabs)
    models, _, _ = model_draws(largest, needed_models(gen))
    got = [v for cols in D.Drawer(gen, models).chunk_views(window=window) for v in cols.dicts()]
    x0, z0, x1, z1 = window
    cells = [(f"chunk {cx},{cz}", (cx * 16 + 8, cz * 16 + 8)) for cz in range(z0, z1) for cx in range(x0, x1)]
    assert len(got) == len(cells) and got == D.Drawer(gen, models).views(cells)
    assert any(v["triangles"] for v in got)


# -- progress and cancellation ------------------------------------------------------------------------


def _sample_game(tmp_path):
    root = tmp_path / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    return Project.at(str(root))


@pytest.mark.parametrize(
    "tool, args, kwargs",
    [
        ("world_terrain", ("sea2", "sea", (-300, 0), 200), {"height": -0.5}),
        ("world_remove", ("west_sea",), {}),
        ("world_vegetation", ("ferns", 0.2), {"model": "grass_tuft", "cell": (0, 0), "radius": 40}),
        ("world_place", ("inn", "cottage"), {"near": (-70, 0), "search": 40}),
    ],
)
def test_edits_report_progress_and_a_cancelled_one_writes_nothing(tmp_path, tool, args, kwargs):
    from veduta.base.errors import Cancelled

    game = _sample_game(tmp_path)
    path = Path(game.source_path("worlds/valley.vworld"))
    before = path.read_bytes()
    calls = []
    r = getattr(api, tool)(game, "valley", *args, dry_run=True, progress=lambda *a: calls.append(a), **kwargs)
    assert not r["written"] and calls and all(isinstance(m, str) and m for _, _, m in calls)
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls)  # done only grows

    def cancel(done, total, message):
        raise Cancelled()

    with pytest.raises(Cancelled):
        getattr(api, tool)(game, "valley", *args, progress=cancel, **kwargs)
    assert path.read_bytes() == before
    # and without a cancel, the same edit is written
    assert getattr(api, tool)(game, "valley", *args, **kwargs)["written"]
    assert path.read_bytes() != before


def test_inspect_world_all_reports_progress(tmp_path):
    game = _sample_game(tmp_path)
    valley = Path(game.source_path("worlds/valley.vworld"))
    text = (
        valley.read_text()
        .replace('"extent": 64', '"extent": 16', 1)
        .replace(
            '{ "name": "west_sea",      "kind": "sea",   "cell": [-800, 0],  "radius": 640, "height": -0.5 }',
            '{ "name": "west_sea",      "kind": "sea",   "cell": [-100, 0],  "radius": 20, "height": -0.5 }',
        )
    )
    valley.write_text(text)
    calls = []
    out = tmp_path / "views.jsonl"
    r = api.inspect_world(game, "valley", all_views=True, views_file=str(out), progress=lambda *a: calls.append(a))
    assert r["status"] in ("ok", "findings") and len(r["views"]) == 3 and r["all_views"]["views"] == 1024
    assert calls[-1] == (1024, 1024, "views")
    stages = [m for _, _, m in calls if m != "views"]
    assert stages[:3] == ["world and prefabs (cooked if stale)", "models", "places, rules and the inspected area"]
    # the sheet marks the chunk views on it (the middle 16 x 16 chunks of 32 x 32) with their triangles
    from veduta.tools import inspect_world as IW
    from veduta.tools.inspect_world import ViewSummary, _sheet_views

    listed = [json.loads(line) for line in out.read_text().splitlines()][3:]
    summary = ViewSummary(len(listed))
    summary.add(listed)
    world, prefabs, _ = IW.load_world(game, "valley")
    on_sheet = _sheet_views(Generator(world, prefabs), summary)
    assert (
        on_sheet
        == [
            {"focus": v["focus"], "triangles": v["triangles"]}
            for v in listed
            if -128 <= v["focus"][0] < 128 and -128 <= v["focus"][1] < 128
        ]
        and len(on_sheet) == 256
    )


def _stderr_on_a_terminal(argv: list[str], cwd: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``veduta ARGV`` run with its standard error on a pseudo
    terminal (its standard output a pipe, as ``veduta ... --json > file`` in a shell)."""
    import os
    import sys

    from tests.terminal import stderr_on_a_terminal

    code, out, err = stderr_on_a_terminal(
        [sys.executable, "-m", "veduta", *argv], cwd, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=600
    )
    return code, out, err.decode(errors="replace")


def test_progress_on_a_terminal_only(tmp_path):
    """The CLI shows a progress line on standard error when it is a terminal (inspect world --all:
    its stages, then the views counted; world map: its rows), cleared at the end; into a pipe,
    nothing but the report."""
    import subprocess
    import sys

    game = _sample_game(tmp_path)
    valley = Path(game.source_path("worlds/valley.vworld"))
    valley.write_text(
        valley.read_text()
        .replace('"extent": 64', '"extent": 16', 1)
        .replace('"cell": [-800, 0],  "radius": 640', '"cell": [-100, 0],  "radius": 20')
    )
    code, out, err = _stderr_on_a_terminal(["inspect", "world", "valley", "--all", "--json"], game.root)
    assert code in (0, 1) and json.loads(out)["all_views"]["views"] == 1024, err
    shown = [t.strip() for t in err.split("\r") if t.strip()]
    assert shown and shown[0].startswith("world and prefabs (cooked if stale): 0%"), err
    assert all(t.endswith("%") for t in shown), err
    assert err.endswith("\r") and not err.split("\r")[-2].strip(), repr(err[-200:])  # the line cleared
    code, out, err = _stderr_on_a_terminal(["world", "map", "valley", "--size", "512,512", "--out", "m.png"], game.root)
    assert code == 0 and "m.png: " in out and "map rows: " in err, err
    piped = subprocess.run(
        [sys.executable, "-m", "veduta", "inspect", "world", "valley", "--all", "--json"],
        cwd=game.root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO)},
    )
    assert piped.stderr == "" and json.loads(piped.stdout)["all_views"]["views"] == 1024


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_plant_points_equal_plants(name):
    """Generator.layers(points=True) (the plants where one grows, what --all reads) holds what
    the plants' arrays hold at their masks, rectangles meeting the area rules' discs or not."""
    gen = Generator(*WORLDS[name]())
    assert any(r.area for r in gen.p.vegetation if r.model)
    for x0, z0, w, h in ((-64, -48, 128, 96), (-300, 200, 40, 30), (5, -3, 1, 1), (250, -260, 60, 40)):
        full = gen.layers(x0, z0, w, h)
        got = gen.layers(x0, z0, w, h, points=True)
        assert got.plants == [] and got.points is not None and len(got.points) == len(full.plants)
        for pa, pt in zip(full.plants, got.points, strict=True):
            jj, ii = np.nonzero(pa.mask)
            assert pt.rule == pa.rule and (pt.j == jj).all() and (pt.i == ii).all()
            for f in ("x_mm", "z_mm", "y_mm", "scale"):
                assert (getattr(pt, f) == getattr(pa, f)[pa.mask]).all(), (name, f)
            xs = np.arange(x0, x0 + w, dtype=np.int64)
            zs = np.arange(z0, z0 + h, dtype=np.int64)
            key = gen.p.vegetation[pa.rule].key
            assert (pt.hash == hash2_grid(key, xs, zs)[pa.mask]).all()
        assert (got.owner_kind == full.owner_kind).all() and (got.ground == full.ground).all()
    assert sum(len(pt.j) for pt in gen.layers(-64, -48, 128, 96, points=True).points) > 100


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_owners_in_a_band_equal_owner_at(name):
    """Cover.owners over a rectangle (each rule's hash only where its cheaper tests pass, the
    footprints and min_distance cells of all structures in one pass) gives every cell the owner
    Cover.owner_at gives it alone: rectangles across the world's edges and corners, around the
    structures, meeting the area rules' discs, of widths a power of two or not."""
    gen = Generator(*WORLDS[name]())
    n = gen.p.cells
    rects = [
        (-40, -30, 64, 48),
        (-70, 10, 45, 37),
        (20, -10, 50, 40),
        (45, 3, 13, 9),
        (n - 20, -n - 9, 32, 24),
        (-n - 5, n - 17, 31, 22),
        (3, 3, 1, 1),
    ]
    rects += [
        (s.x0 - 6, s.z0 - 5, s.x1 - s.x0 + 11, s.z1 - s.z0 + 9) for s in gen.structures_in(-n, -n, 2 * n, 2 * n)[:3]
    ]
    taken = Counter()
    for x0, z0, w, h in rects:
        lay = gen.layers(x0, z0, w, h)
        for j in range(h):
            for i in range(w):
                got = gen.cover.owner_at(x0 + i, z0 + j, int(lay.biome[j, i]), bool(lay.wet[j, i]), lay.structures)
                assert got == (lay.owner_kind[j, i], lay.owner_index[j, i]), (name, x0 + i, z0 + j)
                taken[got[0]] += 1
    if name in ("busy", "broken"):
        assert len(taken) == 4, taken  # none, structures, scatter and vegetation prefabs all met


def test_cells_of_is_nonzero():
    """cover.cells_of (flat indices split by the width) is np.nonzero, widths a power of two or not."""
    from veduta.world.cover import cells_of

    rng = np.random.default_rng(7)
    for shape in ((0, 5), (5, 0), (1, 1), (3, 16), (7, 13), (64, 1024), (33, 1000)):
        for p in (0.0, 0.01, 0.5, 1.0):
            mask = rng.random(shape) < p
            jj, ii = cells_of(mask)
            want = np.nonzero(mask)
            assert jj.tolist() == want[0].tolist() and ii.tolist() == want[1].tolist()
    view = (rng.random((40, 70)) < 0.3)[5:30, 10:42]  # a slice, not contiguous
    assert [a.tolist() for a in cells_of(view)] == [a.tolist() for a in np.nonzero(view)]


@pytest.mark.parametrize("name", ["watery", "busy"])
def test_finest_grids_in_one_pass_equal_finest_grid(name):
    """chunk_grounds' finest drawn grid (a quad's middle vertex tested first) is finest_grid's
    (every vertex of every grid tried), chunk by chunk, over a rectangle of chunks where every
    grid is some chunk's."""
    gen = Generator(*WORLDS[name]())
    c = gen.p.chunk
    keys = [(cx, cz) for cz in range(-8, 8) for cx in range(-10, 10)]
    lay = gen.layers(-10 * c, -8 * c, 20 * c, 16 * c)
    ground = np.stack(
        [lay.ground[(cz + 8) * c : (cz + 9) * c + 1, (cx + 10) * c : (cx + 11) * c + 1] for cx, cz in keys]
    )
    biome = np.stack([lay.biome[(cz + 8) * c : (cz + 9) * c, (cx + 10) * c : (cx + 11) * c] for cx, cz in keys])
    water = np.stack([gen.terrain.water_levels(cx * c, cz * c, c + 1, c + 1) for cx, cz in keys])
    got = [cg.grid for cg in D.chunk_grounds(gen, keys, ground, biome, water)]
    assert got == [D.finest_grid(g, b, D.grids_for(c)) for g, b in zip(ground, biome, strict=True)]
    assert len(set(got)) >= 3, Counter(got)


def _chunk_ground_slowly(gen, cx, cz):
    """A chunk's ChunkGround figures chunk by chunk, from the per-chunk functions (finest_grid,
    level_quads, edge_profiles, straight) and its own water levels: what chunk_grounds must give."""
    c = gen.p.chunk
    ground = gen.heights(cx * c, cz * c, c + 1, c + 1)
    biome = gen.biomes(cx * c, cz * c, c, c)
    water = gen.terrain.water_levels(cx * c, cz * c, c + 1, c + 1)
    grids = D.grids_for(c)
    g0 = D.finest_grid(ground, biome, grids)
    levels = tuple(g for g in grids if g >= g0)
    depths = tuple(0 if D.straight(e) else int(e.max() - e.min()) for e in D.edge_profiles(ground))
    skirts = sum(1 for d in depths if d)
    under = ground < water
    wcell = under[:-1, :-1] | under[:-1, 1:] | under[1:, :-1] | under[1:, 1:]
    wlev = np.maximum(np.maximum(water[:-1, :-1], water[:-1, 1:]), np.maximum(water[1:, :-1], water[1:, 1:]))
    top = max([int(ground.max())] + [int(v) for v in wlev[wcell]])
    return (
        levels,
        tuple(2 * D.level_quads(ground, biome, g)[0] for g in levels),
        tuple(2 * skirts * (c // g) for g in levels),
        depths,
        2 * (D._runs(wcell, wlev) - int((~wcell).sum())),
        int(ground.min()) - max(depths),
        top,
        wcell.tolist(),
        np.where(wcell, wlev, 0).tolist(),
    )


def _chunk_grounds_of(gen, cx0, cz0, nx, nz):
    """chunk_grounds of a rectangle of chunks, as Drawer.block stacks them (views of one layers)."""
    from numpy.lib.stride_tricks import sliding_window_view

    c = gen.p.chunk
    lay = gen.layers(cx0 * c, cz0 * c, nx * c, nz * c, points=True)
    keys = [(cx0 + i, cz0 + j) for j in range(nz) for i in range(nx)]
    k = len(keys)
    ground = sliding_window_view(lay.ground, (c + 1, c + 1))[::c, ::c].reshape(k, c + 1, c + 1)
    water = sliding_window_view(lay.water_vertex, (c + 1, c + 1))[::c, ::c].reshape(k, c + 1, c + 1)
    biome = lay.biome.reshape(nz, c, nx, c).transpose(0, 2, 1, 3).reshape(k, c, c)
    table = np.zeros((k, 3, len(D.GRIDS)), dtype=np.int64)
    figures: dict = {}
    D.chunk_grounds(gen, keys, ground, biome, water, table, figures)
    return keys, D.chunk_grounds(gen, keys, ground, biome, water, table), table, figures


def _check_chunk_grounds(gen, cx0, cz0, nx, nz):
    keys, got, table, figures = _chunk_grounds_of(gen, cx0, cz0, nx, nz)
    seen = Counter()
    for i, ((cx, cz), cg) in enumerate(zip(keys, got, strict=True)):
        want = _chunk_ground_slowly(gen, cx, cz)
        have = (
            cg.grids,
            cg.triangles,
            cg.skirt_triangles,
            cg.skirt_edges,
            cg.water_triangles,
            cg.y_min,
            cg.y_max,
            cg.water_cell.tolist(),
            cg.water_level.tolist(),
        )
        assert have == want, (cx, cz)
        n = len(cg.grids)
        assert figures["levels"][i] == n and figures["y_min"][i] == cg.y_min and figures["y_max"][i] == cg.y_max
        for j in range(len(D.GRIDS)):  # level j, the coarsest drawn beyond
            at = min(j, n - 1)
            assert table[i, :, j].tolist() == [cg.triangles[at], cg.skirt_triangles[at], cg.water_triangles]
        seen[(cg.grid, cg.water_triangles > 0, any(cg.skirt_edges))] += 1
    return seen


@pytest.mark.parametrize("name", ["watery", "busy"])
def test_chunk_grounds_equal_the_chunk_by_chunk_figures(name):
    """chunk_grounds (arrays over a band of chunks: grids fitted quad by quad on int32 heights,
    water only where a vertex is under it) gives each chunk's levels, triangles, skirts, water
    and height range as the per-chunk functions do, over a rectangle where every grid, water and
    skirts occur."""
    gen = Generator(*WORLDS[name]())
    seen = _check_chunk_grounds(gen, -10, -8, 20, 16)
    assert len({g for g, _, _ in seen}) >= 3 and any(w for _, w, _ in seen) and any(s for _, _, s in seen), seen


@pytest.mark.parametrize("window", [(-8, -4, 12, 8), (-56, -8, 12, 12), (300, -200, 10, 5), (-512, 508, 8, 4)])
def test_chunk_grounds_of_the_largest_world_equal_the_chunk_by_chunk_figures(largest, window):
    """chunk_grounds on windows of the largest world (the village, the west sea's coast, far from
    everything, the south-west corner) gives the per-chunk functions' figures."""
    from veduta.tools.inspect_world import load_world

    world, prefabs, _ = load_world(largest, "valley")
    _check_chunk_grounds(Generator(world, prefabs), *window)


def test_off_most_equals_the_interpolated_grounds():
    """_off_most (the vertex furthest off a grid's triangles, quad by quad, on int32 or int64
    heights) is the largest difference between _interpolate_many's grounds and the ground, on
    random grounds of small and of huge heights (beyond int32: the int64 path), every grid."""
    rng = np.random.default_rng(7)
    for n in (16, 32):
        for span in (100, 1 << 23, 1 << 40):
            ground = rng.integers(-span, span, size=(200, n + 1, n + 1))
            ground[:50] = ground[:50, :1, :1] + np.arange(n + 1) * rng.integers(-9, 9, size=(50, 1, 1))  # planes
            hs = D._narrow(ground)
            assert hs.dtype == (np.int32 if span < D.NARROW_MM else np.int64)
            for g in D.grids_for(n)[1:]:
                want = np.abs(D._interpolate_many(ground, g) - ground).max(axis=(1, 2))
                assert (D._off_most(hs, g) == want).all(), (n, span, g)
                assert not want[:50].any()  # a plane is on every grid's triangles


def test_view_summary_keeps_the_worst_views_across_batches():
    """ViewSummary.add, batch after batch (views as dicts and as columns): the WORST_VIEWS views
    drawing the most, ties in order, are those of one sort of all the views; over-budget counted."""
    from veduta.tools.inspect_world import FRAME_BUDGET, WORST_VIEWS, ViewSummary
    from veduta.world.draw import VIEW_FIGURES, ViewColumns

    rng = np.random.default_rng(5)
    for trial in range(20):
        n = int(rng.integers(1, 400))
        top = int(rng.choice([3, 50, FRAME_BUDGET * 2]))
        tris = rng.integers(0, top, size=n)  # (many ties)
        views = [{"name": f"v{i}", "focus": [i, -i], "triangles": int(t)} for i, t in enumerate(tris)]
        summary, k = ViewSummary(n), 0
        while k < n:
            m = int(rng.integers(1, 60))
            part = views[k : k + m]
            if trial % 2:  # as columns (one set of loaded chunks)
                figs = np.zeros((1, len(VIEW_FIGURES), len(part)), dtype=np.int64)
                figs[0, 9] = [v["triangles"] for v in part]
                xs = np.asarray([v["focus"][0] for v in part], dtype=np.int64)
                summary.add(ViewColumns(xs, -xs, figs, [(0, 0)], lambda v, k=k: f"v{k + v}"))
            else:
                summary.add(part)
            k += m
        want = sorted(range(n), key=lambda i: (-int(tris[i]), i))[:WORST_VIEWS]
        got = summary.report()
        assert [v["name"] for v in got["worst"]] == [f"v{i}" for i in want], trial
        assert got["over_budget"] == int((tris > FRAME_BUDGET).sum()), trial
