"""Biomes, base ground and water levels (docs/world-generation.md, sections 4-7).

The *base ground* is the relief with every feature applied in file order, before the pads of
sites and places (veduta.world.structures). Water levels come from lakes, seas and the sea
level only; they never depend on the ground, so whether a point is wet is simply ``ground <
level``.

Array layout everywhere: ``a[j, i]`` is the value at x = x0 + i, z = z0 + j.
"""

from __future__ import annotations

import numpy as np

from veduta.world.intmath import (
    angular_noise,
    angular_table,
    dist8,
    fbm,
    fbm_grid,
    fbm_points,
    pseudo_angle,
    smooth,
    stream_key,
)
from veduta.world.params import FeatureP, WorldP
from veduta.world.tables import equalise

#: water level of a vertex or cell that has no water at all
NO_WATER = -(1 << 62)
#: height of the dry rim above a lake's water, mm
RIM_MM = 50
#: width of the dry rim, in 1/256 cells (2 cells)
RIM8 = 2 * 256
RELIEF_OCTAVES = 3
BIOME_OCTAVES = 2
RELIEF_SPAN = ((1 << RELIEF_OCTAVES) - 1) * 32768  # 229376


def field_cuts(thresholds: list[int], total: int) -> list[int]:
    """For each threshold t, the least biome field value f with ``equalise(f) * total >= t`` (one
    past the largest fbm value when none). equalise never decreases as f grows (its table never
    does, and each piece starts where the one before ends), so the biome of a cell, the number
    of thresholds ``equalise(f) * total`` reaches, is the number of these cuts f reaches: the
    same index without equalising every cell."""
    span = ((1 << BIOME_OCTAVES) - 1) * 32768  # |fbm| of the biome octaves is at most this
    cuts = []
    for t in thresholds:
        lo, hi = -span - 1, span + 1  # equalise(lo) * total < t <= equalise(hi) * total, or hi: none
        if equalise(hi) * total < t:
            cuts.append(hi)
            continue
        if equalise(lo) * total >= t:
            cuts.append(lo)
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if equalise(mid) * total >= t:
                hi = mid
            else:
                lo = mid
        cuts.append(hi)
    return cuts


class Terrain:
    """Biomes, base ground and water of one world."""

    def __init__(self, p: WorldP):
        self.p = p
        self.biome_keys = [stream_key(p.seed, f"biome/{k + 1}") for k in range(BIOME_OCTAVES)]
        self.relief_keys = [stream_key(p.seed, f"relief/{k + 1}") for k in range(RELIEF_OCTAVES)]
        total = sum(p.biome_weights)
        self.weight_total = total
        cum = np.cumsum(np.asarray(p.biome_weights, dtype=np.int64))
        #: biome k covers u * W in [C_(k-1) * 65536, C_k * 65536)
        self.biome_thresholds = cum[:-1] * 65536
        #: the same thresholds on the biome field f itself (before equalise): biome k covers f in
        #: [cut_(k-1), cut_k) (see :func:`field_cuts`)
        self.biome_cuts = np.asarray(field_cuts(self.biome_thresholds.tolist(), total), dtype=np.int64)
        self._tables: dict[int, list[int]] = {}
        self.levels: list[int] = []
        self.reach: list[int] = []
        for f in p.features:
            if f.kind in ("lake", "sea"):
                self._tables[f.index] = angular_table(f.key)
            # the level is fixed once: the given height, or the ground the earlier features left
            if f.has_height or f.kind == "hill":
                level = f.height_mm
            else:
                level = self.ground_at(f.x, f.z, upto=f.index)
            self.levels.append(level)
            self.reach.append(feature_reach(f))

    # -- biomes ---------------------------------------------------------------------------------

    def biome_at(self, x: int, z: int) -> int:
        """Biome index of cell [x, z]."""
        u = equalise(fbm(self.biome_keys, self.p.biome_scale, x, z))
        v = u * self.weight_total
        return sum(1 for t in self.biome_thresholds.tolist() if v >= t)

    def biomes(self, x0: int, z0: int, w: int, h: int) -> np.ndarray:
        """Biome indices of the cells of a rectangle, (h, w) int64."""
        xs = np.arange(x0, x0 + w, dtype=np.int64)
        zs = np.arange(z0, z0 + h, dtype=np.int64)
        f = fbm_grid(self.biome_keys, self.p.biome_scale, xs, zs)
        return self.biome_of_field(f)

    def biome_of_field(self, f: np.ndarray) -> np.ndarray:
        """The biome indices of cells of biome field f (int64, f's shape): how many cuts each
        value reaches, ``searchsorted(biome_cuts, f, side="right")`` as one comparison a cut
        (a few biomes: cheaper than a binary search per cell)."""
        cuts = self.biome_cuts.tolist()
        if len(cuts) > 8:
            return np.searchsorted(self.biome_cuts, f, side="right").astype(np.int64)
        if not cuts:
            return np.zeros(f.shape, dtype=np.int64)
        if len(cuts) == 1:
            return (f >= cuts[0]).astype(np.int64)
        out = np.add(f >= cuts[0], f >= cuts[1], dtype=np.int64)
        for cut in cuts[2:]:
            out += f >= cut
        return out

    def biomes_at(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Biome indices of the cells [xs, zs] (int64 arrays of one shape), elementwise."""
        u = equalise(fbm_points(self.biome_keys, self.p.biome_scale, xs, zs))
        return np.searchsorted(self.biome_thresholds, u * self.weight_total, side="right").astype(np.int64)

    # -- base ground ----------------------------------------------------------------------------

    def relief_at(self, x: int, z: int) -> int:
        if self.p.relief_mm == 0:
            return 0
        return (self.p.relief_mm * fbm(self.relief_keys, self.p.relief_scale, x, z)) // RELIEF_SPAN

    def ground_at(self, x: int, z: int, upto: int | None = None) -> int:
        """Base ground at vertex [x, z] in mm, with the features before index ``upto`` (all by
        default)."""
        g = self.relief_at(x, z)
        feats = self.p.features if upto is None else self.p.features[:upto]
        for f in feats:
            r = self.reach[f.index]
            dx, dz = x - f.x, z - f.z
            if -r <= dx <= r and -r <= dz <= r:
                g = self._apply(f, g, dx, dz)
        return g

    def ground(self, x0: int, z0: int, w: int, h: int) -> np.ndarray:
        """Base ground of the vertices x0..x0+w-1, z0..z0+h-1, (h, w) int64 mm."""
        return self.ground_grid(np.arange(x0, x0 + w, dtype=np.int64), np.arange(z0, z0 + h, dtype=np.int64))

    def ground_grid(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Base ground of the vertices ``zs x xs`` (increasing int64 coordinates, not necessarily
        contiguous: a sample grid), (len(zs), len(xs)) int64 mm."""
        return self.features_grid(self.relief_grid(xs, zs), xs, zs)

    def relief_grid(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """The relief (the ground before any feature) of the vertices ``zs x xs``, mm."""
        if self.p.relief_mm == 0:
            return np.zeros((len(zs), len(xs)), dtype=np.int64)
        g = fbm_grid(self.relief_keys, self.p.relief_scale, xs, zs)  # a fresh array: in place
        g *= self.p.relief_mm
        g //= RELIEF_SPAN
        return g

    def features_grid(self, g: np.ndarray, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Every feature applied, in file order, to the relief g of the vertices ``zs x xs`` (in place)."""
        for f in self.p.features:
            sl = self._window_of(f, xs, zs)
            if sl is None:
                continue
            (i0, i1), (j0, j1) = sl
            dx = xs[i0:i1] - f.x
            dz = zs[j0:j1] - f.z
            g[j0:j1, i0:i1] = self._apply(f, g[j0:j1, i0:i1], dx[None, :], dz[:, None])
        return g

    def ground_points(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Base ground at the vertices [xs, zs] (int64 arrays of one shape), elementwise, mm."""
        xs = np.asarray(xs, dtype=np.int64)
        zs = np.asarray(zs, dtype=np.int64)
        return self.features_points(self.relief_points(xs, zs), xs, zs)

    def relief_points(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """The relief (the ground before any feature) at the vertices [xs, zs], elementwise, mm."""
        if self.p.relief_mm == 0:
            return np.zeros(np.shape(xs), dtype=np.int64)
        return (self.p.relief_mm * fbm_points(self.relief_keys, self.p.relief_scale, xs, zs)) // RELIEF_SPAN

    def features_points(self, g: np.ndarray, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Every feature applied, in file order, to the relief g at the vertices [xs, zs]."""
        g = g.copy()
        for f in self.p.features:
            r = self.reach[f.index]
            dx, dz = xs - f.x, zs - f.z
            sel = (np.abs(dx) <= r) & (np.abs(dz) <= r)
            if sel.all():
                g = self._apply(f, g, dx, dz)
            elif sel.any():
                g[sel] = self._apply(f, g[sel], dx[sel], dz[sel])
        return g

    def _window(self, f: FeatureP, x0: int, z0: int, w: int, h: int):
        r = self.reach[f.index]
        i0, i1 = max(0, f.x - r - x0), min(w, f.x + r + 1 - x0)
        j0, j1 = max(0, f.z - r - z0), min(h, f.z + r + 1 - z0)
        if i0 >= i1 or j0 >= j1:
            return None
        return (i0, i1), (j0, j1)

    def _window_of(self, f: FeatureP, xs: np.ndarray, zs: np.ndarray):
        """Index ranges of the increasing coordinates xs and zs within a feature's reach."""
        r = self.reach[f.index]
        i0, i1 = np.searchsorted(xs, f.x - r, side="left"), np.searchsorted(xs, f.x + r, side="right")
        j0, j1 = np.searchsorted(zs, f.z - r, side="left"), np.searchsorted(zs, f.z + r, side="right")
        if i0 >= i1 or j0 >= j1:
            return None
        return (int(i0), int(i1)), (int(j0), int(j1))

    def _apply(self, f: FeatureP, g, dx, dz):
        """One feature's profile on ground g at offsets (dx, dz) from its centre (scalar or array)."""
        vec = isinstance(g, np.ndarray)
        d8 = dist8(dx, dz)
        level = self.levels[f.index]
        r8 = f.radius * 256
        if f.kind == "hill":
            t = 65536 - (np.minimum(d8, r8) << 16) // r8 if vec else 65536 - (min(d8, r8) << 16) // r8
            add = (f.height_mm * smooth(t)) >> 16
            return g + add  # add is 0 from the radius on
        if f.kind == "plain":
            ri8 = max(f.radius - f.falloff, 0) * 256
            span = max(1, r8 - ri8)
            if vec:
                t = ((np.clip(d8, ri8, r8) - ri8) << 16) // span
                return np.where(d8 < r8, level + (((g - level) * smooth(t)) >> 16), g)
            if d8 >= r8:
                return g
            t = ((max(d8, ri8) - ri8) << 16) // span
            return level + (((g - level) * smooth(t)) >> 16)
        # lake and sea
        big_r8 = self.water_radius8(f, dx, dz)
        s8 = max(1, f.falloff) * 256
        rim = level + RIM_MM
        if vec:
            u = (np.minimum(d8, big_r8) << 16) // big_r8
            bowl = level - ((f.depth_mm * (65536 - ((u * u) >> 16))) >> 16)
            t = ((np.clip(d8 - big_r8 - RIM8, 0, s8)) << 16) // s8
            shore = rim + (((g - rim) * smooth(t)) >> 16)
            return np.where(d8 < big_r8, bowl, np.where(d8 < big_r8 + RIM8, rim, shore))
        if d8 < big_r8:
            u = (d8 << 16) // big_r8
            return level - ((f.depth_mm * (65536 - ((u * u) >> 16))) >> 16)
        if d8 < big_r8 + RIM8:
            return rim
        t = (min(d8 - big_r8 - RIM8, s8) << 16) // s8
        return rim + (((g - rim) * smooth(t)) >> 16)

    def water_radius8(self, f: FeatureP, dx, dz):
        """Wandering radius of a lake or sea in the direction (dx, dz), in 1/256 cells:
        ``R8 = r*256 + ((r*256 * ((roughness_q16 * n) >> 16)) >> 16)`` with n the angular noise."""
        n = angular_noise(self._tables[f.index], pseudo_angle(dx, dz))
        r8 = f.radius * 256
        return r8 + ((r8 * ((f.rough_q16 * n) >> 16)) >> 16)

    # -- water ----------------------------------------------------------------------------------

    def water_level_at(self, x: int, z: int) -> int:
        """Water level at vertex [x, z] in mm, or NO_WATER."""
        lv = NO_WATER
        for f in self.p.features:
            if f.kind not in ("lake", "sea"):
                continue
            r = self.reach[f.index]
            dx, dz = x - f.x, z - f.z
            if -r <= dx <= r and -r <= dz <= r and dist8(dx, dz) < self.water_radius8(f, dx, dz):
                lv = self.levels[f.index]
        if self.p.sea:
            lv = max(lv, self.p.sea_level_mm)
        return lv

    def water_levels(self, x0: int, z0: int, w: int, h: int) -> np.ndarray:
        """Water levels of the vertices of a rectangle, (h, w) int64 mm (NO_WATER for none)."""
        return self.water_levels_grid(np.arange(x0, x0 + w, dtype=np.int64), np.arange(z0, z0 + h, dtype=np.int64))

    def water_levels_grid(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Water levels of the vertices ``zs x xs`` (increasing coordinates), (len(zs), len(xs))."""
        lv = np.full((len(zs), len(xs)), NO_WATER, dtype=np.int64)
        for f in self.p.features:
            if f.kind not in ("lake", "sea"):
                continue
            sl = self._window_of(f, xs, zs)
            if sl is None:
                continue
            (i0, i1), (j0, j1) = sl
            dx = (xs[i0:i1] - f.x)[None, :]
            dz = (zs[j0:j1] - f.z)[:, None]
            inside = dist8(dx, dz) < self.water_radius8(f, dx, dz)
            sub = lv[j0:j1, i0:i1]
            sub[inside] = self.levels[f.index]
        if self.p.sea:
            np.maximum(lv, self.p.sea_level_mm, out=lv)
        return lv

    def water_levels_points(self, xs: np.ndarray, zs: np.ndarray) -> np.ndarray:
        """Water levels at the vertices [xs, zs] (int64 arrays of one shape), elementwise."""
        shape = np.shape(xs)
        xs = np.asarray(xs, dtype=np.int64).ravel()
        zs = np.asarray(zs, dtype=np.int64).ravel()
        lv = np.full(xs.shape, NO_WATER, dtype=np.int64)
        for f in self.p.features:
            if f.kind not in ("lake", "sea"):
                continue
            r = self.reach[f.index]
            dx, dz = xs - f.x, zs - f.z
            sel = (np.abs(dx) <= r) & (np.abs(dz) <= r)
            if not sel.any():
                continue
            dx, dz = dx[sel], dz[sel]
            inside = dist8(dx, dz) < self.water_radius8(f, dx, dz)
            idx = np.flatnonzero(sel)[inside]
            lv[idx] = self.levels[f.index]
        if self.p.sea:
            np.maximum(lv, self.p.sea_level_mm, out=lv)
        return lv.reshape(shape)

    def wet_possible(self, x0: int, z0: int, x1: int, z1: int) -> bool:
        """Whether any vertex of the rectangle [x0, x1] x [z0, z1] (inclusive) can have water: the
        sea level is on, or a lake's or sea's reach meets it."""
        if self.p.sea:
            return True
        for f in self.p.features:
            if f.kind in ("lake", "sea"):
                r = self.reach[f.index]
                if f.x - r <= x1 and x0 <= f.x + r and f.z - r <= z1 and z0 <= f.z + r:
                    return True
        return False


def feature_reach(f: FeatureP) -> int:
    """Cells from the centre beyond which a feature changes nothing (Chebyshev)."""
    if f.kind in ("hill", "plain"):
        return f.radius
    # wandering radius at most 1.5 r, then the rim (2 cells) and the shore (falloff, at least 1)
    return f.radius + (f.radius + 1) // 2 + 2 + max(1, f.falloff) + 1
