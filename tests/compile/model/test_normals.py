"""Smoothing groups and vertex sharing (spec: Normals)."""

from __future__ import annotations

import numpy as np
import pytest

from veduta.compile.model.build import build_model
from veduta.compile.model.meshcheck import triangle_normals
from veduta.compile.model.normals import components
from veduta.compile.model.types import ModelSpec, PartSpec


def built(part: PartSpec, **model):
    return build_model(ModelSpec(parts=(part,), **model))


def corner_normals(m):
    tri = m.indices.reshape(-1, 3)
    return m.vertices["normal"][tri].astype(np.float64), triangle_normals(m.vertices["position"], m.indices)


def test_sphere_16x8_is_smooth_and_radial():
    m = built(PartSpec(0, "sphere", radius=1.5, position=(1.0, 2.0, 3.0), rotation_deg=(10.0, 20.0, 30.0)))
    pos = m.vertices["position"].astype(np.float64) - [1.0, 2.0, 3.0]
    radial = pos / np.linalg.norm(pos, axis=1, keepdims=True)
    dots = (radial * m.vertices["normal"]).sum(axis=1)
    assert dots.min() > 0.999
    # Smooth: every vertex normal differs from every triangle's flat normal somewhere.
    cn, fn = corner_normals(m)
    assert not np.allclose(cn, fn[:, None, :], atol=1e-3)


def test_box_has_24_vertices_with_axis_normals():
    m = built(PartSpec(0, "box", size=(1.0, 2.0, 3.0)))
    assert len(m.vertices) == 24
    n = m.vertices["normal"]
    assert (np.abs(n).max(axis=1) == 1.0).all()
    assert (np.count_nonzero(n, axis=1) == 1).all()
    for axis in range(3):
        for sign in (1.0, -1.0):
            assert ((n[:, axis] == sign).sum()) == 4


@pytest.mark.parametrize("angle", [90.0, 120.0, 180.0])
def test_box_smooths_at_90_degrees_and_above(angle):
    m = built(PartSpec(0, "box", size=(1.0, 1.0, 1.0)), smooth_angle_deg=angle)
    n = m.vertices["normal"].astype(np.float64)
    np.testing.assert_allclose(np.abs(n), 1 / np.sqrt(3), rtol=1e-6)
    assert 8 <= len(m.vertices) <= 24  # corners still split where their UVs differ


def test_box_sharp_just_below_90():
    m = built(PartSpec(0, "box", size=(1.0, 1.0, 1.0)), smooth_angle_deg=89.99)
    assert (np.count_nonzero(m.vertices["normal"], axis=1) == 1).all()


@pytest.mark.parametrize("segments", [12, 16, 40])
def test_cylinder_smooth_side_sharp_caps(segments):
    m = built(PartSpec(0, "cylinder", radius=0.5, height=2.0, segments=segments))
    cn, fn = corner_normals(m)
    cap = np.abs(fn[:, 1]) > 0.5
    np.testing.assert_allclose(cn[cap], np.repeat(fn[cap][:, None, :], 3, axis=1), atol=1e-7)
    side = cn[~cap]
    np.testing.assert_allclose(side[..., 1], 0.0, atol=1e-7)
    pos = m.vertices["position"][m.indices.reshape(-1, 3)][~cap].astype(np.float64)
    radial = pos.copy()
    radial[..., 1] = 0
    radial /= np.linalg.norm(radial, axis=-1, keepdims=True)
    np.testing.assert_allclose(side, radial, atol=1e-6)
    # Side vertices are shared between neighbouring quads except at the UV seam.
    assert len(m.vertices) == 2 * (segments + 1) + 2 * (segments + 1)


def test_cylinder_11_segments_is_faceted():
    m = built(PartSpec(0, "cylinder", radius=0.5, height=2.0, segments=11))  # 32.7° > 30°
    cn, fn = corner_normals(m)
    np.testing.assert_allclose(cn, np.repeat(fn[:, None, :], 3, axis=1), atol=1e-6)


def test_smooth_angle_zero_is_flat():
    m = built(PartSpec(0, "sphere", radius=1.0, segments=16, rings=8), smooth_angle_deg=0.0)
    cn, fn = corner_normals(m)
    np.testing.assert_allclose(cn, np.repeat(fn[:, None, :], 3, axis=1), atol=1e-6)


def test_coplanar_triangles_share_vertices_at_zero():
    # The two triangles of a box face are coplanar: even at 0° they share their diagonal.
    m = built(PartSpec(0, "box", size=(1.0, 1.0, 1.0)), smooth_angle_deg=0.0)
    assert len(m.vertices) == 24


def test_parts_never_smooth_into_each_other():
    # A tilted slab and its mirror meet at x = 0 at 2 x 11.3°, within 30°: still sharp between parts.
    slab = PartSpec(0, "extrude", profile=((0.0, 0.0), (1.0, 0.2), (1.0, 0.4), (0.0, 0.2)), depth=1.0)
    m = build_model(ModelSpec(parts=(slab, PartSpec(1, "mirror", axis="x", of=0))))
    cn, fn = corner_normals(m)
    tri_pos = m.vertices["position"][m.indices.reshape(-1, 3)]
    top = fn[:, 1] > 0.5
    at_seam = top[:, None] & (tri_pos[..., 0] == 0.0)
    assert at_seam.sum() > 0
    # Corner normals at the seam keep their own part's tilt (no vertical average).
    assert (np.abs(cn[at_seam][:, 0]) > 0.1).all()


def test_components_union_find():
    a = np.array([5, 1, 7, 3])
    b = np.array([6, 2, 5, 1])
    roots = components(9, a, b)
    assert roots.tolist() == [0, 1, 1, 1, 4, 5, 5, 5, 8]
    # A long chain given in reverse order.
    n = 1000
    chain = components(n, np.arange(n - 1, 0, -1), np.arange(n - 2, -1, -1))
    assert (chain == 0).all()


def test_spheres_follow_the_spec_sphere_rule():
    # The spec: a sphere is smooth "when 360°/segments and 180°/rings are both <=
    # smooth_angle_deg". Real neighbouring faces meet at a little more than that (a 12 x 6
    # sphere's pole fans meet the first band at 30.49°), so the sphere rule, not the face
    # angle test alone, decides: 12 x 6 at 30° and 16 x 8 at 22.5° are smooth everywhere,
    # and just below those angles the sphere is faceted.
    def split_heights(segments, rings, angle):
        m = built(PartSpec(0, "sphere", radius=1.0, segments=segments, rings=rings), smooth_angle_deg=angle)
        rows = np.concatenate([m.vertices["position"], m.vertices["normal"]], axis=1)
        per_position = {}
        for row in np.unique(rows, axis=0):
            per_position.setdefault(tuple(row[:3]), set()).add(tuple(row[3:]))
        return {round(abs(float(p[1])), 6) for p, normals in per_position.items() if len(normals) > 1}

    assert split_heights(12, 6, 30.0) == set()
    assert split_heights(16, 8, 22.5) == set()
    assert split_heights(12, 6, 29.9) != set()
    assert split_heights(16, 8, 22.4) != set()
