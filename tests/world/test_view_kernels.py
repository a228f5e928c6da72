"""The views of inspect world --all as one compiled loop (veduta/world/view_kernels.py, issue 22):
the same figures as the numpy path (``VEDUTA_JIT=0``) and as a view costed alone
(:meth:`Drawer.views`), view for view; the cameras' floats bit for bit; thinning by every bit of
a growth hash (uint64); the structures' things from their prefab's template as their entities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.world.test_draw import MODELS
from tests.world.test_scale import _camera, _views_worlds, largest  # noqa: F401 (a fixture)
from tests.world.worlds import Vegetation, example_prefabs, example_world
from veduta.world import Generator, jit, view_kernels
from veduta.world import draw as D
from veduta.world.entities import structure_entities

pytest.importorskip("numba")

CAMERAS = {
    "own": None,
    "steep": _camera("perspective", 70.0, 0.0, 0.1, 60.0, (0.0, 40.0, 3.0), (0.0, 0.0, 0.0)),
    "low": _camera("perspective", 40.0, 0.0, 0.5, 80.0, (-3.0, 1.5, 25.0), (4.0, 1.0, -20.0)),
    "ortho": _camera("orthographic", 0.0, 24.0, 0.1, 90.0, (20.0, 25.0, -20.0), (0.0, 0.0, 0.0)),
    "down": _camera("perspective", 60.0, 0.0, 0.1, 100.0, (0.0, 20.0, 0.0), (0.0, 0.0, 0.0)),
    "nearly down": _camera("perspective", 60.0, 0.0, 0.1, 100.0, (1.5e-5, 20.0, 0.0), (0.0, 0.0, 0.0)),
}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The views each call of the compiled loop counted (kernels on wherever a caller has them:
    ``VEDUTA_JIT=1``)."""
    monkeypatch.setenv(jit.ENV, "1")
    got: list[int] = []
    real = view_kernels._views

    def spy(*args):
        got.append(args[0].shape[0])
        return real(*args)

    monkeypatch.setattr(view_kernels, "_views", spy)
    return got


def _columns(batches) -> list[tuple[np.ndarray, ...]]:
    return [(b.xs, b.zs, b.figs, b.sides, b.window) for b in batches]


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(p, q, strict=True))
        for p, q in zip(a, b, strict=True)
    )


def _numpy(monkeypatch: pytest.MonkeyPatch, fn):
    monkeypatch.setenv(jit.ENV, "0")
    try:
        return fn()
    finally:
        monkeypatch.setenv(jit.ENV, "1")


def _cells(gen: Generator, window) -> list[tuple[str, tuple[int, int]]]:
    e, c = gen.p.extent, gen.p.chunk
    x0, z0, x1, z1 = window or (-e, -e, e, e)
    return [
        (f"chunk {cx},{cz}", (cx * c + c // 2, cz * c + c // 2))
        for cz in range(max(z0, -e), min(z1, e))
        for cx in range(max(x0, -e), min(x1, e))
    ]


@pytest.mark.parametrize("camera", list(CAMERAS), ids=list(CAMERAS))
def test_cameras_are_drawers_floats(camera, monkeypatch):
    """D._compiled_cameras gives Drawer._cameras's eyes and planes bit for bit: origins across
    the largest world and near 0, cameras steep, low, orthographic, straight and nearly straight
    down (where each origin decides its up)."""
    monkeypatch.setenv(jit.ENV, "1")
    rng = np.random.default_rng(3)
    origins = np.concatenate(
        [rng.uniform(-8192, 8192, (3000, 3)), rng.uniform(-1, 1, (300, 3)), np.zeros((1, 3)), -np.zeros((1, 3))]
    )
    gen = next(_views_worlds(extent=2))[1]
    drawer = D.Drawer(gen, MODELS, CAMERAS[camera])
    want = drawer._cameras(origins)
    got = D._compiled_cameras(drawer, origins)
    for a, b in zip(want, got, strict=True):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
        else:
            assert a == b


@pytest.mark.parametrize("camera", list(CAMERAS), ids=list(CAMERAS))
@pytest.mark.parametrize("kept", [True, False])
def test_compiled_views_equal_numpys_and_views(camera, kept, calls, monkeypatch):
    """chunk_views with the compiled loop gives the numpy path's columns (VEDUTA_JIT=0) and, view
    for view, what Drawer.views gives (each view as it is costed alone): the whole world and
    windows at its edges and of one chunk, rows across batches and blocks."""
    monkeypatch.setattr(D, "SWEEP_BATCH", 7)
    monkeypatch.setattr(D, "SWEEP_ROWS", 2)
    cam = CAMERAS[camera]
    for name, gen, own in _views_worlds(extent=5):
        cam_used = cam if camera != "own" else own
        for window in (None, (-5, -5, 1, 2), (2, 3, 5, 5), (0, 0, 1, 1)):
            calls.clear()
            fast = list(D.Drawer(gen, MODELS, cam_used).chunk_views(kept, window=window))
            assert sum(calls) == len(_cells(gen, window)) and calls, (name, window)
            slow = _numpy(monkeypatch, lambda: list(D.Drawer(gen, MODELS, cam_used).chunk_views(kept, window=window)))  # noqa: B023
            assert _same(_columns(fast), _columns(slow)), (name, window)
            got = [v for b in fast for v in b.dicts()]
            assert got == D.Drawer(gen, MODELS, cam_used).views(_cells(gen, window), kept), (name, window)


def test_structures_pool_started_again_gives_the_same_views(calls, monkeypatch):
    """The compiled views keep the structures' things in a pool (StructurePool), each structure
    placed once while the pool holds it, the pool started again when it would pass POOL_THINGS
    things: never, now and then (40) or at every rows of views (0), the views are the numpy
    path's, and the smaller the pool the more structures are placed again."""
    monkeypatch.setattr(D, "SWEEP_BATCH", 7)
    monkeypatch.setattr(D, "SWEEP_ROWS", 2)
    placed: list[int] = []
    real = D.Drawer._placed

    def spy(self, key, ox, oy, oz):
        placed.append(len(ox))
        return real(self, key, ox, oy, oz)

    tried, whole = 0, D.POOL_THINGS
    for name, gen, own in _views_worlds(extent=5):
        slow = _numpy(monkeypatch, lambda: list(D.Drawer(gen, MODELS, own).chunk_views(True)))  # noqa: B023
        got = {}
        for most in (whole, 40, 0):
            monkeypatch.setattr(D, "POOL_THINGS", most)
            monkeypatch.setattr(D.Drawer, "_placed", spy)
            placed.clear()
            drawer = D.Drawer(gen, MODELS, own)
            fast = list(drawer.chunk_views(True))
            monkeypatch.setattr(D.Drawer, "_placed", real)
            assert _same(_columns(fast), _columns(slow)), (name, most)
            pool = drawer._pool
            assert pool.n == sum(b - a for a, b in pool.at.values()), (name, most)  # each held once
            got[most] = sum(placed)
        if got[whole]:
            tried += 1
            assert got[whole] <= got[40] <= got[0] and got[whole] < got[0], (name, got)
    assert tried


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_empty_chunks_and_chunks_full_of_plants(density, calls, monkeypatch):
    """Worlds with no plant (chunks without things) and with a plant on every free cell (many
    things a chunk): the compiled loop gives what the numpy path and Drawer.views give."""
    monkeypatch.setattr(D, "SWEEP_BATCH", 9)
    veg = [
        Vegetation("grass", model="grass_tuft", density=density),
        Vegetation("poppies", model="poppy", density=density),
    ]
    gen, camera = Generator(example_world(vegetation=veg, extent=4), example_prefabs()), None
    fast = list(D.Drawer(gen, MODELS, camera).chunk_views(True))
    slow = _numpy(monkeypatch, lambda: list(D.Drawer(gen, MODELS, camera).chunk_views(True)))
    assert calls and _same(_columns(fast), _columns(slow))
    got = [v for b in fast for v in b.dicts()]
    assert got == D.Drawer(gen, MODELS, camera).views(_cells(gen, None), True)
    flora = sum(v["flora"] for v in got)
    assert (flora > 0) == (density > 0)


def test_thinning_by_every_bit_of_the_growth_hash(calls, monkeypatch):
    """Plants whose growth hashes take every bit of a uint64 (the top one too) are thinned as the
    numpy path thins them: the compiled loop's figures equal the numpy reference's (each thing
    tested as a view alone tests it) on the same rows."""
    name, gen, camera = next(_views_worlds(extent=4))
    drawer = D.Drawer(gen, MODELS, camera)
    e = gen.p.extent
    blocks = {b: drawer.block(-e, -e + 2 * b, 2 * e, 2) for b in range(e)}
    rng = np.random.default_rng(11)
    reach = int(gen.world.view or 1) + 1
    for za in (-e, 0, e - 1):  # a row of views, and the rows its views may load (as chunk_views)
        lo, hi = max(-e, za - reach), min(e - 1, za + reach)
        loaded, centre = drawer._rows(blocks, lo, hi)
        assert loaded.joined is not None
        things, cuts = loaded.joined
        n = len(things.model)
        # hashes with any bits, and some whose thinning bits are all 0 but the top ones
        thin = rng.integers(0, 2**64, n, dtype=np.uint64)
        thin[::3] &= np.uint64(0xFFFF_FFFF_FFFF_00FF)
        things = D.Things(things.pos, things.radius, things.model, thin, rng.random(n) < 0.7)
        loaded.joined = (things, cuts)
        loaded.things_of = lambda used, t=things, cuts=cuts: D.Things(  # type: ignore[misc]
            *(getattr(t, f)[np.concatenate([np.arange(cuts[i], cuts[i + 1]) for i in used])] for f in D.THING_FIELDS)
        )
        cxs = np.arange(-e, e)
        xs = cxs * gen.p.chunk + gen.p.chunk // 2
        zs = np.full(len(xs), za * gen.p.chunk + gen.p.chunk // 2)
        ox, oz, ccx, ccz, inside = drawer._slots(xs, zs, True)
        loaded.slot_chunk = np.where(inside, (ccz - lo) * 2 * e + (ccx + e), -1)
        ys = centre[(za - lo) * 2 * e + cxs + e]
        got, sets = drawer._figures(xs, zs, ys, ox, oz, loaded, True)
        assert calls
        loaded.maybe = None  # (no culling without a test: each thing as a view alone tests it)
        want, sets2 = _numpy(monkeypatch, lambda: drawer._figures(xs, zs, ys, ox, oz, loaded, True))  # noqa: B023
        assert sets == sets2 and np.array_equal(got, want), (lo, hi)
        assert got[0, 7].sum() > 0, (lo, hi)


def test_structures_things_from_templates_are_their_entities():
    """A structure's things placed from its prefab's template (Drawer._structure_placed) are
    Drawer._entities of its entities, bit for bit (turned ones take those entities)."""
    for name, gen, camera in _views_worlds():
        drawer = D.Drawer(gen, MODELS, camera)
        structs = gen.layers(-200, -200, 400, 400).structures
        assert len(structs) > 5, name
        for s in structs:
            a = drawer._structure_placed(s)
            b = drawer._entities(structure_entities(gen, s))
            for f in D.THING_FIELDS:
                x, y = getattr(a, f), getattr(b, f)
                assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), (name, s.name, f)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ortho=st.booleans(),
    fov=st.floats(10.0, 120.0),
    size=st.floats(1.0, 60.0),
    near=st.floats(0.05, 2.0),
    far=st.floats(5.0, 120.0),
    position=st.tuples(st.floats(-30, 30), st.floats(-5, 50), st.floats(-30, 30)),
    look_at=st.tuples(st.floats(-10, 10), st.floats(-5, 5), st.floats(-10, 10)),
    window=st.tuples(st.integers(-4, 3), st.integers(-4, 3), st.integers(1, 4), st.integers(1, 4)),
)
def test_any_camera_counts_as_views_alone(ortho, fov, size, near, far, position, look_at, window, calls):
    """Any camera (perspective or orthographic, any field, near and far, looking anywhere, but
    not at its own eye) and any window: the compiled loop gives, view for view, Drawer.views."""
    if np.linalg.norm(np.subtract(look_at, position)) < 1e-3:
        return
    cam = _camera("orthographic" if ortho else "perspective", fov, size, near, far, position, look_at)
    name, gen, _ = next(_views_worlds(extent=4))
    x0, z0, w, h = window
    win = (x0, z0, x0 + w, z0 + h)
    calls.clear()
    got = [v for b in D.Drawer(gen, MODELS, cam).chunk_views(True, window=win) for v in b.dicts()]
    assert calls
    assert got == D.Drawer(gen, MODELS, cam).views(_cells(gen, win), True)


@pytest.mark.parametrize(
    "window",
    [
        (-8, -4, 4, 4),  # the village, the mill pond, the keeper's cottage
        (-56, -8, -44, 4),  # the west sea's coast
        (-512, -512, -500, -505),  # the north-west corner
        (505, 500, 512, 512),  # the south-east corner
    ],
)
def test_compiled_views_of_the_largest_world_equal_numpys(largest, window, calls, monkeypatch):  # noqa: F811
    """On windows of the largest world the compiled loop gives the numpy path's columns (its
    shortcuts by the volume moved from the origin) and Drawer.views' views."""
    from veduta.tools.inspect_world import load_world, model_draws, needed_models

    world, prefabs, _ = load_world(largest, "valley")
    gen = Generator(world, prefabs)
    models, _, _ = model_draws(largest, needed_models(gen))
    fast = list(D.Drawer(gen, models).chunk_views(window=window))
    assert sum(calls) == len(_cells(gen, window))
    slow = _numpy(monkeypatch, lambda: list(D.Drawer(gen, models).chunk_views(window=window)))
    assert _same(_columns(fast), _columns(slow))
    got = [v for b in fast for v in b.dicts()]
    assert got == D.Drawer(gen, models).views(_cells(gen, window)) and any(v["triangles"] for v in got)
