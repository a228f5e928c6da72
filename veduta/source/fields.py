"""Shared field validators for strict sources.

A source format is declared as nested *specs* (``ObjectSpec``, ``Int``, ``Num``,
``Str``, ``Color``, ``Vec``, ``ListOf``, ...).  ``spec.read(report, node,
path)`` checks a positioned JSON node against the spec, appends every problem
to the report and returns the Python value, or ``INVALID`` when the value is
unusable.  Reading never stops at the first problem: a record reads all its
fields, a list all its items.

``spec.plain(value)`` is the same check of a plain value (see
:func:`veduta.source.jsonpos.parse_plain`: objects as tuples of key-value pairs) for sources
that are expected to be valid: it makes no node and no message, and raises
:class:`~veduta.source.Reported` at anything the located read would report (or that only it
may judge); the caller then reads the source located.

Example::

    PART = ObjectSpec({"size": Field(Vec(3, Num(gt=0))), "segments": Field(Int(3, 256), 16)})
    values = PART.read(report, node, "parts[0]")
    if values is not INVALID: values["segments"], values.nodes["segments"]
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from typing import Any

from veduta.base.errors import clip, quote
from veduta.base.names import NAME_RE, NAME_RULE
from veduta.source.diagnostics import Report, Reported
from veduta.source.jsonpos import Arr, Bool, Node, Null, Obj, Str, join_path
from veduta.source.jsonpos import Num as NumNode  # `Num` below is the number spec

__all__ = [
    "INVALID",
    "REQUIRED",
    "Spec",
    "Field",
    "ObjectSpec",
    "Values",
    "Int",
    "Num_",
    "Num",
    "BoolSpec",
    "Str_",
    "StrSpec",
    "Enum",
    "Color",
    "Vec",
    "ListOf",
    "Any_",
    "NAME_RE",
    "AssetName",
    "Reference",
    "REF_FORMAT",
    "describe",
    "fmt_num",
    "parse_color",
    "Scale",
    "Declared",
    "Variants",
    "js_pattern",
    "color_text",
    "unused",
    "schema_rules",
]


class _Sentinel:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __bool__(self) -> bool:
        return False


INVALID: Any = _Sentinel("INVALID")
REQUIRED: Any = _Sentinel("REQUIRED")
_ABSENT: Any = _Sentinel("ABSENT")  # a field not in a plain object (null is None there)


def describe(node: Node) -> str:
    """What a node is, for 'expected X, found Y' messages."""
    if isinstance(node, Obj):
        return "an object"
    if isinstance(node, Arr):
        return "an array"
    if isinstance(node, Str):
        v = node.value
        return f'the string "{v}"' if len(v) <= 40 else f'the string "{v[:37]}..." ({len(v)} characters)'
    if isinstance(node, Bool):
        return "true" if node.value else "false"
    if isinstance(node, Null):
        return "null"
    if isinstance(node, NumNode):
        return clip(node.text)
    return repr(node.value)


def fmt_num(v: float | int) -> str:
    """A number as people write it: 3, 0.5, 1e-06."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def js_pattern(pattern: re.Pattern | str) -> str:
    """A Python pattern used with ``fullmatch`` as a JSON Schema (ECMA-262) ``pattern``."""
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    return f"^(?:{text})$"


class Spec:
    """Base class: ``read`` checks a node and returns its value or INVALID; ``schema`` is the
    same rule as JSON Schema (Draft 2020-12), as far as a schema can say it."""

    #: How the spec is named in 'expected ...' messages and docs.
    what = "a value"

    def read(self, rep: Report, node: Node, path: str) -> Any:
        raise NotImplementedError

    def plain(self, value: Any) -> Any:
        """What ``read`` returns for a plain value it accepts without a problem (see the
        module's doc); raises Reported otherwise.  A spec without a plain reader leaves
        every value to the located read."""
        raise Reported

    def schema(self) -> dict:
        return {}

    def to_json(self, value: Any) -> Any:
        """A value as read (a default) written back as JSON: tuples as lists."""
        if isinstance(value, tuple | list):
            return [self.to_json(v) for v in value]
        return value


class Any_(Spec):
    """Accept any JSON value as its plain Python value."""

    what = "any value"

    def read(self, rep, node, path):
        from veduta.source.jsonpos import to_plain

        return to_plain(node)

    def plain(self, value):
        if type(value) in (tuple, list):  # (to_plain's dicts and lists are not made here)
            raise Reported
        return value


class Declared(Spec):
    """A field the compiler reads by hand (in steps, with rules between fields, or with files
    it must read), declared here with the spec that says its shape.  ``read`` hands the node on
    unchanged (absent fields keep the field's default); the compiler reads it with ``spec``
    itself (``read_camera`` with ``CAMERA``), and the schema comes from ``spec``."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.what = spec.what

    def read(self, rep, node, path):
        return node

    def schema(self) -> dict:
        return self.spec.schema()


class Variants(Spec):
    """Objects whose fields depend on one tag field (a model part's ``shape``, a texture
    layer's ``type``): one ObjectSpec per tag value.  Read by hand by the compilers (they locate
    errors their own way); declared for the schema, as ``if``/``then`` per tag value."""

    def __init__(self, tag: str, records: dict[str, ObjectSpec], doc: str = ""):
        self.tag, self.records, self.doc = tag, records, doc
        self.what = "an object"

    def read(self, rep, node, path):
        raise NotImplementedError("read by hand by the compiler; declared for the schema")

    def schema(self) -> dict:
        """``if``/``then`` per tag value; a field that only other values use is a ``not`` with the
        validator's message (``not used by shape box``), so a schema validator reports it at
        the field itself, where ``additionalProperties`` would name the whole object."""
        tag_schema: dict = {"enum": list(self.records)}
        if self.doc:
            tag_schema["description"] = self.doc
        every = list(dict.fromkeys(k for record in self.records.values() for k in record.fields))
        branches = []
        for value, record in self.records.items():
            then = record.schema()
            then["properties"][self.tag] = {"const": value}
            for key in every:
                if key not in record.fields:
                    then["properties"][key] = unused(record.unknown_message(key))
            branches.append({"if": {"properties": {self.tag: {"const": value}}, "required": [self.tag]}, "then": then})
        return {"type": "object", "required": [self.tag], "properties": {self.tag: tag_schema}, "allOf": branches}


def unused(message: str) -> dict:
    """The schema of a field that may not be there: ``not`` anything, with the validator's
    message for editors (``errorMessage``, which VS Code's JSON support shows instead of its own;
    other validators ignore it).  A ``false`` subschema says the same, but with no message."""
    return {"not": {}, "errorMessage": message}


def schema_rules(spec: ObjectSpec, *rules: dict) -> None:
    """Add *rules* (subschemas, typically ``if``/``then``) to what *spec*'s schema says of the
    rules between its fields (``allOf`` of its ``schema_extra``)."""
    extra = dict(spec.schema_extra)
    extra["allOf"] = [*extra.get("allOf", []), *rules]
    spec.schema_extra = extra


class BoolSpec(Spec):
    what = "true or false"

    def read(self, rep, node, path):
        if not isinstance(node, Bool):
            rep.error(node, path, f"expected true or false, found {describe(node)}")
            return INVALID
        return node.value

    def plain(self, value):
        if type(value) is not bool:
            raise Reported
        return value

    def schema(self) -> dict:
        return {"type": "boolean"}


class Num_(Spec):
    """A finite number with optional bounds (``ge``/``gt``/``le``/``lt``)."""

    what = "a number"

    def __init__(self, ge=None, le=None, *, gt=None, lt=None, integer=False):
        self.ge, self.le, self.gt, self.lt, self.integer = ge, le, gt, lt, integer
        self._bounded = not (ge is None and le is None and gt is None and lt is None)

    def range_text(self) -> str:
        if (self.ge is not None or self.gt is not None) and (self.le is not None or self.lt is not None):
            lo = f"[{fmt_num(self.ge)}" if self.ge is not None else f"({fmt_num(self.gt)}"
            hi = f"{fmt_num(self.le)}]" if self.le is not None else f"{fmt_num(self.lt)})"
            return f"{lo}, {hi}"
        parts = []
        if self.ge is not None:
            parts.append(f">= {fmt_num(self.ge)}")
        if self.gt is not None:
            parts.append(f"> {fmt_num(self.gt)}")
        if self.le is not None:
            parts.append(f"<= {fmt_num(self.le)}")
        if self.lt is not None:
            parts.append(f"< {fmt_num(self.lt)}")
        return " and ".join(parts)

    def schema(self) -> dict:
        out: dict = {"type": "integer" if self.integer else "number"}
        for key, v in (
            ("minimum", self.ge),
            ("exclusiveMinimum", self.gt),
            ("maximum", self.le),
            ("exclusiveMaximum", self.lt),
        ):
            if v is not None:
                out[key] = v
        return out

    def in_range(self, v) -> bool:
        return not (
            (self.ge is not None and v < self.ge)
            or (self.gt is not None and v <= self.gt)
            or (self.le is not None and v > self.le)
            or (self.lt is not None and v >= self.lt)
        )

    def read(self, rep, node, path):
        if not isinstance(node, NumNode):
            rep.error(node, path, f"expected {'an integer' if self.integer else 'a number'}, found {describe(node)}")
            return INVALID
        v = node.value
        if isinstance(v, float) and not math.isfinite(v):
            return INVALID  # already reported by the parser
        if self.integer and not isinstance(v, int):
            rep.error(node, path, f"expected an integer, found {node.text}")
            return INVALID
        if not self.in_range(v):
            rng = self.range_text()
            if rng.startswith(("[", "(")):
                rep.error(node, path, f"{node.text} out of range {rng}")
            else:
                rep.error(node, path, f"{node.text} out of range (must be {rng})")
            return INVALID
        return v if self.integer else float(v)

    def plain(self, value):
        kind = type(value)  # (bool is an int to isinstance)
        if kind is float:
            if self.integer or not -_INF < value < _INF:  # (1e400 decodes as inf; NaN fails too)
                raise Reported
        elif kind is not int or not -PLAIN_INT_MAX <= value <= PLAIN_INT_MAX:
            raise Reported
        if self._bounded and not self.in_range(value):
            raise Reported
        return value if self.integer else float(value)


#: Integers a plain read accepts (larger ones, rare in a source, are left to the located read,
#: which judges their digits and their conversion to float).
PLAIN_INT_MAX = 1 << 53
_INF = math.inf


def Num(ge=None, le=None, *, gt=None, lt=None) -> Num_:  # noqa: N802 - reads like a type
    return Num_(ge, le, gt=gt, lt=lt)


def Int(ge=None, le=None, *, gt=None, lt=None) -> Num_:  # noqa: N802
    return Num_(ge, le, gt=gt, lt=lt, integer=True)


class StrSpec(Spec):
    what = "a string"

    def __init__(
        self, *, pattern: re.Pattern | str | None = None, what: str = "", min_len: int = 0, max_len: int | None = None
    ):
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.pattern_what = what
        self.min_len, self.max_len = min_len, max_len

    def read(self, rep, node, path):
        if not isinstance(node, Str):
            rep.error(node, path, f"expected a string, found {describe(node)}")
            return INVALID
        v = node.value
        if len(v) < self.min_len:
            rep.error(
                node, path, "must not be empty" if self.min_len == 1 else f"must be at least {self.min_len} characters"
            )
            return INVALID
        if self.max_len is not None and len(v) > self.max_len:
            rep.error(node, path, f"{len(v)} characters, more than the limit of {self.max_len}")
            return INVALID
        if self.pattern is not None and not self.pattern.fullmatch(v):
            rep.error(node, path, f"{quote(v)} is not {self.pattern_what or 'valid'}")
            return INVALID
        return v

    def plain(self, value):
        if (
            type(value) is not str
            or len(value) < self.min_len
            or (self.max_len is not None and len(value) > self.max_len)
            or (self.pattern is not None and not self.pattern.fullmatch(value))
        ):
            raise Reported
        return value

    def schema(self) -> dict:
        out: dict = {"type": "string"}
        if self.min_len:
            out["minLength"] = self.min_len
        if self.max_len is not None:
            out["maxLength"] = self.max_len
        if self.pattern is not None:
            out["pattern"] = js_pattern(self.pattern)
        return out


Str_ = StrSpec

NAME_WHAT = f"a valid name ({NAME_RULE})"
#: An asset name: 1-64 characters of a-z, 0-9, _ and -, starting with a letter or digit.
AssetName = StrSpec(pattern=NAME_RE, what=NAME_WHAT)

#: The schema ``format`` of a reference: ``"veduta:material"`` (see :class:`Reference`).
REF_FORMAT = "veduta:"
_OPT_NAME_RE = re.compile("|" + NAME_RE.pattern)


class Reference(StrSpec):
    """A name that refers to something declared elsewhere: another asset of kind *to*
    (``"material"``, ``"model"``, ...), or ``"biome"`` (a world's biome), ``"clip"`` (a clip of a
    texture) or ``"image"`` (a PNG under the assets folder, by its path; give *pattern* and
    *what*).  It reads exactly as the string spec it replaces (a name, or with *optional* also
    ``""``); the schema marks it ``"format": "veduta:<to>"``, which is how tools find every
    reference from the declarations (:mod:`veduta.tools.refs`, the language server's completion
    and go-to-definition).  Whether the target exists is the compiler's check
    (:meth:`veduta.compile.CompileContext.reference`)."""

    def __init__(self, to: str, *, optional: bool = False, pattern: re.Pattern | None = None, what: str = ""):
        super().__init__(pattern=pattern or (_OPT_NAME_RE if optional else NAME_RE), what=what or NAME_WHAT)
        self.to = to

    def schema(self) -> dict:
        return {**super().schema(), "format": REF_FORMAT + self.to}


class Enum(Spec):
    def __init__(self, *values: str):
        self.values = values
        self.what = "one of " + ", ".join(f'"{v}"' for v in values)

    def read(self, rep, node, path):
        if not isinstance(node, Str):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        if node.value not in self.values:
            rep.error(node, path, f"{quote(node.value)} is not {self.what}")
            return INVALID
        return node.value

    def plain(self, value):
        if type(value) is not str or value not in self.values:
            raise Reported
        return value

    def schema(self) -> dict:
        return {"enum": list(self.values)}


_COLOR_RE = re.compile(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{8})")


def color_text(argb: int) -> str:
    """0xAARRGGBB as written in sources: ``#rrggbb`` when opaque, else ``#aarrggbb``."""
    return f"#{argb & 0xFFFFFF:06x}" if argb >> 24 == 0xFF else f"#{argb:08x}"


def parse_color(text: str) -> int | None:
    """``#rrggbb`` (opaque) or ``#aarrggbb`` to 0xAARRGGBB; None when malformed."""
    m = _COLOR_RE.fullmatch(text)
    if not m:
        return None
    h = m.group(1)
    return int(h, 16) | (0xFF000000 if len(h) == 6 else 0)


class Color(Spec):
    what = 'a colour "#rrggbb" or "#aarrggbb"'

    def read(self, rep, node, path):
        if not isinstance(node, Str):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        c = parse_color(node.value)
        if c is None:
            rep.error(node, path, f"{quote(node.value)} is not {self.what}")
            return INVALID
        return c

    def schema(self) -> dict:
        return {"type": "string", "pattern": js_pattern(_COLOR_RE)}

    def to_json(self, value):
        return color_text(value) if isinstance(value, int) else value


class Vec(Spec):
    """A fixed-length array of numbers, e.g. ``[x, y, z]``; returns a tuple."""

    def __init__(self, n: int, item: Num_ | None = None, *, nonzero: bool = False):
        self.n, self.item, self.nonzero = n, item or Num(), nonzero
        self.what = f"an array of {n} {'integers' if self.item.integer else 'numbers'}"

    def read(self, rep, node, path):
        if not isinstance(node, Arr) or len(node) != self.n:
            found = f"{len(node)} items" if isinstance(node, Arr) else describe(node)
            rep.error(node, path, f"expected {self.what}, found {found}")
            return INVALID
        out = []
        read = self.item.read
        for i, item in enumerate(node):
            v = read(rep, item, f"{path}[{i}]" if path else f"[{i}]")  # (join_path of an index)
            if v is not INVALID and self.nonzero and v == 0:
                rep.error(item, join_path(path, i), "must not be 0")
                v = INVALID
            out.append(v)
        return INVALID if INVALID in out else tuple(out)  # (INVALID equals nothing but itself)

    def plain(self, value):
        if type(value) is not list or len(value) != self.n:
            raise Reported
        item = self.item.plain
        out = tuple([item(v) for v in value])
        if self.nonzero and 0 in out:
            raise Reported
        return out

    def schema(self) -> dict:
        item = self.item.schema()
        if self.nonzero:
            item["not"] = {"const": 0}
        return {"type": "array", "items": item, "minItems": self.n, "maxItems": self.n}


class ListOf(Spec):
    """An array of items of one spec; returns a list (INVALID items dropped, see ``ok``)."""

    def __init__(self, item: Spec, *, min_len: int = 0, max_len: int | None = None, unique: bool = False):
        self.item, self.min_len, self.max_len, self.unique = item, min_len, max_len, unique
        self.what = f"an array of {item.what}"

    def read(self, rep, node, path):
        if not isinstance(node, Arr):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        if len(node) < self.min_len:
            rep.error(
                node,
                path,
                "must not be empty" if self.min_len == 1 else f"{len(node)} items, at least {self.min_len} needed",
            )
        if self.max_len is not None and len(node) > self.max_len:
            rep.error(node, path, f"{len(node)} items, more than the limit of {self.max_len}")
            return INVALID
        out = []
        seen: dict = {}
        bad = False
        for i, item in enumerate(node):
            v = self.item.read(rep, item, join_path(path, i))
            if v is INVALID:
                bad = True
                continue
            if self.unique:
                key = v if not isinstance(v, list) else tuple(v)
                if key in seen:
                    rep.error(item, join_path(path, i), f"{describe(item)} repeats item {seen[key]}")
                    bad = True
                    continue
                seen[key] = i
            out.append(v)
        return INVALID if bad else out

    def plain(self, value):
        if (
            type(value) is not list
            or len(value) < self.min_len
            or (self.max_len is not None and len(value) > self.max_len)
        ):
            raise Reported
        item = self.item.plain
        out = [item(v) for v in value]
        if self.unique and len({v if not isinstance(v, list) else tuple(v) for v in out}) != len(out):
            raise Reported
        return out

    def schema(self) -> dict:
        out: dict = {"type": "array", "items": self.item.schema()}
        if self.min_len:
            out["minItems"] = self.min_len
        if self.max_len is not None:
            out["maxItems"] = self.max_len
        if self.unique:
            out["uniqueItems"] = True
        return out

    def to_json(self, value):
        return [self.item.to_json(v) for v in value] if isinstance(value, list | tuple) else value


class Field:
    """A record field: its spec and default (``REQUIRED`` when it must be present)."""

    __slots__ = ("spec", "default", "doc")

    def __init__(self, spec: Spec, default: Any = REQUIRED, doc: str = ""):
        self.spec, self.default, self.doc = spec, default, doc


class Values(dict):
    """A record's values by field name, with ``nodes`` (field -> Node) and ``obj``."""

    nodes: dict[str, Node]
    obj: Obj | None
    path: str
    ok: bool = True

    def node(self, name: str) -> Node | None:
        return self.nodes.get(name)

    def where(self, name: str) -> Node | None:
        """The node of a field when present, else the record's object (for located errors)."""
        return self.nodes.get(name) or self.obj


class ObjectSpec(Spec):
    """A JSON object with declared fields; any other field is an error.

    ``unknown(key) -> message`` customises the message for undeclared keys
    (models say ``not used by shape box``); by default it is ``unknown field``
    with a close-match suggestion.
    """

    what = "an object"

    def __init__(
        self,
        fields: dict[str, Field],
        *,
        unknown: Callable[[str], str] | None = None,
        check: Callable[[Report, Values, str], None] | None = None,
    ):
        self.fields = fields
        self.unknown = unknown
        self.check = check

    def unknown_message(self, key: str) -> str:
        if self.unknown is not None:
            return self.unknown(key)
        close = difflib.get_close_matches(key, list(self.fields), n=1, cutoff=0.75)
        return f'unknown field (did you mean "{close[0]}"?)' if close else "unknown field"

    def read(self, rep, node, path):
        vals = self.read_partial(rep, node, path)
        return vals if vals is not INVALID and vals.ok else INVALID

    def read_partial(self, rep, node, path) -> Values:
        """Like ``read`` but returns the values even when some are INVALID
        (``vals.ok`` tells), so later checks can still look at the good ones.
        INVALID only when the node is not an object."""
        if not isinstance(node, Obj):
            rep.error(node, path, f"expected an object, found {describe(node)}")
            return INVALID
        vals = Values()
        vals.nodes = {}
        vals.obj = node
        vals.path = path
        bad = False
        fields = self.fields
        given_fields = node.value
        for key, child in given_fields.items():
            if key not in fields:
                rep.error(child, join_path(path, key), self.unknown_message(key))
                bad = True
        for name, f in fields.items():
            given = given_fields.get(name)
            if given is None:
                if f.default is REQUIRED:
                    rep.error(node, join_path(path, name), "required field is missing")
                    bad = True
                    vals[name] = INVALID
                else:
                    vals[name] = f.default
                continue
            vals.nodes[name] = given
            v = f.spec.read(rep, given, join_path(path, name))
            if v is INVALID:
                bad = True
            vals[name] = v
        if not bad and self.check is not None:
            n = len(rep.errors)
            self.check(rep, vals, path)
            bad = len(rep.errors) > n
        vals.ok = not bad
        return vals

    def plain(self, value) -> Values:
        """``read`` of a plain object (a tuple of key-value pairs): the values, with no nodes
        (``node`` and ``where`` give None).  A record with a ``check`` is left to the located
        read."""
        if type(value) is not tuple or self.check is not None:
            raise Reported
        given = dict(value)
        fields = self.fields
        if len(given) != len(value) or not given.keys() <= fields.keys():  # a duplicate or unknown key
            raise Reported
        if self._defaults is None:
            self._defaults = {name: f.default for name, f in fields.items()}
            self._required = {name for name, f in fields.items() if f.default is REQUIRED}
        if not self._required <= given.keys():
            raise Reported
        vals = Values(self._defaults)  # (in the fields' order, as read_partial)
        vals.nodes = {}
        vals.obj = None
        vals.path = ""
        for name, v in given.items():
            vals[name] = fields[name].spec.plain(v)
        return vals

    _defaults: dict[str, Any] | None = None
    _required: set[str]

    def schema(self) -> dict:
        """``type: object`` with every declared field (description and default for editors),
        the required ones, and no others."""
        props = {}
        for name, f in self.fields.items():
            props[name] = field_schema(f)
        out: dict = {"type": "object", "properties": props}
        required = [n for n, f in self.fields.items() if f.default is REQUIRED]
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        out.update(self.schema_extra)
        return out

    #: What a schema can say of the rules in ``check`` (e.g. ``allOf`` of ``if``/``then``).
    schema_extra: dict = {}


def field_schema(f: Field) -> dict:
    """A field's schema with its description and, when the validator accepts it written
    out, its default (a default computed from other fields is not shown)."""
    out = f.spec.schema()
    if f.doc:
        out = {"description": f.doc, **out}
    if f.default is not REQUIRED and f.default is not None:
        value = f.spec.to_json(f.default)
        if _accepts(f.spec, value):
            out["default"] = value
    return out


def _accepts(spec: Spec, value: Any) -> bool:
    import json

    from veduta.source.jsonpos import parse

    node, problems = parse(json.dumps(value))
    if node is None or problems or isinstance(spec, Declared):
        return False
    rep = Report("default")
    return spec.read(rep, node, "") is not INVALID and rep.ok


class Scale(Spec):
    """``scale``: a number s (meaning [s, s, s]) or [x, y, z]; components non-zero and
    within *limit* in magnitude (None: any finite number)."""

    what = "a number or an array of 3 numbers"

    def __init__(self, limit: float | None = None):
        self._num = Num(-limit, limit) if limit is not None else Num()

    def _component(self, rep: Report, node: Node, path: str):
        v = self._num.read(rep, node, path)
        if v is not INVALID and v == 0:
            rep.error(node, path, f"{describe(node)} is not allowed (scale components must be non-zero)")
            return INVALID
        return v

    def plain(self, value):
        if type(value) is list:
            if len(value) != 3:
                raise Reported
            out = tuple([self._num.plain(v) for v in value])
        else:
            v = self._num.plain(value)
            out = (v, v, v)
        if 0 in out:
            raise Reported
        return out

    def read(self, rep, node, path):
        if isinstance(node, NumNode):
            v = self._component(rep, node, path)
            return INVALID if v is INVALID else (v, v, v)
        if isinstance(node, Arr) and len(node) == 3:
            out = [self._component(rep, item, join_path(path, i)) for i, item in enumerate(node)]
            return INVALID if any(v is INVALID for v in out) else tuple(out)
        found = f"{len(node)} items" if isinstance(node, Arr) else describe(node)
        rep.error(node, path, f"expected {self.what}, found {found}")
        return INVALID

    def schema(self) -> dict:
        component = {**self._num.schema(), "not": {"const": 0}}
        return {"anyOf": [component, {"type": "array", "items": component, "minItems": 3, "maxItems": 3}]}
