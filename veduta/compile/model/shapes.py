"""Local-space meshes of the primitive shapes (spec: Parts, one section per shape).

Every builder returns `(positions, triangles)`: positions (v, 3) float64 in the part's local
space (before scale), triangles (t, 3) int64 indices, counter-clockwise seen from outside. Corners
at the same place share one vertex, so topology never depends on float equality. Cylinder, sphere
and lathe all come from one revolve core.
"""

from __future__ import annotations

import numpy as np

from .profile import signed_area, triangulate
from .transform import unit_circle

Mesh = tuple[np.ndarray, np.ndarray]

# Box faces as corner sign triples, counter-clockwise seen from outside, each starting at the
# face's bottom-left corner seen from outside.
_BOX_FACES = np.array(
    [
        [(-1, -1, 1), (1, -1, 1), (1, 1, 1), (-1, 1, 1)],  # +Z
        [(1, -1, -1), (-1, -1, -1), (-1, 1, -1), (1, 1, -1)],  # -Z
        [(1, -1, 1), (1, -1, -1), (1, 1, -1), (1, 1, 1)],  # +X
        [(-1, -1, -1), (-1, -1, 1), (-1, 1, 1), (-1, 1, -1)],  # -X
        [(-1, 1, 1), (1, 1, 1), (1, 1, -1), (-1, 1, -1)],  # +Y
        [(-1, -1, -1), (1, -1, -1), (1, -1, 1), (-1, -1, 1)],  # -Y
    ],
    dtype=np.float64,
)
_QUAD = np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int64)
_BOX_TRIS = (np.arange(6, dtype=np.int64)[:, None, None] * 4 + _QUAD[None]).reshape(-1, 3)


def box_mesh(size: tuple[float, float, float]) -> Mesh:
    """Box spanning ±size/2: 24 vertices (4 per face), 12 triangles."""
    half = np.asarray(size, dtype=np.float64) * 0.5
    return (_BOX_FACES * half).reshape(-1, 3) + 0.0, _BOX_TRIS.copy()


def plane_mesh(size: tuple[float, float]) -> Mesh:
    """Rectangle size[0] × size[1] in the XZ plane at y = 0, facing +Y: 4 vertices, 2 triangles."""
    hx, hz = float(size[0]) * 0.5, float(size[1]) * 0.5
    pos = np.array([[-hx, 0.0, -hz], [-hx, 0.0, hz], [hx, 0.0, hz], [hx, 0.0, -hz]])
    return pos, _QUAD.copy()


def revolve(profile: np.ndarray, segments: int, wrap: bool = False) -> Mesh:
    """Revolve (r, y) points ((n, 2) float64, r >= 0) around +Y.

    Division j is at angle 2π·j/segments from +Z towards +X. A point with r = 0 is one vertex;
    a profile segment gets 2·segments triangles (a quad strip), segments (a fan, when one end is
    on the axis) or none (both ends on the axis). Each surface faces the right-hand side of the
    profile's direction of travel (r right, y up). `wrap` adds the segment from the last point
    back to the first (a ring).
    """
    prof = np.asarray(profile, dtype=np.float64)
    r = prof[:, 0] + 0.0
    y = prof[:, 1] + 0.0
    s = int(segments)
    on_axis = r == 0.0
    counts = np.where(on_axis, 1, s)
    base = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    total = int(counts.sum())
    circle = unit_circle(s)
    j = np.arange(total, dtype=np.int64) - np.repeat(base, counts)
    rr = np.repeat(r, counts)
    pos = np.stack([rr * circle[j, 1], np.repeat(y, counts), rr * circle[j, 0]], axis=1) + 0.0

    n = len(prof)
    i0 = np.arange(n if wrap else n - 1, dtype=np.int64)
    i1 = (i0 + 1) % n
    step = np.where(on_axis, 0, 1).astype(np.int64)
    jj = np.arange(s, dtype=np.int64)
    jn = (jj + 1) % s
    a = base[i0, None] + step[i0, None] * jj
    b = base[i0, None] + step[i0, None] * jn
    c = base[i1, None] + step[i1, None] * jn
    d = base[i1, None] + step[i1, None] * jj
    t1 = np.stack([a, b, c], axis=-1)  # valid when the start is off the axis
    t2 = np.stack([a, c, d], axis=-1)  # valid when the end is off the axis
    keep = np.stack(
        [np.broadcast_to(~on_axis[i0, None], a.shape), np.broadcast_to(~on_axis[i1, None], a.shape)],
        axis=-1,
    )
    tris = np.stack([t1, t2], axis=2)[keep]  # order: segment, division, (t1, t2)
    return pos, tris.reshape(-1, 3)


def lathe_mesh(profile: np.ndarray, segments: int) -> Mesh:
    """Lathe: open profiles as given; closed ones (ends on the axis, or last == first) outward."""
    prof = np.asarray(profile, dtype=np.float64)
    ring = len(prof) > 2 and bool((prof[0] == prof[-1]).all())
    closed = ring or (prof[0, 0] == 0.0 and prof[-1, 0] == 0.0)
    if ring:
        prof = prof[:-1]
    if closed and signed_area(prof) < 0.0:
        prof = prof[::-1]
    return revolve(prof, segments, wrap=ring)


def cylinder_mesh(radius: float, height: float, segments: int) -> Mesh:
    """Cylinder along Y: 4·segments triangles (fan caps around a centre vertex, quad side)."""
    r, h = float(radius), float(height) * 0.5
    prof = np.array([[0.0, -h], [r, -h], [r, h], [0.0, h]])
    return revolve(prof, segments)


def sphere_mesh(radius: float, segments: int, rings: int) -> Mesh:
    """UV sphere, poles at (0, ±radius, 0): 2·segments·(rings − 1) triangles."""
    lat = unit_circle(2 * int(rings))[: int(rings) + 1]  # angle from the bottom pole: π·k/rings
    prof = np.stack([float(radius) * np.abs(lat[:, 1]), -float(radius) * lat[:, 0]], axis=1)
    prof[0, 0] = prof[-1, 0] = 0.0
    return revolve(prof + 0.0, segments)


def extrude_mesh(profile: np.ndarray, depth: float) -> Mesh:
    """Extrude (x, y) points along Z over ±depth/2: 2·(n − 2) + 2·n triangles.

    Order: front cap (faces +Z), back cap, then one wall quad per profile edge.
    """
    prof = np.asarray(profile, dtype=np.float64)
    if signed_area(prof) < 0.0:
        prof = prof[::-1]
    n = len(prof)
    hz = float(depth) * 0.5
    front = np.column_stack([prof, np.full(n, hz)])
    back = np.column_stack([prof, np.full(n, -hz)])
    pos = np.concatenate([front, back]) + 0.0
    cap = triangulate(prof)
    i = np.arange(n, dtype=np.int64)
    i1 = (i + 1) % n
    walls = np.stack(
        [np.stack([n + i, n + i1, i1], axis=1), np.stack([n + i, i1, i], axis=1)], axis=1
    ).reshape(-1, 3)
    tris = np.concatenate([cap, cap[:, ::-1] + n, walls])
    return pos, tris
