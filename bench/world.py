"""``bench_world()``: the generator's speed goals (called by ``make bench``).

Goals: heights, biomes and water of a 1024 x 1024-cell area in at most 1 s; one query in
under 5 ms (median). The world is the spec's example (world-format.md, Example) with prefabs
of plausible sizes; each timing starts from a fresh generator (no warm caches).
"""

from __future__ import annotations

import statistics
import time
from types import SimpleNamespace as NS

from bench.games import sample_game
from veduta.world.query import query

GOAL_AREA_S = 1.0
GOAL_QUERY_MS = 5.0


def example_world():
    """The spec's example world as decoded records (attribute names of WRLD / PRFB)."""
    biomes = [NS(name="plain", ground="grass", weight=3), NS(name="forest", ground="moss", weight=2)]
    feature = dict(has_height=False, height=0.0, depth=2.0, falloff=4, roughness=0.3)
    features = [
        NS(
            **{
                **feature,
                "name": "north_hills",
                "kind": "hill",
                "x": 10,
                "z": -60,
                "radius": 24,
                "has_height": True,
                "height": 9.0,
                "falloff": 0,
                "roughness": 0.0,
            }
        ),
        NS(**{**feature, "name": "town_ground", "kind": "plain", "x": 126, "z": -34, "radius": 14}),
        NS(**{**feature, "name": "mirror_lake", "kind": "lake", "x": -30, "z": 20, "radius": 9, "depth": 2.5}),
        NS(
            **{
                **feature,
                "name": "west_sea",
                "kind": "sea",
                "x": -700,
                "z": 0,
                "radius": 560,
                "has_height": True,
                "height": -0.5,
                "depth": 8.0,
                "falloff": 8,
            }
        ),
    ]
    veg = dict(prefab="", model="", biomes=None, area=False, x=0, z=0, radius=0, scale_min=1.0, scale_max=1.0)
    vegetation = [
        NS(**{**veg, "name": "grass", "model": "grass_tuft", "density": 0.3, "biomes": ["plain"]}),
        NS(
            **{
                **veg,
                "name": "oak_grove",
                "prefab": "oak",
                "density": 0.25,
                "area": True,
                "x": 40,
                "z": 10,
                "radius": 12,
            }
        ),
        NS(
            **{
                **veg,
                "name": "poppies",
                "model": "poppy",
                "density": 0.5,
                "area": True,
                "x": -12,
                "z": 8,
                "radius": 6,
                "scale_min": 0.7,
                "scale_max": 1.3,
            }
        ),
    ]
    world = NS(
        name="overworld",
        seed=7,
        cell=1.0,
        chunk=16,
        extent=512,
        view=1,
        biome_scale=64,
        camera=None,
        light=None,
        background=0xFF202830,
        biomes=biomes,
        scatter=[NS(prefab="tree", biomes=["forest"], density=0.06)],
        sites=[NS(tag="village", prefabs=["village"], biomes=["plain"], spacing=48, chance=0.5)],
        places=[NS(name="capital", prefab="city", x=120, z=-40, rotation=90)],
        entities=None,
        terrain=NS(relief=1.5, relief_scale=48, sea=False, sea_level=0.0, water="", lod_distance=24.0),
        features=features,
        vegetation=vegetation,
    )
    ent = dict(
        kind="prop",
        material="",
        position=(0.0, 0.0, 0.0),
        rotation_deg=(0.0, 0.0, 0.0),
        scale=(1.0, 1.0, 1.0),
        tags=None,
        parent="",
        visible=True,
        hitbox=None,
        layer=0,
        frame=0,
        anim="",
    )
    prefabs = {
        "tree": NS(
            name="tree",
            footprint=(1.0, 1.0),
            tags=["tree"],
            biomes=None,
            distances=None,
            entities=[NS(name="tree", model="tree", **ent)],
        ),
        "oak": NS(
            name="oak",
            footprint=(1.0, 1.0),
            tags=["tree"],
            biomes=None,
            distances=[NS(tag="village", meters=3.0)],
            entities=[NS(name="oak", model="oak", **ent)],
        ),
        "village": NS(
            name="village",
            footprint=(8.0, 6.0),
            tags=["village"],
            biomes=["plain"],
            distances=[NS(tag="city", meters=20.0), NS(tag="tree", meters=2.0)],
            entities=[NS(name="hall", model="hall", **ent)],
        ),
        "city": NS(
            name="city",
            footprint=(12.0, 9.0),
            tags=["city"],
            biomes=None,
            distances=[NS(tag="tree", meters=4.0)],
            entities=[NS(name="keep", model="keep", **ent)],
        ),
    }
    return world, prefabs


def bench_world(repeat: int = 3, queries: int = 41) -> dict:
    """Time the generator; returns seconds / milliseconds and whether each goal is met."""
    from veduta.world.generator import Generator

    world, prefabs = example_world()
    area = []
    for _ in range(repeat):
        gen = Generator(world, prefabs)
        t0 = time.perf_counter()
        gen.heights(-512, -512, 1025, 1025)
        gen.biomes(-512, -512, 1024, 1024)
        gen.water(-512, -512, 1024, 1024)
        area.append(time.perf_counter() - t0)
    one_pass = []
    for _ in range(repeat):
        gen = Generator(world, prefabs)
        t0 = time.perf_counter()
        gen.terrain_layers(-512, -512, 1024, 1024)
        one_pass.append(time.perf_counter() - t0)

    gen = Generator(world, prefabs)
    times = []
    for k in range(queries):
        # distinct cells spread over the area, so caches do not help much
        x = (k * 7919) % 1024 - 512
        z = (k * 104729) % 1024 - 512
        t0 = time.perf_counter()
        query(gen, x, z)
        times.append(time.perf_counter() - t0)
    area_s = min(area)
    query_ms = statistics.median(times) * 1000.0
    return {
        "world_area_1024_s": round(area_s, 4),
        "world_area_1024_one_pass_s": round(min(one_pass), 4),
        "world_area_goal_s": GOAL_AREA_S,
        "world_area_ok": area_s <= GOAL_AREA_S,
        "world_query_median_ms": round(query_ms, 3),
        "world_query_max_ms": round(max(times) * 1000.0, 3),
        "world_query_goal_ms": GOAL_QUERY_MS,
        "world_query_ok": query_ms < GOAL_QUERY_MS,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(bench_world(), indent=2))


GOAL_INSPECT_VALLEY_S = 30.0


def bench_draw(repeat: int = 3, chunks: int = 41, valley: bool = True) -> dict:
    """The drawing model's speed: ground levels of detail of one chunk (median over distinct
    chunks of the spec's example world, from the generator's layers, and beside it the floor:
    the layers alone), and a full ``inspect world valley`` on a copy of the sample assets (the
    first run cooks what it needs; then the best of ``repeat`` warm runs). Goal: valley in well
    under 30 s."""
    from veduta.world import draw
    from veduta.world.generator import Generator

    world, prefabs = example_world()
    gen = Generator(world, prefabs)
    layers, lod = [], []
    for k in range(chunks):
        cx, cz = (k * 7) % 61 - 30, (k * 13) % 59 - 29
        t0 = time.perf_counter()
        ground, biome, _, _, _ = gen.terrain_layers(cx * 16, cz * 16, 16, 16)
        t1 = time.perf_counter()
        draw._chunk_ground(gen, cx, cz, ground, biome)
        t2 = time.perf_counter()
        layers.append(t1 - t0)
        lod.append(t2 - t1)
    out = {
        "ground_lod_one_chunk_ms": round(statistics.median(lod) * 1000, 3),
        "chunk_terrain_layers_floor_ms": round(statistics.median(layers) * 1000, 3),
    }
    if valley:
        out.update(_bench_valley(repeat))
    return out


def _bench_valley(repeat: int) -> dict:
    import os
    import tempfile

    from veduta.base.project import Project
    from veduta.tools.inspect_world import inspect_world

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assets = os.path.join(here, "assets")
    if not os.path.isfile(os.path.join(assets, "worlds", "valley.vworld")):
        return {"inspect_world_valley": "skipped (no sample assets)"}
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "game")
        sample_game(root)
        project = Project.at(root)
        t0 = time.perf_counter()
        r = inspect_world(project, "valley")
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            inspect_world(project, "valley")
            warm.append(time.perf_counter() - t0)
    best = min(warm)
    return {
        "inspect_world_valley_first_s": round(cold, 3),
        "inspect_world_valley_s": round(best, 3),
        "inspect_world_valley_views": len(r["views"]),
        "inspect_world_valley_goal_s": GOAL_INSPECT_VALLEY_S,
        "inspect_world_valley_ok": best < GOAL_INSPECT_VALLEY_S,
    }
