"""``veduta schema [--out DIR]``: write the JSON Schemas of the source formats."""

from __future__ import annotations

import json
import os


def cmd_schema(args) -> int:
    from veduta.base.errors import VedutaError
    from veduta.base.fsutil import atomic_write
    from veduta.schemas import shipped

    files = shipped()
    out = os.path.join(args.cwd, args.out)
    written = []
    for name, text in files.items():
        path = os.path.join(out, name)
        try:
            atomic_write(path, text.encode("utf-8"))
        except OSError as exc:
            raise VedutaError(f"cannot write {path}: {exc.strerror or exc}") from None
        written.append(os.path.relpath(path, args.cwd).replace(os.sep, "/"))
    if args.json:
        print(json.dumps({"out": args.out, "files": written}))
    else:
        for path in written:
            print(path)
    return 0


def add_schema_command(sub) -> None:
    s = sub.add_parser("schema", help="write JSON Schemas of the source formats (for editors)")
    s.add_argument(
        "--out",
        default=os.path.join(".vscode", "schemas"),
        metavar="DIR",
        help="folder to write <kind>.schema.json into (default .vscode/schemas)",
    )
    s.add_argument("--json", action="store_true", help="print the files written as JSON")
    s.set_defaults(func=cmd_schema)
