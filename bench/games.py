"""The games the benchmarks and the tests cook: one helper for each kind of game.

- :func:`sample_game`: a copy of this repository's sample game (its sources, no cooked files) with
  the one-line ``dodo.py``: what most end-to-end tests and the world benchmarks work on.
- :func:`make_game` and :func:`make_heavy_game`: generated games of many small models, and the
  sample game with large textures, worlds and models (the cook's benchmarks); :func:`_fresh` puts
  a game back to never cooked.
"""

from __future__ import annotations

import os
import shutil
import time

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


SHAPES = [
    # no material: the game has only models, and a missing material would be a warning per model
    '{{ "shape": "box", "size": [{a}, {b}, 1], "position": [0, {h}, 0] }}',
    '{{ "shape": "cylinder", "radius": {a}, "height": {b}, "segments": {s} }}',
    '{{ "shape": "sphere", "radius": {a}, "segments": {s}, "rings": 6, "position": [0, {h}, 0] }}',
    '{{ "shape": "lathe", "profile": [[0, 0], [{a}, 0], [{b}, 1], [0, 1.2]], "segments": {s} }}',
]

SUFFIXES = (".vmodel", ".vtexture", ".vmaterial", ".vscene", ".vprefab", ".vworld", ".vmap")


def make_game(root: str, n: int) -> None:
    os.makedirs(os.path.join(root, "assets", "models"), exist_ok=True)
    with open(os.path.join(root, "dodo.py"), "w") as f:
        f.write("from veduta.dodo import *\n")
    for i in range(n):
        folder = os.path.join(root, "assets", "models", f"g{i // 500:03d}")
        os.makedirs(folder, exist_ok=True)
        parts = [
            SHAPES[(i + k) % len(SHAPES)].format(
                a=0.2 + (i % 7) * 0.1, b=0.5 + (i % 5) * 0.1, h=k * 0.5, s=6 + (i + k) % 10
            )
            for k in range(2)
        ]
        with open(os.path.join(folder, f"m{i:05d}.vmodel"), "w") as f:
            f.write(
                '{\n  "veduta": "model/1",\n  "pivot": "bottom-center",\n  "parts": [\n    '
                + ",\n    ".join(parts)
                + "\n  ]\n}\n"
            )
    _settle(root)


def make_heavy_game(root: str, worlds: int = 4, textures: int = 16, models: int = 16) -> int:
    """The sample game (every kind, its references resolving) plus *worlds* copies of its world
    with other seeds, *textures* 512 x 512 textures with mip chains and *models* large models.
    Returns the number of sources."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets")
    shutil.copytree(here, os.path.join(root, "assets"), ignore=shutil.ignore_patterns(".cooked", "*.py"))
    with open(os.path.join(root, "dodo.py"), "w") as f:
        f.write("from veduta.dodo import *\n")
    world = open(os.path.join(here, "worlds", "valley.vworld"), encoding="utf-8").read()
    for i in range(worlds):
        with open(os.path.join(root, "assets", "worlds", f"valley_{i:02d}.vworld"), "w", encoding="utf-8") as f:
            f.write(world.replace('"seed": 20240611', f'"seed": {1000 + i}', 1))
    os.makedirs(os.path.join(root, "assets", "textures", "big"), exist_ok=True)
    for i in range(textures):
        with open(os.path.join(root, "assets", "textures", "big", f"big_{i:02d}.vtexture"), "w") as f:
            f.write(
                '{ "veduta": "texture/1", "size": [512, 512], "tiling": true, "layers": [\n'
                f'  {{ "type": "checker", "colors": ["#5a5a5a", "#8c8c{i:02x}"], "cell": {4 + i % 12} }},\n'
                '  { "type": "fill", "color": "#20ff8000" } ] }\n'
            )
    os.makedirs(os.path.join(root, "assets", "models", "big"), exist_ok=True)
    for i in range(models):
        with open(os.path.join(root, "assets", "models", "big", f"big_{i:02d}.vmodel"), "w") as f:
            f.write(
                '{ "veduta": "model/1", "pivot": "bottom-center",\n'
                '  "lod": [{ "distance": 20 }, { "distance": 40 }],\n'
                f'  "parts": [ {{ "shape": "sphere", "radius": 1, "segments": {80 + i}, "rings": 48 }},\n'
                '    { "shape": "lathe", "profile": [[0, 0], [1, 0.2], [0.5, 1], [0.8, 1.5], [0, 2]], '
                f'"segments": {48 + i}, "position": [2, 0, 0] }} ] }}\n'
            )
    _settle(root)
    n = 0
    for _, dirs, files in os.walk(os.path.join(root, "assets")):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        n += sum(f.endswith(SUFFIXES) for f in files)
    return n


def _settle(root: str) -> None:
    t = time.time() - 60  # out of the racy window, as files in a repo are
    for d, _, files in os.walk(os.path.join(root, "assets")):
        for f in files:
            os.utime(os.path.join(d, f), (t, t))


#: Child processes may write bytecode, as they do on a user's machine (an environment that says
#: PYTHONDONTWRITEBYTECODE would have every veduta and doit module compiled from source in every
#: process: a quarter of a second per no-op here, and none in the floors' small scripts).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _fresh(root: str, trash: str | None = None) -> None:
    """Back to a game that was never cooked (no cooked files, no cache).  With *trash*, what
    was there is moved into a new folder under it (deleted later by the caller) rather than
    deleted: on this machine's ext4 disk, creating files right after deleting tens of thousands
    costs 0.2 to 0.6 ms of system time a file instead of about 25 us, which would weigh on
    whichever first cook came after a deletion (every one but the first)."""
    for path in (os.path.join(root, "assets", ".cooked"), os.path.join(root, "cache"), os.path.join(root, "stamps")):
        if trash is None:
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.makedirs(trash, exist_ok=True)
            os.rename(path, os.path.join(trash, f"{len(os.listdir(trash))}"))
