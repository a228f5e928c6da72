"""The reference graph (veduta/tools/refs.py): found from the declarations, exactly where the
compilers look, on files and on unsaved text."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from veduta.base.kinds import kind_of, name_of
from veduta.base.project import Project
from veduta.compile import AssetIndex, CompileContext, compile_source
from veduta.source.diagnostics import Report
from veduta.tools import schemawalk as sw
from veduta.tools.refs import RefGraph, source_refs

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
SAMPLES = sorted(
    str(p.relative_to(ASSETS)).replace(os.sep, "/")
    for p in ASSETS.rglob("*.v*")
    if ".cooked" not in p.parts and kind_of(str(p.relative_to(ASSETS)).replace(os.sep, "/"))
)


def _missing_warnings(rel: str, data: bytes) -> set[tuple]:
    """Where the compiler looks an asset up: compiled against an empty game, every reference
    is a MISSING_REFERENCE warning at its value, with its path, kind and name."""
    k = kind_of(rel)
    ctx = CompileContext(str(ASSETS), rel, k.name, name_of(rel), Report(rel), AssetIndex())
    compile_source(k.name, data, ctx)
    out = set()
    for d in ctx.report.items:
        if d.code == "MISSING_REFERENCE":
            kind, name = d.message.split(" ", 1)[0], d.message.split('"')[1]
            out.add((d.line, d.col, d.path, kind, name))
    return out


@pytest.mark.parametrize("rel", SAMPLES)
def test_every_reference_the_compiler_resolves_and_no_other(rel):
    """The declarations (fields.Reference -> the schema's format) and the compilers' look-ups
    agree on every sample source: same positions, paths, kinds and names."""
    data = (ASSETS / rel).read_bytes()
    refs = {(r.line, r.col, r.path, r.kind, r.name) for r in source_refs(data, kind_of(rel).name, rel) if r.asset}
    assert refs == _missing_warnings(rel, data)


def test_samples_have_references_of_every_asset_kind_that_can_be_named():
    graph = RefGraph.scan(Project.at(str(ROOT)))
    kinds = {r.kind for rel in graph.sources() for r in graph.of(rel)}
    assert kinds == {"model", "texture", "material", "prefab", "map", "image", "biome", "clip"}


def test_a_world_names_its_prefabs_models_materials_and_biomes():
    text = """{
  "veduta": "world/1",
  "biomes": [ { "name": "meadow", "ground": "grass" } ],
  "terrain": { "water": "water" },
  "vegetation": [ { "name": "f", "model": "poppy", "density": 0.1, "biomes": ["meadow"] },
                  { "name": "t", "prefab": "oak", "density": 0.1 } ],
  "scatter": [ { "prefab": "tree", "density": 0.01 } ],
  "sites": [ { "tag": "v", "prefabs": ["cottage", "camp"], "spacing": 32 } ],
  "places": [ { "name": "w", "prefab": "well", "cell": [0, 0] } ],
  "entities": [ { "name": "hero", "model": "hero", "material": "skin" } ]
}"""
    got = [(r.line, r.col, r.end_col, r.path, r.kind, r.name) for r in source_refs(text, "world", "worlds/w.vworld")]
    assert got == [
        (3, 45, 52, "biomes[0].ground", "material", "grass"),
        (4, 25, 32, "terrain.water", "material", "water"),
        (5, 43, 50, "vegetation[0].model", "model", "poppy"),
        (5, 79, 87, "vegetation[0].biomes[0]", "biome", "meadow"),
        (6, 44, 49, "vegetation[1].prefab", "prefab", "oak"),
        (7, 28, 34, "scatter[0].prefab", "prefab", "tree"),
        (8, 40, 49, "sites[0].prefabs[0]", "prefab", "cottage"),
        (8, 51, 57, "sites[0].prefabs[1]", "prefab", "camp"),
        (9, 40, 46, "places[0].prefab", "prefab", "well"),
        (10, 44, 50, "entities[0].model", "model", "hero"),
        (10, 64, 70, "entities[0].material", "material", "skin"),
    ]
    for r in source_refs(text, "world"):
        assert text[r.start : r.end] == f'"{r.name}"'


def test_a_part_of_each_shape_names_its_material():
    """Each model part's fields depend on its shape (if/then in the schema): the walk follows it."""
    text = """{ "veduta": "model/1", "parts": [
 { "shape": "box", "size": [1, 1, 1], "material": "a" },
 { "shape": "mirror", "axis": "x", "of": 0, "material": "b" },
 { "shape": "nonsense", "material": "c" },
 { "material": "d" }
], "lod": [ { "distance": 5, "model": "far" } ] }"""
    got = [(r.path, r.kind, r.name) for r in source_refs(text, "model")]
    # an unknown shape declares no fields, but material is common to all: the schema says it
    # only inside each shape's branch, so a part without a valid shape names nothing
    assert got == [
        ("parts[0].material", "material", "a"),
        ("parts[1].material", "material", "b"),
        ("lod[0].model", "model", "far"),
    ]


def test_columns_count_characters_and_empty_or_invalid_text_has_no_references():
    text = '{"veduta": "material/1", "name": "é", "texture": "crate"}'
    (r,) = source_refs(text, "material")
    assert (r.line, r.col, r.end_col) == (1, 50, 57)
    assert text[r.col - 1 : r.end_col - 1] == '"crate"'
    assert source_refs(text.encode(), "material")[0] == r
    assert source_refs('{"veduta": "material/1", "texture": "cr', "material") == []
    assert source_refs(b"\xff\xfe", "material") == []
    assert source_refs('{"veduta": "material/1", "texture": ""}', "material") == []
    assert source_refs("[1, 2]", "material") == []


def _game(tmp_path: Path) -> Project:
    files = {
        "models/crate.vmodel": '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], '
        '"material": "wood"}]}',
        "models/props/barrel.vmodel": '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], '
        '"material": "wood"}, {"shape": "box", "size": [1, 1, 1], "material": "iron"}]}',
        "materials/wood.vmaterial": '{"veduta": "material/1", "texture": "planks"}',
        "prefabs/camp.vprefab": '{"veduta": "prefab/1", "footprint": [2, 2], "entities": [{"name": "a", '
        '"model": "crate"}, {"name": "b", "model": "barrel"}]}',
    }
    for rel, text in files.items():
        p = tmp_path / "assets" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (tmp_path / "dodo.py").write_text("from veduta.dodo import *\n")
    return Project.at(str(tmp_path))


def test_graph_both_ways_and_what_is_missing(tmp_path):
    project = _game(tmp_path)
    g = RefGraph.scan(project)
    assert [(r.source, r.path) for r in g.to("material", "wood")] == [
        ("models/crate.vmodel", "parts[0].material"),
        ("models/props/barrel.vmodel", "parts[0].material"),
    ]
    assert [r.source for r in g.to_source("models/props/barrel.vmodel")] == ["prefabs/camp.vprefab"]
    assert [r.name for r in g.of("prefabs/camp.vprefab")] == ["crate", "barrel"]
    (barrel,) = [r for r in g.of("prefabs/camp.vprefab") if r.name == "barrel"]
    assert g.resolve(barrel) == "models/props/barrel.vmodel"
    assert [(r.source, r.kind, r.name) for r in g.missing()] == [
        ("materials/wood.vmaterial", "texture", "planks"),
        ("models/props/barrel.vmodel", "material", "iron"),
    ]
    assert g.names("model") == ["barrel", "crate"]
    assert open(project.source_path(barrel.source)).read()[barrel.start : barrel.end] == '"barrel"'
    assert barrel.to_json() == {
        "source": "prefabs/camp.vprefab",
        "line": 1,
        "col": 114,
        "end_col": 122,
        "path": "entities[1].model",
        "kind": "model",
        "name": "barrel",
    }


def test_graph_follows_buffers_and_the_disk(tmp_path):
    project = _game(tmp_path)
    g = RefGraph.scan(project, overlay={"models/crate.vmodel": '{"veduta": "model/1", "parts": []}'})
    assert g.of("models/crate.vmodel") == []  # the buffer wins over the file
    assert [r.source for r in g.to("material", "wood")] == ["models/props/barrel.vmodel"]
    # an unsaved new source counts as a source of its kind
    g.set_text("materials/iron.vmaterial", '{"veduta": "material/1"}')
    assert g.missing() == [r for r in g.missing() if r.name != "iron"]
    assert g.sources_of("material", "iron") == ["materials/iron.vmaterial"]
    # the buffer is closed: the file counts again; the unsaved source (no file) is gone
    g.release("models/crate.vmodel")
    g.release("materials/iron.vmaterial")
    g.refresh(project)
    assert [r.source for r in g.to("material", "wood")] == ["models/crate.vmodel", "models/props/barrel.vmodel"]
    assert g.sources_of("material", "iron") == []
    # a file changed on disk is read again; one deleted is forgotten; untouched ones are not read
    p = tmp_path / "assets" / "materials" / "wood.vmaterial"
    p.write_text('{"veduta": "material/1", "texture": "bark"}')
    os.utime(p, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    (tmp_path / "assets" / "prefabs" / "camp.vprefab").unlink()
    assert g.refresh(project) == ["materials/wood.vmaterial"]
    assert [r.name for r in g.of("materials/wood.vmaterial")] == ["bark"]
    assert g.to("model", "crate") == [] and "prefabs/camp.vprefab" not in g.sources()


def _state(g: RefGraph) -> tuple:
    """All a graph tells of its sources and names, without positions."""
    keys = sorted({key for s in g.sources() for key in g.names_in(s)} | {("model", "ghost"), ("material", "iron")})
    return (
        g.sources(),
        {s: sorted(g.names_in(s)) for s in g.sources()},
        {key: g.users(*key) for key in keys},
        {k: g.names(k) for k in ("model", "material", "texture", "prefab")},
        [(r.source, r.kind, r.name) for r in g.missing()],
    )


def test_a_copy_and_its_graph_change_apart(tmp_path):
    """:meth:`RefGraph.copy` shares the sets of sources naming each asset until one of the two
    graphs changes one: each, changed on its own after copies, tells what a graph scanned fresh
    and changed the same way tells."""
    project = _game(tmp_path)
    ops = {
        "original": [
            ("set", "prefabs/camp.vprefab", '{"veduta": "prefab/1", "entities": [{"name": "a", "model": "ghost"}]}'),
            ("set", "materials/iron.vmaterial", '{"veduta": "material/1", "texture": "planks"}'),
            ("copy",),
            ("forget", "models/crate.vmodel"),
        ],
        "copy": [
            ("set", "models/crate.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "material": "iron"}]}'),
            ("forget", "models/props/barrel.vmodel"),
            ("copy",),
            ("set", "models/ghost.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "material": "wood"}]}'),
        ],
    }

    def apply(g: RefGraph, steps: list) -> list[RefGraph]:
        copies = []
        for op, *args in steps:
            if op == "set":
                g.set_text(*args)
            elif op == "forget":
                g.forget(*args)
            else:
                copies.append(g.copy())
        return copies

    g = RefGraph.scan(project)
    c = g.copy()
    before = _state(RefGraph.scan(project))
    made = apply(g, ops["original"]) + apply(c, ops["copy"])
    for graph, steps in ((g, ops["original"]), (c, ops["copy"])):
        fresh = RefGraph.scan(project)
        apply(fresh, steps)
        assert _state(graph) == _state(fresh)
    assert _state(g) != _state(c) and _state(g) != before
    for copied, steps in zip(made, (ops["original"][:2], ops["copy"][:2]), strict=True):
        fresh = RefGraph.scan(project)
        apply(fresh, steps)
        assert _state(copied) == _state(fresh)  # as its graph was when copied, though that graph changed on


def test_schema_walk_fields_values_and_descriptions():
    part = sw.applying(sw.member(sw.applying(sw.top("model"), {}), "parts"), None, "array")
    box = sw.applying(sw.member(part, 0), {"shape": "box"}, "object")
    f = sw.fields(box)
    assert "size" in f and "radius" not in f and "material" in f
    assert sw.description((f["size"],)) == "[x, y, z] in meters, each > 0."
    assert sw.reference((f["material"],)) == "material"
    assert sw.values(sw.member(box, "uv")) == ["box", "planar", "cylindrical", "spherical"]
    # a hill has no depth: the branch rules it out
    feats = sw.applying(sw.member(sw.applying(sw.top("world"), {}), "features"), None, "array")
    lake = sw.fields(sw.applying(sw.member(feats, 0), {"kind": "lake"}, "object"))
    hill = sw.fields(sw.applying(sw.member(feats, 0), {"kind": "hill"}, "object"))
    assert "depth" not in hill and "depth" in lake and "height" in hill


def test_the_index_and_the_positions_agree_on_every_sample():
    """The graph's index (C decoder, plain walk) names what the positioned references name."""
    project = Project.at(str(ROOT))
    g = RefGraph.scan(project)
    for rel in SAMPLES:
        positioned = {
            (r.kind, r.name)
            for r in source_refs((ASSETS / rel).read_bytes(), kind_of(rel).name, rel)
            if r.asset or r.kind == "image"
        }
        indexed = {(k, n) for (k, n), users in g._to.items() if rel in users}
        assert indexed == positioned, rel
