"""compile_scene: scene/1 sources -> SCEN; cameras, lights (sRGB to linear), entities and references.

The camera, light and entity readers live in veduta/compile/common.py (prefabs and worlds use
them too), so this file is also their test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compile.helpers import compile_in, documented_error_example, lines
from veduta.base.kinds import kind_of, name_of
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.compile.common import DEFAULT_CAMERA, DEFAULT_LIGHT, linear_rgb, srgb_to_linear
from veduta.container.binary import f32_bits
from veduta.formats import decode, encode
from veduta.formats.scene import Scene
from veduta.source.diagnostics import Report

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"

SHEET = (
    '{"veduta": "texture/1", "size": [32, 16], "layers": [{"type": "fill", "color": "#ffffff"}], '
    '"grid": [4, 2], "clips": {"walk": {"frames": [0, 1]}, "idle": {"frames": [2]}}}'
)
SPRITE = '{"veduta": "material/1", "texture": "sheet"}'
PLAIN = '{"veduta": "material/1", "albedo": "#ff0000"}'
MODEL = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}'


def scene(**fields) -> str:
    return json.dumps({"veduta": "scene/1", **fields}, indent=2)


def sample_index() -> AssetIndex:
    return AssetIndex.from_paths(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*.v*") if ".cooked" not in p.parts)


# -- samples ------------------------------------------------------------------------------------


def test_sample_scene_compiles_cleanly_round_trips_and_is_deterministic():
    rel = "scenes/demo.vscene"
    index = sample_index()

    def once():
        ctx = CompileContext(str(ASSETS), rel, "scene", "demo", Report(rel), index)
        return compile_source("scene", (ASSETS / rel).read_bytes(), ctx), ctx

    sc, ctx = once()
    assert sc is not None and ctx.report.items == [], lines(ctx)
    payload = encode(sc)
    assert decode(Scene, payload) == sc and encode(decode(Scene, payload)) == payload
    assert encode(once()[0]) == payload
    assert {
        "models/robot.vmodel",
        "models/crate.vmodel",
        "models/tree.vmodel",
        "materials/hero_sprite.vmaterial",
        "textures/hero.vtexture",
        "maps/town.vmap",
    } <= set(ctx.deps)
    assert [e.name for e in sc.entities] == ["player", "hero", "crate_a", "crate_b", "tree", "marker"]
    assert sc.map == "town" and not sc.camera.ortho and sc.camera.size == 0


MY_SAMPLES = ["textures", "materials", "scenes", "prefabs", "maps"]
DIGEST = f"""
MY_SAMPLES = {MY_SAMPLES!r}
import hashlib, os, sys
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.formats import encode
from veduta.base.kinds import kind_of, name_of
from veduta.source.diagnostics import Report
assets = sys.argv[1]
rels = sorted(os.path.relpath(os.path.join(d, f), assets).replace(os.sep, "/")
              for d, _, fs in os.walk(assets) if ".cooked" not in d for f in fs)
rels = [r for r in rels if kind_of(r)]
index = AssetIndex.from_paths(rels)
h = hashlib.sha256()
for rel in rels:
    if rel.split("/")[0] not in MY_SAMPLES:
        continue
    k = kind_of(rel).name
    ctx = CompileContext(assets, rel, k, name_of(rel), Report(rel), index)
    body = compile_source(k, open(os.path.join(assets, rel), "rb").read(), ctx)
    h.update(rel.encode() + (encode(body) if body is not None else b"FAILED") + repr(sorted(ctx.deps)).encode())
print(h.hexdigest())
"""


def test_samples_of_every_kind_give_the_same_bytes_under_any_hash_seed():
    out = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        cp = subprocess.run(
            [sys.executable, "-c", DIGEST, str(ASSETS)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert cp.returncode == 0, cp.stderr
        out.add(cp.stdout.strip())
    assert len(out) == 1


# -- defaults, camera, light --------------------------------------------------------------------


def test_a_minimal_scene_gets_the_documented_defaults(tmp_path):
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": '{"veduta": "scene/1"}'}, "scenes/s.vscene")
    assert ctx.report.items == []
    assert sc == Scene(name="s", camera=DEFAULT_CAMERA, light=DEFAULT_LIGHT, background=0xFF000000, entities=[], map="")
    assert sc.camera.fov_deg == 60 and sc.camera.position == (0, 5, 10) and sc.camera.near == 0.1


def test_srgb_to_linear_is_the_iec_formula_rounded_to_f32():
    assert srgb_to_linear(0) == 0 and srgb_to_linear(255) == 1
    assert srgb_to_linear(10) == pytest.approx(10 / 255 / 12.92)  # the linear toe (c <= 0.04045)
    assert srgb_to_linear(128) == pytest.approx(((128 / 255 + 0.055) / 1.055) ** 2.4)
    r, g, b = linear_rgb(0xFF80FF00)
    assert f32_bits(r) == f32_bits(0.21586050011389926) and g == 1.0 and b == 0.0
    assert all(0 <= c <= 1 for i in range(256) for c in linear_rgb(0xFF000000 | i * 0x010101))


def test_light_colours_become_linear_rgb(tmp_path):
    src = scene(light={"direction": [0, -1, 0], "color": "#808080", "ambient": "#0a0a0a"})
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": src}, "scenes/s.vscene")
    assert sc.light.direction == (0, -1, 0)
    assert sc.light.color == linear_rgb(0xFF808080) and sc.light.ambient == linear_rgb(0xFF0A0A0A)


def test_orthographic_camera(tmp_path):
    src = scene(camera={"type": "orthographic", "size": 12, "position": [0, 30, 0], "look_at": [0, 0, 0]})
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": src}, "scenes/s.vscene")
    assert sc.camera.ortho and sc.camera.size == 12 and sc.camera.fov_deg == 0 and sc.camera.far == 100


CAMERA_BAD = """{
  "veduta": "scene/1",
  "camera": { "type": "orthographic", "fov_deg": 50, "near": 5, "far": 5,
              "position": [1, 2, 3], "look_at": [1, 2, 3] },
  "light": { "direction": [0, 0, 0], "color": "#80ffffff", "ambient": "grey" },
  "background": "#000"
}"""


def test_camera_and_light_errors(tmp_path):
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": CAMERA_BAD}, "scenes/s.vscene")
    assert sc is None
    assert lines(ctx) == [
        "scenes/s.vscene:3:50: camera.fov_deg: not used by an orthographic camera",
        "scenes/s.vscene:3:72: camera.far: 5 is not beyond near (5)",
        "scenes/s.vscene:4:49: camera.look_at: is the camera position (the camera must look somewhere)",
        "scenes/s.vscene:5:27: light.direction: must not be [0, 0, 0]",
        'scenes/s.vscene:5:47: light.color: "#80ffffff" is not a colour "#rrggbb" (a light colour has no alpha)',
        'scenes/s.vscene:5:71: light.ambient: "grey" is not a colour "#rrggbb"',
        'scenes/s.vscene:6:17: background: "#000" is not a colour "#rrggbb" or "#aarrggbb"',
    ]


# -- entities -----------------------------------------------------------------------------------

ENTITIES_BAD = """{
  "veduta": "scene/1",
  "entities": [
    { "name": "a", "parent": "b", "scale": [1, 0, 1], "layer": 2000 },
    { "name": "b", "parent": "a", "tags": ["x", "x"] },
    { "name": "a", "hitbox": { "min": [0, 0, 0], "max": [1, -1, 1] } },
    { "name": "c", "parent": "c", "frame": 70000, "visible": 1 },
    { "name": "d", "parent": "nobody", "colour": "#fff" },
    { "kind": "Player" }
  ]
}"""


def test_entity_errors_are_all_reported_with_positions(tmp_path):
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": ENTITIES_BAD}, "scenes/s.vscene")
    assert sc is None
    assert lines(ctx) == [
        "scenes/s.vscene:4:30: entities[0].parent: parents form a cycle: a -> b -> a",
        "scenes/s.vscene:4:48: entities[0].scale[1]: 0 is not allowed (scale components must be non-zero)",
        "scenes/s.vscene:4:64: entities[0].layer: 2000 out of range [-1000, 1000]",
        'scenes/s.vscene:5:49: entities[1].tags[1]: the string "x" repeats item 0',
        'scenes/s.vscene:6:15: entities[2].name: "a" is already the name of entity 0',
        "scenes/s.vscene:6:57: entities[2].hitbox.max: [1, -1, 1] is below min [0, 0, 0] on y",
        'scenes/s.vscene:7:30: entities[3].parent: "c" is the entity itself',
        "scenes/s.vscene:7:44: entities[3].frame: 70000 out of range [0, 65535]",
        "scenes/s.vscene:7:62: entities[3].visible: expected true or false, found 1",
        'scenes/s.vscene:8:30: entities[4].parent: "nobody" is not the name of an entity here',
        "scenes/s.vscene:8:50: entities[4].colour: unknown field",
        "scenes/s.vscene:9:5: entities[5].name: required field is missing",
        'scenes/s.vscene:9:15: entities[5].kind: "Player" is not a valid name (1-64 of a-z, 0-9, _, -, '
        "starting with a letter or digit)",
    ]


def test_entities_keep_file_order_and_every_field(tmp_path):
    ents = [
        {
            "name": "child",
            "parent": "root",
            "kind": "prop",
            "position": [1, 2, 3],
            "rotation_deg": [0, 90, 0],
            "scale": 2,
            "tags": ["b", "a"],
            "visible": False,
            "hitbox": {"min": [-1, 0, -1], "max": [1, 2, 1]},
            "layer": -5,
        },
        {"name": "root"},
    ]
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": scene(entities=ents)}, "scenes/s.vscene")
    assert ctx.report.items == []
    child, root = sc.entities
    assert (child.name, child.parent, child.kind, child.scale, child.tags, child.visible, child.layer) == (
        "child",
        "root",
        "prop",
        (2, 2, 2),
        ["b", "a"],
        False,
        -5,
    )
    assert child.hitbox == ((-1, 0, -1), (1, 2, 1)) and root.hitbox is None and root.scale == (1, 1, 1)
    assert root.visible and root.model == "" and root.anim == "" and root.frame == 0
    payload = encode(sc)
    assert encode(decode(Scene, payload)) == payload


# -- references ---------------------------------------------------------------------------------


def test_existing_references_are_dependencies(tmp_path):
    files = {
        "models/box.vmodel": MODEL,
        "textures/sheet.vtexture": SHEET,
        "materials/sprite.vmaterial": SPRITE,
        "maps/town.vmap": "{}",
        "scenes/s.vscene": scene(
            map="town",
            entities=[
                {"name": "a", "model": "box", "material": "sprite", "anim": "walk", "frame": 7},
                {"name": "b", "model": "box", "material": "sprite"},
            ],
        ),
    }
    sc, ctx = compile_in(tmp_path, files, "scenes/s.vscene")
    assert ctx.report.items == [] and sc is not None
    assert sorted(ctx.deps) == [
        "maps/town.vmap",
        "materials/sprite.vmaterial",
        "models/box.vmodel",
        "textures/sheet.vtexture",
    ]
    assert all(v is not None for v in ctx.deps.values())


def test_missing_references_are_warnings_naming_them(tmp_path):
    src = """{
  "veduta": "scene/1",
  "map": "nowhere",
  "entities": [
    { "name": "a", "model": "ghost", "material": "phantom", "anim": "walk", "frame": 3 },
    { "name": "b", "model": "ghost" }
  ]
}"""
    sc, ctx = compile_in(tmp_path, {"scenes/s.vscene": src}, "scenes/s.vscene")
    assert sc is not None  # a missing reference is not a failure
    assert lines(ctx) == [
        'scenes/s.vscene:3:10: map: warning: map "nowhere" does not exist (not checked)',
        'scenes/s.vscene:5:29: entities[0].model: warning: model "ghost" does not exist (not checked)',
        'scenes/s.vscene:5:50: entities[0].material: warning: material "phantom" does not exist (not checked)',
        'scenes/s.vscene:6:29: entities[1].model: warning: model "ghost" does not exist (not checked)',
    ]
    # the would-be paths are dependencies, so adding the assets makes the scene stale
    assert ctx.deps == {"maps/nowhere.vmap": None, "models/ghost.vmodel": None, "materials/phantom.vmaterial": None}


def test_frames_and_clips_are_checked_against_the_material_and_its_texture(tmp_path):
    src = """{
  "veduta": "scene/1",
  "entities": [
    { "name": "a", "material": "sprite", "anim": "run", "frame": 8 },
    { "name": "b", "material": "plain", "anim": "walk", "frame": 1 },
    { "name": "c", "anim": "walk", "frame": 2 },
    { "name": "d", "material": "sprite", "anim": "idle", "frame": 7 }
  ]
}"""
    files = {
        "textures/sheet.vtexture": SHEET,
        "materials/sprite.vmaterial": SPRITE,
        "materials/plain.vmaterial": PLAIN,
        "scenes/s.vscene": src,
    }
    sc, ctx = compile_in(tmp_path, files, "scenes/s.vscene")
    assert sc is None
    assert lines(ctx) == [
        'scenes/s.vscene:4:50: entities[0].anim: "run" is not a clip of texture "sheet" (want "idle" or "walk")',
        'scenes/s.vscene:4:66: entities[0].frame: 8 is outside the 8 frames of material "sprite" (4 x 2 grid; '
        "want 0..7)",
        'scenes/s.vscene:5:49: entities[1].anim: "walk" is not a clip: material "plain" has no texture',
        'scenes/s.vscene:5:66: entities[1].frame: 1 is outside the 1 frame of material "plain" '
        "(single image, no grid; want 0..0)",
        'scenes/s.vscene:6:28: entities[2].anim: anim "walk" needs a material whose texture has clips '
        "(this entity has no material)",
        "scenes/s.vscene:6:45: entities[2].frame: frame 2 needs a material whose texture has frames "
        "(this entity has no material)",
    ]


def test_a_material_whose_texture_is_missing_does_not_block_clips(tmp_path):
    files = {
        "materials/sprite.vmaterial": SPRITE,
        "scenes/s.vscene": scene(entities=[{"name": "a", "material": "sprite", "anim": "walk"}]),
    }
    sc, ctx = compile_in(tmp_path, files, "scenes/s.vscene")
    assert sc is not None and ctx.report.items == []  # the material's own cook warns about its texture
    assert ctx.deps["textures/sheet.vtexture"] is None  # but adding the texture makes the scene stale


# -- robustness: every kind of mine, mutated samples ----------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SAMPLE_FILES = sorted(p for folder in MY_SAMPLES for p in (ASSETS / folder).rglob("*.v*"))
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(["", "#ffffff", "walk", "crate", "textures/crate.png", ".", "gg"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


def _paths(v, prefix=()):
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, prefix + (i,))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLE_FILES), st.data(), JSON_VALUES, st.booleans())
def test_mutated_samples_are_reported_and_never_raise(path, data, value, delete):
    doc = json.loads(path.read_text())
    paths = [p for p in _paths(doc) if p and p != ("veduta",)]
    target = data.draw(st.sampled_from(paths))
    parent = doc
    for k in target[:-1]:
        parent = parent[k]
    if delete and isinstance(parent, dict):
        del parent[target[-1]]
    else:
        parent[target[-1]] = value
    rel = str(path.relative_to(ASSETS))
    kind = kind_of(rel).name
    ctx = CompileContext(str(ASSETS), rel, kind, name_of(rel), Report(rel), SAMPLE_INDEX)
    body = compile_source(kind, json.dumps(doc).encode(), ctx)
    assert (body is None) == (not ctx.report.ok)
    if body is not None:
        payload = encode(body)
        assert encode(decode(type(body), payload)) == payload  # what is accepted, readers accept


SAMPLE_INDEX = sample_index()


def test_the_documented_error_example_reports_what_the_docs_say(tmp_path):
    rel, src, expected = documented_error_example("scene.md")
    body, ctx = compile_in(tmp_path, {rel: src}, rel)
    assert body is None and lines(ctx) == expected
