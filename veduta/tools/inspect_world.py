"""``veduta inspect world`` and ``veduta inspect prefab``: findings on a model of what the engine draws.

Core functions (the ``--json`` shapes; docs/inspect.md lists every code):

- :func:`inspect_world` (project, name) loads (cooks) the world, its prefabs and models and calls
  :func:`report_world`, which needs only a generator and the models' drawing figures;
- :func:`inspect_prefab` (project, name).

Views evaluated by inspect world: the start cell [0, 0], every place's cell, the cells given
with ``at`` (the report's ``views``), and with ``all_views`` the centre cell of every chunk of
the world (one pass over the world, row by row: veduta.world.draw.Drawer.chunk_views; about
0.13 ms a chunk), summed up in ``all_views`` (:class:`ViewSummary`) and, with ``views_file``,
every view written as JSON Lines in bounded memory.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from veduta.base.argtypes import MAX_FOCI
from veduta.base.findings import ERROR, NOTE, WARNING, finding, has_error, ranked, source_errors
from veduta.base.progress import tell
from veduta.world import jit
from veduta.world.checks import place_findings, place_footprint
from veduta.world.draw import (
    FRAME_BUDGET,
    Drawer,
    ModelDraw,
    ViewColumns,
    camera_record,
    loaded_radius,
    view_reach,
)
from veduta.world.generator import Generator

if TYPE_CHECKING:
    from PIL import Image

    from veduta.base.progress import Progress
    from veduta.base.project import Project

#: site rules and biomes are looked for within this many cells of the origin (the world clipped)
AREA_HALF = 512


def _where_cell(x: int, z: int) -> dict:
    return {"cell": [int(x), int(z)]}


# -- the world's report ---------------------------------------------------------------------------


def needed_models(gen: Generator) -> dict[str, list[str]]:
    """Models the world draws -> who uses them (flora rules, persistent entities, prefab entities
    of the prefabs its rules and places name)."""
    users: dict[str, list[str]] = {}
    for r in gen.p.vegetation:
        if r.model:
            users.setdefault(r.model, []).append(f"vegetation rule {r.name}")
    for e in getattr(gen.world, "entities", None) or []:
        if getattr(e, "model", ""):
            users.setdefault(e.model, []).append(f"entity {e.name}")
    for name, pf in sorted(gen.prefabs.items()):
        for e in getattr(pf.record, "entities", None) or []:
            if getattr(e, "model", ""):
                users.setdefault(e.model, []).append(f"prefab {name}")
    return {k: sorted(set(v)) for k, v in sorted(users.items())}


def _prefab_findings(gen: Generator) -> list[dict]:
    p = gen.p
    out = []

    def missing(prefab: str, what: str, **where: Any) -> None:
        out.append(
            finding(
                "WORLD_PREFAB_MISSING",
                ERROR,
                f"{what} names prefab {prefab}, which does not exist (it places nothing)",
                prefab=prefab,
                **where,
            )
        )

    for i, r in enumerate(p.scatter):
        if r.prefab not in gen.prefabs:
            missing(r.prefab, f"scatter rule {i}", rule=f"scatter[{i}]")
    for i, site in enumerate(p.sites):
        for name in site.prefabs:
            if name not in gen.prefabs:
                missing(name, f"site rule {site.tag}", rule=f"sites[{i}]")
    for i, veg in enumerate(p.vegetation):
        if veg.prefab and veg.prefab not in gen.prefabs:
            missing(veg.prefab, f"vegetation rule {veg.name}", rule=f"vegetation[{i}]")
    return out


def _place_findings(gen: Generator) -> list[dict]:
    out = []
    order = {pl.name: pl.index for pl in gen.p.places}
    for pl in gen.p.places:
        for f in place_findings(gen, pl.name, pl.prefab, (pl.x, pl.z), pl.rotation):
            # a pair of places is reported once, by the first of the two in file order
            pair = f["code"] in ("WORLD_PLACE_OVERLAP", "WORLD_PLACE_DISTANCE")
            if pair and order.get(f["other"], 1 << 30) < pl.index:
                continue
            out.append(f)
    return out


def _model_findings(gen: Generator, models: Mapping[str, ModelDraw], invalid: Iterable[str]) -> list[dict]:
    out = []
    invalid = set(invalid)
    flora = {r.model for r in gen.p.vegetation if r.model}
    for name, users in needed_models(gen).items():
        if name in models:
            continue
        who = ", ".join(users)
        if name in invalid:
            out.append(
                finding(
                    "WORLD_MODEL_INVALID",
                    ERROR,
                    f"model {name} (used by {who}) has errors: it draws nothing (see veduta inspect model)",
                    model=name,
                )
            )
        elif name in flora:
            out.append(
                finding(
                    "WORLD_MODEL_MISSING",
                    ERROR,
                    f"model {name} (used by {who}) does not exist: its "
                    "plants are generated (world query lists them) but draw nothing",
                    model=name,
                )
            )
        else:
            out.append(
                finding(
                    "WORLD_MODEL_MISSING",
                    ERROR,
                    f"model {name} (used by {who}) does not exist: those entities draw nothing",
                    model=name,
                )
            )
    for r in gen.p.vegetation:
        m = models.get(r.model) if r.model else None
        if m is None:
            continue
        if m.draw_distance <= 0:
            out.append(
                finding(
                    "WORLD_FLORA_NO_DRAW_DISTANCE",
                    WARNING,
                    f"vegetation rule {r.name}: flora model "
                    f"{r.model} has no draw_distance, so every loaded plant is drawn however far",
                    rule=f"vegetation[{r.index}]",
                    model=r.model,
                )
            )
        if not m.distances:
            out.append(
                finding(
                    "WORLD_FLORA_NO_LOD",
                    NOTE,
                    f"vegetation rule {r.name}: flora model {r.model} has "
                    "no lod level, so its plants are never thinned with distance",
                    rule=f"vegetation[{r.index}]",
                    model=r.model,
                )
            )
    return out


def inspected_area(gen: Generator) -> tuple[int, int, int, int]:
    """(x0, z0, w, h): the world's cells within AREA_HALF cells of the origin."""
    n = gen.p.cells
    lo, hi = max(-n, -AREA_HALF), min(n, AREA_HALF)
    return lo, lo, hi - lo, hi - lo


def _area_findings(gen: Generator, area: tuple[int, int, int, int], progress: Progress | None = None) -> list[dict]:
    """Rules that do nothing in the inspected area; vegetation areas outside the world (stage 2 of
    inspect world's progress: its second half)."""
    p = gen.p
    out = []
    x0, z0, w, h = area
    tell(progress, 2.5, STAGES, "biomes of the inspected area")
    seen = np.bincount(gen.biomes(x0, z0, w, h).ravel(), minlength=len(p.biome_names)) > 0
    present = {b for b, s in zip(p.biome_names, seen.tolist(), strict=True) if s}
    span = f"cells [{x0}, {z0}] to [{x0 + w - 1}, {z0 + h - 1}]"
    for b in p.biome_names:
        if b not in present:
            out.append(finding("WORLD_BIOME_ABSENT", NOTE, f"biome {b} does not appear in {span}", biome=b))

    def allowed(biomes: frozenset[str], prefab: str) -> set[str]:
        pf = gen.prefabs.get(prefab) if prefab else None
        return {b for b in present if (not biomes or b in biomes) and (pf is None or pf.allows(b))}

    for i, r in enumerate(p.scatter):
        if r.prefab in gen.prefabs and not allowed(r.biomes, r.prefab):
            out.append(
                finding(
                    "WORLD_RULE_IDLE",
                    WARNING,
                    f"scatter rule {i} ({r.prefab}) places nothing in {span}: none of its biomes appears there",
                    rule=f"scatter[{i}]",
                )
            )
    n = p.cells
    for v in p.vegetation:
        if v.prefab and v.prefab not in gen.prefabs:
            continue
        if not v.area and not allowed(v.biomes, v.prefab):
            out.append(
                finding(
                    "WORLD_RULE_IDLE",
                    WARNING,
                    f"vegetation rule {v.name} plants nothing in {span}: none of its biomes appears there",
                    rule=f"vegetation[{v.index}]",
                )
            )
        if v.area:
            ax0, ax1, az0, az1 = v.x - v.radius, v.x + v.radius, v.z - v.radius, v.z + v.radius
            if ax1 <= -n or ax0 >= n or az1 <= -n or az0 >= n:
                out.append(
                    finding(
                        "WORLD_VEGETATION_OUTSIDE",
                        WARNING,
                        f"vegetation rule {v.name}: its area "
                        f"(radius {v.radius} around vertex [{v.x}, {v.z}]) lies outside the world",
                        rule=f"vegetation[{v.index}]",
                        **_where_cell(v.x, v.z),
                    )
                )
            elif ax0 < -n or ax1 > n or az0 < -n or az1 > n:
                out.append(
                    finding(
                        "WORLD_VEGETATION_OUTSIDE",
                        NOTE,
                        f"vegetation rule {v.name}: part of its area "
                        f"(radius {v.radius} around vertex [{v.x}, {v.z}]) lies outside the world (cells "
                        f"{-n}..{n - 1}) and plants nothing there",
                        rule=f"vegetation[{v.index}]",
                        **_where_cell(v.x, v.z),
                    )
                )
    for i, rule in enumerate(p.sites):
        if not any(name in gen.prefabs for name in rule.prefabs):
            continue  # WORLD_PREFAB_MISSING says it
        tell(progress, 2.75 + 0.25 * i / len(p.sites), STAGES, f"site rule {rule.tag} in the inspected area")
        s = rule.spacing
        reasons: Counter[str] = Counter()
        kept = 0
        structs = gen.structs
        regions = [
            (rx, rz) for rz in range(z0 // s, (z0 + h - 1) // s + 1) for rx in range(x0 // s, (x0 + w - 1) // s + 1)
        ]
        if len(regions) * s * s >= 32 * 2000:
            structs._prefetch(x0 - s, z0 - s, w + 2 * s + 1, h + 2 * s + 1)
        for rx, rz in regions:
            d = structs.site(i, rx, rz)
            if d.structure is not None:
                kept += 1
            else:
                reasons[d.reason.split(" ")[0] if d.reason.startswith(("place ", "site ")) else d.reason] += 1
        if not kept:
            why = ", ".join(f"{why} {k}" for why, k in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
            out.append(
                finding(
                    "WORLD_SITE_NEVER",
                    WARNING,
                    f"site rule {rule.tag} places no site in {span} ({len(regions)} regions; dropped for: {why})",
                    rule=f"sites[{i}]",
                )
            )
    return out


#: the stages of inspect world's progress (then, with ``all_views``, the chunk views counted)
STAGES = 4
#: chunk views of ``all_views`` listed in full in the report: those drawing the most
WORST_VIEWS = 20
#: focus cells of the chunk views over the budget listed in the report (``over_budget`` counts all)
OVER_LISTED = 1000
#: triangles per bar of the histogram of the chunk views (the budget is the fourth bar's end)
HISTOGRAM_BIN = FRAME_BUDGET // 4


class ChunkCentres(Sequence[tuple[str, tuple[int, int]]]):
    """The views of ``all_views``: ``("chunk CX,CZ", the chunk's centre cell)`` of every chunk of a
    world, row by row (north to south, west to east), each made when asked: a million for the
    largest world, never all held at once."""

    def __init__(self, chunk: int, extent: int):
        self.chunk, self.extent = chunk, extent
        self.side = 2 * extent

    def __len__(self) -> int:
        return self.side * self.side

    def _at(self, i: int) -> tuple[str, tuple[int, int]]:
        cz, cx = divmod(i, self.side)
        cx, cz = cx - self.extent, cz - self.extent
        c = self.chunk
        return f"chunk {cx},{cz}", (cx * c + c // 2, cz * c + c // 2)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._at(k) for k in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._at(i % len(self))


class ViewSummary:
    """What the report keeps of the chunk views of ``all_views``, batch by batch in bounded memory:
    the triangles of each (8 bytes a view), the :data:`WORST_VIEWS` drawing the most (in full;
    ties in row order), the focus cells of the first :data:`OVER_LISTED` views over the budget and
    how many are."""

    def __init__(self, total: int):
        self.triangles = np.zeros(total, dtype=np.int64)
        self.count = 0
        self.worst: list[tuple[int, int, dict]] = []  # (-triangles, order, view)
        self.over: list[list[int]] = []
        self.over_count = 0

    def add(self, batch: list[dict] | ViewColumns) -> None:
        """Take a batch of views, the next in order: their dicts, or as columns (then only the
        dicts of the few that may be among the worst are made)."""
        import heapq

        k, n = self.count, len(batch)
        tris = batch.triangles if isinstance(batch, ViewColumns) else np.asarray([v["triangles"] for v in batch])
        self.triangles[k : k + n] = tris
        # the most, then the first; once WORST_VIEWS are held, only a view drawing more than the
        # last of them can take its place (a tie comes later in order)
        cand = np.arange(n) if len(self.worst) < WORST_VIEWS else np.flatnonzero(tris > -self.worst[-1][0])
        top = cand[np.argsort(-tris[cand], kind="stable")[:WORST_VIEWS]].tolist()
        view = batch.view if isinstance(batch, ViewColumns) else batch.__getitem__
        self.worst = heapq.nsmallest(
            WORST_VIEWS, self.worst + [(-int(tris[i]), k + i, view(i)) for i in top], key=lambda w: (w[0], w[1])
        )
        over = np.flatnonzero(tris > FRAME_BUDGET)
        self.over_count += len(over)
        for i in over[: max(0, OVER_LISTED - len(self.over))].tolist():
            self.over.append(view(i)["focus"] if not isinstance(batch, ViewColumns) else batch.focus(i))
        self.count += n

    def report(self) -> dict[str, Any]:
        t = self.triangles[: self.count]
        n = len(t)
        hist = np.bincount(t // HISTOGRAM_BIN).tolist() if n else []
        return {
            "views": n,
            "over_budget": self.over_count,
            "triangles": {
                "min": int(t.min()) if n else 0,
                "median": int(np.sort(t)[(n - 1) // 2]) if n else 0,
                "max": int(t.max()) if n else 0,
                "mean": round(int(t.sum()) / n, 1) if n else 0.0,
            },
            "histogram": {"bin": HISTOGRAM_BIN, "views": hist},
            "worst": [v for _, _, v in self.worst],
            "over": self.over,
        }


def _worst(named: list[dict], summary: ViewSummary | None) -> dict | None:
    """The view drawing the most, the first in order (named views, then chunk views row by row)."""
    best = max(named, key=lambda v: v["triangles"]) if named else None
    if summary is not None and summary.worst:
        top = summary.worst[0][2]
        if best is None or top["triangles"] > best["triangles"]:
            best = top
    return best


def _view_findings(views: list[dict], summary: ViewSummary | None = None) -> list[dict]:
    """WORLD_CHUNK_BUDGET: the worst view over the budget, among ``views`` and the chunk views."""
    over_named = [v for v in views if v["triangles"] > FRAME_BUDGET]
    n_over = len(over_named) + (summary.over_count if summary is not None else 0)
    if not n_over:
        return []
    worst = _worst(over_named, summary)
    assert worst is not None
    parts = ", ".join(f"{k} {worst[k]}" for k in ("ground", "skirts", "water", "flora", "entities") if worst[k])
    others = f"; {n_over - 1} other view(s) over too" if n_over > 1 else ""
    kept = ""
    if worst["window"]["triangles"] < worst["triangles"]:
        sx, sz = worst["kept"]
        kept = (
            f" with the chunks the engine keeps loaded {'east' if sx > 0 else 'west'} and "
            f"{'south' if sz > 0 else 'north'} of its window (the window alone: "
            f"{worst['window']['triangles']})"
        )
    return [
        finding(
            "WORLD_CHUNK_BUDGET",
            WARNING,
            f"view {worst['name']} (focus cell {worst['focus']}) "
            f"draws {worst['triangles']} triangles{kept}, over the {FRAME_BUDGET} a console draws "
            f"per frame ({parts}){others}",
            view=worst["name"],
            triangles=worst["triangles"],
            **_where_cell(*worst["focus"]),
        )
    ]


def _view_lines(views: list[dict]) -> bytes:
    """Views as JSON Lines (one view's JSON a line)."""
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in views).encode("utf-8")


def error_findings(gen: Generator, models: Mapping[str, ModelDraw], invalid_models: Iterable[str] = ()) -> list[dict]:
    """The error findings :func:`report_world` gives (missing or invalid prefabs and models, places
    outside, in water, in a biome their prefab does not list, overlapping or too close), without
    drawing a view: what ``veduta check --strict`` runs on a world."""
    found = _prefab_findings(gen) + _place_findings(gen) + _model_findings(gen, models, invalid_models)
    return [f for f in found if f["severity"] == ERROR]


def report_world(
    gen: Generator,
    models: Mapping[str, ModelDraw],
    *,
    invalid_models: Iterable[str] = (),
    at: Iterable[tuple[int, int]] = (),
    all_views: bool = False,
    views_file: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The inspect world report of a generator's world (:func:`_report_world`, its report)."""
    return _report_world(
        gen, models, invalid_models=invalid_models, at=at, all_views=all_views, views_file=views_file, progress=progress
    )[0]


#: the worlds whose ``--all`` takes numba's kernels (when installed): 65,536 chunks (extent 128) or
#: more. Below, the numpy path takes a few seconds at most, about what loading the kernels from
#: numba's cache costs (and the first run after an install compiles them: some 15-20 s of CPU)
KERNEL_VIEWS = 65_536


def _report_world(
    gen: Generator,
    models: Mapping[str, ModelDraw],
    *,
    invalid_models: Iterable[str] = (),
    at: Iterable[tuple[int, int]] = (),
    all_views: bool = False,
    views_file: str | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], ViewSummary | None]:
    """The inspect world report of a generator's world (without name, source and status).

    ``models`` maps model names to their drawing figures; a model the world uses that is not
    there is missing (or invalid when named in ``invalid_models``). ``progress`` hears stages 2
    to 4 of :data:`STAGES` (inspect_world's first two: loading, models), or with ``all_views``
    stages 2 and 3 then the chunk views counted (``done`` of every chunk). ``views`` holds the named
    views (the start cell, every place, ``at``); ``all_views`` adds a view at the centre of every
    chunk, summed up in ``all_views`` (:class:`ViewSummary`); ``views_file``: every view written
    there as JSON Lines (one view a line: the named ones, then the chunk views row by row), in
    bounded memory."""
    p = gen.p
    tell(progress, 2, STAGES, "places, rules and the inspected area")
    findings: list[dict] = []
    findings += _prefab_findings(gen)
    findings += _place_findings(gen)
    findings += _model_findings(gen, models, invalid_models)
    cam = camera_record(gen.world)
    reach = view_reach(gen, cam)
    radius = loaded_radius(gen)
    view = int(getattr(gen.world, "view", 1) or 1)
    if reach > radius + 1e-9:
        what = f"far {cam['far']:g} m" if cam["type"] == "perspective" else f"size {cam['size']:g} m"
        findings.append(
            finding(
                "WORLD_VIEW_SHORT",
                WARNING,
                f"the camera ({cam['type']}, {what}) sees ground {reach:.1f} m from the "
                f"focus, past the loaded chunks: {view} chunk(s) of {radius / view:g} m around the focus's chunk "
                f"reach {radius:g} m when the focus stands at its chunk's edge (shorten far or size, or raise view)",
                reach_m=round(reach, 3),
                loaded_m=radius,
            )
        )
    area = inspected_area(gen)
    findings += _area_findings(gen, area, progress)
    cells: list[tuple[str, tuple[int, int]]] = [("start", (0, 0))]
    cells += [(f"place {pl.name}", (pl.x, pl.z)) for pl in p.places]
    cells += [(f"at {x},{z}", (int(x), int(z))) for x, z in at]
    drawer = Drawer(gen, models, cam)
    tell(progress, 3, STAGES, "views")
    views = drawer.views(cells)
    summary = None
    if all_views:
        summary = ViewSummary(len(ChunkCentres(p.chunk, p.extent)))

    def lines() -> Iterator[bytes]:
        yield _view_lines(views)
        if summary is not None:  # row by row, in one pass over the world (Drawer.chunk_views)
            for batch in drawer.chunk_views(progress=progress):
                summary.add(batch)
                if views_file is not None:
                    yield _view_lines(batch.dicts())

    # numba's kernels (veduta/world/jit.py), when installed, for a world of KERNEL_VIEWS chunks or more
    with jit.wanted(summary is not None and len(summary.triangles) >= KERNEL_VIEWS):
        if views_file is not None:
            from veduta.base.fsutil import write_output

            write_output(views_file, lines())
        else:
            for _ in lines():
                pass
    if summary is None:
        tell(progress, STAGES, STAGES, "report")
    findings += _view_findings(views, summary)
    worst = _worst(views, summary)
    assert worst is not None
    extra: dict[str, Any] = {}
    if summary is not None:
        extra["all_views"] = summary.report()
    if views_file is not None:
        extra["views_file"] = views_file
    return {
        "world": {
            "seed": p.seed,
            "cell": p.cell_mm / 1000.0,
            "chunk": p.chunk,
            "extent": p.extent,
            "view": view,
            "cells": p.cells,
        },
        "camera": cam,
        "loaded": {
            "chunks": (2 * view + 1) ** 2,
            "chunks_max": (2 * view + 2) ** 2,
            "radius_m": radius,
            "reach_m": round(reach, 3),
        },
        "budget": FRAME_BUDGET,
        "area": {"cell": [area[0], area[1]], "size": [area[2], area[3]]},
        "places": [
            {
                "name": pl.name,
                "prefab": pl.prefab,
                "cell": [pl.x, pl.z],
                "rotation": pl.rotation,
                "footprint": list(place_footprint(gen, pl.prefab, (pl.x, pl.z), pl.rotation)),
            }
            for pl in p.places
        ],
        "models": {
            name: {"triangles": list(m.triangles), "lod_distances": list(m.distances), "draw_distance": m.draw_distance}
            for name, m in sorted(models.items())
        },
        "views": views,
        **extra,
        "worst_view": {"name": worst["name"], "triangles": worst["triangles"]},
        "findings": ranked(findings),
    }, summary


# -- loading from a project -----------------------------------------------------------------------


def _cooked(project: Project, kind: str, name: str, index=None) -> tuple[Any, str, list]:
    """(record or None, status "ok"/"missing"/"invalid", messages) of one asset, cooked if stale;
    for an invalid one, its diagnostics as dicts (``Diagnostic.to_json`` and its ``text``).
    *index*: the game's assets (default: as they are now)."""
    from veduta.cook.cooked import cook_and_read

    got = cook_and_read(project, kind, name, index)
    if got.status == "invalid":
        found = got.diagnostics
        if found and len(found) == len(got.messages):
            return None, "invalid", [d | {"text": m} for d, m in zip(found, got.messages, strict=True)]
        return (
            None,
            "invalid",
            [{"message": m, "text": m, "severity": "warning" if ": warning: " in m else "error"} for m in got.messages],
        )
    return got.record, got.status, got.messages


def model_draws(project: Project, names: Iterable[str]) -> tuple[dict[str, ModelDraw], set[str], dict[str, dict]]:
    from veduta.tools.inspect_model import inspect_model

    models, invalid, reports = {}, set(), {}
    for name in sorted(set(names)):
        rep = inspect_model(project, name)
        reports[name] = rep
        if rep["status"] in ("ok", "findings"):
            models[name] = ModelDraw.from_report(rep)
        elif rep["status"] == "invalid":
            invalid.add(name)
    return models, invalid, reports


def _error_list(diagnostics: list[dict]) -> list[dict]:
    return [d for d in diagnostics if d.get("severity") != "warning"]


def _head(project: Project, kind: str, name: str, index=None) -> tuple[Any, dict[str, Any]]:
    """(record or None, head of the report: name, source, status, errors)."""
    from veduta.base.project import no_such_asset

    rec, status, messages = _cooked(project, kind, name, index)
    src = project.find_source(kind, name)
    from veduta.base.errors import clip

    # (a missing asset's name is what the user typed: echoed in part, with its length, if huge)
    head: dict[str, Any] = {
        "name": name if src else clip(name, 200),
        "source": src.rel if src else None,
        "status": status,
        "errors": [],
        "findings": [],
    }
    if rec is None:
        head["errors"] = (
            _error_list(messages) if status == "invalid" else [{"message": str(no_such_asset(project, kind, name))}]
        )
        if status == "invalid":
            head["findings"] = source_errors(kind, head["errors"])
    return rec, head


def load_world(project: Project, name: str) -> tuple[Any, dict[str, Any], dict]:
    """(world record, prefab records by name, head of the report) for inspect world; the world
    record is None when it is missing or has errors (the head says so)."""
    from veduta.world.params import prefab_names

    index = project.index()  # the game as it is now, once for the world and its prefabs
    world, head = _head(project, "world", name, index)
    if world is None:
        return None, {}, head
    prefabs = {}
    for n in prefab_names(world):
        rec, _, _ = _cooked(project, "prefab", n, index)
        if rec is not None:
            prefabs[n] = rec
    return world, prefabs, head


def inspect_world(
    project: Project,
    name: str,
    at: Iterable[tuple[int, int]] = (),
    all_views: bool = False,
    sheet: str | None = None,
    image: bool = False,
    views_file: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Inspect world ``name`` of ``project``: ``{"name", "source", "status" ("ok", "findings" when an
    error finding exists, "invalid", "missing"), "errors", ...report_world..., "findings"}``.

    ``at``: more focus cells to evaluate views at; ``all_views``: a view at the centre of every
    chunk, summed up in ``all_views`` (``views`` keeps the named views); ``views_file``: every view
    written there as JSON Lines (the report names it as "views_file"); ``sheet``: write the sheet
    (the map around the origin, findings marked) to this PNG file (its path is then in the report
    as "sheet"); ``image``: the sheet's PNG bytes in the report as "png" (the faces send or write
    it; ``--json`` shows the rest)."""
    if views_file is not None:
        from veduta.base.argtypes import wrong_suffix
        from veduta.base.errors import UsageError

        if wrong_suffix(views_file, ".jsonl"):
            raise UsageError(f"views file {wrong_suffix(views_file, '.jsonl')}")
    at = list(at)
    if len(at) > MAX_FOCI:
        from veduta.base.errors import UsageError

        raise UsageError(
            f"{len(at):,} focus cells (at, --at), more than the limit of {MAX_FOCI:,}: "
            "for a view at the centre of every chunk, ask for all views (all_views, --all)"
        )
    tell(progress, 0, STAGES, "world and prefabs (cooked if stale)")
    world, prefabs, head = load_world(project, name)
    if world is None:
        return head
    gen = Generator(world, prefabs)
    n = gen.p.cells
    for x, z in at:
        if not (-n <= x < n and -n <= z < n):
            from veduta.base.errors import UsageError

            raise UsageError(f"focus cell {x},{z} is outside world {name}: its cells are {-n}..{n - 1} on x and z")
    tell(progress, 1, STAGES, "models")
    models, invalid, _ = model_draws(project, needed_models(gen))
    # (a kernel out of memory: the kernels are off, and the views start again by numpy)
    got, summary = jit.or_numpy(
        lambda: _report_world(
            gen, models, invalid_models=invalid, at=at, all_views=all_views, views_file=views_file, progress=progress
        )
    )
    out = head | got
    out["status"] = "findings" if has_error(out["findings"]) else "ok"
    if sheet is not None or image:
        from veduta.base.fsutil import write_output
        from veduta.tools.export.cooked import Cooked
        from veduta.tools.export.looks import Looks
        from veduta.tools.mapimage import png_bytes

        img, drawn = render_sheet(
            gen, out, looks=Looks(Cooked(project)), every=None if summary is None else _sheet_views(gen, summary)
        )
        png = png_bytes(img)
        out["sheet_drawn"] = {
            k: drawn[k] for k in ("title", "map_box", "origin", "scale", "legend", "labels", "dropped", "counts")
        }
        if sheet is not None:
            write_output(str(sheet), png)
            out["sheet"] = str(sheet)
        if image:
            out["png"] = png
    return out


#: severity colours of the sheet's marks
MARK = {ERROR: (230, 30, 30), WARNING: (250, 170, 20), NOTE: (60, 140, 250)}
SHEET_CELLS = 256
VIEW = (255, 255, 255)
WINDOW = (250, 250, 250)
CAMERA = (120, 220, 255)


def _camera_polygon(gen: Generator, focus: tuple[int, int]) -> list[tuple[float, float]]:
    """The camera's view volume cut at the focus's ground level, in cells (x, z), in order around
    its centre (empty when the volume does not reach that level)."""
    import math

    from veduta.world.draw import camera_record, focus_origin, make_camera, section

    origin = focus_origin(gen, focus)
    pts = section(make_camera(camera_record(gen.world), origin), origin[1])
    if len(pts) < 3:
        return []
    cell = gen.p.cell_mm / 1000.0
    xz = sorted({(round(float(q[0]) / cell, 6), round(float(q[2]) / cell, 6)) for q in pts})
    cx = sum(x for x, _ in xz) / len(xz)
    cz = sum(z for _, z in xz) / len(xz)
    return sorted(xz, key=lambda q: math.atan2(q[1] - cz, q[0] - cx))


def _sheet_views(gen: Generator, summary: ViewSummary, size: int = SHEET_CELLS) -> list[dict[str, Any]]:
    """The chunk views of ``all_views`` whose focus is on the sheet: ``{"focus", "triangles"}``
    (from the summary's triangles, row by row)."""
    p = gen.p
    c, e = p.chunk, p.extent
    half = min(size, 2 * p.cells) // 2
    out = []
    for cz in range(max(-e, -half // c - 1), min(e, half // c + 1)):
        for cx in range(max(-e, -half // c - 1), min(e, half // c + 1)):
            x, z = cx * c + c // 2, cz * c + c // 2
            if -half <= x < half and -half <= z < half:
                out.append({"focus": [x, z], "triangles": int(summary.triangles[(cz + e) * 2 * e + cx + e])})
    return out


def render_sheet(
    gen: Generator,
    report: Mapping[str, Any],
    size: int = SHEET_CELLS,
    looks: Any = None,
    every: list[dict[str, Any]] | None = None,
) -> tuple[Image.Image, dict[str, Any]]:
    """The inspect world sheet: the map (``veduta world map``, biome colours from *looks*) of
    ``size`` x ``size`` cells around the origin (the world, when smaller) with, for each view,
    its focus (a cross), the chunks loaded around it (a dashed rectangle) and what its camera
    sees of the ground there (a polygon), labelled with the triangles it draws; each finding with
    a cell marked by a ring in its severity's colour (error red, warning amber, note blue) and
    labelled with its code. Views of ``--all`` (*every*: ``{"focus", "triangles"}`` of each, or
    those named ``chunk ...`` in the report's views) get a small cross each (amber when over
    budget), no label. Returns the picture and what it holds (:meth:`MapPicture.compose`)."""
    from veduta.tools.mapimage import Glyph, MapPicture, Mark, palette
    from veduta.world.draw import loaded_chunks

    n = gen.p.cells
    side = min(size, 2 * n)
    pic = MapPicture(gen, (0, 0), (side, side), None, palette(gen, looks), report.get("name", ""))
    draw, c = pic.draw, gen.p.chunk
    x0, z0 = pic.x0, pic.z0
    marks: list[Mark] = []
    named = [v for v in report.get("views", []) if not str(v["name"]).startswith("chunk ")]
    if every is None:
        every = [v for v in report.get("views", []) if str(v["name"]).startswith("chunk ")]
    for v in every:
        x, z = v["focus"]
        if x0 <= x < x0 + side and z0 <= z < z0 + side:
            cx, cz = pic.centre(x, z)
            colour = MARK[WARNING] if v["triangles"] > FRAME_BUDGET else VIEW
            draw.line([(cx - 2, cz), (cx + 2, cz)], fill=colour)
            draw.line([(cx, cz - 2), (cx, cz + 2)], fill=colour)
    drew_window = drew_camera = False
    for v in named:
        x, z = v["focus"]
        keys = loaded_chunks(gen, (x, z))
        if keys:
            a = pic.px(min(k[0] for k in keys) * c, min(k[1] for k in keys) * c)
            b = pic.px((max(k[0] for k in keys) + 1) * c, (max(k[1] for k in keys) + 1) * c)
            for i in range(a[0], b[0], 6):  # dashed: 3 on, 3 off
                draw.line([(i, a[1]), (min(i + 2, b[0]), a[1])], fill=WINDOW)
                draw.line([(i, b[1] - 1), (min(i + 2, b[0]), b[1] - 1)], fill=WINDOW)
            for j in range(a[1], b[1], 6):
                draw.line([(a[0], j), (a[0], min(j + 2, b[1]))], fill=WINDOW)
                draw.line([(b[0] - 1, j), (b[0] - 1, min(j + 2, b[1]))], fill=WINDOW)
            drew_window = True
        poly = _camera_polygon(gen, (x, z))
        if poly:
            draw.polygon([pic.px(px, pz) for px, pz in poly], outline=CAMERA)
            drew_camera = True
        if x0 <= x < x0 + side and z0 <= z < z0 + side:
            cx, cz = pic.centre(x, z)
            colour = MARK[WARNING] if v["triangles"] > FRAME_BUDGET else VIEW
            draw.line([(cx - 5, cz), (cx + 5, cz)], fill=colour, width=2)
            draw.line([(cx, cz - 5), (cx, cz + 5)], fill=colour, width=2)
            marks.append(Mark(cx, cz, 6, f"{v['name']}: {v['triangles']:,} triangles", colour, "view"))
    severities = set()
    for f in reversed(report.get("findings", [])):  # errors drawn last, on top
        if "cell" not in f:
            continue
        x, z = f["cell"]
        if not (x0 <= x < x0 + side and z0 <= z < z0 + side):
            continue
        cx, cz = pic.centre(x, z)
        colour = MARK[f["severity"]]
        draw.ellipse([cx - 7, cz - 7, cx + 7, cz + 7], outline=colour, width=2)
        severities.add(f["severity"])
        marks.append(Mark(cx, cz, 8, f["code"], colour, "finding"))
    # views and findings are labelled first, errors first among the findings, then the map's own
    findings = sorted(
        (m for m in marks if m.kind == "finding"),
        key=lambda m: [MARK[ERROR], MARK[WARNING], MARK[NOTE]].index(m.colour),
    )
    pic.marks = [m for m in marks if m.kind == "view"] + findings + pic.marks
    if named or every:
        pic.glyphs.append(Glyph("view", "cross", VIEW, "view: its focus cell, triangles drawn"))
        pic.glyphs.append(
            Glyph("view_over", "cross", MARK[WARNING], f"view over the {FRAME_BUDGET:,} triangles a frame")
        )
    if drew_window:
        pic.glyphs.append(Glyph("window", "dashed", WINDOW, "chunks loaded around a view's focus"))
    if drew_camera:
        pic.glyphs.append(Glyph("camera", "polygon", CAMERA, "what the camera sees at the focus's ground"))
    for sev in (ERROR, WARNING, NOTE):
        if sev in severities:
            pic.glyphs.append(Glyph("finding", "ring", MARK[sev], f"finding: {sev} (labelled with its code)", sev))
    return pic.compose()


def exit_status(report: dict) -> int:
    """2 no such asset (a usage mistake), 1 a source with errors or an error finding, 0 otherwise."""
    return {"missing": 2, "invalid": 1, "findings": 1}.get(report["status"], 0)


# -- prefabs ---------------------------------------------------------------------------------------


def report_prefab(record: Any, models: Mapping[str, dict]) -> dict[str, Any]:
    """The inspect prefab report of a decoded PRFB record; ``models`` maps model names to their
    ``inspect model`` reports (a name not there is missing)."""
    from veduta.tools.inspect_model import exit_status as model_exit

    w, d = float(record.footprint[0]), float(record.footprint[1])
    ents = list(getattr(record, "entities", None) or [])
    names = {e.name for e in ents}
    findings: list[dict] = []
    rows = []
    total = 0
    for i, e in enumerate(ents):
        model = getattr(e, "model", "") or ""
        rep = models.get(model) if model else None
        tris = None
        row: dict[str, Any] = {
            "name": e.name,
            "kind": getattr(e, "kind", ""),
            "model": model,
            "material": getattr(e, "material", "") or "",
            "position": [float(v) for v in (e.position or (0, 0, 0))],
            "parent": getattr(e, "parent", "") or "",
        }
        path = f"entities[{i}]"
        if model:
            if rep is None or rep["status"] == "missing":
                findings.append(
                    finding(
                        "PREFAB_MODEL_MISSING",
                        ERROR,
                        f"entity {e.name} names model {model}, which does not exist",
                        path=f"{path}.model",
                        entity=e.name,
                    )
                )
            elif rep["status"] == "invalid":
                findings.append(
                    finding(
                        "PREFAB_MODEL_INVALID",
                        ERROR,
                        f"entity {e.name} names model {model}, whose source has errors",
                        path=f"{path}.model",
                        entity=e.name,
                    )
                )
            else:
                tris = int(rep["triangles"])
                total += tris
                row["lod_triangles"] = rep["lod_triangles"]
                row["draw_distance"] = rep["draw_distance"]
                if model_exit(rep) == 1:
                    codes = sorted({f["code"] for f in rep["findings"] if f["severity"] == ERROR})
                    findings.append(
                        finding(
                            "PREFAB_MODEL_FINDINGS",
                            WARNING,
                            f"entity {e.name}: model {model} has "
                            f"error findings ({', '.join(codes)}; see veduta inspect model {model})",
                            path=f"{path}.model",
                            entity=e.name,
                        )
                    )
        row["triangles"] = tris
        rows.append(row)
        if not row["parent"] or row["parent"] not in names:
            x, _, z = row["position"]
            if abs(x) > w / 2 or abs(z) > d / 2:
                findings.append(
                    finding(
                        "PREFAB_ENTITY_OUTSIDE",
                        WARNING,
                        f"entity {e.name} stands at x {x:g}, "
                        f"z {z:g}, outside the footprint ({w:g} x {d:g} m centred on the origin: "
                        f"x within +-{w / 2:g}, z within +-{d / 2:g})",
                        path=f"{path}.position",
                        entity=e.name,
                    )
                )
    if not ents:
        findings.append(finding("PREFAB_EMPTY", NOTE, "the prefab has no entities: it places nothing visible"))
    if total > FRAME_BUDGET:
        findings.append(
            finding(
                "PREFAB_OVER_BUDGET",
                WARNING,
                f"{total} triangles at full detail, over the {FRAME_BUDGET} a console draws per frame",
            )
        )
    return {
        "footprint": [w, d],
        "tags": list(getattr(record, "tags", None) or []),
        "biomes": list(getattr(record, "biomes", None) or []),
        "min_distance": {x.tag: float(x.meters) for x in getattr(record, "distances", None) or []},
        "entities": rows,
        "triangles": total,
        "findings": ranked(findings),
    }


def inspect_prefab(project: Project, name: str) -> dict[str, Any]:
    """Inspect prefab ``name``: ``{"name", "source", "status", "errors", "footprint", "tags", "biomes",
    "min_distance", "entities": [{name, kind, model, material, position, parent, triangles, ...}],
    "triangles", "findings"}``."""
    from veduta.tools.inspect_model import inspect_model

    rec, out = _head(project, "prefab", name)
    if rec is None:
        return out
    models = {}
    for e in rec.entities or []:
        m = getattr(e, "model", "") or ""
        if m and m not in models:
            models[m] = inspect_model(project, m)
    out |= report_prefab(rec, models)
    mats = [(i, e) for i, e in enumerate(rec.entities or []) if getattr(e, "material", "")]
    extra = []
    for i, e in mats:
        if project.find_source("material", e.material) is None:
            extra.append(
                finding(
                    "PREFAB_MATERIAL_MISSING",
                    ERROR,
                    f"entity {e.name} names material {e.material}, which does not exist",
                    path=f"entities[{i}].material",
                    entity=e.name,
                )
            )
    out["findings"] = ranked(extra + out["findings"])
    out["status"] = "findings" if has_error(out["findings"]) else "ok"
    return out
