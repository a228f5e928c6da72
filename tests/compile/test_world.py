"""compile_world: world/1 sources -> WRLD; ranges, defaults, biome names, prefab sizes, references;
and ``veduta world query|map`` end to end on a copy of the sample game."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import games
from tests.compile.helpers import compile_in, documented_error_example, lines
from tests.world.worlds import example_world
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.compile.world import DEFAULTS, FEATURE_DEFAULTS, TERRAIN_DEFAULTS
from veduta.container.binary import to_f32
from veduta.formats import decode, encode
from veduta.formats.world import World
from veduta.source.diagnostics import Report
from veduta.world.params import world_params
from veduta.world.query import query

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPEC_EXAMPLE = (FIXTURES / "spec_example.vworld").read_text()
MATERIAL = '{"veduta": "material/1"}'
MODEL = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}'


def world(**fields) -> str:
    fields.setdefault(
        "biomes",
        [{"name": "plain", "ground": "grass", "weight": 3}, {"name": "forest", "ground": "grass", "weight": 2}],
    )
    return json.dumps({"veduta": "world/1", **fields}, indent=2)


def prefab(footprint, **fields) -> str:
    return json.dumps({"veduta": "prefab/1", "footprint": footprint, **fields})


def compile_world_source(tmp_path, src: str, extra: dict | None = None, name: str = "w"):
    files = {"materials/grass.vmaterial": MATERIAL, f"worlds/{name}.vworld": src, **(extra or {})}
    return compile_in(tmp_path, files, f"worlds/{name}.vworld")


def as_f32(obj):
    """A copy of a test dataclass world with every float rounded to f32, as WRLD stores them."""
    if dataclasses.is_dataclass(obj):
        return dataclasses.replace(obj, **{f.name: as_f32(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    if isinstance(obj, list):
        return [as_f32(x) for x in obj]
    return to_f32(obj) if isinstance(obj, float) else obj


def sample_index() -> AssetIndex:
    return AssetIndex.from_paths(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*.v*") if ".cooked" not in p.parts)


# -- the spec's example and the sample ------------------------------------------------------------


def test_the_spec_example_cooks_on_its_own_with_a_warning_for_each_missing_asset(tmp_path):
    w, ctx = compile_in(tmp_path, {"worlds/overworld.vworld": SPEC_EXAMPLE}, "worlds/overworld.vworld")
    assert w is not None and ctx.report.errors == []
    f = "worlds/overworld.vworld"
    assert lines(ctx) == [
        f'{f}:12:46: biomes[0].ground: warning: material "grass" does not exist (not checked)',
        f'{f}:13:46: biomes[1].ground: warning: material "moss" does not exist (not checked)',
        f'{f}:19:47: vegetation[0].model: warning: model "grass_tuft" does not exist (not checked)',
        f'{f}:20:52: vegetation[1].prefab: warning: prefab "oak" does not exist (not checked)',
        f'{f}:21:49: vegetation[2].model: warning: model "poppy" does not exist (not checked)',
        f'{f}:22:28: scatter[0].prefab: warning: prefab "tree" does not exist (not checked)',
        f'{f}:23:48: sites[0].prefabs[0]: warning: prefab "village" does not exist (not checked)',
        f'{f}:24:47: places[0].prefab: warning: prefab "city" does not exist (not checked)',
        f'{f}:25:64: entities[0].model: warning: model "hero" does not exist (not checked)',
        f'{f}:25:84: entities[0].material: warning: material "hero" does not exist (not checked)',
    ]
    # every missing asset is a dependency, so adding it makes the world stale
    assert sorted(ctx.deps) == [
        "materials/grass.vmaterial",
        "materials/hero.vmaterial",
        "materials/moss.vmaterial",
        "models/grass_tuft.vmodel",
        "models/hero.vmodel",
        "models/poppy.vmodel",
        "prefabs/city.vprefab",
        "prefabs/oak.vprefab",
        "prefabs/tree.vprefab",
        "prefabs/village.vprefab",
    ]
    assert all(v is None for v in ctx.deps.values())


def test_the_spec_example_compiles_to_every_field_it_writes(tmp_path):
    w, _ = compile_in(tmp_path, {"worlds/overworld.vworld": SPEC_EXAMPLE}, "worlds/overworld.vworld")
    assert (w.name, w.seed, w.cell, w.chunk, w.extent, w.view, w.biome_scale) == ("overworld", 7, 1, 16, 512, 1, 64)
    assert w.camera.ortho and w.camera.size == 12 and w.camera.fov_deg == 0 and w.camera.position == (0, 30, 0)
    assert w.background == 0xFF202830
    assert [(b.name, b.ground, b.weight) for b in w.biomes] == [("plain", "grass", 3), ("forest", "moss", 2)]
    t = w.terrain
    assert (t.relief, t.relief_scale, t.sea, t.sea_level, t.water, t.lod_distance) == (1.5, 48, False, 0, "", 24)
    hill, plain, lake, sea = w.features
    assert (hill.kind, hill.x, hill.z, hill.radius, hill.has_height, hill.height) == ("hill", 10, -60, 24, True, 9)
    assert (plain.has_height, plain.falloff) == (False, 4)
    assert (lake.has_height, lake.depth, lake.falloff) == (False, 2.5, 4)
    assert (sea.has_height, sea.height, sea.depth, sea.falloff) == (True, -0.5, 8, 8)
    grass, oaks, poppies = w.vegetation
    assert (grass.model, grass.prefab, grass.biomes, grass.area) == ("grass_tuft", "", ["plain"], False)
    assert (oaks.prefab, oaks.area, oaks.x, oaks.z, oaks.radius) == ("oak", True, 40, 10, 12)
    assert (poppies.scale_min, poppies.scale_max) == pytest.approx((0.7, 1.3))
    assert [(p.name, p.prefab, p.x, p.z, p.rotation) for p in w.places] == [("capital", "city", 120, -40, 90)]
    assert w.sites[0].spacing == 48 and w.scatter[0].biomes == ["forest"]
    assert [e.name for e in w.entities] == ["player"]


def test_the_spec_example_gives_the_generator_the_world_its_tests_assume(tmp_path):
    """Defaults meet the generator: the compiled example has the integer parameters of the generator
    tests' hand-written example world (tests/world/worlds.py), field for field."""
    w, _ = compile_in(tmp_path, {"worlds/overworld.vworld": SPEC_EXAMPLE}, "worlds/overworld.vworld")
    assert world_params(w) == world_params(as_f32(example_world()))
    assert world_params(decode(World, encode(w))) == world_params(w)


def test_the_sample_world_compiles_cleanly_round_trips_and_is_deterministic():
    rel = "worlds/valley.vworld"
    index = sample_index()

    def once():
        ctx = CompileContext(str(ASSETS), rel, "world", "valley", Report(rel), index)
        return compile_source("world", (ASSETS / rel).read_bytes(), ctx), ctx

    w, ctx = once()
    assert w is not None and ctx.report.items == [], lines(ctx)
    payload = encode(w)
    assert decode(World, payload) == w and encode(decode(World, payload)) == payload
    assert encode(once()[0]) == payload
    assert {f.kind for f in w.features} == {"hill", "plain", "lake", "sea"}
    assert {bool(v.prefab) for v in w.vegetation} == {True, False} and w.scatter and w.sites and w.places
    assert "prefabs/cottage.vprefab" in ctx.deps and "models/grass_tuft.vmodel" in ctx.deps


def test_the_sample_world_gives_the_same_bytes_under_any_hash_seed():
    code = (
        "import sys; from veduta.base.project import AssetIndex; "
        "from veduta.compile import CompileContext, compile_source; "
        "from veduta.formats import encode; from veduta.source.diagnostics import Report; "
        "from tests.compile.test_world import ASSETS, sample_index; rel = 'worlds/valley.vworld'; "
        "ctx = CompileContext(str(ASSETS), rel, 'world', 'valley', Report(rel), sample_index()); "
        "sys.stdout.write(encode(compile_source('world', (ASSETS / rel).read_bytes(), ctx)).hex())"
    )
    outs = set()
    for seed in ("0", "1", "12345"):
        cp = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert cp.returncode == 0, cp.stderr
        outs.add(cp.stdout)
    assert len(outs) == 1


# -- defaults ------------------------------------------------------------------------------------


def test_a_minimal_world_gets_the_documented_defaults(tmp_path):
    w, ctx = compile_world_source(tmp_path, '{"veduta": "world/1", "biomes": [{"name": "meadow", "ground": "grass"}]}')
    assert ctx.report.items == [], lines(ctx)
    assert (w.seed, w.cell, w.chunk, w.extent, w.view, w.biome_scale, w.background) == tuple(
        DEFAULTS[k] for k in ("seed", "cell", "chunk", "extent", "view", "biome_scale", "background")
    )
    assert w.extent * w.chunk * w.cell == 8192
    assert [(b.name, b.weight) for b in w.biomes] == [("meadow", 1)]
    t = w.terrain
    assert {k: getattr(t, k) for k in TERRAIN_DEFAULTS} == TERRAIN_DEFAULTS
    assert not w.camera.ortho and w.camera.far == 100
    assert w.features == w.vegetation == w.scatter == w.sites == w.places == w.entities == []
    assert encode(decode(World, encode(w))) == encode(w)


def test_feature_defaults_by_kind(tmp_path):
    feats = [{"name": k, "kind": k, "cell": [0, 0], "radius": 10} for k in FEATURE_DEFAULTS]
    w, ctx = compile_world_source(tmp_path, world(features=feats))
    assert ctx.report.items == [], lines(ctx)
    got = {f.kind: (f.has_height, f.height, f.depth, f.falloff, round(f.roughness, 6)) for f in w.features}
    assert got == {
        "hill": (False, 4.0, 2.0, 0, 0.0),  # a hill always adds its height: 4 m by default
        "plain": (False, 0.0, 2.0, 4, 0.0),  # without height: levels to the ground at its cell
        "lake": (False, 0.0, 2.0, 4, 0.3),
        "sea": (False, 0.0, 8.0, 8, 0.3),
    }


def test_vegetation_and_place_defaults(tmp_path):
    src = world(
        vegetation=[
            {"name": "g", "model": "tuft", "density": 0.5},
            {"name": "o", "prefab": "oak", "density": 0.1, "cell": [-3, 4], "radius": 5},
        ],
        places=[{"name": "well", "prefab": "oak", "cell": [2, 2]}],
    )
    w, ctx = compile_world_source(tmp_path, src, {"models/tuft.vmodel": MODEL, "prefabs/oak.vprefab": prefab([1, 1])})
    assert ctx.report.items == [], lines(ctx)
    g, o = w.vegetation
    assert (g.area, g.scale_min, g.scale_max, g.biomes) == (False, 1.0, 1.0, [])
    assert (o.area, o.x, o.z, o.radius, o.model) == (True, -3, 4, 5, "")
    assert w.places[0].rotation == 0
    assert sorted(ctx.deps) == ["materials/grass.vmaterial", "models/tuft.vmodel", "prefabs/oak.vprefab"]


# -- errors --------------------------------------------------------------------------------------

BAD = """{
  "veduta": "world/1",
  "seed": -1,
  "cell": 2,
  "extent": 512,
  "biome_scle": 64,
  "view": 1.5,
  "biomes": [ { "name": "plain", "ground": "grass" }, { "name": "plain", "ground": "grass", "weight": 0 } ],
  "terrain": { "relief": 300, "sea": 1, "lod_distance": 0 },
  "features": [ { "name": "a", "kind": "hill", "cell": [0, 0], "radius": 4, "falloff": 2 },
                { "name": "a", "kind": "volcano", "cell": [0, 0], "radius": 4 },
                { "name": "b", "kind": "lake", "cell": [1, 0], "radius": 0, "depth": 0, "roughness": 2 } ],
  "vegetation": [ { "name": "v", "prefab": "oak", "model": "tuft", "density": 0.5 },
                  { "name": "w", "model": "tuft", "density": 1.5, "cell": [1, 1], "scale": [2, 1],
                    "biomes": ["plian"] },
                  { "name": "x", "density": 0.5 } ],
  "scatter": [ { "prefab": "oak", "density": "0.1", "biomes": ["desert"] } ],
  "sites": [ { "tag": "town", "prefabs": [], "spacing": 1, "chance": 0 } ],
  "places": [ { "name": "p", "prefab": "oak", "cell": [0, 0], "rotation": 45 },
              { "name": "p", "prefab": "oak", "cell": [0, 0, 0] } ]
}"""


def test_every_problem_is_reported_at_once_with_exact_positions(tmp_path):
    extra = {"prefabs/oak.vprefab": prefab([1, 1]), "models/tuft.vmodel": MODEL}
    w, ctx = compile_world_source(tmp_path, BAD, extra, name="bad")
    assert w is None
    f = "worlds/bad.vworld"
    assert lines(ctx) == [
        f"{f}:3:11: seed: -1 out of range [0, 18446744073709551615]",
        f"{f}:5:13: extent: extent x chunk x cell = 512 x 16 x 2 = 16384 m, more than 8192 m "
        f"(at most extent 256 with this chunk and cell)",
        f'{f}:6:17: biome_scle: unknown field (did you mean "biome_scale"?)',
        f"{f}:7:11: view: expected an integer, found 1.5",
        f'{f}:8:65: biomes[1].name: "plain" is already the name of biome 0',
        f"{f}:8:103: biomes[1].weight: 0 out of range [1, 1000]",
        f"{f}:9:26: terrain.relief: 300 out of range [0, 256]",
        f"{f}:9:38: terrain.sea: expected true or false, found 1",
        f"{f}:9:57: terrain.lod_distance: 0 out of range (0, 1000000]",
        f"{f}:10:88: features[0].falloff: not used by a hill (a hill has cell, radius, height)",
        f'{f}:11:27: features[1].name: "a" is already the name of feature 0',
        f'{f}:11:40: features[1].kind: "volcano" is not one of "hill", "plain", "lake", "sea"',
        f"{f}:12:74: features[2].radius: 0 out of range [1, 16384]",
        f"{f}:12:86: features[2].depth: 0 out of range (0, 256]",
        f"{f}:12:102: features[2].roughness: 2 out of range [0, 1]",
        f'{f}:13:60: vegetation[0].model: a vegetation rule has either "prefab" or "model", not both',
        f"{f}:14:62: vegetation[1].density: 1.5 out of range (0, 1]",
        f'{f}:14:75: vegetation[1].cell: an area needs both "cell" and "radius" ("radius" is missing)',
        f"{f}:14:92: vegetation[1].scale: [2, 1] is not [min, max] (min above max)",
        f'{f}:15:32: vegetation[1].biomes[0]: "plian" is not a biome of this world (did you mean "plain"?)',
        f'{f}:16:19: vegetation[2].prefab: a vegetation rule needs "prefab" (trees, rocks: a prefab per cell) '
        f'or "model" (flora: plants)',
        f'{f}:17:46: scatter[0].density: expected a number, found the string "0.1"',
        f'{f}:17:64: scatter[0].biomes[0]: "desert" is not a biome of this world (want "plain")',
        f"{f}:18:42: sites[0].prefabs: must not be empty",
        f"{f}:18:57: sites[0].spacing: 1 out of range [2, 4096]",
        f"{f}:18:70: sites[0].chance: 0 out of range (0, 1]",
        f"{f}:19:75: places[0].rotation: 45 is not 0, 90, 180 or 270 (places turn by quarter turns)",
        f'{f}:20:25: places[1].name: "p" is already the name of place 0',
        f"{f}:20:55: places[1].cell: expected an array of 2 integers, found 3 items",
    ]


@pytest.mark.parametrize(
    "text, where, message",
    [
        (
            b'{"veduta": "world/1", "seed": 1, "seed": 2, "biomes": [{"name": "a", "ground": "grass"}]}',
            "1:42",
            "duplicate key 'seed'",
        ),
        (b'{"veduta": "world/1", "biomes": [{"name": "a", "ground": "grass"}]} x', "1:69", "trailing data"),
        (b'{"veduta": "world/1", "cell": NaN, "biomes": [{"name": "a", "ground": "grass"}]}', "1:31", "NaN"),
        (b'{"veduta": "world/1", "cell": 1e999, "biomes": [{"name": "a", "ground": "grass"}]}', "1:31", "1e999"),
        (b'{"veduta": "world/2", "biomes": [{"name": "a", "ground": "grass"}]}', "1:12", '"world/2" is not'),
        (b'{"veduta": "world/1"}', "1:1", "biomes: required field is missing"),
        (b'{"veduta": "world/1", "biomes": []}', "1:33", "a world needs at least one biome"),
    ],
)
def test_json_level_problems_are_located(tmp_path, text, where, message):
    w, ctx = compile_world_source(tmp_path, text.decode())
    assert w is None
    out = lines(ctx)
    assert any(line.startswith(f"worlds/w.vworld:{where}:") and message in line for line in out), out


def test_the_world_size_limit_uses_the_f32_cell(tmp_path):
    # 0.1 is 0.100000001490116... as f32: 5120 x 16 x cell is just over 8192 m
    w, ctx = compile_world_source(tmp_path, world(cell=0.1, chunk=32, extent=2560))
    assert w is None and "more than 8192 m (at most extent 2559" in lines(ctx)[0]
    w, ctx = compile_world_source(tmp_path, world(cell=0.5, chunk=64, extent=256))
    assert w is not None and w.extent * w.chunk * w.cell == 8192


def test_numbers_are_checked_as_the_f32_that_wrld_stores(tmp_path):
    src = world(cell=1e-46, vegetation=[{"name": "g", "model": "tuft", "density": 1e-50, "scale": [1e-40, 1]}])
    w, ctx = compile_world_source(tmp_path, src, {"models/tuft.vmodel": MODEL})
    assert w is None and [line.split(": ", 1)[1] for line in lines(ctx)] == [
        "cell: 1e-46 is 0 as f32, out of range (0, 64]",
        "vegetation[0].density: 1e-50 is 0 as f32, out of range (0, 1]",
    ]


def test_cells_must_lie_inside_the_world(tmp_path):
    src = world(
        chunk=4,
        extent=2,  # cells -8..7, vertices -8..8
        features=[
            {"name": "edge", "kind": "hill", "cell": [8, -8], "radius": 3},
            {"name": "out", "kind": "hill", "cell": [9, 0], "radius": 3},
        ],
        vegetation=[{"name": "v", "model": "tuft", "density": 0.5, "cell": [0, -9], "radius": 2}],
        places=[{"name": "ok", "prefab": "one", "cell": [-8, 7]}, {"name": "no", "prefab": "one", "cell": [8, 0]}],
    )
    extra = {"models/tuft.vmodel": MODEL, "prefabs/one.vprefab": prefab([1, 1])}
    w, ctx = compile_world_source(tmp_path, src, extra)
    assert w is None
    assert [line.split(": ", 1)[1] for line in lines(ctx)] == [
        "features[1].cell: [9, 0] is outside the world (vertices -8..8 on each axis)",
        "vegetation[0].cell: [0, -9] is outside the world (vertices -8..8 on each axis)",
        "places[1].cell: [8, 0] is outside the world (cells -8..7 on each axis)",
    ]


# -- prefabs -------------------------------------------------------------------------------------


def test_prefabs_too_large_for_a_cell_are_errors_for_scatter_and_vegetation_prefab_rules(tmp_path):
    src = world(
        cell=2,
        extent=256,
        scatter=[{"prefab": "rock", "density": 0.1}, {"prefab": "hut", "density": 0.1}],
        vegetation=[{"name": "huts", "prefab": "hut", "density": 0.1}],
    )
    extra = {"prefabs/rock.vprefab": prefab([2, 2]), "prefabs/hut.vprefab": prefab([2.001, 1])}
    w, ctx = compile_world_source(tmp_path, src, extra)
    assert w is None
    msg = 'prefab "hut" footprint 2.001 x 1 m is larger than a cell (2 x 2 m): {} places one-cell prefabs'
    assert [line.split(": ", 1)[1] for line in lines(ctx)] == [
        "scatter[1].prefab: " + msg.format("scatter"),
        "vegetation[0].prefab: " + msg.format("a vegetation prefab rule"),
    ]
    assert {"prefabs/rock.vprefab", "prefabs/hut.vprefab"} <= set(ctx.deps)


def test_a_site_prefab_must_fit_its_spacing_with_the_generator_margin(tmp_path):
    # fw <= spacing - margin, margin = max(1, ceil(distance the rule's prefabs keep from each other / cell))
    extra = {
        "prefabs/hall.vprefab": prefab([8, 6], tags=["town"]),
        "prefabs/keep.vprefab": prefab([5, 5], tags=["town"], min_distance={"town": 3.5}),
    }
    ok, ctx = compile_world_source(tmp_path, world(sites=[{"tag": "t", "prefabs": ["hall"], "spacing": 9}]), extra)
    assert ok is not None and ctx.report.items == [], lines(ctx)
    w, ctx = compile_world_source(tmp_path, world(sites=[{"tag": "t", "prefabs": ["hall"], "spacing": 8}]), extra)
    assert w is None and [line.split(": ", 1)[1] for line in lines(ctx)] == [
        'sites[0].prefabs[0]: prefab "hall" is 8 x 6 cells, too large for spacing 8: a site '
        "keeps 1 free cell in its region, so at most 7 x 7 cells fit"
    ]
    # keep's distance to its own tag raises the margin to 4 cells for both prefabs of the rule
    w, ctx = compile_world_source(
        tmp_path, world(sites=[{"tag": "t", "prefabs": ["keep", "hall"], "spacing": 11}]), extra
    )
    assert w is None and [line.split(": ", 1)[1] for line in lines(ctx)] == [
        'sites[0].prefabs[1]: prefab "hall" is 8 x 6 cells, too large for spacing 11: a site keeps 4 free cells in '
        "its region (the rule's prefabs keep 3.5 m from each other), so at most 7 x 7 cells fit"
    ]


def test_the_generator_drops_no_site_the_compiler_accepts(tmp_path):
    """The compiler's spacing rule is the generator's: at the smallest accepted spacing every drawn
    region gets a site (none is dropped as too large)."""
    from veduta.formats.prefab import Prefab
    from veduta.world import Generator

    pf = Prefab(name="hall", footprint=(8.0, 6.0), tags=["town"], distances=[], entities=[])
    src = world(chunk=16, extent=8, sites=[{"tag": "t", "prefabs": ["hall"], "spacing": 9}])
    w, ctx = compile_world_source(tmp_path, src, {"prefabs/hall.vprefab": prefab([8, 6], tags=["town"])})
    gen = Generator(w, {"hall": pf})
    reasons = {gen.structs.site(0, rx, rz).reason for rx in range(-10, 10) for rz in range(-10, 10)}
    assert not any("too large" in r for r in reasons) and "" in reasons
    too_small = Generator(w.replace(sites=[w.sites[0].replace(spacing=8)]), {"hall": pf})
    assert "prefab hall too large for spacing 8" in {
        too_small.structs.site(0, 0, 0).reason,
        too_small.structs.site(0, 1, 1).reason,
    }


def test_a_place_prefab_must_fit_the_world(tmp_path):
    extra = {"prefabs/castle.vprefab": prefab([20, 6]), "prefabs/hut.vprefab": prefab([3, 3])}
    src = world(
        chunk=4,
        extent=2,
        places=[  # cells -8..7
            {"name": "a", "prefab": "castle", "cell": [0, 0]},
            {"name": "b", "prefab": "hut", "cell": [7, 0]},
            {"name": "c", "prefab": "hut", "cell": [6, -7]},  # cells [5, -8] to [7, -6]: inside, at the corner
            {"name": "d", "prefab": "hut", "cell": [-7, 6]},
        ],
    )  # cells [-8, 5] to [-6, 7]
    w, ctx = compile_world_source(tmp_path, src, extra)
    assert w is None
    assert [line.split(": ", 1)[1] for line in lines(ctx)] == [
        'places[0].prefab: prefab "castle" is 20 x 6 cells, larger than the world (16 x 16 cells)',
        'places[1].cell: the footprint of prefab "hut" (cells [6, -1] to [8, 1]) leaves the world (cells -8..7)',
    ]


def test_a_place_turned_a_quarter_swaps_its_footprint(tmp_path):
    extra = {"prefabs/long.vprefab": prefab([9, 1])}
    src = world(chunk=4, extent=2, places=[{"name": "a", "prefab": "long", "cell": [0, 4], "rotation": 90}])
    w, ctx = compile_world_source(tmp_path, src, extra)
    assert w is None and lines(ctx)[0].endswith("(cells [0, 0] to [0, 8]) leaves the world (cells -8..7)")
    ok, ctx = compile_world_source(tmp_path, src.replace("90", "0"), extra)
    assert ok is not None, lines(ctx)


def test_a_missing_prefab_is_a_warning_naming_it_and_an_unusable_one_is_left_to_its_own_cook(tmp_path):
    src = world(
        scatter=[{"prefab": "ghost", "density": 0.5}, {"prefab": "broken", "density": 0.5}],
        sites=[{"tag": "t", "prefabs": ["ghost", "broken"], "spacing": 4}],
    )
    w, ctx = compile_world_source(tmp_path, src, {"prefabs/broken.vprefab": '{"veduta": "prefab/1", "footprint": 0'})
    assert w is not None
    assert [line.split(": ", 1)[1] for line in lines(ctx)] == [
        'scatter[0].prefab: warning: prefab "ghost" does not exist (not checked)',
        'sites[0].prefabs[0]: warning: prefab "ghost" does not exist (not checked)',
    ]
    assert ctx.deps["prefabs/ghost.vprefab"] is None and ctx.deps["prefabs/broken.vprefab"] is not None


def test_a_prefab_that_allows_none_of_the_rules_biomes_is_a_warning(tmp_path):
    extra = {"prefabs/pine.vprefab": prefab([1, 1], biomes=["forest", "taiga"])}
    src = world(
        scatter=[
            {"prefab": "pine", "density": 0.5, "biomes": ["plain"]},
            {"prefab": "pine", "density": 0.5, "biomes": ["plain", "forest"]},
        ]
    )
    w, ctx = compile_world_source(tmp_path, src, extra)
    assert w is not None
    assert [line.split(": ", 1)[1] for line in lines(ctx)] == [
        'scatter[0].prefab: warning: prefab "pine" allows only biomes "forest" or "taiga", none of which this rule '
        "allows (it never places it)"
    ]


def test_materials_and_models_are_dependencies(tmp_path):
    src = world(
        terrain={"water": "lake_water"},
        vegetation=[{"name": "g", "model": "tuft", "density": 0.5}],
        entities=[{"name": "hero", "model": "tuft"}],
    )
    w, ctx = compile_world_source(tmp_path, src, {"models/tuft.vmodel": MODEL})
    assert w is not None and w.terrain.water == "lake_water"
    assert [line.split(": ", 1)[1] for line in lines(ctx)] == [
        'terrain.water: warning: material "lake_water" does not exist (not checked)'
    ]
    assert sorted(ctx.deps) == ["materials/grass.vmaterial", "materials/lake_water.vmaterial", "models/tuft.vmodel"]


# -- robustness ----------------------------------------------------------------------------------

_ODD_VALUES = [
    None,
    True,
    0,
    -1,
    1,
    3.5,
    -1e9,
    1e300,
    4096,
    8193,
    2**64,
    "",
    "forest",
    "meadow",
    "oak",
    "cottage",
    [],
    [0],
    [1, 2],
    [-9000, 0],
    {},
    {"a": 1},
    90,
    45,
    1e-40,
]


def _mutate(obj, rng):
    import copy

    obj = copy.deepcopy(obj)

    def paths(o, p=()):
        if p:
            yield p
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in items:
            yield from paths(v, p + (k,))

    for _ in range(rng.randint(1, 3)):
        p = rng.choice(list(paths(obj)))
        parent = obj
        for k in p[:-1]:
            parent = parent[k]
        r = rng.random()
        if r < 0.3 and isinstance(parent, dict):
            del parent[p[-1]]
        elif r < 0.4 and isinstance(parent, dict):
            parent[p[-1] + "x"] = parent[p[-1]]
        else:
            parent[p[-1]] = rng.choice(_ODD_VALUES)
    return obj


def test_mutated_worlds_are_reported_never_raise_and_what_is_accepted_decodes():
    import random

    rng = random.Random(5)
    index = sample_index()
    bases = [json.loads((ASSETS / "worlds/valley.vworld").read_text()), json.loads(SPEC_EXAMPLE)]
    rel = "worlds/valley.vworld"
    accepted = 0
    for _ in range(400):
        src = json.dumps(_mutate(rng.choice(bases), rng))
        ctx = CompileContext(str(ASSETS), rel, "world", "valley", Report(rel), index)
        w = compile_source("world", src.encode(), ctx)
        if w is None:
            assert ctx.report.errors, src
        else:
            accepted += 1
            payload = encode(w)
            assert encode(decode(World, payload)) == payload, src  # readers' checks pass too
    assert 10 < accepted < 400


# -- end to end: cook the sample game, question the world ----------------------------------------


@pytest.fixture(scope="module")
def sample_game(tmp_path_factory) -> Path:
    """A copy of the sample game (assets without .cooked), cooked once with doit."""
    root = tmp_path_factory.mktemp("sample") / "game"
    games.sample_game(root)
    cp = subprocess.run([sys.executable, "-m", "doit", "cook"], cwd=root, capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    mine = ("worlds/", "prefabs/oak.", "prefabs/tree.", "prefabs/cottage.", "prefabs/well.", "models/well.")
    said = [line for line in (cp.stdout + cp.stderr).splitlines() if any(m in line for m in mine)]
    assert said == [], said  # the sample world and its prefabs cook without a warning
    return root


def veduta(root: Path, *args: str, seed: str = "0") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": seed},
    )


def test_the_sample_world_cooks_without_warnings_in_the_sample_game(sample_game):
    assert (sample_game / "assets/.cooked/worlds/valley.vda").is_file()
    for name in ("oak", "tree", "cottage", "well", "camp"):
        assert (sample_game / f"assets/.cooked/prefabs/{name}.vda").is_file()


def test_world_query_prints_the_cell_as_json(sample_game):
    from veduta.base.project import Project
    from veduta.faces.cli.main import load_world
    from veduta.world import Generator

    gen = Generator(*load_world(Project.find(str(sample_game)), "valley"))
    cp = veduta(sample_game, "world", "query", "valley", "-70,0")
    assert cp.returncode == 0, cp.stderr
    q = json.loads(cp.stdout)
    assert set(q) >= {"cell", "chunk", "biome", "height", "water", "owner", "plants"}
    assert q["cell"] == [-70, 0] and q["chunk"] == [-5, 0] and q["biome"] == "meadow"
    assert q["owner"] == {"kind": "place", "name": "village_well", "prefab": "well"} and q["plants"] == []
    assert q == query(gen, -70, 0)
    lake = json.loads(veduta(sample_game, "world", "query", "valley", "-35,40").stdout)
    assert lake["water"]["wet"] is True and lake["water"]["level"] is not None and lake["plants"] == []
    # a cell with plants, and one owned by the oak grove, answer as the generator does in-process
    lay = gen.layers(-116, -40, 32, 32)
    grass = next(p for p in lay.plants if gen.p.vegetation[p.rule].name == "grass")
    j, i = (int(a[0]) for a in grass.mask.nonzero())
    x, z = -116 + i, -40 + j
    q = json.loads(veduta(sample_game, "world", "query", "valley", f"{x},{z}").stdout)
    assert q["plants"] and q == query(gen, x, z)
    owners = [
        (o["kind"], o["rule"])
        for o in (gen.cell_owner(-116 + i, -40 + j) for j in range(32) for i in range(32))
        if o is not None
    ]
    assert ("vegetation", "oak_grove") in owners


def test_world_map_is_identical_across_runs_and_hash_seeds(sample_game, tmp_path):
    outs = []
    for n, seed in enumerate(("0", "0", "4242")):
        out = tmp_path / f"map{n}.png"
        cp = veduta(
            sample_game, "world", "map", "valley", "--out", str(out), "--at", "-70,0", "--size", "160,120", seed=seed
        )
        assert cp.returncode == 0, cp.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    assert outs[0].startswith(b"\x89PNG\r\n\x1a\n")


# -- the format reference ------------------------------------------------------------------------


def test_the_documented_error_example_reports_what_the_docs_say(tmp_path):
    rel, src, expected = documented_error_example("world.md")
    body, ctx = compile_in(tmp_path, {rel: src}, rel)
    assert body is None and lines(ctx) == expected


def test_the_documented_examples_are_the_spec_example_and_a_clean_minimal_world(tmp_path):
    import re

    text = (ROOT / "docs" / "formats" / "world.md").read_text()
    example = text[text.index("## The spec's example") :]
    assert re.findall(r"```json\n(.*?)```", example, re.S)[0] == SPEC_EXAMPLE
    minimal = re.findall(r"```json\n(.*?)```", text[text.index("## Minimal example") :], re.S)[0]
    w, ctx = compile_world_source(tmp_path, minimal)
    assert w is not None and ctx.report.items == [], lines(ctx)
