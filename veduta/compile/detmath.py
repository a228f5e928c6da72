"""Bit-reproducible elementary functions: the same double on every CPU, numpy build and C library.

numpy's ``arctan2``/``arccos``/``sin``/``cos`` dispatch on the CPU (AVX-512 SVML, AVX2 or baseline
loops) and the C library's ``math.sin``/``math.cos`` differ between platforms, each in the last bit
now and then: enough to change a float32 normal or UV, and so a cooked file. Everything here is
built only from IEEE-754 basic operations (``+ - * /`` and ``sqrt``, correctly rounded everywhere),
exact bit operations (``abs``, ``copysign``, masking mantissa bits) and comparisons, evaluated in a
fixed order with fixed coefficients: no polynomial helpers, no ``dot``/``einsum``/``matmul``, and
numpy never fuses separate ufunc calls into an FMA. The algorithms and coefficients are FDLIBM's
(Sun Microsystems, freely redistributable; the FreeBSD msun forms of the sine and cosine kernels):
``s_atan.c``, ``e_atan2.c``, ``e_acos.c``, ``k_sin.c``, ``k_cos.c``; each result is within about
one ulp of the true value (tests/compile/test_detmath.py checks <= 2 ulp against ``math``).

Every function comes vectorised (float64 arrays in, float64 arrays out) and as a scalar version on
Python floats; both perform the same operations in the same order, so they agree bit for bit.

Assumes IEEE-754 binary64 arithmetic in round-to-nearest mode without extended precision (x86-64
SSE2, ARM64: every platform numpy supports), and that nothing in the process turned on
flush-to-zero (only subnormal inputs or results would notice).
"""

from __future__ import annotations

import math
import struct
import threading

import numpy as np

__all__ = [
    "atan2", "acos", "cos_sin", "scalar_atan2", "scalar_acos", "scalar_cos_sin", "cos_sin_deg",
    "PI", "RAD_PER_DEG",
]  # fmt: skip

_h = float.fromhex

# --- constants --------------------------------------------------------------------------------

PI = _h("0x1.921fb54442d18p+1")  # 3.14159265358979311600e+00, the double nearest π (= math.pi)
_PI_LO = _h("0x1.1a62633145c07p-53")  # 1.22464679914735317720e-16, π - PI
_PIO2_HI = _h("0x1.921fb54442d18p+0")  # 1.57079632679489655800e+00
_PIO2_LO = _h("0x1.1a62633145c07p-54")  # 6.12323399573676603587e-17
_PIO4 = _h("0x1.921fb54442d18p-1")  # 7.85398163397448278999e-01
_3PIO4 = 3.0 * _PIO4  # 2.35619449019234483700e+00

#: Radians per degree, as numpy's radians() and Python's math.radians() multiply by it.
RAD_PER_DEG = PI / 180.0

# s_atan.c: atan of the interval centres 0.5, 1, 1.5, inf as hi + lo, and the polynomial aT.
_ATANHI = (
    _h("0x1.dac670561bb4fp-2"),  # 4.63647609000806093515e-01 atan(0.5)hi
    _h("0x1.921fb54442d18p-1"),  # 7.85398163397448278999e-01 atan(1.0)hi
    _h("0x1.f730bd281f69bp-1"),  # 9.82793723247329054082e-01 atan(1.5)hi
    _h("0x1.921fb54442d18p+0"),  # 1.57079632679489655800e+00 atan(inf)hi
)
_ATANLO = (
    _h("0x1.a2b7f222f65e2p-56"),  # 2.26987774529616870924e-17 atan(0.5)lo
    _h("0x1.1a62633145c07p-55"),  # 3.06161699786838301793e-17 atan(1.0)lo
    _h("0x1.007887af0cbbdp-56"),  # 1.39033110312309984516e-17 atan(1.5)lo
    _h("0x1.1a62633145c07p-54"),  # 6.12323399573676603587e-17 atan(inf)lo
)
_AT0 = _h("0x1.555555555550dp-2")  # 3.33333333333329318027e-01
_AT1 = _h("-0x1.999999998ebc4p-3")  # -1.99999999998764832476e-01
_AT2 = _h("0x1.24924920083ffp-3")  # 1.42857142725034663711e-01
_AT3 = _h("-0x1.c71c6fe231671p-4")  # -1.11111104054623557880e-01
_AT4 = _h("0x1.745cdc54c206ep-4")  # 9.09088713343650656196e-02
_AT5 = _h("-0x1.3b0f2af749a6dp-4")  # -7.69187620504482999495e-02
_AT6 = _h("0x1.10d66a0d03d51p-4")  # 6.66107313738753120669e-02
_AT7 = _h("-0x1.dde2d52defd9ap-5")  # -5.83357013379057348645e-02
_AT8 = _h("0x1.97b4b24760debp-5")  # 4.97687799461593236017e-02
_AT9 = _h("-0x1.2b4442c6a6c2fp-5")  # -3.65315727442169155270e-02
_AT10 = _h("0x1.0ad3ae322da11p-6")  # 1.62858201153657823623e-02

# e_acos.c: the rational approximation R(z) = p(z) / q(z) of (asin(x) - x) / x^3, z = x^2.
_PS0 = _h("0x1.5555555555555p-3")  # 1.66666666666666657415e-01
_PS1 = _h("-0x1.4d61203eb6f7dp-2")  # -3.25565818622400915405e-01
_PS2 = _h("0x1.9c1550e884455p-3")  # 2.01212532134862925881e-01
_PS3 = _h("-0x1.48228b5688f3bp-5")  # -4.00555345006794114027e-02
_PS4 = _h("0x1.9efe07501b288p-11")  # 7.91534994289814532176e-04
_PS5 = _h("0x1.23de10dfdf709p-15")  # 3.47933107596021167570e-05
_QS1 = _h("-0x1.33a271c8a2d4bp+1")  # -2.40339491173441421878e+00
_QS2 = _h("0x1.02ae59c598ac8p+1")  # 2.02094576023350569471e+00
_QS3 = _h("-0x1.6066c1b8d0159p-1")  # -6.88283971605453293030e-01
_QS4 = _h("0x1.3b8c5b12e9282p-4")  # 7.70381505559019352791e-02

# k_sin.c / k_cos.c: minimax polynomials of sin and cos on [-π/4, π/4].
_S1 = _h("-0x1.5555555555549p-3")  # -1.66666666666666324348e-01
_S2 = _h("0x1.111111110f8a6p-7")  # 8.33333333332248946124e-03
_S3 = _h("-0x1.a01a019c161d5p-13")  # -1.98412698298579493134e-04
_S4 = _h("0x1.71de357b1fe7dp-19")  # 2.75573137070700676789e-06
_S5 = _h("-0x1.ae5e68a2b9cebp-26")  # -2.50507602534068634195e-08
_S6 = _h("0x1.5d93a5acfd57cp-33")  # 1.58969099521155010221e-10
_C1 = _h("0x1.555555555554cp-5")  # 4.16666666666666019037e-02
_C2 = _h("-0x1.6c16c16c15177p-10")  # -1.38888888888741095749e-03
_C3 = _h("0x1.a01a019cb159p-16")  # 2.48015872894767294178e-05
_C4 = _h("-0x1.27e4f809c52adp-22")  # -2.75573143513906633035e-07
_C5 = _h("0x1.1ee9ebdb4b1c4p-29")  # 2.08757232129817482790e-09
_C6 = _h("-0x1.8fae9be8838d4p-37")  # -1.13596475577881948265e-11

#: atan's interval bounds (s_atan.c): t < 7/16 is used as is, the rest is reduced around 0.5, 1,
#: 1.5 and inf with r = (A·t - B) / (A + B·t); HI + LO = atan of the interval's centre.
_ATAN_BREAKS = (0.4375, 0.6875, 1.1875, 2.4375)
_ATAN_A = (1.0, 2.0, 1.0, 1.0, 0.0)
_ATAN_B = (0.0, 1.0, 1.0, 1.5, 1.0)
_ATAN_HI = (0.0,) + _ATANHI
_ATAN_LO = (0.0,) + _ATANLO
#: Beyond this atan(t) rounds to π/2 (s_atan.c); clamping there keeps -1/t finite for t = inf.
_ATAN_BIG = 2.0**66
#: |y/x| above which atan2 returns ±π/2 whatever the sign of x (e_atan2.c: exponents differ by > 60).
_ATAN2_STEEP = 2.0**60
#: Keeps the high 32 bits of a double (e_acos.c's SET_LOW_WORD(df, 0)).
_HIGH_WORD = 0xFFFFFFFF00000000

# The same as numpy columns and tables for the vectorised versions.
_V_BREAKS = np.array(_ATAN_BREAKS)[:, None]
_V_TABLE = np.array([_ATAN_A, _ATAN_B, _ATAN_HI, _ATAN_LO])  # rows A, B, HI, LO; one column per interval
_V_HIGH_WORD = np.uint64(_HIGH_WORD)
# Two polynomials evaluated side by side, as (2, 1) columns: leading coefficients, then the rest.
_ATAN_LEAD = np.array([[_AT10], [0.0]])
_ATAN_STEPS = [
    np.array([[c0], [c1]]) for c0, c1 in ((_AT8, _AT9), (_AT6, _AT7), (_AT4, _AT5), (_AT2, _AT3), (_AT0, _AT1))
]
_ACOS_LEAD = np.array([[_PS5], [0.0]])
_ACOS_STEPS = [
    np.array([[c0], [c1]]) for c0, c1 in ((_PS4, 0.0), (_PS3, _QS4), (_PS2, _QS3), (_PS1, _QS2), (_PS0, _QS1))
]


# --- vectorised -------------------------------------------------------------------------------

#: Elements per block. Every temporary of a block lives in a per-thread workspace that is reused
#: (fresh arrays for every step cost page faults and cache misses: 3-4x slower on large meshes).
#: Blocking changes no result: all work is elementwise.
_BLOCK = 8192
_local = threading.local()


class _Workspace:
    def __init__(self) -> None:
        self.f = [np.empty(_BLOCK) for _ in range(5)]
        self.rows = np.empty(4 * _BLOCK)  # up to 4 contiguous rows of a block
        self.pair = np.empty(2 * _BLOCK)
        self.marks = np.empty(4 * _BLOCK, dtype=np.uint8)
        self.k = np.empty(_BLOCK, dtype=np.intp)
        self.count = np.empty(_BLOCK, dtype=np.uint8)
        self.masks = [np.empty(_BLOCK, dtype=bool) for _ in range(2)]


def _workspace() -> _Workspace:
    ws = getattr(_local, "ws", None)
    if ws is None:
        ws = _local.ws = _Workspace()
    return ws


def _atan_nonneg(t: np.ndarray, ws: _Workspace) -> np.ndarray:
    """atan(t) for finite t >= 0 or NaN, elementwise, in place of t (s_atan.c); uses f[1:], rows,
    count, pair, marks and k of the workspace.

    Each interval reduces t to r = (A·t - B) / (A + B·t) (r = t, (2t - 1)/(2 + t), (t - 1)/(t + 1),
    (t - 1.5)/(1 + 1.5t), -1/t) and returns HI - ((r·(s1 + s2) - LO) - r); for the first,
    HI = LO = 0 gives fdlibm's r - r·(s1 + s2) exactly.
    """
    n = len(t)
    r, z, w, s1 = [f[:n] for f in ws.f[1:5]]
    marks = ws.marks[: 4 * n].reshape(4, n)
    k, count = ws.k[:n], ws.count[:n]
    np.greater_equal(t, _V_BREAKS, out=marks.view(bool))  # interval = breaks reached (NaN: 0, stays NaN)
    np.add.reduce(marks, axis=0, out=count)
    np.copyto(k, count)
    a, b, hi, lo = tab = ws.rows[: 4 * n].reshape(4, n)
    _V_TABLE.take(k, axis=1, out=tab, mode="clip")  # k is 0..4: "clip" only avoids a buffered copy
    np.multiply(a, t, out=r)
    r -= b
    b *= t
    b += a
    r /= b
    np.multiply(r, r, out=z)
    np.multiply(z, z, out=w)
    # Side by side (half the numpy calls): s1 = z·(aT0 + w·(aT2 + w·(aT4 + w·(aT6 + w·(aT8 + w·aT10)))))
    # and s2 = w·(aT1 + w·(aT3 + w·(aT5 + w·(aT7 + w·aT9)))), s2 led by a zero (0·w + aT9 = aT9).
    s = ws.pair[: 2 * n].reshape(2, n)
    np.multiply(_ATAN_LEAD, w, out=s)
    s += _ATAN_STEPS[0]
    for coef in _ATAN_STEPS[1:]:
        s *= w
        s += coef
    s[0] *= z
    s[1] *= w
    np.add(s[0], s[1], out=s1)
    s1 *= r
    s1 -= lo
    s1 -= r
    return np.subtract(hi, s1, out=t)


def _atan2_block(y: np.ndarray, x: np.ndarray, out: np.ndarray, ws: _Workspace) -> None:
    n = len(out)
    t, adj = ws.f[0][:n], ws.f[1][:n]
    neg = ws.masks[0][:n]
    np.abs(y, out=t)
    t /= np.abs(x, out=adj)
    # Rare: 0/0, inf/inf or y/0 (NaN, inf), |y/x| > 2^60, NaN inputs.
    t_in = t.copy() if not t.max() <= _ATAN2_STEEP else None
    if t_in is not None:
        np.minimum(t, _ATAN_BIG, out=t)  # atan(t) = π/2 for all t >= 2^66
    a = _atan_nonneg(t, ws)
    # x < 0 (and -0.0): π - atan|y/x|, unless |y/x| > 2^60 (e_atan2.c: then ±π/2 whatever x)
    np.signbit(x, out=neg)
    if t_in is not None:
        neg &= t_in <= _ATAN2_STEEP
    np.subtract(a, _PI_LO, out=adj)
    np.subtract(PI, adj, out=adj)
    np.putmask(a, neg, adj)
    if t_in is not None:
        nan = np.isnan(t_in)
        if nan.any():  # 0/0 and inf/inf (NaN inputs stay NaN)
            ax, ay, neg_x = np.abs(x), np.abs(y), np.signbit(x)
            np.putmask(a, nan & (ay == 0.0) & (ax == 0.0), np.where(neg_x, PI, 0.0))
            np.putmask(a, nan & (ay == np.inf) & (ax == np.inf), np.where(neg_x, _3PIO4, _PIO4))
    np.copysign(a, y, out=out)


def atan2(y, x) -> np.ndarray:
    """Elementwise atan2(y, x) in radians, in [-π, π], with C99's signed zeros, infinities and NaNs
    (y and x broadcast against each other)."""
    y = np.asarray(y, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    shape = y.shape
    if x.shape != shape:
        shape = np.broadcast_shapes(shape, x.shape)
        y, x = np.broadcast_to(y, shape), np.broadcast_to(x, shape)
    yf, xf = y.ravel(), x.ravel()
    out = np.empty(yf.size)
    ws = _workspace()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for start in range(0, out.size, _BLOCK):
            b = slice(start, start + _BLOCK)
            _atan2_block(yf[b], xf[b], out[b], ws)
    return out.reshape(shape)


def _acos_block(x: np.ndarray, out: np.ndarray, ws: _Workspace) -> None:
    n = len(out)
    z, r, s, df, rs = [f[:n] for f in ws.f[:5]]
    small, mask = ws.masks[0][:n], ws.masks[1][:n]
    c = out
    np.abs(x, out=z)
    np.less(z, 0.5, out=small)
    np.subtract(1.0, z, out=z)  # |x| >= 0.5: z = (1 - |x|) / 2
    z *= 0.5
    np.putmask(z, small, np.multiply(x, x, out=r))  # |x| < 0.5: z = x²
    # Side by side (half the numpy calls): p = z·(pS0 + z·(pS1 + z·(pS2 + z·(pS3 + z·(pS4 + z·pS5)))))
    # and q = 1 + z·(qS1 + z·(qS2 + z·(qS3 + z·qS4))), q led by zeros (0·z + 0 = 0, 0·z + qS4 = qS4).
    pq = ws.pair[: 2 * n].reshape(2, n)
    np.multiply(_ACOS_LEAD, z, out=pq)
    pq += _ACOS_STEPS[0]
    for coef in _ACOS_STEPS[1:]:
        pq *= z
        pq += coef
    pq *= z
    pq[1] += 1.0
    np.divide(pq[0], pq[1], out=r)  # r = p / q
    np.sqrt(z, out=s)
    np.multiply(r, s, out=rs)
    # x >= 0.5: 2·(df + (r·s + c)), df = s with its low 32 bits cleared, c = (z - df²) / (s + df)
    np.bitwise_and(s.view(np.uint64), _V_HIGH_WORD, out=df.view(np.uint64))
    np.multiply(df, df, out=c)
    np.subtract(z, c, out=c)
    den = np.add(s, df, out=pq[1])
    np.maximum(den, 1e-300, out=den)  # only x = 1 changes (s + df >= 2^-27 else): c = 0 / 1e-300
    c /= den
    c += rs
    c += df
    c *= 2.0
    # x <= -0.5: π - 2·(s + (r·s - pio2_lo))
    rs -= _PIO2_LO
    rs += s
    rs *= 2.0
    np.subtract(PI, rs, out=rs)
    np.putmask(c, np.less(x, 0.0, out=mask), rs)
    # |x| < 0.5: pio2_hi - (x - (pio2_lo - x·r))
    if small.any():
        np.multiply(x, r, out=rs)
        np.subtract(_PIO2_LO, rs, out=rs)
        np.subtract(x, rs, out=rs)
        np.subtract(_PIO2_HI, rs, out=rs)
        np.putmask(c, small, rs)


def acos(x) -> np.ndarray:
    """Elementwise acos(x) in radians, in [0, π]; exact 0 at 1, π/2 at 0, π at -1; NaN outside [-1, 1]."""
    x = np.asarray(x, dtype=np.float64)
    xf = x.ravel()
    out = np.empty(xf.size)
    ws = _workspace()
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for start in range(0, out.size, _BLOCK):
            b = slice(start, start + _BLOCK)
            _acos_block(xf[b], out[b], ws)
    return out.reshape(x.shape)


def cos_sin(x) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise (cos x, sin x) for |x| <= π/4 (radians; no range reduction); k_cos.c, k_sin.c.

    sin(-x) = -sin(x) and cos(-x) = cos(x) exactly, sin(±0) = ±0 and cos(0) = 1.
    """
    x = np.asarray(x, dtype=np.float64)
    z = x * x
    w = z * z
    rs = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    sin = np.copysign(x + z * x * (_S1 + z * rs), x)  # the sign of x already, except sin(-0) = -0
    rc = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w = 1.0 - hz
    cos = w + (((1.0 - w) - hz) + z * rc)
    return cos, sin


# --- scalar (the same operations in the same order, on Python floats) --------------------------


def _scalar_atan_nonneg(t: float) -> float:
    t = min(t, _ATAN_BIG) if t == t else t
    k = 0
    while k < 4 and t >= _ATAN_BREAKS[k]:  # NaN: interval 0, stays NaN
        k += 1
    a, b = _ATAN_A[k], _ATAN_B[k]
    r = (a * t - b) / (a + b * t)  # the denominator is >= 1 (or NaN)
    z = r * r
    w = z * z
    s1 = z * (_AT0 + w * (_AT2 + w * (_AT4 + w * (_AT6 + w * (_AT8 + w * _AT10)))))
    s2 = w * (_AT1 + w * (_AT3 + w * (_AT5 + w * (_AT7 + w * _AT9))))
    return _ATAN_HI[k] - ((r * (s1 + s2) - _ATAN_LO[k]) - r)


def scalar_atan2(y: float, x: float) -> float:
    """atan2(y, x) of Python floats; bit for bit :func:`atan2`."""
    y, x = float(y), float(x)
    if y != y or x != x:
        return math.nan
    ax, ay = abs(x), abs(y)
    negative_x = math.copysign(1.0, x) < 0.0
    if ax == 0.0:
        if ay == 0.0:
            return math.copysign(PI if negative_x else 0.0, y)
        t = math.inf
    elif ax == math.inf and ay == math.inf:
        return math.copysign(_3PIO4 if negative_x else _PIO4, y)
    else:
        t = ay / ax  # overflows to inf, never raises
    a = _scalar_atan_nonneg(t)
    if negative_x and t <= _ATAN2_STEEP:
        a = PI - (a - _PI_LO)
    return math.copysign(a, y)


def scalar_acos(x: float) -> float:
    """acos(x) of a Python float; bit for bit :func:`acos`."""
    x = float(x)
    if not -1.0 <= x <= 1.0:
        return math.nan
    ax = abs(x)
    small = ax < 0.5
    z = x * x if small else (1.0 - ax) * 0.5
    p = z * (_PS0 + z * (_PS1 + z * (_PS2 + z * (_PS3 + z * (_PS4 + z * _PS5)))))
    q = 1.0 + z * (_QS1 + z * (_QS2 + z * (_QS3 + z * _QS4)))
    r = p / q
    if small:
        return _PIO2_HI - (x - (_PIO2_LO - x * r))
    s = math.sqrt(z)
    if x < 0.0:
        return PI - 2.0 * (s + (r * s - _PIO2_LO))
    df = struct.unpack("<d", struct.pack("<Q", struct.unpack("<Q", struct.pack("<d", s))[0] & _HIGH_WORD))[0]
    c = (z - df * df) / (s + df) if z > 0.0 else 0.0
    return 2.0 * (df + (r * s + c))


def scalar_cos_sin(x: float) -> tuple[float, float]:
    """(cos x, sin x) of a Python float with |x| <= π/4; bit for bit :func:`cos_sin`."""
    x = float(x)
    z = x * x
    w = z * z
    rs = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    sin = math.copysign(x + z * x * (_S1 + z * rs), x)
    rc = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    w = 1.0 - hz
    cos = w + (((1.0 - w) - hz) + z * rc)
    return cos, sin


def cos_sin_deg(deg: float) -> tuple[float, float]:
    """(cos, sin) of an angle in degrees (any finite value), exact at multiples of 90°.

    The angle's magnitude is reduced exactly (fmod, then quarter turns, then the octant) to
    [0°, 45°], so quarter turns give exact 0 and ±1, 45° gives √½ for both, and symmetric angles
    (-a, 180° - a, 90° - a, a + 360°k) give exactly symmetric values. -0.0 never comes out.
    """
    deg = float(deg)
    d = math.fmod(abs(deg), 360.0)  # exact (in every C library: the result is representable)
    quadrant = int(d // 90.0)
    r = d - 90.0 * quadrant  # exact (Sterbenz)
    if r == 45.0:
        c = s = math.sqrt(0.5)
    elif r < 45.0:
        c, s = scalar_cos_sin(r * RAD_PER_DEG)
    else:
        s, c = scalar_cos_sin((90.0 - r) * RAD_PER_DEG)  # 90 - r exact (Sterbenz)
    if quadrant == 1:
        c, s = -s, c
    elif quadrant == 2:
        c, s = -c, -s
    elif quadrant == 3:
        c, s = s, -c
    if deg < 0.0:  # cos(-a) = cos(a), sin(-a) = -sin(a): exactly symmetric, no rounding of 360 - a
        s = -s
    return c + 0.0, s + 0.0
