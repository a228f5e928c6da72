"""The compiled kernels of the chunks (veduta/world/chunk_kernels.py) give the numpy path's bytes.

Drawer.block (levels of detail, skirts, water, boxes, focus heights, the things in chunk order
and their boxes, the structures touching each chunk) and chunk_views, computed with the kernels
and with ``VEDUTA_JIT=0``, on the sample
worlds (every grid, water, skirts, a sea level, a world of 4 chunks, chunks of 12 cells, a
prefab whose entities' parents make a loop), on windows of the largest world (the village, the
coast, far from everything, its corners, a band across its whole width), and on random grounds
(hypothesis: heights beyond int32, planes, flat chunks, biome edges, water) where the finest
grid is also finest_grid's, chunk by chunk.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from tests.world.test_draw import MODELS
from tests.world.test_generator import busy_prefabs, busy_world
from tests.world.test_scale import WORLDS, _views_worlds, largest  # noqa: F401 (a fixture)
from tests.world.worlds import Entity, Prefab, Scatter
from veduta.world import Generator, jit
from veduta.world import draw as D

pytest.importorskip("numba")


def _with_and_without(monkeypatch: pytest.MonkeyPatch, compute, *args, **kwargs):
    """(compute(*args, **kwargs) with the numpy path, the same with the kernels)."""
    monkeypatch.setenv(jit.ENV, "0")
    assert not jit.enabled()
    want = compute(*args, **kwargs)
    monkeypatch.setenv(jit.ENV, "1")
    assert jit.enabled()
    return want, compute(*args, **kwargs)


def _block(gen, models, rect, objects):
    cx0, cz0, nx, nz = rect
    return D.Drawer(gen, models).block(cx0, cz0, nx, nz, objects=objects)


def _same(a, b, what) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, what
        assert a.tobytes() == b.tobytes(), what
    else:
        assert a == b, what


def _same_blocks(a: D.ChunkBlock, b: D.ChunkBlock, what) -> None:
    for f in fields(D.ChunkBlock):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "things":
            for t in D.THING_FIELDS:
                _same(getattr(x, t), getattr(y, t), (what, t))
        elif f.name == "touch_structure":
            assert [s.name for s in x] == [s.name for s in y], what
        elif f.name == "grounds":
            assert (x is None) == (y is None), what
            for g, h in zip(x or [], y or [], strict=True):
                for q in fields(D.ChunkGround):
                    _same(getattr(g, q.name), getattr(h, q.name), (what, q.name, g.cx, g.cz))
        else:
            _same(x, y, (what, f.name))


def _looped_prefabs() -> dict:
    """busy's prefabs and one whose entities' parents make a loop (each cut after 16 of them: a
    template entity at its offsets alone) beside a root with a child."""
    prefabs = busy_prefabs()
    prefabs["loop"] = Prefab(
        "loop",
        (1.0, 1.0),
        entities=[
            Entity("a", model="hero", position=(0.5, 1.0, -0.25), parent="b"),
            Entity("b", model="hero", position=(-1.0, 0.5, 2.0), parent="a"),
            Entity("c", model="hall", position=(0.25, 0.0, 0.75)),
            Entity("d", model="oak", position=(1.5, -0.5, 0.0), parent="c"),
        ],
    )
    return prefabs


GENERATORS = {
    **{name: lambda make=make: Generator(*make()) for name, make in WORLDS.items() if name != "broken"},
    "chunks of 12": lambda: Generator(busy_world(chunk=12, extent=6), busy_prefabs()),
    "a loop of parents": lambda: Generator(
        busy_world(extent=6, scatter=[Scatter("loop", None, 0.2), Scatter("oak", ["forest"], 0.3)]), _looped_prefabs()
    ),
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_blocks_with_the_kernels_equal_the_numpy_paths(name, monkeypatch):
    """Drawer.block with the kernels gives every array of the numpy path's, byte for byte (dtypes
    too), with and without its ChunkGround objects: rows across the whole world, rectangles at
    its edges and corners, one chunk."""
    gen = GENERATORS[name]()
    e = gen.p.extent
    rects = [(-e, -e, 2 * e, 4), (-e, e - 3, 2 * e, 3), (e - 5, -e, 5, 6), (-2, -1, 4, 3), (0, 0, 1, 1)]
    rects = [(x, z, min(nx, e - x), min(nz, e - z)) for x, z, nx, nz in rects]
    seen = {"things": 0, "water": 0, "structures": 0}
    for objects in (False, True):
        for rect in rects:
            want, got = _with_and_without(monkeypatch, _block, gen, MODELS, rect, objects)
            _same_blocks(want, got, (name, rect, objects))
            seen["things"] += len(got.things.model)
            seen["water"] += int(got.table[:, 2].sum())
            seen["structures"] += len(got.touch_chunk)
    assert seen["things"] and seen["structures"], seen
    if name in ("watery", "sea level"):
        assert seen["water"], seen


def test_the_loop_of_parents_draws_its_entities_at_their_offsets(monkeypatch):
    """The prefab whose parents make a loop is drawn (so the test above compares its detached
    entities: at their offsets alone, the same place in every instance) beside its root and the
    root's child."""
    gen = GENERATORS["a loop of parents"]()
    monkeypatch.setenv(jit.ENV, "1")
    drawer = D.Drawer(gen, MODELS)
    blk = drawer.block(-6, -6, 12, 12)
    kinds = [off is None and root >= 0 for _, _, root, off in drawer._template("loop")]
    assert sorted(r for _, _, r, _ in drawer._template("loop")) == [-1, -1, 2, 2] and kinds.count(True) == 1
    at = blk.things.pos[blk.things.model == drawer.index["hero"]]  # (no other entity draws hero here)
    assert len(at) > 10 and len(np.unique(at, axis=0)) == 2


@pytest.mark.parametrize(
    "rect", [(-8, -4, 12, 8), (-56, -8, 12, 12), (300, -200, 10, 5), (-512, 508, 8, 4), (504, -512, 8, 3)]
)
def test_blocks_of_the_largest_world_with_the_kernels_equal_the_numpy_paths(largest, rect, monkeypatch):  # noqa: F811
    """The same on windows of the largest world: the village, the west sea (no thing at all),
    far from everything, the south-west and north-east corners."""
    from veduta.tools.inspect_world import load_world, model_draws, needed_models

    world, prefabs, _ = load_world(largest, "valley")
    gen = Generator(world, prefabs)
    models, _, _ = model_draws(largest, needed_models(gen))
    for objects in (False, True):
        want, got = _with_and_without(monkeypatch, _block, gen, models, rect, objects)
        _same_blocks(want, got, (rect, objects))
        assert bool(len(got.things.model)) == (rect != (-56, -8, 12, 12))


def test_a_band_across_the_largest_world_with_the_kernels_equals_the_numpy_paths(largest, monkeypatch):  # noqa: F811
    """A band of two rows of chunks across the whole width of the largest world (what
    chunk_views computes: the sea's groups of chunks read with their water levels, the others
    without) gives the numpy path's arrays."""
    from veduta.tools.inspect_world import load_world, model_draws, needed_models

    world, prefabs, _ = load_world(largest, "valley")
    gen = Generator(world, prefabs)
    models, _, _ = model_draws(largest, needed_models(gen))
    want, got = _with_and_without(monkeypatch, _block, gen, models, (-512, 0, 1024, 2), False)
    _same_blocks(want, got, "band")
    assert got.table[:, 2, 0].any() and not got.table[:, 2, 0].all()  # water, not everywhere


@hs.composite
def _random_bands(draw):
    """A rectangle of nz x nx chunks of n cells: vertex heights (planes, flat, rough, small or
    beyond int32), cell biomes (one, or several) and vertex water levels (none under, some, all)."""
    n = draw(hs.sampled_from([4, 8, 12, 16]))
    nz, nx = draw(hs.integers(1, 3)), draw(hs.integers(1, 4))
    rng = np.random.default_rng(draw(hs.integers(0, 2**32 - 1)))
    span = draw(hs.sampled_from([0, 30, 61, 200, 5000, 1 << 23, 1 << 40]))
    base = draw(hs.integers(-(1 << 40), 1 << 40)) if span > 1 << 30 else draw(hs.integers(-(1 << 20), 1 << 20))
    zz, xx = np.mgrid[0 : nz * n + 1, 0 : nx * n + 1]
    ground = base + rng.integers(-span, span + 1, size=zz.shape)
    if draw(hs.booleans()):  # a plane over some rows of chunks
        rows = slice(0, n * draw(hs.integers(1, nz)) + 1)
        ground[rows] = (base + rng.integers(-9, 10) * xx + rng.integers(-9, 10) * zz)[rows]
    biome = rng.integers(0, draw(hs.integers(1, 3)), size=(nz * n, nx * n))
    water = ground + rng.integers(-span - 2, 3, size=ground.shape) * draw(hs.sampled_from([0, 1]))
    return n, nx, ground, biome, water


@settings(max_examples=60, deadline=None)
@given(_random_bands())
def test_ground_figures_equal_the_numpy_path_on_random_grounds(band):
    """ground_figures over a random rectangle of chunks gives what the numpy path gives of its
    chunks stacked (every figure, water cells and levels, heights beyond int32 included), and its
    finest grid is finest_grid's, chunk by chunk."""
    import os

    from numpy.lib.stride_tricks import sliding_window_view

    n, nx, ground, biome, water = band
    nz = biome.shape[0] // n
    k, grids = nz * nx, D.grids_for(n)
    stack = sliding_window_view(ground, (n + 1, n + 1))[::n, ::n].reshape(k, n + 1, n + 1)
    bstack = biome.reshape(nz, n, nx, n).transpose(0, 2, 1, 3).reshape(k, n, n)
    wstack = sliding_window_view(water, (n + 1, n + 1))[::n, ::n].reshape(k, n + 1, n + 1)
    old = os.environ.get(jit.ENV)
    os.environ[jit.ENV] = "1"
    try:
        for wl, ws in ((water, wstack), (None, None)):
            got = D._ground_kernel(ground, biome, wl, grids, nx, cells=True)
            g0, tris, depths, wtris, y_min, y_max, cells = D._grounds_numpy(n, grids, stack, bstack, ws)
            wcell, wlevel = cells()
            for key, want in (("g0", g0), ("tris", tris), ("depths", depths), ("wtris", wtris)):
                assert (got[key] == want).all(), key
            assert (got["y_min"] == y_min).all() and (got["y_max"] == y_max).all()
            assert (got["wcell"] == wcell).all() and (got["wlevel"] == wlevel).all()
            h = n // 2
            assert (got["centre"] == (stack[:, h, h] + stack[:, h + 1, h + 1]) >> 1).all()
        assert got["g0"].tolist() == [D.finest_grid(g, b, grids) for g, b in zip(stack, bstack, strict=True)]
    finally:
        if old is None:
            del os.environ[jit.ENV]
        else:
            os.environ[jit.ENV] = old


@pytest.mark.parametrize("kept", [True, False])
def test_chunk_views_with_the_kernels_equal_the_numpy_paths(kept, monkeypatch):
    """chunk_views (the whole pass of inspect world --all) gives the same views with the kernels:
    a perspective and an orthographic camera, rows over several blocks and batches."""
    monkeypatch.setattr(D, "SWEEP_BATCH", 16)
    monkeypatch.setattr(D, "SWEEP_ROWS", 2)
    for name, gen, camera in _views_worlds(extent=5):

        def views(gen=gen, camera=camera):
            return [v for cols in D.Drawer(gen, MODELS, camera).chunk_views(kept) for v in cols.dicts()]

        want, got = _with_and_without(monkeypatch, views)
        assert want == got, name
        assert any(v["flora"] for v in got) and any(v["entities"] for v in got), name
