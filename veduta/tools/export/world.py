"""``veduta export gltf --world WORLD --chunk CX,CZ [--radius N]``: world chunks as binary glTF.

Per chunk (docs/export.md, "World chunks"), one node ``chunk_<x>_<z>`` holding:

* ``<chunk>_ground``: the ground at the chunk's finest drawn level (the drawing model of
  :mod:`veduta.world.draw`: the coarsest grid within 6 cm, flat runs merged into one quad), one
  primitive per biome ground material;
* ``<chunk>_skirts``: the skirts of that level, below every edge that is not straight;
* ``<chunk>_water``: one quad per cell with a corner under water, at the water level;
* one node per entity of the chunk (structures whose footprint touches it, scatter and vegetation
  prefabs, plants), named as the generator names them, placed, rotated and scaled as it puts them
  (a child entity under its parent), every use of a model sharing one glTF mesh (its full detail
  level; an entity's material, when set, replaces the model's and makes a mesh of its own).

With ``levels``, each chunk's ground and skirts are at the level the engine draws them from a
view of the centre chunk (:func:`veduta.world.draw.chunk_levels`) instead of its finest.

Vertex positions are world metres; ground, skirts and water have no node transform. Ground
normals are the area-weighted average of the faces around each vertex of the chunk; UVs are
metres (u = x, v = z on ground and water; along the edge and down on skirts), so a tiling texture
repeats every metre as on a model.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from veduta.base.errors import UsageError
from veduta.formats.mesh import VERTEX_DTYPE
from veduta.tools.export import glb
from veduta.tools.export.cooked import GLTF, Cooked
from veduta.tools.export.gltf import GENERATOR, Materials, _write, add_mesh, short
from veduta.world.entities import chunk_entities

#: the stand-in for the engine's built-in water (terrain water "")
BUILTIN_WATER = "water (built-in)"


class _Part:
    """A mesh part for :func:`add_mesh`: an index range and a material slot."""

    def __init__(self, first: int, count: int, material: int):
        self.first, self.count, self.material = first, count, material


def _vertices(pos: np.ndarray, nrm: np.ndarray, uv: np.ndarray) -> np.ndarray:
    v = np.zeros(len(pos), VERTEX_DTYPE)
    v["position"], v["normal"], v["uv"] = pos, nrm, uv
    return v


def _smooth_normals(pos: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Per-vertex normals: the sum of the faces' (area-weighted) normals around each vertex."""
    a, b, c = pos[tris[:, 0]], pos[tris[:, 1]], pos[tris[:, 2]]
    face = np.cross(b - a, c - a)
    n = np.zeros_like(pos)
    for k in range(3):
        np.add.at(n, tris[:, k], face)
    length = np.linalg.norm(n, axis=1)
    n[length == 0] = (0.0, 1.0, 0.0)
    length[length == 0] = 1.0
    return n / length[:, None]


def _grouped(tris: np.ndarray, slots: np.ndarray) -> tuple[np.ndarray, list[_Part]]:
    """Triangles sorted by material slot (stable) and one part per slot."""
    order = np.argsort(slots, kind="stable")
    tris, slots = tris[order], slots[order]
    parts = []
    for s in np.unique(slots):
        at = np.flatnonzero(slots == s)
        parts.append(_Part(int(at[0]) * 3, len(at) * 3, int(s)))
    return tris.reshape(-1), parts


def _quaternion(rx: float, ry: float, rz: float) -> list[float]:
    """The unit quaternion [x, y, z, w] of R = Rz . Ry . Rx (model.md, rotation order)."""

    def axis(deg: float, i: int) -> np.ndarray:
        h = math.radians(deg) / 2
        q = np.zeros(4)
        q[i], q[3] = math.sin(h), math.cos(h)
        return q

    def mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:  # Hamilton product, [x, y, z, w]
        x1, y1, z1, w1 = p
        x2, y2, z2, w2 = q
        return np.array(
            [
                w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
                w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            ]
        )

    q = mul(mul(axis(rz, 2), axis(ry, 1)), axis(rx, 0))
    q /= np.linalg.norm(q)
    if q[3] < 0:
        q = -q
    return [0.0 if abs(v) < 1e-15 else float(v) for v in q]  # no -0.0 or 6e-17 for a right angle


class _WorldExport:
    def __init__(self, project, world_name: str):
        from veduta.world.generator import Generator
        from veduta.world.params import prefab_names

        self.cooked = Cooked(project, finite=GLTF)
        self.world = self.cooked.require("world", world_name)
        prefabs = {}
        for n in prefab_names(self.world):
            rec = self.cooked.get("prefab", n, f"world {world_name}")
            if rec is not None:
                prefabs[n] = rec
        self.gen = Generator(self.world, prefabs)
        self.g = glb.Gltf(GENERATOR)
        self.mats = Materials(self.g, self.cooked)
        self.model_meshes: dict[tuple[str, str], tuple[int | None, int]] = {}
        self.instances: dict[str, int] = {}
        self.mesh_triangles: dict[int, int] = {}
        self.drawn = 0

    # -- ground, skirts, water -----------------------------------------------------------------

    def ground(self, cx: int, cz: int, name: str, level: int = 0) -> tuple[int | None, int, int]:
        from veduta.world.draw import ground_mesh

        m = ground_mesh(self.gen, cx, cz, level)
        pos, tris = np.asarray(m["vertices"], np.float64), np.asarray(m["triangles"], np.int64)
        grounds = list(self.gen.p.biome_grounds)
        flat, parts = _grouped(tris, np.asarray(m["biomes"], np.int64))
        verts = _vertices(pos, _smooth_normals(pos, tris), pos[:, [0, 2]])
        return self._mesh(name, verts, flat, parts, grounds), len(tris), int(m["grid"])

    def skirts(self, cx: int, cz: int, name: str, level: int = 0) -> tuple[int | None, int]:
        from veduta.world.draw import chunk_ground, skirt_mesh

        m = skirt_mesh(self.gen, cx, cz, level)
        pos, tris = np.asarray(m["vertices"], np.float64), np.asarray(m["triangles"], np.int64)
        if not len(tris):
            return None, 0
        # each triangle takes the ground material of the chunk cell along its edge
        cg = chunk_ground(self.gen, cx, cz)
        c, cell = self.gen.p.chunk, self.gen.p.cell_mm / 1000.0
        centre = pos[tris].mean(axis=1)
        i = np.clip(np.floor(centre[:, 0] / cell).astype(np.int64) - cx * c, 0, c - 1)
        j = np.clip(np.floor(centre[:, 2] / cell).astype(np.int64) - cz * c, 0, c - 1)
        flat, parts = _grouped(tris, np.asarray(cg.biome)[j, i].astype(np.int64))
        uv = np.stack([pos[:, 0] + pos[:, 2], -pos[:, 1]], axis=1)
        verts = _vertices(pos, _smooth_normals(pos, tris), uv)
        return self._mesh(name, verts, flat, parts, list(self.gen.p.biome_grounds)), len(tris)

    def water(self, cx: int, cz: int, name: str) -> tuple[int | None, int]:
        from veduta.world.draw import water_mesh

        m = water_mesh(self.gen, cx, cz)
        pos, tris = np.asarray(m["vertices"], np.float64), np.asarray(m["triangles"], np.int64)
        if not len(tris):
            return None, 0
        nrm = np.zeros_like(pos)
        nrm[:, 1] = 1.0
        material = self.world.terrain.water or BUILTIN_WATER
        verts = _vertices(pos, nrm, pos[:, [0, 2]])
        return self._mesh(name, verts, tris.reshape(-1), [_Part(0, tris.size, 0)], [material]), len(tris)

    def _mesh(self, name, verts, indices, parts, materials) -> int | None:
        if materials == [BUILTIN_WATER]:
            self.mats.builtin(BUILTIN_WATER, (0.25, 0.5, 0.8, 0.7))
        m = add_mesh(self.g, self.mats, name, verts, indices, parts, materials, used_by=f"world {self.world.name}")
        if m is not None:
            self.mesh_triangles[m] = len(indices) // 3
        return m

    # -- entities ------------------------------------------------------------------------------

    def model_mesh(self, model: str, material: str, entity: str) -> int | None:
        key = (model, material)
        if key not in self.model_meshes:
            rec = self.cooked.get("model", model, f"entity {entity}") if model else None
            m = None
            if rec is not None:
                name = model if not material else f"{model}__{material}"
                m = add_mesh(
                    self.g,
                    self.mats,
                    name,
                    rec.vertices,
                    rec.indices,
                    rec.mesh_parts,
                    list(rec.materials or []),
                    override=material,
                )
                if m is not None:
                    self.mesh_triangles[m] = len(rec.indices) // 3
            self.model_meshes[key] = (m, 0)
        m, uses = self.model_meshes[key]
        self.model_meshes[key] = (m, uses + 1)
        return m

    def entity_nodes(self, entities: list[dict]) -> list[int]:
        """Nodes of new entities (a structure seen from an earlier chunk is not repeated); the
        roots among them, in the generator's order."""
        new = [e for e in entities if e["name"] not in self.instances]
        for e in new:
            node: dict[str, Any] = {"name": e["name"]}
            if e["model"] and e["visible"]:
                m = self.model_mesh(e["model"], e["material"], e["name"])
                if m is not None:
                    node["mesh"] = m
                    self.drawn += self.mesh_triangles[m]
            rot = _quaternion(*e["rotation_deg"])
            if any(e["position"]):
                node["translation"] = [float(v) for v in e["position"]]
            if rot != [0.0, 0.0, 0.0, 1.0]:
                node["rotation"] = rot
            if list(e["scale"]) != [1.0, 1.0, 1.0]:
                node["scale"] = [float(v) for v in e["scale"]]
            extras: dict[str, Any] = {"kind": e["kind"], "source": e["source"]}
            if e["model"]:
                extras["model"] = e["model"]
            if e["material"]:
                extras["material"] = e["material"]
            if e["tags"]:
                extras["tags"] = e["tags"]
            if not e["visible"]:
                extras["visible"] = False
            node["extras"] = {"veduta": extras}
            self.instances[e["name"]] = self.g.add("nodes", node)
        roots = []
        for e in new:
            parent = e["parent"]
            if parent and parent in self.instances:
                pnode = self.g.lists["nodes"][self.instances[parent]]
                pnode.setdefault("children", []).append(self.instances[e["name"]])
            else:
                roots.append(self.instances[e["name"]])
        return roots


def export_chunk(
    project, world: str, chunk: tuple[int, int], out: str, radius: int = 0, levels: bool = False
) -> dict[str, Any]:
    """Write the chunks within *radius* of *chunk* of world *world* as GLB to *out*; the summary.

    With *levels*, each chunk's ground and skirts are at the level the engine draws them with the
    world's camera around the centre cell of *chunk* (:func:`veduta.world.draw.chunk_levels`),
    instead of all at the finest drawn level."""
    from veduta.world.draw import chunk_levels, lod_distance
    from veduta.world.generator import chunk_name

    if not 0 <= radius <= 4:
        raise UsageError(f"radius {radius} out of range [0, 4]")
    x = _WorldExport(project, world)
    n = x.world.extent
    cx, cz = chunk
    if not (-n <= cx < n and -n <= cz < n):
        # a chunk the world does not have is the caller's mistake (exit 2), as a --lod a model does
        # not have, or preview world's start cell outside the world
        raise UsageError(f"chunk {cx},{cz} is outside world {world} (chunks {-n}..{n - 1} on each axis)")
    chunks = [
        (cx + dx, cz + dz)
        for dz in range(-radius, radius + 1)
        for dx in range(-radius, radius + 1)
        if -n <= cx + dx < n and -n <= cz + dz < n
    ]
    c = x.gen.p.chunk
    focus = (cx * c + c // 2, cz * c + c // 2)  # as inspect world's view "chunk CX,CZ"
    picked = chunk_levels(x.gen, chunks, focus) if levels else [(0, 0.0)] * len(chunks)
    roots, summary = [], []
    totals = {"ground": 0, "skirts": 0, "water": 0}
    for ch, (level, dist) in zip(chunks, picked, strict=True):
        base = chunk_name(*ch)
        children = []
        g_mesh, g_tris, grid = x.ground(*ch, f"{base}_ground", level)
        s_mesh, s_tris = x.skirts(*ch, f"{base}_skirts", level)
        w_mesh, w_tris = x.water(*ch, f"{base}_water")
        for what, m in (("ground", g_mesh), ("skirts", s_mesh), ("water", w_mesh)):
            if m is not None:
                children.append(x.g.add("nodes", {"name": f"{base}_{what}", "mesh": m}))
        before = len(x.instances)
        children += x.entity_nodes(chunk_entities(x.gen, *ch))
        totals["ground"] += g_tris
        totals["skirts"] += s_tris
        totals["water"] += w_tris
        extras: dict[str, Any] = {"chunk": list(ch), "grid": grid}
        row: dict[str, Any] = {"chunk": list(ch), "name": base, "grid": grid}
        if levels:
            extras["level"] = row["level"] = level
            row["distance_m"] = round(dist, 3)
        roots.append(x.g.add("nodes", {"name": base, "children": children, "extras": {"veduta": extras}}))
        summary.append(
            row
            | {
                "ground_triangles": g_tris,
                "skirt_triangles": s_tris,
                "water_triangles": w_tris,
                "entities": len(x.instances) - before,
            }
        )
    x.g.add("scenes", {"name": f"{world} {chunk_name(cx, cz)}", "nodes": roots})
    data = x.g.glb()
    _write(out, data)
    meshes = []
    for (model, material), (m, uses) in sorted(x.model_meshes.items()):
        if m is not None:
            b = x.g.lists["accessors"][x.g.lists["meshes"][m]["primitives"][0]["attributes"]["POSITION"]]
            meshes.append(
                {
                    "name": x.g.lists["meshes"][m]["name"],
                    "model": model,
                    "material": material,
                    "triangles": x.mesh_triangles[m],
                    "instances": uses,
                    "bounds": [[short(v) for v in b["min"]], [short(v) for v in b["max"]]],
                }
            )
    drawn = totals["ground"] + totals["skirts"] + totals["water"] + x.drawn
    return {
        "out": out,
        "bytes": len(data),
        "world": world,
        "chunk": [cx, cz],
        "radius": radius,
        **({"levels": {"focus": list(focus), "lod_distance": lod_distance(x.gen)}} if levels else {}),
        "chunks": summary,
        "nodes": len(x.g.lists["nodes"]),
        "entities": len(x.instances),
        "meshes": meshes,
        "ground_triangles": totals["ground"],
        "skirt_triangles": totals["skirts"],
        "water_triangles": totals["water"],
        "triangles": drawn,
        "materials": list(x.mats.names),
        "textures": list(x.mats.texture_names),
        "findings": x.cooked.findings,
        "messages": x.cooked.messages,
    }
