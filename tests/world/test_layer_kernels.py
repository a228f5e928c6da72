"""The compiled kernels of Generator.layers (veduta/world/layer_kernels.py, issue 22) give the
numpy path's layers exactly (every array, its dtype, the plants, the cells each rule takes, in
their order), and the one-cell generator's owners and plants: on the sample worlds (lakes, seas,
the sea level, min_distance between prefabs and structures, rules with a disc, a small world's
edges), on one-cell rectangles and rectangles outside the world, and on windows of the largest
world."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.world import test_band_layers
from tests.world.test_scale import REPO, WORLDS
from tests.world.worlds import example_prefabs, example_world
from veduta.base.project import Project
from veduta.world import Generator, jit
from veduta.world import layer_kernels as LK
from veduta.world.cover import NONE, STRUCTURE
from veduta.world.generator import Layers
from veduta.world.intmath import fbm_grid

pytest.importorskip("numba")

ALL = {**WORLDS, "example": lambda: (example_world(), example_prefabs())}


def _layers(make, rect: tuple[int, int, int, int], fast: bool, monkeypatch: pytest.MonkeyPatch) -> Layers:
    """Generator.layers(points=True) of a fresh generator of ``make()``'s (world, prefabs), with
    the kernels or without."""
    if fast:
        monkeypatch.setenv(jit.ENV, "1")
    else:
        monkeypatch.setenv(jit.ENV, "0")
    gen = Generator(*make())
    try:
        return gen.layers(*rect, points=True)
    finally:
        monkeypatch.delenv(jit.ENV, raising=False)


def _same(a, b, what: str) -> None:
    """Equal arrays (dtype, shape, values), or equal values."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, what
        assert (a == b).all(), what
    else:
        assert a == b, what


def assert_same_layers(got: Layers, want: Layers) -> None:
    for name in ("ground", "biome", "level", "centre", "wet", "structures", "owner_kind", "owner_index"):
        _same(getattr(got, name), getattr(want, name), name)
    _same(got.water_vertex, want.water_vertex, "water_vertex")
    assert got.points is not None and want.points is not None and len(got.points) == len(want.points)
    for pg, pw in zip(got.points, want.points, strict=True):
        assert pg.rule == pw.rule
        for name in ("j", "i", "x_mm", "z_mm", "y_mm", "scale", "hash"):
            _same(getattr(pg, name), getattr(pw, name), f"plants of rule {pw.rule}: {name}")
    assert got.taken is not None and want.taken is not None
    assert [t[:2] for t in got.taken] == [t[:2] for t in want.taken]
    for tg, tw in zip(got.taken, want.taken, strict=True):
        _same(tg[2], tw[2], f"rows taken by {tw[:2]}")
        _same(tg[3], tw[3], f"columns taken by {tw[:2]}")


def _rects(gen: Generator) -> list[tuple[int, int, int, int]]:
    """Rectangles across the world's edges, its centre, lakes and seas, of one cell, row or column,
    wholly outside the world (no owner, no plant)."""
    n = gen.p.cells
    rects = [(-48, -40, 96, 80), (-n - 7, -20, 40, 33), (n - 30, n - 12, 45, 20), (150, -30, 64, 48)]
    rects += [(-130, 40, 64, 64), (3, 5, 1, 1), (0, 0, 1, 5), (0, 0, 5, 1), (-n - 20, -n - 20, 10, 10)]
    for f in gen.p.features:  # each feature's rim and a corner of its reach
        rects.append((f.x - f.radius - 3, f.z - 4, 2 * f.radius + 8, 9))
    return rects


@pytest.mark.parametrize("name", sorted(ALL))
def test_kernels_give_the_numpy_layers(name, monkeypatch):
    """Every rectangle of every sample world: the same layers both ways (structures and cells some
    scatter or vegetation rule takes among them)."""
    took = set()
    for rect in _rects(Generator(*ALL[name]())):
        got = _layers(ALL[name], rect, True, monkeypatch)
        want = _layers(ALL[name], rect, False, monkeypatch)
        assert_same_layers(got, want)
        took |= set(np.unique(want.owner_kind).tolist())
    assert STRUCTURE in took and len(took - {NONE, STRUCTURE}) >= 1 or name == "small", took


@pytest.mark.parametrize("name", ["example", "watery", "sea level"])
def test_kernels_give_the_one_cell_generator(name, monkeypatch):
    """With the kernels: each cell's owner and plants as Generator.cell_owner and .plants (the
    scalar path) say, on a rectangle with structures, prefabs kept away from them (min_distance),
    plants and water."""
    monkeypatch.setenv(jit.ENV, "1")
    gen = Generator(*ALL[name]())
    x0, z0, w, h = (-40, -8, 64, 40) if name != "example" else (100, -52, 48, 40)
    lay = gen.layers(x0, z0, w, h)  # (not points: the plants' arrays come from the numpy path)
    pts = gen.layers(x0, z0, w, h, points=True)
    assert (pts.owner_kind == STRUCTURE).any() or name != "example"
    plants: dict[tuple[int, int], list] = {}
    for pp in pts.points or []:
        for k in range(len(pp.j)):
            plants.setdefault((int(pp.j[k]), int(pp.i[k])), []).append((pp.rule, int(pp.x_mm[k]), int(pp.y_mm[k])))
    for j in range(0, h, 3):
        for i in range(w):
            x, z = x0 + i, z0 + j
            want = gen.cell_owner(x, z)
            k, idx = int(pts.owner_kind[j, i]), int(pts.owner_index[j, i])
            assert (k, idx) == (int(lay.owner_kind[j, i]), int(lay.owner_index[j, i]))
            got = None if k == NONE else gen.owner_json(x, z, k, idx, pts.structures)
            assert got == want, (x, z)
            one = [(pl.rule, pl.x_mm, pl.y_mm) for pl in gen.cover.plants_at(x, z, *_cell_args(gen, x, z))]
            assert plants.get((j, i), []) == one, (x, z)
    assert plants


def _cell_args(gen: Generator, x: int, z: int):
    structs, corners, level, centre, wet, biome = gen.cell_state(x, z)
    return biome, wet, any(s.covers(x, z) for s in structs), corners


def test_water_levels_kernel_equals_numpy_across_rims(monkeypatch):
    """Terrain.water_levels: the kernel (radii bounded by the noise's least and greatest values,
    no square root) gives numpy's levels on rectangles across every lake's and sea's rim, for
    smooth and rough shores, with and without the sea level."""
    monkeypatch.delenv(jit.ENV, raising=False)
    for name in ("watery", "sea level", "example"):
        gen = Generator(*ALL[name]())
        t = gen.terrain
        for f in gen.p.features:
            if f.kind not in ("lake", "sea"):
                continue
            r = t.reach[f.index]
            for x0, z0, w, h in ((f.x - r - 2, f.z - r - 2, 2 * r + 5, 2 * r + 5), (f.x - 3, f.z - 3, 7, 7)):
                got = LK.terrain_water_levels(t, x0, z0, w, h)
                want = t.water_levels(x0, z0, w, h)
                assert got.dtype == want.dtype == np.int64 and (got == want).all(), (name, f.name)


@pytest.mark.parametrize("scale", [1, 2, 3, 17, 96, 400])
def test_biome_grid_equals_fbm_and_the_cuts(scale, monkeypatch):
    """Terrain.biomes with the kernel: the fbm of the biome keys counted against the cuts, as the
    numpy path (fbm_grid, then biome_of_field) over rectangles across lattice lines and 0."""
    monkeypatch.delenv(jit.ENV, raising=False)
    world, prefabs = ALL["busy"]()
    world.biome_scale = scale
    gen = Generator(world, prefabs)
    t = gen.terrain
    for x0, z0, w, h in ((-150, -130, 301, 263), (5, -3, 1, 200), (-1000, 999, 3, 1)):
        xs, zs = np.arange(x0, x0 + w, dtype=np.int64), np.arange(z0, z0 + h, dtype=np.int64)
        want = np.searchsorted(t.biome_cuts, fbm_grid(t.biome_keys, t.p.biome_scale, xs, zs), side="right")
        got = LK.terrain_biomes(t, x0, z0, w, h)
        assert got.dtype == np.int64 and (got == want).all(), (scale, x0, z0)


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(sorted(ALL)),
    x0=st.integers(-300, 300),
    z0=st.integers(-300, 300),
    w=st.integers(1, 90),
    h=st.integers(1, 70),
)
def test_any_rectangle_the_same_both_ways(name, x0, z0, w, h):
    """Any rectangle of any sample world: the kernels' layers are the numpy path's."""
    with pytest.MonkeyPatch.context() as mp:
        got = _layers(ALL[name], (x0, z0, w, h), True, mp)
        want = _layers(ALL[name], (x0, z0, w, h), False, mp)
    assert_same_layers(got, want)


def test_layers_import_numba_only_where_wanted():
    """The cook's and a query's layers (no points) and a band's layers outside jit.wanted() (a
    world edit, a preview) take the numpy path: numba is not imported (veduta/world/jit.py); a
    band's layers within jit.wanted() (inspect world --all) import it."""
    code = "\n".join(
        [
            "import sys",
            "from tests.world.worlds import example_prefabs, example_world",
            "from veduta.world import Generator, jit",
            "g = Generator(example_world(), example_prefabs())",
            "g.chunk_layers(0, 0), g.layers(-40, -8, 64, 40), g.cell_owner(3, 4)",
            "g.layers(-200, -8, 400, 300, points=True)",
            "print('numba' in sys.modules)",
            "with jit.wanted():",
            "    g.layers(-200, -8, 400, 30)",
            "    print('numba' in sys.modules)",
            "    g.layers(-200, -8, 400, 30, points=True)",
            "    print('numba' in sys.modules)",
        ]
    )
    env = {k: v for k, v in os.environ.items() if k != jit.ENV}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, env=env)
    assert out.stdout.split() == ["False", "False", "True"]


@pytest.mark.parametrize("name", ["busy", "watery", "sea level"])
def test_band_layers_with_the_kernels(name, monkeypatch):
    """tests/world/test_band_layers.py's comparisons of layers with the one-cell generator, with
    the kernels taking every rectangle."""
    monkeypatch.setenv(jit.ENV, "1")
    test_band_layers.test_layers_where_no_water_reaches_equal_cell_by_cell(name)
    test_band_layers.test_cells_each_rule_takes_are_its_owners(name)


def test_helpers_compile_once_and_match_intmath():
    """The helpers the kernels call (compiled by ready()) give intmath's values."""
    from veduta.world.intmath import mix64, smooth

    LK.ready()
    LK.ready()
    for z in (0, 1, (1 << 64) - 1, 0x9E3779B97F4A7C15, 12345678901234567):
        assert int(LK.mix64(np.uint64(z))) == mix64(z)
    for t in (0, 1, 32768, 65535, 65536):
        assert int(LK.smooth(np.int64(t))) == smooth(t)


@pytest.fixture(scope="module")
def largest_valley(tmp_path_factory):
    """The sample valley at the largest legal extent (512 chunks: cells -8192..8191)."""
    from veduta.tools.inspect_world import load_world

    root = tmp_path_factory.mktemp("largest") / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    valley = root / "assets" / "worlds" / "valley.vworld"
    valley.write_text(valley.read_text().replace('"extent": 64', '"extent": 512', 1))
    world, prefabs, _ = load_world(Project.at(str(root)), "valley")
    return lambda: (world, prefabs)


@pytest.mark.parametrize(
    "rect",
    [
        (-8192, -64, 16384, 64),  # a band across the whole world through the village and the sea
        (-8192 - 16, 8192 - 40, 200, 60),  # the north-west corner, beyond the world's edge
        (8192 - 100, -8192 - 3, 120, 50),  # the south-east corner
        (-120, -40, 160, 100),  # the village, the grove, the pond, the poppies
    ],
)
def test_largest_world_windows_the_same_both_ways(largest_valley, rect, monkeypatch):
    got = _layers(largest_valley, rect, True, monkeypatch)
    want = _layers(largest_valley, rect, False, monkeypatch)
    assert_same_layers(got, want)
    if rect[2] == 16384:  # many things: structures, scattered trees, oaks, grass
        assert len(want.structures) > 50 and sum(len(p.j) for p in want.points or []) > 100_000
        assert want.taken and sum(len(t[2]) for t in want.taken) > 10_000
