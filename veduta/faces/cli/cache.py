"""``veduta cache info|prune|push``: the local store in cache/ and the shared tier behind it.

    veduta cache info [--json] [--no-probe]   local store, shared tier settings and reachability
    veduta cache prune [--days N] [--dry-run] [--json]   remove local entries unused for N days
    veduta cache push [--json]                  upload the local store's entries the shared tier lacks

The core functions are ``veduta.api.cache_info``, ``cache_prune`` and ``cache_push``.
"""

from __future__ import annotations

import argparse
import json


def _days(text: str) -> float:
    try:
        d = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not d >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of days >= 0")
    return d


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def cmd_info(args) -> int:
    from veduta import api

    info = api.cache_info(args.project(), probe=not args.no_probe)
    shared = info["shared"]
    if args.json:
        print(json.dumps(info, indent=2))
        return 0 if shared is None or shared.get("reachable", True) else 1
    loc = info["local"]
    print(f"local store: {loc['path']}: {loc['entries']} entries, {_mb(loc['bytes'])}")
    if shared is None:
        print(
            "shared cache: none (set cache_url in [tool.veduta] of pyproject.toml, or VEDUTA_CACHE_URL; "
            "see docs/shared-cache.md)"
        )
        return 0
    print(f"shared cache: {shared['url']} (from {shared['url_from']})")
    if shared["write"]:
        writes = f"on (from {shared['write_from']})"
    else:
        writes = "off (cache_write = true, or VEDUTA_CACHE_WRITE=1, turns them on)"
    print(f"  reads: on; writes: {writes}; time-out {shared['timeout_s']:g} s")
    if "reachable" in shared:
        state = "reachable" if shared["reachable"] else "NOT reachable"
        print(f"  {state}: {shared['detail']} ({shared['ms']:.0f} ms)")
        return 0 if shared["reachable"] else 1
    return 0


def cmd_push(args) -> int:
    from veduta import api

    out = api.cache_push(args.project())
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"pushed {out['uploaded']} entries ({_mb(out['bytes'])}) to {out['url']}; "
        f"{out['present']} of the {out['local']} local entries were there already"
        + (f"; {len(out['skipped'])} damaged local entries left out" if out["skipped"] else "")
    )
    return 0


def cmd_prune(args) -> int:
    from veduta import api

    r = api.cache_prune(args.project(), args.days, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    verb = "would remove" if args.dry_run else "removed"
    print(
        f"{verb} {r['removed']} entries ({_mb(r['removed_bytes'])}) unused for {args.days:g} days; "
        f"kept {r['kept']} ({_mb(r['kept_bytes'])})"
    )
    return 0


def add_cache_commands(sub, project) -> None:
    """Register ``veduta cache ...`` on *sub* (the ``veduta`` parser's sub-parsers);
    *project()* finds the game."""
    k = sub.add_parser("cache", help="the store of cooked files in cache/ and the shared cache behind it")
    ksub = k.add_subparsers(dest="cache_command", metavar="{info,prune,push}")
    ksub.required = True
    ki = ksub.add_parser("info", help="local entries and size; the shared cache's settings and reachability")
    ki.add_argument("--json", action="store_true", help="print the info as JSON")
    ki.add_argument("--no-probe", action="store_true", help="do not contact the shared cache")
    ki.set_defaults(func=cmd_info, project=project)
    kp = ksub.add_parser("prune", help="remove local entries unused for a number of days")
    kp.add_argument("--days", type=_days, default=30.0, help="unused for this many days (default 30)")
    kp.add_argument("--dry-run", action="store_true", help="only say what would go")
    kp.add_argument("--json", action="store_true", help="print what was (or would be) removed and kept as JSON")
    kp.set_defaults(func=cmd_prune, project=project)
    ku = ksub.add_parser("push", help="upload the local store's entries that the shared cache lacks (seeding)")
    ku.add_argument("--json", action="store_true", help="print the result as JSON")
    ku.set_defaults(func=cmd_push, project=project)
