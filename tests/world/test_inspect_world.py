"""inspect world and inspect prefab: every finding both ways, the spec's example world and the sample valley."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from PIL import Image

from tests.world.test_draw import MODELS
from tests.world.worlds import (
    Biome,
    Entity,
    Place,
    Prefab,
    Scatter,
    Site,
    Vegetation,
    World,
    example_prefabs,
    example_world,
)
from veduta.faces.cli.main import main
from veduta.tools.inspect_world import report_world
from veduta.world import Generator
from veduta.world import draw as D

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "compile" / "fixtures" / "spec_example.vworld"

ORTHO = {
    "type": "orthographic",
    "fov_deg": 0.0,
    "size": 12.0,
    "near": 0.1,
    "far": 100.0,
    "position": [0.0, 30.0, 0.0],
    "look_at": [0.0, 0.0, 0.0],
}


class Cam:
    """A WRLD camera record."""

    def __init__(self, ortho=True, size=12.0, far=100.0, fov=0.0, position=(0.0, 30.0, 0.0)):
        self.ortho, self.size, self.far, self.fov_deg, self.near = ortho, size, far, fov, 0.1
        self.position, self.look_at = position, (0.0, 0.0, 0.0)


def report(world=None, prefabs=None, models=None, **kw):
    w = world if world is not None else example_world(camera=Cam())
    return report_world(
        Generator(w, example_prefabs() if prefabs is None else prefabs), MODELS if models is None else models, **kw
    )


def codes(r, severity=None):
    return [f["code"] for f in r["findings"] if severity is None or f["severity"] == severity]


@pytest.fixture(scope="module")
def example_report():
    return report()


def test_the_example_world_report(example_report):
    r = example_report
    assert [v["name"] for v in r["views"]][:2] == ["start", "place capital"]
    assert r["loaded"] == {"chunks": 9, "chunks_max": 16, "radius_m": 16.0, "reach_m": 8.0}
    assert r["places"][0] == {
        "name": "capital",
        "prefab": "city",
        "cell": [120, -40],
        "rotation": 90,
        "footprint": [116, -46, 9, 12],
    }
    sev = [f["severity"] for f in r["findings"]]
    assert sev == sorted(sev, key=["error", "warning", "note"].index)
    assert not codes(r, "error")
    json.dumps(r)  # plain data


def test_prefab_missing_both_ways(example_report):
    pf = example_prefabs()
    del pf["tree"], pf["village"]
    r = report(prefabs=pf)
    missing = [f for f in r["findings"] if f["code"] == "WORLD_PREFAB_MISSING"]
    assert {(f["prefab"], f["rule"]) for f in missing} == {("tree", "scatter[0]"), ("village", "sites[0]")}
    assert "WORLD_PREFAB_MISSING" not in codes(example_report)


def test_place_prefab_missing_is_reported_once_with_its_cell():
    pf = example_prefabs()
    del pf["city"]
    r = report(prefabs=pf)
    f = [f for f in r["findings"] if f["code"] == "WORLD_PREFAB_MISSING"]
    assert len(f) == 1 and f[0]["place"] == "capital" and f[0]["cell"] == [120, -40]


def test_model_missing_and_invalid_both_ways(example_report):
    models = dict(MODELS)
    del models["grass_tuft"], models["keep"]
    r = report(models=models, invalid_models={"keep"})
    by = {f["model"]: f for f in r["findings"] if f["code"] in ("WORLD_MODEL_MISSING", "WORLD_MODEL_INVALID")}
    assert by["grass_tuft"]["code"] == "WORLD_MODEL_MISSING" and "vegetation rule grass" in by["grass_tuft"]["message"]
    assert by["keep"]["code"] == "WORLD_MODEL_INVALID" and "prefab city" in by["keep"]["message"]
    assert not {"WORLD_MODEL_MISSING", "WORLD_MODEL_INVALID"} & set(codes(example_report))


def test_place_findings_in_the_report_pairs_once(example_report):
    w = example_world(
        camera=Cam(),
        places=[
            Place("capital", "city", 120, -40, 90),
            Place("market", "village", 122, -40),
            Place("jetty", "village", -30, 20),
            Place("inn", "village", 140, -40),
        ],
    )
    r = report(world=w)
    overlap = [f for f in r["findings"] if f["code"] == "WORLD_PLACE_OVERLAP"]
    assert [(f["place"], f["other"]) for f in overlap] == [("capital", "market")]
    dist = [f for f in r["findings"] if f["code"] == "WORLD_PLACE_DISTANCE"]
    assert ("capital", "inn") in [(f["place"], f["other"]) for f in dist]
    assert any(f["code"] == "WORLD_PLACE_WATER" and f["place"] == "jetty" for f in r["findings"])
    assert not {"WORLD_PLACE_OVERLAP", "WORLD_PLACE_DISTANCE", "WORLD_PLACE_WATER"} & set(codes(example_report))


def test_view_short_both_ways(example_report):
    r = report(world=example_world(camera=Cam(ortho=False, far=100.0, fov=60.0, position=(0.0, 5.0, 10.0))))
    f = [f for f in r["findings"] if f["code"] == "WORLD_VIEW_SHORT"]
    assert f and f[0]["loaded_m"] == 16.0 and f[0]["reach_m"] > 16
    assert "WORLD_VIEW_SHORT" not in codes(example_report)
    # an orthographic size wider than the loaded chunks
    assert "WORLD_VIEW_SHORT" in codes(report(world=example_world(camera=Cam(size=30.0))))


def test_chunk_budget_both_ways(example_report):
    f = [f for f in example_report["findings"] if f["code"] == "WORLD_CHUNK_BUDGET"]
    assert f and f[0]["triangles"] == example_report["worst_view"]["triangles"] > D.FRAME_BUDGET
    assert f[0]["view"] in f[0]["message"]
    quiet = report(world=World(biomes=[Biome("plain", "grass", 1)], camera=Cam()), prefabs={})
    assert "WORLD_CHUNK_BUDGET" not in codes(quiet) and quiet["worst_view"]["triangles"] <= D.FRAME_BUDGET


def test_chunk_budget_counts_the_chunks_the_engine_keeps_loaded():
    """A 1500-triangle tower two chunks east of the start: outside the start's window (view 1),
    but the engine keeps that chunk loaded after the hero came from the east, and a wide camera
    sees it; the budget is of the worst the engine can have loaded."""
    from veduta.tools.inspect_world import _view_findings

    prefabs = {"tower": Prefab("tower", (2.0, 2.0), entities=[Entity("tower", model="tower")])}
    models = dict(MODELS, tower=D.ModelDraw("tower", (1500,), (), 0.0, 5.0))

    def start_view(tower_x):
        w = World(
            biomes=[Biome("plain", "grass", 1)], camera=Cam(size=80.0), places=[Place("tall", "tower", tower_x, 8)]
        )
        gen = Generator(w, prefabs)
        views = D.Drawer(gen, models, D.camera_record(w)).views([("start", (8, 8))])
        return views, _view_findings(views)

    (start,), (f,) = start_view(40)
    assert start["window"] == {"chunks": 9, "triangles": 9 * 2}  # the tower's chunk is not in the window
    assert start["kept"][0] == 1 and start["chunks"] == 16 and start["triangles"] == 16 * 2 + 1500
    assert f["code"] == "WORLD_CHUNK_BUDGET" and f["triangles"] == 1532
    assert "draws 1532 triangles with the chunks the engine keeps loaded east and " in f["message"]
    assert "(the window alone: 18)" in f["message"]
    # west of the window likewise; three chunks away the engine never has it loaded with this focus
    (west,), _ = start_view(-24)
    assert west["kept"][0] == -1 and west["triangles"] == 1532
    (far,), findings = start_view(56)
    assert far["triangles"] == 16 * 2 and far["entities"] == 0 and not findings


def test_more_views_at_cells(tmp_path):
    out = tmp_path / "views.jsonl"
    r = report(
        world=World(biomes=[Biome("plain", "grass", 1)], camera=Cam(), extent=2),
        prefabs={},
        at=[(5, -7)],
        all_views=True,
        views_file=str(out),
    )
    assert [v["name"] for v in r["views"]] == ["start", "at 5,-7"] and r["views_file"] == str(out)
    listed = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["name"] for v in listed[:3]] == ["start", "at 5,-7", "chunk -2,-2"] and len(listed) == 2 + 16
    assert listed[-1]["name"] == "chunk 1,1" and listed[-1]["focus"] == [24, 24]
    a = r["all_views"]
    assert a["views"] == 16 and a["over_budget"] == 0 and a["over"] == [] and len(a["worst"]) == 16
    assert sum(a["histogram"]["views"]) == 16 and a["histogram"]["bin"] == 300


def test_site_never_both_ways(example_report):
    w = example_world(camera=Cam(), sites=[Site("village", ["village"], ["forest"], 48, 0.5)])
    f = [f for f in report(world=w)["findings"] if f["code"] == "WORLD_SITE_NEVER"]
    assert f and f[0]["rule"] == "sites[0]" and "biome forest" in f[0]["message"]
    assert "WORLD_SITE_NEVER" not in codes(example_report)


def test_biome_absent_and_idle_rules_both_ways(example_report):
    w = example_world(
        camera=Cam(), biomes=[Biome("plain", "grass", 1000), Biome("forest", "moss", 1)], biome_scale=4096
    )
    r = report(world=w)
    assert [f["biome"] for f in r["findings"] if f["code"] == "WORLD_BIOME_ABSENT"] == ["forest"]
    assert [f["rule"] for f in r["findings"] if f["code"] == "WORLD_RULE_IDLE"] == ["scatter[0]"]
    assert not {"WORLD_BIOME_ABSENT", "WORLD_RULE_IDLE"} & set(codes(example_report))


def test_vegetation_outside_both_ways(example_report):
    w = World(
        biomes=[Biome("plain", "grass", 1)],
        camera=Cam(),
        extent=1,
        vegetation=[
            Vegetation("edge", model="grass_tuft", area=True, x=10, z=0, radius=12),
            Vegetation("inner", model="grass_tuft", area=True, x=0, z=0, radius=4),
        ],
    )
    f = [f for f in report(world=w, prefabs={})["findings"] if f["code"] == "WORLD_VEGETATION_OUTSIDE"]
    assert [(x["rule"], x["severity"]) for x in f] == [("vegetation[0]", "note")]
    assert "WORLD_VEGETATION_OUTSIDE" not in codes(example_report)


def test_flora_without_draw_distance_or_lod_both_ways():
    models = dict(MODELS, grass_tuft=D.ModelDraw("grass_tuft", (6,), (), 0.0, 0.35))
    r = report(models=models)
    assert [f["model"] for f in r["findings"] if f["code"] == "WORLD_FLORA_NO_DRAW_DISTANCE"] == ["grass_tuft"]
    assert [f["model"] for f in r["findings"] if f["code"] == "WORLD_FLORA_NO_LOD"] == ["grass_tuft"]  # poppy has one
    models = dict(MODELS, grass_tuft=D.ModelDraw("grass_tuft", (6, 2), (10.0,), 30.0, 0.35))
    r = report(models=models)
    assert not {"WORLD_FLORA_NO_DRAW_DISTANCE", "WORLD_FLORA_NO_LOD"} & set(codes(r))


# -- through a project: the spec's example world and the sample valley --------------------------


def _game(tmp_path, with_samples: bool) -> Path:
    root = tmp_path / "game"
    if with_samples:
        shutil.copytree(ROOT / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "assets" / "worlds").mkdir(parents=True, exist_ok=True)
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    return root


def test_the_spec_example_world(tmp_path, monkeypatch, capsys):
    root = _game(tmp_path, with_samples=False)
    (root / "assets" / "worlds" / "overworld.vworld").write_text(SPEC.read_text())
    monkeypatch.chdir(root)
    assert main(["inspect", "world", "overworld", "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert r["status"] == "findings" and r["source"] == "worlds/overworld.vworld"
    missing = {f["prefab"] for f in r["findings"] if f["code"] == "WORLD_PREFAB_MISSING"}
    assert missing == {"oak", "tree", "village", "city"}
    assert {f["model"] for f in r["findings"] if f["code"] == "WORLD_MODEL_MISSING"} == {"grass_tuft", "poppy", "hero"}
    assert "WORLD_VIEW_SHORT" not in codes(r)  # orthographic, size 12, within 16 m
    # the place whose prefab is missing still owns its cell
    assert main(["world", "query", "overworld", "120,-40"]) == 0
    q = json.loads(capsys.readouterr().out)
    assert q["owner"]["name"] == "capital" and abs(q["drawn_height"] - q["height"]) <= 0.06


def test_the_sample_valley(tmp_path, monkeypatch, capsys):
    root = _game(tmp_path, with_samples=True)
    monkeypatch.chdir(root)
    sheet = tmp_path / "sheet" / "valley.png"
    sheet.parent.mkdir()  # no folder is made for an output
    t0 = time.perf_counter()
    assert main(["inspect", "world", "valley", "--json", "--sheet", str(sheet)]) == 0
    took = time.perf_counter() - t0
    r = json.loads(capsys.readouterr().out)
    assert took < 60  # about 3 s alone (including the cook); generous on a shared machine
    assert r["status"] == "ok" and not codes(r, "error")
    assert [v["name"] for v in r["views"]] == ["start", "place village_well", "place keeper_cottage"]
    assert r["loaded"]["chunks"] == 25 and r["loaded"]["reach_m"] < r["loaded"]["radius_m"]
    box = r["sheet_drawn"]["map_box"]
    assert (box[2] - box[0], box[3] - box[1]) == (1024, 1024) and Image.open(sheet).size > (1024, 1024)
    assert {lb["text"] for lb in r["sheet_drawn"]["labels"]} >= {"village_well", "keeper_cottage"}
    assert not r["sheet_drawn"]["dropped"]
    assert main(["inspect", "world", "valley"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("world valley (worlds/valley.vworld)") and "place village_well" in text
    assert main(["inspect", "world", "nowhere"]) == 2
    assert 'no world "nowhere" under ' in capsys.readouterr().err


def test_inspect_prefab(tmp_path, monkeypatch, capsys):
    root = _game(tmp_path, with_samples=True)
    (root / "assets" / "prefabs" / "odd.vprefab").write_text(
        json.dumps(
            {
                "veduta": "prefab/1",
                "footprint": [2, 2],
                "entities": [
                    {"name": "a", "kind": "prop", "model": "nothing_here", "position": [3, 0, 0]},
                    {"name": "b", "kind": "prop", "model": "crate", "material": "no_such_material"},
                    {"name": "c", "kind": "prop", "model": "crate", "position": [0, 0, 0.5], "parent": "b"},
                ],
            }
        )
    )
    monkeypatch.chdir(root)
    assert main(["inspect", "prefab", "cottage", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["footprint"] == [6.0, 7.0] and r["findings"] == []
    assert r["triangles"] == sum(e["triangles"] for e in r["entities"]) > 0
    assert main(["inspect", "prefab", "odd", "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert codes(r) == ["PREFAB_MATERIAL_MISSING", "PREFAB_MODEL_MISSING", "PREFAB_ENTITY_OUTSIDE"]
    assert main(["inspect", "prefab", "camp", "--json"]) == 0
    assert codes(json.loads(capsys.readouterr().out)) == []  # (the sample game is within budget)
    # three of the spec's crates (410 triangles each) are over the 1200 a frame draws
    (root / "assets" / "prefabs" / "depot.vprefab").write_text(
        json.dumps(
            {
                "veduta": "prefab/1",
                "footprint": [4, 4],
                "entities": [
                    {"name": f"c{i}", "kind": "prop", "model": "crate", "position": [i - 1, 0, 0]} for i in range(3)
                ],
            }
        )
    )
    assert main(["inspect", "prefab", "depot", "--json"]) == 0
    assert codes(json.loads(capsys.readouterr().out)) == ["PREFAB_OVER_BUDGET"]
    assert main(["inspect", "prefab", "oak"]) == 0
    assert capsys.readouterr().out.startswith("prefab oak (prefabs/oak.vprefab)")
    assert main(["inspect", "prefab", "nowhere"]) == 2
    # a model whose source has errors
    (root / "assets" / "models" / "broken.vmodel").write_text('{ "veduta": "model/1", "parts": [] }')
    (root / "assets" / "prefabs" / "shed.vprefab").write_text(
        json.dumps(
            {"veduta": "prefab/1", "footprint": [1, 1], "entities": [{"name": "a", "kind": "prop", "model": "broken"}]}
        )
    )
    assert main(["inspect", "prefab", "shed", "--json"]) == 1
    assert codes(json.loads(capsys.readouterr().out)) == ["PREFAB_MODEL_INVALID"]


def test_prefab_empty_and_findings_of_models():
    from veduta.tools.inspect_world import report_prefab

    r = report_prefab(Prefab("p", (1.0, 1.0), entities=[]), {})
    assert codes(r) == ["PREFAB_EMPTY"]
    bad = {
        "status": "findings",
        "triangles": 10,
        "lod_triangles": [],
        "draw_distance": 0.0,
        "findings": [{"code": "MESH_OVER_BUDGET", "severity": "error", "message": "x"}],
    }
    r = report_prefab(Prefab("p", (1.0, 1.0), entities=[Entity("e", model="m")]), {"m": bad})
    assert codes(r) == ["PREFAB_MODEL_FINDINGS"] and "MESH_OVER_BUDGET" in r["findings"][0]["message"]
    ok = dict(bad, status="ok", findings=[])
    assert codes(report_prefab(Prefab("p", (1.0, 1.0), entities=[Entity("e", model="m")]), {"m": ok})) == []


def test_scatter_rule_uses_prefab_biomes():
    # a scatter prefab limited to a biome absent from the area: idle; the sample's own are fine
    pf = example_prefabs()
    pf["fir"] = Prefab("fir", (1.0, 1.0), biomes=["forest"], entities=[Entity("fir", model="tree")])
    w = example_world(
        camera=Cam(),
        biomes=[Biome("plain", "grass", 1000), Biome("forest", "moss", 1)],
        biome_scale=4096,
        scatter=[Scatter("fir", None, 0.1)],
    )
    assert "WORLD_RULE_IDLE" in codes(report(world=w, prefabs=pf))


def test_the_report_is_deterministic(example_report):
    assert json.dumps(report(), sort_keys=False) == json.dumps(example_report, sort_keys=False)


def test_a_world_with_errors_is_invalid(tmp_path, monkeypatch, capsys):
    root = _game(tmp_path, with_samples=False)
    (root / "assets" / "worlds" / "bad.vworld").write_text('{ "veduta": "world/1", "seed": -1, "biomes": [] }')
    monkeypatch.chdir(root)
    assert main(["inspect", "world", "bad"]) == 1  # a problem in the asset
    err = capsys.readouterr().err
    assert "bad.vworld" in err and "seed" in err
    assert main(["inspect", "world", "bad", "--json"]) == 1
    r = json.loads(capsys.readouterr().out)
    assert r["status"] == "invalid" and r["errors"]
    # the source's errors are findings too (for a reader of findings alone), located as the errors are
    assert r["findings"] and all(f["severity"] == "error" and f["code"] for f in r["findings"])
    assert len(r["findings"]) == len(r["errors"])
    assert all(f["message"] == e["text"] and f["line"] == e["line"] for f, e in zip(r["findings"], r["errors"]))
    assert any("seed" in f["path"] for f in r["findings"])


def test_more_focus_cells_than_the_limit_is_a_usage_mistake(tmp_path, monkeypatch, capsys):
    """--at (and the MCP tool's at) take at most MAX_FOCI cells, each a view of the report: past
    that, exit 2 and one line saying the limit, before the world is read; at the limit it runs."""
    from veduta.base.argtypes import MAX_FOCI

    root = _game(tmp_path, with_samples=True)
    monkeypatch.chdir(root)
    many = [a for _ in range(MAX_FOCI + 1) for a in ("--at", "1,2")]
    assert main(["inspect", "world", "valley", *many]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"veduta: {MAX_FOCI + 1:,} focus cells (at, --at), more than the limit of {MAX_FOCI:,}: "
        "for a view at the centre of every chunk, ask for all views (all_views, --all)"
    ), err
    assert main(["inspect", "world", "valley", "--json", *many[2:]]) == 0
    r = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in r["views"]].count("at 1,2") == MAX_FOCI
