"""One declaration per chunk payload drives encode, decode, equality and dump.

A payload is a :class:`Struct` subclass whose ``FIELDS`` lists ``(name, type)``
pairs in file order.  Types are the spec's primitives (``U8``, ``BOOL``,
``U32``, ``I64``, ``U64``, ``F32``, ``STR``, ``VEC2``, ``VEC3``, ``AABB``,
``COLOR``) and combinators (``List``, ``Array`` for bulk numpy data, ``Opt``
for "bool, then when true ...", ``Tuple``, nested records).  Records may
define ``check(self, fail)`` for the spec's "Readers check" rules; ``fail(field,
message)`` raises a :class:`VdaError` at that field's offset.

``encode(rec)`` and ``decode(cls, payload)`` are exact inverses:
``decode(encode(x)) == x`` and ``encode(decode(b)) == b``.
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from veduta.base.errors import VdaError
from veduta.container.binary import Reader, Writer, f32_bits


class Type:
    name = "?"
    #: the fewest bytes an encoded value takes (bounds list counts before allocating)
    min_size = 0

    def write(self, w: Writer, v) -> None:
        raise NotImplementedError

    def read(self, r: Reader, ctx: dict, what: str):
        raise NotImplementedError

    def default(self):
        return None

    def eq(self, a, b) -> bool:
        return a == b

    def to_json(self, v):
        return v


class _Int(Type):
    def __init__(self, name: str, lo: int, hi: int, size: int, fmt: str):
        self.name, self.lo, self.hi, self.min_size = name, lo, hi, size
        self.fmt = fmt  # struct's format character, for a list of them read in one step
        self._write = getattr(Writer, name)

    def write(self, w, v):
        if not self.lo <= v <= self.hi:
            raise ValueError(f"{self.name} out of range: {v}")
        self._write(w, v)

    def read(self, r, ctx, what):
        return getattr(r, self.name)(what)

    def default(self):
        return 0


class _Bool(Type):
    name = "bool"
    min_size = 1

    def write(self, w, v):
        w.bool(v)

    def read(self, r, ctx, what):
        return r.bool(what)

    def default(self):
        return False


class _F32(Type):
    name = "f32"
    min_size = 4

    def write(self, w, v):
        w.f32(v)

    def read(self, r, ctx, what):
        return r.f32(what)

    def default(self):
        return 0.0

    def eq(self, a, b):
        return f32_bits(a) == f32_bits(b)

    def to_json(self, v):
        return float(v) if np.isfinite(v) else repr(float(v))


class _F64(Type):
    name = "f64"
    min_size = 8

    def write(self, w, v):
        w.f64(v)

    def read(self, r, ctx, what):
        return r.f64(what)

    def default(self):
        return 0.0

    def eq(self, a, b):
        return np.float64(a).tobytes() == np.float64(b).tobytes()

    def to_json(self, v):
        return float(v) if np.isfinite(v) else repr(float(v))


class _Str(Type):
    name = "str"
    min_size = 4

    def write(self, w, v):
        w.str(v)

    def read(self, r, ctx, what):
        return r.str(what)

    def default(self):
        return ""


class _Color(Type):
    """u32 0xAARRGGBB; shown as "#aarrggbb" in dumps."""

    name = "color"
    min_size = 4

    def write(self, w, v):
        w.u32(v)

    def read(self, r, ctx, what):
        return r.u32(what)

    def default(self):
        return 0

    def to_json(self, v):
        return f"#{v:08x}"


U8 = _Int("u8", 0, 0xFF, 1, "B")
U16 = _Int("u16", 0, 0xFFFF, 2, "H")
U32 = _Int("u32", 0, 0xFFFFFFFF, 4, "I")
I64 = _Int("i64", -(1 << 63), (1 << 63) - 1, 8, "q")
U64 = _Int("u64", 0, (1 << 64) - 1, 8, "Q")
BOOL = _Bool()
F32 = _F32()
F64 = _F64()
STR = _Str()
COLOR = _Color()


class Tuple(Type):
    """Fixed fields without a count, as a Python tuple (vec3 = Tuple(F32, F32, F32))."""

    def __init__(self, *items: Type, name: str = ""):
        self.items = items
        self.name = name or "(" + ", ".join(t.name for t in items) + ")"
        self.min_size = sum(t.min_size for t in items)

    def write(self, w, v):
        if len(v) != len(self.items):
            raise ValueError(f"{self.name}: want {len(self.items)} items, got {len(v)}")
        for t, x in zip(self.items, v, strict=True):
            t.write(w, x)

    def read(self, r, ctx, what):
        return tuple(t.read(r, ctx, what) for t in self.items)

    def default(self):
        return tuple(t.default() for t in self.items)

    def eq(self, a, b):
        return len(a) == len(b) and all(t.eq(x, y) for t, x, y in zip(self.items, a, b, strict=False))

    def to_json(self, v):
        return [t.to_json(x) for t, x in zip(self.items, v, strict=True)]


VEC2 = Tuple(F32, F32, name="vec2")
VEC3 = Tuple(F32, F32, F32, name="vec3")
AABB = Tuple(VEC3, VEC3, name="aabb")


class List(Type):
    """list<T>: u32 count, then count elements.  Empty lists read back as []."""

    min_size = 4

    def __init__(self, item: Type):
        self.item = item
        self.name = f"list<{item.name}>"

    def write(self, w, v):
        v = v or []
        w.u32(len(v))
        for x in v:
            self.item.write(w, x)

    def read(self, r, ctx, what):
        n = r.count(max(1, self.item.min_size), what)
        if isinstance(self.item, _Int):  # fixed size: the count check above made the run fit
            return r.ints(self.item.fmt, self.item.min_size, n, what)
        return [self.item.read(r, ctx, what) for _ in range(n)]

    def default(self):
        return []

    def eq(self, a, b):
        a, b = a or [], b or []
        return len(a) == len(b) and all(self.item.eq(x, y) for x, y in zip(a, b, strict=True))

    def to_json(self, v):
        return [self.item.to_json(x) for x in (v or [])]


class Array(Type):
    """list<T> of fixed-size elements held as one numpy array of ``dtype``.

    ``summary`` > 0 makes dumps show the count and a SHA-256 instead of the
    elements when there are more than that many.
    """

    min_size = 4

    def __init__(self, dtype: np.dtype, name: str, summary: int = 0):
        self.dtype = np.dtype(dtype)
        self.name = name
        self.summary = summary

    def write(self, w, v):
        w.array(np.empty(0, self.dtype) if v is None else v, self.dtype)

    def read(self, r, ctx, what):
        return r.array(self.dtype, what)

    def default(self):
        return np.empty(0, self.dtype)

    def eq(self, a, b):
        a = self.default() if a is None else np.ascontiguousarray(a, self.dtype)
        b = self.default() if b is None else np.ascontiguousarray(b, self.dtype)
        return a.shape == b.shape and a.tobytes() == b.tobytes()

    def to_json(self, v):
        v = self.default() if v is None else v
        if self.summary and len(v) > self.summary:
            digest = hashlib.sha256(np.ascontiguousarray(v, self.dtype).tobytes()).hexdigest()
            return {"count": len(v), "sha256": digest}
        return array_to_json(v)


def array_to_json(v: np.ndarray):
    if v.dtype.names:
        return [
            {n: array_to_json(row[n]) if isinstance(row[n], np.ndarray) else _scalar(row[n]) for n in v.dtype.names}
            for row in v
        ]
    return [_scalar(x) if not isinstance(x, np.ndarray) else array_to_json(x) for x in v]


def _scalar(x):
    if isinstance(x, np.floating):
        f = float(x)
        return f if math.isfinite(f) else repr(f)  # "nan", "inf", "-inf": as a scalar field's, and JSON
    if isinstance(x, np.integer):
        return int(x)
    return x


#: types of list items that hold no float (a list of them is passed over in one test)
_NO_FLOAT = frozenset({int, bool, str, bytes})


def first_non_finite(value: Any, path: str = "") -> str | None:
    """Where the first non-finite float (NaN, an infinity) of *value* (a record, or any value of
    one) is, and what it is: ``vertices[0].uv[1] is nan``; None when every float is finite (the
    spec lets an f32 hold any bit pattern: a reader accepts them, a consumer that needs numbers,
    a glTF export, asks this)."""
    if isinstance(value, Struct):
        for name, _ in value.FIELDS:
            found = first_non_finite(getattr(value, name), f"{path}.{name}" if path else name)
            if found is not None:
                return found
    elif isinstance(value, float | np.floating):
        if not math.isfinite(value):
            return f"{path} is {float(value)!r}"
    elif isinstance(value, np.ndarray):
        fields: tuple[str | None, ...] = value.dtype.names or (None,)
        for field in fields:
            arr = value if field is None else value[field]
            if arr.dtype.kind != "f":
                continue
            bad = np.argwhere(~np.isfinite(arr))
            if len(bad):
                at = [int(i) for i in bad[0]]
                where = f"{path}[{at[0]}]" + (f".{field}" if field else "") + "".join(f"[{i}]" for i in at[1:])
                return f"{where} is {float(arr[tuple(at)])!r}"
    elif isinstance(value, list | tuple):
        if all(type(item) in _NO_FLOAT for item in value):  # (frames, indices, names: nothing to see)
            return None
        for i, item in enumerate(value):
            found = first_non_finite(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


class Opt(Type):
    """``bool`` then, only when true, the value; None when false."""

    min_size = 1

    def __init__(self, item: Type):
        self.item = item
        self.name = f"opt<{item.name}>"

    def write(self, w, v):
        w.bool(v is not None)
        if v is not None:
            self.item.write(w, v)

    def read(self, r, ctx, what):
        return self.item.read(r, ctx, what) if r.bool(what) else None

    def eq(self, a, b):
        if a is None or b is None:
            return a is None and b is None
        return self.item.eq(a, b)

    def to_json(self, v):
        return None if v is None else self.item.to_json(v)


class StructType(Type):
    """A nested record, encoded inline (no count, no framing)."""

    def __init__(self, cls: type[Struct]):
        self.cls = cls
        self.name = cls.__name__

    @property
    def min_size(self) -> int:  # type: ignore[override]  # computed from the fields, read-only
        return sum(t.min_size for _, t in self.cls.FIELDS)

    def write(self, w, v):
        v.write(w)

    def read(self, r, ctx, what):
        return self.cls.read(r)

    def default(self):
        return self.cls()

    def eq(self, a, b):
        return a == b

    def to_json(self, v):
        return v.to_json()


class Struct:
    """A binary structure of a chunk payload (a whole body, or a part nested in one):
    subclasses declare ``FIELDS``, encoded in that order."""

    if TYPE_CHECKING:  # the fields are set from FIELDS: tell the type checker they exist

        def __getattr__(self, name: str) -> Any: ...

    FIELDS: ClassVar[tuple[tuple[str, Type], ...]] = ()
    CHUNK: ClassVar[str] = ""
    #: The field names in order (from FIELDS, when the subclass is made).
    NAMES: ClassVar[tuple[str, ...]] = ()
    _NAME_SET: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.NAMES = tuple(name for name, _ in cls.FIELDS)
        cls._NAME_SET = frozenset(cls.NAMES)

    def __init__(self, *args, **kwargs):
        fields = self.FIELDS
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} fields")
        if not kwargs and len(args) == len(fields):  # every field given in order: the common case
            self.__dict__.update(zip(self.NAMES, args))  # (an 8-field Part: 2.7 -> 1.2 us)
            return
        if not args and len(kwargs) == len(fields) and kwargs.keys() == self._NAME_SET:  # every field by name
            self.__dict__.update([(name, kwargs[name]) for name in self.NAMES])
            return
        for (name, _t), v in zip(fields, args, strict=False):
            kwargs.setdefault(name, v)
        for name, t in self.FIELDS:
            object.__setattr__(self, name, kwargs.pop(name) if name in kwargs else t.default())
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(sorted(kwargs))}")

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(t.eq(getattr(self, n), getattr(other, n)) for n, t in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes) -> Struct:
        vals = {n: getattr(self, n) for n, _ in self.FIELDS}
        vals.update(changes)
        return type(self)(**vals)

    # -- encoding -------------------------------------------------------------
    def write(self, w: Writer) -> None:
        for name, t in self.FIELDS:
            try:
                t.write(w, getattr(self, name))
            except (ValueError, TypeError, OverflowError, AttributeError) as exc:
                raise ValueError(f"{type(self).__name__}.{name}: {exc}") from None

    @classmethod
    def read(cls, r: Reader) -> Struct:
        self = cls.__new__(cls)
        offsets: dict[str, int] = {}
        ctx: dict[str, Any] = {}
        r.stack.append(ctx)
        for name, t in cls.FIELDS:
            offsets[name] = r.pos
            v = t.read(r, ctx, f"{cls.__name__}.{name}")
            ctx[name] = v
            object.__setattr__(self, name, v)
        r.stack.pop()
        check = getattr(self, "check", None)
        if check is not None:

            def fail(field: str, message: str) -> VdaError:
                return VdaError(f"{cls.__name__}.{field}: {message}", offset=r.base + offsets.get(field, r.pos))

            check(fail)
        return self

    def to_json(self) -> dict:
        return {n: t.to_json(getattr(self, n)) for n, t in self.FIELDS}


class Custom(Type):
    """A type with hand-written read/write that needs the record read so far (``ctx``)."""

    def __init__(self, name: str, write, read, default=None, eq=None, to_json=None, min_size=0):
        self.name = name
        self.min_size = min_size
        self._write, self._read = write, read
        self._default = default
        self._eq = eq
        self._to_json = to_json

    def write(self, w, v):
        self._write(w, v)

    def read(self, r, ctx, what):
        return self._read(r, ctx, what)

    def default(self):
        return self._default() if self._default else None

    def eq(self, a, b):
        return self._eq(a, b) if self._eq else a == b

    def to_json(self, v):
        return self._to_json(v) if self._to_json else v


def encode(rec: Struct) -> bytes:
    w = Writer()
    rec.write(w)
    return w.getvalue()


def decode(cls: type[Struct], payload: bytes, base: int = 0) -> Struct:
    """Decode a whole payload; it must be consumed exactly."""
    r = Reader(payload, base)
    rec = cls.read(r)
    r.done(cls.__name__)
    return rec


__all__ = [
    "Type",
    "Struct",
    "StructType",
    "List",
    "Array",
    "Opt",
    "Tuple",
    "Custom",
    "U8",
    "U16",
    "U32",
    "I64",
    "U64",
    "BOOL",
    "F32",
    "F64",
    "STR",
    "COLOR",
    "VEC2",
    "VEC3",
    "AABB",
    "encode",
    "decode",
    "array_to_json",
]
