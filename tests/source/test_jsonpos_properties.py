"""Differential property tests: the positioned JSON parser against ``json.loads``.

Editors and CI tools now point at positions this parser reports, so on every generated
document it must agree with the standard library: the same value, every node's line and
column pointing at text that decodes to that node's value, and rejecting what ``json.loads``
rejects (it may reject more: duplicate keys, non-finite numbers, lone surrogates, a BOM,
nesting deeper than MAX_DEPTH; never less).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.source.jsonpos import MAX_DEPTH, Arr, Node, Obj, locate, parse, parse_fast, to_plain
from veduta.source.jsonpos import Num as NumNode

# Values json.loads gives back as they were: finite floats, ints of any size, any text.
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40,
)
layouts = st.fixed_dictionaries(
    {
        "indent": st.sampled_from([None, 0, 1, 2, "\t", " \r\n "]),
        "separators": st.sampled_from([None, (",", ":"), (" , ", " : "), (",\n", ":\t")]),
        "ensure_ascii": st.booleans(),
    }
)


def same(a, b) -> bool:
    """Equal values of equal types (1 is not 1.0, -0.0 is not 0.0), recursively."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def offsets(text: str) -> list[int]:
    """The offset where each line starts, as the parser counts lines (ending at ``\\r\\n``,
    ``\\r`` or ``\\n``)."""
    out = [0]
    for i, ch in enumerate(text):
        if ch == "\n" or (ch == "\r" and text[i + 1 : i + 2] != "\n"):
            out.append(i + 1)
    return out


def nodes(node: Node):
    yield node
    if isinstance(node, Obj):
        for child in node.value.values():
            yield from nodes(child)
    elif isinstance(node, Arr):
        for child in node.value:
            yield from nodes(child)


def check_positions(text: str, root: Node) -> None:
    """Every node's (line, col) is where json's decoder finds that node's value."""
    starts = offsets(text)
    decoder = json.JSONDecoder()
    for node in nodes(root):
        offset = starts[node.line - 1] + node.col - 1
        value, _ = decoder.raw_decode(text, offset)
        assert same(value, to_plain(node)), (node.line, node.col)
    if isinstance(root, Obj):
        for key, knode in root.keys.items():
            offset = starts[knode.line - 1] + knode.col - 1
            assert decoder.raw_decode(text, offset)[0] == key


@settings(max_examples=300, deadline=None)
@given(values, layouts)
def test_valid_documents_agree_with_json_loads(value, layout):
    text = json.dumps(value, **layout)
    root, problems = parse(text.encode("utf-8"))
    assert problems == []
    assert same(to_plain(root), json.loads(text))
    check_positions(text, root)


@settings(max_examples=100, deadline=None)
@given(values, st.text(alphabet=" \t\r\n", max_size=4), st.text(alphabet=" \t\r\n", max_size=4))
def test_surrounding_whitespace_is_allowed(value, before, after):
    text = before + json.dumps(value, indent=1) + after
    root, problems = parse(text)
    assert problems == [] and same(to_plain(root), json.loads(text))
    check_positions(text, root)


# Problems the strict parser reports that json.loads lets through.
STRICTER = ("duplicate key", "is not a finite number", "lone surrogate", "byte-order mark", "nesting deeper")


def loads_or_none(text: str):
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):
        return None, False


def damage(text: str, data, pieces: list[str]) -> tuple[str, int]:
    """*text* with one character deleted, or one of *pieces* inserted or put in place of one
    character, and where."""
    i = data.draw(st.integers(0, len(text)), label="at")
    action = data.draw(st.sampled_from(["delete", "insert", "replace"]), label="action")
    ch = data.draw(st.sampled_from(pieces), label="piece")
    if action == "delete":
        return text[:i] + text[i + 1 :], i
    if action == "insert":
        return text[:i] + ch + text[i:], i
    return text[:i] + ch + text[i + 1 :], i


@settings(max_examples=400, deadline=None)
@given(values, layouts, st.data())
def test_damaged_documents_are_rejected_like_json_loads(value, layout, data):
    """Delete, insert or replace one character of a valid document: when json.loads rejects the
    result the parser reports a fatal problem; when it accepts, the parser gives the same value
    or one of its documented stricter problems."""
    pieces = list('{}[]",:0-1.eE+tfn \\u\x01') + ["NaN", "Infinity", "\ud800"]
    damaged, _ = damage(json.dumps(value, **layout), data, pieces)
    expected, ok = loads_or_none(damaged)
    root, problems = parse(damaged)
    if not ok:
        assert root is None and problems and problems[-1].fatal, damaged
        return
    if problems:
        assert all(any(s in p.message for s in STRICTER) for p in problems), (damaged, problems)
        return
    assert same(to_plain(root), expected)
    check_positions(damaged, root)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=3), st.integers(), min_size=1, max_size=4), st.data())
def test_duplicate_keys_are_reported_where_the_repeat_is(obj, data):
    key = data.draw(st.sampled_from(sorted(obj)))
    text = json.dumps(obj)[:-1] + ", " + json.dumps(key) + ": 7}"
    root, problems = parse(text)
    assert root is not None and [p.message.split(" (")[0] for p in problems] == [f"duplicate key {key!r}"]
    assert same(to_plain(root), obj)  # the first occurrence wins (json.loads keeps the last)
    starts = offsets(text)
    p = problems[0]
    assert text[starts[p.line - 1] + p.col - 1 :] == "7}"


def test_nesting_limit_is_reported_not_a_crash():
    deep = "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2)
    root, problems = parse(deep)
    assert root is None and "nesting deeper" in problems[-1].message
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse(ok)[1] == [] and json.loads(ok) is not None


# -- the fast path: the standard library's decoder, deferring to the strict parser ---------------


def same_tree(fast: Node, strict: Node) -> bool:
    """The same node classes, values and number texts, keys in the same order (positions aside)."""
    if type(fast) is not type(strict) or (fast.line, fast.col) != (0, 0):
        return False
    if isinstance(strict, Obj):
        return (
            list(fast.value) == list(strict.value)
            and list(fast.keys) == list(strict.keys)
            and all(same_tree(fast.value[k], strict.value[k]) for k in strict.value)
        )
    if isinstance(strict, Arr):
        return len(fast) == len(strict) and all(same_tree(a, b) for a, b in zip(fast, strict, strict=True))
    if isinstance(strict, NumNode) and fast.text != strict.text:
        return False
    return same(fast.value, strict.value)


def fast_agrees(data: bytes) -> None:
    """parse_fast gives a tree exactly when parse finds no problem, and then the same tree."""
    fast = parse_fast(data)
    strict, problems = parse(data)
    if problems:
        assert fast is None, (data, problems)
    else:
        assert fast is not None and same_tree(fast, strict), data


@settings(max_examples=300, deadline=None)
@given(values, layouts)
def test_fast_path_reads_valid_documents_as_the_strict_parser(value, layout):
    fast_agrees(json.dumps(value, **layout).encode("utf-8"))


@settings(max_examples=500, deadline=None)
@given(values, layouts, st.data())
def test_fast_path_accepts_exactly_what_the_strict_parser_accepts(value, layout, data):
    """One character deleted, inserted or replaced (the stricter problems among them: duplicate
    keys, NaN, Infinity, lone surrogates, huge numbers, a BOM, bad UTF-8)."""
    damaged, i = damage(
        json.dumps(value, **layout),
        data,
        list('{}[]",:0-1.eE+tfn \\u\x01\x7f\ufeff')
        + [
            "NaN",
            "-Infinity",
            "Infinity",
            "\\ud800",
            "\\udc00",
            "\\ud83d\\ude00",
            "1e400",
            "-1e999",
            "9" * 1001,
            '"a": 1, "a": 2',
            '{"k": 1, "k": 1}',
            "\\u0000",
        ],
    )
    raw = damaged.encode("utf-8", "surrogatepass")
    fast_agrees(raw)
    fast_agrees(b"\xef\xbb\xbf" + raw)
    fast_agrees(raw[:i] + b"\xff" + raw[i:])


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 1}',
        "[NaN]",
        "[-Infinity]",
        '{"x": 1e400}',
        "[-1e999]",
        '"\\ud800"',
        '"\\udc00x"',
        '{"\\ud800": 1}',
        '"\\ud83d\\u0041"',
        "[" + "1" * 1001 + "]",
        "[-" + "1" * 1000 + "]",
        "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2),
        "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1),
        "[" * 100000 + "]" * 100000,
        '{"a": "\x01"}',
        '{"a": 1} x',
        "",
        "  ",
        "\ufeff{}",
        "{'a': 1}",
    ],
)
def test_fast_path_leaves_every_problem_to_the_strict_parser(text):
    assert parse(text.encode("utf-8", "surrogatepass"))[1], text
    assert parse_fast(text.encode("utf-8", "surrogatepass")) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH,
        '"\\ud83d\\ude00"',
        "[" + "1" * 1000 + "]",
        "[-" + "1" * 999 + "]",
        "[1e-400, -0, -0.0, 1E+2]",
        "7",
        '{"a": "\\u00e9\\n\\"\\/"}',
    ],
)
def test_fast_path_reads_the_edge_cases_the_strict_parser_accepts(text):
    fast_agrees(text.encode("utf-8"))
    assert parse_fast(text.encode("utf-8")) is not None


# -- positions found afterwards: locate() in a tree read by the standard library's decoder -----


def all_nodes(node: Node):
    """Every node of a tree, keys' string nodes too, in document order."""
    yield node
    if isinstance(node, Obj):
        for key, child in node.value.items():
            yield node.keys[key]
            yield from all_nodes(child)
    elif isinstance(node, Arr):
        for child in node.value:
            yield from all_nodes(child)


@settings(max_examples=300, deadline=None)
@given(values, layouts, st.text(alphabet=" \t\r\n", max_size=3), st.data())
def test_located_nodes_have_the_strict_parsers_positions(value, layout, before, data):
    """Any nodes of parse_fast's tree (some, or all, keys too) given their positions by locate
    (one pass over the text, stepping over the rest) have exactly the positions parse gives the
    same nodes; the others keep none."""
    text = before + json.dumps(value, **layout)
    strict, problems = parse(text)
    fast = parse_fast(text.encode("utf-8"))
    assert problems == [] and fast is not None
    pairs = list(zip(all_nodes(fast), all_nodes(strict), strict=True))
    chosen = data.draw(st.lists(st.sampled_from(range(len(pairs))), max_size=len(pairs)), label="chosen")
    every = data.draw(st.booleans(), label="every")
    wanted = set(range(len(pairs))) if every else set(chosen)
    locate(text, fast, [pairs[i][0] for i in sorted(wanted, reverse=True)])
    for i, (f, s) in enumerate(pairs):
        assert (f.line, f.col) == ((s.line, s.col) if i in wanted else (0, 0)), (i, text)
