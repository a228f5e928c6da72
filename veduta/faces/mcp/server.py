"""The MCP server of ``veduta mcp``: one tool per :mod:`veduta.api` function, over stdio.

Each tool is a thin face: it checks nothing the core function does not (except that file paths
lie inside the game root: :meth:`Tools.inside`, a rule of this face only), calls it with the
game repo's :class:`~veduta.base.project.Project`, and returns its data as structured content
(and the same JSON as text, for clients that read only text). A user mistake
(:class:`~veduta.base.errors.VedutaError`: unknown asset, malformed argument, refused edit) becomes a
tool error whose text names the problem; any other exception becomes a tool error naming it, and
the server goes on. The SDK runs each call in a worker thread, so calls are answered
concurrently; edits of one world take that world's lock, and cooks take one lock, so they never
interleave.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import Field

from veduta import api
from veduta.base.argtypes import MAX_JOBS
from veduta.base.errors import VedutaError
from veduta.tools.world_edit import NEAR_SEARCH_MAX

Cell = Annotated[tuple[int, int], Field(description="a cell [x, z] (integers; +x east, -z north)")]
#: paths name files of the game served: relative to its root (or absolute), never outside it
UNDER_ROOT = ", relative to the game root (a path outside the game root is refused)"
DryRun = Annotated[bool, Field(description="report what the edit would do, and write nothing")]

INSTRUCTIONS = """\
veduta cook: the asset toolchain of the Veduta game engine, serving one game repo.
Sources live under assets/ (models/*.vmodel, prefabs/*.vprefab, worlds/*.vworld, ...); tools
name assets by name (the file name without suffix). Worlds are grids of cells (cell metres
square, usually 1 m); cells are [x, z] integer pairs, +x east, -z north. Heights and radii of
terrain are in metres and cells as each tool says. The authoring loop: world_map and
world_query to look, world_terrain to shape, world_vegetation to plant, world_place for
landmarks (near= finds a valid cell), inspect_world until it reports no error, then cook.
Edits change the world's .vworld source minimally and are validated before they are written;
use dry_run to see a report first."""


class Tools:
    """The tools of one server: the project root and the locks that keep edits apart."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._cook_lock = threading.Lock()
        self._locks_lock = threading.Lock()
        self._world_locks: dict[str, threading.Lock] = {}

    def project(self):
        from veduta.base.project import Project

        return Project.find(self.root)

    def inside(self, path: str, what: str = "path") -> str:
        """*path* (relative to the game root, or absolute) when it lies under the game root once
        symlinks and ``..`` are resolved (a file to write need not exist yet); a tool error naming
        the root otherwise. An agent reads and writes the game it serves, not the machine."""
        root = os.path.realpath(self.root)
        real = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([root, real]) != root:
            raise ToolError(f"{what} {path!r} is outside the game root {root} (it resolves to {real}); "
                            f"give a path under the game root")
        return path

    def output(self, path: str) -> str:
        """:meth:`inside`, for a file a tool writes: also not in the assets folder, where a PNG or
        any file would be taken for (or overwrite) a source."""
        self.inside(path, "out")
        assets = os.path.realpath(os.path.join(self.root, self.project().assets))
        real = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([assets, real]) == assets:
            raise ToolError(f"out {path!r} is in the assets folder {assets}, which holds the game's sources; "
                            f"write exports elsewhere under the game root")
        return path

    def sources(self, project: Any, names: list[str] | None) -> list[str] | None:
        """Source paths under the assets folder for *names* given as cook takes them (from the game
        root, e.g. the ``file`` of a diagnostic, or under assets/), as the CLI's check and why do."""
        from veduta.tools.check import resolve_sources

        return resolve_sources(project, names, self.root) if names else None

    def world_lock(self, world: str) -> threading.Lock:
        with self._locks_lock:
            return self._world_locks.setdefault(world, threading.Lock())

    def call(self, fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Run a core function; its user mistakes (and crashes) become tool errors."""
        try:
            return fn(self.project(), *args, **kwargs)
        except VedutaError as exc:
            findings = getattr(exc, "findings", None)
            text = str(exc)
            if findings:
                text += "\n" + json.dumps({"findings": findings}, indent=1, sort_keys=True)
            raise ToolError(text) from None
        except ToolError:
            raise
        except Exception as exc:  # a bug, not a user mistake: say so, keep serving
            raise ToolError(f"internal error in veduta ({type(exc).__name__}: {exc}); please report it") from None

    def edit(self, world: str, fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
        with self.world_lock(world):
            return self.call(fn, world, *args, **kwargs)


def _result(data: dict[str, Any], *extra: Any) -> CallToolResult:
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    return CallToolResult(content=[*extra, TextContent(type="text", text=text)], structured_content=data)


def _missing(report: dict[str, Any], kind: str) -> dict[str, Any]:
    """inspect_* report a missing asset as data; an agent is told it as an error."""
    if report.get("status") == "missing":
        messages = "; ".join(e.get("message", "") for e in report.get("errors", [])) or f"no such {kind}"
        raise ToolError(messages)
    return report


def build_server(root: str) -> MCPServer:
    """The server for the game repo at *root*, with every tool registered."""
    from veduta import __version__

    t = Tools(root)
    server = MCPServer("veduta", instructions=INSTRUCTIONS, version=__version__)
    tool = server.tool

    @tool(description="Cook the game's asset sources into .vda files (what `veduta cook` does): only what is "
          "stale. Returns the summary (cooked, up_to_date, restored, failed, removed) and every diagnostic "
          "(file, line, col, path, severity, message).")
    def cook(sources: Annotated[list[str] | None, Field(
            description="source files to cook, as paths under the game root or under assets/ "
            "(e.g. 'models/crate.vmodel'); omit to cook everything")] = None,
             jobs: Annotated[int | None, Field(
                 description="processes to compile in (1: in the server's own process, one source at a time); "
                 "omit for one per core, as `doit cook` does", ge=1, le=MAX_JOBS)] = None) -> CallToolResult:
        with t._cook_lock:
            return _result(t.call(api.cook, sources or None, jobs or 0))

    @tool(description="Check every source (or those named) as the cook would, references included, writing "
          "nothing. Returns ok, counts and every diagnostic (file, line, col, path, severity, message).")
    def check(sources: Annotated[list[str] | None, Field(
            description="source files, as paths under the game root or under assets/ (as cook takes them); "
            "omit to check everything")] = None,
              jobs: Annotated[int | None, Field(
                  description="processes to compile in; omit for one per core, as `veduta check` does",
                  ge=1, le=MAX_JOBS)] = None) -> CallToolResult:
        from veduta.cook.ahead import cpu_count

        return _result(t.call(lambda p: api.check(p, t.sources(p, sources), jobs=jobs or cpu_count())))

    @tool(description="List each stale asset and why it would cook again (never cooked, source changed, a "
          "dependency changed, compiler changed, ...).")
    def why(sources: Annotated[list[str] | None, Field(
            description="source files, as paths under the game root or under assets/ (as cook takes them); "
            "omit for every source")] = None) -> CallToolResult:
        return _result(t.call(lambda p: api.why(p, t.sources(p, sources))))

    @tool(description="Inspect a model: triangles per part and level of detail, bounds in metres, and findings "
          "(code, severity error|warning|note, message).")
    def inspect_model(model: Annotated[str, Field(description="model name (file name without .vmodel)")]
                      ) -> CallToolResult:
        return _result(_missing(t.call(api.inspect_model, model), "model"))

    @tool(description="Inspect a prefab: footprint in cells, entities, triangles of its models, findings.")
    def inspect_prefab(prefab: Annotated[str, Field(description="prefab name (file name without .vprefab)")]
                       ) -> CallToolResult:
        return _result(_missing(t.call(api.inspect_prefab, prefab), "prefab"))

    @tool(description="Inspect a world: findings ranked by severity (places in water, overlapping, in a wrong "
          "biome or too close; missing prefabs or models; a camera that sees past the loaded chunks; views "
          "over the 1200-triangle budget, WORLD_CHUNK_BUDGET) and the triangles drawn in each view. Fix every "
          "error before cooking.")
    def inspect_world(world: Annotated[str, Field(description="world name (file name without .vworld)")],
                      at: Annotated[list[tuple[int, int]] | None, Field(
                          description="extra view foci as cells [x, z], beside the start cell and every place"
                      )] = None) -> CallToolResult:
        return _result(_missing(t.call(api.inspect_world, world, [tuple(c) for c in at or []]), "world"))

    @tool(description="What is at one cell of a world: biome, ground height in metres (full detail and as "
          "drawn), water, the structure that owns the cell, plants and entities.")
    def world_query(world: Annotated[str, Field(description="world name")], cell: Cell) -> CallToolResult:
        return _result(t.call(api.world_query, world, tuple(cell)))

    @tool(description="The top-down map of a world around a cell, as a PNG image (biome colours shaded by "
          "relief, water, features, footprints, names) and, as structured content, what `veduta world map "
          "--json` prints: the cells drawn (origin = the cell at the top-left pixel), scale in pixels per cell, "
          "width and height in pixels.")
    def world_map(world: Annotated[str, Field(description="world name")],
                  at: Annotated[tuple[int, int], Field(description="the centre cell [x, z]")] = (0, 0),
                  size: Annotated[tuple[int, int], Field(description="width and depth in cells [w, h], each "
                                                                     "1..2048")] = (256, 256),
                  scale: Annotated[int | None, Field(description="pixels per cell, 1..16 (default 1024 // the "
                                                                 "larger side, at most 8)")] = None
                  ) -> CallToolResult:
        import base64

        data = dict(t.call(api.world_map, world, tuple(at), tuple(size), scale))
        png = data.pop("png")  # the image content; the rest is the CLI's --json
        image = ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
        return _result(data, image)

    @tool(description="Add (or replace, same name) a place: a named landmark prefab at a cell. Give cell to "
          "validate that exact cell (refused, naming the finding code, when it is in water, overlaps another "
          "place, is in a biome the prefab does not allow, breaks a min_distance or is outside the world), "
          "or near to let it choose the nearest valid cell. Returns the cell used.")
    def world_place(world: Annotated[str, Field(description="world name")],
                    name: Annotated[str, Field(description="the place's name")],
                    prefab: Annotated[str, Field(description="prefab name")],
                    cell: Annotated[tuple[int, int] | None, Field(description="the exact cell [x, z]")] = None,
                    near: Annotated[tuple[int, int] | None, Field(
                        description="find the valid cell nearest this one [x, z]")] = None,
                    rotation: Annotated[Literal[0, 90, 180, 270], Field(
                        description="degrees about +Y (90 and 270 swap the footprint's sides)")] = 0,
                    search: Annotated[int, Field(description="with near: search radius in cells",
                                                 ge=1, le=NEAR_SEARCH_MAX)] = 32,
                    dry_run: DryRun = False) -> CallToolResult:
        return _result(t.edit(world, api.world_place, name, prefab, cell=_opt(cell), near=_opt(near),
                              rotation=rotation, search=search, dry_run=dry_run))

    @tool(description="Add (or replace, same name) a terrain feature: a hill (adds height metres at the centre), "
          "a plain (levels the ground to the level height), a lake or sea (water at the level height, the bottom "
          "depth metres below). Reports ground heights before and after over its area (centre, min, max), "
          "places now in water (places_in_water) and sites or places that change.")
    def world_terrain(world: Annotated[str, Field(description="world name")],
                      name: Annotated[str, Field(description="the feature's name")],
                      kind: Annotated[Literal["hill", "plain", "lake", "sea"], Field(description="feature kind")],
                      cell: Annotated[tuple[int, int], Field(description="centre cell [x, z]")],
                      radius: Annotated[int, Field(description="radius in cells", ge=1, le=16384)],
                      height: Annotated[float | None, Field(
                          description="metres, -1024..1024. hill: added to the ground at the centre (default 4; "
                          "negative digs a hollow). plain, lake, sea: the level itself (a y, not an offset: the "
                          "flat ground or the water surface; default the ground at the centre cell)")] = None,
                      depth: Annotated[float | None, Field(
                          description="lake/sea only: metres of the bottom below the water at the centre "
                          "(default lake 2, sea 8)")] = None,
                      falloff: Annotated[int | None, Field(
                          description="plain/lake/sea only: cells over which it blends back to the ground "
                          "(default plain and lake 4, sea 8)")] = None,
                      roughness: Annotated[float | None, Field(
                          description="lake/sea only: how much the water's edge wanders, 0..1 (default 0.3)")] = None,
                      dry_run: DryRun = False) -> CallToolResult:
        return _result(t.edit(world, api.world_terrain, name, kind, tuple(cell), radius, height=height,
                              depth=depth, falloff=falloff, roughness=roughness, dry_run=dry_run))

    @tool(description="Add (or replace, same name) a vegetation rule planting a model (flora, any number per "
          "cell) or a prefab (trees: one per cell, competing with scatter) with a density 0..1 per cell, "
          "world-wide or in a round area (cell + radius in cells), optionally only on some biomes. Reports "
          "plants, the triangles they cost to draw, and warnings.")
    def world_vegetation(world: Annotated[str, Field(description="world name")],
                         name: Annotated[str, Field(description="the rule's name")],
                         density: Annotated[float, Field(description="share of cells planted, 0..1")],
                         model: Annotated[str | None, Field(description="flora model name")] = None,
                         prefab: Annotated[str | None, Field(description="prefab name")] = None,
                         biomes: Annotated[list[str] | None, Field(description="biome names")] = None,
                         cell: Annotated[tuple[int, int] | None, Field(description="area centre [x, z]")] = None,
                         radius: Annotated[int | None, Field(description="area radius in cells")] = None,
                         scale: Annotated[tuple[float, float] | None, Field(
                             description="random scale range [min, max]")] = None,
                         dry_run: DryRun = False) -> CallToolResult:
        return _result(t.edit(world, api.world_vegetation, name, density, prefab=prefab, model=model,
                              biomes=biomes, cell=_opt(cell), radius=radius, scale=_opt(scale), dry_run=dry_run))

    @tool(description="Remove a feature, vegetation rule or place from a world by name (an error when there "
          "is none). section says which list when the name is in several.")
    def world_remove(world: Annotated[str, Field(description="world name")],
                     name: Annotated[str, Field(description="the name to remove")],
                     section: Annotated[Literal["features", "vegetation", "places"] | None, Field(
                         description="which list, when the name is in several")] = None,
                     dry_run: DryRun = False) -> CallToolResult:
        return _result(t.edit(world, api.world_remove, name, section=section, dry_run=dry_run))

    @tool(description="A cooked .vda file as JSON: its chunks, META (kind, compiler, source hashes) and body "
          "(large arrays summarised).")
    def dump(path: Annotated[str, Field(description=f"path of a .vda file{UNDER_ROOT}")]
             ) -> CallToolResult:
        return _result(t.call(lambda _p: api.dump(None, t.inside(path))))

    @tool(description="Check cooked .vda files against the container spec and their kind's reader checks.")
    def verify(paths: Annotated[list[str], Field(description=f"paths of .vda files{UNDER_ROOT}")]
               ) -> CallToolResult:
        return _result(t.call(lambda _p: api.verify(None, [t.inside(p) for p in paths])))

    @tool(description="Write a binary glTF 2.0 (.glb) file of a cooked model (every level of detail, or level "
          "lod), or of a world's chunks (ground at its finest drawn level, or with levels at the level the engine "
          "draws it from a view of the centre chunk; skirts, water, entities) within radius chunks of chunk "
          "[cx, cz]. Give model, or world with chunk. Returns what was written.")
    def export_gltf(out: Annotated[str, Field(description=f"the .glb file to write{UNDER_ROOT}")],
                    model: Annotated[str | None, Field(description="model name")] = None,
                    lod: Annotated[int | None, Field(description="only this level of detail (0 = full)", ge=0)
                                   ] = None,
                    world: Annotated[str | None, Field(description="world name")] = None,
                    chunk: Annotated[tuple[int, int] | None, Field(description="chunk [cx, cz]")] = None,
                    radius: Annotated[int, Field(description="chunks around chunk", ge=0)] = 0,
                    levels: Annotated[bool, Field(description="a world's distant chunks at coarser levels, as the "
                                                               "engine draws them")] = False) -> CallToolResult:
        return _result(t.call(api.export_gltf, t.output(out), model=model, lod=lod, world=world,
                              chunk=_opt(chunk), radius=radius, levels=levels))

    @tool(description="Write a PNG sheet of shaded views (front, side, top, three-quarter) of a cooked model "
          "and its levels of detail, labelled with triangle counts. Returns what was drawn.")
    def preview_model(model: Annotated[str, Field(description="model name")],
                      out: Annotated[str, Field(description=f"the .png file to write{UNDER_ROOT}")],
                      size: Annotated[int, Field(description="pixels per view", ge=32, le=1024)] = 160
                      ) -> CallToolResult:
        return _result(t.call(api.preview_model, model, t.output(out), size))

    return server


def _opt(pair: Any) -> tuple | None:
    return None if pair is None else tuple(pair)


def serve(root: str) -> None:
    """Serve the game repo at *root* over stdio until the client closes."""
    os.chdir(os.path.abspath(root))  # the cook's paths are relative to the game root
    build_server(".").run()
