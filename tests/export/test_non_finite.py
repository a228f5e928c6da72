"""Cooked files holding a NaN or an infinity in a float (hostile4 #4). The container spec lets an
f32 be any bit pattern, so ``veduta verify`` calls such a file whole; ``veduta dump --full``
spells each non-finite value as a string ("nan", "inf", "-inf") and stays JSON; a glTF export
(CLI and MCP), whose numbers must be finite, refuses the model naming the file and the value."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.gamerepo import CRATE, TREE, TREE_FAR
from veduta import api
from veduta.base.project import Project
from veduta.formats.asset import encode_asset, read_asset_file


def _strict_json(text: str):
    def refuse(name: str):
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _spoil(path, index: int = 0) -> None:
    """Vertex *index* of the cooked model at *path* gets x = NaN, y = +inf (the CRC redone,
    the META untouched: the file stays fresh)."""
    asset = read_asset_file(str(path))
    verts = np.array(asset.body.vertices)
    verts["position"][index, :2] = [np.nan, np.inf]
    object.__setattr__(asset.body, "vertices", verts)
    path.write_bytes(encode_asset(asset))


@pytest.fixture
def spoiled(game):
    game.write("models/crate.vmodel", CRATE)
    game.write("models/tree.vmodel", TREE)
    game.write("models/tree_far.vmodel", TREE_FAR)
    assert game.cook().returncode == 0
    for name in ("crate", "tree_far"):
        _spoil(game.cooked(f"models/{name}.vda"))
    return game


CRATE_TEXT = (
    "model crate cannot be exported: its cooked file assets/.cooked/models/crate.vda holds a non-finite "
    "number (MESH vertices[0].position[0] is nan; glTF takes finite numbers only)"
)


def test_verify_dump_and_export_of_non_finite_floats(spoiled, tmp_path):
    g = spoiled
    cp = g.veduta("verify", "assets/.cooked/models/crate.vda")
    assert cp.returncode == 0 and "ok, model crate" in cp.stdout  # the spec allows any f32
    assert "fresh" in g.veduta("list").stdout.split("crate")[0].splitlines()[-1]
    cp = g.veduta("dump", "--full", "assets/.cooked/models/crate.vda")
    assert cp.returncode == 0
    body = _strict_json(cp.stdout)["chunks"][1]["body"]
    assert body["vertices"][0]["position"][:2] == ["nan", "inf"]
    assert all(isinstance(v, float | int) for vert in body["vertices"][1:] for v in vert["position"])
    _strict_json(g.veduta("dump", "assets/.cooked/models/crate.vda").stdout)

    out = tmp_path / "c.glb"
    cp = g.veduta("export", "gltf", "crate", "--out", str(out))
    assert (cp.returncode, cp.stdout, cp.stderr) == (1, "", f"veduta: {CRATE_TEXT}\n")
    assert not out.exists()
    # a level of detail in that state is left out with a warning, as a broken one is
    summary = api.export_gltf(Project.at(str(g.root)), str(tmp_path / "t.glb"), model="tree")
    assert [m["name"] for m in summary["meshes"]] == ["tree", "tree_lod1"]
    (f,) = summary["findings"]
    assert f["code"] == "EXPORT_MODEL_INVALID" and f["message"].startswith(
        "model tree_far cannot be exported: its cooked file assets/.cooked/models/tree_far.vda holds a non-finite "
        "number (MESH vertices[0].position[0] is nan;"
    )


def test_mcp_export_gltf_of_non_finite_floats_is_a_tool_error(spoiled):
    pytest.importorskip("mcp")
    from tests.test_mcp import serve, text_of

    async def body(s):
        return await s.call_tool("export_gltf", {"model": "crate", "out": "c.glb"})

    r = serve(spoiled.root, body)
    assert r.is_error and text_of(r) == f"Error executing tool export_gltf: {CRATE_TEXT}"
    assert not (spoiled.root / "c.glb").exists()


PREVIEW_TEXT = (
    "model {} cannot be drawn: its cooked file assets/.cooked/models/{}.vda holds a non-finite "
    "number (MESH vertices[0].position[0] is nan; a preview draws finite numbers only)"
)


@pytest.fixture
def spoiled_world(tmp_path):
    """The flat picture game (a hut prefab of model cube in view), cooked, cube's cooked file spoiled."""
    from tests.tools.picturegame import flat_world, write_game

    root = write_game(tmp_path / "flat", flat_world(places=[{"name": "home", "prefab": "hut", "cell": [3, -2]}]))
    assert api.cook(Project.at(str(root)), [], 1)["ok"]
    _spoil(root / "assets/.cooked/models/cube.vda")
    return root


def test_preview_of_non_finite_floats_is_refused_as_the_export_is(spoiled, spoiled_world, tmp_path):
    """preview model and preview world drew NaN positions (a garbage picture, a RuntimeWarning):
    the model drawn is refused with one line, exit 1, as export gltf refuses it; a level of detail
    in that state, or a model a world's view draws, is left out with a warning, as the export
    leaves it out."""
    out = tmp_path / "c.png"
    cp = spoiled.veduta("preview", "model", "crate", "--out", str(out))
    assert (cp.returncode, cp.stdout, cp.stderr) == (1, "", f"veduta: {PREVIEW_TEXT.format('crate', 'crate')}\n")
    assert not out.exists()
    tree = api.preview_model(Project.at(str(spoiled.root)), "tree")
    assert [lv["model"] for lv in tree["levels"]] == ["tree", "tree"]
    (f,) = tree["findings"]
    assert f["code"] == "EXPORT_MODEL_INVALID" and f["message"] == (
        PREVIEW_TEXT.format("tree_far", "tree_far") + " (used by level 2 of model tree)"
    )
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "preview", "world", "flat", "--out", str(out), "--json"],
        cwd=spoiled_world,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # the world's picture is drawn without that model, with a warning (as a broken model is left
    # out, and as export gltf --world leaves it out)
    assert cp.returncode == 0, cp.stderr
    got = json.loads(cp.stdout)
    (f,) = [f for f in got["findings"] if f["code"] == "EXPORT_MODEL_INVALID"]
    assert f["message"].startswith(PREVIEW_TEXT.format("cube", "cube")), f
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # ... and not counted as drawn (its triangles not in the figures beside a picture without it)
    assert "cube" not in [m["model"] for m in got["models"]], got["models"]


def test_mcp_preview_of_non_finite_floats_is_a_tool_error(spoiled, spoiled_world):
    pytest.importorskip("mcp")
    from tests.test_mcp import serve, text_of

    async def model(s):
        return await s.call_tool("preview_model", {"model": "crate"})

    async def world(s):
        return await s.call_tool("preview_world", {"world": "flat"})

    r = serve(spoiled.root, model)
    assert r.is_error and text_of(r) == f"Error executing tool preview_model: {PREVIEW_TEXT.format('crate', 'crate')}"
    r = serve(spoiled_world, world)
    assert not r.is_error
    assert PREVIEW_TEXT.format("cube", "cube") in json.dumps([c.model_dump() for c in r.content]), r


def test_first_non_finite_finds_a_float_among_plain_items():
    """Lists of plain items (frames, indices, names) are passed over in one test, a float among
    them is still found, with its place."""
    from veduta.formats.codec import first_non_finite

    assert first_non_finite([1, 2, 3] * 1000) is None
    assert first_non_finite(["a", "b"], "names") is None
    assert first_non_finite([1, 2, float("nan")], "frames") == "frames[2] is nan"
    assert first_non_finite([[1, 2], [3, float("-inf")]], "clips") == "clips[1][1] is -inf"
    assert first_non_finite((0.5, np.float32("inf")), "edge") == "edge[1] is inf"
