"""World compile rules added after review: whole-millimetre cells, generated-name collisions."""

from __future__ import annotations

import json

from tests.compile.helpers import compile_in, lines


def world(**fields) -> str:
    base = {"veduta": "world/1", "biomes": [{"name": "plain", "ground": "grass"}]}
    base.update(fields)
    return json.dumps(base, indent=2)


def test_cell_must_be_whole_millimetres(tmp_path):
    body, ctx = compile_in(tmp_path, {"worlds/w.vworld": world(cell=0.0625, extent=64)}, "worlds/w.vworld")
    assert body is None
    assert any(
        m.endswith(
            "cell: 0.0625 m is not a whole number of millimetres (the generator works in whole millimetres; e.g. 0.063)"
        )
        for m in lines(ctx)
    ), lines(ctx)
    body, ctx = compile_in(tmp_path / "b", {"worlds/w.vworld": world(cell=0.1, extent=64)}, "worlds/w.vworld")
    assert body is not None and not ctx.report.errors  # 0.1 is 100 mm, as an f32 too


def test_names_the_generator_gives_are_reserved(tmp_path):
    src = world(
        places=[
            {"name": "site_v_0_0", "prefab": "hut", "cell": [0, 0]},
            {"name": "player", "prefab": "hut", "cell": [5, 5]},
        ],
        sites=[
            {"tag": "v_1", "prefabs": ["hut"], "spacing": 32},
            {"tag": "v", "prefabs": ["hut"], "spacing": 32},
            {"tag": "v", "prefabs": ["hut"], "spacing": 40},
        ],
        entities=[{"name": "player", "kind": "player"}],
    )
    body, ctx = compile_in(tmp_path, {"worlds/w.vworld": src}, "worlds/w.vworld")
    assert body is None
    errs = [m for m in lines(ctx) if "warning" not in m]
    assert any('places[0].name: "site_v_0_0" starts like the names the generator gives' in m for m in errs)
    assert any('places[1].name: "player" is also the name of a persistent entity' in m for m in errs)
    assert any('sites[0].tag: "v_1" would name its sites like rule 2 of tag "v"' in m for m in errs)
    # one "v" rule only: "v_1" is free
    src = world(
        sites=[{"tag": "v_1", "prefabs": ["hut"], "spacing": 32}, {"tag": "v", "prefabs": ["hut"], "spacing": 32}]
    )
    body, ctx = compile_in(tmp_path / "b", {"worlds/w.vworld": src}, "worlds/w.vworld")
    assert not [m for m in lines(ctx) if "would name its sites" in m]
