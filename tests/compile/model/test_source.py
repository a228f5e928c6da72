"""Strict model/1 sources: located errors, every problem at once (spec: Errors)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.compile.model.compile import build_mesh
from veduta.compile.model.source import read_model, validate_model
from veduta.compile.model.types import DEFAULT_RINGS, DEFAULT_SEGMENTS, ModelSpec
from veduta.source.jsonpos import parse_plain

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "assets" / "models"

SPEC_ERROR_EXAMPLE = b"""{
  "veduta": "model/1",
  "parts": [
    { "shape": "box", "size": [1, 1, 1], "radius": 0.5 },
    { "shape": "cylinder", "radius": 0.2, "height": 1, "segments": 2 },
    { "shape": "mirror", "axis": "x", "of": 7 }
  ]
}
"""


def lines(data: bytes | str, file: str = "crate.vmodel", name: str = "crate") -> list[str]:
    if isinstance(data, str):
        data = data.encode()
    spec, rep = read_model(data, file, name)
    assert (spec is None) == (not rep.ok)
    return [str(d) for d in rep.sorted()]


def test_spec_error_example_prints_exactly_its_three_lines():
    assert lines(SPEC_ERROR_EXAMPLE) == [
        "crate.vmodel:4:52: parts[0].radius: not used by shape box",
        "crate.vmodel:5:68: parts[1].segments: 2 out of range [3, 256]",
        "crate.vmodel:6:45: parts[2].of: 7 is not the index of an earlier part (want 0..1)",
    ]


def test_file_is_shown_as_given():
    out = lines(SPEC_ERROR_EXAMPLE, file="assets/models/crate.vmodel")
    assert out[0].startswith("assets/models/crate.vmodel:4:52: ")


def B(parts: str) -> str:
    """A model source with these parts (the template the cases fill in)."""
    return '{"veduta": "model/1", "parts": [' + parts + "]}"


BOX = '{"shape": "box", "size": [1,1,1]}'

BAD = {
    "unknown field with did-you-mean": (
        B('{"shape": "cylinder", "radius": 1, "height": 1, "segmnts": 8}'),
        '1:92: parts[0].segmnts: unknown field (did you mean "segments"?)',
    ),
    "unknown top-level field": (
        '{"veduta": "model/1", "pivto": "center", "parts": [' + BOX + "]}",
        '1:32: pivto: unknown field (did you mean "pivot"?)',
    ),
    "unknown field, no suggestion": (
        B('{"shape": "box", "size": [1,1,1], "colour": "red"}'),
        "1:77: parts[0].colour: unknown field",
    ),
    "wrong type (array)": (
        B('{"shape": "box", "size": "big"}'),
        '1:58: parts[0].size: expected an array of 3 numbers, found the string "big"',
    ),
    "wrong type (number)": (
        B('{"shape": "sphere", "radius": "1"}'),
        '1:63: parts[0].radius: expected a number, found the string "1"',
    ),
    "wrong length": (
        B('{"shape": "plane", "size": [1, 2, 3]}'),
        "1:60: parts[0].size: expected an array of 2 numbers, found 3 items",
    ),
    "duplicate key": (
        B('{"shape": "box", "size": [1,1,1], "size": [2,2,2]}'),
        "1:75: parts[0].size: duplicate key 'size' (first at line 1, column 50)",
    ),
    "trailing data": (B(BOX) + " x", "1:69: $: trailing data after the JSON value: 'x'"),
    "NaN": (
        B('{"shape": "sphere", "radius": NaN}'),
        "1:63: parts[0].radius: NaN is not a finite number (JSON has no NaN or Infinity)",
    ),
    "1e999": (B('{"shape": "sphere", "radius": 1e999}'), "1:63: parts[0].radius: 1e999 is not a finite number"),
    "null on a field the shape does not use": (
        B('{"shape": "box", "size": [1,1,1], "segments": null}'),
        "1:79: parts[0].segments: not used by shape box",
    ),
    "0 on a field the shape does not use": (
        B('{"shape": "plane", "size": [1,1], "depth": 0}'),
        "1:76: parts[0].depth: not used by shape plane",
    ),
    "false on a common field of a mirror": (
        B(BOX + ', {"shape": "mirror", "axis": "x", "of": 0, "flip_normals": false}'),
        "1:126: parts[1].flip_normals: not used by shape mirror",
    ),
    "mirror with position": (
        B(BOX + ', {"shape": "mirror", "axis": "x", "of": 0, "position": [0,0,0]}'),
        "1:122: parts[1].position: not used by shape mirror",
    ),
    "mirror of part 0 with no earlier part": (
        B('{"shape": "mirror", "axis": "x", "of": 0}'),
        "1:72: parts[0].of: 0 is not the index of an earlier part (part 0 has no earlier part)",
    ),
    "mirror of a negative index": (
        B(BOX + ', {"shape": "mirror", "axis": "x", "of": -1}'),
        "1:107: parts[1].of: -1 is not the index of an earlier part (want 0..0)",
    ),
    "mirror axis": (
        B(BOX + ', {"shape": "mirror", "axis": "w", "of": 0}'),
        '1:96: parts[1].axis: "w" is not one of "x", "y", "z"',
    ),
    "bad uv enum": (
        B('{"shape": "box", "size": [1,1,1], "uv": "cubic"}'),
        '1:73: parts[0].uv: "cubic" is not one of "box", "planar", "cylindrical", "spherical"',
    ),
    "bad pivot enum": (
        '{"veduta": "model/1", "pivot": "top", "parts": [' + BOX + "]}",
        '1:32: pivot: "top" is not one of "origin", "center", "bottom-center"',
    ),
    "bad shape": (
        B('{"shape": "cube", "size": [1,1,1]}'),
        '1:43: parts[0].shape: "cube" is not one of "box", "cylinder", "sphere", "plane", "extrude", "lathe", "mirror"',
    ),
    "missing shape": (
        B('{"size": [1,1,1]}'),
        '1:33: parts[0].shape: required field is missing (want one of "box", "cylinder", "sphere", "plane", '
        '"extrude", "lathe", "mirror")',
    ),
    "required field": (B('{"shape": "cylinder", "radius": 1}'), "1:33: parts[0].height: required field is missing"),
    "zero size": (B('{"shape": "box", "size": [1,0,1]}'), "1:61: parts[0].size[1]: 0 out of range (must be > 0)"),
    "negative radius": (B('{"shape": "sphere", "radius": -1}'), "1:63: parts[0].radius: -1 out of range (must be > 0)"),
    "zero depth": (
        B('{"shape": "extrude", "depth": 0, "profile": [[0,0],[1,0],[0,1]]}'),
        "1:63: parts[0].depth: 0 out of range (must be > 0)",
    ),
    "explicit 0 segments is out of range": (
        B('{"shape": "sphere", "radius": 1, "segments": 0}'),
        "1:78: parts[0].segments: 0 out of range [3, 256]",
    ),
    "rings": (B('{"shape": "sphere", "radius": 1, "rings": 129}'), "1:75: parts[0].rings: 129 out of range [2, 128]"),
    "non-integer count": (
        B('{"shape": "lathe", "profile": [[0,0],[1,0],[0,1]], "segments": 8.5}'),
        "1:96: parts[0].segments: expected an integer, found 8.5",
    ),
    "zero scale component": (
        B('{"shape": "box", "size": [1,1,1], "scale": [1, 0, 1]}'),
        "1:80: parts[0].scale[1]: 0 is not allowed (scale components must be non-zero)",
    ),
    "zero uniform scale": (
        B('{"shape": "box", "size": [1,1,1], "scale": -0.0}'),
        "1:76: parts[0].scale: -0.0 is not allowed (scale components must be non-zero)",
    ),
    "scale of the wrong type": (
        B('{"shape": "box", "size": [1,1,1], "scale": "2"}'),
        '1:76: parts[0].scale: expected a number or an array of 3 numbers, found the string "2"',
    ),
    "material name": (
        B('{"shape": "box", "size": [1,1,1], "material": "Crate Wood"}'),
        '1:79: parts[0].material: "Crate Wood" is not a valid name (1-64 of a-z, 0-9, _, -, starting with a '
        "letter or digit)",
    ),
    "name differs from the file name": (
        '{"veduta": "model/1", "name": "crates", "parts": [' + BOX + "]}",
        '1:31: name: "crates" is not the file name (want "crate")',
    ),
    "units": (
        '{"veduta": "model/1", "units": "cm", "parts": [' + BOX + "]}",
        '1:32: units: "cm" is not "m" (model/1 lengths are meters)',
    ),
    "format": ('{"veduta": "model/2", "parts": [' + BOX + "]}", '1:12: veduta: "model/2" is not "model/1"'),
    "no parts": ('{"veduta": "model/1"}', "1:1: parts: required field is missing"),
    "empty parts": ('{"veduta": "model/1", "parts": []}', "1:32: parts: must not be empty"),
    "part not an object": (B("3"), "1:33: parts[0]: expected an object, found 3"),
    "extrude profile repeats a point": (
        B('{"shape": "extrude", "depth": 1, "profile": [[0,0],[1,0],[1,0],[0,1]]}'),
        "1:90: parts[0].profile[2]: point 2 repeats point 1",
    ),
    "extrude profile crosses itself": (
        B('{"shape": "extrude", "depth": 1, "profile": [[0,0],[1,1],[1,0],[0,1]]}'),
        "1:90: parts[0].profile[2]: edges 0-1 and 2-3 cross or touch",
    ),
    "extrude profile closed by hand": (
        B('{"shape": "extrude", "depth": 1, "profile": [[0,0],[1,0],[0,1],[0,0]]}'),
        "1:96: parts[0].profile[3]: last point 3 repeats the first point (the profile is closed automatically)",
    ),
    "extrude profile too short": (
        B('{"shape": "extrude", "depth": 1, "profile": [[0,0],[1,0]]}'),
        "1:77: parts[0].profile: 2 points out of range [3, 256]",
    ),
    "lathe profile on the axis": (
        B('{"shape": "lathe", "profile": [[0,0],[0,1]]}'),
        "1:63: parts[0].profile: every point is on the axis (r = 0); want at least one point with r > 0",
    ),
    "profile point of the wrong length": (
        B('{"shape": "lathe", "profile": [[0,0],[1,0,2],[0,1]]}'),
        "1:70: parts[0].profile[1]: expected an array of 2 numbers, found 3 items",
    ),
    "lod distances increase": (
        '{"veduta": "model/1", "lod": [{"distance": 20}, {"distance": 10}], "parts": [' + BOX + "]}",
        "1:62: lod[1].distance: 10 does not increase (want > 20, the previous level's distance)",
    ),
    "lod distance 0": (
        '{"veduta": "model/1", "lod": [{"distance": 0}], "parts": [' + BOX + "]}",
        "1:44: lod[0].distance: 0 out of range (must be > 0)",
    ),
    "lod naming this model": (
        '{"veduta": "model/1", "lod": [{"distance": 5, "model": "crate"}], "parts": [' + BOX + "]}",
        '1:56: lod[0].model: "crate" is this model itself (name another model, or leave model out)',
    ),
    "too many lod levels": (
        '{"veduta": "model/1", "lod": ['
        + ",".join(f'{{"distance": {i + 1}}}' for i in range(9))
        + '], "parts": ['
        + BOX
        + "]}",
        "1:30: lod: 9 items, more than the limit of 8",
    ),
    "draw_distance": (
        '{"veduta": "model/1", "draw_distance": -1, "parts": [' + BOX + "]}",
        "1:40: draw_distance: -1 out of range (must be >= 0)",
    ),
    "draw_distance beyond f32": (
        '{"veduta": "model/1", "draw_distance": 1e39, "parts": [' + BOX + "]}",
        "1:40: draw_distance: 1e39 is too large for a 32-bit float (at most 3.4028235e+38)",
    ),
    "triangle_budget": (
        '{"veduta": "model/1", "triangle_budget": -5, "parts": [' + BOX + "]}",
        "1:42: triangle_budget: -5 out of range (must be >= 0)",
    ),
    "smooth_angle_deg": (
        '{"veduta": "model/1", "smooth_angle_deg": 181, "parts": [' + BOX + "]}",
        "1:43: smooth_angle_deg: 181 out of range [0, 180]",
    ),
    "symmetry": (
        '{"veduta": "model/1", "symmetry": "", "parts": [' + BOX + "]}",
        '1:35: symmetry: "" is not one of "x", "y", "z"',
    ),
    "top level not an object": ("[1]", "1:1: $: expected a JSON object at the top, found array"),
}


@pytest.mark.parametrize("source,expected", list(BAD.values()), ids=list(BAD))
def test_bad_source_gives_its_located_error(source, expected):
    assert lines(source) == ["crate.vmodel:" + expected]


def test_every_problem_is_reported_at_once():
    src = """{
  "veduta": "model/1",
  "pivot": "middle",
  "lod": [{ "distance": -1 }],
  "parts": [
    { "shape": "box", "size": [1, -1, 1], "segments": 0, "flip_normals": "yes" },
    { "shape": "lathe", "profile": [[0, 0], [1, 0], [1, 0]], "scale": [1, 1, 0] },
    { "shape": "mirror", "axis": "x", "of": 5, "uv": "box" }
  ]
}"""
    assert lines(src) == [
        'crate.vmodel:3:12: pivot: "middle" is not one of "origin", "center", "bottom-center"',
        "crate.vmodel:4:25: lod[0].distance: -1 out of range (must be > 0)",
        "crate.vmodel:6:35: parts[0].size[1]: -1 out of range (must be > 0)",
        "crate.vmodel:6:55: parts[0].segments: not used by shape box",
        'crate.vmodel:6:74: parts[0].flip_normals: expected true or false, found the string "yes"',
        "crate.vmodel:7:53: parts[1].profile[2]: point 2 repeats point 1",
        "crate.vmodel:7:78: parts[1].scale[2]: 0 is not allowed (scale components must be non-zero)",
        "crate.vmodel:8:45: parts[2].of: 5 is not the index of an earlier part (want 0..1)",
        "crate.vmodel:8:54: parts[2].uv: not used by shape mirror",
    ]


def test_unknown_shape_still_reports_fields_no_shape_has():
    assert lines(B('{"shape": "cube", "size": [1,1,1], "sise": 1}')) == [
        'crate.vmodel:1:43: parts[0].shape: "cube" is not one of "box", "cylinder", "sphere", "plane", '
        '"extrude", "lathe", "mirror"',
        'crate.vmodel:1:76: parts[0].sise: unknown field (did you mean "size"?)',
    ]


# --- good sources -----------------------------------------------------------------------------


def read_ok(text: str, name: str = "m") -> ModelSpec:
    spec, rep = read_model(text.encode(), f"{name}.vmodel", name)
    assert rep.ok, [str(d) for d in rep.items]
    assert spec is not None
    return spec


def test_defaults():
    spec = read_ok(
        B(
            '{"shape": "cylinder", "radius": 1, "height": 2}, {"shape": "sphere", "radius": 1},'
            '{"shape": "mirror", "axis": "z", "of": 1}'
        )
    )
    assert spec.name == "m" and spec.pivot == "origin" and spec.symmetry == ""
    assert spec.smooth_angle_deg == 30.0 and spec.triangle_budget == 0 and spec.draw_distance == 0.0
    assert spec.lod == ()
    cyl, sph, mir = spec.parts
    assert cyl.segments == DEFAULT_SEGMENTS and sph.rings == DEFAULT_RINGS
    assert cyl.position == (0, 0, 0) and cyl.rotation_deg == (0, 0, 0) and cyl.scale == (1, 1, 1)
    assert cyl.material == "" and cyl.uv == "" and cyl.flip_normals is False
    assert (mir.index, mir.shape, mir.axis, mir.of) == (2, "mirror", "z", 1)


def test_scale_number_or_vector():
    spec = read_ok(
        B('{"shape": "box", "size": [1,1,1], "scale": 2},{"shape": "box", "size": [1,1,1], "scale": [1, -0.5, 3]}')
    )
    assert spec.parts[0].scale == (2.0, 2.0, 2.0)
    assert spec.parts[1].scale == (1.0, -0.5, 3.0)


def test_mirror_may_set_its_material():
    spec = read_ok(B(BOX + ', {"shape": "mirror", "axis": "x", "of": 0, "material": "red"}'))
    assert spec.parts[1].material == "red"


def test_lod_levels_and_model_nodes():
    src = validate_model(
        b'{"veduta": "model/1", "lod": [{"distance": 10}, {"distance": 20.5, "model": "far"}],'
        b' "parts": [{"shape": "box", "size": [1,1,1]}]}',
        "m.vmodel",
        "m",
    )
    assert src.spec is not None
    assert [(lv.distance, lv.model) for lv in src.spec.lod] == [(10.0, ""), (20.5, "far")]
    assert src.lod_model_nodes[0] is None
    assert (src.lod_model_nodes[1].line, src.lod_model_nodes[1].col) == (1, 77)


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.vmodel")), ids=lambda p: p.stem)
def test_samples_are_valid(path):
    spec, rep = read_model(path.read_bytes(), str(path), path.stem)
    assert rep.items == []
    assert spec is not None and spec.name == path.stem


# --- robustness -------------------------------------------------------------------------------

SAMPLE_BYTES = [p.read_bytes() for p in sorted(MODELS.glob("*.vmodel"))]
_TOKENS = [b"0", b"-1", b"1e999", b"null", b"true", b'"x"', b"[]", b"{}", b"[0, 0]", b"256", b"0.5", b","]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SAMPLE_BYTES), st.data())
def test_mutated_sources_never_raise(data, draw):
    """Replace one number or literal of a sample by another token: validation reports, never raises,
    and whatever it accepts builds."""
    spans = [m.span() for m in re.finditer(rb"-?\d+(\.\d+)?|true|false|null|\"[a-z_]+\"", data)]
    start, end = draw.draw(st.sampled_from(spans))
    mutated = data[:start] + draw.draw(st.sampled_from(_TOKENS)) + data[end:]
    spec, rep = read_model(mutated, "m.vmodel", "m")
    assert (spec is None) == (not rep.ok)
    for d in rep.items:
        assert d.line >= 1 and d.col >= 1 and d.path and d.message
    if spec is not None:
        with np.errstate(all="ignore"):
            build_mesh(spec)


# -- the plain read: valid sources without nodes, everything else left to the located read -------

_ODD = [
    None,
    True,
    False,
    0,
    -1,
    1.0,
    0.5,
    2,
    3,
    300,
    1e-50,
    1e39,
    3.5e38,
    1e300,
    2**53,
    2**53 + 1,
    10**30,
    -0.0,
    "",
    "x",
    "box",
    "mirror",
    "m",
    "crate",
    "Bad Name",
    "origin",
    "planar",
    [],
    {},
    [1, 2],
    [0, 1, 0],
    [1, 2, 3],
    [[0, 0], [1, 0], [0, 1]],
]
_FIELDS = [
    "name",
    "units",
    "pivot",
    "symmetry",
    "smooth_angle_deg",
    "triangle_budget",
    "draw_distance",
    "position",
    "rotation_deg",
    "scale",
    "material",
    "uv",
    "flip_normals",
    "size",
    "radius",
    "height",
    "segments",
    "rings",
    "profile",
    "depth",
    "of",
    "axis",
    "shape",
    "distance",
    "model",
    "sise",
]
_PARTS = st.sampled_from(
    [
        {"shape": "box", "size": [1, 0.5, 2]},
        {"shape": "plane", "size": [2, 3], "uv": "planar"},
        {"shape": "cylinder", "radius": 0.3, "height": 1, "segments": 7, "rotation_deg": [0, 45, 0]},
        {"shape": "sphere", "radius": 1, "rings": 4, "scale": [1, -2, 1], "material": "stone"},
        {"shape": "lathe", "profile": [[0, 0], [1, 0], [0.5, 1], [0, 1.5]], "segments": 5},
        {"shape": "extrude", "profile": [[0, 0], [1, 0], [1, 1], [0, 1]], "depth": 0.5, "flip_normals": True},
        {"shape": "mirror", "of": 0, "axis": "x"},
    ]
)


@st.composite
def _model_texts(draw) -> str:
    import json

    doc: dict = {"veduta": "model/1", "parts": [dict(p) for p in draw(st.lists(_PARTS, min_size=1, max_size=4))]}
    if draw(st.booleans()):
        doc["lod"] = [
            {"distance": d} | ({"model": "far"} if m else {})
            for d, m in draw(
                st.lists(st.tuples(st.sampled_from([1, 5, 5.0000001, 20, 1e-50]), st.booleans()), max_size=3)
            )
        ]
    for _ in range(draw(st.integers(0, 2))):  # a field set, replaced or dropped anywhere
        objects = [doc] + [
            o for key in ("parts", "lod") if isinstance(doc.get(key), list) for o in doc[key] if isinstance(o, dict)
        ]
        obj = draw(st.sampled_from(objects))
        key = draw(st.sampled_from(_FIELDS + list(obj)))
        if draw(st.integers(0, 3)) == 0:
            obj.pop(key, None)
        else:
            obj[key] = draw(st.sampled_from(_ODD))
    text = json.dumps(doc)
    for raw in draw(
        st.lists(st.sampled_from(["1e400", "NaN", '"\\u00e9"', '"\\ud800"', "1" * 1200, "1E2", "-0"]), max_size=1)
    ):
        text = text.replace("0.5", raw, 1)
    if draw(st.integers(0, 9)) == 0:
        text = text.replace('"shape":', '"shape": "box", "shape":', 1)
    return text


@settings(max_examples=400, deadline=None)
@given(_model_texts())
def test_the_plain_read_gives_the_located_spec_or_leaves_the_source_to_it(text):
    """`validate_model(..., located=False)` first reads a source as plain values (no nodes): when
    that gives a spec, it is the one the located read gives, with no diagnostic at all."""
    from veduta.compile.model.source import _plain_spec
    from veduta.source import Reported

    data = text.encode()
    located = validate_model(data, "crate.vmodel", "crate")
    try:
        spec = _plain_spec(parse_plain(data), "crate")
    except Reported:
        return
    assert not located.report.items and repr(spec) == repr(located.spec)


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.vmodel")), ids=lambda p: p.stem)
def test_the_plain_read_takes_every_sample_model(path):
    from veduta.compile.model.source import _plain_spec

    data = path.read_bytes()
    located = validate_model(data, path.name, path.stem)
    assert located.spec is not None and not located.report.items
    assert repr(_plain_spec(parse_plain(data), path.stem)) == repr(located.spec)
    fast = validate_model(data, path.name, path.stem, located=False)
    assert repr(fast.spec) == repr(located.spec)
    assert [(n.line, n.col) for n in fast.located().part_nodes] == [(n.line, n.col) for n in located.part_nodes]


# -- located once: problems of a source the strict parser has nothing to say about --------------


def _strict(data: bytes, name: str = "crate"):
    """The reference: the source read by the strict parser (positions for every value), validated."""
    from veduta.compile.model.source import _validate
    from veduta.compile.model.types import FORMAT
    from veduta.source import load_source

    root, rep = load_source(data, "crate.vmodel", FORMAT)
    return None if root is None else _validate(root, rep, name)


def _seen(src) -> list:
    return [
        [str(d) + d.severity + d.code for d in src.report.items],
        [(n.line, n.col) for n in (src.parts_node, *src.part_nodes, *src.lod_model_nodes) if n is not None],
    ]


@settings(max_examples=400, deadline=None)
@given(_model_texts())
def test_problems_located_afterwards_are_the_strict_parsers(text):
    """A source read by the standard library's decoder (no positions), validated, and only then its
    problems' values found in the text gives the report of the strict parser's tree, item for item
    and in order, and its nodes the same positions (with located=False, once located())."""
    data = text.encode()
    want = _strict(data)
    for located in (True, False):
        got = validate_model(data, "crate.vmodel", "crate", located=located)
        if want is None:
            assert got.spec is None and got.report.items == validate_model(data, "crate.vmodel", "crate").report.items
            continue
        assert _seen(got.located()) == _seen(want), located
        assert repr(got.spec) == repr(want.spec)


def test_a_large_source_with_problems_in_every_part_is_read_once_without_the_strict_parser(monkeypatch):
    """250 extrude parts, each a profile of 300 points (one too many: 256 at most), and one
    unknown field: every problem is reported, located, and the strict parser (whose every value
    costs a position) never runs: the decoder's tree is validated and the 251 reported values are
    found in the text afterwards. Before, the source was read three times, the last by the strict
    parser (a 15.6 MB one: about 30 s)."""
    import json

    from veduta.source import jsonpos

    parts = [
        {"shape": "extrude", "depth": 1, "profile": [[i / 7, (i % 5) / 3] for i in range(300)]} for _ in range(250)
    ]
    parts[100]["colour"] = "red"
    data = json.dumps({"veduta": "model/1", "parts": parts}, indent=1).encode()
    want = _seen(_strict(data))
    assert len(want[0]) == 251

    def refused(self, text):
        raise AssertionError("the strict parser ran")

    monkeypatch.setattr(jsonpos._Parser, "__init__", refused)
    for located in (True, False):
        got = validate_model(data, "crate.vmodel", "crate", located=located)
        assert _seen(got)[0] == want[0]
    assert sum("profile: 300 points out of range [3, 256]" in d for d in want[0]) == 250


@pytest.mark.parametrize(
    "inside, read_whole",
    [("", False), (', "size": [2, 2, 2]', True), (', "x": 1e400', True), (', "x": ' + "1" * 1001, True)],
    ids=["clean", "duplicate key", "1e400", "1001 digits"],
)
def test_too_many_parts_are_counted_without_a_node_for_any(inside, read_whole):
    """300 parts (256 at most), a mistake before and after them: the report is the strict
    parser's, and when the parts hold nothing the strict parser reports (a duplicate key, a
    number out of range) the tree is made without them (the parts array's items are never
    read: only their count). Otherwise the source is read whole, and that problem reported too."""
    from veduta.compile.model.source import _too_many_parts
    from veduta.source.jsonpos import parse_plain

    part = '{"shape": "box", "size": [1, 1, 1]' + "}"
    parts = [part] * 300
    parts[150] = part[:-1] + inside + "}"
    text = '{"veduta": "model/1", "pivot": "top",\n "parts": [\n' + ",\n".join(parts) + '],\n "colour": 1}'
    data = text.encode()
    want = _seen(_strict(data))
    assert "parts: 300 parts out of range [1, 256]" in " ".join(want[0]) and len(want[0]) == 3 + read_whole
    for located in (True, False):
        assert _seen(validate_model(data, "crate.vmodel", "crate", located=located)) == want
    shallow = _too_many_parts(data, parse_plain(data))
    assert (shallow is None) == read_whole
    if shallow is not None:
        assert shallow.value["parts"].value == [None] * 300
