"""A small writer of binary glTF 2.0 (GLB): one JSON chunk and one BIN chunk.

GLB is a 12-byte header (``glTF``, version 2, total length) and two chunks, each a u32 length, a
u32 type (``JSON``, ``BIN\\0``) and the payload padded to 4 bytes (JSON with spaces, BIN with
zeros). :class:`Gltf` collects the glTF objects in lists and the binary data in one buffer; every
buffer view starts on a 4-byte boundary. The JSON keeps the order the objects were added in and
omits empty top-level arrays (the schema wants them absent or non-empty), so the same calls give
the same bytes.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

# glTF constants (glTF 2.0 specification, 5.1 accessor.componentType, 5.11 bufferView.target)
FLOAT = 5126
UNSIGNED_INT = 5125
ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
# samplers (5.26)
NEAREST, LINEAR = 9728, 9729
NEAREST_MIPMAP_NEAREST, LINEAR_MIPMAP_LINEAR = 9984, 9987
REPEAT, CLAMP_TO_EDGE = 10497, 33071

_ORDER = (
    "asset",
    "extensionsUsed",
    "scene",
    "scenes",
    "nodes",
    "meshes",
    "materials",
    "textures",
    "images",
    "samplers",
    "accessors",
    "bufferViews",
    "buffers",
)


class Gltf:
    """A glTF document under construction; :meth:`glb` returns its bytes."""

    def __init__(self, generator: str):
        self.asset = {"version": "2.0", "generator": generator}
        self.lists: dict[str, list[dict[str, Any]]] = {k: [] for k in _ORDER[3:] if k != "buffers"}
        self.extensions: list[str] = []
        self.bin = bytearray()
        self._samplers: dict[tuple, int] = {}

    def add(self, kind: str, obj: dict[str, Any]) -> int:
        """Append *obj* to the top-level array *kind* ("nodes", "meshes", ...); its index."""
        items = self.lists[kind]
        items.append(obj)
        return len(items) - 1

    def use_extension(self, name: str) -> None:
        if name not in self.extensions:
            self.extensions.append(name)

    def view(self, data: bytes, target: int | None = None, stride: int | None = None) -> int:
        """A buffer view of *data* appended to the binary buffer (4-byte aligned)."""
        self.bin.extend(b"\0" * (-len(self.bin) % 4))
        bv: dict[str, Any] = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if stride is not None:
            bv["byteStride"] = stride
        if target is not None:
            bv["target"] = target
        self.bin.extend(data)
        return self.add("bufferViews", bv)

    def accessor(
        self,
        view: int,
        offset: int,
        component: int,
        count: int,
        type_: str,
        bounds: tuple[list[float], list[float]] | None = None,
    ) -> int:
        acc: dict[str, Any] = {"bufferView": view}
        if offset:
            acc["byteOffset"] = offset
        acc.update({"componentType": component, "count": count, "type": type_})
        if bounds is not None:
            acc["min"], acc["max"] = bounds
        return self.add("accessors", acc)

    def indices(self, idx: np.ndarray) -> int:
        """An accessor of u32 triangle indices in a buffer view of their own."""
        idx = np.ascontiguousarray(idx, "<u4")
        return self.accessor(self.view(idx.tobytes(), ELEMENT_ARRAY_BUFFER), 0, UNSIGNED_INT, len(idx), "SCALAR")

    def sampler(self, mag: int, min_: int, wrap: int) -> int:
        key = (mag, min_, wrap)
        if key not in self._samplers:
            self._samplers[key] = self.add(
                "samplers", {"magFilter": mag, "minFilter": min_, "wrapS": wrap, "wrapT": wrap}
            )
        return self._samplers[key]

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"asset": self.asset}
        if self.extensions:
            doc["extensionsUsed"] = list(self.extensions)
        if self.lists["scenes"]:
            doc["scene"] = 0
        for k in _ORDER[3:-1]:
            if self.lists[k]:
                doc[k] = self.lists[k]
        if self.bin:
            doc["buffers"] = [{"byteLength": len(self.bin) + (-len(self.bin) % 4)}]
        return doc

    def glb(self) -> bytes:
        text = json.dumps(self.document(), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        js = text.encode("utf-8")
        js += b" " * (-len(js) % 4)
        body = bytes(self.bin) + b"\0" * (-len(self.bin) % 4)
        chunks = struct.pack("<II", len(js), 0x4E4F534A) + js
        if body:
            chunks += struct.pack("<II", len(body), 0x004E4942) + body
        return struct.pack("<4sII", b"glTF", 2, 12 + len(chunks)) + chunks


def read_glb(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The JSON document and the BIN chunk of GLB bytes (for tests and summaries)."""
    magic, version, length = struct.unpack_from("<4sII", data, 0)
    if magic != b"glTF" or version != 2 or length != len(data):
        raise ValueError("not a GLB 2 file")
    n, _ = struct.unpack_from("<II", data, 12)
    doc = json.loads(data[20 : 20 + n])
    rest = 20 + n
    binary = b""
    if rest < len(data):
        m, _ = struct.unpack_from("<II", data, rest)
        binary = data[rest + 8 : rest + 8 + m]
    return doc, binary
