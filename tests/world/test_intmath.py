"""The integer building blocks: reference values, and scalar == vectorised."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.world import intmath as im
from veduta.world.tables import BIOME_CDF, equalise, measure_biome_cdf

coords = st.integers(-(1 << 20), 1 << 20)


def test_mix64_is_splitmix64():
    # splitmix64 seeded with 0: the first output is mix64(0x9E3779B97F4A7C15)
    assert im.mix64(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF
    assert im.mix64(2 * 0x9E3779B97F4A7C15 & im.MASK64) == 0x6E789E6AA1B965F4


def test_strhash_is_fnv1a_then_mix():
    assert im.strhash("") == im.mix64(0xCBF29CE484222325)
    assert im.strhash("a") == im.mix64(0xAF63DC4C8601EC8C)  # FNV-1a 64 of "a"


def test_float_conversions_are_exact_roundings():
    assert im.to_milli(1.5) == 1500
    assert im.to_milli(-0.0005) == -1  # ties away from zero (the double is just above -0.0005)
    assert im.to_milli(0.0025) == 3  # 0.0025 as a double is 0.00250000000000000005...
    assert im.to_milli(float(np.float32(0.1))) == 100
    assert im.to_threshold32(1.0) == 1 << 32
    assert im.to_threshold32(0.5) == 1 << 31
    assert im.to_q16(0.3) == 19661


@given(st.integers(0, (1 << 64) - 1), coords, coords)
def test_hash2_scalar_equals_vector(key, x, z):
    v = im.hash2_np(key, np.array([x]), np.array([z]))[0]
    g = im.hash2_grid(key, np.array([x, x + 1]), np.array([z]))[0, 0]
    assert int(v) == int(g) == im.hash2(key, x, z)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, (1 << 64) - 1), st.integers(1, 300), coords, coords, st.integers(1, 9), st.integers(1, 9))
def test_value_noise_scalar_equals_grid(key, p, x0, z0, w, h):
    xs = np.arange(x0, x0 + w)
    zs = np.arange(z0, z0 + h)
    grid = im.value_noise_grid(key, p, xs, zs)
    for j in range(h):
        for i in range(w):
            assert grid[j, i] == im.value_noise(key, p, x0 + i, z0 + j)
    assert grid.min() >= -32768 and grid.max() <= 32767


def test_value_noise_hits_lattice_values():
    key = im.stream_key(1, "x")
    for i, j in ((0, 0), (-3, 2), (5, -7)):
        assert im.value_noise(key, 16, 16 * i, 16 * j) == im.signed16(im.hash2(key, i, j))


@given(st.lists(st.integers(0, (1 << 62)), min_size=1, max_size=50))
def test_isqrt(values):
    got = im.isqrt_np(np.array(values, dtype=np.int64))
    assert got.tolist() == [math.isqrt(v) for v in values]


@given(st.integers(-5000, 5000), st.integers(-5000, 5000))
def test_pseudo_angle_scalar_equals_vector_and_is_monotonic(dx, dz):
    pa = im.pseudo_angle(dx, dz)
    assert 0 <= pa < 65536
    assert im.pseudo_angle(np.array([dx]), np.array([dz]))[0] == pa
    table = im.angular_table(12345)
    assert im.angular_noise(table, np.array([pa]))[0] == im.angular_noise(table, pa)


def test_pseudo_angle_quadrants():
    assert im.pseudo_angle(1, 0) == 0
    assert im.pseudo_angle(1, 1) == 8192
    assert im.pseudo_angle(0, 1) == 16384
    assert im.pseudo_angle(-1, 0) == 32768
    assert im.pseudo_angle(0, -1) == 49152
    angles = [im.pseudo_angle(round(1000 * math.cos(a / 100)), round(1000 * math.sin(a / 100))) for a in range(628)]
    assert angles == sorted(angles)


def test_smooth():
    assert im.smooth(0) == 0 and im.smooth(65536) == 65536 and im.smooth(32768) == 32768


def test_equalise_scalar_equals_vector_and_is_monotonic():
    f = np.arange(-100000, 100000, 7, dtype=np.int64)
    u = equalise(f)
    assert np.all(np.diff(u) >= 0) and u[0] == 0 and u[-1] == 65535
    for v in f[::997]:
        assert equalise(int(v)) == u[(v + 100000) // 7]


def test_cdf_table_matches_its_measurement():
    fresh = measure_biome_cdf(seeds=6, period=16, size=512)
    assert max(abs(a - b) for a, b in zip(fresh, BIOME_CDF)) < 700  # ~1 %
