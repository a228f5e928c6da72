"""Exact-where-possible trigonometry and part transforms (spec: Parts, "p' = R·(scale ⊙ p) + position").

Angles are reduced to the first octant before taking sines and cosines, so multiples of 90° are
exact and the sines and cosines of symmetric angles are exact negatives of each other. That keeps
shapes exactly symmetric, which makes mirror copies meet their neighbours exactly and the pivot of
a symmetric model exactly 0 on its symmetry axis. The sines and cosines come from
veduta.compile.detmath, not numpy or the C library, so they have the same bits on every machine.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from veduta.compile.detmath import cos_sin, cos_sin_deg

__all__ = ["unit_circle", "cos_sin_deg", "rotation_matrix"]

_COS_SIGN = np.array([1.0, -1.0, -1.0, 1.0])
_SIN_SIGN = np.array([1.0, 1.0, -1.0, -1.0])


@functools.lru_cache(maxsize=64)
def unit_circle(n: int) -> np.ndarray:
    """(n, 2) float64 of (cos, sin) of the angles 2π·j/n, j = 0..n-1 (read-only, cached).

    Every value comes from an angle in [0, π/4], so symmetric angles give exactly symmetric
    values and quarter turns are exact.
    """
    units = 8 * np.arange(n, dtype=np.int64)  # a full turn is 8n units
    quadrant = units // (2 * n)
    rem = units - quadrant * (2 * n)
    low = rem <= n
    base = np.where(low, rem, 2 * n - rem) * (2.0 * math.pi / (8.0 * n))
    cb, sb = cos_sin(base)
    half = rem == n  # 45°: one value for both, so the octant symmetry stays exact
    cb[half] = sb[half] = math.sqrt(0.5)
    swap = low != (quadrant % 2 == 1)
    out = np.empty((n, 2))
    out[:, 0] = np.where(swap, cb, sb) * _COS_SIGN[quadrant]
    out[:, 1] = np.where(swap, sb, cb) * _SIN_SIGN[quadrant]
    out += 0.0
    out.flags.writeable = False
    return out


def rotation_matrix(rotation_deg: tuple[float, float, float]) -> np.ndarray:
    """(3, 3) float64 R = Rz·Ry·Rx: rotate about the fixed model X axis first, then Y, then Z."""
    cx, sx = cos_sin_deg(rotation_deg[0])
    cy, sy = cos_sin_deg(rotation_deg[1])
    cz, sz = cos_sin_deg(rotation_deg[2])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
    ry = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    rz = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
    return _matmul3(rz, _matmul3(ry, rx))


def _matmul3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # Explicit sums in a fixed order: no BLAS, so results never depend on the machine.
    return a[:, 0:1] * b[0:1, :] + a[:, 1:2] * b[1:2, :] + a[:, 2:3] * b[2:3, :]
