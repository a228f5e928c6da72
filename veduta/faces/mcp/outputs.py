"""The shapes of the MCP tools' structured results: each tool's ``outputSchema``.

One TypedDict per tool, written from the core function's return value (the same object the
tool's CLI command prints with ``--json``). A key every result has is required; a key only some
results have (a report of an asset that did not build, a dry run) is ``NotRequired``; nested
objects whose keys vary with the data are plain objects. The SDK validates every structured
result against its tool's schema before it is sent, so a core function that changes its shape
fails the MCP tests instead of surprising an agent.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

Obj = dict[str, Any]
Kind = Literal["model", "texture", "material", "scene", "prefab", "world", "map"]
State = Literal["fresh", "stale", "failed", "never_cooked"]
Cell = Annotated[list[int], Field(description="a cell [x, z]")]


class Diagnostic(TypedDict):
    """A located problem of a source: the cook's own diagnostic."""

    file: Annotated[str, Field(description="the source file, from the game root")]
    line: Annotated[int, Field(description="1-based line of the offending value")]
    col: Annotated[int, Field(description="1-based column of the offending value")]
    path: Annotated[str, Field(description="JSON path of the value, e.g. parts[2].radius ($: the whole source)")]
    severity: Literal["error", "warning", "note"]
    message: str
    code: NotRequired[Annotated[str, Field(description="a stable finding code, when the check has one")]]


class Asset(TypedDict):
    kind: Kind
    name: Annotated[str, Field(description="the asset name: its file name without the suffix")]
    path: Annotated[str, Field(description="the source file, from the game root")]
    state: Annotated[
        State,
        Field(
            description="fresh: its cooked file is up to date; stale: cooked, but the source "
            "or a dependency changed since (it cooks again without errors); "
            "failed: the source has errors, so the cook refuses it; never_cooked: "
            "not cooked yet, no errors"
        ),
    ]
    errors: int
    warnings: int


class ListAssets(TypedDict):
    assets: list[Asset]
    counts: Annotated[dict[str, int], Field(description="assets per state")]
    problems: Annotated[
        list[Diagnostic], Field(description="folders that cannot be read, file names that are not UTF-8")
    ]


class WriteSource(TypedDict):
    kind: Kind
    name: str
    path: Annotated[str, Field(description="the source file, from the game root")]
    action: Annotated[
        Literal["created", "replaced", "unchanged"], Field(description="unchanged: the same bytes were there")
    ]
    written: Annotated[bool, Field(description="whether the file was written (false on a dry run)")]
    dry_run: bool
    bytes: int
    changes: Annotated[
        list[Obj], Field(description="replaced: what changed, as JSON paths with their old and new values")
    ]
    more_changes: Annotated[int, Field(description="changes beyond those listed")]
    lines: Annotated[dict[str, int], Field(description="lines added and removed")]
    diagnostics: Annotated[list[Diagnostic], Field(description="the warnings of the source as written")]


class CookSummary(TypedDict):
    cooked: int
    up_to_date: int
    restored: int
    failed: int
    removed: list[str]
    with_failed_dependency: Annotated[int, Field(description="sources naming a source that failed")]
    warnings: Annotated[int, Field(description="warnings the sources cooked in this call gave")]
    standing_warnings: Annotated[
        int, Field(description="warnings of up-to-date sources, from their last cook (check lists them)")
    ]
    strict: Annotated[bool, Field(description="warnings failed the cook")]


class Cook(TypedDict):
    ok: Annotated[bool, Field(description="no source failed")]
    summary: CookSummary
    diagnostics: list[Diagnostic]


class Check(TypedDict):
    ok: Annotated[bool, Field(description="no error")]
    checked: int
    compiled: int
    fresh: int
    errors: int
    warnings: int
    strict: Annotated[bool, Field(description="warnings and inspect's error findings were errors")]
    strict_errors: Annotated[int, Field(description="errors only strict made")]
    diagnostics: list[Diagnostic]


class Why(TypedDict):
    checked: int
    stale: Annotated[
        list[Obj], Field(description="each stale source: file, source, kind, name and its reasons (code, message, dep)")
    ]


class MonitorStatus(TypedDict):
    running: bool
    pid: Annotated[int | None, Field(description="the monitor's process id (null when none runs)")]
    trusted: Annotated[
        bool,
        Field(
            description="false when a symbolic link is in the watched folders or a folder cannot be watched: "
            "cooks then check every source"
        ),
    ]
    why: Annotated[str, Field(description="why it is not trusted (empty when it is, or none runs)")]
    marked: Annotated[bool, Field(description="a complete cook left the mark the next cook trusts")]
    journal: Annotated[str, Field(description="the journal's path")]


class _Report(TypedDict):
    name: str
    source: Annotated[str | None, Field(description="the source path under the assets folder")]
    status: Annotated[str, Field(description="ok; findings: an error finding; invalid: the source has errors")]
    errors: Annotated[list[Obj], Field(description="the source's errors when it is invalid")]
    findings: Annotated[list[Obj], Field(description="code, severity (error, warning, note), message, and where")]


class InspectModel(_Report):
    triangles: NotRequired[int]
    vertices: NotRequired[int]
    parts: NotRequired[list[Obj]]
    lod_triangles: NotRequired[list[int]]
    lods: NotRequired[list[Obj]]
    draw_distance: NotRequired[float]
    triangle_budget: NotRequired[int]
    symmetry: NotRequired[str]
    pivot: NotRequired[str]
    pivot_offset: NotRequired[list[float]]
    bounds: NotRequired[Annotated[Obj, Field(description="min and max corners in metres")]]
    materials: NotRequired[list[str]]


class InspectPrefab(_Report):
    footprint: NotRequired[list[int]]
    tags: NotRequired[list[str]]
    biomes: NotRequired[list[str]]
    min_distance: NotRequired[dict[str, float]]
    entities: NotRequired[list[Obj]]
    triangles: NotRequired[int]


class AllViews(TypedDict):
    """A view at the centre of every chunk (inspect world --all), summed up."""

    views: Annotated[int, Field(description="chunk views counted (one per chunk)")]
    over_budget: Annotated[int, Field(description="chunk views drawing more than the budget")]
    triangles: Annotated[dict[str, float], Field(description="min, median, mean and max triangles of a chunk view")]
    histogram: Annotated[Obj, Field(description="bin: triangles per bar; views: chunk views per bar, from 0")]
    worst: Annotated[list[Obj], Field(description="the chunk views drawing the most (at most 20), in full")]
    over: Annotated[
        list[Cell], Field(description="focus cells of chunk views over the budget, row by row (the first 1000)")
    ]


class InspectWorld(_Report):
    world: NotRequired[Obj]
    camera: NotRequired[Obj]
    loaded: NotRequired[Obj]
    budget: NotRequired[Annotated[int, Field(description="triangles a view may draw")]]
    area: NotRequired[Obj]
    places: NotRequired[list[Obj]]
    models: NotRequired[dict[str, Obj]]
    views: NotRequired[Annotated[list[Obj], Field(description="the named views: the start cell, every place, at")]]
    all_views: NotRequired[Annotated[AllViews, Field(description="with all_views: the chunk views summed up")]]
    views_file: NotRequired[
        Annotated[str, Field(description="the JSON Lines file of every view written, when asked for")]
    ]
    worst_view: NotRequired[Obj]
    sheet: NotRequired[Annotated[str, Field(description="the sheet PNG written, when asked for")]]
    sheet_drawn: NotRequired[
        Annotated[Obj, Field(description="what the sheet shows: title, legend, labels, dropped, counts")]
    ]


class WorldQuery(TypedDict):
    world: str
    cell: Cell
    chunk: list[int]
    inside: bool
    biome: str | None
    ground: str | None
    height: Annotated[float | None, Field(description="ground height in metres, full detail")]
    drawn_height: Annotated[float | None, Field(description="ground height in metres as the engine draws it")]
    water: Obj
    owner: Obj | None
    plants: list[Obj]
    entities: NotRequired[list[Obj]]


class WorldMap(TypedDict):
    world: str
    at: Cell
    size: list[int]
    origin: Annotated[list[int], Field(description="the cell at the map's top-left pixel")]
    scale: Annotated[int, Field(description="pixels per cell")]
    width: Annotated[int, Field(description="of the picture (map, frame and legend), in pixels")]
    height: int
    map_box: Annotated[list[int], Field(description="the map's pixels in the picture: left, top, right, bottom")]
    title: str
    ticks: Annotated[int, Field(description="cells between the frame's ticks")]
    scale_bar_m: Annotated[float, Field(description="metres the scale bar measures")]
    biomes: Annotated[list[Obj], Field(description="each biome's colour and the material it comes from")]
    water: Obj
    legend: Annotated[list[Obj], Field(description="each legend row: kind, text, colour, box")]
    labels: Annotated[list[Obj], Field(description="each label drawn: text, kind, box, lead (a leader line)")]
    dropped: Annotated[list[str], Field(description="labels left out for want of room")]
    counts: Obj
    out: NotRequired[str]


class _Edit(TypedDict):
    world: str
    source: str
    list: Annotated[str, Field(description="features, vegetation or places")]
    name: str
    action: Annotated[str, Field(description="added, replaced or removed")]
    old: Obj | None
    new: Obj | None
    dry_run: bool
    written: bool


class WorldPlace(_Edit):
    cell: Annotated[list[int], Field(description="where the place went")]
    prefab: str
    rotation: int
    footprint: Obj
    height: float
    biome: str | None
    changes: list[Obj]
    warnings: list[Obj]
    searched: Annotated[int | None, Field(description="cells tried from near; null when cell was given")]
    near: NotRequired[list[int]]


class WorldTerrain(_Edit):
    before: Obj
    after: Obj
    places_in_water: Annotated[list[str], Field(description="the name of every place in water after the edit")]


class WorldVegetation(_Edit):
    plants: int
    triangles: int
    warnings: list[Obj]


class WorldRemove(_Edit):
    changes: NotRequired[list[Obj]]


class Dump(TypedDict):
    file: str
    chunks: list[Obj]


class Verify(TypedDict):
    ok: bool
    files: list[Obj]


class ExportGltf(TypedDict):
    out: str
    bytes: int
    triangles: NotRequired[int]
    model: NotRequired[str]
    world: NotRequired[str]
    meshes: NotRequired[list[Obj]]
    chunks: NotRequired[list[Obj]]
    materials: NotRequired[list[Any]]
    textures: NotRequired[list[Any]]
    findings: list[Obj]
    messages: list[str]


class PreviewModel(TypedDict):
    out: Annotated[str | None, Field(description="the PNG file written, when asked for")]
    model: str
    bytes: Annotated[int, Field(description="bytes of the PNG")]
    width: int
    height: int
    size: Annotated[int, Field(description="pixels per view")]
    views: list[str]
    levels: Annotated[list[Obj], Field(description="each level of detail drawn: level, model, triangles, distance")]
    scale_px_per_m: Annotated[float, Field(description="pixels per metre of the orthographic views")]
    grid_m: Annotated[float, Field(description="metres between the ground grid's lines")]
    materials: Annotated[list[Obj], Field(description="each material drawn: albedo, texture, filter, alpha, colour")]
    findings: list[Obj]
    messages: list[str]


class PreviewWorld(TypedDict):
    world: str
    at: Cell
    origin: Annotated[
        list[float],
        Field(description="metres: the start cell's centre on the ground there, what the camera is placed relative to"),
    ]
    camera: Obj
    frames: Annotated[list[Obj], Field(description="the frames drawn: width, height, supersample")]
    draw: Annotated[
        Obj,
        Field(
            description="the draw report: chunks, chunks_culled, chunks_drawn, ground_levels, "
            "considered, culled, too_far, thinned, drawn, lower_level, triangles by "
            "kind (ground, skirts, water, flora, entities), triangles, budget, "
            "over_budget"
        ),
    ]
    chunks: Annotated[list[Obj], Field(description="each loaded chunk: drawn, level, grid, distance_m")]
    models: Annotated[list[Obj], Field(description="each model: considered, drawn, levels drawn, triangles")]
    materials: list[Obj]
    out: Annotated[str | None, Field(description="the PNG file written, when asked for")]
    width: int
    height: int
    bytes: Annotated[int, Field(description="bytes of the PNG")]
    findings: list[Obj]
    messages: list[str]


class PreviewTexture(TypedDict):
    texture: str
    out: Annotated[str | None, Field(description="the PNG file written, when asked for")]
    bytes: Annotated[int, Field(description="bytes of the PNG")]
    width: Annotated[int, Field(description="of the picture, in pixels")]
    height: int
    size: Annotated[list[int], Field(description="the texture's width and height (level 0)")]
    levels: Annotated[int, Field(description="mip levels")]
    frames: Annotated[int, Field(description="sprite frames (0: no grid)")]
    clips: list[str]
    clips_left_out: Annotated[int, Field(description="clips not drawn: the picture is kept within 4096 x 4096 pixels")]
    frames_left_out: Annotated[
        int, Field(description="frames of the frame table (its first 256) not drawn, for the same bound")
    ]
    tiled_left_out: Annotated[bool, Field(description="the tiled 2 x 2 view not drawn, for the same bound")]
    tiled: Annotated[
        bool, Field(description="a tiling texture: level 0 is also shown tiled 2 x 2 (unless tiled_left_out)")
    ]
    cells: Annotated[list[Obj], Field(description="each image of the sheet: caption, box (pixels)")]
    messages: list[str]


class Node(TypedDict):
    kind: Annotated[str, Field(description="an asset kind, or image (a PNG named by its path)")]
    name: str
    source: Annotated[str | None, Field(description="its source file under the assets folder; null: missing")]


Reference = TypedDict(
    "Reference",
    {
        "from": Annotated[Node, Field(description="the asset whose source writes the name")],
        "to": Annotated[Node, Field(description="the asset (or PNG) it names")],
        "file": Annotated[str, Field(description="the source file, from the game root")],
        "line": Annotated[int, Field(description="1-based line of the name's opening quote")],
        "col": Annotated[int, Field(description="1-based column of the name's opening quote")],
        "path": Annotated[str, Field(description="JSON path of the name, e.g. parts[0].material")],
        "level": NotRequired[Annotated[int, Field(description="how many references from the asset asked about")]],
        "message": NotRequired[str],
    },
)


class Deps(TypedDict):
    asset: NotRequired[Annotated[Node, Field(description="the asset asked about")]]
    direction: NotRequired[Literal["uses", "used_by"]]
    depth: NotRequired[Annotated[int | None, Field(description="levels followed (null: all)")]]
    references: NotRequired[Annotated[list[Reference], Field(description="each reference followed, located")]]
    assets: NotRequired[
        Annotated[
            list[Obj],
            Field(
                description="asked about one asset: every asset reached, with its level; the whole graph: "
                "every asset with the references it makes (uses) and how many sources name it (used_by)"
            ),
        ]
    ]
    reference_count: NotRequired[int]
    missing: Annotated[
        list[Obj],
        Field(description="assets (or PNGs) named that do not exist (references, for the whole graph and orphans)"),
    ]
    unused: NotRequired[Annotated[list[Node], Field(description="assets and PNGs nothing names (not roots)")]]
    roots: NotRequired[Annotated[list[str], Field(description="kinds never unused (a game loads them by name)")]]
    dot: NotRequired[Annotated[str, Field(description="the graph in Graphviz DOT")]]


Rename = TypedDict(
    "Rename",
    {
        "kind": Kind,
        "old": str,
        "new": str,
        "from": Annotated[str, Field(description="the source file before the rename, from the game root")],
        "to": Annotated[str, Field(description="the source file after the rename, from the game root")],
        "edits": Annotated[
            list[Obj],
            Field(
                description="each reference rewritten: file, line, col, path (before the rename), old and new JSON text"
            ),
        ],
        "files": Annotated[list[str], Field(description="every file written: changed, created and removed")],
        "checked": Annotated[int, Field(description="sources checked as the cook checks them before writing")],
        "dry_run": bool,
        "written": bool,
    },
)


class ReportAsset(TypedDict):
    kind: Kind
    name: str
    source: str
    cooked: str
    state: Literal["fresh", "stale", "not_cooked"]
    bytes: Annotated[int | None, Field(description="size of the cooked file")]
    origin: Annotated[
        Literal["compiled", "local store", "shared cache"] | None,
        Field(description="where the cooked file came from at its last cook (null: not recorded)"),
    ]
    compile_s: Annotated[float | None, Field(description="seconds its compile took (a batch's models share its time)")]
    triangles: Annotated[list[int | None] | None, Field(description="models: triangles per level of detail")]
    texture_memory: Annotated[int | None, Field(description="textures: bytes of pixels with every mip level")]
    mip_levels: int | None
    deps: Annotated[int, Field(description="assets and PNGs its source names")]
    used_by: Annotated[int, Field(description="sources that name it")]
    warnings: Annotated[int | None, Field(description="warnings of its last compile (null: unknown)")]
    warning_lines: list[str]


class Report(TypedDict):
    assets: Annotated[list[ReportAsset], Field(description="largest cooked file first")]
    totals: Annotated[
        dict[str, Obj],
        Field(description="per kind: assets, cooked, fresh, bytes, compile_s, triangles, texture_memory, warnings"),
    ]
    total: Obj
    slowest: Annotated[list[Obj], Field(description="the slowest compiles: kind, name, compile_s")]
    html: NotRequired[Annotated[str, Field(description="the HTML page written, when asked for")]]
