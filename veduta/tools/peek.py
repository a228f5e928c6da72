"""Facts an editor shows on hover, computed from a source's text as the cook would: a model
part's triangles and vertices at each level of detail, a world place's cell, biome and height.

Nothing is cooked or written: the text is compiled in memory (its references read through the
editor's buffers, see :class:`veduta.compile.CompileContext`'s overlay).
"""

from __future__ import annotations

from typing import Any, Protocol

from veduta.source.diagnostics import Report

__all__ = ["part_counts", "place_info"]


class Workspace(Protocol):
    """What these answers need of the editor's workspace (:class:`veduta.tools.editor.Workspace`):
    the project, the reference graph (its asset index), the open buffers and their texts, and the
    generators made so far."""

    project: Any
    graph: Any
    overlay: Any
    generators: Any

    def text(self, rel: str) -> str | None: ...


def part_counts(data: bytes, name: str, index: int) -> dict[str, Any] | str:
    """Part *index* of model source *data* (named *name*) as the cook builds it:
    ``{"shape", "levels": [{"level", "distance", "triangles", "vertices"} | {"level",
    "distance", "model"}]}``, level 0 the model itself; or a sentence saying why not."""
    import numpy as np

    from veduta.compile.model.build import build_model
    from veduta.compile.model.source import validate_model

    ms = validate_model(data, "", name)
    if ms.spec is None:
        return "_Triangles and vertices are shown when the model has no errors._"
    if not 0 <= index < len(ms.spec.parts):
        return ""
    built = build_model(ms.spec)
    levels: list[dict[str, Any]] = []
    sets = [(0, 0.0, "", built.mesh_parts, built.indices)]
    sets += [(k, lv.distance, lv.model, lv.mesh_parts, lv.indices) for k, lv in enumerate(built.lods, start=1)]
    for level, distance, model, parts, indices in sets:
        if model:
            levels.append({"level": level, "distance": distance, "model": model})
            continue
        mp = parts[index]
        used = indices[mp.first : mp.first + mp.count]
        levels.append(
            {"level": level, "distance": distance, "triangles": mp.count // 3, "vertices": int(np.unique(used).size)}
        )
    return {"shape": ms.spec.parts[index].shape, "levels": levels}


def place_info(ws: Workspace, rel: str, text: str, index: int) -> dict[str, Any] | str:
    """Place *index* of world *rel* (its text *text*) as the generator sees it: ``{"name",
    "cell", "metres": [[x0, x1], [z0, z1]], "biome", "height", "wet"}``; or a sentence saying why
    not."""
    from veduta.world.generator import Generator
    from veduta.world.params import prefab_names
    from veduta.world.query import query

    world = _compile(ws, "world", rel, text.encode("utf-8", "surrogateescape"))
    if world is None:
        return "_Biome and height are shown when the world has no errors._"
    if not 0 <= index < len(world.places):
        return ""
    prefabs: dict[str, Any] = {}
    key: list[Any] = [text]
    for n in prefab_names(world):
        srcs = ws.graph.sources_of("prefab", n)
        src_text = ws.text(srcs[0]) if srcs else None
        key.append(src_text)
        if src_text is not None:
            rec = _compile(ws, "prefab", srcs[0], src_text.encode("utf-8", "surrogateescape"))
            if rec is not None:
                prefabs[n] = rec
    cached = ws.generators.get(rel)
    if cached is not None and cached[0] == key:
        gen = cached[1]
    else:
        gen = Generator(world, prefabs)
        ws.generators[rel] = (key, gen)
    place = world.places[index]
    q = query(gen, place.x, place.z)
    cell = float(world.cell)
    metres = [[_num(place.x * cell), _num((place.x + 1) * cell)], [_num(place.z * cell), _num((place.z + 1) * cell)]]
    return {
        "name": place.name,
        "cell": [place.x, place.z],
        "metres": [f"{a}..{b}" for a, b in metres],
        "biome": q["biome"],
        "height": q["height"],
        "wet": q["water"]["wet"],
    }


def _num(v: float) -> str:
    from veduta.source.fields import fmt_num

    return fmt_num(round(v, 3))


def _compile(ws: Workspace, kind: str, rel: str, data: bytes) -> Any:
    """The body record of a source compiled in memory (None after errors)."""
    from veduta.base.kinds import name_of
    from veduta.compile import CompileContext, compile_source

    ctx = CompileContext(
        ws.project.assets, rel, kind, name_of(rel), Report(rel), ws.graph.asset_index(), overlay=ws.overlay
    )
    try:
        return compile_source(kind, data, ctx)
    except Exception:  # noqa: BLE001 - a compiler bug shows as no answer here; diagnostics report it
        return None
