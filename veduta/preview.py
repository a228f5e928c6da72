"""Preview images of cooked assets (``veduta preview texture NAME --out FILE.png``).

:func:`preview_texture` draws a TEXR record: the mip chain side by side (each level labelled with
its size), then for a sprite sheet every frame labelled with its index and one row per clip
(its frames in play order, fps, loop or next, and which clip plays by default).  Transparent
pixels show over a grey checkerboard.  The output is a pure function of the record (no
timestamps; Pillow's default font), so the same texture gives the same PNG bytes.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from veduta.compile.image import unpack_argb
from veduta.formats.texture import Texture

PAD = 8
GAP = 6
BG = (255, 255, 255, 255)
INK = (20, 20, 20, 255)
DIM = (110, 110, 110, 255)


def _font():
    """Pillow's default font: its bundled FreeType face at 12 px when FreeType is there, else the
    built-in bitmap font.  Either is part of Pillow, so a given Pillow gives the same pixels."""
    try:
        return ImageFont.load_default(size=12)
    except (TypeError, ImportError, OSError):  # no FreeType
        return ImageFont.load_default()


def _text_size(font, text: str) -> tuple[int, int]:
    left, top, right, bottom = font.getbbox(text)
    return int(right - min(left, 0)), int(bottom - min(top, 0))


def _checkered(rgba: np.ndarray, scale: int) -> Image.Image:
    """The image scaled up by an integer factor (nearest) over a grey checkerboard."""
    img = Image.fromarray(rgba, "RGBA")
    if scale != 1:
        img = img.resize((img.width * scale, img.height * scale), Image.NEAREST)
    h, w = img.height, img.width
    ys, xs = np.mgrid[0:h, 0:w]
    cell = ((xs // 4 + ys // 4) & 1).astype(np.uint8)
    board = np.where(cell[..., None] == 1, np.uint8(204), np.uint8(236)).repeat(3, axis=2)
    back = Image.fromarray(np.dstack([board, np.full((h, w), 255, np.uint8)]), "RGBA")
    return Image.alpha_composite(back, img)


def _scale_for(w: int, h: int, target: int) -> int:
    return max(1, min(8, target // max(w, h, 1)))


class _Sheet:
    """Rows of (image, caption) cells, with an optional heading per row, laid out top to bottom."""

    def __init__(self, font):
        self.font = font
        self.rows: list[tuple[str, list[tuple[Image.Image, str]]]] = []

    def add(self, heading: str, cells: list[tuple[Image.Image, str]]) -> None:
        self.rows.append((heading, cells))

    def render(self) -> Image.Image:
        line = _text_size(self.font, "Ag0")[1] + 2
        width, height = PAD, PAD
        for heading, cells in self.rows:
            row_w = PAD + sum(max(im.width, _text_size(self.font, cap)[0]) + GAP for im, cap in cells)
            width = max(width, row_w + PAD, _text_size(self.font, heading)[0] + 2 * PAD)
            height += line + max((im.height for im, _ in cells), default=0) + line + PAD
        out = Image.new("RGBA", (width, height), BG)
        draw = ImageDraw.Draw(out)
        y = PAD
        for heading, cells in self.rows:
            draw.text((PAD, y), heading, font=self.font, fill=INK)
            y += line
            x = PAD
            tallest = max((im.height for im, _ in cells), default=0)
            for im, cap in cells:
                out.paste(im, (x, y))
                draw.text((x, y + im.height + 1), cap, font=self.font, fill=DIM)
                x += max(im.width, _text_size(self.font, cap)[0]) + GAP
            y += tallest + line + PAD
        return out


def preview_image(tex: Texture) -> Image.Image:
    """The preview of a texture record as a Pillow RGBA image."""
    font = _font()
    sheet = _Sheet(font)
    levels = [unpack_argb(np.asarray(lv)) for lv in tex.images or []]
    title = f"{tex.name}: {tex.width} x {tex.height}, {tex.levels} level{'s' if tex.levels != 1 else ''}, " \
            f"wrap {'clamp' if tex.wrap else 'repeat'}{', tiling' if tex.tiling else ''}" \
            f"{', autotile' if tex.autotile else ''}"
    if tex.edge is not None:
        e = tex.edge
        title += f", edge priority {e.priority} width {e.width:g} roughness {e.roughness:g} seed {e.seed}"
    if levels:
        scale = _scale_for(tex.width, tex.height, 128)
        sheet.add(title + (f" (shown x{scale})" if scale > 1 else ""),
                  [(_checkered(lv, scale), f"{i}: {lv.shape[1]}x{lv.shape[0]}") for i, lv in enumerate(levels)])
    else:
        sheet.add(title, [])
    cols, rows = tex.grid
    if levels and cols and rows:
        base = levels[0]
        fw, fh = tex.width // cols, tex.height // rows
        scale = _scale_for(fw, fh, 48)
        frames = [_checkered(base[(f // cols) * fh:(f // cols + 1) * fh, (f % cols) * fw:(f % cols + 1) * fw], scale)
                  for f in range(cols * rows)]
        sheet.add(f"frames: {cols} x {rows} grid of {fw} x {fh}" + (f" (shown x{scale})" if scale > 1 else ""),
                  [(im, str(i)) for i, im in enumerate(frames)])
        for clip in tex.clips or []:
            how = "loop" if clip.loop else (f"then {clip.next}" if clip.next else "once")
            head = f"clip {clip.name}: {clip.fps:g} fps, {how}" + ("  [play]" if clip.name == tex.play else "")
            sheet.add(head, [(frames[f], str(f)) for f in clip.frames if f < len(frames)])
    return sheet.render()


def preview_texture(tex: Texture, out_path: str) -> None:
    """Write the preview of a texture record to *out_path* as a PNG (deterministic bytes)."""
    preview_image(tex).save(out_path, format="PNG", optimize=False)
