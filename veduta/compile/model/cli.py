"""The `inspect model` command line, light to import (the inspection itself loads on use)."""

from __future__ import annotations

import argparse


def _run(args: argparse.Namespace, *streams) -> int:
    from .inspect import run_inspect_model

    return run_inspect_model(args, *streams)


def add_inspect_model(subparsers) -> argparse.ArgumentParser:
    """Register `model NAME [--json]` on the subparsers of `inspect`; sets `func` (call
    `args.func(args)`, it returns the exit status)."""
    p = subparsers.add_parser("model", help="triangles, levels of detail and findings of a model",
                              description="Report a model's triangles per part and in total, the triangles "
                                          "of every level of detail, bounds, materials and findings.")
    p.add_argument("name", metavar="NAME", help="model name (the .vmodel file name without the suffix)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)
    return p
