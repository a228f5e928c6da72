"""One non-trivial body record per chunk type, built by hand (no compiler involved)."""

from __future__ import annotations

import numpy as np

from veduta.container.meta import Meta
from veduta.formats.material import Material
from veduta.formats.mesh import VERTEX_DTYPE, Lod, Mesh, MeshPart, Part
from veduta.formats.prefab import Distance, Prefab
from veduta.formats.scene import Camera, Entity, Light, Scene
from veduta.formats.texture import Clip, Edge, Texture
from veduta.formats.tilemap import Layer, Object, Prop, Terrain, Tilemap
from veduta.formats.tilemap import Terrain as MapTerrain
from veduta.formats.world import Biome, Feature, Place, Scatter, Site, Vegetation, World
from veduta.formats.world import Terrain as WorldTerrain

del Terrain


def mesh() -> Mesh:
    v = np.zeros(4, VERTEX_DTYPE)
    v["position"] = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]
    v["normal"] = [0, 0, 1]
    v["uv"] = [[0, 1], [1, 1], [1, 0], [0, 0]]
    idx = np.array([0, 1, 2, 0, 2, 3], np.uint32)
    lod_v = v[:3].copy()
    return Mesh(
        name="quad",
        pivot="origin",
        symmetry="x",
        smooth_angle_deg=30.0,
        triangle_budget=500,
        pivot_offset=(0.0, -0.5, 0.0),
        bounds=((0.0, 0.0, 0.0), (1.0, 1.0, 0.0)),
        vertices=v,
        indices=idx,
        mesh_parts=[MeshPart(0, 3, 0), MeshPart(3, 3, 1)],
        materials=["wood", ""],
        parts=[Part(0, "plane", 0, 6, "wood", "planar", False, -1)],
        draw_distance=80.0,
        lods=[
            Lod(
                15.0,
                "",
                ((0.0, 0.0, 0.0), (1.0, 1.0, 0.0)),
                lod_v,
                np.array([0, 1, 2], np.uint32),
                [MeshPart(0, 3, 0), MeshPart(3, 0, 1)],
            ),
            Lod(35.0, "quad_far", ((0.0, 0.0, 0.0), (1.0, 1.0, 0.0))),
        ],
    )


def texture() -> Texture:
    rng = np.random.default_rng(1)
    lv0 = rng.integers(0, 2**32, size=(4, 8), dtype=np.uint64).astype(np.uint32)
    return Texture(
        name="sheet",
        tiling=True,
        layers=2,
        width=8,
        height=4,
        levels=4,
        wrap=0,
        images=[lv0, lv0[::2, ::2].copy(), lv0[:1, :2].copy(), lv0[:1, :1].copy()],
        grid=(2, 2),
        clips=[Clip("idle", [0, 1], 4.0, True, ""), Clip("walk", [2, 3, 2], 8.0, False, "idle")],
        play="idle",
        edge=Edge(2, 0.25, 0.5, 7),
        autotile=False,
    )


def material() -> Material:
    return Material(
        name="wood",
        albedo=0xFF8040C0,
        texture="sheet",
        unlit=False,
        alpha="cutout",
        cutoff=0.5,
        cull=1,
        filter=1,
        grid=(2, 2),
    )


def entity(name="crate", **kw) -> Entity:
    base = dict(
        name=name,
        kind="prop",
        model="crate",
        material="wood",
        position=(1.0, 0.0, -2.0),
        rotation_deg=(0.0, 90.0, 0.0),
        scale=(1.0, 1.0, 1.0),
        tags=["solid"],
        parent="",
        visible=True,
        hitbox=((-0.5, 0.0, -0.5), (0.5, 1.0, 0.5)),
        layer=3,
        frame=2,
        anim="idle",
    )
    base.update(kw)
    return Entity(**base)


def camera() -> Camera:
    return Camera(
        ortho=False, fov_deg=60.0, size=0.0, near=0.1, far=100.0, position=(0.0, 5.0, 10.0), look_at=(0.0, 0.0, 0.0)
    )


def light() -> Light:
    return Light(direction=(-0.4, -1.0, -0.3), color=(1.0, 1.0, 1.0), ambient=(0.05, 0.05, 0.05))


def scene() -> Scene:
    return Scene(
        name="yard",
        camera=camera(),
        light=light(),
        background=0xFF202830,
        entities=[entity(), entity("lamp", hitbox=None, parent="crate", tags=[])],
        map="yard_map",
    )


def prefab() -> Prefab:
    return Prefab(
        name="hut",
        footprint=(4.0, 3.0),
        tags=["house"],
        biomes=["plain"],
        distances=[Distance("house", 6.0), Distance("tree", 2.0)],
        entities=[entity()],
    )


def world() -> World:
    return World(
        name="overworld",
        seed=2**63 + 7,
        cell=1.0,
        chunk=16,
        extent=512,
        view=1,
        biome_scale=64,
        camera=camera(),
        light=light(),
        background=0xFF202830,
        biomes=[Biome("plain", "grass", 3), Biome("forest", "moss", 2)],
        scatter=[Scatter("tree", ["forest"], 0.06)],
        sites=[Site("village", ["village"], ["plain"], 48, 0.5)],
        places=[Place("capital", "city", 120, -40, 90)],
        entities=[entity("player", hitbox=None)],
        terrain=WorldTerrain(1.5, 48, True, -1.0, "", 24.0),
        features=[Feature("north_hills", "hill", 10, -60, 24, True, 9.0, 1.0, 0, 0.0)],
        vegetation=[Vegetation("grass", "", "grass_tuft", 0.3, ["plain"], False, 0, 0, 0, 0.8, 1.2)],
    )


def tilemap() -> Tilemap:
    cells = np.array([[1, 1, 0], [2, 0, 1]], np.uint16)
    return Tilemap(
        name="yard_map",
        columns=3,
        rows=2,
        tile=1.0,
        origin=(0.0, 0.0, 0.0),
        terrains=[
            MapTerrain(ord("g"), "grass", "grass_tex", "", True, 0, 1, 4, 3, ["walk"]),
            MapTerrain(ord("#"), "wall", "", "stone", False, 0, 0, 1, 0, []),
        ],
        layers=[Layer("ground", 0.0, 0, False, cells), Layer("top", 1.0, 5, True, np.zeros((2, 3), np.uint16))],
        objects=[
            Object("door", 1, 0, 1, 2, "door", ["exit"], [Prop("to", "house"), Prop("locked", True), Prop("hp", 2.5)])
        ],
    )


BODIES = {
    "MESH": mesh,
    "TEXR": texture,
    "MATL": material,
    "SCEN": scene,
    "PRFB": prefab,
    "WRLD": world,
    "TMAP": tilemap,
}
KIND_OF = {
    "MESH": "model",
    "TEXR": "texture",
    "MATL": "material",
    "SCEN": "scene",
    "PRFB": "prefab",
    "WRLD": "world",
    "TMAP": "map",
}


def meta(kind="model", name="quad", deps=()) -> Meta:
    return Meta("veduta-asset/0.8.0", tuple(deps), kind, name, f"{kind}s/{name}.v{kind}", "ab" * 32)
