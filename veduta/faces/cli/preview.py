"""``veduta preview world WORLD --at X,Z --out FILE.png [--scale N] [--json]``: the face of
:func:`veduta.api.preview_world` (what the world's camera sees from a start cell)."""

from __future__ import annotations

import argparse
import json
import sys

from veduta.base.argtypes import png_file
from veduta.base.errors import ConfigError, UsageError, VedutaError, shown_path
from veduta.faces.cli.common import allow_negative_pairs, parse_pair, tell

#: ``--scale``: the larger frame is N x 320 x 240 (1: the console frame alone)
MAX_SCALE = 4


def _scale(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number 1..{MAX_SCALE}") from None
    if not 1 <= n <= MAX_SCALE:
        raise argparse.ArgumentTypeError(f"{n} out of range [1, {MAX_SCALE}]")
    return n


def cmd_preview_world(args) -> int:
    import os

    from veduta import api
    from veduta.base.project import Project
    from veduta.faces.cli.common import progress_line

    line = progress_line()
    try:
        project = Project.find(getattr(args, "root", None) or os.getcwd())
        r = api.preview_world(project, args.world, args.at, args.out, args.scale, progress=line)
    except (OSError, VedutaError) as exc:
        return tell(args.json, str(exc), 2 if isinstance(exc, (UsageError, ConfigError)) else 1, "veduta preview world")
    finally:
        if line is not None:
            line.close()
    r.pop("png")  # written to --out
    for m in r["messages"]:
        print(m, file=sys.stderr)
    for f in r["findings"]:
        print(f"warning: {f['message']}", file=sys.stderr)
    if args.json:
        print(json.dumps(r, ensure_ascii=False))
        return 0
    d = r["draw"]
    over = d["triangles"] - d["budget"]
    print(
        f"wrote {shown_path(r['out'])}: {r['width']} x {r['height']} px, world {r['world']} "
        f"from cell [{r['at'][0]}, {r['at'][1]}]"
    )
    print(
        f"triangles: {d['triangles']:,} of the {d['budget']:,} a frame"
        + (f" (over by {over:,})" if over > 0 else "")
        + f"; ground {d['ground']:,}, skirts {d['skirts']:,}, water {d['water']:,}, flora {d['flora']:,}, "
        f"entities {d['entities']:,}"
    )
    print(
        f"chunks: {d['chunks']} loaded, {d['chunks_culled']} culled; entities: {d['considered']:,} considered, "
        f"{d['culled']:,} culled, {d['too_far']:,} too far, {d['thinned']:,} thinned, {d['drawn']:,} drawn "
        f"({d['lower_level']:,} at a lower level)"
    )
    return 0


def add_preview_world(preview_subparsers) -> argparse.ArgumentParser:
    """``world`` on the sub-parsers of ``veduta preview``."""
    p = preview_subparsers.add_parser(
        "world",
        help="what a world's camera sees from a start cell, with the draw report",
        description="Draw what the world's camera sees from a start cell, as `render { world, at }` shows it: "
        "the console's 320 x 240 frame, the same view larger, and the draw report (chunks and "
        "entities culled, too far, thinned, drawn at a lower level; triangles against the 1,200 a "
        "frame), into one PNG.",
    )
    p.add_argument("world", metavar="WORLD", help="world name")
    p.add_argument("--at", type=parse_pair, default=(0, 0), metavar="X,Z", help="the start cell (default 0,0)")
    p.add_argument("--out", required=True, metavar="FILE.png", type=png_file, help="the file to write")
    p.add_argument(
        "--scale",
        type=_scale,
        default=2,
        metavar="N",
        help=f"the larger frame is N x 320 x 240 px (1..{MAX_SCALE}, default 2; 1: the console frame alone)",
    )
    p.add_argument("--json", action="store_true", help="print the draw report and what was drawn as JSON")
    p.set_defaults(func=cmd_preview_world)
    allow_negative_pairs(p)
    return p
