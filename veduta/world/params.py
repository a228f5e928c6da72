"""The world's rules as integers (docs/world-generation.md, section 2).

The decoded WRLD and PRFB records (veduta.formats.world / veduta.formats.prefab, or anything
with the same attribute names) are read here and nowhere else. Every float the generator needs is
converted once, exactly (:mod:`veduta.world.intmath`), so the rest of the package is integer
arithmetic. Empty lists may arrive as ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from veduta.world.intmath import MASK64, stream_key, to_milli, to_q16, to_threshold32


def _list(v) -> list:
    return list(v) if v else []


@dataclass(frozen=True)
class PrefabP:
    """A prefab as the generator sees it."""

    name: str
    w_mm: int
    d_mm: int
    fw: int  # footprint width in cells (x), at least 1
    fd: int  # footprint depth in cells (z), at least 1
    tags: tuple[str, ...]
    biomes: frozenset[str]  # empty: any biome
    distances: dict[str, int]  # tag -> min distance in mm
    record: Any = field(compare=False, repr=False)

    def allows(self, biome: str) -> bool:
        return not self.biomes or biome in self.biomes


@dataclass(frozen=True)
class FeatureP:
    index: int
    name: str
    kind: str  # hill, plain, lake, sea
    x: int
    z: int
    radius: int  # cells
    has_height: bool
    height_mm: int
    depth_mm: int
    falloff: int  # cells
    rough_q16: int
    key: int  # stream key of the feature (angular noise)


@dataclass(frozen=True)
class SiteRuleP:
    index: int
    tag: str
    prefabs: tuple[str, ...]
    biomes: frozenset[str]
    spacing: int
    chance_t: int
    key_draw: int
    key_offset: int
    stream: str


@dataclass(frozen=True)
class ScatterRuleP:
    index: int
    prefab: str
    biomes: frozenset[str]
    density_t: int
    key: int
    stream: str


@dataclass(frozen=True)
class VegRuleP:
    index: int
    name: str
    prefab: str  # "" for a model rule
    model: str  # "" for a prefab rule
    density_t: int
    biomes: frozenset[str]
    area: bool
    x: int
    z: int
    radius: int
    scale_min: int  # thousandths
    scale_max: int
    key: int
    key_place: int
    stream: str


@dataclass(frozen=True)
class PlaceP:
    index: int
    name: str
    prefab: str
    x: int
    z: int
    rotation: int


@dataclass(frozen=True)
class WorldP:
    """All integer parameters of one world (see docs/world-generation.md, section 2)."""

    name: str
    seed: int
    cell_mm: int
    chunk: int
    extent: int
    biome_scale: int
    biome_names: tuple[str, ...]
    biome_grounds: tuple[str, ...]
    biome_weights: tuple[int, ...]
    relief_mm: int
    relief_scale: int
    sea: bool
    sea_level_mm: int
    features: tuple[FeatureP, ...]
    scatter: tuple[ScatterRuleP, ...]
    sites: tuple[SiteRuleP, ...]
    places: tuple[PlaceP, ...]
    vegetation: tuple[VegRuleP, ...]

    @property
    def cells(self) -> int:
        """The world spans cells [-cells, cells) on each axis."""
        return self.extent * self.chunk

    def biome_index(self, name: str) -> int:
        return self.biome_names.index(name)


def prefab_names(world) -> list[str]:
    """Every prefab a world names (scatter, sites, places, vegetation prefab rules), sorted."""
    names = set()
    for s in _list(world.scatter):
        names.add(s.prefab)
    for s in _list(world.sites):
        names.update(_list(s.prefabs))
    for p in _list(world.places):
        names.add(p.prefab)
    for v in _list(getattr(world, "vegetation", None)):
        if v.prefab:
            names.add(v.prefab)
    return sorted(names)


def _distances(rec) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in _list(getattr(rec, "distances", None)):
        if isinstance(d, (tuple, list)):
            tag, meters = d
        else:
            tag, meters = d.tag, d.meters
        out[tag] = max(out.get(tag, 0), to_milli(meters))
    return out


def prefab_params(rec, cell_mm: int) -> PrefabP:
    w, d = rec.footprint[0], rec.footprint[1]
    w_mm, d_mm = to_milli(w), to_milli(d)
    return PrefabP(
        name=rec.name,
        w_mm=w_mm,
        d_mm=d_mm,
        fw=max(1, -(-w_mm // cell_mm)),
        fd=max(1, -(-d_mm // cell_mm)),
        tags=tuple(_list(rec.tags)),
        biomes=frozenset(_list(rec.biomes)),
        distances=_distances(rec),
        record=rec,
    )


def _occurrence_streams(prefix: str, names: list[str]) -> list[str]:
    """``prefix/name/k`` where k counts earlier rules with the same name (stable under edits of
    other rules)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(f"{prefix}/{n}/{k}")
    return out


def world_params(world) -> WorldP:
    seed = int(world.seed) & MASK64
    cell_mm = max(1, to_milli(world.cell))
    terrain = getattr(world, "terrain", None)
    if terrain is not None:
        relief_mm = to_milli(terrain.relief)
        relief_scale = int(terrain.relief_scale) or 1
        sea = bool(terrain.sea)
        sea_level_mm = to_milli(terrain.sea_level)
    else:
        relief_mm, relief_scale, sea, sea_level_mm = 0, 1, False, 0

    biomes = _list(world.biomes)
    features = []
    for i, f in enumerate(_list(getattr(world, "features", None))):
        features.append(
            FeatureP(
                index=i,
                name=f.name,
                kind=f.kind,
                x=int(f.x),
                z=int(f.z),
                radius=max(1, int(f.radius)),
                has_height=bool(f.has_height),
                height_mm=to_milli(f.height),
                depth_mm=to_milli(f.depth),
                falloff=max(0, int(f.falloff)),
                rough_q16=min(65536, max(0, to_q16(f.roughness))),
                key=stream_key(seed, f"feature/{f.name}"),
            )
        )

    scatter_recs = _list(world.scatter)
    scatter = []
    scatter_streams = _occurrence_streams("scatter", [s.prefab for s in scatter_recs])
    for i, (s, stream) in enumerate(zip(scatter_recs, scatter_streams)):
        scatter.append(
            ScatterRuleP(
                index=i,
                prefab=s.prefab,
                biomes=frozenset(_list(s.biomes)),
                density_t=to_threshold32(s.density),
                key=stream_key(seed, stream),
                stream=stream,
            )
        )

    site_recs = _list(world.sites)
    sites = []
    for i, (s, stream) in enumerate(zip(site_recs, _occurrence_streams("site", [s.tag for s in site_recs]))):
        sites.append(
            SiteRuleP(
                index=i,
                tag=s.tag,
                prefabs=tuple(_list(s.prefabs)),
                biomes=frozenset(_list(s.biomes)),
                spacing=max(1, int(s.spacing)),
                chance_t=to_threshold32(s.chance),
                key_draw=stream_key(seed, stream + "/draw"),
                key_offset=stream_key(seed, stream + "/offset"),
                stream=stream,
            )
        )

    places = tuple(
        PlaceP(index=i, name=p.name, prefab=p.prefab, x=int(p.x), z=int(p.z), rotation=int(p.rotation) % 360)
        for i, p in enumerate(_list(world.places))
    )

    vegetation = []
    for i, v in enumerate(_list(getattr(world, "vegetation", None))):
        stream = f"vegetation/{v.name}"
        vegetation.append(
            VegRuleP(
                index=i,
                name=v.name,
                prefab=v.prefab or "",
                model=v.model or "",
                density_t=to_threshold32(v.density),
                biomes=frozenset(_list(v.biomes)),
                area=bool(v.area),
                x=int(v.x),
                z=int(v.z),
                radius=int(v.radius),
                scale_min=to_milli(v.scale_min),
                scale_max=to_milli(v.scale_max),
                key=stream_key(seed, stream),
                key_place=stream_key(seed, stream + "/place"),
                stream=stream,
            )
        )

    return WorldP(
        name=world.name,
        seed=seed,
        cell_mm=cell_mm,
        chunk=int(world.chunk),
        extent=int(world.extent),
        biome_scale=max(1, int(world.biome_scale)),
        biome_names=tuple(b.name for b in biomes),
        biome_grounds=tuple(b.ground for b in biomes),
        biome_weights=tuple(max(1, int(b.weight)) for b in biomes),
        relief_mm=relief_mm,
        relief_scale=relief_scale,
        sea=sea,
        sea_level_mm=sea_level_mm,
        features=tuple(features),
        scatter=tuple(scatter),
        sites=tuple(sites),
        places=places,
        vegetation=tuple(vegetation),
    )
