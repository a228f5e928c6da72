"""Maps that explain themselves: legend swatches from the ground materials, a frame in cells, a
scale bar, a title, named sites and places, labels that neither overlap nor leave the map."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from tests.tools.picturegame import RED, SPECKLE_AVERAGE, flat_world, write_game
from veduta import api
from veduta.base.project import Project
from veduta.tools.mapimage import PLACE, Mark, _font, place_labels


def _game(tmp_path, **over) -> Project:
    return Project.at(str(write_game(tmp_path / "game", flat_world(**over))))


def _png(r: dict) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(r["png"])).convert("RGB"))


def _inside(box, outer) -> bool:
    return outer[0] <= box[0] and outer[1] <= box[1] and box[2] <= outer[2] and box[3] <= outer[3]


def test_legend_swatches_have_the_ground_materials_colours(tmp_path):
    # the biome names say nothing of their colour: "forest" stands on red ground
    biomes = [
        {"name": "forest", "ground": "red_ground", "weight": 1},
        {"name": "zone_a", "ground": "speckle_ground", "weight": 1},
        {"name": "ghostly", "ground": "no_such_material", "weight": 1},
    ]
    r = api.world_map(_game(tmp_path, biomes=biomes), "flat", (0, 0), (64, 64), 4)
    img = _png(r)
    swatch = {e["name"]: e for e in r["legend"] if e["kind"] == "biome"}
    assert [swatch[b]["colour"] for b in ("forest", "zone_a", "ghostly")] == ["#b03020", "#3050d0", "#808080"]
    for name, rgb in (("forest", RED), ("zone_a", SPECKLE_AVERAGE), ("ghostly", (128, 128, 128))):
        x0, y0, x1, y1 = swatch[name]["box"]
        assert tuple(img[(y0 + y1) // 2, (x0 + x1) // 2]) == rgb, name
    assert [(b["biome"], b["material"], b["status"]) for b in r["biomes"]] == [
        ("forest", "red_ground", "ok"),
        ("zone_a", "speckle_ground", "ok"),
        ("ghostly", "no_such_material", "missing"),
    ]
    assert r["biomes"][1]["texture"] == "speckle" and r["biomes"][1]["texture_average"] == "#3050d0"
    # and the map's cells are those colours (flat ground: no shading)
    left, top = r["map_box"][:2]
    cells = img[top : r["map_box"][3] : 4, left : r["map_box"][2] : 4].reshape(-1, 3)
    colours = {tuple(c) for c in cells.tolist()}
    assert {RED, SPECKLE_AVERAGE} <= colours


def test_the_frame_title_and_scale_bar(tmp_path):
    r = api.world_map(_game(tmp_path), "flat", (10, -6), (64, 48), 4)
    assert r["title"] == (
        "world flat, seed 5: 64 x 48 cells around cell [10, -6], cells of 1 m (64 x 48 m), 4 px per cell"
    )
    assert r["origin"] == [-22, -30] and r["scale"] == 4 and r["ticks"] == 16 and r["scale_bar_m"] == 10
    left, top, right, bottom = r["map_box"]
    assert (right - left, bottom - top) == (256, 192)
    assert r["width"] > right and r["height"] > bottom  # the frame and legend around the map
    assert {e["kind"] for e in r["legend"]} >= {"biome", "place", "chunk"}


def test_a_place_is_named_inside_the_map(tmp_path):
    # the place at the map's east edge: its label must go west of it, not off the image
    r = api.world_map(
        _game(tmp_path, places=[{"name": "home", "prefab": "hut", "cell": [31, 0]}]), "flat", (0, 0), (64, 48), 4
    )
    label = next(lb for lb in r["labels"] if lb["text"] == "home")
    assert label["kind"] == "place" and _inside(label["box"], r["map_box"])
    x0, y0, x1, y1 = label["box"]
    ink = tuple((c + 2 * 255) // 3 for c in PLACE)
    assert (_png(r)[y0:y1, x0:x1] == ink).all(axis=2).sum() > 20  # the label's letters are there


def test_crowded_labels_never_overlap_and_what_does_not_fit_is_counted(tmp_path):
    places = [
        {"name": f"hamlet_number_{i:02d}", "prefab": "hut", "cell": [-12 + 4 * (i % 7), -9 + 4 * (i // 7)]}
        for i in range(28)
    ]
    r = api.world_map(_game(tmp_path, places=places), "flat", (0, 0), (64, 48), 4)
    boxes = [lb["box"] for lb in r["labels"]]
    for i, a in enumerate(boxes):
        assert _inside(a, r["map_box"]), a
        for b in boxes[i + 1 :]:
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1]), (a, b)
    named = {lb["text"] for lb in r["labels"]} | set(r["dropped"])
    assert named == {p["name"] for p in places} and r["dropped"]
    assert any(lb["lead"] for lb in r["labels"])  # some went further out, with a leader line


def test_place_labels_take_free_spots_and_leave_out_the_rest():
    img = Image.new("RGB", (120, 60))
    draw = ImageDraw.Draw(img)
    font = _font()
    marks = [Mark(60, 30, 4, f"label{i}", (255, 255, 255), "place") for i in range(40)]
    placed, dropped = place_labels(draw, font, marks, img.size)
    assert placed and dropped and len(placed) + len(dropped) == 40
    assert placed[0]["xy"] == [64, 25] and placed[0]["lead"] is None  # the first: right of its mark
    boxes = [p["box"] for p in placed]
    for i, a in enumerate(boxes):
        assert 0 <= a[0] and 0 <= a[1] and a[2] <= 120 and a[3] <= 60
        for b in boxes[i + 1 :]:
            assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])


def test_the_inspect_sheet_draws_each_view_with_units(tmp_path):
    project = _game(tmp_path)
    sheet = tmp_path / "sheet.png"
    r = api.inspect_world(project, "flat", at=[(-20, 10)], sheet=str(sheet))
    drawn = r["sheet_drawn"]
    texts = {lb["text"] for lb in drawn["labels"]}
    start = next(v for v in r["views"] if v["name"] == "start")
    assert f"start: {start['triangles']:,} triangles" in texts
    assert {"window", "camera", "view"} <= {e["kind"] for e in drawn["legend"]}
    img = np.asarray(Image.open(sheet).convert("RGB"))
    left, top = drawn["map_box"][:2]
    scale, (ox, oz) = drawn["scale"], drawn["origin"]
    # the start view's loaded window: chunks -1..1 (cells -16..31), a dashed white rectangle
    x = left + (-16 - ox) * scale
    column = img[top + (-16 - oz) * scale : top + (32 - oz) * scale, x]
    assert ((column == (250, 250, 250)).all(axis=1)).sum() > 50


@pytest.mark.parametrize("size", [(1, 1), (3, 200)])
def test_tiny_and_thin_maps_still_have_their_frame(tmp_path, size):
    r = api.world_map(_game(tmp_path), "flat", (0, 0), size, 2)
    left, top, right, bottom = r["map_box"]
    assert (right - left, bottom - top) == (size[0] * 2, size[1] * 2)
    assert _png(r).shape[:2] == (r["height"], r["width"])
