"""map/1 sources to TMAP (docs/formats/map.md; container spec "TMAP").

Cells are authored as text: each layer has ``rows``, one string per map row, one character per
cell, each character a terrain's ``key`` (``"."`` and ``" "`` are empty cells). A layer may
instead ``fill`` every cell with one key.  Terrains name a texture or a material (checked when
they exist: a tileset tile and its variants must lie inside the grid), objects may name a prefab
(checked: its footprint must fit the object's cells).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from veduta.compile import CompileContext
from veduta.compile.common import COORD, HEADER, NAME, TAGS, Refs, check_name, load_validated, one_of, vec_text
from veduta.formats.tilemap import CELL_DTYPE, Layer, Object, Prop, Terrain, Tilemap
from veduta.source.diagnostics import Report, Within
from veduta.source.fields import (
    INVALID,
    NAME_RE,
    BoolSpec,
    Declared,
    Enum,
    Field,
    Int,
    ListOf,
    Num,
    ObjectSpec,
    Reference,
    Spec,
    StrSpec,
    Values,
    Vec,
    describe,
    fmt_num,
    js_pattern,
)
from veduta.source.jsonpos import LINE_END, Arr, Node, Obj, Str, join_path
from veduta.source.jsonpos import Num as JsonNum

FORMAT = "map/1"
MAX_SIDE = 1024
MAX_TERRAINS = 1024
MAX_LAYERS = 32
MAX_OBJECTS = 4096
MAX_PROPS = 64
MAX_PROP_TEXT = 4096
EMPTY = (".", " ")
#: Unknown characters reported per layer (each with its first position and count).
MAX_UNKNOWN_REPORTED = 10


class Key(Spec):
    """A terrain key: one character (code point), not "." or " " (empty), not a control character."""

    what = "a single character"

    def __init__(self, allow_empty: bool = False):
        self.allow_empty = allow_empty

    def read(self, rep: Report, node: Node, path: str) -> Any:
        if not isinstance(node, Str):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        v = node.value
        if len(v) != 1:
            rep.error(node, path, f'"{v}" is {len(v)} characters, want exactly one')
            return INVALID
        if v in EMPTY and not self.allow_empty:
            rep.error(node, path, f'"{v}" marks an empty cell and cannot be a terrain key')
            return INVALID
        if ord(v) < 0x20 or 0x7F <= ord(v) < 0xA0:
            rep.error(node, path, f"U+{ord(v):04X} is a control character, not a usable key")
            return INVALID
        return v

    def schema(self) -> dict:
        # one code point (minLength/maxLength count code points, as len() does)
        out: dict = {"type": "string", "minLength": 1, "maxLength": 1, "pattern": "^[^\\x00-\\x1f\\x7f-\\x9f]$"}
        if not self.allow_empty:
            out["not"] = {"enum": list(EMPTY)}
        return out


class Props(Spec):
    """``{"name": "text" | number | true/false}``; returns {name: value} (numbers as float)."""

    what = "an object of properties"

    def read(self, rep: Report, node: Node, path: str) -> Any:
        if not isinstance(node, Obj):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        if len(node.value) > MAX_PROPS:
            rep.error(node, path, f"{len(node.value)} properties, more than the limit of {MAX_PROPS}")
            return INVALID
        out = {}
        bad = False
        for name, child in node.items():
            p = join_path(path, name)
            if not NAME_RE.fullmatch(name):
                rep.error(
                    node.keys[name],
                    p,
                    f'"{name}" is not a valid property name (1-64 of a-z, 0-9, _, -, starting with a letter or digit)',
                )
                bad = True
            kind = child.kind
            if kind == "string":
                if len(child.value) > MAX_PROP_TEXT:
                    rep.error(child, p, f"{len(child.value)} characters, more than the limit of {MAX_PROP_TEXT}")
                    bad = True
                out[name] = child.value
            elif kind == "boolean":
                out[name] = child.value
            elif isinstance(child, JsonNum):  # kind "number"
                v = child.value
                if isinstance(v, int) and abs(v) > 2**53:
                    rep.error(child, p, f"{child.text} is not exactly representable as a double (|n| <= 2^53)")
                    bad = True
                out[name] = float(v)
            else:
                rep.error(child, p, f"expected a string, a number, true or false, found {describe(child)}")
                bad = True
        return INVALID if bad else out

    def schema(self) -> dict:
        return {
            "type": "object",
            "propertyNames": {"pattern": js_pattern(NAME_RE)},
            "maxProperties": MAX_PROPS,
            "additionalProperties": {
                "anyOf": [{"type": "string", "maxLength": MAX_PROP_TEXT}, {"type": ["number", "boolean"]}]
            },
        }


TERRAIN = ObjectSpec(
    {
        "key": Field(Key()),
        "name": Field(NAME),
        "texture": Field(Reference("texture", optional=True), ""),
        "material": Field(Reference("material", optional=True), ""),
        "tile": Field(Vec(2, Int(0, 255)), None),
        "variants": Field(Int(1, 64), 1),
        "flip": Field(ListOf(Enum("x", "y"), max_len=2, unique=True), []),
        "tags": Field(TAGS, []),
    }
)

LAYER = ObjectSpec(
    {
        "name": Field(NAME),
        "z": Field(COORD, 0.0),
        "layer": Field(Int(-1000, 1000), 0),
        "ysort": Field(BoolSpec(), False),
        "rows": Field(ListOf(StrSpec(min_len=1, max_len=MAX_SIDE), min_len=1, max_len=MAX_SIDE), None),
        "fill": Field(Key(allow_empty=True), None),
    }
)

OBJECT = ObjectSpec(
    {
        "name": Field(NAME),
        "cell": Field(Vec(2, Int(0, MAX_SIDE - 1))),
        "size": Field(Vec(2, Int(1, MAX_SIDE)), (1, 1)),
        "prefab": Field(Reference("prefab", optional=True), ""),
        "tags": Field(TAGS, []),
        "props": Field(Props(), {}),
    }
)

TOP = ObjectSpec(
    {
        "veduta": HEADER,
        "name": Field(NAME, ""),
        "size": Field(Vec(2, Int(1, MAX_SIDE)), None),
        "tile": Field(Num(gt=0, le=1024), 1.0),
        "origin": Field(Vec(3, COORD), (0.0, 0.0, 0.0)),
        "terrains": Field(Declared(ListOf(TERRAIN, max_len=MAX_TERRAINS)), None),
        "layers": Field(Declared(ListOf(LAYER, min_len=1, max_len=MAX_LAYERS))),
        "objects": Field(Declared(ListOf(OBJECT, max_len=MAX_OBJECTS)), None),
    }
)


def _items(rep: Report, node: Node | None, path: str, what: str, limit: int, min_len: int = 0) -> list | None:
    """The item nodes of an array field (absent: []), or None when it is not a usable array."""
    if node is None:
        return []
    if not isinstance(node, Arr):
        rep.error(node, path, f"expected an array of {what}, found {describe(node)}")
        return None
    if len(node) < min_len:
        rep.error(node, path, "must not be empty")
        return None
    if len(node) > limit:
        rep.error(node, path, f"{len(node)} {what}, more than the limit of {limit}")
        return None
    return list(node)


def _unique(rep: Report, vals: Values, field: str, path: str, seen: dict, what: str, index: int) -> bool:
    v = vals[field]
    if v is INVALID:
        return True
    if v in seen:
        rep.error(vals.node(field), join_path(path, field), f'"{v}" is already the {field} of {what} {seen[v]}')
        return False
    seen[v] = index
    return True


def _grid_text(grid: tuple[int, int]) -> str:
    return f"{grid[0]} x {grid[1]} grid" if grid != (0, 0) else "no grid"


def _read_terrain(rep: Report, refs: Refs, vals: Values, p: str) -> Terrain | None:
    ok = vals.ok
    tex, mat = vals["texture"], vals["material"]
    if tex == "" and mat == "":
        rep.error(vals.obj, join_path(p, "texture"), "a terrain needs a texture or a material")
        ok = False
    elif tex not in ("", INVALID) and mat not in ("", INVALID):
        rep.error(
            vals.node("material"),
            join_path(p, "material"),
            "a terrain has a texture or a material, not both (keep one)",
        )
        ok = False
    tile, variants = vals["tile"], vals["variants"]
    if tile is None and variants not in (1, INVALID):
        rep.error(
            vals.node("variants"),
            join_path(p, "variants"),
            "variants are the tiles after tile in its row (give tile too)",
        )
        ok = False
    grid, owner = None, ""
    if ok and tex:
        tfacts = refs.texture(tex, vals.node("texture"), join_path(p, "texture"))
        grid, owner = (tfacts.grid if tfacts else None), f'texture "{tex}"'
    elif ok and mat:
        mfacts = refs.material(mat, vals.node("material"), join_path(p, "material"))
        grid, owner = (mfacts.grid if mfacts else None), f'material "{mat}"'
    if ok and tile not in (None, INVALID) and grid is not None and variants is not INVALID:
        c, r = tile
        if grid == (0, 0):
            rep.error(
                vals.node("tile"), join_path(p, "tile"), f"{owner} has no grid to take tile {vec_text(tile)} from"
            )
            ok = False
        elif c + variants > grid[0] or r >= grid[1]:
            cols = f"column {c}" if variants == 1 else f"columns {c}..{c + variants - 1}"
            rep.error(
                vals.node("tile"),
                join_path(p, "tile"),
                f"tile {vec_text(tile)}{'' if variants == 1 else f' with {variants} variants'} needs {cols} "
                f"of row {r}, outside the {_grid_text(grid)} of {owner}",
            )
            ok = False
    if not ok:
        return None
    flip = vals["flip"]
    return Terrain(
        key=ord(vals["key"]),
        name=vals["name"],
        texture=tex,
        material=mat,
        tileset=tile is not None,
        tile_column=tile[0] if tile else 0,
        tile_row=tile[1] if tile else 0,
        variants=variants,
        flip=(1 if "x" in flip else 0) | (2 if "y" in flip else 0),
        tags=list(vals["tags"]),
    )


def _char_pos(lines: Callable[[], list[str]], node: Str, i: int) -> tuple[int, int]:
    """Line and column of character *i* of a string node, when the source (whose lines are
    ``lines()``) writes it unescaped."""
    text = lines()
    line = text[node.line - 1] if node.line - 1 < len(text) else ""
    raw = line[node.col : node.col + len(node.value)]
    if line[node.col - 1 : node.col] == '"' and raw == node.value and line[node.col + len(node.value) :][:1] == '"':
        return node.line, node.col + 1 + i
    return node.line, node.col


def _unknown_chars(
    rep: Report, lines: Callable[[], list[str]], rows_node: Arr, rows: list[str], path: str, lookup: dict[str, int]
) -> bool:
    """Report every character of *rows* that is not a key (first place and count of each); True if none."""
    codes = np.frombuffer("".join(rows).encode("utf-32-le"), "<u4")
    keys = np.array(sorted(ord(k) for k in lookup), dtype=np.uint32)
    bad = ~np.isin(codes, keys)
    if not bad.any():
        return True
    starts = np.cumsum([0] + [len(r) for r in rows])
    bad_idx = np.flatnonzero(bad)
    uniq, first, counts = np.unique(codes[bad_idx], return_index=True, return_counts=True)
    order = np.argsort(bad_idx[first], kind="stable")
    known = one_of(sorted(k for k in lookup if k not in EMPTY)) if len(lookup) > len(EMPTY) else "no terrains"
    for j in order[:MAX_UNKNOWN_REPORTED]:
        at = int(bad_idx[first[j]])
        r = int(np.searchsorted(starts, at, side="right")) - 1
        c = at - int(starts[r])
        ch = chr(int(uniq[j]))
        more = f", and {int(counts[j]) - 1} more like it" if counts[j] > 1 else ""
        shown = f'"{ch}"' if ch.isprintable() else f"U+{ord(ch):04X}"
        rep.error(
            Within(rows_node.value[r], functools.partial(_char_pos, lines, i=c)),
            join_path(path, r),
            f"{shown} at column {c} is not a terrain key (want {known}, or . or space for empty){more}",
        )
    if len(uniq) > MAX_UNKNOWN_REPORTED:
        rep.error(rows_node, path, f"{len(uniq) - MAX_UNKNOWN_REPORTED} more unknown characters")
    return False


def _cells(rows: list[str], lookup: dict[str, int]) -> np.ndarray:
    """Text rows (equal lengths, every character a key) to ``(rows, columns) <u2`` cells."""
    codes = np.frombuffer("".join(rows).encode("utf-32-le"), "<u4").reshape(len(rows), len(rows[0]))
    keys = np.array(sorted(ord(k) for k in lookup), dtype=np.uint32)
    values = np.array([lookup[chr(k)] for k in keys.tolist()], dtype=CELL_DTYPE)
    return values[np.searchsorted(keys, codes)]


def validate(root: Obj, ctx: CompileContext, data: bytes, refs: Refs | None = None) -> Tilemap | None:
    """Check a map/1 source and its references; the TMAP record or None."""
    rep = ctx.report
    refs = refs or Refs(ctx)
    lines = functools.cache(lambda: LINE_END.split(data.decode("utf-8", "replace")))  # (the parser's; if asked)
    vals = TOP.read_partial(rep, root, "")
    if vals is INVALID:
        return None
    ok = vals.ok and check_name(rep, vals, ctx.name)

    # terrains
    terrains: list[Terrain | None] = []
    lookup: dict[str, int] = {e: 0 for e in EMPTY}
    items = _items(rep, vals.node("terrains"), "terrains", "terrains", MAX_TERRAINS)
    ok &= items is not None
    keys_seen: dict = {}
    names_seen: dict = {}
    for i, item in enumerate(items or []):
        p = join_path("terrains", i)
        tv = TERRAIN.read_partial(rep, item, p)
        if tv is INVALID:
            terrains.append(None)
            continue
        ok &= _unique(rep, tv, "key", p, keys_seen, "terrain", i)
        ok &= _unique(rep, tv, "name", p, names_seen, "terrain", i)
        if tv["key"] is not INVALID:
            lookup.setdefault(tv["key"], i + 1)
        terrains.append(_read_terrain(rep, refs, tv, p))

    # layers: size from "size", else from the first layer with rows
    size = vals["size"]
    layer_items = (
        _items(rep, vals.node("layers"), "layers", "layers", MAX_LAYERS, min_len=1) if "layers" in vals.nodes else None
    )
    ok &= layer_items is not None
    layer_vals: list[Values | None] = []
    mixed: set[int] = set()  # layers with rows and fill, or neither (reported)
    layer_names: dict = {}
    for i, item in enumerate(layer_items or []):
        p = join_path("layers", i)
        lv = LAYER.read_partial(rep, item, p)
        if lv is INVALID:
            layer_vals.append(None)
            continue
        ok &= _unique(rep, lv, "name", p, layer_names, "layer", i)
        has_rows, has_fill = "rows" in lv.nodes, "fill" in lv.nodes
        if has_rows == has_fill:
            where = lv.node("fill") if has_fill else lv.obj
            rep.error(
                where,
                join_path(p, "fill" if has_fill else "rows"),
                "a layer has rows or fill, not both"
                if has_fill
                else "required field is missing (a layer has rows, or fill for one key everywhere)",
            )
            lv.ok = False
            mixed.add(i)
        elif has_rows and lv["rows"] is not INVALID and size is None:
            rows = lv["rows"]
            if rows and rows[0]:  # no rows is reported by the field (must not be empty)
                size = (len(rows[0]), len(rows))
        layer_vals.append(lv)
    if size is None and layer_items is not None and all(lv is not None and lv.ok for lv in layer_vals):
        rep.error(root, "size", "required field is missing (no layer has rows to take the size from)")
        ok = False

    layers: list[Layer] = []
    for i, lvo in enumerate(layer_vals):
        if lvo is None or size in (None, INVALID) or i in mixed:
            ok = False
            continue
        lv = lvo
        p = join_path("layers", i)
        cols, nrows = size
        if INVALID in (lv["fill"], lv["rows"]):
            ok = False
            continue
        if lv["fill"] is not None:
            key = lv["fill"]
            if key not in lookup:
                rep.error(lv.node("fill"), join_path(p, "fill"), f'"{key}" is not a terrain key')
                ok = False
                continue
            cells = np.full((nrows, cols), lookup[key], CELL_DTYPE)
        else:
            rows, rows_node = lv["rows"], lv.node("rows")
            assert isinstance(rows_node, Arr)  # rows given (not fill), read from an array
            good = True
            if len(rows) != nrows:
                rep.error(rows_node, join_path(p, "rows"), f"{len(rows)} rows, want {nrows} (the map's rows)")
                good = False
            for r, (row, rnode) in enumerate(zip(rows, rows_node.value, strict=True)):
                if len(row) != cols:
                    rep.error(
                        rnode, join_path(join_path(p, "rows"), r), f"{len(row)} cells, want {cols} (the map's columns)"
                    )
                    good = False
            good &= _unknown_chars(rep, lines, rows_node, rows, join_path(p, "rows"), lookup)
            if not good:
                ok = False
                continue
            cells = _cells(rows, lookup)
        if not lv.ok:
            ok = False
            continue
        layers.append(Layer(name=lv["name"], z=lv["z"], layer=lv["layer"], ysort=lv["ysort"], cells=cells))

    # objects
    objects: list[Object] = []
    obj_items = _items(rep, vals.node("objects"), "objects", "objects", MAX_OBJECTS)
    ok &= obj_items is not None
    obj_names: dict = {}
    tile = vals["tile"]
    for i, item in enumerate(obj_items or []):
        p = join_path("objects", i)
        ov = OBJECT.read_partial(rep, item, p)
        if ov is INVALID:
            ok = False
            continue
        good = ov.ok & _unique(rep, ov, "name", p, obj_names, "object", i)
        cell, osize = ov["cell"], ov["size"]
        if (
            INVALID not in (cell, osize)
            and size not in (None, INVALID)
            and (cell[0] + osize[0] > size[0] or cell[1] + osize[1] > size[1])
        ):
            rep.error(
                ov.node("cell"),
                join_path(p, "cell"),
                f"{osize[0]} x {osize[1]} cells at {vec_text(cell)} do not fit the {size[0]} x {size[1]} map",
            )
            good = False
        if ov["prefab"] not in ("", INVALID):
            facts = refs.prefab(ov["prefab"], ov.node("prefab"), join_path(p, "prefab"))
            if (
                facts is not None
                and facts.footprint is not None
                and osize is not INVALID
                and tile is not INVALID
                and (facts.footprint[0] > osize[0] * tile or facts.footprint[1] > osize[1] * tile)
            ):
                fw, fd = facts.footprint
                rep.error(
                    ov.node("prefab"),
                    join_path(p, "prefab"),
                    f'the footprint of prefab "{ov["prefab"]}" ({fmt_num(fw)} x {fmt_num(fd)} m) does not fit '
                    f"{osize[0]} x {osize[1]} cells of {fmt_num(tile)} m (give the object a larger size)",
                )
                good = False
        if not good:
            ok = False
            continue
        props = [Prop(name=k, value=v) for k, v in sorted(ov["props"].items())]
        objects.append(
            Object(
                name=ov["name"],
                x=cell[0],
                y=cell[1],
                columns=osize[0],
                rows=osize[1],
                prefab=ov["prefab"],
                tags=list(ov["tags"]),
                props=props,
            )
        )

    if not ok or any(t is None for t in terrains) or not rep.ok:
        return None
    return Tilemap(
        name=ctx.name,
        columns=size[0],
        rows=size[1],
        tile=tile,
        origin=vals["origin"],
        terrains=terrains,
        layers=layers,
        objects=objects,
    )


def compile_map(data: bytes, ctx: CompileContext) -> Tilemap | None:
    """Compile a map/1 source; None with every problem in ``ctx.report``."""
    return load_validated(data, ctx, FORMAT, lambda root: validate(root, ctx, data))
