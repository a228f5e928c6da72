"""Argument types shared by the command-line faces."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable


def wrong_suffix(path: str, suffix: str) -> str:
    """Why *path* may not take a file written in the format of *suffix* (its name must end in
    it: ``--out x.jpg`` would write PNG bytes under a JPEG name, ``--out pyproject.toml`` would
    overwrite it), or "" when it may. A folder passes: the command says it is a folder."""
    if path.lower().endswith(suffix) or os.path.isdir(path):
        return ""
    return f"{path!r}: the file is written as {suffix[1:].upper()}, so its name must end in {suffix}"


def out_file(suffix: str) -> Callable[[str], str]:
    """An argparse type for a file the command writes in one format (:func:`wrong_suffix`)."""

    def check(text: str) -> str:
        wrong = wrong_suffix(text, suffix)
        if wrong:
            raise argparse.ArgumentTypeError(wrong)
        return text

    check.__name__ = f"{suffix[1:]} file"
    return check


png_file = out_file(".png")
glb_file = out_file(".glb")


#: The most processes ``-n``/``--jobs`` (and the MCP cook's ``jobs``) may ask for: a typo such as
#: ``-n 100000`` is a usage mistake, not a fork of 100,000 workers.
MAX_JOBS = 1024
#: The most levels ``deps --depth`` (and the MCP tool's ``depth``) and ``report --top`` take.
MAX_LEVELS = 1_000_000
#: The highest level of detail ``export gltf --lod`` (and the MCP tool's ``lod``) names.
MAX_LOD = 64
#: The most focus cells ``inspect world --at`` (and the MCP tool's ``at``) take, besides the start
#: cell and the places: each is a view of its own in the report (a view of every chunk: ``--all``).
MAX_FOCI = 1024
#: The most chunks around the one ``export gltf --radius`` (and the MCP tool's ``radius``) exports.
MAX_EXPORT_RADIUS = 4


def whole(lo: int, hi: int, what: str = "") -> Callable[[str], int]:
    """An argparse type for a whole number in ``[lo, hi]``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"{n} out of range [{lo}, {hi}]{what}")
        return n

    parse.__name__ = "whole number"
    return parse


#: ``-n N``: N processes, 0 (the default) one per core
jobs = whole(0, MAX_JOBS, " (0: one process per core)")
