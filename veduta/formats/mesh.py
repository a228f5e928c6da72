"""MESH: compiled model (container spec, "MESH — compiled model")."""

from __future__ import annotations

import numpy as np

from veduta.formats.codec import AABB, BOOL, F32, I64, STR, VEC3, Array, List, Struct, StructType

#: vertex = vec3 position, vec3 normal, vec2 uv (32 bytes), little-endian.
VERTEX_DTYPE = np.dtype([("position", "<f4", (3,)), ("normal", "<f4", (3,)), ("uv", "<f4", (2,))])
INDEX_DTYPE = np.dtype("<u4")

VERTICES = Array(VERTEX_DTYPE, "list<vertex>", summary=64)
INDICES = Array(INDEX_DTYPE, "list<u32>", summary=192)


class MeshPart(Struct):
    FIELDS = (("first", I64), ("count", I64), ("material", I64))


class Part(Struct):
    FIELDS = (
        ("index", I64),
        ("shape", STR),
        ("first", I64),
        ("count", I64),
        ("material", STR),
        ("uv", STR),
        ("flip_normals", BOOL),
        ("of", I64),
    )


class Lod(Struct):
    FIELDS = (
        ("distance", F32),
        ("model", STR),
        ("bounds", AABB),
        ("vertices", VERTICES),
        ("indices", INDICES),
        ("mesh_parts", List(StructType(MeshPart))),
    )


def _check_geometry(fail, vertices, indices, mesh_parts, nmaterials, prefix=""):
    n = len(indices)
    if n % 3:
        raise fail(prefix + "indices", f"index count {n} is not a multiple of 3")
    if n and int(indices.max()) >= len(vertices):
        bad = int(np.argmax(indices >= len(vertices)))
        raise fail(
            prefix + "indices", f"index {bad} is {int(indices[bad])}, not below the vertex count {len(vertices)}"
        )
    for i, mp in enumerate(mesh_parts or []):
        if mp.first < 0 or mp.count < 0 or mp.first + mp.count > n or mp.count % 3:
            raise fail(
                prefix + "mesh_parts",
                f"mesh part {i} range [{mp.first}, +{mp.count}) is not within the {n} indices in whole triangles",
            )
        if not (0 <= mp.material < nmaterials or (nmaterials == 0 and mp.material == 0)):
            raise fail(
                prefix + "mesh_parts",
                f"mesh part {i} material {mp.material} is not an index into {nmaterials} materials",
            )


class Mesh(Struct):
    CHUNK = "MESH"
    FIELDS = (
        ("name", STR),
        ("pivot", STR),
        ("symmetry", STR),
        ("smooth_angle_deg", F32),
        ("triangle_budget", I64),
        ("pivot_offset", VEC3),
        ("bounds", AABB),
        ("vertices", VERTICES),
        ("indices", INDICES),
        ("mesh_parts", List(StructType(MeshPart))),
        ("materials", List(STR)),
        ("parts", List(StructType(Part))),
        ("draw_distance", F32),
        ("lods", List(StructType(Lod))),
    )

    def check(self, fail):
        nmat = len(self.materials or [])
        _check_geometry(fail, self.vertices, self.indices, self.mesh_parts, nmat)
        n = len(self.indices)
        for i, p in enumerate(self.parts or []):
            if p.first < 0 or p.count < 0 or p.first + p.count > n or p.count % 3:
                raise fail(
                    "parts", f"part {i} range [{p.first}, +{p.count}) is not within the {n} indices in whole triangles"
                )
            if p.of < -1:
                raise fail("parts", f"part {i} of is {p.of}, below -1")
        if not self.draw_distance >= 0:
            raise fail("draw_distance", f"{self.draw_distance} is below 0")
        prev = None
        nparts = len(self.mesh_parts or [])
        for k, lod in enumerate(self.lods or []):
            if not 0 <= lod.distance < float("inf"):
                raise fail("lods", f"level {k} distance {lod.distance} is not a finite distance >= 0")
            if prev is not None and not lod.distance > prev:
                raise fail("lods", f"level {k} distance {lod.distance} does not increase (previous {prev})")
            prev = lod.distance
            mps = lod.mesh_parts or []
            if lod.model:
                if mps or len(lod.vertices) or len(lod.indices):
                    raise fail("lods", f"level {k} names model {lod.model!r} but has its own geometry")
            elif len(mps) != nparts:
                raise fail("lods", f"level {k} has {len(mps)} mesh parts, the base mesh {nparts}")
            else:
                _check_geometry(
                    lambda f, m, k=k: fail("lods", f"level {k} {f}: {m}"), lod.vertices, lod.indices, mps, nmat
                )

    @property
    def triangles(self) -> int:
        return len(self.indices) // 3
