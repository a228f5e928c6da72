"""UV mapping in metres (spec: UV mapping)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.compile.model.build import build_model
from veduta.compile.model.types import ModelSpec, PartSpec


def built(part: PartSpec, **model):
    return build_model(ModelSpec(parts=(part,), **model))


def face(m, normal):
    v = m.vertices
    sel = (v["normal"] == np.asarray(normal, np.float32)).all(axis=1)
    return v["position"][sel].astype(np.float64), v["uv"][sel].astype(np.float64)


def uv_at(pos, uv, point):
    hit = (pos == np.asarray(point, np.float64)).all(axis=1)
    assert hit.sum() == 1, (point, pos)
    return tuple(uv[hit][0])


# normal, top-left corner seen from outside, top-right corner, face width, face height
BOX_TABLE = [
    ((0, 0, 1), (-1, 0.5, 0.5), (1, 0.5, 0.5), 2, 1),
    ((0, 0, -1), (1, 0.5, -0.5), (-1, 0.5, -0.5), 2, 1),
    ((1, 0, 0), (1, 0.5, 0.5), (1, 0.5, -0.5), 1, 1),
    ((-1, 0, 0), (-1, 0.5, -0.5), (-1, 0.5, 0.5), 1, 1),
    ((0, 1, 0), (-1, 0.5, -0.5), (1, 0.5, -0.5), 2, 1),  # seen from above, -Z up
    ((0, -1, 0), (-1, -0.5, 0.5), (1, -0.5, 0.5), 2, 1),  # seen from below, +Z up
]


@pytest.mark.parametrize(("normal", "top_left", "top_right", "width", "height"), BOX_TABLE)
def test_box_face_table(normal, top_left, top_right, width, height):
    m = built(PartSpec(0, "box", size=(2.0, 1.0, 1.0)))
    pos, uv = face(m, normal)
    assert len(pos) == 4
    assert uv_at(pos, uv, top_left) == (0.0, 0.0)
    assert uv_at(pos, uv, top_right) == (width, 0.0)
    assert uv[:, 0].min() == 0 and uv[:, 0].max() == width
    assert uv[:, 1].min() == 0 and uv[:, 1].max() == height


def test_box_spec_example_front_face():
    m = built(PartSpec(0, "box", size=(2.0, 1.0, 1.0)))
    pos, uv = face(m, (0, 0, 1))
    assert uv_at(pos, uv, (-1, 0.5, 0.5)) == (0.0, 0.0)
    assert (uv[:, 0].min(), uv[:, 0].max(), uv[:, 1].min(), uv[:, 1].max()) == (0, 2, 0, 1)


def uv_set(m):
    uv = m.vertices["uv"].astype(np.float64)
    return np.unique(np.round(uv, 5), axis=0)


@settings(max_examples=40, deadline=None)
@given(
    rotation=st.tuples(*[st.sampled_from([0.0, 90.0, -90.0, 180.0, 33.0])] * 3),
    position=st.tuples(*[st.integers(-3, 3).map(float)] * 3),
    shape=st.sampled_from(["box", "cylinder", "sphere", "lathe", "extrude", "plane"]),
)
def test_uvs_ignore_rotation_and_translation(rotation, position, shape):
    params = {
        "box": {"size": (1.0, 2.0, 3.0)},
        "cylinder": {"radius": 0.5, "height": 1.0, "segments": 8},
        "sphere": {"radius": 0.5, "segments": 8, "rings": 4},
        "lathe": {"profile": ((0.0, 0.0), (0.5, 0.0), (0.3, 1.0), (0.0, 1.5)), "segments": 6},
        "extrude": {"profile": ((0.0, 0.0), (1.0, 0.0), (1.0, 2.0), (0.0, 2.0)), "depth": 0.5},
        "plane": {"size": (2.0, 3.0)},
    }[shape]
    a = built(PartSpec(0, shape, **params))
    b = built(PartSpec(0, shape, position=position, rotation_deg=rotation, **params))
    np.testing.assert_allclose(uv_set(a), uv_set(b), atol=2e-5)


def test_uvs_are_metres_after_scale():
    scaled = built(PartSpec(0, "box", size=(1.0, 1.0, 1.0), scale=(2.0, 1.0, 1.0)))
    sized = built(PartSpec(0, "box", size=(2.0, 1.0, 1.0)))
    np.testing.assert_array_equal(scaled.vertices["uv"], sized.vertices["uv"])


def test_plane_planar_uv():
    m = built(PartSpec(0, "plane", size=(4.0, 2.0), position=(10.0, 1.0, -3.0)))
    pos = m.vertices["position"].astype(np.float64) - [10.0, 1.0, -3.0]
    np.testing.assert_array_equal(m.vertices["uv"][:, 0], pos[:, 0] + 2.0)  # u = x - min.x
    np.testing.assert_array_equal(m.vertices["uv"][:, 1], pos[:, 2] + 1.0)  # v = z - min.z


def test_planar_projects_along_smallest_extent():
    # A box thin in Z is projected with the +Z row: u = x - min.x, v = max.y - y.
    m = built(PartSpec(0, "box", size=(2.0, 1.0, 0.1), uv="planar"))
    pos = m.vertices["position"].astype(np.float64)
    uv = m.vertices["uv"].astype(np.float64)
    np.testing.assert_allclose(uv[:, 0], pos[:, 0] + 1.0)
    np.testing.assert_allclose(uv[:, 1], 0.5 - pos[:, 1])


def test_cylinder_uv():
    r, h = 0.5, 2.0
    m = built(PartSpec(0, "cylinder", radius=r, height=h, segments=16))
    v = m.vertices
    pos = v["position"].astype(np.float64)
    uv = v["uv"].astype(np.float64)
    side = np.abs(v["normal"][:, 1]) < 0.5
    front = side & (pos[:, 0] == 0) & (pos[:, 2] == r)
    assert front.sum() == 2
    np.testing.assert_allclose(uv[front, 0], math.pi * r, rtol=1e-6)
    assert uv[side, 0].min() == 0.0
    assert uv[side, 0].max() == pytest.approx(2 * math.pi * r, rel=1e-6)
    np.testing.assert_allclose(uv[side, 1], h / 2 - pos[side, 1])  # v = max.y - y
    # Caps use the ±Y rows of the box table.
    top = v["normal"][:, 1] == 1.0
    np.testing.assert_allclose(uv[top, 0], pos[top, 0] + r, atol=1e-7)
    np.testing.assert_allclose(uv[top, 1], pos[top, 2] + r, atol=1e-7)
    bottom = v["normal"][:, 1] == -1.0
    np.testing.assert_allclose(uv[bottom, 1], r - pos[bottom, 2], atol=1e-7)


@pytest.mark.parametrize("segments", [3, 5, 8, 16])
def test_no_triangle_straddles_the_seam(segments):
    r = 1.0
    m = built(PartSpec(0, "cylinder", radius=r, height=1.0, segments=segments, uv="cylindrical"))
    tri = m.indices.reshape(-1, 3)
    side = np.abs(m.vertices["normal"][tri][:, 0, 1]) < 0.5  # caps use the box table
    u = m.vertices["uv"][tri[side]][..., 0].astype(np.float64)
    assert len(u) == 2 * segments
    step = 2 * math.pi * r / segments
    assert (u.max(axis=1) - u.min(axis=1) <= step * (1 + 1e-6)).all()


def test_sphere_uv():
    r = 2.0
    m = built(PartSpec(0, "sphere", radius=r, segments=16, rings=8))
    v = m.vertices
    pos = v["position"].astype(np.float64)
    uv = v["uv"].astype(np.float64)
    top = pos[:, 1] == r
    bottom = pos[:, 1] == -r
    np.testing.assert_array_equal(uv[top, 1], 0.0)
    np.testing.assert_allclose(uv[bottom, 1], math.pi * r, rtol=1e-6)
    assert uv[:, 0].min() == 0.0
    assert uv[:, 0].max() == pytest.approx(2 * math.pi * r, rel=1e-6)
    # Poles take the angle of their triangle's centre: one pole vertex per fan triangle.
    assert top.sum() == 16 and bottom.sum() == 16
    tri = m.indices.reshape(-1, 3)
    u = uv[tri][..., 0]
    assert (u.max(axis=1) - u.min(axis=1) <= 2 * math.pi * r / 16 * (1 + 1e-6)).all()
    # Front (+Z) meridian is at u = πR.
    front = (pos[:, 0] == 0) & (pos[:, 2] > 0)
    np.testing.assert_allclose(uv[front, 0], math.pi * r, rtol=1e-6)


def test_mirror_copies_uvs():
    spec = ModelSpec(
        parts=(
            PartSpec(0, "box", size=(1.0, 2.0, 3.0), position=(1.0, 0.0, 0.0)),
            PartSpec(1, "mirror", axis="x", of=0),
        )
    )
    m = build_model(spec)
    a, b = m.mesh_parts
    ua = m.vertices["uv"][m.indices[a.first : a.first + a.count].reshape(-1, 3)]
    ub = m.vertices["uv"][m.indices[b.first : b.first + b.count].reshape(-1, 3)]
    np.testing.assert_array_equal(ub, ua[:, [0, 2, 1]])
