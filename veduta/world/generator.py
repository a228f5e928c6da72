"""The world generator: one object per (world, prefabs), answering for any rectangle of cells.

Everything is a pure function of the world and its prefabs; the only state is caches (site
decisions, and the layers of recently used chunks). Array layout: ``a[j, i]`` is the value at
x = x0 + i, z = z0 + j. Vertex arrays of a cell rectangle w x h are (h + 1, w + 1).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from veduta.world import jit, layer_kernels
from veduta.world.cover import NONE, SCATTER, STRUCTURE, Cover, Plant, PlantArrays, PlantPoints
from veduta.world.intmath import hash2_grid
from veduta.world.params import PrefabP, prefab_params, world_params
from veduta.world.structures import PAD_BLEND, StructArrays, Structure, Structures, apply_pads, coord, pad_at, pads_at
from veduta.world.terrain import NO_WATER, Terrain

CHUNK_CACHE = 64


def chunk_name(cx: int, cz: int) -> str:
    """``chunk_<x>_<z>``, a negative coordinate written with n: chunk [-3, 12] is chunk_n3_12."""
    return f"chunk_{coord(cx)}_{coord(cz)}"


def metres(mm: int) -> float:
    return int(mm) / 1000.0


@dataclass
class Layers:
    """Everything generated over a cell rectangle."""

    x0: int
    z0: int
    w: int
    h: int
    ground: np.ndarray  # (h + 1, w + 1) final ground of the vertices, mm
    biome: np.ndarray  # (h, w) biome indices
    #: (h, w) water level of each cell, mm (NO_WATER for none); with layers(points=True) and the
    #: kernels, a read-only view where no water reaches the rectangle (as is ``water_vertex``)
    level: np.ndarray
    centre: np.ndarray  # (h, w) ground at each cell centre, mm
    wet: np.ndarray  # (h, w) the cell centre is under water
    structures: list[Structure]  # structures near the rectangle (canonical order)
    owner_kind: np.ndarray  # (h, w) NONE, STRUCTURE, SCATTER or VEGETATION
    owner_index: np.ndarray  # (h, w) index into structures, or the rule's index
    plants: list[PlantArrays]
    water_vertex: np.ndarray | None = None  # (h + 1, w + 1) water level of the vertices, mm
    points: list[PlantPoints] | None = None  # with layers(points=True): the plants, ``plants`` empty
    #: with layers(points=True): (kind, rule index, rows, columns) of the cells each scatter and
    #: vegetation prefab rule takes (Cover.owners' ``taken``)
    taken: list[tuple[int, int, np.ndarray, np.ndarray]] | None = None


class Generator:
    """The deterministic generator of one world.

    ``prefabs`` maps prefab names to decoded prefab records (PRFB); missing prefabs are simply
    not generated (sites, places, scatter and vegetation naming them produce nothing).
    """

    def __init__(self, world: Any, prefabs: Mapping[str, Any] | None = None, like: Generator | None = None):
        """``like``: another generator of (nearly) the same world, e.g. the world before an edit;
        what the two compute alike (where sites are drawn, biomes, relief) is computed once."""
        self.world = world
        self.p = world_params(world)
        self.prefabs: dict[str, PrefabP] = {
            name: prefab_params(rec, self.p.cell_mm) for name, rec in sorted((prefabs or {}).items())
        }
        self.terrain = Terrain(self.p)
        self.structs: Structures = Structures(
            self.p, self.prefabs, self.terrain, like.structs if like is not None else None
        )
        self.cover = Cover(self.p, self.prefabs)
        #: cells around a rectangle within which structures matter (pads and min_distance)
        self.margin = max(PAD_BLEND + 1, self.structs.reach)
        self._chunks: OrderedDict[tuple[int, int], Layers] = OrderedDict()

    # -- vectorised layers ----------------------------------------------------------------------

    def heights(self, x0: int, z0: int, w: int, h: int) -> np.ndarray:
        """Final ground (relief, features, pads) of the vertices x0..x0+w-1, z0..z0+h-1:
        (h, w) int64 millimetres."""
        structs = self.structs.in_rect(x0, z0, w, h, PAD_BLEND + 1)
        return apply_pads(self.terrain.ground(x0, z0, w, h), x0, z0, structs)

    def heights_at(self, xs: np.ndarray, zs: np.ndarray, structs: StructArrays | None = None) -> np.ndarray:
        """Final ground at the vertices [xs, zs] (1-D int64 arrays of one length), mm: what
        :meth:`heights` gives there, for scattered vertices (samples of a large area).
        ``structs``: the structures of an area holding the vertices (and PAD_BLEND + 1 around)."""
        xs = np.asarray(xs, dtype=np.int64)
        zs = np.asarray(zs, dtype=np.int64)
        if not len(xs):
            return np.zeros(0, dtype=np.int64)
        if structs is None:
            x0, z0 = int(xs.min()), int(zs.min())
            structs = self.structs.arrays(x0, z0, int(xs.max()) - x0 + 1, int(zs.max()) - z0 + 1, PAD_BLEND + 1)
        return pads_at(self.terrain.ground_points(xs, zs), xs, zs, structs)

    def biomes(self, x0: int, z0: int, w: int, h: int) -> np.ndarray:
        """Biome indices (into the world's biome list) of the cells of a rectangle, (h, w) int64."""
        return self.terrain.biomes(x0, z0, w, h)

    def water(self, x0: int, z0: int, w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
        """Water of the cells of a rectangle: (level, wet), each (h, w). level is int64 mm
        (:data:`NO_WATER` where there is none), wet is bool (the cell centre is below the level)."""
        ground = self.heights(x0, z0, w + 1, h + 1)
        level, _, wet, _ = self._water(ground, x0, z0, w, h)
        return level, wet

    def _water(self, ground: np.ndarray, x0: int, z0: int, w: int, h: int, fast: bool = False):
        """(cell level, cell centre ground, wet, vertex levels); ``fast``: with the compiled kernels
        (:meth:`layers`)."""
        if not self.terrain.wet_possible(x0, z0, x0 + w, z0 + h):  # no water can reach a vertex
            if fast:  # (the bands of the pass over the world: the levels as read-only views, not written)
                dry = np.broadcast_to(np.int64(NO_WATER), (h + 1, w + 1))
                return dry[:h, :w], layer_kernels.centres(ground), np.zeros((h, w), dtype=bool), dry
            centre = (ground[:-1, :-1] + ground[1:, 1:]) >> 1
            lv = np.full((h + 1, w + 1), NO_WATER, dtype=np.int64)
            return np.full((h, w), NO_WATER, dtype=np.int64), centre, np.zeros((h, w), dtype=bool), lv
        if fast:
            lv = layer_kernels.terrain_water_levels(self.terrain, x0, z0, w + 1, h + 1)
            level, centre, wet = layer_kernels.cell_water(ground, lv)
            return level, centre, wet, lv
        lv = self.terrain.water_levels(x0, z0, w + 1, h + 1)
        centre = (ground[:-1, :-1] + ground[1:, 1:]) >> 1
        level = np.maximum(np.maximum(lv[:-1, :-1], lv[:-1, 1:]), np.maximum(lv[1:, :-1], lv[1:, 1:]))
        return level, centre, centre < level, lv

    def terrain_layers(self, x0: int, z0: int, w: int, h: int):
        """(vertex ground (h+1, w+1), biomes, cell water level, cell centre ground, wet) in one pass."""
        return self._terrain_layers(x0, z0, w, h)[:5]

    def _terrain_layers(
        self, x0: int, z0: int, w: int, h: int, near: list[Structure] | None = None, fast: bool = False
    ):
        """``near``: structures holding those within PAD_BLEND + 1 cells of the vertices (the
        pads), in canonical order (a list of more, :meth:`layers`'), or None to find them;
        ``fast``: the biomes and the water with the compiled kernels (:meth:`layers`)."""
        if near is None:
            ground = self.heights(x0, z0, w + 1, h + 1)
        else:
            pads = _within(near, x0, z0, w + 1, h + 1, PAD_BLEND + 1)
            ground = apply_pads(self.terrain.ground(x0, z0, w + 1, h + 1), x0, z0, pads)
        level, centre, wet, lv = self._water(ground, x0, z0, w, h, fast)
        biome = layer_kernels.terrain_biomes(self.terrain, x0, z0, w, h) if fast else self.biomes(x0, z0, w, h)
        return ground, biome, level, centre, wet, lv

    def layers(self, x0: int, z0: int, w: int, h: int, points: bool = False) -> Layers:
        """Everything over a cell rectangle (ground, biomes, water, owners, plants); ``points``:
        the plants as :class:`PlantPoints` (in ``points``), computed only where one grows. The
        structures near it are found once, for the pads of its vertices and its owners.

        With ``points`` (the drawing passes' rectangles, :meth:`Drawer.block`) where
        :func:`jit.enabled` (within :func:`jit.wanted`: the bands of ``inspect world --all``), the
        biomes, water, owners and plants come from the compiled kernels
        (veduta.world.layer_kernels: the same values); other layers (the cook's, a query's) never
        ask."""
        fast = points and jit.enabled()
        near = self.structs.in_rect(x0, z0, w + 1, h + 1, self.margin)  # (margin >= PAD_BLEND + 1)
        ground, biome, level, centre, wet, lv = self._terrain_layers(x0, z0, w, h, near, fast)
        structs = _within(near, x0, z0, w, h, self.margin)
        allowed: dict = {}  # each biome table's cells, computed once for owners and plants
        taken: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        if fast:
            kind, index = layer_kernels.cover_owners(self.cover, x0, z0, biome, wet, structs, taken)
            got = layer_kernels.cover_plant_points(self.cover, x0, z0, biome, wet, kind == STRUCTURE, ground)
            return Layers(x0, z0, w, h, ground, biome, level, centre, wet, structs, kind, index, [], lv, got, taken)
        kind, index = self.cover.owners(x0, z0, biome, wet, structs, allowed, taken)
        if points:
            got = self.cover.plant_points(x0, z0, biome, wet, kind == STRUCTURE, ground, allowed)
            return Layers(x0, z0, w, h, ground, biome, level, centre, wet, structs, kind, index, [], lv, got, taken)
        plants = self.cover.plants(x0, z0, biome, wet, kind == STRUCTURE, ground)
        return Layers(x0, z0, w, h, ground, biome, level, centre, wet, structs, kind, index, plants, lv)

    def rule_cells(self, rule: int, x0: int, z0: int, w: int, h: int) -> np.ndarray:
        """(h, w) bool: the cells of a rectangle that vegetation rule ``rule`` (its index) takes
        there: a plant of a model rule, or the cell a prefab rule wins. What :meth:`layers` says
        (``plants[...].mask`` or ``owner_kind == VEGETATION``), computing only what that needs:
        water only where a lake, sea or the sea level can reach, the other rules' cells only for a
        prefab rule."""
        from veduta.world.cover import VEGETATION, biome_ok, in_area

        r = self.p.vegetation[rule]
        biome = self.biomes(x0, z0, w, h)
        if self.terrain.wet_possible(x0, z0, x0 + w, z0 + h):
            wet = self.water(x0, z0, w, h)[1]
        else:
            wet = np.zeros((h, w), dtype=bool)
        if r.prefab:
            structs = self.structs.in_rect(x0, z0, w, h, self.margin)
            kind, index = self.cover.owners(x0, z0, biome, wet, structs)
            return (kind == VEGETATION) & (index == rule)
        xs = np.arange(x0, x0 + w, dtype=np.int64)
        zs = np.arange(z0, z0 + h, dtype=np.int64)
        n = self.p.cells
        ok = biome_ok(self.p, r.biomes, None)[biome]
        mask = ok & ~wet & ((xs >= -n) & (xs < n))[None, :] & ((zs >= -n) & (zs < n))[:, None]
        if r.area:
            mask &= in_area(r, xs[None, :], zs[:, None])
        mask &= (hash2_grid(r.key, xs, zs) >> 32) < r.density_t
        for s in self.structs.in_rect(x0, z0, w, h, 0):  # no plant on a footprint
            mask[max(0, s.z0 - z0) : max(0, s.z1 - z0), max(0, s.x0 - x0) : max(0, s.x1 - x0)] = False
        return mask

    def chunk_layers(self, cx: int, cz: int) -> Layers:
        """The layers of chunk [cx, cz] (cached, least recently used dropped first)."""
        key = (cx, cz)
        lay = self._chunks.get(key)
        if lay is None:
            c = self.p.chunk
            lay = self.layers(cx * c, cz * c, c, c)
            self._chunks[key] = lay
            if len(self._chunks) > CHUNK_CACHE:
                self._chunks.popitem(last=False)
        else:
            self._chunks.move_to_end(key)
        return lay

    def structures_in(self, x0: int, z0: int, w: int, h: int) -> list[Structure]:
        """Sites and places whose footprint overlaps the cell rectangle, in canonical order."""
        return self.structs.in_rect(x0, z0, w, h, 0)

    # -- one cell (scalar path, shares no array code with the layers) ---------------------------

    def cell_state(self, x: int, z: int):
        t = self.terrain
        structs = self.structs.in_rect(x, z, 1, 1, self.margin)
        corners = tuple(
            pad_at(t.ground_at(vx, vz), vx, vz, structs) for vx, vz in ((x, z), (x + 1, z), (x, z + 1), (x + 1, z + 1))
        )
        level = max(t.water_level_at(vx, vz) for vx, vz in ((x, z), (x + 1, z), (x, z + 1), (x + 1, z + 1)))
        centre = (corners[0] + corners[3]) >> 1
        wet = centre < level
        biome = t.biome_at(x, z)
        return structs, corners, level, centre, wet, biome

    def cell_owner(self, x: int, z: int) -> dict | None:
        """What owns cell [x, z]: {kind: place/site/scatter/vegetation, name, prefab, ...} or None."""
        structs, corners, level, centre, wet, biome = self.cell_state(x, z)
        kind, index = self.cover.owner_at(x, z, biome, wet, structs)
        return self.owner_json(x, z, kind, index, structs)

    def plants(self, x: int, z: int) -> list[dict]:
        """The plants of cell [x, z] (model vegetation rules), as in :func:`veduta.world.query.query`."""
        structs, corners, level, centre, wet, biome = self.cell_state(x, z)
        covered = any(s.covers(x, z) for s in structs)
        return [self.plant_json(x, z, pl) for pl in self.cover.plants_at(x, z, biome, wet, covered, corners)]

    def _local_index(self, x: int, z: int) -> int:
        c = self.p.chunk
        return (z % c) * c + (x % c)

    def owner_json(self, x, z, kind, index, structs) -> dict | None:
        if kind == NONE:
            return None
        if kind == STRUCTURE:
            s = structs[index]
            out = {"kind": s.kind, "name": s.name, "prefab": s.prefab}
            if s.kind == "site":
                out["rule"] = self.p.sites[s.rule].tag
            return out
        c = self.p.chunk
        base = f"{chunk_name(x // c, z // c)}"
        local = self._local_index(x, z)
        if kind == SCATTER:
            r = self.p.scatter[index]
            return {"kind": "scatter", "name": f"{base}_scatter_{local}", "prefab": r.prefab, "rule": index}
        r = self.p.vegetation[index]
        return {"kind": "vegetation", "name": f"{base}_veg_{r.name}_{local}", "prefab": r.prefab, "rule": r.name}

    def plant_json(self, x: int, z: int, pl: Plant) -> dict:
        r = self.p.vegetation[pl.rule]
        c = self.p.chunk
        return {
            "name": f"{chunk_name(x // c, z // c)}_plant_{r.name}_{self._local_index(x, z)}",
            "rule": r.name,
            "model": r.model,
            "position": [metres(pl.x_mm), metres(pl.y_mm), metres(pl.z_mm)],
            "rotation": pl.rotation,
            "mirror": pl.mirror,
            "scale": metres(pl.scale),
        }


def _within(structs: list[Structure], x0: int, z0: int, w: int, h: int, margin: int) -> list[Structure]:
    """Those of ``structs`` whose footprint comes within ``margin`` cells of the cell rectangle
    (:meth:`Structures.in_rect`'s test), in their order."""
    bx0, bz0, bx1, bz1 = x0 - margin, z0 - margin, x0 + w + margin, z0 + h + margin
    return [s for s in structs if s.x0 < bx1 and s.x0 + s.fw > bx0 and s.z0 < bz1 and s.z0 + s.fd > bz0]


def generator_for(world, prefabs) -> Generator:
    return Generator(world, prefabs)
