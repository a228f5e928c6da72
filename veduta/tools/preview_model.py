"""``veduta preview model NAME [--out FILE.png] [--size N]``: a sheet of views of a cooked model.

One row: the full model seen from the front (+Z), the side (+X) and the top (+Y, north up), drawn
orthographically at one scale (pixels per metre) with a scale bar, then in perspective from
three quarters (from +X+Z, 30 degrees above), then each level of detail in that perspective view,
every cell captioned with its triangle count. A grid lies on the ground under the model (the
plane of its lowest point), a line every ``grid_m`` metres (the heading says how many), the lines
through the model's origin darker; the front and side views show it edge on, as a ruler.

Surfaces are the materials as cooked (:mod:`veduta.tools.export.looks`): the texture sampled at
the cooked UVs (nearest or bilinear as the material says, the texture's wrap, the mip level
chosen by texel density), times the albedo; ``cutout`` pixels below the cutoff are not drawn,
``blend`` ones are mixed over what lies behind, ``cull: none`` draws both sides; lit by one light
from the viewer's upper left (unlit materials are not). A slot without a material is light grey,
a missing material mid grey (and a warning).

The rasteriser is :mod:`veduta.tools.export.raster` (deterministic: the same cooked files give
the same PNG bytes on every machine with the same Pillow); the sheet layout and font are those of
``preview texture`` (:mod:`veduta.tools.preview_texture`).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import numpy as np

from veduta.base.errors import VedutaError
from veduta.tools.export import PREVIEW_MAX_SIZE as MAX_SIZE
from veduta.tools.export import PREVIEW_MIN_SIZE as MIN_SIZE
from veduta.tools.export import PREVIEW_SIZE as DEFAULT_SIZE
from veduta.tools.export import raster
from veduta.tools.export.cooked import PREVIEW, Cooked
from veduta.tools.export.gltf import _write, model_levels
from veduta.tools.export.looks import Looks, ModelTriangles

if TYPE_CHECKING:
    from PIL import Image

    from veduta.base.project import Project

BACKGROUND = (236, 238, 240)
GRID = (168, 172, 178)
AXIS = (120, 124, 132)
INK = (40, 40, 40)
#: supersampling of the preview cells (2 x 2 samples per pixel)
SS = 2
#: the perspective view: vertical field of view, and the direction towards the eye (from +X+Z,
#: 30 degrees above: cos 30 sin 45, sin 30, cos 30 cos 45)
FOV_DEG = 35.0
EYE_DIRECTION = (0.6123724356957945, 0.5, 0.6123724356957945)
#: grid spacings tried, smallest first: the first giving at most GRID_LINES lines across the model
GRID_STEPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0)
GRID_LINES = 12
#: light towards the viewer's upper left (view space: right, up, back), linear colours
LIGHT_VIEW = (-0.35, 0.75, 0.56)
LIGHT_COLOUR = (0.85, 0.85, 0.85)
AMBIENT = (0.22, 0.22, 0.22)


def _fmt(v: float) -> str:
    return f"{float(np.float32(v)):g}"


def _dim(v: float) -> str:
    return f"{round(float(v), 3):g}"


def grid_step(extent: float) -> float:
    """The spacing of the ground grid for a model *extent* metres across."""
    for s in GRID_STEPS:
        if extent / s <= GRID_LINES:
            return s
    return GRID_STEPS[-1]


def _light(view: raster.View) -> raster.Light:
    r, u, f = (np.asarray(a) for a in (view.right, view.up, view.forward))
    x, y, z = LIGHT_VIEW
    d = raster.unit(np.array([r[i] * x + u[i] * y - f[i] * z for i in range(3)]))
    return raster.Light(raster.vec3(d), LIGHT_COLOUR, AMBIENT)


def _grid(frame: raster.Frame, centre: np.ndarray, reach: float, step: float, y: float, ticks: float) -> None:
    """Lines on the plane at height y every *step* metres within *reach* of *centre* (x, z), the
    ones through the origin darker; *ticks* > 0 adds short downward marks at every line (a ruler
    for the views that see the plane edge on)."""
    lo_x, hi_x = np.floor((centre[0] - reach) / step), np.ceil((centre[0] + reach) / step)
    lo_z, hi_z = np.floor((centre[2] - reach) / step), np.ceil((centre[2] + reach) / step)
    xs = np.arange(lo_x, hi_x + 1) * step
    zs = np.arange(lo_z, hi_z + 1) * step
    x0, x1, z0, z1 = xs[0], xs[-1], zs[0], zs[-1]
    for colour, origin in ((GRID, False), (AXIS, True)):
        sx = xs[(np.abs(xs) < step / 2) == origin]
        sz = zs[(np.abs(zs) < step / 2) == origin]
        a = np.concatenate(
            [
                np.stack([sx, np.full_like(sx, y), np.full_like(sx, z0)], 1),
                np.stack([np.full_like(sz, x0), np.full_like(sz, y), sz], 1),
            ]
        )
        b = np.concatenate(
            [
                np.stack([sx, np.full_like(sx, y), np.full_like(sx, z1)], 1),
                np.stack([np.full_like(sz, x1), np.full_like(sz, y), sz], 1),
            ]
        )
        frame.lines(a, b, colour)
    if ticks > 0:
        a = np.concatenate(
            [
                np.stack([xs, np.full_like(xs, y), np.zeros_like(xs)], 1),
                np.stack([np.zeros_like(zs), np.full_like(zs, y), zs], 1),
            ]
        )
        b = a.copy()
        b[:, 1] = y - ticks
        frame.lines(a, b, AXIS)


def _scale_bar(img: Image.Image, scale: float, step: float, font) -> None:
    """A bar *step* metres long (or a round multiple, at least 24 px) at the top left of an
    orthographic cell, labelled."""
    from PIL import ImageDraw

    d = ImageDraw.Draw(img)
    n = next((k for k in (1, 2, 5, 10, 20, 50, 100) if step * k * scale >= 24), 100)
    length = int(step * n * scale + 0.5)
    x0, y = 6, 8
    d.line([(x0, y), (x0 + length, y)], fill=INK, width=1)
    d.line([(x0, y - 3), (x0, y + 2)], fill=INK)
    d.line([(x0 + length, y - 3), (x0 + length, y + 2)], fill=INK)
    d.text((x0 + length + 6, y - 7), f"{step * n:g} m", fill=INK, font=font)


def preview_model(project: Project, name: str, out: str | None = None, size: int = DEFAULT_SIZE) -> dict[str, Any]:
    """Draw the preview sheet of model *name* and write it to *out* (PNG) when given; a summary of
    what was drawn, with ``"png"`` (the faces write or send it; ``--json`` shows the rest)."""
    from PIL import Image

    from veduta.tools.preview_texture import _font, _ready, _Sheet

    if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE:
        raise VedutaError(f"size {size!r} out of range [{MIN_SIZE}, {MAX_SIZE}] (pixels per view)")
    cooked = Cooked(project, finite=PREVIEW)
    mesh = cooked.require("model", name)
    levels = model_levels(cooked, mesh, name)
    looks = Looks(cooked)
    lo = np.array(mesh.bounds[0], np.float64)
    hi = np.array(mesh.bounds[1], np.float64)
    centre = (lo + hi) / 2.0
    tris = [ModelTriangles.of_level(lv) for lv in levels]
    radius = 0.0
    for t in tris:
        if len(t.positions):
            d = t.positions.reshape(-1, 3) - centre
            radius = max(radius, float(np.sqrt((d * d).sum(axis=1)).max()))
    radius = radius or 0.5
    scale = (size / 2 - 4) / radius  # pixels per metre in the orthographic views
    ext = hi - lo
    step = grid_step(float(max(ext[0], ext[2], 2 * radius * 0.5)))
    font = _font()
    ground = float(lo[1])
    reach = radius * 1.15

    def ortho(eye_dir) -> raster.View:
        e = centre + np.asarray(eye_dir, np.float64) * (4 * radius)
        return raster.View.looking(
            e, centre, size, size, ortho=True, half_height=size / 2 / scale, near=0.0, far=8 * radius + 1.0
        )

    def persp() -> raster.View:
        d = radius / raster.sin_cos_deg(FOV_DEG / 2)[0] * 1.04
        e = centre + np.asarray(EYE_DIRECTION) * d
        return raster.View.looking(e, centre, size, size, fov_deg=FOV_DEG, near=d / 100.0, far=d + 4 * radius + 1)

    def draw(t: ModelTriangles, view: raster.View, ticks: float = 0.0) -> Image.Image:
        frame = raster.Frame(view, BACKGROUND, _light(view), ss=SS)
        _grid(frame, centre, reach, step, ground, ticks)
        t.add_to(frame, looks, f"model {name}")
        return Image.fromarray(frame.render(), "RGB")

    tick = 4.0 / scale
    front = draw(tris[0], ortho((0.0, 0.0, 1.0)), tick)
    side = draw(tris[0], ortho((1.0, 0.0, 0.0)), tick)
    top = draw(tris[0], ortho((0.0, 1.0, 0.0)))
    for img in (front, side, top):
        _scale_bar(img, scale, step, font)
    pv = persp()
    cells = [
        (front.convert("RGBA"), "front (from +Z)"),
        (side.convert("RGBA"), "side (from +X)"),
        (top.convert("RGBA"), "top (from +Y, north up)"),
        (draw(tris[0], pv).convert("RGBA"), f"perspective: {levels[0]['triangles']} triangles"),
    ]
    drawn = [{"level": 0, "model": name, "triangles": levels[0]["triangles"], "distance": 0.0}]
    for lv, t in zip(levels[1:], tris[1:], strict=True):
        what = f"{lv['model']}, " if lv["model"] else ""
        cells.append(
            (
                draw(t, pv).convert("RGBA"),
                f"lod {lv['level']} ({what}from {_fmt(lv['distance'])} m): {lv['triangles']} triangles",
            )
        )
        drawn.append(
            {
                "level": lv["level"],
                "model": lv["model"] or name,
                "triangles": lv["triangles"],
                "distance": lv["distance"],
            }
        )
    base = levels[0]
    head = (
        f"{name}: {base['triangles']} triangles, {len(base['vertices'])} vertices, "
        f"{_dim(ext[0])} x {_dim(ext[1])} x {_dim(ext[2])} m (x, y, z), pivot {mesh.pivot}"
    )
    if mesh.draw_distance:
        head += f", drawn to {_fmt(mesh.draw_distance)} m"
    head += f"; ground grid every {step:g} m"
    sheet = _Sheet(font)
    sheet.add(head, [_ready(im, cap) for im, cap in cells])
    img = sheet.render()
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6, optimize=False)
    data = buf.getvalue()
    if out is not None:
        _write(out, data)
    materials = sorted({n for t in tris for n in t.materials})
    return {
        "out": out,
        "bytes": len(data),
        "model": name,
        "width": img.width,
        "height": img.height,
        "size": size,
        "views": ["front", "side", "top", "perspective"],
        "levels": drawn,
        "cells": [{"caption": cap, "box": box} for cap, box in sheet.boxes],
        "scale_px_per_m": round(scale, 4),
        "grid_m": step,
        "materials": [looks.look(m, f"model {name}").info for m in materials],
        "findings": cooked.findings,
        "messages": cooked.messages,
        "png": data,
    }
