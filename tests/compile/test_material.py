"""compile_material: material/1 sources -> MATL; strictness, defaults, the texture reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compile.helpers import compile_in, documented_error_example, lines
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.formats import decode, encode
from veduta.formats.material import Material
from veduta.source.diagnostics import Report

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
SAMPLES = sorted((ASSETS / "materials").glob("*.vmaterial"))

SHEET = (
    '{"veduta": "texture/1", "size": [32, 16], "layers": [{"type": "fill", "color": "#ffffff"}], '
    '"grid": [4, 2], "clips": {"walk": {"frames": [0, 1]}}}'
)


def sample_index() -> AssetIndex:
    return AssetIndex.from_paths(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*.v*") if ".cooked" not in p.parts)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_samples_compile_cleanly_round_trip_and_are_deterministic(path):
    rel = f"materials/{path.name}"
    index = sample_index()

    def once():
        ctx = CompileContext(str(ASSETS), rel, "material", path.stem, Report(rel), index)
        return compile_source("material", path.read_bytes(), ctx), ctx

    mat, ctx = once()
    assert mat is not None and ctx.report.items == [], lines(ctx)
    payload = encode(mat)
    assert decode(Material, payload) == mat and encode(decode(Material, payload)) == payload
    assert encode(once()[0]) == payload
    if mat.texture:
        assert ctx.deps[f"textures/{mat.texture}.vtexture"] is not None


def test_sample_sprite_material_takes_the_sheet_grid():
    rel = "materials/hero_sprite.vmaterial"
    ctx = CompileContext(str(ASSETS), rel, "material", "hero_sprite", Report(rel), sample_index())
    mat = compile_source("material", (ASSETS / rel).read_bytes(), ctx)
    assert mat.grid == (4, 2) and mat.alpha == "cutout" and mat.cull == 1 and mat.filter == 1 and mat.unlit


def test_defaults(tmp_path):
    mat, ctx = compile_in(tmp_path, {"materials/m.vmaterial": '{"veduta": "material/1"}'}, "materials/m.vmaterial")
    assert mat == Material(
        name="m", albedo=0xFFFFFFFF, texture="", unlit=False, alpha="opaque", cutoff=0.5, cull=0, filter=0, grid=(0, 0)
    )
    assert ctx.deps == {} and ctx.report.items == []


BAD = """{
  "veduta": "material/1",
  "albedo": "#12345",
  "alpha": "additive",
  "cutoff": 0.5,
  "cull": "front",
  "filter": "nearest",
  "filter": "bilinear",
  "grid": [2, 2],
  "shininess": 3
}"""


def test_every_problem_is_reported_at_once_with_exact_positions(tmp_path):
    mat, ctx = compile_in(tmp_path, {"materials/bad.vmaterial": BAD}, "materials/bad.vmaterial")
    assert mat is None
    assert lines(ctx) == [
        'materials/bad.vmaterial:3:13: albedo: "#12345" is not a colour "#rrggbb" or "#aarrggbb"',
        'materials/bad.vmaterial:4:12: alpha: "additive" is not one of "opaque", "blend", "cutout"',
        'materials/bad.vmaterial:6:11: cull: "front" is not one of "back", "none"',
        "materials/bad.vmaterial:8:13: filter: duplicate key 'filter' (first at line 7, column 3)",
        "materials/bad.vmaterial:9:11: grid: a grid cuts the texture into frames, and this material has no texture",
        "materials/bad.vmaterial:10:16: shininess: unknown field",
    ]


def test_cutoff_is_only_for_cutout(tmp_path):
    src = '{"veduta": "material/1", "alpha": "blend", "cutoff": 0.25}'
    mat, ctx = compile_in(tmp_path, {"materials/m.vmaterial": src}, "materials/m.vmaterial")
    assert lines(ctx) == ['materials/m.vmaterial:1:54: cutoff: not used with "alpha": "blend" (only with "cutout")']
    mat, ctx = compile_in(tmp_path, {"materials/m.vmaterial": src.replace("blend", "cutout")}, "materials/m.vmaterial")
    assert mat.cutoff == 0.25 and mat.alpha == "cutout"


def test_an_existing_texture_is_a_dependency_and_gives_the_grid(tmp_path):
    files = {"textures/sheet.vtexture": SHEET, "materials/m.vmaterial": '{"veduta": "material/1", "texture": "sheet"}'}
    mat, ctx = compile_in(tmp_path, files, "materials/m.vmaterial")
    assert ctx.report.items == []
    assert mat.texture == "sheet" and mat.grid == (4, 2)
    assert list(ctx.deps) == ["textures/sheet.vtexture"] and ctx.deps["textures/sheet.vtexture"] == SHEET.encode()


def test_an_explicit_grid_must_match_the_texture(tmp_path):
    files = {
        "textures/sheet.vtexture": SHEET,
        "materials/m.vmaterial": '{"veduta": "material/1", "texture": "sheet", "grid": [2, 2]}',
    }
    mat, ctx = compile_in(tmp_path, files, "materials/m.vmaterial")
    assert mat is None
    assert lines(ctx) == [
        'materials/m.vmaterial:1:54: grid: [2, 2] is not the grid of texture "sheet" ([4, 2]; leave grid out to use it)'
    ]
    files["materials/m.vmaterial"] = files["materials/m.vmaterial"].replace("[2, 2]", "[4, 2]")
    mat, ctx = compile_in(tmp_path, files, "materials/m.vmaterial")
    assert mat.grid == (4, 2)


def test_a_grid_may_cut_a_texture_that_has_none(tmp_path):
    files = {
        "textures/plain.vtexture": '{"veduta": "texture/1", "size": [8, 8], '
        '"layers": [{"type": "fill", "color": "#ffffff"}]}',
        "materials/m.vmaterial": '{"veduta": "material/1", "texture": "plain", "grid": [2, 2]}',
    }
    mat, ctx = compile_in(tmp_path, files, "materials/m.vmaterial")
    assert mat.grid == (2, 2) and ctx.report.items == []


def test_a_missing_texture_is_a_warning_naming_it(tmp_path):
    mat, ctx = compile_in(
        tmp_path, {"materials/m.vmaterial": '{"veduta": "material/1", "texture": "ghost"}'}, "materials/m.vmaterial"
    )
    assert mat is not None and mat.texture == "ghost" and mat.grid == (0, 0)
    assert lines(ctx) == ['materials/m.vmaterial:1:37: texture: warning: texture "ghost" does not exist (not checked)']
    # its would-be path is a (missing) dependency, so adding the texture makes the material stale
    assert ctx.deps == {"textures/ghost.vtexture": None}


def test_a_reference_of_the_wrong_kind_is_not_found(tmp_path):
    files = {"models/crate.vmodel": "{}", "materials/m.vmaterial": '{"veduta": "material/1", "texture": "crate"}'}
    mat, ctx = compile_in(tmp_path, files, "materials/m.vmaterial")
    assert mat is not None and 'texture "crate" does not exist' in lines(ctx)[0]


def test_the_documented_error_example_reports_what_the_docs_say(tmp_path):
    rel, src, expected = documented_error_example("material.md")
    body, ctx = compile_in(tmp_path, {rel: src}, rel)
    assert body is None and lines(ctx) == expected
