"""The map image and the world commands."""

from __future__ import annotations

import argparse
import io
import json

import pytest
from PIL import Image

from tests.world.worlds import Biome, example_prefabs, example_world
from veduta.faces.cli.world import add_world_commands
from veduta.tools.mapimage import png_bytes, render_map
from veduta.world import Generator


def test_map_bytes_are_identical_for_identical_input(example):
    a = png_bytes(render_map(example, (0, 0), (128, 96))[0])
    b = png_bytes(render_map(Generator(example_world(), example_prefabs()), (0, 0), (128, 96))[0])
    assert a == b
    assert png_bytes(render_map(example, (1, 0), (128, 96))[0]) != a
    img = Image.open(io.BytesIO(a))
    info = render_map(example, (0, 0), (128, 96))[1]
    left, top, right, bottom = info["map_box"]
    assert (right - left, bottom - top) == (128 * 8, 96 * 8) and img.mode == "RGB"
    assert img.width > right and img.height > bottom  # the frame and the legend around it
    assert set(img.info) <= {"dpi"} and not img.info  # no metadata


def test_map_in_strips_is_the_map_in_one_pass(example, monkeypatch):
    """The map computes its cells a strip of rows at a time (progress after each): the same
    pixels and legend as one pass, over a part of the world with prefab cells and a site crossing a
    strip's edge."""
    from veduta.tools import mapimage

    whole, drawn = render_map(example, (30, -47), (96, 80), scale=2)
    heard = []
    monkeypatch.setattr(mapimage, "MAP_STRIP", 7)
    strips, drawn_in_strips = render_map(example, (30, -47), (96, 80), scale=2, progress=lambda *a: heard.append(a))
    assert png_bytes(strips) == png_bytes(whole) and drawn_in_strips == drawn
    assert drawn["counts"].get("sites") and any(g["kind"] == "prefab_cell" for g in drawn["legend"]), drawn
    assert heard[0] == (7, 80, "map rows") and heard[-1] == (80, 80, "map rows") and len(heard) == 12


def test_map_scale_and_content(example):
    img, info = render_map(example, (-30, 20), (64, 64), scale=2)
    left, top = info["map_box"][:2]
    assert info["map_box"][2] - left == 128
    # the lake's centre is water-blue
    r, g, b = img.getpixel((left + 64 + 1, top + 64 + 1))
    assert b > r and b > g


def test_without_materials_every_biome_is_mid_grey(example):
    info = render_map(example, (0, 0), (32, 32))[1]
    assert {e["colour"] for e in info["legend"] if e["kind"] == "biome"} == {"#808080"}


def _parser():
    parser = argparse.ArgumentParser(prog="veduta")
    sub = parser.add_subparsers(dest="command")
    worlds = {
        "overworld": (example_world(), example_prefabs()),
        "tiny": (example_world(biomes=[Biome("a", "g", 1)], features=None), {}),
    }
    add_world_commands(sub, lambda name: worlds[name])
    return parser


def test_cli_query(capsys):
    args = _parser().parse_args(["world", "query", "overworld", "-30,20"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cell"] == [-30, 20] and out["chunk"] == [-2, 1] and out["water"]["wet"] is True


def test_cli_query_unknown_world(capsys):
    args = _parser().parse_args(["world", "query", "nowhere", "0,0"])
    assert args.func(args) == 2  # an unknown asset name is a usage mistake
    assert "nowhere" in capsys.readouterr().err


def test_cli_bad_cell():
    with pytest.raises(SystemExit):
        _parser().parse_args(["world", "query", "overworld", "1;2"])


def test_cli_map(tmp_path, capsys):
    out = tmp_path / "maps" / "o.png"
    out.parent.mkdir()  # no folder is made for an output
    args = _parser().parse_args(["world", "map", "overworld", "--out", str(out), "--at", "-30,20", "--cells", "40,30"])
    assert args.func(args) == 0
    first = out.read_bytes()
    assert Image.open(out).size > (320, 240)
    assert args.func(args) == 0
    assert out.read_bytes() == first
    args = _parser().parse_args(["world", "map", "tiny", "--out", str(out)])
    assert args.func(args) == 0
    assert Image.open(out).size > (1024, 1024)


def test_cli_query_takes_at_and_the_old_positional_cell_with_a_note(capsys):
    args = _parser().parse_args(["world", "query", "overworld", "--at", "-30,20"])
    assert args.func(args) == 0
    new = capsys.readouterr()
    assert new.err == ""
    args = _parser().parse_args(["world", "query", "overworld", "-30,20"])
    assert args.func(args) == 0
    old = capsys.readouterr()
    assert old.out == new.out
    assert old.err == "veduta: note: the cell without --at is deprecated; write --at -30,20\n"
    for argv in (["overworld"], ["overworld", "1,2", "--at", "1,2"]):
        args = _parser().parse_args(["world", "query", *argv])
        assert args.func(args) == 2
        assert "--at X,Z" in capsys.readouterr().err


def test_cli_map_takes_cells_and_the_old_size_with_a_note(tmp_path, capsys):
    out = tmp_path / "o.png"
    args = _parser().parse_args(["world", "map", "overworld", "--out", str(out), "--cells", "40,30"])
    assert args.func(args) == 0 and capsys.readouterr().err == ""
    new = out.read_bytes()
    args = _parser().parse_args(["world", "map", "overworld", "--out", str(out), "--size", "40,30"])
    assert args.func(args) == 0
    assert capsys.readouterr().err == "veduta: note: world map --size is deprecated; write --cells\n"
    assert out.read_bytes() == new and Image.open(out).size > (320, 240)
    args = _parser().parse_args(["world", "map", "overworld", "--out", str(out), "--size", "4,4", "--cells", "4,4"])
    assert args.func(args) == 2
