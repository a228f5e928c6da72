"""Preview images of cooked assets (``veduta preview texture NAME --out FILE.png``).

:func:`preview_texture` draws a TEXR record: the mip chain side by side (each level labelled with
its size), for a tiling texture level 0 repeated 2 x 2 (so its seams meet in the middle), then
for a sprite sheet every frame labelled with its index and one row per clip
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
#: rows of cells wrap at this width (the mip chain of a large texture may be wider)
MAX_ROW = 1600
#: frames drawn at most, in the frame table and per clip (a 256 x 256 grid has 65,536)
MAX_FRAMES = 256
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
        img = img.resize((img.width * scale, img.height * scale), Image.Resampling.NEAREST)
    h, w = img.height, img.width
    ys, xs = np.mgrid[0:h, 0:w]
    cell = ((xs // 4 + ys // 4) & 1).astype(np.uint8)
    board = np.where(cell[..., None] == 1, np.uint8(204), np.uint8(236)).repeat(3, axis=2)
    back = Image.fromarray(np.dstack([board, np.full((h, w), 255, np.uint8)]), "RGBA")
    return Image.alpha_composite(back, img)


def _scale_for(w: int, h: int, target: int) -> int:
    return max(1, min(8, target // max(w, h, 1)))


#: The picture is kept within this many pixels (4096 x 4096): the tiled view, rows of the frame
#: table and clip rows that would pass it are left out and counted on a last line.  The mip chain
#: is always drawn: the format's limits bound it (a 2048 x 2048 texture's is 2,070 x 3,462
#: pixels at most, docs/export.md).
MAX_PIXELS = 4096 * 4096


def bound_text(pixels: int | None = None) -> str:
    """A bound of *pixels* (:data:`MAX_PIXELS` as it is now) in words: ``4096 x 4096`` for a
    square's, else the count (``950,000``)."""
    import math

    pixels = MAX_PIXELS if pixels is None else pixels
    side = math.isqrt(pixels)
    return f"{side} x {side}" if side * side == pixels else f"{pixels:,}"


class _Cell:
    """An image of the sheet, drawn only when the sheet is rendered (a planned cell costs nothing)."""

    def __init__(self, width: int, height: int, caption: str, draw):
        self.width, self.height, self.caption, self.draw = width, height, caption, draw


def _ready(im: Image.Image, caption: str) -> _Cell:
    return _Cell(im.width, im.height, caption, lambda: im)


class _Sheet:
    """Rows of cells, with an optional heading per row, laid out top to bottom."""

    def __init__(self, font):
        self.font = font
        self.rows: list[tuple[str, list[_Cell]]] = []
        self.line = _text_size(font, "Ag0")[1] + 2
        #: planned size of the rows so far: (width, height) after each row
        self.sizes: list[tuple[int, int]] = []

    def _cell_w(self, cell: _Cell) -> int:
        return max(cell.width, _text_size(self.font, cell.caption)[0]) + GAP

    def _push(self, heading: str, cells: list[_Cell]) -> None:
        width, height = self.sizes[-1] if self.sizes else (PAD, PAD)
        row_w = PAD + sum(self._cell_w(c) for c in cells)
        width = max(width, row_w + PAD, _text_size(self.font, heading)[0] + 2 * PAD)
        height += self.line + max((c.height for c in cells), default=0) + self.line + PAD
        self.rows.append((heading, cells))
        self.sizes.append((width, height))

    def pop(self) -> tuple[str, list[_Cell]]:
        self.sizes.pop()
        return self.rows.pop()

    def size(self) -> tuple[int, int]:
        """The picture's planned (width, height) in pixels."""
        return self.sizes[-1] if self.sizes else (PAD, PAD)

    def add(self, heading: str, cells: list[_Cell]) -> int:
        """A heading and its cells, wrapped into rows no wider than MAX_ROW (a cell wider
        than that gets a row of its own); returns the number of rows added."""
        row: list[_Cell] = []
        x = PAD
        added = 0
        for cell in cells:
            w = self._cell_w(cell)
            if row and x + w > MAX_ROW:
                self._push(heading, row)
                heading, row, x, added = "", [], PAD, added + 1
            row.append(cell)
            x += w
        self._push(heading, row)
        return added + 1

    def render(self) -> Image.Image:
        line = self.line
        width, height = self.size()
        out = Image.new("RGBA", (width, height), BG)
        draw = ImageDraw.Draw(out)
        #: where each cell went: (caption, [left, top, right, bottom])
        self.boxes: list[tuple[str, list[int]]] = []
        y = PAD
        for heading, cells in self.rows:
            draw.text((PAD, y), heading, font=self.font, fill=INK)
            y += line
            x = PAD
            tallest = max((c.height for c in cells), default=0)
            for cell in cells:
                out.paste(cell.draw(), (x, y))
                self.boxes.append((cell.caption, [x, y, x + cell.width, y + cell.height]))
                draw.text((x, y + cell.height + 1), cell.caption, font=self.font, fill=DIM)
                x += self._cell_w(cell)
            y += tallest + line + PAD
        return out


def _fits(sheet: _Sheet, note: tuple[int, int] | None) -> bool:
    """The planned picture, with the (width, height) of a last line *note*, within MAX_PIXELS."""
    w, h = sheet.size()
    if note is not None:
        w, h = max(w, note[0]), h + note[1]
    return w * h <= MAX_PIXELS


def _note(left: int) -> str:
    return (
        f"... {left} more clip{'s' if left != 1 else ''} not shown (the picture is kept within {MAX_PIXELS:,} pixels)"
    )


def left_out_words(tiled: bool, frames: int, clips: int, of: int | None = None) -> list[str]:
    """What a preview left out, in words (the picture's last line; ``veduta preview texture``'s
    line, with *of* the texture's clips): the tiled view, *frames* frames of the table, *clips*
    clips."""
    parts = ["the tiled view"] if tiled else []
    parts += [f"{frames} frame{'s' if frames != 1 else ''} of the table"] if frames else []
    if clips:
        parts.append(f"{clips} of {of} clips" if of is not None else f"{clips} clip{'s' if clips != 1 else ''}")
    return parts


def _note_all(tiled: bool, frames: int, clips: int) -> str:
    """The last line when more than clips is left out (clips alone: :func:`_note`)."""
    said = ", ".join(left_out_words(tiled, frames, clips))
    return f"... not shown: {said} (the picture is kept within {MAX_PIXELS:,} pixels)"


def _note_size(sheet: _Sheet, text: str) -> tuple[int, int]:
    """The (width, height) a last line *text* (a heading, no cells) adds to the picture."""
    return _text_size(sheet.font, text)[0] + 2 * PAD, 2 * sheet.line + PAD


def _add_within(sheet: _Sheet, heading, cells: list[_Cell], note: tuple[int, int] | None) -> int | None:
    """Add *cells* under ``heading(shown)``, wrapped, as many of their rows as keep the picture
    (with room for a last line of size *note*) within MAX_PIXELS: the number of cells shown, all
    of them when the whole fits; None when not even its first row fits (nothing added)."""
    added = sheet.add(heading(len(cells)), cells)
    if _fits(sheet, note):
        return len(cells)
    rows = [sheet.pop()[1] for _ in range(added)][::-1]
    for k in range(len(rows) - 1, 0, -1):
        kept = [c for row in rows[:k] for c in row]
        tried = sheet.add(heading(len(kept)), kept)
        if _fits(sheet, note):
            return len(kept)
        for _ in range(tried):
            sheet.pop()
    return None


def _clip_heading(clip, play: str, shown: int, total: int) -> str:
    how = "loop" if clip.loop else (f"then {clip.next}" if clip.next else "once")
    head = f"clip {clip.name}: {clip.fps:g} fps, {how}" + ("  [play]" if clip.name == play else "")
    return head + (f", the first {shown} of {total} frames shown" if shown < total else "")


def _add_clips(sheet: _Sheet, clips: list, play: str, count: int, cell, note: tuple[int, int], always: bool) -> int:
    """One row (or more, wrapped) per clip, in name order, while the picture stays within
    MAX_PIXELS (with room for a last line of size *note* while clips follow, or *always*: a last
    line comes anyway); a clip cut partway says how many of its frames are shown.  Returns the
    number of clips left out (0: every clip shown); the caller counts them on a last line."""
    for i, clip in enumerate(clips):
        frames = [f for f in clip.frames if f < count]
        cells = [cell(f) for f in frames[:MAX_FRAMES]]
        total = len(frames)
        shown = _add_within(
            sheet,
            lambda n, clip=clip, total=total: _clip_heading(clip, play, n, total),
            cells,
            note if always or i + 1 < len(clips) else None,
        )
        if shown == len(cells):
            continue
        # too big: as many of this clip's rows as fit were kept (its heading says how many frames)
        return len(clips) - i - (shown is not None)
    return 0


def preview_image(tex: Texture, boxes: list | None = None, counts: dict | None = None) -> Image.Image:
    """The preview of a texture record as a Pillow RGBA image; *boxes* gets where each cell went
    (``(caption, [left, top, right, bottom])``), *counts* ``clips_left_out``."""
    sheet, left_out = plan_sheet(tex)
    img = sheet.render()
    if boxes is not None:
        boxes.extend(sheet.boxes)
    if counts is not None:
        counts.update(left_out)
    return img


def plan_sheet(tex: Texture) -> tuple[_Sheet, dict]:
    """The preview's layout, nothing drawn yet (``sheet.size()`` is the picture's size), and what
    it leaves out to keep the picture within MAX_PIXELS: ``{"clips_left_out": clips without a
    row, "frames_left_out": frames of the table not drawn (of its first MAX_FRAMES),
    "tiled_left_out": whether a tiling texture's 2 x 2 view is not drawn}``."""
    font = _font()
    sheet = _Sheet(font)
    levels = [unpack_argb(np.asarray(lv)) for lv in tex.images or []]
    title = (
        f"{tex.name}: {tex.width} x {tex.height}, {tex.levels} level{'s' if tex.levels != 1 else ''}, "
        f"wrap {'clamp' if tex.wrap else 'repeat'}{', tiling' if tex.tiling else ''}"
        f"{', autotile' if tex.autotile else ''}"
    )
    if tex.edge is not None:
        e = tex.edge
        title += f", edge priority {e.priority} width {e.width:g} roughness {e.roughness:g} seed {e.seed}"
    if levels:
        scale = _scale_for(tex.width, tex.height, 128)
        sheet.add(
            title + (f" (shown x{scale})" if scale > 1 else ""),
            [_ready(_checkered(lv, scale), f"{i}: {lv.shape[1]}x{lv.shape[0]}") for i, lv in enumerate(levels)],
        )
    else:
        sheet.add(title, [])
    cols, rows = tex.grid
    clips = list(tex.clips or []) if levels and cols and rows else []
    count = cols * rows
    # room for the last line that says what is left out, at its widest
    widest = _note_size(sheet, _note_all(True, min(count, MAX_FRAMES), len(clips)))
    tiled_left_out, frames_left_out, clips_left_out = False, 0, 0
    if levels and tex.tiling:
        scale = _scale_for(2 * tex.width, 2 * tex.height, 256)
        w, h = 2 * tex.width * scale, 2 * tex.height * scale
        added = sheet.add(
            "tiled: level 0 repeated 2 x 2, so its seams meet in the middle"
            + (f" (shown x{scale})" if scale > 1 else ""),
            [
                _Cell(
                    w,
                    h,
                    f"{2 * tex.width}x{2 * tex.height}",
                    lambda s=scale: _checkered(np.tile(levels[0], (2, 2, 1)), s),
                )
            ],
        )
        if not _fits(sheet, widest if cols and rows else None):
            for _ in range(added):
                sheet.pop()
            tiled_left_out = True
    if levels and cols and rows:
        base = levels[0]
        fw, fh = tex.width // cols, tex.height // rows
        scale = _scale_for(fw, fh, 48)
        cache: dict[int, Image.Image] = {}

        def frame(f: int) -> Image.Image:
            if f not in cache:
                r, c = divmod(f, cols)
                cache[f] = _checkered(base[r * fh : (r + 1) * fh, c * fw : (c + 1) * fw], scale)
            return cache[f]

        def cell(f: int) -> _Cell:
            return _Cell(fw * scale, fh * scale, str(f), lambda: frame(f))

        table = min(count, MAX_FRAMES)

        def frames_heading(shown: int) -> str:
            more = f", the first {shown} shown" if shown < count else ""
            return f"frames: {cols} x {rows} grid of {fw} x {fh}" + (f" (shown x{scale})" if scale > 1 else "") + more

        cells = [cell(i) for i in range(table)]
        note: tuple[int, int] | None = widest
        if not clips and not tiled_left_out:  # no last line unless the table itself is cut
            added = sheet.add(frames_heading(table), cells)
            if _fits(sheet, None):
                note = None
            for _ in range(added):
                sheet.pop()
        shown = _add_within(sheet, frames_heading, cells, note)
        frames_left_out = table - (shown or 0)
        if frames_left_out:
            clips_left_out = len(clips)
        else:
            said = _note_all(True, 0, len(clips)) if tiled_left_out else _note(len(clips))
            clips_left_out = _add_clips(sheet, clips, tex.play, count, cell, _note_size(sheet, said), tiled_left_out)
    if tiled_left_out or frames_left_out:
        sheet.add(_note_all(tiled_left_out, frames_left_out, clips_left_out), [])
    elif clips_left_out:
        sheet.add(_note(clips_left_out), [])
    left_out = {"clips_left_out": clips_left_out, "frames_left_out": frames_left_out, "tiled_left_out": tiled_left_out}
    return sheet, left_out


def png_of(tex: Texture, boxes: list | None = None, counts: dict | None = None) -> tuple[bytes, Image.Image]:
    """The preview of a texture record as PNG bytes (deterministic) and the image."""
    import io

    img = preview_image(tex, boxes, counts)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue(), img


def write_preview(tex: Texture, out_path: str) -> None:
    """Write the preview of a texture record to *out_path* as a PNG (deterministic bytes, atomically)."""
    from veduta.base.fsutil import write_output

    write_output(out_path, png_of(tex)[0])


def preview_texture(project, name: str, out: str | None = None) -> dict:
    """Cook texture *name* of *project* when stale and draw its preview sheet (the mip chain, a
    tiling texture's level 0 tiled 2 x 2, the frames labelled with their clips); write it to *out*
    when given.

    ``{"texture", "out", "bytes", "width", "height", "size": [w, h] of level 0, "levels",
    "frames", "clips", "clips_left_out", "tiled", "cells": [{"caption", "box"}], "messages", "png"}``
    (the picture is kept within MAX_PIXELS: ``clips_left_out`` counts the clips it leaves out) (the faces
    write or send ``png``; ``--json`` shows the rest)."""
    from veduta.base.fsutil import write_output
    from veduta.cook.cooked import cooked_record

    messages: list[str] = []
    tex = cooked_record(project, "texture", name, messages.append)
    boxes: list = []
    counts: dict = {}
    data, img = png_of(tex, boxes, counts)
    if out is not None:
        write_output(out, data)
    cols, rows = tex.grid
    return {
        "texture": name,
        "out": out,
        "bytes": len(data),
        "width": img.width,
        "height": img.height,
        "size": [tex.width, tex.height],
        "levels": tex.levels,
        "frames": cols * rows,
        "clips": [c.name for c in tex.clips or []],
        "clips_left_out": counts["clips_left_out"],
        "frames_left_out": counts["frames_left_out"],
        "tiled_left_out": counts["tiled_left_out"],
        "tiled": bool(tex.tiling and tex.images),
        "cells": [{"caption": cap, "box": box} for cap, box in boxes],
        "messages": messages,
        "png": data,
    }
