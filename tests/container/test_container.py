"""Framing, META, source_hash and corrupt files."""

from __future__ import annotations

import hashlib
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.container import samples
from veduta.base.errors import VdaError
from veduta.container.chunks import MAGIC, read_chunks, write_chunks
from veduta.container.meta import Meta, source_hash
from veduta.formats import encode
from veduta.formats.asset import encode_asset, make_asset, read_asset


def asset_bytes(ctype="MESH") -> bytes:
    kind = samples.KIND_OF[ctype]
    return encode_asset(make_asset(samples.meta(kind), samples.BODIES[ctype]()))


def test_chunk_layout_is_exact():
    data = write_chunks([("TEST", b"abc")])
    crc = zlib.crc32(b"TESTabc")
    assert data == MAGIC + b"TEST" + struct.pack("<I", 3) + b"abc" + struct.pack("<I", crc)
    assert read_chunks(data)[0].payload == b"abc"


def test_no_chunks_is_well_formed():
    assert read_chunks(b"VDA1") == []


def test_meta_is_canonical_json():
    m = Meta(
        "veduta-asset/0.8.0",
        ("textures/a.png", "textures/b.png"),
        "texture",
        "crate",
        "textures/crate.vtexture",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    )
    assert m.encode() == (
        b'{"compiler":"veduta-asset/0.8.0","deps":["textures/a.png","textures/b.png"],"kind":"texture",'
        b'"name":"crate","source":"textures/crate.vtexture",'
        b'"source_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}'
    )
    assert Meta.decode(m.encode()) == m
    # the spec's example, byte for byte
    spec = (
        b'{"compiler":"veduta-asset/0.8.0","deps":[],"kind":"model","name":"crate","source":"models/crate.vmodel",'
        b'"source_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}'
    )
    assert Meta.decode(spec).encode() == spec
    # non-ASCII stays UTF-8, no escapes
    u = Meta("veduta-asset/0.8.0", (), "model", "x", "models/Ümlaut/x.vmodel", "0" * 64)
    assert "Ü".encode() in u.encode() and Meta.decode(u.encode()) == u


@pytest.mark.parametrize(
    "payload, match",
    [
        (
            b'{"compiler": "v","deps":[],"kind":"model","name":"x","source":"s","source_hash":"' + b"0" * 64 + b'"}',
            "not canonical",
        ),
        (
            b'{"deps":[],"compiler":"v","kind":"model","name":"x","source":"s","source_hash":"' + b"0" * 64 + b'"}',
            "not canonical",
        ),
        (
            b'{"compiler":"v","deps":["b","a"],"kind":"model","name":"x","source":"s","source_hash":"'
            + b"0" * 64
            + b'"}',
            "not sorted",
        ),
        (
            b'{"compiler":"v","deps":["a","a"],"kind":"model","name":"x","source":"s","source_hash":"'
            + b"0" * 64
            + b'"}',
            "not sorted",
        ),
        (
            b'{"compiler":"v","compiler":"v","deps":[],"kind":"model","name":"x","source":"s","source_hash":"'
            + b"0" * 64
            + b'"}',
            "duplicate key",
        ),
        (
            b'{"compiler":"v","deps":[],"kind":"mesh","name":"x","source":"s","source_hash":"' + b"0" * 64 + b'"}',
            "kind",
        ),
        (
            b'{"compiler":"v","deps":[],"kind":"model","name":"x","source":"s","source_hash":"' + b"A" * 64 + b'"}',
            "source_hash",
        ),
        (b'{"compiler":"v","deps":[],"kind":"model","name":"x","source":"s"}', "missing"),
        (
            b'{"compiler":"v","deps":[],"extra":1,"kind":"model","name":"x","source":"s","source_hash":"'
            + b"0" * 64
            + b'"}',
            "unknown",
        ),
        (
            b'{"compiler":"\\u0076","deps":[],"kind":"model","name":"x","source":"s","source_hash":"'
            + b"0" * 64
            + b'"}',
            "not canonical",
        ),
        (b"[1]", "not a JSON object"),
        (b"\xff", "UTF-8"),
    ],
)
def test_meta_rejects_anything_not_canonical(payload, match):
    with pytest.raises(VdaError, match=match):
        Meta.decode(payload)


def test_source_hash_recipe():
    files = {"textures/a.png": b"PNGDATA"}
    got = source_hash(
        "veduta-asset/0.8.0", "textures/t.vtexture", b"{}", ["textures/a.png", "textures/gone.png"], files.get
    )
    want = hashlib.sha256(
        b"veduta-cook/1\nveduta-asset/0.8.0\nsource textures/t.vtexture 2\n{}"
        b"dep textures/a.png 7\nPNGDATA"
        b"missing textures/gone.png\n"
    ).hexdigest()
    assert got == want


@pytest.mark.parametrize("ctype", sorted(samples.BODIES))
def test_asset_round_trip_byte_for_byte(ctype):
    data = asset_bytes(ctype)
    a = read_asset(data, "x.vda")
    assert a.body == samples.BODIES[ctype]()
    assert encode_asset(a) == data


def test_unknown_chunks_are_skipped_and_kept():
    m = samples.meta()
    data = write_chunks([("META", m.encode()), ("zTXt", b"hello"), ("MESH", encode(samples.mesh()))])
    a = read_asset(data)
    assert a.meta == m and a.body == samples.mesh()
    assert encode_asset(a) == data


def test_readers_accept_any_order():
    m = samples.meta()
    data = write_chunks([("MESH", encode(samples.mesh())), ("META", m.encode())])
    assert encode_asset(read_asset(data)) == data


def _err(data, match, file="crate.vda"):
    with pytest.raises(VdaError, match=match) as ei:
        read_asset(data, file)
    assert str(ei.value).startswith(file)
    return ei.value


def test_bad_files_name_file_chunk_and_offset():
    good = asset_bytes()
    e = _err(b"VDA2" + good[4:], "bad magic")
    assert e.offset == 0
    e = _err(good[:-3], "overruns the file")
    assert e.chunk == "MESH" and e.offset == good.index(b"MESH")
    flipped = bytearray(good)
    flipped[good.index(b"MESH") + 20] ^= 0x40
    e = _err(bytes(flipped), "CRC mismatch")
    assert e.chunk == "MESH"
    e = _err(b"VDA1" + b"ME", "truncated chunk header")
    assert e.offset == 4
    e = _err(b"VDA1", "no META")
    m = samples.meta()
    e = _err(write_chunks([("META", m.encode())]), "no MESH body")
    e = _err(
        write_chunks([("META", m.encode()), ("META", m.encode()), ("MESH", encode(samples.mesh()))]), "second META"
    )
    e = _err(
        write_chunks([("META", m.encode()), ("MESH", encode(samples.mesh())), ("MESH", encode(samples.mesh()))]),
        "second MESH",
    )
    e = _err(write_chunks([("META", m.encode()), ("MATL", encode(samples.material()))]), "MATL chunk in a model")
    e = _err(write_chunks([("META", m.encode()), ("MESH", encode(samples.mesh()) + b"\0")]), "trailing bytes")
    assert e.chunk == "MESH"
    e = _err(write_chunks([("META", m.encode() + b" "), ("MESH", encode(samples.mesh()))]), "not canonical")
    assert e.chunk == "META" and e.offset == 4 + 8 + len(m.encode())
    raw = b"VDA1ME A" + struct.pack("<I", 0) + struct.pack("<I", zlib.crc32(b"ME A"))
    e = _err(raw, "bad chunk type")
    assert e.offset == 4
    with pytest.raises(ValueError):
        write_chunks([("ME A", b"")])


def test_bad_bool_is_located():
    m = samples.meta("material", "wood")
    body = bytearray(encode(samples.material()))
    at = 4 + 4 + 4 + 4 + 5  # the unlit bool
    body[at] = 2
    data = write_chunks([("META", m.encode()), ("MATL", bytes(body))])
    e = _err(data, "bad bool 2")
    assert e.offset == data.index(b"MATL") + 8 + at


_GOOD = {c: asset_bytes(c) for c in sorted(samples.BODIES)}


@settings(max_examples=300, deadline=None)
@given(
    ctype=st.sampled_from(sorted(_GOOD)),
    cut=st.integers(0, 10**6),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4),
    resign=st.booleans(),
)
def test_fuzz_only_vda_errors_escape(ctype, cut, flips, resign):
    """Whatever the bytes, a reader either decodes or raises VdaError; a decoded file re-encodes exactly."""
    data = bytearray(_GOOD[ctype])
    for pos, x in flips:
        data[pos % len(data)] ^= x
    data = bytes(data[: max(4, cut % (len(data) + 1))]) if cut % 3 == 0 else bytes(data)
    if resign:  # fix the CRCs so the payload decoders see the damage
        data = _recrc(data)
    try:
        a = read_asset(data, "f.vda")
    except VdaError as e:
        assert str(e).startswith("f.vda")
        return
    assert encode_asset(a) == data


def _recrc(data: bytes) -> bytes:
    out = bytearray(data[:4])
    pos = 4
    while pos + 8 <= len(data):
        (n,) = struct.unpack_from("<I", data, pos + 4)
        end = pos + 8 + n
        if end + 4 > len(data):
            out += data[pos:]
            return bytes(out)
        out += data[pos:end] + struct.pack("<I", zlib.crc32(data[pos:end][8:], zlib.crc32(data[pos : pos + 4])))
        pos = end + 4
    out += data[pos:]
    return bytes(out)


def test_meta_with_a_lone_surrogate_is_a_vda_error():
    payload = (
        b'{"compiler":"v","deps":[],"kind":"model","name":"\\ud800","source":"s","source_hash":"' + b"0" * 64 + b'"}'
    )
    with pytest.raises(VdaError, match="lone surrogate"):
        Meta.decode(payload)


def _meta_at_start_of(data: bytes, tmp_path) -> bytes | None:
    import os

    from veduta.container.chunks import meta_at_start

    path = tmp_path / "f.vda"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        return meta_at_start(fd, len(data), str(path))
    finally:
        os.close(fd)


@pytest.mark.parametrize("size", [0, 200, 4090, 10_000])
def test_meta_at_start_reads_the_first_chunk_only(tmp_path, size):
    # META of any size (past the first read too), then anything at all: only META is read
    payload = b"x" * size
    first = write_chunks([("META", payload)])
    for tail in (b"", b"garbage", write_chunks([("MESH", b"\0" * 100)])[4:]):
        assert _meta_at_start_of(first + tail, tmp_path) == payload


def test_meta_at_start_of_another_first_chunk_is_none(tmp_path):
    assert _meta_at_start_of(write_chunks([("MESH", b"\0" * 8), ("META", b"{}")]), tmp_path) is None


@pytest.mark.parametrize(
    "data, match",
    [
        (b"", "no VDA1 magic"),
        (b"VDA2" + write_chunks([("META", b"{}")])[4:], "no VDA1 magic"),
        (MAGIC + b"META", "truncated chunk header"),
        (MAGIC + b"ME A" + b"\0" * 12, "bad chunk type"),
        (write_chunks([("META", b"{}")])[:-1], "overruns the file"),
        (write_chunks([("META", b"{}")])[:-1] + b"\0", "CRC mismatch"),
    ],
)
def test_meta_at_start_of_a_file_that_starts_otherwise_is_a_vda_error(tmp_path, data, match):
    with pytest.raises(VdaError, match=match):
        _meta_at_start_of(data, tmp_path)
