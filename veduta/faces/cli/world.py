"""``veduta world query|map|place|terrain|vegetation|remove``: the generator and the world
editing tools on the command line.

The CLI owner calls :func:`add_world_commands` with the ``add_subparsers()`` object of the
``veduta`` parser and a ``load_world(name) -> (world, prefabs)`` function (the cooked WRLD record
and a dict of cooked PRFB records by name). Each sub-command sets ``args.func``; call
``args.func(args)``, which returns the exit code.

    veduta world query WORLD --at X,Z [--json]
    veduta world map WORLD --out FILE.png [--at X,Z] [--cells W,H] [--scale N] [--json]

    veduta world place WORLD NAME PREFAB (--cell X,Z | --near X,Z) [--rotation R] [--search N]
    veduta world terrain WORLD NAME --kind K --cell X,Z --radius R [--height H] [--depth D] [--falloff F]
    veduta world vegetation WORLD NAME (--model M | --prefab P) --density D [--biomes A,B]
                                       [--cell X,Z --radius R] [--scale MIN,MAX]
    veduta world remove WORLD NAME [--from features|vegetation|places]

The editing commands take ``--dry-run`` (report, write nothing) and ``--json`` (the report as the
core functions in :mod:`veduta.tools.world_edit` return it). Negative coordinates may be written as they
are (``veduta world query w --at -30,20``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from veduta.base.argtypes import png_file
from veduta.base.errors import ConfigError, UsageError, VedutaError
from veduta.base.fsutil import write_output
from veduta.faces.cli.common import allow_negative_pairs, compact_json, parse_pair, parse_size, tell
from veduta.tools.world_query import MAX_CELL, MAX_MAP_CELLS, LoadWorld, world_map, world_query

__all__ = ["add_world_commands", "MAX_CELL", "MAX_MAP_CELLS", "LoadWorld"]

#: ``(world, at, size, scale, progress) -> world_map's data``
DrawMap = Callable[[str, tuple[int, int], tuple[int, int], "int | None", Any], dict[str, Any]]


def add_world_commands(subparsers, load_world: LoadWorld, draw_map: DrawMap | None = None) -> argparse.ArgumentParser:
    """Add ``world query|map|place|terrain|vegetation|remove`` to a ``veduta`` sub-parser set.
    *draw_map* ``(world, at, size, scale, progress)`` draws the map (default: :func:`world_map` over
    *load_world*, biomes without material colours)."""
    world = subparsers.add_parser(
        "world",
        help="question a world's generator (query, map) and edit its source (place, terrain, vegetation, remove)",
    )
    sub = world.add_subparsers(dest="world_command", metavar="{query,map,place,terrain,vegetation,remove}")
    sub.required = True

    q = sub.add_parser("query", help="print what is at a cell, as JSON")
    q.add_argument("world", help="world name (assets/worlds/<name>.vworld)")
    q.add_argument("--at", "--cell", dest="at", type=parse_pair, metavar="X,Z", help="the cell X,Z")
    q.add_argument(
        "cell",
        nargs="?",
        type=parse_pair,
        metavar="X,Z",
        help="the cell, written without --at (deprecated: write --at X,Z; taken until the next release)",
    )
    q.add_argument("--json", action="store_true", help="print JSON (the default: the output is JSON already)")
    q.set_defaults(func=lambda args: cmd_query(args, load_world))
    allow_negative_pairs(q)

    m = sub.add_parser("map", help="write the top-down map as PNG")
    m.add_argument("world", help="world name")
    m.add_argument("--out", required=True, type=png_file, help="PNG file to write")
    m.add_argument("--at", type=parse_pair, default=(0, 0), help="centre cell X,Z (default 0,0)")
    m.add_argument("--cells", type=parse_size, default=None, metavar="W,H", help="cells W,H (default 256,256)")
    m.add_argument(
        "--size",
        type=parse_size,
        default=None,
        metavar="W,H",
        help="the same as --cells (deprecated: --size is an image's pixels elsewhere; taken until the next release)",
    )
    m.add_argument(
        "--scale", type=int, default=None, help="pixels per cell (default 1024 // max(W, H), 1..8; at most 16)"
    )
    m.add_argument(
        "--json", action="store_true", help="print what was drawn as JSON (cells, pixels, scale, legend, labels)"
    )
    m.set_defaults(func=lambda args: cmd_map(args, load_world, draw_map))
    allow_negative_pairs(m)
    add_edit_commands(sub)
    return world


def deprecated(old: str, new: str) -> None:
    """One note on standard error for an old spelling that still works (for one release)."""
    print(f"veduta: note: {old} is deprecated; write {new}", file=sys.stderr)


def _query_cell(args) -> tuple[int, int]:
    if args.at is not None and args.cell is not None:
        raise UsageError("world query takes the cell once: --at X,Z")
    if args.at is None and args.cell is None:
        raise UsageError("world query needs the cell: --at X,Z")
    if args.cell is not None:
        deprecated("the cell without --at", f"--at {args.cell[0]},{args.cell[1]}")
        return args.cell
    return args.at


def _map_cells(args) -> tuple[int, int]:
    if args.size is not None:
        if args.cells is not None:
            raise UsageError("world map takes --cells W,H (not --size as well)")
        deprecated("world map --size", "--cells")
        return args.size
    return args.cells if args.cells is not None else (256, 256)


def cmd_query(args, load_world: LoadWorld, out=None) -> int:
    out = out or sys.stdout
    try:
        data = world_query(load_world, args.world, _query_cell(args))
    except (OSError, VedutaError) as e:
        return tell(args.json, str(e), 2 if isinstance(e, (UsageError, ConfigError)) else 1, "veduta world query")
    out.write(json.dumps(data, indent=2) + "\n")  # the text is the JSON (--json changes nothing)
    return 0


def cmd_map(args, load_world: LoadWorld, draw_map: DrawMap | None = None) -> int:
    path = Path(args.out)
    if path.is_dir():
        return tell(
            args.json, f"cannot write {path}: it is a folder (--out names the PNG file to write)", 1, "veduta world map"
        )
    from veduta.faces.cli.common import progress_line

    line = progress_line()
    try:
        if draw_map is None:
            data = world_map(load_world, args.world, args.at, _map_cells(args), args.scale, progress=line)
        else:
            data = draw_map(args.world, args.at, _map_cells(args), args.scale, line)
        write_output(str(path), data.pop("png"))  # no folder is made
    except (OSError, VedutaError) as e:
        return tell(args.json, str(e), 2 if isinstance(e, (UsageError, ConfigError)) else 1, "veduta world map")
    finally:
        if line is not None:
            line.close()
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(
            f"{path}: {data['width']} x {data['height']} px, cells [{data['origin'][0]}, {data['origin'][1]}] "
            f"+ {data['size'][0]} x {data['size'][1]}"
        )
    return 0


# -- editing -------------------------------------------------------------------------------------


def parse_names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of names A,B")
    return names


def parse_range(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not two numbers MIN,MAX") from None
    return lo, hi


def _edit_parser(
    sub, name: str, help_: str, name_help: str = "the name in the list (an existing one is replaced)"
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_)
    p.add_argument("world", help="world name (assets/worlds/<name>.vworld)")
    p.add_argument("name", help=name_help)
    return p


def _edit_flags(p: argparse.ArgumentParser, func) -> None:
    p.add_argument("--dry-run", action="store_true", help="print the report, write nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=func)
    allow_negative_pairs(p)


def add_edit_commands(sub) -> None:
    """``world place|terrain|vegetation|remove`` (their core functions are in veduta.api)."""
    p = _edit_parser(sub, "place", "add or replace a landmark: check a cell, or find the nearest valid one")
    p.add_argument("prefab", help="the place's prefab")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--cell", type=parse_pair, help="the footprint's centre cell X,Z (checked)")
    where.add_argument("--near", type=parse_pair, help="find the valid cell nearest X,Z")
    p.add_argument("--rotation", type=int, default=0, choices=(0, 90, 180, 270), help="degrees about +Y")
    p.add_argument(
        "--search", type=int, default=32, metavar="N", help="--near looks within N cells (default 32, at most 256)"
    )
    _edit_flags(
        p,
        lambda args: _run_edit(
            args,
            "world_place",
            dict(
                name=args.name,
                prefab=args.prefab,
                cell=args.cell,
                near=args.near,
                rotation=args.rotation,
                search=args.search,
            ),
        ),
    )

    t = _edit_parser(sub, "terrain", "add or replace a hill, plain, lake or sea; report the ground before and after")
    t.add_argument("--kind", required=True, choices=("hill", "plain", "lake", "sea"))
    t.add_argument("--cell", type=parse_pair, required=True, help="the centre vertex X,Z")
    t.add_argument("--radius", type=int, required=True, help="cells")
    t.add_argument("--height", type=float, help="metres: a hill's rise; a plain's, lake's or sea's level")
    t.add_argument("--depth", type=float, help="metres below the water at a lake's or sea's centre")
    t.add_argument("--falloff", type=int, help="cells of blend (plain) or shore (lake, sea)")
    t.add_argument("--roughness", type=float, help="0..1: how much a lake's or sea's shore wanders")
    _edit_flags(
        t,
        lambda args: _run_edit(
            args,
            "world_terrain",
            dict(
                name=args.name,
                kind=args.kind,
                cell=args.cell,
                radius=args.radius,
                height=args.height,
                depth=args.depth,
                falloff=args.falloff,
                roughness=args.roughness,
            ),
        ),
    )

    v = _edit_parser(sub, "vegetation", "add or replace a vegetation rule; report its plants and their cost")
    what = v.add_mutually_exclusive_group(required=True)
    what.add_argument("--model", help="a flora model (plants)")
    what.add_argument("--prefab", help="a one-cell prefab per cell (trees, rocks)")
    v.add_argument("--density", type=float, required=True, help="the share of cells, in (0, 1]")
    v.add_argument("--biomes", type=parse_names, help="only these biomes A,B")
    v.add_argument("--cell", type=parse_pair, help="an area's centre vertex X,Z (with --radius)")
    v.add_argument("--radius", type=int, help="the area's radius in cells (with --cell)")
    v.add_argument("--scale", type=parse_range, help="model rules: each plant's scale MIN,MAX")
    _edit_flags(
        v,
        lambda args: _run_edit(
            args,
            "world_vegetation",
            dict(
                name=args.name,
                model=args.model,
                prefab=args.prefab,
                density=args.density,
                biomes=args.biomes,
                cell=args.cell,
                radius=args.radius,
                scale=args.scale,
            ),
        ),
    )

    r = _edit_parser(
        sub,
        "remove",
        "remove a feature, vegetation rule or place by name",
        "the name of the feature, vegetation rule or place to take out (a list left empty goes too)",
    )
    r.add_argument(
        "--from",
        dest="section",
        choices=("features", "vegetation", "places"),
        help="the list, when the name is in several",
    )
    _edit_flags(r, lambda args: _run_edit(args, "world_remove", dict(name=args.name, section=args.section)))


def _run_edit(args, tool: str, kwargs: dict) -> int:
    """Run an editing tool; a refusal is a VedutaError that ``veduta.faces.cli.main.main`` reports (with
    --json as ``{"refused": true, "message", "findings"}`` on stdout, veduta/faces/cli/common.py)."""
    import os

    from veduta import api
    from veduta.base.project import Project
    from veduta.faces.cli.common import progress_line

    project = Project.find(getattr(args, "cwd", None) or os.getcwd())
    line = progress_line()
    try:
        report = getattr(api, tool)(project, args.world, dry_run=args.dry_run, progress=line, **kwargs)
    finally:
        if line is not None:
            line.close()
    sys.stdout.write(compact_json(report) + "\n" if args.json else format_edit(report))
    return 0


#: changes the text report lists one per line (the rest are counted; --json has them all)
CHANGES_SHOWN = 40


def _heights_text(h: dict) -> str:
    sampled = f" (sampled every {h['step']} cells)" if h.get("step", 1) > 1 else ""
    return f"centre {h['centre']:g} m, min {h['min']:g}, max {h['max']:g}, mean {h['mean']:g}{sampled}"


def _change_text(c: dict) -> str:
    what = f"{c['kind']} {c['name']}"
    if c["change"] == "pad":
        return f"{what}: pad {c['before']:g} -> {c['after']:g} m"
    if c["change"] == "dropped":
        return f"{what}: dropped ({c['reason']})"
    return f"{what}: {c['change']}"


def format_edit(r: dict) -> str:
    """The text report of an editing command."""
    lines = []
    item = {"features": "feature", "vegetation": "vegetation rule", "places": "place"}[r["list"]]
    lines.append(f"{r['world']}: {item} {r['name']} {r['action']}")
    if r.get("old") is not None and r["action"] == "replaced":
        lines.append(f"  old: {json.dumps(r['old'])}")
    if r.get("new") is not None:
        lines.append(f"  new: {json.dumps(r['new'])}")
    elif r["action"] == "removed":
        lines.append(f"  was: {json.dumps(r['old'])}")
    if r["list"] == "places" and "cell" in r:
        near = f" (nearest valid cell to {r['near']}, {r['searched']} tried)" if r.get("near") else ""
        lines.append(
            f"  cell {r['cell']}{near}, biome {r['biome']}, pad at {r['height']:g} m, footprint "
            f"{r['footprint']['size'][0]} x {r['footprint']['size'][1]} cells from {r['footprint']['cell']}"
        )
    if "before" in r:
        lines.append(f"  before: {_heights_text(r['before'])}")
        lines.append(f"  after:  {_heights_text(r['after'])}")
        lines.append("  places in water: " + (", ".join(r["places_in_water"]) or "none"))
    if "plants" in r or "plants_before" in r:
        n = r.get("plants", r.get("plants_before"))
        where = (
            "in its area"
            if "area" in r
            else (f"in the {r['chunks']['count']} chunks around the start cell ({r['per_chunk']:g} per chunk)")
        )
        lines.append(f"  plants: {n} {where}" + ("" if "plants" in r else " (before removal)"))
        if "view" in r:
            v = r["view"]
            full = "unknown" if r["triangles_full"] is None else f"{r['triangles_full']} ({r['triangles_each']} each)"
            lines.append(
                f"  triangles: {r['triangles']} drawn in the view at {v['focus']} ({v['without_rule']} -> "
                f"{v['triangles']} of a {v['budget']} budget); all at full detail: {full}"
            )
    changes = r.get("changes") or []
    for c in changes[:CHANGES_SHOWN]:
        lines.append(f"  {_change_text(c)}")
    if len(changes) > CHANGES_SHOWN:  # a feature the size of the world changes thousands of sites
        rest: dict[str, int] = {}
        for c in changes[CHANGES_SHOWN:]:
            key = f"{c['kind']}s {c['change']}" if c["change"] != "pad" else f"{c['kind']}s on a pad at another height"
            rest[key] = rest.get(key, 0) + 1
        lines.append(
            f"  ... and {len(changes) - CHANGES_SHOWN} more: "
            + ", ".join(f"{n} {k}" for k, n in rest.items())
            + " (--json lists every change)"
        )
    for w in r.get("warnings") or []:
        lines.append(f"  warning: {w['code']}: {w['message']}")
    lines.append(f"  dry run: {r['source']} not written" if r["dry_run"] else f"  wrote {r['source']}")
    return "\n".join(lines) + "\n"
