"""Whole .vda assets: META + body (+ any chunks we do not know, kept in order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from veduta.base.errors import VdaError
from veduta.container.chunks import read_chunks, write_chunks
from veduta.container.meta import Meta
from veduta.formats import BODIES, KIND_CHUNK, Struct, decode, encode


@dataclass
class Asset:
    """A decoded cooked asset.

    ``chunks`` keeps every chunk in file order: the META (a :class:`Meta`), the
    body (a :class:`Struct`) and unknown chunks as ``(type, payload)`` bytes, so
    that ``encode_asset(read_asset(b)) == b``.
    """

    meta: Meta
    body: Struct
    chunks: list[tuple[str, object]] = field(default_factory=list)

    @property
    def chunk_type(self) -> str:
        return KIND_CHUNK[self.meta.kind]


def make_asset(meta: Meta, body: Struct) -> Asset:
    if body.CHUNK != KIND_CHUNK[meta.kind]:
        raise ValueError(f"a {meta.kind} needs a {KIND_CHUNK[meta.kind]} body, not {body.CHUNK}")
    return Asset(meta, body, [("META", meta), (body.CHUNK, body)])


def encode_asset(asset: Asset) -> bytes:
    out = []
    for ctype, value in asset.chunks:
        if isinstance(value, Meta):
            out.append((ctype, value.encode()))
        elif isinstance(value, Struct):
            out.append((ctype, encode(value)))
        else:
            out.append((ctype, cast(bytes, value)))  # an unknown chunk, kept as its payload bytes
    return write_chunks(out)


def read_asset(data: bytes, file: str = "") -> Asset:
    """Decode and check a whole cooked asset."""
    chunks = read_chunks(data, file)
    meta = None
    meta_at = None
    decoded: list[tuple[str, object]] = []
    bodies = []
    for c in chunks:
        try:
            if c.type == "META":
                if meta is not None:
                    raise VdaError(f"second META chunk (first at byte {meta_at})", offset=0)
                meta, meta_at = Meta.decode(c.payload), c.offset
                decoded.append(("META", meta))
            elif c.type in BODIES:
                bodies.append((c, decode(BODIES[c.type], c.payload)))
                decoded.append((c.type, bodies[-1][1]))
            else:
                decoded.append((c.type, c.payload))
        except VdaError as exc:
            raise exc.located(file=file, chunk=c.type, base=c.payload_offset) from None
    if meta is None:
        raise VdaError("no META chunk", file=file, offset=len(data))
    want = KIND_CHUNK[meta.kind]
    body = None
    for c, rec in bodies:
        if c.type != want:
            raise VdaError(
                f"{c.type} chunk in a {meta.kind} asset (want {want})", file=file, chunk=c.type, offset=c.offset
            )
        if body is not None:
            raise VdaError(f"second {want} chunk", file=file, chunk=c.type, offset=c.offset)
        body = rec
    if body is None:
        raise VdaError(f"no {want} body chunk for a {meta.kind}", file=file, offset=len(data))
    return Asset(meta, body, decoded)


def read_asset_file(path: str) -> Asset:
    """The asset in cooked file *path*: a regular file no larger than any cooked file can be,
    checked before it is read (a FIFO, a device or a 3 GB file is a :class:`VdaError` naming it,
    not a hang or a whole read into memory)."""
    from veduta.base.fsutil import MAX_COOKED_BYTES, read_file

    try:
        data = read_file(path, MAX_COOKED_BYTES)
    except OSError as exc:
        raise VdaError(f"cannot read: {exc.strerror or exc}", file=path or '"" (an empty path)') from None
    return read_asset(data, path)
