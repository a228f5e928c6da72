"""The platform: one source of truth per fact, the package as a user installs and runs it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_comes_from_the_installed_metadata():
    import veduta

    want = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert veduta.__version__ == want
    cp = subprocess.run([sys.executable, "-m", "veduta.cli", "--version"], capture_output=True, text=True)
    assert cp.returncode == 0 and cp.stdout == f"veduta {want} ({veduta.COMPILER_VERSION})\n"


def test_kinds_are_declared_once():
    from veduta.container import meta
    from veduta.formats import BODIES, KIND_CHUNK
    from veduta.kinds import KINDS, NAMES

    assert meta.KINDS is NAMES and NAMES == tuple(k.name for k in KINDS)
    assert KIND_CHUNK == {k.name: k.chunk for k in KINDS}
    assert set(BODIES) == set(KIND_CHUNK.values())


def test_the_vertex_layout_is_declared_once():
    import importlib

    from veduta.formats import mesh

    types = importlib.import_module("veduta.compile.model.types")

    assert types.VERTEX_DTYPE is mesh.VERTEX_DTYPE


def test_importing_the_dodo_module_creates_nothing(tmp_path):
    cp = subprocess.run([sys.executable, "-c", "import veduta.dodo"], cwd=tmp_path, capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr
    assert list(tmp_path.iterdir()) == []
