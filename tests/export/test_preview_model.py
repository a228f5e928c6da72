"""`veduta preview model`: the sheet's views, textures, grid, labels and deterministic bytes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.export.helpers import sample_game
from tests.tools.picturegame import CHECKER, LEAF, write_game
from veduta import api
from veduta.base.errors import VedutaError
from veduta.base.project import Project
from veduta.faces.cli.main import main
from veduta.tools.preview_model import GRID, grid_step


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return Project.at(str(sample_game(tmp_path_factory.mktemp("sample"))))


@pytest.fixture(scope="module")
def pictures(tmp_path_factory):
    return Project.at(str(write_game(tmp_path_factory.mktemp("pictures") / "game")))


def test_tree_sheet_has_four_views_and_two_levels(sample, tmp_path):
    out = tmp_path / "tree.png"
    r = api.preview_model(sample, "tree", str(out), size=64)
    assert r["views"] == ["front", "side", "top", "perspective"]
    assert [(lv["level"], lv["model"], lv["triangles"]) for lv in r["levels"]] == [
        (0, "tree", 152),
        (1, "tree", 40),
        (2, "tree_far", 20),
    ]
    img = Image.open(out)
    assert img.size == (r["width"], r["height"]) and img.width > 6 * 64 and img.height > 64
    assert out.read_bytes() == r["png"]
    assert api.preview_model(sample, "tree", None, size=64)["png"] == r["png"]  # the same bytes again
    assert {m["material"]: m["albedo"] for m in r["materials"]} == {"bark": "#6b4a2b", "leaf": "#3f8f3a"}


def _cells(r: dict) -> list[np.ndarray]:
    """The view cells of a sheet, where the result says they are."""
    img = np.asarray(Image.open(io.BytesIO(r["png"])).convert("RGB"))
    return [img[b[1] : b[3], b[0] : b[2]] for b in (c["box"] for c in r["cells"])]


def test_a_textured_face_shows_the_texture_pixels(pictures):
    r = api.preview_model(pictures, "cube", None, size=96)
    cells = _cells(r)
    assert [c["caption"] for c in r["cells"]] == [
        "front (from +Z)",
        "side (from +X)",
        "top (from +Y, north up)",
        "perspective: 12 triangles",
    ]
    assert all(c.shape == (96, 96, 3) for c in cells)
    top = cells[2]
    face = r["scale_px_per_m"] ** 2  # the top face's pixels: 1 m square
    for colour in CHECKER:  # the top face is the checker texture, half red and half blue squares, unlit
        n = int((top == colour).all(axis=2).sum())
        assert 0.4 * face < n < 0.5 * face, (colour, n)
    assert r["materials"] == [
        {
            "material": "checker",
            "status": "ok",
            "albedo": "#ffffff",
            "texture": "checker",
            "alpha": "opaque",
            "filter": "nearest",
            "texture_average": "#800080",
            "colour": "#800080",
        }
    ]


def test_cutout_pixels_are_not_drawn(pictures):
    r = api.preview_model(pictures, "card", None, size=96)
    top = _cells(r)[2]
    leaf = (top == LEAF).all(axis=2)
    ys, xs = np.nonzero(leaf)
    # the card is 1 m square; its texture is opaque on the left half only
    assert leaf.sum() > 0 and xs.max() < 48 <= xs.max() + 20 and ys.max() - ys.min() > 2 * (xs.max() - xs.min()) - 8


def test_the_ground_grid_and_its_spacing(pictures):
    r = api.preview_model(pictures, "cube", None, size=96)
    assert r["grid_m"] == grid_step(1.0) == 0.1
    top = _cells(r)[2]
    # grid lines around the cube in the top view (the cube hides them in the middle)
    assert int((np.abs(top.astype(int) - GRID).sum(axis=2) < 40).sum()) > 200
    assert grid_step(8.0) == 1.0 and grid_step(100.0) == 10.0


def test_missing_model_and_bad_size(sample, tmp_path, capsys, monkeypatch):
    with pytest.raises(VedutaError, match='no model "ghost"'):
        api.preview_model(sample, "ghost", str(tmp_path / "g.png"))
    with pytest.raises(VedutaError, match="size 8 out of range"):
        api.preview_model(sample, "tree", None, size=8)
    monkeypatch.chdir(sample.root)
    assert main(["preview", "model", "ghost", "--out", str(tmp_path / "g.png")]) == 2  # unknown asset: usage
    assert "Traceback" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["preview", "model", "tree", "--out", str(tmp_path / "t.png"), "--size", "8"])
    assert main(["preview", "model", "crate", "--out", str(tmp_path / "c.png"), "--size", "48", "--json"]) == 0
    assert '"levels"' in capsys.readouterr().out and (tmp_path / "c.png").exists()
