"""The faces of ``veduta check``, ``veduta why`` and ``veduta watch``: parse arguments, call the
core function (veduta.api), print.  Exit codes: docs/cooking.md ("Exit codes")."""

from __future__ import annotations

import json
import os
import sys
import time

from veduta.base.argtypes import jobs, whole
from veduta.base.diagformat import FORMAT_ENV, FORMATS, default_format
from veduta.faces.cli.common import tell


def add_format_option(parser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help=f"diagnostics as text (file:line:col: path: message), json (one object per line) "
        f"or github (workflow annotations); default ${FORMAT_ENV} or text",
    )


def _project(args):
    from veduta.base.project import Project

    return Project.find(args.cwd)


def _sources(project, args) -> list[str] | None:
    from veduta.tools.check import resolve_sources

    return resolve_sources(project, args.sources, args.cwd) if args.sources else None


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


# -- check -------------------------------------------------------------------------------------


def cmd_check(args) -> int:
    from veduta import api

    project = _project(args)
    started = time.monotonic()
    jobs = args.jobs or os.cpu_count() or 1
    result = api.check(project, _sources(project, args), full=args.all, jobs=jobs, strict=True if args.strict else None)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0 if result["ok"] else 1
    # (here: veduta cook adds this module's --format option, and its no-op reads no source)
    from veduta.source.diagnostics import format_diagnostic

    fmt = args.format or default_format()
    out = sys.stdout
    for d in result["diagnostics"]:
        out.write(format_diagnostic(d, fmt) + "\n")
    # the summary goes to stderr in every format, as the cook's does (stdout: diagnostics only)
    fresh = f" ({result['fresh']} known good by their fresh cooked files)" if result["fresh"] else ""
    strict = ""
    if result["strict"]:
        why = "--strict" if args.strict else "strict = true in [tool.veduta]"
        strict = f" ({result['strict_errors']} of them by {why}: warnings and inspect's error findings)"
    print(
        f"check: {_count(result['checked'], 'source')}{fresh}, {_count(result['errors'], 'error')}{strict}, "
        f"{_count(result['warnings'], 'warning')} ({time.monotonic() - started:.2f} s)",
        file=sys.stderr,
    )
    return 0 if result["ok"] else 1


# -- why ---------------------------------------------------------------------------------------


def cmd_why(args) -> int:
    from veduta import api

    project = _project(args)
    result = api.why(project, _sources(project, args), strict=True if args.strict else None)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    if not result["stale"]:
        n = result["checked"]
        print(f"nothing is stale ({n} source{'s' if n != 1 else ''} up to date)")
        return 0
    from veduta.base.errors import shown_path

    for item in result["stale"]:
        for r in item["reasons"]:
            print(f"{shown_path(item['file'])}: {r['message']} [{r['code']}]")
    print(f"why: {len(result['stale'])} of {result['checked']} sources stale", file=sys.stderr)
    return 0


# -- watch -------------------------------------------------------------------------------------


def cmd_watch(args) -> int:
    from veduta.faces.cli.watch import monitor, monitor_status, watch

    if args.status:
        return monitor_status(_project(args), args.json)
    if args.json:
        return tell(args.json, "--json goes with --status (watch --monitor and watch print progress lines)", 2)
    if args.no_worker and not args.monitor:
        return tell(args.json, "--no-worker goes with --monitor", 2)
    if args.monitor:
        return monitor(_project(args), worker=not args.no_worker)
    fmt = args.format or default_format()
    return watch(_project(args), jobs=args.jobs, fmt=fmt, debounce_ms=args.debounce)


def add_tool_commands(sub) -> None:
    """Register check, why and watch on the ``veduta`` sub-command parser."""
    c = sub.add_parser("check", help="check sources as the cook does, writing nothing (exit 1 on errors)")
    c.add_argument("sources", nargs="*", metavar="SOURCE", help="only these source files (default: all)")
    c.add_argument(
        "--all",
        action="store_true",
        help="compile every source, also those whose cooked file is fresh (their warnings again)",
    )
    c.add_argument("-n", "--jobs", type=jobs, default=0, help="check in N processes (default: one per core)")
    c.add_argument(
        "--strict",
        action="store_true",
        help="every warning is an error, and so is every error finding of `veduta inspect` for the "
        "models, prefabs and worlds checked (also `strict = true` in [tool.veduta])",
    )
    add_format_option(c)
    c.add_argument("--json", action="store_true", help="the whole result as one JSON object")
    c.set_defaults(func=cmd_check)

    w = sub.add_parser("why", help="which assets are stale and why")
    w.add_argument("sources", nargs="*", metavar="SOURCE", help="only these source files (default: all)")
    w.add_argument(
        "--strict",
        action="store_true",
        help="as `veduta cook --strict` decides (also `strict = true` in [tool.veduta]): a fresh "
        "cooked file whose warnings are not on record is stale",
    )
    w.add_argument("--json", action="store_true", help="the result as one JSON object")
    w.set_defaults(func=cmd_why)

    t = sub.add_parser("watch", help="cook, then recook what each save makes stale (Ctrl-C stops)")
    t.add_argument("-n", "--jobs", type=jobs, default=0, help="cook in N processes (default: one per core)")
    t.add_argument(
        "--debounce",
        type=whole(0, 60_000),
        default=150,
        metavar="MS",
        help="wait this long for more changes before cooking (default 150 ms)",
    )
    t.add_argument(
        "--monitor",
        action="store_true",
        help="cook nothing: keep a journal of changed files, so that a no-op doit cook or veduta cook "
        "stats no source (docs/cooking.md, The file-system monitor)",
    )
    t.add_argument(
        "--no-worker",
        action="store_true",
        help="with --monitor: keep no warm compile worker (cooks of a few edited sources then import "
        "the compilers themselves; docs/cooking.md, The warm compile worker)",
    )
    t.add_argument("--status", action="store_true", help="whether a monitor runs and the next cook can trust it")
    t.add_argument("--json", action="store_true", help="with --status: the status as one JSON object")
    add_format_option(t)
    t.set_defaults(func=cmd_watch)
