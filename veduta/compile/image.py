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

import struct
import zlib
from dataclasses import dataclass
from decimal import Decimal, localcontext

import numpy as np

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Largest image layer and texture side in pixels (the console draws 320 x 240 frames).
MAX_SIDE = 2048


class ImageError(Exception):
    """An image that cannot be used; the message says why (the caller names the file)."""


# -- PNG ---------------------------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the PNG signature and IHDR, without decoding; ImageError otherwise.
    The IHDR's CRC is checked before its size: a flipped byte of the width or height is a
    damaged file (``bad CRC in chunk IHDR``, as :func:`decode_png` says), not a size beyond
    the limit."""
    if not data.startswith(PNG_SIGNATURE):
        raise ImageError("is not a PNG file (no PNG signature)")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise ImageError("is not a usable PNG file (no IHDR chunk)")
    (length,) = struct.unpack(">I", data[8:12])
    if length != 13:
        raise ImageError("is not a usable PNG file (bad IHDR chunk)")
    if zlib.crc32(data[12:29]) != struct.unpack(">I", data[29:33])[0]:
        raise _fail("bad CRC in chunk IHDR")
    w, h = struct.unpack(">II", data[16:24])
    if w == 0 or h == 0:
        raise ImageError("is not a usable PNG file (bad IHDR chunk)")
    return w, h


#: PNG colour types: (name, allowed bit depths, samples per pixel) (PNG spec 11.2.1, table 11.1).
_COLOUR_TYPES = {
    0: ("grey", (1, 2, 4, 8, 16), 1),
    2: ("RGB", (8, 16), 3),
    3: ("palette", (1, 2, 4, 8), 1),
    4: ("grey with alpha", (8, 16), 2),
    6: ("RGBA", (8, 16), 4),
}
#: Adam7 passes: (first column, first row, column step, row step) (PNG spec 8.2).
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


@dataclass(frozen=True)
class _Png:
    """What the pixels need from a PNG's chunks (checked by :func:`_read_chunks`)."""

    width: int
    height: int
    depth: int
    ctype: int
    interlaced: bool
    palette: bytes  # PLTE (colour type 3 only), RGB triples
    trns: bytes | None  # tRNS as stored (colour types 0, 2, 3 only)
    idat: bytes  # the IDAT chunks' data, joined: one zlib stream


def _fail(reason: str) -> ImageError:
    return ImageError(f"cannot be decoded ({reason})")


def _read_chunks(data: bytes) -> _Png:
    """Walk the chunks after the signature: every chunk must fit the file with a matching CRC,
    IHDR first, IEND last (bytes after it are ignored; a file that ends after whole chunks
    without it is accepted), no unknown critical chunk; IHDR, PLTE
    and tRNS are checked where a mistake would change the pixels.  Ancillary chunks are skipped."""
    pos, end = len(PNG_SIGNATURE), len(data)
    ihdr: tuple[int, ...] | None = None
    palette: bytes | None = None
    trns: bytes | None = None
    idat: list[bytes] = []
    idat_done = False  # a chunk other than IDAT came after IDAT
    while True:
        if pos == end and idat:
            break  # no IEND after complete chunks: accepted, as Pillow and web browsers do
        if pos + 8 > end:
            raise _fail("the file ends inside a chunk" if pos < end else "the file ends before its image data")
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        name = kind.decode("latin-1")
        if not all(65 <= c <= 90 or 97 <= c <= 122 for c in kind):
            raise _fail(f"chunk type {kind.hex()} at byte {pos + 4} is not four letters")
        if length > 0x7FFFFFFF or pos + 12 + length > end:
            raise _fail(f"chunk {name} of {length} bytes runs past the end of the file")
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if zlib.crc32(body, zlib.crc32(kind)) != crc:
            raise _fail(f"bad CRC in chunk {name}")
        pos += 12 + length
        if ihdr is None:
            if kind != b"IHDR" or length != 13:
                raise _fail("IHDR is not the first chunk")
            ihdr = struct.unpack(">IIBBBBB", body)
            _check_ihdr(*ihdr)
            continue
        ctype = ihdr[3]
        if kind == b"IEND":
            break
        if kind == b"IDAT":
            if idat_done:
                raise _fail("the IDAT chunks are not consecutive")
            idat.append(body)
            continue
        idat_done = bool(idat)
        if kind == b"IHDR":
            raise _fail("a second IHDR chunk")
        if kind == b"PLTE":
            if palette is not None:
                raise _fail("a second PLTE chunk")
            if idat:
                raise _fail("PLTE after the image data")
            if length % 3 or not 3 <= length <= 768:
                raise _fail(f"PLTE of {length} bytes is not 1 to 256 RGB colours")
            palette = body
        elif kind[0] & 0x20 == 0:  # an upper-case first letter: critical (PNG spec 5.4)
            raise _fail(f"unknown critical chunk {name}")
        elif kind == b"tRNS" and ctype in (0, 2, 3):  # with an alpha channel: ignored, as libpng and Pillow do
            if idat:  # out of place: libpng ignores it, Pillow applies it
                raise _fail("tRNS after the image data")
            if trns is not None:
                raise _fail("a second tRNS chunk")
            if ctype == 3 and palette is None:
                raise _fail("tRNS before PLTE")
            trns = body
    assert ihdr is not None
    width, height, depth, ctype, _, _, interlace = ihdr
    if not idat:
        raise _fail("no IDAT chunk (no image data)")
    if ctype == 3 and palette is None:
        raise _fail("a palette image without a PLTE chunk")
    if trns is not None:
        _check_trns(trns, ctype, depth, len(palette or b"") // 3)
    return _Png(
        width, height, depth, ctype, interlace == 1, (palette or b"") if ctype == 3 else b"", trns, b"".join(idat)
    )


def _check_ihdr(width: int, height: int, depth: int, ctype: int, compression: int, filtering: int, interlace: int):
    if width == 0 or height == 0 or width > 0x7FFFFFFF or height > 0x7FFFFFFF:
        raise _fail(f"IHDR size {width} x {height}")
    if ctype not in _COLOUR_TYPES:
        raise _fail(f"colour type {ctype} is not a PNG colour type (want 0, 2, 3, 4 or 6)")
    what, depths, _ = _COLOUR_TYPES[ctype]
    if depth not in depths:
        allowed = ", ".join(map(str, depths))
        raise _fail(f"bit depth {depth} is not allowed for colour type {ctype} ({what}: {allowed})")
    if compression != 0:
        raise _fail(f"compression method {compression} (want 0)")
    if filtering != 0:
        raise _fail(f"filter method {filtering} (want 0)")
    if interlace > 1:
        raise _fail(f"interlace method {interlace} (want 0 or 1)")


def _check_trns(trns: bytes, ctype: int, depth: int, colours: int) -> None:
    """tRNS must say unambiguously which pixels are transparent: the right size and samples
    within the bit depth (libpng masks extra bits, Pillow does not: refused rather than guessed)."""
    if ctype == 3:
        if len(trns) > colours:
            raise _fail(f"tRNS has {len(trns)} entries but PLTE only {colours} colour{'s' if colours != 1 else ''}")
        return
    want = 2 if ctype == 0 else 6
    if len(trns) != want:
        raise _fail(f"tRNS of {len(trns)} bytes in a {_COLOUR_TYPES[ctype][0]} image (want {want})")
    top = (1 << depth) - 1
    for v in struct.unpack(f">{want // 2}H", trns):
        if v > top:
            raise _fail(f"tRNS sample {v} does not fit {depth}-bit samples")


def _passes(png: _Png) -> list[tuple[int, int]]:
    """(width, height) of each reduced image in the stream: the image, or the non-empty Adam7 passes."""
    if not png.interlaced:
        return [(png.width, png.height)]
    sizes = [((png.width - x0 + dx - 1) // dx, (png.height - y0 + dy - 1) // dy) for x0, y0, dx, dy in _ADAM7]
    return [(w, h) for w, h in sizes if w and h]


def _image_rows(png: _Png) -> bytes:
    """The image data inflated (no more than the image needs), every row checked to be there and
    to start with a known filter type (PNG spec 9.2).  Data after the last row is ignored, as
    libpng and Pillow do."""
    bits = png.depth * _COLOUR_TYPES[png.ctype][2]
    rows = [(h, 1 + (w * bits + 7) // 8) for w, h in _passes(png)]
    need = sum(h * stride for h, stride in rows)
    try:
        raw = zlib.decompressobj().decompress(png.idat, need)
    except zlib.error as exc:
        raise _fail(f"the image data does not decompress: {exc}") from None
    if len(raw) < need:
        raise _fail(f"the image data ends early ({len(raw)} of {need} bytes)")
    flat = np.frombuffer(raw, np.uint8)
    start = 0
    for h, stride in rows:
        filters = flat[start : start + h * stride : stride]
        if int(filters.max()) > 4:
            raise _fail(f"row filter type {int(filters.max())} (want 0 to 4)")
        start += h * stride
    return raw


def _unfilter(png: _Png, stored: bytes, mode: str, rawmode: str) -> np.ndarray:
    """The image's rows unfiltered (and de-interlaced) by Pillow's PNG decoder into *mode* through
    its unpacker *rawmode* (whose bit count sets the filters' bytes per pixel, PNG spec 9.2).
    *stored* is the checked rows as a zlib stream of stored blocks: Pillow then only copies them,
    instead of inflating the image data a second time.

    Pillow's "zip" decoder with (rawmode, interlace) arguments is what its PNG plugin uses
    (checked against Pillow 13.0.0); ``Image.frombytes`` with a decoder name is public API.  It
    is used here rather than ``Image.open`` because that keeps only the high byte of 16-bit
    colour samples, which tRNS needs (PNG spec 11.3.2.1)."""
    from PIL import Image

    try:
        im = Image.frombytes(mode, (png.width, png.height), stored, "zip", rawmode, int(png.interlaced))
    except (ValueError, OSError) as exc:
        raise _fail(f"the image data: {exc}") from None
    return np.asarray(im)


def decode_png(data: bytes) -> np.ndarray:
    """Decode PNG bytes to ``(h, w, 4) uint8`` RGBA, or ImageError saying why not.

    Every colour type and bit depth of the PNG spec: 16-bit samples keep their high byte, 1, 2
    and 4-bit grey scale to 0..255 exactly (x 255, 85, 17); a tRNS colour makes the pixels whose
    samples equal it, at the image's own bit depth, transparent (PNG spec 11.3.2.1).
    Call :func:`png_size` first to bound the size: decoding allocates the whole image.
    """
    png_size(data)
    png = _read_chunks(data)
    stored = zlib.compress(_image_rows(png), 0)

    def unfilter(mode: str, rawmode: str) -> np.ndarray:
        return _unfilter(png, stored, mode, rawmode)

    ct, depth, trns = png.ctype, png.depth, png.trns
    out = np.empty((png.height, png.width, 4), np.uint8)
    if ct == 3:
        idx = unfilter("P", "P" if depth == 8 else f"P;{depth}")
        colours = len(png.palette) // 3
        top = int(idx.max())
        if top >= colours:
            raise _fail(f"pixel value {top} is past the {colours} colour{'s' if colours != 1 else ''} of PLTE")
        lut = np.full((256, 4), 255, np.uint8)
        lut[:colours, :3] = np.frombuffer(png.palette, np.uint8).reshape(colours, 3)
        if trns:
            lut[: len(trns), 3] = np.frombuffer(trns, np.uint8)
        return lut[idx]
    if ct == 0:
        if depth == 16:
            hi_lo = unfilter("LA", "LA")
            grey, raw = hi_lo[..., 0], hi_lo[..., 0].astype(np.int32) << 8 | hi_lo[..., 1]
        else:
            raw = unfilter("P", "P" if depth == 8 else f"P;{depth}")
            grey = raw * np.uint8(255 // ((1 << depth) - 1))
        out[..., :3] = grey[..., None]
        out[..., 3] = 255
        if trns is not None:
            out[..., 3][raw == struct.unpack(">H", trns)[0]] = 0
        return out
    if ct == 2:
        if depth == 16:
            hi = unfilter("RGB", "RGB;16B")
            out[..., :3] = hi
            if trns is not None:
                raw = hi.astype(np.int32) << 8 | unfilter("RGB", "RGB;16L")
        else:
            out[..., :3] = raw = unfilter("RGB", "RGB")
        out[..., 3] = 255
        if trns is not None:
            key = np.array(struct.unpack(">3H", trns))
            out[..., 3][(raw == key).all(axis=2)] = 0
        return out
    if ct == 4:
        ga = unfilter("RGBA", "RGBA")[..., [0, 2]] if depth == 16 else unfilter("LA", "LA")
        out[..., :3] = ga[..., :1]
        out[..., 3] = ga[..., 1]
        return out
    return np.ascontiguousarray(unfilter("RGBA", "RGBA;16B" if depth == 16 else "RGBA"))


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
