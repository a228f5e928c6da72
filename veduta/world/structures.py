"""Places, sites and their pads (docs/world-generation.md, sections 8-10).

A structure is a place or a site: a prefab standing on a rectangle of cells (its footprint) and
on a pad, its footprint's vertices levelled to the base ground at the footprint's centre. Sites
are decided region by region, lazily, and every decision is cached, so any rectangle of the world
can be asked for without generating the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from veduta.world.intmath import hash2, hash2_grid, hash2_np
from veduta.world.params import PrefabP, SiteRuleP, WorldP
from veduta.world.terrain import NO_WATER, Terrain

#: pads blend into the ground over this many vertices around the footprint
PAD_BLEND = 2
#: prefetch the terrain of a rectangle for its site decisions when there are at least this many
#: and at most this many cells per decision
PREFETCH_MIN = 32
PREFETCH_CELLS = 2000
#: decide a rule's sites over a rectangle of regions at once (:class:`SiteTable`) when a request
#: leaves at least this many of its regions undecided
TABLE_MIN = 16
#: site tables kept per rule (least recently used dropped first)
TABLES_KEPT = 8
#: a table of more than TABLE_SNAP^2 regions is grown to multiples of TABLE_SNAP regions (within
#: the world's regions), so that requests for nearly the same area share it
TABLE_SNAP = 16

#: why a region has no site (:attr:`SiteTable.code`); STANDS: it has one
STANDS, CHANCE, NO_PREFABS, MISSING, TOO_LARGE, OUTSIDE, BIOME, WATER, PLACE, SITE = range(10)


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


def _snap(a: int, n: int, first: int, last: int) -> tuple[int, int]:
    """Regions a..a+n-1 grown to multiples of TABLE_SNAP, or to all the world's (first..last)
    when they hold half of them, never beyond the world's unless asked."""
    b = a + n
    if 2 * n >= last + 1 - first:
        return min(a, first), max(b, last + 1) - min(a, first)
    a2 = max(min(a, first), a // TABLE_SNAP * TABLE_SNAP)
    b2 = min(max(b, last + 1), -(-b // TABLE_SNAP) * TABLE_SNAP)
    return a2, b2 - a2


@dataclass
class SiteTable:
    """The decisions of one site rule over a rectangle of regions rx0..rx0+nw-1, rz0..rz0+nh-1,
    as (nh, nw) arrays: ``code`` (STANDS, or why not: CHANCE, ..., SITE), ``prefab`` (index into
    the rule's prefabs, -1 when none was drawn), the candidate's footprint ``x0``, ``z0``,
    ``fw``, ``fd`` and pad ``level`` (0 where the decision stopped before the pad), and
    ``detail``: the biome (BIOME), place (PLACE) or earlier rule (SITE, with the conflicting
    site's region in ``other_rx``, ``other_rz``). The same decisions as
    :meth:`Structures.site`, made with arrays."""

    rule: int
    rx0: int
    rz0: int
    nw: int
    nh: int
    code: np.ndarray
    prefab: np.ndarray
    x0: np.ndarray
    z0: np.ndarray
    fw: np.ndarray
    fd: np.ndarray
    level: np.ndarray
    detail: np.ndarray
    other_rx: np.ndarray
    other_rz: np.ndarray

    def covers(self, rx0: int, rz0: int, nw: int, nh: int) -> bool:
        return self.rx0 <= rx0 and rx0 + nw <= self.rx0 + self.nw and self.rz0 <= rz0 and rz0 + nh <= self.rz0 + self.nh


@dataclass
class _Draws:
    """What steps 1-6 of a site rule's decisions give over a rectangle of regions (no feature or
    place changes it): the fired regions ``jz``, ``ix`` (row, column in the rectangle) and for
    each its prefab, footprint and ``code`` so far (STANDS: still standing); for those still
    standing (``alive``) the distinct vertices ``px``, ``pz`` of their pads, the relief there and
    ``pad`` (4, len(alive)): which of them are each pad's four."""

    rx0: int
    rz0: int
    nw: int
    nh: int
    jz: np.ndarray
    ix: np.ndarray
    pre: np.ndarray
    x0: np.ndarray
    z0: np.ndarray
    fw: np.ndarray
    fd: np.ndarray
    code: np.ndarray
    detail: np.ndarray
    alive: np.ndarray
    px: np.ndarray
    pz: np.ndarray
    relief: np.ndarray
    pad: np.ndarray

    def part(self, rx0: int, rz0: int, nw: int, nh: int) -> _Draws:
        """The same over a smaller rectangle inside this one."""
        j0, i0 = rz0 - self.rz0, rx0 - self.rx0
        keep = (self.jz >= j0) & (self.jz < j0 + nh) & (self.ix >= i0) & (self.ix < i0 + nw)
        new = np.cumsum(keep) - 1
        alive_keep = keep[self.alive]
        pad = self.pad[:, alive_keep]
        used = np.unique(pad)
        remap = np.zeros(len(self.px), dtype=np.int64)
        remap[used] = np.arange(len(used))
        return _Draws(
            rx0,
            rz0,
            nw,
            nh,
            self.jz[keep] - j0,
            self.ix[keep] - i0,
            self.pre[keep],
            self.x0[keep],
            self.z0[keep],
            self.fw[keep],
            self.fd[keep],
            self.code[keep],
            self.detail[keep],
            new[self.alive[alive_keep]],
            self.px[used],
            self.pz[used],
            self.relief[used],
            remap[pad],
        )


@dataclass
class RegionView:
    """Part of a :class:`SiteTable`: regions rx0.., rz0.. ((nh, nw) arrays from there), which of
    them hold a standing site overlapping some cells (``there``), its footprint and level."""

    table: SiteTable
    rx0: int
    rz0: int
    there: np.ndarray
    x0: np.ndarray
    z0: np.ndarray
    fw: np.ndarray
    fd: np.ndarray
    level: np.ndarray


@dataclass
class StructArrays:
    """Structures as arrays (n,), in canonical order: footprint ``x0``, ``z0``, ``fw``, ``fd``,
    pad ``level``; ``place`` (index of a place, -1 for a site), ``rule``, ``rx``, ``rz`` (a
    site's rule and region, -1 for a place)."""

    x0: np.ndarray
    z0: np.ndarray
    fw: np.ndarray
    fd: np.ndarray
    level: np.ndarray
    place: np.ndarray
    rule: np.ndarray
    rx: np.ndarray
    rz: np.ndarray

    def __len__(self) -> int:
        return len(self.x0)

    def binned(self, B: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, ids): for every bin of B x B vertices that a structure's reach (its footprint's
        vertices and PAD_BLEND around) touches, the bin's key ((bz << 32) + bx) and the
        structure, sorted by key then structure (cached)."""
        cache = self.__dict__.setdefault("_bins", {})
        if B not in cache:
            bx0, bx1 = (self.x0 - PAD_BLEND) // B, (self.x0 + self.fw + PAD_BLEND) // B
            bz0, bz1 = (self.z0 - PAD_BLEND) // B, (self.z0 + self.fd + PAD_BLEND) // B
            nbx = bx1 - bx0 + 1
            cnt = nbx * (bz1 - bz0 + 1)
            sid = np.repeat(np.arange(len(self), dtype=np.int64), cnt)
            k = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            key = ((bz0[sid] + k // nbx[sid]) << 32) + ((bx0[sid] + k % nbx[sid]) & 0xFFFFFFFF)
            order = np.lexsort((sid, key))
            cache[B] = (key[order], sid[order])
        return cache[B]


class Structures:
    def __init__(self, p: WorldP, prefabs: dict[str, PrefabP], terrain: Terrain, like: Structures | None = None):
        self.p = p
        self.prefabs = prefabs
        self.terrain = terrain
        self._decisions: dict[tuple[int, int, int], SiteDecision] = {}
        self._windows: list[_Window] = []
        self._tables: list[list[SiteTable]] = [[] for _ in p.sites]
        #: what generators built alike (``like``) compute once: steps 1-6 of the site decisions
        #: (:class:`_Draws`, per rule) and bounds of the relief (veduta.world.areas)
        self.shared: dict = {"draws": [[] for _ in p.sites]}
        max_need = max((d for pf in prefabs.values() for d in pf.distances.values()), default=0)
        #: cells within which a min_distance can matter
        self.reach = -(-max_need // p.cell_mm) + 1
        self.margins = [self._margin(rule) for rule in p.sites]
        self.site_names = self._site_prefixes()
        self.places = [self._place(i) for i in range(len(p.places))]
        if like is not None and like._draws_key() == self._draws_key():
            self.shared = like.shared

    def _draws_key(self) -> tuple:
        """What steps 1-6 of the site decisions depend on (two worlds with the same key draw alike)."""
        p = self.p
        return (
            p.seed,
            p.cells,
            p.biome_scale,
            p.biome_names,
            p.biome_weights,
            p.relief_mm,
            p.relief_scale,
            p.sites,
            tuple(self.margins),
            tuple(tuple(self._rule_prefabs(i)) for i in range(len(p.sites))),
        )

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
            kind="place",
            name=pl.name,
            prefab=pl.prefab,
            x0=x0,
            z0=z0,
            fw=fw,
            fd=fd,
            level_mm=level,
            rotation=pl.rotation,
            tags=pf.tags if pf is not None else (),
            distances=tuple(sorted(pf.distances.items())) if pf is not None else (),
            order=(0, i),
            wet=wet,
        )

    def _pad_level(self, x0: int, z0: int, fw: int, fd: int) -> tuple[int, bool]:
        """Pad level (floored mean of the base ground at the 1, 2 or 4 vertices nearest the
        footprint's centre) and whether a footprint vertex is under water."""
        win = self._window_for(x0, z0, fw + 1, fd + 1)
        if win is not None:
            i0, j0 = x0 - win.x0, z0 - win.z0
            g = win.ground[j0 : j0 + fd + 1, i0 : i0 + fw + 1]
            lv = win.levels[j0 : j0 + fd + 1, i0 : i0 + fw + 1]
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
            t = self._covering(i, rx, rz, 1, 1)
            d = self._decide(i, rx, rz) if t is None else self._from_table(t, rx, rz)
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
            kind="site",
            name=f"{self.site_names[i]}_{coord(rx)}_{coord(rz)}",
            prefab=name,
            x0=x0,
            z0=z0,
            fw=pf.fw,
            fd=pf.fd,
            level_mm=0,
            rotation=0,
            tags=tags,
            distances=tuple(sorted(pf.distances.items())),
            order=(1, i, rz, rx),
            rule=i,
            region=(rx, rz),
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
        return (gx * gx + gz * gz) * self.p.cell_mm**2 < need * need

    # -- rectangles -----------------------------------------------------------------------------

    def in_rect(self, x0: int, z0: int, w: int, h: int, margin: int = 0) -> list[Structure]:
        """Structures whose footprint comes within ``margin`` cells of the cell rectangle, in
        canonical order (places in file order, then sites by rule, region row, region column)."""
        bx0, bz0, bx1, bz1 = x0 - margin, z0 - margin, x0 + w + margin, z0 + h + margin
        out = [s for s in self.places if s.x0 < bx1 and s.x1 > bx0 and s.z0 < bz1 and s.z1 > bz0]
        for i, rule in enumerate(self.p.sites):
            s = rule.spacing
            rx0, rz0 = bx0 // s, bz0 // s
            nw, nh = (bx1 - 1) // s + 1 - rx0, (bz1 - 1) // s + 1 - rz0
            t = self._covering(i, rx0, rz0, nw, nh)
            if t is None and nw * nh >= TABLE_MIN:
                rxs = np.arange(rx0, rx0 + nw, dtype=np.int64)
                rzs = np.arange(rz0, rz0 + nh, dtype=np.int64)
                fire = (hash2_grid(rule.key_draw, rxs, rzs) >> 32) < rule.chance_t
                todo = sum(
                    1 for jz, ix in zip(*np.nonzero(fire)) if (i, int(rxs[ix]), int(rzs[jz])) not in self._decisions
                )
                if todo >= TABLE_MIN:
                    t = self.table(i, rx0, rz0, nw, nh)
            if t is not None:
                j0, i0 = rz0 - t.rz0, rx0 - t.rx0
                sl = (slice(j0, j0 + nh), slice(i0, i0 + nw))
                sx0, sz0 = t.x0[sl], t.z0[sl]
                hit = (
                    (t.code[sl] == STANDS) & (sx0 < bx1) & (sx0 + t.fw[sl] > bx0) & (sz0 < bz1) & (sz0 + t.fd[sl] > bz0)
                )
                for jz, ix in zip(*np.nonzero(hit)):
                    st = self.site(i, rx0 + int(ix), rz0 + int(jz)).structure
                    assert st is not None
                    out.append(st)
                continue
            rxs = np.arange(rx0, rx0 + nw, dtype=np.int64)
            rzs = np.arange(rz0, rz0 + nh, dtype=np.int64)
            fire = (hash2_grid(rule.key_draw, rxs, rzs) >> 32) < rule.chance_t
            for jz, ix in zip(*np.nonzero(fire)):
                st = self.site(i, int(rxs[ix]), int(rzs[jz])).structure
                if st is not None and st.x0 < bx1 and st.x1 > bx0 and st.z0 < bz1 and st.z1 > bz0:
                    out.append(st)
        out.sort(key=lambda st: st.order)
        return out

    # -- site tables: many regions decided at once --------------------------------------------------

    def _covering(self, i: int, rx0: int, rz0: int, nw: int, nh: int) -> SiteTable | None:
        tables = self._tables[i]
        for k, t in enumerate(tables):
            if t.covers(rx0, rz0, nw, nh):
                if k:
                    tables.insert(0, tables.pop(k))
                return t
        return None

    def table(self, i: int, rx0: int, rz0: int, nw: int, nh: int) -> SiteTable:
        """The decisions of site rule i over the regions rx0..rx0+nw-1, rz0..rz0+nh-1 (a cached
        table that covers them, perhaps larger: index it from its own ``rx0``, ``rz0``)."""
        t = self._covering(i, rx0, rz0, nw, nh)
        if t is None:
            if nw * nh > TABLE_SNAP * TABLE_SNAP:  # a large table: grown, so near requests share it
                first, last = self._regions(i)
                rx0, nw = _snap(rx0, nw, first, last)
                rz0, nh = _snap(rz0, nh, first, last)
            t = self._decide_table(i, rx0, rz0, nw, nh)
            self._tables[i].insert(0, t)
            del self._tables[i][TABLES_KEPT:]
        return t

    def table_for_cells(self, i: int, x0: int, z0: int, x1: int, z1: int) -> SiteTable | None:
        """:meth:`table` of the regions of rule i holding cells x0..x1-1, z0..z1-1 and a cell of
        the world (None when there is none: no site stands there)."""
        s = self.p.sites[i].spacing
        first, last = self._regions(i)
        rx0, rz0 = max(first, x0 // s), max(first, z0 // s)
        rx1, rz1 = min(last, (x1 - 1) // s), min(last, (z1 - 1) // s)
        if rx1 < rx0 or rz1 < rz0:
            return None
        return self.table(i, rx0, rz0, rx1 - rx0 + 1, rz1 - rz0 + 1)

    def _rule_prefabs(self, i: int) -> list[PrefabP | None]:
        return [self.prefabs.get(n) for n in self.p.sites[i].prefabs]

    def _site_tags(self, i: int) -> list[tuple[tuple[str, ...], dict[str, int]]]:
        """(tags, distances) of a site of rule i with each of its prefabs (() and {} for a missing one)."""
        tag = self.p.sites[i].tag
        return [
            (tuple(sorted(set(pf.tags) | {tag})), pf.distances) if pf is not None else ((), {})
            for pf in self._rule_prefabs(i)
        ]

    def _draws(self, i: int, rx0: int, rz0: int, nw: int, nh: int) -> _Draws:
        """Steps 1-6 of the decisions of rule i over a rectangle of regions (cached; shared with
        a generator built ``like`` this one, whose features or places differ)."""
        cache = self.shared["draws"][i]
        for k, d in enumerate(cache):
            if d.rx0 <= rx0 and rx0 + nw <= d.rx0 + d.nw and d.rz0 <= rz0 and rz0 + nh <= d.rz0 + d.nh:
                if k:
                    cache.insert(0, cache.pop(k))
                return d if (d.rx0, d.rz0, d.nw, d.nh) == (rx0, rz0, nw, nh) else d.part(rx0, rz0, nw, nh)
        d = self._draw(i, rx0, rz0, nw, nh)
        cache.insert(0, d)
        del cache[TABLES_KEPT:]
        return d

    def _draw(self, i: int, rx0: int, rz0: int, nw: int, nh: int) -> _Draws:
        p = self.p
        rule = p.sites[i]
        s = rule.spacing
        rxs = np.arange(rx0, rx0 + nw, dtype=np.int64)
        rzs = np.arange(rz0, rz0 + nh, dtype=np.int64)
        hd = hash2_grid(rule.key_draw, rxs, rzs)
        jz, ix = np.nonzero((hd >> 32) < rule.chance_t)
        n = len(jz)
        zeros = np.zeros(n, dtype=np.int64)
        none = np.zeros(0, dtype=np.int64)
        d = _Draws(
            rx0,
            rz0,
            nw,
            nh,
            jz,
            ix,
            np.full(n, -1, dtype=np.int64),
            zeros,
            zeros.copy(),
            zeros.copy(),
            zeros.copy(),
            np.full(n, NO_PREFABS, dtype=np.int8),
            np.full(n, -1, dtype=np.int64),
            none,
            none,
            none,
            none,
            np.zeros((4, 0), dtype=np.int64),
        )
        if not n or not rule.prefabs:
            return d
        rx, rz = rxs[ix], rzs[jz]
        pre = ((hd[jz, ix] & 0xFFFFFFFF) % len(rule.prefabs)).astype(np.int64)
        pfs = self._rule_prefabs(i)
        m = self.margins[i]
        kw = np.asarray([pf.fw if pf is not None else 1 for pf in pfs], dtype=np.int64)
        kd = np.asarray([pf.fd if pf is not None else 1 for pf in pfs], dtype=np.int64)
        knx, knz = s - m - kw + 1, s - m - kd + 1
        kcode = np.asarray(
            [
                MISSING if pf is None else TOO_LARGE if nx < 1 or nz < 1 else STANDS
                for pf, nx, nz in zip(pfs, knx.tolist(), knz.tolist(), strict=True)
            ],
            dtype=np.int8,
        )
        c = kcode[pre]
        fw, fd = kw[pre], kd[pre]
        x0, z0 = d.x0, d.z0
        a = np.flatnonzero(c == STANDS)
        ho = hash2_np(rule.key_offset, rx[a], rz[a])
        x0[a] = rx[a] * s + (ho >> 32).astype(np.int64) % knx[pre[a]]
        z0[a] = rz[a] * s + (ho & 0xFFFFFFFF).astype(np.int64) % knz[pre[a]]
        N = p.cells
        out = (x0[a] < -N) | (z0[a] < -N) | (x0[a] + fw[a] > N) | (z0[a] + fd[a] > N)
        c[a[out]] = OUTSIDE
        a = a[~out]
        # the biome at the footprint's centre
        b = self.terrain.biomes_at(x0[a] + fw[a] // 2, z0[a] + fd[a] // 2)
        ok = np.asarray(
            [
                [
                    (not rule.biomes or name in rule.biomes) and pf is not None and pf.allows(name)
                    for name in p.biome_names
                ]
                for pf in pfs
            ],
            dtype=bool,
        ).reshape(len(pfs), -1)
        bad = ~ok[pre[a], b]
        c[a[bad]] = BIOME
        d.detail[a[bad]] = b[bad]
        a = a[~bad]
        # the relief at the 1, 2 or 4 vertices nearest each footprint's centre (the pad's)
        fa, da = fw[a], fd[a]
        xa, xb = x0[a] + fa // 2, x0[a] + (fa + 1) // 2
        za, zb = z0[a] + da // 2, z0[a] + (da + 1) // 2
        ox, oz = xb != xa, zb != za
        k10, k01, k11 = np.flatnonzero(ox), np.flatnonzero(oz), np.flatnonzero(ox & oz)
        na, n10, n01 = len(a), len(k10), len(k01)
        px = np.concatenate([xa, xb[k10], xa[k01], xb[k11]])
        pz = np.concatenate([za, za[k10], zb[k01], zb[k11]])
        pad = np.tile(np.arange(na, dtype=np.int64), (4, 1))
        pad[1, k10] = na + np.arange(n10)
        pad[2, k01] = na + n10 + np.arange(n01)
        pad[3] = np.where(ox, pad[1], pad[2])  # one of the two sides even: the other's pair
        pad[3, k11] = na + n10 + n01 + np.arange(len(k11))
        d.pre, d.fw, d.fd, d.code = pre, fw, fd, c
        d.alive, d.px, d.pz, d.relief, d.pad = a, px, pz, self.terrain.relief_points(px, pz), pad
        return d

    def _decide_table(self, i: int, rx0: int, rz0: int, nw: int, nh: int) -> SiteTable:
        """:meth:`_decide` for every region of a rectangle at once, with arrays."""
        p = self.p
        d = self._draws(i, rx0, rz0, nw, nh)
        shape = (nh, nw)
        code = np.full(shape, CHANCE, dtype=np.int8)
        z = [np.zeros(shape, dtype=np.int64) for _ in range(7)]
        t = SiteTable(
            i,
            rx0,
            rz0,
            nw,
            nh,
            code,
            np.full(shape, -1, dtype=np.int64),
            z[0],
            z[1],
            z[2],
            z[3],
            z[4],
            np.full(shape, -1, dtype=np.int64),
            z[5],
            z[6],
        )
        jz, ix = d.jz, d.ix
        n = len(jz)
        if not n:
            return t
        c, pre, x0, z0, fw, fd = d.code.copy(), d.pre, d.x0, d.z0, d.fw, d.fd
        detail = d.detail.copy()
        level = np.zeros(n, dtype=np.int64)
        orx = np.zeros(n, dtype=np.int64)
        orz = np.zeros(n, dtype=np.int64)
        a = d.alive
        # the pad (base ground at the footprint's centre) and water under the footprint
        if len(a):
            g = self.terrain.features_points(d.relief, d.px, d.pz)[d.pad]
            lv = (g[0] + g[1] + g[2] + g[3]) // 4
            wet = self._wet(x0[a], z0[a], fw[a], fd[a], d.px[d.pad], d.pz[d.pad], g)
            level[a[~wet]] = lv[~wet]
            c[a[wet]] = WATER
            a = a[~wet]
        # places, then kept sites of earlier rules
        tags = self._site_tags(i)
        cm2 = p.cell_mm * p.cell_mm
        for pl in self.places:
            if not len(a):
                break
            need = np.asarray([need_mm(tg, ds, pl.tags, dict(pl.distances)) for tg, ds in tags], dtype=np.int64)[pre[a]]
            gx, gz = gap(x0[a], x0[a] + fw[a], z0[a], z0[a] + fd[a], pl.x0, pl.x1, pl.z0, pl.z1)
            hit = ((gx == 0) & (gz == 0)) | ((gx * gx + gz * gz) * cm2 < need * need)
            c[a[hit]] = PLACE
            detail[a[hit]] = pl.order[1]
            a = a[~hit]
        r = self.reach
        for j in range(i):
            if not len(a):
                break
            sj = p.sites[j].spacing
            # regions with no cell in the world have no site: the table need not hold them
            first, last = self._regions(j)
            lo_x, hi_x = np.maximum((x0[a] - r) // sj, first), np.minimum((x0[a] + fw[a] + r - 1) // sj, last)
            lo_z, hi_z = np.maximum((z0[a] - r) // sj, first), np.minimum((z0[a] + fd[a] + r - 1) // sj, last)
            if (hi_x < lo_x).all() or (hi_z < lo_z).all():
                continue
            tj = self.table(
                j,
                int(lo_x.min()),
                int(lo_z.min()),
                max(1, int(hi_x.max() - lo_x.min()) + 1),
                max(1, int(hi_z.max() - lo_z.min()) + 1),
            )
            jtags = self._site_tags(j)
            need_t = np.zeros((len(tags), max(1, len(jtags))), dtype=np.int64)
            for ka, (ta, da) in enumerate(tags):
                for kb, (tb, db) in enumerate(jtags):
                    need_t[ka, kb] = need_mm(ta, da, tb, db)
            hit_any = np.zeros(len(a), dtype=bool)
            for dz in range(max(0, int((hi_z - lo_z).max()) + 1)):
                for dx in range(max(0, int((hi_x - lo_x).max()) + 1)):
                    qx, qz = lo_x + dx, lo_z + dz
                    live = ~hit_any & (qx <= hi_x) & (qz <= hi_z)
                    if not live.any():
                        continue
                    k = np.flatnonzero(live)
                    ti, tk = qz[k] - tj.rz0, qx[k] - tj.rx0
                    there = tj.code[ti, tk] == STANDS
                    k, ti, tk = k[there], ti[there], tk[there]
                    if not len(k):
                        continue
                    ox0, oz0 = tj.x0[ti, tk], tj.z0[ti, tk]
                    gx, gz = gap(
                        x0[a[k]],
                        x0[a[k]] + fw[a[k]],
                        z0[a[k]],
                        z0[a[k]] + fd[a[k]],
                        ox0,
                        ox0 + tj.fw[ti, tk],
                        oz0,
                        oz0 + tj.fd[ti, tk],
                    )
                    need = need_t[pre[a[k]], tj.prefab[ti, tk]]
                    hit = ((gx == 0) & (gz == 0)) | ((gx * gx + gz * gz) * cm2 < need * need)
                    k = k[hit]
                    hit_any[k] = True
                    c[a[k]] = SITE
                    detail[a[k]] = j
                    orx[a[k]], orz[a[k]] = qx[k], qz[k]
            a = a[~hit_any]
        code[jz, ix] = c
        for arr, v in (
            (t.prefab, pre),
            (t.x0, x0),
            (t.z0, z0),
            (t.fw, fw),
            (t.fd, fd),
            (t.level, level),
            (t.detail, detail),
            (t.other_rx, orx),
            (t.other_rz, orz),
        ):
            arr[jz, ix] = v
        return t

    def _regions(self, i: int) -> tuple[int, int]:
        """The first and last region (on either axis) of rule i that hold a cell of the world."""
        s, n = self.p.sites[i].spacing, self.p.cells
        return -n // s, (n - 1) // s

    def _wet(
        self,
        x0: np.ndarray,
        z0: np.ndarray,
        fw: np.ndarray,
        fd: np.ndarray,
        pad_x: np.ndarray,
        pad_z: np.ndarray,
        pad_g: np.ndarray,
    ) -> np.ndarray:
        """Whether a vertex of each footprint is under water (base ground below its level);
        ``pad_*`` (4, n): the footprint's pad vertices and their base ground. Decided from bounds
        where they suffice (no water can reach the footprint; a pad vertex under water; the
        ground's lowest bound above the water's highest), else vertex by vertex."""
        from veduta.world.bounds import ground_bounds, water_bounds

        t = self.terrain
        n = len(x0)
        wet = np.zeros(n, dtype=bool)
        todo = np.zeros(n, dtype=bool)
        size = np.maximum(fw, fd)
        for S in np.unique(size).tolist():
            k = np.flatnonzero(size == S)
            w_lo, w_hi = water_bounds(t, x0[k], z0[k], S)
            k, w_hi = k[w_hi > NO_WATER], w_hi[w_hi > NO_WATER]
            if not len(k):
                continue
            lv = t.water_levels_points(pad_x[:, k], pad_z[:, k])
            under = (pad_g[:, k] < lv).any(axis=0)
            wet[k[under]] = True
            k, w_hi = k[~under], w_hi[~under]
            if not len(k):
                continue
            g_lo, _ = ground_bounds(t, x0[k], z0[k], S)
            todo[k[g_lo < w_hi]] = True
        for w, d in sorted(set(zip(fw[todo].tolist(), fd[todo].tolist()))):
            k = np.flatnonzero(todo & (fw == w) & (fd == d))
            ox, oz = np.meshgrid(np.arange(w + 1, dtype=np.int64), np.arange(d + 1, dtype=np.int64))
            px = (x0[k, None] + ox.ravel()[None, :]).ravel()
            pz = (z0[k, None] + oz.ravel()[None, :]).ravel()
            lv = t.water_levels_points(px, pz)
            under = np.zeros(len(px), dtype=bool)
            has = np.flatnonzero(lv != NO_WATER)
            if len(has):
                under[has] = t.ground_points(px[has], pz[has]) < lv[has]
            wet[k] = under.reshape(len(k), -1).any(axis=1)
        return wet

    def reasons(self, t: SiteTable, jz: np.ndarray, ix: np.ndarray) -> list[str]:
        """The ``reason`` of the decisions of table t at rows jz, columns ix ("" where a site
        stands), as :meth:`site` gives them, without making the decisions' objects."""
        rule = self.p.sites[t.rule]
        code, pre, det = t.code[jz, ix].tolist(), t.prefab[jz, ix].tolist(), t.detail[jz, ix].tolist()
        orx, orz = t.other_rx[jz, ix].tolist(), t.other_rz[jz, ix].tolist()
        fixed = {STANDS: "", CHANCE: "chance", NO_PREFABS: "no prefabs", OUTSIDE: "outside the world", WATER: "water"}
        out = []
        for k, c in enumerate(code):
            why = fixed.get(c)
            if why is None:
                if c == MISSING:
                    why = f"prefab {rule.prefabs[pre[k]]} missing"
                elif c == TOO_LARGE:
                    why = f"prefab {rule.prefabs[pre[k]]} too large for spacing {rule.spacing}"
                elif c == BIOME:
                    why = f"biome {self.p.biome_names[det[k]]}"
                elif c == PLACE:
                    why = f"place {self.places[det[k]].name}"
                else:
                    why = f"site {self.site_names[det[k]]}_{coord(orx[k])}_{coord(orz[k])}"
            out.append(why)
        return out

    def _from_table(self, t: SiteTable, rx: int, rz: int) -> SiteDecision:
        """The :class:`SiteDecision` of region (rx, rz) from a table holding it."""
        i = t.rule
        rule = self.p.sites[i]
        j, k = rz - t.rz0, rx - t.rx0
        code = int(t.code[j, k])
        if code == CHANCE:
            return SiteDecision(None, None, "chance")
        if code == NO_PREFABS:
            return SiteDecision(None, None, "no prefabs")
        name = rule.prefabs[int(t.prefab[j, k])]
        if code == MISSING:
            return SiteDecision(None, None, f"prefab {name} missing")
        if code == TOO_LARGE:
            return SiteDecision(None, None, f"prefab {name} too large for spacing {rule.spacing}")
        pf = self.prefabs[name]
        cand = Structure(
            kind="site",
            name=f"{self.site_names[i]}_{coord(rx)}_{coord(rz)}",
            prefab=name,
            x0=int(t.x0[j, k]),
            z0=int(t.z0[j, k]),
            fw=pf.fw,
            fd=pf.fd,
            level_mm=int(t.level[j, k]),
            rotation=0,
            tags=tuple(sorted(set(pf.tags) | {rule.tag})),
            distances=tuple(sorted(pf.distances.items())),
            order=(1, i, rz, rx),
            rule=i,
            region=(rx, rz),
        )
        if code == STANDS:
            return SiteDecision(cand, cand, "")
        if code == OUTSIDE:
            return SiteDecision(None, cand, "outside the world")
        if code == BIOME:
            return SiteDecision(None, cand, f"biome {self.p.biome_names[int(t.detail[j, k])]}")
        if code == WATER:
            return SiteDecision(None, cand, "water")
        if code == PLACE:
            return SiteDecision(None, cand, f"place {self.places[int(t.detail[j, k])].name}")
        oj = int(t.detail[j, k])
        other = f"{self.site_names[oj]}_{coord(int(t.other_rx[j, k]))}_{coord(int(t.other_rz[j, k]))}"
        return SiteDecision(None, cand, f"site {other}")

    def standing(self, i: int, x0: int, z0: int, x1: int, z1: int) -> RegionView | None:
        """The decisions of rule i over the regions holding cells x0..x1-1, z0..z1-1 and a cell of
        the world, with ``there``: a site stands and its footprint overlaps those cells (None when
        no region holds such a cell)."""
        t = self.table_for_cells(i, x0, z0, x1, z1)
        if t is None:
            return None
        s = self.p.sites[i].spacing
        first, last = self._regions(i)
        rx0, rz0 = max(first, x0 // s), max(first, z0 // s)
        nw, nh = min(last, (x1 - 1) // s) + 1 - rx0, min(last, (z1 - 1) // s) + 1 - rz0
        j0, i0 = rz0 - t.rz0, rx0 - t.rx0
        sl = (slice(j0, j0 + nh), slice(i0, i0 + nw))
        sx0, sz0, sfw, sfd = t.x0[sl], t.z0[sl], t.fw[sl], t.fd[sl]
        there = (t.code[sl] == STANDS) & (sx0 < x1) & (sx0 + sfw > x0) & (sz0 < z1) & (sz0 + sfd > z0)
        return RegionView(t, rx0, rz0, there, sx0, sz0, sfw, sfd, t.level[sl])

    def arrays(self, x0: int, z0: int, w: int, h: int, margin: int = 0) -> StructArrays:
        """:meth:`in_rect` as :class:`StructArrays` (no objects made: for large rectangles)."""
        bx0, bz0, bx1, bz1 = x0 - margin, z0 - margin, x0 + w + margin, z0 + h + margin
        parts: list[tuple[np.ndarray, ...]] = []
        pls = [s for s in self.places if s.x0 < bx1 and s.x1 > bx0 and s.z0 < bz1 and s.z1 > bz0]
        m = len(pls)
        parts.append(
            (
                np.asarray([s.x0 for s in pls], dtype=np.int64),
                np.asarray([s.z0 for s in pls], dtype=np.int64),
                np.asarray([s.fw for s in pls], dtype=np.int64),
                np.asarray([s.fd for s in pls], dtype=np.int64),
                np.asarray([s.level_mm for s in pls], dtype=np.int64),
                np.asarray([s.order[1] for s in pls], dtype=np.int64),
                np.full(m, -1, dtype=np.int64),
                np.full(m, -1, dtype=np.int64),
                np.full(m, -1, dtype=np.int64),
            )
        )
        for i in range(len(self.p.sites)):
            v = self.standing(i, bx0, bz0, bx1, bz1)
            if v is None:
                continue
            jz, ix = np.nonzero(v.there)
            k = len(jz)
            parts.append(
                (
                    v.x0[jz, ix],
                    v.z0[jz, ix],
                    v.fw[jz, ix],
                    v.fd[jz, ix],
                    v.level[jz, ix],
                    np.full(k, -1, dtype=np.int64),
                    np.full(k, i, dtype=np.int64),
                    v.rx0 + ix.astype(np.int64),
                    v.rz0 + jz.astype(np.int64),
                )
            )
        return StructArrays(*(np.concatenate([q[f] for q in parts]) for f in range(9)))


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
        k = np.maximum(np.maximum(np.maximum(s.x0 - vx, vx - s.x1), 0), np.maximum(np.maximum(s.z0 - vz, vz - s.z1), 0))
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


def pads_at(g: np.ndarray, px: np.ndarray, pz: np.ndarray, sa: StructArrays, bin_cells: int = 32) -> np.ndarray:
    """:func:`apply_pads` at scattered vertices: the final ground at vertices [px, pz] (1-D int64)
    from their base ground g, with the structures ``sa`` (canonical order; all those within
    PAD_BLEND of a vertex must be there). The same rules, found by binning instead of slicing."""
    out = g.copy()
    n = len(sa)
    if not n or not len(px):
        return out
    B = bin_cells
    key, sid = sa.binned(B)
    pkey = ((pz // B) << 32) + ((px // B) & 0xFFFFFFFF)
    lo = np.searchsorted(key, pkey, side="left")
    hi = np.searchsorted(key, pkey, side="right")
    m = hi - lo
    if not m.any():
        return out
    pid = np.repeat(np.arange(len(px), dtype=np.int64), m)
    sel = np.arange(int(m.sum()), dtype=np.int64) - np.repeat(np.cumsum(m) - m, m) + np.repeat(lo, m)
    s = sid[sel]  # pairs (pid, s), by vertex, then canonical order
    vx, vz = px[pid], pz[pid]
    kx = np.maximum(np.maximum(sa.x0[s] - vx, vx - sa.x0[s] - sa.fw[s]), 0)
    kz = np.maximum(np.maximum(sa.z0[s] - vz, vz - sa.z0[s] - sa.fd[s]), 0)
    kk = np.maximum(kx, kz)
    near = kk <= PAD_BLEND
    pid, s, kk = pid[near], s[near], kk[near]
    # footprint vertices: the level of the first structure covering them
    on = kk == 0
    owner = np.full(len(px), n, dtype=np.int64)
    np.minimum.at(owner, pid[on], s[on])
    has = owner < n
    # the others: moved toward each structure within PAD_BLEND, in canonical order
    blend = ~on & ~has[pid]
    pid, s, kk = pid[blend], s[blend], kk[blend]
    rank = np.arange(len(pid)) - np.searchsorted(pid, pid, side="left")
    for r in range(int(rank.max()) + 1 if len(rank) else 0):
        q = rank == r
        v, lev = out[pid[q]], sa.level[s[q]]
        out[pid[q]] = v + ((lev - v) * (PAD_BLEND + 1 - kk[q])) // (PAD_BLEND + 1)
    out[has] = sa.level[owner[has]]
    return out
