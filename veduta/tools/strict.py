"""What ``veduta check --strict`` adds to the cook's checks: the error findings of ``inspect``.

``inspect model|prefab|world`` find problems the cook does not report, or reports as the spec's
warnings: a model over its triangle budget or asymmetric against its ``symmetry``, a level naming
a model with errors; a prefab entity whose model has errors; a world place outside the world, in
water, in a biome its prefab does not list, overlapping another or closer than a
``min_distance``, a rule naming a prefab or model that is missing or has errors.  The strict gate
runs those checks for the models, prefabs and worlds it checks, writing nothing (a stale record is
compiled in memory, ``cook_and_read(write=False)``), and reports each error finding like every
other diagnostic: located (file:line:col at the JSON path the finding names, the object it is
about otherwise) and with its code.  A finding at a place the cook already reported (a missing
model is the cook's ``MISSING_REFERENCE`` there) is not repeated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veduta.base.project import AssetIndex, Project, Source

__all__ = ["inspect_errors"]


def inspect_errors(project: Project, selected: list[Source], index: AssetIndex, diagnostics: list[dict]) -> list[dict]:
    """The error findings of inspect for the models, prefabs and worlds of *selected* whose source
    has no error among *diagnostics*, as located diagnostic dicts (severity ``error``, the
    finding's code), in source order."""
    bad = {d["file"] for d in diagnostics if d["severity"] == "error"}
    seen = {(d["file"], d["line"], d["col"], d["path"]) for d in diagnostics}
    out: list[dict] = []
    for src in selected:
        shown = project.source_path(src.rel)
        if src.kind.name not in ("model", "prefab", "world") or shown in bad:
            continue
        found = _findings(project, src, index)
        if not found:
            continue
        root = _root(shown)
        for f, path in found:
            d = _located(shown, root, path, f)
            if (d["file"], d["line"], d["col"], d["path"]) not in seen:
                seen.add((d["file"], d["line"], d["col"], d["path"]))
                out.append(d)
    return out


def _findings(project: Project, src: Source, index: AssetIndex) -> list[tuple[dict, str]]:
    """(error finding, the JSON path in the source it is about) of one model, prefab or world."""
    from veduta.base.findings import ERROR
    from veduta.cook.cooked import cook_and_read
    from veduta.tools.inspect_model import inspect_model

    kind = src.kind.name
    if kind == "model":
        rep = inspect_model(project, src.name)
        return [
            (f, f.get("path", "$"))
            for f in rep.get("findings", ())
            if f["severity"] == ERROR and rep["status"] != "invalid"
        ]
    got = cook_and_read(project, kind, src.name, index, write=False)
    if got.record is None:
        return []
    if kind == "prefab":
        from veduta.tools.inspect_world import report_prefab

        reports = {
            m: inspect_model(project, m)
            for m in dict.fromkeys(getattr(e, "model", "") or "" for e in got.record.entities or [])
            if m
        }
        return [
            (f, f.get("path", "$")) for f in report_prefab(got.record, reports)["findings"] if f["severity"] == ERROR
        ]
    from veduta.tools.inspect_world import error_findings, model_draws, needed_models
    from veduta.world.generator import Generator
    from veduta.world.params import prefab_names

    prefabs = {}
    for n in prefab_names(got.record):
        rec = cook_and_read(project, "prefab", n, index, write=False).record
        if rec is not None:
            prefabs[n] = rec
    gen = Generator(got.record, prefabs)
    users = needed_models(gen)
    models, invalid, _ = model_draws(project, users)
    return [(f, _world_path(f, got.record, users)) for f in error_findings(gen, models, invalid)]


def _world_path(f: dict, world: Any, users: dict[str, list[str]]) -> str:
    """The JSON path in a world source a world finding is about."""
    places = {p.name: i for i, p in enumerate(getattr(world, "places", None) or [])}
    if "place" in f and f["place"] in places:
        i = places[f["place"]]
        return f"places[{i}].prefab" if f["code"] == "WORLD_PREFAB_MISSING" else f"places[{i}].cell"
    if f["code"] == "WORLD_PREFAB_MISSING" and "rule" in f:
        rule = f["rule"]
        if rule.startswith("sites["):
            site = world.sites[int(rule[6:-1])]
            return f"{rule}.prefabs[{list(site.prefabs).index(f['prefab'])}]" if f["prefab"] in site.prefabs else rule
        return f"{rule}.prefab"
    if "model" in f:
        for user in users.get(f["model"], []):
            what, _, name = user.partition(" ")
            if what == "vegetation":  # "vegetation rule NAME"
                rule = name.removeprefix("rule ")
                for i, v in enumerate(world.vegetation or []):
                    if v.name == rule:
                        return f"vegetation[{i}].model"
            elif what == "entity":
                for i, e in enumerate(getattr(world, "entities", None) or []):
                    if e.name == name:
                        return f"entities[{i}].model"
            elif what == "prefab":
                return _names_prefab(world, name)
    return f.get("rule", "$")


def _names_prefab(world: Any, prefab: str) -> str:
    """The first place in a world source that names *prefab*."""
    for i, p in enumerate(getattr(world, "places", None) or []):
        if p.prefab == prefab:
            return f"places[{i}].prefab"
    for i, r in enumerate(getattr(world, "scatter", None) or []):
        if r.prefab == prefab:
            return f"scatter[{i}].prefab"
    for i, s in enumerate(getattr(world, "sites", None) or []):
        if prefab in s.prefabs:
            return f"sites[{i}].prefabs[{list(s.prefabs).index(prefab)}]"
    for i, v in enumerate(getattr(world, "vegetation", None) or []):
        if v.prefab == prefab:
            return f"vegetation[{i}].prefab"
    return "$"


def _root(path: str):
    from veduta.source import read_source
    from veduta.source.jsonpos import parse

    try:
        return parse(read_source(path)[0])[0]
    except OSError:  # (too large for its kind: the check says so)
        return None


def _located(shown: str, root, path: str, f: dict) -> dict:
    from veduta.source.diagnostics import ERROR, Diagnostic
    from veduta.source.jsonpos import node_at

    node = node_at(root, path)
    line, col = (node.line, node.col) if node is not None and node.line else (1, 1)
    return Diagnostic(shown, line, col, path or "$", f["message"], ERROR, f["code"]).to_json()
