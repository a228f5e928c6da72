"""Whole-model building: transforms, mirrors, materials, pivot, LOD, determinism."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from veduta.compile.model.build import (
    build_model,
    lod_count,
    lod_part,
    lod_triangle_counts,
    part_triangle_counts,
    triangle_count,
)
from veduta.compile.model.examples import CRATE, EXAMPLES, MINIMAL, ROBOT, TREE
from veduta.compile.model.meshcheck import edge_report, signed_volume
from veduta.compile.model.transform import cos_sin_deg, rotation_matrix, unit_circle
from veduta.compile.model.types import LodSpec, ModelSpec, PartSpec

REPO = Path(__file__).resolve().parents[3]


def part_corners(m, k, field="position"):
    mp = m.mesh_parts[k]
    return m.vertices[field][m.indices[mp.first : mp.first + mp.count].reshape(-1, 3)]


# --- transforms -------------------------------------------------------------------------------


def test_rotation_order_is_x_then_y_then_z():
    r = rotation_matrix((90.0, 90.0, 0.0))
    # Rx(90) takes +Y to +Z, then Ry(90) takes +Z to +X.
    np.testing.assert_array_equal(r @ [0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    r = rotation_matrix((0.0, 90.0, 90.0))
    # +X: Ry(90) takes it to -Z, Rz leaves -Z alone.
    np.testing.assert_array_equal(r @ [1.0, 0.0, 0.0], [0.0, 0.0, -1.0])
    r = rotation_matrix((30.0, 40.0, 50.0))
    rx, ry, rz = (rotation_matrix(a) for a in ((30.0, 0, 0), (0, 40.0, 0), (0, 0, 50.0)))
    np.testing.assert_allclose(r, rz @ ry @ rx, atol=1e-15)


def test_rotation_moves_a_cone_tip():
    cone = PartSpec(
        0, "lathe", profile=((0.0, 0.0), (0.1, 0.0), (0.0, 1.0)), segments=8, rotation_deg=(90.0, 90.0, 0.0)
    )
    m = build_model(ModelSpec(parts=(cone,)))
    assert m.bounds[1][0] == 1.0  # the tip (0, 1, 0) ends at (1, 0, 0)
    assert m.bounds[0][0] == 0.0


def test_exact_trig():
    assert cos_sin_deg(90.0) == (0.0, 1.0)
    assert cos_sin_deg(-90.0) == (0.0, -1.0)
    assert cos_sin_deg(180.0) == (-1.0, 0.0)
    assert cos_sin_deg(450.0) == (0.0, 1.0)
    c, s = cos_sin_deg(30.0)
    assert c == pytest.approx(np.cos(np.pi / 6)) and s == pytest.approx(0.5)
    uc = unit_circle(16)
    np.testing.assert_array_equal(uc[1:, 1], -uc[1:, 1][::-1])  # sin(-a) == -sin(a) exactly
    np.testing.assert_array_equal(uc[1:, 0], uc[1:, 0][::-1])
    assert uc[4].tolist() == [0.0, 1.0] and uc[8].tolist() == [-1.0, 0.0]


def test_scale_then_rotate_then_translate():
    box = PartSpec(
        0, "box", size=(1.0, 1.0, 1.0), scale=(4.0, 1.0, 1.0), rotation_deg=(0.0, 0.0, 90.0), position=(0.0, 10.0, 0.0)
    )
    m = build_model(ModelSpec(parts=(box,)))
    assert m.bounds == ((-0.5, 8.0, -0.5), (0.5, 12.0, 0.5))


# --- pivot ------------------------------------------------------------------------------------

BOX = PartSpec(0, "box", size=(2.0, 4.0, 6.0), position=(1.0, 2.0, 3.0))


@pytest.mark.parametrize(
    ("pivot", "offset", "bounds"),
    [
        ("origin", (0.0, 0.0, 0.0), ((0.0, 0.0, 0.0), (2.0, 4.0, 6.0))),
        ("center", (-1.0, -2.0, -3.0), ((-1.0, -2.0, -3.0), (1.0, 2.0, 3.0))),
        ("bottom-center", (-1.0, 0.0, -3.0), ((-1.0, 0.0, -3.0), (1.0, 4.0, 3.0))),
    ],
)
def test_pivot(pivot, offset, bounds):
    m = build_model(ModelSpec(pivot=pivot, parts=(BOX,)))
    assert m.pivot_offset == offset
    assert m.bounds == bounds
    pos = m.vertices["position"]
    assert tuple(pos.min(axis=0).tolist()) == bounds[0]
    assert tuple(pos.max(axis=0).tolist()) == bounds[1]


def test_mirror_plane_is_evaluated_before_the_pivot():
    spec = ModelSpec(
        pivot="bottom-center",
        parts=(
            PartSpec(0, "box", size=(1.0, 1.0, 1.0), position=(3.0, 5.0, 0.0)),
            PartSpec(1, "mirror", axis="x", of=0),
        ),
    )
    m = build_model(spec)
    assert m.pivot_offset == (0.0, -4.5, 0.0)
    assert m.bounds == ((-3.5, 0.0, -0.5), (3.5, 1.0, 0.5))


# --- mirrors ----------------------------------------------------------------------------------


def test_robot_mirrors_reflect_exactly():
    m = build_model(ROBOT)
    assert m.pivot_offset[0] == 0.0  # the model is exactly symmetric in x
    flip = np.array([-1.0, 1.0, 1.0], dtype=np.float32)
    for src, dst in ((1, 2), (3, 4)):
        a, b = part_corners(m, src), part_corners(m, dst)
        np.testing.assert_array_equal(b, (a * flip)[:, [0, 2, 1]])
        na, nb = part_corners(m, src, "normal"), part_corners(m, dst, "normal")
        np.testing.assert_array_equal(nb, (na * flip)[:, [0, 2, 1]])
        assert m.parts[dst].of == src and m.parts[dst].shape == "mirror"
        assert m.parts[dst].material == m.parts[src].material  # a mirror inherits the material
        assert m.parts[dst].uv == m.parts[src].uv == m.parts[src].uv
    # The body and the head are themselves symmetric.
    pos = m.vertices["position"]
    for k in (0, 5):
        p = part_corners(m, k).reshape(-1, 3)
        mirrored = p * flip
        assert {tuple(v) for v in mirrored.tolist()} == {tuple(v) for v in p.tolist()}
    assert pos.dtype == np.float32


def test_mirror_of_mirror_and_flip_inheritance():
    spec = ModelSpec(
        parts=(
            PartSpec(
                0,
                "cylinder",
                radius=0.2,
                height=1.0,
                segments=6,
                position=(1.0, 2.0, 3.0),
                flip_normals=True,
                uv="box",
                material="m",
            ),
            PartSpec(1, "mirror", axis="x", of=0),
            PartSpec(2, "mirror", axis="x", of=1),
            PartSpec(3, "mirror", axis="y", of=1, material="other"),
        )
    )
    m = build_model(spec)
    np.testing.assert_array_equal(part_corners(m, 2), part_corners(m, 0))
    np.testing.assert_array_equal(part_corners(m, 2, "uv"), part_corners(m, 0, "uv"))
    for k in range(4):
        assert m.parts[k].flip_normals is True
        assert m.parts[k].uv == "box"
        mp = m.mesh_parts[k]
        idx = m.indices[mp.first : mp.first + mp.count]
        assert signed_volume(m.vertices["position"], idx) < 0
        assert edge_report(m.vertices["position"], idx).watertight_and_consistent
    assert m.materials == ("m", "other")
    assert [p.material for p in m.parts] == [0, 0, 0, 1]
    assert [p.of for p in m.parts] == [-1, 0, 1, 1]


# --- materials, parts, ranges -----------------------------------------------------------------


def test_crate_materials_parts_and_ranges():
    m = build_model(CRATE)
    assert m.materials == ("crate_wood", "")
    assert [p.material for p in m.parts] == [0, 1, 1, 1, 1, 1, 1]
    assert [p.uv for p in m.parts] == ["box", "cylindrical", "spherical", "planar", "box", "cylindrical", "cylindrical"]
    counts = part_triangle_counts(CRATE.parts)
    assert counts == [12, 48, 224, 2, 12, 64, 48]
    first = 0
    for mp, part, n in zip(m.mesh_parts, m.parts, counts, strict=True):
        assert (mp.first, mp.count) == (part.first, part.count) == (first, 3 * n)
        first += 3 * n
    assert m.indices.size == first == 3 * triangle_count(CRATE)
    assert int(m.indices.max()) < len(m.vertices)
    # Vertices of one part are never used by another.
    owners = [set(m.indices[mp.first : mp.first + mp.count].tolist()) for mp in m.mesh_parts]
    for i in range(len(owners)):
        for j in range(i + 1, len(owners)):
            assert not owners[i] & owners[j]
    assert m.bounds[0][1] == 0.0  # bottom-center
    assert (m.smooth_angle_deg, m.symmetry, m.triangle_budget) == (30.0, "", 0)


def test_vertices_unique_within_a_part():
    m = build_model(CRATE)
    for mp in m.mesh_parts:
        used = np.unique(m.indices[mp.first : mp.first + mp.count])
        rows = m.vertices[used].view(np.dtype((np.void, 32)))
        assert len(np.unique(rows)) == len(used)


# --- LOD --------------------------------------------------------------------------------------


def test_tree_lod_counts():
    m = build_model(TREE)
    assert m.triangle_count == 152 == triangle_count(TREE)
    assert lod_triangle_counts(TREE) == [40, None]
    near, far = m.lods
    assert (near.distance, near.model, near.triangle_count) == (15.0, "", 40)
    assert (far.distance, far.model, far.triangle_count, len(far.vertices)) == (35.0, "tree_far", 0, 0)
    assert [mp.material for mp in near.mesh_parts] == [0, 1]
    assert near.mesh_parts[1].first == 3 * 16
    assert m.draw_distance == 80.0


def test_lod_rounding_and_minimums():
    assert [lod_count(16, k, 3) for k in range(5)] == [16, 8, 4, 3, 3]
    assert lod_count(5, 1, 2) == 3  # 2.5 rounds half up
    assert lod_count(6, 2, 2) == 2  # 1.5 -> 2
    assert lod_count(10, 2, 3) == 3  # 2.5 -> 3
    sphere = PartSpec(0, "sphere", radius=1.0, segments=12, rings=6)
    assert (lod_part(sphere, 1).segments, lod_part(sphere, 1).rings) == (6, 3)
    assert (lod_part(sphere, 2).segments, lod_part(sphere, 2).rings) == (3, 2)
    box = PartSpec(0, "box", size=(1.0, 1.0, 1.0))
    assert lod_part(box, 3) is box
    lathe = PartSpec(0, "lathe", profile=((0.0, 0.0), (1.0, 1.0)), segments=9, rings=8)
    assert (lod_part(lathe, 1).segments, lod_part(lathe, 1).rings) == (5, 8)


def test_lod_keeps_pivot_and_levels_after_a_model_level():
    spec = ModelSpec(
        pivot="center",
        lod=(LodSpec(10.0, "other"), LodSpec(20.0)),  # the second level is number 2
        parts=(
            PartSpec(0, "cylinder", radius=1.0, height=1.0, segments=16, position=(0.0, 3.0, 0.0)),
            PartSpec(1, "extrude", profile=((0.0, 0.0), (1.0, 0.0), (0.0, 1.0)), depth=1.0),
            PartSpec(2, "mirror", axis="y", of=0),
        ),
    )
    m = build_model(spec)
    level = m.lods[1]
    assert level.triangle_count == 16 + 8 + 16 == lod_triangle_counts(spec)[1]
    assert m.lods[0].bounds == m.bounds
    # The base pivot offset is used, not recomputed: the extrude is unchanged.
    np.testing.assert_array_equal(part_corners_level(level, 1), part_corners(m, 1))


def part_corners_level(level, k):
    mp = level.mesh_parts[k]
    return level.vertices["position"][level.indices[mp.first : mp.first + mp.count].reshape(-1, 3)]


# --- determinism ------------------------------------------------------------------------------


def digest(m) -> str:
    h = hashlib.sha256()
    for arr in [m.vertices, m.indices] + [x for lv in m.lods for x in (lv.vertices, lv.indices)]:
        h.update(arr.tobytes())
    h.update(repr((m.mesh_parts, m.materials, m.parts, m.pivot_offset, m.bounds)).encode())
    return h.hexdigest()


def test_same_spec_same_bytes():
    for spec in EXAMPLES.values():
        assert digest(build_model(spec)) == digest(build_model(spec))
    assert digest(build_model(MINIMAL)) != digest(build_model(replace(MINIMAL, pivot="center")))


def test_bytes_do_not_depend_on_hash_seed():
    code = (
        "from veduta.compile.model.examples import EXAMPLES\n"
        "from veduta.compile.model.build import build_model\n"
        "import hashlib\n"
        "h = hashlib.sha256()\n"
        "for k in sorted(EXAMPLES):\n"
        "    m = build_model(EXAMPLES[k])\n"
        "    h.update(m.vertices.tobytes() + m.indices.tobytes() + repr(m.materials).encode())\n"
        "print(h.hexdigest())\n"
    )
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
        )
        outs.add(out.stdout)
    assert len(outs) == 1


def test_vertex_dedupe_hash_collision_falls_back(monkeypatch):
    from veduta.compile.model import build as build_module

    normal = build_model(CRATE)
    monkeypatch.setattr(build_module, "_MIX", np.zeros(4, dtype=np.uint64))  # every row collides
    colliding = build_model(CRATE)
    assert digest(colliding) == digest(normal)


def test_cached_part_topology_is_used_only_with_the_positions_it_was_found_with():
    """A shape's edge pairs are cached by its (shared, read-only) triangles together with which
    of its vertices share a position; a part whose vertices coincide otherwise gets its own."""
    from veduta.compile.model import build as build_module
    from veduta.compile.model.normals import edge_pairs
    from veduta.compile.model.shapes import box_mesh

    points, tris = box_mesh((1.0, 2.0, 3.0))
    assert not tris.flags.writeable
    keys = np.ascontiguousarray(points).view(np.uint64).reshape(-1, 3)
    box_canon = build_module._first_equal(keys, np.zeros(len(points), dtype=np.int64))
    assert len(set(box_canon.tolist())) == 8  # 4 vertices a face, 8 corners
    build_module._TOPOLOGY.clear()
    for canon in (box_canon, np.arange(24), box_canon, np.zeros(24, dtype=np.int64)):
        for flip in (False, True):
            got = build_module._parts_edge_pairs(
                [tris, tris], [flip, False], np.concatenate([canon, canon]), [0, 24], [24, 24], np.array([12, 12])
            )
            want = [edge_pairs(canon[tris[:, [0, 2, 1]] if flip else tris]), edge_pairs(canon[tris])]
            want[1] = want[1] + 36
            assert np.array_equal(got, np.concatenate(want, axis=1))
    assert 0 < len(build_module._TOPOLOGY) <= build_module._TOPOLOGY_MAX


def test_part_topology_cache_stays_within_its_byte_bound(monkeypatch):
    from veduta.compile.model import build as build_module

    monkeypatch.setattr(build_module, "_TOPOLOGY_MAX_BYTES", 300_000)
    build_module._TOPOLOGY.clear()
    monkeypatch.setattr(build_module, "_topology_bytes", 0)
    spheres = [
        ModelSpec(name=f"s{n}", parts=(PartSpec(0, "sphere", radius=1.0, segments=n, rings=n // 2),))
        for n in (40, 48, 56, 64, 72, 80)
    ]
    first = [digest(build_model(s)) for s in spheres]
    held = sum(pairs.nbytes + canon.nbytes for _, canon, pairs in build_module._TOPOLOGY.values())
    assert 0 < held <= build_module._topology_bytes <= 300_000
    assert [digest(build_model(s)) for s in spheres] == first  # from the cache or not, the same bytes
