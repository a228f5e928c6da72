"""``veduta preview model NAME --out FILE.png [--size N]``: a sheet of shaded views of a cooked model.

One row: the full model seen from the front (+Z), the side (+X), the top (+Y, -Z up) and three
quarters (from +X+Z, 30 degrees above), then each level of detail in the three-quarter view,
every cell captioned with its triangle count. All cells share one scale (pixels per metre), so
the levels compare at a glance. Colours are the materials' albedo times the average colour of
their texture (its last mip level), lit by one fixed light; a slot without a material is light
grey, a missing material mid grey (and a warning). Back faces are culled unless the material has
``cull: none``; alpha is ignored (everything is drawn opaque).

The rasteriser is :mod:`veduta.tools.export.raster` (numpy); the sheet layout and font are those of
``preview texture`` (:mod:`veduta.tools.preview_texture`), so the same model gives the same PNG bytes with the
same numpy and Pillow.
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
from veduta.tools.export.cooked import Cooked
from veduta.tools.export.gltf import _write, model_levels, srgb_to_linear

if TYPE_CHECKING:
    from veduta.base.project import Project

EMPTY_SLOT = (0.6, 0.6, 0.6)
MISSING = (0.2, 0.2, 0.2)


def _material_colours(cooked: Cooked, names: list[str], model: str) -> tuple[np.ndarray, np.ndarray]:
    """Linear RGB and two-sidedness of each material slot."""
    from veduta.compile.image import unpack_argb

    rgb, two = [], []
    for name in names:
        if not name:
            rgb.append(EMPTY_SLOT)
            two.append(False)
            continue
        rec = cooked.get("material", name, f"model {model}")
        if rec is None:
            rgb.append(MISSING)
            two.append(False)
            continue
        a = rec.albedo
        c = np.array([srgb_to_linear((a >> 16) & 0xFF), srgb_to_linear((a >> 8) & 0xFF), srgb_to_linear(a & 0xFF)])
        if rec.texture:
            tex = cooked.get("texture", rec.texture, f"material {name}")
            if tex is not None and tex.images:
                px = unpack_argb(np.asarray(tex.images[-1]))[0, 0]
                c = c * np.array([srgb_to_linear(int(v)) for v in px[:3]])
        rgb.append(tuple(c))
        two.append(rec.cull == 1)
    return np.array(rgb, np.float64).reshape(-1, 3), np.array(two, bool)


#: what :func:`raster.render` draws: corners ``(n, 3, 3)``, normals ``(n, 3, 3)``, linear RGB
#: ``(n, 3)`` and two-sidedness ``(n,)`` of n triangles
Triangles = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _triangles(cooked: Cooked, level: dict[str, Any], model: str) -> Triangles:
    """Corners, normals, colour and two-sidedness per triangle of one level."""
    v = level["vertices"]
    idx = np.asarray(level["indices"], np.int64).reshape(-1, 3)
    pos = np.asarray(v["position"], np.float64)[idx]
    nrm = np.asarray(v["normal"], np.float64)[idx]
    slot = np.zeros(len(idx), np.int64)
    for mp in level["mesh_parts"] or []:
        slot[mp.first // 3:(mp.first + mp.count) // 3] = mp.material
    names = level["materials"] or [""]
    rgb, two = _material_colours(cooked, names, model)
    slot = np.clip(slot, 0, len(names) - 1)
    return pos, nrm, rgb[slot], two[slot]


def _fmt(v: float) -> str:
    return f"{float(np.float32(v)):g}"


def _dim(v: float) -> str:
    return f"{round(float(v), 3):g}"


def preview_model(project: Project, name: str, out: str | None, size: int = DEFAULT_SIZE) -> dict[str, Any]:
    """Draw the preview sheet of model *name* and write it to *out* (PNG) when given; a summary of
    what was drawn, with ``"png"`` (the faces write or send it; ``--json`` shows the rest)."""
    from PIL import Image

    from veduta.tools.preview_texture import _font, _Sheet

    if not MIN_SIZE <= size <= MAX_SIZE:
        raise VedutaError(f"size {size} out of range [{MIN_SIZE}, {MAX_SIZE}] (pixels per view)")
    cooked = Cooked(project)
    mesh = cooked.require("model", name)
    levels = model_levels(cooked, mesh, name)
    lo = np.array(mesh.bounds[0], np.float64)
    hi = np.array(mesh.bounds[1], np.float64)
    centre = (lo + hi) / 2
    radius = 0.0
    tris: list[Triangles] = []
    for lv in levels:
        t = _triangles(cooked, lv, name)
        tris.append(t)
        if len(t[0]):
            radius = max(radius, float(np.linalg.norm(t[0].reshape(-1, 3) - centre, axis=1).max()))
    scale = (size / 2 - 4) / radius if radius > 0 else 1.0

    def draw(t: Triangles, view: str) -> Image.Image:
        return Image.fromarray(raster.render(*t, raster.VIEWS[view], centre, scale, size), "RGB").convert("RGBA")

    base = levels[0]
    cells = [(draw(tris[0], v), v) for v in ("front", "side", "top")]
    cells.append((draw(tris[0], "three-quarter"), f"three-quarter: {base['triangles']} triangles"))
    drawn = [{"level": 0, "model": name, "triangles": base["triangles"], "distance": 0.0}]
    for lv, t in zip(levels[1:], tris[1:], strict=True):
        what = f"{lv['model']}, " if lv["model"] else ""
        cells.append((draw(t, "three-quarter"),
                      f"lod {lv['level']} ({what}from {_fmt(lv['distance'])} m): {lv['triangles']} triangles"))
        drawn.append({"level": lv["level"], "model": lv["model"] or name, "triangles": lv["triangles"],
                      "distance": lv["distance"]})
    ext = hi - lo
    head = (f"{name}: {base['triangles']} triangles, {len(base['vertices'])} vertices, "
            f"{_dim(ext[0])} x {_dim(ext[1])} x {_dim(ext[2])} m, pivot {mesh.pivot}")
    if mesh.draw_distance:
        head += f", drawn to {_fmt(mesh.draw_distance)} m"
    sheet = _Sheet(_font())
    sheet.add(head, cells)
    img = sheet.render()
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    data = buf.getvalue()
    if out is not None:
        _write(out, data)
    return {"out": out, "bytes": len(data), "model": name, "width": img.width, "height": img.height,
            "size": size, "views": ["front", "side", "top", "three-quarter"], "levels": drawn,
            "findings": cooked.findings, "messages": cooked.messages, "png": data}
