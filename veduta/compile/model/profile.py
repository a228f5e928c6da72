"""Profile checks and cap triangulation for extrude and lathe (spec: extrude, lathe).

The checks return human-readable problem messages (empty list = fine) for the validator, which
adds file, line, column and JSON path. Point numbers in messages are 0-based, like part indices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from veduta.compile.model.types import EXTRUDE_POINTS_RANGE, LATHE_POINTS_RANGE

# Relative tolerance of the ear clipper's convexity test (times the squared profile extent):
# corners flatter than this are treated as straight and never clipped as ears.
_FLAT_TOLERANCE = 1e-12


def _fmt(v: float) -> str:
    return repr(float(v)).removesuffix(".0") if float(v).is_integer() else repr(float(v))


def _as_array(points: Sequence[Sequence[float]]) -> np.ndarray:
    return np.asarray(points, dtype=np.float64).reshape(-1, 2)


def signed_area(points: np.ndarray) -> float:
    """Shoelace area of the closed polygon ((n, 2) float64); > 0 for counter-clockwise."""
    x, y = points[:, 0], points[:, 1]
    xn = np.concatenate([x[1:], x[:1]])
    yn = np.concatenate([y[1:], y[:1]])
    return float(0.5 * np.sum(x * yn - xn * y))


def _orient(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Twice the signed area of triangles (a, b, c), arrays (..., 2)."""
    return (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])


def _on_box(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p inside the axis-aligned box of segment ab (for p collinear with ab: p on ab)."""
    return (
        (np.minimum(a[..., 0], b[..., 0]) <= p[..., 0])
        & (p[..., 0] <= np.maximum(a[..., 0], b[..., 0]))
        & (np.minimum(a[..., 1], b[..., 1]) <= p[..., 1])
        & (p[..., 1] <= np.maximum(a[..., 1], b[..., 1]))
    )


def _segments_meet(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Closed segments ab and cd cross or touch (vectorised over leading axes)."""
    o1, o2 = _orient(a, b, c), _orient(a, b, d)
    o3, o4 = _orient(c, d, a), _orient(c, d, b)
    proper = (np.sign(o1) * np.sign(o2) < 0) & (np.sign(o3) * np.sign(o4) < 0)
    touch = (
        ((o1 == 0) & _on_box(a, b, c))
        | ((o2 == 0) & _on_box(a, b, d))
        | ((o3 == 0) & _on_box(c, d, a))
        | ((o4 == 0) & _on_box(c, d, b))
    )
    return proper | touch


def _count_problem(n: int, limits: tuple[int, int]) -> list[str]:
    lo, hi = limits
    if n < lo or n > hi:
        return [f"{n} points out of range [{lo}, {hi}]"]
    return []


def _finite_problems(p: np.ndarray) -> list[str]:
    bad = np.flatnonzero(~np.isfinite(p).all(axis=1))
    return [f"point {int(i)} is not finite" for i in bad]


def check_profile_extrude(points: Sequence[Sequence[float]]) -> list[str]:
    """Problems of an extrude profile of (x, y) points; [] when it is a valid simple polygon.

    Checks: 3..256 points; consecutive points differ; the last point does not repeat the first;
    no edge folds back onto the previous one; non-adjacent edges neither cross nor touch; the
    polygon has an area.
    """
    p = _as_array(points)
    n = len(p)
    problems = _count_problem(n, EXTRUDE_POINTS_RANGE)
    if n < 3:
        return problems
    finite = _finite_problems(p)
    if finite:
        return problems + finite
    nxt = np.roll(p, -1, axis=0)
    same = np.flatnonzero((p == nxt).all(axis=1))
    for i in same:
        if i == n - 1:
            problems.append(f"last point {n - 1} repeats the first point (the profile is closed automatically)")
        else:
            problems.append(f"point {int(i) + 1} repeats point {int(i)}")
    if len(same):
        return problems
    # Fold back: edge i -> i+1 continues straight back along edge i-1 -> i.
    prv = np.roll(p, 1, axis=0)
    e_in, e_out = p - prv, nxt - p
    cross = e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0]
    dot = (e_in * e_out).sum(axis=1)
    for k in map(int, np.flatnonzero((cross == 0) & (dot < 0))):
        problems.append(f"edge {k}-{(k + 1) % n} folds back onto edge {(k - 1) % n}-{k}")
    # Non-adjacent edges must not meet at all.
    if n >= 4:
        ii, jj = np.triu_indices(n, k=2)
        keep = ~((ii == 0) & (jj == n - 1))
        ii, jj = ii[keep], jj[keep]
        meet = _segments_meet(p[ii], nxt[ii], p[jj], nxt[jj])
        for i, j in zip(ii[meet].tolist(), jj[meet].tolist(), strict=True):
            problems.append(f"edges {i}-{(i + 1) % n} and {j}-{(j + 1) % n} cross or touch")
    if not problems and signed_area(p) == 0.0:
        problems.append("the profile has no area")
    return problems


def _plain_lathe_ok(points: Sequence[Sequence[float]]) -> bool:
    """True when :func:`check_profile_lathe` finds nothing, decided on Python floats (the same
    comparisons); False also when in doubt (then the numpy checks say what is wrong)."""
    try:
        pts = [(float(r), float(y)) for r, y in points]
    except (TypeError, ValueError):
        return False
    lo, hi = LATHE_POINTS_RANGE
    if not lo <= len(pts) <= hi:
        return False
    prev = None
    off_axis = False
    for r, y in pts:
        if not (math.isfinite(r) and math.isfinite(y)) or r < 0.0 or (r, y) == prev:
            return False
        off_axis = off_axis or r > 0.0
        prev = (r, y)
    return off_axis


def check_profile_lathe(points: Sequence[Sequence[float]]) -> list[str]:
    """Problems of a lathe profile of (r, y) points; [] when valid.

    Checks: 2..256 points; r >= 0; consecutive points differ (the last point may equal the
    first, which makes a ring); at least one point has r > 0.
    """
    if _plain_lathe_ok(points):  # the common case, without numpy
        return []
    p = _as_array(points)
    n = len(p)
    problems = _count_problem(n, LATHE_POINTS_RANGE)
    if n == 0:
        return problems
    finite = _finite_problems(p)
    if finite:
        return problems + finite
    for i in np.flatnonzero(p[:, 0] < 0):
        problems.append(f"point {int(i)}: r {_fmt(p[i, 0])} is negative (want r >= 0)")
    for i in np.flatnonzero((p[1:] == p[:-1]).all(axis=1)):
        problems.append(f"point {int(i) + 1} repeats point {int(i)}")
    if not (p[:, 0] > 0).any():
        problems.append("every point is on the axis (r = 0); want at least one point with r > 0")
    return problems


#: Polygons up to this many points are ear-clipped in plain Python (faster for small inputs);
#: larger ones with numpy. Both follow the same rule and give the same triangles.
_SMALL_POLYGON = 32


def triangulate(points: np.ndarray) -> np.ndarray:
    """Ear-clip a simple counter-clockwise polygon ((n, 2) float64).

    Returns (n - 2, 3) int64 indices into `points`, each triangle counter-clockwise. Collinear
    points are kept (they become corners of the neighbouring triangles) and are never clipped
    as ears, so no triangle is degenerate. Deterministic: always clips the first valid ear in
    the current order (an ear: a strictly convex corner whose triangle holds no other remaining
    reflex or flat corner, boundary included).
    """
    pts = np.asarray(points, dtype=np.float64)
    n = len(pts)
    if n < 3:
        return np.zeros((0, 3), dtype=np.int64)
    extent = float(np.max(pts.max(axis=0) - pts.min(axis=0)))
    tol = _FLAT_TOLERANCE * extent * extent
    if n <= _SMALL_POLYGON:
        tris = _ear_clip_python(pts[:, 0].tolist(), pts[:, 1].tolist(), tol)
    else:
        tris = _ear_clip_numpy(pts, tol)
    return np.asarray(tris, dtype=np.int64).reshape(-1, 3)


def _ear_clip_python(xs: list[float], ys: list[float], tol: float) -> list[tuple[int, int, int]]:
    def orient(a: int, b: int, c: int) -> float:
        return (xs[b] - xs[a]) * (ys[c] - ys[a]) - (ys[b] - ys[a]) * (xs[c] - xs[a])

    idx = list(range(len(xs)))
    tris: list[tuple[int, int, int]] = []
    while len(idx) > 3:
        m = len(idx)
        turn = [orient(idx[k - 1], idx[k], idx[(k + 1) % m]) for k in range(m)]
        blockers = [k for k in range(m) if turn[k] <= tol]
        ear = -1
        for k in range(m):
            if turn[k] <= tol:
                continue
            a, b, c = idx[k - 1], idx[k], idx[(k + 1) % m]
            near = (k, (k - 1) % m, (k + 1) % m)
            if not any(
                orient(a, b, idx[q]) >= 0 and orient(b, c, idx[q]) >= 0 and orient(c, a, idx[q]) >= 0
                for q in blockers
                if q not in near
            ):
                ear = k
                break
        if ear < 0:
            ear = turn.index(max(turn))  # unreachable for valid simple polygons
        tris.append((idx[ear - 1], idx[ear], idx[(ear + 1) % m]))
        del idx[ear]
    tris.append((idx[0], idx[1], idx[2]))
    return tris


def _ear_clip_numpy(pts: np.ndarray, tol: float) -> list[tuple[int, int, int]]:
    idx = np.arange(len(pts))
    tris: list[tuple[int, int, int]] = []
    while len(idx) > 3:
        m = len(idx)
        cur = pts[idx]
        prv = np.roll(cur, 1, axis=0)
        nxt = np.roll(cur, -1, axis=0)
        turn = _orient(prv, cur, nxt)
        convex = np.flatnonzero(turn > tol)
        blockers = np.flatnonzero(turn <= tol)  # only reflex or flat corners can block an ear
        ear = -1
        if len(convex):
            if len(blockers) == 0:
                ear = int(convex[0])
            else:
                a = prv[convex][:, None, :]
                b = cur[convex][:, None, :]
                c = nxt[convex][:, None, :]
                q = cur[blockers][None, :, :]
                inside = (_orient(a, b, q) >= 0) & (_orient(b, c, q) >= 0) & (_orient(c, a, q) >= 0)
                own = (
                    (blockers[None, :] == convex[:, None])
                    | (blockers[None, :] == (convex[:, None] - 1) % m)
                    | (blockers[None, :] == (convex[:, None] + 1) % m)
                )
                good = np.flatnonzero(~(inside & ~own).any(axis=1))
                if len(good):
                    ear = int(convex[good[0]])
        if ear < 0:
            ear = int(np.argmax(turn))  # unreachable for valid simple polygons
        tris.append((int(idx[(ear - 1) % m]), int(idx[ear]), int(idx[(ear + 1) % m])))
        idx = np.delete(idx, ear)
    tris.append((int(idx[0]), int(idx[1]), int(idx[2])))
    return tris
