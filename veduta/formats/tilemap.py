"""TMAP: compiled tile map (container spec, "TMAP — compiled tile map")."""

from __future__ import annotations

import numpy as np

from veduta.formats.codec import (
    BOOL,
    F32,
    I64,
    STR,
    U8,
    U32,
    VEC3,
    Custom,
    List,
    Struct,
    StructType,
)

CELL_DTYPE = np.dtype("<u2")


def _write_cells(w, cells):
    w.raw(np.ascontiguousarray(cells, CELL_DTYPE).tobytes())


def _read_cells(r, ctx, what):
    top = r.stack[0]
    cols, rows = top["columns"], top["rows"]
    cells = r.fixed_array(CELL_DTYPE, cols * rows, what).reshape(rows, cols)
    nterr = len(top.get("terrains") or [])
    if cells.size and int(cells.max()) > nterr:
        bad = int(np.argmax(cells.reshape(-1) > nterr))
        raise r.fail(f"{what}: cell {bad} is {int(cells.reshape(-1)[bad])}, not 0 or a terrain index + 1 (<= {nterr})")
    return cells


def _eq_cells(a, b) -> bool:
    return a.shape == b.shape and np.asarray(a, CELL_DTYPE).tobytes() == np.asarray(b, CELL_DTYPE).tobytes()


CELLS = Custom(
    "u16 x columns x rows",
    _write_cells,
    _read_cells,
    default=lambda: np.zeros((0, 0), CELL_DTYPE),
    eq=_eq_cells,
    to_json=lambda v: [" ".join(map(str, row)) for row in np.asarray(v).tolist()],
)


class Terrain(Struct):
    FIELDS = (
        ("key", U32),
        ("name", STR),
        ("texture", STR),
        ("material", STR),
        ("tileset", BOOL),
        ("tile_column", U8),
        ("tile_row", U8),
        ("variants", U8),
        ("flip", U8),
        ("tags", List(STR)),
    )

    def check(self, fail):
        if bool(self.texture) == bool(self.material):
            raise fail("texture", f"terrain {self.name!r} needs exactly one of texture and material")
        if not 1 <= self.variants <= 64:
            raise fail("variants", f"{self.variants} out of range [1, 64]")
        if self.flip > 3:
            raise fail("flip", f"{self.flip} has bits other than 0 and 1")
        if self.key > 0x10FFFF or 0xD800 <= self.key < 0xE000:
            raise fail("key", f"{self.key} is not a Unicode code point")


class Layer(Struct):
    FIELDS = (("name", STR), ("z", F32), ("layer", I64), ("ysort", BOOL), ("cells", CELLS))


def _write_value(w, v):
    if isinstance(v, bool):
        w.u8(2)
        w.bool(v)
    elif isinstance(v, str):
        w.u8(0)
        w.str(v)
    else:
        w.u8(1)
        w.f64(float(v))


def _read_value(r, ctx, what):
    at = r.pos
    t = r.u8(what)
    if t == 0:
        return r.str(what)
    if t == 1:
        return r.f64(what)
    if t == 2:
        return r.bool(what)
    raise r.fail(f"{what}: property type {t} is not 0 (str), 1 (f64) or 2 (bool)", at)


def _eq_value(a, b):
    if type(a) is not type(b) and not (isinstance(a, float) and isinstance(b, float)):
        return False
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b


def _value_json(v):
    if isinstance(v, float) and not np.isfinite(v):
        return repr(v)  # JSON has no NaN or Infinity
    return v


VALUE = Custom("prop value", _write_value, _read_value, default=lambda: "", eq=_eq_value, to_json=_value_json)


class Prop(Struct):
    FIELDS = (("name", STR), ("value", VALUE))


class Object(Struct):
    FIELDS = (
        ("name", STR),
        ("x", U32),
        ("y", U32),
        ("columns", U32),
        ("rows", U32),
        ("prefab", STR),
        ("tags", List(STR)),
        ("props", List(StructType(Prop))),
    )


class Tilemap(Struct):
    CHUNK = "TMAP"
    FIELDS = (
        ("name", STR),
        ("columns", U32),
        ("rows", U32),
        ("tile", F32),
        ("origin", VEC3),
        ("terrains", List(StructType(Terrain))),
        ("layers", List(StructType(Layer))),
        ("objects", List(StructType(Object))),  # str, 4 u32, str, 2 empty lists
    )

    def check(self, fail):
        if not (1 <= self.columns <= 1024 and 1 <= self.rows <= 1024):
            raise fail("columns", f"{self.columns} x {self.rows} is not 1 to 1024 each")
        if not self.tile > 0:
            raise fail("tile", f"{self.tile} is not above 0")
        for o in self.objects or []:
            if not (o.columns >= 1 and o.rows >= 1 and o.x + o.columns <= self.columns and o.y + o.rows <= self.rows):
                raise fail(
                    "objects",
                    f"object {o.name!r} [{o.x}, {o.y}] {o.columns} x {o.rows} is not on the "
                    f"{self.columns} x {self.rows} map",
                )
