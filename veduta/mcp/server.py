"""The MCP server: every tool a thin face over :mod:`veduta.api` (STYLE.md 11).

Each tool calls the same function as its CLI command and returns that command's ``--json``
data as structured content (and as JSON text, for clients that read only text); ``world_map``
returns the PNG as image content.  A user mistake (a :class:`~veduta.errors.VedutaError`) is a
tool error whose text names the problem; it never ends the server.  Tools are plain functions:
the SDK runs each call on a worker thread, so calls are answered concurrently.  Edits of one
world take that world's lock, so two never interleave; cooks take one lock (doit runs one at a
time in a process).

Adding a tool that has landed in ``veduta.api``: one function below with typed, described
parameters, decorated with ``@tool(...)``.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import threading
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import Field

from veduta import __version__, api
from veduta.cook.project import Project
from veduta.errors import VedutaError

Cell = Annotated[list[int], Field(min_length=2, max_length=2, description="a cell [x, z] (whole cells; a cell is "
                                                                          "the world's cell size, 1 m by default)")]

INSTRUCTIONS = """\
Tools of veduta cook, the asset toolchain of the Veduta game engine, working on one game repo
(sources under assets/, cooked .vda files under assets/.cooked/). Cells are [x, z] in whole
cells; heights and distances in metres unless a field says otherwise. World edits change the
world's .vworld source text (comments and layout kept); pass dry_run to see the result first.
Results are the same JSON as the `veduta ... --json` commands."""


class Locks:
    """One lock per world name (edits of one world never interleave) and one for the cook."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._worlds: dict[str, threading.Lock] = {}
        self.cook = threading.Lock()

    def world(self, name: str) -> threading.Lock:
        with self._guard:
            return self._worlds.setdefault(name, threading.Lock())


def data_result(data: dict[str, Any]) -> CallToolResult:
    """Structured content *data*, and the same as JSON text."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
                          structured_content=data)


def _cell(v: list[int] | None) -> tuple[int, int] | None:
    return None if v is None else (v[0], v[1])


def build_server(project: Project) -> MCPServer:
    """The server for *project* (paths in its tools are relative to the current folder, which
    :func:`serve` makes the game root)."""
    server: MCPServer = MCPServer("veduta", instructions=INSTRUCTIONS, version=__version__)
    locks = Locks()

    def tool(name: str, description: str, *, read_only: bool = True, destructive: bool = False,
             lock: Callable[[dict[str, Any]], threading.Lock] | None = None):
        """Register the decorated function as tool *name*; a VedutaError becomes a tool error."""

        def register(fn: Callable[..., CallToolResult]) -> Callable[..., CallToolResult]:
            @functools.wraps(fn)
            def face(**kwargs: Any) -> CallToolResult:
                try:
                    if lock is None:
                        return fn(**kwargs)
                    with lock(kwargs):
                        return fn(**kwargs)
                except VedutaError as exc:
                    findings = getattr(exc, "findings", None)
                    text = str(exc)
                    if findings:
                        text += "\n" + json.dumps({"findings": findings}, ensure_ascii=False)
                    raise ToolError(text) from None

            server.add_tool(face, name=name, description=description,
                            annotations=ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                                                        idempotent_hint=True, open_world_hint=False))
            return fn

        return register

    def world_lock(kwargs: dict[str, Any]) -> threading.Lock:
        return locks.world(kwargs["world"])

    # -- cooking and cooked files ---------------------------------------------------------------

    @tool("cook", "Cook the game's asset sources into .vda files (only what is stale; like `veduta cook`). "
                  "Returns ok, a summary (counts of cooked, up_to_date, restored, failed sources, removed "
                  "orphan files) and every diagnostic {file, line, col (1-based), path (JSON path in the "
                  "source), severity, message[, code]}. Fix the sources and cook again until ok.",
          read_only=False, lock=lambda kwargs: locks.cook)
    def cook(sources: Annotated[list[str] | None, Field(
            description="source files to cook, as paths from the game root (assets/models/crate.vmodel) or "
                        "under assets/ (models/crate.vmodel); omit to cook every source")] = None
             ) -> CallToolResult:
        return data_result(api.cook(project, sources or []))

    @tool("dump", "A cooked .vda file as JSON: its META (compiler, kind, name, source, deps, source_hash) and "
                  "its body chunk (arrays summarised), like `veduta dump`.")
    def dump(path: Annotated[str, Field(description="path of a .vda file from the game root, e.g. "
                                                    "assets/.cooked/models/crate.vda")]) -> CallToolResult:
        return data_result(api.dump(project, path))

    @tool("verify", "Check cooked .vda files against the container spec (magic, lengths, CRCs, META, body), "
                    "like `veduta verify --json`: ok, and per file its kind and name or the error with the "
                    "chunk and byte offset.")
    def verify(paths: Annotated[list[str], Field(min_length=1, description="paths of .vda files from the game "
                                                                            "root")]) -> CallToolResult:
        return data_result(api.verify(project, paths))

    # -- inspection -----------------------------------------------------------------------------

    @tool("inspect_model", "Inspect model NAME: triangles per part and in total, triangles of every level of "
                           "detail (distances in metres), bounds in metres, materials and findings (MESH_* codes "
                           "with severity error/warning/note), like `veduta inspect model --json`.")
    def inspect_model(model: Annotated[str, Field(description="model name: the .vmodel file name without the "
                                                              "suffix")]) -> CallToolResult:
        report = api.inspect_model(project, model)
        if report.get("status") == "missing":
            raise VedutaError(report["errors"][0]["message"])
        return data_result(report)

    if hasattr(api, "inspect_prefab"):
        @tool("inspect_prefab", "Inspect prefab NAME: footprint in cells, entities, triangles of their models "
                                "and findings (PREFAB_* codes), like `veduta inspect prefab --json`.")
        def inspect_prefab(prefab: Annotated[str, Field(description="prefab name: the .vprefab file name "
                                                                    "without the suffix")]) -> CallToolResult:
            return data_result(api.inspect_prefab(project, prefab))

    if hasattr(api, "inspect_world"):
        @tool("inspect_world", "Inspect world NAME: findings about its places, prefabs and models and the "
                               "triangles drawn per view (WORLD_* codes), like `veduta inspect world --json`.")
        def inspect_world(world: Annotated[str, Field(description="world name: the .vworld file name without "
                                                                  "the suffix")],
                          at: Annotated[list[Cell] | None, Field(description="cells [x, z] to view from "
                                                                             "(default: the world's views)")] = None,
                          all_views: Annotated[bool, Field(description="report every view, not only the "
                                                                       "worst")] = False) -> CallToolResult:
            return data_result(api.inspect_world(project, world, at=[(c[0], c[1]) for c in at or []],
                                                 all_views=all_views))

    # -- the world generator --------------------------------------------------------------------

    @tool("world_query", "What is at one cell of a world: biome, ground kind, ground height in metres at the "
                         "cell centre, water (level in metres, wet), the owner (place, site, scatter, "
                         "vegetation) and plants, like `veduta world query --json`.")
    def world_query(world: Annotated[str, Field(description="world name (assets/worlds/<name>.vworld)")],
                    cell: Cell) -> CallToolResult:
        return data_result(api.world_query(project, world, (cell[0], cell[1])))

    @tool("world_map", "Draw the top-down map of a world around a cell as a PNG (biomes, hill shading, water, "
                       "trees, chunk borders, labels), returned as an image; the structured result says which "
                       "cells it covers (origin = the cell at the top-left pixel) and the pixels per cell.")
    def world_map(world: Annotated[str, Field(description="world name (assets/worlds/<name>.vworld)")],
                  at: Annotated[list[int], Field(min_length=2, max_length=2,
                                                 description="centre cell [x, z]")] = [0, 0],  # noqa: B006
                  size: Annotated[list[int], Field(min_length=2, max_length=2,
                                                   description="cells [width, height] to draw, each "
                                                               "1..2048")] = [256, 256],  # noqa: B006
                  scale: Annotated[int | None, Field(description="pixels per cell, 1..16 (default: "
                                                                 "1024 // the larger side, 1..8)")] = None
                  ) -> CallToolResult:
        data = api.world_map(project, world, (at[0], at[1]), (size[0], size[1]), scale)
        png = data.pop("png")
        return CallToolResult(content=[ImageContent(type="image", data=base64.b64encode(png).decode("ascii"),
                                                    mime_type="image/png"),
                                       TextContent(type="text", text=json.dumps(data))],
                              structured_content=data)

    # -- world editing (each takes the world's lock) ----------------------------------------------

    if hasattr(api, "world_place"):
        @tool("world_place", "Add or move the place NAME (one prefab at one cell) in a world's source, checked "
                             "as inspect world checks places (outside, water, biome, overlap, distance): a "
                             "refused placement is an error listing the findings. Give cell, or near to take "
                             "the valid cell nearest to it.", read_only=False, lock=world_lock)
        def world_place(world: Annotated[str, Field(description="world name")],
                        name: Annotated[str, Field(description="the place's name (unique in the world)")],
                        prefab: Annotated[str, Field(description="prefab name to place")],
                        cell: Annotated[list[int] | None, Field(min_length=2, max_length=2,
                                                                description="cell [x, z] of the place")] = None,
                        near: Annotated[list[int] | None, Field(min_length=2, max_length=2,
                                                                description="search from this cell [x, z] for the "
                                                                            "nearest valid one")] = None,
                        rotation: Annotated[int, Field(description="degrees: 0, 90, 180 or 270")] = 0,
                        dry_run: Annotated[bool, Field(description="check and report, write nothing")] = False
                        ) -> CallToolResult:
            return data_result(api.world_place(project, world, name, prefab, cell=_cell(cell), near=_cell(near),
                                               rotation=rotation, dry_run=dry_run))

    if hasattr(api, "world_terrain"):
        @tool("world_terrain", "Add or replace the terrain feature NAME of a world (a hill, plain, lake or sea "
                               "around a cell; radius in cells, height and depth in metres); reports the ground "
                               "before and after and places that end up in water.", read_only=False,
              lock=world_lock)
        def world_terrain(world: Annotated[str, Field(description="world name")],
                          name: Annotated[str, Field(description="the feature's name")],
                          kind: Annotated[str, Field(description="hill, plain, lake or sea")],
                          cell: Cell,
                          radius: Annotated[int, Field(description="radius in cells")],
                          height: Annotated[float | None, Field(description="metres (hill, plain)")] = None,
                          depth: Annotated[float | None, Field(description="metres (lake, sea)")] = None,
                          falloff: Annotated[int | None, Field(description="cells of the edge's slope")] = None,
                          roughness: Annotated[float | None, Field(description="0..1")] = None,
                          dry_run: Annotated[bool, Field(description="report, write nothing")] = False
                          ) -> CallToolResult:
            return data_result(api.world_terrain(project, world, name, kind, (cell[0], cell[1]), radius,
                                                 height=height, depth=depth, falloff=falloff, roughness=roughness,
                                                 dry_run=dry_run))

    if hasattr(api, "world_vegetation"):
        @tool("world_vegetation", "Add or replace the vegetation rule NAME of a world: a prefab or model planted "
                                  "at a density (plants per cell) in biomes, or around a cell within a radius "
                                  "(cells); reports plants and triangles.", read_only=False, lock=world_lock)
        def world_vegetation(world: Annotated[str, Field(description="world name")],
                             name: Annotated[str, Field(description="the rule's name")],
                             density: Annotated[float, Field(description="plants per cell, 0..1")],
                             prefab: Annotated[str | None, Field(description="prefab to plant")] = None,
                             model: Annotated[str | None, Field(description="model to plant")] = None,
                             biomes: Annotated[list[str] | None, Field(description="biome names")] = None,
                             cell: Annotated[list[int] | None, Field(min_length=2, max_length=2,
                                                                     description="centre cell [x, z]")] = None,
                             radius: Annotated[int | None, Field(description="cells around cell")] = None,
                             scale: Annotated[list[float] | None, Field(min_length=2, max_length=2,
                                                                        description="model rules: [min, max] "
                                                                                    "scale")] = None,
                             dry_run: Annotated[bool, Field(description="report, write nothing")] = False
                             ) -> CallToolResult:
            return data_result(api.world_vegetation(
                project, world, name, density, prefab=prefab, model=model, biomes=biomes, cell=_cell(cell),
                radius=radius, scale=None if scale is None else (scale[0], scale[1]), dry_run=dry_run))

    if hasattr(api, "world_remove"):
        @tool("world_remove", "Remove the terrain feature, vegetation rule or place NAME from a world's source.",
              read_only=False, destructive=True, lock=world_lock)
        def world_remove(world: Annotated[str, Field(description="world name")],
                         name: Annotated[str, Field(description="the name to remove")],
                         section: Annotated[str | None, Field(description="features, vegetation or places, when "
                                                                          "the name is in several")] = None,
                         dry_run: Annotated[bool, Field(description="report, write nothing")] = False
                         ) -> CallToolResult:
            return data_result(api.world_remove(project, world, name, section=section, dry_run=dry_run))

    return server


def serve(root: str | None = None) -> int:
    """Serve the game repo at *root* (default: found from the current folder) over stdio."""
    project = Project.find(root or os.getcwd())
    os.chdir(os.path.abspath(project.root))  # tool paths are relative to the game root
    build_server(Project.at(".")).run("stdio")
    return 0
