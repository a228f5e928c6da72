"""PNG layers: every colour type and bit depth decoded to exact RGBA, tRNS at the image's own bit
depth, and invalid PNGs refused with a reason (hostile4 #1, #2, #3).

The PNGs are written here with zlib and struct (every filter type, Adam7 or not), never with the
code under test or Pillow, and the expected pixels come from the samples written, by the PNG
spec's rules (11.3.2.1 tRNS; 16-bit samples keep their high byte, as docs/formats/texture.md says).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from tests.compile.helpers import compile_in, lines
from veduta.compile.image import ImageError, decode_png, png_size

SIG = b"\x89PNG\r\n\x1a\n"
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def ihdr(w: int, h: int, depth: int, ctype: int, interlace: int = 0) -> bytes:
    return chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0, interlace))


def pack_row(samples: list[int], depth: int) -> bytes:
    """One row of samples at *depth* bits, most significant first, the last byte padded with 0."""
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in samples)
    if depth == 8:
        return bytes(samples)
    out, acc, n = bytearray(), 0, 0
    for v in samples:
        acc, n = (acc << depth) | v, n + depth
        if n == 8:
            out.append(acc)
            acc, n = 0, 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def filter_rows(rows: list[bytes], bpp: int, kinds: list[int]) -> bytes:
    """The rows filtered with filter type kinds[i] each (PNG spec 9.2), filter bytes included."""
    out = bytearray()
    prev = bytes(len(rows[0])) if rows else b""
    for row, k in zip(rows, kinds, strict=True):
        out.append(k)
        for i, x in enumerate(row):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            pred = (0, a, b, (a + b) // 2, paeth(a, b, c))[k]
            out.append((x - pred) & 0xFF)
        prev = row
    return bytes(out)


def image_data(samples: np.ndarray, depth: int, interlace: int, rng) -> bytes:
    """The zlib stream of ``(h, w, channels)`` samples, every row with a random filter type."""
    h, w, ch = samples.shape
    bpp = max(1, depth * ch // 8)
    passes = [(0, 0, 1, 1)] if not interlace else ADAM7
    raw = b""
    for x0, y0, dx, dy in passes:
        part = samples[y0::dy, x0::dx]
        if part.size == 0:
            continue
        rows = [pack_row([int(v) for v in r.reshape(-1)], depth) for r in part]
        raw += filter_rows(rows, bpp, [int(k) for k in rng.integers(0, 5, len(rows))])
    return zlib.compress(raw)


def scale(v: np.ndarray, depth: int) -> np.ndarray:
    """A sample at *depth* bits to 8 bits: exact for 1, 2 and 4 bits; the high byte of 16."""
    if depth == 16:
        return v >> 8
    return v * (255 // ((1 << depth) - 1))


def expected_rgba(samples, depth, ctype, palette, trns) -> np.ndarray:
    """The pixels the PNG spec gives (an independent decode of the samples written)."""
    h, w, _ = samples.shape
    out = np.zeros((h, w, 4), np.int64)
    if ctype == 3:
        pal = np.frombuffer(palette, np.uint8).reshape(-1, 3)
        alpha = np.full(len(pal), 255)
        alpha[: len(trns or b"")] = list(trns or b"")
        idx = samples[..., 0]
        out[..., :3], out[..., 3] = pal[idx], alpha[idx]
        return out.astype(np.uint8)
    colour = samples[..., :1].repeat(3, axis=2) if ctype in (0, 4) else samples[..., :3]
    out[..., :3] = scale(colour, depth)
    out[..., 3] = scale(samples[..., -1], depth) if ctype in (4, 6) else 255
    if trns is not None:
        key = struct.unpack(">H", trns) if ctype == 0 else struct.unpack(">3H", trns)
        hit = (samples[..., : len(key)] == np.array(key)).all(axis=2)
        out[..., 3][hit] = 0
    return out.astype(np.uint8)


def build(ctype: int, depth: int, trns_on: bool, interlace: int, seed: int):
    """A 13 x 9 PNG of random samples (with tRNS naming a colour used by several pixels) and
    the RGBA it stands for."""
    rng = np.random.default_rng(seed)
    w, h, ch = 13, 9, CHANNELS[ctype]
    palette, trns = b"", None
    top = (1 << depth) - 1
    if ctype == 3:
        colours = min(1 << depth, 5 + seed % 7)
        palette = bytes(rng.integers(0, 256, 3 * colours, dtype=np.uint8))
        samples = rng.integers(0, colours, (h, w, 1))
        if trns_on:
            trns = bytes(rng.integers(0, 256, int(rng.integers(1, colours + 1)), dtype=np.uint8))
    else:
        samples = rng.integers(0, top + 1, (h, w, ch))
        if trns_on:
            n = 1 if ctype == 0 else 3
            key = samples[2, 3, :n].copy()
            if depth == 16:  # also a pixel whose high bytes equal the key: it must stay opaque
                samples[4, 5, :n] = key << 8 & 0xFFFF
            samples[::3, ::4, :n] = key  # several pixels of the tRNS colour
            trns = struct.pack(f">{n}H", *(int(v) for v in key))
    data = SIG + ihdr(w, h, depth, ctype, interlace)
    if ctype == 3:
        data += chunk(b"PLTE", palette)
    if trns is not None:
        data += chunk(b"tRNS", trns)
    data += chunk(b"tEXt", b"Comment\0written by the test") + chunk(b"IDAT", image_data(samples, depth, interlace, rng))
    data += chunk(b"IEND", b"")
    return data, expected_rgba(samples, depth, ctype, palette, trns)


CASES = [
    (ct, d, t, i)
    for ct, depths in DEPTHS.items()
    for d in depths
    for t in ((False, True) if ct in (0, 2, 3) else (False,))
    for i in (0, 1)
]


@pytest.mark.parametrize(("ctype", "depth", "trns", "interlace"), CASES, ids=lambda v: str(int(v)))
def test_every_colour_type_and_bit_depth_decodes_to_the_spec_pixels(ctype, depth, trns, interlace):
    data, want = build(ctype, depth, trns, interlace, seed=ctype * 100 + depth * 4 + trns * 2 + interlace)
    got = decode_png(data)
    assert got.dtype == np.uint8 and got.shape == want.shape
    assert (got == want).all(), np.argwhere((got != want).any(axis=2))[:5]
    if trns and ctype != 3:
        assert (got[::3, ::4, 3] == 0).all()  # the tRNS colour is transparent wherever it is
        assert (got[..., 3] == 0).sum() == (want[..., 3] == 0).sum() >= 12


def test_the_tRNS_cases_of_hostile4_1():
    """16-bit RGB: the tRNS colour 1,2,3 is transparent and 0x100,0x200,0x300 (whose high bytes
    equal it) opaque; 16-bit grey keeps its tRNS; 2-bit grey value 1 (85) is transparent."""

    def png(w, depth, ctype, trns, row):
        rows = zlib.compress(b"\0" + row)
        return SIG + ihdr(w, 1, depth, ctype) + chunk(b"tRNS", trns) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")

    rgb16 = decode_png(png(2, 16, 2, struct.pack(">3H", 1, 2, 3), struct.pack(">6H", 1, 2, 3, 0x100, 0x200, 0x300)))
    assert rgb16.tolist() == [[[0, 0, 0, 0], [1, 2, 3, 255]]]
    grey16 = decode_png(png(2, 16, 0, struct.pack(">H", 0x1234), struct.pack(">2H", 0x1234, 0x5678)))
    assert grey16.tolist() == [[[0x12] * 3 + [0], [0x56] * 3 + [255]]]
    grey2 = decode_png(png(4, 2, 0, struct.pack(">H", 1), bytes([0b01101100])))
    assert grey2.tolist() == [[[85] * 3 + [0], [170] * 3 + [255], [255] * 3 + [255], [0] * 3 + [255]]]


# -- invalid PNGs: refused with a reason, valid oddities accepted ---------------------------------

RGBA_ROWS = zlib.compress(b"".join(b"\0" + bytes(range(16)) for _ in range(2)))  # 4 x 2 RGBA
INDEX_ROWS = zlib.compress(b"".join(b"\0" + bytes([1, 2, 3, 0]) for _ in range(2)))  # 4 x 2 indices
HEAD = SIG + ihdr(4, 2, 8, 6)
PAL = SIG + ihdr(4, 2, 8, 3)
IDAT, IEND = chunk(b"IDAT", RGBA_ROWS), chunk(b"IEND", b"")


def bad_crc(c: bytes) -> bytes:
    return c[:-4] + bytes(4)


INVALID = {
    "no_plte": (PAL + chunk(b"IDAT", INDEX_ROWS) + IEND, "a palette image without a PLTE chunk"),
    "index_past_plte": (
        PAL + chunk(b"PLTE", bytes([255, 0, 0])) + chunk(b"IDAT", INDEX_ROWS) + IEND,
        "pixel value 3 is past the 1 colour of PLTE",
    ),
    "unknown_critical": (HEAD + chunk(b"ZZZZ", b"must not be ignored") + IDAT + IEND, "unknown critical chunk ZZZZ"),
    "length_past_end": (
        HEAD + struct.pack(">I", 0x7FFFFFFF) + b"IDAT" + RGBA_ROWS + IEND,
        "chunk IDAT of 2147483647 bytes runs past the end of the file",
    ),
    "length_beyond_2_31": (
        HEAD + struct.pack(">I", 0x80000000) + b"IDAT" + RGBA_ROWS + IEND,
        "chunk IDAT of 2147483648 bytes runs past the end of the file",
    ),
    "ihdr_bad_crc": (bad_crc(HEAD) + IDAT + IEND, "bad CRC in chunk IHDR"),
    "idat_bad_crc": (HEAD + bad_crc(IDAT) + IEND, "bad CRC in chunk IDAT"),
    "text_bad_crc": (HEAD + bad_crc(chunk(b"tEXt", b"a\0b")) + IDAT + IEND, "bad CRC in chunk tEXt"),
    "colour_type_5": (
        SIG + ihdr(4, 2, 8, 5) + IDAT + IEND,
        "colour type 5 is not a PNG colour type (want 0, 2, 3, 4 or 6)",
    ),
    "rgb_depth_4": (SIG + ihdr(4, 2, 4, 2) + IDAT + IEND, "bit depth 4 is not allowed for colour type 2 (RGB: 8, 16)"),
    "interlace_2": (SIG + ihdr(4, 2, 8, 6, 2) + IDAT + IEND, "interlace method 2 (want 0 or 1)"),
    "no_idat": (HEAD + IEND, "no IDAT chunk (no image data)"),
    "split_idat": (
        HEAD + chunk(b"IDAT", RGBA_ROWS[:7]) + chunk(b"tEXt", b"a\0b") + chunk(b"IDAT", RGBA_ROWS[7:]) + IEND,
        "the IDAT chunks are not consecutive",
    ),
    "short_data": (
        HEAD + chunk(b"IDAT", zlib.compress(b"\0" + bytes(16))) + IEND,
        "the image data ends early (17 of 34 bytes)",
    ),
    "bad_zlib": (HEAD + chunk(b"IDAT", b"not zlib") + IEND, "the image data does not decompress: "),
    "filter_7": (
        HEAD + chunk(b"IDAT", zlib.compress((b"\7" + bytes(16)) * 2)) + IEND,
        "row filter type 7 (want 0 to 4)",
    ),
    "cut_in_chunk": (HEAD + IDAT + IEND[:5], "the file ends inside a chunk"),
    "ends_before_data": (HEAD, "the file ends before its image data"),
    "second_plte": (
        PAL + chunk(b"PLTE", bytes(12)) + chunk(b"PLTE", bytes(12)) + chunk(b"IDAT", INDEX_ROWS) + IEND,
        "a second PLTE chunk",
    ),
    "plte_not_triples": (
        PAL + chunk(b"PLTE", bytes(13)) + chunk(b"IDAT", INDEX_ROWS) + IEND,
        "PLTE of 13 bytes is not 1 to 256 RGB colours",
    ),
    "plte_after_idat": (
        PAL + chunk(b"IDAT", INDEX_ROWS) + chunk(b"PLTE", bytes(12)) + IEND,
        "PLTE after the image data",
    ),
    "trns_before_plte": (
        PAL + chunk(b"tRNS", b"\0") + chunk(b"PLTE", bytes(12)) + chunk(b"IDAT", INDEX_ROWS) + IEND,
        "tRNS before PLTE",
    ),
    "trns_longer_than_plte": (
        PAL + chunk(b"PLTE", bytes(12)) + chunk(b"tRNS", bytes(5)) + chunk(b"IDAT", INDEX_ROWS) + IEND,
        "tRNS has 5 entries but PLTE only 4 colours",
    ),
    "trns_grey_wrong_size": (
        SIG + ihdr(4, 2, 8, 0) + chunk(b"tRNS", bytes(4)) + IDAT + IEND,
        "tRNS of 4 bytes in a grey image (want 2)",
    ),
    "trns_past_depth": (
        SIG + ihdr(4, 2, 8, 2) + chunk(b"tRNS", struct.pack(">3H", 1, 256, 3)) + IDAT + IEND,
        "tRNS sample 256 does not fit 8-bit samples",
    ),
    "trns_after_idat": (
        SIG
        + ihdr(4, 2, 8, 0)
        + chunk(b"IDAT", zlib.compress((b"\0" + bytes(4)) * 2))
        + chunk(b"tRNS", bytes(2))
        + IEND,
        "tRNS after the image data",
    ),
    "second_trns": (
        SIG + ihdr(4, 2, 8, 0) + chunk(b"tRNS", bytes(2)) + chunk(b"tRNS", bytes(2)) + IDAT + IEND,
        "a second tRNS chunk",
    ),
    "second_ihdr": (HEAD + HEAD[8:] + IDAT + IEND, "a second IHDR chunk"),
    "bad_chunk_type": (HEAD + chunk(b"a\0bc", b"") + IDAT + IEND, "chunk type 61006263 at byte 37 is not four letters"),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_pngs_are_refused_with_a_reason(name):
    data, reason = INVALID[name]
    if name != "ihdr_bad_crc":  # (the header's own CRC: png_size finds that, with the same words)
        png_size(data)  # the header is fine: the decoder finds the damage
    with pytest.raises(ImageError) as exc:
        decode_png(data)
    assert str(exc.value).startswith(f"cannot be decoded ({reason}")
    assert "0x" not in str(exc.value) and "object at" not in str(exc.value)


def test_a_first_chunk_other_than_ihdr_is_refused_before_decoding():
    with pytest.raises(ImageError, match=r"^is not a usable PNG file \(no IHDR chunk\)$"):
        decode_png(SIG + chunk(b"tEXt", b"a\0b") + HEAD[8:] + IDAT + IEND)


VALID_ODDITIES = {
    "ancillary_unknown": HEAD + chunk(b"zzZz", b"safe to ignore") + IDAT + IEND,
    "ancillary_after_iend_bytes": HEAD + IDAT + IEND + b"trailing bytes after IEND",
    "no_iend": HEAD + IDAT,
    "split_idat": HEAD + chunk(b"IDAT", RGBA_ROWS[:7]) + chunk(b"IDAT", RGBA_ROWS[7:]) + IEND,
    "empty_idat_between": HEAD + chunk(b"IDAT", RGBA_ROWS) + chunk(b"IDAT", b"") + IEND,
    "extra_image_data": HEAD + chunk(b"IDAT", zlib.compress((b"\0" + bytes(range(16))) * 2 + bytes(40))) + IEND,
    "trns_with_alpha_ignored": HEAD + chunk(b"tRNS", bytes(6)) + IDAT + IEND,
    "suggested_palette_in_rgba": HEAD + chunk(b"PLTE", bytes(6)) + IDAT + IEND,
}


@pytest.mark.parametrize("name", sorted(VALID_ODDITIES))
def test_valid_pngs_with_oddities_are_not_refused(name):
    assert decode_png(VALID_ODDITIES[name]).reshape(2, 16).tolist() == [list(range(16))] * 2


def test_a_damaged_header_gives_the_same_clear_message_naming_the_file(tmp_path):
    """hostile4 #2: no Python object's repr in the message, the same text at every run."""
    files = {
        "textures/c.png": INVALID["ihdr_bad_crc"][0],
        "textures/c.vtexture": '{"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/c.png"}]}',
    }
    runs = []
    for _ in range(2):
        tex, ctx = compile_in(tmp_path, files, "textures/c.vtexture")
        assert tex is None
        runs.append(lines(ctx))
    assert runs[0] == runs[1]
    assert [x.split(": ", 2)[2] for x in runs[0]] == [
        'image "textures/c.png" cannot be decoded (bad CRC in chunk IHDR)'
    ]


#: a byte of IHDR's width (bytes 16-19) or height (20-23) flipped: (byte, xor mask)
IHDR_FLIPS = {"height_huge": (20, 0x10), "width_huge": (16, 0x10), "height_zero": (23, 0x02)}


@pytest.mark.parametrize("name", sorted(IHDR_FLIPS))
def test_a_damaged_ihdr_size_is_a_bad_crc_not_a_size(tmp_path, name):
    """A flipped byte in IHDR's width or height no longer matches its CRC: the file is damaged,
    not too large (it said "is 4 x 268435458 pixels, beyond the limit of 2048 x 2048"), nor "bad
    IHDR chunk" for a size of 0: the CRC is checked before the size rules."""
    at, mask = IHDR_FLIPS[name]
    png = bytearray(HEAD + IDAT + IEND)
    png[at] ^= mask
    files = {
        "textures/c.png": bytes(png),
        "textures/c.vtexture": '{"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/c.png"}]}',
    }
    tex, ctx = compile_in(tmp_path, files, "textures/c.vtexture")
    assert tex is None
    assert [x.split(": ", 2)[2] for x in lines(ctx)] == [
        'image "textures/c.png" cannot be decoded (bad CRC in chunk IHDR)'
    ]
    with pytest.raises(ImageError, match=r"^cannot be decoded \(bad CRC in chunk IHDR\)$"):
        png_size(bytes(png))
