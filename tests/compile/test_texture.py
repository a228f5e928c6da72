"""compile_texture: texture/1 sources -> TEXR; images, compositing, the mip chain, frames and clips."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.compile.helpers import compile_in, documented_error_example, lines
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.compile.image import (
    MAX_SIDE,
    SRGB_TO_LINEAR,
    area_taps,
    linear_to_srgb8,
    mip_chain,
    pack_argb,
    unpack_argb,
)
from veduta.container.meta import source_hash
from veduta.formats import decode, encode
from veduta.formats.texture import Texture, max_levels
from veduta.source.diagnostics import Report
from veduta.tools.preview_texture import write_preview

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
SAMPLES = sorted((ASSETS / "textures").glob("*.vtexture"))


def png_bytes(rgba: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(rgba).save(buf, format="PNG")
    return buf.getvalue()


def source(**fields) -> str:
    return json.dumps({"veduta": "texture/1", **fields}, indent=2)


RNG = np.random.default_rng(7)
IMG = RNG.integers(0, 256, (12, 20, 4), dtype=np.uint8)


# -- samples, round trips, determinism ----------------------------------------------------------


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_samples_compile_cleanly_round_trip_and_are_deterministic(path):
    rel = f"textures/{path.name}"
    index = AssetIndex.from_paths([rel])

    def once():
        ctx = CompileContext(str(ASSETS), rel, "texture", path.stem, Report(rel), index)
        return compile_source("texture", path.read_bytes(), ctx), ctx

    tex, ctx = once()
    assert tex is not None and ctx.report.items == [], lines(ctx)
    payload = encode(tex)
    back = decode(Texture, payload)  # runs the TEXR reader checks
    assert back == tex and encode(back) == payload
    assert encode(once()[0]) == payload
    # every PNG read is a dependency
    for layer in json.loads(path.read_text())["layers"]:
        if layer["type"] == "image":
            assert layer["path"] in ctx.deps and ctx.deps[layer["path"]] is not None


def test_samples_cover_a_mip_chain_a_sprite_sheet_and_an_autotile():
    got = {}
    for path in SAMPLES:
        rel = f"textures/{path.name}"
        ctx = CompileContext(str(ASSETS), rel, "texture", path.stem, Report(rel))
        got[path.stem] = compile_source("texture", path.read_bytes(), ctx)
    crate = got["crate"]
    assert crate.levels == 6 and [im.shape for im in crate.images] == [
        (32, 32),
        (16, 16),
        (8, 8),
        (4, 4),
        (2, 2),
        (1, 1),
    ]
    assert crate.wrap == 0 and crate.tiling
    hero = got["hero"]
    assert hero.grid == (4, 2) and hero.levels == 1 and hero.wrap == 1 and hero.play == "idle"
    assert [(c.name, c.frames, c.loop, c.next) for c in hero.clips] == [
        ("idle", [0, 1], True, ""),
        ("jump", [2, 3], False, "idle"),
        ("walk", [4, 5, 6, 7], True, ""),
    ]
    assert got["water"].autotile and got["water"].edge.priority == 2
    assert got["checker"].layers == 2 and got["checker"].width == 64


def test_decode_encode_reproduces_bytes_and_value(tmp_path):
    tex, ctx = compile_in(
        tmp_path,
        {
            "textures/a.png": png_bytes(IMG),
            "textures/t.vtexture": source(
                layers=[{"type": "image", "path": "textures/a.png"}],
                grid=[4, 3],
                mipmaps=True,
                clips={"b": {"frames": [3, 2, 1], "fps": 12.5, "loop": False}, "a": {"frames": [0], "next": ""}},
                play="b",
                edge={"priority": 3, "width": 0.1, "roughness": 1, "seed": -5},
            ),
        },
        "textures/t.vtexture",
    )
    assert tex is not None, lines(ctx)
    payload = encode(tex)
    assert encode(decode(Texture, payload)) == payload
    assert decode(Texture, payload) == tex
    assert [c.name for c in tex.clips] == ["a", "b"]  # name order, as readers check
    assert tex.edge.seed == -5 and tex.levels == max_levels(20, 12) == 5


# -- strict decoding ----------------------------------------------------------------------------

BAD = """{
  "veduta": "texture/1",
  "layers": [
    { "type": "image", "path": "textures/missing.png", "color": "#fff" },
    { "type": "fill", "color": "red", "opacity": 2 },
    { "type": "blur" },
    { "type": "checker", "colors": ["#000000"], "cel": 4 }
  ],
  "grid": [4, 0],
  "clips": { "Walk": { "frames": [], "fps": 0 }, "run": { "frames": [1.5], "next": "fly" } },
  "play": "swim",
  "wrap": "mirror",
  "edge": { "priority": 0, "roughness": 1.5 },
  "tiling": "yes",
  "tiling": true,
  "mipmap": true
}
"""


def test_every_problem_is_reported_at_once_with_exact_positions(tmp_path):
    tex, ctx = compile_in(tmp_path, {"textures/bad.vtexture": BAD}, "textures/bad.vtexture")
    assert tex is None
    assert lines(ctx) == [
        'textures/bad.vtexture:4:32: layers[0].path: image "textures/missing.png" not found '
        "(paths are relative to the assets folder)",
        "textures/bad.vtexture:4:65: layers[0].color: not used by a layer of type image",
        'textures/bad.vtexture:5:32: layers[1].color: "red" is not a colour "#rrggbb" or "#aarrggbb"',
        "textures/bad.vtexture:5:50: layers[1].opacity: 2 out of range [0, 1]",
        'textures/bad.vtexture:6:15: layers[2].type: "blur" is not one of "image", "fill", "checker"',
        "textures/bad.vtexture:7:36: layers[3].colors: 1 items, at least 2 needed",
        'textures/bad.vtexture:7:56: layers[3].cel: unknown field (did you mean "cell"?)',
        "textures/bad.vtexture:9:15: grid[1]: 0 out of range [1, 256]",
        'textures/bad.vtexture:10:14: clips.Walk: "Walk" is not a valid clip name (1-64 of a-z, 0-9, _, -, '
        "starting with a letter or digit)",
        "textures/bad.vtexture:10:34: clips.Walk.frames: must not be empty",
        "textures/bad.vtexture:10:45: clips.Walk.fps: 0 out of range (0, 1000]",
        "textures/bad.vtexture:10:70: clips.run.frames[0]: expected an integer, found 1.5",
        'textures/bad.vtexture:10:84: clips.run.next: "fly" is not a clip of this texture (want "Walk" or "run")',
        'textures/bad.vtexture:11:11: play: "swim" is not a clip of this texture (want "Walk" or "run")',
        'textures/bad.vtexture:12:11: wrap: "mirror" is not one of "repeat", "clamp"',
        "textures/bad.vtexture:13:25: edge.priority: 0 out of range [1, 1000000]",
        "textures/bad.vtexture:13:41: edge.roughness: 1.5 out of range [0, 1]",
        'textures/bad.vtexture:14:13: tiling: expected true or false, found the string "yes"',
        "textures/bad.vtexture:15:13: tiling: duplicate key 'tiling' (first at line 14, column 3)",
        'textures/bad.vtexture:16:13: mipmap: unknown field (did you mean "mipmaps"?)',
    ]
    # every image named in the source is a dependency, found or not
    assert ctx.deps == {"textures/missing.png": None}


def test_header_and_name_are_checked(tmp_path):
    tex, ctx = compile_in(
        tmp_path,
        {
            "textures/t.vtexture": '{"veduta": "texture/2", "name": "other",\n'
            ' "size": [1, 1], "layers": [{"type": "fill", "color": "#000000"}]}'
        },
        "textures/t.vtexture",
    )
    assert tex is None
    assert lines(ctx) == [
        'textures/t.vtexture:1:12: veduta: "texture/2" is not "texture/1"',
        'textures/t.vtexture:1:33: name: "other" is not the file name (want "t")',
    ]


def test_grid_autotile_and_clip_checks_use_the_image_size(tmp_path):
    src = """{
  "veduta": "texture/1",
  "layers": [ { "type": "image", "path": "textures/a.png" } ],
  "grid": [3, 2],
  "autotile": true,
  "clips": { "a": { "frames": [0, 6] }, "b": { "frames": [1], "loop": true, "next": "a" } }
}"""
    tex, ctx = compile_in(
        tmp_path, {"textures/a.png": png_bytes(IMG), "textures/t.vtexture": src}, "textures/t.vtexture"
    )
    assert tex is None
    assert lines(ctx) == [
        "textures/t.vtexture:4:11: grid: 20 x 12 pixels do not split into 3 x 2 frames "
        "(width 20 is not a multiple of 3)",
        "textures/t.vtexture:6:35: clips.a.frames[1]: frame 6 is outside the 6 frames of the 3 x 2 grid (want 0..5)",
        'textures/t.vtexture:6:85: clips.b.next: a looping clip never ends, so "next" is never played '
        '(set "loop": false)',
    ]
    src2 = src.replace("[3, 2]", "[5, 2]").replace("[0, 6]", "[0, 9]").replace('"loop": true', '"loop": false')
    tex, ctx = compile_in(tmp_path, {"textures/t.vtexture": src2}, "textures/t.vtexture")
    assert lines(ctx) == [
        "textures/t.vtexture:5:15: autotile: a frame of 4 x 6 pixels does not split into 6 x 3 tiles "
        "(want a width that is a multiple of 6 and a height that is a multiple of 3)"
    ]
    ok = src2.replace('"autotile": true', '"autotile": false')
    tex, ctx = compile_in(tmp_path, {"textures/t.vtexture": ok}, "textures/t.vtexture")
    assert tex is not None and tex.grid == (5, 2) and tex.levels == 1 and not tex.autotile


def test_a_single_image_without_grid_has_one_frame(tmp_path):
    src = source(layers=[{"type": "image", "path": "textures/a.png"}], clips={"a": {"frames": [0, 1]}})
    tex, ctx = compile_in(
        tmp_path, {"textures/a.png": png_bytes(IMG), "textures/t.vtexture": src}, "textures/t.vtexture"
    )
    assert tex is None
    assert lines(ctx)[0].endswith(
        "clips.a.frames[1]: frame 1 is outside the 1 frame of the single image (no grid) (want 0..0)"
    )


def test_tiling_conflicts_with_clamp_and_sets_repeat(tmp_path):
    fill = [{"type": "fill", "color": "#ff0000"}]
    tex, ctx = compile_in(
        tmp_path, {"textures/t.vtexture": source(size=[4, 4], layers=fill, tiling=True)}, "textures/t.vtexture"
    )
    assert tex.wrap == 0 and tex.tiling
    tex, ctx = compile_in(tmp_path, {"textures/t.vtexture": source(size=[4, 4], layers=fill)}, "textures/t.vtexture")
    assert tex.wrap == 1 and not tex.tiling
    tex, ctx = compile_in(
        tmp_path,
        {"textures/t.vtexture": source(size=[4, 4], layers=fill, tiling=True, wrap="clamp")},
        "textures/t.vtexture",
    )
    assert tex is None and "a tiling texture repeats" in lines(ctx)[0]


def test_size_is_required_without_an_image_layer(tmp_path):
    tex, ctx = compile_in(
        tmp_path, {"textures/t.vtexture": source(layers=[{"type": "fill", "color": "#ff0000"}])}, "textures/t.vtexture"
    )
    assert tex is None
    assert lines(ctx) == [
        "textures/t.vtexture:1:1: size: required field is missing (no layer is an image to take the size from)"
    ]


# -- images -------------------------------------------------------------------------------------


def test_unreadable_and_non_png_images_are_errors_naming_them(tmp_path):
    good = png_bytes(IMG)
    files = {
        "textures/cut.png": good[: len(good) // 2],
        "textures/jpeg.png": b"\xff\xd8\xff\xe0 not a png",
        "textures/t.vtexture": source(
            layers=[{"type": "image", "path": "textures/cut.png"}, {"type": "image", "path": "textures/jpeg.png"}]
        ),
    }
    tex, ctx = compile_in(tmp_path, files, "textures/t.vtexture")
    assert tex is None
    out = lines(ctx)
    assert len(out) == 2
    assert 'layers[0].path: image "textures/cut.png" cannot be decoded' in out[0]
    assert out[1].endswith('layers[1].path: image "textures/jpeg.png" is not a PNG file (no PNG signature)')
    assert sorted(ctx.deps) == ["textures/cut.png", "textures/jpeg.png"]


def fake_png_header(width: int, height: int) -> bytes:
    """A PNG signature and IHDR claiming a size, with no pixel data: decoding it would fail, and a
    real image that size would need gigabytes."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def test_an_image_beyond_the_limit_is_an_error_from_its_header(tmp_path):
    files = {
        "textures/huge.png": fake_png_header(100_000, 100_000),
        "textures/wide.png": png_bytes(np.zeros((1, MAX_SIDE + 1, 4), np.uint8)),
        "textures/t.vtexture": source(
            layers=[{"type": "image", "path": "textures/huge.png"}, {"type": "image", "path": "textures/wide.png"}]
        ),
    }
    tex, ctx = compile_in(tmp_path, files, "textures/t.vtexture")
    assert tex is None
    assert [x.split(": ", 2)[2] for x in lines(ctx)] == [
        f'image "textures/huge.png" is 100000 x 100000 pixels, beyond the limit of {MAX_SIDE} x {MAX_SIDE}',
        f'image "textures/wide.png" is {MAX_SIDE + 1} x 1 pixels, beyond the limit of {MAX_SIDE} x {MAX_SIDE}',
    ]


def test_png_modes_are_read_as_rgba(tmp_path):
    grey16 = np.arange(12, dtype=np.uint16).reshape(3, 4) * 5000
    pal = Image.fromarray(IMG[..., :3]).convert("P", palette=Image.Palette.ADAPTIVE, colors=8)
    buf = io.BytesIO()
    pal.save(buf, format="PNG")
    files = {
        "textures/g16.png": png_bytes(grey16),
        "textures/rgb.png": png_bytes(IMG[..., :3]),
        "textures/pal.png": buf.getvalue(),
    }
    for name, expect in (("g16", None), ("rgb", IMG[..., :3]), ("pal", np.asarray(pal.convert("RGB")))):
        files[f"textures/{name}.vtexture"] = source(
            layers=[{"type": "image", "path": f"textures/{name}.png"}], mipmaps=False
        )
        tex, ctx = compile_in(tmp_path, files, f"textures/{name}.vtexture")
        assert tex is not None, lines(ctx)
        rgba = unpack_argb(tex.images[0])
        assert (rgba[..., 3] == 255).all()
        if expect is not None:
            assert (rgba[..., :3] == expect).all()
        else:
            assert (rgba[..., 0] == (grey16 >> 8)).all()


def test_a_single_image_layer_is_level_0_exactly_even_where_transparent(tmp_path):
    img = IMG.copy()
    img[0, :, 3] = 0  # transparent row that still has colours
    tex, ctx = compile_in(
        tmp_path,
        {
            "textures/a.png": png_bytes(img),
            "textures/t.vtexture": source(layers=[{"type": "image", "path": "textures/a.png"}]),
        },
        "textures/t.vtexture",
    )
    assert (unpack_argb(tex.images[0]) == img).all()
    assert tex.images[0].dtype == np.dtype("<u4")


def test_pixels_are_aarrggbb(tmp_path):
    tex, ctx = compile_in(
        tmp_path,
        {"textures/t.vtexture": source(size=[2, 1], layers=[{"type": "fill", "color": "#80123456"}], mipmaps=False)},
        "textures/t.vtexture",
    )
    assert int(tex.images[0][0, 0]) == 0x80123456
    assert encode(tex).find(bytes([0x56, 0x34, 0x12, 0x80])) > 0  # bytes B, G, R, A in the file


# -- compositing --------------------------------------------------------------------------------


def test_layers_composite_in_order_with_opacity_and_multiply(tmp_path):
    base = np.zeros((2, 2, 4), np.uint8)
    base[...] = (200, 100, 50, 255)
    base[1, 1] = (0, 0, 0, 0)
    layers = [
        {"type": "image", "path": "textures/a.png"},
        {"type": "fill", "color": "#0000ff", "opacity": 0.5},
        {"type": "fill", "color": "#808080", "blend": "multiply"},
    ]
    tex, ctx = compile_in(
        tmp_path,
        {"textures/a.png": png_bytes(base), "textures/t.vtexture": source(layers=layers, mipmaps=False)},
        "textures/t.vtexture",
    )
    px = unpack_argb(tex.images[0]).astype(int)
    # over: (200,100,50)*0.5 + (0,0,255)*0.5 = (100, 50, 152.5); multiply by 128/255
    assert tuple(px[0, 0]) == (50, 25, 77, 255)
    # the transparent pixel: half blue (premultiplied (0, 0, 0.5), alpha 0.5), then an opaque grey
    # multiplied: co = cs (1 - ab) + cb (1 - as) + cs cb = 0.5 g + (0, 0, 0.5 g) with g = 128/255
    assert tuple(px[1, 1]) == (64, 64, 128, 255)


def test_image_layers_are_placed_and_clipped(tmp_path):
    dot = np.full((2, 2, 4), 255, np.uint8)
    layers = [{"type": "fill", "color": "#000000"}, {"type": "image", "path": "textures/d.png", "at": [3, -1]}]
    tex, ctx = compile_in(
        tmp_path,
        {"textures/d.png": png_bytes(dot), "textures/t.vtexture": source(size=[4, 3], layers=layers, mipmaps=False)},
        "textures/t.vtexture",
    )
    white = unpack_argb(tex.images[0])[..., 0] == 255
    assert white.tolist() == [[False, False, False, True], [False] * 4, [False] * 4]
    layers[1]["at"] = [4, 0]
    tex, ctx = compile_in(tmp_path, {"textures/t.vtexture": source(size=[4, 3], layers=layers)}, "textures/t.vtexture")
    assert tex is None and lines(ctx)[0].endswith(
        'layers[1].at: image "textures/d.png" (2 x 2) at [4, 0] lies outside the 4 x 3 texture'
    )


def test_checker_layer(tmp_path):
    tex, ctx = compile_in(
        tmp_path,
        {
            "textures/t.vtexture": source(
                size=[4, 2], layers=[{"type": "checker", "colors": ["#ffffff", "#000000"], "cell": 2}], mipmaps=False
            )
        },
        "textures/t.vtexture",
    )
    assert (unpack_argb(tex.images[0])[..., 0] == 255).tolist() == [[True, True, False, False]] * 2


# -- the mip chain ------------------------------------------------------------------------------


@pytest.mark.parametrize("w,h", [(1, 1), (5, 3), (20, 12), (64, 1), (7, 33), (256, 256)])
def test_chain_goes_down_to_1x1_with_the_spec_sizes(w, h):
    img = RNG.integers(0, 256, (h, w, 4), dtype=np.uint8)
    chain = mip_chain(img)
    assert len(chain) == max_levels(w, h)
    assert [c.shape[:2] for c in chain] == [(max(1, h >> i), max(1, w >> i)) for i in range(len(chain))]
    assert chain[-1].shape[:2] == (1, 1)


def test_area_taps_weigh_by_covered_area():
    idx, w = area_taps(5, 2)
    assert idx.tolist() == [[0, 1, 2], [2, 3, 4]]
    assert np.allclose(w, [[0.4, 0.4, 0.2], [0.2, 0.4, 0.4]])
    for n in (2, 3, 5, 9, 1024, 2047):
        _, w = area_taps(n, max(1, n >> 1))
        assert np.allclose(w.sum(axis=1), 1)


def test_filtering_is_in_linear_light_with_premultiplied_alpha():
    # black and white average to linear 0.5, which is sRGB 188, not 128
    bw = np.zeros((2, 2, 4), np.uint8)
    bw[..., 3] = 255
    bw[0, 0, :3] = bw[1, 1, :3] = 255
    assert tuple(mip_chain(bw)[1][0, 0]) == (188, 188, 188, 255)
    # a transparent pixel's colour does not bleed into an opaque one
    half = np.zeros((1, 2, 4), np.uint8)
    half[0, 0] = (255, 0, 0, 255)
    half[0, 1] = (0, 255, 0, 0)
    assert tuple(mip_chain(half)[1][0, 0]) == (255, 0, 0, 128)
    # all transparent: the plain average colour, not black
    clear = np.zeros((1, 2, 4), np.uint8)
    clear[0, 0, :3] = (255, 255, 255)
    assert tuple(mip_chain(clear)[1][0, 0]) == (188, 188, 188, 0)


def test_a_uniform_image_stays_uniform_on_every_level():
    img = np.empty((9, 13, 4), np.uint8)
    img[...] = (10, 128, 250, 77)
    for lv in mip_chain(img):
        assert (lv == img[0, 0]).all()


def test_srgb_tables_round_trip_every_code():
    codes = np.arange(256, dtype=np.uint8)
    assert (linear_to_srgb8(SRGB_TO_LINEAR[codes]) == codes).all()


def test_pack_and_unpack_are_inverse():
    assert (unpack_argb(pack_argb(IMG)) == IMG).all()


# -- dependencies and recooking -----------------------------------------------------------------


def test_a_png_edit_changes_the_texture_hash_but_not_the_material_on_it(tmp_path):
    """Recooking only what depends on a PNG: the texture's source_hash covers the PNG (a META dep);
    a material on the texture depends on the texture source only."""
    files = {
        "textures/a.png": png_bytes(IMG),
        "textures/a.vtexture": source(layers=[{"type": "image", "path": "textures/a.png"}]),
        "materials/m.vmaterial": '{"veduta": "material/1", "texture": "a"}',
    }
    root = tmp_path / "assets"

    def hashes():
        out = {}
        for rel in ("textures/a.vtexture", "materials/m.vmaterial"):
            body, ctx = compile_in(tmp_path, files, rel)
            assert body is not None, lines(ctx)
            deps = sorted(ctx.deps)
            out[rel] = (
                deps,
                source_hash(
                    "v",
                    rel,
                    (root / rel).read_bytes(),
                    deps,
                    lambda d: (root / d).read_bytes() if (root / d).exists() else None,
                ),
            )
        return out

    before = hashes()
    assert before["textures/a.vtexture"][0] == ["textures/a.png"]
    assert before["materials/m.vmaterial"][0] == ["textures/a.vtexture"]
    files["textures/a.png"] = png_bytes(255 - IMG)
    after = hashes()
    assert after["textures/a.vtexture"][1] != before["textures/a.vtexture"][1]
    assert after["materials/m.vmaterial"] == before["materials/m.vmaterial"]


def test_a_png_edit_recooks_only_the_texture(game):
    """End to end through doit: edit a PNG, and only the texture that reads it is cooked again."""
    import os
    import re
    import time

    from veduta.formats.asset import read_asset_file

    (game.root / "assets" / "textures").mkdir(parents=True)
    (game.root / "assets" / "textures" / "a.png").write_bytes(png_bytes(IMG))
    game.write("textures/a.vtexture", source(layers=[{"type": "image", "path": "textures/a.png"}]))
    game.write("textures/b.vtexture", source(size=[2, 2], layers=[{"type": "fill", "color": "#00ff00"}]))
    game.write("materials/crate_wood.vmaterial", '{"veduta": "material/1", "texture": "a"}')

    def cook():
        cp = game.cook(check=True)
        m = re.search(r"cook: (\d+) cooked, (\d+) up to date", cp.stdout)
        assert m, cp.stdout + cp.stderr
        return int(m.group(1)), int(m.group(2))

    def age():
        t = time.time() - 10
        for p in (game.root / "assets").rglob("*"):
            if p.is_file() and ".cooked" not in p.parts:
                os.utime(p, (t, t))

    first = cook()
    assert first[0] == 7  # four models, two textures, a material
    meta = read_asset_file(str(game.cooked("textures/a.vda"))).meta
    assert meta.deps == ("textures/a.png",)
    age()
    (game.root / "assets" / "textures" / "a.png").write_bytes(png_bytes(255 - IMG))
    assert cook() == (1, 6)


# -- preview ------------------------------------------------------------------------------------


def test_preview_is_deterministic_and_shows_frames(tmp_path):
    rel = "textures/hero.vtexture"
    ctx = CompileContext(str(ASSETS), rel, "texture", "hero", Report(rel))
    tex = compile_source("texture", (ASSETS / rel).read_bytes(), ctx)
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    write_preview(tex, str(a))
    write_preview(tex, str(b))
    assert a.read_bytes() == b.read_bytes()
    with Image.open(a) as im:
        assert im.format == "PNG" and im.width >= 8 * 16 and im.height > 5 * 16


def test_the_even_size_fast_path_gives_the_bits_of_the_general_filter():
    from veduta.compile.image import _reduce

    x = RNG.random((7, 10, 6), dtype=np.float32)
    for axis in (1, 2):
        assert _reduce(x, axis).tobytes() == _reduce(x, axis, general=True).tobytes()


def test_the_documented_error_example_reports_what_the_docs_say(tmp_path):
    rel, src, expected = documented_error_example("texture.md")
    body, ctx = compile_in(tmp_path, {rel: src}, rel)
    assert body is None and lines(ctx) == expected
