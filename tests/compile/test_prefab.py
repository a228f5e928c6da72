"""compile_prefab: prefab/1 sources -> PRFB; footprint, tags, biomes, distances, entities, references."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compile.helpers import compile_in, documented_error_example, lines
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.formats import decode, encode
from veduta.formats.prefab import Distance, Prefab
from veduta.source.diagnostics import Report

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
MODEL = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}'


def prefab(**fields) -> str:
    return json.dumps({"veduta": "prefab/1", **fields}, indent=2)


def test_sample_prefab_compiles_cleanly_round_trips_and_is_deterministic():
    rel = "prefabs/camp.vprefab"
    index = AssetIndex.from_paths(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*.v*") if ".cooked" not in p.parts)

    def once():
        ctx = CompileContext(str(ASSETS), rel, "prefab", "camp", Report(rel), index)
        return compile_source("prefab", (ASSETS / rel).read_bytes(), ctx), ctx

    pf, ctx = once()
    assert pf is not None and ctx.report.items == [], lines(ctx)
    payload = encode(pf)
    assert decode(Prefab, payload) == pf and encode(decode(Prefab, payload)) == payload
    assert encode(once()[0]) == payload
    assert pf.footprint == (4, 4) and pf.tags == ["camp"] and pf.biomes == ["plain", "forest"]
    assert [(d.tag, d.meters) for d in pf.distances] == [("camp", 16), ("village", 24)]
    assert sorted(ctx.deps) == [
        "models/barrel.vmodel",
        "models/camp_crate.vmodel",
        "models/lamp_post.vmodel",
        "models/tree.vmodel",
    ]


def test_distances_are_sorted_by_tag_and_entities_kept_in_order(tmp_path):
    src = prefab(
        footprint=[2.5, 1],
        min_distance={"village": 30, "camp": 0, "inn": 4096},
        entities=[{"name": "z", "model": "box"}, {"name": "a", "parent": "z"}],
    )
    pf, ctx = compile_in(tmp_path, {"models/box.vmodel": MODEL, "prefabs/p.vprefab": src}, "prefabs/p.vprefab")
    assert ctx.report.items == []
    assert pf.distances == [
        Distance(tag="camp", meters=0),
        Distance(tag="inn", meters=4096),
        Distance(tag="village", meters=30),
    ]
    assert [e.name for e in pf.entities] == ["z", "a"] and pf.tags == [] and pf.biomes == []
    assert list(ctx.deps) == ["models/box.vmodel"]
    payload = encode(pf)
    assert encode(decode(Prefab, payload)) == payload


BAD = """{
  "veduta": "prefab/1",
  "footprint": [0, 2000],
  "tags": ["camp", "Camp"],
  "biomes": ["plain", "plain"],
  "min_distance": { "village": -1, "Inn": 5, "camp": 5000, "road": "far" },
  "entities": [ { "name": "hut", "model": "hut", "parent": "yard" } ],
  "rotation": 90
}"""


def test_every_problem_is_reported_at_once_with_exact_positions(tmp_path):
    pf, ctx = compile_in(tmp_path, {"prefabs/bad.vprefab": BAD}, "prefabs/bad.vprefab")
    assert pf is None
    assert lines(ctx) == [
        "prefabs/bad.vprefab:3:17: footprint[0]: 0 out of range (0, 1024]",
        "prefabs/bad.vprefab:3:20: footprint[1]: 2000 out of range (0, 1024]",
        'prefabs/bad.vprefab:4:20: tags[1]: "Camp" is not a valid tag (1-64 of a-z, 0-9, _, -, starting with a '
        "letter or digit)",
        'prefabs/bad.vprefab:5:23: biomes[1]: the string "plain" repeats item 0',
        "prefabs/bad.vprefab:6:32: min_distance.village: -1 out of range [0, 4096]",
        'prefabs/bad.vprefab:6:36: min_distance.Inn: "Inn" is not a valid tag (1-64 of a-z, 0-9, _, -, starting '
        "with a letter or digit)",
        "prefabs/bad.vprefab:6:54: min_distance.camp: 5000 out of range [0, 4096]",
        'prefabs/bad.vprefab:6:68: min_distance.road: expected a number, found the string "far"',
        'prefabs/bad.vprefab:7:43: entities[0].model: warning: model "hut" does not exist (not checked)',
        'prefabs/bad.vprefab:7:60: entities[0].parent: "yard" is not the name of an entity here',
        "prefabs/bad.vprefab:8:15: rotation: unknown field",
    ]


def test_footprint_is_required(tmp_path):
    pf, ctx = compile_in(tmp_path, {"prefabs/p.vprefab": '{"veduta": "prefab/1"}'}, "prefabs/p.vprefab")
    assert pf is None and lines(ctx) == ["prefabs/p.vprefab:1:1: footprint: required field is missing"]


def test_a_missing_model_is_a_warning_and_a_missing_dependency(tmp_path):
    src = prefab(footprint=[1, 1], entities=[{"name": "a", "model": "ghost"}])
    pf, ctx = compile_in(tmp_path, {"prefabs/p.vprefab": src}, "prefabs/p.vprefab")
    assert pf is not None and [d.severity for d in ctx.report.items] == ["warning"]
    assert 'model "ghost" does not exist' in lines(ctx)[0]
    assert ctx.deps == {"models/ghost.vmodel": None}


def test_the_documented_error_example_reports_what_the_docs_say(tmp_path):
    rel, src, expected = documented_error_example("prefab.md")
    body, ctx = compile_in(tmp_path, {rel: src}, rel)
    assert body is None and lines(ctx) == expected
