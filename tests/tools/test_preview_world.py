"""``veduta preview world``: what the world's camera sees from a start cell, drawn with the
drawing model, and its draw report."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from tests.export.helpers import sample_game
from tests.tools.picturegame import RED, SPECKLE, SPECKLE_AVERAGE, flat_world, write_game
from veduta import api
from veduta.base.errors import UsageError, VedutaError
from veduta.base.project import Project


@pytest.fixture(scope="module")
def flat(tmp_path_factory):
    world = flat_world(
        places=[{"name": "home", "prefab": "hut", "cell": [3, -2]}, {"name": "shed", "prefab": "hut", "cell": [28, 28]}]
    )  # loaded, out of view
    return Project.at(str(write_game(tmp_path_factory.mktemp("flat") / "game", world)))


@pytest.fixture(scope="module")
def valley(tmp_path_factory):
    return Project.at(str(sample_game(tmp_path_factory.mktemp("valley"))))


def _frame(r: dict, i: int = 0) -> np.ndarray:
    img = np.asarray(Image.open(io.BytesIO(r["png"])).convert("RGB"))
    b = r["frames"][i]["box"]
    return img[b[1] : b[3], b[0] : b[2]]


def test_a_flat_world_from_above_shows_each_cell_in_the_colour_the_map_gives_it(flat):
    r = api.preview_world(flat, "flat", (0, 0), None, scale=1)
    frame = _frame(r)
    assert frame.shape == (240, 320, 3) and r["frames"] == [
        {"width": 320, "height": 240, "supersample": 1, "box": r["frames"][0]["box"]}
    ]
    m = api.world_map(flat, "flat", (0, 0), (64, 48), 1)
    mp = np.asarray(Image.open(io.BytesIO(m["png"])).convert("RGB"))
    left, top = m["map_box"][:2]
    ox, oz = m["origin"]
    # the camera looks straight down from 30 m over the start cell's centre (0.5, 0.5), 24 m high:
    # 10 px per metre, north up
    seen = {"red": 0, "speckled": 0, "covered": 0}
    for py in range(2, 240, 7):
        for px in range(3, 320, 7):
            x = 0.5 + (px + 0.5 - 160) / 10
            z = 0.5 + (py + 0.5 - 120) / 10
            cx, cz = int(np.floor(x)), int(np.floor(z))
            if 2 <= cx <= 3 and -3 <= cz <= -2:
                continue  # the hut stands there
            on_map = tuple(mp[top + cz - oz, left + cx - ox].tolist())
            got = tuple(frame[py, px].tolist())
            if on_map not in (RED, SPECKLE_AVERAGE):  # a label or a footprint drawn over the cell
                seen["covered"] += 1
            elif on_map == RED:
                assert got == RED, (px, py)
                seen["red"] += 1
            else:
                # the speckled texture, sampled: between its two texel colours
                assert all(lo <= g <= hi for g, lo, hi in zip(got, *SPECKLE, strict=True)), (px, py, got)
                seen["speckled"] += 1
    assert min(seen["red"], seen["speckled"]) > 100 and seen["covered"] < 0.25 * seen["red"]


def test_the_report_counts_what_the_engine_draws(flat):
    r = api.preview_world(flat, "flat", (0, 0), None, scale=1)
    d = r["draw"]
    assert (d["chunks"], d["considered"], d["culled"], d["drawn"], d["entities"]) == (9, 2, 1, 1, 12)
    assert d["triangles"] == d["ground"] + d["skirts"] + d["water"] + d["flora"] + d["entities"]
    assert d["budget"] == 1200 and d["over_budget"] is False
    assert r["models"] == [{"model": "cube", "considered": 2, "drawn": 1, "levels": {"0": 1}, "triangles": 12}]
    assert {tuple(c["chunk"]): c["drawn"] for c in r["chunks"]}[(1, 1)] is False  # the shed's, out of view
    assert r["camera"]["type"] == "orthographic" and r["origin"] == [0.5, 0.0, 0.5]


@pytest.mark.parametrize("at", [(0, 0), (-66, 4), (-30, 40)])
def test_the_figures_are_the_drawing_models(valley, at):
    from veduta.cook.cooked import load_world
    from veduta.tools.inspect_world import model_draws, needed_models
    from veduta.world.draw import Drawer
    from veduta.world.generator import Generator

    r = api.preview_world(valley, "valley", at, None, scale=1)
    gen = Generator(*load_world(valley, "valley"))
    models, _, _ = model_draws(valley, needed_models(gen))
    want = Drawer(gen, models).view(at, kept=False)
    d = r["draw"]
    for k in (
        "chunks",
        "chunks_drawn",
        "ground",
        "skirts",
        "water",
        "flora",
        "entities",
        "triangles",
        "plants_drawn",
        "entities_drawn",
    ):
        assert d[k] == want[k], k
    assert d["considered"] == d["culled"] + d["too_far"] + d["thinned"] + d["drawn"]
    assert d["chunks_drawn"] == sum(d["ground_levels"].values())


def test_the_same_view_gives_the_same_bytes(flat, valley):
    a = api.preview_world(flat, "flat", (0, 0), None, scale=2)
    assert a["png"] == api.preview_world(flat, "flat", (0, 0), None, scale=2)["png"]
    assert [f["width"] for f in a["frames"]] == [320, 640]
    b = api.preview_world(valley, "valley", (-66, 4), None, scale=1)
    assert b["png"] == api.preview_world(valley, "valley", (-66, 4), None, scale=1)["png"]
    # the village: the houses, well and trees are drawn (not the ground's or sky's colours alone)
    assert b["draw"]["entities_drawn"] > 5 and len(np.unique(_frame(b).reshape(-1, 3), axis=0)) > 40


def test_mistakes_are_named(flat, tmp_path):
    with pytest.raises(UsageError, match=r"start cell 99,0 is outside world flat: its cells are -64..63"):
        api.preview_world(flat, "flat", (99, 0))
    with pytest.raises(UsageError, match=r"scale 5 out of range \[1, 4\]"):
        api.preview_world(flat, "flat", (0, 0), scale=5)
    with pytest.raises(UsageError, match="not two whole numbers"):
        api.preview_world(flat, "flat", (0.5, 0))
    with pytest.raises(VedutaError, match='no world "flatt"'):
        api.preview_world(flat, "flatt", (0, 0))


def test_the_command_line(flat, tmp_path):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "veduta", "preview", "world", *args],
            cwd=flat.root,
            capture_output=True,
            text=True,
            timeout=300,
        )

    out = tmp_path / "view.png"
    cp = run("flat", "--at", "0,0", "--out", str(out), "--scale", "1", "--json")
    assert cp.returncode == 0, cp.stderr
    data = json.loads(cp.stdout)
    want = api.preview_world(flat, "flat", (0, 0), None, scale=1)
    assert out.read_bytes() == want.pop("png")
    assert data == want | {"out": str(out)}
    cp = run("flat", "--out", str(out))
    assert cp.returncode == 0 and "triangles: 390 of the 1,200 a frame" in cp.stdout and "wrote" in cp.stdout
    cp = run("flat", "--at", "-99,0", "--out", str(out))
    assert cp.returncode == 2 and "outside world flat" in cp.stderr and "Traceback" not in cp.stderr
    cp = run("flat", "--scale", "0", "--out", str(out))
    assert cp.returncode == 2 and "out of range" in cp.stderr
