"""Argument types shared by the command-line faces."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable


def out_file(suffix: str) -> Callable[[str], str]:
    """An argparse type for a file the command writes in one format: its name must end in
    *suffix* (``veduta preview ... --out x.jpg`` would write PNG bytes under a JPEG name)."""

    def check(text: str) -> str:
        if not text.lower().endswith(suffix) and not os.path.isdir(text):  # a folder: the command says so
            raise argparse.ArgumentTypeError(f"{text!r}: the file is written as {suffix[1:].upper()}, "
                                             f"so its name must end in {suffix}")
        return text

    check.__name__ = f"{suffix[1:]} file"
    return check


png_file = out_file(".png")
glb_file = out_file(".glb")
