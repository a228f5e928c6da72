"""``veduta preview texture``: a tiling texture is shown tiled 2 x 2, so its seams can be checked."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tests.tools.picturegame import write_game
from veduta import api
from veduta.base.project import Project
from veduta.tools.preview_texture import PAD


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


# -- the picture's size is bounded (hostile4 #5) -------------------------------------------------


def sheet_record(size: int, grid: int, clips: int, frames: int):
    """A sprite sheet source of *clips* clips of *frames* frames each (a checker, no PNG)."""
    src = {
        "veduta": "texture/1",
        "size": [size, size],
        "layers": [{"type": "checker", "colors": ["#ff0000", "#00ff00"], "cell": 4}],
        "grid": [grid, grid],
        "clips": {
            f"c{i:03}": {"frames": [(i * frames + k) % (grid * grid) for k in range(frames)]} for i in range(clips)
        },
    }
    return src


def compiled(tmp_path, src):
    import json

    from tests.compile.helpers import compile_in

    tex, ctx = compile_in(tmp_path, {"textures/sheet.vtexture": json.dumps(src)}, "textures/sheet.vtexture")
    assert tex is not None
    return tex


def test_the_repro_sheet_is_planned_within_the_bound_before_anything_is_drawn(tmp_path):
    """The shape of hostile4 #5 (a 256 x 256 grid, 256 clips of 4,096 frames: a 435 M-pixel
    picture before) on a small texture, with 300 frames a clip (more than the MAX_FRAMES a clip
    row shows, so the picture would be as large): the plan stays within MAX_PIXELS and counts
    what it left out."""
    from veduta.tools.preview_texture import MAX_FRAMES, MAX_PIXELS, plan_sheet

    tex = compiled(tmp_path, sheet_record(256, 256, 256, 300))
    sheet, left_out = plan_sheet(tex)
    shown = 256 - left_out["clips_left_out"]
    w, h = sheet.size()
    assert w * h <= MAX_PIXELS and 0 < shown < 256
    # every clip row is at least a heading, a frame and its caption high: all 256 could not fit
    cell_h = max(c.height for _, cells in sheet.rows for c in cells)
    assert 256 * (2 * sheet.line + cell_h + PAD) * w > MAX_PIXELS
    headings = [head for head, _ in sheet.rows if head]
    assert headings[-1] == f"... {256 - shown} more clips not shown (the picture is kept within {MAX_PIXELS:,} pixels)"
    clip_heads = [x for x in headings if x.startswith("clip ")]
    assert len(clip_heads) == shown and clip_heads[0].startswith("clip c000: 8 fps, loop")
    assert clip_heads[-1].endswith(" of 300 frames shown")
    assert all(x.endswith(f", the first {MAX_FRAMES} of 300 frames shown") for x in clip_heads[:-1])


def test_a_cut_picture_is_the_top_of_the_full_one_and_says_what_is_left_out(tmp_path, monkeypatch):
    """With a small bound: the same cells in the same places as without it, up to the cut; the
    drawn picture has the planned size; clips_left_out counts the clips without a row."""
    from veduta.tools import preview_texture as pt

    tex = compiled(tmp_path, sheet_record(32, 8, 12, 40))
    full_boxes: list = []
    full_counts: dict = {}
    full = pt.preview_image(tex, full_boxes, full_counts)
    assert full_counts == {"clips_left_out": 0, "frames_left_out": 0, "tiled_left_out": False}
    assert full.width * full.height > 1_500_000
    monkeypatch.setattr(pt, "MAX_PIXELS", 1_500_000)
    boxes: list = []
    counts: dict = {}
    img = pt.preview_image(tex, boxes, counts)
    assert img.width * img.height <= 1_500_000
    shown = 12 - counts["clips_left_out"]
    assert 0 < shown < 12
    assert boxes == full_boxes[: len(boxes)] and len(boxes) < len(full_boxes)
    before_clips = 1 + 64  # level 0 and the 8 x 8 frames
    shown_frames = len(boxes) - before_clips
    assert (shown - 1) * 40 < shown_frames <= shown * 40
    assert (np.asarray(img)[: boxes[-1][1][3]] == np.asarray(full)[: boxes[-1][1][3], : img.width]).all()


def big_sheet(grid: int, clips: int) -> dict:
    """A 2048 x 2048 tiling sprite sheet with its mip chain: the largest the format allows."""
    src = sheet_record(2048, grid, clips, 300)
    return src | {"tiling": True, "mipmaps": True}


@pytest.mark.parametrize("grid, clips", [(1, 0), (2, 3), (64, 256)])
def test_no_part_of_the_sheet_passes_the_bound(tmp_path, grid, clips):
    """Only clip rows were cut: the mip chain, the tiled view (4096 x 4096 for this texture) and
    the frame table were always drawn, 4118 x 9690 pixels (39.9 M, 0.7 GB) for one frame, 4118 x
    11864 (48.9 M) for a 2 x 2 grid. The tiled view and the table's rows are now left out as clip
    rows are, and the last line and the counts say so; the drawn picture is the planned one."""
    from veduta.tools.preview_texture import MAX_PIXELS, plan_sheet, preview_image

    tex = compiled(tmp_path, big_sheet(grid, clips))
    sheet, left = plan_sheet(tex)
    w, h = sheet.size()
    assert w * h <= MAX_PIXELS
    boxes: list = []
    counts: dict = {}
    img = preview_image(tex, boxes, counts)
    assert (img.width, img.height) == (w, h) and counts == left
    # (these square grids' tables fit under the mip chain; a [2, 8] grid's does not: one frame is cut)
    assert left["tiled_left_out"] is True and left["frames_left_out"] == 0
    assert not any(cap == "4096x4096" for cap, _ in boxes)
    clips_said = f", {left['clips_left_out']} clips" if left["clips_left_out"] else ""
    assert [head for head, _ in sheet.rows if head][-1] == (
        f"... not shown: the tiled view{clips_said} (the picture is kept within {MAX_PIXELS:,} pixels)"
    )
    assert (left["clips_left_out"] > 0) == (clips > 0)


def test_a_tall_grid_of_the_largest_sheet_cuts_its_table(tmp_path):
    """At the format's limits the table does not always fit: a 2048 x 2048 tiling sheet with its
    mip chain and a [2, 8] grid (16 frames of 1024 x 256) leaves one frame out, and says so."""
    from veduta.tools.preview_texture import MAX_PIXELS, plan_sheet

    tex = compiled(tmp_path, big_sheet(1, 0) | {"grid": [2, 8]})
    sheet, left = plan_sheet(tex)
    w, h = sheet.size()
    assert w * h <= MAX_PIXELS
    assert left == {"clips_left_out": 0, "frames_left_out": 1, "tiled_left_out": True}
    assert [head for head, _ in sheet.rows if head][-1] == (
        f"... not shown: the tiled view, 1 frame of the table (the picture is kept within {MAX_PIXELS:,} pixels)"
    )


def test_the_frame_table_is_cut_and_said_so(tmp_path, monkeypatch):
    """A bound the frame table passes (a small one here; at the format's limits a 2048 x 2048 sheet
    of a [2, 8] grid passes it too):
    as many of its rows as fit, its heading saying how many frames, every clip left out, and
    the command's line and --json saying what was left out."""
    import json

    from veduta.tools import preview_texture as pt

    tex = compiled(tmp_path, sheet_record(32, 8, 3, 10) | {"tiling": True})
    monkeypatch.setattr(pt, "MAX_PIXELS", 950_000)
    sheet, left = pt.plan_sheet(tex)
    w, h = sheet.size()
    assert w * h <= 950_000
    assert left["tiled_left_out"] is False and 0 < left["frames_left_out"] < 64 and left["clips_left_out"] == 3
    shown = 64 - left["frames_left_out"]
    heads = [head for head, _ in sheet.rows if head]
    assert heads[-2].startswith("frames: 8 x 8 grid of 4 x 4") and heads[-2].endswith(f", the first {shown} shown")
    assert sum(len(cells) for head, cells in sheet.rows[2:-1]) == shown
    assert heads[-1] == (
        f"... not shown: {64 - shown} frames of the table, 3 clips (the picture is kept within 950,000 pixels)"
    )
    from veduta.faces.cli import main as cli

    project = write_game(tmp_path / "game")
    (project / "assets/textures/sheet.vtexture").write_text(json.dumps(sheet_record(32, 8, 3, 10) | {"tiling": True}))
    got = api.preview_texture(Project.at(str(project)), "sheet", None)
    assert (got["tiled_left_out"], got["frames_left_out"], got["clips_left_out"]) == (False, 64 - shown, 3)
    monkeypatch.chdir(project)
    out = tmp_path / "s.png"
    import contextlib
    import io as _io

    buf = _io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(["preview", "texture", "sheet", "--out", str(out)]) == 0
    assert buf.getvalue() == (  # (the bound as it is: it said 4096 x 4096 whatever MAX_PIXELS was)
        f"wrote {out} ({64 - shown} frames of the table, 3 of 3 clips left out: the picture is kept within "
        "950,000 pixels)\n"
    )
    monkeypatch.setattr(pt, "MAX_PIXELS", 900 * 900)
    buf = _io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli.main(["preview", "texture", "sheet", "--out", str(out)]) == 0
    assert buf.getvalue().endswith(" left out: the picture is kept within 900 x 900 pixels)\n")


def test_the_bound_in_words():
    from veduta.tools.preview_texture import MAX_PIXELS, bound_text

    assert MAX_PIXELS == 4096 * 4096 and bound_text() == "4096 x 4096"  # (docs/export.md says it)
    assert bound_text(950_000) == "950,000" and bound_text(1) == "1 x 1"
    # the MCP tool's schema says it too (written out there: the server does not import PIL to start)
    from typing import get_type_hints

    from veduta.faces.mcp.outputs import PreviewTexture

    said = get_type_hints(PreviewTexture, include_extras=True)["clips_left_out"].__metadata__[0].description
    assert said.endswith(f"kept within {bound_text()} pixels")
