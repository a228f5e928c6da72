"""Strict model/1 sources: positioned JSON in, a validated `ModelSpec` out (spec: Errors).

`validate_model` reports every problem at once into a `Report`, each at the line and column of
the offending value with its JSON path (`parts[2].of`). Only when there is no error does it
return a `ModelSpec`, which the geometry core (`build.build_model`) can build without further
checks.

Rules beyond the field types (spec: Parts, Levels of detail, Errors):

* each shape accepts only its own fields plus the common ones; any other field is an error even
  when it is null, 0 or false: `not used by shape box` for a field of another shape (or of the
  common set, on a mirror), `unknown field (did you mean "segments"?)` for anything else;
* `scale` is a number (uniform) or `[x, y, z]`; every component finite and non-zero, negative
  allowed;
* profiles are checked by `profile.check_profile_extrude` / `check_profile_lathe`, each problem
  located at the point it names;
* `of` names an earlier part; `name`, when present, equals the file name; lod distances increase
  and a level may name another model (not this one).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

from veduta.compile.model.profile import check_profile_extrude, check_profile_lathe
from veduta.compile.model.types import (
    AXES,
    DEFAULT_DRAW_DISTANCE,
    DEFAULT_PIVOT,
    DEFAULT_RINGS,
    DEFAULT_SEGMENTS,
    DEFAULT_SMOOTH_ANGLE_DEG,
    DEFAULT_TRIANGLE_BUDGET,
    EXTRUDE_POINTS_RANGE,
    FORMAT,
    LATHE_POINTS_RANGE,
    MAX_LOD_LEVELS,
    MAX_TRIANGLES,
    PARTS_RANGE,
    PIVOTS,
    RINGS_RANGE,
    SEGMENTS_RANGE,
    SHAPES,
    SMOOTH_ANGLE_RANGE,
    UNITS,
    UV_MODES,
    LodSpec,
    ModelSpec,
    PartSpec,
)
from veduta.container.binary import to_f32
from veduta.source import NoProblems, Reported, Unlocated, load_fast, load_source, too_large
from veduta.source.diagnostics import Report
from veduta.source.fields import (
    INVALID,
    Any_,
    AssetName,
    BoolSpec,
    Enum,
    Field,
    Int,
    ListOf,
    Num,
    ObjectSpec,
    Reference,
    Scale,
    Spec,
    Values,
    Variants,
    Vec,
    describe,
    fmt_num,
)
from veduta.source.jsonpos import Arr, Node, Obj, join_path, member_span, parse_plain, plain_doubtful

__all__ = ["read_model", "validate_model", "ModelSource", "COMMON_FIELDS", "SHAPE_FIELDS", "F32_MAX"]

#: The largest finite binary32 value: distances are stored as f32 in MESH.
F32_MAX = 3.4028234663852886e38
#: The largest i64 (triangle_budget is stored as i64).
I64_MAX = (1 << 63) - 1


class Capped(Spec):
    """A number spec with an upper limit set by the storage type (f32, i64), reported apart so
    range messages stay readable ("-1 out of range (must be >= 0)")."""

    def __init__(self, spec: Spec, hi: float, storage: str):
        self.spec, self.hi, self.storage = spec, hi, storage
        self.what = spec.what

    def read(self, rep, node, path):
        v = self.spec.read(rep, node, path)
        if v is not INVALID and v > self.hi:
            rep.error(node, path, f"{node.text} is too large for {self.storage} (at most {self.hi:.8g})")
            return INVALID
        if v is not INVALID and self.storage == "a 32-bit float" and v != 0 and to_f32(v) == 0:
            rep.error(node, path, f"{node.text} is too small for {self.storage} (it would be stored as 0)")
            return INVALID
        return v

    def plain(self, value):
        v = self.spec.plain(value)
        if v > self.hi or (self.storage == "a 32-bit float" and v != 0 and to_f32(v) == 0):
            raise Reported
        return v

    def schema(self) -> dict:
        return {**self.spec.schema(), "maximum": self.hi}


class Units(Spec):
    what = f'"{UNITS}"'

    def read(self, rep, node, path):
        if getattr(node, "kind", "") != "string" or node.value != UNITS:
            shown = f'"{node.value}"' if node.kind == "string" else describe(node)
            rep.error(node, path, f'{shown} is not "{UNITS}" (model/1 lengths are meters)')
            return INVALID
        return UNITS

    def plain(self, value):
        if value != UNITS or type(value) is not str:
            raise Reported
        return UNITS

    def schema(self) -> dict:
        return {"const": UNITS}


class Profile(Spec):
    """An array of [a, b] points (extrude: [x, y]; lathe: [r, y]); shape rules checked later."""

    what = "an array of [a, b] points"
    _points = ListOf(Vec(2, Num()))

    def __init__(self, points: tuple[int, int]):
        self.points = points  # how many points the shape needs, checked by _check_profile

    def read(self, rep, node, path):
        pts = self._points.read(rep, node, path)
        return INVALID if pts is INVALID else tuple(pts)

    def plain(self, value):
        return tuple(self._points.plain(value))

    def schema(self) -> dict:
        return {**self._points.schema(), "minItems": self.points[0], "maxItems": self.points[1]}


POSITIVE = Num(gt=0)
SEGMENTS = Field(Int(*SEGMENTS_RANGE), DEFAULT_SEGMENTS, "Divisions around the axis.")

#: Fields every shape except mirror accepts (mirror accepts `material` only), with defaults.
COMMON_FIELDS: dict[str, Field] = {
    "position": Field(Vec(3), (0.0, 0.0, 0.0)),
    "rotation_deg": Field(Vec(3, Num(-3600, 3600)), (0.0, 0.0, 0.0)),  # as scene entities
    "scale": Field(Scale(), (1.0, 1.0, 1.0)),
    "material": Field(Reference("material"), ""),
    "uv": Field(Enum(*UV_MODES), ""),
    "flip_normals": Field(BoolSpec(), False),
}

#: Each shape's own fields (a missing default means required).
SHAPE_FIELDS: dict[str, dict[str, Field]] = {
    "box": {"size": Field(Vec(3, POSITIVE), doc="[x, y, z] in meters, each > 0.")},
    "cylinder": {
        "radius": Field(POSITIVE, doc="Meters, > 0."),
        "height": Field(POSITIVE, doc="Meters along y, > 0."),
        "segments": SEGMENTS,
    },
    "sphere": {
        "radius": Field(POSITIVE, doc="Meters, > 0."),
        "segments": SEGMENTS,
        "rings": Field(Int(*RINGS_RANGE), DEFAULT_RINGS, "Divisions from pole to pole."),
    },
    "plane": {"size": Field(Vec(2, POSITIVE), doc="[x, z] in meters, each > 0; the plane faces +y.")},
    "extrude": {
        "profile": Field(
            Profile(EXTRUDE_POINTS_RANGE),
            doc="[x, y] points of a simple polygon (closed automatically), extruded along z.",
        ),
        "depth": Field(POSITIVE, doc="Meters along z, > 0."),
    },
    "lathe": {
        "profile": Field(Profile(LATHE_POINTS_RANGE), doc="[r, y] points (r >= 0) turned around the y axis."),
        "segments": SEGMENTS,
    },
    "mirror": {
        "axis": Field(Enum(*AXES), doc="The axis whose coordinate is negated."),
        "of": Field(Int(), doc="The index of an earlier part to mirror."),
        "material": COMMON_FIELDS["material"],
    },
}
assert set(SHAPE_FIELDS) == set(SHAPES)

_ALL_PART_FIELDS = ("shape", *COMMON_FIELDS, *sorted({k for f in SHAPE_FIELDS.values() for k in f}))
_SHAPE = Enum(*SHAPES)


def _accepted(shape: str) -> dict[str, Field]:
    own = SHAPE_FIELDS[shape]
    return {"shape": Field(Any_()), **own} if shape == "mirror" else {"shape": Field(Any_()), **COMMON_FIELDS, **own}


def _unknown_part_field(shape: str, accepted: list[str]):
    def message(key: str) -> str:
        if key in _ALL_PART_FIELDS:
            return f"not used by shape {shape}"
        close = difflib.get_close_matches(key, accepted, n=1, cutoff=0.75)
        return f'unknown field (did you mean "{close[0]}"?)' if close else "unknown field"

    return message


#: One ObjectSpec per shape; fields of other shapes are reported `not used by shape <shape>`.
PART_RECORDS: dict[str, ObjectSpec] = {
    s: ObjectSpec(_accepted(s), unknown=_unknown_part_field(s, list(_accepted(s)))) for s in SHAPES
}
_ANY_SHAPE = ObjectSpec({k: Field(Any_(), None) for k in _ALL_PART_FIELDS})

_POINT_RE = re.compile(r"(?:last )?point (\d+)|edge \d+-(\d+) folds|edges \d+-\d+ and (\d+)-")


def _locate_point(profile: Node | None, message: str) -> tuple[Node | None, int | None]:
    """The point a profile message is about (its node and index), else the profile itself."""
    m = _POINT_RE.match(message)
    if m and isinstance(profile, Arr):
        i = int(next(g for g in m.groups() if g is not None))
        if 0 <= i < len(profile):
            return profile.value[i], i
    return profile, None


def _check_profile(rep: Report, shape: str, points: tuple, node: Node | None, path: str) -> bool:
    lo, hi = EXTRUDE_POINTS_RANGE if shape == "extrude" else LATHE_POINTS_RANGE
    if not lo <= len(points) <= hi:
        rep.error(node, path, f"{len(points)} points out of range [{lo}, {hi}]")
        return False
    check = check_profile_extrude if shape == "extrude" else check_profile_lathe
    problems = check(points)
    for message in problems:
        where, i = _locate_point(node, message)
        rep.error(where, path if i is None else join_path(path, i), message)
    return not problems


def _read_part(rep: Report, node: Node, index: int, path: str) -> PartSpec | None:
    if not isinstance(node, Obj):
        rep.error(node, path, f"expected an object, found {describe(node)}")
        return None
    shape_node = node.get("shape")
    shape = INVALID
    if shape_node is None:
        rep.error(
            node,
            join_path(path, "shape"),
            "required field is missing (want one of " + ", ".join(f'"{s}"' for s in SHAPES) + ")",
        )
    else:
        shape = _SHAPE.read(rep, shape_node, join_path(path, "shape"))
    if shape is INVALID:
        _ANY_SHAPE.read_partial(rep, node, path)  # still report fields no shape has
        return None
    return _part_spec(rep, shape, PART_RECORDS[shape].read_partial(rep, node, path), index, path)


def _part_spec(rep: Report, shape: str, vals: Values, index: int, path: str) -> PartSpec | None:
    """The spec of a part whose fields are read (*vals*), after the rules between them."""
    ok = vals.ok
    if shape == "mirror" and vals["of"] is not INVALID:
        of = vals["of"]
        if not 0 <= of < index:
            want = "part 0 has no earlier part" if index == 0 else f"want 0..{index - 1}"
            rep.error(vals.node("of"), join_path(path, "of"), f"{of} is not the index of an earlier part ({want})")
            ok = False
    if shape in ("extrude", "lathe") and vals["profile"] is not INVALID:
        ok &= _check_profile(rep, shape, vals["profile"], vals.node("profile"), join_path(path, "profile"))
    if not ok:
        return None
    fields = {k: v for k, v in vals.items() if k != "shape"}
    if "profile" in fields:
        fields["profile"] = tuple((float(a), float(b)) for a, b in fields["profile"])
    return PartSpec(index=index, shape=shape, **fields)


def _plain_part(value, index: int) -> PartSpec:
    """`_read_part` of a plain part (see `Spec.plain`)."""
    shape = dict(value).get("shape") if type(value) is tuple else None
    if type(shape) is not str or shape not in PART_RECORDS:
        raise Reported
    spec = _part_spec(_NO_PROBLEMS, shape, PART_RECORDS[shape].plain(value), index, "")
    assert spec is not None  # (a problem raised Reported)
    return spec


class Parts(Spec):
    what = "an array of parts"

    def read(self, rep, node, path):
        if not isinstance(node, Arr):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        lo, hi = PARTS_RANGE
        if not lo <= len(node) <= hi:
            rep.error(
                node, path, "must not be empty" if len(node) == 0 else f"{len(node)} parts out of range [{lo}, {hi}]"
            )
            return INVALID
        parts = [_read_part(rep, item, i, join_path(path, i)) for i, item in enumerate(node)]
        return INVALID if any(p is None for p in parts) else tuple(parts)

    def plain(self, value):
        lo, hi = PARTS_RANGE
        if type(value) is not list or not lo <= len(value) <= hi:
            raise Reported
        return tuple([_plain_part(v, i) for i, v in enumerate(value)])

    def schema(self) -> dict:
        lo, hi = PARTS_RANGE
        return {
            "type": "array",
            "minItems": lo,
            "maxItems": hi,
            "items": Variants("shape", PART_RECORDS, "The primitive this part is.").schema(),
        }


LOD_LEVEL = ObjectSpec(
    {"distance": Field(Capped(Num(gt=0), F32_MAX, "a 32-bit float")), "model": Field(Reference("model"), "")}
)

TOP = ObjectSpec(
    {
        "veduta": Field(Any_(), None),  # checked by load_source
        "name": Field(AssetName, ""),
        "units": Field(Units(), UNITS),
        "pivot": Field(Enum(*PIVOTS), DEFAULT_PIVOT),
        "symmetry": Field(Enum(*AXES), ""),
        "smooth_angle_deg": Field(Num(*SMOOTH_ANGLE_RANGE), DEFAULT_SMOOTH_ANGLE_DEG),
        "triangle_budget": Field(Capped(Int(ge=0), I64_MAX, "a 64-bit integer"), DEFAULT_TRIANGLE_BUDGET),
        "parts": Field(Parts()),
        "lod": Field(ListOf(LOD_LEVEL, max_len=MAX_LOD_LEVELS), []),
        "draw_distance": Field(Capped(Num(ge=0), F32_MAX, "a 32-bit float"), DEFAULT_DRAW_DISTANCE),
    }
)


@dataclass(frozen=True, eq=False)
class ModelSource:
    """A validated source: the spec (None when there are errors), the report, and for every lod
    level the node of its `model` field (None when it has none) to locate references.

    `data` is set when the nodes have no positions (`root`, their tree), or there are none (read
    by `validate_model(..., located=False)` and found without problems): `located()` then gives
    the source with nodes that have positions."""

    spec: ModelSpec | None
    report: Report
    lod_model_nodes: tuple[Node | None, ...] = ()
    parts_node: Node | None = None  # the "parts" array
    part_nodes: tuple[Node, ...] = ()  # each part's object
    data: bytes | None = None
    root: Obj | None = None  # the tree of those nodes, when they have no positions

    def located(self) -> ModelSource:
        """This source with nodes that know their line and column (to report a problem at)."""
        if self.data is None or self.spec is None:
            return self
        if self.root is None:  # read as plain values: no node
            return validate_model(self.data, self.report.file, self.spec.name)
        from veduta.source.jsonpos import locate

        nodes = {path: n for path, n in _nodes(self).items() if n is not None}
        locate(self.data.decode("utf-8"), self.root, nodes.values(), {id(n): path for path, n in nodes.items()})
        return replace(self, data=None, root=None)


def _check_lod(rep: Report, levels: list, name: str) -> bool:
    ok = True
    prev = None
    for k, level in enumerate(levels):
        path = f"lod[{k}]"
        d = level["distance"]
        # compared as stored (f32): 1.00000001 and 1.00000002 are the same distance there
        if prev is not None and not to_f32(d) > to_f32(prev):
            rep.error(
                level.node("distance"),
                f"{path}.distance",
                f"{fmt_num(d)} does not increase (want > {fmt_num(prev)}, the previous level's distance"
                + (", as a 32-bit float)" if d > prev else ")"),
            )
            ok = False
        prev = d
        if level["model"] and level["model"] == name:
            rep.error(
                level.node("model"),
                f"{path}.model",
                f'"{name}" is this model itself (name another model, or leave model out)',
            )
            ok = False
    return ok


def validate_model(data: bytes, file: str, name: str, located: bool = True) -> ModelSource:
    """Decode and validate a model/1 source. `file` is shown in messages, `name` is the model
    name (the file name without .vmodel).

    `located=False` may read the source with the standard library's JSON decoder as plain
    values (no nodes: many times faster); the result is the same, and `ModelSource.located`
    gives the nodes with positions.

    Otherwise a source the strict parser has nothing to say about (no duplicate key, NaN,
    number out of range, ...: `load_fast`) is read once, by the standard library's decoder, as
    nodes without positions, and validated; only the values a problem is reported at, and the
    nodes `ModelSource` keeps, are then found in the text, in one pass (`Unlocated`): a 15.6 MB
    source of 250 parts of 1,000-point profiles is checked in a few seconds, where the strict
    parser took about 30 (docs/authoring-tools.md, "Source sizes").  The strict parser reads
    only a source with such a problem, and says where.
    """
    if too_large(data, "model") is None:  # (else load_source says so, unread)
        plain = None
        if not located:
            plain = parse_plain(data)
            try:
                spec = _plain_spec(plain, name)
            except Reported:
                pass
            else:
                return ModelSource(spec, Report(file), data=data)
        root = _too_many_parts(data, plain)
        plain = None  # (its memory, before the nodes')
        if root is None:
            root = load_fast(data, FORMAT)
        if root is not None:  # no problem the strict parser reports: problems located in this tree
            found = Unlocated(file)
            src = _validate(root, found, name)
            if not located and not found.items:
                return replace(src, report=Report(file), data=data, root=root)
            return replace(src, report=found.located(data.decode("utf-8"), root, _nodes(src)))
    loaded, rep = load_source(data, file, FORMAT)
    if loaded is None:
        return ModelSource(None, rep)
    return _validate(loaded, rep, name)


def _nodes(src: ModelSource) -> dict[str, Node | None]:
    """The nodes of *src* that problems found after validation are reported at (the parts, a
    part, its material, a level's model), by JSON path."""
    out: dict[str, Node | None] = {"parts": src.parts_node}
    for k, part in enumerate(src.part_nodes):
        out[f"parts[{k}]"] = part
        out[f"parts[{k}].material"] = part.get("material") if isinstance(part, Obj) else None
    out.update((f"lod[{k}].model", n) for k, n in enumerate(src.lod_model_nodes))
    return out


#: The report of the plain read (`_plain_spec`): every problem raises Reported.
_NO_PROBLEMS = NoProblems("")


def _too_many_parts(data: bytes, plain) -> Obj | None:
    """The tree `load_fast` gives a source whose *plain* read has more parts than a model may
    (PARTS_RANGE), built without the parts themselves (the validation reports how many there are
    and reads none of them, so nodes for each would only cost time and memory: 200,000 parts,
    about 3 s and 300 MB); None for any other source, or one with a problem the strict parser
    reports (then it is read whole)."""
    if type(plain) is not tuple:
        return None
    parts = next((v for k, v in plain if k == "parts"), None)
    if type(parts) is not list or len(parts) <= PARTS_RANGE[1] or plain_doubtful(parts, 1):
        return None
    text = data.decode("utf-8")
    span = member_span(text, "parts")
    if span is None:
        return None
    root = load_fast((text[: span[0]] + "[]" + text[span[1] :]).encode("utf-8"), FORMAT)
    node = root.value.get("parts") if root is not None else None
    if not isinstance(node, Arr):
        return None
    node.value = [None] * len(parts)  # (what Parts reads of them: how many; never an item)
    return root


def _plain_spec(root, name: str) -> ModelSpec:
    """The spec of a valid source read as plain values (*root*, `parse_plain`'s: no node, no
    position, no message: several times faster than the located read); raises Reported at
    anything the located read would report, or might."""
    if type(root) is not tuple or ("veduta", FORMAT) not in root:  # (a duplicate key: TOP.plain)
        raise Reported
    spec = _model_spec(_NO_PROBLEMS, TOP.plain(root), name)
    assert spec is not None  # (a problem raised Reported)
    return spec


def _validate(root: Obj, rep: Report, name: str) -> ModelSource:
    vals = TOP.read_partial(rep, root, "")
    spec = _model_spec(rep, vals, name)
    if spec is None:
        return ModelSource(None, rep)
    nodes = tuple(lv.node("model") for lv in vals["lod"])
    parts_node = vals.node("parts")
    assert isinstance(parts_node, Arr)  # read by Parts
    return ModelSource(spec, rep, nodes, parts_node, tuple(parts_node))


def _model_spec(rep: Report, vals: Values, name: str) -> ModelSpec | None:
    """The spec of a model whose top fields are read (*vals*), after the rules between them
    (None after a problem)."""
    ok = vals.ok
    if vals["name"] and vals["name"] != name:
        rep.error(vals.node("name"), "name", f'"{vals["name"]}" is not the file name (want "{name}")')
        ok = False
    if vals["lod"] is not INVALID:
        ok &= _check_lod(rep, vals["lod"], name)
    if not ok or not rep.ok:
        return None
    spec = ModelSpec(
        name=name,
        pivot=vals["pivot"],
        symmetry=vals["symmetry"],
        smooth_angle_deg=float(vals["smooth_angle_deg"]),
        triangle_budget=int(vals["triangle_budget"]),
        parts=vals["parts"],
        lod=tuple(LodSpec(float(lv["distance"]), lv["model"]) for lv in vals["lod"]),
        draw_distance=float(vals["draw_distance"]),
    )
    total = total_triangles(spec)
    if total > MAX_TRIANGLES:
        rep.error(
            vals.node("parts"),
            "parts",
            f"{total:,} triangles (every level of detail counted), beyond "
            f"the limit of {MAX_TRIANGLES:,} per model: use fewer parts, segments "
            "or rings",
        )
        return None
    return spec


def total_triangles(spec: ModelSpec) -> int:
    """Triangles the model builds: level 0 and every level of detail drawn by this model."""
    from veduta.compile.model.build import lod_triangle_counts, triangle_count

    return triangle_count(spec) + sum(n for n in lod_triangle_counts(spec) if n)


def read_model(data: bytes, file: str, name: str) -> tuple[ModelSpec | None, Report]:
    """Validated `ModelSpec` (None when the source has errors) and the report of every problem."""
    src = validate_model(data, file, name)
    return src.spec, src.report
