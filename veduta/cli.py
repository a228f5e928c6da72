"""The ``veduta`` command: what doit does not cover.

    veduta cook [-n N] [SOURCE ...]      the cook tasks, without a dodo.py
    veduta dump FILE.vda [--full]        a cooked file as JSON
    veduta verify FILE ...               check cooked files; exit 1 on any problem
    veduta inspect model NAME [--json]   triangles, levels of detail, findings
    veduta inspect world NAME [--json] [--sheet FILE.png] [--at X,Z] [--all]
    veduta inspect prefab NAME [--json]
    veduta preview texture NAME --out FILE.png
    veduta preview model NAME --out FILE.png [--size N] [--json]
    veduta export gltf MODEL --out FILE.glb [--lod K] [--json]
    veduta export gltf --world WORLD --chunk CX,CZ [--radius N] --out FILE.glb [--json]
    veduta world query WORLD X,Z
    veduta world map WORLD --out FILE.png [--at X,Z] [--size W,H]
    veduta cache info | prune [--days N] [--dry-run] | push
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import cast

from veduta import COMPILER_VERSION
from veduta.argtypes import png_file
from veduta.errors import ConfigError, VdaError, VedutaError


def _project(args):
    from veduta.cook.project import Project

    return Project.find(getattr(args, "root", None) or os.getcwd())


# -- cook ------------------------------------------------------------------------------------

def cmd_cook(args) -> int:
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    from veduta.cook.tasks import CookRun, doit_config, task_creator

    found = _project(args)
    # its paths are relative to where the command runs: resolve them before leaving
    assets = os.path.abspath(found.assets)
    os.chdir(os.path.abspath(found.root))  # doit's paths are relative to the game root, as with a dodo.py
    from veduta.cook.project import Project

    project = Project.at(".")
    run = CookRun(project)
    if args.format:
        run.fmt = args.format
    config = doit_config(run)
    # made while doit runs (after its reporter starts), as with a dodo.py: plain `cook` then
    # makes no task for a fresh source, and stale ones may be fetched from the shared cache
    loader = ModuleTaskLoader({"task_cook": task_creator(run), "DOIT_CONFIG": config})
    argv = ["run"]
    if args.jobs:  # -n 1 too: an explicit -n 1 cooks serially (no pool, veduta/cook/ahead.py)
        argv += ["-n", str(args.jobs)]
    names = []
    for s in args.sources:
        # a path to the file (from where the command runs), or a path under the assets folder
        full = os.path.abspath(os.path.join(args.cwd, s))
        rel = os.path.relpath(full, assets).replace(os.sep, "/")
        if not os.path.exists(full) and rel.startswith("../"):
            rel = s.replace(os.sep, "/")
        names.append("cook:" + rel)
    # the tasks are made before doit runs here: say which were asked for, so that a source that
    # does not exist gets a task that says so (instead of doit's "invalid parameter")
    run.selected = names or None
    argv += names or ["cook"]
    return DoitMain(loader).run(argv)


# -- dump / verify ---------------------------------------------------------------------------

def cmd_dump(args) -> int:
    from veduta.container.meta import Meta
    from veduta.container.vda import read_asset_file
    from veduta.formats import Struct

    try:
        asset = read_asset_file(args.file)
    except VdaError as exc:
        print(f"veduta dump: {exc}", file=sys.stderr)
        return 1
    chunks = []
    for ctype, value in asset.chunks:
        if isinstance(value, Meta):
            chunks.append({"type": ctype, "meta": json.loads(value.encode())})
        elif isinstance(value, Struct):
            body = value.to_json() if not args.full else _full_json(value)
            chunks.append({"type": ctype, "body": body})
        else:
            chunks.append({"type": ctype, "unknown": True, "length": len(cast(bytes, value))})
    sys.stdout.write(compact_json({"file": args.file, "chunks": chunks}) + "\n")
    return 0


def compact_json(value, indent: str = "") -> str:
    """JSON with one item per line, except lists of numbers and strings, which stay on one line."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {compact_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        one_line = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        flat = all(not isinstance(v, (dict, list)) for v in value)
        small_lists = len(value) <= 4 and all(
            isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v) for v in value)
        if (flat and (len(one_line) <= 100 or all(isinstance(v, (int, float)) for v in value))) or small_lists:
            return one_line
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + compact_json(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def _full_json(rec):
    """Like to_json but with every array element listed (pixels as 0xAARRGGBB hex)."""
    import numpy as np

    saved = []
    for t in _array_types(rec):
        saved.append((t, t.summary))
        t.summary = 0
    try:
        out = rec.to_json()
    finally:
        for t, s in saved:
            t.summary = s
    if getattr(rec, "CHUNK", "") == "TEXR":
        out["images"] = [[[f"#{p:08x}" for p in row] for row in np.asarray(img)] for img in rec.images]
    return out


def _array_types(rec):
    from veduta.formats.codec import Array, List, Opt, StructType, Tuple

    seen = []

    def walk(t):
        if isinstance(t, Array):
            seen.append(t)
        elif isinstance(t, (List, Opt)):
            walk(t.item)
        elif isinstance(t, Tuple):
            for x in t.items:
                walk(x)
        elif isinstance(t, StructType):
            for _, x in t.cls.FIELDS:
                walk(x)

    for _, t in type(rec).FIELDS:
        walk(t)
    return seen


def cmd_verify(args) -> int:
    from veduta.container.vda import read_asset_file

    bad = 0
    for path in args.files:
        try:
            a = read_asset_file(path)
        except VdaError as exc:
            print(f"{exc}", file=sys.stderr)
            bad += 1
            continue
        note = "" if a.meta.compiler == COMPILER_VERSION else f" (compiled by {a.meta.compiler})"
        if not args.quiet:
            print(f"{path}: ok, {a.meta.kind} {a.meta.name}{note}")
    return 1 if bad else 0


# -- preview ---------------------------------------------------------------------------------

def _cooked_record(project, kind: str, name: str):
    """Cook (if needed) and read one asset; VedutaError when it does not exist or has errors."""
    from veduta.container.vda import read_asset_file
    from veduta.cook.cook import FAILED, cook_file

    src = project.find_source(kind, name)
    if src is None:
        raise VedutaError(f'no {kind} "{name}" under {project.assets}/{_folder(kind)}/')
    cooked = project.cooked_path(kind, name)
    out = cook_file(kind, src.rel, project.assets, cooked, project.cache)
    for m in out["messages"]:
        print(m, file=sys.stderr)
    if out["outcome"] == FAILED:
        raise VedutaError(f"{kind} {name} has errors")
    return read_asset_file(cooked).body


def _folder(kind: str) -> str:
    from veduta.kinds import BY_NAME

    return BY_NAME[kind].folder


def cmd_preview_texture(args) -> int:
    from veduta.preview import preview_texture

    project = _project(args)
    try:
        tex = _cooked_record(project, "texture", args.name)
    except VedutaError as exc:
        print(f"veduta preview: {exc}", file=sys.stderr)
        return 2
    try:
        preview_texture(tex, args.out)
    except OSError as exc:
        print(f"veduta preview: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


def load_world(project, name: str):
    """The cooked world *name* and the cooked prefabs it names (cooking what is stale)."""
    from veduta.world.params import prefab_names

    world = _cooked_record(project, "world", name)
    prefabs = {}
    for n in prefab_names(world):
        if project.find_source("prefab", n) is not None:
            try:
                prefabs[n] = _cooked_record(project, "prefab", n)
            except VedutaError as exc:
                print(f"veduta: warning: prefab {n}: {exc}", file=sys.stderr)
    return world, prefabs


# -- main ------------------------------------------------------------------------------------

def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is below 0")
    return n


class _Version(argparse.Action):
    """--version: the package version is read from the installed metadata only when asked."""

    def __call__(self, parser, namespace, values, option_string=None):
        import veduta

        print(f"veduta {veduta.__version__} ({COMPILER_VERSION})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="veduta", description="veduta cook: the Veduta asset compiler")
    p.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    c = sub.add_parser("cook", help="cook the game's assets (the doit tasks, without a dodo.py)")
    c.add_argument("-n", "--jobs", type=_count, default=0, help="cook in N processes")
    c.add_argument("sources", nargs="*", metavar="SOURCE", help="only these source files")
    from veduta.cook.tools_cli import add_format_option

    add_format_option(c)
    c.set_defaults(func=cmd_cook)

    d = sub.add_parser("dump", help="print a cooked .vda file as JSON")
    d.add_argument("file", metavar="FILE.vda")
    d.add_argument("--full", action="store_true", help="list every vertex, index and pixel")
    d.set_defaults(func=cmd_dump)

    v = sub.add_parser("verify", help="check cooked files (exit 1 on any problem)")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    v.set_defaults(func=cmd_verify)

    i = sub.add_parser("inspect", help="inspect an asset")
    isub = i.add_subparsers(dest="inspect_command", metavar="KIND")
    isub.required = True
    from veduta.compile.model.cli import add_inspect_model

    add_inspect_model(isub)
    from veduta.world.inspect_cli import add_inspect_world

    add_inspect_world(isub)

    pv = sub.add_parser("preview", help="render an asset to a PNG")
    psub = pv.add_subparsers(dest="preview_command", metavar="KIND")
    psub.required = True
    pt = psub.add_parser("texture", help="the mip chain side by side, and the frames labelled with their clips")
    pt.add_argument("name", metavar="NAME")
    pt.add_argument("--out", required=True, metavar="FILE.png", type=png_file)
    pt.set_defaults(func=cmd_preview_texture)
    from veduta.export.cli import add_export_commands, add_preview_model

    add_preview_model(psub)
    add_export_commands(sub)

    from veduta.world.cli import add_world_commands

    add_world_commands(sub, lambda name: load_world(_project(None), name))

    from veduta.cook.tools_cli import add_tool_commands
    from veduta.schemas.cli import add_schema_command

    add_schema_command(sub)
    add_tool_commands(sub)

    from veduta.cook.cache_cli import add_cache_commands

    add_cache_commands(sub, lambda: _project(None))
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.cwd = os.getcwd()
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"veduta: {exc}", file=sys.stderr)
        return 2
    except VedutaError as exc:
        print(f"veduta: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
