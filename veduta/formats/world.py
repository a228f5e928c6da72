"""WRLD: compiled world (container spec, "WRLD — compiled world")."""

from __future__ import annotations

from veduta.formats.codec import BOOL, COLOR, F32, I64, STR, U64, List, Struct, StructType
from veduta.formats.scene import ENTITIES, Camera, Light

FEATURE_KINDS = ("hill", "plain", "lake", "sea")


class Biome(Struct):
    FIELDS = (("name", STR), ("ground", STR), ("weight", I64))


class Scatter(Struct):
    FIELDS = (("prefab", STR), ("biomes", List(STR)), ("density", F32))


class Site(Struct):
    FIELDS = (("tag", STR), ("prefabs", List(STR)), ("biomes", List(STR)), ("spacing", I64), ("chance", F32))


class Place(Struct):
    FIELDS = (("name", STR), ("prefab", STR), ("x", I64), ("z", I64), ("rotation", I64))


class Terrain(Struct):
    """WRLD fields 24-29."""

    FIELDS = (
        ("relief", F32),
        ("relief_scale", I64),
        ("sea", BOOL),
        ("sea_level", F32),
        ("water", STR),
        ("lod_distance", F32),
    )


class Feature(Struct):
    FIELDS = (
        ("name", STR),
        ("kind", STR),
        ("x", I64),
        ("z", I64),
        ("radius", I64),
        ("has_height", BOOL),
        ("height", F32),
        ("depth", F32),
        ("falloff", I64),
        ("roughness", F32),
    )


class Vegetation(Struct):
    FIELDS = (
        ("name", STR),
        ("prefab", STR),
        ("model", STR),
        ("density", F32),
        ("biomes", List(STR)),
        ("area", BOOL),
        ("x", I64),
        ("z", I64),
        ("radius", I64),
        ("scale_min", F32),
        ("scale_max", F32),
    )


class World(Struct):
    CHUNK = "WRLD"
    FIELDS = (
        ("name", STR),
        ("seed", U64),
        ("cell", F32),
        ("chunk", I64),
        ("extent", I64),
        ("view", I64),
        ("biome_scale", I64),
        ("camera", StructType(Camera)),
        ("light", StructType(Light)),
        ("background", COLOR),
        ("biomes", List(StructType(Biome))),
        ("scatter", List(StructType(Scatter))),
        ("sites", List(StructType(Site))),
        ("places", List(StructType(Place))),
        ("entities", ENTITIES),
        ("terrain", StructType(Terrain)),
        ("features", List(StructType(Feature))),
        ("vegetation", List(StructType(Vegetation))),
    )

    @property
    def cells(self) -> int:
        """Cells from the origin to the world's edge on each axis (extent x chunk)."""
        return self.extent * self.chunk

    def check(self, fail):
        def rng(field, v, lo, hi, lo_open=False, item=""):
            ok = (lo < v if lo_open else lo <= v) and v <= hi
            if not ok:  # *item* names the list item and its field, e.g. features[2].height
                raise fail(field, f"{item + ' ' if item else ''}{v} out of range {'(' if lo_open else '['}{lo}, {hi}]")

        rng("cell", self.cell, 0, 64, lo_open=True)
        rng("chunk", self.chunk, 4, 64)
        rng("extent", self.extent, 1, 4096)
        if not self.extent * self.chunk * self.cell <= 8192:
            raise fail("extent", f"extent x chunk x cell = {self.extent * self.chunk * self.cell:g} m, over 8192")
        rng("view", self.view, 1, 4)
        rng("biome_scale", self.biome_scale, 4, 4096)
        if not self.biomes:
            raise fail("biomes", "a world needs at least one biome")
        for i, b in enumerate(self.biomes):
            rng("biomes", b.weight, 1, 1000, item=f"biomes[{i}].weight")
        for i, s in enumerate(self.scatter or []):
            rng("scatter", s.density, 0, 1, lo_open=True, item=f"scatter[{i}].density")
        for i, s in enumerate(self.sites or []):
            rng("sites", s.spacing, 2, 4096, item=f"sites[{i}].spacing")
            rng("sites", s.chance, 0, 1, lo_open=True, item=f"sites[{i}].chance")
        n = self.cells
        for p in self.places or []:
            if not (-n <= p.x < n and -n <= p.z < n):
                raise fail("places", f"place {p.name!r} cell [{p.x}, {p.z}] is outside the world [{-n}, {n - 1}]")
            if p.rotation not in (0, 90, 180, 270):
                raise fail("places", f"place {p.name!r} rotation {p.rotation} is not 0, 90, 180 or 270")
        t = self.terrain
        rng("terrain", t.relief, 0, 256, item="terrain.relief")
        rng("terrain", t.relief_scale, 4, 4096, item="terrain.relief_scale")
        rng("terrain", t.sea_level, -1024, 1024, item="terrain.sea_level")
        if not t.lod_distance > 0:
            raise fail("terrain", f"lod_distance {t.lod_distance} is not above 0")
        for i, f in enumerate(self.features or []):
            if f.kind not in FEATURE_KINDS:
                raise fail("features", f"feature {f.name!r} kind {f.kind!r} is not hill, plain, lake or sea")
            if not (-n <= f.x <= n and -n <= f.z <= n):
                raise fail("features", f"feature {f.name!r} vertex [{f.x}, {f.z}] is outside the world")
            rng("features", f.radius, 1, 16384, item=f"features[{i}].radius")
            rng("features", f.height, -1024, 1024, item=f"features[{i}].height")
            rng("features", f.depth, 0, 256, lo_open=True, item=f"features[{i}].depth")
            rng("features", f.falloff, 0, 16384, item=f"features[{i}].falloff")
            rng("features", f.roughness, 0, 1, item=f"features[{i}].roughness")
        for i, v in enumerate(self.vegetation or []):
            if bool(v.prefab) == bool(v.model):
                raise fail("vegetation", f"vegetation {v.name!r} needs exactly one of prefab and model")
            rng("vegetation", v.density, 0, 1, lo_open=True, item=f"vegetation[{i}].density")
            if v.area:
                if not (-n <= v.x <= n and -n <= v.z <= n):
                    raise fail("vegetation", f"vegetation {v.name!r} centre [{v.x}, {v.z}] is outside the world")
                rng("vegetation", v.radius, 1, 16384, item=f"vegetation[{i}].radius")
            if not (0 < v.scale_min <= v.scale_max <= 16):
                raise fail(
                    "vegetation",
                    f"vegetation {v.name!r} scale [{v.scale_min}, {v.scale_max}] is not 0 < min <= max <= 16",
                )
