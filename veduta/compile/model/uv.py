"""UV mapping in metres (spec: UV mapping).

Angles come from veduta.compile.detmath (the same bits on every machine, unlike numpy's
arctan2/arccos). Everything works in each part's scaled local space (after scale, before rotation and
translation) on triangle corners, for many parts at once: points (v, 3) float64 and triangles
(t, 3), face normals (t, 3), and per triangle its part's UV mode code and local bounding box lo,
hi (t, 3).
"""

from __future__ import annotations

import math

import numpy as np

from veduta.compile.detmath import acos, atan2
from veduta.compile.model.types import UV_MODES

#: Mode codes: index in UV_MODES.
BOX, PLANAR, CYLINDRICAL, SPHERICAL = (UV_MODES.index(m) for m in ("box", "planar", "cylindrical", "spherical"))

# Face codes of the box table.
PX, NX, PY, NY, PZ, NZ = range(6)

# The box table, one row per face code: for u and for v the axis read, the sign, and whether
# the reference is the bounding box max (1) or min (0): value = sign * (p[axis] - ref).
#   +X: u = max.z - z, v = max.y - y      -X: u = z - min.z, v = max.y - y
#   +Y: u = x - min.x, v = z - min.z      -Y: u = x - min.x, v = max.z - z
#   +Z: u = x - min.x, v = max.y - y      -Z: u = max.x - x, v = max.y - y
_U_AXIS = np.array([2, 2, 0, 0, 0, 0])
_U_SIGN = np.array([-1.0, 1.0, 1.0, 1.0, 1.0, -1.0])
_U_MAX = np.array([1, 0, 0, 0, 0, 1])
_V_AXIS = np.array([1, 1, 2, 2, 1, 1])
_V_SIGN = np.array([-1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
_V_MAX = np.array([1, 1, 0, 1, 1, 1])


def dominant_axis(normals: np.ndarray) -> np.ndarray:
    """Axis (0 = X, 1 = Y, 2 = Z) of each normal's largest component; ties prefer Y, Z, X."""
    a = np.abs(normals)
    return np.where((a[:, 1] >= a[:, 0]) & (a[:, 1] >= a[:, 2]), 1, np.where(a[:, 2] >= a[:, 0], 2, 0))


def box_faces(normals: np.ndarray, axis: np.ndarray | None = None) -> np.ndarray:
    """Box-table face code per triangle: the axis of the normal's largest component (*axis*,
    when the caller has ``dominant_axis(normals)``) and its sign."""
    if axis is None:
        axis = dominant_axis(normals)
    comp = np.take_along_axis(normals, axis[:, None], axis=1)[:, 0]
    return 2 * axis + (comp < 0.0)  # PX, NX, PY, NY, PZ, NZ


def planar_faces(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """+X, +Y or +Z row for planar mode: the smallest extent, ties prefer Y, Z, X."""
    e = hi - lo
    axis = np.where((e[:, 1] <= e[:, 0]) & (e[:, 1] <= e[:, 2]), 1, np.where(e[:, 2] <= e[:, 0], 2, 0))
    return 2 * axis


def _table_faces(
    modes: np.ndarray, normals: np.ndarray, axis: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """The box-table row of each triangle that uses the table (planar: by its part's extent)."""
    return np.where(modes == PLANAR, planar_faces(lo, hi), box_faces(normals, axis))


def box_table(xyz: np.ndarray, tris: np.ndarray, faces: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(t, 3, 2) UVs of the corners of triangles *tris* ((t, 3) into the points, given as a row
    per coordinate *xyz* (3, v)) projected with the box-table row of each triangle's face.

    Every face's top-left corner seen from outside is (0, 0), u grows right, v grows down; top
    faces are seen from above with -Z up, bottom faces from below with +Z up.
    """
    out = np.empty(tris.shape + (2,))
    rows = np.arange(len(faces))
    flat = xyz.reshape(-1)
    for k, (axis, sign, use_max) in enumerate(((_U_AXIS, _U_SIGN, _U_MAX), (_V_AXIS, _V_SIGN, _V_MAX))):
        ax = axis[faces]
        p = flat[ax[:, None] * xyz.shape[1] + tris]  # each corner's coordinate on its axis
        ref = np.where(use_max[faces] == 1, hi[rows, ax], lo[rows, ax])
        out[..., k] = sign[faces][:, None] * (p - ref[:, None])
    return out


def _unwrapped_theta(theta: np.ndarray, centre_theta: np.ndarray, on_axis: np.ndarray) -> np.ndarray:
    """θ = atan2(x, z) per corner (*theta*, (t, 3)), unwrapped to the branch nearest its
    triangle centre's angle (*centre_theta*, (t, 1)), so no triangle straddles the seam at −Z.
    Corners on the Y axis (*on_axis*: x = z = 0) take the centre's angle."""
    theta = theta + np.round((centre_theta - theta) / (2.0 * math.pi)) * (2.0 * math.pi)
    return np.where(on_axis, centre_theta, theta)


def corner_uvs(
    modes: np.ndarray,
    points: np.ndarray,
    tris: np.ndarray,
    normals: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> np.ndarray:
    """(t, 3, 2) float64 UVs.

    modes: (t,) mode code per triangle; points (v, 3), triangles (t, 3) and face normals (t, 3)
    in scaled local space; lo, hi: (t, 3) bounding box of each triangle's part in the same
    space.  What depends on a corner's position alone (θ, ρ, r, φ) is computed once per
    vertex, and everything on a row per coordinate.
    """
    xyz = np.ascontiguousarray(points.T)
    axis = dominant_axis(normals)
    uses_table = (modes == BOX) | (modes == PLANAR) | ((modes == CYLINDRICAL) & (axis == 1))  # (cylindrical:
    angular = ~uses_table  # mostly vertical -> ±Y rows)
    if angular.all():
        out = np.zeros(tris.shape + (2,))
    elif not angular.any():
        out = box_table(xyz, tris, _table_faces(modes, normals, axis, lo, hi), lo, hi)
    else:  # the table for its triangles only (each row is its triangle's alone)
        rows = np.flatnonzero(uses_table)
        lo_t, hi_t = lo.take(rows, axis=0), hi.take(rows, axis=0)
        out = np.empty(tris.shape + (2,))
        out[rows] = box_table(
            xyz,
            tris.take(rows, axis=0),
            _table_faces(modes[rows], normals.take(rows, axis=0), axis[rows], lo_t, hi_t),
            lo_t,
            hi_t,
        )
    if angular.any():
        sel = np.flatnonzero(angular)
        corner = tris.take(sel, axis=0)
        spherical = modes[sel] == SPHERICAL
        xs, ys, zs = xyz
        nv = len(xs)
        # θ of the vertices and of the triangle centres in one call (a call costs tens of µs)
        a, b, c = corner[:, 0], corner[:, 1], corner[:, 2]
        angles = atan2(np.concatenate([xs, xs[a] + xs[b] + xs[c]]), np.concatenate([zs, zs[a] + zs[b] + zs[c]]))
        theta = _unwrapped_theta(angles[:nv][corner], angles[nv:, None], ((xs == 0.0) & (zs == 0.0))[corner])
        r_v = np.sqrt(xs * xs + ys * ys + zs * zs)
        u = (theta + math.pi) * np.where(spherical[:, None], r_v[corner], np.sqrt(xs * xs + zs * zs)[corner])
        v = hi[sel, 1][:, None] - ys[corner]
        if spherical.any():  # φ only where it is used
            phi = acos(np.clip(ys / np.where(r_v > 0.0, r_v, 1.0), -1.0, 1.0))
            v[spherical] = (phi * r_v)[corner[spherical]]
        out[sel, :, 0] = u
        out[sel, :, 1] = v
    return out


def mode_code(mode: str) -> int:
    return UV_MODES.index(mode)
