"""``world query`` and ``world map`` as functions returning plain data (the ``--json`` shape).

Both take a ``load_world(name) -> (world, prefabs)`` function (the cooked WRLD record and the
cooked PRFB records by name, see :func:`veduta.cook.cooked.load_world`), so tests can hand them
worlds made in memory.  Cells are whole numbers; a bad argument raises
:class:`~veduta.base.errors.VedutaError` naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from veduta.base.errors import UsageError, clip, quote

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.tools.export.looks import Looks

LoadWorld = Callable[[str], tuple[Any, dict[str, Any]]]

#: the largest map side in cells (2048 x 2048 takes about 6 s and 1 GB)
MAX_MAP_CELLS = 2048

#: cells beyond this are outside any world (extent x chunk <= 4096 x 64)
MAX_CELL = 1 << 20

#: map pixels per cell
MAX_SCALE = 16

#: the largest map in pixels (W x H cells x scale^2): 4096 x 4096, about 50 MB of RGB (its
#: usage error says it, as it is)
MAX_MAP_PIXELS = 4096 * 4096


def check_cell(cell: Sequence[int], what: str = "cell") -> tuple[int, int]:
    """A cell ``[x, z]`` as a tuple of ints; VedutaError when it is not two whole numbers within reach."""
    try:
        x, z = cell
    except (TypeError, ValueError):
        raise UsageError(f"{what} {clip(repr(cell))} is not two whole numbers [x, z]") from None
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (x, z)):
        raise UsageError(f"{what} {clip(repr(list(cell)))} is not two whole numbers [x, z]")
    if not (-MAX_CELL <= x <= MAX_CELL and -MAX_CELL <= z <= MAX_CELL):
        raise UsageError(
            f"{what} [{clip(str(x))}, {clip(str(z))}] is far outside any world (cells within +-{MAX_CELL})"
        )
    return x, z


def check_size(size: Sequence[int]) -> tuple[int, int]:
    """A map size ``[w, h]`` in cells; VedutaError unless each is in [1, MAX_MAP_CELLS]."""
    w, h = check_cell(size, "size")
    if not (1 <= w <= MAX_MAP_CELLS and 1 <= h <= MAX_MAP_CELLS):
        raise UsageError(
            f"size {w},{h} out of range [1, {MAX_MAP_CELLS}] each (draw a larger area as several maps with --at)"
        )
    return w, h


def check_scale(scale: int | None) -> int | None:
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= MAX_SCALE):
        raise UsageError(f"scale {scale!r} out of range [1, {MAX_SCALE}] pixels per cell")
    return scale


def generator(load_world: LoadWorld, name: str):
    """The generator of world *name* (VedutaError when there is no such world)."""
    from veduta.world.generator import Generator

    try:
        world, prefabs = load_world(name)
    except KeyError:
        raise UsageError(f"no world {quote(name)}") from None
    return Generator(world, prefabs)


def world_query(load_world: LoadWorld, world: str, cell: Sequence[int]) -> dict[str, Any]:
    """What is at *cell* of *world*: biome, ground height (metres), water, owner, plants."""
    x, z = check_cell(cell)
    from veduta.world.query import query

    return query(generator(load_world, world), x, z)


def default_scale(size: Sequence[int]) -> int:
    return min(8, max(1, 1024 // max(size)))


def world_map(
    load_world: LoadWorld,
    world: str,
    at: Sequence[int] = (0, 0),
    size: Sequence[int] = (256, 256),
    scale: int | None = None,
    looks: Looks | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The top-down map of *size* cells centred on cell *at*, framed, with its legend
    (:mod:`veduta.tools.mapimage`); biome colours from their ground materials as *looks* has
    them (None: mid grey). *progress* hears the rows of cells computed.

    ``{"world", "at", "size", "origin": the cell at the map's top-left pixel, "scale": pixels per
    cell, "width", "height": pixels of the picture, "map_box": the map's pixels in it, "title",
    "ticks", "scale_bar_m", "biomes" and "water" (each colour and where it comes from), "legend",
    "labels", "dropped", "counts", "png": the image (bytes)}``; the faces write or send ``png``
    and show the rest (``--json``).
    """
    from veduta.tools.mapimage import palette, png_bytes, render_map

    at = check_cell(at, "at")
    size = check_size(size)
    scale = check_scale(scale)
    gen = generator(load_world, world)
    s = scale if scale is not None else default_scale(size)
    w, h = size
    if w * h * s * s > MAX_MAP_PIXELS:
        side = math.isqrt(MAX_MAP_PIXELS)
        square = f" ({side} x {side})" if side * side == MAX_MAP_PIXELS else ""
        raise UsageError(
            f"{w} x {h} cells at scale {s} is {w * s} x {h * s} pixels, over the {MAX_MAP_PIXELS} "
            f"pixel limit{square}: lower the scale or the size"
        )
    pal = palette(gen, looks)
    img, info = render_map(gen, at, size, s, pal, world, progress)
    return {
        "world": world,
        "at": list(at),
        "size": list(size),
        **info,
        "width": img.size[0],
        "height": img.size[1],
        "biomes": list(pal.info),
        "water": pal.water_info,
        "png": png_bytes(img),
    }
