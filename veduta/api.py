"""The toolchain's tools as plain functions: the one door every face goes through.

Each tool is one function that takes a :class:`~veduta.base.project.Project` first and plain
arguments after it (names, cells as ``(x, z)`` tuples, numbers in the source's units), and
returns plain data: exactly the object its CLI prints with ``--json`` and its MCP tool returns
as structured content (``veduta/faces/cli/main.py`` and ``veduta/faces/mcp`` are thin faces over this module).
A user mistake (unknown asset, malformed argument, refused edit) raises a
:class:`~veduta.base.errors.VedutaError` whose message names the problem; the faces turn it into a
``veduta: ...`` line or a tool error.

Imports are deferred to the call, so importing this module costs nothing on the cook's path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project


def list_assets(
    project: Project, kind: str | None = None, jobs: int = 1, progress: Progress | None = None
) -> dict[str, Any]:
    """Every source (of *kind*, or of every kind), sorted by path, with its state (fresh, stale,
    failed, never_cooked) and its error and warning counts, as the cook's checks find them:
    ``{"assets": [{"kind", "name", "path", "state", "errors", "warnings"}], "counts", "problems"}``."""
    from veduta.tools.list_assets import list_assets as run

    return run(project, kind, jobs, progress)


def list_sources(project: Project) -> list[dict[str, str]]:
    """Every source, sorted by path, without checking it: ``[{"kind", "name", "path"}]``."""
    import os

    return [
        {"kind": s.kind.name, "name": s.name, "path": project.source_path(s.rel).replace(os.sep, "/")}
        for s in project.sources()
    ]


def write_source(
    project: Project, kind: str, name: str, text: str, dry_run: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Create or replace the source of asset *name* of *kind* with *text*, checked first as the cook
    checks it: refused (``SourceRefused``, with every located diagnostic; nothing written) when it
    has an error. ``{"kind", "name", "path", "action", "written", "changes", "diagnostics", ...}``."""
    from veduta.tools.write_source import write_source as run

    return run(project, kind, name, text, dry_run, progress)


def source_text(project: Project, kind: str, name: str) -> str:
    """The source text of asset *name* of *kind* (UsageError naming the closest names when there is none)."""
    from veduta.base.errors import VedutaError
    from veduta.base.kinds import kind_named
    from veduta.base.project import no_such_asset
    from veduta.source import read_source

    kind_named(kind)
    src = project.find_source(kind, name)
    if src is None:
        raise no_such_asset(project, kind, name)
    path = project.source_path(src.rel)
    try:
        return read_source(path, kind)[0].decode("utf-8", "replace")
    except OSError as exc:  # (too large for its kind: from one stat, unread)
        raise VedutaError(f"cannot read {path}: {exc.strerror or exc}") from None


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (2020-12) of *kind*'s sources, as shipped with the package."""
    import json

    from veduta.base.kinds import kind_named
    from veduta.schemas import shipped_schema

    kind_named(kind)
    return json.loads(shipped_schema(kind))


def format_doc(kind: str) -> str:
    """The reference of *kind*'s source format (docs/formats/<kind>.md, shipped with the package)."""
    from importlib import resources

    from veduta.base.kinds import kind_named

    kind_named(kind)
    return resources.files("veduta").joinpath("docs", "formats", f"{kind}.md").read_text(encoding="utf-8")


def cache_info(project: Project, probe: bool = True) -> dict[str, Any]:
    """The local store (path, entries, bytes) and the shared cache tier (settings; with *probe*,
    whether this machine reaches it): ``{"local": {...}, "shared": {...} or None}``."""
    from veduta.cook.shared import cache_info as run

    return run(project, probe)


def cache_prune(project: Project, days: float = 30.0, dry_run: bool = False) -> dict[str, Any]:
    """Remove the local store's entries unused (not written or read) for *days* days:
    ``{"days", "dry_run", "removed", "removed_bytes", "kept", "kept_bytes"}``."""
    import os

    from veduta.base.errors import UsageError
    from veduta.cook.store import Store

    if not days >= 0:
        raise UsageError(f"{days!r} is not a number of days >= 0")
    removed, rbytes, kept, kbytes = Store(os.path.join(project.cache, "store")).prune(days, dry_run=dry_run)
    return {
        "days": days,
        "dry_run": dry_run,
        "removed": removed,
        "removed_bytes": rbytes,
        "kept": kept,
        "kept_bytes": kbytes,
    }


def cache_push(project: Project) -> dict[str, Any]:
    """Upload the local store's valid entries that the shared cache lacks:
    ``{"url", "local", "present", "uploaded", "bytes", "skipped"}``."""
    from veduta.cook.shared import cache_push as run

    return run(project)


def inspect_model(project: Project, model: str) -> dict[str, Any]:
    """Triangles per part and level, bounds and findings of model *model*."""
    from veduta.tools.inspect_model import inspect_model as run

    return run(project, model)


def cook(
    project: Project,
    sources: list[str] | None = None,
    jobs: int = 0,
    echo: TextIO | None = None,
    fmt: str | None = None,
    progress: Progress | None = None,
    strict: bool | None = None,
) -> dict[str, Any]:
    """Cook *sources* (paths of source files; every source when empty) with the doit tasks.

    ``{"ok", "summary": {"cooked", "up_to_date", "restored", "failed", "removed",
    "with_failed_dependency", "warnings", "standing_warnings", "strict"}, "diagnostics": [{"file",
    "line", "col", "path", "severity", "message"[, "code"]}, ...]}``.  The text ``doit cook``
    prints goes to *echo* (None: nowhere), its diagnostics in format *fmt* (``--format``).
    *progress* hears of every source reached; a Cancelled it raises stops the cook as Ctrl-C does
    (what was cooked is whole and recorded).  *strict*: every warning fails the cook (None: as
    ``strict`` in [tool.veduta] says).  Runs in the game root (changes the current folder to it).
    """
    from veduta.cook.inprocess import run_cook

    return run_cook(project, sources, jobs, echo, fmt, progress, strict)


def dump(project: Project | None, path: str, full: bool = False) -> dict[str, Any]:
    """A cooked file as JSON (*path* as given; no project needed):
    ``{"file", "chunks": [{"type", "meta"|"body"|"unknown"...}]}``."""
    from veduta.tools.dump import dump_file

    return dump_file(path, full)


def verify(project: Project | None, paths: list[str]) -> dict[str, Any]:
    """Check cooked files (paths as given):
    ``{"ok", "files": [{"file", "ok", "kind", "name", ...} | {"file", "ok", "error"}]}``."""
    from veduta.tools.dump import verify_files

    return verify_files(list(paths))


def world_query(project: Project, world: str, cell: tuple[int, int]) -> dict[str, Any]:
    """What is at cell ``(x, z)`` of *world*: biome, ground height in metres, water, owner, plants."""
    from veduta.cook.cooked import load_world
    from veduta.tools.world_query import world_query as run

    return run(lambda name: load_world(project, name), world, cell)


def world_map(
    project: Project,
    world: str,
    at: tuple[int, int] = (0, 0),
    size: tuple[int, int] = (256, 256),
    scale: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The top-down map of *size* cells around cell *at*: metadata and ``"png"`` (bytes).
    ``progress(rows done, rows, message)`` as the rows of cells are computed (LAYOUT.md)."""
    from veduta.cook.cooked import load_world
    from veduta.tools.export.cooked import Cooked
    from veduta.tools.export.looks import Looks
    from veduta.tools.world_query import world_map as run

    return run(
        lambda name: load_world(project, name), world, at, size, scale, looks=Looks(Cooked(project)), progress=progress
    )


def inspect_world(
    project: Project,
    world: str,
    at: list[tuple[int, int]] | tuple = (),
    all_views: bool = False,
    sheet: str | None = None,
    image: bool = False,
    views_file: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Findings of world *world* (places, prefabs, models, view, triangle budget per view), ranked;
    the sheet (the map with the findings marked) written to *sheet*, and with *image* returned as
    ``"png"`` (bytes). *all_views*: a view at every chunk's centre, summed up as ``"all_views"``;
    *views_file*: every view written there as JSON Lines. ``progress(done, total, message)`` as
    the views are counted (LAYOUT.md)."""
    from veduta.tools.inspect_world import inspect_world as run

    return run(
        project, world, at=at, all_views=all_views, sheet=sheet, image=image, views_file=views_file, progress=progress
    )


def inspect_prefab(project: Project, prefab: str) -> dict[str, Any]:
    """Footprint, entities, triangles of their models and findings of prefab *prefab*."""
    from veduta.tools.inspect_world import inspect_prefab as run

    return run(project, prefab)


def world_place(
    project: Project,
    world: str,
    name: str,
    prefab: str,
    cell: tuple[int, int] | None = None,
    near: tuple[int, int] | None = None,
    rotation: int = 0,
    search: int = 32,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Add or replace place *name* at *cell*, or at the valid cell nearest *near* (checked as inspect world
    checks places); ``cell`` in the report is where it went."""
    from veduta.tools.world_edit import world_place as run

    return run(
        project,
        world,
        name,
        prefab,
        cell=cell,
        near=near,
        rotation=rotation,
        search=search,
        dry_run=dry_run,
        progress=progress,
    )


def world_terrain(
    project: Project,
    world: str,
    name: str,
    kind: str,
    cell: tuple[int, int],
    radius: int,
    height: float | None = None,
    depth: float | None = None,
    falloff: int | None = None,
    roughness: float | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Add or replace feature *name* (hill, plain, lake, sea): ground ``before``/``after``, ``places_in_water``."""
    from veduta.tools.world_edit import world_terrain as run

    return run(
        project,
        world,
        name,
        kind,
        cell,
        radius,
        height=height,
        depth=depth,
        falloff=falloff,
        roughness=roughness,
        dry_run=dry_run,
        progress=progress,
    )


def world_vegetation(
    project: Project,
    world: str,
    name: str,
    density: float,
    prefab: str | None = None,
    model: str | None = None,
    biomes: list[str] | None = None,
    cell: tuple[int, int] | None = None,
    radius: int | None = None,
    scale: tuple[float, float] | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Add or replace vegetation rule *name*: ``plants``, ``triangles``, ``warnings``."""
    from veduta.tools.world_edit import world_vegetation as run

    return run(
        project,
        world,
        name,
        density,
        prefab=prefab,
        model=model,
        biomes=biomes,
        cell=cell,
        radius=radius,
        scale=scale,
        dry_run=dry_run,
        progress=progress,
    )


def world_remove(
    project: Project,
    world: str,
    name: str,
    section: str | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Remove the feature, vegetation rule or place *name* (``section`` when the name is in several lists)."""
    from veduta.tools.world_edit import world_remove as run

    return run(project, world, name, section=section, dry_run=dry_run, progress=progress)


def export_gltf(
    project: Project,
    out: str,
    model: str | None = None,
    lod: int | None = None,
    world: str | None = None,
    chunk: tuple[int, int] | None = None,
    radius: int = 0,
    levels: bool = False,
) -> dict[str, Any]:
    """Write a binary glTF 2.0 file *out*: model *model* (every level of detail, or level *lod*),
    or the chunks within *radius* of *chunk* of world *world* (with *levels*, each chunk's ground at
    the level the engine draws it from a view of the centre chunk). Returns what was written."""
    from veduta.base.errors import UsageError

    _out_file(out, ".glb")
    if model is None and world is None:
        raise UsageError("export gltf needs a model name, or a world with a chunk [cx, cz] of it")
    if model is not None and world is not None:
        raise UsageError("export gltf takes a model name, or a world with a chunk, not both")
    if world is not None:
        if chunk is None:
            raise UsageError("export gltf of a world needs the chunk CX,CZ to export")
        if lod is not None:
            raise UsageError(
                "--lod is for a model; a world chunk is exported at its finest drawn level "
                "(or by distance, with levels)"
            )
        from veduta.tools.export.world import export_chunk

        return export_chunk(project, world, chunk, out, radius, levels)
    if levels:
        raise UsageError("levels go with a world chunk; a model is exported with all its levels (or --lod K)")
    from veduta.tools.export.gltf import export_model

    assert model is not None  # one of model and world, checked above
    return export_model(project, model, out, lod)


def preview_model(project: Project, model: str, out: str | None = None, size: int = 160) -> dict[str, Any]:
    """Draw a PNG sheet of shaded views of model *model* and its levels of detail (*size* pixels
    per view), written to *out* when given. Returns what was drawn, with ``"png"`` (bytes)."""
    from veduta.tools.preview_model import preview_model as run

    if out is not None:
        _out_file(out, ".png")
    return run(project, model, out, size)


def preview_world(
    project: Project,
    world: str,
    at: tuple[int, int] = (0, 0),
    out: str | None = None,
    scale: int = 2,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Draw what world *world*'s camera sees from start cell *at* (as ``render { world, at }``):
    the console's 320 x 240 frame, the same view at *scale* times that (1: the console frame
    alone) and the draw report, written to *out* when given. Returns the draw report and what was
    drawn, with ``"png"`` (bytes)."""
    from veduta.tools.preview_world import preview_world as run

    if out is not None:
        _out_file(out, ".png")
    return run(project, world, at, out, scale, progress=progress)


def preview_texture(project: Project, texture: str, out: str | None = None) -> dict[str, Any]:
    """Draw the preview sheet of texture *texture* (mips, frames, clips) and write it to *out* when
    given. Returns what was drawn, with ``"png"`` (bytes)."""
    from veduta.tools.preview_texture import preview_texture as run

    if out is not None:
        _out_file(out, ".png")
    return run(project, texture, out)


def _out_file(out: str, suffix: str) -> None:
    """A file a tool writes is named for its format (UsageError otherwise): a tool never writes
    its bytes over a file of another kind (a source, pyproject.toml)."""
    from veduta.base.argtypes import wrong_suffix
    from veduta.base.errors import UsageError

    wrong = wrong_suffix(out, suffix)
    if wrong:
        raise UsageError(wrong)


def check(
    project: Project,
    sources: list[str] | None = None,
    full: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    strict: bool | None = None,
) -> dict[str, Any]:
    """Every check the cook makes, on every source (or those named, paths under the assets
    folder), writing nothing: ``{ok, checked, compiled, fresh, errors, warnings, strict,
    strict_errors, diagnostics}``.  Sources whose cooked file is fresh are known good and not
    compiled again unless *full* (their recorded warnings stand).  *strict* (None: as ``strict``
    in [tool.veduta] says): every warning is an error, and so is every error finding of inspect
    for the models, prefabs and worlds checked."""
    from veduta.tools.check import check as run

    return run(project, sources, full, jobs, progress, strict)


def why(project: Project, sources: list[str] | None = None, strict: bool | None = None) -> dict[str, Any]:
    """Each stale source and the reasons it would cook again: ``{checked, stale: [...]}``;
    *strict*: as a strict cook decides (None: the game's ``strict`` setting)."""
    from veduta.tools.why import why as run

    return run(project, sources, strict)


def editor_workspace(project: Project):
    """The language server's view of *project*: a :class:`veduta.tools.editor.Workspace` whose
    methods (``open``, ``change``, ``close``, ``diagnostics``, ``completion``, ``hover``,
    ``definition``, ``references``) answer with plain data about unsaved buffers."""
    from veduta.tools.editor import Workspace

    return Workspace(project)


def editor_warm_up() -> None:
    """Import every compiler now, so that an editor's first diagnostics do not wait for them."""
    from veduta.base.kinds import NAMES
    from veduta.compile import get_compiler

    for kind in NAMES:
        get_compiler(kind)


def deps(
    project: Project,
    name: str | None = None,
    kind: str | None = None,
    reverse: bool = False,
    depth: int | None = 1,
    orphans: bool = False,
    dot: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The reference graph: what asset *name* uses (*reverse*: what uses it), *depth* levels deep
    (None: all), each reference located (file, line, col, JSON path): ``{"asset", "direction",
    "depth", "references", "assets", "missing"}``; without a name the whole graph ``{"assets":
    [{..., "uses", "used_by"}], "reference_count", "missing"}``; *orphans*: ``{"missing", "unused",
    "roots"}``. *dot*: also ``"dot"``, the graph in Graphviz DOT."""
    from veduta.tools.deps import deps as run

    return run(project, name, kind, reverse, depth, orphans, dot, progress)


def rename(
    project: Project, kind: str, old: str, new: str, dry_run: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Rename asset *old* of *kind* to *new*: its source file and every reference to it, each
    edit minimal, checked first and written as one set (docs/rename.md): ``{"kind", "old", "new",
    "from", "to", "edits", "files", "checked", "dry_run", "written"}``."""
    from veduta.tools.rename import rename as run

    return run(project, kind, old, new, dry_run, progress)


def report(project: Project, html: str | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """The build report: every asset's cooked size, origin, compile time, triangles per level or
    texture memory, references and warnings, largest first, with totals per kind and the slowest
    compiles: ``{"assets", "totals", "total", "slowest"}``; *html*: also write it as one
    self-contained page (``"html"``: its path)."""
    from veduta.tools.report import report as run

    return run(project, html, progress)


def finish_edits(project: Project) -> dict[str, Any] | None:
    """Complete a set of source edits an interrupted ``rename`` left (docs/rename.md), saying so on
    standard error: what was done, or None when nothing waited."""
    from veduta.cook.journal import finish_edits as run

    return run(project, locked=False)


def edits_pending(project: Project) -> str | None:
    """What an interrupted ``rename`` left for the next command to complete (docs/rename.md), as
    its journal names it (``"rename of material bark to wood"``), without reading or writing
    anything else; None when nothing waits."""
    from veduta.cook.journal import waiting

    return waiting(project.cache)


def monitor_status(project: Project) -> dict[str, Any]:
    """Whether a file-system monitor (``veduta watch --monitor``) runs for the game and whether the
    next cook can trust its journal: ``{"running", "pid", "trusted", "why", "marked", "journal", "worker"}``
    (*worker*: its warm compile worker, ``{"running", "pid", "served", "socket"}``)."""
    from veduta.tools.monitor import monitor_status as run

    return run(project)


def run_monitor(project: Project, should_stop=None, ready=None, worker: bool = True) -> dict[str, Any]:
    """Run the file-system monitor of the game until *should_stop()* or Ctrl-C (docs/cooking.md,
    "The file-system monitor"); *ready(status)* once every folder is watched.  With *worker*, it
    keeps a warm compile worker too (docs/cooking.md, "The warm compile worker")."""
    from veduta.tools.monitor import run_monitor as run

    return run(project, should_stop or (lambda: False), ready, worker=worker)
