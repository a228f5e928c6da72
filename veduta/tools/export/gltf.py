"""``veduta export gltf``: binary glTF 2.0 of a cooked model, or of a chunk of a world.

The writer is :mod:`veduta.tools.export.glb`, about a hundred lines over numpy and the standard
library: GLB is one JSON chunk and one binary chunk, and the cooked vertex layout (vec3 position,
vec3 normal, vec2 uv, 32 bytes, little-endian) is already a glTF interleaved buffer view, so the
cooked vertex bytes go into the file unchanged. A library (pygltflib, trimesh) would add a
dependency and a second copy of every array for no gain, and would make the byte order of the
JSON its choice, not ours.

What a model becomes (docs/export.md):

* one glTF mesh per level of detail, named ``<model>`` for the full model and ``<model>_lod<k>``
  for level k (k = 1 for the first level, as ``inspect model`` counts); a level that names another
  model (``"model": "tree_far"``) is that model's cooked mesh;
* one primitive per material slot, in the MESH's material order, holding the triangles of every
  mesh part with that material in their cooked order; all primitives of a mesh share the cooked
  vertex buffer (POSITION, NORMAL, TEXCOORD_0, exactly as cooked: the pivot is already applied);
* a PBR material per ``.vmaterial``: albedo (sRGB, converted to linear) as base colour factor, the
  texture's level 0 embedded as PNG with a sampler from the material's filter and the texture's
  wrap, alpha opaque/blend/cutout as OPAQUE/BLEND/MASK with the cutoff, ``cull: none`` as
  doubleSided, ``unlit`` as KHR_materials_unlit; metallic 0, roughness 1;
* one node per level: the full model at the origin, each further level beside it along +X, so a
  viewer shows them side by side (``--lod K`` writes level K alone, at the origin).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from veduta import __version__
from veduta.base.errors import UsageError, VedutaError
from veduta.formats.mesh import VERTEX_DTYPE
from veduta.tools.export import glb
from veduta.tools.export.cooked import GLTF, Cooked

GENERATOR = f"veduta cook {__version__}"
_ALPHA = {"opaque": "OPAQUE", "blend": "BLEND", "cutout": "MASK"}


def f32(v: float) -> float:
    """A float32 value as the double it is exactly (JSON round-trips it to the same f32)."""
    return float(np.float32(v))


def srgb_to_linear(byte: int) -> float:
    """IEC 61966-2-1 decoding of one 8-bit channel, rounded to 7 decimals."""
    c = byte / 255.0
    lin = c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return round(lin, 7)


def _png(rgba: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgba, np.uint8), "RGBA").save(buf, format="PNG", optimize=False)
    return buf.getvalue()


class Materials:
    """glTF materials (and their textures) by material name, made once each."""

    def __init__(self, g: glb.Gltf, cooked: Cooked):
        self.g = g
        self.cooked = cooked
        self._materials: dict[str, int | None] = {}
        self._textures: dict[tuple[str, int], int | None] = {}
        self.names: list[str] = []
        self.texture_names: list[str] = []

    def index(self, name: str, used_by: str) -> int | None:
        """The glTF material of material *name* ("" is the engine's default: no glTF material)."""
        if not name:
            return None
        if name not in self._materials:
            rec = self.cooked.get("material", name, used_by)
            self._materials[name] = self._make(name, rec)
            self.names.append(name)
        return self._materials[name]

    def builtin(self, name: str, rgba: tuple[float, float, float, float]) -> None:
        """A material the engine has built in (linear RGBA, blended when alpha < 1)."""
        if name not in self._materials:
            m: dict[str, Any] = {
                "name": name,
                "pbrMetallicRoughness": {"baseColorFactor": list(rgba), "metallicFactor": 0.0, "roughnessFactor": 1.0},
            }
            if rgba[3] < 1:
                m["alphaMode"] = "BLEND"
            self._materials[name] = self.g.add("materials", m)
            self.names.append(name)

    def _make(self, name: str, rec) -> int:
        if rec is None:  # missing or broken: a plain white stand-in keeps the primitive visible
            return self.g.add(
                "materials",
                {
                    "name": name,
                    "pbrMetallicRoughness": {
                        "baseColorFactor": [1.0, 1.0, 1.0, 1.0],
                        "metallicFactor": 0.0,
                        "roughnessFactor": 1.0,
                    },
                    "extras": {"veduta": {"missing": True}},
                },
            )
        a = rec.albedo
        pbr: dict[str, Any] = {
            "baseColorFactor": [
                srgb_to_linear((a >> 16) & 0xFF),
                srgb_to_linear((a >> 8) & 0xFF),
                srgb_to_linear(a & 0xFF),
                round(((a >> 24) & 0xFF) / 255.0, 7),
            ]
        }
        if rec.texture:
            t = self._texture(rec.texture, rec.filter, f"material {name}")
            if t is not None:
                pbr["baseColorTexture"] = {"index": t}
        pbr["metallicFactor"] = 0.0
        pbr["roughnessFactor"] = 1.0
        m: dict[str, Any] = {"name": name, "pbrMetallicRoughness": pbr}
        mode = _ALPHA[rec.alpha]
        if mode != "OPAQUE":
            m["alphaMode"] = mode
        if mode == "MASK":
            m["alphaCutoff"] = f32(rec.cutoff)
        if rec.cull == 1:
            m["doubleSided"] = True
        if rec.unlit:
            self.g.use_extension("KHR_materials_unlit")
            m["extensions"] = {"KHR_materials_unlit": {}}
        cols, rows = rec.grid
        if cols and rows:
            m["extras"] = {"veduta": {"grid": [int(cols), int(rows)]}}
        return self.g.add("materials", m)

    def _texture(self, name: str, filter_: int, used_by: str) -> int | None:
        key = (name, filter_)
        if key in self._textures:
            return self._textures[key]
        from veduta.compile.image import unpack_argb

        tex = self.cooked.get("texture", name, used_by)
        index = None
        if tex is not None and tex.images:
            if name not in self.texture_names:
                self.texture_names.append(name)
            image = self._image(name, unpack_argb(np.asarray(tex.images[0])))
            mips = len(tex.images) > 1
            if filter_ == 1:
                mag, min_ = glb.NEAREST, glb.NEAREST_MIPMAP_NEAREST if mips else glb.NEAREST
            else:
                mag, min_ = glb.LINEAR, glb.LINEAR_MIPMAP_LINEAR if mips else glb.LINEAR
            sampler = self.g.sampler(mag, min_, glb.CLAMP_TO_EDGE if tex.wrap else glb.REPEAT)
            index = self.g.add("textures", {"name": name, "sampler": sampler, "source": image})
        self._textures[key] = index
        return index

    def _image(self, name: str, rgba: np.ndarray) -> int:
        for i, im in enumerate(self.g.lists["images"]):
            if im["name"] == name:
                return i
        view = self.g.view(_png(rgba))
        return self.g.add("images", {"name": name, "mimeType": "image/png", "bufferView": view})


def add_mesh(
    g: glb.Gltf,
    mats: Materials,
    name: str,
    vertices: np.ndarray,
    indices: np.ndarray,
    mesh_parts: Sequence,
    materials: Sequence[str],
    override: str = "",
    used_by: str = "",
) -> int | None:
    """A glTF mesh of cooked geometry: one primitive per material slot sharing the cooked
    vertex bytes. *override* (an entity's material) replaces every slot. None without triangles."""
    indices = np.asarray(indices, "<u4")
    if not len(indices) or not len(vertices):
        return None
    verts = np.ascontiguousarray(vertices, VERTEX_DTYPE)
    view = g.view(verts.tobytes(), glb.ARRAY_BUFFER, stride=VERTEX_DTYPE.itemsize)
    pos = verts["position"]
    bounds = ([f32(v) for v in pos.min(axis=0)], [f32(v) for v in pos.max(axis=0)])
    attrs = {
        "POSITION": g.accessor(view, 0, glb.FLOAT, len(verts), "VEC3", bounds),
        "NORMAL": g.accessor(view, 12, glb.FLOAT, len(verts), "VEC3"),
        "TEXCOORD_0": g.accessor(view, 24, glb.FLOAT, len(verts), "VEC2"),
    }
    groups: dict[int, list[np.ndarray]] = {}
    for mp in mesh_parts or ():
        groups.setdefault(int(mp.material), []).append(indices[mp.first : mp.first + mp.count])
    if not groups:  # no mesh parts: every triangle in the first slot
        groups[0] = [indices]
    prims = []
    for slot in sorted(groups):
        idx = np.concatenate(groups[slot])
        if not len(idx):
            continue
        prim: dict[str, Any] = {"attributes": attrs, "indices": g.indices(idx)}
        mname = override or (materials[slot] if slot < len(materials) else "")
        m = mats.index(mname, used_by or f"model {name}")
        if m is not None:
            prim["material"] = m
        prim["mode"] = 4
        prims.append(prim)
    if not prims:
        return None
    return g.add("meshes", {"name": name, "primitives": prims})


def short(v: float) -> float:
    """A float32 value as its shortest decimal (0.7, not 0.699999988079071), for summaries."""
    return float(str(np.float32(v)))


def _bounds(aabb) -> list[list[float]]:
    return [[f32(v) for v in aabb[0]], [f32(v) for v in aabb[1]]]


def model_levels(cooked: Cooked, mesh, name: str) -> list[dict[str, Any]]:
    """The drawable levels of a cooked MESH: level 0 (the model itself) and one per lod entry,
    each {level, name, distance, model, vertices, indices, mesh_parts, materials, bounds,
    triangles}. A level naming a model that is missing or broken is left out (a warning)."""
    levels = [
        {
            "level": 0,
            "name": name,
            "distance": 0.0,
            "model": "",
            "vertices": mesh.vertices,
            "indices": mesh.indices,
            "mesh_parts": mesh.mesh_parts,
            "materials": list(mesh.materials or []),
            "bounds": mesh.bounds,
        }
    ]
    for k, lod in enumerate(mesh.lods or [], start=1):
        lv = {"level": k, "name": f"{name}_lod{k}", "distance": f32(lod.distance), "model": lod.model}
        if lod.model:
            other = cooked.get("model", lod.model, f"level {k} of model {name}")
            if other is None:
                continue
            lv.update(
                vertices=other.vertices,
                indices=other.indices,
                mesh_parts=other.mesh_parts,
                materials=list(other.materials or []),
                bounds=other.bounds,
            )
        else:
            lv.update(
                vertices=lod.vertices,
                indices=lod.indices,
                mesh_parts=lod.mesh_parts,
                materials=list(mesh.materials or []),
                bounds=lod.bounds,
            )
        levels.append(lv)
    for lv in levels:
        lv["triangles"] = len(lv["indices"]) // 3
    return levels


def export_model(project, name: str, out: str, lod: int | None = None) -> dict[str, Any]:
    """Write model *name* (all its levels, or level *lod*) as GLB to *out*; the summary."""
    cooked = Cooked(project, finite=GLTF)
    mesh = cooked.require("model", name)
    levels = model_levels(cooked, mesh, name)
    if lod is not None:
        count = len(mesh.lods or []) + 1
        if not 0 <= lod < count:
            raise UsageError(
                f"model {name} has levels 0..{count - 1} (0 is the full model); --lod {lod} is not one of them"
            )
        levels = [lv for lv in levels if lv["level"] == lod]
        if not levels:
            raise VedutaError(f"level {lod} of model {name} cannot be exported ({cooked.findings[-1]['message']})")
    g = glb.Gltf(GENERATOR)
    mats = Materials(g, cooked)
    roots = []
    summary_meshes = []
    x = None
    for lv in levels:
        m = add_mesh(g, mats, lv["name"], lv["vertices"], lv["indices"], lv["mesh_parts"], lv["materials"])
        lo, hi = _bounds(lv["bounds"])
        node: dict[str, Any] = {"name": lv["name"]}
        if m is not None:
            node["mesh"] = m
        if x is None:  # the first level written stays where it was cooked
            x = hi[0]
            gap = max(0.5, 0.25 * (hi[0] - lo[0]))
        else:
            tx = x + gap - lo[0]
            node["translation"] = [f32(tx), 0.0, 0.0]
            x = tx + hi[0]
        extras: dict[str, Any] = {"level": lv["level"]}
        if lv["level"]:
            extras["distance"] = lv["distance"]
        if lv["model"]:
            extras["model"] = lv["model"]
        if lv["level"] == 0:
            extras.update(pivot=mesh.pivot, pivot_offset=[f32(v) for v in mesh.pivot_offset])
            if mesh.draw_distance:
                extras["draw_distance"] = f32(mesh.draw_distance)
        node["extras"] = {"veduta": extras}
        roots.append(g.add("nodes", node))
        summary_meshes.append(
            {
                "name": lv["name"],
                "level": lv["level"],
                "model": lv["model"] or name,
                "triangles": lv["triangles"],
                "primitives": 0 if m is None else len(g.lists["meshes"][m]["primitives"]),
                "bounds": [[short(v) for v in lo], [short(v) for v in hi]],
            }
        )
    g.add("scenes", {"name": name, "nodes": roots})
    data = g.glb()
    _write(out, data)
    return {
        "out": out,
        "bytes": len(data),
        "model": name,
        "meshes": summary_meshes,
        "triangles": sum(m["triangles"] for m in summary_meshes),
        "materials": list(mats.names),
        "textures": list(mats.texture_names),
        "findings": cooked.findings,
        "messages": cooked.messages,
    }


def _write(out: str, data: bytes) -> None:
    """Write an export or a preview: the rule of every output (:func:`veduta.base.fsutil.write_output`)."""
    from veduta.base.fsutil import write_output

    write_output(out, data)
