"""Chunk framing: ``file = magic chunk*``, ``chunk = type length payload crc``.

The one place that knows about framing (like Pillow's ``putchunk`` and
``ChunkStream``); payload codecs never see it.
"""

from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass

from veduta.base.errors import VdaError

MAGIC = b"VDA1"
_HEAD = struct.Struct("<4sI")
_CRC = struct.Struct("<I")
_TYPE_RE = re.compile(rb"[A-Za-z0-9]{4}")


@dataclass(frozen=True)
class Chunk:
    type: str
    payload: bytes
    offset: int  # of the chunk's type field in the file

    @property
    def payload_offset(self) -> int:
        return self.offset + 8


def crc32(ctype: bytes, payload: bytes) -> int:
    """CRC-32 of type + payload (as in PNG)."""
    return zlib.crc32(payload, zlib.crc32(ctype)) & 0xFFFFFFFF


def put_chunk(ctype: str, payload: bytes) -> bytes:
    t = ctype.encode("ascii")
    if not _TYPE_RE.fullmatch(t):
        raise ValueError(f"bad chunk type {ctype!r}")
    if len(payload) > 0xFFFFFFFF:
        raise ValueError(f"{ctype} payload of {len(payload)} bytes is over the 4 GiB limit")
    return _HEAD.pack(t, len(payload)) + payload + _CRC.pack(crc32(t, payload))


def write_chunks(chunks: list[tuple[str, bytes]]) -> bytes:
    return MAGIC + b"".join(put_chunk(t, p) for t, p in chunks)


def read_chunks(data: bytes, file: str = "") -> list[Chunk]:
    """Split a file into chunks, verifying the magic, every length and every CRC."""
    if len(data) < 4:
        raise VdaError(f"truncated file: {len(data)} bytes, no room for the magic", file=file, offset=0)
    if data[:4] != MAGIC:
        raise VdaError(f"bad magic {data[:4]!r} (want b'VDA1')", file=file, offset=0)
    out = []
    pos = 4
    n = len(data)
    while pos < n:
        if n - pos < 8:
            raise VdaError(f"truncated chunk header: {n - pos} bytes left, 8 needed", file=file, offset=pos)
        t, length = _HEAD.unpack_from(data, pos)
        if not _TYPE_RE.fullmatch(t):
            raise VdaError(f"bad chunk type {t!r} (want 4 ASCII letters or digits)", file=file, offset=pos)
        ctype = t.decode("ascii")
        end = pos + 8 + length
        if end + 4 > n:
            raise VdaError(
                f"chunk of {length} bytes overruns the file ({n - pos - 8} bytes left after its header, "
                f"{length + 4} needed with the CRC)",
                file=file,
                chunk=ctype,
                offset=pos,
            )
        payload = data[pos + 8 : end]
        (crc,) = _CRC.unpack_from(data, end)
        want = crc32(t, payload)
        if crc != want:
            raise VdaError(f"CRC mismatch: stored {crc:08x}, computed {want:08x}", file=file, chunk=ctype, offset=end)
        out.append(Chunk(ctype, payload, pos))
        pos = end + 4
    return out
