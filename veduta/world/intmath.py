"""Integer building blocks of the world generator (docs/world-generation.md, sections 1-3).

Everything here exists twice: a scalar version over Python ints (the query path) and a
vectorised version over numpy arrays (``int64``, hashes in ``uint64``). Both implement the same
formulas bit for bit; tests/world/test_intmath.py checks that they agree.

Fixed-point conventions: ``Q16`` fractions are integers in [0, 65536] standing for [0, 1];
right shifts of signed values are arithmetic (floor), as in Python and numpy.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

MASK64 = (1 << 64) - 1
#: splitmix64 finalizer constants (Steele, Lea, Flood 2014; the ``mix64`` of java.util.SplittableRandom)
MIX_C1 = 0xBF58476D1CE4E5B9
MIX_C2 = 0x94D049BB133111EB
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3

ONE = 1 << 16  # Q16 one


# ---------------------------------------------------------------------------------------------
# Hashing


def mix64(z: int) -> int:
    """splitmix64 finalizer of a 64-bit value (bijective, good avalanche)."""
    z &= MASK64
    z = ((z ^ (z >> 30)) * MIX_C1) & MASK64
    z = ((z ^ (z >> 27)) * MIX_C2) & MASK64
    return z ^ (z >> 31)


def mix64_np(z: np.ndarray) -> np.ndarray:
    """:func:`mix64` over a ``uint64`` array (numpy's uint64 arithmetic wraps modulo 2**64), in
    two fresh arrays (``z`` untouched), each step in place."""
    if not isinstance(z, np.ndarray) or not z.ndim:  # a scalar: the formula as written
        z = (z ^ (z >> 30)) * MIX_C1
        z = (z ^ (z >> 27)) * MIX_C2
        return z ^ (z >> 31)
    if z.size > 2 * MIX_BLOCK and z.dtype == np.uint64:
        return _mix64_blocks(z)
    t = np.right_shift(z, 30)
    t ^= z
    t *= MIX_C1
    u = np.right_shift(t, 27)
    u ^= t
    u *= MIX_C2
    np.right_shift(u, 31, out=t)
    t ^= u
    return t


#: values a block of :func:`mix64_np` over a large array (its two temporaries stay in the cache)
MIX_BLOCK = 1 << 15


def _mix64_blocks(z: np.ndarray) -> np.ndarray:
    """:func:`mix64_np` of a large array, block by block of :data:`MIX_BLOCK` values (the same
    steps; several times faster than whole-array steps streaming through memory)."""
    flat = z.reshape(-1)
    n = len(flat)
    out = np.empty(n, dtype=np.uint64)
    t = np.empty(MIX_BLOCK, dtype=np.uint64)
    u = np.empty(MIX_BLOCK, dtype=np.uint64)
    for a in range(0, n, MIX_BLOCK):
        zz = flat[a : a + MIX_BLOCK]
        m = len(zz)
        tt, uu, oo = t[:m], u[:m], out[a : a + m]
        np.right_shift(zz, 30, out=tt)
        tt ^= zz
        tt *= MIX_C1
        np.right_shift(tt, 27, out=uu)
        uu ^= tt
        uu *= MIX_C2
        np.right_shift(uu, 31, out=oo)
        oo ^= uu
    return out.reshape(z.shape)


def strhash(text: str) -> int:
    """64-bit hash of a name: FNV-1a 64 over its UTF-8 bytes, then :func:`mix64`."""
    h = FNV_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return mix64(h)


def stream_key(seed: int, stream: str) -> int:
    """The key of one random stream of a world: ``mix64(seed xor strhash(stream))``."""
    return mix64((seed & MASK64) ^ strhash(stream))


def hash2(key: int, x: int, z: int) -> int:
    """Hash of the integer point (x, z) in the stream ``key``:
    ``mix64(mix64(key xor x64) xor z64)`` where x64, z64 are two's complement 64-bit."""
    return mix64(mix64(key ^ (x & MASK64)) ^ (z & MASK64))


def _u64(a) -> np.ndarray:
    """Two's complement reinterpretation of int64 values as uint64."""
    return np.asarray(a, dtype=np.int64).view(np.uint64)


def hash2_row(key: int, x: np.ndarray) -> np.ndarray:
    """First half of :func:`hash2` for a vector of x: ``mix64(key xor x64)`` (uint64)."""
    return mix64_np(_u64(x) ^ np.uint64(key))


def hash2_grid(key: int, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """:func:`hash2` over the grid ``z[:, None] x x[None, :]`` (shape (len(z), len(x)), uint64)."""
    row = hash2_row(key, x)
    return mix64_np(row[None, :] ^ _u64(z)[:, None])


def hash2_np(key: int, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """:func:`hash2` elementwise over broadcastable int arrays (uint64)."""
    return mix64_np(mix64_np(_u64(x) ^ np.uint64(key)) ^ _u64(z))


def signed16(h):
    """The top 16 bits of a hash as a signed value in [-32768, 32767]."""
    if isinstance(h, np.ndarray):
        return (h >> 48).astype(np.int64) - 32768
    return (h >> 48) - 32768


# ---------------------------------------------------------------------------------------------
# Converting the file's floats to integers (done once, exactly)


def round_half_away(value: Fraction) -> int:
    """Round an exact rational to the nearest integer, ties away from zero."""
    if value >= 0:
        return math.floor(value + Fraction(1, 2))
    return -math.floor(-value + Fraction(1, 2))


def to_milli(x: float) -> int:
    """Thousandths of a float (metres to millimetres): the exact value of the (f32) float times
    1000, rounded half away from zero."""
    return round_half_away(Fraction(x) * 1000)


def to_q16(x: float) -> int:
    """A float in [0, 1] as a Q16 fraction: exact value times 65536, rounded half away from zero."""
    return round_half_away(Fraction(x) * 65536)


def to_threshold32(p: float) -> int:
    """A probability as a 32-bit threshold: round(p * 2**32) clamped to [0, 2**32]. An event
    with probability p fires when a 32-bit draw is below the threshold."""
    return max(0, min(1 << 32, round_half_away(Fraction(p) * (1 << 32))))


# ---------------------------------------------------------------------------------------------
# Fixed-point helpers


def smooth(t):
    """Integer smoothstep of a Q16 fraction: ``(t*t*(3*65536 - 2*t)) >> 32`` (Q16 result)."""
    return (t * t * (3 * ONE - 2 * t)) >> 32


def isqrt_np(n: np.ndarray) -> np.ndarray:
    """Exact floor square root of a non-negative int64 array (``math.isqrt`` elementwise)."""
    n = np.asarray(n, dtype=np.int64)
    s = np.sqrt(n.astype(np.float64)).astype(np.int64)
    for _ in range(2):
        s -= (s * s > n).astype(np.int64)
    for _ in range(2):
        s += ((s + 1) * (s + 1) <= n).astype(np.int64)
    return s


def dist8(dx, dz):
    """Distance in 1/256 cells, floored: ``isqrt((dx*dx + dz*dz) << 16)``."""
    if isinstance(dx, np.ndarray) or isinstance(dz, np.ndarray):
        return isqrt_np((dx * dx + dz * dz) << 16)
    return math.isqrt((dx * dx + dz * dz) << 16)


# ---------------------------------------------------------------------------------------------
# Value noise on a square lattice of period p cells


def _frac(x, p: int):
    """Lattice index and smoothed Q16 fraction of integer coordinate(s) x for period p."""
    i = x // p
    t = ((x - i * p) << 16) // p
    return i, smooth(t)


def value_noise(key: int, p: int, x: int, z: int) -> int:
    """Value noise at integer point (x, z): lattice points every p cells carry
    ``signed16(hash2(key, i, j))``; bilinear interpolation with smoothstep weights, x first."""
    ix, sx = _frac(x, p)
    iz, sz = _frac(z, p)
    v00 = signed16(hash2(key, ix, iz))
    v10 = signed16(hash2(key, ix + 1, iz))
    v01 = signed16(hash2(key, ix, iz + 1))
    v11 = signed16(hash2(key, ix + 1, iz + 1))
    a = v00 + (((v10 - v00) * sx) >> 16)
    b = v01 + (((v11 - v01) * sx) >> 16)
    return a + (((b - a) * sz) >> 16)


def value_noise_grid(key: int, p: int, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """:func:`value_noise` over the grid of ``zs x xs`` (1-D int64 arrays), shape (len(zs), len(xs)).

    Separable: lattice values are hashed once, interpolated along x per lattice row, then along z.
    """
    xs = np.asarray(xs, dtype=np.int64)
    zs = np.asarray(zs, dtype=np.int64)
    ix, sx = _frac(xs, p)
    iz, sz = _frac(zs, p)
    lx = np.arange(int(ix.min()), int(ix.max()) + 2, dtype=np.int64)
    lz = np.arange(int(iz.min()), int(iz.max()) + 2, dtype=np.int64)
    lat = signed16(hash2_grid(key, lx, lz))  # (len(lz), len(lx))
    c0 = ix - lx[0]
    left = lat[:, c0]
    rows = left + (((lat[:, c0 + 1] - left) * sx[None, :]) >> 16)  # (len(lz), len(xs))
    r0 = iz - lz[0]
    cut = np.flatnonzero(r0[1:] != r0[:-1]) + 1  # runs of rows between the same two lattice rows
    if 4 * len(cut) >= len(zs):  # rows far apart (a sample grid): each gathers its lattice rows
        a = rows[r0, :]
        return a + (((rows[r0 + 1, :] - a) * sz[:, None]) >> 16)
    # a few long runs: a + (((b - a) * sz) >> 16) run by run, in place, no row gathered
    d = rows[1:] - rows[:-1]
    out = np.empty((len(zs), len(xs)), dtype=np.int64)
    starts, ends = [0, *cut.tolist()], [*cut.tolist(), len(zs)]
    step = max(1, MIX_BLOCK // max(1, len(xs)))  # rows at a time: each part's three steps in the cache
    for ja, jb, r in zip(starts, ends, r0[starts].tolist(), strict=True):
        for a in range(ja, jb, step):
            part = out[a : min(jb, a + step)]
            np.multiply(d[r][None, :], sz[a : a + len(part), None], out=part)
            part >>= 16
            part += rows[r][None, :]
    return out


def value_noise_points(key: int, p: int, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """:func:`value_noise` elementwise over int64 arrays of points (any shape, broadcast)."""
    xs, zs = np.broadcast_arrays(np.asarray(xs, dtype=np.int64), np.asarray(zs, dtype=np.int64))
    ix, sx = _frac(xs, p)
    iz, sz = _frac(zs, p)
    k = np.uint64(key)
    r0 = mix64_np(_u64(ix) ^ k)
    r1 = mix64_np(_u64(ix + 1) ^ k)
    uz0, uz1 = _u64(iz), _u64(iz + 1)
    v00 = signed16(mix64_np(r0 ^ uz0))
    v10 = signed16(mix64_np(r1 ^ uz0))
    v01 = signed16(mix64_np(r0 ^ uz1))
    v11 = signed16(mix64_np(r1 ^ uz1))
    a = v00 + (((v10 - v00) * sx) >> 16)
    b = v01 + (((v11 - v01) * sx) >> 16)
    return a + (((b - a) * sz) >> 16)


def octave_periods(p: int, octaves: int) -> list[int]:
    """Periods of the octaves of a sum: p, p // 2, p // 4, ... (at least 1)."""
    return [max(1, p >> k) for k in range(octaves)]


def fbm(keys: list[int], p: int, x: int, z: int) -> int:
    """Sum of octaves: octave k (period p >> k) weighted 2**(n-1-k). Range (2**n - 1) * [-32768, 32767]."""
    n = len(keys)
    total = 0
    for k, (key, pk) in enumerate(zip(keys, octave_periods(p, n))):
        total += value_noise(key, pk, x, z) << (n - 1 - k)
    return total


def fbm_grid(keys: list[int], p: int, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """:func:`fbm` over the grid of ``zs x xs``, shape (len(zs), len(xs)) (zeros for no octave)."""
    n = len(keys)
    total: np.ndarray | None = None
    for k, (key, pk) in enumerate(zip(keys, octave_periods(p, n))):
        v = value_noise_grid(key, pk, xs, zs)  # a fresh array: shifted and summed in place
        if n - 1 - k:
            v <<= n - 1 - k
        if total is None:
            total = v
        else:
            total += v
    if total is None:  # no octave: the sum is 0, as fbm's
        return np.zeros((len(zs), len(xs)), np.int64)
    return total


def fbm_points(keys: list[int], p: int, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
    """:func:`fbm` elementwise over int64 arrays of points (any shape, broadcast)."""
    n = len(keys)
    total: np.ndarray | None = None
    for k, (key, pk) in enumerate(zip(keys, octave_periods(p, n))):
        v = value_noise_points(key, pk, xs, zs) << (n - 1 - k)
        total = v if total is None else total + v
    if total is None:
        return np.zeros(np.broadcast_shapes(np.shape(xs), np.shape(zs)), np.int64)
    return total


# ---------------------------------------------------------------------------------------------
# Periodic 1-D noise around a circle (the wandering radius of lakes and seas)


def pseudo_angle(dx, dz):
    """Diamond angle of the direction (dx, dz) as a Q16 fraction of a turn, in [0, 65536):
    quadrant q in 0..3 counter-clockwise from +x toward +z, plus ``num * 16384 // (|dx| + |dz|)``
    (num = |dz| in quadrants 0 and 2, |dx| in 1 and 3). (0, 0) gives 0."""
    if isinstance(dx, np.ndarray) or isinstance(dz, np.ndarray):
        dx, dz = np.broadcast_arrays(np.asarray(dx, dtype=np.int64), np.asarray(dz, dtype=np.int64))
        ax, az = np.abs(dx), np.abs(dz)
        s = np.maximum(ax + az, 1)
        quad = np.where(
            (dx > 0) & (dz >= 0), 0, np.where((dx <= 0) & (dz > 0), 1, np.where((dx < 0) & (dz <= 0), 2, 3))
        )
        num = np.where((quad & 1) == 0, az, ax)
        pa = quad * 16384 + (num * 16384) // s
        return np.where((dx == 0) & (dz == 0), 0, pa)
    return pseudo_angle_int(dx, dz)


def pseudo_angle_int(dx: int, dz: int) -> int:
    """:func:`pseudo_angle` of one direction (integers; compiled as it is by the layer kernels)."""
    if dx == 0 and dz == 0:
        return 0
    ax, az = abs(dx), abs(dz)
    if dx > 0 and dz >= 0:
        q = 0
    elif dx <= 0 and dz > 0:
        q = 1
    elif dx < 0 and dz <= 0:
        q = 2
    else:
        q = 3
    num = az if q % 2 == 0 else ax
    return q * 16384 + (num * 16384) // (ax + az)


ANGULAR_LOBES = 8


def angular_table(key: int) -> list[int]:
    """The 8 lattice values of the angular noise: ``signed16(hash2(key, k, 0))`` for k in 0..7."""
    return [signed16(hash2(key, k, 0)) for k in range(ANGULAR_LOBES)]


def angular_noise(table, pa):
    """Periodic noise of a pseudo-angle: position ``pa * 8`` in Q16 lattice units; smoothstep
    interpolation between table[i] and table[(i + 1) % 8]. Result in [-32768, 32767]."""
    pos = pa * ANGULAR_LOBES
    i = pos >> 16
    s = smooth(pos & 0xFFFF)
    if isinstance(pa, np.ndarray):
        tab = np.asarray(table, dtype=np.int64)
        a = tab[i % ANGULAR_LOBES]
        b = tab[(i + 1) % ANGULAR_LOBES]
    else:
        a = table[i % ANGULAR_LOBES]
        b = table[(i + 1) % ANGULAR_LOBES]
    return a + (((b - a) * s) >> 16)
