"""The MCP server of ``veduta mcp``: one tool per :mod:`veduta.api` function, over stdio.

Each tool is one method of :class:`Face`: its typed arguments are the tool's input schema, its
docstring the tool's description, its return annotation the tool's output schema
(:mod:`veduta.faces.mcp.outputs`), and its body one call of the core function through
:meth:`Tools.call`. :data:`TOOLS` registers them, each with what it does to the game (the MCP
tool annotations). A tool checks nothing the core function does not (except that file paths lie
inside the game root: :meth:`Tools.inside`, a rule of this face only) and returns the core
function's data as structured content, and the same JSON as text for clients that read only
text; a PNG the core function made (``"png"``) goes out as image content instead.

A user mistake (:class:`~veduta.base.errors.VedutaError`: unknown asset, malformed argument, refused
edit) becomes a tool error whose text names the problem; a refusal with findings (a refused
edit, a source with errors) also carries them as JSON, and as structured content
``{"refused": true, "message", "findings"}``. Any other exception becomes a tool error naming
it, and the server goes on. The SDK runs each call in a worker thread, so calls are answered
concurrently; edits of one world take that world's lock, and cooks take one lock, so they never
interleave. A core function that takes ``progress`` sends MCP progress notifications (when the
client gave a progress token) and stops when the client cancels the request, having written
nothing.

Resources: the JSON Schema of each source kind (``veduta://schema/{kind}``), the format docs
(``veduta://format/{kind}``) and every asset's source text (``veduta://source/{kind}/{name}``,
listed one by one, with a template per kind).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, ImageContent, Resource, TextContent, ToolAnnotations
from pydantic import Field

from veduta import api
from veduta.base.argtypes import MAX_EXPORT_RADIUS, MAX_FOCI, MAX_JOBS, MAX_LEVELS, MAX_LOD
from veduta.base.errors import Cancelled, VedutaError, bounded, clip, clip_words, quote, shown_path
from veduta.faces.mcp import outputs as o
from veduta.tools.world_edit import NEAR_SEARCH_MAX

Cell = Annotated[tuple[int, int], Field(description="a cell [x, z] (integers; +x east, -z north)")]
#: paths name files of the game served: relative to its root (or absolute), never outside it
UNDER_ROOT = ", relative to the game root (a path outside the game root is refused)"
DryRun = Annotated[bool, Field(description="report what the edit would do, and write nothing")]
Kind = Literal["model", "texture", "material", "scene", "prefab", "world", "map"]
AssetName = Annotated[
    str, Field(description="the asset name: the file name without its suffix (1-64 of a-z, 0-9, _, -)")
]
PngOut = Annotated[
    str | None, Field(description=f"also write the PNG to this file{UNDER_ROOT}, not in the assets folder")
]


INSTRUCTIONS = """\
veduta cook: the asset toolchain of the Veduta game engine, serving one game repo.
Sources live under assets/ (models/*.vmodel, textures/*.vtexture, materials/*.vmaterial,
scenes/*.vscene, prefabs/*.vprefab, worlds/*.vworld, maps/*.vmap): strict JSON, each saying its
format ("veduta": "model/1"). Tools name assets by name (the file name without suffix).
Start with list_assets (every asset, its state and its error and warning counts). Read the
resources veduta://schema/<kind> (the JSON Schema of a kind's sources) and
veduta://format/<kind> (the format reference, with examples) before writing a source, and
veduta://source/<kind>/<name> for an asset's source text. write_source creates or replaces a
source: it is checked as the cook checks it, and refused with every located error (nothing
written) until it has none; use dry_run to check only. Look at what you made with
preview_model, preview_texture (images) and inspect_model / inspect_prefab / inspect_world.
Worlds are grids of cells (cell metres square, usually 1 m); cells are [x, z] integer pairs,
+x east, -z north. Heights and radii of terrain are in metres and cells as each tool says. The
world authoring loop: world_map and world_query to look, world_terrain to shape,
world_vegetation to plant, world_place for landmarks (near= finds a valid cell), inspect_world
until it reports no error, then cook. Edits change the world's .vworld source minimally and are
validated before they are written; use dry_run to see a report first."""

# -- what each tool does to the game: the MCP tool annotations ---------------------------------
#: reads the game, writes nothing
READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
#: writes the cooked files the sources make (derived data, the same bytes on every run): cook, and
#: the tools that cook a stale world or prefab before they read it
COOKS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
#: adds to or replaces part of a source, or a file it is asked to write (an image, sheet, views file or
#: report given as out=, sheet=, views_file=, html=, replaced if it is there); the same call again changes
#: nothing more
REPLACES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
#: adds to a source (or replaces the element of that name), choosing where: a second call may choose again
PLACES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
#: moves a source and rewrites others: the same call again is refused (the old name is gone)
MOVES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)


class Tools:
    """The tools of one server: the project root and the locks that keep edits apart."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._cook_lock = threading.Lock()
        self._locks_lock = threading.Lock()
        self._world_locks: dict[str, threading.Lock] = {}

    def project(self):
        """The game served; a tool error when one of its folders (assets, cooked, cache) resolves
        outside the game root: every tool reads or writes there (docs/mcp.md)."""
        from veduta.base.fsutil import outside
        from veduta.base.kinds import KINDS
        from veduta.base.project import Project

        project = Project.find(self.root)
        folders = [("assets", project.assets), ("cooked", project.cooked), ("cache", project.cache)]
        folders += [("cooked", os.path.join(project.cooked, k.folder)) for k in KINDS]
        for what, folder in folders:
            real = outside(folder)
            if real is not None:
                raise ToolError(
                    f"the {what} folder {shown_path(folder)} resolves to {shown_path(real)}, outside the game "
                    f"root {shown_path(os.path.realpath(self.root))}: veduta mcp reads and writes only files inside it"
                )
        return project

    def inside(self, path: str, what: str = "path") -> str:
        """*path* (relative to the game root, or absolute) when it lies under the game root once
        symlinks and ``..`` are resolved (a file to write need not exist yet); a tool error naming
        the root otherwise. An agent reads and writes the game it serves, not the machine."""
        if "\0" in path:  # a user mistake (os.path.realpath raises ValueError on it)
            raise ToolError(f"{what} {quote(path)} holds a NUL character, which no file name can hold")
        root = os.path.realpath(self.root)
        real = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([root, real]) != root:
            raise ToolError(
                f"{what} {quote(path)} is outside the game root {shown_path(root)} (it resolves to "
                f"{clip(real, 200)}); give a path under the game root"
            )
        return path

    def output(self, path: str | None) -> str | None:
        """:meth:`inside`, for a file a tool writes: also not in the assets folder, where a PNG or
        any file would be taken for (or overwrite) a source."""
        if path is None:
            return None
        self.inside(path, "out")
        assets = os.path.realpath(os.path.join(self.root, self.project().assets))
        real = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([assets, real]) == assets:
            raise ToolError(
                f"out {path!r} is in the assets folder {assets}, which holds the game's sources; "
                f"write exports elsewhere under the game root"
            )
        return path

    def sources(self, names: list[str] | None) -> list[str] | None:
        """Source paths under the assets folder for *names* given as cook takes them (from the game
        root, e.g. the ``file`` of a diagnostic, or under assets/), as the CLI's check and why do."""
        from veduta.tools.check import resolve_sources

        if not names:
            return None
        try:
            return resolve_sources(self.project(), names, self.root)
        except VedutaError as exc:
            raise ToolError(str(exc)) from None

    def world_lock(self, world: str) -> threading.Lock:
        with self._locks_lock:
            return self._world_locks.setdefault(world, threading.Lock())

    def call(self, ctx: Context | None, fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> CallToolResult:
        """Run a core function with the game's project and return its data as the tool's result;
        its user mistakes (and crashes) become tool errors. A core function that takes
        ``progress`` gets one that reports to the client and raises Cancelled once the client
        cancelled the request."""
        if ctx is not None and "progress" in inspect.signature(fn).parameters:
            kwargs["progress"] = _progress(ctx)
        try:
            project = self.project()
            api.finish_edits(project)  # a rename killed mid-way (by another process) is completed first
            return _result(fn(project, *args, **kwargs))
        except Cancelled as exc:
            raise ToolError(str(exc)) from None  # the client dropped the request; nobody reads this
        except VedutaError as exc:
            findings = getattr(exc, "findings", None)
            if findings:
                return _refusal(bounded(str(exc)), findings)
            raise ToolError(bounded(str(exc))) from None
        except ToolError as exc:
            raise ToolError(bounded(str(exc))) from None
        except OSError as exc:  # the file system said no (permissions, a full disk): not a bug
            where = f"{exc.filename}: " if exc.filename else ""
            raise ToolError(bounded(f"{where}{exc.strerror or exc}")) from None
        except MemoryError:
            raise ToolError("out of memory (the machine, or a memory limit, ran short); nothing was written") from None
        except Exception as exc:  # a bug, not a user mistake: say so, keep serving
            raise ToolError(
                bounded(f"internal error in veduta ({type(exc).__name__}: {exc}); please report it")
            ) from None
        except BaseException as exc:  # the host task was cancelled while the core function ran
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            raise ToolError(str(Cancelled())) from None

    def edit(
        self, ctx: Context, world: str, fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any
    ) -> CallToolResult:
        with self.world_lock(world):
            return self.call(ctx, fn, world, *args, **kwargs)


def _progress(ctx: Context) -> Callable[[float, float | None, str], None]:
    """A core function's ``progress`` callback (:mod:`veduta.base.progress`), called in the tool's
    worker thread: raises Cancelled once the client cancelled the request, and sends at most five
    progress notifications a second (none when the client gave no progress token)."""
    from veduta.base.progress import throttled

    def notify(done: float, total: float | None, message: str) -> None:
        anyio.from_thread.run(ctx.report_progress, done, total, message)

    send = throttled(notify)

    def progress(done: float, total: float | None, message: str) -> None:
        try:
            anyio.from_thread.check_cancelled()
            send(done, total, message)
        except BaseException as exc:
            if isinstance(exc, (Exception, KeyboardInterrupt, SystemExit)):
                raise
            raise Cancelled() from None  # the backend's cancellation, as the core functions know it

    return progress


def _result(data: dict[str, Any]) -> CallToolResult:
    """A core function's data as a tool result: a PNG in it (``"png"``) as image content, the
    rest as structured content and as JSON text (exactly the CLI's ``--json``)."""
    import base64

    extra = []
    png = data.pop("png", None)
    if png is not None:
        extra.append(ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png"))
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    return CallToolResult(content=[*extra, TextContent(type="text", text=text)], structured_content=data)


def _refusal(message: str, findings: list[dict]) -> CallToolResult:
    """A refused call: a tool error whose text is the message and the refusal as JSON (what the
    CLI prints with --json), and whose structured content is that refusal."""
    refusal = {"refused": True, "message": message, "findings": findings}
    text = message + "\n" + json.dumps(refusal, indent=1, sort_keys=True, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=refusal, is_error=True)


def _missing(result: CallToolResult, kind: str) -> CallToolResult:
    """inspect_* report a missing asset as data; an agent is told it as an error."""
    report = result.structured_content or {}
    if report.get("status") == "missing":
        messages = "; ".join(e.get("message", "") for e in report.get("errors", [])) or f"no such {kind}"
        raise ToolError(messages)
    return result


def _opt(pair: Any) -> tuple | None:
    return None if pair is None else tuple(pair)


class Face:
    """The tools: each method is one tool (arguments, description, output schema) calling one
    core function of :mod:`veduta.api`."""

    def __init__(self, tools: Tools):
        self.t = tools

    def list_assets(
        self,
        ctx: Context,
        kind: Annotated[Kind | None, Field(description="only assets of this kind; omit for every kind")] = None,
    ) -> Annotated[CallToolResult, o.ListAssets]:
        """Every asset of the game (or of one kind): kind, name, source path, state (fresh: cooked and up to
        date; stale: cooked, but changed since; failed: the source has errors; never_cooked) and its error and
        warning counts, as the cook's checks find them (nothing is written)."""
        from veduta.cook.ahead import cpu_count

        return self.t.call(ctx, api.list_assets, kind, jobs=cpu_count())

    def write_source(
        self,
        ctx: Context,
        kind: Annotated[Kind, Field(description="the asset's kind")],
        name: AssetName,
        text: Annotated[
            str,
            Field(
                description="the whole source: strict JSON as described by the "
                "resources veduta://schema/<kind> and "
                "veduta://format/<kind>"
            ),
        ],
        dry_run: Annotated[bool, Field(description="check it and report, write nothing")] = False,
    ) -> Annotated[CallToolResult, o.WriteSource]:
        """Create or replace the source of one asset (a model, texture, material, scene, prefab, world or map).
        The text is checked first exactly as the cook checks it: with any error it is refused, with every
        error located (file, line, col, JSON path, message, code), and nothing is written. Otherwise it is
        written atomically to the asset's source file (assets/<kind folder>/<name>.<suffix> when new), and the
        reply says whether it was created or replaced, what changed (JSON paths with old and new values) and
        its warnings. Every tool sees the new source at once (inspect, preview, export, cook)."""
        return self.t.call(ctx, api.write_source, kind, name, text, dry_run=dry_run)

    def cook(
        self,
        ctx: Context,
        sources: Annotated[
            list[str] | None,
            Field(
                description="source files to cook, as paths under the game root or under assets/ "
                "(e.g. 'models/crate.vmodel'); omit to cook everything"
            ),
        ] = None,
        jobs: Annotated[
            int | None,
            Field(
                description="processes to compile in (1: in the server's own process, one source at a time); "
                "omit for one per core, as `doit cook` does",
                ge=1,
                le=MAX_JOBS,
            ),
        ] = None,
        strict: Annotated[
            bool | None,
            Field(
                description="true: every warning fails the cook (ok false; the cooked files are still "
                "written); omit for the game's `strict` setting in [tool.veduta]"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, o.Cook]:
        """Cook the game's asset sources into .vda files (what `veduta cook` does): only what is stale. Returns
        the summary (cooked, up_to_date, restored, failed, removed, with_failed_dependency, warnings,
        standing_warnings, strict) and every diagnostic (file, line, col, path, severity, message)."""
        with self.t._cook_lock:
            return self.t.call(ctx, api.cook, sources or None, jobs or 0, strict=strict)

    def check(
        self,
        ctx: Context,
        sources: Annotated[
            list[str] | None,
            Field(
                description="source files, as paths under the game root or under assets/ (as cook takes them); "
                "omit to check everything"
            ),
        ] = None,
        jobs: Annotated[
            int | None,
            Field(
                description="processes to compile in; omit for one per core, as `veduta check` does", ge=1, le=MAX_JOBS
            ),
        ] = None,
        strict: Annotated[
            bool | None,
            Field(
                description="true: every warning is an error, and so is every error finding of inspect for "
                "the models, prefabs and worlds checked (the CI gate); omit for the game's `strict` "
                "setting in [tool.veduta]"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, o.Check]:
        """Check every source (or those named) as the cook would, references included, writing nothing.
        Returns ok, counts and every diagnostic (file, line, col, path, severity, message, code)."""
        from veduta.cook.ahead import cpu_count

        return self.t.call(ctx, api.check, self.t.sources(sources), jobs=jobs or cpu_count(), strict=strict)

    def why(
        self,
        ctx: Context,
        sources: Annotated[
            list[str] | None,
            Field(
                description="source files, as paths under the game root or under assets/ (as cook takes them); "
                "omit for every source"
            ),
        ] = None,
        strict: Annotated[
            bool | None,
            Field(
                description="true: as a strict cook decides (a fresh output whose warnings are not on record "
                "is stale: NOTES_UNKNOWN); omit for the game's `strict` setting in [tool.veduta]"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, o.Why]:
        """List each stale asset and why it would cook again (never cooked, source changed, a dependency
        changed, compiler changed, ...)."""
        return self.t.call(ctx, api.why, self.t.sources(sources), strict=strict)

    def monitor_status(self, ctx: Context) -> Annotated[CallToolResult, o.MonitorStatus]:
        """Whether a file-system monitor (`veduta watch --monitor`) runs for the game, and whether the next
        cook can trust its journal (then a no-op cook checks only the files it names, stat'ing nothing else):
        running, pid, trusted (no symbolic link in the watched folders, every folder watched), why (what it
        cannot see when not trusted), marked (a complete cook left the
        mark the next one trusts), journal (its path)."""
        return self.t.call(ctx, api.monitor_status)

    def inspect_model(
        self, ctx: Context, model: Annotated[str, Field(description="model name (file name without .vmodel)")]
    ) -> Annotated[CallToolResult, o.InspectModel]:
        """Inspect a model: triangles per part and level of detail, bounds in metres, and findings (code,
        severity error|warning|note, message)."""
        return _missing(self.t.call(ctx, api.inspect_model, model), "model")

    def inspect_prefab(
        self, ctx: Context, prefab: Annotated[str, Field(description="prefab name (file name without .vprefab)")]
    ) -> Annotated[CallToolResult, o.InspectPrefab]:
        """Inspect a prefab: footprint in cells, entities, triangles of its models, findings."""
        return _missing(self.t.call(ctx, api.inspect_prefab, prefab), "prefab")

    def inspect_world(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name (file name without .vworld)")],
        at: Annotated[
            list[tuple[int, int]] | None,
            Field(
                description=f"extra view foci as cells [x, z], beside the start cell and every place (at most "
                f"{MAX_FOCI:,}; a view at the centre of every chunk: all_views)",
                max_length=MAX_FOCI,
            ),
        ] = None,
        sheet: Annotated[
            bool,
            Field(
                description="also return the sheet: the map around the start cell with every finding "
                "marked, as an image"
            ),
        ] = False,
        out: PngOut = None,
        all_views: Annotated[
            bool,
            Field(
                description="also a view at the centre of every chunk, summed up in all_views (counts, "
                "a histogram, the views drawing the most, the cells of views over the budget); "
                "about 0.1 ms a chunk in one pass over the world, with progress notifications"
            ),
        ] = False,
        views_file: Annotated[
            str | None,
            Field(
                description=f"write every view (with all_views, every chunk's) to this .jsonl file"
                f"{UNDER_ROOT}, one JSON object a line"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, o.InspectWorld]:
        """Inspect a world: findings ranked by severity (places in water, overlapping, in a wrong biome or too
        close; missing prefabs or models; a camera that sees past the loaded chunks; views over the
        1200-triangle budget, WORLD_CHUNK_BUDGET) and the triangles drawn in each view. Fix every error before
        cooking. With sheet, the map with the findings marked comes back as an image (out: also written)."""
        return _missing(
            self.t.call(
                ctx,
                api.inspect_world,
                world,
                [tuple(c) for c in at or []],
                all_views=all_views,
                sheet=self.t.output(out),
                image=sheet,
                views_file=self.t.output(views_file),
            ),
            "world",
        )

    def world_query(
        self, ctx: Context, world: Annotated[str, Field(description="world name")], cell: Cell
    ) -> Annotated[CallToolResult, o.WorldQuery]:
        """What is at one cell of a world: biome, ground height in metres (full detail and as drawn), water,
        the structure that owns the cell, plants and entities."""
        return self.t.call(ctx, api.world_query, world, tuple(cell))

    def world_map(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name")],
        at: Annotated[tuple[int, int], Field(description="the centre cell [x, z]")] = (0, 0),
        size: Annotated[tuple[int, int], Field(description="width and depth in cells [w, h], each 1..2048")] = (
            256,
            256,
        ),
        scale: Annotated[
            int | None, Field(description="pixels per cell, 1..16 (default 1024 // the larger side, at most 8)")
        ] = None,
    ) -> Annotated[CallToolResult, o.WorldMap]:
        """The top-down map of a world around a cell, as a PNG image (biome colours shaded by relief, water,
        features, footprints, names) and, as structured content, what `veduta world map --json` prints: the
        cells drawn (origin = the cell at the top-left pixel), scale in pixels per cell, width and height in
        pixels."""
        return self.t.call(ctx, api.world_map, world, tuple(at), tuple(size), scale)

    def world_place(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name")],
        name: Annotated[str, Field(description="the place's name")],
        prefab: Annotated[str, Field(description="prefab name")],
        cell: Annotated[tuple[int, int] | None, Field(description="the exact cell [x, z]")] = None,
        near: Annotated[
            tuple[int, int] | None, Field(description="find the valid cell nearest this one [x, z]")
        ] = None,
        rotation: Annotated[
            Literal[0, 90, 180, 270], Field(description="degrees about +Y (90 and 270 swap the footprint's sides)")
        ] = 0,
        search: Annotated[int, Field(description="with near: search radius in cells", ge=1, le=NEAR_SEARCH_MAX)] = 32,
        dry_run: DryRun = False,
    ) -> Annotated[CallToolResult, o.WorldPlace]:
        """Add (or replace, same name) a place: a named landmark prefab at a cell. Give cell to validate that
        exact cell (refused, naming the finding code, when it is in water, overlaps another place, is in a biome
        the prefab does not allow, breaks a min_distance or is outside the world), or near to let it choose the
        nearest valid cell. Returns the cell used."""
        return self.t.edit(
            ctx,
            world,
            api.world_place,
            name,
            prefab,
            cell=_opt(cell),
            near=_opt(near),
            rotation=rotation,
            search=search,
            dry_run=dry_run,
        )

    def world_terrain(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name")],
        name: Annotated[str, Field(description="the feature's name")],
        kind: Annotated[Literal["hill", "plain", "lake", "sea"], Field(description="feature kind")],
        cell: Annotated[tuple[int, int], Field(description="centre cell [x, z]")],
        radius: Annotated[int, Field(description="radius in cells", ge=1, le=16384)],
        height: Annotated[
            float | None,
            Field(
                description="metres, -1024..1024. hill: added to the ground at the centre (default 4; "
                "negative digs a hollow). plain, lake, sea: the level itself (a y, not an offset: the "
                "flat ground or the water surface; default the ground at the centre cell)"
            ),
        ] = None,
        depth: Annotated[
            float | None,
            Field(
                description="lake/sea only: metres of the bottom below the water at the centre (default lake 2, sea 8)"
            ),
        ] = None,
        falloff: Annotated[
            int | None,
            Field(
                description="plain/lake/sea only: cells over which it blends back to the ground "
                "(default plain and lake 4, sea 8)"
            ),
        ] = None,
        roughness: Annotated[
            float | None, Field(description="lake/sea only: how much the water's edge wanders, 0..1 (default 0.3)")
        ] = None,
        dry_run: DryRun = False,
    ) -> Annotated[CallToolResult, o.WorldTerrain]:
        """Add (or replace, same name) a terrain feature: a hill (adds height metres at the centre), a plain
        (levels the ground to the level height), a lake or sea (water at the level height, the bottom depth
        metres below). Reports ground heights before and after over its area (centre, min, max), places now in
        water (places_in_water) and sites or places that change."""
        return self.t.edit(
            ctx,
            world,
            api.world_terrain,
            name,
            kind,
            tuple(cell),
            radius,
            height=height,
            depth=depth,
            falloff=falloff,
            roughness=roughness,
            dry_run=dry_run,
        )

    def world_vegetation(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name")],
        name: Annotated[str, Field(description="the rule's name")],
        density: Annotated[float, Field(description="share of cells planted, 0..1")],
        model: Annotated[str | None, Field(description="flora model name")] = None,
        prefab: Annotated[str | None, Field(description="prefab name")] = None,
        biomes: Annotated[list[str] | None, Field(description="biome names")] = None,
        cell: Annotated[tuple[int, int] | None, Field(description="area centre [x, z]")] = None,
        radius: Annotated[int | None, Field(description="area radius in cells")] = None,
        scale: Annotated[tuple[float, float] | None, Field(description="random scale range [min, max]")] = None,
        dry_run: DryRun = False,
    ) -> Annotated[CallToolResult, o.WorldVegetation]:
        """Add (or replace, same name) a vegetation rule planting a model (flora, any number per cell) or a
        prefab (trees: one per cell, competing with scatter) with a density 0..1 per cell, world-wide or in a
        round area (cell + radius in cells), optionally only on some biomes. Reports plants, the triangles they
        cost to draw, and warnings."""
        return self.t.edit(
            ctx,
            world,
            api.world_vegetation,
            name,
            density,
            prefab=prefab,
            model=model,
            biomes=biomes,
            cell=_opt(cell),
            radius=radius,
            scale=_opt(scale),
            dry_run=dry_run,
        )

    def world_remove(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name")],
        name: Annotated[str, Field(description="the name to remove")],
        section: Annotated[
            Literal["features", "vegetation", "places"] | None,
            Field(description="which list, when the name is in several"),
        ] = None,
        dry_run: DryRun = False,
    ) -> Annotated[CallToolResult, o.WorldRemove]:
        """Remove a feature, vegetation rule or place from a world by name (an error when there is none).
        section says which list when the name is in several."""
        return self.t.edit(ctx, world, api.world_remove, name, section=section, dry_run=dry_run)

    def dump(
        self, ctx: Context, path: Annotated[str, Field(description=f"path of a .vda file{UNDER_ROOT}")]
    ) -> Annotated[CallToolResult, o.Dump]:
        """A cooked .vda file as JSON: its chunks, META (kind, compiler, source hashes) and body (large arrays
        summarised)."""
        return self.t.call(ctx, api.dump, self.t.inside(path))

    def verify(
        self, ctx: Context, paths: Annotated[list[str], Field(description=f"paths of .vda files{UNDER_ROOT}")]
    ) -> Annotated[CallToolResult, o.Verify]:
        """Check cooked .vda files against the container spec and their kind's reader checks."""
        return self.t.call(ctx, api.verify, [self.t.inside(p) for p in paths])

    def export_gltf(
        self,
        ctx: Context,
        out: Annotated[str, Field(description=f"the .glb file to write{UNDER_ROOT}")],
        model: Annotated[str | None, Field(description="model name")] = None,
        lod: Annotated[int | None, Field(description="only this level of detail (0 = full)", ge=0, le=MAX_LOD)] = None,
        world: Annotated[str | None, Field(description="world name")] = None,
        chunk: Annotated[tuple[int, int] | None, Field(description="chunk [cx, cz]")] = None,
        radius: Annotated[int, Field(description="chunks around chunk", ge=0, le=MAX_EXPORT_RADIUS)] = 0,
        levels: Annotated[
            bool, Field(description="a world's distant chunks at coarser levels, as the engine draws them")
        ] = False,
    ) -> Annotated[CallToolResult, o.ExportGltf]:
        """Write a binary glTF 2.0 (.glb) file of a cooked model (every level of detail, or level lod), or of a
        world's chunks (ground at its finest drawn level, or with levels at the level the engine draws it from a
        view of the centre chunk; skirts, water, entities) within radius chunks of chunk [cx, cz]. Give model,
        or world with chunk. Returns what was written."""
        return self.t.call(
            ctx,
            api.export_gltf,
            self.t.output(out),
            model=model,
            lod=lod,
            world=world,
            chunk=_opt(chunk),
            radius=radius,
            levels=levels,
        )

    def preview_model(
        self,
        ctx: Context,
        model: Annotated[str, Field(description="model name")],
        out: PngOut = None,
        size: Annotated[int, Field(description="pixels per view", ge=32, le=1024)] = 160,
    ) -> Annotated[CallToolResult, o.PreviewModel]:
        """A picture of a model: its textured surfaces seen from the front, side and top (orthographic, with a
        scale bar) and in perspective from three quarters, then each level of detail in perspective, on a ground
        grid (a line every grid_m metres), labelled with triangle counts, returned as an image (out: also written
        to a PNG file). Returns what was drawn (views, levels, materials with their textures)."""
        return self.t.call(ctx, api.preview_model, model, self.t.output(out), size)

    def preview_world(
        self,
        ctx: Context,
        world: Annotated[str, Field(description="world name")],
        at: Annotated[
            tuple[int, int], Field(description="the start cell [x, z]: the camera is placed relative to its centre")
        ] = (0, 0),
        scale: Annotated[
            int, Field(description="the larger frame is scale x 320 x 240 px (1: the console frame alone)", ge=1, le=4)
        ] = 2,
        out: PngOut = None,
    ) -> Annotated[CallToolResult, o.PreviewWorld]:
        """What a world's camera sees from a start cell, as `render { world, at }` shows it, returned as an image
        (out: also written to a PNG file): the console's 320 x 240 frame, the same view at scale x that, and the
        draw report beside them. Drawn with the toolchain's model of the engine: each chunk's ground at the level
        the engine picks, skirts, water, entities at their level of detail, flora thinned, everything outside the
        view volume or past far and draw_distance left out. Returns the draw report (chunks loaded and culled,
        entities considered, culled, too far, thinned, drawn at a lower level; triangles by kind against the
        1,200 a frame), the chunks and models drawn."""
        return self.t.call(ctx, api.preview_world, world, tuple(at), self.t.output(out), scale)

    def preview_texture(
        self, ctx: Context, texture: Annotated[str, Field(description="texture name")], out: PngOut = None
    ) -> Annotated[CallToolResult, o.PreviewTexture]:
        """A picture of a texture: its mip chain side by side and, for a sprite sheet, every frame labelled with
        its index and one row per clip, returned as an image (out: also written to a PNG file)."""
        return self.t.call(ctx, api.preview_texture, texture, self.t.output(out))

    def deps(
        self,
        ctx: Context,
        name: Annotated[
            str | None,
            Field(
                description="an asset name (or a source path such as models/crate.vmodel, or a PNG's path); omit "
                "for the whole graph"
            ),
        ] = None,
        kind: Annotated[Kind | None, Field(description="the asset's kind, when several kinds have that name")] = None,
        reverse: Annotated[bool, Field(description="what uses the asset, instead of what it uses")] = False,
        depth: Annotated[
            int | None,
            Field(description="levels of references to follow (omit: 1); 0 follows every level", ge=0, le=MAX_LEVELS),
        ] = None,
        orphans: Annotated[
            bool, Field(description="list missing references and unused assets of the whole game instead (no name)")
        ] = False,
        dot: Annotated[bool, Field(description="also return the graph as Graphviz DOT text")] = False,
    ) -> Annotated[CallToolResult, o.Deps]:
        """The reference graph of the game's assets: what an asset uses (materials of a model, textures of a
        material, prefabs and models of a world, ...) or, with reverse, what uses it, each reference located
        (file, line, col, JSON path); without a name the whole graph; with orphans the references to assets that
        do not exist and the assets nothing uses (worlds and scenes are roots, never unused)."""
        return self.t.call(ctx, api.deps, name, kind, reverse, None if depth == 0 else depth or 1, orphans, dot)

    def rename(
        self,
        ctx: Context,
        kind: Annotated[Kind, Field(description="the asset's kind")],
        old: Annotated[str, Field(description="the asset's name now")],
        new: AssetName,
        dry_run: Annotated[bool, Field(description="list every edit and check them, write nothing")] = False,
    ) -> Annotated[CallToolResult, o.Rename]:
        """Rename an asset: its source file (same folder) and every reference to it in every source, each edit
        replacing only the name (every other byte kept). Every touched source is checked as the cook checks it
        before anything is written (refused with the problems it would add); the files are then written as
        one set (all or none). Refused when the new name is taken or not an asset name."""
        return self.t.call(ctx, api.rename, kind, old, new, dry_run=dry_run)

    def report(
        self,
        ctx: Context,
        html: Annotated[
            str | None,
            Field(
                description=f"also write the report as one self-contained HTML page (a sortable table) to this .html "
                f"file{UNDER_ROOT}, not in the assets folder"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, o.Report]:
        """The build report: per asset its cooked size, where the cooked file came from (compiled, local store,
        shared cache) and its compile time, triangles per level of detail (models) or texture memory with mips
        (textures), how many assets it uses and is used by, its warnings; largest first, with totals per kind
        and the slowest compiles. Reads what the last cook left (cook first for current figures)."""
        return self.t.call(ctx, api.report, self.t.output(html))


#: Every tool, with what it does to the game (its MCP annotations); the method of Face of that name
#: is the tool.
TOOLS: dict[str, ToolAnnotations] = {
    "list_assets": READS,
    "write_source": REPLACES,
    "cook": COOKS,
    "check": READS,
    "why": READS,
    "monitor_status": READS,
    "inspect_model": READS,
    "inspect_prefab": COOKS,
    "inspect_world": REPLACES,
    "world_query": COOKS,
    "world_map": COOKS,
    "world_place": PLACES,
    "world_terrain": REPLACES,
    "world_vegetation": REPLACES,
    "world_remove": REPLACES,
    "dump": READS,
    "verify": READS,
    "export_gltf": REPLACES,
    "preview_model": REPLACES,
    "preview_texture": REPLACES,
    "preview_world": REPLACES,
    "deps": READS,
    "rename": MOVES,
    "report": REPLACES,
}


class Server(MCPServer):
    """The SDK's server, whose resources/list also lists every asset's source (they come and go
    as the game changes, so they are listed when asked, not registered), and whose tool calls
    take only arguments of the JSON types the tool's input schema says (:func:`argument_problems`)."""

    def __init__(self, tools: Tools, **kwargs: Any):
        super().__init__(**kwargs)
        self.tools = tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        schema = self._tool_input_schema(name)
        wrong = argument_problems(schema, arguments) if schema is not None else None
        if wrong:
            raise ToolError(bounded(f"invalid arguments of {name}: {wrong}"))
        return await super().call_tool(name, arguments, context)

    async def list_resources(self) -> list[Resource]:
        fixed = await super().list_resources()
        try:
            assets = await anyio.to_thread.run_sync(lambda: api.list_sources(self.tools.project()))
        except VedutaError:  # a game that cannot be read now (its pyproject.toml broken): no sources
            assets = []
        listed: dict[str, Resource] = {}
        for a in assets:  # a name two sources share (an error the cook reports) is listed once
            uri = _source_uri(a["kind"], a["name"])
            listed.setdefault(
                uri,
                Resource(
                    uri=uri,
                    name=f"{a['kind']} {a['name']}",
                    mime_type="application/json",
                    description=f"the source of {a['kind']} {a['name']} ({a['path']})",
                ),
            )
        return fixed + list(listed.values())


#: the JSON types as a message names them
_JSON_TYPES = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "string": "a string",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def argument_problems(schema: dict[str, Any], arguments: Any) -> str:
    """What is wrong with a tool call's *arguments* against the tool's published input *schema*
    (JSON Schema 2020-12), checked before the SDK's pydantic model reads them: that model is lax,
    and took ``true`` for the integer 1 (a cell ``[true, false]`` was cell [1, 0]), ``"3"`` for 3
    and ``1`` for true. JSON's types are kept apart here as the schema says (true is not an
    integer, 2.5 is not one, "3" is not a number), and so are the schema's bounds (``minimum``,
    ``maximum``, ``maxItems``: the same as the command line's). "" when nothing is wrong; else the first few
    problems, each at its argument's path (``cell[0]: true is not an integer``)."""
    errors = sorted(_validator_class()(schema).iter_errors(arguments), key=lambda e: list(map(str, e.path)))
    bounded_at = {tuple(e.absolute_path) for e in map(_leaf, errors) if e.validator in ("minimum", "maximum")}
    out = []
    for err in errors:
        leaf = _leaf(err)
        if leaf.validator == "type" and tuple(leaf.absolute_path) in bounded_at:
            continue  # a whole float too large for an integer, and out of the argument's range: say the range
        where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in leaf.absolute_path).lstrip(".")
        out.append(f"{where or 'arguments'}: {_said(leaf)}")
        if len(out) == 5:
            break
    return "; ".join(out)


#: A whole number written as a float (``1e+20``, ``2.0``) is an integer to JSON Schema, but the SDK's
#: argument model (pydantic) takes one only below 2**63 in magnitude, and otherwise answered with its
#: own text (hostile4 #6): such a number is not an integer here, said as every other mistake is.
_FLOAT_INT_LIMIT = 2.0**63


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12's validator, an integer being as :data:`_FLOAT_INT_LIMIT` says."""
    from jsonschema import Draft202012Validator, validators

    def is_integer(checker: Any, instance: Any) -> bool:
        if isinstance(instance, float):
            return instance.is_integer() and abs(instance) < _FLOAT_INT_LIMIT
        return Draft202012Validator.TYPE_CHECKER.is_type(instance, "integer")

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", is_integer)
    return validators.extend(Draft202012Validator, type_checker=checker)


def _leaf(err: Any) -> Any:
    """The problem to tell of a schema error: for ``anyOf`` (an optional argument: its type or
    null), the deepest of its branches' problems other than "is not null"."""
    while err.validator in ("anyOf", "oneOf") and err.context:
        subs = [e for e in err.context if not (e.validator == "type" and e.validator_value == "null")]
        if not subs:
            break
        err = max(subs, key=lambda e: len(e.absolute_path))
    return err


def _said(err: Any) -> str:
    value = clip(json.dumps(err.instance, ensure_ascii=False), 40)
    if err.validator == "type":
        want = err.validator_value
        names = [_JSON_TYPES.get(t, str(t)) for t in (want if isinstance(want, list) else [want])]
        why = ""
        if isinstance(err.instance, float) and err.instance.is_integer():  # (see _FLOAT_INT_LIMIT)
            why = " (a whole number written as a float must be below 2**63 in magnitude)"
        return f"{value} is not {' or '.join(names)}{why}"
    if err.validator == "enum":
        return f"{value} is not one of {', '.join(json.dumps(v) for v in err.validator_value)}"
    if err.validator in ("minimum", "maximum"):  # as the command line says it: "0 out of range [1, 256]"
        lo, hi = err.schema.get("minimum"), err.schema.get("maximum")
        return f"{value} out of range [{'' if lo is None else lo}, {'' if hi is None else hi}]"
    if err.validator == "maxItems":  # (jsonschema's message quotes the whole array)
        return f"{len(err.instance):,} items, more than the limit of {err.validator_value:,}"
    return clip_words(err.message)


def _source_uri(kind: str, name: str) -> str:
    return f"veduta://source/{kind}/{name}"


def _add_resources(server: Server, tools: Tools) -> None:
    """The schemas and format docs of every kind, and a template for the sources of each kind."""
    from veduta.base.kinds import KINDS

    for k in KINDS:

        def schema(kind: str = k.name) -> str:
            return json.dumps(api.schema(kind), indent=2, ensure_ascii=False)

        def doc(kind: str = k.name) -> str:
            return api.format_doc(kind)

        def source(name: str, kind: str = k.name) -> str:
            try:
                return api.source_text(tools.project(), kind, name)
            except VedutaError as exc:
                raise ResourceError(str(exc)) from None

        server.resource(
            f"veduta://schema/{k.name}",
            name=f"{k.name} schema",
            mime_type="application/schema+json",
            description=f"the JSON Schema (2020-12) of {k.folder}/*{k.suffix} sources ({k.format})",
        )(_no_args(schema))
        server.resource(
            f"veduta://format/{k.name}",
            name=f"{k.name} format",
            mime_type="text/markdown",
            description=f"the {k.format} source format: every field, its units and range, with "
            f"examples (docs/formats/{k.name}.md)",
        )(_no_args(doc))
        server.resource(
            _source_uri(k.name, "{name}"),
            name=f"{k.name} source",
            mime_type="application/json",
            description=f"the source text of a {k.name} by name ({k.folder}/<name>{k.suffix})",
        )(_name_only(source))


def _no_args(fn: Callable[[], str]) -> Callable[[], str]:
    """*fn* (whose kind is bound by a default) as the SDK's static resources want it: no parameters."""

    def read() -> str:
        return fn()

    return read


def _name_only(fn: Callable[..., str]) -> Callable[[str], str]:
    """*fn* as a template's reader: the one parameter ``name``."""

    def read(name: str) -> str:
        return fn(name)

    return read


def build_server(root: str) -> MCPServer:
    """The server for the game repo at *root*, with every tool and resource registered."""
    from veduta import __version__

    tools = Tools(root)
    server = Server(tools, name="veduta", instructions=INSTRUCTIONS, version=__version__)
    face = Face(tools)
    for name, hints in TOOLS.items():
        fn = getattr(face, name)
        server.add_tool(
            fn, name=name, description=inspect.cleandoc(fn.__doc__ or ""), annotations=hints, structured_output=True
        )
    _add_resources(server, tools)
    return server


def serve(root: str) -> None:
    """Serve the game repo at *root* over stdio until the client closes: confined to it
    (:func:`veduta.base.fsutil.confine`), every request answered (:mod:`veduta.faces.mcp.guard`)."""
    import anyio

    from veduta.base.fsutil import confine
    from veduta.faces.mcp.guard import run_stdio

    os.chdir(os.path.abspath(root))  # the cook's paths are relative to the game root
    confine(".")
    anyio.run(run_stdio, build_server("."))
