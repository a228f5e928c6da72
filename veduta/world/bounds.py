"""Bounds of the base ground and of water over blocks of vertices (veduta.world.areas, site
decisions): exact integer hulls of the generator's own formulas (docs/world-generation.md).

A block is the square of vertices [bx0, bx0 + S] x [bz0, bz0 + S]; every function takes arrays of
blocks and returns arrays of (lo, hi). Each hull holds whatever the formulas' floors do (a few
noise units of slack where the noise is interpolated)."""

from __future__ import annotations

import numpy as np

from veduta.world.intmath import dist8, octave_periods, pseudo_angle, smooth, value_noise_points
from veduta.world.terrain import RELIEF_SPAN, RIM8, RIM_MM, Terrain

#: slack (noise units, per octave) for the floors of the value noise's interpolation
NOISE_SLACK = 3


def _octave_bounds(key: int, p: int, bx0: np.ndarray, bz0: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of one octave of value noise (period p) over the vertices of blocks
    [bx0, bx0 + S] x [bz0, bz0 + S]: inside a lattice cell the noise is bilinear in the
    smoothstep weights, so its extremes over a rectangle are at the rectangle's corners; the
    block is cut at the lattice lines and the noise taken at every cut's corners."""
    k = S // p + 1  # lattice lines strictly inside a block, at most

    def cuts(b0: np.ndarray) -> np.ndarray:
        inner = (b0[:, None] // p + 1 + np.arange(k, dtype=np.int64)[None, :]) * p
        return np.concatenate([b0[:, None], np.minimum(inner, b0[:, None] + S), b0[:, None] + S], axis=1)

    v = value_noise_points(key, p, cuts(bx0)[:, None, :], cuts(bz0)[:, :, None])
    return v.min(axis=(1, 2)) - NOISE_SLACK, v.max(axis=(1, 2)) + NOISE_SLACK


def _lattice_bounds(key: int, p: int, bx0: np.ndarray, bz0: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of one octave over blocks tiling a rectangle (``bx0``, ``bz0`` the same few
    columns and rows): the hull of the lattice values of every lattice cell a block touches
    (the noise never leaves its cell's corners' hull). One hash per lattice point, for blocks
    much larger than the period."""
    from veduta.world.intmath import hash2_grid, signed16

    cols, rows = np.unique(bx0), np.unique(bz0)
    ia, ic = cols // p, (cols + S) // p + 1  # lattice columns of each block, inclusive
    ja, jc = rows // p, (rows + S) // p + 1
    lx = np.arange(int(ia.min()), int(ic.max()) + 1, dtype=np.int64)
    lz = np.arange(int(ja.min()), int(jc.max()) + 1, dtype=np.int64)
    lat = signed16(hash2_grid(key, lx, lz))

    lo_rows = np.empty((len(lz), len(cols)), dtype=np.int64)
    hi_rows = np.empty((len(lz), len(cols)), dtype=np.int64)
    for b in range(len(cols)):
        sub = lat[:, ia[b] - lx[0] : ic[b] - lx[0] + 1]
        lo_rows[:, b], hi_rows[:, b] = sub.min(axis=1), sub.max(axis=1)
    lo = np.empty((len(rows), len(cols)), dtype=np.int64)
    hi = np.empty((len(rows), len(cols)), dtype=np.int64)
    for b in range(len(rows)):
        lo[b] = lo_rows[ja[b] - lz[0] : jc[b] - lz[0] + 1].min(axis=0)
        hi[b] = hi_rows[ja[b] - lz[0] : jc[b] - lz[0] + 1].max(axis=0)
    ci = np.searchsorted(cols, bx0)
    ri = np.searchsorted(rows, bz0)
    return lo[ri, ci], hi[ri, ci]


def relief_bounds(t: Terrain, bx0: np.ndarray, bz0: np.ndarray, S: int, tiling: bool = False):
    """Bounds (lo, hi) in mm of the relief over the vertices of blocks [bx0, bx0 + S] x [bz0, bz0 + S];
    ``tiling``: the blocks tile a rectangle (cheaper bounds for octaves much finer than S)."""
    p = t.p
    n = len(bx0)
    if p.relief_mm == 0:
        z = np.zeros(n, dtype=np.int64)
        return z, z.copy()
    keys = t.relief_keys
    flo = np.zeros(n, dtype=np.int64)
    fhi = np.zeros(n, dtype=np.int64)
    octs = len(keys)
    for k, (key, pk) in enumerate(zip(keys, octave_periods(p.relief_scale, octs), strict=True)):
        fn = _lattice_bounds if tiling and S >= 8 * pk else _octave_bounds
        lo, hi = fn(key, pk, bx0, bz0, S)
        flo += lo << (octs - 1 - k)
        fhi += hi << (octs - 1 - k)
    a, b = (p.relief_mm * flo) // RELIEF_SPAN, (p.relief_mm * fhi) // RELIEF_SPAN
    return np.minimum(a, b) - 1, np.maximum(a, b) + 1


def _abs_range(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min and max of |v| for v in [lo, hi]."""
    amin = np.where((lo <= 0) & (hi >= 0), 0, np.minimum(np.abs(lo), np.abs(hi)))
    return amin, np.maximum(np.abs(lo), np.abs(hi))


def _corners(fn, g_lo, g_hi, s_lo, s_hi):
    """Hull of fn(g, s) over the four corners (fn monotone in each argument)."""
    v = [fn(g, s) for g in (g_lo, g_hi) for s in (s_lo, s_hi)]
    return np.minimum.reduce(v), np.maximum.reduce(v)


def _noise_range(table: list[int], pa0: np.ndarray, pa1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Range of the angular noise over pseudo-angles [pa0, pa1] (pa0 <= pa1): its ends and every
    lattice value in between (it is monotone between two lattice values)."""
    from veduta.world.intmath import ANGULAR_LOBES, angular_noise

    lo = np.minimum(angular_noise(table, pa0), angular_noise(table, pa1))
    hi = np.maximum(angular_noise(table, pa0), angular_noise(table, pa1))
    step = 65536 // ANGULAR_LOBES
    for k in range(ANGULAR_LOBES + 1):
        inside = (pa0 <= k * step) & (k * step <= pa1)
        v = table[k % ANGULAR_LOBES]
        lo = np.where(inside, np.minimum(lo, v), lo)
        hi = np.where(inside, np.maximum(hi, v), hi)
    return lo, hi


def _angle_noise(t: Terrain, f, dxlo, dxhi, dzlo, dzhi) -> tuple[np.ndarray, np.ndarray]:
    """Range of a lake's or sea's angular noise over blocks of offsets [dxlo, dxhi] x [dzlo, dzhi]."""
    table = t._tables[f.index]
    n = len(dxlo)
    full_lo = np.full(n, min(table), dtype=np.int64)
    full_hi = np.full(n, max(table), dtype=np.int64)
    cx = np.stack([dxlo, dxhi, dxlo, dxhi])
    cz = np.stack([dzlo, dzlo, dzhi, dzhi])
    pa = pseudo_angle(cx, cz)
    around = (dxlo <= 0) & (dxhi >= 0) & (dzlo <= 0) & (dzhi >= 0)  # the centre is in the block
    wrap = ~around & (dxhi > 0) & (dzlo < 0) & (dzhi >= 0)  # it straddles the +x axis (angle 0)
    lo, hi = _noise_range(table, pa.min(axis=0), pa.max(axis=0))
    # straddling: the angles [0, largest of its quadrant-0 corners] and [smallest of its quadrant-3 ones, 65535]
    q0 = np.where(pa < 16384, pa, -1).max(axis=0)
    q3 = np.where(pa >= 3 * 16384, pa, 65536).min(axis=0)
    a_lo, a_hi = _noise_range(table, np.zeros(n, dtype=np.int64), np.maximum(q0, 0))
    b_lo, b_hi = _noise_range(table, np.minimum(q3, 65535), np.full(n, 65535, dtype=np.int64))
    lo = np.where(wrap, np.minimum(a_lo, b_lo), lo)
    hi = np.where(wrap, np.maximum(a_hi, b_hi), hi)
    return np.where(around, full_lo, lo), np.where(around, full_hi, hi)


def feature_bounds(
    t: Terrain, f, g_lo: np.ndarray, g_hi: np.ndarray, bx0: np.ndarray, bz0: np.ndarray, S: int
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the ground after feature f over blocks whose ground before it is in [g_lo, g_hi]."""
    dxlo, dxhi = bx0 - f.x, bx0 + S - f.x
    dzlo, dzhi = bz0 - f.z, bz0 + S - f.z
    ax_lo, ax_hi = _abs_range(dxlo, dxhi)
    az_lo, az_hi = _abs_range(dzlo, dzhi)
    d_lo, d_hi = dist8(ax_lo, az_lo), dist8(ax_hi, az_hi)
    level = t.levels[f.index]
    r8 = f.radius * 256
    if f.kind == "hill":

        def add(d):
            tt = 65536 - (np.minimum(d, r8) << 16) // r8
            return (f.height_mm * smooth(tt)) >> 16

        a, b = add(d_lo), add(d_hi)
        return g_lo + np.minimum(a, b), g_hi + np.maximum(a, b)
    if f.kind == "plain":
        ri8 = max(f.radius - f.falloff, 0) * 256
        span = max(1, r8 - ri8)

        def s_of(d):
            # at r8 and beyond the ground is untouched (s = 1), also when falloff is 0 and the
            # ramp has no width (ri8 == r8: the clip alone would give s = 0 there)
            return np.where(d >= r8, 65536, smooth(((np.clip(d, ri8, r8) - ri8) << 16) // span))

        return _corners(lambda g, s: level + (((g - level) * s) >> 16), g_lo, g_hi, s_of(d_lo), s_of(d_hi))
    # lake and sea: the bowl inside the wandering radius R8, the rim, then the shore
    R_lo, R_hi = _water_radius(t, f, dxlo, dxhi, dzlo, dzhi)
    rim = level + RIM_MM
    s8 = max(1, f.falloff) * 256
    lo = np.full(len(bx0), np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(len(bx0), np.iinfo(np.int64).min, dtype=np.int64)
    # bowl: u = d / R in Q16, below 1 there
    bowl = d_lo < R_hi
    u_lo = np.clip((d_lo << 16) // np.maximum(R_hi, 1), 0, 65536)
    u_hi = np.clip((d_hi << 16) // np.maximum(R_lo, 1), 0, 65536)

    def depth_at(u):
        return level - ((f.depth_mm * (65536 - ((u * u) >> 16))) >> 16)

    b1, b2 = depth_at(u_lo), depth_at(u_hi)
    lo = np.where(bowl, np.minimum(lo, np.minimum(b1, b2)), lo)
    hi = np.where(bowl, np.maximum(hi, np.maximum(b1, b2)), hi)
    ring = (d_hi >= R_lo) & (d_lo < R_hi + RIM8)
    lo = np.where(ring, np.minimum(lo, rim), lo)
    hi = np.where(ring, np.maximum(hi, rim), hi)
    shore = d_hi >= R_lo + RIM8
    e_lo = np.clip(d_lo - R_hi - RIM8, 0, s8)
    e_hi = np.clip(d_hi - R_lo - RIM8, 0, s8)
    s_lo, s_hi = smooth((e_lo << 16) // s8), smooth((e_hi << 16) // s8)
    c_lo, c_hi = _corners(lambda g, s: rim + (((g - rim) * s) >> 16), g_lo, g_hi, s_lo, s_hi)
    lo = np.where(shore, np.minimum(lo, c_lo), lo)
    hi = np.where(shore, np.maximum(hi, c_hi), hi)
    return lo, hi


def ground_bounds(
    t: Terrain,
    bx0: np.ndarray,
    bz0: np.ndarray,
    S: int,
    tiling: bool = False,
    relief: tuple[np.ndarray, np.ndarray] | None = None,
):
    """(lo, hi) of the base ground (relief and features, no pads) over blocks; ``relief``: its
    relief bounds when already known."""
    lo, hi = relief if relief is not None else relief_bounds(t, bx0, bz0, S, tiling)
    for f in t.p.features:
        r = t.reach[f.index]
        near = (bx0 <= f.x + r) & (bx0 + S >= f.x - r) & (bz0 <= f.z + r) & (bz0 + S >= f.z - r)
        if near.all():
            lo, hi = feature_bounds(t, f, lo, hi, bx0, bz0, S)
        elif near.any():
            a, b = feature_bounds(t, f, lo[near], hi[near], bx0[near], bz0[near], S)
            lo[near], hi[near] = a, b
    return lo, hi


def water_bounds(t: Terrain, bx0: np.ndarray, bz0: np.ndarray, S: int) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the water level over blocks: NO_WATER when no vertex can be under water, lo
    NO_WATER when some vertex may have none."""
    from veduta.world.terrain import NO_WATER

    n = len(bx0)
    lo = np.full(n, NO_WATER, dtype=np.int64)
    hi = np.full(n, NO_WATER, dtype=np.int64)
    for f in t.p.features:
        if f.kind not in ("lake", "sea"):
            continue
        r = t.reach[f.index]
        near = (bx0 <= f.x + r) & (bx0 + S >= f.x - r) & (bz0 <= f.z + r) & (bz0 + S >= f.z - r)
        k = np.flatnonzero(near)
        if not len(k):
            continue
        dxlo, dxhi = bx0[k] - f.x, bx0[k] + S - f.x
        dzlo, dzhi = bz0[k] - f.z, bz0[k] + S - f.z
        ax_lo, ax_hi = _abs_range(dxlo, dxhi)
        az_lo, az_hi = _abs_range(dzlo, dzhi)
        d_lo, d_hi = dist8(ax_lo, az_lo), dist8(ax_hi, az_hi)
        R_lo, R_hi = _water_radius(t, f, dxlo, dxhi, dzlo, dzhi)
        level = t.levels[f.index]
        may = d_lo < R_hi  # some vertex may be in this water
        every = d_hi < R_lo  # every vertex is: a later feature's level, or this one's, holds there
        lo_k, hi_k = lo[k], hi[k]
        lo[k] = np.where(every, level, np.where(may, np.minimum(lo_k, level), lo_k))
        hi[k] = np.where(every, level, np.where(may, np.maximum(hi_k, level), hi_k))
        # a vertex in this water and in a later one takes the later one's level: the hull above
        # holds that (each level met is in it), except that "every" forgets earlier levels, which
        # the later feature's level replaces anyway
    if t.p.sea:
        lo = np.maximum(lo, t.p.sea_level_mm)
        hi = np.maximum(hi, t.p.sea_level_mm)
    return lo, hi


def _water_radius(t: Terrain, f, dxlo, dxhi, dzlo, dzhi) -> tuple[np.ndarray, np.ndarray]:
    """Range of the wandering radius R8 of a lake or sea over blocks of offsets."""
    n_lo, n_hi = _angle_noise(t, f, dxlo, dxhi, dzlo, dzhi)
    r8, rr = f.radius * 256, f.rough_q16
    return r8 + ((r8 * ((rr * n_lo) >> 16)) >> 16), r8 + ((r8 * ((rr * n_hi) >> 16)) >> 16)
