"""The top-down map of a world (``veduta world map``; the map of ``inspect world --sheet``).

A picture that says what it shows (docs/world-generation.md, section 14):

- a title (world, seed, the cells shown, their size, pixels per cell);
- the map: each cell in its biome's colour, taken from the biome's ground material (its albedo
  times its texture's average colour, :mod:`veduta.tools.export.looks`), shaded by the relief
  (light from the north-west), water darker with depth, cells owned by a scattered or vegetation
  prefab darker, outside the world dimmed, chunk borders faint; features and vegetation areas
  as circles, sites and places as footprint rectangles, every one named;
- a frame in cells (ticks on the top and left edges, x east and z south), a scale bar in metres
  and a north arrow;
- a legend: a swatch per biome (its material and colour), water, and each glyph drawn.

Labels are placed so that none overlaps another and none leaves the map: beside its mark where
there is room, else further out with a leader line, else left out (and counted). Pixels are
integer arithmetic and labels Pillow's built-in bitmap font (no anti-aliasing), so identical
input gives an identical image; :func:`png_bytes` saves it with fixed parameters and no metadata.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from veduta.base.progress import Progress, tell
from veduta.tools.export.looks import hexrgb
from veduta.world.cover import SCATTER, VEGETATION

if TYPE_CHECKING:
    from veduta.tools.export.looks import Looks
    from veduta.world.generator import Generator

RGB = tuple[int, int, int]


def rgb3(c) -> RGB:
    """The first three of a sequence of colour bytes, as ints."""
    r, g, b = (int(v) for v in list(c)[:3])
    return r, g, b


#: a biome whose ground material is missing or does not cook
NO_MATERIAL = (128, 128, 128)
#: the engine's built-in water (terrain water ""), as the map shows it
WATER = (44, 96, 170)
PLACE = (214, 40, 40)
SITE = (236, 150, 40)
FEATURE = {"hill": (120, 70, 30), "plain": (200, 190, 40), "lake": (30, 200, 220), "sea": (30, 160, 220)}
VEG_AREA = (20, 90, 20)
TREE = (30, 60, 30)
PAPER = (250, 250, 248)
INK = (24, 24, 24)
DIM = (110, 110, 110)
PAD = 8
LINE = 13
AXES = "axes in cells: x east, z south"
#: behind a light glyph in the legend (as the map is behind it)
GLYPH_BG = (70, 100, 70)
LEGEND_W = 200


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


# -- colours -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Palette:
    """The map's colours of one world: a colour per biome (from its ground material) and the
    water's, with what they were taken from (for the legend and ``--json``)."""

    biomes: tuple[tuple[int, int, int], ...]
    water: tuple[int, int, int]
    info: tuple[dict[str, Any], ...] = ()
    water_info: dict[str, Any] = field(default_factory=dict)


def palette(gen: Generator, looks: Looks | None) -> Palette:
    """The colours of *gen*'s biomes and water from their materials (*looks*; None: every biome
    mid grey, as if no material existed)."""
    colours: list[RGB] = []
    info: list[dict[str, Any]] = []
    for name, ground in zip(gen.p.biome_names, gen.p.biome_grounds, strict=True):
        if looks is None or not ground:
            colours.append(NO_MATERIAL)
            info.append(
                {
                    "biome": name,
                    "material": ground,
                    "colour": hexrgb(NO_MATERIAL),
                    "status": "missing" if ground else "no material",
                }
            )
            continue
        look = looks.look(ground, f"biome {name}")
        rgb = rgb3(look.colour) if look.info.get("status") != "missing" else NO_MATERIAL
        colours.append(rgb)
        info.append({"biome": name, **look.info, "colour": hexrgb(rgb)})
    wname = getattr(getattr(gen.world, "terrain", None), "water", "") or ""
    water, winfo = WATER, {"material": "", "status": "built-in", "colour": hexrgb(WATER)}
    if wname and looks is not None:
        look = looks.look(wname, "the terrain's water")
        if look.info.get("status") != "missing":
            water = rgb3(look.colour)
            winfo = {**look.info, "colour": hexrgb(water)}
    return Palette(tuple(colours), water, tuple(info), winfo)


# -- the cells -------------------------------------------------------------------------------------


def cells_rgb(gen: Generator, x0: int, z0: int, w: int, h: int, pal: Palette, lay=None) -> np.ndarray:
    """``(h, w, 3) uint8``: the colour of each cell (section 14, steps 1-5)."""
    p = gen.p
    lay = lay if lay is not None else gen.layers(x0, z0, w, h)
    g = lay.ground
    rgb = np.asarray(pal.biomes, dtype=np.int64)[lay.biome]  # (h, w, 3)
    # hill shading, light from the north-west: brighter where the ground rises toward +x and +z
    sx = (g[:-1, 1:] + g[1:, 1:]) - (g[:-1, :-1] + g[1:, :-1])
    sz = (g[1:, :-1] + g[1:, 1:]) - (g[:-1, :-1] + g[:-1, 1:])
    shade = 256 + np.clip(((sx + sz) * 96) // p.cell_mm, -112, 112)
    shade += np.clip(lay.centre // 400, -24, 24)  # a little brighter up high
    rgb = (rgb * shade[:, :, None]) >> 8
    depth = np.clip((lay.level - lay.centre) // 40, 0, 120)
    water = (np.asarray(pal.water, dtype=np.int64)[None, None, :] * (256 - depth)[:, :, None]) >> 8
    rgb = np.where(lay.wet[:, :, None], water, rgb)
    tree = (lay.owner_kind == SCATTER) | (lay.owner_kind == VEGETATION)
    rgb = np.where(tree[:, :, None], (rgb * 3 + np.asarray(TREE)[None, None, :]) >> 2, rgb)
    n = p.cells
    xs = np.arange(x0, x0 + w)
    zs = np.arange(z0, z0 + h)
    outside = ~(((xs >= -n) & (xs < n))[None, :] & ((zs >= -n) & (zs < n))[:, None])
    rgb = np.where(outside[:, :, None], rgb >> 1, rgb)
    return np.clip(rgb, 0, 255).astype(np.uint8)


# -- labels ----------------------------------------------------------------------------------------


@dataclass
class Mark:
    """A label to place beside its mark: pixel of the mark (map pixels), the gap to keep from it,
    its text, colour and kind ("place", "site", "feature", "vegetation", "view", "finding")."""

    x: int
    y: int
    gap: int
    text: str
    colour: tuple[int, int, int]
    kind: str


def place_labels(
    draw: ImageDraw.ImageDraw,
    font: Any,
    marks: Sequence[Mark],
    size: tuple[int, int],
    taken: Sequence[tuple[int, int, int, int]] = (),
) -> tuple[list[dict[str, Any]], list[Mark]]:
    """Where labels go, greedy in the given order (put the important ones first): each takes the
    first free spot beside its mark (right, left, below, above, then a line or two further), else
    the first free spot further out in eight directions (drawn with a leader line), else it is
    left out. A spot is free when its box (outline included) overlaps no label placed before nor
    a box of *taken*, and lies inside ``size``. Returns the placed labels (``{"text", "kind",
    "xy", "box", "lead": the leader line's ends or None}``) and the marks left out."""
    W, H = size
    placed: list[tuple[int, int, int, int]] = list(taken)
    out: list[dict[str, Any]] = []
    dropped: list[Mark] = []

    def free(b: tuple[int, int, int, int]) -> bool:
        if b[0] < 0 or b[1] < 0 or b[2] > W or b[3] > H:
            return False
        return all(min(b[2], p[2]) <= max(b[0], p[0]) or min(b[3], p[3]) <= max(b[1], p[1]) for p in placed)

    for m in marks:
        left, top, right, bottom = (int(v) for v in draw.textbbox((0, 0), m.text, font=font))
        tw, th = right - left, bottom - top
        cx, cy, gap = m.x, m.y, m.gap
        near = []
        for k in (0, 1, 2):
            dy = k * (th + 2)
            near += [
                (cx + gap, cy - th // 2 + dy),
                (cx + gap, cy - th // 2 - dy),
                (cx - gap - tw, cy - th // 2 + dy),
                (cx - gap - tw, cy - th // 2 - dy),
                (cx - tw // 2, cy + gap + dy),
                (cx - tw // 2, cy - gap - th - dy),
            ]
        far = []
        for r in (gap + 16, gap + 30, gap + 48):
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)):
                ax, ay = cx + dx * r, cy + dy * r
                far.append((ax if dx >= 0 else ax - tw, ay - th // 2 if dy == 0 else (ay if dy > 0 else ay - th)))
        got = None
        for lead, spots in ((False, near), (True, far)):
            for x, y in spots:
                box = (x + left - 1, y + top - 1, x + right + 1, y + bottom + 1)
                if free(box):
                    got = (lead, (x, y), box)
                    break
            if got:
                break
        if got is None:
            dropped.append(m)
            continue
        lead, xy, box = got
        placed.append(box)
        line = None
        if lead:  # from the mark to the nearest point of the label's box
            ex = min(max(cx, box[0]), box[2] - 1)
            ey = min(max(cy, box[1]), box[3] - 1)
            line = [cx, cy, ex, ey]
        out.append({"text": m.text, "kind": m.kind, "xy": list(xy), "box": list(box), "lead": line, "colour": m.colour})
    return out, dropped


# -- the picture -----------------------------------------------------------------------------------


@dataclass
class Glyph:
    """A legend row: what it shows (kind), how it is drawn (shape "swatch", "circle", "square",
    "cross", "ring", "line", "polygon", "dashed"), its colour and text."""

    kind: str
    shape: str
    colour: tuple[int, int, int]
    text: str
    name: str = ""


#: rows of cells a map computes at once (one Generator.layers; progress after each strip)
MAP_STRIP = 256


class MapPicture:
    """A map of ``size`` cells around cell ``at`` at ``scale`` pixels per cell, with its marks;
    :meth:`compose` frames it with title, axes, scale bar, north arrow and legend."""

    def __init__(
        self,
        gen: Generator,
        at: Sequence[int],
        size: Sequence[int],
        scale: int | None,
        pal: Palette,
        world: str = "",
        progress: Progress | None = None,
    ):
        w, h = int(size[0]), int(size[1])
        self.gen, self.pal, self.world = gen, pal, world or str(getattr(gen.world, "name", "") or "")
        self.w, self.h = w, h
        self.x0, self.z0 = int(at[0]) - w // 2, int(at[1]) - h // 2
        self.at = (int(at[0]), int(at[1]))
        self.scale = scale if scale is not None else min(8, max(1, 1024 // max(w, h)))
        self.font = _font()
        self.marks: list[Mark] = []
        self.glyphs: list[Glyph] = []
        self.counts: dict[str, int] = {}
        #: boxes no label may cover (footprints)
        self.clear: list[tuple[int, int, int, int]] = []
        self.progress = progress
        self.img = self._cells()
        self.draw = ImageDraw.Draw(self.img)
        self._shapes()

    # pixels of the map

    def px(self, x: float, z: float) -> tuple[int, int]:
        """The map pixel of the point (x, z) in cells."""
        return int(round((x - self.x0) * self.scale)), int(round((z - self.z0) * self.scale))

    def centre(self, x: int, z: int) -> tuple[int, int]:
        """The map pixel at the centre of cell [x, z]."""
        s = self.scale
        return (x - self.x0) * s + s // 2, (z - self.z0) * s + s // 2

    def _cells(self) -> Image.Image:
        """The cells' pixels, :data:`MAP_STRIP` rows at a time (one :meth:`Generator.layers` each,
        ``progress(rows done, rows, "map rows")`` after each), and what the legend needs of them."""
        gen, s = self.gen, self.scale
        rgb = np.zeros((self.h, self.w, 3), dtype=np.uint8)
        self.wet = self.trees = False
        for r in range(0, self.h, MAP_STRIP):
            n = min(MAP_STRIP, self.h - r)
            lay = gen.layers(self.x0, self.z0 + r, self.w, n)
            rgb[r : r + n] = cells_rgb(gen, self.x0, self.z0 + r, self.w, n, self.pal, lay)
            self.wet = self.wet or bool(lay.wet.any())
            self.trees = self.trees or bool(((lay.owner_kind == SCATTER) | (lay.owner_kind == VEGETATION)).any())
            tell(self.progress, r + n, self.h, "map rows")
        #: the structures near the map, as one gen.layers of it has them
        self.structures = gen.structs.in_rect(self.x0, self.z0, self.w, self.h, gen.margin)
        if s > 1:
            rgb = np.repeat(np.repeat(rgb, s, axis=0), s, axis=1)
            c = gen.p.chunk
            cols = [(x - self.x0) * s for x in range(self.x0, self.x0 + self.w) if x % c == 0]
            rows = [(z - self.z0) * s for z in range(self.z0, self.z0 + self.h) if z % c == 0]
            rgb[:, cols] = (rgb[:, cols].astype(np.int64) * 7 >> 3).astype(np.uint8)
            rgb[rows, :] = (rgb[rows, :].astype(np.int64) * 7 >> 3).astype(np.uint8)
        return Image.fromarray(np.ascontiguousarray(rgb), "RGB")

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def _shapes(self) -> None:
        p, s = self.gen.p, self.scale
        W, H = self.img.size
        kinds = set()
        for f in p.features:
            colour = FEATURE.get(f.kind, (255, 255, 255))
            cx, cz = self.px(f.x, f.z)
            r = f.radius * s
            if cx + r < 0 or cz + r < 0 or cx - r > W or cz - r > H:
                continue
            self.draw.ellipse((cx - r, cz - r, cx + r, cz + r), outline=colour, width=2 if s > 1 else 1)
            kinds.add(f.kind)
            self._count("features")
            if 0 <= cx < W and 0 <= cz < H:
                self.marks.append(Mark(cx, cz, 4, f.name, colour, "feature"))
            else:  # the centre is off the map: label the circle where it crosses in
                ex, ez = min(max(cx, 2), W - 3), min(max(cz, 2), H - 3)
                self.marks.append(Mark(ex, ez, 4, f.name, colour, "feature"))
        areas = False
        for v in p.vegetation:
            if not v.area:
                continue
            cx, cz = self.px(v.x, v.z)
            r = v.radius * s
            if cx + r < 0 or cz + r < 0 or cx - r > W or cz - r > H:
                continue
            self.draw.ellipse((cx - r, cz - r, cx + r, cz + r), outline=VEG_AREA, width=1)
            areas = True
            self._count("vegetation_areas")
            if 0 <= cx < W and 0 <= cz < H:
                self.marks.append(Mark(cx, cz, 4, v.name, VEG_AREA, "vegetation"))
        kinds_s = set()
        places: list[Mark] = []
        sites: list[Mark] = []
        for st in self.structures:
            if st.x1 <= self.x0 or st.z1 <= self.z0 or st.x0 >= self.x0 + self.w or st.z0 >= self.z0 + self.h:
                continue
            colour = PLACE if st.kind == "place" else SITE
            a, b = self.px(st.x0, st.z0)
            c2, d = self.px(st.x1, st.z1)
            self.draw.rectangle((a, b, max(a, c2 - 1), max(b, d - 1)), outline=colour, width=2 if s > 2 else 1)
            self.clear.append((a, b, max(a + 1, c2), max(b + 1, d)))  # no label over a footprint
            kinds_s.add(st.kind)
            self._count("places" if st.kind == "place" else "sites")
            mx, my = min(max((a + c2) // 2, 0), W - 1), min(max((b + d) // 2, 0), H - 1)
            gap = max(c2 - a, d - b) // 2 + 3
            (places if st.kind == "place" else sites).append(Mark(mx, my, gap, st.name, colour, st.kind))
        self.marks = places + [m for m in self.marks] + sites
        # the legend's rows, in the order a reader needs them
        for b, (name, colour) in enumerate(zip(p.biome_names, self.pal.biomes, strict=True)):
            info = self.pal.info[b] if b < len(self.pal.info) else {}
            what = info.get("material") or "no material"
            self.glyphs.append(Glyph("biome", "swatch", colour, f"{name}: {what} {info.get('colour', '')}", name))
        if self.wet:
            self.glyphs.append(Glyph("water", "swatch", self.pal.water, "water (darker where deeper)"))
        if self.trees:
            base = np.asarray(self.pal.biomes[0] if self.pal.biomes else NO_MATERIAL, dtype=np.int64)
            dark = rgb3((base * 3 + np.asarray(TREE)) >> 2)
            self.glyphs.append(Glyph("prefab_cell", "swatch", dark, "darker cell: a scattered or vegetation prefab"))
        for k in ("hill", "plain", "lake", "sea"):
            if k in kinds:
                self.glyphs.append(Glyph("feature", "circle", FEATURE[k], f"feature: {k} (its radius)", k))
        if areas:
            self.glyphs.append(Glyph("vegetation", "circle", VEG_AREA, "vegetation area (its radius)"))
        if "place" in kinds_s:
            self.glyphs.append(Glyph("place", "square", PLACE, "place (its footprint, named)"))
        if "site" in kinds_s:
            self.glyphs.append(Glyph("site", "square", SITE, "site (its footprint, named)"))
        if s > 1:
            self.glyphs.append(Glyph("chunk", "line", (90, 90, 90), f"chunk border (every {p.chunk} cells)"))
        n = p.cells
        if self.x0 < -n or self.z0 < -n or self.x0 + self.w > n or self.z0 + self.h > n:
            self.glyphs.append(Glyph("outside", "swatch", (64, 64, 64), "outside the world (dimmed)"))

    # the frame around it

    def title(self) -> str:
        p = self.gen.p
        cell = p.cell_mm / 1000.0
        return (
            f"world {self.world}, seed {p.seed}: {self.w} x {self.h} cells around cell [{self.at[0]}, "
            f"{self.at[1]}], cells of {cell:g} m ({self.w * cell:g} x {self.h * cell:g} m), "
            f"{self.scale} px per cell"
        )

    def compose(self, taken: Sequence[tuple[int, int, int, int]] = ()) -> tuple[Image.Image, dict[str, Any]]:
        """The framed picture and what it holds: ``{"title", "map_box" (the map's pixels in the
        picture), "origin", "scale", "ticks" (cells between ticks), "scale_bar_m", "legend": [{"kind",
        "name", "text", "colour", "box"}], "labels": [{"text", "kind", "box", "lead"}], "dropped":
        [labels left out], "counts"}``."""
        labels, dropped = place_labels(self.draw, self.font, self.marks, self.img.size, [*taken, *self.clear])
        for lb in labels:
            if lb["lead"]:
                self.draw.line(lb["lead"], fill=(0, 0, 0), width=1)
        for lb in labels:
            _label(self.draw, tuple(lb["xy"]), lb["text"], lb["colour"], self.font)
        font, s = self.font, self.scale
        W, H = self.img.size
        d0 = ImageDraw.Draw(Image.new("RGB", (1, 1)))

        def tw(text: str) -> int:
            return int(d0.textlength(text, font=font))

        # ticks every `step` cells (a power of two, at least 40 px apart)
        step = 1
        while step * s < 40:
            step *= 2
        xs = [x for x in range(self.x0, self.x0 + self.w + 1) if x % step == 0]
        zs = [z for z in range(self.z0, self.z0 + self.h + 1) if z % step == 0]
        left_w = max([tw(str(z)) for z in zs] + [tw("z")]) + 10
        title = self.title()
        mx, my = PAD + left_w, PAD + LINE + LINE + 4  # the map's top-left corner in the picture
        legend_x = mx + W + 2 * PAD
        rows = len(self.glyphs)
        legend_h = LINE * (rows + 6) + 44
        notes = ["shading: light from the north-west", "ground higher: a little brighter"]
        legend_w = max([tw(g.text) + 20 for g in self.glyphs] + [tw(t) for t in notes] + [LEGEND_W])
        width = max(legend_x + legend_w + PAD, PAD * 2 + tw(title), PAD * 2 + tw(AXES))
        height = max(my + H + LINE * 3 + PAD, my + legend_h + PAD)
        out = Image.new("RGB", (width, height), PAPER)
        out.paste(self.img, (mx, my))
        d = ImageDraw.Draw(out)
        d.text((PAD, PAD), title, fill=INK, font=font)
        d.rectangle((mx - 1, my - 1, mx + W, my + H), outline=INK)
        for x in xs:
            px = mx + (x - self.x0) * s
            d.line([(px, my - 4), (px, my - 1)], fill=INK)
            t = str(x)
            d.text((min(max(px - tw(t) // 2, mx - left_w), mx + W - tw(t)), my - 4 - LINE), t, fill=INK, font=font)
        for z in zs:
            py = my + (z - self.z0) * s
            d.line([(mx - 4, py), (mx - 1, py)], fill=INK)
            t = str(z)
            d.text((mx - 6 - tw(t), min(max(py - 6, my - 2), my + H - 11)), t, fill=INK, font=font)
        d.text((PAD, my + H + 4), AXES, fill=DIM, font=font)
        # scale bar: a round number of metres about a fifth of the map wide
        cell = self.gen.p.cell_mm / 1000.0
        metres = 1.0
        for m in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000):
            if m / cell * s <= W / 4:
                metres = float(m)
        bar = int(round(metres / cell * s))
        by = my + H + 4 + LINE + 4
        bx = mx
        d.rectangle((bx, by, bx + bar, by + 4), outline=INK, fill=PAPER)
        d.rectangle((bx, by, bx + bar // 2, by + 4), fill=INK)
        d.text((bx + bar + 6, by - 3), f"{metres:g} m ({metres / cell:g} cells)", fill=INK, font=font)
        # legend: the north arrow, then one row per glyph
        lx, ly = legend_x, my
        d.polygon([(lx + 7, ly), (lx + 1, ly + 14), (lx + 7, ly + 10), (lx + 13, ly + 14)], fill=INK)
        d.text((lx + 20, ly + 2), "N: north is up (-z)", fill=INK, font=font)
        ly += 24
        d.text((lx, ly), "legend", fill=INK, font=font)
        ly += LINE + 2
        legend = []
        for g in self.glyphs:
            box = (lx, ly + 1, lx + 14, ly + 11)
            self._glyph(d, g, box)
            d.text((lx + 20, ly), g.text, fill=INK, font=font)
            legend.append(
                {
                    "kind": g.kind,
                    "name": g.name,
                    "text": g.text,
                    "colour": hexrgb(g.colour),
                    "box": [box[0], box[1], box[2] + 1, box[3] + 1],
                }
            )
            ly += LINE
        ly += 4
        for t in notes:
            d.text((lx, ly), t, fill=DIM, font=font)
            ly += LINE
        info = {
            "title": title,
            "map_box": [mx, my, mx + W, my + H],
            "origin": [self.x0, self.z0],
            "scale": s,
            "ticks": step,
            "scale_bar_m": metres,
            "legend": legend,
            "labels": [
                {
                    "text": lb["text"],
                    "kind": lb["kind"],
                    "box": [lb["box"][0] + mx, lb["box"][1] + my, lb["box"][2] + mx, lb["box"][3] + my],
                    "lead": lb["lead"] is not None,
                }
                for lb in labels
            ],
            "dropped": [m.text for m in dropped],
            "counts": dict(sorted(self.counts.items())),
        }
        return out, info

    @staticmethod
    def _glyph(d: ImageDraw.ImageDraw, g: Glyph, box: tuple[int, int, int, int]) -> None:
        x0, y0, x1, y1 = box
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        if g.shape == "swatch":
            d.rectangle(box, fill=g.colour)
            d.rectangle(box, outline=DIM)
            d.rectangle((x0 + 1, y0 + 1, x1 - 1, y1 - 1), fill=g.colour)
        elif g.shape == "circle":
            d.ellipse((cx - 5, cy - 5, cx + 5, cy + 5), outline=g.colour, width=2)
        elif g.shape == "square":
            d.rectangle((x0 + 2, y0, x1 - 2, y1), outline=g.colour, width=2)
        elif g.shape == "cross":
            d.rectangle(box, fill=GLYPH_BG)
            d.line([(cx - 5, cy), (cx + 5, cy)], fill=g.colour, width=2)
            d.line([(cx, cy - 5), (cx, cy + 5)], fill=g.colour, width=2)
        elif g.shape == "ring":
            d.ellipse((cx - 5, cy - 5, cx + 5, cy + 5), outline=g.colour, width=2)
        elif g.shape == "dashed":
            d.rectangle(box, fill=GLYPH_BG)
            for x in range(x0, x1 + 1, 4):
                d.line([(x, cy), (min(x + 1, x1), cy)], fill=g.colour, width=2)
        elif g.shape == "polygon":
            d.rectangle(box, fill=GLYPH_BG)
            d.polygon([(x0 + 4, y1), (x0, y0), (x1, y0), (x1 - 4, y1)], outline=g.colour)
        else:  # line
            d.line([(x0, cy), (x1, cy)], fill=g.colour, width=1)


def render_map(
    gen: Generator,
    at: Sequence[int] = (0, 0),
    size: Sequence[int] = (256, 256),
    scale: int | None = None,
    pal: Palette | None = None,
    world: str = "",
    progress: Progress | None = None,
) -> tuple[Image.Image, dict]:
    """The framed map of the ``size`` cells around cell *at* (``scale`` pixels per cell, default
    1024 // the larger side, clamped to 1..8), coloured by *pal* (default: no materials):
    (image, what it holds, :meth:`MapPicture.compose`). *progress* hears the rows of cells done."""
    pic = MapPicture(gen, at, size, scale, pal if pal is not None else palette(gen, None), world, progress)
    return pic.compose()


def png_bytes(img: Image.Image) -> bytes:
    """PNG bytes with fixed settings (compression level 6, no optimisation, no metadata)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6, optimize=False)
    return buf.getvalue()
