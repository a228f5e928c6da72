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
    cp = subprocess.run([sys.executable, "-m", "veduta", "--version"], capture_output=True, text=True)
    assert cp.returncode == 0 and cp.stdout == f"veduta {want} ({veduta.COMPILER_VERSION})\n"


def test_kinds_are_declared_once():
    from veduta.base.kinds import KINDS, NAMES
    from veduta.container import meta
    from veduta.formats import BODIES, KIND_CHUNK

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


def test_python_dash_m_veduta_and_shipped_files():
    cp = subprocess.run([sys.executable, "-m", "veduta", "--version"], capture_output=True, text=True)
    assert cp.returncode == 0 and cp.stdout.startswith("veduta ")
    assert (ROOT / "veduta" / "py.typed").exists() and "MIT License" in (ROOT / "LICENSE").read_text()


def test_an_output_named_for_another_format_is_refused(game):
    for args in (
        ["preview", "texture", "crate", "--out", "x.jpg"],
        ["world", "map", "valley", "--out", "m.jpeg"],
        ["preview", "model", "crate", "--out", "x.jpg"],
        ["export", "gltf", "crate", "--out", "x.gltf"],
    ):
        cp = subprocess.run([sys.executable, "-m", "veduta", *args], cwd=game.root, capture_output=True, text=True)
        assert cp.returncode == 2 and "so its name must end in ." in cp.stderr, cp.stderr
        assert "Traceback" not in cp.stderr
    assert not list(game.root.glob("*.jp*g")) and not list(game.root.glob("*.gltf"))


def test_world_reader_messages_name_the_item_and_field():
    import pytest

    from veduta.base.errors import VdaError
    from veduta.compile import CompileContext, compile_source
    from veduta.formats import decode, encode
    from veduta.formats.world import World
    from veduta.source.diagnostics import Report

    src = (ROOT / "assets/worlds/valley.vworld").read_bytes()
    world = compile_source(
        "world",
        src,
        CompileContext(str(ROOT / "assets"), "worlds/valley.vworld", "world", "valley", Report("valley.vworld")),
    )
    assert world is not None and world.features
    bad = world.replace(features=[world.features[0], world.features[-1].replace(height=2000.0)])
    with pytest.raises(VdaError, match=r"World\.features: features\[1\]\.height 2000\.0 out of range \[-1024, 1024\]"):
        decode(World, encode(bad))


def test_the_readme_dodo_that_merges_doit_config(game):
    readme = (ROOT / "README.md").read_text()
    start = readme.index("from veduta.dodo import *  # task_cook, DOIT_CONFIG")
    dodo = readme[start : readme.index("```", start)]
    (game.root / "dodo.py").write_text(dodo)
    cp = game.doit()  # the default tasks: cook, then package
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "cook: 4 cooked" in cp.stdout and (game.root / "game.zip").exists()


def test_exit_codes_are_as_the_readme_says(game):
    assert game.cook().returncode == 0
    game.write("models/bad.vmodel", "[1, 2")
    assert game.cook().returncode == 1  # a source failed (the cook group with it)
    assert game.doit("cook:models/bad.vmodel").returncode == 1
    assert game.doit("--no-such-option").returncode == 3
    (game.root / "pyproject.toml").write_text('[tool.veduta]\nnope = "x"\n')
    assert game.cook().returncode == 2
