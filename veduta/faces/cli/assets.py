"""The faces of ``veduta list`` and ``veduta write``: parse arguments, call the core function
(veduta.api), print. ``--json`` prints the core function's data (what the MCP tools
``list_assets`` and ``write_source`` return); a refused write is one JSON refusal with every
located diagnostic as its findings (veduta/faces/cli/common.py). Exit codes: 0 (no source failed, the
write was done or would be), 1 (a source has errors, the write was refused), 2 (usage)."""

from __future__ import annotations

import json
import os
import sys

from veduta.base.argtypes import jobs


def _project(args):
    from veduta.base.project import Project

    return Project.find(args.cwd)


# -- list --------------------------------------------------------------------------------------

#: how each state is printed
SHOWN = {"fresh": "fresh", "stale": "stale", "failed": "failed", "never_cooked": "never cooked"}


def cmd_list(args) -> int:
    from veduta import api

    result = api.list_assets(_project(args), args.kind, jobs=args.jobs or os.cpu_count() or 1)
    failed = result["counts"]["failed"]
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 1 if failed else 0
    from veduta.base.errors import shown_path

    rows = [{**a, "name": shown_path(a["name"]), "path": shown_path(a["path"])} for a in result["assets"]]
    wide = {k: max([len(str(a[k])) for a in rows] + [0]) for k in ("kind", "name")}
    for a in rows:
        problems = ", ".join(f"{a[k]} {k[:-1] if a[k] == 1 else k}" for k in ("errors", "warnings") if a[k])
        line = f"{SHOWN[a['state']]:<12}  {a['kind']:<{wide['kind']}}  {a['name']:<{wide['name']}}  {a['path']}" + (
            f"  ({problems})" if problems else ""
        )
        print(line.rstrip())
    for d in result["problems"]:
        print(f"{shown_path(d['file'])}: {d['message']}", file=sys.stderr)
    counts = ", ".join(f"{n} {SHOWN[s]}" for s, n in result["counts"].items() if n)
    print(
        f"list: {len(rows)} asset{'s' if len(rows) != 1 else ''}" + (f": {counts}" if counts else ""), file=sys.stderr
    )
    return 1 if failed else 0


# -- write -------------------------------------------------------------------------------------


def cmd_write(args) -> int:
    from veduta import api
    from veduta.base.errors import UsageError, shown_path
    from veduta.base.fsutil import TooLarge, read_bounded
    from veduta.tools.write_source import MAX_SOURCE_BYTES, too_large

    file = shown_path(args.file)  # FILE as a line shows it
    try:  # never more than the limit read (a stream may not end), never a FIFO or device waited on
        if args.file == "-":
            if sys.stdin is None:  # started with its standard input closed (`<&-`)
                raise UsageError("cannot read standard input: it is closed")
            data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
            if len(data) > MAX_SOURCE_BYTES:
                raise UsageError(f"standard input: {too_large(None)}")
        else:
            data = read_bounded(os.path.join(args.cwd, args.file), MAX_SOURCE_BYTES)
    except TooLarge as exc:
        raise UsageError(f"{file}: {too_large(exc.size)}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{file} is not UTF-8 text (byte {exc.start}); sources are UTF-8") from None
    r = api.write_source(_project(args), args.kind, args.name, text, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(r, ensure_ascii=False))
        return 0
    from veduta.source.diagnostics import format_diagnostic

    for d in r["diagnostics"]:
        print(format_diagnostic(d), file=sys.stderr)
    lines = f"+{r['lines']['added']} -{r['lines']['removed']} lines"
    path = shown_path(r["path"])  # (a source that exists is written where it is: any folder name)
    if r["action"] == "unchanged":
        print(f"{path}: unchanged (the same bytes are there)")
    elif r["dry_run"]:
        print(f"{path}: would be {r['action']} ({lines}); dry run, nothing written")
    else:
        print(f"{path}: {r['action']} ({lines})")
    for c in r["changes"]:  # (a key or a value may hold any character: a line shows it escaped)
        old, new = (shown_path(json.dumps(c[k], ensure_ascii=False)) if k in c else "" for k in ("old", "new"))
        print(
            f"  {shown_path(c['path'])}: {c['change']}"
            + (f" {old}" if old else "")
            + (f" -> {new}" if old and new else f" {new}" if new else "")
        )
    if r["more_changes"]:
        print(f"  ... and {r['more_changes']} more changes")
    return 0


def add_asset_commands(sub) -> None:
    """Register list and write on the ``veduta`` sub-command parser."""
    from veduta.base.kinds import NAMES

    ls = sub.add_parser(
        "list",
        help="every asset: kind, name, source, state and its errors and warnings",
        description="List every source of the game (or of one KIND) with its state: fresh (its "
        "cooked file is up to date), stale (cooked, but changed since), failed (the "
        "source has errors) or never cooked, and its error and warning counts as "
        "veduta check finds them. Writes nothing; exit 1 when a source failed.",
    )
    ls.add_argument("kind", nargs="?", metavar="KIND", help=f"only this kind ({', '.join(NAMES)})")
    ls.add_argument("-n", "--jobs", type=jobs, default=0, help="check in N processes (default: one per core)")
    ls.add_argument("--json", action="store_true", help="the whole list as one JSON object")
    ls.set_defaults(func=cmd_list)

    w = sub.add_parser(
        "write",
        help="create or replace an asset's source, refused with every error until it has none",
        description="Write FILE (or - for standard input) as the source of asset NAME of KIND "
        "(assets/<folder>/NAME<suffix> when new, where it is when it exists), after "
        "checking it exactly as the cook does: a source with an error is refused with "
        "every error located, and nothing is written (exit 1). Says what changed.",
    )
    w.add_argument("kind", metavar="KIND", help=f"the asset's kind ({', '.join(NAMES)})")
    w.add_argument("name", metavar="NAME", help="the asset name (the file name without its suffix)")
    w.add_argument("file", metavar="FILE", help="the new source text (- reads standard input)")
    w.add_argument("--dry-run", action="store_true", help="check and report, write nothing")
    w.add_argument("--json", action="store_true", help="the result (or the refusal) as one JSON object")
    w.set_defaults(func=cmd_write)
