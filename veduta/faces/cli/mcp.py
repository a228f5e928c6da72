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
        print(f"veduta mcp: the MCP SDK is not installed ({exc}); pip install 'veduta-cook[mcp]'", file=sys.stderr)
        return 2
    serve(root)
    return 0


def add_mcp_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("mcp", help="serve the toolchain's tools to an AI agent (Model Context Protocol, stdio)",
                              description="Serve cook, check, why, inspect_*, world_*, dump, verify, export_gltf "
                              "and preview_model as MCP tools over stdio, for the game repo found from --root "
                              "(default: the current folder). See docs/mcp.md.")
    p.add_argument("--root", metavar="DIR", help="the game repo to serve (default: found from the current folder)")
    p.set_defaults(func=cmd_mcp)
    return p
