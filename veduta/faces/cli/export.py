"""The faces of ``veduta export gltf`` and ``veduta preview model`` (light to import: the work
loads on use, through :mod:`veduta.api`).

    veduta export gltf MODEL --out FILE.glb [--lod K] [--json]
    veduta export gltf --world WORLD --chunk CX,CZ [--radius N] [--levels] --out FILE.glb [--json]
    veduta preview model NAME --out FILE.png [--size N] [--json]

Both print one line saying what they wrote (``--json``: the core function's summary), the
cook's own messages and the warnings (missing materials, textures, models) on stderr. A missing
model or world, a ``--lod`` or chunk it does not have, is a ``veduta: ...`` line and exit status 2
(a usage mistake); one with errors exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from veduta.base.argtypes import MAX_EXPORT_RADIUS, MAX_LOD, glb_file, png_file, whole
from veduta.base.errors import shown_path
from veduta.faces.cli.common import tell


def _project():
    from veduta.base.project import Project

    return Project.find(os.getcwd())


def _report(result: dict, as_json: bool, line: str) -> int:
    for m in result.get("messages", []):
        print(m, file=sys.stderr)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        for f in result.get("findings", []):
            print(f"veduta: {f['severity']}: {f['message']}", file=sys.stderr)
        print(line)
    return 0


def cmd_export_gltf(args) -> int:
    from veduta import api

    mistake = _gltf_mistake(args)
    if mistake:
        return tell(args.json, mistake, 2, "veduta export gltf")
    r = api.export_gltf(
        _project(),
        args.out,
        model=args.model,
        lod=args.lod,
        world=args.world,
        chunk=args.chunk,
        radius=args.radius,
        levels=args.levels,
    )
    if args.world is None:
        what = f"{_n(len(r['meshes']), 'mesh', 'meshes')} ({r['triangles']} triangles)"
    else:
        what = (
            f"{_n(len(r['chunks']), 'chunk')}, {_n(r['entities'], 'entity', 'entities')} using "
            f"{_n(len(r['meshes']), 'model')} ({r['triangles']} triangles drawn)"
        )
        if args.levels:
            ks = sorted({c["level"] for c in r["chunks"]})
            what += f", ground at level{'s' if len(ks) > 1 else ''} {', '.join(map(str, ks))} by distance"
    return _report(
        r,
        args.json,
        f"wrote {shown_path(r['out'])}: {what}, {_n(len(r['materials']), 'material')}, "
        f"{_n(len(r['textures']), 'texture')}, {r['bytes']} bytes",
    )


def _gltf_mistake(args) -> str:
    """What is wrong with the combination of export gltf's arguments, or ""."""
    if args.model is None and args.world is None:
        return "name a MODEL, or --world WORLD --chunk CX,CZ"
    if args.model is not None and args.world is not None:
        return "a MODEL or --world, not both"
    if args.world is not None and args.chunk is None:
        return "--world needs --chunk CX,CZ"
    if args.world is None and (args.chunk is not None or args.radius or args.levels):
        return "--chunk, --radius and --levels go with --world"
    if args.world is not None and args.lod is not None:
        return "--lod goes with a MODEL (a chunk is exported at its finest drawn level, or by distance with --levels)"
    return ""


def _n(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def cmd_preview_model(args) -> int:
    from veduta import api

    r = api.preview_model(_project(), args.name, args.out, args.size)
    r.pop("png")  # written to --out
    levels = ", ".join(str(lv["triangles"]) for lv in r["levels"])
    size = f"{r['width']} x {r['height']} px"
    return _report(r, args.json, f"wrote {shown_path(r['out'])}: {size}, triangles per level {levels}")


def add_export_commands(subparsers) -> argparse.ArgumentParser:
    """``export gltf`` on the ``veduta`` sub-parsers; sets ``func`` (returns the exit status)."""
    from veduta.faces.cli.common import allow_negative_pairs, parse_pair

    e = subparsers.add_parser("export", help="write cooked assets in formats other tools read")
    esub = e.add_subparsers(dest="export_command", metavar="{gltf}")
    esub.required = True
    g = esub.add_parser(
        "gltf",
        help="binary glTF 2.0 of a model, or of a world chunk",
        description="Write a cooked model (every level of detail) or a chunk of a world "
        "(ground, skirts, water, entities and flora) as binary glTF 2.0 (.glb).",
    )
    g.add_argument("model", nargs="?", metavar="MODEL", help="model name")
    g.add_argument("--out", required=True, metavar="FILE.glb", type=glb_file, help="the file to write")
    g.add_argument("--lod", type=whole(0, MAX_LOD), metavar="K", help="only level K (0 is the full model)")
    g.add_argument("--world", metavar="WORLD", help="export a chunk of this world instead of a model")
    g.add_argument("--chunk", type=parse_pair, metavar="CX,CZ", help="the chunk to export (with --world)")
    g.add_argument(
        "--radius",
        type=whole(0, MAX_EXPORT_RADIUS),
        default=0,
        metavar="N",
        help="also the chunks up to N away (a (2N+1)^2 square; default 0)",
    )
    g.add_argument(
        "--levels",
        action="store_true",
        help="each chunk's ground at the level the engine draws it from a view of the centre chunk "
        "(default: every chunk at its finest drawn level)",
    )
    g.add_argument("--json", action="store_true", help="print a summary of what was written as JSON")
    g.set_defaults(func=cmd_export_gltf)
    allow_negative_pairs(g)
    return e


def add_preview_model(preview_subparsers) -> argparse.ArgumentParser:
    """``model`` on the sub-parsers of ``veduta preview``."""
    from veduta.tools.export import PREVIEW_MAX_SIZE as MAX_SIZE
    from veduta.tools.export import PREVIEW_MIN_SIZE as MIN_SIZE
    from veduta.tools.export import PREVIEW_SIZE as DEFAULT_SIZE

    p = preview_subparsers.add_parser(
        "model",
        help="shaded views of a model and its levels of detail",
        description="Draw a model from the front, side, top and three "
        "quarters, and each level of detail, into one PNG.",
    )
    p.add_argument("name", metavar="NAME", help="model name")
    p.add_argument("--out", required=True, metavar="FILE.png", type=png_file, help="the file to write")
    p.add_argument(
        "--size",
        type=whole(MIN_SIZE, MAX_SIZE),
        default=DEFAULT_SIZE,
        metavar="N",
        help=f"pixels per view (default {DEFAULT_SIZE})",
    )
    p.add_argument("--json", action="store_true", help="print a summary of what was drawn as JSON")
    p.set_defaults(func=cmd_preview_model)
    return p
