"""UV mapping in metres (spec: UV mapping).

All functions work in the part's scaled local space (after scale, before rotation and
translation) on triangle corners: corners (t, 3, 3) float64, face normals (t, 3) float64.
"""

from __future__ import annotations

import math

import numpy as np

# Face codes of the box table.
PX, NX, PY, NY, PZ, NZ = range(6)


def _dominant_axis(normals: np.ndarray) -> np.ndarray:
    """Axis (0 = X, 1 = Y, 2 = Z) of each normal's largest component; ties prefer Y, Z, X."""
    a = np.abs(normals)
    return np.where(
        (a[:, 1] >= a[:, 0]) & (a[:, 1] >= a[:, 2]), 1, np.where(a[:, 2] >= a[:, 0], 2, 0)
    )


def box_faces(normals: np.ndarray) -> np.ndarray:
    """Box-table face code per triangle from its normal."""
    axis = _dominant_axis(normals)
    comp = np.take_along_axis(normals, axis[:, None], axis=1)[:, 0]
    positive = comp >= 0.0
    plus = np.array([PX, PY, PZ])[axis]
    minus = np.array([NX, NY, NZ])[axis]
    return np.where(positive, plus, minus)


def box_table(corners: np.ndarray, faces: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(t, 3, 2) UVs of corners projected with the box table row of each triangle's face.

    Every face's top-left corner seen from outside is (0, 0), u grows right, v grows down; top
    faces are seen from above with -Z up, bottom faces from below with +Z up.
    """
    x, y, z = corners[..., 0], corners[..., 1], corners[..., 2]
    f = faces[:, None]
    u = np.select(
        [f == PZ, f == NZ, f == PX, f == NX],
        [x - lo[0], hi[0] - x, hi[2] - z, z - lo[2]],
        x - lo[0],  # PY, NY
    )
    v = np.select([f == PY, f == NY], [z - lo[2], hi[2] - z], hi[1] - y)
    return np.stack([u, v], axis=-1)


def planar_face(lo: np.ndarray, hi: np.ndarray) -> int:
    """Projection row for planar mode: the smallest bounding-box extent, ties prefer Y, Z, X."""
    ex, ey, ez = (hi - lo).tolist()
    if ey <= ex and ey <= ez:
        return PY
    if ez <= ex:
        return PZ
    return PX


def _unwrapped_theta(corners: np.ndarray) -> np.ndarray:
    """θ = atan2(x, z) per corner, unwrapped to the branch nearest the triangle centre's angle.

    Corners on the Y axis take the angle of their triangle's centre.
    """
    x, z = corners[..., 0], corners[..., 2]
    centre = corners.mean(axis=1)
    tc = np.arctan2(centre[:, 0], centre[:, 2])[:, None]
    theta = np.arctan2(x, z)
    turns = np.round((tc - theta) / (2.0 * math.pi))
    theta = theta + turns * (2.0 * math.pi)
    axis = (x == 0.0) & (z == 0.0)
    return np.where(axis, tc, theta)


def corner_uvs(
    mode: str, corners: np.ndarray, normals: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """(t, 3, 2) float64 UVs for a part in `mode`; lo, hi: the part's local bounding box."""
    if mode == "box":
        return box_table(corners, box_faces(normals), lo, hi)
    if mode == "planar":
        faces = np.full(len(corners), planar_face(lo, hi))
        return box_table(corners, faces, lo, hi)
    theta = _unwrapped_theta(corners)
    x, y, z = corners[..., 0], corners[..., 1], corners[..., 2]
    if mode == "cylindrical":
        rho = np.sqrt(x * x + z * z)
        uv = np.stack([(theta + math.pi) * rho, hi[1] - y], axis=-1)
        vertical = _dominant_axis(normals) == 1
        if vertical.any():
            faces = np.where(normals[:, 1] >= 0.0, PY, NY)
            uv = np.where(vertical[:, None, None], box_table(corners, faces, lo, hi), uv)
        return uv
    if mode == "spherical":
        r = np.sqrt(x * x + y * y + z * z)
        safe = np.where(r > 0.0, r, 1.0)
        phi = np.arccos(np.clip(y / safe, -1.0, 1.0))
        return np.stack([(theta + math.pi) * r, phi * r], axis=-1)
    raise ValueError(f"unknown uv mode {mode!r}")
