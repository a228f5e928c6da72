"""Chunk framing: ``file = magic chunk*``, ``chunk = type length payload crc``.

The one place that knows about framing (like Pillow's ``putchunk`` and
``ChunkStream``); payload codecs never see it.
"""

from __future__ import annotations

import os
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


#: bytes read at first by :func:`meta_at_start`: the magic, META's header and a META of the usual
#: size (a few hundred bytes; one naming many deps takes a second read)
_HEAD_READ = 4096


def meta_at_start(fd: int, size: int, file: str = "") -> bytes | None:
    """The payload of the META chunk a container starts with (writers put META first:
    container-vda.md), read through descriptor *fd* of a file of *size* bytes: the magic, that
    chunk's header, payload and CRC, never a byte past them (the body is neither read nor checked).
    None when the first chunk is another one (a reader takes META anywhere: only the whole file
    tells).  :class:`VdaError` when the file does not start as a container does: no magic, a
    first chunk header that is cut short or not a type, or a META that overruns the file or
    fails its CRC."""
    head = os.pread(fd, min(size, _HEAD_READ), 0)
    if len(head) < 4 or head[:4] != MAGIC:
        raise VdaError("not a container (no VDA1 magic)", file=file, offset=0)
    if len(head) < 12:
        raise VdaError(f"truncated chunk header: {len(head) - 4} bytes left, 8 needed", file=file, offset=4)
    t, length = _HEAD.unpack_from(head, 4)
    if not _TYPE_RE.fullmatch(t):
        raise VdaError(f"bad chunk type {t!r} (want 4 ASCII letters or digits)", file=file, offset=4)
    if t != b"META":
        return None
    end = 12 + length
    if end + 4 > size:
        raise VdaError(f"chunk of {length} bytes overruns the file", file=file, chunk="META", offset=4)
    if end + 4 > len(head):
        head = head[:12] + os.pread(fd, length + 4, 12)
        if len(head) < end + 4:  # (cut short since its size was taken)
            raise VdaError(f"chunk of {length} bytes overruns the file", file=file, chunk="META", offset=4)
    payload = head[12:end]
    (crc,) = _CRC.unpack_from(head, end)
    want = crc32(t, payload)
    if crc != want:
        raise VdaError(f"CRC mismatch: stored {crc:08x}, computed {want:08x}", file=file, chunk="META", offset=end)
    return payload
