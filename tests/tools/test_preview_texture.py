"""``veduta preview texture``: a tiling texture is shown tiled 2 x 2, so its seams can be checked."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.tools.picturegame import write_game
from veduta import api
from veduta.base.project import Project


def test_a_tiling_texture_is_shown_tiled_two_by_two(tmp_path):
    project = Project.at(str(write_game(tmp_path / "game")))
    r = api.preview_texture(project, "checker", None)
    assert r["tiled"] is True
    cell = next(c for c in r["cells"] if c["caption"] == "8x8")
    x0, y0, x1, y1 = cell["box"]
    img = np.asarray(Image.open(io.BytesIO(r["png"])).convert("RGBA"))[y0:y1, x0:x1]
    k = (x1 - x0) // 8  # shown k times
    assert (x1 - x0, y1 - y0) == (8 * k, 8 * k) and k > 1
    level0 = np.zeros((4, 4, 4), np.uint8)
    level0[..., 3] = 255
    for y in range(4):
        for x in range(4):
            level0[y, x, :3] = (255, 0, 0) if (x // 2 + y // 2) % 2 == 0 else (0, 0, 255)
    want = np.repeat(np.repeat(np.tile(level0, (2, 2, 1)), k, axis=0), k, axis=1)
    assert (img == want).all()
    # a texture that does not tile is not shown tiled
    r = api.preview_texture(project, "leaves", None)
    assert r["tiled"] is False and [c["caption"] for c in r["cells"]] == ["0: 4x4"]
