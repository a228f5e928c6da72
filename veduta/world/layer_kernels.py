"""Compiled kernels of ``Generator.layers(points=True)`` (the drawing passes' bands: issue 22,
``inspect world --all``): who owns each cell, the plants of the model rules, the water levels of
the vertices and cells, the biomes (the field's octaves summed, its cuts counted); veduta/world/
jit.py's rules.

Each kernel walks the cells once, row by row, doing per cell what the numpy path does per array
(veduta/world/cover.py, terrain.py), its cheaper tests first: the same integer operations (the
hashes in ``uint64``, wrapping as numpy's; floor divisions and arithmetic shifts of ``int64`` as
Python's), so the same values, and the cells of each rule in the rows' order, as the numpy path
lists them. Call them only when :func:`veduta.world.jit.enabled`; the numpy path stays the
reference (tests/world/test_layer_kernels.py compares the two, and with the one-cell generator).

The small functions the kernels call (:func:`mix64`, :func:`marked`; intmath's :func:`smooth`
and :func:`pseudo_angle_int`, as they are) are plain Python; :func:`ready` compiles them (numba's
``njit``) before the first kernel is compiled, so a kernel calls their compiled forms (and a
kernel's ``__wrapped__`` stays runnable without numba).
"""

from __future__ import annotations

import numpy as np

from veduta.world import jit
from veduta.world.intmath import MIX_C1, MIX_C2, pseudo_angle_int, smooth

_C1 = np.uint64(MIX_C1)
_C2 = np.uint64(MIX_C2)
_S16 = np.uint64(16)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW16 = np.uint64(0xFFFF)
_U3 = np.uint64(3)
_U600 = np.uint64(600)

# owner kinds (veduta.world.cover's codes)
_NONE, _STRUCTURE = 0, 1


def mix64(z):
    """:func:`veduta.world.intmath.mix64` of a ``uint64``."""
    z = (z ^ (z >> _S30)) * _C1
    z = (z ^ (z >> _S27)) * _C2
    return z ^ (z >> _S31)


def marked(mark, i0, i1, cand):
    """The columns i0..i1-1 where ``mark`` is set, into ``cand`` without a branch (a few marked
    at random: a branch per column would be mispredicted); how many."""
    c = 0
    for i in range(i0, i1):
        cand[c] = i
        c += mark[i]
    return c


#: what the kernels call: this module's helpers and intmath's integer functions, as they are
_HELPERS = ("mix64", "marked", "smooth", "pseudo_angle_int")
_done: list[bool] = []


def ready() -> None:
    """Compile the helpers the kernels call (once, before the first kernel; numba must be there:
    :func:`veduta.world.jit.enabled`)."""
    if _done:
        return
    g = globals()
    for name in _HELPERS:
        g[name] = jit.helper(g[name])
    _done.append(True)


# -- owners -------------------------------------------------------------------------------------


@jit.kernel
def footprints(kind, index, x0, z0, rx0, rx1, rz0, rz1):
    """Each cell of a footprint (the rectangles [rx0, rx1) x [rz0, rz1), in canonical order) to the
    first structure covering it: ``kind`` STRUCTURE, ``index`` its position (in place)."""
    h, w = kind.shape
    for s in range(len(rx0)):
        for z in range(max(rz0[s], z0), min(rz1[s], z0 + h)):
            for x in range(max(rx0[s], x0), min(rx1[s], x0 + w)):
                if kind[z - z0, x - x0] == _NONE:
                    kind[z - z0, x - x0] = _STRUCTURE
                    index[z - z0, x - x0] = s


@jit.kernel
def too_close(close, x0, z0, cm, slot, bx0, bx1, bz0, bz1, need):
    """``close[slot[k]]`` (in place): the cells closer than need[k, s] mm to structure s
    (Cover._too_close's test: the gap in whole cells), for each rule k with a slot (>= 0), looking
    only at each structure's rectangle grown by its reach."""
    _, h, w = close.shape
    for k in range(len(slot)):
        m = slot[k]
        if m < 0:
            continue
        for s in range(len(bx0)):
            nd = need[k, s]
            if nd == 0:
                continue
            reach = -(-nd // cm) + 1
            for z in range(max(bz0[s] - reach, z0), min(bz1[s] + reach, z0 + h)):
                gz = max(0, max(bz0[s] - (z + 1), z - bz1[s]))
                for x in range(max(bx0[s] - reach, x0), min(bx1[s] + reach, x0 + w)):
                    gx = max(0, max(bx0[s] - (x + 1), x - bx1[s]))
                    if (gx * gx + gz * gz) * (cm * cm) < nd * nd:
                        close[m, z - z0, x - x0] = True


@jit.kernel
def owners(kind, index, biome, wet, x0, z0, n, code, rule, ok, area, ax, az, ar, dens, rows, zu, close, cslot):
    """Cover.owners' rules over the cells the footprints left (``kind`` NONE), dry, in the world's
    [-n, n) cells, in place: each cell to the first rule k (in order) whose hash ``mix64(rows[k,
    i] ^ zu[j])`` is below its density, in one of its biomes (``ok[k, biome]``), within its disc
    (``area[k]``: centre (ax, az), radius ar) and not too close to a structure (``close[cslot[k]]``;
    no such test for a slot < 0): Cover.owner_at's order of tests, cell by cell.

    Row by row: first every rule's hash over the row (the disc's box only for a rule with an area;
    loops the compiler vectorises), marking the cells where one of them is below its density
    (few); then those cells, listed without a branch, each tested as above. Returns (rows,
    columns, counts): the cells each rule took, rule after rule, each rule's row by row, and how
    many each took."""
    h, w = kind.shape
    nr = len(code)
    tj = np.empty(h * w, dtype=np.int64)  # the cells taken, in the rows' order, and their rules
    ti = np.empty(h * w, dtype=np.int64)
    tk = np.empty(h * w, dtype=np.int64)
    counts = np.zeros(nr, dtype=np.int64)
    mark = np.empty(w, dtype=np.uint8)
    cand = np.empty(w, dtype=np.int64)
    b0 = np.empty(nr, dtype=np.int64)
    b1 = np.empty(nr, dtype=np.int64)
    got = 0
    j0, j1, i0, i1 = max(0, -n - z0), min(h, n - z0), max(0, -n - x0), min(w, n - x0)
    for j in range(j0, j1):
        zj = zu[j]
        for k in range(nr):  # each rule's columns in this row (its disc's box: x in [ax - ar - 1, ax + ar + 1))
            inrow = not area[k] or az[k] - ar[k] - 1 <= j + z0 < az[k] + ar[k] + 1
            b0[k] = max(i0, ax[k] - ar[k] - 1 - x0) if area[k] and inrow else i0 if inrow else i1
            b1[k] = min(i1, ax[k] + ar[k] + 1 - x0) if area[k] and inrow else i1 if inrow else i0
        for i in range(i0, i1):  # (the biome's test first: long runs of one biome, a branch foreseen)
            b = biome[j, i]
            m = False
            for k in range(nr):
                if ok[k, b] and b0[k] <= i < b1[k]:
                    m |= (mix64(rows[k, i] ^ zj) >> _S32) < dens[k]
            mark[i] = m
        for q in range(marked(mark, i0, i1, cand)):
            i = cand[q]
            if kind[j, i] != _NONE or wet[j, i]:
                continue
            b = biome[j, i]
            for k in range(nr):
                if not ok[k, b]:
                    continue
                if area[k]:
                    dx = 2 * (x0 + i) + 1 - 2 * ax[k]
                    dz = 2 * (z0 + j) + 1 - 2 * az[k]
                    if dx * dx + dz * dz > 4 * ar[k] * ar[k]:
                        continue
                if (mix64(rows[k, i] ^ zj) >> _S32) >= dens[k]:
                    continue
                if cslot[k] >= 0 and close[cslot[k], j, i]:
                    continue
                kind[j, i] = code[k]
                index[j, i] = rule[k]
                tj[got] = j
                ti[got] = i
                tk[got] = k
                got += 1
                counts[k] += 1
                break
    start = np.zeros(nr, dtype=np.int64)  # rule by rule, each rule's cells in the rows' order
    for k in range(1, nr):
        start[k] = start[k - 1] + counts[k - 1]
    oj = np.empty(got, dtype=np.int64)
    oi = np.empty(got, dtype=np.int64)
    for q in range(got):
        k = tk[q]
        oj[start[k]] = tj[q]
        oi[start[k]] = ti[q]
        start[k] += 1
    return oj, oi, counts


# -- plants -------------------------------------------------------------------------------------


@jit.kernel
def plant_points(footprint, biome, wet, ground, x0, z0, n, cm, ok, area, ax, az, ar, dens, row, row_p, zu, smin, smax):
    """The plants of one model rule (Cover.plant_points): row by row, the cells whose growth hash
    ``mix64(row[i] ^ zu[j])`` is below its density (each row's hashes first, vectorised, those
    cells listed without a branch), dry, off ``footprint``, in the world, in one of its biomes
    (``ok``) and its disc (``area``; only its box looked at); each placed by its place hash
    (``row_p``) on the ground of the cell's two triangles (Cover._placed_on). Returns (j, i,
    x_mm, z_mm, y_mm, scale, hash)."""
    h, w = footprint.shape
    pj = np.empty(h * w, dtype=np.int64)
    pi = np.empty(h * w, dtype=np.int64)
    hb = np.empty(h * w, dtype=np.uint64)
    mark = np.empty(w, dtype=np.uint8)
    cand = np.empty(w, dtype=np.int64)
    got = 0
    j0, j1, i0, i1 = max(0, -n - z0), min(h, n - z0), max(0, -n - x0), min(w, n - x0)
    if area:
        j0, j1 = max(j0, az - ar - 1 - z0), min(j1, az + ar + 1 - z0)
        i0, i1 = max(i0, ax - ar - 1 - x0), min(i1, ax + ar + 1 - x0)
    for j in range(j0, j1):
        zj = zu[j]
        for i in range(i0, i1):  # (the biome's test first: long runs of one biome, a branch foreseen)
            mark[i] = ok[biome[j, i]] and (mix64(row[i] ^ zj) >> _S32) < dens
        for q in range(marked(mark, i0, i1, cand)):
            i = cand[q]
            if footprint[j, i] or wet[j, i] or not ok[biome[j, i]]:
                continue
            if area:
                dx = 2 * (x0 + i) + 1 - 2 * ax
                dz = 2 * (z0 + j) + 1 - 2 * az
                if dx * dx + dz * dz > 4 * ar * ar:
                    continue
            pj[got] = j
            pi[got] = i
            hb[got] = mix64(row[i] ^ zj)
            got += 1
    x_mm = np.empty(got, dtype=np.int64)
    z_mm = np.empty(got, dtype=np.int64)
    y_mm = np.empty(got, dtype=np.int64)
    scale = np.empty(got, dtype=np.int64)
    for q in range(got):
        j = pj[q]
        i = pi[q]
        hh = hb[q]
        hp = mix64(row_p[i] ^ zu[j])
        fx = 200 + np.int64((hp >> _S32) % _U600)
        fz = 200 + np.int64((hp & _LOW32) % _U600)
        u = np.int64((hh >> _S16) & _LOW16)
        scale[q] = smin + ((smax - smin) * u) // 65535
        h00, h10 = ground[j, i], ground[j, i + 1]
        h01, h11 = ground[j + 1, i], ground[j + 1, i + 1]
        if fx >= fz:
            y_mm[q] = h00 + ((h10 - h00) * fx + (h11 - h10) * fz) // 1000
        else:
            y_mm[q] = h00 + ((h01 - h00) * fz + (h11 - h01) * fx) // 1000
        x_mm[q] = (x0 + i) * cm + (cm * fx) // 1000
        z_mm[q] = (z0 + j) * cm + (cm * fz) // 1000
    return pj[:got].copy(), pi[:got].copy(), x_mm, z_mm, y_mm, scale, hb[:got].copy()


# -- water and biomes ---------------------------------------------------------------------------


@jit.kernel
def water_levels(x0, z0, w, h, fx, fz, reach, radius, rough, level, tables, sea, sea_level, no_water):
    """Terrain.water_levels of the vertices [x0, x0 + w) x [z0, z0 + h): each lake and sea in
    order (centre (fx, fz), its reach, radius, roughness, level and the 8 values of its angular
    noise) sets the level of the vertices within its wandering radius; then the sea level, if
    ``sea``, where higher. (h, w) int64 mm, ``no_water`` where none.

    A vertex is within when ``isqrt(d2) < R`` (d2 = (dx * dx + dz * dz) << 16, R the wandering
    radius in that direction, water_radius8), that is when R > 0 and d2 < R * R. R grows with the
    angular noise (r8 >= 0), which lies between its table's least and greatest values: with R_lo
    and R_hi the radii there, a vertex with d2 < R_lo * R_lo is within, one with d2 >= R_hi * R_hi
    is not, whatever the direction; only the ring between needs the direction's noise."""
    lv = np.full((h, w), no_water, dtype=np.int64)
    for f in range(len(fx)):
        r = reach[f]
        r8 = radius[f] * 256
        lo = r8 + ((r8 * ((rough[f] * tables[f].min()) >> 16)) >> 16)
        hi = r8 + ((r8 * ((rough[f] * tables[f].max()) >> 16)) >> 16)
        lo, hi = min(lo, hi), max(lo, hi)
        lo2 = lo * lo if lo > 0 else -1
        hi2 = hi * hi if hi > 0 else -1
        for z in range(max(z0, fz[f] - r), min(z0 + h, fz[f] + r + 1)):
            dz = z - fz[f]
            for x in range(max(x0, fx[f] - r), min(x0 + w, fx[f] + r + 1)):
                dx = x - fx[f]
                d2 = (dx * dx + dz * dz) << 16
                if d2 < lo2:
                    lv[z - z0, x - x0] = level[f]
                    continue
                if d2 >= hi2:
                    continue
                # angular_noise(table, pseudo_angle(dx, dz)), then water_radius8
                pos = pseudo_angle_int(dx, dz) * 8
                t = pos >> 16
                a = tables[f, t % 8]
                b = tables[f, (t + 1) % 8]
                big = r8 + ((r8 * ((rough[f] * (a + (((b - a) * smooth(pos & 0xFFFF)) >> 16))) >> 16)) >> 16)
                if big > 0 and d2 < big * big:
                    lv[z - z0, x - x0] = level[f]
    if sea:
        for j in range(h):
            for i in range(w):
                if lv[j, i] < sea_level:
                    lv[j, i] = sea_level
    return lv


@jit.kernel
def cell_water(ground, lv):
    """Generator._water's cells from the vertices' ground and water levels: (level, centre, wet),
    the highest level of a cell's four vertices, the ground at its centre (the mean of the
    diagonal's two, floored), the centre under the level."""
    h, w = ground.shape[0] - 1, ground.shape[1] - 1
    level = np.empty((h, w), dtype=np.int64)
    centre = np.empty((h, w), dtype=np.int64)
    wet = np.empty((h, w), dtype=np.bool_)
    for j in range(h):
        for i in range(w):
            c = (ground[j, i] + ground[j + 1, i + 1]) >> 1
            v = max(max(lv[j, i], lv[j, i + 1]), max(lv[j + 1, i], lv[j + 1, i + 1]))
            level[j, i] = v
            centre[j, i] = c
            wet[j, i] = c < v
    return level, centre, wet


@jit.kernel
def centres(ground):
    """The ground at the cells' centres (Generator._water's ``centre``)."""
    h, w = ground.shape[0] - 1, ground.shape[1] - 1
    centre = np.empty((h, w), dtype=np.int64)
    for j in range(h):
        for i in range(w):
            centre[j, i] = (ground[j, i] + ground[j + 1, i + 1]) >> 1
    return centre


@jit.kernel
def biome_grid(lrows, r0, sz, shift, cuts):
    """Terrain.biomes of a rectangle from its octaves' lattice rows interpolated along x
    (``lrows[k, r]``: value_noise_grid's ``rows``, each octave's padded to the longest), each
    cell's lattice row ``r0[k, j]`` and smoothed fraction ``sz[k, j]``: each octave's value
    ``a + (((b - a) * sz) >> 16)`` (a, b its two lattice rows at x), shifted by ``shift[k]`` and
    summed (fbm), then how many of the cuts the sum reaches (biome_of_field). (h, w) int64."""
    n, _, w = lrows.shape
    h = r0.shape[1]
    out = np.empty((h, w), dtype=np.int64)
    acc = np.empty(w, dtype=np.int64)
    for j in range(h):
        acc[:] = 0
        for k in range(n):
            ra = lrows[k, r0[k, j]]
            rb = lrows[k, r0[k, j] + 1]
            s = sz[k, j]
            sh = shift[k]
            for i in range(w):
                acc[i] += (ra[i] + (((rb[i] - ra[i]) * s) >> 16)) << sh
        row = out[j]
        row[:] = 0
        for q in range(len(cuts)):  # (cut by cut: loops the compiler vectorises)
            cut = cuts[q]
            for i in range(w):
                row[i] += acc[i] >= cut
    return out


# -- the callers' side --------------------------------------------------------------------------


def _rule_arrays(cover) -> dict:
    """The competing rules of a Cover as arrays (once per Cover)."""
    got = cover.__dict__.get("_kernel_rules")
    if got is None:
        from veduta.world.params import VegRuleP

        rules = cover.rules
        nb = len(cover.p.biome_names)
        got = {
            "code": np.asarray([c for c, _, _, _ in rules], dtype=np.int8),
            "rule": np.asarray([r.index for _, r, _, _ in rules], dtype=np.int64),
            "ok": np.asarray([ok for _, _, _, ok in rules], dtype=np.bool_).reshape(len(rules), nb),
            "area": np.asarray([isinstance(r, VegRuleP) and bool(r.area) for _, r, _, _ in rules], dtype=np.bool_),
            "ax": np.asarray([getattr(r, "x", 0) for _, r, _, _ in rules], dtype=np.int64),
            "az": np.asarray([getattr(r, "z", 0) for _, r, _, _ in rules], dtype=np.int64),
            "ar": np.asarray([getattr(r, "radius", 0) for _, r, _, _ in rules], dtype=np.int64),
            "dens": np.asarray([r.density_t for _, r, _, _ in rules], dtype=np.uint64),
        }
        cover.__dict__["_kernel_rules"] = got
    return got


def cover_owners(cover, x0: int, z0: int, biome: np.ndarray, wet: np.ndarray, structs: list, taken: list | None):
    """Cover.owners with the kernels (its arguments; ``taken`` filled alike)."""
    from veduta.world.cover import _rects
    from veduta.world.intmath import _u64, hash2_row

    ready()
    h, w = biome.shape
    kind = np.zeros((h, w), dtype=np.int8)
    index = np.full((h, w), -1, dtype=np.int64)
    rects = _rects(structs)
    if structs:
        footprints(kind, index, x0, z0, *rects)
    rules = cover.rules
    if not rules or not h or not w:
        return kind, index
    ra = _rule_arrays(cover)
    xs = np.arange(x0, x0 + w, dtype=np.int64)
    rows = np.empty((len(rules), w), dtype=np.uint64)
    for k, (_, r, _, _) in enumerate(rules):
        rows[k] = hash2_row(r.key, xs)
    need = np.asarray([[cover._need(pf, s) for s in structs] for _, _, pf, _ in rules], dtype=np.int64)
    need = need.reshape(len(rules), len(structs))
    slot = np.full(len(rules), -1, dtype=np.int64)
    far = np.flatnonzero(need.any(axis=1))
    slot[far] = np.arange(len(far))
    close = np.zeros((max(1, len(far)), h, w) if len(far) else (1, 1, 1), dtype=np.bool_)
    if len(far):
        rx0, rx1, rz0, rz1 = rects
        too_close(close, x0, z0, cover.p.cell_mm, slot, rx0, rx1, rz0, rz1, need)
    zu = _u64(np.arange(z0, z0 + h, dtype=np.int64))
    tj, ti, counts = owners(
        kind, index, biome, wet, x0, z0, cover.p.cells, ra["code"], ra["rule"], ra["ok"], ra["area"],
        ra["ax"], ra["az"], ra["ar"], ra["dens"], rows, zu, close, slot,
    )  # fmt: skip
    if taken is not None:
        a = 0
        for k, (code, r, _, _) in enumerate(rules):
            b = a + int(counts[k])
            if b > a:
                taken.append((code, r.index, tj[a:b], ti[a:b]))
            a = b
    return kind, index


def cover_plant_points(cover, x0: int, z0: int, biome, wet, footprint, ground) -> list:
    """Cover.plant_points with the kernels (its arguments)."""
    from veduta.world.cover import PlantPoints
    from veduta.world.intmath import _u64, hash2_row

    ready()
    h, w = biome.shape
    xs = np.arange(x0, x0 + w, dtype=np.int64)
    zu = _u64(np.arange(z0, z0 + h, dtype=np.int64))
    out = []
    for r, ok in cover.models:
        got = plant_points(
            footprint, biome, wet, ground, x0, z0, cover.p.cells, cover.p.cell_mm, ok, bool(r.area),
            r.x, r.z, r.radius, np.uint64(r.density_t), hash2_row(r.key, xs), hash2_row(r.key_place, xs), zu,
            r.scale_min, r.scale_max,
        )  # fmt: skip
        out.append(PlantPoints(r.index, *got))
    return out


def terrain_water_levels(terrain, x0: int, z0: int, w: int, h: int) -> np.ndarray:
    """Terrain.water_levels with the kernel."""
    from veduta.world.terrain import NO_WATER

    ready()
    arrays = terrain.__dict__.get("_kernel_water")
    if arrays is None:
        feats = [f for f in terrain.p.features if f.kind in ("lake", "sea")]
        arrays = (
            np.asarray([f.x for f in feats], dtype=np.int64),
            np.asarray([f.z for f in feats], dtype=np.int64),
            np.asarray([terrain.reach[f.index] for f in feats], dtype=np.int64),
            np.asarray([f.radius for f in feats], dtype=np.int64),
            np.asarray([f.rough_q16 for f in feats], dtype=np.int64),
            np.asarray([terrain.levels[f.index] for f in feats], dtype=np.int64),
            np.asarray([terrain._tables[f.index] for f in feats], dtype=np.int64).reshape(len(feats), 8),
        )
        terrain.__dict__["_kernel_water"] = arrays
    p = terrain.p
    return water_levels(x0, z0, w, h, *arrays, bool(p.sea), int(p.sea_level_mm) if p.sea else 0, NO_WATER)


def terrain_biomes(terrain, x0: int, z0: int, w: int, h: int) -> np.ndarray:
    """Terrain.biomes with the kernel: the lattice rows of each octave interpolated along x as
    value_noise_grid does (numpy: a few rows), then the cells (:func:`biome_grid`)."""
    from veduta.world.intmath import _frac, hash2_grid, octave_periods, signed16

    xs = np.arange(x0, x0 + w, dtype=np.int64)
    zs = np.arange(z0, z0 + h, dtype=np.int64)
    keys = terrain.biome_keys
    n = len(keys)
    parts, r0, sz = [], np.zeros((n, h), dtype=np.int64), np.zeros((n, h), dtype=np.int64)
    for k, (key, pk) in enumerate(zip(keys, octave_periods(terrain.p.biome_scale, n), strict=True)):
        ix, sx = _frac(xs, pk)
        iz, szk = _frac(zs, pk)
        lx = np.arange(int(ix.min()), int(ix.max()) + 2, dtype=np.int64)
        lz = np.arange(int(iz.min()), int(iz.max()) + 2, dtype=np.int64)
        lat = signed16(hash2_grid(key, lx, lz))
        c0 = ix - lx[0]
        left = lat[:, c0]
        parts.append(left + (((lat[:, c0 + 1] - left) * sx[None, :]) >> 16))
        r0[k], sz[k] = iz - lz[0], szk
    lrows = np.zeros((n, max(len(q) for q in parts), w), dtype=np.int64)
    for k, q in enumerate(parts):
        lrows[k, : len(q)] = q
    shift = np.asarray([n - 1 - k for k in range(n)], dtype=np.int64)
    return biome_grid(lrows, r0, sz, shift, terrain.biome_cuts)
