"""``veduta world query|map``: the generator on the command line.

The CLI owner calls :func:`add_world_commands` with the ``add_subparsers()`` object of the
``veduta`` parser and a ``load_world(name) -> (world, prefabs)`` function (the cooked WRLD record
and a dict of cooked PRFB records by name). Each sub-command sets ``args.func``; call
``args.func(args)``, which returns the exit code.

    veduta world query WORLD X,Z [--json]
    veduta world map WORLD --out FILE.png [--at X,Z] [--size W,H] [--scale N] [--json]

Negative coordinates may be written as they are (``veduta world query w -30,20``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from veduta.errors import VedutaError
from veduta.fsutil import atomic_write

from .tools import MAX_CELL, MAX_MAP_CELLS, LoadWorld, check_cell, check_size, world_map, world_query

__all__ = ["add_world_commands", "parse_pair", "parse_size", "MAX_CELL", "MAX_MAP_CELLS", "LoadWorld"]

_PAIR = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")


def parse_pair(text: str) -> tuple[int, int]:
    """``"X,Z"`` (integers, either may be negative) as a tuple."""
    m = _PAIR.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not two integers X,Z")
    try:
        return check_cell((int(m.group(1)), int(m.group(2))))
    except VedutaError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_size(text: str) -> tuple[int, int]:
    try:
        return check_size(parse_pair(text))
    except VedutaError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _allow_negative_pairs(parser: argparse.ArgumentParser) -> None:
    # argparse treats "-30,20" as an option unless it looks like a negative number to it
    if hasattr(parser, "_negative_number_matcher"):
        parser._negative_number_matcher = re.compile(r"^-\d+$|^-\d*\.\d+$|^-?\d+,-?\d+$")


def add_world_commands(subparsers, load_world: LoadWorld) -> argparse.ArgumentParser:
    """Add ``world query`` and ``world map`` to a ``veduta`` sub-parser set."""
    world = subparsers.add_parser("world", help="question a world's generator: query a cell, draw a map")
    sub = world.add_subparsers(dest="world_command", metavar="{query,map}")
    sub.required = True

    q = sub.add_parser("query", help="print what is at a cell, as JSON")
    q.add_argument("world", help="world name (assets/worlds/<name>.vworld)")
    q.add_argument("cell", type=parse_pair, help="cell X,Z")
    q.add_argument("--json", action="store_true", help="print JSON (the default: the output is JSON already)")
    q.set_defaults(func=lambda args: cmd_query(args, load_world))
    _allow_negative_pairs(q)

    m = sub.add_parser("map", help="write the top-down map as PNG")
    m.add_argument("world", help="world name")
    m.add_argument("--out", required=True, help="PNG file to write")
    m.add_argument("--at", type=parse_pair, default=(0, 0), help="centre cell X,Z (default 0,0)")
    m.add_argument("--size", type=parse_size, default=(256, 256), help="cells W,H (default 256,256)")
    m.add_argument("--scale", type=int, default=None, help="pixels per cell (default 1024 // max(W, H), 1..8; "
                                                           "at most 16)")
    m.add_argument("--json", action="store_true", help="print what was drawn as JSON (cells, pixels, scale)")
    m.set_defaults(func=lambda args: cmd_map(args, load_world))
    _allow_negative_pairs(m)
    return world


def cmd_query(args, load_world: LoadWorld, out=None) -> int:
    out = out or sys.stdout
    try:
        data = world_query(load_world, args.world, args.cell)
    except (OSError, VedutaError) as e:
        print(f"veduta world query: {e}", file=sys.stderr)
        return 1
    out.write(json.dumps(data, indent=2) + "\n")  # the text is the JSON (--json changes nothing)
    return 0


def cmd_map(args, load_world: LoadWorld) -> int:
    path = Path(args.out)
    if path.is_dir():
        print(f"veduta world map: {path} is a folder; --out names the PNG file to write", file=sys.stderr)
        return 1
    try:
        data = world_map(load_world, args.world, args.at, args.size, args.scale)
    except (OSError, VedutaError) as e:
        print(f"veduta world map: {e}", file=sys.stderr)
        return 1
    try:
        atomic_write(str(path), data.pop("png"))  # makes the folder when needed
    except OSError as e:
        print(f"veduta world map: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(f"{path}: {data['width']} x {data['height']} px, cells [{data['origin'][0]}, {data['origin'][1]}] "
              f"+ {data['size'][0]} x {data['size'][1]}")
    return 0
