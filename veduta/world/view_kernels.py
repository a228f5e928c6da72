"""The views of ``inspect world --all`` as one compiled loop (numba: veduta/world/jit.py).

:func:`figures` gives what :meth:`veduta.world.draw.Drawer._figures` gives for a batch of views
of :meth:`~veduta.world.draw.Drawer.chunk_views`, computed view by view as a view costed alone is
(:meth:`~veduta.world.draw.Drawer.view`, the numpy path without the moved volume): for each of a
view's K slots, its chunk's box against the view's own six planes, the ground's level from the
effective distance of the box's nearest point, the chunk's things skipped whole or taken whole by
the box of their spheres with the margin :data:`~veduta.world.draw.SURE`, then each other thing's
plane test, and every thing taken: its model's level, draw_distance, thinning, triangles; summed
per (view, slot), then per set of loaded chunks; the structures touching a loaded chunk once per
view (each of their things tested), in every set holding one of the chunks they touch; the
persistent entities placed at each view's origin, each tested.

Every floating-point operation is the numpy path's, in its order (a plane's sum ``((x nx + y ny) +
z nz) + d``, a length ``sqrt((x x + y y) + z z)``, no fused multiply-add: the kernels are compiled
without fast-math), and every count is an integer sum: the figures are the same integers
(tests/world/test_view_kernels.py compares them with the numpy path and with :meth:`Drawer.view`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from veduta.world import jit


@jit.kernel
def _views(
    eye: np.ndarray,
    planes: np.ndarray,
    slot_chunk: np.ndarray,
    setbits: np.ndarray,
    nsets: int,
    boxes: np.ndarray,
    nlev: np.ndarray,
    table: np.ndarray,
    cuts: np.ndarray,
    things_box: np.ndarray,
    pos: np.ndarray,
    rad: np.ndarray,
    model: np.ndarray,
    thin: np.ndarray,
    flora: np.ndarray,
    scuts: np.ndarray,
    sids: np.ndarray,
    tstart: np.ndarray,
    tend: np.ndarray,
    spos: np.ndarray,
    srad: np.ndarray,
    smodel: np.ndarray,
    sthin: np.ndarray,
    sflora: np.ndarray,
    starts: np.ndarray,
    tri_tab: np.ndarray,
    dd: np.ndarray,
    ortho: bool,
    lens: float,
    ortho_d: float,
    lod: float,
    sure: float,
    thin_shift: int,
    thin_bits: int,
    origins: np.ndarray,
    p_model: np.ndarray,
    p_radius: np.ndarray,
    p_kind: np.ndarray,
    p_root: np.ndarray,
    p_off: np.ndarray,
) -> np.ndarray:
    """figs (nsets, 10, V) of views (Drawer._figures): see the module's text."""
    V, K = slot_chunk.shape
    G = table.shape[2]
    figs = np.zeros((nsets, 10, V), dtype=np.int64)
    ns = tstart.shape[0]
    stamp = np.full(max(ns, 1), -1, dtype=np.int64)
    sbits = np.zeros(max(ns, 1), dtype=np.int64)
    touched = np.zeros(max(ns, 1), dtype=np.int64)
    each = np.zeros(9, dtype=np.int64)
    sums = np.zeros(4, dtype=np.int64)
    acc = np.zeros((nsets, 10), dtype=np.int64)  # (one view's figures, written to figs at its end)

    def inside(px: float, py: float, pz: float, r: float, pl: np.ndarray) -> bool:
        # the sphere not wholly outside one of the view's planes (Drawer._drawn_sel)
        nr = -r
        for p in range(6):
            if not (px * pl[p, 0] + py * pl[p, 1] + pz * pl[p, 2] + pl[p, 3] >= nr):
                return False
        return True

    def triangles(px: float, py: float, pz: float, r: float, m: int, h: Any, ev: np.ndarray, f: bool) -> int:
        # what a thing inside the view volume costs (Drawer._drawn_sel with the level table)
        gx, gy, gz = px - ev[0], py - ev[1], pz - ev[2]
        d = np.sqrt(gx * gx + gy * gy + gz * gz) - r
        if d < 0.0:
            d = 0.0
        de = ortho_d if ortho else d * lens
        level = 0
        for j in range(starts.shape[0]):
            if starts[j, m] <= de:
                level += 1
        ddm = dd[m]
        if not ((ddm <= 0.0) or (de < ddm)):
            return 0
        if f:
            k = min(level, thin_bits)
            mask = np.uint64((1 << k) - 1)
            if ((h >> np.uint64(thin_shift)) & mask) != np.uint64(0):
                return 0
        return tri_tab[m, level]

    pacc = np.zeros((1 << nsets, 9), dtype=np.int64)  # (the sums of the slots of each kind: setbits)
    pused = np.zeros(1 << nsets, dtype=np.bool_)
    plist = np.zeros(1 << nsets, dtype=np.int64)
    for v in range(V):
        pl = planes[v]
        ev = eye[v]
        nt = 0
        npl = 0
        acc[:] = 0
        for k in range(K):
            c = slot_chunk[v, k]
            if c < 0:
                continue
            bits = setbits[k]
            for q in range(9):
                each[q] = 0
            each[0] = 1
            # the chunk's box: its corner farthest along each normal inside every plane
            vis = True
            for p in range(6):
                nx, ny, nz = pl[p, 0], pl[p, 1], pl[p, 2]
                fx = boxes[c, 1, 0] if nx >= 0 else boxes[c, 0, 0]
                fy = boxes[c, 1, 1] if ny >= 0 else boxes[c, 0, 1]
                fz = boxes[c, 1, 2] if nz >= 0 else boxes[c, 0, 2]
                if not (fx * nx + fy * ny + fz * nz + pl[p, 3] >= 0):
                    vis = False
                    break
            if vis:
                each[1] = 1
                # the ground's level at the effective distance of the box's nearest point
                gx = min(max(ev[0], boxes[c, 0, 0]), boxes[c, 1, 0]) - ev[0]
                gy = min(max(ev[1], boxes[c, 0, 1]), boxes[c, 1, 1]) - ev[1]
                gz = min(max(ev[2], boxes[c, 0, 2]), boxes[c, 1, 2]) - ev[2]
                dist = np.sqrt(gx * gx + gy * gy + gz * gz)
                dist = ortho_d if ortho else dist * lens
                lev = 0
                for j in range(1, G):
                    if dist >= lod * 2.0 ** (j - 1):
                        lev = j
                lev = min(lev, nlev[c] - 1)
                if lev < 0:  # (numpy's index from the end)
                    lev += G
                for kind in range(3):
                    each[2 + kind] = table[c, kind, lev]
            # the chunk's things: skipped whole, or taken whole, by the box of their spheres
            a, b = cuts[c], cuts[c + 1]
            if b > a:
                out_all = False
                in_all = True
                for p in range(6):
                    nx, ny, nz, d = pl[p, 0], pl[p, 1], pl[p, 2], pl[p, 3]
                    hx = things_box[c, 1, 0] if nx >= 0 else things_box[c, 0, 0]
                    hy = things_box[c, 1, 1] if ny >= 0 else things_box[c, 0, 1]
                    hz = things_box[c, 1, 2] if nz >= 0 else things_box[c, 0, 2]
                    if hx * nx + hy * ny + hz * nz + d < -sure:
                        out_all = True
                        break
                    lx = things_box[c, 0, 0] if nx >= 0 else things_box[c, 1, 0]
                    ly = things_box[c, 0, 1] if ny >= 0 else things_box[c, 1, 1]
                    lz = things_box[c, 0, 2] if nz >= 0 else things_box[c, 1, 2]
                    if not (lx * nx + ly * ny + lz * nz + d > sure):
                        in_all = False
                if not out_all:
                    for t in range(a, b):
                        px, py, pz, r = pos[t, 0], pos[t, 1], pos[t, 2], rad[t]
                        if not in_all and not inside(px, py, pz, r, pl):
                            continue
                        f = flora[t]
                        tris = triangles(px, py, pz, r, model[t], thin[t], ev, f)
                        w = 5 if f else 6  # (flora, entities; then plants, entities drawn)
                        each[w] += tris
                        if tris > 0:
                            each[w + 2] += 1
            # summed by the sets holding the slot (a few kinds of slot: each kind's sets once a view)
            for q in range(9):
                pacc[bits, q] += each[q]
            if not pused[bits]:
                pused[bits] = True
                plist[npl] = bits
                npl += 1
            # the structures touching the chunk: each once per view
            for i in range(scuts[c], scuts[c + 1]):
                s = sids[i]
                if stamp[s] != v:
                    stamp[s] = v
                    sbits[s] = 0
                    touched[nt] = s
                    nt += 1
                sbits[s] |= bits
        for u in range(npl):
            kind = plist[u]
            for si in range(nsets):
                if (kind >> si) & 1:
                    for q in range(9):
                        acc[si, q] += pacc[kind, q]
            for q in range(9):
                pacc[kind, q] = 0
            pused[kind] = False
        for i in range(nt):
            s = touched[i]
            for q in range(4):
                sums[q] = 0
            for t in range(tstart[s], tend[s]):
                px, py, pz, r = spos[t, 0], spos[t, 1], spos[t, 2], srad[t]
                if not inside(px, py, pz, r, pl):
                    continue
                f = sflora[t]
                tris = triangles(px, py, pz, r, smodel[t], sthin[t], ev, f)
                q = 0 if f else 1
                sums[q] += tris
                if tris > 0:
                    sums[q + 2] += 1
            for si in range(nsets):
                if (sbits[s] >> si) & 1:
                    for q in range(4):
                        acc[si, 5 + q] += sums[q]
        # the persistent entities, placed at the view's origin (chunk_kernels.place_instances'
        # arithmetic: Drawer._placed's), each tested: entities (no thinning)
        for q in range(4):
            sums[q] = 0
        for t in range(p_model.shape[0]):
            kind = p_kind[t]
            if kind == 2:
                px, py, pz = p_off[t, 0], p_off[t, 1], p_off[t, 2]
            else:
                lx, ly, lz = p_root[t, 0], p_root[t, 1], p_root[t, 2]
                px = origins[v, 0] + lx * 1.0 + lz * 0.0
                py = origins[v, 1] + ly
                pz = origins[v, 2] - lx * 0.0 + lz * 1.0
                if kind == 1:
                    px, py, pz = p_off[t, 0] + px, p_off[t, 1] + py, p_off[t, 2] + pz
            r = p_radius[t]
            if not inside(px, py, pz, r, pl):
                continue
            tris = triangles(px, py, pz, r, p_model[t], np.uint64(0), ev, False)
            sums[1] += tris
            if tris > 0:
                sums[3] += 1
        for si in range(nsets):
            for q in range(4):
                acc[si, 5 + q] += sums[q]
            acc[si, 9] = acc[si, 2] + acc[si, 3] + acc[si, 4] + acc[si, 5] + acc[si, 6]
            for q in range(10):
                figs[si, q, v] = acc[si, q]
    return figs


@jit.kernel
def _cameras(
    origins: np.ndarray,
    position: np.ndarray,
    look_at: np.ndarray,
    near: float,
    far: float,
    ortho: bool,
    hw: float,
    hh: float,
    tv: float,
    th: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(eyes (V, 3), planes (V, 6, 4)) of the camera placed at each origin: Drawer._cameras's
    operations (np.cross's products and differences, a norm's squares added x, y, z, a dot's
    products added in that order), view by view."""
    V = origins.shape[0]
    eyes = np.empty((V, 3))
    planes = np.empty((V, 6, 4))
    f = np.empty(3)
    r = np.empty(3)
    u = np.empty(3)
    e = np.empty(3)
    a = np.empty(3)
    b = np.empty(3)
    n = np.empty(3)
    ax = np.empty(3)

    def cross(x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        c0 = x[1] * y[2] - x[2] * y[1]
        c1 = x[2] * y[0] - x[0] * y[2]
        c2 = x[0] * y[1] - x[1] * y[0]
        out[0], out[1], out[2] = c0, c1, c2

    def norm(x: np.ndarray) -> float:
        return np.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])

    def dot(x: np.ndarray, y: np.ndarray) -> float:
        return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]

    def put(v: int, p: int, x: np.ndarray, sign: float, d: float) -> None:
        for j in range(3):
            planes[v, p, j] = -x[j] if sign < 0 else x[j]
        planes[v, p, 3] = d

    for v in range(V):
        for j in range(3):
            e[j] = origins[v, j] + position[j]
            eyes[v, j] = e[j]
        for j in range(3):
            f[j] = origins[v, j] + look_at[j] - e[j]
        m = norm(f)
        for j in range(3):
            f[j] = f[j] / m
        ax[0], ax[1], ax[2] = 0.0, 1.0, 0.0
        cross(f, ax, r)
        if norm(r) < 1e-6:
            ax[0], ax[1], ax[2] = 0.0, 0.0, -1.0
        cross(f, ax, r)
        m = norm(r)
        for j in range(3):
            r[j] = r[j] / m
        cross(r, f, u)
        for j in range(3):
            a[j] = e[j] + near * f[j]
            b[j] = e[j] + far * f[j]
        put(v, 0, f, 1.0, -dot(f, a))
        put(v, 1, f, -1.0, dot(f, b))
        if ortho:
            for j in range(3):
                a[j] = e[j] - hw * r[j]
                b[j] = e[j] + hw * r[j]
            put(v, 2, r, 1.0, -dot(r, a))
            put(v, 3, r, -1.0, dot(r, b))
            for j in range(3):
                a[j] = e[j] - hh * u[j]
                b[j] = e[j] + hh * u[j]
            put(v, 4, u, 1.0, -dot(u, a))
            put(v, 5, u, -1.0, dot(u, b))
        else:
            for p in range(4):
                t = th if p < 2 else tv
                w = r if p < 2 else u
                for j in range(3):
                    a[j] = f[j] - t * w[j] if p % 2 == 0 else f[j] + t * w[j]
                cross(a, u if p < 2 else r, n)
                m = norm(n)
                for j in range(3):
                    n[j] = n[j] / m
                flip = dot(n, f) < 0
                for j in range(3):
                    if flip:
                        n[j] = -n[j]
                put(v, 2 + p, n, 1.0, -dot(n, e))
    return eyes, planes
