"""Inspect a model (`veduta inspect model NAME [--json]`): triangle counts, levels of detail and findings.

`inspect_model(project, name)` returns a plain dict (what `--json` prints). Findings carry stable
codes and a severity, most severe first (error, then warning, then note; discovery order within
one severity):

=========================  ========  ============================================================
code                       severity  meaning
=========================  ========  ============================================================
MESH_LOD_MISSING_MODEL     error     a lod level names a model that does not exist
MESH_LOD_INVALID_MODEL     error     a lod level names a model whose source has errors
MESH_OVER_BUDGET           error     more triangles than triangle_budget (when it is > 0)
MESH_ASYMMETRIC            error     symmetry is set but some vertex positions have no mirror image
MESH_LOD_NO_GAIN           warning   a level draws no fewer triangles than the level before it
MESH_LOD_NEVER_DRAWN       warning   a level starts at or beyond draw_distance
MESH_DEGENERATE            warning   triangles without area (corners collapsed in 32-bit floats)
MESH_OPEN_EDGES            warning   a closed shape's part is not watertight after compilation
=========================  ========  ============================================================

Exit status of the command: 2 when the model does not exist or its source has errors (printed in
the standard `<file>:<line>:<col>: <path>: <message>` format), 1 when an error finding exists,
else 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veduta.base.findings import SEVERITY_ORDER, ranked, source_errors
from veduta.base.project import Project
from veduta.compile.model.build import build_model, triangle_count
from veduta.compile.model.meshcheck import edge_report
from veduta.compile.model.source import validate_model
from veduta.compile.model.types import BuiltModel, ModelSpec, PartSpec

__all__ = ["inspect_model", "inspect_built", "exit_status", "mirror_mismatch", "SEVERITY_ORDER", "SYMMETRY_TOLERANCE"]

ERROR, WARNING = "error", "warning"

#: Mirror images may differ by this fraction of the model's largest bounds extent.
SYMMETRY_TOLERANCE = 1e-5

_AXIS = {"x": 0, "y": 1, "z": 2}


def _f32(v: float) -> float:
    """A float32 value as its shortest decimal (0.7, not 0.699999988079071)."""
    return float(str(np.float32(v)))


def _vec(v) -> list[float]:
    return [_f32(x) for x in v]


def _finding(code: str, severity: str, message: str, path: str = "", part: int | None = None) -> dict:
    f: dict[str, Any] = {"code": code, "severity": severity, "message": message}
    if path:
        f["path"] = path
    if part is not None:
        f["part"] = part
    return f


def fmt_number(v: float) -> str:
    v = _f32(v)
    return str(int(v)) if v.is_integer() else repr(v)


# --- geometry checks --------------------------------------------------------------------------


def _vertex_parts(built: BuiltModel) -> np.ndarray:
    """(n,) the part index of every vertex (vertices are never shared between parts)."""
    owner = np.full(len(built.vertices), -1, dtype=np.int64)
    for p in built.parts:
        owner[built.indices[p.first : p.first + p.count]] = p.index
    return owner


def mirror_mismatch(positions: np.ndarray, axis: str, tol: float) -> np.ndarray:
    """(n,) bool: positions ((n, 3)) with no position within about `tol` of their mirror image
    across the plane through the origin perpendicular to `axis`.

    Grid hashing with cells of 2·tol: the cube of half-width tol around an image spans at most
    two cells per axis, so eight cell lookups find every candidate (matches are within 2·tol).
    """
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    if len(p) == 0:
        return np.zeros(0, dtype=bool)
    q = p.copy()
    q[:, _AXIS[axis]] *= -1.0
    cell = 2.0 * tol
    lo = np.minimum(p.min(axis=0), q.min(axis=0)) - 2.0 * cell
    span = np.floor((np.maximum(p.max(axis=0), q.max(axis=0)) - lo) / cell).astype(np.int64) + 2
    scale = np.array([span[1] * span[2], span[2], 1], dtype=np.int64)

    def key(cells: np.ndarray) -> np.ndarray:
        return (cells * scale).sum(axis=1)

    pkeys = key(np.floor((p - lo) / cell).astype(np.int64))
    below = np.floor((q - tol - lo) / cell).astype(np.int64)
    above = np.floor((q + tol - lo) / cell).astype(np.int64)
    found = np.zeros(len(p), dtype=bool)
    for combo in range(8):
        pick = np.array([(combo >> a) & 1 for a in range(3)], dtype=bool)
        found |= np.isin(key(np.where(pick, above, below)), pkeys)
    return ~found


def _closed(parts: tuple[PartSpec, ...], i: int) -> bool:
    """Whether part i is a closed shape (watertight by the spec)."""
    p = parts[i]
    if p.shape == "mirror":
        return _closed(parts, p.of)
    if p.shape == "plane":
        return False
    if p.shape == "lathe":
        first, last = p.profile[0], p.profile[-1]
        return (first[0] == 0 and last[0] == 0) or tuple(first) == tuple(last)
    return True


def _geometry_findings(spec: ModelSpec, built: BuiltModel) -> list[dict]:
    out: list[dict] = []
    pos = built.vertices["position"]
    tri = built.indices.reshape(-1, 3).astype(np.int64)
    corners = pos.astype(np.float64)[tri]
    area2 = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    flat = ~(np.abs(area2) > 0).any(axis=1)
    if flat.any():
        tri_part = np.empty(len(tri), dtype=np.int64)
        for p in built.parts:
            tri_part[p.first // 3 : (p.first + p.count) // 3] = p.index
        parts = sorted(set(tri_part[flat].tolist()))
        out.append(
            _finding(
                "MESH_DEGENERATE",
                WARNING,
                f"{int(flat.sum())} triangle(s) without area in part(s) {', '.join(map(str, parts))} "
                "(too small to survive 32-bit floats?)",
                part=parts[0],
            )
        )
    for p in built.parts:
        if not p.count or not _closed(spec.parts, p.index):
            continue
        rep = edge_report(pos, built.indices[p.first : p.first + p.count])
        if rep.open_edges or rep.repeated_edges:
            out.append(
                _finding(
                    "MESH_OPEN_EDGES",
                    WARNING,
                    f"part {p.index} ({p.shape}) is a closed shape but has {rep.open_edges} open and "
                    f"{rep.repeated_edges} repeated edge(s) after compilation",
                    path=f"parts[{p.index}]",
                    part=p.index,
                )
            )
    if spec.symmetry and len(pos):
        lo, hi = np.asarray(built.bounds[0]), np.asarray(built.bounds[1])
        extent = float(np.max(hi - lo))
        tol = SYMMETRY_TOLERANCE * extent if extent > 0 else 1e-9
        bad = mirror_mismatch(pos, spec.symmetry, tol)
        if bad.any():
            parts = sorted(set(_vertex_parts(built)[bad].tolist()))
            first = pos[int(np.argmax(bad))]
            out.append(
                _finding(
                    "MESH_ASYMMETRIC",
                    ERROR,
                    f"symmetry {spec.symmetry}: {int(bad.sum())} of {len(pos)} vertices have no mirror image across "
                    f"{spec.symmetry} = 0 within {tol:.2g} m, in part(s) {', '.join(map(str, parts))} "
                    f"(first at ({', '.join(fmt_number(c) for c in first)}))",
                    path="symmetry",
                    part=parts[0],
                )
            )
    return out


# --- the report -------------------------------------------------------------------------------


def _lod_model_triangles(project: Project, name: str) -> tuple[int | None, str]:
    """Triangles of another model (level 0) and "" , or None and why not ("missing"/"invalid")."""
    src = project.find_source("model", name)
    if src is None:
        return None, "missing"
    from veduta.base.fsutil import TooLarge
    from veduta.source import read_source

    try:
        data = read_source(project.source_path(src.rel), "model")[0]
    except TooLarge:
        return None, "invalid"
    except OSError:
        return None, "missing"
    ms = validate_model(data, project.source_path(src.rel), name)
    if ms.spec is None:
        return None, "invalid"
    return triangle_count(ms.spec), ""


def _lod_findings(project: Project, spec: ModelSpec, built: BuiltModel) -> tuple[list[dict], list[dict]]:
    levels: list[dict] = []
    out: list[dict] = []
    prev = built.triangle_count
    for i, (lspec, level) in enumerate(zip(spec.lod, built.lods, strict=True)):
        path = f"lod[{i}]"
        k = i + 1  # levels count from 1, as in the spec ("k (1 for the first level)")
        if level.model:
            tris, why = _lod_model_triangles(project, level.model)
            if why == "missing":
                out.append(
                    _finding(
                        "MESH_LOD_MISSING_MODEL",
                        ERROR,
                        f'level {k} ({fmt_number(level.distance)} m) names model "{level.model}", which does not exist',
                        path=f"{path}.model",
                    )
                )
            elif why == "invalid":
                out.append(
                    _finding(
                        "MESH_LOD_INVALID_MODEL",
                        ERROR,
                        f'level {k} ({fmt_number(level.distance)} m) names model "{level.model}", '
                        "whose source has errors",
                        path=f"{path}.model",
                    )
                )
        else:
            tris = level.triangle_count
        levels.append({"distance": _f32(level.distance), "model": level.model, "triangles": tris})
        if tris is not None:
            if prev is not None and tris >= prev:
                out.append(
                    _finding(
                        "MESH_LOD_NO_GAIN",
                        WARNING,
                        f"level {k} ({fmt_number(level.distance)} m) draws {tris} triangles, no fewer "
                        f"than the {prev} before it",
                        path=path,
                    )
                )
            prev = tris
        if spec.draw_distance > 0 and lspec.distance >= spec.draw_distance:
            out.append(
                _finding(
                    "MESH_LOD_NEVER_DRAWN",
                    WARNING,
                    f"level {k} starts at {fmt_number(lspec.distance)} m, not before draw_distance "
                    f"{fmt_number(spec.draw_distance)} m: it is never drawn",
                    path=f"{path}.distance",
                )
            )
    return levels, out


def _sorted_findings(findings: list[dict]) -> list[dict]:
    return ranked(findings)


def inspect_built(project: Project, spec: ModelSpec, built: BuiltModel) -> dict:
    """The inspect report of a built model (without the source fields)."""
    findings: list[dict] = []
    if spec.triangle_budget > 0 and built.triangle_count > spec.triangle_budget:
        findings.append(
            _finding(
                "MESH_OVER_BUDGET",
                ERROR,
                f"{built.triangle_count} triangles, over the triangle_budget of {spec.triangle_budget}",
                path="triangle_budget",
            )
        )
    levels, lod_findings = _lod_findings(project, spec, built)
    findings += lod_findings
    findings += _geometry_findings(spec, built)
    return {
        "triangles": built.triangle_count,
        "vertices": len(built.vertices),
        "parts": [
            {
                "index": p.index,
                "shape": p.shape,
                "material": built.materials[p.material],
                "triangles": p.count // 3,
                **({"of": p.of} if p.of >= 0 else {}),
            }
            for p in built.parts
        ],
        "lod_triangles": [lv["triangles"] for lv in levels],
        "lods": levels,
        "draw_distance": _f32(spec.draw_distance),
        "triangle_budget": spec.triangle_budget,
        "symmetry": spec.symmetry,
        "pivot": spec.pivot,
        "pivot_offset": _vec(built.pivot_offset),
        "bounds": {"min": _vec(built.bounds[0]), "max": _vec(built.bounds[1])},
        "materials": list(built.materials),
        "findings": _sorted_findings(findings),
    }


def inspect_model(project: Project, name: str) -> dict:
    """Inspect model `name` of `project`.

    Always has "name", "status" ("ok", "findings" when an error finding exists, "invalid" for
    source errors, "missing") and "errors" (source diagnostics as dicts); the rest when it built.
    """
    from veduta.base.errors import clip
    from veduta.base.fsutil import TooLarge
    from veduta.base.project import no_such_asset
    from veduta.source import read_source

    src = project.find_source("model", name)
    if src is None:  # (the name is what the user typed: echoed in part, with its length, if huge)
        return {
            "name": clip(name, 200),
            "status": "missing",
            "source": None,
            "errors": [{"message": str(no_such_asset(project, "model", name))}],
            "findings": [],
        }
    path = project.source_path(src.rel)
    out: dict[str, Any] = {"name": name, "source": src.rel}
    try:
        data = read_source(path, "model")[0]
    except TooLarge as exc:  # from one stat, before a byte is read
        from veduta.source.diagnostics import Diagnostic

        too = Diagnostic(path, 1, 1, "$", exc.strerror or "")
        out["status"] = "invalid"
        out["errors"] = [too.to_json() | {"text": str(too)}]
        out["findings"] = source_errors("model", out["errors"])
        return out
    ms = validate_model(data, path, name)
    if ms.spec is None:
        out["status"] = "invalid"
        out["errors"] = [d.to_json() | {"text": str(d)} for d in ms.report.sorted()]
        out["findings"] = source_errors("model", out["errors"])
        return out
    out |= inspect_built(project, ms.spec, build_model(ms.spec))
    out["errors"] = []
    out["status"] = "findings" if any(f["severity"] == ERROR for f in out["findings"]) else "ok"
    return out


def exit_status(report: dict) -> int:
    """2 no such asset (a usage mistake), 1 a source with errors or an error finding, 0 otherwise."""
    return {"missing": 2, "invalid": 1, "findings": 1}.get(report["status"], 0)


# --- output -----------------------------------------------------------------------------------
