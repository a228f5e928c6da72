"""Local-space meshes of the primitive shapes (spec: Parts, one section per shape).

Every builder returns `(positions, triangles)`: positions (v, 3) float64 in the part's local
space (before scale), triangles (t, 3) int64 indices, counter-clockwise seen from outside. Corners
at the same place share one vertex, so topology never depends on float equality. Cylinder, sphere
and lathe all come from one revolve core.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

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
# shared by every box and plane (as a revolve's triangles by equal topologies): read-only
_QUAD.flags.writeable = _BOX_TRIS.flags.writeable = False


def box_mesh(size: Sequence[float]) -> Mesh:
    """Box spanning ±size/2 (size: x, y, z): 24 vertices (4 per face), 12 triangles (read-only)."""
    half = np.asarray(size, dtype=np.float64) * 0.5
    return (_BOX_FACES * half).reshape(-1, 3) + 0.0, _BOX_TRIS


def plane_mesh(size: Sequence[float]) -> Mesh:
    """Rectangle size[0] × size[1] (x, z) in the XZ plane at y = 0, facing +Y: 4 vertices, 2 triangles
    (read-only)."""
    hx, hz = float(size[0]) * 0.5, float(size[1]) * 0.5
    pos = np.array([[-hx, 0.0, -hz], [-hx, 0.0, hz], [hx, 0.0, hz], [hx, 0.0, -hz]])
    return pos, _QUAD


def revolve(profile: np.ndarray, segments: int, wrap: bool = False) -> Mesh:
    """Revolve (r, y) points ((n, 2) float64, r >= 0) around +Y.

    Division j is at angle 2π·j/segments from +Z towards +X. A point with r = 0 is one vertex;
    a profile segment gets 2·segments triangles (a quad strip), segments (a fan, when one end is
    on the axis) or none (both ends on the axis). Each surface faces the right-hand side of the
    profile's direction of travel (r right, y up). `wrap` adds the segment from the last point
    back to the first (a ring). The triangles are read-only (shared by equal topologies).
    """
    prof = np.asarray(profile, dtype=np.float64)
    n, s = len(prof), int(segments)
    r = prof[:, 0] + 0.0
    on_axis = r == 0.0
    circle = unit_circle(s)
    keep_v, tris = _revolve_topology(n, s, wrap, on_axis.tobytes())
    # Every point as a full ring of s divisions, then keep one vertex per axis point.
    ring = np.empty((n, s, 3))
    ring[..., 0] = r[:, None] * circle[:, 1]
    ring[..., 1] = prof[:, 1:2]
    ring[..., 2] = r[:, None] * circle[:, 0]
    return ring[keep_v] + 0.0, tris


@functools.lru_cache(maxsize=256)
def _revolve_topology(n: int, s: int, wrap: bool, axis_bytes: bytes) -> tuple[np.ndarray, np.ndarray]:
    """What of a revolve depends only on the point count, the divisions, `wrap` and which
    points are on the axis (cached: shapes repeat their segment counts): the (n, s) mask of
    the ring vertices kept, and the triangles."""
    on_axis = np.frombuffer(axis_bytes, dtype=bool)
    keep_v = ~on_axis[:, None] | (np.arange(s) == 0)
    counts = np.where(on_axis, 1, s)
    base = np.cumsum(counts) - counts
    vid = base[:, None] + np.where(on_axis, 0, 1)[:, None] * np.arange(s)  # (n, s) vertex ids
    vnext = np.concatenate([vid[:, 1:], vid[:, :1]], axis=1)
    i0 = np.arange(n if wrap else n - 1)
    i1 = (i0 + 1) % n
    quads = np.empty((len(i0), s, 2, 3), dtype=np.int64)
    quads[:, :, 0, 0] = quads[:, :, 1, 0] = vid[i0]  # a
    quads[:, :, 0, 1] = vnext[i0]  # b
    quads[:, :, 0, 2] = quads[:, :, 1, 1] = vnext[i1]  # c
    quads[:, :, 1, 2] = vid[i1]  # d
    keep_t = np.empty((len(i0), s, 2), dtype=bool)
    keep_t[:, :, 0] = ~on_axis[i0, None]  # (a, b, c) needs the start off the axis
    keep_t[:, :, 1] = ~on_axis[i1, None]  # (a, c, d) needs the end off the axis
    tris = quads[keep_t]  # order: segment, division, (abc, acd)
    keep_v.flags.writeable = tris.flags.writeable = False
    return keep_v, tris


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
    walls = np.stack([np.stack([n + i, n + i1, i1], axis=1), np.stack([n + i, i1, i], axis=1)], axis=1).reshape(-1, 3)
    tris = np.concatenate([cap, cap[:, ::-1] + n, walls])
    return pos, tris
