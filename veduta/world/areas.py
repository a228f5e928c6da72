"""The ground over a large area at a cost bounded by what is asked, not by the area.

``veduta world terrain`` reports the ground before and after an edit over the feature's disc:
centre, min, max and mean. A disc of the largest legal world holds 268 million vertices; the
generator makes about ten million a second, so the summary of a large disc is computed from
bounds instead of from every vertex:

- **min and max** (:func:`extremes`) by branch and bound: the disc is cut into square blocks;
  :func:`ground_bounds` gives each block a lower and an upper bound of the final ground over its
  vertices (relief from its noise octaves' values at the block's corners and lattice lines, each
  feature's profile over the block's distances and directions, the pad levels of the structures
  near it); blocks that cannot hold a value below the lowest (above the highest) found so far, by
  more than ``tol`` mm, are dropped, the others cut in 16 and bounded again, down to blocks of
  :data:`LEAF` cells whose vertices are computed. The results are values of real vertices, and no
  vertex of the disc is lower than the min or higher than the max by more than ``tol`` (60 mm,
  the spec's tolerance of the drawn ground; 0 gives the exact extremes).
- **mean** (:func:`ground_summary`) over the vertices of a grid of at most :data:`MEAN_SIDE` x
  :data:`MEAN_SIDE` samples (every ``step`` vertices) inside the disc.

The bounds are exact integer arithmetic on the generator's own formulas (docs/world-generation.md),
each a hull that holds whatever the floors do (a few noise units of slack).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from veduta.world.bounds import ground_bounds, relief_bounds
from veduta.world.structures import PAD_BLEND, StructArrays, pads_at

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.world.generator import Generator

#: the smallest blocks of :func:`extremes`: their vertices are computed
LEAF = 16
#: blocks of the first cut of :func:`extremes` (at most this many)
FIRST_BLOCKS = 4096
#: :func:`ground_summary` takes at most this many samples per side for the mean
MEAN_SIDE = 512


def _pyramid(a: np.ndarray, m: int, fn) -> np.ndarray:
    """fn over the windows of m + 1 rows and columns starting every m (a window holds the next
    window's first row and column: a block's last vertex is its neighbour's first)."""
    for axis in (0, 1):
        starts = np.arange(0, a.shape[axis], m)
        r = fn.reduceat(a, starts, axis=axis)
        nxt = np.take(a, np.minimum(starts + m, a.shape[axis] - 1), axis=axis)
        a = fn(r, nxt)
    return a


class Bounds:
    """Bounds of the final ground over square blocks of one area (the pads of the structures
    there are taken once, binned by :data:`LEAF` cells)."""

    def __init__(self, gen: Generator, x0: int, z0: int, x1: int, z1: int, structs: StructArrays):
        """The area: vertices x0..x1, z0..z1 (inclusive); ``structs``: its structures and those
        within PAD_BLEND + 1 of it."""
        self.gen = gen
        self.X0, self.Z0 = x0, z0
        nbx, nbz = (x1 - x0) // LEAF + 2, (z1 - z0) // LEAF + 2
        big = np.iinfo(np.int64).max
        self.pad_lo = np.full((nbz, nbx), big, dtype=np.int64)
        self.pad_hi = np.full((nbz, nbx), -big, dtype=np.int64)
        sa = structs
        if len(sa):
            ia = np.clip((sa.x0 - PAD_BLEND - x0) // LEAF, 0, nbx - 1)
            ic = np.clip((sa.x0 + sa.fw + PAD_BLEND - x0) // LEAF, 0, nbx - 1)
            ja = np.clip((sa.z0 - PAD_BLEND - z0) // LEAF, 0, nbz - 1)
            jc = np.clip((sa.z0 + sa.fd + PAD_BLEND - z0) // LEAF, 0, nbz - 1)
            w, h = ic - ia + 1, jc - ja + 1
            cnt = w * h
            sid = np.repeat(np.arange(len(sa), dtype=np.int64), cnt)
            k = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            flat = (ja[sid] + k // w[sid]) * nbx + ia[sid] + k % w[sid]
            order = np.argsort(flat, kind="stable")
            flat, lev = flat[order], sa.level[sid[order]]
            starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
            self.pad_lo.ravel()[flat[starts]] = np.minimum.reduceat(lev, starts)
            self.pad_hi.ravel()[flat[starts]] = np.maximum.reduceat(lev, starts)

    def __call__(self, bx0: np.ndarray, bz0: np.ndarray, S: int, tiling: bool = False):
        """(lo, hi) of the final ground over the vertices of blocks [bx0, bx0 + S] x [bz0, bz0 + S]
        (S a multiple of LEAF, blocks aligned with the area's corner); ``tiling``: the blocks
        are a tiling of the area (its first cut)."""
        t = self.gen.terrain
        m = S // LEAF
        i0, j0 = (bx0 - self.X0) // LEAF, (bz0 - self.Z0) // LEAF
        if tiling:  # the first cut of a large area: its relief is the same for generators built alike
            cache = self.gen.structs.shared.setdefault("relief_bounds", {})
            key = (S, bx0.tobytes(), bz0.tobytes())
            if key not in cache:
                cache.clear()
                cache[key] = relief_bounds(t, bx0, bz0, S, tiling)
            lo, hi = ground_bounds(t, bx0, bz0, S, relief=tuple(a.copy() for a in cache[key]))
            plo = _pyramid(self.pad_lo, m, np.minimum)[j0 // m, i0 // m]
            phi = _pyramid(self.pad_hi, m, np.maximum)[j0 // m, i0 // m]
        else:
            lo, hi = ground_bounds(t, bx0, bz0, S)
            ii = np.clip(i0[:, None] + np.arange(m + 1)[None, :], 0, self.pad_lo.shape[1] - 1)
            jj = np.clip(j0[:, None] + np.arange(m + 1)[None, :], 0, self.pad_lo.shape[0] - 1)
            plo = self.pad_lo[jj[:, :, None], ii[:, None, :]].min(axis=(1, 2))
            phi = self.pad_hi[jj[:, :, None], ii[:, None, :]].max(axis=(1, 2))
        # pads: a vertex near a structure is between its ground and the pad's level, or on the pad
        return np.minimum(lo, plo), np.maximum(hi, phi)


# -- the disc ------------------------------------------------------------------------------------------


def disc_box(gen: Generator, x: int, z: int, r: int) -> tuple[int, int, int, int]:
    """(x0, z0, x1, z1): the vertices (inclusive) of the disc's box inside the world."""
    n = gen.p.cells
    return max(-n, x - r), max(-n, z - r), min(n, x + r), min(n, z + r)


def _meets_disc(bx0: np.ndarray, bz0: np.ndarray, S: int, x: int, z: int, r: int) -> np.ndarray:
    nx = np.clip(x, bx0, bx0 + S) - x
    nz = np.clip(z, bz0, bz0 + S) - z
    return nx * nx + nz * nz <= r * r


def ground_summary(
    gen: Generator, x: int, z: int, r: int, tol: int = 60, side: int = MEAN_SIDE, progress: Progress | None = None
) -> dict[str, Any]:
    """The final ground over the vertices of the disc of radius r around vertex (x, z) inside the
    world: ``{"centre", "min", "max", "mean_mm" (a float), "step"}`` (module docstring: min and
    max within ``tol``, the mean over the samples every ``step`` vertices)."""
    x0, z0, x1, z1 = disc_box(gen, x, z, r)
    sa = gen.structs.arrays(x0, z0, x1 - x0 + 1, z1 - z0 + 1, PAD_BLEND + 1)
    step = max(1, -(-(2 * r + 1) // side))
    gx = np.arange(x0, x1 + 1, step, dtype=np.int64)
    gz = np.arange(z0, z1 + 1, step, dtype=np.int64)
    inside = ((gx[None, :] - x) ** 2 + (gz[:, None] - z) ** 2 <= r * r).ravel()
    # the relief of the samples (separable noise: cheaper than point by point), the same for
    # generators built alike (the world before and after an edit)
    cache = gen.structs.shared.setdefault("relief_samples", {})
    key = (gx.tobytes(), gz.tobytes())
    if key not in cache:
        cache.clear()
        cache[key] = gen.terrain.relief_grid(gx, gz)
    base = gen.terrain.features_grid(cache[key].copy(), gx, gz).ravel()[inside]
    xs, zs = (a.ravel()[inside] for a in np.meshgrid(gx, gz))
    sv = pads_at(base, xs, zs, sa)
    centre = int(gen.heights_at(np.array([x]), np.array([z]), sa)[0])
    if not len(sv):  # the whole disc is outside the world: its centre vertex is all there is
        return {"centre": centre, "min": centre, "max": centre, "mean_mm": float(centre), "step": step}
    lo, hi = extremes(gen, x, z, r, sa, (min(centre, int(sv.min())), max(centre, int(sv.max()))), tol, progress)
    # the mean of int64 samples: an exact integer sum, one division (no float summation order)
    return {"centre": centre, "min": lo, "max": hi, "mean_mm": int(sv.sum()) / len(sv), "step": step}


def extremes(
    gen: Generator,
    x: int,
    z: int,
    r: int,
    structs: StructArrays,
    found: tuple[int, int],
    tol: int = 60,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """(min, max) of the final ground over the vertices of the disc of radius r around vertex
    (x, z) inside the world, within ``tol`` mm (module docstring); ``found``: values of vertices
    of the disc already known (they start the search); ``structs``: the disc box's structures."""
    x0, z0, x1, z1 = disc_box(gen, x, z, r)
    best_lo, best_hi = found
    S = LEAF
    while ((x1 - x0) // S + 1) * ((z1 - z0) // S + 1) > FIRST_BLOCKS:
        S *= 4
    bounds = Bounds(gen, x0, z0, x1, z1, structs)
    gx = np.arange(x0, x1 + 1, S, dtype=np.int64)
    gz = np.arange(z0, z1 + 1, S, dtype=np.int64)
    bx0, bz0 = (a.ravel() for a in np.meshgrid(gx, gz))
    tiling = True
    level = 0
    while len(bx0):
        lo, hi = bounds(bx0, bz0, S, tiling)
        keep = ((lo < best_lo - tol) | (hi > best_hi + tol)) & _meets_disc(bx0, bz0, S, x, z, r)
        tiling = False
        bx0, bz0 = bx0[keep], bz0[keep]
        if not len(bx0):
            break
        if S == LEAF:  # the vertices of the blocks left, inside the disc
            off = np.arange(S + 1, dtype=np.int64)
            vx = (bx0[:, None, None] + off[None, None, :]).repeat(S + 1, axis=1).ravel()
            vz = (bz0[:, None, None] + off[None, :, None]).repeat(S + 1, axis=2).ravel()
            ok = (vx <= x1) & (vz <= z1) & ((vx - x) ** 2 + (vz - z) ** 2 <= r * r)
            g = gen.heights_at(vx[ok], vz[ok], structs)
            if len(g):
                best_lo, best_hi = min(best_lo, int(g.min())), max(best_hi, int(g.max()))
            break
        # cut each block in 16; the centres of the new blocks are vertices worth knowing at once
        S //= 4
        off = np.arange(4, dtype=np.int64) * S
        bx0 = (bx0[:, None, None] + off[None, None, :]).repeat(4, axis=1).ravel()
        bz0 = (bz0[:, None, None] + off[None, :, None]).repeat(4, axis=2).ravel()
        keep = (bx0 <= x1) & (bz0 <= z1)
        bx0, bz0 = bx0[keep], bz0[keep]
        cx, cz = np.minimum(bx0 + S // 2, x1), np.minimum(bz0 + S // 2, z1)
        ok = (cx - x) ** 2 + (cz - z) ** 2 <= r * r
        g = gen.heights_at(cx[ok], cz[ok], structs)
        if len(g):
            best_lo, best_hi = min(best_lo, int(g.min())), max(best_hi, int(g.max()))
        level += 1
        if progress is not None:
            progress(level, None, "ground extremes")
    return best_lo, best_hi


# -- structures that change between two generators ------------------------------------------------


def _metres(mm: int) -> float:
    return int(mm) / 1000.0


def structure_changes(before: Generator, after: Generator, x0: int, z0: int, w: int, h: int) -> list[dict]:
    """Sites and places whose footprint overlaps the cell rectangle and that differ between two
    generators of one world (``veduta world`` edits): ``{"kind", "name", "change": "dropped"
    (with the ``reason`` the site has none now, "removed" for a place) | "added" | "pad" (with
    ``before`` and ``after`` levels, metres) | "in water" | "out of water", "cell"}``, by
    canonical order (places, then sites by rule, region row, region column). Sites are compared
    table against table (no object per site), so a rectangle of the whole world costs its
    decisions, and a dict per change."""
    if w <= 0 or h <= 0:
        return []
    out = _place_changes(before, after, x0, z0, w, h)
    a, b = before.structs, after.structs
    if a.p.sites != b.p.sites or a.site_names != b.site_names:  # other rules: compare them by name
        return out + _site_changes_by_name(before, after, x0, z0, w, h)
    from veduta.world.structures import coord

    bx1, bz1 = x0 + w, z0 + h
    for i in range(len(a.p.sites)):
        va, vb = a.standing(i, x0, z0, bx1, bz1), b.standing(i, x0, z0, bx1, bz1)
        if va is None or vb is None:
            continue
        rx0, rz0, tb = va.rx0, va.rz0, vb.table
        ina, ax0, az0, alev = va.there, va.x0, va.z0, va.level
        inb, bx0, bz0, blev = vb.there, vb.x0, vb.z0, vb.level
        diff = ina != inb
        diff |= ina & inb & (alev != blev)
        prefix = a.site_names[i] + "_"
        jz, ix = np.nonzero(diff)
        if not len(jz):
            continue
        names = {}  # coordinate -> its text in a name (n3 for -3)
        for v in np.unique(np.concatenate([ix + rx0, jz + rz0])).tolist():
            names[v] = coord(v)
        kinds = np.where(~inb[jz, ix], 0, np.where(~ina[jz, ix], 1, 2)).tolist()
        cx = np.where(inb[jz, ix], bx0[jz, ix], ax0[jz, ix]).tolist()
        cz = np.where(inb[jz, ix], bz0[jz, ix], az0[jz, ix]).tolist()
        la, lb = alev[jz, ix].tolist(), blev[jz, ix].tolist()
        gone = ~inb[jz, ix]
        why = iter(b.reasons(tb, jz[gone] + (rz0 - tb.rz0), ix[gone] + (rx0 - tb.rx0)))
        for k, (rx, rz) in enumerate(zip((ix + rx0).tolist(), (jz + rz0).tolist(), strict=True)):
            name = prefix + names[rx] + "_" + names[rz]
            kind = kinds[k]
            if kind == 0:
                out.append(
                    {
                        "kind": "site",
                        "name": name,
                        "change": "dropped",
                        "reason": next(why) or "removed",
                        "cell": [cx[k], cz[k]],
                    }
                )
            elif kind == 1:
                out.append({"kind": "site", "name": name, "change": "added", "cell": [cx[k], cz[k]]})
            else:
                out.append(
                    {
                        "kind": "site",
                        "name": name,
                        "change": "pad",
                        "before": la[k] / 1000.0,
                        "after": lb[k] / 1000.0,
                        "cell": [cx[k], cz[k]],
                    }
                )
    return out


def _compare(a: dict, b: dict, after: Generator) -> list[dict]:
    """The changes between structures by name (``a`` before, ``b`` after), in canonical order."""
    out: list[dict] = []
    for name in sorted(set(a) | set(b), key=lambda n: ((a[n] if n in a else b[n]).order, n)):
        s, t = a.get(name), b.get(name)
        if t is None:
            s = a[name]
            why = ""
            if s.region is not None:  # a site: why its rule has none there now
                why = after.structs.site(s.rule, *s.region).reason
            out.append(
                {"kind": s.kind, "name": name, "change": "dropped", "reason": why or "removed", "cell": [s.x0, s.z0]}
            )
        elif s is None:
            out.append({"kind": t.kind, "name": name, "change": "added", "cell": [t.x0, t.z0]})
        else:
            if s.level_mm != t.level_mm:
                out.append(
                    {
                        "kind": t.kind,
                        "name": name,
                        "change": "pad",
                        "before": _metres(s.level_mm),
                        "after": _metres(t.level_mm),
                        "cell": [t.x0, t.z0],
                    }
                )
            if s.wet != t.wet:
                out.append(
                    {
                        "kind": t.kind,
                        "name": name,
                        "change": "in water" if t.wet else "out of water",
                        "cell": [t.x0, t.z0],
                    }
                )
    return out


def _overlap(s, x0: int, z0: int, w: int, h: int) -> bool:
    return s.x0 < x0 + w and s.x1 > x0 and s.z0 < z0 + h and s.z1 > z0


def _place_changes(before: Generator, after: Generator, x0: int, z0: int, w: int, h: int) -> list[dict]:
    a = {s.name: s for s in before.structs.places if _overlap(s, x0, z0, w, h)}
    b = {s.name: s for s in after.structs.places if _overlap(s, x0, z0, w, h)}
    return _compare(a, b, after)


def _site_changes_by_name(before: Generator, after: Generator, x0: int, z0: int, w: int, h: int) -> list[dict]:
    a = {s.name: s for s in before.structures_in(x0, z0, w, h) if s.kind == "site"}
    b = {s.name: s for s in after.structures_in(x0, z0, w, h) if s.kind == "site"}
    return _compare(a, b, after)
