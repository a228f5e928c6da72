"""Places, sites and their pads (docs/world-generation.md, sections 8-10).

A structure is a place or a site: a prefab standing on a rectangle of cells (its footprint) and
on a pad, its footprint's vertices levelled to the base ground at the footprint's centre. Sites
are decided region by region, lazily, and every decision is cached, so any rectangle of the world
can be asked for without generating the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from veduta.world.intmath import hash2, hash2_grid
from veduta.world.params import PrefabP, SiteRuleP, WorldP
from veduta.world.terrain import Terrain

#: pads blend into the ground over this many vertices around the footprint
PAD_BLEND = 2
#: prefetch the terrain of a rectangle for its site decisions when there are at least this many
#: and at most this many cells per decision
PREFETCH_MIN = 32
PREFETCH_CELLS = 2000


def coord(n: int) -> str:
    """An integer in a name: ``-3`` is written ``n3``."""
    return f"n{-n}" if n < 0 else str(n)


@dataclass(frozen=True)
class Structure:
    """A site or a place on the ground.

    The footprint covers cells x0 <= x < x0 + fw, z0 <= z < z0 + fd; its vertices (x0..x0+fw,
    z0..z0+fd) are levelled to ``level_mm``.
    """

    kind: str  # "place" or "site"
    name: str  # the place's name, or site_<tag>[_<k>]_<rx>_<rz>
    prefab: str
    x0: int
    z0: int
    fw: int
    fd: int
    level_mm: int
    rotation: int  # degrees, 0 for sites
    tags: tuple[str, ...]
    distances: tuple[tuple[str, int], ...]  # tag -> mm
    order: tuple[int, ...]  # canonical order: places (0, i), then sites (1, rule, rz, rx)
    rule: int = -1  # site rule index
    region: tuple[int, int] | None = None  # site region (rx, rz)
    wet: bool = False  # a footprint vertex is under water (possible for places only)
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def x1(self) -> int:
        return self.x0 + self.fw

    @property
    def z1(self) -> int:
        return self.z0 + self.fd

    def covers(self, x: int, z: int) -> bool:
        return self.x0 <= x < self.x1 and self.z0 <= z < self.z1

    def distance_to(self, tag: str) -> int:
        for t, d in self.distances:
            if t == tag:
                return d
        return 0


def need_mm(a_tags, a_dist: dict[str, int], b_tags, b_dist: dict[str, int]) -> int:
    """The distance two things must keep: the largest min_distance either has toward a tag of the
    other (0 when none applies)."""
    need = 0
    for t in b_tags:
        need = max(need, a_dist.get(t, 0))
    for t in a_tags:
        need = max(need, b_dist.get(t, 0))
    return need


def gap(ax0, ax1, az0, az1, bx0, bx1, bz0, bz1):
    """Gap in whole cells between two cell rectangles along x and along z (0 when they overlap or
    touch)."""
    if isinstance(bx0, np.ndarray) or isinstance(ax0, np.ndarray):
        gx = np.maximum(0, np.maximum(bx0 - ax1, ax0 - bx1))
        gz = np.maximum(0, np.maximum(bz0 - az1, az0 - bz1))
        return gx, gz
    return max(0, bx0 - ax1, ax0 - bx1), max(0, bz0 - az1, az0 - bz1)


@dataclass(frozen=True)
class _Window:
    """Base ground and water levels of vertices, and biomes of cells, over one rectangle."""

    x0: int
    z0: int
    w: int
    h: int
    ground: np.ndarray
    levels: np.ndarray
    biome: np.ndarray


@dataclass(frozen=True)
class SiteDecision:
    """What a site rule does in one region: ``structure`` when a site stands there; otherwise
    ``reason`` says why not (and ``candidate`` is the site that was dropped, if one was drawn)."""

    structure: Structure | None
    candidate: Structure | None
    reason: str


class Structures:
    def __init__(self, p: WorldP, prefabs: dict[str, PrefabP], terrain: Terrain):
        self.p = p
        self.prefabs = prefabs
        self.terrain = terrain
        self._decisions: dict[tuple[int, int, int], SiteDecision] = {}
        self._windows: list[_Window] = []
        max_need = max((d for pf in prefabs.values() for d in pf.distances.values()), default=0)
        #: cells within which a min_distance can matter
        self.reach = -(-max_need // p.cell_mm) + 1
        self.margins = [self._margin(rule) for rule in p.sites]
        self.site_names = self._site_prefixes()
        self.places = [self._place(i) for i in range(len(p.places))]

    # -- places ---------------------------------------------------------------------------------

    def _place(self, i: int) -> Structure:
        pl = self.p.places[i]
        pf = self.prefabs.get(pl.prefab)
        # a place whose prefab is missing still owns its cell (1 x 1, no tags, spawns nothing)
        fw, fd = (pf.fw, pf.fd) if pf is not None else (1, 1)
        if pl.rotation in (90, 270):
            fw, fd = fd, fw
        x0, z0 = pl.x - fw // 2, pl.z - fd // 2
        level, wet = self._pad_level(x0, z0, fw, fd)
        return Structure(
            kind="place", name=pl.name, prefab=pl.prefab, x0=x0, z0=z0, fw=fw, fd=fd, level_mm=level,
            rotation=pl.rotation, tags=pf.tags if pf is not None else (),
            distances=tuple(sorted(pf.distances.items())) if pf is not None else (),
            order=(0, i), wet=wet,
        )

    def _pad_level(self, x0: int, z0: int, fw: int, fd: int) -> tuple[int, bool]:
        """Pad level (floored mean of the base ground at the 1, 2 or 4 vertices nearest the
        footprint's centre) and whether a footprint vertex is under water."""
        win = self._window_for(x0, z0, fw + 1, fd + 1)
        if win is not None:
            i0, j0 = x0 - win.x0, z0 - win.z0
            g = win.ground[j0:j0 + fd + 1, i0:i0 + fw + 1]
            lv = win.levels[j0:j0 + fd + 1, i0:i0 + fw + 1]
        else:
            g = self.terrain.ground(x0, z0, fw + 1, fd + 1)
            lv = self.terrain.water_levels(x0, z0, fw + 1, fd + 1)
        xa, xb, za, zb = fw // 2, (fw + 1) // 2, fd // 2, (fd + 1) // 2
        level = (int(g[za, xa]) + int(g[za, xb]) + int(g[zb, xa]) + int(g[zb, xb])) // 4
        return level, bool((g < lv).any())

    def _biome(self, x: int, z: int) -> int:
        win = self._window_for(x, z, 1, 1)
        if win is not None:
            return int(win.biome[z - win.z0, x - win.x0])
        return self.terrain.biome_at(x, z)

    def _window_for(self, x0: int, z0: int, w: int, h: int) -> _Window | None:
        for win in self._windows:
            if win.x0 <= x0 and x0 + w <= win.x0 + win.w and win.z0 <= z0 and z0 + h <= win.z0 + win.h:
                return win
        return None

    def _prefetch(self, x0: int, z0: int, w: int, h: int) -> None:
        """Compute base ground, water levels and biomes of a vertex rectangle at once, for the many
        site decisions about to be made in it (a speed-up only: the values are the same)."""
        t = self.terrain
        win = _Window(x0, z0, w, h, t.ground(x0, z0, w, h), t.water_levels(x0, z0, w, h), t.biomes(x0, z0, w, h))
        self._windows = [win, *self._windows[:3]]

    # -- sites ----------------------------------------------------------------------------------

    def _margin(self, rule: SiteRuleP) -> int:
        """Free cells kept on the high side of each region so that two sites of one rule never
        touch and keep their min_distance from each other."""
        pfs = [self.prefabs[n] for n in rule.prefabs if n in self.prefabs]
        tags = {rule.tag}
        for pf in pfs:
            tags.update(pf.tags)
        dself = max((pf.distances.get(t, 0) for pf in pfs for t in tags), default=0)
        return max(1, -(-dself // self.p.cell_mm))

    def _site_prefixes(self) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for rule in self.p.sites:
            k = seen.get(rule.tag, 0)
            seen[rule.tag] = k + 1
            out.append(f"site_{rule.tag}" if k == 0 else f"site_{rule.tag}_{k}")
        return out

    def site(self, i: int, rx: int, rz: int) -> SiteDecision:
        """The decision of site rule i in region (rx, rz) (cached)."""
        key = (i, rx, rz)
        d = self._decisions.get(key)
        if d is None:
            d = self._decide(i, rx, rz)
            self._decisions[key] = d
        return d

    def _decide(self, i: int, rx: int, rz: int) -> SiteDecision:
        p = self.p
        rule = p.sites[i]
        s = rule.spacing
        h = hash2(rule.key_draw, rx, rz)
        if (h >> 32) >= rule.chance_t:
            return SiteDecision(None, None, "chance")
        if not rule.prefabs:
            return SiteDecision(None, None, "no prefabs")
        name = rule.prefabs[(h & 0xFFFFFFFF) % len(rule.prefabs)]
        pf = self.prefabs.get(name)
        if pf is None:
            return SiteDecision(None, None, f"prefab {name} missing")
        m = self.margins[i]
        nx, nz = s - m - pf.fw + 1, s - m - pf.fd + 1
        if nx < 1 or nz < 1:
            return SiteDecision(None, None, f"prefab {name} too large for spacing {s}")
        ho = hash2(rule.key_offset, rx, rz)
        x0 = rx * s + (ho >> 32) % nx
        z0 = rz * s + (ho & 0xFFFFFFFF) % nz
        tags = tuple(sorted(set(pf.tags) | {rule.tag}))
        cand = Structure(
            kind="site", name=f"{self.site_names[i]}_{coord(rx)}_{coord(rz)}", prefab=name, x0=x0, z0=z0,
            fw=pf.fw, fd=pf.fd, level_mm=0, rotation=0, tags=tags,
            distances=tuple(sorted(pf.distances.items())), order=(1, i, rz, rx), rule=i, region=(rx, rz),
        )
        n = p.cells
        if x0 < -n or z0 < -n or x0 + pf.fw > n or z0 + pf.fd > n:
            return SiteDecision(None, cand, "outside the world")
        biome = p.biome_names[self._biome(x0 + pf.fw // 2, z0 + pf.fd // 2)]
        if (rule.biomes and biome not in rule.biomes) or not pf.allows(biome):
            return SiteDecision(None, cand, f"biome {biome}")
        level, wet = self._pad_level(x0, z0, pf.fw, pf.fd)
        if wet:
            return SiteDecision(None, cand, "water")
        cand = replace(cand, level_mm=level)
        for other in self.places:
            if self.conflict(cand, other):
                return SiteDecision(None, cand, f"place {other.name}")
        r = self.reach
        for j in range(i):
            sj = p.sites[j].spacing
            for rzj in range((z0 - r) // sj, (z0 + pf.fd + r - 1) // sj + 1):
                for rxj in range((x0 - r) // sj, (x0 + pf.fw + r - 1) // sj + 1):
                    there = self.site(j, rxj, rzj).structure
                    if there is not None and self.conflict(cand, there):
                        return SiteDecision(None, cand, f"site {there.name}")
        return SiteDecision(cand, cand, "")

    def conflict(self, a: Structure, b: Structure) -> bool:
        """Two structures conflict when they overlap or touch, or are closer than a min_distance."""
        gx, gz = gap(a.x0, a.x1, a.z0, a.z1, b.x0, b.x1, b.z0, b.z1)
        if gx == 0 and gz == 0:
            return True
        need = need_mm(a.tags, dict(a.distances), b.tags, dict(b.distances))
        return (gx * gx + gz * gz) * self.p.cell_mm ** 2 < need * need

    # -- rectangles -----------------------------------------------------------------------------

    def in_rect(self, x0: int, z0: int, w: int, h: int, margin: int = 0) -> list[Structure]:
        """Structures whose footprint comes within ``margin`` cells of the cell rectangle, in
        canonical order (places in file order, then sites by rule, region row, region column)."""
        bx0, bz0, bx1, bz1 = x0 - margin, z0 - margin, x0 + w + margin, z0 + h + margin
        out = [s for s in self.places if s.x0 < bx1 and s.x1 > bx0 and s.z0 < bz1 and s.z1 > bz0]
        for i, rule in enumerate(self.p.sites):
            s = rule.spacing
            rxs = np.arange(bx0 // s, (bx1 - 1) // s + 1, dtype=np.int64)
            rzs = np.arange(bz0 // s, (bz1 - 1) // s + 1, dtype=np.int64)
            fire = (hash2_grid(rule.key_draw, rxs, rzs) >> 32) < rule.chance_t
            todo = [(int(rxs[ix]), int(rzs[jz])) for jz, ix in zip(*np.nonzero(fire))
                    if (i, int(rxs[ix]), int(rzs[jz])) not in self._decisions]
            if len(todo) >= PREFETCH_MIN and len(todo) * PREFETCH_CELLS >= len(rxs) * len(rzs) * s * s:
                self._prefetch(int(rxs[0]) * s, int(rzs[0]) * s, len(rxs) * s + 1, len(rzs) * s + 1)
            for jz, ix in zip(*np.nonzero(fire)):
                st = self.site(i, int(rxs[ix]), int(rzs[jz])).structure
                if st is not None and st.x0 < bx1 and st.x1 > bx0 and st.z0 < bz1 and st.z1 > bz0:
                    out.append(st)
        out.sort(key=lambda st: st.order)
        return out


# -- pads ---------------------------------------------------------------------------------------


def apply_pads(g: np.ndarray, x0: int, z0: int, structs: list[Structure]) -> np.ndarray:
    """Final ground of a vertex rectangle (``g[j, i]`` at x0 + i, z0 + j) from its base ground.

    Footprint vertices take the level of the first structure covering them. Then, in structure
    order, each vertex at Chebyshev distance k in 1..2 from a footprint's vertex rectangle (and in
    no footprint) moves ``((level - g) * (3 - k)) // 3`` toward that structure's level.
    """
    h, w = g.shape
    out = g.copy()
    owner = np.full((h, w), -1, dtype=np.int64)
    levels = np.asarray([s.level_mm for s in structs] or [0], dtype=np.int64)
    for k, s in enumerate(structs):
        i0, i1 = max(0, s.x0 - x0), min(w, s.x1 + 1 - x0)
        j0, j1 = max(0, s.z0 - z0), min(h, s.z1 + 1 - z0)
        if i0 < i1 and j0 < j1:
            sub = owner[j0:j1, i0:i1]
            sub[sub < 0] = k
    free = owner < 0
    for s in structs:
        i0, i1 = max(0, s.x0 - PAD_BLEND - x0), min(w, s.x1 + PAD_BLEND + 1 - x0)
        j0, j1 = max(0, s.z0 - PAD_BLEND - z0), min(h, s.z1 + PAD_BLEND + 1 - z0)
        if i0 >= i1 or j0 >= j1:
            continue
        vx = np.arange(x0 + i0, x0 + i1, dtype=np.int64)[None, :]
        vz = np.arange(z0 + j0, z0 + j1, dtype=np.int64)[:, None]
        k = np.maximum(np.maximum(np.maximum(s.x0 - vx, vx - s.x1), 0),
                       np.maximum(np.maximum(s.z0 - vz, vz - s.z1), 0))
        sel = (k >= 1) & (k <= PAD_BLEND) & free[j0:j1, i0:i1]
        sub = out[j0:j1, i0:i1]
        sub[sel] = (sub + ((s.level_mm - sub) * (PAD_BLEND + 1 - k)) // (PAD_BLEND + 1))[sel]
    has = owner >= 0
    out[has] = levels[owner[has]]
    return out


def pad_at(g: int, x: int, z: int, structs: list[Structure]) -> int:
    """Scalar :func:`apply_pads` for the vertex [x, z] with base ground g."""
    for s in structs:
        if s.x0 <= x <= s.x1 and s.z0 <= z <= s.z1:
            return s.level_mm
    for s in structs:
        k = max(s.x0 - x, x - s.x1, s.z0 - z, z - s.z1, 0)
        if 1 <= k <= PAD_BLEND:
            g = g + ((s.level_mm - g) * (PAD_BLEND + 1 - k)) // (PAD_BLEND + 1)
    return g
