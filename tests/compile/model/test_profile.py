"""Profile checks and ear clipping (spec: extrude, lathe)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.compile.model import profile as profile_module
from veduta.compile.model.build import build_model
from veduta.compile.model.meshcheck import edge_report, signed_volume
from veduta.compile.model.profile import (
    check_profile_extrude,
    check_profile_lathe,
    signed_area,
    triangulate,
)
from veduta.compile.model.types import ModelSpec, PartSpec

SQUARE = [(0, 0), (1, 0), (1, 1), (0, 1)]
L_SHAPE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 3), (0, 3)]
U_SHAPE = [(0, 0), (3, 0), (3, 2), (2, 2), (2, 1), (1, 1), (1, 2), (0, 2)]
COLLINEAR = [(0, 0), (1, 0), (2, 0), (3, 0), (3, 1), (3, 2), (1.5, 2), (0, 2), (0, 1)]
# A comb: many reflex corners and collinear runs along the spine.
COMB = [(0, 0), (7, 0), (7, 1), (6, 1), (6, 3), (5, 3), (5, 1), (4, 1), (4, 3), (3, 3), (3, 1),
        (2, 1), (2, 3), (1, 3), (1, 1), (0, 1)]  # fmt: skip
# An arrow whose notch vertex lies on the line between two other vertices.
ARROW = [(0, 0), (2, 1), (0, 2), (1, 1)]

VALID = {"square": SQUARE, "L": L_SHAPE, "U": U_SHAPE, "collinear": COLLINEAR, "comb": COMB, "arrow": ARROW}


def both_windings():
    for name, pts in sorted(VALID.items()):
        yield pytest.param(pts, id=f"{name}-ccw" if signed_area(np.asarray(pts, float)) > 0 else f"{name}-cw")
        rev = list(reversed(pts))
        yield pytest.param(rev, id=f"{name}-rev")


def assert_good_triangulation(points):
    p = np.asarray(points, dtype=np.float64)
    if signed_area(p) < 0:
        p = p[::-1]
    tris = triangulate(p)
    n = len(p)
    assert tris.shape == (n - 2, 3)
    a, b, c = p[tris[:, 0]], p[tris[:, 1]], p[tris[:, 2]]
    areas = 0.5 * ((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0]))
    assert (areas > 0).all(), "every triangle counter-clockwise and not degenerate"
    assert areas.sum() == pytest.approx(signed_area(p), rel=1e-9)
    # Each polygon edge is used once by the triangles, each diagonal twice in opposite directions.
    edges = {}
    for t in tris:
        for i in range(3):
            e = (int(t[i]), int(t[(i + 1) % 3]))
            edges[e] = edges.get(e, 0) + 1
    for i in range(n):
        assert edges.get((i, (i + 1) % n)) == 1
    for (u, v), k in edges.items():
        assert k == 1
        if v != (u + 1) % n:
            assert edges.get((v, u)) == 1


@pytest.mark.parametrize("points", list(both_windings()))
def test_valid_profiles_pass_and_triangulate(points):
    assert check_profile_extrude(points) == []
    assert_good_triangulation(points)
    m = build_model(ModelSpec(parts=(PartSpec(0, "extrude", profile=tuple(points), depth=0.7),)))
    pos = m.vertices["position"]
    assert edge_report(pos, m.indices).watertight_and_consistent
    assert signed_volume(pos, m.indices) == pytest.approx(abs(signed_area(np.asarray(points, float))) * 0.7, rel=1e-6)
    # The front cap faces +Z and uses the profile coordinates as given (not re-centred).
    front = pos[pos[:, 2] == np.float32(0.35)]
    np.testing.assert_array_equal(np.unique(front[:, :2], axis=0), np.unique(np.asarray(points, np.float32), axis=0))


@pytest.mark.parametrize(
    ("points", "fragment"),
    [
        ([(0, 0), (1, 1), (1, 0), (0, 1)], "edges 0-1 and 2-3 cross or touch"),  # bow tie
        ([(0, 0), (2, 0), (2, 2), (1, 0), (0, 2)], "cross or touch"),  # vertex touches an edge
        ([(0, 0), (2, 0), (1, 0), (1, 1)], "edge 1-2 folds back onto edge 0-1"),
        ([(0, 0), (1, 0), (1, 0), (0, 1)], "point 2 repeats point 1"),
        ([(0, 0), (1, 0), (0, 1), (0, 0)], "last point 3 repeats the first point"),
        ([(0, 0), (1, 0)], "2 points out of range [3, 256]"),
        ([(0, 0), (1, 0), (2, 0)], "folds back"),  # no area
        ([(0, 0), (4, 0), (4, 4), (0, 4), (2, 0)], "cross or touch"),  # last edge ends on edge 0-1
        ([(0, 0), (2, 0), (2, 1), (0, 1), (0, 0.5), (1, 0.5), (0, 0.5)], "cross or touch"),  # point revisited
        ([(0, 0), (1, 0), (float("nan"), 1)], "point 2 is not finite"),
    ],
)
def test_invalid_extrude_profiles(points, fragment):
    problems = check_profile_extrude(points)
    assert any(fragment in p for p in problems), problems


def test_extrude_too_many_points():
    pts = [(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 257, endpoint=False)]
    assert check_profile_extrude(pts) == ["257 points out of range [3, 256]"]


def test_lathe_checks():
    assert check_profile_lathe([(0, 0), (0.5, 0), (0.4, 1), (0, 1.2)]) == []
    assert check_profile_lathe([(1, 0), (1.5, 0), (1.5, 1), (1, 1), (1, 0)]) == []  # ring
    assert check_profile_lathe([(0.5, 0), (0.5, 1)]) == []
    assert check_profile_lathe([(0.5, 0)]) == ["1 points out of range [2, 256]"]
    assert check_profile_lathe([(0, 0), (0, 1)]) == [
        "every point is on the axis (r = 0); want at least one point with r > 0"
    ]
    assert check_profile_lathe([(0, 0), (1, 0), (1, 0), (0, 1)]) == ["point 2 repeats point 1"]
    assert check_profile_lathe([(0, 0), (-1, 0), (1, 1)]) == ["point 1: r -1 is negative (want r >= 0)"]


@st.composite
def star_polygons(draw):
    """Random star-shaped polygons, some with extra collinear points on their edges."""
    n = draw(st.integers(3, 24))
    angles = sorted(draw(st.lists(st.integers(0, 359), min_size=n, max_size=n, unique=True)))
    radii = draw(st.lists(st.integers(1, 20), min_size=n, max_size=n))
    pts = [(r * math.cos(math.radians(a)), r * math.sin(math.radians(a))) for a, r in zip(angles, radii)]
    if signed_area(np.asarray(pts)) == 0:
        pts = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]
    out = []
    for i, p in enumerate(pts):
        out.append(p)
        if draw(st.booleans()) and len(out) < 200:
            q = pts[(i + 1) % len(pts)]
            out.append(((p[0] + q[0]) * 0.5, (p[1] + q[1]) * 0.5) if draw(st.booleans()) else (p[0], q[1]))
    if draw(st.booleans()):
        out.reverse()
    return out


@settings(max_examples=80, deadline=None)
@given(star_polygons())
def test_random_star_polygons(points):
    if check_profile_extrude(points):
        return  # the random extra points can make it self-touching; only valid ones matter
    assert_good_triangulation(points)


@settings(max_examples=60, deadline=None)
@given(star_polygons())
def test_python_and_numpy_ear_clippers_agree(points):
    if check_profile_extrude(points):
        return
    p = np.asarray(points, dtype=np.float64)
    if signed_area(p) < 0:
        p = p[::-1]
    extent = float(np.max(p.max(axis=0) - p.min(axis=0)))
    tol = profile_module._FLAT_TOLERANCE * extent * extent
    small = profile_module._ear_clip_python(p[:, 0].tolist(), p[:, 1].tolist(), tol)
    large = profile_module._ear_clip_numpy(p, tol)
    assert small == large


def test_large_concave_profile_uses_numpy_path():
    # A 203-point comb with slanted teeth: many reflex corners, beyond the small-polygon threshold.
    teeth = 50
    pts = [(0.0, 0.0), (2.0 * teeth, 0.0)]
    for k in range(teeth - 1, -1, -1):
        x = 2.0 * k
        pts += [(x + 2.0, 1.0), (x + 1.5, 1.0), (x + 1.5, 3.0), (x + 0.5, 3.0)]
    pts.append((0.0, 1.0))
    assert check_profile_extrude(pts) == [], check_profile_extrude(pts)[:3]
    assert len(pts) > profile_module._SMALL_POLYGON
    assert_good_triangulation(pts)
