"""Where a cursor is in JSON text that is being typed (and so often not valid JSON).

:func:`locate` scans the text with a forgiving tokenizer (an unterminated string ends at the end
of its line, a stray character is skipped, brackets that do not match close what is open) and
says what the cursor is on: a field name of an object, or a value, with the JSON path to it
and the fields of every object on the way (their scalar values decide which fields a model
part or a world feature has).  :func:`token_span` gives the extent of the value or key that
starts at a position (what a diagnostic's range covers).

Offsets are character offsets into the text (Python string indices); lines and columns are
1-based, columns in characters, as in the cook's diagnostics.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

from veduta.source.jsonpos import LINE_END, line_content_end, line_starts

__all__ = ["Place", "locate", "token_span", "Lines"]

#: The fact of a field whose value is an object or an array.
from veduta.tools.schemawalk import PRESENT  # noqa: E402 - one sentinel for both modules

_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*|-")
#: A run of a string's characters that stand for themselves (no quote, backslash or line end).
_PLAIN_RUN = re.compile(r'[^"\\\r\n]*')
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERALS = {"true": True, "false": False, "null": None}
_DECODE = json.JSONDecoder().raw_decode
#: Whether :func:`locate` jumps over what cannot hold the cursor nor tell of its path (False: it
#: steps through every token, as it did; the tests compare the two).
_JUMP = True


def _closed_end(text: str, i: int) -> int | None:
    """Where the object or array opening at *i* ends when it is valid JSON in *text* (the
    standard library's C decoder reads it), else None; -1 when the decoder ran to the end of
    *text* (the value holds the cursor, when *text* ends there). Stepped through by
    :func:`locate`, such a value leaves its tokenizer as it found it but for the value seen: its
    brackets match, and its strings are closed on their line, escapes and all (JSON's strings
    are a subset of what :func:`_string_end` reads, to the same end), so :func:`locate` jumps
    over it."""
    try:
        return _DECODE(text, i)[1]
    except json.JSONDecodeError as exc:
        return -1 if exc.pos >= len(text) else None
    except (ValueError, RecursionError):
        return None


#: values found to hold the cursor (decoded up to it in vain) before :func:`locate` stops trying to
#: jump: each such try reads from the value's start to the cursor again, so that a deep nesting
#: would cost its depth times the text (review: depth 16 slower than stepping)
HOLDERS_TRIED = 2


class Lines:
    """Line starts of a text: offsets to and from 1-based (line, column in characters)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = line_starts(text)

    def offset(self, line: int, col: int) -> int:
        """The offset of (line, col), clamped into the line (and the text)."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        start = self.starts[line - 1]
        end = line_content_end(self.text, self.starts, line - 1)
        return min(start + max(col, 1) - 1, end)

    def position(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.starts, offset) - 1
        return i + 1, offset - self.starts[i] + 1


@dataclass
class _Frame:
    kind: str  # "object" or "array"
    start: int
    slot: str | int | None = None  # the current key (object) or index (array)
    expect: str = "key"  # object: "key", "colon", "value", "comma"; array: "value", "comma"
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Place:
    """What a cursor is on.

    ``role`` is ``"key"`` (a field name of the object at ``path``), ``"value"`` (the value at
    ``path``) or ``""`` (nothing to complete: between a key and its colon, after a value).
    ``start``/``end`` is the token under the cursor (a string with its quotes, a number, a
    word), or the cursor itself when there is none; ``word`` the token's text without quotes.
    ``facts[i]`` are the fields of the object at ``path[:i]`` (None where that is an array):
    key -> scalar value, or :data:`PRESENT` for an object or array.
    """

    role: str
    path: list[str | int]
    start: int
    end: int
    word: str = ""
    quoted: bool = False
    facts: list[dict[str, Any] | None] = field(default_factory=list)


def _string_end(text: str, i: int) -> tuple[int, str, bool]:
    """From the opening quote at *i*: (offset after the string, its value, whether it was
    closed); an unclosed string ends at the end of its line."""
    j = i + 1
    out: list[str] = []
    n = len(text)
    while j < n:
        m = _PLAIN_RUN.match(text, j)
        assert m is not None  # it matches the empty string
        if m.end() > j:  # (characters that are themselves, at C speed: a 17 MB scene's hover, 4x faster)
            out.append(m.group(0))
            j = m.end()
            continue
        ch = text[j]
        if ch == '"':
            return j + 1, "".join(out), True
        if ch == "\n" or ch == "\r":
            return j, "".join(out), False
        if ch == "\\" and j + 1 < n and text[j + 1] not in "\r\n":
            e = text[j + 1]
            out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(e, e))
            j += 2
            if e == "u":
                j += 4
            continue
        out.append(ch)
        j += 1
    return n, "".join(out), False


def locate(text: str, offset: int, hover: bool = False) -> Place:
    """What the cursor at *offset* is on (see :class:`Place`).

    A typing cursor (the default) sits between characters: it is in a token when the token
    starts before it and does not end before it (``"cr|"``, ``16|``; not after a closed string).
    A *hover* cursor is on the character at *offset*: in a token from its first character to
    its last.
    """
    stack: list[_Frame] = []
    found: Place | None = None
    path_frames: list[_Frame] = []
    i, n = 0, len(text)
    # a value before the cursor that is valid JSON is jumped over (:func:`_closed_end`), read in the
    # text before the cursor only; not the top ones (the document, and what holds its parts, most
    # often hold the cursor: each would be read to the cursor for nothing, their values made)
    jump = _JUMP
    head = text[:offset] if jump else ""
    holders, before = 0, True  # (before: values before the cursor are still tried)

    def here(role: str, start: int, end: int, word: str = "", quoted: bool = False) -> Place:
        path: list[str | int] = [f.slot for f in stack[:-1]]  # type: ignore[misc]
        if role == "value" and stack:
            path.append(stack[-1].slot)  # type: ignore[arg-type]
        path_frames.extend(stack)
        return Place(role, path, start, end, word, quoted)

    def between(at: int, before_token: bool = False) -> None:
        """The cursor sits at *at*, in no token: what would be typed there (nothing right
        before a token: that would run into it)."""
        nonlocal found
        if found is not None:
            return
        if not stack:
            found = here("value" if not text[:at].strip() and not before_token else "", at, at)
            return
        f = stack[-1]
        if before_token or hover:
            role = ""
        elif f.kind == "object":
            role = "key" if f.expect == "key" else "value" if f.expect == "value" else ""
        else:
            role = "value" if f.expect == "value" else ""
        found = here(role, at, at)

    def on(i: int, j: int, closed: bool) -> bool:
        """Whether the cursor is in the token text[i:j] (a string *closed* by its quote)."""
        if found is not None:
            return False
        if hover:
            return i <= offset < j
        return i < offset < j or (offset == j and not closed)

    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if found is None and (i <= offset < j or offset == j == n):
                between(offset)
            i = j
            continue
        if found is None and offset <= i and not (hover and offset == i):
            between(offset, before_token=offset == i and ch not in "{[}]:,")
        f = stack[-1] if stack else None
        if ch in "{[":
            if f is not None:
                _value_seen(f, PRESENT)
            if jump and ((before and len(stack) >= 2) or found is not None):
                past = _closed_end(head if found is None else text, i)
                if (
                    past is not None and past >= 0
                ):  # (before the cursor, or after it was found: nothing in it is asked for)
                    i = past
                    continue
                if past == -1 and found is None:
                    holders += 1
                    if holders >= HOLDERS_TRIED:  # (deeper ones too, most likely: stepped through)
                        before = False
            stack.append(
                _Frame(
                    "object" if ch == "{" else "array",
                    i,
                    expect="key" if ch == "{" else "value",
                    slot=None if ch == "{" else 0,
                )
            )
            i += 1
            continue
        if ch in "}]":
            want = "object" if ch == "}" else "array"
            while stack and stack[-1].kind != want:
                stack.pop()
            if stack:
                stack.pop()
            if stack:
                stack[-1].expect = "comma"
            elif found is not None and jump:
                break  # (every object on the cursor's path is closed: its facts are all seen)
            i += 1
            continue
        if ch == ":":
            if f is not None and f.kind == "object":
                f.expect = "value"
            i += 1
            continue
        if ch == ",":
            if f is not None:
                if f.kind == "object":
                    f.expect, f.slot = "key", None
                else:
                    f.expect = "value"
                    f.slot = (f.slot if isinstance(f.slot, int) else 0) + 1
            i += 1
            continue
        if ch == '"':
            j, value, closed = _string_end(text, i)
            if f is not None and f.kind == "object" and f.expect in ("key", "comma"):
                f.slot, f.expect = value, "colon"
                if on(i, j, closed):
                    found = here("key", i, j, value, True)
            else:
                if on(i, j, closed):
                    found = here("value", i, j, value, True)
                if f is not None:
                    _value_seen(f, value)
            i = j
            continue
        m = _NUMBER.match(text, i) if ch == "-" or ch.isdigit() else _WORD.match(text, i)
        j = m.end() if m else i + 1
        word = text[i:j]
        key = f is not None and f.kind == "object" and f.expect in ("key", "comma")
        if on(i, j, False):
            found = here("key" if key else "value", i, j, word)
        if f is not None:
            if key:
                f.slot, f.expect = word, "colon"  # an unquoted key being typed
            else:
                _value_seen(f, _scalar(word))
        i = j
    if found is None:
        between(min(offset, n))
    assert found is not None
    found.facts = [fr.facts if fr.kind == "object" else None for fr in path_frames]
    return found


def _value_seen(f: _Frame, value: Any) -> None:
    if f.kind == "object":
        if f.expect == "value" and isinstance(f.slot, str):
            f.facts.setdefault(f.slot, value)
        f.expect = "comma"
    else:
        f.expect = "comma"


def _scalar(word: str) -> Any:
    if word in _LITERALS:
        return _LITERALS[word]
    try:
        return int(word)
    except ValueError:
        try:
            return float(word)
        except ValueError:
            return word


def token_span(text: str, offset: int) -> int:
    """The end of the value or key that starts at *offset*: a string to its closing quote, a
    number or word to its last character, an object or array to its closing bracket when that
    is on the same line (else to the end of the line: a multi-line value is marked on its first
    line only); at least one character, and never past the end of the line."""
    n = len(text)
    if offset >= n:
        return offset
    m = LINE_END.search(text, offset)
    eol = n if m is None else m.start()
    ch = text[offset]
    if ch == '"':
        return min(_string_end(text, offset)[0], eol) if eol > offset else offset + 1
    if ch in "{[":
        depth = 0
        j = offset
        while j < eol:
            c = text[j]
            if c == '"':
                j = _string_end(text, j)[0]
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return max(eol, offset + 1)
    m = _NUMBER.match(text, offset) if ch == "-" or ch.isdigit() else _WORD.match(text, offset)
    end = m.end() if m and m.end() > offset else offset + 1
    return min(end, max(eol, offset + 1))
