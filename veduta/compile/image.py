"""Pixels for the texture compiler: PNG reading, layer compositing and the mip chain.

Arrays are documented numpy-style; ``rgba`` images are ``(h, w, 4) uint8`` with straight
(not premultiplied) alpha, in sRGB as PNG files store them.  Everything is vectorised (no
per-pixel Python loops) and uses only IEEE element-wise arithmetic in a fixed order, plus
table look-ups for the sRGB transfer function, so the same inputs give the same bytes on every
machine.

Decisions (docs/formats/texture.md):

* layers are composited in sRGB space ("over" and "multiply"), as image editors do, so a layered
  texture looks like it does in the editor;
* mip levels are filtered in linear light with premultiplied alpha, so a level keeps the
  brightness of the level above and transparent pixels do not darken their neighbours; where a
  filtered pixel is fully transparent its colour is the plain average of its colours instead of
  black, so straight-alpha bilinear filtering does not fringe;
* the filter is an exact area (box) filter: each pixel of level i+1 averages the part of level i
  it covers, weighted by area, so odd sizes (5 -> 2 -> 1) are handled without dropping a row and
  no tap ever reads across an edge (a tiling texture's levels tile as well as level 0 does).
"""

from __future__ import annotations

import io
import struct
import warnings
import zlib
from decimal import Decimal, localcontext

import numpy as np

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Largest image layer and texture side in pixels (the console draws 320 x 240 frames).
MAX_SIDE = 2048


class ImageError(Exception):
    """An image that cannot be used; the message says why (the caller names the file)."""


# -- PNG ---------------------------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the PNG signature and IHDR, without decoding; ImageError otherwise."""
    if not data.startswith(PNG_SIGNATURE):
        raise ImageError("is not a PNG file (no PNG signature)")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise ImageError("is not a usable PNG file (no IHDR chunk)")
    (length,) = struct.unpack(">I", data[8:12])
    w, h = struct.unpack(">II", data[16:24])
    if length != 13 or w == 0 or h == 0:
        raise ImageError("is not a usable PNG file (bad IHDR chunk)")
    return w, h


def decode_png(data: bytes) -> np.ndarray:
    """Decode PNG bytes to ``(h, w, 4) uint8`` RGBA (16-bit channels keep their high byte).

    Call :func:`png_size` first to bound the size: decoding allocates the whole image.
    """
    from PIL import Image

    png_size(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=["PNG"]) as im:
                im.load()
                return _to_rgba(im)
    except (
        OSError,
        SyntaxError,
        ValueError,
        EOFError,
        zlib.error,
        struct.error,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
    ) as exc:
        raise ImageError(f"cannot be decoded ({exc})") from None


def _to_rgba(im) -> np.ndarray:
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        grey = (np.asarray(im).astype(np.int64) >> 8).clip(0, 255).astype(np.uint8)
        out = np.empty(grey.shape + (4,), np.uint8)
        out[..., :3] = grey[..., None]
        out[..., 3] = 255
        return out
    if im.mode != "RGBA":
        im = im.convert("RGBA")
    return np.array(im, dtype=np.uint8).reshape(im.height, im.width, 4)


# -- colour packing ----------------------------------------------------------------------------


def pack_argb(rgba: np.ndarray) -> np.ndarray:
    """``(h, w, 4) uint8`` RGBA to ``(h, w) <u4`` 0xAARRGGBB (bytes B, G, R, A)."""
    bgra = np.ascontiguousarray(rgba[..., [2, 1, 0, 3]], dtype=np.uint8)
    return bgra.view("<u4").reshape(rgba.shape[:2])


def unpack_argb(pixels: np.ndarray) -> np.ndarray:
    """``(h, w) <u4`` 0xAARRGGBB to ``(h, w, 4) uint8`` RGBA."""
    bgra = np.ascontiguousarray(pixels, dtype="<u4").view(np.uint8).reshape(pixels.shape + (4,))
    return np.ascontiguousarray(bgra[..., [2, 1, 0, 3]])


def argb_to_rgba(argb: int) -> tuple[int, int, int, int]:
    return (argb >> 16) & 0xFF, (argb >> 8) & 0xFF, argb & 0xFF, (argb >> 24) & 0xFF


# -- compositing (sRGB space, premultiplied float32) -------------------------------------------

#: u8 code / 255 as float32.
_UNIT = (np.arange(256, dtype=np.float32) * np.float32(1 / 255)).astype(np.float32)


def to_premultiplied(rgba: np.ndarray, opacity: float = 1.0) -> np.ndarray:
    """``(h, w, 4) uint8`` -> ``(h, w, 4) float32`` premultiplied, channels in [0, 1]."""
    out = _UNIT[rgba]
    if opacity != 1:
        out[..., 3] *= np.float32(opacity)
    out[..., :3] *= out[..., 3:4]
    return out


def composite(dst: np.ndarray, src: np.ndarray, blend: str) -> None:
    """Composite premultiplied *src* onto premultiplied *dst* in place (same shape).

    normal: co = cs + cb (1 - as); multiply: co = cs (1 - ab) + cb (1 - as) + cs cb;
    alpha: ao = as + ab (1 - as) (W3C Compositing and Blending, source-over).
    """
    a_s = src[..., 3:4]
    keep = np.float32(1) - a_s
    if blend == "multiply":
        a_b = dst[..., 3:4]
        col = src[..., :3] * (np.float32(1) - a_b) + dst[..., :3] * keep + src[..., :3] * dst[..., :3]
        dst[..., 3:] = a_s + dst[..., 3:] * keep
        dst[..., :3] = col
    else:
        dst *= keep
        dst += src


def from_premultiplied(p: np.ndarray) -> np.ndarray:
    """``(h, w, 4) float32`` premultiplied -> ``(h, w, 4) uint8`` straight, rounded half up."""
    a = p[..., 3:4]
    safe = np.where(a > 0, a, np.float32(1))
    col = np.where(a > 0, p[..., :3] / safe, np.float32(0))
    out = np.empty(p.shape, np.uint8)
    out[..., :3] = np.floor(np.clip(col, 0, 1) * np.float32(255) + np.float32(0.5))
    out[..., 3:] = np.floor(np.clip(a, 0, 1) * np.float32(255) + np.float32(0.5))
    return out


def checker(width: int, height: int, cell: int, a: int, b: int) -> np.ndarray:
    """``(height, width, 4) uint8``: colour *a* (0xAARRGGBB) on cells with even x + y, else *b*."""
    ys = (np.arange(height) // cell)[:, None]
    xs = (np.arange(width) // cell)[None, :]
    odd = ((xs + ys) & 1).astype(bool)
    ca = np.array(argb_to_rgba(a), np.uint8)
    cb = np.array(argb_to_rgba(b), np.uint8)
    return np.where(odd[..., None], cb, ca)


# -- sRGB transfer function (tables, so the result never depends on a libm's pow) ---------------


def srgb_decode(c: Decimal) -> float:
    """sRGB-encoded c in [0, 1] to linear light (IEC 61966-2-1), in 40-digit decimal arithmetic
    then rounded to the nearest double: the same value on every machine (libm's ``pow`` may
    differ in the last bit between platforms; ``decimal`` does not)."""
    with localcontext() as ctx:
        ctx.prec = 40
        if c <= Decimal("0.04045"):
            return float(c / Decimal("12.92"))
        return float(((c + Decimal("0.055")) / Decimal("1.055")) ** Decimal("2.4"))


#: Linear value of each 8-bit sRGB code.
SRGB_TO_LINEAR = np.array([srgb_decode(Decimal(i) / 255) for i in range(256)], np.float32)
#: Linear values halfway (in sRGB) between consecutive codes: code k covers [T[k-1], T[k]).
_THRESHOLDS = np.array([srgb_decode((Decimal(i) + Decimal("0.5")) / 255) for i in range(255)], np.float32)


def linear_to_srgb8(lin: np.ndarray) -> np.ndarray:
    """Linear values (float32) to the nearest 8-bit sRGB codes."""
    return np.searchsorted(_THRESHOLDS, lin, side="right").astype(np.uint8)


# -- mip chain ---------------------------------------------------------------------------------


def area_taps(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Area filter from *n* samples to *m*: ``(m, k) int64`` source indices and ``(m, k) float32``
    weights (each row sums to 1).  Destination pixel i covers source [i n / m, (i + 1) n / m)."""
    i = np.arange(m, dtype=np.int64)
    left, right = i * n, (i + 1) * n  # in units of 1/m source pixels
    first = left // m
    last = (right + m - 1) // m  # exclusive
    k = int((last - first).max())
    idx = first[:, None] + np.arange(k, dtype=np.int64)[None, :]
    lo = np.maximum(left[:, None], idx * m)
    hi = np.minimum(right[:, None], (idx + 1) * m)
    overlap = np.clip(hi - lo, 0, None)
    weights = (overlap / n).astype(np.float32)
    return np.minimum(idx, n - 1), weights


def _reduce(x: np.ndarray, axis: int, general: bool = False) -> np.ndarray:
    """Halve axis 1 (rows) or 2 (columns) of planar ``(c, h, w) float32`` with the area filter.
    An even size takes strided views instead of gathered copies: the same two products and one
    sum per pixel as the general taps, so the same bits (tests compare both)."""
    n = x.shape[axis]
    m = max(1, n >> 1)
    if m == n:
        return x
    if n % 2 == 0 and not general:
        half = np.float32(0.5)
        if axis == 1:
            return x[:, 0::2] * half + x[:, 1::2] * half
        return x[:, :, 0::2] * half + x[:, :, 1::2] * half
    idx, w = area_taps(n, m)
    out = None
    for k in range(idx.shape[1]):
        taken = np.take(x, idx[:, k], axis=axis)
        taken *= w[:, k][None, :, None] if axis == 1 else w[:, k][None, None, :]
        out = taken if out is None else out + taken
    assert out is not None  # idx has at least one column
    return out


def _linear_planes(rgba: np.ndarray) -> np.ndarray:
    """Planar ``(7, h, w) float32``: premultiplied linear r, g, b, alpha, then plain linear r, g, b."""
    h, w = rgba.shape[:2]
    out = np.empty((7, h, w), np.float32)
    for c in range(3):
        out[4 + c] = SRGB_TO_LINEAR[rgba[..., c]]
    out[3] = _UNIT[rgba[..., 3]]
    np.multiply(out[4:], out[3], out=out[:3])
    return out


def _planes_to_rgba(p: np.ndarray) -> np.ndarray:
    a = p[3]
    opaque = a > 0
    safe = np.where(opaque, a, np.float32(1))
    out = np.empty(p.shape[1:] + (4,), np.uint8)
    for c in range(3):
        lin = np.where(opaque, p[c] / safe, p[4 + c])
        out[..., c] = linear_to_srgb8(lin)
    out[..., 3] = np.floor(np.clip(a, 0, 1) * np.float32(255) + np.float32(0.5))
    return out


def level_count(width: int, height: int) -> int:
    """1 + floor(log2(max(width, height))): the chain down to 1 x 1."""
    return max(width, height).bit_length()


def mip_chain(rgba: np.ndarray) -> list[np.ndarray]:
    """Level 0 and every smaller level down to 1 x 1, each ``(h, w, 4) uint8``.

    Level i measures max(1, w >> i) x max(1, h >> i); each is area-filtered from the float
    planes of the level above (not from its rounded bytes), in linear light.
    """
    h, w = rgba.shape[:2]
    levels = [rgba]
    planes = _linear_planes(rgba)
    for _ in range(1, level_count(w, h)):
        planes = _reduce(_reduce(planes, 1), 2)
        levels.append(_planes_to_rgba(planes))
    return levels


def chain_sizes(width: int, height: int) -> list[tuple[int, int]]:
    return [(max(1, width >> i), max(1, height >> i)) for i in range(level_count(width, height))]


__all__ = [
    "MAX_SIDE",
    "ImageError",
    "png_size",
    "decode_png",
    "pack_argb",
    "unpack_argb",
    "argb_to_rgba",
    "to_premultiplied",
    "composite",
    "from_premultiplied",
    "checker",
    "SRGB_TO_LINEAR",
    "linear_to_srgb8",
    "area_taps",
    "mip_chain",
    "level_count",
    "chain_sizes",
]
