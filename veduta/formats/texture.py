"""TEXR: compiled texture with its mip chain (container spec, "TEXR — compiled texture").

Pixels are held as ``(h, w)`` numpy arrays of ``<u4`` colours 0xAARRGGBB
(bytes B, G, R, A in the file), one per level.
"""

from __future__ import annotations

import hashlib

import numpy as np

from veduta.formats.codec import (
    BOOL,
    F32,
    I64,
    STR,
    U8,
    U32,
    Custom,
    List,
    Opt,
    Struct,
    StructType,
    Tuple,
)

PIXEL_DTYPE = np.dtype("<u4")
MAX_SIZE = 16777216


def max_levels(width: int, height: int) -> int:
    """1 + floor(log2(max(width, height))): the chain down to 1 x 1."""
    return max(width, height).bit_length() if max(width, height) > 0 else 0


def level_size(width: int, height: int, i: int) -> tuple[int, int]:
    return max(1, width >> i), max(1, height >> i)


def _write_levels(w, levels):
    for img in levels or []:
        h, wd = img.shape
        w.u32(wd)
        w.u32(h)
        w.raw(np.ascontiguousarray(img, PIXEL_DTYPE).tobytes())


def _read_levels(r, ctx, what):
    n, width, height = ctx["levels"], ctx["width"], ctx["height"]
    from veduta.base.errors import VdaError

    if n == 0:
        if width or height:
            raise r.fail(f"width and height must be 0 when levels is 0 (found {width} x {height})")
        return []
    if not (1 <= width <= MAX_SIZE and 1 <= height <= MAX_SIZE):
        raise r.fail(f"size {width} x {height} is not 1 to {MAX_SIZE} on each side")
    if n > max_levels(width, height):
        raise r.fail(f"{n} levels, more than the {max_levels(width, height)} a {width} x {height} chain has")
    out = []
    for i in range(n):
        at = r.pos
        lw = r.u32(f"{what}[{i}].w")
        lh = r.u32(f"{what}[{i}].h")
        if (lw, lh) != level_size(width, height, i):
            raise VdaError(
                f"level {i} measures {lw} x {lh}, want {level_size(width, height, i)[0]} x "
                f"{level_size(width, height, i)[1]}",
                offset=r.base + at,
            )
        out.append(r.fixed_array(PIXEL_DTYPE, lw * lh, f"{what}[{i}] pixels").reshape(lh, lw))
    return out


def _eq_levels(a, b):
    a, b = a or [], b or []
    return len(a) == len(b) and all(
        x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True)
    )


def _levels_json(levels):
    return [
        {
            "width": int(img.shape[1]),
            "height": int(img.shape[0]),
            "sha256": hashlib.sha256(np.ascontiguousarray(img, PIXEL_DTYPE).tobytes()).hexdigest(),
        }
        for img in levels or []
    ]


LEVELS = Custom("level x levels", _write_levels, _read_levels, default=list, eq=_eq_levels, to_json=_levels_json)


class Clip(Struct):
    FIELDS = (("name", STR), ("frames", List(U32)), ("fps", F32), ("loop", BOOL), ("next", STR))


class Edge(Struct):
    FIELDS = (("priority", I64), ("width", F32), ("roughness", F32), ("seed", I64))


class Texture(Struct):
    CHUNK = "TEXR"
    FIELDS = (
        ("name", STR),
        ("tiling", BOOL),
        ("layers", I64),
        ("width", U32),
        ("height", U32),
        ("levels", U32),
        ("wrap", U8),
        ("images", LEVELS),
        ("grid", Tuple(U32, U32, name="u32 x 2")),
        ("clips", List(StructType(Clip))),
        ("play", STR),
        ("edge", Opt(StructType(Edge))),
        ("autotile", BOOL),
    )

    def check(self, fail):
        if self.wrap > 1:
            raise fail("wrap", f"{self.wrap} is not 0 (repeat) or 1 (clamp)")
        c, r = self.grid
        if not ((c == 0 and r == 0) or (1 <= c <= 256 and 1 <= r <= 256)):
            raise fail("grid", f"grid {c} x {r} is not 0 x 0 or 1..256 each")
        frames = max(1, c * r)
        names = [clip.name for clip in self.clips or []]
        if names != sorted(set(names)):
            raise fail("clips", "clips are not in name order without repeats")
        for clip in self.clips or []:
            if not clip.frames:
                raise fail("clips", f"clip {clip.name!r} has no frames")
            bad = [f for f in clip.frames if f >= frames]
            if bad:
                raise fail("clips", f"clip {clip.name!r} frame {bad[0]} is outside the {frames} frames of the grid")
            if not clip.fps > 0:
                raise fail("clips", f"clip {clip.name!r} fps {clip.fps} is not above 0")
        e = self.edge
        if e is not None:
            if e.priority < 1:
                raise fail("edge", f"edge priority {e.priority} is below 1")
            if not e.width > 0:
                raise fail("edge", f"edge width {e.width} is not above 0")
            if not 0 <= e.roughness <= 1:
                raise fail("edge", f"edge roughness {e.roughness} is not in [0, 1]")
