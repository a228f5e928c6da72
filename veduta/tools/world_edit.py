"""World editing: ``veduta world place|terrain|vegetation|remove`` (world-format.md, tools).

Each tool is one function (``world_place``, ``world_terrain``, ``world_vegetation``,
``world_remove``) taking the project, the world's name and the source's own field names, and
returning the plain report its ``--json`` prints. They share one recipe:

1. read the world's source and compile it with the world compiler: a world with errors is not
   edited (:class:`~veduta.base.errors.VedutaError` listing them);
2. build the new text with a minimal edit (:mod:`veduta.source.jsonedit`): only the edited array
   changes, every other byte of the file is kept; a NAME already in the list is replaced;
3. compile the new text: any error refuses the edit (the file is untouched);
4. run a generator on the old and on the new world and compare them (what the tool reports);
5. unless ``dry_run``, write the new text atomically.

Nothing here writes cooked files: the world and its prefabs are compiled in memory.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from veduta.base.errors import UsageError, VedutaError, quote
from veduta.base.fsutil import held_lock, rewrite_source
from veduta.base.progress import Progress, tell

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project
    from veduta.formats.codec import Struct
    from veduta.source.diagnostics import Report
    from veduta.world.generator import Generator

#: the lists the tools edit, and what one element is called in messages
SECTIONS = {"features": "feature", "vegetation": "vegetation rule", "places": "place"}
#: ``--near``: the default and largest search radius, in cells
NEAR_SEARCH = 32
NEAR_SEARCH_MAX = 256
#: terrain reports compute discs up to this many vertices across vertex by vertex (beyond, the
#: extremes within EXTREMES_TOL_MM and a sampled mean: veduta.world.areas.ground_summary)
SAMPLE_SIDE = 512
EXTREMES_TOL_MM = 60
#: area vegetation rules are counted cell by cell up to this radius, in cells
COUNT_RADIUS_MAX = 256
#: rows of cells counted at once
COUNT_ROWS = 128


class EditRefused(VedutaError):
    """The edit would break the world (or the world is already broken); nothing was written."""

    def __init__(self, message: str, findings: list[dict] | None = None):
        super().__init__(message)
        self.findings = findings or []


class UnknownAsset(EditRefused, UsageError):
    """The edit names an asset that does not exist (a usage mistake: exit 2); nothing was written."""


class BadValue(EditRefused, UsageError):
    """A value given for the new element is out of range or wrong for its field (the compiler's
    errors are all inside the element): a usage mistake, exit 2; nothing was written."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def edit_lock_path(project: Project, world: str) -> str:
    """The lock file of world *world*'s edits: ``<cache>/world-edit-<hash of the name>.lock``."""
    import hashlib

    return os.path.join(project.cache, f"world-edit-{hashlib.sha256(world.encode()).hexdigest()[:16]}.lock")


@contextlib.contextmanager
def edit_lock(project: Project, world: str) -> Iterator[None]:
    """Hold the edit lock of world *world* (``flock`` of :func:`edit_lock_path`): an edit reads
    the source, builds and checks the new text and writes it with the lock held, so an edit of
    the same world made by another process at the same time (a second ``veduta mcp``, a ``veduta
    world place`` in a terminal) waits and then works on this one's result instead of writing over
    it. Where no lock can be taken (no ``fcntl``, a cache folder that cannot be written) edits go
    on without it; the write still refuses a file that changed since it was read."""
    with held_lock(edit_lock_path(project, world)):
        yield


def _one_at_a_time(tool: Callable[_P, _R]) -> Callable[_P, _R]:
    """An edit tool (``tool(project, world, ...)``) run under :func:`edit_lock` of its world."""

    @functools.wraps(tool)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        project, world = args[:2] if len(args) >= 2 else (args[0], kwargs["world"])
        with edit_lock(cast("Project", project), str(world)):
            return tool(*args, **kwargs)

    return run


# -- the world as source text, compiled --------------------------------------------------------


@dataclass
class WorldSource:
    """A world's source file, its text and its compiled WRLD record."""

    project: Project
    name: str
    rel: str  # under the assets folder, e.g. "worlds/valley.vworld"
    path: str
    text: str
    world: Any
    warnings: list = field(default_factory=list)
    index: Any = None
    _prefabs: dict = field(default_factory=dict)
    _models: dict = field(default_factory=dict)

    @property
    def shown(self) -> str:
        return os.path.join(self.project.assets, self.rel)

    def compile(self, text: str) -> tuple[Struct | None, Report]:
        """(record or None, report) of a world text as if it were this source."""
        from veduta.compile import CompileContext, compile_source
        from veduta.source.diagnostics import Report

        rep = Report(self.shown)
        ctx = CompileContext(
            assets_dir=self.project.assets, source=self.rel, kind="world", name=self.name, report=rep, index=self.index
        )
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise EditRefused("the new text is not UTF-8") from None
        return compile_source("world", data, ctx), rep

    def prefab(self, name: str) -> Any:
        """The compiled PRFB record of prefab *name*, None when it is missing or has errors."""
        if name not in self._prefabs:
            self._prefabs[name] = self._compile_asset("prefab", name)
        return self._prefabs[name]

    def model(self, name: str) -> Any:
        """The compiled MESH record of model *name*, None when it is missing or has errors."""
        if name not in self._models:
            self._models[name] = self._compile_asset("model", name)
        return self._models[name]

    def _compile_asset(self, kind: str, name: str) -> Struct | None:
        from veduta.compile import CompileContext, compile_source
        from veduta.source import read_source
        from veduta.source.diagnostics import Report

        rel = self.index.resolve(kind, name)
        if rel is None:
            return None
        try:
            data = read_source(self.project.source_path(rel), kind)[0]
        except OSError:  # (too large for its kind too: its own check says so)
            return None
        ctx = CompileContext(
            assets_dir=self.project.assets, source=rel, kind=kind, name=name, report=Report(rel), index=self.index
        )
        return compile_source(kind, data, ctx)

    def exists(self, kind: str, name: str) -> bool:
        return self.index.resolve(kind, name) is not None

    def suggest(self, kind: str, name: str) -> str:
        """`` (did you mean well?)`` when assets of *kind* have names close to *name*, else ``""``."""
        from veduta.base.names import did_you_mean

        return did_you_mean(name, self.index.by_kind.get(kind, ()))

    def generator(self, world: Any, like: Generator | None = None) -> Generator:
        """The generator of a compiled world, with every prefab it names that compiles;
        ``like``: the generator of the world before the edit (what they compute alike is shared)."""
        from veduta.world.generator import Generator
        from veduta.world.params import prefab_names

        prefabs = {n: rec for n in prefab_names(world) if (rec := self.prefab(n)) is not None}
        return Generator(world, prefabs, like=like)


def load_world_source(project: Project, world: str) -> WorldSource:
    """Read and compile world *world*; :class:`EditRefused` when it has errors."""
    from veduta.base.project import no_such_asset

    src = project.find_source("world", world)
    if src is None:
        raise no_such_asset(project, "world", world)
    from veduta.base.fsutil import TooLarge
    from veduta.source import read_source

    path = project.source_path(src.rel)
    ws = WorldSource(project, world, src.rel, path, "", None, index=project.index())
    refused = f"world {world} has errors, so it is not edited; fix them first:\n  "
    try:
        data = read_source(path, "world")[0]
    except TooLarge as exc:  # from one stat, before a byte is read
        raise EditRefused(f"{refused}{ws.shown}:1:1: $: {exc.strerror}") from None
    try:
        ws.text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditRefused(f"{refused}{ws.shown}: not UTF-8") from None
    rec, rep = ws.compile(ws.text)
    if rec is None:
        lines = [str(d) for d in rep.sorted() if d.severity == "error"]
        raise EditRefused(refused + "\n  ".join(lines), _source_errors(rep))
    ws.world = rec
    ws.warnings = [str(d) for d in rep.warnings]
    return ws


def _names(ws: WorldSource, section: str) -> list[str]:
    """The names of the elements of *section* in the source text."""
    from veduta.source.jsonedit import JsonDoc
    from veduta.source.jsonpos import Arr, Obj, to_plain

    node = JsonDoc(ws.text).root.get(section)
    if not isinstance(node, Arr):
        return []
    keys = [item.get("name") for item in node if isinstance(item, Obj)]
    return [n for key in keys if key is not None and isinstance(n := to_plain(key), str)]


def _find(ws: WorldSource, section: str, name: str) -> int | None:
    """Index of the element of *section* named *name* in the source text, None when absent."""
    from veduta.source.jsonedit import JsonDoc
    from veduta.source.jsonpos import Arr, Obj, to_plain

    doc = JsonDoc(ws.text)
    node = doc.root.get(section)
    if not isinstance(node, Arr):
        return None
    for i, item in enumerate(node):
        if isinstance(item, Obj) and (key := item.get("name")) is not None and to_plain(key) == name:
            return i
    return None


def _element(ws: WorldSource, section: str, index: int) -> dict:
    from veduta.source.jsonedit import JsonDoc
    from veduta.source.jsonpos import to_plain

    return to_plain(JsonDoc(ws.text).array(section).value[index])


def _top_order() -> list[str]:
    from veduta.compile.world import TOP

    return list(TOP.fields)


def _plain(v: Any) -> Any:
    """Whole floats as integers (3.0 is written 3), so the report shows what the file says."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return int(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _edit_text(ws: WorldSource, section: str, element: dict, index: int | None) -> str:
    """The new text; *element* is normalised in place to what is written."""
    from veduta.source.jsonedit import append_item, replace_item

    for k, v in element.items():
        element[k] = _plain(v)
    if index is None:
        return append_item(ws.text, section, element, _top_order())
    return replace_item(ws.text, section, index, element)


def _source_errors(rep: Report) -> list[dict]:
    """The compiler's errors as findings (``path`` is the JSON path in the source)."""
    return [
        {"code": d.code or "WORLD_SOURCE_ERROR", "severity": "error", "message": d.message, "path": d.path}
        for d in rep.sorted()
        if d.severity == "error"
    ]


def _compile_new(
    ws: WorldSource, text: str, what: str, section: str | None = None, index: int | None = None
) -> tuple[Struct, Report]:
    """Compile the new text; EditRefused when it has errors (:class:`BadValue` when they are all
    in the new element, ``section[index]``, index None: the last one)."""
    rec, rep = ws.compile(text)
    if rec is None:
        errors = _source_errors(rep)
        message = f"{what} would make world {ws.name} invalid, so nothing was written:\n  " + "\n  ".join(
            f"{f['path']}: {f['message']}" for f in errors
        )
        if section is not None and errors:
            if index is None:
                from veduta.source.jsonedit import JsonDoc

                index = len(JsonDoc(text).array(section)) - 1
            mine = f"{section}[{index}]"
            if all((f["path"] or "") == mine or (f["path"] or "").startswith((mine + ".", mine + "[")) for f in errors):
                raise BadValue(message, errors)
        raise EditRefused(message, errors)
    return rec, rep


def _write(ws: WorldSource, text: str, dry_run: bool) -> bool:
    if dry_run:
        return False
    import stat

    try:
        mode = stat.S_IMODE(os.stat(ws.path).st_mode)
    except OSError:
        mode = 0o200
    if not mode & 0o222:
        raise EditRefused(
            f"{ws.shown} is read-only (mode {mode:o}), so nothing was written; make it writable (chmod u+w) to edit it"
        )
    from veduta.source import read_source

    try:
        now = read_source(ws.path, "world")[0]
    except OSError:  # (gone, or replaced by one too large: not what was prepared)
        now = None
    if now != ws.text.encode("utf-8"):  # an editor saved it while we worked: keep the author's version
        raise EditRefused(f"{ws.shown} changed while the edit was prepared; nothing was written (run it again)")
    try:
        rewrite_source(ws.path, text.encode("utf-8"))
    except OSError as e:
        raise VedutaError(f"cannot write {ws.shown}: {e.strerror or e}") from None
    return True


def _base(
    ws: WorldSource, section: str, name: str, action: str, old: dict | None, new: dict | None, dry_run: bool
) -> dict[str, Any]:
    return {
        "world": ws.name,
        "source": ws.shown.replace(os.sep, "/"),
        "list": section,
        "name": name,
        "action": action,
        "old": old,
        "new": new,
        "dry_run": bool(dry_run),
        "written": False,
    }


def _m(mm: int) -> float:
    return int(mm) / 1000.0


def _cell(v: Any, what: str = "cell") -> tuple[int, int]:
    try:
        x, z = v
        if isinstance(x, bool) or isinstance(z, bool) or int(x) != x or int(z) != z:
            raise TypeError
        return int(x), int(z)
    except (TypeError, ValueError):
        raise UsageError(f"{what} {v!r} is not two whole numbers [x, z]") from None


def _check_name(name: str, what: str) -> None:
    from veduta.base.names import NAME_RE, NAME_RULE

    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"{what} {quote(name) if isinstance(name, str) else repr(name)} is not a valid name ({NAME_RULE})"
        )


# -- place checks ------------------------------------------------------------------------------


def place_problems(gen: Generator, name: str, prefab: str, x: int, z: int, rotation: int = 0) -> list[dict]:
    """The errors of ``inspect world``'s place checks (:func:`veduta.world.checks.place_findings`)
    for place *name* at cell [x, z]: outside the world, missing prefab, water, biome, overlap,
    min_distance. Empty when the place can stand there."""
    from veduta.world.checks import place_findings

    return [f for f in place_findings(gen, name, prefab, (x, z), rotation) if f["severity"] == "error"]


def _spiral(cx: int, cz: int, r: int) -> list[tuple[int, int]]:
    """Cells within r of (cx, cz), nearest first; ties by z, then x (deterministic)."""
    import numpy as np

    d = np.arange(-r, r + 1, dtype=np.int64)
    dx, dz = (a.ravel() for a in np.meshgrid(d, d))
    d2 = dx * dx + dz * dz
    keep = d2 <= r * r
    dx, dz, d2 = dx[keep], dz[keep], d2[keep]
    order = np.lexsort((dx, dz, d2))
    return list(zip((cx + dx[order]).tolist(), (cz + dz[order]).tolist(), strict=True))


# -- structures that change ----------------------------------------------------------------------


def _rect_around(gen: Generator, x: int, z: int, reach: int) -> tuple[int, int, int, int]:
    """The cell rectangle within *reach* of vertex (x, z) plus what structures there touch,
    clamped to the world."""
    from veduta.world.structures import PAD_BLEND

    m = reach + PAD_BLEND + gen.structs.reach + 1
    n = gen.p.cells
    x0, z0 = max(-n, x - m), max(-n, z - m)
    x1, z1 = min(n, x + m), min(n, z + m)
    return x0, z0, max(0, x1 - x0), max(0, z1 - z0)


def structure_changes(before: Generator, after: Generator, rect: tuple[int, int, int, int]) -> list[dict]:
    """Sites and places of a rectangle that differ between two generators: dropped, added, wet,
    or on a pad at another height (:func:`veduta.world.areas.structure_changes`)."""
    from veduta.world.areas import structure_changes as changes

    return changes(before, after, *rect)


# -- place ---------------------------------------------------------------------------------------


@_one_at_a_time
def world_place(
    project: Project,
    world: str,
    name: str,
    prefab: str,
    cell: Sequence[int] | None = None,
    near: Sequence[int] | None = None,
    rotation: int = 0,
    search: int = NEAR_SEARCH,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Add (or replace) place *name* with *prefab* at *cell*, or at the valid cell nearest *near*.

    The cell must pass the place checks of ``inspect world`` (water, overlap, biome, distances,
    outside the world, missing prefab): any error refuses the edit and names the finding codes.
    ``near`` searches the cells within *search* cells (at most 256), nearest first (ties by z,
    then x), and writes the first valid one."""
    from veduta.compile.world import ROTATIONS

    _check_name(name, "place name")
    _check_name(prefab, "prefab")
    if (cell is None) == (near is None):
        raise UsageError(
            "give either cell (a cell to check) or near (where to look for one), not both"
            if cell is not None
            else "give a cell (cell) or where to look for one (near)"
        )
    if rotation not in ROTATIONS:
        raise UsageError(f"rotation {rotation} is not 0, 90, 180 or 270")
    if not isinstance(search, int) or not 1 <= search <= NEAR_SEARCH_MAX:
        raise UsageError(f"search {search} out of range [1, {NEAR_SEARCH_MAX}] cells")
    ws = load_world_source(project, world)
    if not ws.exists("prefab", prefab):
        hint = ws.suggest("prefab", prefab)
        raise UnknownAsset(
            f"prefab {quote(prefab)} does not exist{hint} (WORLD_PREFAB_MISSING); nothing was written",
            [
                {
                    "code": "WORLD_PREFAB_MISSING",
                    "severity": "error",
                    "message": f"prefab {quote(prefab)} does not exist{hint}",
                }
            ],
        )
    if ws.prefab(prefab) is None:
        raise EditRefused(f'prefab "{prefab}" has errors (inspect prefab {prefab}); nothing was written')
    index = _find(ws, "places", name)
    old = _element(ws, "places", index) if index is not None else None

    before = ws.generator(ws.world)
    # the generator the checks run on: the old world plus the prefab (absent when nothing uses it yet)
    screen = before if prefab in before.prefabs else _with_prefab(ws, prefab)
    tried = 0
    if cell is not None:
        x, z = _cell(cell)
        candidates = [(x, z)]
    else:
        nx, nz = _cell(near, "near")
        candidates = _spiral(nx, nz, search)
    rejected: dict[str, int] = {}  # cells refused, by their first finding
    chosen = None
    problems: list[dict] = []
    quick = (
        _prescreen(screen, prefab, rotation, candidates).codes  # type: ignore[attr-defined]
        if len(candidates) > 1
        else [None] * len(candidates)
    )
    tell(progress, 0, len(candidates), "cells tried")
    for (x, z), code in zip(candidates, quick, strict=True):
        tried += 1
        if tried % 256 == 0:
            tell(progress, tried, len(candidates), "cells tried")
        if code is not None:
            rejected[code] = rejected.get(code, 0) + 1
            continue
        problems = place_problems(screen, name, prefab, x, z, rotation)
        if not problems:
            chosen = (x, z)
            break
        rejected[problems[0]["code"]] = rejected.get(problems[0]["code"], 0) + 1
    if chosen is None:
        if cell is not None:
            codes = ", ".join(f["code"] for f in problems)
            raise EditRefused(
                f'place "{name}" at cell [{cell[0]}, {cell[1]}] is refused ({codes}); nothing was '
                f"written:\n  " + "\n  ".join(f"{f['code']}: {f['message']}" for f in problems),
                problems,
            )
        assert near is not None  # no cell: near was given (checked above)
        why = ", ".join(f"{k} {v}" for k, v in sorted(rejected.items()))
        counts = [
            {"code": k, "severity": "error", "count": v, "message": f"{v} of the {tried} cells tried: {k}"}
            for k, v in sorted(rejected.items())
        ]
        raise EditRefused(
            f'no valid cell for place "{name}" (prefab "{prefab}", rotation {rotation}) within '
            f"{search} cells of [{near[0]}, {near[1]}]: {tried} cells tried ({why}); try another "
            f"near or a larger search (at most {NEAR_SEARCH_MAX})",
            counts,
        )
    x, z = chosen
    element: dict[str, Any] = {"name": name, "prefab": prefab, "cell": [x, z]}
    if rotation:
        element["rotation"] = rotation
    text = _edit_text(ws, "places", element, index)
    rec, rep = _compile_new(ws, text, f'place "{name}"', "places", index)
    after = ws.generator(rec, like=before)
    final = place_problems(after, name, prefab, x, z, rotation)
    if final:  # the screen and the new world disagree: say so rather than write
        raise EditRefused(
            f'place "{name}" at cell [{x}, {z}] is refused ('
            + ", ".join(f["code"] for f in final)
            + "); nothing was written",
            final,
        )
    s = next(st for st in after.structs.places if st.name == name)
    rect = _rect_around(after, x, z, max(s.fw, s.fd))
    changes = [c for c in structure_changes(before, after, rect) if c["name"] != name]
    out = _base(ws, "places", name, "replaced" if old is not None else "added", old, element, dry_run)
    out.update(
        {
            "cell": [x, z],
            "prefab": prefab,
            "rotation": rotation,
            "footprint": {"cell": [s.x0, s.z0], "size": [s.fw, s.fd]},
            "height": _m(s.level_mm),
            "biome": after.p.biome_names[after.terrain.biome_at(x, z)],
            "searched": tried if near is not None else None,
            "changes": changes,
            "warnings": _rule_warnings(rep, "places"),
        }
    )
    if near is not None:
        out["near"] = list(_cell(near, "near"))
    out["written"] = _write(ws, text, dry_run)
    return out


def _prescreen(
    gen: Generator, prefab: str, rotation: int, candidates: list[tuple[int, int]]
) -> Callable[[int, int], str | None]:
    """``quick(x, z)``: the first finding code :func:`place_problems` would give for the cells it
    can rule out from arrays computed once over the whole search (footprint outside the world, a
    footprint vertex under water, a biome the prefab does not list), else None; ``quick.codes``:
    the same for every candidate, in order. A speed-up only: the cells it passes still get the
    full check."""
    import numpy as np

    from veduta.world.checks import place_footprint

    p = gen.p
    pf = gen.prefabs[prefab]
    _, _, fw, fd = place_footprint(gen, prefab, (0, 0), rotation)
    cx = np.asarray([c[0] for c in candidates], dtype=np.int64)
    cz = np.asarray([c[1] for c in candidates], dtype=np.int64)
    x0, z0 = int(cx.min()) - fw, int(cz.min()) - fd  # vertices of every candidate footprint
    w, h = int(cx.max()) - x0 + fw + 1, int(cz.max()) - z0 + fd + 1
    t = gen.terrain
    wet = (t.ground(x0, z0, w, h) < t.water_levels(x0, z0, w, h)).astype(np.int64)
    sat = np.zeros((h + 1, w + 1), dtype=np.int64)  # summed-area table of wet vertices
    sat[1:, 1:] = wet.cumsum(0).cumsum(1)
    allowed = np.asarray([pf.allows(b) for b in p.biome_names], dtype=bool)
    biome = t.biomes(x0, z0, w, h)
    n = p.cells
    fx0, fz0 = cx - fw // 2, cz - fd // 2
    outside = (fx0 < -n) | (fz0 < -n) | (fx0 + fw > n) | (fz0 + fd > n)
    i0, j0 = fx0 - x0, fz0 - z0
    i1, j1 = i0 + fw + 1, j0 + fd + 1
    water = (sat[j1, i1] - sat[j0, i1] - sat[j1, i0] + sat[j0, i0]) > 0
    bad_biome = ~allowed[biome[cz - z0, cx - x0]]
    codes = np.where(outside, 1, np.where(water, 2, np.where(bad_biome, 3, 0))).tolist()
    names = [None, "WORLD_PLACE_OUTSIDE", "WORLD_PLACE_WATER", "WORLD_PLACE_BIOME"]

    def quick(x: int, z: int) -> str | None:
        fx0, fz0 = x - fw // 2, z - fd // 2
        if fx0 < -n or fz0 < -n or fx0 + fw > n or fz0 + fd > n:
            return names[1]
        i0, j0 = fx0 - x0, fz0 - z0
        i1, j1 = i0 + fw + 1, j0 + fd + 1
        if sat[j1, i1] - sat[j0, i1] - sat[j1, i0] + sat[j0, i0]:
            return names[2]
        if not allowed[biome[z - z0, x - x0]]:
            return names[3]
        return None

    quick.codes = [names[c] for c in codes]  # type: ignore[attr-defined]
    return quick


def _with_prefab(ws: WorldSource, prefab: str) -> Generator:
    from veduta.world.generator import Generator

    gen = ws.generator(ws.world)
    prefabs = {n: p.record for n, p in gen.prefabs.items()}
    prefabs[prefab] = ws.prefab(prefab)
    return Generator(ws.world, prefabs)


def _rule_warnings(rep: Report, section: str, index: int | None = None) -> list[dict]:
    """The compiler's warnings about the edited list (as findings)."""
    out = []
    for d in rep.warnings:
        if d.path == section or d.path.startswith(section + "["):
            if index is not None and not d.path.startswith(f"{section}[{index}]"):
                continue
            out.append(
                {"code": d.code or "WORLD_SOURCE_WARNING", "severity": "warning", "message": f"{d.path}: {d.message}"}
            )
    return out


# -- terrain -------------------------------------------------------------------------------------


def _heights(gen: Generator, x: int, z: int, r: int) -> dict[str, Any]:
    """Final ground over the disc of radius r (vertices) around vertex (x, z), inside the world:
    centre, min, max and mean in metres. A disc up to SAMPLE_SIDE vertices across is computed
    vertex by vertex; a wider one (``step`` in the report) by :func:`veduta.world.areas.ground_summary`:
    min and max within 6 cm of every vertex's (values of real vertices), the mean over the
    vertices every ``step`` vertices."""
    import numpy as np

    if 2 * r + 1 > SAMPLE_SIDE:
        from veduta.world.areas import ground_summary

        s = ground_summary(gen, x, z, r, tol=EXTREMES_TOL_MM)
        return {
            "centre": _m(s["centre"]),
            "min": _m(s["min"]),
            "max": _m(s["max"]),
            "mean": round(s["mean_mm"] / 1000.0, 3),
            "step": s["step"],
        }
    n = gen.p.cells
    x0, x1 = max(-n, x - r), min(n, x + r)
    z0, z1 = max(-n, z - r), min(n, z + r)
    centre = int(gen.heights(x, z, 1, 1)[0, 0])
    if x1 < x0 or z1 < z0:  # the whole disc is outside the world: its centre vertex is all there is
        return {"centre": _m(centre), "min": _m(centre), "max": _m(centre), "mean": round(centre / 1000.0, 3)}
    g = gen.heights(x0, z0, x1 - x0 + 1, z1 - z0 + 1)
    xs = np.arange(x0, x1 + 1, dtype=np.int64)
    zs = np.arange(z0, z1 + 1, dtype=np.int64)
    vals = g[(xs[None, :] - x) ** 2 + (zs[:, None] - z) ** 2 <= r * r]
    if not vals.size:
        return {"centre": _m(centre), "min": _m(centre), "max": _m(centre), "mean": round(centre / 1000.0, 3)}
    return {
        "centre": _m(centre),
        "min": _m(int(vals.min())),
        "max": _m(int(vals.max())),
        "mean": round(int(vals.sum()) / vals.size / 1000.0, 3),
    }


def _terrain_report(
    before: Generator, after: Generator, x: int, z: int, r: int, reach: int, progress: Progress | None = None
) -> dict[str, Any]:
    rect = _rect_around(after, x, z, reach)
    wet_before = sorted(s.name for s in before.structs.places if s.wet)
    wet_after = sorted(s.name for s in after.structs.places if s.wet)
    tell(progress, 1, 4, "ground before")
    h_before = _heights(before, x, z, r)
    tell(progress, 2, 4, "ground after")
    h_after = _heights(after, x, z, r)
    tell(progress, 3, 4, "sites and places that change")
    changes = structure_changes(before, after, rect)
    tell(progress, 4, 4, "report")
    return {
        "before": h_before,
        "after": h_after,
        "places_in_water": wet_after,
        "places_newly_in_water": [n for n in wet_after if n not in wet_before],
        "changes": changes,
    }


@_one_at_a_time
def world_terrain(
    project: Project,
    world: str,
    name: str,
    kind: str,
    cell: Sequence[int],
    radius: int,
    height: float | None = None,
    depth: float | None = None,
    falloff: int | None = None,
    roughness: float | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Add (or replace) feature *name* (a hill, plain, lake or sea) and report the ground before
    and after over its area (centre, min, max, mean), the places in water and the sites and
    places that change (dropped, added, on a pad at another height, in or out of water)."""
    from veduta.compile.world import FEATURE_DEFAULTS
    from veduta.world.terrain import feature_reach

    _check_name(name, "feature name")
    if kind not in FEATURE_DEFAULTS:
        raise UsageError(f'kind "{kind}" is not "hill", "plain", "lake" or "sea"')
    x, z = _cell(cell)
    element: dict[str, Any] = {"name": name, "kind": kind, "cell": [x, z], "radius": radius}
    for key, v in (("height", height), ("depth", depth), ("falloff", falloff), ("roughness", roughness)):
        if v is not None:
            element[key] = v
    ws = load_world_source(project, world)
    index = _find(ws, "features", name)
    old = _element(ws, "features", index) if index is not None else None
    text = _edit_text(ws, "features", element, index)
    rec, rep = _compile_new(ws, text, f'feature "{name}"', "features", index)
    before = ws.generator(ws.world)
    after = ws.generator(rec, like=before)
    f = next(fp for fp in after.p.features if fp.name == name)
    reach = feature_reach(f)
    if old is not None:  # a moved feature changes its old area too
        o = next(fp for fp in before.p.features if fp.name == name)
        ox, oz = o.x, o.z
        reach = max(reach, feature_reach(o) + max(abs(ox - x), abs(oz - z)))
    out = _base(ws, "features", name, "replaced" if old is not None else "added", old, element, dry_run)
    out.update(
        {
            "kind": kind,
            "cell": [x, z],
            "radius": radius,
            "level": _m(after.terrain.levels[f.index]) if kind != "hill" else None,
        }
    )
    out.update(_terrain_report(before, after, x, z, radius, reach, progress))
    out["warnings"] = _rule_warnings(rep, "features")
    out["written"] = _write(ws, text, dry_run)
    return out


# -- vegetation ----------------------------------------------------------------------------------


def _rule_count(gen: Generator, rule_index: int, x0: int, z0: int, w: int, h: int) -> int:
    """Plants (model rule) or cells won (prefab rule) of vegetation rule *rule_index* in a rectangle
    (:meth:`~veduta.world.generator.Generator.rule_cells`, what the game's chunks hold), in strips
    of COUNT_ROWS rows (bounded memory)."""
    n = 0
    for zb in range(z0, z0 + h, COUNT_ROWS):
        n += int(gen.rule_cells(rule_index, x0, zb, w, min(COUNT_ROWS, z0 + h - zb)).sum())
    return n


def _triangles_each(ws: WorldSource, model: str | None, prefab: str | None) -> int | None:
    """Level-0 triangles of one plant (its model) or one instance (its prefab's entities' models)."""
    if model:
        mesh = ws.model(model)
        return None if mesh is None else mesh.triangles
    rec = ws.prefab(prefab) if prefab else None
    if rec is None:
        return None
    total = 0
    for e in rec.entities or []:
        if e.model:
            mesh = ws.model(e.model)
            total += mesh.triangles if mesh is not None else 0
    return total


def _view_triangles(ws: WorldSource, gens: list, focus: tuple[int, int]) -> list[dict[str, int]]:
    """The triangles drawn from a view at *focus* in each generator's world, by the drawing model
    of ``inspect world`` (veduta.world.draw: levels of detail, flora thinning, draw_distance, the
    camera's view volume): ``{"total", "flora", "entities"}`` per generator."""
    from veduta.tools.inspect_model import inspect_model
    from veduta.tools.inspect_world import needed_models
    from veduta.world.draw import Drawer, ModelDraw

    names = sorted({n for g in gens for n in needed_models(g)})
    models = {}
    for n in names:
        rep = inspect_model(ws.project, n)
        if rep["status"] in ("ok", "findings"):
            models[n] = ModelDraw.from_report(rep)
    out = []
    for g in gens:
        v = Drawer(g, models).view(focus)
        out.append(
            {
                "total": v["ground"] + v["skirts"] + v["water"] + v["flora"] + v["entities"],
                "flora": v["flora"],
                "entities": v["entities"],
            }
        )
    return out


def _vegetation_counts(ws: WorldSource, gen: Generator, rule_name: str) -> dict[str, Any]:
    """How many plants (or prefab cells) a rule gets: in its area, or in the loaded chunks around
    the start cell for a world-wide rule (with the figure per chunk)."""
    i = next(k for k, r in enumerate(gen.p.vegetation) if r.name == rule_name)
    r = gen.p.vegetation[i]
    n = gen.p.cells
    c = gen.p.chunk
    if r.area and r.radius <= COUNT_RADIUS_MAX:
        x0, z0 = max(-n, r.x - r.radius), max(-n, r.z - r.radius)
        x1, z1 = min(n, r.x + r.radius), min(n, r.z + r.radius)
        count = _rule_count(gen, i, x0, z0, x1 - x0, z1 - z0) if x1 > x0 and z1 > z0 else 0
        counted: dict[str, Any] = {"area": {"cell": [r.x, r.z], "radius": r.radius}}
    else:
        view = int(ws.world.view)
        cx0, cz0 = -view, -view  # the start cell [0, 0] is in chunk [0, 0]
        if r.area:
            cx0, cz0 = r.x // c - view, r.z // c - view
        side = 2 * view + 1
        count = _rule_count(gen, i, cx0 * c, cz0 * c, side * c, side * c)
        counted = {"chunks": {"first": [cx0, cz0], "count": side * side}, "per_chunk": round(count / (side * side), 2)}
    return {"rule": i, "plants": count, **counted}


@_one_at_a_time
def world_vegetation(
    project: Project,
    world: str,
    name: str,
    density: float,
    prefab: str | None = None,
    model: str | None = None,
    biomes: Sequence[str] | str | None = None,
    cell: Sequence[int] | None = None,
    radius: int | None = None,
    scale: Sequence[float] | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Add (or replace) vegetation rule *name* and report how many plants it gets (in its area, or
    in the loaded chunks around the start cell for a world-wide rule), what they cost to draw
    (``triangles``) and warnings (a missing model or prefab, flora without draw_distance, a
    prefab rule that wins no cell)."""
    _check_name(name, "vegetation rule name")
    if prefab is not None and model is not None:
        raise UsageError("give a prefab (one per cell: trees, rocks) or a model (flora), not both")
    if model is not None:
        kind, asset = "model", model
    elif prefab is not None:
        kind, asset = "prefab", prefab
    else:
        raise UsageError("give a prefab (trees, rocks) or a model (flora)")
    if (cell is None) != (radius is None):
        raise UsageError("an area needs both cell and radius")
    element: dict[str, Any] = {"name": name}
    if prefab is not None:
        element["prefab"] = prefab
    else:
        element["model"] = model
    element["density"] = density
    if isinstance(biomes, str):  # "meadow,heath" from a caller that passes text
        biomes = [b.strip() for b in biomes.split(",") if b.strip()]
    if biomes:
        element["biomes"] = list(biomes)
    if cell is not None:
        element["cell"] = list(_cell(cell))
        element["radius"] = radius
    if scale is not None:
        element["scale"] = list(scale)
    ws = load_world_source(project, world)
    index = _find(ws, "vegetation", name)
    old = _element(ws, "vegetation", index) if index is not None else None
    text = _edit_text(ws, "vegetation", element, index)
    rec, rep = _compile_new(ws, text, f'vegetation rule "{name}"', "vegetation", index)
    after = ws.generator(rec)
    tell(progress, 1, 3, "plants")
    counts = _vegetation_counts(ws, after, name)
    rule_index = counts.pop("rule")
    warnings = []
    missing = not ws.exists(kind, asset)
    broken = not missing and (ws.model(asset) if model else ws.prefab(asset)) is None
    if missing:
        code = "WORLD_MODEL_MISSING" if model else "WORLD_PREFAB_MISSING"
        warnings.append(
            {
                "code": code,
                "severity": "warning",
                "message": f'{kind} "{asset}" does not exist{ws.suggest(kind, asset)}: the rule '
                + ("plants it, but nothing is drawn" if model else "places nothing"),
            }
        )
    elif broken:
        code = "WORLD_MODEL_INVALID" if model else "WORLD_PREFAB_INVALID"
        warnings.append(
            {
                "code": code,
                "severity": "warning",
                "message": f'{kind} "{asset}" has errors (veduta inspect {kind} {asset}): the rule '
                + ("plants it, but nothing is drawn" if model else "places nothing"),
            }
        )
    elif prefab:  # the prefab's own models: one that is missing or broken draws nothing
        rec = ws.prefab(prefab)
        for m in sorted({e.model for e in rec.entities or [] if getattr(e, "model", "")}):
            if not ws.exists("model", m):
                warnings.append(
                    {
                        "code": "WORLD_MODEL_MISSING",
                        "severity": "warning",
                        "message": f'prefab "{prefab}" names model "{m}", which does not exist'
                        f"{ws.suggest('model', m)}: its entities draw nothing",
                    }
                )
            elif ws.model(m) is None:
                warnings.append(
                    {
                        "code": "WORLD_MODEL_INVALID",
                        "severity": "warning",
                        "message": f'prefab "{prefab}" names model "{m}", which has errors (veduta inspect '
                        f"model {m}): its entities draw nothing",
                    }
                )
    each = _triangles_each(ws, model, prefab)
    # what the rule costs to draw: a view at its area's centre (the start cell for a world-wide
    # rule) with it, against the same view without it
    if index is None:
        without = ws.generator(ws.world)
    else:
        from veduta.source.jsonedit import remove_item

        without = ws.generator(_compile_new(ws, remove_item(text, "vegetation", index), "")[0])
    focus = tuple(element["cell"]) if "cell" in element else (0, 0)
    tell(progress, 2, 3, "triangles drawn")
    v_without, v_with = _view_triangles(ws, [without, after], focus)
    tell(progress, 3, 3, "report")
    view = {
        "focus": list(focus),
        "triangles": v_with["total"],
        "without_rule": v_without["total"],
        "budget": _frame_budget(),
    }
    if model:
        mesh = ws.model(model)
        if mesh is not None and not mesh.draw_distance:
            warnings.append(
                {
                    "code": "WORLD_FLORA_NO_DRAW_DISTANCE",
                    "severity": "warning",
                    "message": f'flora model "{model}" has no draw_distance: every plant in the loaded '
                    f"chunks is drawn, however far",
                }
            )
    added, budget = v_with["total"] - v_without["total"], _frame_budget()
    # said here too (inspect world says it for every view): the author heeds this report's warnings;
    # a rule that takes the view over budget, or adds a tenth of the budget to a view already over
    if v_with["total"] > budget and added > 0 and (v_without["total"] <= budget or added * 10 >= budget):
        whose = "the model" if model else "the prefab's models"
        warnings.append(
            {
                "code": "WORLD_CHUNK_BUDGET",
                "severity": "warning",
                "message": f"the view at {list(focus)} draws {v_with['total']} triangles with this rule "
                f"({v_without['total']} without it, {added} are this rule's), over the "
                f"{budget} a console draws per frame: plant fewer (density, area) or give "
                f"{whose} coarser levels of detail sooner",
            }
        )
    if counts["plants"] == 0 and not missing and not broken:
        what = "wins no cell" if prefab else "plants nothing"
        where = "in its area" if "area" in counts else "in the chunks around the start cell"
        warnings.append(
            {
                "code": "WORLD_VEGETATION_EMPTY",
                "severity": "warning",
                "message": f'vegetation rule "{name}" {what} {where} (biomes, water, density, or '
                f"earlier rules taking the cells)",
            }
        )
    # the compiler's MISSING_REFERENCE says what WORLD_*_MISSING says: once is enough
    warnings += [
        w for w in _rule_warnings(rep, "vegetation", rule_index) if not (missing and w["code"] == "MISSING_REFERENCE")
    ]
    out = _base(ws, "vegetation", name, "replaced" if old is not None else "added", old, element, dry_run)
    out.update(counts)
    out["triangles"] = added
    out["view"] = view
    out["triangles_full"] = None if each is None else each * counts["plants"]
    out["triangles_each"] = each
    out["warnings"] = warnings
    out["written"] = _write(ws, text, dry_run)
    return out


def _frame_budget() -> int:
    from veduta.world.draw import FRAME_BUDGET

    return FRAME_BUDGET


# -- remove --------------------------------------------------------------------------------------


@_one_at_a_time
def world_remove(
    project: Project,
    world: str,
    name: str,
    section: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Remove the feature, vegetation rule or place *name* (``section`` picks the list when the
    name is in several); fails when there is none. Removing a feature reports the ground before and
    after as ``world_terrain`` does; a vegetation rule, the plants it had; a place, the sites that
    come back."""
    from veduta.source.jsonedit import remove_item
    from veduta.world.terrain import feature_reach

    if section is not None and section not in SECTIONS:
        raise UsageError(f'section "{section}" is not "features", "vegetation" or "places"')
    ws = load_world_source(project, world)
    found = [
        (sec, i) for sec in (SECTIONS if section is None else [section]) if (i := _find(ws, sec, name)) is not None
    ]
    if not found:
        from veduta.base.names import did_you_mean

        names = [SECTIONS[s] for s in (SECTIONS if section is None else [section])]
        where = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        there = [n for s in (SECTIONS if section is None else [section]) for n in _names(ws, s)]
        raise UsageError(
            f"world {world} has no {where} named {quote(name)}{did_you_mean(name, there)}; nothing was removed"
        )
    if len(found) > 1:
        raise UsageError(
            f"{quote(name)} names a "
            + " and a ".join(SECTIONS[s] for s, _ in found)
            + "; say which list: "
            + " or ".join(s for s, _ in found)
        )
    sec, index = found[0]
    old = _element(ws, sec, index)
    text = remove_item(ws.text, sec, index, drop_empty=True)  # (an empty list is no list)
    rec, rep = _compile_new(ws, text, f'removing {SECTIONS[sec]} "{name}"')
    before = ws.generator(ws.world)
    out = _base(ws, sec, name, "removed", old, None, dry_run)
    if sec == "features":
        after = ws.generator(rec, like=before)
        f = next(fp for fp in before.p.features if fp.name == name)
        out.update(_terrain_report(before, after, f.x, f.z, f.radius, feature_reach(f), progress))
    elif sec == "vegetation":
        counts = _vegetation_counts(ws, before, name)
        counts.pop("rule")
        out["plants_before"] = counts.pop("plants")
        out.update(counts)
    else:
        after = ws.generator(rec, like=before)
        s = next((st for st in before.structs.places if st.name == name), None)
        if s is not None:
            rect = _rect_around(after, s.x0 + s.fw // 2, s.z0 + s.fd // 2, max(s.fw, s.fd))
            out["changes"] = [c for c in structure_changes(before, after, rect) if c["name"] != name]
        else:
            out["changes"] = []
    out["written"] = _write(ws, text, dry_run)
    return out
