"""`veduta preview model`: the sheet's layout, colours, labels and deterministic bytes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from tests.export.helpers import sample_game
from veduta import api
from veduta.base.errors import VedutaError
from veduta.base.project import Project
from veduta.faces.cli.main import main
from veduta.tools.export import raster


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return Project.at(str(sample_game(tmp_path_factory.mktemp("sample"))))


def test_tree_sheet_has_four_views_and_two_levels(sample, tmp_path):
    out = tmp_path / "tree.png"
    r = api.preview_model(sample, "tree", str(out), size=64)
    assert r["views"] == ["front", "side", "top", "three-quarter"]
    assert [(lv["level"], lv["model"], lv["triangles"]) for lv in r["levels"]] == [
        (0, "tree", 152), (1, "tree", 40), (2, "tree_far", 20)]
    img = Image.open(out)
    assert img.size == (r["width"], r["height"]) and img.width > 6 * 64 and img.height > 64
    again = tmp_path / "again.png"
    api.preview_model(sample, "tree", str(again), size=64)
    assert out.read_bytes() == again.read_bytes()


def _red(img: np.ndarray, least: int = 150) -> int:
    return int(((img[:, :, 0] > least) & (img[:, :, 1] < 100)).sum())


def test_views_show_the_model_in_its_material_colours():
    # one red 1 m quad facing +Z, around the origin
    quad_z = np.array([[[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0]],
                       [[-0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]]])
    normals = np.zeros_like(quad_z)
    normals[..., 2] = 1
    red = np.array([[1.0, 0, 0]] * 2)
    sided = np.zeros(2, bool)
    centre = np.zeros(3)
    front = raster.render(quad_z, normals, red, sided, raster.VIEWS["front"], centre, 20.0, 64)
    mid = front[32, 32]
    assert mid[0] > 150 and mid[1] < 30 and mid[2] < 30  # red, lit
    assert tuple(front[2, 2]) == (236, 238, 240)  # background
    assert _red(front) == pytest.approx(20 * 20, rel=0.15)  # 1 m at 20 px per metre
    # from behind a back-face-culled quad vanishes; a two-sided one shows
    back_view = raster.rot_y(180)
    assert _red(raster.render(quad_z, normals, red, sided, back_view, centre, 20.0, 64)) == 0
    assert _red(raster.render(quad_z, normals, red, ~sided, back_view, centre, 20.0, 64), 60) > 300


def test_nearer_triangles_hide_farther_ones():
    tri = np.array([[[-1, -1, 0], [1, -1, 0], [0, 1, 0]]], float)
    near = tri + [0, 0, 0.5]
    pos = np.concatenate([near, tri])  # near first, then far: the far one must not overwrite it
    nrm = np.zeros_like(pos)
    nrm[..., 2] = 1
    cols = np.array([[0, 0, 1.0], [1.0, 0, 0]])
    img = raster.render(pos, nrm, cols, np.zeros(2, bool), raster.VIEWS["front"], np.zeros(3), 20, 64)
    assert img[32, 32, 2] > 150 and img[32, 32, 0] < 30


def test_missing_model_and_bad_size(sample, tmp_path, capsys, monkeypatch):
    with pytest.raises(VedutaError, match='no model "ghost"'):
        api.preview_model(sample, "ghost", str(tmp_path / "g.png"))
    monkeypatch.chdir(sample.root)
    assert main(["preview", "model", "ghost", "--out", str(tmp_path / "g.png")]) == 2  # unknown asset: usage
    assert "Traceback" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["preview", "model", "tree", "--out", str(tmp_path / "t.png"), "--size", "8"])
    assert main(["preview", "model", "crate", "--out", str(tmp_path / "c.png"), "--size", "48", "--json"]) == 0
    assert '"levels"' in capsys.readouterr().out and (tmp_path / "c.png").exists()
