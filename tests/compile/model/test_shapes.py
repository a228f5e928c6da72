"""Shape counts and closed-shape properties (spec: Parts, Winding and orientation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.compile.model.build import build_model, part_triangle_counts, triangle_count
from veduta.compile.model.meshcheck import edge_report, signed_volume, triangle_normals
from veduta.compile.model.types import VERTEX_DTYPE, ModelSpec, PartSpec

L_SHAPE = ((0.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 1.0), (1.0, 3.0), (0.0, 3.0))
U_SHAPE = ((0.0, 0.0), (3.0, 0.0), (3.0, 2.0), (2.0, 2.0), (2.0, 1.0), (1.0, 1.0), (1.0, 2.0), (0.0, 2.0))
COLLINEAR = ((0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (3.0, 1.0), (3.0, 2.0), (1.5, 2.0), (0.0, 2.0), (0.0, 1.0))
VASE = ((0.0, 0.0), (0.5, 0.0), (0.4, 1.0), (0.0, 1.2))
RING = ((1.0, 0.0), (1.5, 0.0), (1.5, 1.0), (1.0, 1.0), (1.0, 0.0))


def one(part: PartSpec, **model) -> ModelSpec:
    return ModelSpec(parts=(part,), **model)


def mesh(spec: ModelSpec):
    m = build_model(spec)
    return m, m.vertices["position"], m.indices


CLOSED = {
    "box": PartSpec(0, "box", size=(1.0, 2.0, 0.5)),
    "cylinder": PartSpec(0, "cylinder", radius=0.5, height=2.0, segments=7),
    "cylinder16": PartSpec(0, "cylinder", radius=0.3, height=0.5),
    "sphere": PartSpec(0, "sphere", radius=0.8, segments=9, rings=5),
    "sphere_default": PartSpec(0, "sphere", radius=1.0),
    "extrude_square": PartSpec(0, "extrude", profile=((0.0, 0.0), (1.0, 0.0), (1.0, 2.0), (0.0, 2.0)), depth=0.5),
    "extrude_L": PartSpec(0, "extrude", profile=L_SHAPE, depth=1.0),
    "extrude_U_cw": PartSpec(0, "extrude", profile=tuple(reversed(U_SHAPE)), depth=0.3),
    "extrude_collinear": PartSpec(0, "extrude", profile=COLLINEAR, depth=2.0),
    "lathe_vase": PartSpec(0, "lathe", profile=VASE, segments=10),
    "lathe_vase_reversed": PartSpec(0, "lathe", profile=tuple(reversed(VASE)), segments=6),
    "lathe_ring": PartSpec(0, "lathe", profile=RING, segments=12),
    "lathe_ring_cw": PartSpec(0, "lathe", profile=tuple(reversed(RING)), segments=5),
}


# --- counts -----------------------------------------------------------------------------------


def test_box_counts():
    m, _, idx = mesh(one(PartSpec(0, "box", size=(1.0, 1.0, 1.0))))
    assert m.triangle_count == 12
    assert len(m.vertices) == 24
    assert m.vertices.dtype == VERTEX_DTYPE and VERTEX_DTYPE.itemsize == 32
    assert idx.dtype == np.uint32


def test_plane_counts_and_normal():
    m, pos, idx = mesh(one(PartSpec(0, "plane", size=(2.0, 3.0))))
    assert m.triangle_count == 2 and len(m.vertices) == 4
    np.testing.assert_array_equal(triangle_normals(pos, idx), [[0, 1, 0], [0, 1, 0]])
    np.testing.assert_array_equal(m.vertices["normal"], np.tile([0, 1, 0], (4, 1)))
    assert m.bounds == ((-1.0, 0.0, -1.5), (1.0, 0.0, 1.5))


@pytest.mark.parametrize("segments", [3, 4, 5, 12, 16, 256])
def test_cylinder_triangles(segments):
    spec = one(PartSpec(0, "cylinder", radius=1.0, height=1.0, segments=segments))
    assert build_model(spec).triangle_count == 4 * segments == triangle_count(spec)


@pytest.mark.parametrize(("segments", "rings"), [(3, 2), (4, 3), (16, 8), (12, 6), (256, 128)])
def test_sphere_triangles(segments, rings):
    spec = one(PartSpec(0, "sphere", radius=1.0, segments=segments, rings=rings))
    m = build_model(spec)
    assert m.triangle_count == 2 * segments * (rings - 1) == triangle_count(spec)
    pos = m.vertices["position"]
    assert pos[:, 1].max() == 1.0 and pos[:, 1].min() == -1.0  # poles at (0, ±r, 0)
    poles = pos[np.abs(pos[:, 1]) == 1.0]
    np.testing.assert_array_equal(poles[:, [0, 2]], 0.0)


@pytest.mark.parametrize("profile", [L_SHAPE, U_SHAPE, COLLINEAR, tuple(reversed(COLLINEAR))])
def test_extrude_triangles(profile):
    spec = one(PartSpec(0, "extrude", profile=profile, depth=1.0))
    n = len(profile)
    assert build_model(spec).triangle_count == 2 * (n - 2) + 2 * n == triangle_count(spec)


@pytest.mark.parametrize(
    ("profile", "expected_per_segment"),
    [
        (VASE, 1 + 2 + 1),
        (((0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 2.0)), 0 + 1 + 2),  # on-axis segment adds nothing
        (((0.5, 0.0), (0.5, 1.0)), 2),  # open tube
        (RING, 4 * 2),
        (((0.0, 0.0), (1.0, 0.5), (0.0, 1.0), (1.0, 1.5), (0.0, 2.0)), 4),  # fans only
    ],
)
def test_lathe_triangles(profile, expected_per_segment):
    spec = one(PartSpec(0, "lathe", profile=profile, segments=7))
    m = build_model(spec)
    assert m.triangle_count == 7 * expected_per_segment == triangle_count(spec)
    assert edge_report(m.vertices["position"], m.indices).degenerate == 0


def test_cylinder_first_side_edge_at_plus_z():
    m, pos, _ = mesh(one(PartSpec(0, "cylinder", radius=1.0, height=2.0, segments=5)))
    side = pos[pos[:, 1] == 1.0]
    # Caps are fans around one centre vertex; the rim starts at +Z.
    assert any((p == [0.0, 1.0, 1.0]).all() for p in side)
    assert any((p == [0.0, 1.0, 0.0]).all() for p in side)


def test_mirror_counts_follow_source():
    spec = ModelSpec(
        parts=(
            PartSpec(0, "sphere", radius=1.0, segments=5, rings=4, position=(2.0, 0.0, 0.0)),
            PartSpec(1, "mirror", axis="x", of=0),
            PartSpec(2, "mirror", axis="z", of=1),
        )
    )
    assert part_triangle_counts(spec.parts) == [30, 30, 30]
    assert build_model(spec).triangle_count == 90


# --- closed shapes under random transforms ----------------------------------------------------

coords = st.floats(-5.0, 5.0, allow_nan=False, width=32)
angles = st.floats(-360.0, 360.0, allow_nan=False, width=32)
scales = st.builds(lambda m, neg: -m if neg else m, st.floats(0.25, 4.0, width=32), st.booleans())


def expected_volume(part: PartSpec) -> float | None:
    if part.shape == "box":
        return float(np.prod(part.size))
    if part.shape == "cylinder":
        s = part.segments
        return 0.5 * s * part.radius**2 * math.sin(2 * math.pi / s) * part.height
    if part.shape == "extrude":
        p = np.asarray(part.profile)
        area = 0.5 * abs(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))
        return float(area * part.depth)
    return None


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(CLOSED)),
    position=st.tuples(coords, coords, coords),
    rotation=st.tuples(angles, angles, angles),
    scale=st.tuples(scales, scales, scales),
    flip=st.booleans(),
    pivot=st.sampled_from(["origin", "center", "bottom-center"]),
)
def test_closed_shapes_watertight_and_outward(name, position, rotation, scale, flip, pivot):
    part = CLOSED[name]
    base = PartSpec(
        0,
        part.shape,
        size=part.size,
        radius=part.radius,
        height=part.height,
        segments=part.segments,
        rings=part.rings,
        depth=part.depth,
        profile=part.profile,
        position=position,
        rotation_deg=rotation,
        scale=scale,
        flip_normals=flip,
    )
    m, pos, idx = mesh(one(base, pivot=pivot))
    report = edge_report(pos, idx)
    assert report.watertight_and_consistent, report
    volume = signed_volume(pos, idx)
    assert (volume < 0) if flip else (volume > 0)
    expected = expected_volume(part)
    if expected is not None:
        det = abs(float(np.prod(np.asarray(scale, dtype=np.float64))))
        assert abs(volume) == pytest.approx(expected * det, rel=1e-3)
    # Vertex normals lean the same way as their triangles.
    tri = idx.reshape(-1, 3)
    fn = triangle_normals(pos, idx)
    vn = m.vertices["normal"][tri].astype(np.float64)
    assert (np.einsum("tj,tcj->tc", fn, vn) > 0.0).all()
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_flip_normals_reverses_everything(name):
    part = CLOSED[name]
    a = build_model(one(part))
    b = build_model(one(PartSpec(**{**part.__dict__, "flip_normals": True})))
    assert signed_volume(a.vertices["position"], a.indices) > 0
    assert signed_volume(b.vertices["position"], b.indices) < 0
    assert a.triangle_count == b.triangle_count


def test_plane_negative_scale_is_a_reflection():
    # The winding is reversed for reflections, so the normal is reflected like the geometry.
    down = build_model(one(PartSpec(0, "plane", size=(1.0, 1.0), scale=(1.0, -1.0, 1.0))))
    np.testing.assert_array_equal(triangle_normals(down.vertices["position"], down.indices)[:, 1], -1.0)
    mirrored_x = build_model(one(PartSpec(0, "plane", size=(1.0, 1.0), scale=(-1.0, 1.0, 1.0))))
    np.testing.assert_array_equal(triangle_normals(mirrored_x.vertices["position"], mirrored_x.indices)[:, 1], 1.0)
