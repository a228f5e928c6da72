"""What the source formats declare at a place in a source: the JSON Schemas read as a map.

The shipped schemas (``veduta/schemas/*.schema.json``) are generated from the validators' own
field declarations and kept equal to them by a test, so walking them tells, for any value of
any source, what the cook expects there: the fields an object may have, an enum's values, the
field's description, and whether a string names something (``"format": "veduta:material"``,
declared by :class:`veduta.source.fields.Reference`).  Reading the JSON files costs a few
milliseconds and imports no compiler.

The walk follows the subset of JSON Schema the generator writes: ``properties``,
``additionalProperties``, ``items``, ``allOf``, ``anyOf`` (chosen by the value's JSON type) and
``if``/``then``/``else`` whose ``if`` tests fields by ``const`` or ``enum`` and ``required``
(a model part's ``shape``, a texture layer's ``type``, a world feature's ``kind``).  Such tests
are judged on the object's *facts*: its fields, with the value of each scalar one.

Example::

    schemas = top("model")
    part = member(applying(schemas, facts={}), "parts")          # the parts array
    part = applying(member(part, 0), facts={"shape": "box"})     # a box part
    fields(part)["size"]["description"]      # "[x, y, z] in meters, each > 0."
    reference(member(part, "material"))      # "material"
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from veduta.source.fields import REF_FORMAT
from veduta.source.jsonpos import Node, Obj

__all__ = ["top", "applying", "member", "fields", "values", "reference", "description", "facts_of", "PRESENT"]

Schema = dict[str, Any]

#: The fact of a field whose value is an object or an array (present, no scalar value).
PRESENT: Any = object()

_JSON_TYPES = {
    "object": "object",
    "array": "array",
    "string": "string",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}


@cache
def top(kind: str) -> tuple[Schema, ...]:
    """The schema of a whole source of *kind*, as shipped in the package."""
    from veduta.schemas import file_name

    text = resources.files("veduta.schemas").joinpath(file_name(kind)).read_text(encoding="utf-8")
    return (json.loads(text),)


def facts_of(node: Node | None) -> dict[str, Any] | None:
    """An object node's fields: key -> scalar value, or :data:`PRESENT` for a container
    (None when *node* is not an object)."""
    if not isinstance(node, Obj):
        return None
    return {k: (PRESENT if v.kind in ("object", "array") else v.value) for k, v in node.value.items()}


def applying(
    schemas: tuple[Schema, ...] | list[Schema], facts: Mapping[str, Any] | None = None, jtype: str | None = None
) -> tuple[Schema, ...]:
    """*schemas* and every part of them that applies to a value whose fields are *facts* (an
    object) and whose JSON type is *jtype* (``"object"``, ``"string"``, ...; None: any)."""
    out: list[Schema] = []
    for s in schemas:
        _apply(s, facts, jtype, out)
    return tuple(out)


def _apply(s: Schema, facts: Mapping[str, Any] | None, jtype: str | None, out: list[Schema]) -> None:
    out.append(s)
    for sub in s.get("allOf", ()):
        _apply(sub, facts, jtype, out)
    if "if" in s:
        branch = s.get("then") if _holds(s["if"], facts) else s.get("else")
        if isinstance(branch, dict):
            _apply(branch, facts, jtype, out)
    for sub in s.get("anyOf", ()):
        if jtype is None or _typed(sub, jtype):
            _apply(sub, facts, jtype, out)


def _typed(s: Schema, jtype: str) -> bool:
    t = s.get("type")
    if t is None:
        return True
    types = t if isinstance(t, list) else [t]
    return jtype in types or (jtype == "number" and "integer" in types)


def _holds(cond: Schema, facts: Mapping[str, Any] | None) -> bool:
    """Whether an ``if`` holds for an object with *facts* (never for a value that is not one)."""
    if facts is None:
        return False
    if any(k not in facts for k in cond.get("required", ())):
        return False
    for k, c in cond.get("properties", {}).items():
        if k not in facts or not isinstance(c, dict):
            continue
        v = facts[k]
        if "const" in c and (v is PRESENT or v != c["const"]):
            return False
        if "enum" in c and (v is PRESENT or v not in c["enum"]):
            return False
    return True


def member(schemas: tuple[Schema, ...], key: str | int) -> tuple[Schema, ...]:
    """The schemas of field *key* (a name) or item *key* (an index) of a value *schemas* apply
    to (call :func:`applying` on them first); empty when nothing is declared there."""
    out: list[Schema] = []
    for s in schemas:
        if isinstance(key, int):
            item = s.get("items")
            if isinstance(item, dict):
                out.append(item)
            continue
        props = s.get("properties", {})
        if key in props:
            if isinstance(props[key], dict):
                out.append(props[key])
        elif isinstance(s.get("additionalProperties"), dict):
            out.append(s["additionalProperties"])
    return tuple(out)


def fields(schemas: tuple[Schema, ...]) -> dict[str, Schema]:
    """The fields an object may have: name -> schema (the first one declared), in declaration
    order, without those a branch rules out (``"depth": {"not": {}, "errorMessage": ...}`` on a
    hill, or ``false``)."""
    out: dict[str, Schema] = {}
    banned: set[str] = set()
    for s in schemas:
        for name, sub in s.get("properties", {}).items():
            if sub is False or (isinstance(sub, dict) and sub.get("not") == {}):
                banned.add(name)
            elif isinstance(sub, dict):
                out.setdefault(name, sub)
    return {k: v for k, v in out.items() if k not in banned}


def required(schemas: tuple[Schema, ...]) -> list[str]:
    return list(dict.fromkeys(k for s in schemas for k in s.get("required", ())))


def values(schemas: tuple[Schema, ...]) -> list[Any]:
    """The values an enum or a constant allows (in declaration order)."""
    out: list[Any] = []
    for s in schemas:
        if "const" in s:
            out.append(s["const"])
        out.extend(s.get("enum", ()))
    return list(dict.fromkeys(out))


def reference(schemas: tuple[Schema, ...]) -> str | None:
    """What a string here names: an asset kind (``"material"``), ``"biome"``, ``"clip"`` or
    ``"image"``; None when it names nothing."""
    for s in schemas:
        fmt = s.get("format")
        if isinstance(fmt, str) and fmt.startswith(REF_FORMAT):
            return fmt[len(REF_FORMAT) :]
    return None


def description(schemas: tuple[Schema, ...]) -> str:
    """The first description declared (the field's documentation), or ""."""
    for s in schemas:
        d = s.get("description")
        if isinstance(d, str):
            return d
    return ""


def jtype_of(node: Node) -> str:
    return _JSON_TYPES.get(node.kind, node.kind)
