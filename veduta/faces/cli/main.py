"""The ``veduta`` command: what doit does not cover.

veduta cook [-n N] [SOURCE ...]      the cook tasks, without a dodo.py
veduta list [KIND] [--json]          every asset, its state, errors and warnings
veduta write KIND NAME FILE|- [--dry-run] [--json]   create or replace a source, checked first
veduta dump FILE.vda [--full]        a cooked file as JSON
veduta verify FILE ... [--json]      check cooked files; exit 1 on any problem
veduta inspect model NAME [--json]   triangles, levels of detail, findings
veduta inspect world NAME [--json] [--sheet FILE.png] [--at X,Z] [--all] [--views-file FILE.jsonl]
veduta inspect prefab NAME [--json]
veduta preview texture NAME --out FILE.png [--json]
veduta preview model NAME --out FILE.png [--size N] [--json]
veduta preview world WORLD --out FILE.png [--at X,Z] [--scale N] [--json]
veduta export gltf MODEL --out FILE.glb [--lod K] [--json]
veduta export gltf --world WORLD --chunk CX,CZ [--radius N] --out FILE.glb [--json]
veduta world query WORLD --at X,Z [--json]
veduta world map WORLD --out FILE.png [--at X,Z] [--cells W,H] [--json]
veduta cache info | prune [--days N] [--dry-run] | push
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from veduta import COMPILER_VERSION
from veduta.base.argtypes import jobs, png_file
from veduta.base.errors import ConfigError, UsageError, VdaError, VedutaError, shown_path
from veduta.faces.cli.common import CommandLineMistake, Parser, compact_json, json_in_argv, tell, wants_json
from veduta.faces.cli.start import interrupted, startup_pause


def _project(args):
    from veduta.base.project import Project

    return Project.find(getattr(args, "root", None) or os.getcwd())


# -- cook ------------------------------------------------------------------------------------


def cmd_cook(args) -> int:
    from veduta import api

    # a path that exists is taken from where the command runs (the cook runs in the game root)
    sources = []
    for s in args.sources:
        full = os.path.abspath(os.path.join(args.cwd, s))
        sources.append(full if os.path.exists(full) else s)
    try:
        # --json: the whole result as one object, instead of what doit cook prints
        result = api.cook(
            _project(args),
            sources,
            args.jobs,
            echo=None if args.json else sys.stdout,
            fmt=args.format,
            strict=True if args.strict else None,
        )
    except KeyboardInterrupt as stop:
        from veduta.cook.tasks import INTERRUPTED

        recorded = getattr(stop, "result", None)  # what was recorded before Ctrl-C
        if args.json and recorded is not None:
            print(json.dumps(recorded | {"interrupted": True}, ensure_ascii=False), flush=True)
        sys.stderr.write(f"\n{INTERRUPTED}\n")  # as doit cook says it: the summary above is not the end
        return 130
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    return 0 if result["ok"] else 1


# -- dump / verify ---------------------------------------------------------------------------


def cmd_dump(args) -> int:
    from veduta import api

    try:
        data = api.dump(None, args.file, args.full)
    except VdaError as exc:
        return tell(args.json, str(exc), 1, "veduta dump")
    sys.stdout.write(compact_json(data) + "\n")
    return 0


def cmd_verify(args) -> int:
    from veduta import api

    result = api.verify(None, args.files)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    for f in result["files"]:
        if not f["ok"]:
            print(f["error"], file=sys.stderr)
        elif not args.quiet and not args.json:
            note = "" if f["current"] else f" (compiled by {f['compiler']})"
            print(f"{f['file']}: ok, {f['kind']} {f['name']}{note}")
    return 0 if result["ok"] else 1


# -- preview ---------------------------------------------------------------------------------


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


def _cooked_record(project, kind: str, name: str):
    """Cook (if needed) and read one asset; VedutaError when it does not exist or has errors."""
    from veduta.cook.cooked import cooked_record

    return cooked_record(project, kind, name, _warn)


def cmd_preview_texture(args) -> int:
    from veduta import api

    try:
        data = api.preview_texture(_project(args), args.name, args.out)
    except VedutaError as exc:
        return tell(args.json, str(exc), 2 if isinstance(exc, (UsageError, ConfigError)) else 1, "veduta preview")
    for line in data["messages"]:
        _warn(line)
    if args.json:
        print(json.dumps({k: v for k, v in data.items() if k != "png"}, ensure_ascii=False))
    else:
        from veduta.tools.preview_texture import bound_text, left_out_words

        parts = left_out_words(
            data["tiled_left_out"], data["frames_left_out"], data["clips_left_out"], len(data["clips"])
        )
        cut = f" ({', '.join(parts)} left out: the picture is kept within {bound_text()} pixels)"
        print(f"wrote {shown_path(args.out)}" + (cut if parts else ""))
    return 0


def load_world(project, name: str):
    """The cooked world *name* and the cooked prefabs it names (cooking what is stale)."""
    from veduta.cook.cooked import load_world as load

    return load(project, name, _warn)


# -- main ------------------------------------------------------------------------------------


class _Version(argparse.Action):
    """--version: the package version is read from the installed metadata only when asked."""

    def __call__(self, parser, namespace, values, option_string=None):
        import veduta

        print(f"veduta {veduta.__version__} ({COMPILER_VERSION})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="veduta", description="veduta cook: the Veduta asset compiler")
    p.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    c = sub.add_parser("cook", help="cook the game's assets (the doit tasks, without a dodo.py)")
    c.add_argument("-n", "--jobs", type=jobs, default=0, help="cook in N processes (default: one per core)")
    c.add_argument("sources", nargs="*", metavar="SOURCE", help="only these source files")
    from veduta.faces.cli.check import add_format_option

    add_format_option(c)
    c.add_argument("--json", action="store_true", help="the whole result (summary and diagnostics) as one JSON object")
    c.add_argument(
        "--strict",
        action="store_true",
        help="every warning fails the cook, exit 1 (also `strict = true` in [tool.veduta]); "
        "the cooked files are still written",
    )
    c.set_defaults(func=cmd_cook)

    d = sub.add_parser("dump", help="print a cooked .vda file as JSON")
    d.add_argument("file", metavar="FILE.vda")
    d.add_argument("--full", action="store_true", help="list every vertex, index and pixel")
    d.add_argument("--json", action="store_true", help="accepted for symmetry: the output is JSON already")
    d.set_defaults(func=cmd_dump)

    v = sub.add_parser("verify", help="check cooked files (exit 1 on any problem)")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    v.add_argument("--json", action="store_true", help="print the result as JSON (problems also go to stderr)")
    v.set_defaults(func=cmd_verify)

    i = sub.add_parser("inspect", help="inspect an asset")
    isub = i.add_subparsers(dest="inspect_command", metavar="KIND")
    isub.required = True
    from veduta.faces.cli.inspect_model import add_inspect_model

    add_inspect_model(isub)
    from veduta.faces.cli.inspect import add_inspect_world

    add_inspect_world(isub)

    pv = sub.add_parser("preview", help="render an asset to a PNG")
    psub = pv.add_subparsers(dest="preview_command", metavar="KIND")
    psub.required = True
    pt = psub.add_parser("texture", help="the mip chain side by side, and the frames labelled with their clips")
    pt.add_argument("name", metavar="NAME")
    pt.add_argument("--out", required=True, metavar="FILE.png", type=png_file)
    pt.add_argument("--json", action="store_true", help="print what was drawn as JSON (size, levels, frames, clips)")
    pt.set_defaults(func=cmd_preview_texture)
    from veduta.faces.cli.export import add_export_commands, add_preview_model

    add_preview_model(psub)
    from veduta.faces.cli.preview import add_preview_world

    add_preview_world(psub)
    add_export_commands(sub)

    from veduta.faces.cli.world import add_world_commands

    def draw_map(world, at, size, scale, progress=None):
        from veduta import api

        return api.world_map(_project(None), world, at, size, scale, progress)

    add_world_commands(sub, lambda name: load_world(_project(None), name), draw_map)

    from veduta.faces.cli.assets import add_asset_commands
    from veduta.faces.cli.check import add_tool_commands
    from veduta.faces.cli.schema import add_schema_command

    add_asset_commands(sub)
    from veduta.faces.cli.graph import add_graph_commands

    add_graph_commands(sub)

    add_schema_command(sub)
    add_tool_commands(sub)

    from veduta.faces.cli.cache import add_cache_commands

    add_cache_commands(sub, lambda: _project(None))

    from veduta.faces.cli.mcp import add_mcp_command

    add_mcp_command(sub)

    from veduta.faces.cli.lsp import add_lsp_command

    add_lsp_command(sub)
    return p


def _json_safe_stdout() -> None:
    """JSON on stdout is valid UTF-8 whatever the arguments: a file or asset name that is not
    (undecodable bytes, which Python keeps as lone surrogates) is written as a ``\\udcff`` escape,
    which JSON reads back, instead of raw bytes or a UnicodeEncodeError under a strict locale."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def _finish_edits(args) -> None:
    """Before any command: complete a set of source edits an interrupted ``veduta rename`` left
    (docs/rename.md), saying so on stderr. A game that cannot be found or configured is left to
    the command to report."""
    from veduta import api

    try:
        project = _project(args)
    except VedutaError:
        return
    api.finish_edits(project)


def main(argv: list[str] | None = None) -> int:
    """The ``veduta`` command; returns its exit status (a mistake in the command line exits 2
    through SystemExit, as argparse does). Under ``--json`` (``--format json``) every mistake is
    one JSON document on stdout (veduta/faces/cli/common.py). Ctrl-C at any moment, its start
    included (the parser, the modules a command imports), is one line and 130
    (:func:`veduta.faces.cli.start.interrupted`; a cook says its own line)."""
    try:
        return _main(sys.argv[1:] if argv is None else list(argv))
    except KeyboardInterrupt:
        return interrupted()


def _main(argv: list[str]) -> int:
    if json_in_argv(argv):
        _json_safe_stdout()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CommandLineMistake as mistake:
        mistake.report(json_in_argv(argv))
    args.cwd = os.getcwd()
    startup_pause("edits")
    if not getattr(args, "read_only", False):
        _finish_edits(args)
    startup_pause("command")
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `veduta list --json | head`: the reader has all it wanted
        return _reader_gone()
    except (ConfigError, UsageError) as exc:
        return tell(wants_json(args), str(exc), 2, findings=getattr(exc, "findings", None))
    except VedutaError as exc:
        return tell(wants_json(args), str(exc), 1, findings=getattr(exc, "findings", None))
    except OSError as exc:  # the file system said no (permissions, a full disk), not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        return tell(wants_json(args), f"{where}{exc.strerror or exc}", 1)
    except MemoryError:
        return tell(wants_json(args), "out of memory (the machine, or a memory limit, ran short)", 1)


def _reader_gone() -> int:
    """Exit quietly, with 1 (an output that cannot be written), when standard output's reader has
    closed it: the output is cut short, so success cannot be claimed (a gate piped into ``head``
    must not pass for having been cut). stdout is pointed at the null device, so that neither a
    refusal nor the interpreter's last flush writes to the closed pipe (a second BrokenPipeError,
    printed as a traceback)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # (no descriptor: stdout replaced by a test's buffer)
        pass
    return 1


startup_pause("import")  # (the test hook: Ctrl-C while this module is being imported)

if __name__ == "__main__":
    sys.exit(main())
