from __future__ import annotations

import pytest

from veduta.source import load_source
from veduta.source.jsonpos import Arr, Num, Obj, Str, join_path, parse, to_plain


def test_positions_point_at_values():
    root, problems = parse(b'{\n  "a": [1, "x"],\n  "b": {"c": true}\n}')
    assert problems == []
    assert isinstance(root, Obj)
    a = root.get("a")
    assert isinstance(a, Arr) and (a.line, a.col) == (2, 8)
    assert isinstance(a.value[1], Str) and (a.value[1].line, a.value[1].col) == (2, 12)
    c = root.get("b").get("c")
    assert (c.line, c.col) == (3, 14) and c.value is True
    assert root.keys["b"].col == 3
    assert to_plain(root) == {"a": [1, "x"], "b": {"c": True}}


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_lines_end_at_lf_crlf_and_a_lone_cr(end):
    """Every line end an editor shows ends a line of the parser's positions (problems too, and
    bad UTF-8's), so a file saved with "\\r\\n" or a lone "\\r" is located as its "\\n" twin."""
    text = '{\n  "a": [1, "x"],\n  "b": {"c": true}, "a": 2\n}'.replace("\n", end)
    root, problems = parse(text.encode())
    c = root.get("b").get("c")
    assert (c.line, c.col) == (3, 14)
    assert [(p.line, p.col) for p in problems] == [(3, 26)]  # the duplicate "a"
    _, bad = parse(('{\n "a":\n  "' + "\n").replace("\n", end).encode() + b'\xff"}')
    assert [(p.line, p.col, p.message) for p in bad] == [(4, 1, "invalid UTF-8 (byte 0xff)")]


def test_columns_count_characters_not_bytes():
    root, _ = parse('{"é": "ü", "n": 1}'.encode())
    assert root.get("n").col == 17


def test_integers_and_floats_are_distinguished():
    root, _ = parse(b'{"i": 3, "f": 3.0, "e": 1e2}')
    assert root.get("i").value == 3 and isinstance(root.get("i").value, int)
    assert isinstance(root.get("f").value, float) and root.get("f").text == "3.0"
    assert isinstance(root.get("e"), Num) and root.get("e").value == 100.0


@pytest.mark.parametrize(
    "src, line, col, message",
    [
        (b'{"a": 1,}', 1, 9, "trailing comma before }"),
        (b'{"a": 1} x', 1, 10, "trailing data after the JSON value: 'x'"),
        (b"{'a': 1}", 1, 2, 'expected a field name in double quotes, found "\'"'),
        (b'{"a": "x\ny"}', 1, 9, "newline in string (escape it)"),
        (b'{"a": 01}', 1, 7, "malformed number '01'"),
        (b'{"a" 1}', 1, 6, "expected ':' after field name, found '1'"),
        (b"", 1, 1, "empty file: expected a JSON object"),
        (b'{"a": [1, 2}', 1, 12, "expected ',' or ']' in array, found '}'"),
        (b"\xef\xbb\xbf{}", 1, 1, "file starts with a UTF-8 byte-order mark; save it without"),
        (b'{"a": "\xff"}', 1, 8, "invalid UTF-8 (byte 0xff)"),
        (b'{"a": "\\ud800"}', 1, 8, "lone surrogate in \\u escape"),
        # a comment was "found '/'": say that JSON sources take none (issue 28)
        (
            b'{\n  // the crate\n  "a": 1}',
            2,
            3,
            "expected a field name in double quotes, found a // comment (JSON sources take no comments)",
        ),
        (
            b'{"a": 1 /* one */}',
            1,
            9,
            "expected ',' or '}' in object, found a /* comment (JSON sources take no comments)",
        ),
        (b"// head\n{}", 1, 1, "expected a value, found a // comment (JSON sources take no comments)"),
    ],
)
def test_fatal_problems_are_located(src, line, col, message):
    root, problems = parse(src)
    assert root is None
    assert len(problems) == 1
    p = problems[0]
    assert (p.line, p.col) == (line, col), p
    assert p.message.startswith(message), p.message


def test_duplicate_keys_and_overflow_are_reported_and_parsing_goes_on():
    root, problems = parse(b'{\n "a": 1,\n "a": 2,\n "b": 1e999,\n "c": 3\n}')
    assert root is not None and root.get("a").value == 1 and root.get("c").value == 3
    got = [(p.line, p.col, p.path, p.message) for p in problems]
    assert got == [
        (3, 7, "a", "duplicate key 'a' (first at line 2, column 2)"),
        (4, 7, "b", "1e999 is not a finite number"),
    ]


def test_deep_nesting_is_a_problem_not_a_crash():
    root, problems = parse(b"[" * 5000 + b"]" * 5000)
    assert root is None and "nesting deeper" in problems[0].message


def test_join_path():
    assert join_path("", "parts") == "parts"
    assert join_path("parts", 2) == "parts[2]"
    assert join_path("parts[2]", "of") == "parts[2].of"
    assert join_path("props", "my key") == 'props["my key"]'


def test_load_source_checks_the_header():
    root, rep = load_source(b'{"veduta": "model/2"}', "x.vmodel", "model/1")
    assert [str(d) for d in rep.items] == ['x.vmodel:1:12: veduta: "model/2" is not "model/1"']
    root, rep = load_source(b"[]", "x.vmodel", "model/1")
    assert root is None
    assert [str(d) for d in rep.items] == ["x.vmodel:1:1: $: expected a JSON object at the top, found array"]


def test_more_values_than_any_source_may_hold_stop_every_reader(monkeypatch):
    """Past MAX_VALUES the strict parser stops with a located problem, and the C decoder's readers
    (parse_fast, parse_plain, bounded_loads) never build the values: their memory is bounded
    whatever the file's size. Here with a limit of 100 (the real one is 4,000,000)."""
    from veduta.source import jsonpos

    monkeypatch.setattr(jsonpos, "MAX_VALUES", 100)
    at = b'{"veduta": "model/1", "x": [' + b",".join([b"1"] * 97) + b"]}"  # 100 values: root, string, array, 97
    over = at.replace(b"[1,", b"[1,1,")
    root, problems = jsonpos.parse(at)
    assert root is not None and problems == []
    assert jsonpos.parse_fast(at) is not None and jsonpos.parse_plain(at) is not None
    assert jsonpos.bounded_loads(at) == {"veduta": "model/1", "x": [1] * 97}
    root, problems = jsonpos.parse(over)
    assert root is None
    assert [(p.line, p.col, p.path, p.message, p.fatal) for p in problems] == [
        (1, 223, "x[97]", "more than 100 values, more than any source may hold", True)  # the 98th item
    ]
    assert jsonpos.parse_fast(over) is None and jsonpos.parse_plain(over) is None
    assert jsonpos.bounded_loads(over) is None
    assert jsonpos.bounded_loads(b'"' + b"," * 500 + b'"') == "," * 500  # commas in a string: counted exactly
