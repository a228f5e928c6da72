"""The model compiler's entry point: source bytes -> MESH record (spec: What the compiler produces).

Stages, each callable alone: `source.validate_model` (load + validate), `build.build_model`
(geometry), `built_to_mesh` (the MESH record), then `veduta.formats.encode`.
"""

from __future__ import annotations

import numpy as np

from veduta.compile import CompileContext
from veduta.formats.mesh import Lod, Mesh, MeshPart, Part

from .build import build_model, build_models, triangle_count
from .source import ModelSource, validate_model
from .types import BuiltModel, ModelSpec

__all__ = ["compile_model", "compile_models", "build_mesh", "built_to_mesh"]


def _mesh_parts(parts) -> list[MeshPart]:
    return [MeshPart(mp.first, mp.count, mp.material) for mp in parts]


def built_to_mesh(built: BuiltModel, pivot: str) -> Mesh:
    """Map a built model onto the MESH fields (container spec, "MESH — compiled model")."""
    return Mesh(
        name=built.name,
        pivot=pivot,
        symmetry=built.symmetry,
        smooth_angle_deg=built.smooth_angle_deg,
        triangle_budget=built.triangle_budget,
        pivot_offset=built.pivot_offset,
        bounds=built.bounds,
        vertices=built.vertices,
        indices=built.indices,
        mesh_parts=_mesh_parts(built.mesh_parts),
        materials=list(built.materials),
        parts=[
            Part(p.index, p.shape, p.first, p.count, built.materials[p.material], p.uv, p.flip_normals, p.of)
            for p in built.parts
        ],
        draw_distance=built.draw_distance,
        lods=[
            Lod(lv.distance, lv.model, lv.bounds, lv.vertices, lv.indices, _mesh_parts(lv.mesh_parts))
            for lv in built.lods
        ],
    )


def build_mesh(spec: ModelSpec) -> Mesh:
    """Build a validated model into its MESH record (pure)."""
    return built_to_mesh(build_model(spec), spec.pivot)


def _finite(mesh: Mesh) -> bool:
    arrays = [mesh.vertices] + [lv.vertices for lv in mesh.lods]
    return all(bool(np.isfinite(a.view(np.float32)).all()) for a in arrays if len(a))


def degenerate_triangles(mesh: Mesh) -> list[tuple[int, int]]:
    """(part index, count) of parts with triangles of zero area in the compiled (float32) mesh."""
    corners = mesh.vertices["position"].astype(np.float64)[mesh.indices.astype(np.int64).reshape(-1, 3)]
    n = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    flat = ~(n != 0).any(axis=1)
    if not flat.any():
        return []
    out = []
    for p in mesh.parts:
        k = int(flat[p.first // 3:(p.first + p.count) // 3].sum())
        if k:
            out.append((p.index, k))
    return out


def compile_model(data: bytes, ctx: CompileContext) -> Mesh | None:
    """Compile a .vmodel source; problems go to ctx.report. None when there are errors."""
    result = compile_models([(data, ctx)])[0]
    if isinstance(result, BaseException):
        raise result
    return result


#: Models with more triangles than this are built alone (batching pays for small ones only).
BATCH_TRIANGLES = 4096


def compile_models(items: list[tuple[bytes, CompileContext]]) -> list[Mesh | None | BaseException]:
    """`compile_model` of several sources, the geometry of the small ones in one numpy batch
    (byte for byte what each compiles to alone).  An exception raised while compiling one
    source (a compiler bug) is returned in its place, so the others still compile."""
    out: list[Mesh | None | BaseException] = [None] * len(items)
    sources: dict[int, tuple[ModelSource, ModelSpec]] = {}
    for i, (data, ctx) in enumerate(items):
        try:
            src = validate_model(data, ctx.report.file, ctx.name)
            ctx.report.items.extend(src.report.items)
            spec = src.spec
            if spec is None:
                continue
            for k, (level, node) in enumerate(zip(spec.lod, src.lod_model_nodes, strict=True)):
                if level.model:
                    ctx.reference("model", level.model, node, f"lod[{k}].model")
        except Exception as exc:  # noqa: BLE001 - returned to the caller, attributed to this source
            out[i] = exc
            continue
        sources[i] = (src, spec)
    small = [i for i, (_, spec) in sources.items() if triangle_count(spec) <= BATCH_TRIANGLES]
    built: dict[int, BuiltModel | BaseException] = {}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        if len(small) > 1:
            try:
                built.update(zip(small, build_models([sources[i][1] for i in small]), strict=True))
            except Exception:  # noqa: BLE001 - built one by one below, to find whose it is
                pass
        for i, (_, spec) in sources.items():
            if i not in built:
                try:
                    built[i] = build_model(spec)
                except Exception as exc:  # noqa: BLE001
                    built[i] = exc
    for i, (src, spec) in sources.items():
        b = built[i]
        out[i] = b if isinstance(b, BaseException) else _checked_mesh(src, spec, b, items[i][1])
    return out


def _checked_mesh(src: ModelSource, spec: ModelSpec, built: BuiltModel, ctx: CompileContext) -> Mesh | None:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        mesh = built_to_mesh(built, spec.pivot)
        if not _finite(mesh):
            ctx.report.error(src.parts_node, "parts", "the geometry does not fit 32-bit floats (a size, position "
                                                      "or scale is too large)")
            return None
        for index, count in degenerate_triangles(mesh):
            ctx.report.warning(src.part_nodes[index], f"parts[{index}]",
                               f"{count} of its triangles have no area in 32-bit floats (too small, or too far "
                               "from the origin for its size)", code="MESH_DEGENERATE")
    return mesh
