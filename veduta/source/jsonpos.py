"""Strict JSON with positions.

``parse(data)`` turns source bytes into a tree of :class:`Node` objects that
remember where each value starts (1-based line and column, columns counted in
characters).  It is stricter than :mod:`json`: duplicate keys, trailing data,
non-finite numbers (``NaN``, ``Infinity``, ``1e999``), control characters in
strings, lone surrogates and a byte-order mark are problems.  Problems that
still leave a usable tree (duplicate keys, non-finite numbers) are collected
and parsing goes on; a syntax error stops it.

``parse_fast(data)`` is the same tree without positions (every line and column 0), read by
the standard library's C decoder in a fraction of the time, for sources that have no
problem: it gives None for anything the strict parser might say something about, and the
caller then parses with ``parse`` (positions are only ever needed to report a problem).
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
import math
import re
from collections.abc import Iterable, Iterator
from typing import NoReturn, TypeAlias

from veduta.base.errors import clip

__all__ = [
    "Node",
    "Obj",
    "Arr",
    "Str",
    "Num",
    "Bool",
    "Null",
    "JsonProblem",
    "parse",
    "parse_fast",
    "parse_plain",
    "bounded_loads",
    "may_exceed_values",
    "parse_spans",
    "locate",
    "plain_doubtful",
    "member_span",
    "to_plain",
    "node_at",
    "split_path",
    "LINE_END",
    "line_starts",
    "line_content_end",
]


class Node:
    """A JSON value with its position; ``value`` holds the Python value."""

    __slots__ = ("value", "line", "col")
    kind = "value"

    def __init__(self, value, line: int, col: int):
        self.value = value
        self.line = line
        self.col = col

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r} @{self.line}:{self.col})"


class Obj(Node):
    """An object: ``value`` maps key to value node (first occurrence wins);
    ``keys`` maps key to the string node of the key."""

    __slots__ = ("keys",)
    kind = "object"

    def __init__(self, value: dict[str, Node], keys: dict[str, Node], line: int, col: int):
        self.value = value  # (Node.__init__ written out: a node is made for every JSON value)
        self.line = line
        self.col = col
        self.keys = keys

    def get(self, key: str) -> Node | None:
        return self.value.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.value

    def items(self) -> Iterator[tuple[str, Node]]:
        return iter(self.value.items())


class Arr(Node):
    __slots__ = ()
    kind = "array"

    def __iter__(self) -> Iterator[Node]:
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)


class Str(Node):
    __slots__ = ()
    kind = "string"


class Num(Node):
    """A number; ``value`` is an ``int`` when written without fraction or exponent."""

    __slots__ = ("text",)
    kind = "number"

    def __init__(self, value, text: str, line: int, col: int):
        self.value = value  # (Node.__init__ written out, as in Obj)
        self.line = line
        self.col = col
        self.text = text


class Bool(Node):
    __slots__ = ()
    kind = "boolean"


class Null(Node):
    __slots__ = ()
    kind = "null"


class JsonProblem:
    """A problem found while parsing: position and message."""

    __slots__ = ("line", "col", "path", "message", "fatal")

    def __init__(self, line: int, col: int, path: str, message: str, fatal: bool = False):
        self.line, self.col, self.path, self.message, self.fatal = line, col, path, message, fatal

    def __repr__(self) -> str:
        return f"JsonProblem({self.line}:{self.col} {self.path}: {self.message})"


class _Fatal(Exception):
    pass


#: Where a value is, built for every value but needed only for problems: a path string, or
#: ``(parent path, key or index)`` (see ``_flat``).
Path: TypeAlias = "str | tuple[Path, str | int]"


#: Where a line ends in every position a tool prints (the strict parser's lines and columns, so
#: ``veduta check``, the cook, MCP, the editor's): "\r\n", "\r" or "\n", as the Language Server
#: Protocol counts them (3.17, "Text Documents"); not the other breaks of ``str.splitlines``
#: (U+2028, U+0085, ...), which JSON allows raw in a string.
LINE_END = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """The offset of every line of *text* (:data:`LINE_END`), the first 0."""
    return [0, *(m.end() for m in LINE_END.finditer(text))]


def line_content_end(text: str, starts: list[int], i: int) -> int:
    """Where line *i* (0-based) of *text*, whose lines start at *starts*, ends before its line end."""
    if i + 1 >= len(starts):
        return len(text)
    end = starts[i + 1] - 1  # its line end's last character
    return end - 1 if text[end] == "\n" and end > starts[i] and text[end - 1] == "\r" else end


_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_STR_CHUNK = re.compile(r'[^"\\\x00-\x1f]*')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_BAD_LITERAL = re.compile(r"-?(?:NaN|Infinity|inf|nan)")
MAX_DEPTH = 256
#: The most values (objects, arrays, strings, numbers, literals; keys not counted) a source may
#: hold: about four times the largest a format's counts allow (a texture of 256 clips of 4,096
#: frames, some 1,050,000). Each costs the strict parser about 200 bytes, so this bounds its
#: memory whatever the file's size (docs/authoring-tools.md, "Source sizes").
MAX_VALUES = 4_000_000
#: Integer literals longer than this are out of range for every field (and past Python's
#: int-conversion limit of 4300 digits): a located problem, never a conversion error.
MAX_INT_DIGITS = 1000


def join_path(path: str, key: str | int) -> str:
    """``parts`` + 2 -> ``parts[2]``; ``parts[2]`` + ``of`` -> ``parts[2].of``."""
    if isinstance(key, int):
        return f"{path}[{key}]" if path else f"[{key}]"
    if key.isascii() and key.isidentifier():  # [A-Za-z_][A-Za-z0-9_]*
        return f"{path}.{key}" if path else key
    quoted = '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{path}[{quoted}]"


_PATH_STEP = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def split_path(path: str) -> list[str | int] | None:
    """The keys and indices of a JSON path as :func:`join_path` writes it (``parts[2].of`` ->
    ``["parts", 2, "of"]``; ``$`` or ``""`` -> ``[]``); None when *path* is not one."""
    if path in ("", "$"):
        return []
    out: list[str | int] = []
    i = 0
    while i < len(path):
        m = _PATH_STEP.match(path, i)
        if m is None or (m.start() == 0 and path.startswith(".")):
            return None
        if m[1] is not None:
            out.append(m[1])
        elif m[2] is not None:
            out.append(int(m[2]))
        else:
            out.append(re.sub(r"\\(.)", r"\1", m[3]))
        i = m.end()
    return out


def node_at(root: Node | None, path: str) -> Node | None:
    """The value at JSON path *path* under *root*, or the deepest value on the way to it that
    exists (None for no root or a path that is not one): where a finding about *path* points."""
    steps = split_path(path)
    if root is None or steps is None:
        return None
    node = root
    for step in steps:
        child = None
        if isinstance(step, str) and isinstance(node, Obj):
            child = node.get(step)
        elif isinstance(step, int) and isinstance(node, Arr) and 0 <= step < len(node):
            child = node.value[step]
        if child is None:
            break
        node = child
    return node


def _flat(path: Path) -> str:
    """A lazy path (nested ``(parent, key)`` tuples, built for every value but
    needed only for problems) as a string."""
    keys: list[str | int] = []
    while isinstance(path, tuple):
        path, key = path
        keys.append(key)
    out = path
    for key in reversed(keys):
        out = join_path(out, key)
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.problems: list[JsonProblem] = []
        self._lines = line_starts(text)
        self.values = 0

    def pos(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._lines, offset) - 1
        return i + 1, offset - self._lines[i] + 1

    def problem(self, offset: int, path: Path, message: str) -> None:
        """A problem that leaves a usable tree: parsing goes on."""
        line, col = self.pos(offset)
        self.problems.append(JsonProblem(line, col, _flat(path) or "$", message))

    def fatal(self, offset: int, path: Path, message: str) -> NoReturn:
        """A problem that stops parsing."""
        line, col = self.pos(offset)
        self.problems.append(JsonProblem(line, col, _flat(path) or "$", message, True))
        raise _Fatal

    def ws(self, i: int) -> int:
        m = _WS.match(self.text, i)
        assert m is not None  # it matches the empty string
        return m.end()

    def describe(self, i: int) -> str:
        if i >= len(self.text):
            return "end of file"
        ch = self.text[i]
        if ch in "\n\r\t ":
            return repr(ch)
        if self.text.startswith(("//", "/*"), i):
            return f"a {self.text[i : i + 2]} comment (JSON sources take no comments)"
        m = re.compile(r"[A-Za-z0-9_+\-.]+").match(self.text, i)
        return repr(m.group(0)[:20]) if m else repr(ch)

    def value(self, i: int, path: Path, depth: int) -> tuple[Node, int]:
        text = self.text
        if depth > MAX_DEPTH:
            self.fatal(i, path, f"nesting deeper than {MAX_DEPTH} levels")
        self.values += 1
        if self.values > MAX_VALUES:
            self.fatal(i, path, f"more than {MAX_VALUES:,} values, more than any source may hold")
        if i >= len(text):
            self.fatal(i, path, "expected a value, found end of file")
        ch = text[i]
        line, col = self.pos(i)
        if ch == "{":
            return self.object(i, path, depth, line, col)
        if ch == "[":
            return self.array(i, path, depth, line, col)
        if ch == '"':
            s, j = self.string(i, path)
            return Str(s, line, col), j
        if ch == "-" or "0" <= ch <= "9":
            m = _NUMBER.match(text, i)
            if not m or m.end() == i or (m.group(0) == "-"):
                bad = _BAD_LITERAL.match(text, i)
                if bad:
                    return self._non_finite(bad, i, path, line, col, "")
                self.fatal(i, path, f"expected a value, found {self.describe(i)}")
            num = m.group(0)
            j = m.end()
            if j < len(text) and (text[j].isalnum() or text[j] in "._+-"):
                self.fatal(i, path, f"malformed number {self.describe(i)}")
            if m.group(1) is None and m.group(2) is None:
                if len(num) > MAX_INT_DIGITS:
                    digits = len(num) - num.startswith("-")
                    self.problem(i, path, f"{num[:20]}... is too large a number ({digits} digits)")
                    return Num(-math.inf if num.startswith("-") else math.inf, clip(num, 20), line, col), j
                v: int | float = int(num)
            else:
                v = float(num)
                if not math.isfinite(v):
                    self.problem(i, path, f"{clip(num, 20)} is not a finite number")
                    num = clip(num, 20)
            return Num(v, num, line, col), j
        for lit, lit_value, cls in (("true", True, Bool), ("false", False, Bool), ("null", None, Null)):
            if text.startswith(lit, i):
                j = i + len(lit)
                if j < len(text) and (text[j].isalnum() or text[j] == "_"):
                    break
                return cls(lit_value, line, col), j
        bad = _BAD_LITERAL.match(text, i)
        if bad:
            return self._non_finite(bad, i, path, line, col, " (JSON has no NaN or Infinity)")
        if ch == "'":
            self.fatal(i, path, "strings must use double quotes")
        self.fatal(i, path, f"expected a value, found {self.describe(i)}")
        raise AssertionError("unreachable")

    def _non_finite(self, bad: re.Match, i: int, path: Path, line: int, col: int, why: str) -> tuple[Node, int]:
        """``NaN``/``Infinity``: a located problem, then parsing goes on (later mistakes are reported too)."""
        word = bad.group(0)
        j = bad.end()
        if j < len(self.text) and (self.text[j].isalnum() or self.text[j] in "_.+-"):
            self.fatal(i, path, f"malformed number {self.describe(i)}")
        self.problem(i, path, f"{word} is not a finite number{why}")
        value = math.nan if word.lstrip("-").lower() == "nan" else (-math.inf if word[0] == "-" else math.inf)
        return Num(value, word, line, col), j

    def string(self, i: int, path: Path) -> tuple[str, int]:
        text = self.text
        j = i + 1
        parts = []
        while True:
            m = _STR_CHUNK.match(text, j)
            assert m is not None  # it matches the empty string
            parts.append(m.group(0))
            j = m.end()
            if j >= len(text):
                self.fatal(i, path, "unterminated string")
            ch = text[j]
            if ch == '"':
                j += 1
                break
            if ch == "\\":
                if j + 1 >= len(text):
                    self.fatal(i, path, "unterminated string")
                e = text[j + 1]
                if e in _ESCAPES:
                    parts.append(_ESCAPES[e])
                    j += 2
                elif e == "u":
                    cp, j = self._unicode_escape(j, path)
                    parts.append(cp)
                else:
                    self.fatal(j, path, f"invalid escape \\{e} in string")
            else:
                what = "newline" if ch == "\n" else f"control character U+{ord(ch):04X}"
                self.fatal(j, path, f"{what} in string (escape it)")
        return "".join(parts), j

    def _unicode_escape(self, j: int, path: Path) -> tuple[str, int]:
        text = self.text
        hexd = text[j + 2 : j + 6]
        if not re.fullmatch(r"[0-9a-fA-F]{4}", hexd):
            self.fatal(j, path, "invalid \\u escape in string")
        cp = int(hexd, 16)
        j += 6
        if 0xD800 <= cp < 0xDC00:
            low = text[j + 2 : j + 6] if text.startswith("\\u", j) else ""
            if re.fullmatch(r"[0-9a-fA-F]{4}", low) and 0xDC00 <= int(low, 16) < 0xE000:
                cp = 0x10000 + ((cp - 0xD800) << 10) + (int(low, 16) - 0xDC00)
                return chr(cp), j + 6
            self.fatal(j - 6, path, "lone surrogate in \\u escape")
        if 0xDC00 <= cp < 0xE000:
            self.fatal(j - 6, path, "lone surrogate in \\u escape")
        return chr(cp), j

    def object(self, i: int, path: Path, depth: int, line: int, col: int) -> tuple[Obj, int]:
        text = self.text
        values: dict[str, Node] = {}
        keys: dict[str, Node] = {}
        j = self.ws(i + 1)
        if j < len(text) and text[j] == "}":
            return Obj(values, keys, line, col), j + 1
        while True:
            if j >= len(text) or text[j] != '"':
                if j < len(text) and text[j] == "}":
                    self.fatal(j, path, "trailing comma before }")
                self.fatal(j, path, f"expected a field name in double quotes, found {self.describe(j)}")
            kline, kcol = self.pos(j)
            key, j = self.string(j, path)
            j = self.ws(j)
            if j >= len(text) or text[j] != ":":
                self.fatal(j, (path, key), f"expected ':' after field name, found {self.describe(j)}")
            j = self.ws(j + 1)
            child_path = (path, key)
            node, j = self.value(j, child_path, depth + 1)
            if key in values:
                first = keys[key]
                self.problem(
                    self._offset(node.line, node.col),
                    child_path,
                    f"duplicate key {key!r} (first at line {first.line}, column {first.col})",
                )
            else:
                values[key] = node
                keys[key] = Str(key, kline, kcol)
            j = self.ws(j)
            if j < len(text) and text[j] == ",":
                j = self.ws(j + 1)
                continue
            if j < len(text) and text[j] == "}":
                return Obj(values, keys, line, col), j + 1
            self.fatal(j, path, f"expected ',' or '}}' in object, found {self.describe(j)}")

    def array(self, i: int, path: Path, depth: int, line: int, col: int) -> tuple[Arr, int]:
        text = self.text
        items: list[Node] = []
        j = self.ws(i + 1)
        if j < len(text) and text[j] == "]":
            return Arr(items, line, col), j + 1
        while True:
            if j < len(text) and text[j] == "]":
                self.fatal(j, path, "trailing comma before ]")
            node, j = self.value(j, (path, len(items)), depth + 1)
            items.append(node)
            j = self.ws(j)
            if j < len(text) and text[j] == ",":
                j = self.ws(j + 1)
                continue
            if j < len(text) and text[j] == "]":
                return Arr(items, line, col), j + 1
            self.fatal(j, path, f"expected ',' or ']' in array, found {self.describe(j)}")

    def _offset(self, line: int, col: int) -> int:
        return self._lines[line - 1] + col - 1


def parse(data: bytes | str) -> tuple[Node | None, list[JsonProblem]]:
    """Parse strict JSON; return the tree (None after a fatal problem) and the problems."""
    if isinstance(data, bytes):
        if data.startswith(b"\xef\xbb\xbf"):
            return None, [JsonProblem(1, 1, "$", "file starts with a UTF-8 byte-order mark; save it without", True)]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            before = data[: exc.start].decode("utf-8")
            starts = line_starts(before)
            line, col = len(starts), len(before) - starts[-1] + 1
            return None, [JsonProblem(line, col, "$", f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", True)]
    else:
        text = data
    p = _Parser(text)
    return _document(p, text), p.problems


def _document(p: _Parser, text: str) -> Node | None:
    """The one JSON value that is the whole of *text*, or None after a fatal problem."""
    try:
        i = p.ws(0)
        if i >= len(text):
            p.fatal(i, "$", "empty file: expected a JSON object")
        root, j = p.value(i, "", 0)
        j = p.ws(j)
        if j < len(text):
            p.fatal(j, "$", f"trailing data after the JSON value: {p.describe(j)}")
    except _Fatal:
        return None
    return root


class _SpanParser(_Parser):
    """The parser, also recording where each value starts and ends (for byte-preserving edits)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.spans: dict[int, tuple[Node, int, int]] = {}

    def value(self, i: int, path: Path, depth: int) -> tuple[Node, int]:
        node, j = super().value(i, path, depth)
        self.spans[id(node)] = (node, i, j)  # the node is kept, so its id is never reused
        return node, j


def parse_spans(text: str) -> tuple[Node | None, dict[int, tuple[Node, int, int]], list[JsonProblem]]:
    """:func:`parse` of a text that also says where every value is: ``spans[id(node)]`` is
    ``(node, start, end)``, character offsets into *text* (``text[start:end]`` is the value as
    written). The tree is None after a fatal problem."""
    p = _SpanParser(text)
    root = _document(p, text)
    return root, p.spans, p.problems


class _Doubt(Exception):
    """Raised inside :func:`parse_fast` for input only the strict parser may judge."""


def _fast_int(text: str) -> Num:
    if len(text) > MAX_INT_DIGITS:
        raise _Doubt
    return Num(int(text), text, 0, 0)


def _fast_float(text: str) -> Num:
    v = float(text)
    if not math.isfinite(v):  # 1e400
        raise _Doubt
    return Num(v, text, 0, 0)


def _fast_constant(text: str) -> Num:
    raise _Doubt  # NaN, Infinity, -Infinity


def _fast_node(v) -> Node:
    """A decoded value as an unlocated node (objects and numbers are nodes already)."""
    cls = type(v)
    if cls is Num or cls is Obj:
        return v
    if cls is str:
        return Str(v, 0, 0)
    if cls is list:
        return Arr([x if type(x) is Num or type(x) is Obj else _fast_node(x) for x in v], 0, 0)
    if v is True or v is False:
        return Bool(v, 0, 0)
    return Null(None, 0, 0)


def _fast_object(pairs: list[tuple[str, object]]) -> Obj:
    values: dict[str, Node] = {}
    keys: dict[str, Node] = {}
    for key, v in pairs:
        values[key] = v if type(v) is Num or type(v) is Obj else _fast_node(v)
        keys[key] = Str(key, 0, 0)
    if len(values) != len(pairs):
        raise _Doubt  # a duplicate key
    return Obj(values, keys, 0, 0)


_FAST = json.JSONDecoder(
    object_pairs_hook=_fast_object, parse_int=_fast_int, parse_float=_fast_float, parse_constant=_fast_constant
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _doubtful(node: Node, depth: int, strings: bool) -> bool:
    """Whether a value of the tree is deeper than MAX_DEPTH, or (*strings*) a string or key
    holds a surrogate (only a lone one, from a ``\\u`` escape, can be there)."""
    if depth > MAX_DEPTH:
        return True
    kids: Iterable[Node]
    if isinstance(node, Obj):
        if strings and any(_SURROGATE.search(k) for k in node.value):
            return True
        kids = node.value.values()
    elif isinstance(node, Arr):
        kids = node.value
    else:
        return strings and isinstance(node, Str) and _SURROGATE.search(node.value) is not None
    if depth == MAX_DEPTH and kids:
        return True  # (a value in it is deeper)
    # (without strings to look at, only what holds values can be too deep: no call per number)
    return any(_doubtful(v, depth + 1, strings) for v in kids if strings or type(v) is Obj or type(v) is Arr)


def parse_fast(data: bytes) -> Node | None:
    """The tree :func:`parse` gives for *data* when it finds no problem there, with every
    line and column 0; or None, and then only :func:`parse` can tell.

    The standard library's C decoder reads the text, through hooks that build the nodes and
    give up on what it accepts but the strict parser reports: duplicate keys, ``NaN`` and
    ``Infinity``, numbers out of range, lone surrogates (from ``\\u`` escapes), nesting deeper
    than MAX_DEPTH.  What it rejects (a byte-order mark, bad UTF-8, control characters in a
    string, trailing data, any syntax error) gives None too.
    """
    if may_exceed_values(data):
        return None  # (the strict parser counts them, and stops)
    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            return None
        root = _fast_node(_FAST.decode(text))
    except (ValueError, RecursionError, _Doubt):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    strings = "\\u" in text
    if (strings or text.count("[") + text.count("{") > MAX_DEPTH) and _doubtful(root, 0, strings):
        return None  # (a value's depth is at most the number of brackets before it)
    return root


class _Found(Exception):
    """Raised inside :func:`locate` once every node asked for is found."""


#: The standard library's C scanner: ``_SCAN(text, i)`` reads the JSON value at *i* and gives
#: ``(value, end)``; :func:`locate` steps over values with it.
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # (typeshed: the context is its own type)


def locate(text: str, root: Node, nodes: Iterable[Node], hints: dict[int, str] | None = None) -> None:
    """Give each of *nodes* that has no position (values, or keys' string nodes, of *root*: the
    tree :func:`parse_fast` read from *text*) the line and column :func:`parse` gives it.

    Positions are needed only for values a problem is reported at: a tree from the standard
    library's decoder is checked, and only the few values reported at are then found in the
    text, all in one pass that steps over every other value at C speed (the strict parser takes
    about 1 s per MB of a source dense with numbers; this, a small part of that).  Where each
    node is in the tree is read from *hints* (``id(node)`` -> the JSON path of a problem
    reported at it, :func:`join_path`'s) when the node is there or on the way there, else found
    by identity from *root* (a value read from the text is its own node)."""
    wanted = {id(n): n for n in nodes if not n.line}
    if not wanted:
        return
    paths: dict[int, tuple] = {}
    for nid, hint in (hints or {}).items():
        steps = split_path(hint) if nid in wanted else None
        if steps is not None:
            found = _on_path(root, steps, nid)
            if found is not None:
                paths[nid] = found

    if len(paths) < len(wanted):
        try:
            _find(root, (), wanted, paths)
        except _Found:
            pass
    trie: dict = {}
    for nid, path in paths.items():
        at = trie
        for step in path:
            at = at.setdefault(step, {})
        at.setdefault(None, []).append(nid)
    offsets: dict[int, int] = {}
    _walk(text, _past_ws(text, 0), trie, offsets)
    where = _line_cols(text, offsets.values())
    for nid, offset in offsets.items():
        wanted[nid].line, wanted[nid].col = where[offset]


def _find(node: Node, path: tuple, wanted: dict[int, Node], paths: dict[int, tuple]) -> None:
    """Record in *paths* the steps from the root (*path*: to *node*) to each of *wanted* under
    *node* (by id) not in it yet; raise _Found once every one is there. (A function of its own,
    not a closure of :func:`locate`'s: a closure calling itself is a reference cycle, which
    kept what it found, and so pages of the freed tree around it, until the collector ran.)"""
    if id(node) in wanted and id(node) not in paths:
        paths[id(node)] = path
    if len(paths) == len(wanted):
        raise _Found
    if isinstance(node, Obj):
        for key, v in node.value.items():
            if id(node.keys[key]) in wanted and id(node.keys[key]) not in paths:
                _find(node.keys[key], (*path, (key,)), wanted, paths)  # a key: its step is (key,)
            _find(v, (*path, key), wanted, paths)
    elif isinstance(node, Arr):
        for k, v in enumerate(node.value):
            if type(v) is Obj or type(v) is Arr or id(v) in wanted:
                _find(v, (*path, k), wanted, paths)


def _on_path(root: Node, steps: list[str | int], nid: int) -> tuple | None:
    """The steps from *root* to the node of id *nid* when it is on the way along *steps* (a
    problem at a field that is missing is reported at its object), else None."""
    node: Node | None = root
    for k in range(len(steps) + 1):
        if node is None:
            return None
        if id(node) == nid:
            return tuple(steps[:k])
        if k == len(steps):
            return None
        step = steps[k]
        if isinstance(step, str):
            node = node.value.get(step) if isinstance(node, Obj) else None
        else:
            node = node.value[step] if isinstance(node, Arr) and 0 <= step < len(node.value) else None
    return None


def _past_ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    assert m is not None  # it matches the empty string
    return m.end()


#: The standard library's C reader of a string's rest: ``(value, end)`` from past its quote.
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]


def _walk(text: str, i: int, trie: dict, out: dict[int, int]) -> None:
    """Record the offset of the value at *i* (the nodes ``trie[None]``) and of those under it
    that *trie* names (a key by ``key``, its name's string by ``(key,)``, an item by index)."""
    for nid in trie.get(None, ()):
        out[nid] = i
    steps = len(trie) - (None in trie)
    if not steps:
        return
    if text[i] == "{":
        seen: set[str] = set()
        j = _past_ws(text, i + 1)
        while steps:
            key, after = _scanstring(text, j + 1)
            first = key not in seen  # (first occurrence wins, as in the tree)
            seen.add(key)
            if first and (key,) in trie:
                _walk(text, j, trie[(key,)], out)
                steps -= 1
            j = _past_ws(text, _past_ws(text, after) + 1)  # past ':'
            if first and key in trie:
                _walk(text, j, trie[key], out)
                steps -= 1
            if steps:
                j = _past_ws(text, _past_ws(text, _SCAN(text, j)[1]) + 1)  # past ','
    else:  # "["
        j = _past_ws(text, i + 1)
        last = max(k for k in trie if k is not None)
        for k in range(last + 1):
            if k in trie:
                _walk(text, j, trie[k], out)
            if k < last:
                j = _past_ws(text, _past_ws(text, _SCAN(text, j)[1]) + 1)  # past ','


def plain_doubtful(value, depth: int = 0) -> bool:
    """Whether a value :func:`parse_plain` read holds anything :func:`parse` reports (so
    :func:`parse_fast` gives None for it): a duplicate key, a number out of range (``1e400``, an
    integer of more than MAX_INT_DIGITS digits), nesting deeper than MAX_DEPTH (*depth*: the
    value's own).  (NaN, Infinity and ``\\u`` escapes, which the plain read gives up on, cannot
    be there.)"""
    if depth > MAX_DEPTH:
        return True
    kind = type(value)
    if kind is tuple:
        return len(dict(value)) != len(value) or any(plain_doubtful(v, depth + 1) for _, v in value)
    if kind is list:
        return any(plain_doubtful(v, depth + 1) for v in value if type(v) in _NESTED_OR_NUMBER)
    if kind is float:
        return not -math.inf < value < math.inf
    return kind is int and value.bit_length() > 3000 and len(str(abs(value))) > MAX_INT_DIGITS


_NESTED_OR_NUMBER = (tuple, list, float, int)


def member_span(text: str, key: str) -> tuple[int, int] | None:
    """Where the value of *key* in the top object of JSON *text* starts and ends (its first
    occurrence), stepping over the other members at C speed; None when it has none."""
    i = _past_ws(text, 0)
    if text[i : i + 1] != "{":
        return None
    j = _past_ws(text, i + 1)
    while text[j : j + 1] == '"':
        name, after = _scanstring(text, j + 1)
        j = _past_ws(text, _past_ws(text, after) + 1)  # past ':'
        end = _SCAN(text, j)[1]
        if name == key:
            return j, end
        j = _past_ws(text, end)
        if text[j : j + 1] != ",":
            return None
        j = _past_ws(text, j + 1)
    return None


def _line_cols(text: str, offsets: Iterable[int]) -> dict[int, tuple[int, int]]:
    """The 1-based line and column (in characters) of each offset into *text*, as the strict
    parser counts them, counted between the offsets in order (no table of every line, unless
    a line ends at "\r")."""
    out: dict[int, tuple[int, int]] = {}
    if "\r" in text:
        starts = line_starts(text)
        for offset in set(offsets):
            i = bisect.bisect_right(starts, offset) - 1
            out[offset] = (i + 1, offset - starts[i] + 1)
        return out
    line, start, at = 1, 0, 0
    for offset in sorted(set(offsets)):
        n = text.count("\n", at, offset)
        if n:
            line += n
            start = text.rfind("\n", at, offset) + 1
        at = offset
        out[offset] = (line, offset - start + 1)
    return out


def may_exceed_values(data: bytes | str) -> bool:
    """Whether *data* may hold more than MAX_VALUES values: a value is the document, the first
    item of an array or object, or follows a comma, so there are at most one more than its commas
    and brackets (a comma in a string only raises the count). Counted at C speed, so the standard
    library's decoder, which makes every value before anything can be counted, never reads such
    a text; the strict parser counts exactly and stops past the limit."""
    if len(data) <= MAX_VALUES:
        return False
    if isinstance(data, str):
        return data.count(",") + data.count("[") + data.count("{") >= MAX_VALUES
    return data.count(b",") + data.count(b"[") + data.count(b"{") >= MAX_VALUES


def bounded_loads(data: bytes | str):
    """``json.loads(data)`` (None when it is not JSON, or nests too deeply) for a text that cannot
    hold more than MAX_VALUES values (:func:`may_exceed_values`); a text that may is read by the strict
    parser, which stops past the limit (None then)."""
    if may_exceed_values(data):
        root, _ = parse(data)
        return None if root is None else to_plain(root)
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        return None


_PLAIN = json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_fast_constant)


def parse_plain(data: bytes):
    """*data* as plain values, read by the standard library's C decoder with no node made:
    objects as tuples of (key, value) pairs in the order written (a duplicate key kept),
    arrays as lists, numbers as ``int`` or ``float`` (``1e400`` as inf); or None when the
    decoder rejects the text (as :func:`parse_fast`), it has a byte-order mark, ``NaN`` or
    ``Infinity``, or any ``\\u`` escape (which may hold a lone surrogate).

    For sources expected to be valid, read by the field specs' ``plain`` (see
    :mod:`veduta.source.fields`), which leave everything :func:`parse` would report (a
    duplicate key, a number out of range) to the located read.
    """
    if may_exceed_values(data):
        return None  # (the strict parser counts them, and stops)
    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff") or "\\u" in text:
            return None
        return _PLAIN.decode(text)
    except (ValueError, RecursionError, _Doubt):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None


def to_plain(node: Node):
    """The plain Python value of a node tree (dicts, lists, str, int, float, bool, None)."""
    if isinstance(node, Obj):
        return {k: to_plain(v) for k, v in node.value.items()}
    if isinstance(node, Arr):
        return [to_plain(v) for v in node.value]
    return node.value
