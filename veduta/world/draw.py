"""What the engine draws of a world (docs/world-generation.md, section 16; world-format.md, Rendering).

The drawing model, computed with the generator's integers so its figures are the runtime's:

- the ground's levels of detail per chunk (grids of 1, 2, 4, 8 and 16 cells), the finest drawn
  level (6 cm rule, biome edges), flat runs merged into one quad, skirts, water quads;
- flora thinning (one plant in 2^k at a model's level k, a nested seeded selection);
- entities and prefab instances with their models' lod and draw_distance;
- views: a camera placed relative to a focus cell, its view volume, distances as seen through
  a 60 degree lens (an orthographic camera counts 0.866 x size), the loaded chunks (the
  window of (2 view + 1)^2, and at worst the (2 view + 2)^2 with the chunks the engine keeps
  one beyond it on two sides), and the triangles drawn in them.

Geometry for exporters: :func:`ground_mesh`, :func:`skirt_mesh`, :func:`water_mesh` (one chunk,
metres, counter-clockwise seen from above). Figures: :func:`chunk_ground`, :func:`rule_cost`,
:func:`view_cost`. Heights on the drawn ground: :func:`drawn_height`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from veduta.world import jit
from veduta.world.generator import Generator, metres
from veduta.world.intmath import hash2_grid

if TYPE_CHECKING:
    from veduta.base.progress import Progress

#: the grids of the ground's levels of detail, in cells
GRIDS = (1, 2, 4, 8, 16)
#: the finest drawn level passes within this of every vertex (mm)
TOLERANCE_MM = 60
#: triangles a console draws per frame
FRAME_BUDGET = 1200
#: the frame's width / height (320 x 240)
ASPECT = 4.0 / 3.0
#: distances are as seen through this lens (vertical field of view, degrees)
LENS_DEG = 60.0
#: an orthographic camera counts this times its size as the distance of everything
ORTHO_FACTOR = 0.866
#: bits of a plant's growth hash that thin flora: kept at level k when (h >> THIN_SHIFT) & (2^k - 1) == 0
THIN_SHIFT = 8
THIN_BITS = 8
#: chunks whose drawing data a Drawer keeps (least recently used dropped first)
CHUNK_CACHE = 4096
#: structures whose things a Drawer keeps (least recently used dropped first)
STRUCTURE_CACHE = 4096
#: chunks computed at once (a rectangle of them: one Generator.layers)
RECT_CHUNKS = 256
#: views whose chunks are computed together (Drawer.views)
VIEW_BATCH = 256
#: metres: a box is outside a plane of every view of a batch of Drawer.chunk_views when the box
#: around all of them is beyond it by this much (far more than a float's error there, and than SURE)
MAYBE_MARGIN = 1e-3
#: rows of chunks computed at once by Drawer.chunk_views (one Generator.layers of their whole width)
SWEEP_ROWS = 4
#: rows of views counted from one gathering of the rows of chunks they load (Drawer._rows), in
#: blocks of SWEEP_ROWS rows: the more, the fewer times each chunk's things are gathered again
VIEW_BLOCKS = 2
#: views counted together by Drawer.chunk_views (of the SWEEP_ROWS x VIEW_BLOCKS rows of views
#: gathered at a time)
SWEEP_BATCH = 1024
#: at most this many (view, chunk or thing it may load) pairs in one batch of
#: Drawer.chunk_views, counting each of a view's slots as the most things a loaded chunk holds:
#: a camera that loads many chunks (a large ``view``) over dense flora counts fewer views at a
#: time, so that a batch's memory stays bounded whatever the world (the sample valley's
#: batches stay SWEEP_BATCH)
SWEEP_PAIRS = 1 << 22
#: metres: a chunk's things are all outside (inside) a plane of a view's volume when the bound of
#: their spheres is beyond it by this much (far more than a float's error there)
SURE = 1e-6
#: things the compiled views' structures' pool keeps (StructurePool): past it, it starts again
POOL_THINGS = 1 << 18
#: the template of the world's persistent entities (:meth:`Drawer._persistent_template`)
PERSISTENT = "\0persistent"


def _rectangles(keys: list[tuple[int, int]], most: int) -> list[tuple[int, int, int, int]]:
    """Rectangles (cx0, cz0, nx, nz) of at most ``most`` chunks covering exactly the chunks
    ``keys`` (sorted by row, then column): runs along each row, stacked with the same runs of the
    rows below."""
    runs: list[tuple[int, int, int]] = []  # (cz, cx0, cx1)
    for cx, cz in keys:
        if runs and runs[-1][0] == cz and runs[-1][2] == cx and runs[-1][2] - runs[-1][1] < most:
            runs[-1] = (cz, runs[-1][1], cx + 1)
        else:
            runs.append((cz, cx, cx + 1))
    out: list[tuple[int, int, int, int]] = []
    open_: dict[tuple[int, int], int] = {}  # (cx0, cx1) -> index in out of the rectangle growing there
    for cz, a, b in runs:
        k = open_.get((a, b))
        if k is not None and out[k][1] + out[k][3] == cz and (out[k][3] + 1) * (b - a) <= most:
            cx0, cz0, nx, nz = out[k]
            out[k] = (cx0, cz0, nx, nz + 1)
        else:
            open_[(a, b)] = len(out)
            out.append((a, cz, b - a, 1))
    return out


# -- models ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelDraw:
    """What the drawing model needs of a model: triangles of level 0, 1, ... (None when a level's
    model is missing: counted as 0), the distances its levels start at (metres), its
    draw_distance (0: no limit) and the radius of a sphere around its origin holding its bounds."""

    name: str
    triangles: tuple[int, ...]
    distances: tuple[float, ...]
    draw_distance: float
    radius: float

    @classmethod
    def from_report(cls, report: Mapping[str, Any]) -> ModelDraw:
        """From an ``inspect model`` report (veduta.tools.inspect_model.inspect_model)."""
        lods = report.get("lods") or []
        tris = (int(report["triangles"]), *[int(lv["triangles"] or 0) for lv in lods])
        b = report["bounds"]
        corners = np.array([b["min"], b["max"]], dtype=np.float64)
        return cls(
            report["name"],
            tris,
            tuple(float(lv["distance"]) for lv in lods),
            float(report.get("draw_distance") or 0.0),
            float(np.linalg.norm(np.abs(corners).max(axis=0))),
        )

    def level(self, d: np.ndarray) -> np.ndarray:
        """The level drawn at effective distances ``d`` (0 = full detail)."""
        return np.searchsorted(np.asarray(self.distances, dtype=np.float64), d, side="right")

    def drawn(self, d: np.ndarray) -> np.ndarray:
        """Whether anything is drawn at effective distances ``d`` (draw_distance)."""
        return d < self.draw_distance if self.draw_distance > 0 else np.ones(np.shape(d), dtype=bool)


# -- ground ------------------------------------------------------------------------------------


def grids_for(chunk: int) -> tuple[int, ...]:
    """The grids a chunk of ``chunk`` cells can be drawn with (those dividing it)."""
    return tuple(g for g in GRIDS if g <= chunk and chunk % g == 0)


def interpolate(ground: np.ndarray, g: int) -> np.ndarray:
    """Heights of every vertex of ``ground`` ((n + 1, n + 1) mm, n a multiple of g) on the
    triangles of the grid g: each grid quad split along the diagonal from its min corner to its
    max corner, ``a``/``b`` the vertex's offsets in cells from the quad's min corner along x/z,
    ``h00 + ((h10 - h00) a + (h11 - h10) b) // g`` when a >= b, else
    ``h00 + ((h01 - h00) b + (h11 - h01) a) // g``."""
    n = ground.shape[0] - 1
    q = n // g
    idx = np.arange(n + 1)
    qi = np.minimum(idx // g, q - 1)
    a = idx - qi * g
    c = ground[::g, ::g]
    h00 = c[qi[:, None], qi[None, :]]
    h10 = c[qi[:, None], qi[None, :] + 1]
    h01 = c[qi[:, None] + 1, qi[None, :]]
    h11 = c[qi[:, None] + 1, qi[None, :] + 1]
    ax, bz = a[None, :], a[:, None]
    upper = h00 + ((h10 - h00) * ax + (h11 - h10) * bz) // g
    lower = h00 + ((h01 - h00) * bz + (h11 - h01) * ax) // g
    return np.where(ax >= bz, upper, lower)


def finest_grid(ground: np.ndarray, biome: np.ndarray, grids: tuple[int, ...]) -> int:
    """The grid of a chunk's finest drawn level.

    The coarsest grid (tried from the coarsest) whose triangles pass within 6 cm of every vertex;
    where biomes meet in the chunk, 1 when its ground is flat (every vertex at the same height:
    merged flat runs keep the edge to the cell at little cost) and at most 2 otherwise."""
    fit = 1
    for g in sorted(grids, reverse=True):
        if g == 1 or int(np.abs(interpolate(ground, g) - ground).max()) <= TOLERANCE_MM:
            fit = g
            break
    if biome.min() != biome.max():
        return 1 if int(ground.max()) == int(ground.min()) else min(fit, 2)
    return fit


def _runs(flat: np.ndarray, key: np.ndarray) -> int:
    """Quads after merging: each maximal run along x of flat quads with the same key is one."""
    same = flat[:, 1:] & flat[:, :-1] & (key[:, 1:] == key[:, :-1])
    return int(flat.size - same.sum())


def level_quads(ground: np.ndarray, biome: np.ndarray, g: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(quads drawn, flat (q, q) bool, run key (q, q) int64) of the level with grid g: a quad is
    flat when its four corners have the same height; flat quads merge along x with their
    neighbour when both are flat at the same height on the same biome (the biome of a grid quad
    is that of the cell at its min corner)."""
    c = ground[::g, ::g]
    h = c[:-1, :-1]
    flat = (h == c[:-1, 1:]) & (h == c[1:, :-1]) & (h == c[1:, 1:])
    b = biome[::g, ::g]
    key = h * 1024 + b  # height and biome together (biome indices are below 256)
    return _runs(flat, key), flat, key


def edge_profiles(ground: np.ndarray) -> list[np.ndarray]:
    """The four chunk edges' vertex heights (full detail): north (z = z0), south, west (x = x0),
    east."""
    return [ground[0, :], ground[-1, :], ground[:, 0], ground[:, -1]]


def straight(edge: np.ndarray) -> bool:
    """An edge is straight when its heights change linearly along it (every grid draws it the
    same, so no crack can open there)."""
    return bool((edge[2:] - 2 * edge[1:-1] + edge[:-2] == 0).all())


@dataclass
class ChunkGround:
    """The ground of one chunk as the engine draws it.

    ``grids[k]`` is the grid of level k (k = 0 the finest drawn, drawn below lod_distance; level
    k >= 1 from lod_distance x 2^(k-1) m); ``triangles[k]`` its triangles after merging flat
    runs; ``skirt_triangles[k]`` its skirts'; ``water_triangles`` the water's (every level)."""

    cx: int
    cz: int
    grids: tuple[int, ...]
    triangles: tuple[int, ...]
    skirt_triangles: tuple[int, ...]
    skirt_edges: tuple[int, ...]  # depth (mm) of the skirt of each edge N, S, W, E; 0 for none
    water_triangles: int
    y_min: int  # mm, lowest ground (skirts included) or water
    y_max: int
    ground: np.ndarray = field(repr=False)  # (c + 1, c + 1) mm
    biome: np.ndarray = field(repr=False)  # (c, c)
    water_cell: np.ndarray = field(repr=False)  # (c, c) bool: a corner under water
    water_level: np.ndarray = field(repr=False)  # (c, c) mm

    @property
    def grid(self) -> int:
        return self.grids[0]


def chunk_ground(gen: Generator, cx: int, cz: int) -> ChunkGround:
    """The levels of detail, skirts and water of chunk [cx, cz]."""
    c = gen.p.chunk
    x0, z0 = cx * c, cz * c
    ground, biome, _, _, _ = gen.terrain_layers(x0, z0, c, c)
    return _chunk_ground(gen, cx, cz, ground, biome)


def _chunk_ground(gen: Generator, cx: int, cz: int, ground: np.ndarray, biome: np.ndarray) -> ChunkGround:
    c = gen.p.chunk
    water = gen.terrain.water_levels(cx * c, cz * c, c + 1, c + 1)
    return chunk_grounds(gen, [(cx, cz)], ground[None], biome[None], water[None])[0]


def _interpolate_many(ground: np.ndarray, g: int) -> np.ndarray:
    """:func:`interpolate` of a stack of grounds (k, n + 1, n + 1)."""
    n = ground.shape[1] - 1
    q = n // g
    idx = np.arange(n + 1)
    qi = np.minimum(idx // g, q - 1)
    a = idx - qi * g
    c = ground[:, ::g, ::g]
    r, s = qi[:, None], qi[None, :]
    h00, h10, h01, h11 = c[:, r, s], c[:, r, s + 1], c[:, r + 1, s], c[:, r + 1, s + 1]
    ax, bz = a[None, :], a[:, None]
    upper = h00 + ((h10 - h00) * ax + (h11 - h10) * bz) // g
    lower = h00 + ((h01 - h00) * bz + (h11 - h01) * ax) // g
    return np.where(ax >= bz, upper, lower)


#: a stack of grounds is worked on as int32 when every height is within this of 0 (mm): the
#: interpolation's sums (16 x two differences) then stay far inside int32
NARROW_MM = 1 << 24
#: chunks a step of chunk_grounds' grid fits and flat quads (a block's arrays stay in the cache)
CHUNK_BLOCK = 256


def _narrow(ground: np.ndarray) -> np.ndarray:
    """A contiguous copy of a stack of grounds, int32 when its heights are within
    :data:`NARROW_MM` (the same answers from every operation below, on half the bytes), else
    int64."""
    if ground.size and -NARROW_MM < int(ground.min()) and int(ground.max()) < NARROW_MM:
        return ground.astype(np.int32)
    return np.array(ground, dtype=np.int64)


def _off_most(ground: np.ndarray, g: int) -> np.ndarray:
    """(k,) how far (mm) the vertex furthest off the triangles of grid g (:func:`interpolate`'s,
    g a power of 2) is, of each of a stack of grounds (k, n + 1, n + 1): the same as
    ``abs(_interpolate_many(ground, g) - ground).max(axis=(1, 2))``, without gathering the
    corners vertex by vertex. The vertices at offsets a, b in [0, g) from each quad's min corner
    are on that quad's triangles (``// g`` is ``>> log2 g``); those of the last row (b = g) are
    on the straight line between the corners along it (the lower triangle at b = g gives
    ``h01 + ((h11 - h01) a) // g``), those of the last column likewise (the upper at a = g)."""
    k, n = ground.shape[0], ground.shape[1] - 1
    q, s = n // g, g.bit_length() - 1
    c = ground[:, ::g, ::g]
    off = np.zeros(k, dtype=ground.dtype)
    if g >= 8:  # few quads of many vertices: all offsets at once
        h00, h10 = c[:, :-1, None, :-1, None], c[:, :-1, None, 1:, None]
        h01, h11 = c[:, 1:, None, :-1, None], c[:, 1:, None, 1:, None]
        offs = np.arange(g, dtype=ground.dtype)
        ax, bz = offs[None, None, None, None, :], offs[None, None, :, None, None]
        upper = h00 + (((h10 - h00) * ax + (h11 - h10) * bz) >> s)
        lower = h00 + (((h01 - h00) * bz + (h11 - h01) * ax) >> s)
        inner = ground[:, :n, :n].reshape(k, q, g, q, g)
        off = np.abs(np.where(ax >= bz, upper, lower) - inner).max(axis=(1, 2, 3, 4))
    else:  # many small quads: one offset of every quad at a time
        h00, h10, h01, h11 = c[:, :-1, :-1], c[:, :-1, 1:], c[:, 1:, :-1], c[:, 1:, 1:]
        dx0, dz1, dz0, dx1 = h10 - h00, h11 - h10, h01 - h00, h11 - h01
        for b in range(g):
            for a in range(g):
                if a or b:  # (the corner itself is on them)
                    t = h00 + ((dx0 * a + dz1 * b) >> s) if a >= b else h00 + ((dz0 * b + dx1 * a) >> s)
                    off = np.maximum(off, np.abs(t - ground[:, b:n:g, a:n:g]).max(axis=(1, 2)))
    steps = np.arange(g, dtype=ground.dtype)
    for e in (ground[:, n, :], ground[:, :, n]):
        ce = e[:, ::g]
        line = ce[:, :-1, None] + (((ce[:, 1:, None] - ce[:, :-1, None]) * steps) >> s)
        off = np.maximum(off, np.abs(line - e[:, :n].reshape(k, q, g)).max(axis=(1, 2)))
    return off


def _off_some(ground: np.ndarray, g: int, stride: int) -> np.ndarray:
    """(k,) how far (mm) the vertex furthest off the triangles of grid g (g a power of 2, at
    least 8) is among the vertices at offsets multiple of ``stride`` (a power of 2 below g) from
    each quad's min corner, of a stack of grounds: :func:`_off_most`'s figure over some of its
    vertices (never more than it: a chunk off by more there is off)."""
    k, n = ground.shape[0], ground.shape[1] - 1
    q, s = n // g, g.bit_length() - 1
    c = ground[:, ::g, ::g]
    h00, h10 = c[:, :-1, None, :-1, None], c[:, :-1, None, 1:, None]
    h01, h11 = c[:, 1:, None, :-1, None], c[:, 1:, None, 1:, None]
    offs = np.arange(0, g, stride, dtype=ground.dtype)
    ax, bz = offs[None, None, None, None, :], offs[None, None, :, None, None]
    upper = h00 + (((h10 - h00) * ax + (h11 - h10) * bz) >> s)
    lower = h00 + (((h01 - h00) * bz + (h11 - h01) * ax) >> s)
    inner = ground[:, :n, :n].reshape(k, q, g, q, g)[:, :, ::stride, :, ::stride]
    return np.abs(np.where(ax >= bz, upper, lower) - inner).max(axis=(1, 2, 3, 4))


def _runs_many(flat: np.ndarray, key: np.ndarray) -> np.ndarray:
    """:func:`_runs` of a stack of (k, q, q) arrays: (k,)."""
    same = flat[:, :, 1:] & flat[:, :, :-1] & (key[:, :, 1:] == key[:, :, :-1])
    return flat.shape[1] * flat.shape[2] - same.sum(axis=(1, 2))


def chunk_grounds(
    gen: Generator,
    keys: list[tuple[int, int]],
    ground: np.ndarray,
    biome: np.ndarray,
    water: np.ndarray | None,
    table: np.ndarray | None = None,
    figures: dict[str, np.ndarray] | None = None,
) -> list[ChunkGround]:
    """:class:`ChunkGround` of many chunks at once: ``keys`` (cx, cz), their vertex ground (k, c + 1,
    c + 1), cell biomes (k, c, c) and vertex water levels (k, c + 1, c + 1; None: no water can
    reach them, :meth:`Terrain.wet_possible`). The levels of detail
    (:func:`finest_grid`, :func:`level_quads`), skirts and water of :func:`chunk_ground`, with
    arrays over the stack (:meth:`Drawer.block`'s pass over the world takes
    :func:`veduta.world.chunk_kernels.ground_figures` instead when it can: the same figures).
    ``table``: a (k, 3, len(GRIDS)) int64 array that gets each chunk's :attr:`ChunkDraw.table`.
    ``figures``: a dict that gets the arrays ``levels`` (levels drawn), ``y_min`` and ``y_max``
    (mm) of every chunk, and then no object is made (an empty list)."""
    c = gen.p.chunk
    grids = grids_for(c)
    g0, tris, depths, wtris, y_min, y_max, cells = _grounds_numpy(c, grids, ground, biome, water)
    first = np.searchsorted(np.asarray(grids), g0)
    n_skirts = (depths != 0).sum(axis=1)
    if table is not None:
        _fill_table(table, grids, c, first, tris, n_skirts, wtris)
    if figures is not None:
        figures["levels"] = len(grids) - first
        figures["y_min"], figures["y_max"] = y_min, y_max
        return []
    wcell, level_of = cells()
    out = []
    g0s, dl, ns, wt = g0.tolist(), depths.tolist(), n_skirts.tolist(), wtris.tolist()
    tri_lists = {g: tris[:, j].tolist() for j, g in enumerate(grids)}
    lows, tops = y_min.tolist(), y_max.tolist()
    for i, (cx, cz) in enumerate(keys):
        levels = tuple(g for g in grids if g >= g0s[i])
        out.append(
            ChunkGround(
                cx,
                cz,
                levels,
                tuple(tri_lists[g][i] for g in levels),
                tuple(2 * ns[i] * (c // g) for g in levels),
                tuple(dl[i]),
                wt[i],
                lows[i],
                tops[i],
                ground[i],
                biome[i],
                wcell[i],
                level_of[i],
            )
        )
    return out


def _fill_table(
    table: np.ndarray,
    grids: tuple[int, ...],
    c: int,
    first: np.ndarray,
    tris: np.ndarray,
    n_skirts: np.ndarray,
    wtris: np.ndarray,
) -> None:
    """:attr:`ChunkDraw.table` of each chunk into ``table`` (k, 3, len(GRIDS)): level j is grid
    ``grids[first + j]`` (the finest drawn one's index ``first``; the coarsest beyond), ``tris``
    (k, len(grids)) each grid's triangles."""
    rows = np.arange(len(first))
    for j in range(len(GRIDS)):
        at = np.minimum(first + j, len(grids) - 1)
        gj = np.asarray(grids)[at]
        table[:, 0, j] = tris[rows, at]
        table[:, 1, j] = 2 * n_skirts * (c // gj)
        table[:, 2, j] = wtris


def _ground_kernel(
    ground: np.ndarray,
    biome: np.ndarray,
    water: np.ndarray | None,
    grids: tuple[int, ...],
    nx: int,
    table: np.ndarray | None = None,
    wet: Callable[[int, int], bool] | None = None,
    cells: bool = False,
) -> dict[str, np.ndarray]:
    """:func:`veduta.world.chunk_kernels.ground_figures` of the rectangle of chunks ``nx`` wide
    whose vertex ground, cell biomes and vertex water levels (None: no water reaches them) these
    arrays are (read in place), as arrays over its k chunks, row by row: ``g0``, ``tris`` (k,
    len(grids)), ``depths`` (k, 4), ``wtris``, ``y_min``, ``y_max``, ``centre``, ``levels``
    (with ``table``, else 0) and, with ``cells``, ``wcell`` and ``wlevel`` (k, c, c) (else
    empty); ``table`` (k, 3, len(GRIDS)): gets each chunk's :attr:`ChunkDraw.table`.
    ``wet(cx0, cx1)``: whether water may reach the chunks [cx0, cx1) of the rectangle
    (:meth:`Terrain.wet_possible`; their water levels are read only then)."""
    from veduta.world.chunk_kernels import GROUP, ground_figures

    n = (ground.shape[1] - 1) // nx
    nz = biome.shape[0] // n
    k = nz * nx
    out = {name: np.zeros(k, dtype=np.int64) for name in ("g0", "wtris", "y_min", "y_max", "centre", "levels")}
    out["tris"] = np.zeros((k, len(grids)), dtype=np.int64)
    out["depths"] = np.zeros((k, 4), dtype=np.int64)
    shape = (k, n, n) if cells else (0, 0, 0)
    out["wcell"] = np.zeros(shape, dtype=bool)
    out["wlevel"] = np.zeros(shape, dtype=np.int64 if water is None else water.dtype)
    starts = range(0, nx, GROUP)
    if water is None:
        wet_groups = np.zeros(len(starts), dtype=bool)
    else:
        wet_groups = np.asarray([wet is None or wet(a, min(nx, a + GROUP)) for a in starts], dtype=bool)
    ground_figures(
        ground,
        biome,
        ground if water is None else water,  # (not read without water)
        wet_groups,
        nz,
        nx,
        n,
        np.full(4, n, dtype=np.int64),
        np.asarray(grids, dtype=np.int64),
        TOLERANCE_MM,
        *(out[name] for name in ("g0", "tris", "depths", "wtris", "y_min", "y_max", "centre", "wcell", "wlevel")),
        np.zeros((0, 3, len(GRIDS)), dtype=np.int64) if table is None else table,
        out["levels"],
    )
    return out


def _grounds_numpy(
    c: int, grids: tuple[int, ...], ground: np.ndarray, biome: np.ndarray, water: np.ndarray | None
) -> tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    Callable[[], tuple[np.ndarray, np.ndarray]],
]:
    """:func:`chunk_grounds`' figures with arrays over the stack of chunks: (g0 the finest drawn
    grid, tris (k, len(grids)) each grid's triangles (0 for those finer than g0), depths (k, 4)
    of the skirts, wtris the water's triangles, y_min, y_max, ``cells()``: (the cells with a
    corner under water (k, c, c), their water level)."""
    k = ground.shape[0]
    hs = _narrow(ground)  # the heights, contiguous (int32 when they allow)
    fit = np.ones(k, dtype=np.int64)
    open_ = np.ones(k, dtype=bool)
    for g in sorted(grids, reverse=True):  # the coarsest grid within 6 cm of every vertex
        if g == 1:
            break
        todo = np.flatnonzero(open_)  # chunks a coarser grid did not fit
        if not len(todo):
            break
        # first the middle vertex of every grid quad: a chunk off there by more is off (the rest
        # is tested only for those within it there)
        half, corners = g // 2, hs[todo, ::g, ::g]
        h00, h10, h11 = corners[:, :-1, :-1], corners[:, :-1, 1:], corners[:, 1:, 1:]
        mid = h00 + ((h10 - h00) * half + (h11 - h10) * half) // g  # interpolate's at a = b = g / 2
        todo = todo[np.abs(mid - hs[todo, half::g, half::g]).max(axis=(1, 2)) <= TOLERANCE_MM]
        if g >= 8:  # then a quarter of the offsets each way: those off there are off
            near = np.zeros(len(todo), dtype=bool)
            for a in range(0, len(todo), CHUNK_BLOCK):
                near[a : a + CHUNK_BLOCK] = _off_some(hs[todo[a : a + CHUNK_BLOCK]], g, g // 4) <= TOLERANCE_MM
            todo = todo[near]
        ok = np.zeros(len(todo), dtype=bool)
        for a in range(0, len(todo), CHUNK_BLOCK):  # (a block's quads stay in the cache)
            ok[a : a + CHUNK_BLOCK] = _off_most(hs[todo[a : a + CHUNK_BLOCK]], g) <= TOLERANCE_MM
        fit[todo[ok]] = g
        open_[todo[ok]] = False
    gmin, gmax = hs.min(axis=(1, 2)).astype(np.int64), hs.max(axis=(1, 2)).astype(np.int64)
    edge = biome.min(axis=(1, 2)) != biome.max(axis=(1, 2))
    g0 = np.where(edge, np.where(gmax == gmin, 1, np.minimum(fit, 2)), fit)
    # each grid's triangles, only for the chunks that draw it (their finest drawn grid g0 or a
    # coarser one: the others' are never read, left 0), a block of chunks at a time
    tris = np.zeros((k, len(grids)), dtype=np.int64)
    for gi, g in enumerate(grids):
        drawn = np.flatnonzero(g0 <= g)
        for a in range(0, len(drawn), CHUNK_BLOCK):
            part = drawn[a : a + CHUNK_BLOCK]
            whole = len(part) == part[-1] - part[0] + 1  # a run of chunks: sliced, not gathered
            sl = slice(int(part[0]), int(part[-1]) + 1) if whole else part
            cg = hs[sl, ::g, ::g]  # a quad is flat when its top, bottom and left edges are
            along = cg[:, :, 1:] == cg[:, :, :-1]
            flat = along[:, :-1] & along[:, 1:] & (cg[:, 1:, :-1] == cg[:, :-1, :-1])
            # two flat neighbours share an edge, so their heights are equal: the run key
            # (height x 1024 + biome) is the same when their biomes are
            b = biome[sl, ::g, ::g]
            same = flat[:, :, 1:] & flat[:, :, :-1] & (b[:, :, 1:] == b[:, :, :-1])
            tris[part, gi] = 2 * (flat.shape[1] * flat.shape[2] - same.sum(axis=(1, 2)))
    edges = [hs[:, 0, :], hs[:, -1, :], hs[:, :, 0], hs[:, :, -1]]
    depths = np.stack(
        [
            np.where((e[:, 2:] - 2 * e[:, 1:-1] + e[:, :-2] == 0).all(axis=1), 0, e.max(axis=1) - e.min(axis=1))
            for e in edges
        ],
        axis=1,
    ).astype(np.int64)
    # water: only the chunks with a vertex under it (the others draw none: no wet cell)
    if water is None:  # no water can reach the chunks
        water = np.zeros((0, c + 1, c + 1), dtype=np.int64)
        wet = np.zeros(0, dtype=np.int64)
    else:
        wet = np.flatnonzero((hs < water).any(axis=(1, 2)))
    ws, gs = water[wet], ground[wet]
    under = gs < ws
    wcell_w = under[:, :-1, :-1] | under[:, :-1, 1:] | under[:, 1:, :-1] | under[:, 1:, 1:]
    wlev_w = np.maximum(np.maximum(ws[:, :-1, :-1], ws[:, :-1, 1:]), np.maximum(ws[:, 1:, :-1], ws[:, 1:, 1:]))
    wtris = np.zeros(k, dtype=np.int64)
    wtris[wet] = 2 * (_runs_many(wcell_w, wlev_w) - (~wcell_w).sum(axis=(1, 2)))
    y_min = gmin - depths.max(axis=1)
    top = gmax.copy()
    top[wet] = np.maximum(gmax[wet], np.where(wcell_w, wlev_w, np.iinfo(np.int64).min).max(axis=(1, 2)))

    def cells() -> tuple[np.ndarray, np.ndarray]:
        wcell = np.zeros((k, c, c), dtype=bool)
        level_of = np.zeros((k, c, c), dtype=water.dtype)
        wcell[wet] = wcell_w
        level_of[wet] = np.where(wcell_w, wlev_w, 0)
        return wcell, level_of

    return g0, tris, depths, wtris, y_min, top, cells


def level_at(gen: Generator, d: np.ndarray | float, levels: int):
    """The ground level drawn at effective distance d: 0 below lod_distance, k from
    lod_distance x 2^(k-1) (the coarsest level beyond)."""
    lod = lod_distance(gen)
    d = np.asarray(d, dtype=np.float64)
    k = np.zeros(d.shape, dtype=np.int64)
    for j in range(1, levels):
        k = np.where(d >= lod * 2.0 ** (j - 1), j, k)
    return k


def lod_distance(gen: Generator) -> float:
    t = getattr(gen.world, "terrain", None)
    return float(getattr(t, "lod_distance", 24.0) or 24.0) if t is not None else 24.0


def drawn_height(gen: Generator, x: int, z: int) -> int:
    """The height (mm) at the centre of cell [x, z] on the triangles of its chunk's finest drawn
    level (what the runtime's HeightAt returns there): with G the grid, (qx, qz) the min vertex of
    the grid quad holding the cell, ``a = 2 (x - qx) + 1`` and ``b = 2 (z - qz) + 1`` (the centre in
    half cells), ``h00 + ((h10 - h00) a + (h11 - h10) b) // (2 G)`` when a >= b, else
    ``h00 + ((h01 - h00) b + (h11 - h01) a) // (2 G)``."""
    c = gen.p.chunk
    cx, cz = x // c, z // c
    ground = gen.heights(cx * c, cz * c, c + 1, c + 1)
    g = finest_grid(ground, gen.biomes(cx * c, cz * c, c, c), grids_for(c))
    i, j = x - cx * c, z - cz * c
    qi, qj = (i // g) * g, (j // g) * g
    h00, h10 = int(ground[qj, qi]), int(ground[qj, qi + g])
    h01, h11 = int(ground[qj + g, qi]), int(ground[qj + g, qi + g])
    a, b = 2 * (i - qi) + 1, 2 * (j - qj) + 1
    if a >= b:
        return h00 + ((h10 - h00) * a + (h11 - h10) * b) // (2 * g)
    return h00 + ((h01 - h00) * b + (h11 - h01) * a) // (2 * g)


# -- geometry for exporters ---------------------------------------------------------------------


def _compact(vertices: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    used, inverse = np.unique(triangles.ravel(), return_inverse=True)
    return vertices[used], inverse.reshape(-1, 3).astype(np.int64)


class GroundMesh(TypedDict):
    """What :func:`ground_mesh` returns (see there)."""

    vertices: np.ndarray
    triangles: np.ndarray
    biomes: np.ndarray
    grid: int


def ground_mesh(gen: Generator, cx: int, cz: int, level: int = 0) -> GroundMesh:
    """The ground of chunk [cx, cz] at a level (0 = the finest drawn) as a triangle mesh.

    Returns ``{"vertices": (n, 3) float64 metres (world x, y, z), "triangles": (m, 3) int64
    (counter-clockwise seen from above), "biomes": (m,) int64 biome index of each triangle,
    "grid": int}``. Flat runs are one quad (two triangles), as drawn."""
    cg = chunk_ground(gen, cx, cz)
    g = cg.grids[min(level, len(cg.grids) - 1)]
    c = gen.p.chunk
    q = c // g
    cm = gen.p.cell_mm
    coarse = cg.ground[::g, ::g]
    ii, jj = np.meshgrid(np.arange(q + 1), np.arange(q + 1))
    verts = np.stack(
        [(cx * c + ii * g) * cm / 1000.0, coarse / 1000.0, (cz * c + jj * g) * cm / 1000.0], axis=-1
    ).reshape(-1, 3)
    _, flat, key = level_quads(cg.ground, cg.biome, g)
    bq = cg.biome[::g, ::g]
    tris: list[tuple[int, int, int]] = []
    tb: list[int] = []

    def vid(i: int, j: int) -> int:
        return j * (q + 1) + i

    for j in range(q):
        i = 0
        while i < q:
            e = i + 1
            if flat[j, i]:
                while e < q and flat[j, e] and key[j, e] == key[j, i]:
                    e += 1
            a, b, cc, d = vid(i, j), vid(e, j), vid(i, j + 1), vid(e, j + 1)
            tris += [(a, d, b), (a, cc, d)]
            tb += [int(bq[j, i])] * 2
            i = e
    v, t = _compact(verts, np.asarray(tris, dtype=np.int64))
    return {"vertices": v, "triangles": t, "biomes": np.asarray(tb, dtype=np.int64), "grid": g}


def skirt_mesh(gen: Generator, cx: int, cz: int, level: int = 0) -> dict[str, np.ndarray]:
    """The skirts of chunk [cx, cz] at a level: below each chunk edge that is not straight, one
    quad per grid segment from the edge down by the edge's height range (full detail), facing
    out of the chunk. ``{"vertices": (n, 3) metres, "triangles": (m, 3) int64}``."""
    cg = chunk_ground(gen, cx, cz)
    g = cg.grids[min(level, len(cg.grids) - 1)]
    c = gen.p.chunk
    cm = gen.p.cell_mm
    x0, z0 = cx * c, cz * c
    verts: list[tuple[float, float, float]] = []
    tris: list[tuple[int, int, int]] = []
    idx = np.arange(0, c + 1, g)
    edges = [  # (cells x, cells z of the edge's vertices, heights, outward: reverse winding?)
        (x0 + idx, np.full(idx.shape, z0), cg.ground[0, idx], True),
        (x0 + idx, np.full(idx.shape, z0 + c), cg.ground[c, idx], False),
        (np.full(idx.shape, x0), z0 + idx, cg.ground[idx, 0], False),
        (np.full(idx.shape, x0 + c), z0 + idx, cg.ground[idx, c], True),
    ]
    for (xs, zs, hs, flip), depth in zip(edges, cg.skirt_edges, strict=True):
        if not depth:
            continue
        base = len(verts)
        for x, z, h in zip(xs.tolist(), zs.tolist(), hs.tolist(), strict=True):
            verts.append((x * cm / 1000.0, h / 1000.0, z * cm / 1000.0))
            verts.append((x * cm / 1000.0, (h - depth) / 1000.0, z * cm / 1000.0))
        for s in range(len(xs) - 1):
            top0, bot0, top1, bot1 = base + 2 * s, base + 2 * s + 1, base + 2 * s + 2, base + 2 * s + 3
            if flip:
                tris += [(top0, top1, bot0), (bot0, top1, bot1)]
            else:
                tris += [(top0, bot0, top1), (bot0, bot1, top1)]
    return {
        "vertices": np.asarray(verts, dtype=np.float64).reshape(-1, 3),
        "triangles": np.asarray(tris, dtype=np.int64).reshape(-1, 3),
    }


def water_mesh(gen: Generator, cx: int, cz: int) -> dict[str, np.ndarray]:
    """The water of chunk [cx, cz]: a quad at the cell's water level (the highest of its corners'
    levels) over every cell with a corner under water, runs along x at one level merged.
    ``{"vertices": (n, 3) metres, "triangles": (m, 3) int64}`` (counter-clockwise from above)."""
    cg = chunk_ground(gen, cx, cz)
    c = gen.p.chunk
    cm = gen.p.cell_mm
    verts: list[tuple[float, float, float]] = []
    tris: list[tuple[int, int, int]] = []
    for j in range(c):
        i = 0
        while i < c:
            if not cg.water_cell[j, i]:
                i += 1
                continue
            e = i + 1
            while e < c and cg.water_cell[j, e] and cg.water_level[j, e] == cg.water_level[j, i]:
                e += 1
            y = int(cg.water_level[j, i]) / 1000.0
            xa, xb = (cx * c + i) * cm / 1000.0, (cx * c + e) * cm / 1000.0
            za, zb = (cz * c + j) * cm / 1000.0, (cz * c + j + 1) * cm / 1000.0
            b = len(verts)
            verts += [(xa, y, za), (xb, y, za), (xa, y, zb), (xb, y, zb)]
            tris += [(b, b + 3, b + 1), (b, b + 2, b + 3)]
            i = e
    return {
        "vertices": np.asarray(verts, dtype=np.float64).reshape(-1, 3),
        "triangles": np.asarray(tris, dtype=np.int64).reshape(-1, 3),
    }


# -- flora -------------------------------------------------------------------------------------


def thin_keep(h: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Which plants a chunk draws at their model's level: all at level 0; at level k >= 1 those
    whose growth hash h (world-generation.md, section 12) has ``(h >> 8) & (2^k - 1) == 0`` (a
    seeded half at level 1, a quarter of the plants, half of that half, at level 2, ...; levels
    beyond 8 keep those of level 8)."""
    k = np.minimum(np.asarray(level, dtype=np.int64), THIN_BITS)
    mask = (np.left_shift(np.int64(1), k) - 1).astype(np.uint64)
    return ((np.asarray(h, dtype=np.uint64) >> np.uint64(THIN_SHIFT)) & mask) == 0


def thinned_triangles(model: ModelDraw, d: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Triangles each plant costs at effective distances d (0 when thinned, culled by
    draw_distance)."""
    k = model.level(d)
    tris = np.asarray(model.triangles, dtype=np.int64)[k]
    return np.where(model.drawn(d) & thin_keep(h, k), tris, 0)


def rule_cost(
    gen: Generator, rule: str, models: Mapping[str, ModelDraw], x0: int, z0: int, w: int, h: int, distance: float = 0.0
) -> dict[str, Any]:
    """What vegetation rule ``rule`` (its name) costs to draw over a cell rectangle, every plant
    or prefab seen at one effective distance (0: up close).

    Returns ``{"rule", "kind": "model"|"prefab", "count" (plants or prefab instances), "triangles"
    (drawn at that distance, thinning and draw_distance applied), "full_triangles" (all at level
    0), "model"/"prefab", "missing": [names of missing models]}``. A missing model costs 0."""
    p = gen.p
    idx = next((r.index for r in p.vegetation if r.name == rule), None)
    if idx is None:
        raise KeyError(f"no vegetation rule {rule!r}")
    r = p.vegetation[idx]
    lay = gen.layers(x0, z0, w, h)
    missing: list[str] = []
    if r.model:
        pa = next(pa for pa in lay.plants if pa.rule == idx)
        n = int(pa.mask.sum())
        m = models.get(r.model)
        if m is None:
            return {
                "rule": rule,
                "kind": "model",
                "model": r.model,
                "count": n,
                "triangles": 0,
                "full_triangles": 0,
                "missing": [r.model],
            }
        xs = np.arange(x0, x0 + w, dtype=np.int64)
        zs = np.arange(z0, z0 + h, dtype=np.int64)
        hh = hash2_grid(r.key, xs, zs)[pa.mask]
        tris = thinned_triangles(m, np.full(n, float(distance)), hh)
        return {
            "rule": rule,
            "kind": "model",
            "model": r.model,
            "count": n,
            "triangles": int(tris.sum()),
            "full_triangles": n * m.triangles[0],
            "missing": [],
        }
    from veduta.world.cover import VEGETATION

    n = int(((lay.owner_kind == VEGETATION) & (lay.owner_index == idx)).sum())
    pf = gen.prefabs.get(r.prefab)
    per = per_full = 0
    if pf is not None:
        for e in pf.record.entities or []:
            name = getattr(e, "model", "") or ""
            if not name:
                continue
            m = models.get(name)
            if m is None:
                missing.append(name)
                continue
            d = np.asarray([float(distance)])
            k = int(m.level(d)[0])
            per += m.triangles[k] if bool(m.drawn(d)[0]) else 0
            per_full += m.triangles[0]
    return {
        "rule": rule,
        "kind": "prefab",
        "prefab": r.prefab,
        "count": n,
        "triangles": n * per,
        "full_triangles": n * per_full,
        "missing": sorted(set(missing)),
    }


# -- views -------------------------------------------------------------------------------------


def lens_of(fov_deg: float) -> float:
    """How much a perspective camera of ``fov_deg`` magnifies distances against the LENS_DEG
    lens the levels' distances are for: :attr:`Camera.lens`, the views' arrays and the compiled
    views take it from here."""
    return math.tan(math.radians(fov_deg) / 2) / math.tan(math.radians(LENS_DEG) / 2)


@dataclass(frozen=True)
class Camera:
    """A camera in world metres: eye, unit forward/right/up, projection."""

    eye: tuple[float, float, float]
    forward: tuple[float, float, float]
    right: tuple[float, float, float]
    up: tuple[float, float, float]
    ortho: bool
    fov_deg: float
    size: float
    near: float
    far: float

    @property
    def lens(self) -> float:
        """Distances are multiplied by this to be as seen through a 60 degree lens (perspective)."""
        return lens_of(self.fov_deg)

    def effective(self, d: np.ndarray) -> np.ndarray:
        """Effective distances of things at distances d (metres) from the eye."""
        if self.ortho:
            return np.full(np.shape(d), ORTHO_FACTOR * self.size)
        return np.asarray(d, dtype=np.float64) * self.lens

    def planes(self) -> np.ndarray:
        """(6, 4) inward planes (nx, ny, nz, d): a point p is inside when n.p + d >= 0 for all."""
        e, f, r, u = (np.asarray(v, dtype=np.float64) for v in (self.eye, self.forward, self.right, self.up))
        out = [(f, -f @ (e + self.near * f)), (-f, f @ (e + self.far * f))]
        if self.ortho:
            hw, hh = self.size * ASPECT / 2, self.size / 2
            out += [(r, -r @ (e - hw * r)), (-r, r @ (e + hw * r)), (u, -u @ (e - hh * u)), (-u, u @ (e + hh * u))]
        else:
            tv = math.tan(math.radians(self.fov_deg) / 2)
            th = tv * ASPECT
            # each side plane passes through the eye and holds an edge direction and an axis
            for edge, axis in ((f - th * r, u), (f + th * r, u), (f - tv * u, r), (f + tv * u, r)):
                n = np.cross(edge, axis)
                n = n / np.linalg.norm(n)
                if n @ f < 0:  # the inward side is the one the view direction lies on
                    n = -n
                out.append((n, -n @ e))
        return np.array([[*n, d] for n, d in out], dtype=np.float64)

    def corners(self) -> np.ndarray:
        """(8, 3) corners of the view volume: near rectangle, then far rectangle."""
        e, f, r, u = (np.asarray(v, dtype=np.float64) for v in (self.eye, self.forward, self.right, self.up))
        out = []
        for dist in (self.near, self.far):
            if self.ortho:
                hw, hh = self.size * ASPECT / 2, self.size / 2
            else:
                hh = dist * math.tan(math.radians(self.fov_deg) / 2)
                hw = hh * ASPECT
            c = e + dist * f
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                out.append(c + sx * hw * r + sy * hh * u)
        return np.array(out)


def camera_record(world: Any) -> dict[str, Any]:
    """The world's camera as plain data (the scene defaults when it has none)."""
    cam = getattr(world, "camera", None)
    if cam is None:
        return {
            "type": "perspective",
            "fov_deg": 60.0,
            "size": 0.0,
            "near": 0.1,
            "far": 100.0,
            "position": [0.0, 5.0, 10.0],
            "look_at": [0.0, 0.0, 0.0],
        }

    def f32(v) -> float:  # the stored f32 as its shortest decimal (0.1, not 0.10000000149011612)
        return float(str(np.float32(v)))

    return {
        "type": "orthographic" if cam.ortho else "perspective",
        "fov_deg": f32(cam.fov_deg),
        "size": f32(cam.size),
        "near": f32(cam.near),
        "far": f32(cam.far),
        "position": [f32(v) for v in cam.position],
        "look_at": [f32(v) for v in cam.look_at],
    }


def focus_origin(gen: Generator, cell: tuple[int, int]) -> tuple[float, float, float]:
    """Where a view's camera and persistent entities are placed relative to: the centre of the
    focus cell, on the ground there (its centre height)."""
    x, z = cell
    cm = gen.p.cell_mm
    g = gen.heights(x, z, 2, 2)
    return ((2 * x + 1) * cm / 2000.0, int((g[0, 0] + g[1, 1]) >> 1) / 1000.0, (2 * z + 1) * cm / 2000.0)


def make_camera(rec: Mapping[str, Any], origin: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> Camera:
    """A :class:`Camera` from :func:`camera_record` data placed relative to ``origin``. Up is +Y,
    or north (-Z) for a camera looking straight down or up."""
    o = np.asarray(origin, dtype=np.float64)
    eye = o + np.asarray(rec["position"], dtype=np.float64)
    f = o + np.asarray(rec["look_at"], dtype=np.float64) - eye
    f = f / np.linalg.norm(f)
    world_up = np.array([0.0, 1.0, 0.0])
    if np.linalg.norm(np.cross(f, world_up)) < 1e-6:
        world_up = np.array([0.0, 0.0, -1.0])
    r = np.cross(f, world_up)
    r = r / np.linalg.norm(r)
    u = np.cross(r, f)
    return Camera(
        tuple(eye),
        tuple(f),
        tuple(r),
        tuple(u),
        rec["type"] == "orthographic",
        rec["fov_deg"],
        rec["size"],
        rec["near"],
        rec["far"],
    )


def section(cam: Camera, y: float) -> list[np.ndarray]:
    """The corners of the view volume's section by the horizontal plane at height y (empty when
    it does not meet it)."""
    c = cam.corners()
    edges = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)]
    pts = []
    for a, b in edges:
        pa, pb = c[a], c[b]
        da, db = pa[1] - y, pb[1] - y
        if da == 0:
            pts.append(pa)
        if (da < 0 < db) or (db < 0 < da):
            t = da / (da - db)
            pts.append(pa + t * (pb - pa))
    return pts


def view_reach(gen: Generator, rec: Mapping[str, Any]) -> float:
    """The farthest the camera (placed around a focus at the origin, on the focus's ground)
    sees on the focus's ground level, as the largest |dx| or |dz| in metres."""
    cam = make_camera(rec)
    pts = section(cam, 0.0)
    if not pts:
        return 0.0
    a = np.abs(np.asarray(pts))
    return float(max(a[:, 0].max(), a[:, 2].max()))


def loaded_radius(gen: Generator) -> float:
    """Metres the loaded window surely reaches from the focus on every side: view x chunk x
    cell (the focus at the edge of its chunk)."""
    view = int(getattr(gen.world, "view", 1) or 1)
    return view * gen.p.chunk * gen.p.cell_mm / 1000.0


def loaded_chunks(gen: Generator, cell: tuple[int, int], kept: tuple[int, int] = (0, 0)) -> list[tuple[int, int]]:
    """The chunks loaded around a focus cell (those inside the world), row order: the
    (2 view + 1)^2 window around the focus's chunk, and with ``kept = (sx, sz)`` (each -1, 0 or
    1) the chunks one beyond it on that side in x and in z, which the engine keeps loaded
    after the focus came from there (:data:`KEPT_SIDES`)."""
    view = int(getattr(gen.world, "view", 1) or 1)
    c = gen.p.chunk
    fx, fz = cell[0] // c, cell[1] // c
    e = gen.p.extent
    sx, sz = kept
    return [
        (cx, cz)
        for cz in range(fz - view + min(sz, 0), fz + view + max(sz, 0) + 1)
        for cx in range(fx - view + min(sx, 0), fx + view + max(sx, 0) + 1)
        if -e <= cx < e and -e <= cz < e
    ]


#: The four largest sets of chunks the engine can have loaded around a focus, as ``kept`` sides
#: for :func:`loaded_chunks`: the (2 view + 2)^2 chunks of the window grown by one chunk east or
#: west and south or north.  The engine loads the window around the focus's chunk and unloads a
#: chunk only when it is more than view + 1 chunks away (world-format.md, "Cells and chunks"), so
#: besides the window it may hold chunks of the ring view + 1 away; but never ring chunks on
#: opposite sides at once: one east of the window was loaded while the focus stood east of its
#: chunk now, one west of it while the focus stood west of it, and whichever came first was more
#: than view + 1 chunks from the focus when it stood at the other.  Each of the four is reached
#: by a focus that came in diagonally from that corner (tests/world/test_draw.py walks it).
KEPT_SIDES: tuple[tuple[int, int], ...] = ((1, 1), (-1, 1), (1, -1), (-1, -1))


def chunk_box(gen: Generator, cg: ChunkGround) -> np.ndarray:
    """(2, 3) metres, min and max: a chunk's cells, from its lowest ground (less its deepest
    skirt) to its highest ground or water (the box its level is chosen by and culled with)."""
    c, cm = gen.p.chunk, gen.p.cell_mm
    x0, z0, side = cg.cx * c * cm / 1000.0, cg.cz * c * cm / 1000.0, c * cm / 1000.0
    return np.array([[x0, cg.y_min / 1000.0, z0], [x0 + side, cg.y_max / 1000.0, z0 + side]])


def ground_level(cg: ChunkGround, d: float, lod: float) -> int:
    """The level a chunk's ground is drawn at when the nearest point of its box is at effective
    distance *d*: 0 below *lod* (``lod_distance``), level k >= 1 from lod x 2^(k-1), the coarsest
    beyond."""
    k = 0
    for j in range(1, len(cg.grids)):
        if d >= lod * 2.0 ** (j - 1):
            k = j
    return k


def chunk_levels(
    gen: Generator, chunks: list[tuple[int, int]], focus: tuple[int, int], camera: Mapping[str, Any] | None = None
) -> list[tuple[int, float]]:
    """``(level, effective distance in metres)`` of each chunk's ground as the engine picks it
    with the world's camera (or *camera*) placed around focus cell *focus* (:func:`focus_origin`),
    whether or not the chunk is in view: what an exporter needs to write distant chunks coarser."""
    cam = make_camera(camera if camera is not None else camera_record(gen.world), focus_origin(gen, focus))
    eye = np.asarray(cam.eye)
    lod = lod_distance(gen)
    out = []
    for cx, cz in chunks:
        cg = chunk_ground(gen, cx, cz)
        box = chunk_box(gen, cg)
        d = float(cam.effective(np.linalg.norm(np.clip(eye, box[:1], box[1:]) - eye, axis=1))[0])
        out.append((ground_level(cg, d, lod), d))
    return out


# -- the cost of a view -------------------------------------------------------------------------


#: the fields of :class:`Things`, in order
THING_FIELDS = ("pos", "radius", "model", "thin", "flora")


@dataclass
class Things:
    """Things drawn with a model: positions (n, 3) metres, bounding radius (n,), model index (n,),
    growth hash (n,) uint64 for thinning and a flora flag (n,) (entities: 0 and False)."""

    pos: np.ndarray
    radius: np.ndarray
    model: np.ndarray
    thin: np.ndarray
    flora: np.ndarray

    @classmethod
    def of(cls, pos, radius, model, thin=None) -> Things:
        n = len(model)
        return cls(
            np.asarray(pos, dtype=np.float64).reshape(-1, 3),
            np.asarray(radius, dtype=np.float64),
            np.asarray(model, dtype=np.int64),
            np.zeros(n, dtype=np.uint64) if thin is None else thin,
            np.zeros(n, dtype=bool) if thin is None else np.ones(n, dtype=bool),
        )

    @classmethod
    def join(cls, parts: list[Things]) -> Things:
        return cls(*(np.concatenate([getattr(t, f) for t in parts]) for f in THING_FIELDS))


def entity_position(e: Mapping[str, Any], by: Mapping[str, Mapping[str, Any]]) -> np.ndarray:
    """Where the drawing model puts entity *e* (metres): its position plus its parents' (*by*:
    the entities by name), up to 16 parents."""
    p = np.asarray(e["position"], dtype=np.float64)
    parent, hops = e.get("parent") or "", 0
    while parent in by and hops < 16:
        p = p + np.asarray(by[parent]["position"], dtype=np.float64)
        parent, hops = by[parent].get("parent") or "", hops + 1
    return p


@dataclass
class Judged:
    """What the engine does with n things, each seen from its view (:meth:`Drawer.judge`):
    ``inside`` the view volume (else culled), ``level`` of the model drawn, ``too_far`` (inside,
    past draw_distance), ``thinned`` (inside, near enough, a plant left out by thinning),
    ``triangles`` drawn (0 when not drawn)."""

    inside: np.ndarray
    level: np.ndarray
    too_far: np.ndarray
    thinned: np.ndarray
    triangles: np.ndarray


@dataclass
class ChunkDraw:
    """Everything of one chunk the view costing needs (cached per chunk by :class:`Drawer`)."""

    ground: ChunkGround
    box: np.ndarray  # (2, 3) metres: min, max
    things: Things  # scatter and vegetation prefabs' entities, and plants
    structures: tuple[Any, ...]  # structures (sites, places) whose footprint touches the chunk
    #: (3, len(GRIDS)) triangles of the ground, skirts and water at level j (the coarsest drawn
    #: level for j beyond them)
    table: np.ndarray = field(repr=False)
    #: (2, 3) metres: min and max of the things' bounding spheres (zeros when none)
    things_box: np.ndarray = field(repr=False)


@dataclass
class ChunkBlock:
    """The drawing figures of a rectangle of chunks, as arrays over its chunks (row by row; what
    :class:`ChunkDraw` holds of each, without an object per chunk): :meth:`Drawer.block`."""

    cx0: int
    cz0: int
    nx: int
    nz: int
    table: np.ndarray  # (k, 3, len(GRIDS)): ChunkDraw.table of each
    levels: np.ndarray  # (k,) ground levels drawn
    boxes: np.ndarray  # (k, 2, 3) ChunkDraw.box
    things_box: np.ndarray  # (k, 2, 3) ChunkDraw.things_box
    things: Things  # the things of every chunk, chunk after chunk
    cuts: np.ndarray  # (k + 1,) the things of chunk i are things[cuts[i]:cuts[i + 1]]
    #: every (chunk, structure touching it) pair: the chunk's number, sorted, and the structure
    #: (each chunk's in the layers' order: :meth:`touching`)
    touch_chunk: np.ndarray
    touch_structure: list[Any]
    centre: np.ndarray  # (k,) mm: the focus height of each chunk's centre cell (focus_origin)
    grounds: list[ChunkGround] | None = None
    #: (6, len(things)) the part n0 . p + r of each plane of the camera at the origin at each
    #: thing (:func:`_point_sides`): made once, when first needed (:meth:`Drawer._rows`)
    sides: np.ndarray | None = None

    def keys(self) -> list[tuple[int, int]]:
        return [(self.cx0 + i, self.cz0 + j) for j in range(self.nz) for i in range(self.nx)]

    def touching(self, i: int) -> tuple[Any, ...]:
        """The structures touching chunk *i* (:attr:`ChunkDraw.structures`), in the layers' order."""
        a, b = np.searchsorted(self.touch_chunk, [i, i + 1]).tolist()
        return tuple(self.touch_structure[a:b])


#: the figures of a view (:meth:`Drawer.view`), in its dict's order
VIEW_FIGURES = (
    "chunks",
    "chunks_drawn",
    "ground",
    "skirts",
    "water",
    "flora",
    "entities",
    "plants_drawn",
    "entities_drawn",
    "triangles",
)


@dataclass
class Loaded:
    """The chunks some views may have loaded, as :meth:`Drawer._figures` needs them: each view's
    K slots (``slot_chunk`` (V, K): the number of the chunk there, -1 outside the world) and of
    each of the nk chunks its box, ground levels drawn, :attr:`ChunkDraw.table`, things (their
    count, the box of their spheres, ``things_of(numbers)``: the things of those chunks joined
    in that order) and structures (``structure_counts`` (nk,) and ``structure_ids``, chunk after
    chunk, into ``structures``, each structure once); ``maybe``: see there."""

    slot_chunk: np.ndarray
    boxes: np.ndarray  # (nk, 2, 3)
    levels: np.ndarray  # (nk,)
    table: np.ndarray  # (nk, 3, len(GRIDS))
    counts: np.ndarray  # (nk,)
    things_box: np.ndarray  # (nk, 2, 3)
    things_of: Callable[[np.ndarray], Things]
    structure_counts: np.ndarray  # (max(1, nk),)
    structure_ids: np.ndarray
    structures: list[Any]
    #: (things of each structure (counts), all joined): made when first needed
    structure_things: tuple[np.ndarray, Things] | None = None
    #: (start, end, things' arrays) of the structures in the compiled views' pool (StructurePool.take)
    pooled: tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]] | None = None
    #: (6, n) n0 . p + r of each of those things (:func:`_point_sides`): made when first needed
    structure_sides: np.ndarray | None = None
    #: (K,) bool or None: the slots whose chunk or things some view may see (the others are
    #: outside a plane of every view's volume: culled without a test)
    maybe: np.ndarray | None = None
    #: the largest coordinate of the boxes and things' boxes (made when first needed)
    big: float | None = None
    #: what :meth:`Drawer._maybe_seen` takes of the boxes (made when first needed)
    extremes: list[np.ndarray] | None = None
    #: the planes' parts at the boxes (:meth:`Drawer._box_sides`, made when first needed)
    sides: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    #: (the things of every chunk, chunk after chunk; (nk + 1,) the things of chunk i are
    #: [cuts[i], cuts[i + 1]) of them) or None (then ``things_of`` the chunks a batch uses)
    joined: tuple[Things, np.ndarray] | None = None
    #: ``sides_of(n0)``: (6, n) n0 . p + r of each thing of ``joined`` (:func:`_point_sides`)
    sides_of: Callable[[np.ndarray], np.ndarray] | None = None
    thing_sides: np.ndarray | None = None  # (what sides_of gave, made when first needed)


class ViewColumns:
    """Views as columns: focus cells [xs, zs], their figures in each set of loaded chunks (``figs``
    (sets, 10, V) of :data:`VIEW_FIGURES`; ``sets``: kept sides, the window first) and their names
    (``name(v)``). Each view is the set drawing the most (the first such), as :meth:`Drawer.view`
    gives it; :meth:`dicts` (or :meth:`view`) makes the dicts."""

    def __init__(
        self, xs: np.ndarray, zs: np.ndarray, figs: np.ndarray, sets: list[tuple[int, int]], name: Callable[[int], str]
    ):
        self.xs, self.zs, self.name = xs, zs, name
        V = len(xs)
        self.best = figs[:, 9, :].argmax(axis=0) if V else np.zeros(0, dtype=np.int64)
        self.figs = figs[self.best, :, np.arange(V)]  # (V, 10)
        self.sides = np.asarray(sets, dtype=np.int64)[self.best] if V else np.zeros((0, 2), dtype=np.int64)
        self.window = figs[0][[0, 9]].T if V else np.zeros((0, 2), dtype=np.int64)  # (V, 2) chunks, triangles

    def __len__(self) -> int:
        return len(self.xs)

    @property
    def triangles(self) -> np.ndarray:
        return self.figs[:, 9]

    def view(self, v: int) -> dict[str, Any]:
        """The dict of view v (:meth:`Drawer.view`'s)."""
        side = self.sides[v].tolist() if self.best[v] else [0, 0]
        return {
            "name": self.name(v),
            "focus": [int(self.xs[v]), int(self.zs[v])],
            **dict(zip(VIEW_FIGURES, self.figs[v].tolist(), strict=True)),
            "kept": side,
            "window": {"chunks": int(self.window[v, 0]), "triangles": int(self.window[v, 1])},
        }

    def dicts(self) -> list[dict[str, Any]]:
        return [self.view(v) for v in range(len(self))]

    def focus(self, v: int) -> list[int]:
        return [int(self.xs[v]), int(self.zs[v])]


class StructurePool:
    """The things of the structures the compiled views met (:func:`_compiled_figures`), each
    placed once and kept in growing arrays by name: structure *s*'s things at ``[start, end)``.
    Emptied when the new ones would take it past :data:`POOL_THINGS` things (a pass over the world
    meets each structure in a few rows of chunks only), so that it holds at most that many or
    the structures of one gathering of rows (its arrays up to twice that: they grow by doubling)."""

    def __init__(self) -> None:
        self.at: dict[str, tuple[int, int]] = {}
        self.n = 0
        self.arrays = _things_arrays(_no_things())

    def _grow(self, more: int) -> None:
        if self.n + more <= len(self.arrays[0]):
            return
        cap = max(2 * len(self.arrays[0]), self.n + more, 1024)
        grown = []
        for a in self.arrays:
            b = np.empty((cap,) + a.shape[1:], dtype=a.dtype)
            b[: self.n] = a[: self.n]
            grown.append(b)
        self.arrays = tuple(grown)

    def _put(self, names: list[str], counts: np.ndarray, things: Things) -> None:
        self._grow(len(things.model))
        n = self.n
        for a, f in zip(self.arrays, THING_FIELDS, strict=True):
            a[n : n + len(things.model)] = getattr(things, f)
        for name, c in zip(names, counts.tolist(), strict=True):
            self.at[name] = (n, n + c)
            n += c
        self.n = n

    def take(self, drawer: Drawer, structures: list[Any]) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """(start, end) of each of *structures*' things and the arrays holding them (pos, radius,
        model, thin, flora: :func:`_things_arrays`), the new ones placed now (those not turned,
        prefab by prefab, with :meth:`Drawer._placed`; the others as :meth:`Drawer._structure`)."""
        new = [st for st in structures if st.name not in self.at]
        if self.n + sum(drawer._structure_size(st) for st in new) > POOL_THINGS:
            self.at, self.n = {}, 0
            self.arrays = tuple(np.empty((0,) + a.shape[1:], dtype=a.dtype) for a in self.arrays)
            new = list(structures)
        plain: dict[str, list[Any]] = {}
        for st in new:  # (each once: the structures of a gathering are numbered once by name)
            if st.rotation % 360 or st.prefab not in drawer.gen.prefabs:
                things = drawer._structure(st)
                self._put([st.name], np.asarray([len(things.model)]), things)
            else:
                plain.setdefault(st.prefab, []).append(st)
        cm = drawer.gen.p.cell_mm
        for prefab in sorted(plain):
            group = plain[prefab]
            tpl = drawer._template(prefab)
            n, t = len(group), len(tpl)
            # the origins as _structure_placed computes them; _placed's things entity by entity,
            # then instance by instance
            ox = (2 * np.asarray([st.x0 for st in group], dtype=np.int64) + [st.fw for st in group]) * cm / 2000.0
            oy = np.asarray([st.level_mm for st in group], dtype=np.int64) / 1000.0
            oz = (2 * np.asarray([st.z0 for st in group], dtype=np.int64) + [st.fd for st in group]) * cm / 2000.0
            got = drawer._placed(prefab, ox, oy, oz)
            order = (np.arange(t)[None, :] * n + np.arange(n)[:, None]).ravel()
            things = Things(*(getattr(got, f)[order] for f in THING_FIELDS))
            self._put([st.name for st in group], np.full(n, t, dtype=np.int64), things)
        span = [self.at[st.name] for st in structures]
        start = np.asarray([a for a, _ in span], dtype=np.int64)
        end = np.asarray([b for _, b in span], dtype=np.int64)
        return start, end, tuple(a[: self.n] for a in self.arrays)


class Drawer:
    """Costs views of one world: chunk data are cached, so many views of one area are cheap.

    ``models`` maps model names to :class:`ModelDraw`; a name not in it draws nothing (and is
    listed in :attr:`missing_models`)."""

    def __init__(self, gen: Generator, models: Mapping[str, ModelDraw], camera: Mapping[str, Any] | None = None):
        self.gen = gen
        self.models = dict(models)
        self.names = sorted(self.models)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.camera = dict(camera) if camera is not None else camera_record(gen.world)
        self._chunks: OrderedDict[tuple[int, int], ChunkDraw] = OrderedDict()
        #: chunks kept (least recently used dropped first; never those a call just asked for)
        self.cache = CHUNK_CACHE
        self._templates: dict[str, list] = {}
        self._roots: dict[str, list[list[float]]] = {}
        #: the things of the structures met lately (least recently used dropped first: a walk over
        #: a large world meets each once, and keeps only those near it)
        self._structs: OrderedDict[str, Things] = OrderedDict()
        self._pool = StructurePool()  # (the compiled views')
        self._persistent_arrays: tuple[np.ndarray, ...] | None = None  # (the compiled views')
        self.missing_models: set[str] = set()
        self._tris = [np.asarray(self.models[n].triangles, dtype=np.int64) for n in self.names]
        self._rad = np.asarray([self.models[n].radius for n in self.names] or [0.0])
        self._at_origin: np.ndarray | None = None  # (6, 4) the planes of the camera at the origin
        self._cull = True  # (False: a camera near straight down, see _near_straight_down)
        self._levels: tuple[np.ndarray, np.ndarray, np.ndarray] | bool | None = None  # _level_table

    # things with models

    def _model_of(self, e: dict) -> int | None:
        """The index of the model an entity draws; None when it draws none (no model, invisible,
        or a model not known: then listed in :attr:`missing_models`)."""
        name = e.get("model") or ""
        if not name or not e.get("visible", True):
            return None
        if name not in self.index:
            self.missing_models.add(name)
            return None
        return self.index[name]

    def _entities(self, ents: list[dict]) -> Things:
        """The things of entity dicts (children at their parent's position + their offset)."""
        by = {e["name"]: e for e in ents}
        pos, rad, mod = [], [], []
        for e in ents:
            mi = self._model_of(e)
            if mi is None:
                continue
            s = max(abs(float(v)) for v in e.get("scale") or (1, 1, 1))
            pos.append(entity_position(e, by))
            rad.append(self._rad[mi] * s)
            mod.append(mi)
        return Things.of(pos, rad, mod)

    def _structure(self, s) -> Things:
        got = self._structs.get(s.name)
        if got is None:
            got = self._structure_placed(s)
            self._structs[s.name] = got
            if len(self._structs) > STRUCTURE_CACHE:
                self._structs.popitem(last=False)
        else:
            self._structs.move_to_end(s.name)
        return got

    def _structure_placed(self, s) -> Things:
        """The things of structure *s*: its prefab's template placed at its origin (the same
        floats as :meth:`_entities` of :func:`~veduta.world.entities.structure_entities`, without
        a dict per entity) when it is not turned, else those entities'."""
        from veduta.world.entities import structure_entities

        if s.rotation % 360 or s.prefab not in self.gen.prefabs:
            return self._entities(structure_entities(self.gen, s))
        cm = self.gen.p.cell_mm
        tpl = self._template(s.prefab)
        roots = self._roots[s.prefab]
        x, y, z = ((2 * s.x0 + s.fw) * cm / 2000.0, metres(s.level_mm), (2 * s.z0 + s.fd) * cm / 2000.0)
        pos: list[tuple[float, float, float]] = []
        for _, _, root, off in tpl:  # as _placed places them, with floats for one origin
            if root >= 0:
                lx, ly, lz = roots[root]
                w = (x + lx * 1 + lz * 0, y + ly, z - lx * 0 + lz * 1)
                pos.append(w if off is None else (off[0] + w[0], off[1] + w[1], off[2] + w[2]))
            else:
                assert off is not None
                pos.append((off[0], off[1], off[2]))
        return Things.of(np.array(pos, dtype=np.float64).reshape(-1, 3), [t[1] for t in tpl], [t[0] for t in tpl])

    def chunk(self, cx: int, cz: int) -> ChunkDraw:
        key = (cx, cz)
        got = self._chunks.get(key)
        if got is None:
            self.prepare([key])
            got = self._chunks[key]
        self._chunks.move_to_end(key)
        return got

    def prepare(self, keys: Iterable[tuple[int, int]]) -> None:
        """Compute the drawing data of these chunks (those not cached) in one pass: rectangles of
        chunks at once (one :meth:`Generator.layers` each, arrays over all their chunks), not
        chunk by chunk. Views then only sum what their chunks hold."""
        todo = sorted({k for k in keys if k not in self._chunks}, key=lambda k: (k[1], k[0]))
        for cx0, cz0, nx, nz in _rectangles(todo, RECT_CHUNKS):
            for key, cd in self._bulk(cx0, cz0, nx, nz):
                self._chunks[key] = cd
        while len(self._chunks) > max(self.cache, len(todo)):  # keep what was just asked for
            self._chunks.popitem(last=False)

    def _template(self, prefab: str, record: Any = None) -> list[tuple[int, float, int, np.ndarray | None]]:
        """The drawn entities of a prefab placed at some origin with rotation 0, as ``(model
        index, radius, root, offset)``, positions as :meth:`_entities` adds them up (the same
        floats): a root entity (``offset`` None) is at ``origin + local``; a child at ``offset +
        position of its root`` (``offset``: its own and its parents' local positions, added in
        order), or at ``offset`` alone when its chain of parents is cut (16 of them, ``root`` -1)."""
        got = self._templates.get(prefab)
        if got is not None:
            return got
        from veduta.world.entities import prefab_instance

        if record is None:
            record = self.gen.prefabs[prefab].record
        ents = prefab_instance(record, "t", (0.0, 0.0, 0.0), 0, {})
        by = {e["name"]: i for i, e in enumerate(ents)}
        out: list[tuple[int, float, int, np.ndarray | None]] = []
        for i, e in enumerate(ents):
            mi = self._model_of(e)
            if mi is None:
                continue
            s = max(abs(float(v)) for v in e.get("scale") or (1, 1, 1))
            radius = float(self._rad[mi] * s)
            parent = e.get("parent") or ""
            if parent not in by:  # a root
                out.append((mi, radius, i, None))
                continue
            off = np.asarray(e["position"], dtype=np.float64)
            root, hops = -1, 0
            while parent in by and hops < 16:
                q = ents[by[parent]]
                if (q.get("parent") or "") not in by:  # its root: at origin + local
                    root = by[parent]
                    break
                off = off + np.asarray(q["position"], dtype=np.float64)
                parent, hops = q.get("parent") or "", hops + 1
            out.append((mi, radius, root, off))
        self._templates[prefab] = out
        self._roots[prefab] = [
            [float(v) for v in (getattr(e, "position", None) or (0, 0, 0))]
            for e in (getattr(record, "entities", None) or [])
        ]
        return out

    def _bulk(self, cx0: int, cz0: int, nx: int, nz: int) -> list[tuple[tuple[int, int], ChunkDraw]]:
        """The :class:`ChunkDraw` of the chunks [cx0, cx0 + nx) x [cz0, cz0 + nz), from one
        :meth:`Generator.layers` of their rectangle (:meth:`block`)."""
        got = self.block(cx0, cz0, nx, nz, objects=True)
        assert got.grounds is not None
        out = []
        for i, key in enumerate(got.keys()):
            a, b = got.cuts[i], got.cuts[i + 1]
            th = Things(*(getattr(got.things, f)[a:b] for f in ("pos", "radius", "model", "thin", "flora")))
            out.append(
                (
                    key,
                    ChunkDraw(got.grounds[i], got.boxes[i], th, got.touching(i), got.table[i], got.things_box[i]),
                )
            )
        return out

    def block(self, cx0: int, cz0: int, nx: int, nz: int, objects: bool = False) -> ChunkBlock:
        """The drawing figures of the chunks [cx0, cx0 + nx) x [cz0, cz0 + nz) as arrays
        (:class:`ChunkBlock`), from one :meth:`Generator.layers` of their rectangle; ``objects``:
        with each chunk's :class:`ChunkGround` too."""
        from numpy.lib.stride_tricks import sliding_window_view

        from veduta.world.cover import SCATTER

        gen, p = self.gen, self.gen.p
        c = p.chunk
        x0, z0, W, H = cx0 * c, cz0 * c, nx * c, nz * c
        lay = gen.layers(x0, z0, W, H, points=True)
        water, points = lay.water_vertex, lay.points
        assert water is not None and points is not None
        k = nx * nz
        wet = gen.terrain.wet_possible(x0, z0, x0 + W, z0 + H)
        table = np.zeros((k, 3, len(GRIDS)), dtype=np.int64)
        figures: dict[str, np.ndarray] = {}
        grounds: list[ChunkGround] = []
        # the compiled kernels (veduta/world/chunk_kernels.py) where wanted (the pass over the
        # world: only the figures kept), each chunk's heights read in place (no stack copied)
        compiled = not objects and jit.enabled()
        if compiled:
            grids = grids_for(c)
            got = _ground_kernel(
                lay.ground,
                lay.biome,
                water if wet else None,
                grids,
                nx,
                table,
                lambda a, b: gen.terrain.wet_possible(x0 + a * c, z0, x0 + b * c, z0 + H),
            )
            figures["levels"], figures["y_min"], figures["y_max"] = got["levels"], got["y_min"], got["y_max"]
            centre = got["centre"]
        else:
            keys = [(cx0 + i, cz0 + j) for j in range(nz) for i in range(nx)]
            G = sliding_window_view(lay.ground, (c + 1, c + 1))[::c, ::c].reshape(k, c + 1, c + 1)
            Wl = None  # (no water can reach the rectangle: its levels are not copied chunk by chunk)
            if wet:
                Wl = sliding_window_view(water, (c + 1, c + 1))[::c, ::c].reshape(k, c + 1, c + 1)
            # the biomes chunk by chunk, as bytes when only the figures are kept (compared, never
            # indexed with)
            bi = lay.biome if objects or len(p.biome_names) > 256 else lay.biome.astype(np.uint8)
            B = bi.reshape(nz, c, nx, c).transpose(0, 2, 1, 3).reshape(k, c, c)
            grounds = chunk_grounds(gen, keys, G, B, Wl, table, None if objects else figures)
            if objects:
                figures["levels"] = np.asarray([len(cg.grids) for cg in grounds], dtype=np.int64)
                figures["y_min"] = np.asarray([cg.y_min for cg in grounds], dtype=np.int64)
                figures["y_max"] = np.asarray([cg.y_max for cg in grounds], dtype=np.int64)
            h = c // 2  # focus_origin's height at each chunk's centre cell
            centre = (G[:, h, h] + G[:, h + 1, h + 1]) >> 1
        # the boxes (chunk_box's arithmetic, with arrays)
        cm = p.cell_mm
        kx = np.tile(np.arange(cx0, cx0 + nx, dtype=np.int64), nz) * c * cm / 1000.0
        kz = np.repeat(np.arange(cz0, cz0 + nz, dtype=np.int64), nx) * c * cm / 1000.0
        side = c * cm / 1000.0
        ylo = figures["y_min"] / 1000.0
        yhi = figures["y_max"] / 1000.0
        boxes = np.stack([np.stack([kx, ylo, kz], axis=1), np.stack([kx + side, yhi, kz + side], axis=1)], axis=1)
        # the structures touching each chunk, in the layers' order (no list per chunk: a block of
        # the pass over the world holds thousands of chunks)
        pairs: list[tuple[int, Any]] = []
        for st in lay.structures:
            for j in range(max(st.z0 // c, cz0), min(-(-st.z1 // c), cz0 + nz)):
                for i in range(max(st.x0 // c, cx0), min(-(-st.x1 // c), cx0 + nx)):
                    pairs.append(((j - cz0) * nx + (i - cx0), st))
        pairs.sort(key=lambda q: q[0])  # stable: each chunk's in the layers' order

        # things, in chunk order
        assert lay.taken is not None
        groups: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}  # the prefab cells, rule by rule
        for code, idx, tj, ti in lay.taken:  # (scatter first), each rule's row by row
            rules = p.scatter if code == SCATTER else p.vegetation
            groups.setdefault(rules[idx].prefab, []).append((tj, ti))
        tboxes = np.zeros((k, 2, 3))
        things, cuts = (self._things_compiled if compiled else self._things_numpy)(lay, groups, nx, tboxes)
        return ChunkBlock(
            cx0,
            cz0,
            nx,
            nz,
            table,
            figures["levels"],
            boxes,
            tboxes,
            things,
            cuts,
            np.asarray([q[0] for q in pairs], dtype=np.int64),
            [q[1] for q in pairs],
            centre,
            grounds if objects else None,
        )

    def _things_numpy(
        self, lay, groups: dict[str, list[tuple[np.ndarray, np.ndarray]]], nx: int, tboxes: np.ndarray
    ) -> tuple[Things, np.ndarray]:
        """(things, cuts) of :meth:`block`: the things of the prefab instances (prefabs by name,
        their cells in ``groups``' order) then the plants, each with its chunk, put in chunk order
        (a stable sort: each chunk's in that order); the things of chunk i are ``cuts[i]`` to
        ``cuts[i + 1]``. ``tboxes`` (k, 2, 3) gets the box of each chunk's things' spheres."""
        p = self.gen.p
        c, k = p.chunk, len(tboxes)

        def cid_of(jj: np.ndarray, ii: np.ndarray) -> np.ndarray:  # the chunk of cells [jj, ii]
            if c & (c - 1) == 0:  # (a power of two: shifts, not divisions)
                s = c.bit_length() - 1
                return (jj >> s) * nx + (ii >> s)
            return (jj // c) * nx + ii // c

        parts: list[tuple[np.ndarray, Things]] = []
        for prefab in sorted(groups):
            jj = np.concatenate([g[0] for g in groups[prefab]])
            ii = np.concatenate([g[1] for g in groups[prefab]])
            parts.append(self._instances(prefab, lay, jj, ii, cid_of(jj, ii)))
        for pa in self._drawn_points(lay.points):  # (plants grow off structures' footprints)
            n = len(pa.j)
            mi = self.index[p.vegetation[pa.rule].model]
            pos = np.stack([pa.x_mm, pa.y_mm, pa.z_mm], axis=-1) / 1000.0
            parts.append(
                (cid_of(pa.j, pa.i), Things.of(pos, self._rad[mi] * pa.scale / 1000.0, np.full(n, mi), pa.hash))
            )
        if not parts:
            return Things.of(np.zeros((0, 3)), [], []), np.zeros(k + 1, dtype=np.int64)
        cid = np.concatenate([q[0] for q in parts])
        joined = Things.join([q[1] for q in parts])
        # the same stable order, sorted as 16-bit keys when the chunks allow (a radix sort)
        order = np.argsort(cid.astype(np.int16) if k <= 1 << 15 else cid, kind="stable")
        cuts = np.concatenate([[0], np.cumsum(np.bincount(cid, minlength=k))])
        things = Things(*(np.take(getattr(joined, f), order, axis=0) for f in THING_FIELDS))
        has = np.flatnonzero(cuts[1:] > cuts[:-1])
        if len(has):
            tboxes[has, 0] = np.minimum.reduceat(things.pos - things.radius[:, None], cuts[has], axis=0)
            tboxes[has, 1] = np.maximum.reduceat(things.pos + things.radius[:, None], cuts[has], axis=0)
        return things, cuts

    def _things_compiled(
        self, lay, groups: dict[str, list[tuple[np.ndarray, np.ndarray]]], nx: int, tboxes: np.ndarray
    ) -> tuple[Things, np.ndarray]:
        """(things, cuts) of :meth:`block` with the compiled kernels (veduta.world.chunk_kernels):
        the prefab instances (prefabs by name, their cells in ``groups``' order) then the plants,
        counted by chunk, then each written at its place in chunk order (the order of the numpy
        path's stable sort) with :meth:`_placed`'s arithmetic; ``tboxes`` (k, 2, 3) gets the box
        of each chunk's things' spheres."""
        from veduta.world import chunk_kernels as K

        p = self.gen.p
        c, k = p.chunk, len(tboxes)
        grid = (c, K.shift(c), nx)  # (the chunk of a cell: add_counts)
        counts = np.zeros(k, dtype=np.int64)
        prefabs = []
        for prefab in sorted(groups):
            jj = np.concatenate([g[0] for g in groups[prefab]])
            ii = np.concatenate([g[1] for g in groups[prefab]])
            arrays = self._template_arrays(prefab)
            K.add_counts(counts, jj, ii, grid, len(arrays[0]))
            prefabs.append((jj, ii, arrays))
        plants = []
        for pa in self._drawn_points(lay.points):
            K.add_counts(counts, pa.j, pa.i, grid, 1)
            plants.append(pa)
        cuts = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(counts, out=cuts[1:])
        n = int(cuts[-1])
        things = Things(  # (every thing written below)
            np.empty((n, 3)),
            np.empty(n),
            np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.uint64),
            np.empty(n, dtype=bool),
        )
        fill = cuts[:-1].copy()
        centre = lay.centre
        for jj, ii, arrays in prefabs:
            K.place_instances(
                fill,
                jj,
                ii,
                grid,
                centre,
                lay.x0,
                lay.z0,
                p.cell_mm,
                *arrays,
                tuple(getattr(things, f) for f in THING_FIELDS),
            )
        for pa in plants:
            mi = self.index[p.vegetation[pa.rule].model]
            K.place_plants(
                fill,
                pa.j,
                pa.i,
                grid,
                pa.x_mm,
                pa.y_mm,
                pa.z_mm,
                pa.scale,
                pa.hash,
                float(self._rad[mi]),
                mi,
                tuple(getattr(things, f) for f in THING_FIELDS),
            )
        K.things_boxes(things.pos, things.radius, cuts, tboxes)
        return things, cuts

    def _structure_size(self, s) -> int:
        """How many things structure *s* draws (its prefab's template; a turned one or one of a
        prefab not known: those of its entities)."""
        if s.rotation % 360 or s.prefab not in self.gen.prefabs:
            return len(self._structure(s).model)
        return len(self._template(s.prefab))

    def _template_arrays(self, key: str, record: Any = None) -> tuple[np.ndarray, ...]:
        """The template ``key`` (:meth:`_template`) as the kernels take it
        (chunk_kernels.place_instances): (model, radius, kind, root, offset) of each entity, kind 0
        a root at origin + root, 1 a child at offset + that, 2 a child at offset alone."""
        tpl = self._template(key, record)
        roots = self._roots[key]
        zero = np.zeros(3)
        kinds = [0 if off is None else 1 if root >= 0 else 2 for _, _, root, off in tpl]
        return (
            np.asarray([mi for mi, _, _, _ in tpl], dtype=np.int64),
            np.asarray([radius for _, radius, _, _ in tpl], dtype=np.float64),
            np.asarray(kinds, dtype=np.int64),
            np.asarray([roots[root] if root >= 0 else zero for _, _, root, _ in tpl], dtype=np.float64).reshape(-1, 3),
            np.asarray([zero if off is None else off for _, _, _, off in tpl], dtype=np.float64).reshape(-1, 3),
        )

    def _drawn_points(self, points: list[Any]) -> list[Any]:
        """The plant points of :meth:`block` that draw something: those of a rule with a plant
        and a model (its model not known: listed in :attr:`missing_models`, drawn not)."""
        out = []
        for pa in points:
            if not len(pa.j):
                continue
            model = self.gen.p.vegetation[pa.rule].model
            if model not in self.index:
                self.missing_models.add(model)
                continue
            out.append(pa)
        return out

    def _instances(
        self, prefab: str, lay, jj: np.ndarray, ii: np.ndarray, cid: np.ndarray
    ) -> tuple[np.ndarray, Things]:
        """The things of the instances of a prefab at cells (jj, ii) of a rectangle's layers, each
        at its cell's centre on the ground there (rotation 0), with their chunks (``cid``: the
        chunk of each cell)."""
        cm = self.gen.p.cell_mm
        ox = (2 * (lay.x0 + ii) + 1) * cm / 2000.0
        oy = lay.centre[jj, ii] / 1000.0
        oz = (2 * (lay.z0 + jj) + 1) * cm / 2000.0
        tpl = self._template(prefab)
        things = self._placed(prefab, ox, oy, oz)
        return np.tile(cid, len(tpl)), things

    def _placed(self, key: str, ox: np.ndarray, oy: np.ndarray, oz: np.ndarray) -> Things:
        """The things of the template ``key`` placed at origins (ox, oy, oz), rotation 0, entity by
        entity (all instances of the first entity, then of the second, ...)."""
        tpl = self._templates[key]
        roots = self._roots[key]
        n = len(ox)
        pos, rad, mod = [], [], []
        for mi, radius, root, off in tpl:
            if root >= 0:  # prefab_instance's origin + (x cos + z sin, y, -x sin + z cos), rotation 0
                lx, ly, lz = roots[root]
                world = np.stack([ox + lx * 1 + lz * 0, oy + ly, oz - lx * 0 + lz * 1], axis=-1)
                p = world if off is None else off[None, :] + world
            else:
                assert off is not None
                p = np.broadcast_to(off, (n, 3))
            pos.append(p)
            rad.append(np.full(n, radius))
            mod.append(np.full(n, mi))
        if not tpl:
            return Things.of(np.zeros((0, 3)), [], [])
        return Things.of(np.concatenate(pos), np.concatenate(rad), np.concatenate(mod))

    def keys(self, cell: tuple[int, int], kept: bool = True) -> list[tuple[int, int]]:
        """The chunks a view at focus ``cell`` may have loaded (:meth:`view`), by row."""
        sides = KEPT_SIDES if kept else ()
        return sorted(
            set(loaded_chunks(self.gen, cell)).union(*(loaded_chunks(self.gen, cell, k) for k in sides)),
            key=lambda k: (k[1], k[0]),
        )

    def _cameras(self, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool, float, float]:
        """(eyes (V, 3), planes (V, 6, 4), ortho, lens, size) of the world's camera placed at each
        origin: :func:`make_camera` and :meth:`Camera.planes` with arrays (the same operations)."""
        rec = self.camera
        o = origins
        eye = o + np.asarray(rec["position"], dtype=np.float64)
        f = o + np.asarray(rec["look_at"], dtype=np.float64) - eye
        f = f / np.linalg.norm(f, axis=1)[:, None]
        up = np.tile(np.array([0.0, 1.0, 0.0]), (len(o), 1))
        down = np.linalg.norm(np.cross(f, up), axis=1) < 1e-6
        up[down] = np.array([0.0, 0.0, -1.0])
        r = np.cross(f, up)
        r = r / np.linalg.norm(r, axis=1)[:, None]
        u = np.cross(r, f)
        ortho = rec["type"] == "orthographic"
        near, far = rec["near"], rec["far"]

        def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return (a * b).sum(axis=1)  # as a @ b of one view

        out = [(f, -dot(f, eye + near * f)), (-f, dot(f, eye + far * f))]
        if ortho:
            hw, hh = rec["size"] * ASPECT / 2, rec["size"] / 2
            out += [
                (r, -dot(r, eye - hw * r)),
                (-r, dot(r, eye + hw * r)),
                (u, -dot(u, eye - hh * u)),
                (-u, dot(u, eye + hh * u)),
            ]
        else:
            tv = math.tan(math.radians(rec["fov_deg"]) / 2)
            th = tv * ASPECT
            for edge, axis in ((f - th * r, u), (f + th * r, u), (f - tv * u, r), (f + tv * u, r)):
                n = np.cross(edge, axis)
                n = n / np.linalg.norm(n, axis=1)[:, None]
                n = np.where((dot(n, f) < 0)[:, None], -n, n)
                out.append((n, -dot(n, eye)))
        planes = np.stack([np.concatenate([n, d[:, None]], axis=1) for n, d in out], axis=1)
        lens = lens_of(rec["fov_deg"])
        return eye, planes, ortho, lens, float(rec["size"])

    def _drawn(
        self,
        P: np.ndarray,
        R: np.ndarray,
        M: np.ndarray,
        H: np.ndarray,
        F: np.ndarray,
        eye: np.ndarray,
        planes: np.ndarray,
        view: np.ndarray,
        ortho: bool,
        lens: float,
        size: float,
        inside: np.ndarray | None = None,
    ) -> np.ndarray:
        """Triangles each thing costs in its view (``view``: its index into ``eye`` and
        ``planes``); ``inside``: things known to be inside the view volume (not tested again)."""
        return self._judge(P, R, M, H, F, eye, planes, view, ortho, lens, size, inside).triangles

    def _judge(
        self,
        P: np.ndarray,
        R: np.ndarray,
        M: np.ndarray,
        H: np.ndarray,
        F: np.ndarray,
        eye: np.ndarray,
        planes: np.ndarray,
        view: np.ndarray,
        ortho: bool,
        lens: float,
        size: float,
        inside: np.ndarray | None = None,
    ) -> Judged:
        """:meth:`_drawn`, with what was decided for each thing (:class:`Judged`)."""
        n = len(M)
        out = Judged(
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=bool),
            np.zeros(n, dtype=np.int64),
        )
        sel, tris, level, near, keep = self._drawn_sel(
            Things(P, R, M, H, F), np.arange(n), view, eye, planes, ortho, lens, size, inside
        )
        out.inside[sel] = True
        out.triangles[sel] = tris
        out.level[sel] = level
        out.too_far[sel] = ~near
        out.thinned[sel] = near & ~keep
        return out

    def _drawn_sel(
        self,
        things: Things,
        ids: np.ndarray,
        view: np.ndarray,
        eye: np.ndarray,
        planes: np.ndarray,
        ortho: bool,
        lens: float,
        size: float,
        inside: np.ndarray | None = None,
        table: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_judge` of the things ``things[ids]``, each in its view, for those inside the view
        volume: (their positions in ``ids``, the triangles each costs, its model's level, whether
        it is within draw_distance, whether it is drawn). Only what a thing's test needs is
        gathered for every thing, the rest for those inside. ``table``: every model's level at
        once from :meth:`_level_table` (the same comparisons), not model by model."""
        n = len(ids)
        none = np.zeros(0, dtype=np.int64)
        if not n:
            return none, none, none, none.astype(bool), none.astype(bool)
        inside = np.zeros(n, dtype=bool) if inside is None else inside.copy()
        test = np.flatnonzero(~inside)
        if len(test):
            tt, tv = ids[test], view[test]
            px, py, pz = (things.pos[:, j].take(tt) for j in range(3))
            nr = -things.radius.take(tt)
            cols = planes.transpose(1, 2, 0).copy()  # (planes, 4, views): each column one plane's
            keep = np.ones(len(test), dtype=bool)
            for k in range(planes.shape[1]):  # each plane tests the things inside the ones before
                a, b, c, d = (cols[k, j].take(tv) for j in range(4))
                keep &= (px * a + py * b + pz * c + d) >= nr
                if 4 * int(keep.sum()) < 3 * len(keep):  # a quarter out: those are left
                    test, tv, px, py, pz, nr = (q[keep] for q in (test, tv, px, py, pz, nr))
                    keep = np.ones(len(test), dtype=bool)
            inside[test[keep]] = True
        sel_all = np.flatnonzero(inside)
        k = len(sel_all)
        if not k:
            return sel_all, none, none, none.astype(bool), none.astype(bool)
        g = ids[sel_all]
        F, H = things.flora[g], things.thin[g]
        gap = things.pos.take(g, axis=0) - eye.take(view[sel_all], axis=0)
        d = np.maximum(0.0, _lengths(gap) - things.radius[g])
        de_all = np.full(d.shape, ORTHO_FACTOR * size) if ortho else d * lens
        Ms = things.model[g]
        tab = self._level_table() if table else None
        if tab is not None:
            starts, tri_tab, dd = tab
            levels = np.zeros(k, dtype=np.int64)
            for col in starts:  # (each model's j-th start, +inf past its last)
                levels += col.take(Ms) <= de_all
            ddm = dd.take(Ms)
            nears = (ddm <= 0) | (de_all < ddm)
            keeps = nears & (~F | thin_keep(H, levels))
            tris = tri_tab.take(Ms * tri_tab.shape[1] + levels)
            return sel_all, np.where(keeps, tris, 0), levels, nears, keeps
        tris, levels = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
        nears, keeps = np.zeros(k, dtype=bool), np.zeros(k, dtype=bool)
        for mi in np.unique(Ms).tolist():
            pick = np.flatnonzero(Ms == mi)
            de = de_all[pick]
            model = self.models[self.names[mi]]
            level = model.level(de)
            t = self._tris[mi][level]
            near = model.drawn(de)
            keep = near & (~F[pick] | thin_keep(H[pick], level))
            tris[pick] = np.where(keep, t, 0)
            levels[pick], nears[pick], keeps[pick] = level, near, keep
        return sel_all, tris, levels, nears, keeps

    def _level_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(starts (L, M) the distances each model's levels start at, +inf past its last;
        triangles (M, L + 1) of each level, 0 past its last; draw_distance (M,)): what
        :meth:`ModelDraw.level` and :meth:`ModelDraw.drawn` decide, for every model at once (a
        level is how many starts are at most the distance: ``searchsorted`` of sorted starts).
        None when some model's starts are not sorted (then model by model)."""
        if self._levels is None:
            ms = [self.models[n] for n in self.names]
            width = max([len(m.distances) for m in ms] + [0])
            starts = np.full((width, max(1, len(ms))), np.inf)
            tris = np.zeros((max(1, len(ms)), width + 1), dtype=np.int64)
            ok = True
            for i, m in enumerate(ms):
                d = np.asarray(m.distances, dtype=np.float64)
                ok = ok and bool((d[1:] >= d[:-1]).all() and not np.isnan(d).any())
                starts[: len(d), i] = d
                tris[i, : len(self._tris[i])] = self._tris[i]
            dd = np.asarray([m.draw_distance for m in ms] or [0.0], dtype=np.float64)
            self._levels = (starts, tris, dd) if ok else False
        return self._levels if isinstance(self._levels, tuple) else None

    def judge(self, cam: Camera, things: Things) -> Judged:
        """What the engine does with each thing seen from *cam*: culled when the sphere around its
        model's bounds lies wholly outside the view volume; else its model's level by effective
        distance to the sphere, nothing past draw_distance, flora thinned (:func:`thin_keep`).
        The same decisions as :meth:`view` makes."""
        n = len(things.model)
        return self._judge(
            things.pos,
            things.radius,
            things.model,
            things.thin,
            things.flora,
            np.asarray([cam.eye], dtype=np.float64),
            cam.planes()[None],
            np.zeros(n, dtype=np.int64),
            cam.ortho,
            cam.lens,
            cam.size,
        )

    def chunks_seen(self, cam: Camera, chunks: list[ChunkDraw]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(visible (n,) bool, effective distance (n,) metres, ground level (n,)) of chunks seen
        from *cam*: a chunk is culled when its box lies wholly outside the view volume; its ground
        is drawn at the level of its box's nearest point's effective distance (:func:`ground_level`)."""
        if not chunks:
            return np.zeros(0, dtype=bool), np.zeros(0), np.zeros(0, dtype=np.int64)
        eye = np.asarray(cam.eye)
        boxes = np.stack([ch.box for ch in chunks])  # (n, 2, 3)
        visible = _boxes_visible(cam.planes(), boxes)
        dist = cam.effective(np.linalg.norm(np.clip(eye, boxes[:, 0], boxes[:, 1]) - eye, axis=1))
        lod = lod_distance(self.gen)
        level = np.array(
            [ground_level(ch.ground, float(d), lod) for ch, d in zip(chunks, dist.tolist(), strict=True)],
            dtype=np.int64,
        )
        return visible, dist, level

    def _view_batch(self, cells: list[tuple[str, tuple[int, int]]], kept: bool = True) -> list[dict[str, Any]]:
        """:meth:`view` of many cells with arrays over all of them (their chunks prepared, each an
        object: :meth:`chunk`)."""
        gen, p = self.gen, self.gen.p
        e = p.extent
        V = len(cells)
        xs = np.asarray([cell[0] for _, cell in cells], dtype=np.int64)
        zs = np.asarray([cell[1] for _, cell in cells], dtype=np.int64)
        # focus_origin: the cell's centre on the ground there
        g = gen.heights_at(np.concatenate([xs, xs + 1]), np.concatenate([zs, zs + 1]))
        # the chunks each view may have loaded: slots (ox, oz) around its focus's chunk
        ox, oz, ccx, ccz, inside = self._slots(xs, zs, kept)
        K = len(ox)
        code = (ccz + e) * (2 * e) + (ccx + e)  # a chunk's number, row by row
        uniq, inv = np.unique(np.where(inside, code, -1), return_inverse=True)
        first = 1 if len(uniq) and uniq[0] == -1 else 0
        keys = [(int(u % (2 * e)) - e, int(u // (2 * e)) - e) for u in uniq[first:].tolist()]
        chunks = [self.chunk(cx, cz) for cx, cz in keys]
        slot_chunk = np.where(inside, inv.reshape(V, K) - first, -1)
        # the structures of each chunk, chunk after chunk (each numbered once)
        snames: dict[str, int] = {}
        sobj: list[Any] = []
        cs: list[int] = []
        ns = np.zeros(max(1, len(chunks)), dtype=np.int64)
        for i, ch in enumerate(chunks):
            ns[i] = len(ch.structures)
            for st in ch.structures:
                got = snames.get(st.name)
                if got is None:
                    got = snames[st.name] = len(sobj)
                    sobj.append(st)
                cs.append(got)

        def things_of(used: np.ndarray) -> Things:
            return Things.join([chunks[i].things for i in used.tolist()])

        loaded = Loaded(
            slot_chunk,
            np.stack([ch.box for ch in chunks]) if chunks else np.zeros((0, 2, 3)),
            np.asarray([len(ch.ground.grids) for ch in chunks], dtype=np.int64),
            np.stack([ch.table for ch in chunks]) if chunks else np.zeros((0, 3, len(GRIDS)), dtype=np.int64),
            np.asarray([len(ch.things.model) for ch in chunks], dtype=np.int64),
            np.stack([ch.things_box for ch in chunks]) if chunks else np.zeros((0, 2, 3)),
            things_of,
            ns,
            np.asarray(cs, dtype=np.int64),
            sobj,
        )
        figs, sets = self._figures(xs, zs, (g[:V] + g[V:]) >> 1, ox, oz, loaded, kept)
        names = [name for name, _ in cells]
        return ViewColumns(xs, zs, figs, sets, lambda v: names[v]).dicts()

    def _figures(
        self,
        xs: np.ndarray,
        zs: np.ndarray,
        ys: np.ndarray,
        ox: np.ndarray,
        oz: np.ndarray,
        loaded: Loaded,
        kept: bool,
    ) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The figures of views at focus cells [xs, zs] whose cell centres' ground is at ``ys`` (mm),
        their K slots ``(ox, oz)`` (:meth:`_slots`) holding the chunks ``loaded`` says: ``(figs
        (sets, 10, V) int64 of :data:`VIEW_FIGURES`, the sets of loaded chunks as kept sides, the
        window (0, 0) first)``."""
        gen, p = self.gen, self.gen.p
        cm = p.cell_mm
        V, K = len(xs), len(ox)
        origins = np.stack([(2 * xs + 1) * cm / 2000.0, ys / 1000.0, (2 * zs + 1) * cm / 2000.0], axis=1)
        # the sets of loaded chunks: the window, and with each pair of kept sides
        sets = [(0, 0)] + (list(KEPT_SIDES) if kept else [])
        if self._compiled(loaded):  # (chunk_views: the compiled loop, view by view)
            eye, planes, ortho, lens, size = _compiled_cameras(self, origins)
            return _compiled_figures(self, eye, planes, ortho, lens, size, ox, oz, loaded, sets, origins), sets
        eye, planes, ortho, lens, size = self._cameras(origins)
        view = int(getattr(gen.world, "view", 1) or 1)
        slot_chunk = loaded.slot_chunk
        # ground: culled by its box, else at the level of its nearest point's effective distance
        boxes = loaded.boxes
        levels = np.concatenate([loaded.levels, [0]]).astype(np.int64)[:, None]
        tri = loaded.table.transpose(1, 0, 2)
        vv, kk = np.nonzero(slot_chunk >= 0)
        ci = slot_chunk[vv, kk]
        every = vv, kk, ci  # every loaded (view, slot): structures
        if loaded.maybe is not None:  # the others are outside the view volume for every view
            keep = loaded.maybe[kk]
            vv, kk, ci = vv[keep], kk[keep], ci[keep]
        # the planes of the camera at the origin, moved to each view's origin, stand for each
        # view's own within ``band`` (None: no shortcut, each test as the reference makes it)
        fast = loaded.maybe is not None  # (chunk_views; the reference tests each thing in full)
        if loaded.big is None:  # (the same for every batch of these rows)
            loaded.big = max(float(np.abs(boxes).max(initial=0.0)), float(np.abs(loaded.things_box).max(initial=0.0)))
        big = loaded.big
        sure = self._sure_planes(origins, planes, big) if fast else None
        if sure is not None:
            n0, dv, band = sure
            box0, hi0, lo0 = self._box_sides(loaded, n0)
            least = _least_side(box0, dv, ci, vv)
            visible = least > band
            unsure = np.flatnonzero((least <= band) & (least >= -band))
        else:
            unsure = np.arange(len(vv))
            visible = np.zeros(len(vv), dtype=bool)
        if len(unsure):  # as the reference tests them
            uv, box = vv[unsure], boxes[ci[unsure]]
            n = planes[uv, :, :3]
            far = np.where(n >= 0, box[:, None, 1, :], box[:, None, 0, :])
            visible[unsure] = ((far * n).sum(axis=2) + planes[uv, :, 3] >= 0).all(axis=1)
        gv, gk, gc = vv[visible], kk[visible], ci[visible]
        box = boxes[gc]
        near = np.clip(eye[gv], box[:, 0], box[:, 1])
        dist = _lengths(near - eye[gv])
        dist = np.full(dist.shape, ORTHO_FACTOR * size) if ortho else dist * lens
        lod = lod_distance(gen)
        lev = np.zeros(len(gv), dtype=np.int64)
        for j in range(1, len(GRIDS)):  # ground_level: k from lod x 2^(k-1), the coarsest beyond
            lev = np.where(dist >= lod * 2.0 ** (j - 1), j, lev)
        lev = np.minimum(lev, levels[gc, 0] - 1)
        ground = np.zeros((3, V, K), dtype=np.int64)
        for kind in range(3):
            ground[kind, gv, gk] = tri[kind, gc, lev]
        vis = np.zeros((V, K), dtype=bool)
        vis[gv, gk] = True
        # things of the chunks: (view, slot) pairs expanded to their things; a chunk whose things
        # (spheres) are all outside a plane of the view's volume is skipped whole, one whose
        # things are all inside every plane needs no plane test
        counts = np.concatenate([loaded.counts, [0]]).astype(np.int64)
        tb = loaded.things_box if len(loaded.things_box) else np.zeros((1, 2, 3))
        if sure is not None:  # (margin band, far above SURE)
            some = np.flatnonzero(counts[ci] > 0)  # (the others are not used)
            out_all = np.ones(len(vv), dtype=bool)
            out_all[some] = _least_side(hi0, dv, ci[some], vv[some]) < -band
            some = some[~out_all[some]]
            in_all = np.zeros(len(vv), dtype=bool)
            in_all[some] = _least_side(lo0, dv, ci[some], vv[some]) > band
        else:
            tbv = tb[ci]
            nrm, dd = planes[vv, :, :3], planes[vv, :, 3]
            hi_side = (np.where(nrm >= 0, tbv[:, None, 1, :], tbv[:, None, 0, :]) * nrm).sum(axis=2) + dd
            lo_side = (np.where(nrm >= 0, tbv[:, None, 0, :], tbv[:, None, 1, :]) * nrm).sum(axis=2) + dd
            out_all = (hi_side < -SURE).any(axis=1)
            in_all = (lo_side > SURE).all(axis=1)
        use = (counts[ci] > 0) & ~out_all
        uv, uk, uc, uin = vv[use], kk[use], ci[use], in_all[use]
        m = counts[uc]
        joined = loaded.joined if sure is not None else None
        if joined is not None:  # the rows' things, joined once: a pair's thing is its number there
            allt, cuts = joined
            first = cuts[uc]
        else:  # the things of the chunks some view uses, joined
            used = np.unique(uc)
            allt = loaded.things_of(used) if len(used) else Things.of(np.zeros((0, 3)), [], [])
            first = np.concatenate([[0], np.cumsum(counts[used])])[:-1][np.searchsorted(used, uc)]
        # (view, thing) pairs: pu the (view, slot) of each, tid its thing, pv its view
        pu = np.repeat(np.arange(len(uc)), m)
        tid = np.arange(len(pu), dtype=np.int64) + (first - (np.cumsum(m) - m)).take(pu)
        pv = uv.take(pu)
        pin = None
        if sure is not None and len(tid):  # each thing against the planes moved to its view
            least = _least_side(self._thing_sides(loaded, allt, n0), dv, tid, pv)
            keep = np.flatnonzero(least >= -band)
            pu, tid, pv = pu.take(keep), tid.take(keep), pv.take(keep)
            pin = uin.take(pu) | (least.take(keep) > band)
        pslot = uk.take(pu)
        if pin is None:
            pin = uin.take(pu)
        sel, tris, _, _, _ = self._drawn_sel(allt, tid, pv, eye, planes, ortho, lens, size, pin, fast)
        F = allt.flora[tid[sel]]
        flat = np.zeros((4, V * K), dtype=np.int64)  # flora, entities, plants drawn, entities drawn
        at_slot = pv[sel] * K + pslot[sel]
        for row, w in enumerate((tris * F, tris * ~F, (tris > 0) & F, (tris > 0) & ~F)):
            flat[row] = np.bincount(at_slot, weights=w, minlength=V * K).astype(np.int64)
        per = flat.reshape(4, V, K)
        # structures touching a loaded chunk (spawned whole): each once per view, in every set of
        # chunks holding one of the chunks it touches
        sobj, cs, ns = loaded.structures, loaded.structure_ids, loaded.structure_counts
        # (view, slot, structure) for every structure of every loaded chunk, then its (view,
        # structure) pairs: each structure once per view
        vv, kk, ci = every
        ms = ns[ci]
        t_v, t_k = np.repeat(vv, ms), np.repeat(kk, ms)
        cs_start = np.concatenate([[0], np.cumsum(ns)])[:-1]
        t_s = np.asarray(cs, dtype=np.int64)[
            (np.arange(int(ms.sum()), dtype=np.int64) - np.repeat(np.cumsum(ms) - ms, ms) + np.repeat(cs_start[ci], ms))
        ]
        pair_key, pair_of = np.unique(t_v * max(1, len(sobj)) + t_s, return_inverse=True)
        pairs = pair_key.tolist()
        s_sums = np.zeros((4, len(pairs)), dtype=np.int64)
        if pairs:
            sv, sj = pair_key // max(1, len(sobj)), pair_key % max(1, len(sobj))
            if loaded.structure_things is None:
                loaded.structure_things = self._structure_things(sobj)
            scount, st_all = loaded.structure_things
            sstart = np.concatenate([[0], np.cumsum(scount)])[:-1]
            m2 = scount[sj]
            q = np.repeat(np.arange(len(pairs)), m2)
            tid2 = (
                np.arange(int(m2.sum()), dtype=np.int64) - np.repeat(np.cumsum(m2) - m2, m2) + np.repeat(sstart[sj], m2)
            )
            vq, pin2 = sv[q], None
            if fast and len(tid2):
                big2 = float(np.abs(st_all.pos).max(initial=0.0) + st_all.radius.max(initial=0.0))
                sure2 = self._sure_planes(origins, planes, big2)
                if sure2 is not None:
                    n0, dv, band = sure2
                    if loaded.structure_sides is None:
                        loaded.structure_sides = _point_sides(n0, st_all)
                    least = _least_side(loaded.structure_sides, dv, tid2, vq)
                    maybe = np.flatnonzero(least >= -band)
                    tid2, vq, q, pin2 = tid2[maybe], vq[maybe], q[maybe], least[maybe] > band
            sel2, t2, _, _, _ = self._drawn_sel(st_all, tid2, vq, eye, planes, ortho, lens, size, pin2, fast)
            F2, q2 = st_all.flora[tid2[sel2]], q[sel2]
            for row, w in enumerate((t2 * F2, t2 * ~F2, (t2 > 0) & F2, (t2 > 0) & ~F2)):
                s_sums[row] = np.bincount(q2, weights=w, minlength=len(pairs)).astype(np.int64)
        pers = self._persistent_figures(origins, eye, planes, ortho, lens, size)
        masks = np.stack(
            [
                (ox >= -view + min(sx, 0))
                & (ox <= view + max(sx, 0))
                & (oz >= -view + min(sz, 0))
                & (oz <= view + max(sz, 0))
                for sx, sz in sets
            ]
        )  # (sets, K)
        present = slot_chunk >= 0
        figs = np.zeros((len(sets), 10, V), dtype=np.int64)
        # (every figure is 0 at a slot outside the world: one product of integers per set)
        each = np.concatenate([present[None], vis[None], ground, per]).astype(np.int64)  # (9, V, K)
        figs[:, :9] = np.einsum("rvk,sk->srv", each, masks.astype(np.int64))
        figs[:, 5:9] += pers[None]
        for si in range(len(sets)):
            if pairs:
                hit = np.bincount(pair_of, weights=masks[si][t_k], minlength=len(pairs)) > 0
                for row in range(4):
                    figs[si, 5 + row] += np.bincount(sv[hit], weights=s_sums[row][hit], minlength=V).astype(np.int64)
            figs[si, 9] = figs[si, 2:7].sum(axis=0)
        return figs, sets

    def _compiled(self, loaded: Loaded) -> bool:
        """Whether :meth:`_figures` counts these views with the compiled loop
        (veduta/world/view_kernels.py): for chunk_views (the rows' things joined), where the
        kernels are wanted (:func:`veduta.world.jit.enabled`: ``inspect world --all``, or
        ``VEDUTA_JIT=1``), every model's level from the table."""
        return loaded.joined is not None and jit.enabled() and self._level_table() is not None

    def _persistent_figures(
        self, origins: np.ndarray, eye: np.ndarray, planes: np.ndarray, ortho: bool, lens: float, size: float
    ) -> np.ndarray:
        """(4, V) the world's persistent entities placed relative to each view's origin: the
        triangles of flora, of entities, the plants and the entities drawn."""
        V = len(origins)
        pers = np.zeros((4, V), dtype=np.int64)
        if self._persistent_template():
            tpl = self._templates[PERSISTENT]
            if tpl:
                th = self._placed(PERSISTENT, origins[:, 0], origins[:, 1], origins[:, 2])
                q = np.tile(np.arange(V), len(tpl))
                t3 = self._drawn(th.pos, th.radius, th.model, th.thin, th.flora, eye, planes, q, ortho, lens, size)
                F3 = th.flora
                for row, w in enumerate((t3 * F3, t3 * ~F3, (t3 > 0) & F3, (t3 > 0) & ~F3)):
                    pers[row] = np.bincount(q, weights=w, minlength=V).astype(np.int64)
        return pers

    def _persistent_template(self) -> bool:
        """Whether the world has persistent entities; their template (:meth:`_template`, placed
        at each view's origin) made as :data:`PERSISTENT`."""
        ents = getattr(self.gen.world, "entities", None) or []
        if ents:
            self._template(PERSISTENT, type("Persistent", (), {"entities": ents})())
        return bool(ents)

    def chunk_views(
        self,
        kept: bool = True,
        progress: Progress | None = None,
        window: tuple[int, int, int, int] | None = None,
    ) -> Iterator[ViewColumns]:
        """The views at the centre of every chunk of the world, row by row (north to south, west to
        east: ``inspect world --all``), a batch of one row at a time (:class:`ViewColumns`, named
        ``chunk CX,CZ``): what :meth:`view` gives at each, from one pass over the world. The
        chunks are computed :data:`SWEEP_ROWS` rows at a time (:meth:`block`: one
        :meth:`Generator.layers` of their whole width, no object per chunk) and kept while a view
        may load them; :data:`VIEW_BLOCKS` times as many rows of views at a time gather the rows of
        chunks they load once (:meth:`_rows`), each batch of them its figures (:meth:`_figures`).
        ``window``: the views of the chunks [cx0, cx1) x [cz0, cz1) only, ``(cx0, cz0, cx1, cz1)``.
        ``progress(done, total, "views")`` after each batch."""
        p = self.gen.p
        e, c = p.extent, p.chunk
        fx0, fz0, fx1, fz1 = (-e, -e, e, e) if window is None else window
        fx0, fz0, fx1, fz1 = max(fx0, -e), max(fz0, -e), min(fx1, e), min(fz1, e)
        view = int(getattr(self.gen.world, "view", 1) or 1)
        reach = view + 1 if kept else view
        bx0, bx1 = max(-e, fx0 - reach), min(e, fx1 + reach)  # the columns of chunks computed
        side = bx1 - bx0
        blocks: dict[int, ChunkBlock] = {}
        total, done = max(0, fx1 - fx0) * max(0, fz1 - fz0), 0
        step = SWEEP_ROWS * VIEW_BLOCKS
        for za in range(fz0, fz1 if fx0 < fx1 else fz0, step):  # rows of views [za, zb)
            zb = min(fz1, za + step)
            lo, hi = max(-e, za - reach), min(e - 1, zb - 1 + reach)
            need = range((lo + e) // SWEEP_ROWS, (hi + e) // SWEEP_ROWS + 1)
            for b in [b for b in blocks if b < need.start]:
                del blocks[b]
            for b in need:
                if b not in blocks:
                    z0 = -e + b * SWEEP_ROWS
                    blocks[b] = self.block(bx0, z0, side, min(SWEEP_ROWS, e - z0))
            loaded, centre = self._rows(blocks, lo, hi)
            most = int(loaded.counts.max()) if len(loaded.counts) else 0
            batch = max(1, min(SWEEP_BATCH, SWEEP_PAIRS // ((2 * reach + 1) ** 2 * (1 + most))))
            rows, cols = (q.ravel() for q in np.meshgrid(np.arange(za, zb), np.arange(fx0, fx1), indexing="ij"))
            for a in range(0, len(rows), batch):
                czs, cxs = rows[a : a + batch], cols[a : a + batch]
                xs, zs = cxs * c + c // 2, czs * c + c // 2
                ox, oz, ccx, ccz, inside = self._slots(xs, zs, kept)
                loaded.slot_chunk = np.where(inside, (ccz - lo) * side + (ccx - bx0), -1)
                ys = centre[(czs - lo) * side + cxs - bx0]
                loaded.maybe = self._maybe_seen(ox, oz, ys, loaded)
                figs, sets = self._figures(xs, zs, ys, ox, oz, loaded, kept)

                def name(v: int, cxs: np.ndarray = cxs, czs: np.ndarray = czs) -> str:
                    return f"chunk {int(cxs[v])},{int(czs[v])}"

                yield ViewColumns(xs, zs, figs, sets, name)
                done += len(xs)
                if progress is not None:
                    progress(done, total, "views")
            del loaded  # (its things joined: not held while the next rows' chunks are computed)

    def _structure_things(self, structures: list[Any]) -> tuple[np.ndarray, Things]:
        """(the number of things of each structure, their things joined in that order)."""
        got = [self._structure(st) for st in structures]
        return np.asarray([len(t.model) for t in got], dtype=np.int64), Things.join(got)

    def _maybe_seen(self, ox: np.ndarray, oz: np.ndarray, ys: np.ndarray, loaded: Loaded) -> np.ndarray:
        """(K,) bool: the slots (ox, oz) around views whose foci are chunk centres at heights ys
        (mm) where some view may see a chunk of ``loaded`` or one of its things; False where every
        such chunk's box and things' box are outside a plane of every view's volume by
        :data:`MAYBE_MARGIN`. Each view's volume is the camera's around its origin, the same but
        for the origin's height (up to a float's error): the boxes are taken around the origin,
        from the lowest to the highest over the chunks and the foci, against the volume of the
        camera at the origin."""
        if self._compiled(loaded):
            return np.ones(len(ox), dtype=bool)  # (the compiled loop tests each slot of each view)
        p = self.gen.p
        c, cm = p.chunk, p.cell_mm
        S = c * cm / 1000.0
        f = (2 * (c // 2) + 1) * cm / 2000.0  # the focus origin's offset in its chunk, metres
        if self._at_origin is None:
            self._at_origin = self._cameras(np.zeros((1, 3)))[1][0]
            self._cull = not self._near_straight_down()
        if not self._cull:
            return np.ones(len(ox), dtype=bool)
        n, d = self._at_origin[:, :3], self._at_origin[:, 3]
        yo = ys / 1000.0
        if loaded.extremes is None:  # (the same for every batch of these rows)
            b = loaded.boxes
            has = loaded.counts > 0
            t = loaded.things_box[has]
            ext = [np.array([0.0, b[:, 0, 1].min(), 0.0]), np.array([S, b[:, 1, 1].max(), S])]
            if len(t):  # (x and z of the things' boxes from the chunk's min corner)
                ext += [(t[:, 0] - b[has, 0]).min(axis=0), (t[:, 1] - b[has, 0]).max(axis=0)]
                ext[2][1], ext[3][1] = t[:, 0, 1].min(), t[:, 1, 1].max()
            loaded.extremes = ext
        ext = loaded.extremes
        # the chunks' boxes around the origin, and their things' boxes
        lo = np.array([ext[0][0], ext[0][1] - yo.max(), ext[0][2]])
        hi = np.array([ext[1][0], ext[1][1] - yo.min(), ext[1][2]])
        if len(ext) > 2:
            lo = np.stack([lo, np.array([ext[2][0], ext[2][1] - yo.max(), ext[2][2]])])
            hi = np.stack([hi, np.array([ext[3][0], ext[3][1] - yo.min(), ext[3][2]])])
        corner = np.stack([ox * S - f, np.zeros(len(ox)), oz * S - f], axis=1)[:, None, :]  # (K, 1, 3)
        box = np.stack([corner + np.atleast_2d(lo)[None], corner + np.atleast_2d(hi)[None]], axis=2)  # (K, B, 2, 3)
        far = np.where(n >= 0, box[:, :, None, 1, :], box[:, :, None, 0, :])  # (K, B, 6, 3)
        maybe = ((far * n).sum(axis=3) + d >= -MAYBE_MARGIN).all(axis=2).any(axis=1)
        return maybe

    def _sure_planes(
        self, origins: np.ndarray, planes: np.ndarray, big: float
    ) -> tuple[np.ndarray, np.ndarray, float] | None:
        """(n0 (6, 3), dv (V, 6), band): the planes of the camera at the origin (n0, d0) moved to
        each view's origin o (d0 - n0 . o), standing for each view's own ``planes`` (V, 6, 4):
        a point p or box (coordinates within ``big`` metres of 0) with n0 . p + dv more than
        ``band`` (:data:`MAYBE_MARGIN`) beyond a plane is beyond the view's own by the
        reference's arithmetic. The bound is measured: twice the normals' difference (L1; a
        box's far corner may change with the sign of a normal's near-zero part) times the
        largest coordinate, plus the offsets' difference, plus far more than the float error of
        either sum; None (no shortcut) when that is not within a quarter of the band, or when
        the camera is near straight down."""
        if self._at_origin is None or not self._cull or not len(origins):
            return None
        n0, d0 = self._at_origin[:, :3], self._at_origin[:, 3]
        dv = d0[None, :] - origins @ n0.T
        big = max(big, float(np.abs(origins).max()))
        en = float(np.abs(planes[:, :, :3] - n0[None]).sum(axis=2).max())
        ed = float(np.abs(planes[:, :, 3] - dv).max())
        err = 2.0 * en * big + ed + 1e-9 * (4.0 * big + float(np.abs(dv).max()) + 1.0)
        if not err < MAYBE_MARGIN / 4:
            return None
        return n0, dv, MAYBE_MARGIN

    def _thing_sides(self, loaded: Loaded, things: Things, n0: np.ndarray) -> np.ndarray:
        """(6, n) the part n0 . p + r of each plane (normals ``n0``, the camera at the origin's)
        at each thing (:func:`_point_sides`; once for each chunk's things when ``things`` are
        :attr:`Loaded.joined`'s)."""
        if loaded.joined is None or things is not loaded.joined[0] or loaded.sides_of is None:
            return _point_sides(n0, things)
        if loaded.thing_sides is None:
            loaded.thing_sides = loaded.sides_of(n0)
        return loaded.thing_sides

    def _box_sides(self, loaded: Loaded, n0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(6, nk) x 3: the part n0 . x of each plane (normals ``n0``, the camera at the origin's)
        at each chunk of ``loaded``: its box's corner farthest along the normal, its things' box's
        farthest and nearest (made once for the rows: :attr:`Loaded.sides`)."""
        if loaded.sides is None:
            b = loaded.boxes
            tb = loaded.things_box if len(loaded.things_box) else np.zeros((1, 2, 3))
            loaded.sides = (
                np.einsum("ckj,kj->kc", np.where(n0 >= 0, b[:, None, 1, :], b[:, None, 0, :]), n0),
                np.einsum("ckj,kj->kc", np.where(n0 >= 0, tb[:, None, 1, :], tb[:, None, 0, :]), n0),
                np.einsum("ckj,kj->kc", np.where(n0 >= 0, tb[:, None, 0, :], tb[:, None, 1, :]), n0),
            )
        return loaded.sides

    def _near_straight_down(self) -> bool:
        """Whether the camera looks so nearly straight down that :meth:`_cameras` may take it for
        straight down (its up turned to -z) at some views' origins and not at others': its
        direction's sideways part within a factor of 2 of that test's 1e-6, where the rounding of
        a view's origin (about 1e-13 at 8 km) could tip it. The volume at the origin then does not
        stand for every view's, and :meth:`_maybe_seen` culls nothing."""
        rec = self.camera
        f = np.asarray(rec["look_at"], dtype=np.float64) - np.asarray(rec["position"], dtype=np.float64)
        length = float(np.linalg.norm(f))
        if not length > 0.0:
            return False  # (no direction: no view sees anything, at any origin)
        side = float(np.linalg.norm(np.cross(f / length, np.array([0.0, 1.0, 0.0]))))
        return 0.5e-6 <= side <= 2e-6

    def _rows(self, blocks: dict[int, ChunkBlock], lo: int, hi: int) -> tuple[Loaded, np.ndarray]:
        """The chunks of rows lo..hi (held by ``blocks``, all of one width ``side`` from column
        cx0) as :class:`Loaded` (chunk ``(cz - lo) * side + cx - cx0``; its ``slot_chunk`` left for
        the caller), and each chunk's focus height (:attr:`ChunkBlock.centre`)."""
        side = next(iter(blocks.values())).nx
        parts: list[tuple[ChunkBlock, int, int]] = []  # (block, its first chunk used, past its last)
        for b in sorted(blocks):
            blk = blocks[b]
            r0, r1 = max(lo, blk.cz0), min(hi + 1, blk.cz0 + blk.nz)
            if r0 < r1:
                parts.append((blk, (r0 - blk.cz0) * side, (r1 - blk.cz0) * side))

        def cat(f: Callable[[ChunkBlock, int, int], np.ndarray]) -> np.ndarray:
            return np.concatenate([f(blk, a, b) for blk, a, b in parts])

        counts = cat(lambda blk, a, b: blk.cuts[a + 1 : b + 1] - blk.cuts[a:b])
        firsts = np.cumsum([0] + [b - a for _, a, b in parts])
        # structures: each (chunk, structure) pair of these rows, the structures numbered once
        snames: dict[str, int] = {}
        sobj: list[Any] = []
        t_chunk, t_id = [], []
        for (blk, a, b), first in zip(parts, firsts.tolist(), strict=False):
            i0, i1 = np.searchsorted(blk.touch_chunk, [a, b]).tolist()
            t_chunk.append(blk.touch_chunk[i0:i1] - a + first)
            for st in blk.touch_structure[i0:i1]:
                got = snames.get(st.name)
                if got is None:
                    got = snames[st.name] = len(sobj)
                    sobj.append(st)
                t_id.append(got)
        nk = int(firsts[-1])
        tc = np.concatenate(t_chunk) if t_chunk else np.zeros(0, dtype=np.int64)

        def things_of(used: np.ndarray) -> Things:
            # used: chunk numbers, ascending (np.unique): each block's are a run
            out = []
            for (blk, a, _), f0, f1 in zip(parts, firsts[:-1].tolist(), firsts[1:].tolist(), strict=True):
                u = used[(used >= f0) & (used < f1)] - f0 + a
                if not len(u):
                    continue
                starts = blk.cuts[u]
                m = blk.cuts[u + 1] - starts
                ids = np.arange(int(m.sum()), dtype=np.int64) - np.repeat(np.cumsum(m) - m, m) + np.repeat(starts, m)
                out.append(Things(*(getattr(blk.things, f)[ids] for f in THING_FIELDS)))
            return Things.join(out)

        # every thing of these rows, chunk after chunk: each block's a run of its own (slices)
        joined = Things.join(
            [Things(*(getattr(blk.things, f)[blk.cuts[a] : blk.cuts[b]] for f in THING_FIELDS)) for blk, a, b in parts]
        )
        cuts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

        def sides_of(n0: np.ndarray) -> np.ndarray:
            out = []
            for blk, a, b in parts:
                if blk.sides is None:
                    blk.sides = _point_sides(n0, blk.things)
                out.append(blk.sides[:, blk.cuts[a] : blk.cuts[b]])
            return np.concatenate(out, axis=1)

        loaded = Loaded(
            np.zeros((0, 0), dtype=np.int64),
            cat(lambda blk, a, b: blk.boxes[a:b]),
            cat(lambda blk, a, b: blk.levels[a:b]),
            cat(lambda blk, a, b: blk.table[a:b]),
            counts,
            cat(lambda blk, a, b: blk.things_box[a:b]),
            things_of,
            np.bincount(tc, minlength=max(1, nk)).astype(np.int64),
            np.asarray(t_id, dtype=np.int64),
            sobj,
            joined=(joined, cuts),
            sides_of=sides_of,
        )
        return loaded, cat(lambda blk, a, b: blk.centre[a:b])

    def _slots(self, xs: np.ndarray, zs: np.ndarray, kept: bool):
        """(ox, oz, cx, cz, inside): the chunk offsets a view may have loaded around its focus's
        chunk ((2 view + 3)^2 with the kept ring, else the window), and for foci [xs, zs] the
        chunks there (V, K) and whether they are in the world."""
        p = self.gen.p
        view = int(getattr(self.gen.world, "view", 1) or 1)
        reach = view + 1 if kept else view
        ox, oz = (a.ravel() for a in np.meshgrid(np.arange(-reach, reach + 1), np.arange(-reach, reach + 1)))
        ccx, ccz = xs[:, None] // p.chunk + ox[None, :], zs[:, None] // p.chunk + oz[None, :]
        e = p.extent
        return ox, oz, ccx, ccz, (ccx >= -e) & (ccx < e) & (ccz >= -e) & (ccz < e)

    def views(
        self, cells: list[tuple[str, tuple[int, int]]], kept: bool = True, progress: Progress | None = None
    ) -> list[dict[str, Any]]:
        """:meth:`view` of many ``(name, cell)``, in batches of :data:`VIEW_BATCH`
        (:meth:`view_batches`, joined)."""
        out: list[dict[str, Any]] = []
        for batch in self.view_batches(cells, kept, progress):
            out += batch
        return out

    def view_batches(
        self, cells: Sequence[tuple[str, tuple[int, int]]], kept: bool = True, progress: Progress | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """:meth:`view` of many ``(name, cell)``, batch after batch of :data:`VIEW_BATCH` (a caller
        that keeps only what it needs of each batch holds one batch at a time): the chunks of a
        batch computed first, in one pass (:meth:`prepare`; those of the previous batches that
        are still cached are not computed again: give cells row by row), then each view sums what
        its chunks hold. ``progress(done, total, "views")`` after each batch."""
        done = 0
        for b in range(0, len(cells), VIEW_BATCH):
            some = cells[b : b + VIEW_BATCH]
            xs = np.asarray([cell[0] for _, cell in some], dtype=np.int64)
            zs = np.asarray([cell[1] for _, cell in some], dtype=np.int64)
            _, _, ccx, ccz, inside = self._slots(xs, zs, kept)
            self.prepare(set(zip(ccx[inside].tolist(), ccz[inside].tolist(), strict=True)))
            got = self._view_batch(list(some), kept)
            done += len(got)
            yield got
            if progress is not None:
                progress(done, len(cells), "views")

    def view(self, cell: tuple[int, int], name: str = "", kept: bool = True) -> dict[str, Any]:
        """The triangles drawn from a view whose focus is ``cell``: the camera placed relative to
        the focus (:func:`focus_origin`), the loaded chunks around it, each loaded chunk culled
        when its box lies outside the view volume, else its ground drawn at the level of its
        nearest point's effective distance (plus skirts and water); every structure touching a
        loaded chunk, every scatter/vegetation prefab, plant and persistent entity culled by the
        view volume (a sphere around its model's bounds), its model's level by effective distance,
        none past draw_distance, flora thinned.

        The loaded chunks are the worst the engine can have around this focus: the window and
        the chunks it keeps one beyond it on the two sides (:data:`KEPT_SIDES`) that draw the
        most, named by ``kept`` ([sx, sz]; [0, 0], the window alone, when no kept chunk adds a
        triangle); ``window`` gives the chunks and triangles of the window alone (just after a
        load or a jump).  With ``kept=False`` the window alone."""
        return self._view_batch([(name, cell)], kept)[0]


def view_cost(
    gen: Generator, models: Mapping[str, ModelDraw], cell: tuple[int, int], camera: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The triangles drawn from one view (see :meth:`Drawer.view`)."""
    return Drawer(gen, models, camera).view(cell)


def _least_side(at: np.ndarray, dv: np.ndarray, which: np.ndarray, view: np.ndarray) -> np.ndarray:
    """(n,): the least over the planes k of ``at[k, which] + dv[view, k]`` (``at`` (6, m): a
    plane's part of each point or box, ``dv`` (V, 6): its offset at each view)."""
    dt = dv.T.copy()
    least = at[0].take(which) + dt[0].take(view)
    a, b = np.empty(len(least)), np.empty(len(least))  # (two buffers for every plane's sums)
    for k in range(1, len(at)):
        np.add(at[k].take(which, out=a), dt[k].take(view, out=b), out=a)
        np.minimum(least, a, out=least)
    return least


def _lengths(v: np.ndarray) -> np.ndarray:
    """(n,) the length of each row of ``v`` (n, 3): ``np.linalg.norm(v, axis=1)``'s floats (the
    squares added x, y, z in that order, then the square root), without its slow reduction along
    rows of 3."""
    x, y, z = v[:, 0], v[:, 1], v[:, 2]
    return np.sqrt(x * x + y * y + z * z)


def _point_sides(n0: np.ndarray, things: Things) -> np.ndarray:
    """(6, n): n0[k] . p + r of each plane k (normals ``n0`` (6, 3)) at each thing (position p,
    radius r): x, y and z terms added in that order."""
    x, y, z = (np.ascontiguousarray(things.pos[:, j]) for j in range(3))
    out = np.empty((len(n0), len(x)))
    for k in range(len(n0)):
        a, b, c = n0[k].tolist()
        out[k] = a * x + b * y + c * z + things.radius
    return out


def _boxes_visible(planes: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """(n,) bool: boxes ((n, 2, 3) min, max) not wholly outside one of the planes (the corner
    farthest along each plane's normal must be inside it)."""
    n = planes[:, :3]  # (6, 3)
    far = np.where(n[None, :, :] >= 0, boxes[:, None, 1, :], boxes[:, None, 0, :])  # (n, 6, 3)
    return ((far * n[None]).sum(axis=2) + planes[None, :, 3] >= 0).all(axis=1)


def _persistent(gen: Generator, origin: tuple[float, float, float]) -> list[dict]:
    """The world's persistent entities placed relative to the focus."""
    from veduta.world.entities import prefab_instance

    ents = getattr(gen.world, "entities", None) or []
    if not ents:
        return []
    rec = type("Persistent", (), {"entities": ents})()
    out = prefab_instance(rec, "persistent", origin, 0, {})
    return out


# -- the glue of the compiled views (veduta/world/view_kernels.py: kernels only) ------------------


def _compiled_cameras(drawer: Drawer, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool, float, float]:
    """:meth:`Drawer._cameras` from the kernel (veduta/world/view_kernels.py): the same floats."""
    from veduta.world import view_kernels

    rec = drawer.camera
    ortho = rec["type"] == "orthographic"
    tv = math.tan(math.radians(rec["fov_deg"]) / 2)
    eye, planes = view_kernels._cameras(
        np.ascontiguousarray(origins, dtype=np.float64),
        np.asarray(rec["position"], dtype=np.float64),
        np.asarray(rec["look_at"], dtype=np.float64),
        float(rec["near"]),
        float(rec["far"]),
        ortho,
        float(rec["size"] * ASPECT / 2),
        float(rec["size"] / 2),
        tv,
        tv * ASPECT,
    )
    lens = lens_of(rec["fov_deg"])
    return eye, planes, ortho, lens, float(rec["size"])


def _things_arrays(things: Any) -> tuple[np.ndarray, ...]:
    return (
        np.ascontiguousarray(things.pos, dtype=np.float64).reshape(-1, 3),
        np.ascontiguousarray(things.radius, dtype=np.float64),
        np.ascontiguousarray(things.model, dtype=np.int64),
        np.ascontiguousarray(things.thin, dtype=np.uint64),
        np.ascontiguousarray(things.flora, dtype=np.bool_),
    )


def _compiled_figures(
    drawer: Drawer,
    eye: np.ndarray,
    planes: np.ndarray,
    ortho: bool,
    lens: float,
    size: float,
    ox: np.ndarray,
    oz: np.ndarray,
    loaded: Loaded,
    sets: list[tuple[int, int]],
    origins: np.ndarray,
) -> np.ndarray:
    """figs (sets, 10, V) of :meth:`Drawer._figures` from the kernel (its views' cameras ``eye``,
    ``planes``, ... as :meth:`Drawer._cameras` gives them, ``origins`` (V, 3) where the persistent
    entities are placed), for views of :meth:`Drawer.chunk_views` (:meth:`Drawer._compiled`)."""
    from veduta.world import view_kernels

    tab = drawer._level_table()
    assert tab is not None and loaded.joined is not None
    starts, tri_tab, dd = tab
    gen = drawer.gen
    view = int(getattr(gen.world, "view", 1) or 1)
    setbits = np.zeros(len(ox), dtype=np.int64)
    for si, (sx, sz) in enumerate(sets):
        inside = (
            (ox >= -view + min(sx, 0))
            & (ox <= view + max(sx, 0))
            & (oz >= -view + min(sz, 0))
            & (oz <= view + max(sz, 0))
        )
        setbits |= inside.astype(np.int64) << si
    allt, cuts = loaded.joined
    if loaded.pooled is None:  # (the structures of these rows: once for their batches)
        loaded.pooled = drawer._pool.take(drawer, loaded.structures)
    tstart, tend, st = loaded.pooled
    ns = loaded.structure_counts
    nk = len(loaded.counts)
    scuts = np.concatenate([[0], np.cumsum(ns[:nk])]).astype(np.int64)
    if drawer._persistent_arrays is None:  # (once a pass)
        drawer._persistent_arrays = (
            drawer._template_arrays(PERSISTENT)
            if drawer._persistent_template()
            else (
                np.zeros(0, dtype=np.int64),
                np.zeros(0),
                np.zeros(0, dtype=np.int64),
                np.zeros((0, 3)),
                np.zeros((0, 3)),
            )
        )
    pt = drawer._persistent_arrays
    return view_kernels._views(
        np.ascontiguousarray(eye, dtype=np.float64),
        np.ascontiguousarray(planes, dtype=np.float64),
        np.ascontiguousarray(loaded.slot_chunk, dtype=np.int64),
        setbits,
        len(sets),
        np.ascontiguousarray(loaded.boxes, dtype=np.float64),
        np.ascontiguousarray(loaded.levels, dtype=np.int64),
        np.ascontiguousarray(loaded.table, dtype=np.int64),
        np.ascontiguousarray(cuts, dtype=np.int64),
        np.ascontiguousarray(loaded.things_box, dtype=np.float64),
        *_things_arrays(allt),
        scuts,
        np.ascontiguousarray(loaded.structure_ids, dtype=np.int64),
        tstart,
        tend,
        *st,
        np.ascontiguousarray(starts, dtype=np.float64),
        np.ascontiguousarray(tri_tab, dtype=np.int64),
        np.ascontiguousarray(dd, dtype=np.float64),
        bool(ortho),
        float(lens),
        float(ORTHO_FACTOR * size),
        float(lod_distance(gen)),
        float(SURE),
        THIN_SHIFT,
        THIN_BITS,
        np.ascontiguousarray(origins, dtype=np.float64),
        *pt,
    )


def _no_things() -> Things:
    return Things.of(np.zeros((0, 3)), [], [])
