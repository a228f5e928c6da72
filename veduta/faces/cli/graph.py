"""The faces of ``veduta deps``, ``veduta rename`` and ``veduta report``: parse arguments, call the
core function (veduta.api), print. ``--json`` prints the core function's data (what the MCP tools
``deps``, ``rename`` and ``report`` return). Exit codes: 0; 1 when ``deps --orphans`` finds a
missing reference or a rename is refused by the checks; 2 for usage (an unknown asset, a name
taken)."""

from __future__ import annotations

import json
import sys
from typing import Any

from veduta.base.argtypes import MAX_LEVELS, whole
from veduta.base.errors import shown_path


def _project(args):
    from veduta.base.project import Project

    return Project.find(args.cwd)


#: ``--depth N`` and ``--top N``: a count from 1
_count = whole(1, MAX_LEVELS)


def _depth(text: str) -> int | None:
    """``--depth``: a count of levels, or ``all``."""
    return None if text == "all" else _count(text)


def _progress():
    from veduta.faces.cli.common import progress_line

    return progress_line()


def _call(fn, *args, **kwargs) -> dict[str, Any]:
    """A core function with a progress line on a terminal (none in a pipe)."""
    line = _progress()
    try:
        return fn(*args, progress=line, **kwargs)
    finally:
        if line is not None:
            line.close()


# -- deps --------------------------------------------------------------------------------------


def _key(node: dict[str, Any]) -> tuple[str, str]:
    return node["kind"], node["name"]


def _said(node: dict[str, Any]) -> str:
    return f"{node['kind']} {shown_path(node['name'])}" + ("" if node["source"] else " (missing)")


def _where(ref: dict[str, Any]) -> str:
    return f"{shown_path(ref['file'])}:{ref['line']}:{ref['col']}: {shown_path(ref['path'])}"


def tree_lines(result: dict[str, Any]) -> list[str]:
    """The walk of :func:`veduta.api.deps` as an indented tree: each reference on one line (the
    asset it reaches and where it is written); an asset's own references under its first line."""
    rev = result["direction"] == "used_by"
    children: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in result["references"]:
        children.setdefault(_key(r["to"] if rev else r["from"]), []).append(r)
    start = result["asset"]
    where = f" ({shown_path(start['source'])})" if start["source"] else " (missing)"
    lines = [f"{start['kind']} {shown_path(start['name'])}{where} {'is used by' if rev else 'uses'}:"]
    expanded = {_key(start)}
    width = max([len(_said(r["from"] if rev else r["to"])) for r in result["references"]] + [0])

    def show(node: tuple[str, str], indent: str) -> None:
        for r in children.get(node, []):
            other = r["from"] if rev else r["to"]
            k = _key(other)
            more = k in children and k in expanded
            lines.append(f"{indent}{_said(other):<{width}}  {_where(r)}" + ("  (see above)" if more else ""))
            if k in children and k not in expanded:
                expanded.add(k)
                show(k, indent + "  ")

    show(_key(start), "  ")
    if len(lines) == 1:
        lines.append("  nothing")
    return lines


def cmd_deps(args) -> int:
    from veduta import api

    result = _call(
        api.deps,
        _project(args),
        args.name,
        kind=args.kind,
        reverse=args.reverse,
        depth=args.depth,
        orphans=args.orphans,
        dot=args.dot,
    )
    bad = bool(args.orphans and result["missing"])
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 1 if bad else 0
    if args.dot:
        sys.stdout.write(result["dot"])
        return 1 if bad else 0
    if args.orphans:
        for m in result["missing"]:
            print(f"{_where(m)}: warning: {shown_path(m['message'])}")
        for u in result["unused"]:
            print(f"unused: {u['kind']} {shown_path(u['name'])} ({shown_path(u['source'])})")
        print(
            f"deps: {len(result['missing'])} missing reference{'s' if len(result['missing']) != 1 else ''}, "
            f"{len(result['unused'])} unused (worlds and scenes are roots, never unused)",
            file=sys.stderr,
        )
        return 1 if bad else 0
    if args.name is None:
        for a in result["assets"]:
            used = sorted({f"{r['to']['kind']} {shown_path(r['to']['name'])}" for r in a["uses"]})
            print(
                f"{a['kind']} {shown_path(a['name'])}: uses {', '.join(used) if used else 'nothing'}; "
                f"used {a['used_by']} time{'s' if a['used_by'] != 1 else ''}"
            )
        for m in result["missing"]:
            print(f'{_where(m)}: warning: {m["to"]["kind"]} "{shown_path(m["to"]["name"])}" does not exist')
        return 0
    print("\n".join(tree_lines(result)))
    return 0


# -- rename ------------------------------------------------------------------------------------


def cmd_rename(args) -> int:
    from veduta import api

    r = _call(api.rename, _project(args), args.kind, args.old, args.new, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(r, ensure_ascii=False))
        return 0
    for e in r["edits"]:
        print(f"{shown_path(e['file'])}:{e['line']}:{e['col']}: {shown_path(e['path'])}: {e['old']} -> {e['new']}")
    print(f"{shown_path(r['from'])} -> {shown_path(r['to'])}")
    n, files = len(r["edits"]), len(r["files"])
    what = (
        f"{r['kind']} {shown_path(r['old'])} to {r['new']}: {n} edit{'s' if n != 1 else ''}, {files} files "
        f"({r['checked']} sources checked)"
    )
    print(f"dry run, nothing written: would rename {what}" if r["dry_run"] else f"renamed {what}")
    return 0


# -- report ------------------------------------------------------------------------------------


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip()
        for r in rows
    ]


def cmd_report(args) -> int:
    from veduta import api
    from veduta.base.humane import levels_text, seconds_text, size_text

    r = _call(api.report, _project(args), html=args.html)
    if args.json:
        print(json.dumps(r, ensure_ascii=False))
        return 0
    assets = r["assets"]
    head = ["kind", "name", "size", "origin", "compile", "triangles / texture", "uses", "used by", "warnings"]
    rows = [head]
    for a in assets[: args.top]:
        weight = (
            levels_text(a["triangles"])
            if a["triangles"]
            else (
                f"{size_text(a['texture_memory'])}, {a['mip_levels']} mips" if a["texture_memory"] is not None else ""
            )
        )
        state = "" if a["state"] == "fresh" else f" ({a['state'].replace('_', ' ')})"
        rows.append(
            [
                a["kind"],
                shown_path(a["name"]) + state,
                size_text(a["bytes"]),
                a["origin"] or "",
                seconds_text(a["compile_s"]),
                weight,
                str(a["deps"]),
                str(a["used_by"]),
                "" if a["warnings"] is None else str(a["warnings"]),
            ]
        )
    print("largest:")
    print("\n".join("  " + line for line in _table(rows, {2, 4, 6, 7, 8})))
    if len(assets) > args.top:
        print(f"  ... and {len(assets) - args.top} more (--top N, --json or --html FILE for all)")
    if r["slowest"]:
        print("slowest compiles:")
        print(
            "\n".join(
                "  " + line
                for line in _table(
                    [[s["kind"], shown_path(s["name"]), seconds_text(s["compile_s"])] for s in r["slowest"]], {2}
                )
            )
        )
    print("totals:")
    trows = [["kind", "assets", "size", "compile", "triangles", "texture memory", "warnings"]]
    for kind, t in [*r["totals"].items(), ("all", r["total"])]:
        trows.append(
            [
                kind,
                str(t["assets"]),
                size_text(t["bytes"]),
                seconds_text(t["compile_s"]),
                str(t["triangles"] or ""),
                size_text(t["texture_memory"] or None),
                str(t["warnings"]),
            ]
        )
    print("\n".join("  " + line for line in _table(trows, {1, 2, 3, 4, 5, 6})))
    t = r["total"]
    if t["cooked"] < t["assets"] or t["fresh"] < t["cooked"]:
        print(
            f"report: {t['assets'] - t['cooked']} not cooked, {t['cooked'] - t['fresh']} stale: run veduta cook "
            f"for current figures",
            file=sys.stderr,
        )
    if r.get("html"):
        print(f"wrote {shown_path(r['html'])}", file=sys.stderr)
    return 0


def add_graph_commands(sub) -> None:
    """Register deps, rename and report on the ``veduta`` sub-command parser."""
    from veduta.base.argtypes import out_file
    from veduta.base.kinds import NAMES

    d = sub.add_parser(
        "deps",
        help="what an asset uses and what uses it, each reference located; --orphans",
        description="What asset NAME uses (--reverse: what uses it), through every kind of "
        "reference, each with the file:line:col and JSON path where it is written; "
        "without NAME the whole graph. --orphans lists references to assets that do "
        "not exist (exit 1 when there are some) and assets nothing uses (worlds and "
        "scenes are roots, never unused). NAME may be a source path "
        "(models/crate.vmodel) or a PNG's (textures/crate.png).",
    )
    d.add_argument("name", nargs="?", metavar="NAME", help="an asset name, a source path or a PNG path")
    d.add_argument("--kind", metavar="KIND", help=f"the asset's kind when several have that name ({', '.join(NAMES)})")
    d.add_argument("--reverse", action="store_true", help="what uses the asset, instead of what it uses")
    d.add_argument(
        "--depth",
        type=_depth,
        default=1,
        metavar="N",
        help="follow references N levels deep (default 1; all: every level)",
    )
    d.add_argument("--orphans", action="store_true", help="missing references and unused assets of the whole game")
    d.add_argument("--dot", action="store_true", help="print the graph as Graphviz DOT")
    d.add_argument("--json", action="store_true", help="the result as one JSON object")
    d.set_defaults(func=cmd_deps)

    r = sub.add_parser(
        "rename",
        help="rename an asset and every reference to it, as one checked set of edits",
        description="Rename asset OLD of KIND to NEW: its source file (same folder) and every "
        "reference to it in every source, each edit replacing only the name (every "
        "other byte is kept). Every touched source is checked as the cook checks it "
        "first; then the files are written as one set: an interruption leaves all of "
        "them old, or the next veduta command completes them (docs/rename.md).",
    )
    r.add_argument("kind", metavar="KIND", help=f"the asset's kind ({', '.join(NAMES)})")
    r.add_argument("old", metavar="OLD", help="its name now")
    r.add_argument("new", metavar="NEW", help="its new name (1-64 of a-z, 0-9, _, -)")
    r.add_argument("--dry-run", action="store_true", help="list every edit and check them; write nothing")
    r.add_argument("--json", action="store_true", help="the result (or the refusal) as one JSON object")
    r.set_defaults(func=cmd_rename)

    p = sub.add_parser(
        "report",
        help="every asset's cooked size, compile time, origin, triangles, texture memory",
        description="The build report: per asset its kind, cooked size, where the cooked file came "
        "from (compiled, local store, shared cache) and its compile time, triangles "
        "per level of detail (models) or texture memory with mips, how many assets it "
        "uses and is used by, its warnings; totals per kind; largest first, then the "
        "slowest compiles. Reads what the last cook left; writes nothing but --html.",
    )
    p.add_argument(
        "--html",
        type=out_file(".html"),
        metavar="FILE.html",
        help="also write the report as one self-contained HTML page (a sortable table)",
    )
    p.add_argument("--top", type=_count, default=20, metavar="N", help="assets listed in the text (default 20)")
    p.add_argument("--json", action="store_true", help="the whole report as one JSON object")
    p.set_defaults(func=cmd_report)
