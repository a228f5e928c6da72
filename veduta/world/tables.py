"""The fixed table that equalises the biome noise (docs/world-generation.md, section 4).

The biome field ``f = 2 * noise(P) + noise(P // 2)`` lies in [-98304, 98301] and is far from
uniform. ``BIOME_CDF[i]`` is 65536 times the share of the field below the knot
``-98304 + 3072 * i`` (i = 0..64), measured once by :func:`measure_biome_cdf` (512 seeds, period
16, 1024 x 1024 vertices each, rounded to the nearest integer; the end points are forced to 0 and
65536). The table is part of the format: never regenerate it for an existing world.
"""

from __future__ import annotations

import numpy as np

CDF_LOW = -98304
CDF_STEP = 3072
CDF_KNOTS = 65

BIOME_CDF: tuple[int, ...] = (
    0,
    0,
    3,
    10,
    26,
    56,
    107,
    185,
    299,
    460,
    677,
    965,
    1334,
    1799,
    2372,
    3065,
    3889,
    4851,
    5957,
    7207,
    8599,
    10128,
    11783,
    13551,
    15423,
    17388,
    19434,
    21551,
    23727,
    25951,
    28210,
    30493,
    32789,
    35085,
    37368,
    39625,
    41847,
    44022,
    46136,
    48180,
    50142,
    52012,
    53778,
    55431,
    56958,
    58349,
    59597,
    60701,
    61661,
    62483,
    63174,
    63745,
    64208,
    64576,
    64861,
    65078,
    65238,
    65352,
    65430,
    65480,
    65510,
    65526,
    65533,
    65536,
    65536,
)


def measure_biome_cdf(seeds: int = 512, period: int = 16, size: int = 1024) -> list[int]:
    """Recompute the table (slow; used by a test with few seeds to show where it comes from)."""
    from veduta.world.intmath import fbm_grid, stream_key

    knots = CDF_LOW + CDF_STEP * np.arange(CDF_KNOTS, dtype=np.int64)
    counts = np.zeros(CDF_KNOTS, dtype=np.int64)
    n = 0
    xs = np.arange(size, dtype=np.int64)
    for seed in range(seeds):
        keys = [stream_key(seed, "cdf/1"), stream_key(seed, "cdf/2")]
        f = np.sort(fbm_grid(keys, period, xs, xs).ravel())
        counts += np.searchsorted(f, knots, side="left")
        n += f.size
    table = [int((c * 65536 + n // 2) // n) for c in counts]
    table[0], table[-1] = 0, 65536
    return table


def equalise(f):
    """Map the biome field to an (almost) uniform Q16 value u in [0, 65535]:
    ``i = clamp((f + 98304) // 3072, 0, 63)``,
    ``u = T[i] + ((T[i+1] - T[i]) * (f - (-98304 + 3072 i))) // 3072``, clamped to [0, 65535]."""
    if isinstance(f, np.ndarray):
        tab = np.asarray(BIOME_CDF, dtype=np.int64)
        i = np.clip((f - CDF_LOW) // CDF_STEP, 0, CDF_KNOTS - 2)
        lo = tab[i]
        u = lo + ((tab[i + 1] - lo) * (f - (CDF_LOW + CDF_STEP * i))) // CDF_STEP
        return np.clip(u, 0, 65535)
    i = min(max((f - CDF_LOW) // CDF_STEP, 0), CDF_KNOTS - 2)
    lo = BIOME_CDF[i]
    u = lo + ((BIOME_CDF[i + 1] - lo) * (f - (CDF_LOW + CDF_STEP * i))) // CDF_STEP
    return min(max(u, 0), 65535)
