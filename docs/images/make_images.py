"""``make images``: the example pictures of the docs, made by the tools from the sample game.

Each is what the command beside it writes in a fresh copy of ``assets/`` (cooked first); the
bytes are the same on every machine with the same Pillow.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

#: file -> the veduta command that draws it (``--out`` is added)
IMAGES = {
    "world-map.png": ["world", "map", "valley", "--at", "-60,0", "--cells", "128,96", "--scale", "4"],
    "inspect-sheet.png": ["inspect", "world", "valley", "--sheet"],
    "preview-model-house.png": ["preview", "model", "house"],
    "preview-model-tree.png": ["preview", "model", "tree"],
    "preview-texture-crate.png": ["preview", "texture", "crate"],
    "preview-world-village.png": ["preview", "world", "valley", "--at", "-66,4"],
}


def main() -> int:
    sys.path.insert(0, REPO)
    from bench.games import sample_game

    with tempfile.TemporaryDirectory() as tmp:
        root = sample_game(os.path.join(tmp, "game"))
        subprocess.run([sys.executable, "-m", "veduta", "cook"], cwd=root, check=True, stdout=subprocess.DEVNULL)
        for name, args in IMAGES.items():
            out = os.path.join(tmp, name)
            if args[-1] != "--sheet":
                args = [*args, "--out"]
            subprocess.run(
                [sys.executable, "-m", "veduta", *args, out], cwd=root, check=True, stdout=subprocess.DEVNULL
            )
            shutil.copyfile(out, os.path.join(HERE, name))
            print(f"docs/images/{name}: {os.path.getsize(out):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
