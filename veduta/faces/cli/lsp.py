"""``veduta lsp``: serve the language server over stdio (docs/editors.md)."""

from __future__ import annotations

import argparse
import sys


def cmd_lsp(args: argparse.Namespace) -> int:
    try:
        from veduta.faces.lsp.server import serve
    except ImportError as exc:
        print(f"veduta lsp: the language server needs pygls ({exc}); pip install 'veduta-cook[lsp]'", file=sys.stderr)
        return 2
    return serve(args.log)


def add_lsp_command(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "lsp",
        help="the language server: the cook's diagnostics, completion, hover and definitions in an editor",
        description="Serve the Language Server Protocol over stdin and stdout for an editor (VS Code, Neovim, "
        "Helix, ...): the cook's diagnostics of unsaved buffers, completion of field names, values and "
        "asset names, hover, go to definition, find references. The game is found from each opened "
        "file's folder. See docs/editors.md.",
    )
    p.add_argument(
        "--stdio", action="store_true", help="accepted for editors that pass it (stdio is the only transport)"
    )
    p.add_argument("--log", metavar="FILE", help="write the server's log to FILE")
    p.set_defaults(func=cmd_lsp, read_only=True)  # no interrupted rename is completed (docs/editors.md)
    return p
