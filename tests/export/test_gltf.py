"""`veduta export gltf` of models: valid glTF (Khronos validator), geometry exactly as cooked."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.export.helpers import accessor_array, load, problems, sample_game, validate
from veduta import api
from veduta.base.errors import VedutaError
from veduta.base.project import Project
from veduta.faces.cli.main import main
from veduta.formats.asset import read_asset_file
from veduta.formats.mesh import VERTEX_DTYPE
from veduta.tools.export.glb import read_glb


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return Project.at(str(sample_game(tmp_path_factory.mktemp("sample"))))


def _models(project: Project) -> list[str]:
    return sorted(s.name for s in project.sources() if s.kind.name == "model")


def _cooked(project: Project, name: str):
    return read_asset_file(project.cooked_path("model", name)).body


def test_every_sample_model_passes_the_validator_with_geometry_as_cooked(sample, tmp_path):
    names = _models(sample)
    assert len(names) >= 10
    files = []
    for name in names:
        out = tmp_path / f"{name}.glb"
        summary = api.export_gltf(sample, str(out), model=name)
        assert summary["findings"] == [], summary["findings"]
        files.append(out)
    reports = validate(*files)
    for name, out, report in zip(names, files, reports, strict=True):
        assert report["issues"]["numErrors"] == 0 and problems(report) == [], (name, problems(report))
        doc, binary = load(out)
        mesh = _cooked(sample, name)
        levels = [(mesh.vertices, mesh.indices, mesh.bounds)]
        for lod in mesh.lods or []:
            if lod.model:
                other = _cooked(sample, lod.model)
                levels.append((other.vertices, other.indices, other.bounds))
            else:
                levels.append((lod.vertices, lod.indices, lod.bounds))
        assert len(doc["meshes"]) == len(levels), name
        for k, (gm, (verts, idx, bounds)) in enumerate(zip(doc["meshes"], levels, strict=True)):
            assert gm["name"] == (name if k == 0 else f"{name}_lod{k}")
            tris = 0
            for prim in gm["primitives"]:
                tris += doc["accessors"][prim["indices"]]["count"] // 3
            assert tris == len(idx) // 3, (name, k)
            pos = doc["accessors"][gm["primitives"][0]["attributes"]["POSITION"]]
            assert pos["min"] == [float(np.float32(v)) for v in bounds[0]], (name, k)
            assert pos["max"] == [float(np.float32(v)) for v in bounds[1]], (name, k)
            # the vertex buffer view is the cooked vertex list, byte for byte
            bv = doc["bufferViews"][pos["bufferView"]]
            got = binary[bv["byteOffset"] : bv["byteOffset"] + bv["byteLength"]]
            assert got == np.ascontiguousarray(verts, VERTEX_DTYPE).tobytes(), (name, k)
            # and the primitives hold the cooked triangles, grouped by material
            got_idx = np.concatenate([accessor_array(doc, binary, p["indices"]) for p in gm["primitives"]])
            want = np.asarray(idx).reshape(-1, 3)
            assert sorted(map(tuple, got_idx.reshape(-1, 3))) == sorted(map(tuple, want)), (name, k)


def test_materials_become_pbr_materials(sample, tmp_path):
    out = tmp_path / "crate.glb"
    summary = api.export_gltf(sample, str(out), model="crate")
    assert summary["materials"] == ["crate_wood"] and summary["textures"] == ["crate"]
    doc, binary = load(out)
    (mat,) = doc["materials"]
    assert mat["name"] == "crate_wood"
    assert mat["pbrMetallicRoughness"]["baseColorFactor"] == [1.0, 1.0, 1.0, 1.0]  # albedo #ffffff
    tex = doc["textures"][mat["pbrMetallicRoughness"]["baseColorTexture"]["index"]]
    sampler = doc["samplers"][tex["sampler"]]
    crate_tex = read_asset_file(sample.cooked_path("texture", "crate")).body
    assert sampler["magFilter"] == 9728  # nearest, as crate_wood says
    assert sampler["wrapS"] == sampler["wrapT"] == (33071 if crate_tex.wrap else 10497)
    image = doc["images"][tex["source"]]
    bv = doc["bufferViews"][image["bufferView"]]
    png = binary[bv["byteOffset"] : bv["byteOffset"] + bv["byteLength"]]
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (crate_tex.width, crate_tex.height)
    # the part without a material (the crate's second part) has no glTF material
    assert sum("material" not in p for p in doc["meshes"][0]["primitives"]) == 1


MATERIALS = {
    "cut": '{"veduta": "material/1", "albedo": "#80ff8000", "alpha": "cutout", "cutoff": 0.25, "cull": "none"}',
    "glass": '{"veduta": "material/1", "albedo": "#40c0c0c0", "alpha": "blend", "unlit": true}',
    "plain": '{"veduta": "material/1", "albedo": "#808080"}',
}
PANEL = """{
  "veduta": "model/1",
  "parts": [
    { "shape": "plane", "size": [1, 1], "material": "cut" },
    { "shape": "box", "size": [1, 1, 1], "position": [0, 1, 0], "material": "glass" },
    { "shape": "box", "size": [1, 1, 1], "position": [0, 2, 0], "material": "plain" },
    { "shape": "box", "size": [1, 1, 1], "position": [0, 3, 0], "material": "ghost" }
  ]
}
"""


def test_alpha_cull_unlit_and_a_missing_material(game, tmp_path):
    for name, text in MATERIALS.items():
        game.write(f"materials/{name}.vmaterial", text)
    game.write("models/panel.vmodel", PANEL)
    project = Project.at(str(game.root))
    out = tmp_path / "panel.glb"
    summary = api.export_gltf(project, str(out), model="panel")
    assert [f["code"] for f in summary["findings"]] == ["EXPORT_MATERIAL_MISSING"]
    assert "ghost" in summary["findings"][0]["message"]
    doc, _ = load(out)
    mats = {m["name"]: m for m in doc["materials"]}
    assert mats["cut"]["alphaMode"] == "MASK" and mats["cut"]["alphaCutoff"] == 0.25
    assert mats["cut"]["doubleSided"] is True
    assert mats["cut"]["pbrMetallicRoughness"]["baseColorFactor"] == pytest.approx([1.0, 0.2158605, 0.0, 128 / 255])
    assert mats["glass"]["alphaMode"] == "BLEND" and "doubleSided" not in mats["glass"]
    assert mats["glass"]["extensions"] == {"KHR_materials_unlit": {}}
    assert doc["extensionsUsed"] == ["KHR_materials_unlit"]
    assert "alphaMode" not in mats["plain"] and "alphaCutoff" not in mats["plain"]
    assert mats["ghost"]["extras"] == {"veduta": {"missing": True}}
    (report,) = validate(out)
    assert problems(report) == []


def test_one_level_and_the_same_bytes_twice(sample, tmp_path):
    a, b = tmp_path / "a.glb", tmp_path / "b.glb"
    api.export_gltf(sample, str(a), model="tree")
    api.export_gltf(sample, str(b), model="tree")
    assert a.read_bytes() == b.read_bytes()
    doc, _ = load(a)
    assert [n["name"] for n in doc["nodes"]] == ["tree", "tree_lod1", "tree_lod2"]
    assert "translation" not in doc["nodes"][0]  # the full model stays on its cooked pivot
    assert doc["nodes"][2]["extras"]["veduta"] == {"level": 2, "distance": 35.0, "model": "tree_far"}
    one = tmp_path / "lod1.glb"
    s = api.export_gltf(sample, str(one), model="tree", lod=1)
    assert [m["triangles"] for m in s["meshes"]] == [40]
    doc, _ = load(one)
    assert [m["name"] for m in doc["meshes"]] == ["tree_lod1"] and "translation" not in doc["nodes"][0]
    with pytest.raises(VedutaError, match="levels 0..2"):
        api.export_gltf(sample, str(one), model="tree", lod=3)


def test_cli_errors_are_lines_not_tracebacks(game, tmp_path, capsys, monkeypatch):
    game.write("models/bad.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 0]}]}')
    monkeypatch.chdir(game.root)
    assert main(["export", "gltf", "ghost", "--out", str(tmp_path / "g.glb")]) == 2  # unknown asset: usage
    err = capsys.readouterr().err
    assert err.startswith('veduta: no model "ghost" under') and "Traceback" not in err
    assert main(["export", "gltf", "bad", "--out", str(tmp_path / "b.glb")]) == 1
    err = capsys.readouterr().err
    assert "model bad has errors" in err and "bad.vmodel:1:" in err
    assert not (tmp_path / "b.glb").exists()
    assert main(["export", "gltf", "crate", "--out", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err
    assert main(["export", "gltf", "--out", str(tmp_path / "x.glb")]) == 2
    assert main(["export", "gltf", "crate", "--out", str(tmp_path / "c.glb"), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"model": "crate"' in out and (tmp_path / "c.glb").exists()


def test_the_validator_does_find_errors(tmp_path):
    """The validator run is a real check: a file whose bounds lie is refused."""
    from veduta.tools.export.glb import FLOAT, Gltf

    g = Gltf("test")
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "<f4")
    view = g.view(pos.tobytes(), 34962)
    acc = g.accessor(view, 0, FLOAT, 3, "VEC3", ([0.0, 0.0, 0.0], [2.0, 1.0, 0.0]))  # max x is 1, not 2
    g.add("meshes", {"primitives": [{"attributes": {"POSITION": acc}}]})
    g.add("scenes", {"nodes": [g.add("nodes", {"mesh": 0})]})
    out = tmp_path / "liar.glb"
    out.write_bytes(g.glb())
    doc, _ = read_glb(out.read_bytes())
    assert doc["accessors"][0]["max"] == [2.0, 1.0, 0.0]
    (report,) = validate(out)
    assert report["issues"]["numErrors"] >= 1
    assert "ACCESSOR_MAX_MISMATCH" in {m["code"] for m in report["issues"]["messages"]}


def test_the_documented_command_validates_an_export(sample, tmp_path):
    """docs/export.md's `make gltf-validate FILES=...` (`npx gltf-validator`, which the docs once
    suggested, fails: the npm package is a library without a command)."""
    import subprocess

    from tests.export.helpers import ROOT

    good = tmp_path / "crate.glb"
    api.export_gltf(sample, str(good), model="crate")
    bad = tmp_path / "bad.glb"
    bad.write_bytes(b"not a glTF file")
    cp = subprocess.run(
        ["make", "-s", "-C", str(ROOT), "gltf-validate", f"FILES={good}"], capture_output=True, text=True, timeout=120
    )
    assert cp.returncode == 0 and cp.stdout.splitlines()[-1].startswith(f"{good}: valid (0 errors, 0 warnings"), (
        cp.stdout + cp.stderr
    )
    cp = subprocess.run(
        ["make", "-s", "-C", str(ROOT), "gltf-validate", f"FILES={good} {bad}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cp.returncode != 0 and f"{bad}: INVALID (Invalid data: could not detect glTF format.)" in cp.stdout, (
        cp.stdout + cp.stderr
    )
