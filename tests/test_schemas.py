"""The JSON Schemas of the source formats: valid Draft 2020-12, equal to a fresh generation from
the field declarations, accepting every sample source and rejecting each kind's typical mistakes,
which the cook's validators reject too (the schema and the validator cannot drift apart)."""

from __future__ import annotations

import copy
import glob
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from veduta.base.kinds import BY_NAME, KINDS
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.faces.cli.schema import cmd_schema
from veduta.schemas import generate, schema_of, shipped
from veduta.source.diagnostics import Report

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.path.join(ROOT, "assets")


def samples(kind: str) -> list[str]:
    k = BY_NAME[kind]
    return sorted(glob.glob(os.path.join(ASSETS, k.folder, "**", "*" + k.suffix), recursive=True))


def validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(schema_of(kind))


def cook_errors(kind: str, source: dict, name: str) -> list[str]:
    """The errors the kind's compiler reports for *source* (in the sample game)."""
    k = BY_NAME[kind]
    rel = f"{k.folder}/{name}{k.suffix}"
    index = AssetIndex.from_paths(
        os.path.relpath(p, ASSETS).replace(os.sep, "/")
        for p in glob.glob(os.path.join(ASSETS, "**", "*.v*"), recursive=True)
    )
    ctx = CompileContext(ASSETS, rel, kind, name, Report(rel), index)
    compile_source(kind, json.dumps(source).encode(), ctx)
    return [str(d) for d in ctx.report.errors]


@pytest.mark.parametrize("kind", [k.name for k in KINDS])
def test_schema_is_valid_draft_2020_12(kind):
    schema = schema_of(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False and schema["required"][0] == "veduta"


def test_shipped_schemas_equal_a_fresh_generation():
    assert shipped() == generate(), "run: python -m veduta.schemas"


@pytest.mark.parametrize("kind", [k.name for k in KINDS])
def test_every_sample_source_validates(kind):
    files = samples(kind)
    assert files
    v = validator(kind)
    for path in files:
        with open(path, encoding="utf-8") as f:
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(json.load(f))]
        assert errors == [], path


def _set(doc: dict, path: list, value) -> dict:
    doc = copy.deepcopy(doc)
    node = doc
    for step in path[:-1]:
        node = node[step]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DELETE = object()

# kind -> (sample name, [(mistake, path, value)]): each is a typical mistake the schema catches
MISTAKES = {
    "model": (
        "crate",
        [
            ("unknown field", ["parts", 0, "colour"], "red"),
            ("field of another shape", ["parts", 0, "radius"], 1),
            ("bad enum", ["pivot"], "middle"),
            ("bad shape", ["parts", 0, "shape"], "cube"),
            ("out of range", ["parts", 1, "segments"], 2),
            ("wrong type", ["parts", 0, "size"], "1 1 1"),
            ("wrong length", ["parts", 0, "size"], [1, 1]),
            ("zero scale", ["parts", 0, "scale"], [1, 0, 1]),
            ("missing required", ["parts", 0, "size"], _DELETE),
            ("missing shape", ["parts", 0, "shape"], _DELETE),
            ("no parts", ["parts"], []),
            ("wrong header", ["veduta"], "model/2"),
            ("missing header", ["veduta"], _DELETE),
        ],
    ),
    "texture": (
        "crate",
        [
            ("unknown field", ["tiled"], True),
            ("bad enum", ["wrap"], "mirror"),
            ("out of range", ["layers", 0, "opacity"], 2),
            ("wrong type", ["tiling"], "yes"),
            ("missing required", ["layers", 0, "path"], _DELETE),
            ("field of another layer type", ["layers", 0, "color"], "#ffffff"),
            ("bad layer type", ["layers", 0, "type"], "gradient"),
            ("bad path", ["layers", 0, "path"], "../crate.png"),
            ("no layers", ["layers"], []),
        ],
    ),
    "material": (
        "crate_wood",
        [
            ("unknown field", ["shininess"], 3),
            ("bad enum", ["cull"], "front"),
            ("out of range", ["grid"], [0, 2]),
            ("wrong type", ["unlit"], 1),
            ("bad colour", ["albedo"], "#12345"),
            ("cutoff without cutout", ["cutoff"], 0.5),
        ],
    ),
    "scene": (
        "demo",
        [
            ("unknown field", ["camera", "zoom"], 2),
            ("bad enum", ["camera", "type"], "fisheye"),
            ("size on a perspective camera", ["camera", "size"], 4),
            ("out of range", ["camera", "fov_deg"], 180),
            ("wrong type", ["entities", 0, "visible"], "no"),
            ("missing required", ["entities", 0, "name"], _DELETE),
            ("bad name", ["entities", 0, "name"], "Player One"),
            ("light colour with alpha", ["light", "color"], "#80fff4e0"),
            ("repeated tag", ["entities", 0, "tags"], ["player", "player"]),
        ],
    ),
    "prefab": (
        "well",
        [
            ("unknown field", ["size"], [2, 2]),
            ("out of range", ["footprint"], [0, 2]),
            ("wrong type", ["min_distance", "tree"], "3"),
            ("missing required", ["footprint"], _DELETE),
            ("bad tag", ["min_distance"], {"Tree": 3}),
            ("hitbox field", ["entities", 0, "hitbox", "centre"], [0, 0, 0]),
        ],
    ),
    "world": (
        "valley",
        [
            ("unknown field", ["gravity"], 9.8),
            ("bad enum", ["features", 0, "kind"], "mountain"),
            ("field a feature kind does not use", ["features", 0, "depth"], 2),
            ("out of range", ["chunk"], 2),
            ("wrong type", ["seed"], "42"),
            ("missing required", ["biomes"], _DELETE),
            ("no biomes", ["biomes"], []),
            ("negative seed", ["seed"], -1),
        ],
    ),
    "map": (
        "town",
        [
            ("unknown field", ["layers", 0, "opacity"], 1),
            ("out of range", ["terrains", 0, "variants"], 0),
            ("wrong type", ["objects"], {}),
            ("missing required", ["layers"], _DELETE),
            ("long key", ["terrains", 0, "key"], "gg"),
            ("empty-cell key", ["terrains", 0, "key"], "."),
            ("bad flip", ["terrains", 0, "flip"], ["z"]),
        ],
    ),
}


@pytest.mark.parametrize(
    "kind, mistake, path, value",
    [(kind, mistake, path, value) for kind, (_, cases) in MISTAKES.items() for mistake, path, value in cases],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_typical_mistakes_fail_the_schema_and_the_cook(kind, mistake, path, value):
    name = MISTAKES[kind][0]
    k = BY_NAME[kind]
    with open(os.path.join(ASSETS, k.folder, name + k.suffix), encoding="utf-8") as f:
        good = json.load(f)
    assert list(validator(kind).iter_errors(good)) == []
    bad = _set(good, path, value)
    assert list(validator(kind).iter_errors(bad)), f"the schema accepts {mistake}"
    assert cook_errors(kind, bad, name), f"the cook accepts {mistake}"


def test_mistakes_cover_every_kind():
    assert set(MISTAKES) == {k.name for k in KINDS}


def test_fields_have_hover_text_and_defaults():
    model = schema_of("model")
    pivot = model["properties"]["pivot"]
    assert pivot["default"] == "origin" and pivot["enum"] == ["origin", "center", "bottom-center"]
    assert "description" in pivot
    box = next(
        b["then"]
        for b in model["properties"]["parts"]["items"]["allOf"]
        if b["if"]["properties"]["shape"]["const"] == "box"
    )
    assert box["required"] == ["shape", "size"] and box["additionalProperties"] is False
    assert box["properties"]["position"]["default"] == [0.0, 0.0, 0.0] and box["properties"]["size"]["description"]
    assert schema_of("material")["properties"]["albedo"]["default"] == "#ffffff"

    def undocumented(node, path):
        if isinstance(node, dict):
            for key, sub in node.get("properties", {}).items():
                if (
                    isinstance(sub, dict)
                    and "description" not in sub
                    and set(sub) != {"const"}
                    and "errorMessage" not in sub
                ):
                    # (a variant's tag is described once, beside its enum; a rule says its message)
                    yield f"{path}.{key}"
            for key, sub in node.items():
                if key != "if":
                    yield from undocumented(sub, f"{path}/{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                yield from undocumented(sub, f"{path}[{i}]")

    for k in KINDS:
        assert list(undocumented(schema_of(k.name), k.name)) == []


def test_veduta_schema_writes_the_shipped_files(tmp_path, capsys):
    class Args:
        cwd = str(tmp_path)
        out = "schemas"
        json = True

    assert cmd_schema(Args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["files"] == [f"schemas/{k.name}.schema.json" for k in KINDS]
    for k in KINDS:
        text = (tmp_path / "schemas" / f"{k.name}.schema.json").read_text(encoding="utf-8")
        assert json.loads(text) == schema_of(k.name)


# -- the schema never rejects a source the cook accepts ----------------------------------------


_VALUES = [
    -1,
    0,
    0.5,
    1,
    2,
    3,
    300,
    1e9,
    "x",
    "",
    "box",
    "#ffffff",
    "#80ffffff",
    True,
    False,
    None,
    [],
    {},
    [1, 2],
    [1, 2, 3],
    [0, 0, 0],
    {"x": 1},
]
_SAMPLES = {
    "model": "robot",
    "texture": "hero",
    "material": "hero_sprite",
    "scene": "demo",
    "prefab": "cottage",
    "world": "valley",
    "map": "town",
}


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(_SAMPLES)), data=st.data())
def test_the_schema_never_rejects_what_the_cook_accepts(kind, data):
    """Random one-value mutations of a sample source: whenever the schema says no, the cook
    reports an error too (the schema may let through what only the cook can see, never the
    other way round)."""
    k = BY_NAME[kind]
    with open(os.path.join(ASSETS, k.folder, _SAMPLES[kind] + k.suffix), encoding="utf-8") as f:
        doc = json.load(f)
    paths = [p for p in _paths(doc) if p]
    path = data.draw(st.sampled_from(paths), label="path")
    action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
    if action == "add":
        target = path if isinstance(_get(doc, path), dict) else path[:-1]
        if not isinstance(_get(doc, target), dict):
            action, target = "replace", path
        else:
            path = (*target, data.draw(st.sampled_from(["extra", "size", "radius", "type", "name"]), label="key"))
    value = (
        _DELETE
        if action == "delete" and isinstance(_get(doc, path[:-1]), dict)
        else data.draw(st.sampled_from(_VALUES), label="value")
    )
    mutated = _set(doc, list(path), value)
    schema_errors = [e.message for e in validator(kind).iter_errors(mutated)]
    if schema_errors:
        assert cook_errors(kind, mutated, _SAMPLES[kind]), (path, value, schema_errors[:3])


def _get(doc, path):
    for step in path:
        doc = doc[step]
    return doc


def test_only_keywords_draft_07_also_has():
    """Editors whose JSON support stops at draft-07 (older VS Code, many language servers)
    read the schemas the same way."""
    from jsonschema import Draft7Validator

    draft7 = {
        "$schema",
        "title",
        "description",
        "default",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "enum",
        "const",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "not",
        "anyOf",
        "allOf",
        "if",
        "then",
        "else",
        "propertyNames",
        "maxProperties",
        # "veduta:<kind>" on a reference (fields.Reference): an annotation, ignored by validators
        "format",
        # a rule's message (fields.unused): VS Code's JSON support shows it, validators ignore it
        "errorMessage",
        "contains",
    }  # (draft-06)

    def keywords(node):
        if isinstance(node, dict):
            for key, sub in node.items():
                yield key
                if key == "properties":
                    for s in sub.values():
                        yield from keywords(s)
                elif key not in ("default", "enum", "const"):
                    yield from keywords(sub)
        elif isinstance(node, list):
            for sub in node:
                yield from keywords(sub)

    for k in KINDS:
        schema = schema_of(k.name)
        assert set(keywords(schema)) <= draft7, set(keywords(schema)) - draft7
        Draft7Validator.check_schema({key: v for key, v in schema.items() if key != "$schema"})


# -- rules between fields, on hand-made sources -----------------------------------------------------


def _shipped_validator(kind: str) -> Draft202012Validator:
    with open(os.path.join(ROOT, "veduta", "schemas", f"{kind}.schema.json"), encoding="utf-8") as f:
        return Draft202012Validator(json.load(f))


_BOX = '{ "shape": "box", "size": [1, 1, 1] }'
_CHECKER = '{ "type": "checker", "colors": ["#000000", "#ffffff"] }'
_IMAGE = '{ "type": "image", "path": "crate.png" }'


def _world(rest: str) -> str:
    return '{ "veduta": "world/1", "biomes": [ { "name": "meadow", "ground": "grass" } ], ' + rest + " }"


def _veg(fields: str) -> str:
    return _world('"vegetation": [ { "name": "grove", "density": 0.1, ' + fields + " } ]")


def _place(rotation: int) -> str:
    return _world(f'"places": [ {{ "name": "home", "prefab": "well", "cell": [0, 0], "rotation": {rotation} }} ]')


#: (kind, file name, hand-made source, where the schema and the cook both point, a word of the
#: cook's message): each rule the schema says between fields, broken once
HAND_MADE = [
    (
        "model",
        "m",
        '{ "veduta": "model/1", "parts": [ { "shape": "box", "size": [1, 1, 1], "radius": 1 } ] }',
        ["parts", 0, "radius"],
        "not used by shape box",
    ),
    (
        "model",
        "m",
        '{ "veduta": "model/1", "parts": [ ' + _BOX + ', { "shape": "mirror", "axis": "x", "of": 0, '
        '"position": [1, 0, 0] } ] }',
        ["parts", 1, "position"],
        "not used by shape mirror",
    ),
    ("world", "w", _place(45), ["places", 0, "rotation"], "quarter turns"),
    ("world", "w", _place(360), ["places", 0, "rotation"], "quarter turns"),
    ("world", "w", _veg('"prefab": "tree", "model": "grass_tuft"'), ["vegetation", 0, "model"], "not both"),
    ("world", "w", _veg('"biomes": ["meadow"]'), ["vegetation", 0], "needs"),
    ("world", "w", _veg('"prefab": "tree", "scale": [1, 2]'), ["vegetation", 0, "scale"], "prefab rule"),
    ("world", "w", _veg('"model": "grass_tuft", "cell": [0, 0]'), ["vegetation", 0], "both"),
    (
        "world",
        "w",
        _world('"features": [ { "name": "hill", "kind": "plain", "cell": [0, 0], "radius": 9, "depth": 2 } ]'),
        ["features", 0, "depth"],
        "not used by a plain",
    ),
    ("material", "m", '{ "veduta": "material/1", "grid": [2, 2] }', ["grid"], "no texture"),
    ("material", "m", '{ "veduta": "material/1", "texture": "", "grid": [2, 2] }', ["grid"], "no texture"),
    ("material", "m", '{ "veduta": "material/1", "cutoff": 0.3 }', ["cutoff"], "cutout"),
    (
        "texture",
        "t",
        '{ "veduta": "texture/1", "size": [8, 8], "layers": [ ' + _CHECKER + ' ], "tiling": true, "wrap": "clamp" }',
        ["wrap"],
        "tiling texture repeats",
    ),
    ("texture", "t", '{ "veduta": "texture/1", "layers": [ ' + _CHECKER + " ] }", [], "no layer is an image"),
    (
        "texture",
        "t",
        '{ "veduta": "texture/1", "size": [8, 8], "layers": [ { "type": "checker", '
        '"colors": ["#000000", "#ffffff"], "path": "a.png" } ] }',
        ["layers", 0, "path"],
        "not used by a layer of type checker",
    ),
    (
        "scene",
        "s",
        '{ "veduta": "scene/1", "camera": { "type": "orthographic", "fov_deg": 40 } }',
        ["camera", "fov_deg"],
        "orthographic camera",
    ),
]


@pytest.mark.parametrize(
    "kind, name, text, path, word",
    HAND_MADE,
    ids=[f"{k}-{'.'.join(map(str, p)) or 'root'}-{w}" for k, _, _, p, w in HAND_MADE],
)
def test_rules_between_fields_fail_the_shipped_schema_where_the_cook_points(kind, name, text, path, word):
    """jsonschema (as an editor would) rejects each hand-made source at the field the rule is about
    (a field a shape does not use is a ``not``, not ``additionalProperties``: the error names the
    field, not the whole object), with the message the cook gives; the cook rejects it too."""
    doc = json.loads(text)
    errors = list(_shipped_validator(kind).iter_errors(doc))
    assert [list(e.absolute_path) for e in errors] == [path], [(list(e.absolute_path), e.message) for e in errors]
    assert word in errors[0].schema.get("errorMessage", ""), errors[0].schema
    problems = cook_errors(kind, doc, name)
    assert any(word in p for p in problems), problems


@pytest.mark.parametrize(
    "kind, text",
    [
        ("world", _place(270)),
        ("world", _veg('"model": "grass_tuft", "cell": [0, 0], "radius": 4, "scale": [1, 2]')),
        ("world", _veg('"prefab": "tree"')),
        ("material", '{ "veduta": "material/1", "texture": "crate", "grid": [1, 1] }'),
        (
            "texture",
            '{ "veduta": "texture/1", "layers": [ '
            + _IMAGE
            + ", "
            + _CHECKER
            + ' ], "tiling": true, "wrap": "repeat" }',
        ),
        ("texture", '{ "veduta": "texture/1", "size": [8, 8], "layers": [ ' + _CHECKER + ' ], "wrap": "clamp" }'),
    ],
)
def test_the_rules_leave_good_sources_alone(kind, text):
    assert list(_shipped_validator(kind).iter_errors(json.loads(text))) == []
