"""compile_map: map/1 sources -> TMAP; text rows, terrains, layers, objects and their references."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.compile.helpers import compile_in, documented_error_example, lines
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.formats import decode, encode
from veduta.formats.tilemap import Prop, Tilemap
from veduta.source.diagnostics import Report

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"

TILES = '{"veduta": "texture/1", "size": [64, 32], "layers": [{"type": "fill", "color": "#ffffff"}], "grid": [4, 2]}'
PLAIN = '{"veduta": "texture/1", "size": [8, 8], "layers": [{"type": "fill", "color": "#ffffff"}]}'
MAT = '{"veduta": "material/1", "texture": "tiles"}'
CAMP = '{"veduta": "prefab/1", "footprint": [3, 2]}'
TERRAINS = [
    {"key": "g", "name": "grass", "texture": "tiles", "tile": [0, 0], "variants": 2},
    {"key": "~", "name": "water", "material": "tiles", "tile": [3, 1]},
]


def vmap(**fields) -> str:
    return json.dumps({"veduta": "map/1", **fields}, indent=2)


def refs(**more) -> dict[str, str]:
    return {"textures/tiles.vtexture": TILES, "materials/tiles.vmaterial": MAT, "prefabs/camp.vprefab": CAMP, **more}


# -- samples and round trips --------------------------------------------------------------------


def test_sample_map_compiles_cleanly_round_trips_and_is_deterministic():
    rel = "maps/town.vmap"
    index = AssetIndex.from_paths(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*.v*") if ".cooked" not in p.parts)

    def once():
        ctx = CompileContext(str(ASSETS), rel, "map", "town", Report(rel), index)
        return compile_source("map", (ASSETS / rel).read_bytes(), ctx), ctx

    tm, ctx = once()
    assert tm is not None and ctx.report.items == [], lines(ctx)
    payload = encode(tm)
    assert decode(Tilemap, payload) == tm and encode(decode(Tilemap, payload)) == payload
    assert encode(once()[0]) == payload
    assert (tm.columns, tm.rows, tm.tile, tm.origin) == (16, 10, 1, (-8, 0, -5))
    assert [t.name for t in tm.terrains] == ["grass", "dirt", "stone", "sand", "flowers", "path", "water"]
    ground, flowers = tm.layers
    assert ground.cells.shape == (10, 16) and ground.cells.dtype == np.dtype("<u2")
    assert ground.cells[0, 0] == 1 and ground.cells[0, 15] == 7 and ground.cells[7, 4] == 6
    assert flowers.cells[1, 2] == 5 and flowers.cells[8, 12] == 0 and flowers.cells[0, 0] == 0
    assert sorted(ctx.deps) == [
        "materials/tiles.vmaterial",
        "materials/water.vmaterial",
        "prefabs/camp.vprefab",
        "textures/tiles.vtexture",
        "textures/water.vtexture",
    ]


def test_every_field_reaches_the_chunk(tmp_path):
    src = vmap(
        tile=1.5,
        origin=[1, 2, 3],
        terrains=TERRAINS
        + [{"key": "é", "name": "snow", "texture": "tiles", "flip": ["y", "x"], "tags": ["cold", "slow"]}],
        layers=[
            {"name": "ground", "rows": ["gg~", "é.~"]},
            {"name": "top", "z": 0.25, "layer": 3, "ysort": True, "fill": "."},
        ],
        objects=[
            {
                "name": "camp",
                "cell": [0, 0],
                "size": [3, 2],
                "prefab": "camp",
                "tags": ["a"],
                "props": {"z": "text", "n": 2, "b": False, "big": 1.5e300},
            }
        ],
    )
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert ctx.report.items == [], lines(ctx)
    g, w, s = tm.terrains
    assert (g.key, g.tileset, g.tile_column, g.tile_row, g.variants, g.flip) == (ord("g"), True, 0, 0, 2, 0)
    assert (w.material, w.texture, w.tile_column, w.tile_row) == ("tiles", "", 3, 1)
    assert (s.key, s.tileset, s.flip, s.tags) == (0xE9, False, 3, ["cold", "slow"])
    assert tm.layers[0].cells.tolist() == [[1, 1, 2], [3, 0, 2]]
    assert tm.layers[1].cells.tolist() == [[0, 0, 0], [0, 0, 0]] and tm.layers[1].ysort and tm.layers[1].layer == 3
    (o,) = tm.objects
    assert (o.x, o.y, o.columns, o.rows, o.prefab, o.tags) == (0, 0, 3, 2, "camp", ["a"])
    assert o.props == [
        Prop(name="b", value=False),
        Prop(name="big", value=1.5e300),
        Prop(name="n", value=2.0),
        Prop(name="z", value="text"),
    ]
    assert isinstance(o.props[2].value, float)
    payload = encode(tm)
    assert decode(Tilemap, payload) == tm and encode(decode(Tilemap, payload)) == payload


def test_size_may_be_given_for_fill_only_maps(tmp_path):
    src = vmap(size=[4, 3], terrains=TERRAINS, layers=[{"name": "sea", "fill": "~"}])
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert tm.layers[0].cells.tolist() == [[2] * 4] * 3 and (tm.columns, tm.rows) == (4, 3)
    src = vmap(terrains=TERRAINS, layers=[{"name": "sea", "fill": "~"}])
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert tm is None and lines(ctx) == [
        "maps/m.vmap:1:1: size: required field is missing (no layer has rows to take the size from)"
    ]


# -- strict decoding ----------------------------------------------------------------------------

BAD = """{
  "veduta": "map/1",
  "tile": 0,
  "terrains": [
    { "key": "gg", "name": "grass", "texture": "tiles" },
    { "key": ".", "name": "dot", "texture": "tiles" },
    { "key": "~", "name": "water", "texture": "tiles", "material": "tiles", "flip": ["z"] },
    { "key": "~", "name": "grass", "variants": 3 },
    { "key": "#", "name": "wall", "texture": "tiles", "tile": [4, 0] }
  ],
  "layers": [
    { "name": "ground", "rows": ["~~~~", "~x~", "~~~~", "~?~!", "~\\u0078~~"] },
    { "name": "ground", "rows": ["~~"], "fill": "~" },
    { "name": "deco", "z": "up" }
  ],
  "objects": [
    { "name": "a", "cell": [3, 0], "size": [2, 1], "props": { "hp": null, "Name": "x", "k": 9007199254740993 } },
    { "name": "a", "cell": [0, 0], "prefab": "camp", "cells": 1 }
  ]
}"""


def test_every_problem_is_reported_at_once_with_exact_positions(tmp_path):
    tm, ctx = compile_in(tmp_path, refs(**{"maps/bad.vmap": BAD}), "maps/bad.vmap")
    assert tm is None
    assert lines(ctx) == [
        "maps/bad.vmap:3:11: tile: 0 out of range (0, 1024]",
        'maps/bad.vmap:5:14: terrains[0].key: "gg" is 2 characters, want exactly one',
        'maps/bad.vmap:6:14: terrains[1].key: "." marks an empty cell and cannot be a terrain key',
        "maps/bad.vmap:7:68: terrains[2].material: a terrain has a texture or a material, not both (keep one)",
        'maps/bad.vmap:7:86: terrains[2].flip[0]: "z" is not one of "x", "y"',
        "maps/bad.vmap:8:5: terrains[3].texture: a terrain needs a texture or a material",
        'maps/bad.vmap:8:14: terrains[3].key: "~" is already the key of terrain 2',
        'maps/bad.vmap:8:27: terrains[3].name: "grass" is already the name of terrain 0',
        "maps/bad.vmap:8:48: terrains[3].variants: variants are the tiles after tile in its row (give tile too)",
        "maps/bad.vmap:9:63: terrains[4].tile: tile [4, 0] needs column 4 of row 0, outside the 4 x 2 grid "
        'of texture "tiles"',
        "maps/bad.vmap:12:42: layers[0].rows[1]: 3 cells, want 4 (the map's columns)",
        'maps/bad.vmap:12:44: layers[0].rows[1]: "x" at column 1 is not a terrain key (want "#" or "~", or . '
        "or space for empty), and 1 more like it",
        'maps/bad.vmap:12:59: layers[0].rows[3]: "?" at column 1 is not a terrain key (want "#" or "~", or . '
        "or space for empty)",
        'maps/bad.vmap:12:61: layers[0].rows[3]: "!" at column 3 is not a terrain key (want "#" or "~", or . '
        "or space for empty)",
        'maps/bad.vmap:13:15: layers[1].name: "ground" is already the name of layer 0',
        "maps/bad.vmap:13:49: layers[1].fill: a layer has rows or fill, not both",
        "maps/bad.vmap:14:5: layers[2].rows: required field is missing (a layer has rows, or fill for one "
        "key everywhere)",
        'maps/bad.vmap:14:28: layers[2].z: expected a number, found the string "up"',
        "maps/bad.vmap:17:28: objects[0].cell: 2 x 1 cells at [3, 0] do not fit the 4 x 5 map",
        "maps/bad.vmap:17:69: objects[0].props.hp: expected a string, a number, true or false, found null",
        'maps/bad.vmap:17:75: objects[0].props.Name: "Name" is not a valid property name (1-64 of a-z, 0-9, '
        "_, -, starting with a letter or digit)",
        "maps/bad.vmap:17:93: objects[0].props.k: 9007199254740993 is not exactly representable as a double "
        "(|n| <= 2^53)",
        'maps/bad.vmap:18:15: objects[1].name: "a" is already the name of object 0',
        'maps/bad.vmap:18:63: objects[1].cells: unknown field (did you mean "cell"?)',
    ]


def test_unknown_characters_are_reported_once_each_with_a_count(tmp_path):
    src = """{
  "veduta": "map/1",
  "terrains": [ { "key": "g", "name": "grass", "texture": "tiles" } ],
  "layers": [ { "name": "ground", "rows": ["gxgx", "xxg?"] } ]
}"""
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert lines(ctx) == [
        'maps/m.vmap:4:46: layers[0].rows[0]: "x" at column 1 is not a terrain key (want "g", or . or space for '
        "empty), and 3 more like it",
        'maps/m.vmap:4:56: layers[0].rows[1]: "?" at column 3 is not a terrain key (want "g", or . or space for empty)',
    ]


def test_a_row_written_with_escapes_is_located_at_its_string(tmp_path):
    src = (
        '{"veduta": "map/1", "terrains": [{"key": "g", "name": "g", "texture": "t"}],\n'
        ' "layers": [{"name": "a", "rows": ["g\\u0067x"]}]}'
    )
    tm, ctx = compile_in(tmp_path, {"maps/m.vmap": src}, "maps/m.vmap")
    errors = [str(d) for d in ctx.report.errors]
    assert errors == [
        'maps/m.vmap:2:36: layers[0].rows[0]: "x" at column 2 is not a terrain key (want "g", or . or space for empty)'
    ]


def test_rows_must_match_the_map_size(tmp_path):
    src = vmap(size=[3, 2], terrains=TERRAINS, layers=[{"name": "a", "rows": ["ggg"]}])
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert tm is None and lines(ctx)[0].endswith("layers[0].rows: 1 rows, want 2 (the map's rows)")


def test_a_layer_with_no_rows_is_an_error_not_a_compiler_crash(tmp_path):
    src = vmap(terrains=TERRAINS, layers=[{"name": "a", "rows": []}])  # found by the schema property test
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert tm is None and sorted(line.split(": ", 1)[1] for line in lines(ctx)) == [
        "layers[0].rows: must not be empty",
        "size: required field is missing (no layer has rows to take the size from)",
    ]


def test_objects_must_fit_the_map_and_props_are_strict(tmp_path):
    obj = [
        {
            "name": "a",
            "cell": [3, 0],
            "size": [2, 1],
            "props": {"hp": None, "Name": "x", "k": 9007199254740993, "ok": "fine"},
        },
        {"name": "a", "cell": [0, 0], "cells": 1},
    ]
    src = vmap(terrains=TERRAINS, layers=[{"name": "g", "rows": ["gggg"]}], objects=obj)
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert tm is None
    assert [x.split(": ", 1)[1] for x in lines(ctx)] == [
        "objects[0].cell: 2 x 1 cells at [3, 0] do not fit the 4 x 1 map",
        "objects[0].props.hp: expected a string, a number, true or false, found null",
        'objects[0].props.Name: "Name" is not a valid property name (1-64 of a-z, 0-9, _, -, starting with a '
        "letter or digit)",
        "objects[0].props.k: 9007199254740993 is not exactly representable as a double (|n| <= 2^53)",
        'objects[1].name: "a" is already the name of object 0',
        'objects[1].cells: unknown field (did you mean "cell"?)',
    ]


# -- references ---------------------------------------------------------------------------------


def test_tiles_are_checked_against_the_texture_or_material_grid(tmp_path):
    terrains = [
        {"key": "a", "name": "a", "texture": "tiles", "tile": [3, 1]},
        {"key": "b", "name": "b", "texture": "tiles", "tile": [2, 1], "variants": 3},
        {"key": "c", "name": "c", "material": "tiles", "tile": [0, 2]},
        {"key": "d", "name": "d", "texture": "plain", "tile": [0, 0]},
        {"key": "e", "name": "e", "texture": "plain"},
    ]
    src = vmap(terrains=terrains, layers=[{"name": "g", "rows": ["abcde"]}])
    tm, ctx = compile_in(tmp_path, refs(**{"textures/plain.vtexture": PLAIN, "maps/m.vmap": src}), "maps/m.vmap")
    assert tm is None
    assert [x.split(": ", 1)[1] for x in lines(ctx)] == [
        "terrains[1].tile: tile [2, 1] with 3 variants needs columns 2..4 of row 1, outside the 4 x 2 grid of "
        'texture "tiles"',
        'terrains[2].tile: tile [0, 2] needs column 0 of row 2, outside the 4 x 2 grid of material "tiles"',
        'terrains[3].tile: texture "plain" has no grid to take tile [0, 0] from',
    ]
    assert sorted(ctx.deps) == ["materials/tiles.vmaterial", "textures/plain.vtexture", "textures/tiles.vtexture"]


def test_a_prefab_must_fit_its_object(tmp_path):
    obj = [
        {"name": "small", "cell": [0, 0], "size": [2, 2], "prefab": "camp"},
        {"name": "big", "cell": [0, 0], "size": [3, 2], "prefab": "camp"},
    ]
    src = vmap(tile=1, terrains=TERRAINS, layers=[{"name": "g", "rows": ["ggg", "ggg"]}], objects=obj)
    tm, ctx = compile_in(tmp_path, refs(**{"maps/m.vmap": src}), "maps/m.vmap")
    assert [x.split(": ", 1)[1] for x in lines(ctx)] == [
        'objects[0].prefab: the footprint of prefab "camp" (3 x 2 m) does not fit 2 x 2 cells of 1 m '
        "(give the object a larger size)"
    ]
    obj.pop(0)
    tm, ctx = compile_in(
        tmp_path,
        refs(
            **{
                "maps/m.vmap": vmap(
                    tile=1, terrains=TERRAINS, objects=obj, layers=[{"name": "g", "rows": ["ggg", "ggg"]}]
                )
            }
        ),
        "maps/m.vmap",
    )
    assert tm is not None and ctx.deps["prefabs/camp.vprefab"] == CAMP.encode()


def test_missing_references_are_warnings_naming_them(tmp_path):
    src = """{
  "veduta": "map/1",
  "terrains": [ { "key": "g", "name": "grass", "texture": "lawn", "tile": [9, 9] },
                { "key": "w", "name": "water", "material": "sea" } ],
  "layers": [ { "name": "ground", "rows": ["gw"] } ],
  "objects": [ { "name": "o", "cell": [0, 0], "prefab": "fort" } ]
}"""
    tm, ctx = compile_in(tmp_path, {"maps/m.vmap": src}, "maps/m.vmap")
    assert tm is not None
    assert lines(ctx) == [
        'maps/m.vmap:3:59: terrains[0].texture: warning: texture "lawn" does not exist (not checked)',
        'maps/m.vmap:4:60: terrains[1].material: warning: material "sea" does not exist (not checked)',
        'maps/m.vmap:6:57: objects[0].prefab: warning: prefab "fort" does not exist (not checked)',
    ]
    assert ctx.deps == {"textures/lawn.vtexture": None, "materials/sea.vmaterial": None, "prefabs/fort.vprefab": None}


def test_the_documented_error_example_reports_what_the_docs_say(tmp_path):
    rel, src, expected = documented_error_example("map.md")
    body, ctx = compile_in(tmp_path, {**refs(), rel: src}, rel)
    assert body is None and lines(ctx) == expected
