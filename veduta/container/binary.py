"""Little-endian primitive reader and writer (container spec, "Primitive encodings").

The reader raises :class:`~veduta.base.errors.VdaError` with the byte offset for
every malformed input; no ``struct.error``, ``IndexError`` or
``UnicodeDecodeError`` escapes.
"""

from __future__ import annotations

import struct

import numpy as np

from veduta.base.errors import VdaError

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


#: ``str``, for annotations inside Reader (whose method ``str`` shadows the name there).
Text = str


class F32(float):
    """A float that remembers its exact binary32 bit pattern.

    Decoding yields these so that re-encoding reproduces every bit, NaN
    payloads included (a plain float would quiet a signalling NaN).
    """

    __slots__ = ("bits",)
    bits: int

    def __new__(cls, bits: int):
        self = super().__new__(cls, _F32.unpack(_U32.pack(bits))[0])
        self.bits = bits
        return self

    def __repr__(self) -> str:
        return float.__repr__(self)


def f32_bits(v: float) -> int:
    """The binary32 bit pattern of *v* (rounded to nearest when not exact)."""
    if isinstance(v, F32):
        return v.bits
    try:
        return _U32.unpack(_F32.pack(v))[0]
    except OverflowError:
        return 0x7F800000 if v > 0 else 0xFF800000


def to_f32(v: float) -> float:
    """Round a float to the nearest binary32 value (as a Python float)."""
    return _F32.unpack(_F32.pack(v))[0] if abs(v) < 3.4028235677973366e38 else float(np.float32(v))


class Writer:
    """Collects encoded primitives; ``getvalue()`` joins them."""

    __slots__ = ("parts",)

    def __init__(self):
        self.parts: list[bytes] = []

    def getvalue(self) -> bytes:
        return b"".join(self.parts)

    def raw(self, b: bytes) -> None:
        self.parts.append(b)

    def u8(self, v: int) -> None:
        if not 0 <= v <= 0xFF:
            raise ValueError(f"u8 out of range: {v}")
        self.parts.append(bytes((v,)))

    def bool(self, v: bool) -> None:
        self.parts.append(b"\x01" if v else b"\x00")

    def u16(self, v: int) -> None:
        self.parts.append(_U16.pack(v))

    def u32(self, v: int) -> None:
        self.parts.append(_U32.pack(v))

    def i64(self, v: int) -> None:
        self.parts.append(_I64.pack(v))

    def u64(self, v: int) -> None:
        self.parts.append(_U64.pack(v))

    def f32(self, v: float) -> None:
        if type(v) is float:  # (its binary32 bytes: what f32_bits would give, one call less)
            try:
                self.parts.append(_F32.pack(v))
                return
            except OverflowError:
                pass
        self.parts.append(_U32.pack(f32_bits(v)))

    def f64(self, v: float) -> None:
        self.parts.append(_F64.pack(v))

    def str(self, v: str) -> None:
        b = v.encode("utf-8")
        self.parts.append(_U32.pack(len(b)))
        self.parts.append(b)

    def array(self, a: np.ndarray, dtype: np.dtype) -> None:
        """A bulk array: u32 count, then the elements in *dtype* (little-endian)."""
        a = np.ascontiguousarray(a, dtype=dtype)
        self.parts.append(_U32.pack(len(a)))
        self.parts.append(a.tobytes())


class Reader:
    """Reads primitives from a payload; offsets in errors are relative to ``base``."""

    __slots__ = ("data", "pos", "end", "base", "stack")

    def __init__(self, data: bytes | memoryview, base: int = 0):
        self.stack: list[dict] = []  # fields read so far, outermost record first
        self.data = bytes(data)
        self.pos = 0
        self.end = len(self.data)
        self.base = base

    def fail(self, message: str, at: int | None = None) -> VdaError:
        return VdaError(message, offset=self.base + (self.pos if at is None else at))

    def need(self, n: int, what: str) -> int:
        p = self.pos
        if n > self.end - p:
            raise self.fail(f"payload too short: {what} needs {n} bytes, {self.end - p} left")
        self.pos = p + n
        return p

    def u8(self, what: str = "u8") -> int:
        p = self.need(1, what)
        return self.data[p]

    def bool(self, what: str = "bool") -> bool:
        p = self.need(1, what)
        b = self.data[p]
        if b > 1:
            raise self.fail(f"bad bool {b} in {what} (want 0 or 1)", p)
        return b == 1

    def u16(self, what: str = "u16") -> int:
        return _U16.unpack_from(self.data, self.need(2, what))[0]

    def u32(self, what: str = "u32") -> int:
        return _U32.unpack_from(self.data, self.need(4, what))[0]

    def i64(self, what: str = "i64") -> int:
        return _I64.unpack_from(self.data, self.need(8, what))[0]

    def u64(self, what: str = "u64") -> int:
        return _U64.unpack_from(self.data, self.need(8, what))[0]

    def f32(self, what: str = "f32") -> float:
        return F32(_U32.unpack_from(self.data, self.need(4, what))[0])

    def f64(self, what: str = "f64") -> float:
        return _F64.unpack_from(self.data, self.need(8, what))[0]

    def str(self, what: str = "str") -> str:
        n = self.u32(what)
        p = self.need(n, what)
        try:
            return self.data[p : p + n].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"invalid UTF-8 in {what}", p + exc.start) from None

    def count(self, itemsize: int, what: Text) -> int:
        """A u32 list count, checked against the bytes left (each item >= itemsize bytes)."""
        at = self.pos
        n = self.u32(what)
        if itemsize and n > (self.end - self.pos) // itemsize:
            raise self.fail(f"{what}: count {n} needs at least {n * itemsize} bytes, {self.end - self.pos} left", at)
        return n

    def array(self, dtype: np.dtype, what: Text) -> np.ndarray:
        n = self.count(dtype.itemsize, what)
        p = self.need(n * dtype.itemsize, what)
        return np.frombuffer(self.data, dtype=dtype, count=n, offset=p).copy()

    def fixed_array(self, dtype: np.dtype, n: int, what: Text) -> np.ndarray:
        p = self.need(n * dtype.itemsize, what)
        return np.frombuffer(self.data, dtype=dtype, count=n, offset=p).copy()

    def ints(self, fmt: Text, size: int, n: int, what: Text) -> list[int]:
        """*n* integers of struct format character *fmt* (*size* bytes each, little-endian) in one
        step, as Python ints: what *n* calls of :meth:`u32` (...) read, without a call each."""
        p = self.need(n * size, what)
        return list(struct.unpack_from(f"<{n}{fmt}", self.data, p))

    def done(self, what: Text) -> None:
        if self.pos != self.end:
            raise self.fail(f"{self.end - self.pos} trailing bytes after {what}")
