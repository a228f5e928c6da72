"""A temporary game repo for end-to-end tests (the `game` fixture in tests/conftest.py).

Its models name no material (it has none: a missing one would be a warning on every cook;
tests/cook/test_check_why.py tests part materials)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CRATE = """{
  "veduta": "model/1",
  "pivot": "bottom-center",
  "parts": [ { "shape": "box", "size": [1, 1, 1], "position": [0, 0.5, 0] } ]
}
"""

TREE = """{
  "veduta": "model/1",
  "pivot": "bottom-center",
  "lod": [ { "distance": 15 }, { "distance": 35, "model": "tree_far" } ],
  "draw_distance": 80,
  "parts": [
    { "shape": "cylinder", "radius": 0.15, "height": 1.2, "segments": 8, "position": [0, 0.6, 0] },
    { "shape": "sphere", "radius": 0.7, "segments": 12, "rings": 6, "position": [0, 1.6, 0] }
  ]
}
"""

TREE_FAR = """{
  "veduta": "model/1",
  "pivot": "bottom-center",
  "parts": [ { "shape": "cylinder", "radius": 0.6, "height": 2.2, "segments": 4, "position": [0, 1.1, 0] } ]
}
"""

BARREL = """{
  "veduta": "model/1",
  "parts": [ { "shape": "cylinder", "radius": 0.4, "height": 1, "segments": 16 } ]
}
"""

BAD = """{
  "veduta": "model/1",
  "parts": [
    { "shape": "box", "size": [1, 1, 1], "radius": 0.5 },
    { "shape": "cylinder", "radius": 0.2, "height": 1, "segments": 2 },
    { "shape": "mirror", "axis": "x", "of": 7 }
  ]
}
"""


class Game:
    """A temporary game repo with a one-line dodo.py, driven through doit as a user would."""

    def __init__(self, root: Path):
        self.root = root
        (root / "dodo.py").write_text("from veduta.dodo import *\n")

    def write(self, rel: str, text: str, assets: str = "assets") -> Path:
        p = self.root / assets / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return p

    def cooked(self, rel: str, cooked: str = "assets/.cooked") -> Path:
        return self.root / cooked / rel

    def doit(self, *args: str, env: dict | None = None, check: bool | None = None) -> subprocess.CompletedProcess:
        e = dict(os.environ)
        e.update(env or {})
        cp = subprocess.run(
            [sys.executable, "-m", "doit", *args], cwd=self.root, env=e, capture_output=True, text=True, timeout=300
        )
        if check is True:
            assert cp.returncode == 0, cp.stdout + cp.stderr
        return cp

    def veduta(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        """The ``veduta`` command in the game root (``$VEDUTA_FORMAT`` unset unless *env* sets it)."""
        e = dict(os.environ)
        e.pop("VEDUTA_FORMAT", None)
        e.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "veduta", *args], cwd=self.root, capture_output=True, text=True, timeout=300, env=e
        )

    def cook(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return self.doit(*args, "cook", **kw) if not args or args[0].startswith("-") else self.doit(*args, **kw)

    def snapshot(self, cooked: str = "assets/.cooked") -> dict[str, tuple[int, int, bytes]]:
        out = {}
        base = self.root / cooked
        for p in sorted(base.rglob("*.vda")):
            st = p.stat()
            out[str(p.relative_to(base))] = (st.st_ino, st.st_mtime_ns, p.read_bytes())
        return out


def make_game(tmp_path) -> Game:
    (tmp_path / "game").mkdir()
    g = Game(tmp_path / "game")
    g.write("models/crate.vmodel", CRATE)
    g.write("models/props/barrel.vmodel", BARREL)
    g.write("models/tree.vmodel", TREE)
    g.write("models/tree_far.vmodel", TREE_FAR)
    return g


#: the repository (its sample game is in assets/)
REPO = Path(__file__).resolve().parents[1]


def sample_game(dest: Path) -> Game:
    """A copy of the repository's sample game (its sources, nothing cooked) at *dest*."""
    from bench import games

    games.sample_game(dest)
    return Game(dest)


def memory_limit(nbytes: int):
    """A ``preexec_fn`` that caps the child's address space at *nbytes* (RLIMIT_AS), as
    ``ulimit -v`` does: for tests of what a command does when memory is short."""

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))

    return limit


#: Python source of ``wait_for_gate(note)``, for a server a test starts with ``python -c`` (which
#: imports os and time): append the line *note* to the file $GATE.started, then wait until the file
#: $GATE exists (at most 300 s).
GATE_WAIT = """
def wait_for_gate(note):
    with open(os.environ["GATE"] + ".started", "a") as f:
        f.write(note + "\\n")
    for _ in range(30000):
        if os.path.exists(os.environ["GATE"]):
            break
        time.sleep(0.01)
"""
