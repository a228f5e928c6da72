"""Test worlds and prefabs built from plain dataclasses with the attribute names of the decoded
WRLD / PRFB records (veduta.world is duck-typed over them)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Biome:
    name: str
    ground: str
    weight: int


@dataclass
class Scatter:
    prefab: str
    biomes: list | None
    density: float


@dataclass
class Site:
    tag: str
    prefabs: list
    biomes: list | None
    spacing: int
    chance: float


@dataclass
class Place:
    name: str
    prefab: str
    x: int
    z: int
    rotation: int = 0


@dataclass
class Terrain:
    relief: float = 0.0
    relief_scale: int = 48
    sea: bool = False
    sea_level: float = 0.0
    water: str = ""
    lod_distance: float = 24.0


@dataclass
class Feature:
    name: str
    kind: str
    x: int
    z: int
    radius: int
    has_height: bool = False
    height: float = 0.0
    depth: float = 2.0
    falloff: int = 4
    roughness: float = 0.3


@dataclass
class Vegetation:
    name: str
    prefab: str = ""
    model: str = ""
    density: float = 0.5
    biomes: list | None = None
    area: bool = False
    x: int = 0
    z: int = 0
    radius: int = 0
    scale_min: float = 1.0
    scale_max: float = 1.0


@dataclass
class Distance:
    tag: str
    meters: float


@dataclass
class Entity:
    name: str
    kind: str = "prop"
    model: str = ""
    material: str = ""
    position: tuple = (0.0, 0.0, 0.0)
    rotation_deg: tuple = (0.0, 0.0, 0.0)
    scale: tuple = (1.0, 1.0, 1.0)
    tags: list | None = None
    parent: str = ""
    visible: bool = True
    hitbox: tuple | None = None
    layer: int = 0
    frame: int = 0
    anim: str = ""


@dataclass
class Prefab:
    name: str
    footprint: tuple
    tags: list | None = None
    biomes: list | None = None
    distances: list | None = None
    entities: list | None = None


@dataclass
class World:
    name: str = "test"
    seed: int = 7
    cell: float = 1.0
    chunk: int = 16
    extent: int = 512
    view: int = 1
    biome_scale: int = 64
    camera: object = None
    light: object = None
    background: int = 0xFF202830
    biomes: list = field(default_factory=lambda: [Biome("plain", "grass", 3), Biome("forest", "moss", 2)])
    scatter: list | None = None
    sites: list | None = None
    places: list | None = None
    entities: list | None = None
    terrain: Terrain | None = None
    features: list | None = None
    vegetation: list | None = None


def example_prefabs() -> dict[str, Prefab]:
    return {
        "tree": Prefab("tree", (1.0, 1.0), tags=["tree"], entities=[Entity("trunk", model="tree")]),
        "oak": Prefab(
            "oak",
            (1.0, 1.0),
            tags=["tree"],
            distances=[Distance("village", 3.0)],
            entities=[Entity("oak", model="oak")],
        ),
        "village": Prefab(
            "village",
            (8.0, 6.0),
            tags=["village"],
            biomes=["plain"],
            distances=[Distance("city", 20.0), Distance("tree", 2.0)],
            entities=[
                Entity("hall", model="hall", position=(1.0, 0.0, 2.0)),
                Entity("well", model="well", position=(-2.0, 0.0, 0.0), parent="hall"),
            ],
        ),
        "city": Prefab(
            "city",
            (12.0, 9.0),
            tags=["city"],
            distances=[Distance("tree", 4.0)],
            entities=[Entity("keep", model="keep")],
        ),
    }


def example_world(**changes) -> World:
    """The spec's example world (world-format.md, Example)."""
    w = World(
        name="overworld",
        seed=7,
        terrain=Terrain(relief=1.5, relief_scale=48, lod_distance=24),
        features=[
            Feature("north_hills", "hill", 10, -60, 24, has_height=True, height=9.0, falloff=0, roughness=0),
            Feature("town_ground", "plain", 126, -34, 14, falloff=4, roughness=0),
            Feature("mirror_lake", "lake", -30, 20, 9, depth=2.5, falloff=4, roughness=0.3),
            Feature("west_sea", "sea", -700, 0, 560, has_height=True, height=-0.5, depth=8, falloff=8, roughness=0.3),
        ],
        vegetation=[
            Vegetation("grass", model="grass_tuft", density=0.3, biomes=["plain"]),
            Vegetation("oak_grove", prefab="oak", density=0.25, area=True, x=40, z=10, radius=12),
            Vegetation(
                "poppies", model="poppy", density=0.5, area=True, x=-12, z=8, radius=6, scale_min=0.7, scale_max=1.3
            ),
        ],
        scatter=[Scatter("tree", ["forest"], 0.06)],
        sites=[Site("village", ["village"], ["plain"], 48, 0.5)],
        places=[Place("capital", "city", 120, -40, 90)],
        entities=[Entity("player", kind="player", model="hero")],
    )
    for k, v in changes.items():
        setattr(w, k, v)
    return w
