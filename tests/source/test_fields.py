from __future__ import annotations

from veduta.source.diagnostics import Report
from veduta.source.fields import (
    INVALID,
    AssetName,
    BoolSpec,
    Color,
    Enum,
    Field,
    Int,
    ListOf,
    Num,
    ObjectSpec,
    Vec,
    parse_color,
)
from veduta.source.jsonpos import parse

SPEC = ObjectSpec(
    {
        "name": Field(AssetName, ""),
        "segments": Field(Int(3, 256), 16),
        "radius": Field(Num(gt=0)),
        "size": Field(Vec(3, Num(gt=0)), (1.0, 1.0, 1.0)),
        "mode": Field(Enum("box", "planar"), "box"),
        "flip": Field(BoolSpec(), False),
        "color": Field(Color(), 0xFFFFFFFF),
        "tags": Field(ListOf(AssetName, unique=True), []),
    }
)


def read(src: str):
    root, problems = parse(src.encode())
    rep = Report("f.json")
    rep.extend_json(problems)
    return SPEC.read(rep, root, ""), [str(d) for d in rep.sorted()]


def test_defaults_fill_missing_fields():
    v, errs = read('{"radius": 2}')
    assert errs == []
    assert v == {
        "name": "",
        "segments": 16,
        "radius": 2.0,
        "size": (1.0, 1.0, 1.0),
        "mode": "box",
        "flip": False,
        "color": 0xFFFFFFFF,
        "tags": [],
    }
    assert isinstance(v["radius"], float)


def test_every_problem_is_reported_at_once_with_positions():
    v, errs = read(
        '{"segments": 0, "radius": -1, "size": [1, 0, "a"], "mode": "cube", "flip": null,\n'
        ' "color": "#12345", "tags": ["a", "a"], "segmnts": 3, "name": "Bad"}'
    )
    assert v is INVALID
    assert errs == [
        "f.json:1:14: segments: 0 out of range [3, 256]",
        "f.json:1:27: radius: -1 out of range (must be > 0)",
        "f.json:1:43: size[1]: 0 out of range (must be > 0)",
        'f.json:1:46: size[2]: expected a number, found the string "a"',
        'f.json:1:60: mode: "cube" is not one of "box", "planar"',
        "f.json:1:76: flip: expected true or false, found null",
        'f.json:2:11: color: "#12345" is not a colour "#rrggbb" or "#aarrggbb"',
        'f.json:2:35: tags[1]: the string "a" repeats item 0',
        'f.json:2:52: segmnts: unknown field (did you mean "segments"?)',
        'f.json:2:63: name: "Bad" is not a valid name (1-64 of a-z, 0-9, _, -, starting with a letter or digit)',
    ]


def test_required_field_missing_is_reported_at_the_object():
    v, errs = read('{\n  "segments": 3.5\n}')
    assert errs == [
        "f.json:1:1: radius: required field is missing",
        "f.json:2:15: segments: expected an integer, found 3.5",
    ]


def test_colors():
    assert parse_color("#ff8000") == 0xFFFF8000
    assert parse_color("#80ff8000") == 0x80FF8000
    assert parse_color("#FF8000") == 0xFFFF8000
    assert parse_color("ff8000") is None and parse_color("#ff80") is None


def test_a_reference_reads_exactly_as_the_name_spec_it_replaces():
    """fields.Reference only adds the schema's "format" (what tools find references by)."""
    import re

    from veduta.source.fields import NAME_RE, NAME_WHAT, Reference, StrSpec

    pairs = [
        (Reference("material"), StrSpec(pattern=NAME_RE, what=NAME_WHAT)),
        (
            Reference("material", optional=True),
            StrSpec(pattern=re.compile(r"|[a-z0-9][a-z0-9_-]{0,63}"), what=NAME_WHAT),
        ),
    ]
    for ref, plain in pairs:
        for text in ('""', '"crate"', '"Crate"', "3", '"' + "a" * 65 + '"', "null"):
            node, _ = parse(text)
            a, b = Report("f"), Report("f")
            assert ref.read(a, node, "p") == plain.read(b, node, "p")
            assert a.items == b.items
        assert ref.schema() == {**plain.schema(), "format": "veduta:material"}
