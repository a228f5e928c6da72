"""Compiled kernels of the chunks of ``inspect world --all`` (:meth:`veduta.world.draw.Drawer.block`,
:func:`veduta.world.draw.chunk_grounds`): numba, through :mod:`veduta.world.jit`.

Called only when :func:`veduta.world.jit.enabled`; the numpy path in draw.py stays the fallback
and the reference (tests/world/test_chunk_kernels.py compares the two, and both with the
per-chunk functions :func:`~veduta.world.draw.finest_grid`, :func:`~veduta.world.draw.level_quads`,
:func:`~veduta.world.draw.chunk_ground`).

- :func:`ground_figures`: each chunk's levels of detail, skirts, water triangles, height range,
  focus height and :attr:`~veduta.world.draw.ChunkDraw.table`, its (c + 1)^2 heights read in
  place from the rectangle's arrays (no stack of chunks copied), a group of chunks of a row at a
  time: first row by row (range, water, biome edges), then chunk by chunk (grids, runs, skirts,
  water cells). Only integers: the comparisons and the integer arithmetic of the numpy path
  (``interpolate``'s ``// g`` is its arithmetic ``>> log2 g``, g a power of two), on int64, so
  every height the numpy path takes gives the same figures, whatever the order the vertices are
  tried in (a grid fits when no vertex is off by more than 6 cm: the first off ends the test,
  where the numpy path takes the largest).
- :func:`add_counts`, :func:`place_instances`, :func:`place_plants`, :func:`things_boxes`: the
  things of a rectangle put in chunk order (a stable counting sort: each thing written once, at
  its place, in the order the numpy path's stable argsort leaves them) with the numpy path's
  floating-point operations in its order (positions, radii), and the box of each chunk's things'
  spheres (min and max, taken thing after thing in that order).
"""

from __future__ import annotations

import numpy as np

from veduta.world import jit

#: chunks of a row :func:`ground_figures` takes at a time (their heights stay in the cache between
#: its pass row by row and its pass chunk by chunk)
GROUP = 32

# -- levels of detail ---------------------------------------------------------------------------


@jit.kernel
def ground_figures(
    ground: np.ndarray,
    biome: np.ndarray,
    water: np.ndarray,
    wet_groups: np.ndarray,
    nz: int,
    nx: int,
    n: int,
    at: np.ndarray,
    grids: np.ndarray,
    tol: int,
    g0: np.ndarray,
    tris: np.ndarray,
    depths: np.ndarray,
    wtris: np.ndarray,
    y_min: np.ndarray,
    y_max: np.ndarray,
    centre: np.ndarray,
    wcell: np.ndarray,
    wlevel: np.ndarray,
    table: np.ndarray,
    levels: np.ndarray,
) -> None:
    """The figures :func:`~veduta.world.draw.chunk_grounds` computes, of nz x nx chunks of n
    cells: chunk [cz, cx]'s vertex heights (mm) are ``ground[r + j, s + i]`` for j, i in
    [0, n], r = at[0] cz, s = at[1] cx, its cells' biomes ``biome[at[2] cz + j, at[3] cx + i]``
    for j, i in [0, n), its vertex water levels ``water`` at the heights' place (read only in the groups of
    :data:`GROUP` chunks of a row, ``cx // GROUP``, where ``wet_groups`` is true: water may reach
    them). Every figure is read in place (the rectangle's arrays: ``at`` is (n, n, n, n)
    there). ``grids``: the grids a chunk is
    drawn with (ascending powers of two, 1 first). Written for chunk number ``cz nx + cx``:
    ``g0`` its finest drawn grid, ``tris`` ((k, len(grids))) each grid's triangles after merging
    flat runs (0 for the grids finer than g0), ``depths`` ((k, 4)) its edges' skirt depths,
    ``wtris`` the water's triangles, ``y_min``/``y_max`` (mm) its range, skirts and water
    included, ``centre`` the focus height of its centre cell; ``wcell``/``wlevel`` ((k, n, n),
    or empty: not written) the cells with a corner under water and their water level (0 for the
    others); ``table`` ((k, 3, m), or empty: not written) :attr:`~veduta.world.draw.ChunkDraw.table`
    (level j's grid: the finest drawn one's, or the j-th coarser, the coarsest beyond) and
    ``levels`` the levels drawn."""
    ng = grids.shape[0]
    cells = wcell.shape[0] > 0
    h = n // 2
    los = np.empty(GROUP, dtype=np.int64)
    his = np.empty(GROUP, dtype=np.int64)
    wets = np.empty(GROUP, dtype=np.bool_)
    edges = np.empty(GROUP, dtype=np.bool_)
    for cz in range(nz):
        for gx in range(0, nx, GROUP):  # (a group of chunks at a time: their rows stay in the cache)
            ge = min(nx, gx + GROUP)
            # first row by row over the group (in the arrays' order): each chunk's lowest and
            # highest vertex, whether a vertex is under water, whether its biomes differ
            r, br = at[0] * cz, at[2] * cz
            has_water = wet_groups[gx // GROUP]
            for cx in range(gx, ge):
                los[cx - gx] = his[cx - gx] = ground[r, at[1] * cx]
                wets[cx - gx] = edges[cx - gx] = False
            for j in range(r, r + n + 1):
                for cx in range(gx, ge):
                    s = at[1] * cx
                    lo, hi = los[cx - gx], his[cx - gx]
                    for a in range(s, s + n + 1):
                        v = np.int64(ground[j, a])
                        lo, hi = min(lo, v), max(hi, v)
                    los[cx - gx], his[cx - gx] = lo, hi
                    if has_water:
                        wet = False
                        for a in range(s, s + n + 1):
                            wet |= ground[j, a] < water[j, a]
                        wets[cx - gx] |= wet
            for j in range(br, br + n):
                for cx in range(gx, ge):
                    bs = at[3] * cx
                    b0 = biome[br, bs]
                    edge = False
                    for a in range(bs, bs + n):
                        edge |= biome[j, a] != b0
                    edges[cx - gx] |= edge
            for cx in range(gx, ge):
                i = cz * nx + cx
                r, s = at[0] * cz, at[1] * cx
                br, bs = at[2] * cz, at[3] * cx
                lo, hi, wet, edge = los[cx - gx], his[cx - gx], wets[cx - gx], edges[cx - gx]
                # the coarsest grid within tol of every vertex (1 when none coarser is)
                fit = np.int64(1)
                for gi in range(ng - 1, 0, -1):
                    g = grids[gi]
                    sh = 0
                    while (1 << sh) < g:
                        sh += 1
                    q = n // g
                    half = g // 2
                    ok = True  # the middle vertex of every quad first (where a grid is most often off)
                    for qj in range(q):
                        for qi in range(q):
                            j0, a0 = r + qj * g, s + qi * g
                            h00 = np.int64(ground[j0, a0])
                            h10 = np.int64(ground[j0, a0 + g])
                            h11 = np.int64(ground[j0 + g, a0 + g])
                            mid = h00 + (((h10 - h00) * half + (h11 - h10) * half) >> sh)
                            if abs(mid - np.int64(ground[j0 + half, a0 + half])) > tol:
                                ok = False
                        if not ok:
                            break
                    # then every vertex, as interpolate assigns them to quads (the last row and
                    # column of the chunk to the last quads, at offset g)
                    for qj in range(q if ok else 0):
                        bn = g + 1 if qj == q - 1 else g
                        for qi in range(q):
                            an = g + 1 if qi == q - 1 else g
                            j0, a0 = r + qj * g, s + qi * g
                            h00 = np.int64(ground[j0, a0])
                            h10 = np.int64(ground[j0, a0 + g])
                            h01 = np.int64(ground[j0 + g, a0])
                            h11 = np.int64(ground[j0 + g, a0 + g])
                            dx0, dz1, dz0, dx1 = h10 - h00, h11 - h10, h01 - h00, h11 - h01
                            for b in range(bn):
                                for a in range(an):
                                    if a >= b:
                                        t = h00 + ((dx0 * a + dz1 * b) >> sh)
                                    else:
                                        t = h00 + ((dz0 * b + dx1 * a) >> sh)
                                    if abs(t - np.int64(ground[j0 + b, a0 + a])) > tol:
                                        ok = False
                                if not ok:
                                    break
                            if not ok:
                                break
                        if not ok:
                            break
                    if ok:
                        fit = g
                        break
                first = fit
                if edge:
                    first = np.int64(1) if hi == lo else min(fit, np.int64(2))
                g0[i] = first
                # each grid's triangles (the drawn ones: g0 and coarser), flat runs merged
                for gi in range(ng):
                    g = grids[gi]
                    if g < first:
                        tris[i, gi] = 0
                        continue
                    q = n // g
                    same = 0
                    for qj in range(q):
                        j0, bj = r + qj * g, br + qj * g
                        prev = False
                        for qi in range(q):
                            a0 = s + qi * g
                            v = ground[j0, a0]
                            flat = ground[j0, a0 + g] == v and ground[j0 + g, a0] == v and ground[j0 + g, a0 + g] == v
                            if flat and prev and biome[bj, bs + qi * g] == biome[bj, bs + qi * g - g]:
                                same += 1
                            prev = flat
                    tris[i, gi] = 2 * (q * q - same)
                deepest = np.int64(0)
                for side in range(4):  # north (z = z0), south, west (x = x0), east: edge_profiles'
                    elo = ehi = prev2 = prev1 = np.int64(0)
                    straight = True
                    for u in range(n + 1):
                        j = r if side == 0 else r + n if side == 1 else r + u
                        a = s + u if side < 2 else s if side == 2 else s + n
                        v = np.int64(ground[j, a])
                        if u == 0:
                            elo = ehi = v
                        else:
                            elo, ehi = min(elo, v), max(ehi, v)
                        if u >= 2 and v - 2 * prev1 + prev2 != 0:
                            straight = False
                        prev2, prev1 = prev1, v
                    d = np.int64(0) if straight else ehi - elo
                    depths[i, side] = d
                    deepest = max(deepest, d)
                y_min[i] = lo - deepest
                top = hi
                nw = 0
                if wet:  # the cells with a corner under water, runs at one level merged
                    same = 0
                    for j in range(n):
                        prev = False
                        prev_level = np.int64(0)
                        for a in range(n):
                            ja, aa = r + j, s + a
                            under = (
                                ground[ja, aa] < water[ja, aa]
                                or ground[ja, aa + 1] < water[ja, aa + 1]
                                or ground[ja + 1, aa] < water[ja + 1, aa]
                                or ground[ja + 1, aa + 1] < water[ja + 1, aa + 1]
                            )
                            level = max(
                                max(np.int64(water[ja, aa]), np.int64(water[ja, aa + 1])),
                                max(np.int64(water[ja + 1, aa]), np.int64(water[ja + 1, aa + 1])),
                            )
                            if under:
                                nw += 1
                                top = max(top, level)
                                if prev and level == prev_level:
                                    same += 1
                            if cells:
                                wcell[i, j, a] = under
                                wlevel[i, j, a] = level if under else 0
                            prev, prev_level = under, level
                    nw -= same
                wtris[i] = 2 * nw
                y_max[i] = top
                if table.shape[0]:
                    fi = 0
                    while grids[fi] != first:
                        fi += 1
                    skirts = 0
                    for side in range(4):
                        skirts += depths[i, side] != 0
                    for col in range(table.shape[2]):
                        gj = min(fi + col, ng - 1)
                        table[i, 0, col] = tris[i, gj]
                        table[i, 1, col] = 2 * skirts * (n // grids[gj])
                        table[i, 2, col] = 2 * nw
                    levels[i] = ng - fi
                centre[i] = (np.int64(ground[r + h, s + h]) + np.int64(ground[r + h + 1, s + h + 1])) >> 1


# -- things -------------------------------------------------------------------------------------


@jit.kernel
def add_counts(counts: np.ndarray, jj: np.ndarray, ii: np.ndarray, grid: tuple[int, int, int], times: int) -> None:
    """Add ``times`` to ``counts[chunk]`` for each cell [jj, ii] of a rectangle ``nx`` chunks of
    ``c`` cells wide, ``grid`` = (c, sh, nx) (the chunk of a cell: ``(jj // c) nx + ii // c``, by
    shifts when ``sh`` (:func:`shift`) is not -1)."""
    c, sh, nx = grid
    for m in range(jj.shape[0]):
        j, i = np.int64(jj[m]), np.int64(ii[m])
        counts[((j >> sh) * nx + (i >> sh)) if sh >= 0 else ((j // c) * nx + i // c)] += times


def shift(c: int) -> int:
    """log2 c when c is a power of two (the chunk of a cell by shifts), else -1 (by divisions)."""
    if c <= 0 or c & (c - 1):
        return -1
    sh = 0
    while (1 << sh) < c:
        sh += 1
    return sh


@jit.kernel
def place_instances(
    fill: np.ndarray,
    jj: np.ndarray,
    ii: np.ndarray,
    grid: tuple[int, int, int],
    centre: np.ndarray,
    x0: int,
    z0: int,
    cm: int,
    t_model: np.ndarray,
    t_radius: np.ndarray,
    t_kind: np.ndarray,
    t_root: np.ndarray,
    t_off: np.ndarray,
    out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """The things of the instances of a prefab at cells [jj, ii] of a rectangle, entity by entity
    of its template (all instances of the first, then of the second, ...), each written at
    ``fill[its chunk]`` (then advanced): :meth:`~veduta.world.draw.Drawer._placed`'s positions,
    its operations in its order. Each instance's origin is its cell's centre, x and z
    ``(2 (x0 + i) + 1) cm / 2000``, y ``centre[j, i] / 1000`` (m). Template entity t draws model
    ``t_model[t]`` with radius ``t_radius[t]``; ``t_kind[t]`` 0: a root at origin + ``t_root[t]``
    (its local position: x + lx + lz 0, y + ly, z - lx 0 + lz), 1: a child at ``t_off[t]`` + that
    of its root (``t_root[t]``), 2: a child at ``t_off[t]`` alone (its chain of parents cut).
    Thinning hash 0, not flora (entities). The chunk of a cell as :func:`add_counts` finds it.
    ``out``: the things' (pos, radius, model, thin, flora)."""
    c, sh, nx = grid
    pos, radius, model, thin, flora = out
    for t in range(t_model.shape[0]):
        kind = t_kind[t]
        lx, ly, lz = t_root[t, 0], t_root[t, 1], t_root[t, 2]
        fx, fy, fz = t_off[t, 0], t_off[t, 1], t_off[t, 2]
        for m in range(jj.shape[0]):
            j, a = np.int64(jj[m]), np.int64(ii[m])
            ch = ((j >> sh) * nx + (a >> sh)) if sh >= 0 else ((j // c) * nx + a // c)
            at = fill[ch]
            fill[ch] = at + 1
            if kind == 2:
                px, py, pz = fx, fy, fz
            else:
                ox = ((2 * (x0 + a) + 1) * cm) / 2000.0
                oy = centre[j, a] / 1000.0
                oz = ((2 * (z0 + j) + 1) * cm) / 2000.0
                px = ox + lx * 1.0 + lz * 0.0
                py = oy + ly
                pz = oz - lx * 0.0 + lz * 1.0
                if kind == 1:
                    px, py, pz = fx + px, fy + py, fz + pz
            pos[at, 0], pos[at, 1], pos[at, 2] = px, py, pz
            radius[at] = t_radius[t]
            model[at] = t_model[t]
            thin[at] = 0
            flora[at] = False


@jit.kernel
def place_plants(
    fill: np.ndarray,
    jj: np.ndarray,
    ii: np.ndarray,
    grid: tuple[int, int, int],
    x_mm: np.ndarray,
    y_mm: np.ndarray,
    z_mm: np.ndarray,
    scale: np.ndarray,
    hashes: np.ndarray,
    rad: float,
    mi: int,
    out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """The plants of one rule (cells [jj, ii] of a rectangle), each written at ``fill[its
    chunk]`` (then advanced): position ``(x, y, z) mm / 1000``, radius ``rad scale / 1000`` (its
    model's radius times its scale in thousandths), model ``mi``, thinning hash, flora. The chunk
    of a cell as :func:`add_counts` finds it; ``out`` as :func:`place_instances`'."""
    c, sh, nx = grid
    pos, radius, model, thin, flora = out
    for m in range(jj.shape[0]):
        j, i = np.int64(jj[m]), np.int64(ii[m])
        ch = ((j >> sh) * nx + (i >> sh)) if sh >= 0 else ((j // c) * nx + i // c)
        at = fill[ch]
        fill[ch] = at + 1
        pos[at, 0] = x_mm[m] / 1000.0
        pos[at, 1] = y_mm[m] / 1000.0
        pos[at, 2] = z_mm[m] / 1000.0
        radius[at] = rad * scale[m] / 1000.0
        model[at] = mi
        thin[at] = hashes[m]
        flora[at] = True


@jit.kernel
def things_boxes(pos: np.ndarray, radius: np.ndarray, cuts: np.ndarray, boxes: np.ndarray) -> None:
    """``boxes[i]`` ((2, 3)): min and max of the spheres of chunk i's things (``cuts[i]`` to
    ``cuts[i + 1]``); left as they are for a chunk without things."""
    for i in range(cuts.shape[0] - 1):
        a, b = cuts[i], cuts[i + 1]
        if a == b:
            continue
        for d in range(3):
            lo = pos[a, d] - radius[a]
            hi = pos[a, d] + radius[a]
            for t in range(a + 1, b):
                lo = min(lo, pos[t, d] - radius[t])
                hi = max(hi, pos[t, d] + radius[t])
            boxes[i, 0, d] = lo
            boxes[i, 1, d] = hi
