"""``veduta mcp [--root DIR]``: serve the game repo's tools to an MCP client over stdio."""

from __future__ import annotations

import argparse
import os
import sys


def cmd_mcp(args: argparse.Namespace) -> int:
    from veduta.base.errors import UsageError
    from veduta.base.project import Project

    if args.root and not os.path.isdir(args.root):
        raise UsageError(f"--root {args.root}: no such folder")
    # a ConfigError (exit 2) when there is no game here
    root = os.path.abspath(Project.find(args.root or os.getcwd()).root)
    try:
        from veduta.faces.mcp.server import serve
    except ImportError as exc:
        print(f"veduta mcp: {missing_sdk(exc)}", file=sys.stderr)
        return 2
    serve(root)
    return 0


def missing_sdk(exc: ImportError) -> str:
    """What to do when the MCP SDK cannot be imported: the install command of the ``mcp`` extra's
    requirement (read from this package's metadata) for the very Python running veduta, which
    works however veduta itself was installed (from a checkout, a wheel or an index)."""
    import shlex

    requirement = "mcp>=2.3,<3"
    try:
        from importlib.metadata import distribution

        for req in distribution("veduta-cook").requires or []:
            spec, _, marker = req.partition(";")
            if 'extra == "mcp"' in marker:
                requirement = spec.strip()
    except Exception:  # noqa: BLE001 - no metadata (run from a bare checkout): the pinned default
        pass
    return (
        f"the MCP SDK ({requirement}) cannot be imported here ({exc}); install it into this environment "
        f"with: {shlex.quote(sys.executable)} -m pip install {shlex.quote(requirement)}"
    )


def add_mcp_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "mcp",
        help="serve the toolchain's tools to an AI agent (Model Context Protocol, stdio)",
        description="Serve list_assets, write_source, cook, check, why, inspect_*, world_*, "
        "dump, verify, export_gltf, preview_model and preview_texture as MCP tools over stdio, "
        "with the source formats, their schemas and every source as resources, for the game "
        "repo found from --root (default: the current folder). See docs/mcp.md.",
    )
    p.add_argument("--root", metavar="DIR", help="the game repo to serve (default: found from the current folder)")
    p.set_defaults(func=cmd_mcp)
    return p
