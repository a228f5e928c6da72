"""The top-down map of a world (the "map" sheet of inspect world; ``veduta world map``).

Biome colours shaded by the relief, water, features and vegetation areas as labelled circles,
structure footprints and place names. Pixels are computed with integers only and labels use
Pillow's built-in bitmap font (no anti-aliasing), so identical input gives an identical image;
:func:`png_bytes` saves it with fixed parameters and no metadata.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from veduta.base.progress import Progress, tell
from veduta.world.cover import SCATTER, VEGETATION
from veduta.world.intmath import strhash

#: biome colours by keyword, matched in the biome's name first, then in its ground material
KEYWORD_COLOURS: tuple[tuple[tuple[str, ...], tuple[int, int, int]], ...] = (
    (("snow", "ice", "glacier", "tundra", "frost"), (232, 238, 242)),
    (("sand", "desert", "beach", "dune"), (222, 202, 142)),
    (("swamp", "marsh", "bog", "mud"), (98, 112, 70)),
    (("forest", "wood", "moss", "jungle", "taiga", "pine"), (58, 118, 62)),
    (("rock", "stone", "mountain", "cliff", "gravel", "scree"), (138, 134, 128)),
    (("dirt", "soil", "savanna", "steppe", "heath", "dry"), (172, 144, 92)),
    (("grass", "plain", "meadow", "field", "prairie", "lawn"), (120, 172, 78)),
)
#: colours for biomes no keyword matches: FALLBACK[strhash(name) % 8]
FALLBACK = (
    (150, 180, 90), (190, 160, 110), (110, 150, 130), (170, 120, 150),
    (200, 180, 90), (100, 130, 170), (160, 160, 160), (130, 100, 80),
)
WATER = (44, 96, 170)
PLACE = (214, 40, 40)
SITE = (236, 150, 40)
FEATURE = {"hill": (120, 70, 30), "plain": (200, 190, 40), "lake": (30, 200, 220), "sea": (30, 160, 220)}
VEG_AREA = (20, 90, 20)
TREE = (30, 60, 30)


def biome_colour(name: str, ground: str) -> tuple[int, int, int]:
    for text in (name.lower(), ground.lower()):
        for words, colour in KEYWORD_COLOURS:
            if any(w in text for w in words):
                return colour
    return FALLBACK[strhash(name) % len(FALLBACK)]


def _font():
    try:
        return ImageFont.load_default_imagefont()
    except AttributeError:  # Pillow < 10.1: load_default() is the bitmap font
        return ImageFont.load_default()


def _label(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, colour, font) -> None:
    x, y = xy
    for ox, oy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        draw.text((x + ox, y + oy), text, fill=(0, 0, 0), font=font)
    light = tuple((c + 255 * 2) // 3 for c in colour)
    draw.text((x, y), text, fill=light, font=font)


def label_box(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, font) -> tuple[int, int, int, int]:
    """The pixels :func:`_label` covers (its outline included)."""
    left, top, right, bottom = (int(v) for v in draw.textbbox(xy, text, font=font))
    return left - 1, top - 1, right + 1, bottom + 1


#: rows of cells a map computes at once (its layers; progress after each strip)
MAP_STRIP = 256


def _map_pixels(gen, x0: int, z0: int, w: int, h: int) -> np.ndarray:
    """(h, w, 3) uint8: the map's colour of each cell of a rectangle (biome shaded by relief,
    water, prefab trees, outside the world dimmed), from one :meth:`Generator.layers`."""
    p = gen.p
    lay = gen.layers(x0, z0, w, h)
    g = lay.ground
    palette = np.asarray([biome_colour(n, gr) for n, gr in zip(p.biome_names, p.biome_grounds)], dtype=np.int64)
    rgb = palette[lay.biome]  # (h, w, 3)
    # hill shading, light from the north-west: brighter where the ground rises toward +x and +z
    sx = (g[:-1, 1:] + g[1:, 1:]) - (g[:-1, :-1] + g[1:, :-1])
    sz = (g[1:, :-1] + g[1:, 1:]) - (g[:-1, :-1] + g[:-1, 1:])
    shade = 256 + np.clip(((sx + sz) * 96) // p.cell_mm, -112, 112)
    shade += np.clip(lay.centre // 400, -24, 24)  # a little brighter up high
    rgb = (rgb * shade[:, :, None]) >> 8
    # water: darker with depth
    depth = np.clip((lay.level - lay.centre) // 40, 0, 120)
    water = (np.asarray(WATER, dtype=np.int64)[None, None, :] * (256 - depth)[:, :, None]) >> 8
    rgb = np.where(lay.wet[:, :, None], water, rgb)
    # scattered prefabs and vegetation prefabs: darker cells
    tree = (lay.owner_kind == SCATTER) | (lay.owner_kind == VEGETATION)
    rgb = np.where(tree[:, :, None], (rgb * 3 + np.asarray(TREE)[None, None, :]) >> 2, rgb)
    # outside the world: dimmed
    n = p.cells
    xs = np.arange(x0, x0 + w)
    zs = np.arange(z0, z0 + h)
    outside = ~(((xs >= -n) & (xs < n))[None, :] & ((zs >= -n) & (zs < n))[:, None])
    rgb = np.where(outside[:, :, None], rgb >> 1, rgb)
    return np.clip(rgb, 0, 255).astype(np.uint8)


def render_map(gen, at: tuple[int, int] = (0, 0), size: tuple[int, int] = (256, 256),
               scale: int | None = None, boxes: list | None = None,
               progress: Progress | None = None) -> Image.Image:
    """Map of the size[0] x size[1] cells centred on cell ``at``; ``scale`` pixels per cell
    (default: 1024 // the larger side, clamped to 1..8). ``boxes``: a list that gets the box of
    every label drawn (so that more labels can be placed beside them). The cells are computed
    :data:`MAP_STRIP` rows at a time, ``progress(rows done, rows, "map rows")`` after each."""
    w, h = int(size[0]), int(size[1])
    x0, z0 = int(at[0]) - w // 2, int(at[1]) - h // 2
    if scale is None:
        scale = min(8, max(1, 1024 // max(w, h)))
    p = gen.p
    rgb = np.zeros((h, w, 3), dtype=np.uint8)
    for r in range(0, h, MAP_STRIP):
        n = min(MAP_STRIP, h - r)
        rgb[r:r + n] = _map_pixels(gen, x0, z0 + r, w, n)
        tell(progress, r + n, h, "map rows")
    if scale > 1:
        rgb = np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)
        # chunk borders, faint
        c = p.chunk
        cols = [(x - x0) * scale for x in range(x0, x0 + w) if x % c == 0]
        rows = [(z - z0) * scale for z in range(z0, z0 + h) if z % c == 0]
        rgb[:, cols] = (rgb[:, cols].astype(np.int64) * 7 >> 3).astype(np.uint8)
        rgb[rows, :] = (rgb[rows, :].astype(np.int64) * 7 >> 3).astype(np.uint8)
    img = Image.fromarray(np.ascontiguousarray(rgb), "RGB")
    draw = ImageDraw.Draw(img)
    font = _font()

    def px(x: float, z: float) -> tuple[int, int]:
        return int(round((x - x0) * scale)), int(round((z - z0) * scale))

    labels: list[tuple[tuple[int, int], str, tuple[int, int, int]]] = []
    for f in p.features:
        colour = FEATURE.get(f.kind, (255, 255, 255))
        cx, cz = px(f.x, f.z)
        r = f.radius * scale
        if cx + r < 0 or cz + r < 0 or cx - r > w * scale or cz - r > h * scale:
            continue
        draw.ellipse((cx - r, cz - r, cx + r, cz + r), outline=colour, width=2 if scale > 1 else 1)
        labels.append(((cx + 3, cz - 5), f.name, colour))
    for v in p.vegetation:
        if not v.area:
            continue
        cx, cz = px(v.x, v.z)
        r = v.radius * scale
        if cx + r < 0 or cz + r < 0 or cx - r > w * scale or cz - r > h * scale:
            continue
        draw.ellipse((cx - r, cz - r, cx + r, cz + r), outline=VEG_AREA, width=1)
        labels.append(((cx + 3, cz + 4), v.name, (140, 230, 140)))
    for s in gen.structs.in_rect(x0, z0, w, h, gen.margin):  # as gen.layers(x0, z0, w, h) has them
        if s.x1 <= x0 or s.z1 <= z0 or s.x0 >= x0 + w or s.z0 >= z0 + h:
            continue
        colour = PLACE if s.kind == "place" else SITE
        a, b = px(s.x0, s.z0)
        c2, d = px(s.x1, s.z1)
        draw.rectangle((a, b, c2 - 1, d - 1), outline=colour, width=2 if scale > 2 else 1)
        if s.kind == "place":
            labels.append(((a, d + 2), s.name, (255, 230, 230)))
    for xy, text, colour in labels:
        _label(draw, xy, text, colour, font)
        if boxes is not None:
            boxes.append(label_box(draw, xy, text, font))
    return img


def png_bytes(img: Image.Image) -> bytes:
    """PNG bytes with fixed settings (compression level 6, no optimisation, no metadata)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6, optimize=False)
    return buf.getvalue()
