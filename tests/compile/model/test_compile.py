"""compile_model: source bytes -> MESH record; byte round trips and determinism."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from veduta.base.project import AssetIndex
from veduta.compile import CompileContext
from veduta.compile.model.compile import build_mesh, compile_model
from veduta.compile.model.source import read_model
from veduta.container.meta import Meta
from veduta.formats import decode, encode
from veduta.formats.asset import encode_asset, make_asset, read_asset
from veduta.formats.mesh import Mesh
from veduta.source.diagnostics import Report

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "assets" / "models"
SAMPLES = sorted(MODELS.glob("*.vmodel"))
#: the sample models and the materials they name (a missing material is a warning)
INDEX = AssetIndex.from_paths(
    [f"models/{p.name}" for p in SAMPLES]
    + [f"materials/{p.name}" for p in (ROOT / "assets" / "materials").glob("*.vmaterial")]
)


def context(name: str, index: AssetIndex = INDEX) -> CompileContext:
    return CompileContext(
        str(ROOT / "assets"), f"models/{name}.vmodel", "model", name, Report(f"assets/models/{name}.vmodel"), index
    )


def compile_text(text: str | bytes, name: str = "m", index: AssetIndex = INDEX) -> tuple[Mesh | None, CompileContext]:
    ctx = context(name, index)
    data = text.encode() if isinstance(text, str) else text
    return compile_model(data, ctx), ctx


def compile_sample(name: str) -> tuple[Mesh, CompileContext]:
    mesh, ctx = compile_text((MODELS / f"{name}.vmodel").read_bytes(), name)
    assert mesh is not None, [str(d) for d in ctx.report.items]
    return mesh, ctx


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_compiles_cleanly_and_round_trips(path):
    mesh, ctx = compile_sample(path.stem)
    assert ctx.report.items == []
    assert mesh.name == path.stem
    payload = encode(mesh)
    back = decode(Mesh, payload)  # runs the MESH reader checks
    assert back == mesh
    assert encode(back) == payload


def test_samples_include_the_flora_and_spec_models():
    names = {p.stem for p in SAMPLES}
    assert {"crate", "robot", "tree", "tree_far", "grass_tuft", "poppy", "oak"} <= names
    grass, _ = compile_sample("grass_tuft")
    assert grass.draw_distance > 0 and grass.triangles <= 8


def test_tree_gives_152_and_40_triangles_and_references_tree_far():
    mesh, ctx = compile_sample("tree")
    assert mesh.triangles == 152
    near, far = mesh.lods
    assert (near.distance, near.model, len(near.indices) // 3) == (15.0, "", 40)
    assert (far.distance, far.model, len(far.indices), len(far.vertices), far.mesh_parts) == (
        35.0,
        "tree_far",
        0,
        0,
        [],
    )
    assert len(near.mesh_parts) == len(mesh.mesh_parts) == 2
    assert mesh.draw_distance == 80.0
    assert ctx.deps == {"models/tree_far.vmodel": (MODELS / "tree_far.vmodel").read_bytes()}


def test_missing_lod_model_is_a_warning_at_cook_and_a_recorded_dep():
    src = (
        '{"veduta": "model/1", "lod": [{"distance": 9, "model": "nowhere"}], '
        '"parts": [{"shape": "box", "size": [1,1,1]}]}'
    )
    mesh, ctx = compile_text(src, "m")
    assert mesh is not None and ctx.report.ok
    col = src.index('"nowhere"') + 1
    assert [str(d) for d in ctx.report.items] == [
        f'assets/models/m.vmodel:1:{col}: lod[0].model: warning: model "nowhere" does not exist (not checked)'
    ]
    assert ctx.deps == {"models/nowhere.vmodel": None}


def test_errors_give_none_and_every_diagnostic():
    src = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1,1,1], "radius": 1}, {"shape": "box"}]}'
    mesh, ctx = compile_text(src, "m")
    assert mesh is None
    radius, second = src.index("1}") + 1, src.rindex("{") + 1
    assert [str(d) for d in ctx.report.sorted()] == [
        f"assets/models/m.vmodel:1:{radius}: parts[0].radius: not used by shape box",
        f"assets/models/m.vmodel:1:{second}: parts[1].size: required field is missing",
    ]


def test_overflowing_geometry_is_an_error_and_collapsed_parts_a_warning():
    mesh, ctx = compile_text('{"veduta": "model/1", "parts": [{"shape": "box", "size": [1e39, 1, 1]}]}')
    assert mesh is None
    assert [str(d) for d in ctx.report.items] == [
        "assets/models/m.vmodel:1:32: parts: the geometry does not fit 32-bit floats (a size, position or scale "
        "is too large)"
    ]
    mesh, ctx = compile_text('{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "scale": 1e-300}]}')
    assert mesh is not None
    assert [(d.severity, d.code, d.path) for d in ctx.report.items] == [("warning", "MESH_DEGENERATE", "parts[0]")]


def test_crate_fields_map_onto_mesh():
    mesh, _ = compile_sample("crate")
    assert (mesh.pivot, mesh.symmetry, mesh.triangle_budget, mesh.draw_distance, mesh.lods) == (
        "bottom-center",
        "",
        0,
        0.0,
        [],
    )
    assert mesh.smooth_angle_deg == 30.0
    assert mesh.materials == ["crate_wood", ""]
    assert [(p.index, p.shape, p.material, p.uv, p.flip_normals, p.of) for p in mesh.parts] == [
        (0, "box", "crate_wood", "box", False, -1),
        (1, "cylinder", "", "cylindrical", False, -1),
        (2, "sphere", "", "spherical", False, -1),
        (3, "plane", "", "planar", False, -1),
        (4, "extrude", "", "box", False, -1),
        (5, "lathe", "", "cylindrical", False, -1),
        (6, "mirror", "", "cylindrical", False, 1),
    ]
    assert [p.count // 3 for p in mesh.parts] == [12, 48, 224, 2, 12, 64, 48]
    assert [(mp.first, mp.count, mp.material) for mp in mesh.mesh_parts] == [
        (p.first, p.count, 0 if p.material else 1) for p in mesh.parts
    ]
    assert mesh.bounds[0][1] == 0.0  # bottom-center pivot
    pos = mesh.vertices["position"]
    assert tuple(pos.min(axis=0)) == mesh.bounds[0] and tuple(pos.max(axis=0)) == mesh.bounds[1]


def test_mirror_inherits_material_unless_set():
    mesh, _ = compile_sample("robot")
    assert [p.material for p in mesh.parts] == ["body", "arm", "arm", "hand", "hand", "head"]
    mesh, _ = compile_text(
        '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1,1,1], "position": [1,0,0],'
        ' "material": "a"}, {"shape": "mirror", "axis": "x", "of": 0, "material": "b"}]}'
    )
    assert mesh.materials == ["a", "b"] and mesh.parts[1].material == "b"


def test_build_mesh_equals_compile():
    data = (MODELS / "hero.vmodel").read_bytes()
    spec, rep = read_model(data, "hero.vmodel", "hero")
    assert encode(build_mesh(spec)) == encode(compile_sample("hero")[0])


def test_whole_container_round_trip():
    mesh, _ = compile_sample("barrel")
    meta = Meta("veduta-asset/0.8.0", (), "model", "barrel", "models/barrel.vmodel", "0" * 64)
    data = encode_asset(make_asset(meta, mesh))
    asset = read_asset(data, "barrel.vda")
    assert asset.body == mesh
    assert encode_asset(asset) == data


# --- determinism --------------------------------------------------------------------------------

_DIGEST = """
import hashlib, pathlib, sys
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext
from veduta.compile.model.compile import compile_model
from veduta.formats import encode
from veduta.source.diagnostics import Report
root = pathlib.Path(sys.argv[1])
paths = sorted((root / "assets" / "models").glob("*.vmodel"))
index = AssetIndex.from_paths(f"models/{p.name}" for p in paths)
for p in paths:
    ctx = CompileContext(str(root / "assets"), f"models/{p.name}", "model", p.stem, Report(p.name), index)
    print(p.stem, hashlib.sha256(encode(compile_model(p.read_bytes(), ctx))).hexdigest())
"""


def digests() -> str:
    lines = []
    for p in SAMPLES:
        mesh, _ = compile_sample(p.stem)
        lines.append(f"{p.stem} {hashlib.sha256(encode(mesh)).hexdigest()}")
    return "\n".join(lines) + "\n"


def test_same_bytes_twice():
    assert digests() == digests()


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_same_bytes_under_another_hash_seed(seed):
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _DIGEST, str(ROOT)], env=env, capture_output=True, text=True, check=True, cwd=str(ROOT)
    )
    assert out.stdout == digests()


def test_vertices_are_float32_and_finite():
    for p in SAMPLES:
        mesh, _ = compile_sample(p.stem)
        assert mesh.vertices.dtype.itemsize == 32
        assert np.isfinite(mesh.vertices.view(np.float32)).all()
        assert int(mesh.indices.max()) < len(mesh.vertices)


def test_a_large_model_builds_in_a_few_hundred_bytes_per_triangle():
    """Memory proportionate to the output (docs/formats/model.md, Limits): six of the largest
    parts (390,144 triangles) peak under 450 bytes per triangle of Python-traced memory, numpy's
    arrays included (building everything at once took about 1 KB)."""
    import tracemalloc

    parts = [
        {"shape": "sphere", "radius": 1 + i / 100, "segments": 256, "rings": 128, "position": [3 * i, 0, 0]}
        for i in range(6)
    ]
    tracemalloc.start()
    try:
        mesh, ctx = compile_text(json.dumps({"veduta": "model/1", "parts": parts}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mesh is not None and mesh.triangles == 390_144
    assert peak / mesh.triangles < 450, peak / mesh.triangles
