"""Minimal, byte-preserving edits of an array of objects in a JSON source.

The world editing tools (``veduta world place|terrain|vegetation|remove``) change one element of
one top-level array (``features``, ``vegetation``, ``places``) and nothing else: every other
byte of the author's file (formatting, field order, spacing, line endings) is kept. The
positions come from the strict parser of :mod:`veduta.source.jsonpos` (the same parse the
compilers use), extended here with where each value ends.

Three edits, each returning the new text:

* :func:`append_item` adds an element at the end of ``root[key]``, creating the array when the
  key is absent (after the field that precedes it in the caller's field order) or empty;
* :func:`replace_item` replaces element ``index``;
* :func:`remove_item` removes element ``index`` with one separator (``[]`` when it was the only
  one, or with ``drop_empty`` the member itself, as :func:`append_item` added it).

A new element is written in the style of its neighbours: one line ``{ "a": 1, "b": [2, 3] }``
(spacing inside braces, after colons and commas copied from an existing element) or one member
per line with the neighbour's indentation; it goes where the next element would go (the
separator between the last two elements, or a new line at the first element's column). Values
are plain JSON: objects of scalars and flat lists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from veduta.source.jsonpos import Arr, Node, Obj, line_starts, parse_spans

__all__ = ["JsonDoc", "EditError", "append_item", "replace_item", "remove_item", "render_value"]


class EditError(ValueError):
    """The text cannot be edited this way (not JSON, not an object, the key is not an array)."""


class JsonDoc:
    """A parsed JSON text with the span of every value (``doc.span(node) -> (start, end)``)."""

    def __init__(self, text: str):
        self.text = text
        root, self._spans, problems = parse_spans(text)
        if root is None:
            raise EditError("not valid JSON: " + "; ".join(p.message for p in problems))
        if not isinstance(root, Obj):
            raise EditError("the top level is not an object")
        self.root = root
        self._lines = line_starts(text)
        self.newline = "\r\n" if "\r\n" in text else "\n"

    def span(self, node: Node) -> tuple[int, int]:
        _, start, end = self._spans[id(node)]
        return start, end

    def offset(self, line: int, col: int) -> int:
        """The character offset of a 1-based line and column."""
        return self._lines[line - 1] + col - 1

    def key_start(self, obj: Obj, key: str) -> int:
        k = obj.keys[key]
        return self.offset(k.line, k.col)

    def line_prefix(self, pos: int) -> str:
        """The text from the start of the line to *pos*."""
        return self.text[max(self.text.rfind("\n", 0, pos), self.text.rfind("\r", 0, pos)) + 1 : pos]

    def indent_at(self, pos: int) -> str:
        """Whitespace that puts a new line's text at the column of *pos* (tabs kept)."""
        return re.sub(r"[^\t]", " ", self.line_prefix(pos))

    def starts_line(self, pos: int) -> bool:
        return self.line_prefix(pos).strip() == ""

    def one_line(self) -> bool:
        return "\n" not in self.text.rstrip()

    def indent_unit(self) -> str:
        """The indentation of the top level's members (two spaces when they share its line)."""
        for key in self.root.keys:
            pre = self.line_prefix(self.key_start(self.root, key))
            if pre.strip() == "" and pre:
                return pre
        return "  "

    def array(self, key: str) -> Arr:
        node = self.root.get(key)
        if not isinstance(node, Arr):
            raise EditError(f'"{key}" is not an array')
        return node


# -- rendering -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Style:
    multiline: bool = False
    open: str = "{ "  # "{" plus what follows it on one line
    close: str = " }"
    colon: str = ": "
    comma: str = ", "
    member_indent: str = ""  # multi-line only: absolute indentation of members and of "}"
    close_indent: str = ""
    list_open: str = "["
    list_close: str = "]"
    list_comma: str = ", "
    #: one-line only: where member i starts, from the element's start, in column-aligned arrays
    #: (None: not aligned); a member is padded with spaces to reach its column
    columns: tuple[int | None, ...] = ()


_KEY_COLON = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:\s*)')
_COMMA_KEY = re.compile(r',([ \t]*)"')
_LIST = re.compile(r"\[([ \t]*)([^\[\]{}\n]*?)([ \t]*)\]")


class _ListSpacing(TypedDict, total=False):
    """The list fields of a :class:`Style` (those a sample shows)."""

    list_open: str
    list_close: str
    list_comma: str


def _list_style(text: str) -> _ListSpacing:
    """Spacing of the first flat list with two items or more in *text* (none: {})."""
    for lm in _LIST.finditer(text):
        cm = re.search(r",([ \t]*)", lm.group(2))
        if cm:  # a flat list with two items or more shows all three spacings
            return {"list_open": "[" + lm.group(1), "list_close": lm.group(3) + "]", "list_comma": "," + cm.group(1)}
    return {}


def style_of(sample: str | None, context: str = "") -> Style:
    """The style of an existing element's text (one object), or the default one-line style.
    *context* (the whole file) gives the lists' spacing when the element has no list to copy."""
    if not sample or not sample.startswith("{"):
        st = Style()
        lists = _list_style(context)
        return Style(**lists) if lists else st
    # the narrowest spacing written: column-aligned tables pad some members, not all
    colons = [m.group(1) for m in _KEY_COLON.finditer(sample) if "\n" not in m.group(1)]
    colon = min(colons, key=len) if colons else ": "
    lists = _list_style(sample) or _list_style(context)
    if "\n" in sample:
        lines = sample.splitlines()
        member = next((ln for ln in lines[1:] if ln.strip() and not ln.strip().startswith("}")), "")
        member_indent = member[: len(member) - len(member.lstrip())]
        last = lines[-1]
        close_indent = last[: len(last) - len(last.lstrip())]
        return Style(
            multiline=True,
            open="{",
            close="}",
            colon=colon,
            member_indent=member_indent,
            close_indent=close_indent,
            **lists,
        )
    # *sample* is one object's text: it starts with "{" and ends with "}"
    om, cm = re.match(r"\{([ \t]*)", sample), re.search(r"([ \t]*)\}$", sample)
    assert om is not None and cm is not None, sample
    open_ = "{" + om.group(1)
    close = cm.group(1) + "}"
    commas = [m.group(1) for m in _COMMA_KEY.finditer(sample)]
    comma = "," + (min(commas, key=len) if commas else " ")
    if not lists:  # no list anywhere: as tight as the members ("cell":[5,5] beside "a":1,"b":2)
        tight = comma == "," and open_ == "{"
        lists = {"list_comma": "," if tight else ", "}
    return Style(open=open_, close=close, colon=colon, comma=comma, **lists)


def _columns(doc: JsonDoc, arr: Arr, comma: str) -> tuple[int | None, ...]:
    """Where member i starts (from its element's start) when every one-line element of *arr*
    (two or more) starts it at the same column and some pad to reach it (a separator wider than
    *comma*); else None for i."""
    rows, gaps = [], []
    for item in arr:
        if not isinstance(item, Obj):
            return ()
        a, b = doc.span(item)
        if "\n" in doc.text[a:b]:
            return ()
        keys = list(item.keys)
        rows.append([doc.key_start(item, k) - a for k in keys])
        # the spacing before member i: from the end of member i-1's value
        gaps.append(
            [0] + [doc.key_start(item, k) - doc.span(item.value[keys[i - 1]])[1] for i, k in enumerate(keys) if i]
        )
    if len(rows) < 2:
        return ()
    out: list[int | None] = []
    for i in range(max(len(r) for r in rows)):
        at = {r[i] for r in rows if len(r) > i}
        widths = {g[i] for g in gaps if len(g) > i}
        counted = sum(1 for r in rows if len(r) > i)
        out.append(at.pop() if len(at) == 1 and counted >= 2 and max(widths) > len(comma) else None)
    return tuple(out)


def _scalar(v: Any) -> str:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    raise TypeError(f"cannot write {type(v).__name__} {v!r}")


def _value(v: Any, st: Style) -> str:
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return st.list_open + st.list_comma.join(_value(x, st) for x in v) + st.list_close
    if isinstance(v, dict):
        inner = Style(
            list_open=st.list_open, list_close=st.list_close, list_comma=st.list_comma, colon=st.colon, comma=st.comma
        )
        return render_value(v, inner, "\n")
    return _scalar(v)


def render_value(value: dict[str, Any], st: Style, newline: str = "\n") -> str:
    """One object in a style (members in the dict's order)."""
    members = [json.dumps(k, ensure_ascii=False) + st.colon + _value(v, st) for k, v in value.items()]
    if not members:
        return "{}"
    if st.multiline:
        sep = "," + newline + st.member_indent
        return "{" + newline + st.member_indent + sep.join(members) + newline + st.close_indent + "}"
    if not st.columns:
        return st.open + st.comma.join(members) + st.close
    out = st.open
    for i, m in enumerate(members):
        if i:
            out += st.comma
            col = st.columns[i] if i < len(st.columns) else None
            if col is not None and len(out) < col:
                out += " " * (col - len(out))
        out += m
    return out + st.close


# -- edits ---------------------------------------------------------------------------------------


def _sample(doc: JsonDoc, arr: Arr, index: int | None = None) -> str | None:
    items = list(arr)
    if not items:
        return None
    node = items[index] if index is not None else items[-1]
    a, b = doc.span(node)
    return doc.text[a:b]


def append_item(text: str, key: str, value: dict[str, Any], order: Sequence[str] = ()) -> str:
    """*text* with *value* appended to the array ``root[key]``.

    When the key is absent it is added after the last present member that comes before it in
    *order* (or first when none does, or last when *key* is not in *order*)."""
    doc = JsonDoc(text)
    nl = doc.newline
    node = doc.root.get(key)
    if node is None:
        return _add_member(doc, key, value, order)
    if not isinstance(node, Arr):
        raise EditError(f'"{key}" is not an array')
    items = list(node)
    a0, a1 = doc.span(node)
    if not items:
        indent = doc.line_prefix(doc.key_start(doc.root, key))
        indent = indent if indent.strip() == "" else ""
        return text[:a0] + _new_array(doc, indent, value) + text[a1:]
    st = _with_columns(style_of(_sample(doc, node), text), doc, node)
    last_start, last_end = doc.span(items[-1])
    if len(items) >= 2:
        sep = text[doc.span(items[-2])[1] : last_start]
    elif doc.one_line():
        sep = _root_spacing(doc)[0]
    elif doc.starts_line(last_start):
        sep = "," + nl + doc.line_prefix(last_start)
    else:
        sep = "," + nl + doc.indent_at(last_start)
    if st.multiline and "\n" in sep:
        # members sit at the same depth relative to where the element starts
        base = doc.line_prefix(last_start)
        new_base = sep[sep.rfind("\n") + 1 :]
        if base.strip() == "" and new_base != base:
            st = _shift(st, base, new_base)
    return text[:last_end] + sep + render_value(value, st, nl) + text[last_end:]


def _with_columns(st: Style, doc: JsonDoc, arr: Arr) -> Style:
    if st.multiline:
        return st
    columns = _columns(doc, arr, st.comma)
    if not any(c is not None for c in columns):
        return st
    from dataclasses import replace

    return replace(st, columns=columns)


def _shift(st: Style, old: str, new: str) -> Style:
    def move(s: str) -> str:
        return new + s[len(old) :] if s.startswith(old) else s

    return Style(
        multiline=True,
        open=st.open,
        close=st.close,
        colon=st.colon,
        comma=st.comma,
        member_indent=move(st.member_indent),
        close_indent=move(st.close_indent),
        list_open=st.list_open,
        list_close=st.list_close,
        list_comma=st.list_comma,
    )


def _new_array(doc: JsonDoc, indent: str, value: dict[str, Any]) -> str:
    nl = doc.newline
    st = _file_style(doc)
    if doc.one_line():
        return "[" + render_value(value, st, nl) + "]"
    unit = doc.indent_unit()
    if st.multiline:
        st = _shift(st, st.close_indent, indent + unit)
    return "[" + nl + indent + unit + render_value(value, st, nl) + nl + indent + "]"


def _file_style(doc: JsonDoc) -> Style:
    """The style of the first array of objects elsewhere in the file (one-line by default)."""
    for _, node in doc.root.items():
        if isinstance(node, Arr) and len(node) and isinstance(node.value[0], Obj):
            return style_of(_sample(doc, node, 0), doc.text)
    return style_of(None, doc.text)


def _root_spacing(doc: JsonDoc) -> tuple[str, str]:
    """(separator between two members on one line, key-value separator) of the top level."""
    keys = list(doc.root.keys)
    colon, comma = ": ", ", "
    if keys:
        k = doc.root.keys[keys[0]]
        kend = doc.key_start(doc.root, keys[0]) + len(json.dumps(k.value, ensure_ascii=False))
        colon = doc.text[kend : doc.span(doc.root.value[keys[0]])[0]]
        if "\n" in colon:
            colon = ": "
    if len(keys) >= 2:
        sep = doc.text[doc.span(doc.root.value[keys[0]])[1] : doc.key_start(doc.root, keys[1])]
        if "\n" not in sep:
            comma = sep
    return comma, colon


def _add_member(doc: JsonDoc, key: str, value: dict[str, Any], order: Sequence[str]) -> str:
    text = doc.text
    nl = doc.newline
    comma, colon = _root_spacing(doc)
    present = list(doc.root.keys)
    rank = {k: i for i, k in enumerate(order)}
    after = None
    if key in rank:
        before = [k for k in present if k in rank and rank[k] < rank[key]]
        after = before[-1] if before else None
        if after is None and present:
            # no earlier field: go before the first member
            first = present[0]
            pos = doc.key_start(doc.root, first)
            indent = doc.line_prefix(pos) if doc.starts_line(pos) else ""
            member = json.dumps(key) + colon + _new_array(doc, indent, value)
            sep = comma if doc.one_line() or not doc.starts_line(pos) else "," + nl + indent
            return text[:pos] + member + sep + text[pos:]
    else:
        after = present[-1] if present else None
    if after is None:  # an empty object
        r0, r1 = doc.span(doc.root)
        return text[: r1 - 1] + json.dumps(key) + colon + _new_array(doc, "", value) + text[r1 - 1 :]
    kpos = doc.key_start(doc.root, after)
    _, vend = doc.span(doc.root.value[after])
    if doc.one_line() or not doc.starts_line(kpos):
        indent = ""
        sep = comma
    else:
        indent = doc.line_prefix(kpos)
        sep = "," + nl + indent
    member = json.dumps(key) + colon + _new_array(doc, indent, value)
    return text[:vend] + sep + member + text[vend:]


def replace_item(text: str, key: str, index: int, value: dict[str, Any]) -> str:
    """*text* with element *index* of ``root[key]`` replaced by *value* (in that element's style)."""
    doc = JsonDoc(text)
    node = doc.array(key)
    items = list(node)
    if not 0 <= index < len(items):
        raise EditError(f'"{key}" has no element {index}')
    a, b = doc.span(items[index])
    st = _with_columns(style_of(text[a:b], text), doc, node)
    return text[:a] + render_value(value, st, doc.newline) + text[b:]


def remove_item(text: str, key: str, index: int, drop_empty: bool = False) -> str:
    """*text* without element *index* of ``root[key]`` and one separator next to it.

    With *drop_empty*, removing the last element removes the member ``key`` itself, with the
    separator :func:`append_item` wrote when it added the member (for a list whose absence means
    what an empty one means): an item added to a file without that list and removed again leaves
    the file as it was, byte for byte."""
    doc = JsonDoc(text)
    node = doc.array(key)
    items = list(node)
    if not 0 <= index < len(items):
        raise EditError(f'"{key}" has no element {index}')
    if len(items) == 1 and drop_empty:
        return _remove_member(doc, key)
    if len(items) == 1:
        a0, a1 = doc.span(node)
        return text[: a0 + 1] + text[a1 - 1 :]
    if index == len(items) - 1:
        a = doc.span(items[index - 1])[1]
        b = doc.span(items[index])[1]
    else:
        a = doc.span(items[index])[0]
        b = doc.span(items[index + 1])[0]
    return text[:a] + text[b:]


def _remove_member(doc: JsonDoc, key: str) -> str:
    """*doc*'s text without the top-level member *key* and the separator before it (after it,
    for the first member), the inverse of ``_add_member``."""
    text = doc.text
    keys = list(doc.root.keys)
    i = keys.index(key)
    start = doc.key_start(doc.root, key)
    end = doc.span(doc.root.value[key])[1]
    if i > 0:  # from the end of the member before it: the separator goes with it
        return text[: doc.span(doc.root.value[keys[i - 1]])[1]] + text[end:]
    if len(keys) > 1:  # the first of several: up to the next member's key
        return text[:start] + text[doc.key_start(doc.root, keys[1]) :]
    return text[:start] + text[end:]  # the only member
