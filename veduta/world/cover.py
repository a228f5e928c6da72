"""Scatter and vegetation (docs/world-generation.md, sections 11-12).

Who owns a cell: the first structure whose footprint covers it; otherwise the first scatter rule
that fires there, then the first vegetation prefab rule. Model rules plant flora independently
(at most one plant per rule and cell). Both a vectorised version over cell rectangles and a
scalar version for one cell are given; they must agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veduta.world.intmath import _u64, hash2, hash2_grid, hash2_np, hash2_row, mix64_np
from veduta.world.params import PrefabP, ScatterRuleP, VegRuleP, WorldP
from veduta.world.structures import Structure, gap, need_mm

# owner kinds (arrays use these codes)
NONE, STRUCTURE, SCATTER, VEGETATION = 0, 1, 2, 3
_NO_CELLS = np.zeros(0, dtype=np.int64)
_NO_HASHES = np.zeros(0, dtype=np.uint64)
#: cells a step of a rule's hashes (Cover._fired): its arrays stay in the cache
FIRE_CELLS = 1 << 15
KIND_NAMES = {STRUCTURE: "structure", SCATTER: "scatter", VEGETATION: "vegetation"}


@dataclass(frozen=True)
class Plant:
    """One plant of a model rule in a cell. Positions in mm; scale in thousandths."""

    rule: int
    x_mm: int
    z_mm: int
    y_mm: int
    rotation: int  # 0, 90, 180 or 270 degrees about +Y
    mirror: bool  # mirrored along its local x
    scale: int  # thousandths


@dataclass
class PlantArrays:
    """The plants of one model rule over a rectangle (each array (h, w); valid where ``mask``)."""

    rule: int
    mask: np.ndarray
    x_mm: np.ndarray
    z_mm: np.ndarray
    y_mm: np.ndarray
    rotation: np.ndarray
    mirror: np.ndarray
    scale: np.ndarray


@dataclass
class PlantPoints:
    """The plants of one model rule over a rectangle, as 1-D arrays over its plants only (cells
    row by row: ``PlantArrays`` at ``mask``, as ``a[mask]`` gives): cell ``(j, i)`` in the
    rectangle, position (mm), scale (thousandths) and the growth hash (:func:`hash2` of the
    rule's key) of each."""

    rule: int
    j: np.ndarray
    i: np.ndarray
    x_mm: np.ndarray
    z_mm: np.ndarray
    y_mm: np.ndarray
    scale: np.ndarray
    hash: np.ndarray


def biome_ok(p: WorldP, biomes: frozenset[str], pf: PrefabP | None) -> np.ndarray:
    """Per biome index: may the rule (and its prefab, if any) grow there? (empty list: any)."""
    return np.asarray([(not biomes or b in biomes) and (pf is None or pf.allows(b)) for b in p.biome_names], dtype=bool)


def biome_mask(ok: np.ndarray, biome: np.ndarray) -> np.ndarray:
    """``ok[biome]`` (bool, biome's shape): with one or two biomes allowed (or all but one or
    two), as comparisons with them, cheaper over large rectangles than a gather per cell."""
    yes, no = np.flatnonzero(ok).tolist(), np.flatnonzero(~ok).tolist()
    if len(yes) <= 2 and len(yes) <= len(no):
        if not yes:
            return np.zeros(biome.shape, dtype=bool)
        out = biome == yes[0]
        for b in yes[1:]:
            out |= biome == b
        return out
    if not no:
        return np.ones(biome.shape, dtype=bool)
    if len(no) <= 2:
        out = biome != no[0]
        for b in no[1:]:
            out &= biome != b
        return out
    return ok[biome]


def plant_draw(h: int, hp: int, rule: VegRuleP) -> tuple[int, int, int, int, int]:
    """(fx, fz, rotation, mirror, scale) of a plant from its two hashes (h decides whether it grows,
    hp where); fx, fz in thousandths of the cell, scale in thousandths."""
    fx = 200 + (hp >> 32) % 600
    fz = 200 + (hp & 0xFFFFFFFF) % 600
    rot = (h & 3) * 90
    mirror = (h >> 2) & 1
    scale = rule.scale_min + ((rule.scale_max - rule.scale_min) * ((h >> 16) & 0xFFFF)) // 65535
    return fx, fz, rot, mirror, scale


def triangle_height(h00, h10, h01, h11, fx, fz):
    """Height at (fx, fz) thousandths inside a cell, on its two triangles (split along the
    diagonal from vertex [x, z] to [x + 1, z + 1])."""
    a = h00 + ((h10 - h00) * fx + (h11 - h10) * fz) // 1000
    b = h00 + ((h01 - h00) * fz + (h11 - h01) * fx) // 1000
    if isinstance(a, np.ndarray):
        return np.where(fx >= fz, a, b)
    return a if fx >= fz else b


def cells_of(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero`` of a 2-D mask, (rows, columns) in row order, from its flat indices (several
    times faster than numpy's 2-D nonzero on large masks)."""
    w = mask.shape[1]
    flat = np.flatnonzero(mask)
    if not w:
        return flat, flat
    if w & (w - 1) == 0:
        return flat >> (w.bit_length() - 1), flat & (w - 1)
    jj, ii = np.divmod(flat, w)
    return jj, ii


def _rects(structs: list[Structure]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x0, x1, z0, z1) of the structures' footprints, as arrays."""
    a = np.asarray([(s.x0, s.x1, s.z0, s.z1) for s in structs], dtype=np.int64).reshape(-1, 4)
    return a[:, 0], a[:, 1], a[:, 2], a[:, 3]


def _clipped(rects, x0: int, z0: int, w: int, h: int):
    """Cell rectangles (x0, x1, z0, z1 arrays) cut to the rectangle [x0, x0 + w) x [z0, z0 + h)."""
    rx0, rx1, rz0, rz1 = rects
    return np.maximum(rx0, x0), np.minimum(rx1, x0 + w), np.maximum(rz0, z0), np.minimum(rz1, z0 + h)


def _rect_cells(rx0: np.ndarray, rx1: np.ndarray, rz0: np.ndarray, rz1: np.ndarray):
    """Every cell of the rectangles [rx0, rx1) x [rz0, rz1) (empty ones allowed): (which
    rectangle, x, z), rectangle by rectangle, each row by row."""
    nw = np.maximum(0, rx1 - rx0)
    size = nw * np.maximum(0, rz1 - rz0)
    which = np.repeat(np.arange(len(size)), size)
    off = np.arange(int(size.sum()), dtype=np.int64) - (np.cumsum(size) - size)[which]
    j, i = np.divmod(off, nw[which])
    return which, rx0[which] + i, rz0[which] + j


def in_area(rule, x, z):
    """Is the centre of cell [x, z] within the rule's radius of its vertex (x, z)?"""
    dx = 2 * x + 1 - 2 * rule.x
    dz = 2 * z + 1 - 2 * rule.z
    return dx * dx + dz * dz <= 4 * rule.radius * rule.radius


class Cover:
    def __init__(self, p: WorldP, prefabs: dict[str, PrefabP]):
        self.p = p
        self.prefabs = prefabs
        #: (kind, rule index, prefab, biome table) of the rules competing for cells, in order
        self.rules: list[tuple[int, ScatterRuleP | VegRuleP, PrefabP, np.ndarray]] = []
        for r in p.scatter:
            pf = prefabs.get(r.prefab)
            if pf is not None:
                self.rules.append((SCATTER, r, pf, biome_ok(p, r.biomes, pf)))
        for v in p.vegetation:
            if v.prefab:
                pf = prefabs.get(v.prefab)
                if pf is not None:
                    self.rules.append((VEGETATION, v, pf, biome_ok(p, v.biomes, pf)))
        self.models = [(v, biome_ok(p, v.biomes, None)) for v in p.vegetation if v.model]
        #: need_mm by (prefab, structure's tags, its distances) (:meth:`_need`; prefabs live in self.prefabs)
        self._needs: dict[tuple[int, tuple[str, ...], tuple[tuple[str, int], ...]], int] = {}

    # -- vectorised -----------------------------------------------------------------------------

    def owners(
        self,
        x0: int,
        z0: int,
        biome: np.ndarray,
        wet: np.ndarray,
        structs: list[Structure],
        allowed: dict[bytes, np.ndarray | None] | None = None,
        taken: list[tuple[int, int, np.ndarray, np.ndarray]] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Owner kind and index arrays (h, w) of a cell rectangle: the index is the structure's
        position in ``structs`` for STRUCTURE, the rule's index in the world's scatter or
        vegetation list otherwise (-1 for none). ``allowed``: the biome masks of the rectangle
        already computed (:meth:`_allowed`), shared with :meth:`plant_points`. ``taken``: a list
        that gets ``(kind, rule index, rows, columns)`` of the cells each rule takes (row by
        row; rule by rule, scatter first, each in its list's order; rules taking none left out).

        Each rule's hash is computed only at the cells its cheaper tests leave (open, its biomes,
        its disc), in the rows' order: the same cells as testing every cell."""
        h, w = biome.shape
        kind = np.zeros((h, w), dtype=np.int8)
        index = np.full((h, w), -1, dtype=np.int64)
        if structs:  # each cell of a footprint to the first structure covering it
            which, cx, cz = _rect_cells(*_clipped(_rects(structs), x0, z0, w, h))
            cells, first = np.unique((cz - z0) * w + (cx - x0), return_index=True)
            kind.reshape(-1)[cells] = STRUCTURE
            index.reshape(-1)[cells] = which[first]
        xs = np.arange(x0, x0 + w, dtype=np.int64)
        zs = np.arange(z0, z0 + h, dtype=np.int64)
        open_ = self._inside(x0, z0, (kind == NONE) & ~wet)
        allowed = {} if allowed is None else allowed
        for code, r, pf, ok in self.rules:
            jj, ii, _ = self._fired(r, ok, x0, z0, xs, zs, open_, biome, allowed)
            if not len(jj):
                continue
            close = self._too_close(pf, x0, z0, w, h, structs)
            if close is not None:
                keep = ~close[jj, ii]
                jj, ii = jj[keep], ii[keep]
            kind[jj, ii] = code
            index[jj, ii] = r.index
            open_[jj, ii] = False
            if taken is not None and len(jj):
                taken.append((code, r.index, jj, ii))
        return kind, index

    def _inside(self, x0: int, z0: int, mask: np.ndarray) -> np.ndarray:
        """``mask`` (h, w) of the cells of a rectangle, False (in place) off the world's cells."""
        h, w = mask.shape
        n = self.p.cells
        i0, i1 = min(w, max(0, -n - x0)), max(0, min(w, n - x0))
        j0, j1 = min(h, max(0, -n - z0)), max(0, min(h, n - z0))
        mask[:j0] = False
        mask[j1:] = False
        mask[:, :i0] = False
        mask[:, i1:] = False
        return mask

    def _allowed(self, ok: np.ndarray, biome: np.ndarray, allowed: dict[bytes, np.ndarray | None]):
        """``ok[biome]`` (None where every biome is allowed), once per rectangle and biome table."""
        key = ok.tobytes()
        if key not in allowed:
            allowed[key] = None if ok.all() else biome_mask(ok, biome)
        return allowed[key]

    def _fired(self, r, ok, x0: int, z0: int, xs, zs, open_, biome, allowed) -> tuple[np.ndarray, ...]:
        """(jj, ii, hashes): the cells of a rectangle (row by row) where rule r fires, and its
        hash (:func:`hash2` of its key) there. The hash is computed only at the cells the rule
        may take before it is tested: open, in one of its biomes and, for a rule with an area,
        within its disc (only the rows and columns of the disc's box are looked at); a few rows
        at a time (:data:`FIRE_CELLS` cells), each step's arrays staying in the cache."""
        h, w = biome.shape
        j0, j1, i0, i1 = 0, h, 0, w
        if isinstance(r, VegRuleP) and r.area:  # cells within the disc: x in [r.x - radius, r.x + radius)
            i0, i1 = max(0, r.x - r.radius - 1 - x0), min(w, r.x + r.radius + 1 - x0)
            j0, j1 = max(0, r.z - r.radius - 1 - z0), min(h, r.z + r.radius + 1 - z0)
            if i0 >= i1 or j0 >= j1:
                return _NO_CELLS, _NO_CELLS, _NO_HASHES
        cand = open_[j0:j1, i0:i1]
        mask = self._allowed(ok, biome, allowed)
        if mask is not None:
            cand = cand & mask[j0:j1, i0:i1]
        if isinstance(r, VegRuleP) and r.area:
            cand = cand & in_area(r, xs[None, i0:i1], zs[j0:j1, None])
        row = hash2_row(r.key, xs[i0:i1])
        zu = _u64(zs[j0:j1])
        step = max(1, FIRE_CELLS // (i1 - i0))
        # most cells candidates: the hash of every cell of a step (no gather), else of the
        # candidates only
        dense = 4 * int(np.count_nonzero(cand)) >= cand.size
        got_j, got_i, got_h = [], [], []
        for a in range(0, j1 - j0, step):
            if dense:
                hb = mix64_np(row[None, :] ^ zu[a : a + step, None])
                fire = cand[a : a + step] & ((hb >> 32) < r.density_t)
                jj, ii = cells_of(fire)
                got_j.append(jj + (a + j0))
                got_i.append(ii + i0 if i0 else ii)
                got_h.append(hb[jj, ii])
                continue
            jj, ii = cells_of(cand[a : a + step])
            if not len(jj):
                continue
            hv = mix64_np(row[ii] ^ zu[jj + a])
            keep = (hv >> 32) < r.density_t
            got_j.append(jj[keep] + (a + j0))
            got_i.append(ii[keep] + i0 if i0 else ii[keep])
            got_h.append(hv[keep])
        if not got_j:
            return _NO_CELLS, _NO_CELLS, _NO_HASHES
        return np.concatenate(got_j), np.concatenate(got_i), np.concatenate(got_h)

    def _too_close(self, pf: PrefabP, x0: int, z0: int, w: int, h: int, structs: list[Structure]) -> np.ndarray | None:
        """(h, w) bool: the cells too close to a structure for prefab pf (None: no such cell)."""
        if not structs:
            return None
        need = np.asarray([self._need(pf, s) for s in structs], dtype=np.int64)
        far = np.flatnonzero(need)
        if not len(far):
            return None
        need = need[far]
        bx0, bx1, bz0, bz1 = (a[far] for a in _rects(structs))
        reach = -(-need // self.p.cell_mm) + 1
        which, cx, cz = _rect_cells(*_clipped((bx0 - reach, bx1 + reach, bz0 - reach, bz1 + reach), x0, z0, w, h))
        gx, gz = gap(cx, cx + 1, cz, cz + 1, bx0[which], bx1[which], bz0[which], bz1[which])
        close = (gx * gx + gz * gz) * self.p.cell_mm**2 < need[which] * need[which]
        out = np.zeros((h, w), dtype=bool)
        out[cz[close] - z0, cx[close] - x0] = True
        return out

    def _need(self, pf: PrefabP, s: Structure) -> int:
        """need_mm between prefab pf and structure s (once per prefab, tags and distances)."""
        key = (id(pf), s.tags, s.distances)
        got = self._needs.get(key)
        if got is None:
            got = self._needs[key] = need_mm(pf.tags, pf.distances, s.tags, dict(s.distances))
        return got

    def plants(
        self, x0: int, z0: int, biome: np.ndarray, wet: np.ndarray, footprint: np.ndarray, ground: np.ndarray
    ) -> list[PlantArrays]:
        """Plants of every model rule over a cell rectangle; ``footprint`` marks cells covered by a
        structure, ``ground`` is the final ground of the (h + 1, w + 1) vertices."""
        xs, zs, open_ = self._open(x0, z0, biome, wet, footprint)
        out = []
        for r, ok in self.models:
            hh, mask = self._grows(r, ok, xs, zs, open_, biome)
            hp = hash2_grid(r.key_place, xs, zs)
            x_mm, z_mm, y, scale = self._placed(r, xs[None, :], zs[:, None], hh, hp, ground[:-1], ground[1:])
            out.append(
                PlantArrays(
                    rule=r.index,
                    mask=mask,
                    x_mm=x_mm,
                    z_mm=z_mm,
                    y_mm=y,
                    rotation=(hh & 3).astype(np.int64) * 90,
                    mirror=((hh >> 2) & 1).astype(bool),
                    scale=scale,
                )
            )
        return out

    def _open(self, x0: int, z0: int, biome: np.ndarray, wet: np.ndarray, footprint: np.ndarray):
        """(xs, zs, open): the cells of a rectangle and where a plant may grow (dry, off footprints,
        in the world)."""
        h, w = biome.shape
        xs = np.arange(x0, x0 + w, dtype=np.int64)
        zs = np.arange(z0, z0 + h, dtype=np.int64)
        n = self.p.cells
        inside = ((xs >= -n) & (xs < n))[None, :] & ((zs >= -n) & (zs < n))[:, None]
        return xs, zs, ~wet & ~footprint & inside

    def _grows(self, r: VegRuleP, ok: np.ndarray, xs, zs, open_: np.ndarray, biome: np.ndarray):
        """(growth hashes, mask) of rule r over the cells [xs, zs]: where one of its plants grows."""
        hh = hash2_grid(r.key, xs, zs)
        mask = open_ & ok[biome] & ((hh >> 32) < r.density_t)
        if r.area:
            mask &= in_area(r, xs[None, :], zs[:, None])
        return hh, mask

    def _placed(self, r: VegRuleP, x, z, hh, hp, north: np.ndarray, south: np.ndarray):
        """(x_mm, z_mm, y_mm, scale) of plants of rule r at cells [x, z] (broadcastable arrays)
        with hashes hh (growth) and hp (place); ``north``/``south``: the ground of the cells'
        north (z) and south (z + 1) vertex rows, each (..., w + 1) with [..., k] and [..., k + 1]
        a cell's west and east vertices (``north[:, :-1]`` or a gather of them)."""
        return self._placed_on(r, x, z, hh, hp, north[..., :-1], north[..., 1:], south[..., :-1], south[..., 1:])

    def _placed_on(self, r: VegRuleP, x, z, hh, hp, h00, h10, h01, h11):
        """:meth:`_placed` from the ground of each cell's four corners ([x, z], [x + 1, z],
        [x, z + 1], [x + 1, z + 1], broadcastable arrays)."""
        fx = 200 + ((hp >> 32) % 600).astype(np.int64)
        fz = 200 + ((hp & 0xFFFFFFFF) % 600).astype(np.int64)
        u = ((hh >> 16) & 0xFFFF).astype(np.int64)
        scale = r.scale_min + ((r.scale_max - r.scale_min) * u) // 65535
        cm = self.p.cell_mm
        y = triangle_height(h00, h10, h01, h11, fx, fz)
        return x * cm + (cm * fx) // 1000, z * cm + (cm * fz) // 1000, y, scale

    def plant_points(
        self,
        x0: int,
        z0: int,
        biome: np.ndarray,
        wet: np.ndarray,
        footprint: np.ndarray,
        ground: np.ndarray,
        allowed: dict[bytes, np.ndarray | None] | None = None,
    ) -> list[PlantPoints]:
        """:meth:`plants` as :class:`PlantPoints`: the same plants, each computed only where one
        grows, each rule's growth hash only where its cheaper tests pass (rules with an area only
        in the box of their disc). ``allowed``: as in :meth:`owners`."""
        h, w = biome.shape
        xs = np.arange(x0, x0 + w, dtype=np.int64)
        zs = np.arange(z0, z0 + h, dtype=np.int64)
        open_ = self._inside(x0, z0, ~wet & ~footprint)
        allowed = {} if allowed is None else allowed
        out = []
        for r, ok in self.models:
            jj, ii, hh = self._fired(r, ok, x0, z0, xs, zs, open_, biome, allowed)
            x, z = xs[ii], zs[jj]
            hp = hash2_np(r.key_place, x, z)
            at = jj * (w + 1) + ii  # each cell's north-west vertex in the flat ground
            g = ground.reshape(-1)
            corners = g[at], g[at + 1], g[at + (w + 1)], g[at + (w + 2)]
            x_mm, z_mm, y_mm, scale = self._placed_on(r, x, z, hh, hp, *corners)
            out.append(PlantPoints(r.index, jj, ii, x_mm, z_mm, y_mm, scale, hh))
        return out

    # -- scalar ---------------------------------------------------------------------------------

    def owner_at(self, x: int, z: int, biome: int, wet: bool, structs: list[Structure]) -> tuple[int, int]:
        """(kind, index) of cell [x, z] as in :meth:`owners`."""
        for k, s in enumerate(structs):
            if s.covers(x, z):
                return STRUCTURE, k
        n = self.p.cells
        if wet or not (-n <= x < n and -n <= z < n):
            return NONE, -1
        cell2 = self.p.cell_mm**2
        for code, r, pf, ok in self.rules:
            if not ok[biome]:
                continue
            if isinstance(r, VegRuleP) and r.area and not in_area(r, x, z):  # a VEGETATION rule
                continue
            if (hash2(r.key, x, z) >> 32) >= r.density_t:
                continue
            close = False
            for s in structs:
                need = need_mm(pf.tags, pf.distances, s.tags, dict(s.distances))
                if need:
                    gx, gz = gap(x, x + 1, z, z + 1, s.x0, s.x1, s.z0, s.z1)
                    if (gx * gx + gz * gz) * cell2 < need * need:
                        close = True
                        break
            if not close:
                return code, r.index
        return NONE, -1

    def plants_at(
        self, x: int, z: int, biome: int, wet: bool, in_footprint: bool, corners: tuple[int, int, int, int]
    ) -> list[Plant]:
        """Plants of cell [x, z]; corners are the final ground at [x, z], [x+1, z], [x, z+1],
        [x+1, z+1]."""
        n = self.p.cells
        if wet or in_footprint or not (-n <= x < n and -n <= z < n):
            return []
        out = []
        cm = self.p.cell_mm
        for r, ok in self.models:
            if not ok[biome]:
                continue
            if r.area and not in_area(r, x, z):
                continue
            h = hash2(r.key, x, z)
            if (h >> 32) >= r.density_t:
                continue
            fx, fz, rot, mirror, scale = plant_draw(h, hash2(r.key_place, x, z), r)
            y = triangle_height(*corners, fx, fz)
            out.append(
                Plant(
                    rule=r.index,
                    x_mm=x * cm + (cm * fx) // 1000,
                    z_mm=z * cm + (cm * fz) // 1000,
                    y_mm=y,
                    rotation=rot,
                    mirror=bool(mirror),
                    scale=scale,
                )
            )
        return out
