"""Topology checks of compiled meshes (watertight, consistently wound, signed volume).

Used by the tests and available to `inspect`. Vertices are identified by position only, so
corners split for their normals or UVs still count as one point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def position_ids(positions: np.ndarray) -> np.ndarray:
    """Equal ids for bitwise-equal positions ((n, 3) float32 or float64)."""
    p = np.ascontiguousarray(positions) + positions.dtype.type(0)
    rows = p.view(np.dtype((np.void, p.dtype.itemsize * 3))).ravel()
    _, inverse = np.unique(rows, return_inverse=True)
    return inverse.ravel()


@dataclass(frozen=True)
class EdgeReport:
    triangles: int
    open_edges: int  # directed edges whose reverse is missing
    repeated_edges: int  # directed edges used more than once
    degenerate: int  # triangles with two corners at one position

    @property
    def watertight_and_consistent(self) -> bool:
        """Every undirected edge used exactly twice, once in each direction."""
        return self.open_edges == 0 and self.repeated_edges == 0 and self.degenerate == 0


def edge_report(positions: np.ndarray, indices: np.ndarray) -> EdgeReport:
    """Edge statistics of triangles `indices` ((3t,) or (t, 3)) over `positions` (n, 3)."""
    tri = position_ids(positions)[np.asarray(indices, dtype=np.int64).reshape(-1, 3)]
    a = tri.reshape(-1)
    b = np.roll(tri, -1, axis=1).reshape(-1)
    degenerate = int(((tri[:, 0] == tri[:, 1]) | (tri[:, 1] == tri[:, 2]) | (tri[:, 2] == tri[:, 0])).sum())
    span = int(tri.max()) + 1 if tri.size else 1
    fwd = a * span + b
    rev = b * span + a
    uniq, counts = np.unique(fwd, return_counts=True)
    repeated = int((counts > 1).sum())
    open_edges = int((~np.isin(rev, uniq)).sum())
    return EdgeReport(len(tri), open_edges, repeated, degenerate)


def signed_volume(positions: np.ndarray, indices: np.ndarray) -> float:
    """Signed volume enclosed by the triangles (> 0 when a closed mesh faces outwards)."""
    p = np.asarray(positions, dtype=np.float64)[np.asarray(indices, dtype=np.int64).reshape(-1, 3)]
    return float(np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0)


def triangle_normals(positions: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """(t, 3) unit normals cross(b − a, c − a)."""
    p = np.asarray(positions, dtype=np.float64)[np.asarray(indices, dtype=np.int64).reshape(-1, 3)]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    return n / np.linalg.norm(n, axis=1, keepdims=True)
