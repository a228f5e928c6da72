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

from veduta.compile.model.profile import signed_area, triangulate
from veduta.compile.model.transform import unit_circle

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


@functools.lru_cache(maxsize=256)
def _revolve_topology(n: int, s: int, wrap: bool, axis_bytes: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What of a revolve depends only on the point count, the divisions, `wrap` and which
    points are on the axis (cached: shapes repeat their segment counts): the (n, s) mask of
    the ring vertices kept, the triangles, and the (2, v) profile point and division of each
    kept vertex in order."""
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
    kept = np.stack(np.nonzero(keep_v))
    keep_v.flags.writeable = tris.flags.writeable = kept.flags.writeable = False
    return keep_v, tris, kept


def revolve_many(profiles: list[tuple[list[float], list[float], int, bool]]) -> list[Mesh]:
    """Revolve several profiles around +Y, each (r values, y values, segments, wrap) as Python
    floats (r >= 0), the positions of all in one numpy pass: every value is a product of its own
    profile's values (or a copy), so each mesh has the same bits as revolved alone.

    Division j is at angle 2π·j/segments from +Z towards +X. A point with r = 0 is one vertex;
    a profile segment gets 2·segments triangles (a quad strip), segments (a fan, when one end is
    on the axis) or none (both ends on the axis). Each surface faces the right-hand side of the
    profile's direction of travel (r right, y up). `wrap` adds the segment from the last point
    back to the first (a ring). The triangles are read-only (shared by equal topologies)."""
    if not profiles:
        return []
    rs: list[float] = []
    ys: list[float] = []
    kept: list[np.ndarray] = []
    tris: list[np.ndarray] = []
    circles: dict[int, int] = {}  # divisions -> their first row in the table of circles
    for r, y, s, wrap in profiles:
        r = [x + 0.0 for x in r]
        top = _revolve_topology(len(r), s, wrap, bytes([x == 0.0 for x in r]))
        rs += r
        ys += y
        kept.append(top[2])
        tris.append(top[1])
        circles.setdefault(s, 0)
    table = []
    at = 0
    for s in circles:  # the unit circles of the divisions used, one after another
        circles[s] = at
        table.append(unit_circle(s))
        at += s
    circle = np.concatenate(table) if len(table) > 1 else table[0]
    sizes = [k.shape[1] for k in kept]
    index = np.concatenate(kept, axis=1)
    points = [len(r) for r, _, _, _ in profiles]
    index[0] += np.repeat(np.cumsum(points) - points, sizes)
    index[1] += np.repeat([circles[s] for _, _, s, _ in profiles], sizes)
    r_all = np.array(rs)[index[0]]
    c = circle.take(index[1], axis=0)
    pos = np.empty((len(r_all), 3))
    pos[:, 0] = r_all * c[:, 1]
    pos[:, 1] = np.array(ys)[index[0]]
    pos[:, 2] = r_all * c[:, 0]
    pos += 0.0
    ends = np.cumsum(sizes).tolist()
    return [(pos[a:b], t) for a, b, t in zip([0] + ends[:-1], ends, tris, strict=True)]


def cylinder_profile(radius: float, height: float) -> tuple[list[float], list[float]]:
    """The (r, y) profile of a cylinder (the caps' centres on the axis), as Python floats."""
    r, h = float(radius), float(height) * 0.5
    return [0.0, r, r, 0.0], [-h, -h, h, h]


def sphere_profile(radius: float, rings: int) -> tuple[list[float], list[float]]:
    """The (r, y) profile of a UV sphere, pole to pole, as Python floats."""
    rad = float(radius)
    lat = unit_circle(2 * int(rings))[: int(rings) + 1].tolist()  # angle from the bottom pole: π·k/rings
    r = [rad * abs(s) + 0.0 for _, s in lat]
    r[0] = r[-1] = 0.0
    return r, [-rad * c + 0.0 for c, _ in lat]


@functools.lru_cache(maxsize=1024)
def lathe_profile(profile: tuple[tuple[float, float], ...]) -> tuple[list[float], list[float], bool]:
    """The (r, y) profile a lathe revolves and whether it wraps: open profiles as given, closed
    ones (ends on the axis, or last == first) outward (cached: a function of the profile alone,
    where 0.0 and -0.0 share an entry, which the revolve's + 0.0 makes one; callers must not
    change the lists)."""
    prof = np.asarray(profile, dtype=np.float64)
    ring = len(prof) > 2 and bool((prof[0] == prof[-1]).all())
    closed = ring or (prof[0, 0] == 0.0 and prof[-1, 0] == 0.0)
    if ring:
        prof = prof[:-1]
    if closed and signed_area(prof) < 0.0:
        prof = prof[::-1]
    return prof[:, 0].tolist(), prof[:, 1].tolist(), ring


def lathe_mesh(profile: np.ndarray, segments: int) -> Mesh:
    """Lathe: open profiles as given; closed ones (ends on the axis, or last == first) outward."""
    r, y, ring = lathe_profile(tuple((a, b) for a, b in np.asarray(profile, dtype=np.float64).tolist()))
    return revolve_many([(r, y, int(segments), ring)])[0]


def cylinder_mesh(radius: float, height: float, segments: int) -> Mesh:
    """Cylinder along Y: 4·segments triangles (fan caps around a centre vertex, quad side)."""
    return revolve_many([(*cylinder_profile(radius, height), int(segments), False)])[0]


def sphere_mesh(radius: float, segments: int, rings: int) -> Mesh:
    """UV sphere, poles at (0, ±radius, 0): 2·segments·(rings − 1) triangles."""
    return revolve_many([(*sphere_profile(radius, rings), int(segments), False)])[0]


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
