"""``veduta inspect world|prefab``: the command line faces of veduta.tools.inspect_world (light to import).

    veduta inspect world NAME [--json] [--sheet FILE.png] [--at X,Z]... [--all] [--views-file FILE.jsonl]
    veduta inspect prefab NAME [--json]

Exit status: 2 when the asset does not exist (a usage mistake), 1 when its source has errors or an error finding
exists, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from veduta.base.argtypes import MAX_FOCI, out_file, png_file
from veduta.faces.cli.common import allow_negative_pairs, parse_pair


def add_inspect_world(subparsers) -> argparse.ArgumentParser:
    """Register ``world`` and ``prefab`` on the sub-parsers of ``inspect``."""
    w = subparsers.add_parser(
        "world",
        help="findings of a world: places, prefabs, view, triangles per view",
        description="Check a world's places, rules, camera and the triangles drawn from "
        "views at the start cell, every place and the cells given with --at.",
    )
    w.add_argument("name", metavar="NAME", help="world name (assets/worlds/<name>.vworld)")
    w.add_argument("--json", action="store_true", help="print the report as JSON")
    w.add_argument(
        "--sheet", metavar="FILE.png", type=png_file, help="write the map around the origin with the findings marked"
    )
    w.add_argument(
        "--at",
        type=parse_pair,
        action="append",
        default=[],
        metavar="X,Z",
        help=f"also evaluate the view focused on this cell (repeatable, at most {MAX_FOCI:,} times)",
    )
    w.add_argument(
        "--all",
        action="store_true",
        dest="all_views",
        help="also a view at the centre of every chunk of the world, summed up (the views drawing "
        "the most, those over the budget, a histogram); about 0.1 ms a chunk, in one pass over the world",
    )
    w.add_argument(
        "--views-file",
        metavar="FILE.jsonl",
        type=out_file(".jsonl"),
        help="write every view (with --all, every chunk's too) to this file, one JSON object a line",
    )
    w.set_defaults(func=run_inspect_world)
    allow_negative_pairs(w)
    p = subparsers.add_parser("prefab", help="footprint, entities, triangles and findings of a prefab")
    p.add_argument("name", metavar="NAME", help="prefab name (assets/prefabs/<name>.vprefab)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run_inspect_prefab)
    return w


def _project(args):
    from veduta.base.project import Project

    return getattr(args, "project", None) or Project.find(getattr(args, "root", None))


def _problems(report: dict, err: TextIO) -> None:
    for e in report["errors"]:
        err.write(("veduta: " if report["status"] == "missing" else "") + e.get("text", e["message"]) + "\n")


def _findings_text(findings: list[dict]) -> list[str]:
    if not findings:
        return ["findings: none"]
    return ["findings:"] + [f"  {f['severity']}: {f['code']}: {f['message']}" for f in findings]


def format_world(r: dict) -> str:
    w = r["world"]
    lines = [
        f"world {r['name']} ({r['source']})",
        f"cells {-w['cells']}..{w['cells'] - 1}, chunk {w['chunk']}, view {w['view']}: "
        f"{r['loaded']['chunks']} chunks loaded ({r['loaded']['chunks_max']} at most, with those kept beyond "
        f"them on two sides), {r['loaded']['radius_m']:g} m around the focus; "
        f"the camera sees {r['loaded']['reach_m']:g} m",
    ]
    lines.append(f"views (triangles of a {r['budget']} budget: ground + skirts + water + flora + entities):")
    lines += _view_rows(r["views"], r["budget"])
    a = r.get("all_views")
    if a is not None:
        t = a["triangles"]
        lines.append(
            f"every chunk: {a['views']:,} views, triangles min {t['min']}, median {t['median']}, mean "
            f"{t['mean']:g}, max {t['max']}; {a['over_budget']:,} over the budget"
        )
        b = a["histogram"]["bin"]
        bars = [f"{k * b}-{(k + 1) * b - 1}: {n:,}" for k, n in enumerate(a["histogram"]["views"]) if n]
        lines.append(f"  views by triangles: {', '.join(bars)}")
        lines.append(f"  drawing the most ({min(len(a['worst']), WORST_SHOWN)} of the {len(a['worst'])} in --json):")
        lines += ["  " + row for row in _view_rows(a["worst"][:WORST_SHOWN], r["budget"])]
    if r.get("views_file"):
        lines.append(f"every view: {r['views_file']} (JSON Lines)")
    lines += _findings_text(r["findings"])
    if r.get("sheet"):
        lines.append(f"sheet: {r['sheet']}")
    return "\n".join(lines) + "\n"


#: chunk views drawing the most that the text of --all shows
WORST_SHOWN = 5


def _view_rows(views: list[dict], budget: int) -> list[str]:
    width = max((len(v["name"]) for v in views), default=0)
    out = []
    for v in views:
        mark = "  over" if v["triangles"] > budget else ""
        if v["window"]["triangles"] != v["triangles"]:
            mark += f"  (window alone {v['window']['triangles']})"
        out.append(
            f"  {v['name']:<{width}}  {v['triangles']:>6} = {v['ground']} + {v['skirts']} + {v['water']} + "
            f"{v['flora']} + {v['entities']}{mark}"
        )
    return out


def format_prefab(r: dict) -> str:
    lines = [
        f"prefab {r['name']} ({r['source']})",
        f"footprint {r['footprint'][0]:g} x {r['footprint'][1]:g} m, tags: {', '.join(r['tags']) or 'none'}, "
        f"biomes: {', '.join(r['biomes']) or 'any'}",
        f"triangles: {r['triangles']}",
    ]
    for e in r["entities"]:
        tris = "-" if e["triangles"] is None else str(e["triangles"])
        lines.append(f"  {e['name']:<16} {e['kind']:<10} {e['model'] or '-':<16} {tris:>6}")
    lines += _findings_text(r["findings"])
    return "\n".join(lines) + "\n"


def report_json(report: dict) -> str:
    """An inspect report under ``--json``; a missing asset's is a refusal, as every command's is
    (one line, with "refused" and "message"), that is also the report docs/inspect.md gives a
    missing asset (its status, its error, no findings)."""
    if report["status"] == "missing":
        refused = {"refused": True, "message": report["errors"][0]["message"], **report}
        return json.dumps(refused, ensure_ascii=False) + "\n"
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


def _run(args, report: dict, fmt, out: TextIO | None, err: TextIO | None) -> int:
    from veduta.tools.inspect_world import exit_status

    out = out or sys.stdout
    err = err or sys.stderr
    if args.json:
        out.write(report_json(report))
    elif report["status"] in ("missing", "invalid"):
        _problems(report, err)
    else:
        out.write(fmt(report))
    return exit_status(report)


def run_inspect_world(args, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from veduta import api
    from veduta.faces.cli.common import progress_line

    line = progress_line()
    try:
        report = api.inspect_world(
            _project(args),
            args.name,
            at=args.at,
            all_views=args.all_views,
            sheet=args.sheet,
            views_file=args.views_file,
            progress=line,
        )
    finally:
        if line is not None:
            line.close()
    return _run(args, report, format_world, out, err)


def run_inspect_prefab(args, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from veduta import api

    return _run(args, api.inspect_prefab(_project(args), args.name), format_prefab, out, err)
