"""The generator's layers over bands (what ``inspect world --all`` computes, issue 22) agree
with the per-cell and per-chunk generator: the noise interpolated run by run of rows, the
biomes counted cut by cut, water skipped where none can reach, the structures near a rectangle
found once for its pads and its owners."""

from __future__ import annotations

import numpy as np
import pytest

from tests.world.test_scale import WORLDS
from veduta.world import Generator
from veduta.world import draw as D
from veduta.world import intmath as im
from veduta.world.terrain import BIOME_OCTAVES, NO_WATER


@pytest.mark.parametrize("p", [1, 3, 16, 48, 64, 96, 300])
def test_noise_grid_run_by_run_equals_the_points(p):
    """value_noise_grid and fbm_grid (z interpolated run by run of rows between the same two
    lattice rows, in place; rows far apart gathered) give value_noise_points' values at every
    point: tall and short grids, grids across the lattice's lines and 0, sample grids."""
    key = im.stream_key(7, f"noise/{p}")
    keys = [im.stream_key(7, f"fbm/{k}") for k in range(3)]
    for xs, zs in (
        (np.arange(-40, 90), np.arange(-70, 60)),  # many rows a run
        (np.arange(5, 8), np.arange(-3, 200)),
        (np.arange(-1000, 1000, 37), np.arange(-500, 700, 13)),  # a sample grid: few rows a run
        (np.arange(3, 4), np.arange(11, 12)),  # one point
        (np.arange(0, 50), np.asarray([-20, -19, 0, 1, 2, 90, 91, 400])),  # runs and gaps
    ):
        xs, zs = xs.astype(np.int64), zs.astype(np.int64)
        gx, gz = np.meshgrid(xs, zs)
        assert (im.value_noise_grid(key, p, xs, zs) == im.value_noise_points(key, p, gx, gz)).all(), (p, xs[0], zs[0])
        assert (im.fbm_grid(keys, p, xs, zs) == im.fbm_points(keys, p, gx, gz)).all(), (p, xs[0], zs[0])
    assert im.value_noise_grid(key, p, np.arange(2), np.arange(3)).dtype == np.int64


@pytest.mark.parametrize("name", ["busy", "watery"])
def test_biomes_counted_cut_by_cut_equal_the_binary_search_and_biome_at(name):
    """Terrain.biome_of_field (one comparison a cut) is searchsorted over the cuts at every
    value the biome field can take, and the biomes of a rectangle are biome_at's cell by cell."""
    gen = Generator(*WORLDS[name]())
    t = gen.terrain
    span = ((1 << BIOME_OCTAVES) - 1) * 32768
    f = np.arange(-span - 2, span + 3, dtype=np.int64)
    assert (t.biome_of_field(f) == np.searchsorted(t.biome_cuts, f, side="right")).all()
    for cuts in ([], [5], [-span - 1, 0], [-3, -3, 7], [span + 1, span + 1], list(range(-90000, 90000, 10000))):
        t.biome_cuts = np.asarray(cuts, dtype=np.int64)  # (any number of biomes, weights of 0)
        got = t.biome_of_field(f)
        assert got.dtype == np.int64 and (got == np.searchsorted(t.biome_cuts, f, side="right")).all(), cuts
    gen = Generator(*WORLDS[name]())
    t = gen.terrain
    b = gen.biomes(-157, -121, 301, 243)
    assert b.dtype == np.int64
    assert b[::4, ::3].tolist() == [[t.biome_at(x, z) for x in range(-157, 144, 3)] for z in range(-121, 122, 4)]
    assert len(np.unique(b)) > 1


def _rects(gen):
    """Rectangles of cells where water may reach and where none can (both asserted)."""
    rects = [(-48, -40, 96, 80), (150, -30, 64, 48), (180, 100, 33, 17), (-700, -20, 40, 40), (400, 400, 16, 16)]
    dry = [not gen.terrain.wet_possible(x0, z0, x0 + w, z0 + h) for x0, z0, w, h in rects]
    assert (any(dry) or gen.p.sea) and not all(dry), dry  # (the sea level reaches everything)
    return rects


@pytest.mark.parametrize("name", ["busy", "watery", "sea level"])
def test_layers_where_no_water_reaches_equal_cell_by_cell(name):
    """Generator.layers (water levels and wet cells not computed where no lake, sea or sea level
    can reach; the structures of the pads and of the owners found once) holds what the scalar
    generator says cell by cell: ground at every vertex, the water level of every vertex and
    cell, the cell centres, wet cells, owners, the structures near the rectangle."""
    gen = Generator(*WORLDS[name]())
    t = gen.terrain
    for x0, z0, w, h in _rects(gen):
        lay = gen.layers(x0, z0, w, h, points=True)
        assert lay.structures == gen.structs.in_rect(x0, z0, w, h, gen.margin)
        assert (lay.ground == gen.heights(x0, z0, w + 1, h + 1)).all()
        assert lay.water_vertex is not None
        assert lay.water_vertex.tolist() == [
            [t.water_level_at(x, z) for x in range(x0, x0 + w + 1)] for z in range(z0, z0 + h + 1)
        ]
        for j in range(0, h, 3):
            for i in range(0, w, 2):
                structs, corners, level, centre, wet, biome = gen.cell_state(x0 + i, z0 + j)
                assert (lay.level[j, i], lay.centre[j, i], lay.wet[j, i], lay.biome[j, i]) == (
                    level,
                    centre,
                    wet,
                    biome,
                ), (name, x0 + i, z0 + j)
                assert lay.ground[j : j + 2, i : i + 2].ravel().tolist() == list(corners)
                kind, index = gen.cover.owner_at(x0 + i, z0 + j, biome, wet, lay.structures)
                assert (lay.owner_kind[j, i], lay.owner_index[j, i]) == (kind, index)
        if not t.wet_possible(x0, z0, x0 + w, z0 + h):
            assert (lay.level == NO_WATER).all() and not lay.wet.any()


@pytest.mark.parametrize("name", ["busy", "watery"])
def test_chunk_grounds_without_water_equal_with_its_levels(name):
    """chunk_grounds told that no water reaches its chunks (water None, what Drawer.block passes
    where Terrain.wet_possible is false) gives what it gives from their water levels."""
    gen = Generator(*WORLDS[name]())
    c = gen.p.chunk
    for cx0, cz0, nx, nz in ((10, -4, 6, 3), (25, 6, 4, 4)):
        assert not gen.terrain.wet_possible(cx0 * c, cz0 * c, (cx0 + nx) * c, (cz0 + nz) * c)
        keys, want, table, figures = _grounds(gen, cx0, cz0, nx, nz, water=True)
        keys2, got, table2, figures2 = _grounds(gen, cx0, cz0, nx, nz, water=False)
        assert keys == keys2 and (table == table2).all()
        assert all((figures[k] == figures2[k]).all() for k in ("levels", "y_min", "y_max"))
        for a, b in zip(want, got, strict=True):
            assert (a.grids, a.triangles, a.skirt_triangles, a.skirt_edges, a.water_triangles, a.y_min, a.y_max) == (
                b.grids,
                b.triangles,
                b.skirt_triangles,
                b.skirt_edges,
                b.water_triangles,
                b.y_min,
                b.y_max,
            )
            assert (a.water_cell == b.water_cell).all() and (a.water_level == b.water_level).all()
            assert a.water_level.dtype == b.water_level.dtype
    # and the block of a rectangle without water gives each chunk what chunk_ground gives it
    blk = D.Drawer(gen, {}).block(10, -4, 6, 3, objects=True)
    assert blk.grounds is not None
    for cg in blk.grounds:
        one = D.chunk_ground(gen, cg.cx, cg.cz)
        assert (cg.grids, cg.triangles, cg.water_triangles, cg.y_min, cg.y_max) == (
            one.grids,
            one.triangles,
            one.water_triangles,
            one.y_min,
            one.y_max,
        )


def _grounds(gen, cx0, cz0, nx, nz, water):
    from numpy.lib.stride_tricks import sliding_window_view

    c = gen.p.chunk
    lay = gen.layers(cx0 * c, cz0 * c, nx * c, nz * c, points=True)
    keys = [(cx0 + i, cz0 + j) for j in range(nz) for i in range(nx)]
    k = len(keys)
    ground = sliding_window_view(lay.ground, (c + 1, c + 1))[::c, ::c].reshape(k, c + 1, c + 1)
    wl = sliding_window_view(lay.water_vertex, (c + 1, c + 1))[::c, ::c].reshape(k, c + 1, c + 1) if water else None
    biome = lay.biome.reshape(nz, c, nx, c).transpose(0, 2, 1, 3).reshape(k, c, c)
    table = np.zeros((k, 3, len(D.GRIDS)), dtype=np.int64)
    figures: dict = {}
    D.chunk_grounds(gen, keys, ground, biome, wl, table, figures)
    return keys, D.chunk_grounds(gen, keys, ground, biome, wl, table), table, figures


def test_biome_mask_is_the_gather():
    """cover.biome_mask (comparisons with the one or two biomes allowed, or not allowed) is
    ``ok[biome]`` for every table of up to five biomes."""
    from itertools import product

    from veduta.world.cover import biome_mask

    rng = np.random.default_rng(3)
    for n in range(1, 6):
        biome = rng.integers(0, n, size=(37, 29))
        for bits in product([False, True], repeat=n):
            ok = np.asarray(bits, dtype=bool)
            got = biome_mask(ok, biome)
            assert got.dtype == bool and got.shape == biome.shape and (got == ok[biome]).all(), bits


@pytest.mark.parametrize("name", sorted(WORLDS))
def test_cells_each_rule_takes_are_its_owners(name):
    """Layers.taken (the cells each scatter and vegetation prefab rule takes, kept by
    Cover.owners as it decides them; Drawer.block places prefabs from them) are, rule by rule
    and row by row, the cells whose owner is that rule, and every such cell is in one."""
    from veduta.world.cover import SCATTER, VEGETATION

    gen = Generator(*WORLDS[name]())
    n = gen.p.cells
    seen = 0
    for x0, z0, w, h in ((-64, -48, 128, 96), (n - 20, -n - 9, 32, 24), (-n - 5, n - 17, 31, 22), (3, 3, 1, 1)):
        lay = gen.layers(x0, z0, w, h, points=True)
        assert lay.taken is not None
        want = []
        for code in (SCATTER, VEGETATION):
            for idx in np.unique(lay.owner_index[lay.owner_kind == code]).tolist():
                jj, ii = np.nonzero((lay.owner_kind == code) & (lay.owner_index == idx))
                want.append((code, idx, jj.tolist(), ii.tolist()))
        assert [(k, i, jj.tolist(), ii.tolist()) for k, i, jj, ii in lay.taken] == want
        seen += sum(len(q[2]) for q in want)
    assert seen > 0


def test_off_some_is_the_interpolated_grounds_at_its_vertices():
    """_off_some (the screen chunk_grounds runs before _off_most at grids of 8 and more) is the
    largest difference between _interpolate_many's grounds and the ground over the vertices at
    offsets multiple of its stride inside the quads: never more than _off_most's."""
    rng = np.random.default_rng(11)
    for n in (16, 32):
        for span in (100, 1 << 23, 1 << 40):
            ground = rng.integers(-span, span, size=(120, n + 1, n + 1))
            hs = D._narrow(ground)
            for g in [g for g in D.grids_for(n) if g >= 8]:
                diff = np.abs(D._interpolate_many(ground, g) - ground)
                for stride in (1, 2, g // 4, g // 2):
                    idx = np.arange(n)[(np.arange(n) % g) % stride == 0]
                    want = diff[:, idx][:, :, idx].max(axis=(1, 2))
                    got = D._off_some(hs, g, stride)
                    assert (got == want).all() and (got <= D._off_most(hs, g)).all(), (n, span, g, stride)
