"""veduta.compile.detmath: accuracy against the C library, exact special values, scalar = vectorised
bit for bit, and the same bits whichever SIMD code numpy picks for this CPU."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest

from veduta.compile import detmath as dm

ROOT = Path(__file__).resolve().parents[2]
PI = math.pi
TINY = 5e-324
HUGE = sys.float_info.max
SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, TINY, -TINY, 1e-300, -1e-300, 2.2250738585072014e-308,
            1e300, -1e300, HUGE, -HUGE, math.inf, -math.inf, math.nan]  # fmt: skip


def ulps(a, b) -> np.ndarray:
    """Distance in units in the last place between float64 arrays (adjacent doubles: 1; +0 and -0: 0)."""
    ia = np.asarray(a, dtype=np.float64).view(np.int64)
    ib = np.asarray(b, dtype=np.float64).view(np.int64)
    ia = np.where(ia < 0, np.int64(-(2**63)) - ia, ia)  # doubles ordered as integers
    ib = np.where(ib < 0, np.int64(-(2**63)) - ib, ib)
    return np.abs(ia - ib)


def same_bits(a, b) -> bool:
    """Bit for bit equal, any NaN equal to any NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    return a.shape == b.shape and bool(((a.view(np.int64) == b.view(np.int64)) | both_nan).all())


def rng(seed: int = 1) -> np.random.Generator:
    return np.random.default_rng(seed)


def spread(g: np.random.Generator, n: int) -> np.ndarray:
    """n doubles of both signs with magnitudes spread over the whole finite range (exponent uniform)."""
    return np.ldexp(g.random(n) + 0.5, g.integers(-1074, 1024, n)) * g.choice([-1.0, 1.0], n)


def _math_acos(x: float) -> float:
    try:
        return math.acos(x)
    except ValueError:
        return math.nan


# --- accuracy ---------------------------------------------------------------------------------


def test_atan2_within_2_ulp_of_math():
    g = rng()
    n = 100_000
    y = np.concatenate([g.standard_normal(n), g.uniform(-1, 1, n), spread(g, n), spread(g, n) * 1e-3])
    x = np.concatenate([g.standard_normal(n), g.uniform(-1, 1, n), spread(g, n), g.standard_normal(n)])
    got = dm.atan2(y, x)
    want = np.array([math.atan2(a, b) for a, b in zip(y.tolist(), x.tolist())])
    assert ulps(got, want).max() <= 2
    # and on the rounded multiples of 45° a mesh hits all the time
    for yy in (0.0, 1.0, -1.0, 3.0, -3.0):
        for xx in (0.0, 1.0, -1.0, 3.0, -3.0, -0.0):
            assert ulps(dm.atan2(yy, xx), math.atan2(yy, xx)) <= 1, (yy, xx)


def test_acos_within_2_ulp_of_math():
    g = rng(2)
    n = 100_000
    x = np.concatenate([
        g.uniform(-1, 1, n), 1.0 - np.ldexp(g.random(n), g.integers(-53, 0, n)),
        -1.0 + np.ldexp(g.random(n), g.integers(-53, 0, n)), np.ldexp(g.random(n), g.integers(-1074, 0, n)),
        g.uniform(0.49, 0.51, n), g.uniform(-0.51, -0.49, n),
    ])  # fmt: skip
    x = np.concatenate([x, -x])
    got = dm.acos(x)
    want = np.array([math.acos(v) for v in x.tolist()])
    assert ulps(got, want).max() <= 2


def test_cos_sin_within_2_ulp_of_math_on_the_first_octants():
    g = rng(3)
    n = 100_000
    x = np.concatenate([g.uniform(-PI / 4, PI / 4, n), np.ldexp(g.random(n), g.integers(-1074, 0, n)) * PI / 4])
    c, s = dm.cos_sin(x)
    assert ulps(c, [math.cos(v) for v in x.tolist()]).max() <= 2
    assert ulps(s, [math.sin(v) for v in x.tolist()]).max() <= 2


_PI_60 = Decimal("3.141592653589793238462643383279502884197169399375105820974944592307816")


def _cos_sin_deg_reference(d: float) -> tuple[float, float]:
    """cos and sin of d degrees in 70-digit decimal arithmetic (Taylor series after an exact
    reduction), rounded to doubles; exact zeros where the true value is 0."""
    with localcontext() as ctx:
        ctx.prec = 70
        r = (Decimal(d) % 360) * _PI_60 / 180
        term, sums, n = Decimal(1), [Decimal(0), Decimal(0)], 0
        while abs(term) > Decimal("1e-66"):
            sums[n % 2] += -term if n % 4 >= 2 else term
            n += 1
            term = term * r / n
        return tuple(0.0 if abs(v) < Decimal("1e-60") else float(v) for v in sums)  # type: ignore[return-value]


def test_cos_sin_deg_within_2_ulp_of_the_true_values():
    g = rng(4)
    for d in np.concatenate([g.uniform(-45, 45, 5000)]).tolist():  # math gets the same argument
        c, s = dm.cos_sin_deg(d)
        assert ulps(c, math.cos(math.radians(d))) <= 2 and ulps(s, math.sin(math.radians(d))) <= 2, d
    near_axes = np.repeat(g.integers(-8, 9, 300) * 90.0, 2) + g.uniform(-1e-3, 1e-3, 600)
    for d in np.concatenate([g.uniform(-1e4, 1e4, 600), near_axes, g.integers(-720, 721, 300) * 0.5]).tolist():
        got, want = dm.cos_sin_deg(d), _cos_sin_deg_reference(d)
        assert ulps(got, want).max() <= 2, (d, got, want)  # math.cos(math.radians(d)) is far worse here


# --- exact values -----------------------------------------------------------------------------


def test_special_values_are_those_of_math():
    """Zeros (with their signs), infinities and NaNs exactly as C99 / the C library; other edge
    values (tiny, huge, subnormal, ±1, ±0.5 and their neighbours) within 2 ulp."""
    for y in SPECIALS:
        for x in SPECIALS:
            want = math.atan2(y, x)
            exact = {y, x} & {0.0, math.inf, -math.inf} or math.isnan(y) or math.isnan(x)
            for got in (dm.scalar_atan2(y, x), float(dm.atan2(y, x))):
                assert same_bits(got, want) if exact else ulps(got, want) <= 2, (y, x, got, want)
    for x in SPECIALS + [0.5000000000000001, 0.49999999999999994, -0.5000000000000001, 1.0000000000000002]:
        want = _math_acos(x)
        exact = x in (0.0, 1.0, -1.0) or not -1.0 <= x <= 1.0
        for got in (dm.scalar_acos(x), float(dm.acos(x))):
            assert same_bits(got, want) if exact else ulps(got, want) <= 2, (x, got, want)


def test_exact_zeros_ones_and_pi():
    assert dm.acos(1.0) == 0.0 and dm.acos(-1.0) == PI and dm.acos(0.0) == PI / 2 and dm.acos(-0.0) == PI / 2
    assert dm.atan2(0.0, 1.0) == 0.0 and dm.atan2(0.0, -1.0) == PI and dm.atan2(-0.0, -1.0) == -PI
    assert dm.atan2(1.0, 0.0) == PI / 2 and dm.atan2(-1.0, -0.0) == -PI / 2
    assert math.copysign(1.0, dm.atan2(-0.0, 2.0)) == -1.0
    assert dm.atan2(1.0, 1.0) == PI / 4 and dm.atan2(1.0, -1.0) == 3 * PI / 4
    assert dm.scalar_cos_sin(0.0) == (1.0, 0.0)
    c, s = dm.scalar_cos_sin(-0.0)
    assert c == 1.0 and math.copysign(1.0, s) == -1.0


@pytest.mark.parametrize("turns", [0, 1, 2, 3, 4, -1, -2, -3, -5, 7, 2**40 + 1, -(2**40) - 3])
def test_quarter_turns_are_exact(turns):
    c, s = dm.cos_sin_deg(90.0 * turns)
    assert (c, s) == [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][turns % 4]
    assert math.copysign(1.0, c) == 1.0 or c != 0.0  # never -0.0
    assert math.copysign(1.0, s) == 1.0 or s != 0.0


def test_degrees_are_symmetric_and_45_is_one_value():
    h = math.sqrt(0.5)
    assert dm.cos_sin_deg(45.0) == (h, h) and dm.cos_sin_deg(135.0) == (-h, h) and dm.cos_sin_deg(-45.0) == (h, -h)
    for d in [1.0, 7.5, 22.5, 30.0, 44.0, 46.0, 60.0, 89.0, 91.0, 120.0, 179.0, 181.0, 271.25, 359.0]:
        c, s = dm.cos_sin_deg(d)
        assert dm.cos_sin_deg(-d) == (c, -s)
        assert dm.cos_sin_deg(180.0 - d) == (-c, s)
        assert dm.cos_sin_deg(90.0 - d) == (s, c)
        assert dm.cos_sin_deg(d + 360.0) == (c, s)
    assert dm.cos_sin_deg(-0.0) == (1.0, 0.0) and dm.cos_sin_deg(1e300) == dm.cos_sin_deg(math.fmod(1e300, 360.0))
    for d in rng(10).uniform(-1e6, 1e6, 2000).tolist():  # any angle, not only those where 360 - a is exact
        c, s = dm.cos_sin_deg(d)
        assert dm.cos_sin_deg(-d) == (c, -s)


def test_odd_and_even():
    x = rng(5).uniform(-PI / 4, PI / 4, 10_000)
    c, s = dm.cos_sin(x)
    c2, s2 = dm.cos_sin(-x)
    assert same_bits(c, c2) and same_bits(s, -s2)
    y, xx = rng(6).standard_normal(10_000), rng(7).standard_normal(10_000)
    assert same_bits(dm.atan2(-y, xx), -dm.atan2(y, xx))


# --- scalar = vectorised, shapes, blocks ------------------------------------------------------


def test_scalar_versions_agree_bit_for_bit():
    g = rng(8)
    n = 20_000
    y = np.concatenate([g.standard_normal(n), spread(g, n), SPECIALS * 20])
    x = np.concatenate([g.standard_normal(n), spread(g, n), SPECIALS[::-1] * 20])
    assert same_bits(dm.atan2(y, x), [dm.scalar_atan2(a, b) for a, b in zip(y.tolist(), x.tolist())])
    a = np.concatenate([g.uniform(-1, 1, n), np.ldexp(g.random(n), g.integers(-1074, 1, n)), SPECIALS])
    assert same_bits(dm.acos(a), [dm.scalar_acos(v) for v in a.tolist()])
    t = g.uniform(-PI / 4, PI / 4, n)
    c, s = dm.cos_sin(t)
    pairs = np.array([dm.scalar_cos_sin(v) for v in t.tolist()])
    assert same_bits(c, pairs[:, 0]) and same_bits(s, pairs[:, 1])


def test_shapes_broadcasting_and_blocks():
    g = rng(9)
    length = g.random(5000)
    dots = g.standard_normal((5000, 3))
    dots[::7] = 0.0  # right angles: y / 0 somewhere in many blocks
    got = dm.atan2(length[:, None], dots)
    assert got.shape == (5000, 3)
    assert same_bits(got, dm.atan2(np.repeat(length, 3), dots.ravel()).reshape(5000, 3))
    assert dm.atan2([], []).shape == (0,) and dm.acos(np.zeros((0, 3))).shape == (0, 3)
    assert isinstance(dm.atan2(1.0, 2.0), np.ndarray) and dm.atan2(1.0, 2.0).shape == ()
    big = g.standard_normal(3 * 8192 + 17)  # several blocks, a short last one
    big[[0, 8191, 8192, 8193, -1]] = [0.0, -0.0, math.inf, math.nan, -math.inf]
    other = g.standard_normal(big.size)
    other[[5, 8191, 8192]] = [0.0, -0.0, math.inf]
    assert same_bits(dm.atan2(big, other), [dm.scalar_atan2(a, b) for a, b in zip(big.tolist(), other.tolist())])
    c = np.clip(big, -1, 1)
    assert same_bits(dm.acos(c), [dm.scalar_acos(v) for v in c.tolist()])
    assert not np.may_share_memory(dm.atan2(big, other), dm.atan2(big, other))  # fresh results


# --- the same bits on every machine -----------------------------------------------------------

#: Inputs made from integer random bits only (portable), outputs hashed: the pin catches any
#: machine, OS or numpy on which a result bit differs from the machine that wrote it.
_OUTPUT_DIGEST = """
import hashlib, sys
import numpy as np
from veduta.compile import detmath as dm
g = np.random.Generator(np.random.PCG64(20240611))
n = 200_000
bits = g.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
wild = bits.view(np.float64)
unit = g.random(n) * 2.0 - 1.0
y, x = np.concatenate([unit, wild]), np.concatenate([g.random(n) * 2.0 - 1.0, wild[::-1]])
h = hashlib.sha256()
def add(v):  # NaN bits (sign, payload) differ between CPU families: hash one NaN
    h.update(np.where(np.isnan(v), np.nan, v).tobytes())
add(dm.atan2(y, x))
add(dm.acos(np.concatenate([unit, unit * unit * unit, 1.0 - g.random(n) * 2.0 ** -20, wild])))
for part in dm.cos_sin(unit * (np.pi / 4)):
    add(part)
h.update(repr([dm.cos_sin_deg(d) for d in (unit * 720.0)[:20_000].tolist()]).encode())
print(h.hexdigest())
"""

#: SHA-256 of _OUTPUT_DIGEST's results, written on x86-64 (AVX-512) with numpy 2.4.
OUTPUT_SHA256 = "346424d3c74fa2ade071ea773de7b1bc895571fb167071ae380641a06ce07a14"


def _dispatch_targets() -> list[str]:
    """numpy's optional SIMD targets that this CPU has (numpy picks among them at run time)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath
    return [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]


def cpu_feature_envs() -> list[tuple[str, dict[str, str]]]:
    """(label, environment) for numpy as it is, without AVX-512 and with baseline code only."""
    targets = _dispatch_targets()
    configs = [("native", None)]
    no512 = [f for f in targets if "512" in f or f == "X86_V4"]
    if no512 and len(no512) < len(targets):
        configs.append(("no-avx512", no512))
    if targets:
        configs.append(("baseline", targets))
    out = []
    for label, off in configs:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
        if off:
            env["NPY_DISABLE_CPU_FEATURES"] = " ".join(off)
        out.append((label, env))
    return out


def test_outputs_are_pinned_and_independent_of_numpy_cpu_dispatch():
    seen = {}
    for label, env in cpu_feature_envs():
        out = subprocess.run([sys.executable, "-c", _OUTPUT_DIGEST], env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr
        seen[label] = out.stdout.strip()
    assert set(seen.values()) == {OUTPUT_SHA256}, seen


def test_srgb_curve_is_the_correctly_rounded_double_whatever_the_decimal_precision():
    """The colour conversion (sRGB -> linear light, `** 2.4`) runs in 40-digit decimal arithmetic,
    no libm pow: its doubles equal those of an 80-digit computation, i.e. the correctly rounded
    true values, so no machine or Python build can round them differently."""
    from veduta.compile.common import srgb_to_linear
    from veduta.compile.image import srgb_decode

    def decode(c: Decimal, prec: int) -> float:
        with localcontext() as ctx:
            ctx.prec = prec
            if c <= Decimal("0.04045"):
                return float(c / Decimal("12.92"))
            return float(((c + Decimal("0.055")) / Decimal("1.055")) ** Decimal("2.4"))

    for code in range(256):
        assert srgb_to_linear(code) == decode(Decimal(code) / 255, 80), code
    for half in range(255):
        c = (Decimal(half) + Decimal("0.5")) / 255
        assert srgb_decode(c) == decode(c, 80), half
