"""The games the benchmarks and the tests cook: one helper for each kind of game.

- :func:`sample_game`: a copy of this repository's sample game (its sources, no cooked files) with
  the one-line ``dodo.py``: what most end-to-end tests and the world benchmarks work on.
- :func:`bench.cook.make_game` and :func:`bench.cook.make_heavy_game`: generated games of many small
  models, and the sample game with large textures, worlds and models (the cook's benchmarks).
"""

from __future__ import annotations

import os
import shutil

#: The sample game's assets folder (this repository's ``assets/``).
SAMPLE_ASSETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets")

DODO = "from veduta.dodo import *\n"


def sample_game(root: str | os.PathLike) -> str:
    """Make *root* a game repo holding a copy of the sample game's sources (nothing cooked, no
    cache) and the one-line ``dodo.py``; returns *root* as a string."""
    root = os.fspath(root)
    shutil.copytree(SAMPLE_ASSETS, os.path.join(root, "assets"), ignore=shutil.ignore_patterns(".cooked"))
    with open(os.path.join(root, "dodo.py"), "w", encoding="utf-8") as f:
        f.write(DODO)
    return root
