"""Face normals, corner angles and smoothing groups (spec: Normals).

Around each vertex position, corners of triangles that share an edge there join one smoothing
group when the triangles' face normals differ by at most smooth_angle_deg + 0.001°; groups chain
through such edges (union-find). A corner's normal is the normalised sum of its group's face
normals, each weighted by the triangle's angle at its corner. The angles come from
veduta.compile.detmath and the smoothing test needs none, so every bit is the same on every
machine.
"""

from __future__ import annotations

import numpy as np

from veduta.compile.detmath import atan2, cos_sin_deg
from veduta.compile.model.types import SMOOTH_TOLERANCE_DEG

#: Faces that fold back onto each other (normals 180° apart) never smooth, even at 180°.
_FOLD_BACK_DEG = 180.0 - SMOOTH_TOLERANCE_DEG


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Written out: a reduction along a last axis of length 3 is several times slower.
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def face_normals(points: np.ndarray, tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit normals cross(b − a, c − a) ((t, 3), zero for degenerate triangles) and interior
    angles in radians at each corner ((t, 3)) of triangles *tris* ((t, 3) into *points* (v, 3)).

    The corners are gathered a coordinate at a time and everything is worked out on
    per-coordinate rows (a column of a (t, 3) array is several times slower to work on).
    """
    xyz = np.ascontiguousarray(points.T)
    a, b, c = ([w[tris[:, k]] for w in xyz] for k in range(3))
    ab = [q - p for p, q in zip(a, b, strict=True)]
    bc = [q - p for p, q in zip(b, c, strict=True)]
    ca = [q - p for p, q in zip(c, a, strict=True)]
    ac = [-w for w in ca]
    # cross(ab, -ca): (a1·b2 − a2·b1, a2·b0 − a0·b2, a0·b1 − a1·b0)
    n = (ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0])
    length = np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    safe = np.where(length > 0.0, length, 1.0)
    unit = np.empty((3, len(tris)))
    for k in range(3):
        np.divide(n[k], safe, out=unit[k])
    # Every corner's sine term is the same |cross| (twice the area); the cosine term differs.
    dots = np.empty((len(tris), 3))
    for k, (u, v) in enumerate(((ab, ca), (bc, ab), (ca, bc))):
        dots[:, k] = -(u[0] * v[0] + u[1] * v[1] + u[2] * v[2])
    return unit.T, atan2(length[:, None], dots)


def _within(
    n1: np.ndarray,
    n2: np.ndarray,
    cos_limit: float | np.ndarray,
    sin_limit: float | np.ndarray,
) -> np.ndarray:
    """Whether the angle θ = atan2(|n1 × n2|, n1 · n2) in [0, π] between each pair of normals is
    at most a limit L in (0°, 180°), given cos L and sin L > 0: cot is decreasing on (0, π), so
    θ <= L exactly when (n1 · n2)·sin L >= |n1 × n2|·cos L (also right for θ = 0 and θ = π).
    Products and a comparison only: no arctangent per pair.  n1, n2: (3, m), a row per
    coordinate (dot, cross product and length in the fixed order used throughout)."""
    x1, y1, z1 = n1
    x2, y2, z2 = n2
    cx = y1 * z2 - z1 * y2
    cy = z1 * x2 - x1 * z2
    cz = x1 * y2 - y1 * x2
    return (x1 * x2 + y1 * y2 + z1 * z2) * sin_limit >= np.sqrt(cx * cx + cy * cy + cz * cz) * cos_limit


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Union-find over n items joined by pairs (a[k], b[k]); returns each item's root.

    Roots are the smallest item of each component. Vectorised hook-and-compress: every round
    hooks each root to the smallest root it is paired with, then compresses paths fully.
    """
    parent = np.arange(n, dtype=np.int64)
    if a.size == 0:
        return parent
    while True:
        pa, pb = parent[a], parent[b]
        lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
        differ = lo != hi
        if not differ.any():
            return parent
        np.minimum.at(parent, hi[differ], lo[differ])
        while True:
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand


def smooth_sphere(segments: int, rings: int, smooth_angle_deg: float) -> bool:
    """The spec's sphere rule: "Smooth when 360°/segments and 180°/rings are both <=
    smooth_angle_deg".  On a real UV sphere neighbouring faces meet at slightly more than
    those angles (a 12 x 6 sphere's pole fans meet the first band at 30.49°), so the
    general face-angle test alone would leave creases the spec says are not there."""
    limit = smooth_angle_deg + SMOOTH_TOLERANCE_DEG
    return 360.0 / segments <= limit and 180.0 / rings <= limit


def _limit(smooth_angle_deg: float) -> float:
    return min(float(smooth_angle_deg) + SMOOTH_TOLERANCE_DEG, _FOLD_BACK_DEG)


def edge_pairs(position_ids: np.ndarray) -> np.ndarray:
    """The pairs of directed triangle edges that join two corners at each end: (6, m) int64,
    rows e, f (the edges, numbered by their first corner: edge k runs from corner k to the
    next corner of its triangle), then the corners of e and of f at the lower position id,
    then at the higher one.  Edges pair when they join the same two positions (any
    direction); an edge whose ends share a position pairs with none.

    position_ids: (t, 3) int, equal ids = same position.  Only which ids are equal matters:
    any other numbering with the same equalities gives the same set of pairs (the triangle
    indices of a part whose positions are all distinct, for one).
    """
    t = len(position_ids)
    ca = np.arange(3 * t, dtype=np.int64)
    cb = ca.reshape(t, 3)[:, [1, 2, 0]].ravel()
    pa = position_ids.ravel().astype(np.int64)
    pb = pa[cb]
    swap = pa > pb
    lo_p, hi_p = np.minimum(pa, pb), np.maximum(pa, pb)
    lo_c, hi_c = np.where(swap, cb, ca), np.where(swap, ca, cb)
    span = int(pa.max()) + 1 if t else 1
    # keyed by the unordered pair of positions; degenerate edges get unique negative keys
    key = np.where(lo_p != hi_p, lo_p * span + hi_p, -1 - ca)
    order = np.argsort(key)  # (which edge of a pair is e does not matter: the test is symmetric)
    skey = key[order]
    es: list[np.ndarray] = []
    fs: list[np.ndarray] = []
    d = 1
    while d < len(order):  # every two edges of a run of equal keys, d apart in it
        same = skey[:-d] == skey[d:]
        if not same.any():
            break
        es.append(order[:-d][same])
        fs.append(order[d:][same])
        d += 1
    e = np.concatenate(es) if es else np.zeros(0, dtype=np.int64)
    f = np.concatenate(fs) if fs else np.zeros(0, dtype=np.int64)
    return np.stack([e, f, lo_c[e], hi_c[e], lo_c[f], hi_c[f]])


def smooth_normals(
    position_ids: np.ndarray | None,
    corners: np.ndarray | None,
    smooth_angle_deg: float | np.ndarray,
    always_smooth: np.ndarray | None = None,
    pairs: np.ndarray | None = None,
    points: np.ndarray | None = None,
    tris: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Corner normals of one part.

    position_ids: (t, 3) int, equal ids = same position; corners: (t, 3, 3) float64.
    pairs: ``edge_pairs(position_ids)`` when the caller has it (then position_ids is not read).
    points, tris: what the corners are made of, when the caller has them (see ``face_normals``;
    then corners may be None).
    smooth_angle_deg: one angle, or (t,) float64 per triangle (parts of several models).
    always_smooth: optional (t,) bool, triangles that join their neighbours whatever the angle
    (a sphere the spec declares smooth: see ``smooth_sphere``).
    Returns (corner normals (t, 3, 3), face normals (t, 3)), both unit length (a corner of a
    degenerate triangle alone in its group gets +Y).
    """
    if points is None or tris is None:
        if corners is None:
            raise ValueError("smooth_normals needs the corners or their points and triangles")
        points, tris = corners.reshape(-1, 3), np.arange(3 * len(corners)).reshape(-1, 3)
    t = len(tris)
    fn, weight = face_normals(points, tris)
    per_triangle = isinstance(smooth_angle_deg, np.ndarray)
    if per_triangle:  # triangles of several models, each model's angle
        distinct, which = np.unique(smooth_angle_deg, return_inverse=True)
        limits = [cos_sin_deg(_limit(a)) for a in distinct.tolist()]
        cos_t = np.array([c for c, _ in limits])[which]
        sin_t = np.array([s for _, s in limits])[which]
    else:
        cos_limit, sin_limit = cos_sin_deg(_limit(float(smooth_angle_deg)))

    if pairs is None:
        if position_ids is None:
            raise ValueError("smooth_normals needs position_ids or their edge_pairs")
        pairs = edge_pairs(position_ids)
    e, f, lo_e, hi_e, lo_f, hi_f = pairs
    te, tf = e // 3, f // 3
    if per_triangle:  # te and tf are of one part, so of one model
        cos_limit, sin_limit = cos_t[te], sin_t[te]
    rows = np.ascontiguousarray(fn.T)  # (3, t): the pairs' normals gathered and used a coordinate at a time
    ok = (te != tf) & _within(rows.take(te, axis=1), rows.take(tf, axis=1), cos_limit, sin_limit)
    if always_smooth is not None:
        ok |= (te != tf) & always_smooth[te] & always_smooth[tf]
    if ok.any():
        root = components(3 * t, np.concatenate([lo_e[ok], hi_e[ok]]), np.concatenate([lo_f[ok], hi_f[ok]]))
    else:
        root = np.arange(3 * t, dtype=np.int64)

    # each group's sum of its corners' weighted face normals, one coordinate at a time in
    # contiguous rows (a column of an (n, 3) array is several times slower to work on)
    planar = np.empty((3, 3 * t))
    for i, column in enumerate(rows):
        planar[i] = np.bincount(root, weights=(column[:, None] * weight).reshape(-1), minlength=3 * t)[root]
    length = np.sqrt(planar[0] * planar[0] + planar[1] * planar[1] + planar[2] * planar[2])
    good = length > 0.0
    planar /= np.where(good, length, 1.0)
    cn = np.ascontiguousarray(planar.T)
    if not good.all():  # degenerate triangles alone in their group: face normal, else +Y
        fallback = np.repeat(fn, 3, axis=0)
        fallback[_dot(fallback, fallback) == 0.0] = (0.0, 1.0, 0.0)
        cn[~good] = fallback[~good]
    return cn.reshape(t, 3, 3), fn
