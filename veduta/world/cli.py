"""``veduta world query|map``: the generator on the command line.

The CLI owner calls :func:`add_world_commands` with the ``add_subparsers()`` object of the
``veduta`` parser and a ``load_world(name) -> (world, prefabs)`` function (the cooked WRLD record
and a dict of cooked PRFB records by name). Each sub-command sets ``args.func``; call
``args.func(args)``, which returns the exit code.

    veduta world query WORLD X,Z
    veduta world map WORLD --out FILE.png [--at X,Z] [--size W,H] [--scale N]

Negative coordinates may be written as they are (``veduta world query w -30,20``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from veduta.fsutil import atomic_write

LoadWorld = Callable[[str], tuple[Any, dict[str, Any]]]

_PAIR = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")


#: the largest map side in cells (2048 x 2048 takes about 6 s and 1 GB)
MAX_MAP_CELLS = 2048

#: cells beyond this are outside any world (extent x chunk <= 4096 x 64)
MAX_CELL = 1 << 20


def parse_pair(text: str) -> tuple[int, int]:
    """``"X,Z"`` (integers, either may be negative) as a tuple."""
    m = _PAIR.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not two integers X,Z")
    x, z = int(m.group(1)), int(m.group(2))
    if not (-MAX_CELL <= x <= MAX_CELL and -MAX_CELL <= z <= MAX_CELL):
        raise argparse.ArgumentTypeError(f"{text!r} is far outside any world (cells within +-{MAX_CELL})")
    return x, z


def parse_size(text: str) -> tuple[int, int]:
    w, h = parse_pair(text)
    if not (1 <= w <= MAX_MAP_CELLS and 1 <= h <= MAX_MAP_CELLS):
        raise argparse.ArgumentTypeError(f"size {w},{h} out of range [1, {MAX_MAP_CELLS}] each "
                                         f"(draw a larger area as several maps with --at)")
    return w, h


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
    q.set_defaults(func=lambda args: cmd_query(args, load_world))
    _allow_negative_pairs(q)

    m = sub.add_parser("map", help="write the top-down map as PNG")
    m.add_argument("world", help="world name")
    m.add_argument("--out", required=True, help="PNG file to write")
    m.add_argument("--at", type=parse_pair, default=(0, 0), help="centre cell X,Z (default 0,0)")
    m.add_argument("--size", type=parse_size, default=(256, 256), help="cells W,H (default 256,256)")
    m.add_argument("--scale", type=int, default=None, help="pixels per cell (default 1024 // max(W, H), 1..8)")
    m.set_defaults(func=lambda args: cmd_map(args, load_world))
    _allow_negative_pairs(m)
    return world


def _generator(name: str, load_world: LoadWorld):
    from .generator import Generator

    world, prefabs = load_world(name)
    return Generator(world, prefabs)


def cmd_query(args, load_world: LoadWorld, out=None) -> int:
    out = out or sys.stdout
    try:
        gen = _generator(args.world, load_world)
    except (OSError, KeyError) as e:  # VedutaError is the caller's (veduta.cli.main) to report
        print(f"veduta world query: {e}", file=sys.stderr)
        return 1
    x, z = args.cell
    out.write(json.dumps(gen.query(x, z), indent=2) + "\n")
    return 0


def cmd_map(args, load_world: LoadWorld) -> int:
    from .mapimage import png_bytes

    try:
        gen = _generator(args.world, load_world)
    except (OSError, KeyError) as e:  # VedutaError is the caller's (veduta.cli.main) to report
        print(f"veduta world map: {e}", file=sys.stderr)
        return 1
    if args.scale is not None and not 1 <= args.scale <= 16:
        print(f"veduta world map: scale {args.scale} out of range [1, 16]", file=sys.stderr)
        return 2
    img = gen.render_map(args.at, args.size, args.scale)
    path = Path(args.out)
    if path.is_dir():
        print(f"veduta world map: {path} is a folder; --out names the PNG file to write", file=sys.stderr)
        return 1
    try:
        atomic_write(str(path), png_bytes(img))  # makes the folder when needed
    except OSError as e:
        print(f"veduta world map: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"{path}: {img.size[0]} x {img.size[1]} px, cells [{args.at[0] - args.size[0] // 2}, "
          f"{args.at[1] - args.size[1] // 2}] + {args.size[0]} x {args.size[1]}")
    return 0
