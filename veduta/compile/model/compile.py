"""The model compiler's entry point: source bytes -> MESH record (spec: What the compiler produces).

Stages, each callable alone: `source.validate_model` (load + validate), `build.build_model`
(geometry), `built_to_mesh` (the MESH record), then `veduta.formats.encode`.
"""

from __future__ import annotations

import numpy as np

from veduta.compile import CompileContext
from veduta.compile.model.build import build_model, build_models, triangle_count
from veduta.compile.model.source import ModelSource, validate_model
from veduta.compile.model.types import BuiltModel, ModelSpec
from veduta.formats.mesh import Lod, Mesh, MeshPart, Part
from veduta.source.jsonpos import Obj

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


def _finite(meshes: list[Mesh]) -> list[bool]:
    """Whether every float of each mesh's vertices and its levels' is finite (all in one pass)."""
    floats = [
        [np.ascontiguousarray(a).view(np.float32).reshape(-1) for a in [m.vertices] + [lv.vertices for lv in m.lods]]
        for m in meshes
    ]
    every = np.concatenate([a for arrays in floats for a in arrays])
    if np.isfinite(every).all():  # the common case
        return [True] * len(meshes)
    ends = np.cumsum([sum(len(a) for a in arrays) for arrays in floats])
    bad = np.zeros(int(ends[-1]) + 1, dtype=np.int64)
    np.cumsum(~np.isfinite(every), out=bad[1:])
    return (bad[ends] == bad[np.concatenate([[0], ends[:-1]])]).tolist()


#: Triangles checked at once by mesh_checks (bounds its temporaries on a large mesh).
CHECK_TRIANGLES = 1 << 16


def mesh_checks(meshes: list[Mesh]) -> list[tuple[bool, list[tuple[int, int]]]]:
    """For each mesh: whether every float of its vertices and its levels' is finite, and the
    (part index, count) of parts with degenerate triangles (zero area in float32, the corners'
    cross product taken in float64), the triangles of all meshes together (in blocks of
    CHECK_TRIANGLES)."""
    if not meshes:
        return []
    finite = _finite(meshes)
    nt = [len(m.indices) // 3 for m in meshes]
    if len(meshes) == 1:
        positions, tris = meshes[0].vertices["position"], meshes[0].indices.reshape(-1, 3)
    else:
        nv = np.array([len(m.vertices) for m in meshes], dtype=np.int64)
        positions = np.concatenate([m.vertices["position"] for m in meshes])
        tris = np.concatenate([m.indices.astype(np.int64).reshape(-1, 3) for m in meshes])
        tris += np.repeat(np.cumsum(nv) - nv, nt)[:, None]
    flat = np.empty(len(tris), dtype=bool)
    xyz = positions.astype(np.float64).T  # a row per coordinate (exact: float32 -> float64)
    for t0 in range(0, len(tris), CHECK_TRIANGLES):  # blocks: a large mesh's temporaries stay small
        block = tris[t0 : t0 + CHECK_TRIANGLES]
        ax, ay, az = (w[block[:, 0]] for w in xyz)
        ux, uy, uz = (w[block[:, 1]] for w in xyz)
        vx, vy, vz = (w[block[:, 2]] for w in xyz)
        ux -= ax
        uy -= ay
        uz -= az
        vx -= ax
        vy -= ay
        vz -= az
        # the cross product u x v (np.cross's products and differences), zero in every component
        flat[t0 : t0 + CHECK_TRIANGLES] = (uy * vz - uz * vy == 0) & (uz * vx - ux * vz == 0) & (ux * vy - uy * vx == 0)
    out: list[tuple[bool, list[tuple[int, int]]]] = [(ok, []) for ok in finite]
    if not flat.any():
        return out
    running = np.concatenate([[0], np.cumsum(flat)])
    t0 = 0
    for m, k, (_, found) in zip(meshes, nt, out, strict=True):
        if running[t0 + k] > running[t0]:
            for p in m.parts:
                count = int(running[t0 + (p.first + p.count) // 3] - running[t0 + p.first // 3])
                if count:
                    found.append((p.index, count))
        t0 += k
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
            src = validate_model(data, ctx.report.file, ctx.name, located=False)
            ctx.report.items.extend(src.report.items)
            spec = src.spec
            if spec is None:
                continue
            # a part's material is a reference the cooked mesh keeps by name only: a missing one is a
            # warning, and no material is a META dependency (the mesh does not depend on its bytes;
            # the spec's crate names crate_wood with "deps": []); whether each exists goes to the
            # cook's own state (ctx.watch), so that adding or removing one recooks the model
            # (docs/formats/model.md)
            named = [(k, part.material) for k, part in enumerate(spec.parts) if part.material]
            no_material = [k for k, m in named if ctx.index.resolve("material", m) is None]
            if no_material or any(level.model for level in spec.lod):  # reported at its node
                src = src.located()
            for k, material in named:
                node = None
                if k in no_material:
                    part_node = src.part_nodes[k] if k < len(src.part_nodes) else None
                    node = part_node.get("material") if isinstance(part_node, Obj) else None
                ctx.name_reference("material", material, node, f"parts[{k}].material")
            for k, level in enumerate(spec.lod):
                if level.model:  # (src is located then)
                    ctx.reference("model", level.model, src.lod_model_nodes[k], f"lod[{k}].model")
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
    meshes: dict[int, Mesh] = {}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for i, (_, spec) in sources.items():
            b = built[i]
            if isinstance(b, BaseException):
                out[i] = b
            else:
                meshes[i] = built_to_mesh(b, spec.pivot)
        checks = mesh_checks(list(meshes.values())) if meshes else []
    for (i, mesh), (finite, degenerate) in zip(meshes.items(), checks, strict=True):
        out[i] = _report_checks(sources[i][0], mesh, finite, degenerate, items[i][1])
    return out


def _report_checks(
    src: ModelSource, mesh: Mesh, finite: bool, degenerate: list[tuple[int, int]], ctx: CompileContext
) -> Mesh | None:
    """The mesh, or None after reporting that its geometry does not fit float32; warnings for
    parts with degenerate triangles."""
    if not finite:
        ctx.report.error(
            src.located().parts_node,
            "parts",
            "the geometry does not fit 32-bit floats (a size, position or scale is too large)",
        )
        return None
    for index, count in degenerate:
        src = src.located()
        ctx.report.warning(
            src.part_nodes[index],
            f"parts[{index}]",
            f"{count} of its triangles have no area in 32-bit floats (too small, or too far "
            "from the origin for its size)",
            code="MESH_DEGENERATE",
        )
    return mesh
