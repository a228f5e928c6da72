"""`veduta export gltf --world`: chunks of `valley` as glTF, checked by the Khronos validator and
against the generator and the drawing model."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.export.helpers import load, problems, sample_game, validate
from veduta import api
from veduta.base.errors import UsageError, VedutaError
from veduta.base.project import Project
from veduta.compile.model.transform import rotation_matrix
from veduta.faces.cli.main import load_world, main
from veduta.formats.asset import read_asset_file
from veduta.tools.export.world import _quaternion
from veduta.world import draw
from veduta.world.entities import chunk_entities
from veduta.world.generator import Generator, chunk_name

#: around chunk [-4, 1] of valley: the village green and its well (chunk [-5, 0]), hamlet
#: cottages, the mill pond (chunk [-3, 2]: water and skirts), oaks, poppies and grass
CENTRE = (-4, 1)


@pytest.fixture(scope="module")
def valley(tmp_path_factory):
    root = tmp_path_factory.mktemp("valley")
    project = Project.at(str(sample_game(root)))
    out = root / "valley.glb"
    summary = api.export_gltf(project, str(out), world="valley", chunk=CENTRE, radius=1)
    world, prefabs = load_world(project, "valley")
    return project, out, summary, Generator(world, prefabs)


def _quat_matrix(q) -> np.ndarray:
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _triangles(doc: dict, mesh: int) -> int:
    return sum(doc["accessors"][p["indices"]]["count"] // 3 for p in doc["meshes"][mesh]["primitives"])


def test_valley_chunks_pass_the_validator(valley):
    _, out, summary, _ = valley
    assert summary["findings"] == []
    (report,) = validate(out)
    assert report["issues"]["numErrors"] == 0 and problems(report) == [], problems(report)


def test_ground_skirts_and_water_are_the_drawing_models(valley):
    _, out, summary, gen = valley
    doc, _ = load(out)
    meshes = {m["name"]: i for i, m in enumerate(doc["meshes"])}
    assert len(summary["chunks"]) == 9
    seen_water = seen_skirts = False
    for c in summary["chunks"]:
        cx, cz = c["chunk"]
        cg = draw.chunk_ground(gen, cx, cz)
        base = chunk_name(cx, cz)
        assert c["grid"] == cg.grid
        assert _triangles(doc, meshes[f"{base}_ground"]) == c["ground_triangles"] == cg.triangles[0]
        assert c["skirt_triangles"] == cg.skirt_triangles[0]
        assert c["water_triangles"] == len(draw.water_mesh(gen, cx, cz)["triangles"]) == cg.water_triangles
        if cg.skirt_triangles[0]:
            seen_skirts = True
            assert _triangles(doc, meshes[f"{base}_skirts"]) == cg.skirt_triangles[0]
        if c["water_triangles"]:
            seen_water = True
            assert _triangles(doc, meshes[f"{base}_water"]) == c["water_triangles"]
            water = doc["meshes"][meshes[f"{base}_water"]]["primitives"][0]
            assert doc["materials"][water["material"]]["name"] == "water"
        # the ground's primitives use the ground materials of the chunk's biomes
        names = {doc["materials"][p["material"]]["name"] for p in doc["meshes"][meshes[f"{base}_ground"]]["primitives"]}
        assert names == {gen.p.biome_grounds[b] for b in np.unique(cg.biome)}
    assert seen_water and seen_skirts


def test_entities_are_placed_as_the_generator_puts_them_sharing_one_mesh_per_model(valley):
    project, out, summary, gen = valley
    doc, _ = load(out)
    nodes = {n["name"]: n for n in doc["nodes"]}
    want = {}
    for c in summary["chunks"]:
        for e in chunk_entities(gen, *c["chunk"]):
            want.setdefault(e["name"], e)
    assert len(want) == summary["entities"] > 100
    kinds = set()
    for name, e in want.items():
        node = nodes[name]
        kinds.add(e["source"]["kind"])
        assert node.get("translation", [0.0, 0.0, 0.0]) == pytest.approx(e["position"], abs=1e-6)
        assert node.get("scale", [1.0, 1.0, 1.0]) == pytest.approx(e["scale"])
        r = _quat_matrix(node.get("rotation", [0, 0, 0, 1]))
        assert r == pytest.approx(rotation_matrix(tuple(e["rotation_deg"])), abs=1e-9)
        if e["model"]:
            mesh = doc["meshes"][node["mesh"]]
            assert mesh["name"] == e["model"]
    assert {"place", "site", "plant"} <= kinds
    # one mesh per model, with the cooked triangles and bounds
    models = [m for m in summary["meshes"]]
    assert len({m["name"] for m in doc["meshes"]}) == len(doc["meshes"])
    for m in models:
        cooked = read_asset_file(project.cooked_path("model", m["model"])).body
        assert m["triangles"] == cooked.triangles
        assert m["bounds"] == [[float(str(np.float32(v))) for v in cooked.bounds[k]] for k in (0, 1)]
        assert m["instances"] == sum(1 for e in want.values() if e["model"] == m["model"])
    grass = [i for i, m in enumerate(doc["meshes"]) if m["name"] == "grass_tuft"]
    assert len(grass) == 1 and sum(n.get("mesh") == grass[0] for n in doc["nodes"]) > 50


@settings(max_examples=200, deadline=None)
@given(st.tuples(*[st.floats(-3600, 3600, allow_nan=False)] * 3))
def test_entity_rotation_is_rz_ry_rx(angles):
    q = _quaternion(*angles)
    assert sum(v * v for v in q) == pytest.approx(1.0, abs=1e-12)
    assert _quat_matrix(q) == pytest.approx(rotation_matrix(angles), abs=1e-9)


def test_world_errors(valley, tmp_path, capsys, monkeypatch):
    project = valley[0]
    # a chunk the world does not have, or no such world: the caller's mistake (exit 2), as a --lod
    # a model does not have (docs/authoring-tools.md, exit codes); it was exit 1, a problem in assets
    with pytest.raises(UsageError, match="outside world valley"):
        api.export_gltf(project, str(tmp_path / "x.glb"), world="valley", chunk=(64, 0))
    with pytest.raises(UsageError, match='no world "atlantis"'):
        api.export_gltf(project, str(tmp_path / "x.glb"), world="atlantis", chunk=(0, 0))
    monkeypatch.chdir(project.root)
    assert main(["export", "gltf", "--world", "valley", "--chunk", "64,0", "--out", str(tmp_path / "x.glb")]) == 2
    err = capsys.readouterr().err
    assert err == "veduta: chunk 64,0 is outside world valley (chunks -64..63 on each axis)\n", err
    assert main(["export", "gltf", "--world", "valley", "--chunk", "0,-65", "--json", "--out", "x.glb"]) == 2
    assert json.loads(capsys.readouterr().out)["message"].startswith("chunk 0,-65 is outside world valley")
    assert not (tmp_path / "x.glb").exists() and not os.path.exists(os.path.join(project.root, "x.glb"))
    assert main(["export", "gltf", "--world", "valley", "--out", str(tmp_path / "x.glb")]) == 2
    assert (
        main(["export", "gltf", "--world", "valley", "--chunk", "0,0", "--lod", "1", "--out", str(tmp_path / "x.glb")])
        == 2
    )
    assert main(["export", "gltf", "--world", "atlantis", "--chunk", "-1,0", "--out", str(tmp_path / "x.glb")]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert not (tmp_path / "x.glb").exists()


def test_same_chunk_same_bytes(valley, tmp_path):
    project, gen = valley[0], valley[3]
    a, b = tmp_path / "a.glb", tmp_path / "b.glb"
    api.export_gltf(project, str(a), world="valley", chunk=(-5, 0))
    api.export_gltf(project, str(b), world="valley", chunk=(-5, 0))
    assert a.read_bytes() == b.read_bytes()
    doc, _ = load(a)
    (root,) = doc["scenes"][0]["nodes"]
    assert doc["nodes"][root]["name"] == "chunk_n5_0"
    assert doc["nodes"][root]["extras"] == {"veduta": {"chunk": [-5, 0], "grid": draw.chunk_ground(gen, -5, 0).grid}}


def _engine_level(gen, focus, cx: int, cz: int) -> tuple[int, float]:
    """The level the engine draws chunk [cx, cz]'s ground at, worked out here from the spec's
    words (world-format.md, Rendering): the camera placed around the focus cell's centre, the
    distance to the nearest point of the chunk's box (its cells, from its lowest skirt to its
    highest ground or water) as seen through a 60 degree lens, level k from lod_distance x 2^(k-1)."""
    rec = draw.camera_record(gen.world)
    assert rec["type"] == "perspective"
    cell, c = gen.p.cell_mm / 1000.0, gen.p.chunk
    fx, fz = focus
    h = gen.heights(fx, fz, 2, 2)
    centre = np.array([(fx + 0.5) * cell, int((h[0, 0] + h[1, 1]) >> 1) / 1000.0, (fz + 0.5) * cell])
    eye = centre + np.asarray(rec["position"])
    cg = draw.chunk_ground(gen, cx, cz)
    lo = np.array([cx * c * cell, cg.y_min / 1000.0, cz * c * cell])
    hi = np.array([(cx + 1) * c * cell, cg.y_max / 1000.0, (cz + 1) * c * cell])
    d = (
        float(np.linalg.norm(np.clip(eye, lo, hi) - eye))
        * np.tan(np.radians(rec["fov_deg"] / 2))
        / np.tan(np.radians(30))
    )
    lod = draw.lod_distance(gen)
    k = 0
    while k + 1 < len(cg.grids) and d >= lod * 2**k:
        k += 1
    return k, d


def test_distant_chunks_at_the_engines_levels_pass_the_validator(valley, tmp_path):
    project, _, full, gen = valley
    out = tmp_path / "levels.glb"
    r = api.export_gltf(project, str(out), world="valley", chunk=CENTRE, radius=2, levels=True)
    assert r["findings"] == [] and len(r["chunks"]) == 25
    (report,) = validate(out)
    assert report["issues"]["numErrors"] == 0 and problems(report) == [], problems(report)
    c = gen.p.chunk
    focus = (CENTRE[0] * c + c // 2, CENTRE[1] * c + c // 2)
    assert r["levels"] == {"focus": list(focus), "lod_distance": draw.lod_distance(gen)}
    doc, _ = load(out)
    meshes = {m["name"]: i for i, m in enumerate(doc["meshes"])}
    nodes = {n["name"]: n for n in doc["nodes"]}
    seen = set()
    for ch in r["chunks"]:
        cx, cz = ch["chunk"]
        k, d = _engine_level(gen, focus, cx, cz)
        cg = draw.chunk_ground(gen, cx, cz)
        base = chunk_name(cx, cz)
        assert (ch["level"], ch["grid"]) == (k, cg.grids[k]) and ch["distance_m"] == pytest.approx(d, abs=1e-3)
        assert _triangles(doc, meshes[f"{base}_ground"]) == ch["ground_triangles"] == cg.triangles[k]
        assert ch["skirt_triangles"] == cg.skirt_triangles[k]
        if cg.skirt_triangles[k]:
            assert _triangles(doc, meshes[f"{base}_skirts"]) == cg.skirt_triangles[k]
        assert nodes[base]["extras"]["veduta"] == {"chunk": [cx, cz], "grid": cg.grids[k], "level": k}
        seen.add(k)
    assert r["chunks"][12]["chunk"] == list(CENTRE) and r["chunks"][12]["level"] == 0
    assert {0, 1} <= seen  # the centre at full detail, the outer ring coarser
    # coarser ground only: the entities are those of the full-detail export of the same chunks
    assert r["ground_triangles"] < sum(draw.chunk_ground(gen, *ch["chunk"]).triangles[0] for ch in r["chunks"])
    inner = api.export_gltf(project, str(tmp_path / "inner.glb"), world="valley", chunk=CENTRE, radius=1, levels=True)
    assert (
        inner["entities"] == full["entities"]
        and inner["triangles"] - inner["ground_triangles"] - inner["skirt_triangles"]
        == full["triangles"] - full["ground_triangles"] - full["skirt_triangles"]
    )


def test_levels_go_with_a_world(valley, tmp_path, monkeypatch, capsys):
    project = valley[0]
    with pytest.raises(VedutaError, match="levels go with a world chunk"):
        api.export_gltf(project, str(tmp_path / "x.glb"), model="tree", levels=True)
    monkeypatch.chdir(project.root)
    assert main(["export", "gltf", "tree", "--levels", "--out", str(tmp_path / "x.glb")]) == 2
    assert (
        main(
            [
                "export",
                "gltf",
                "--world",
                "valley",
                "--chunk",
                "-4,1",
                "--radius",
                "2",
                "--levels",
                "--out",
                str(tmp_path / "x.glb"),
            ]
        )
        == 0
    )
    assert "ground at levels 0, 1, 2 by distance" in capsys.readouterr().out
