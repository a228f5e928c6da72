"""How cooked materials and models look in the preview images (model sheets, world views, maps).

- :class:`Looks` turns material names into rasteriser surfaces (:class:`raster.Surface`: albedo,
  texture levels, filter, wrap, alpha, sides, lighting), each made once, and model levels into
  triangles (:class:`ModelTriangles`) with the surface of each;
- :func:`material_colour` is the flat colour a map shows for a material: its albedo times its
  texture's average colour (the mean of level 0's pixels, per channel, rounded), in sRGB bytes.

Missing or broken materials and textures are warnings (:class:`Cooked` findings), drawn as a
stand-in: an empty slot light grey (the engine's default material), a missing material mid grey.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from veduta.tools.export import raster
from veduta.tools.export.cooked import Cooked

#: RGBA of a part without a material (the engine's default: white, shown light grey so it reads)
EMPTY_SLOT = (200, 200, 200, 255)
#: RGBA of a material that is missing or does not cook
MISSING = (110, 110, 110, 255)
#: the engine's built-in water (terrain water ""), sRGB bytes and alpha
BUILTIN_WATER = (64, 128, 200, 178)


def texture_average(levels: list[np.ndarray]) -> tuple[int, int, int, int]:
    """The mean RGBA of level 0 (``(h, w, 4) uint8``), per channel, rounded half up (integers)."""
    img = np.asarray(levels[0], dtype=np.int64)
    n = img.shape[0] * img.shape[1]
    total = img.reshape(-1, 4).sum(axis=0)
    r, g, b, a = (int((t * 2 + n) // (2 * n)) for t in total.tolist())
    return r, g, b, a


def _times(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Two RGBA byte colours multiplied as fractions, rounded."""
    r, g, bl, al = ((x * y + 127) // 255 for x, y in zip(a, b, strict=True))
    return r, g, bl, al


def hexrgb(c) -> str:
    """``#rrggbb`` of an RGB(A) byte sequence."""
    return "#" + "".join(f"{int(v):02x}" for v in list(c)[:3])


def argb_rgba(argb: int) -> tuple[int, int, int, int]:
    return (argb >> 16) & 0xFF, (argb >> 8) & 0xFF, argb & 0xFF, (argb >> 24) & 0xFF


@dataclass(frozen=True)
class Look:
    """What is known of one material: its surface for the rasteriser, its flat colour (RGBA bytes),
    and where the colour comes from ({"material", "albedo", "texture", "texture_average",
    "status"})."""

    surface: raster.Surface
    colour: tuple[int, int, int, int]
    info: dict[str, Any]


class Looks:
    """Materials of one project as the previews draw them (each read and cooked once)."""

    def __init__(self, cooked: Cooked):
        self.cooked = cooked
        self._looks: dict[str, Look] = {}

    def look(self, name: str, used_by: str = "") -> Look:
        """The look of material *name* ("" is an empty slot)."""
        got = self._looks.get(name)
        if got is None:
            got = self._looks[name] = self._make(name, used_by)
        return got

    def _make(self, name: str, used_by: str) -> Look:
        if not name:
            return Look(raster.Surface(albedo=EMPTY_SLOT), EMPTY_SLOT, {"material": "", "status": "empty slot"})
        rec = self.cooked.get("material", name, used_by)
        if rec is None:
            return Look(raster.Surface(albedo=MISSING), MISSING, {"material": name, "status": "missing"})
        from veduta.compile.image import unpack_argb

        albedo = argb_rgba(rec.albedo)
        info: dict[str, Any] = {
            "material": name,
            "status": "ok",
            "albedo": hexrgb(albedo[:3]),
            "texture": rec.texture or None,
            "alpha": rec.alpha,
            "filter": "nearest" if rec.filter == 1 else "bilinear",
        }
        levels = None
        clamp = False
        colour = albedo
        if rec.texture:
            tex = self.cooked.get("texture", rec.texture, f"material {name}")
            if tex is not None and tex.images:
                levels = [unpack_argb(np.asarray(lv)) for lv in tex.images]
                clamp = tex.wrap == 1
                avg = texture_average(levels)
                info["texture_average"] = hexrgb(avg[:3])
                colour = _times(albedo, avg)
            else:
                info["status"] = "texture missing"
        info["colour"] = hexrgb(colour[:3])
        surface = raster.Surface(
            albedo=albedo,
            levels=levels,
            nearest=rec.filter == 1,
            clamp=clamp,
            alpha=rec.alpha,
            cutoff=float(rec.cutoff),
            two_sided=rec.cull == 1,
            unlit=bool(rec.unlit),
        )
        return Look(surface, colour, info)


def material_colour(looks: Looks, name: str, used_by: str = "") -> tuple[int, int, int]:
    """The flat sRGB colour a map shows for material *name* (:class:`Looks`)."""
    r, g, b, _ = looks.look(name, used_by).colour
    return r, g, b


@dataclass
class ModelTriangles:
    """One level of a model as triangles in model space: corners ``(n, 3, 3)``, normals ``(n, 3,
    3)``, UVs ``(n, 3, 2)`` (float64) and the material slot of each ``(n,)``; ``materials`` the
    slots' material names."""

    positions: np.ndarray
    normals: np.ndarray
    uvs: np.ndarray
    slots: np.ndarray
    materials: list[str]

    @classmethod
    def of_level(cls, level: dict[str, Any]) -> ModelTriangles:
        """From a level of :func:`veduta.tools.export.gltf.model_levels`."""
        v = level["vertices"]
        idx = np.asarray(level["indices"], np.int64).reshape(-1, 3)
        slot = np.zeros(len(idx), np.int64)
        for mp in level["mesh_parts"] or []:
            slot[mp.first // 3 : (mp.first + mp.count) // 3] = mp.material
        names = list(level["materials"] or [""])
        return cls(
            np.asarray(v["position"], np.float64)[idx],
            np.asarray(v["normal"], np.float64)[idx],
            np.asarray(v["uv"], np.float64)[idx],
            np.clip(slot, 0, len(names) - 1),
            names,
        )

    def pieces(
        self,
        looks: Looks,
        used_by: str,
        override: str = "",
        positions: np.ndarray | None = None,
        normals: np.ndarray | None = None,
    ) -> list[Piece]:
        """The triangles (optionally transformed ones, ``(..., n, 3, 3)``) as pieces, one per
        material slot, each with its slot's surface; *override*: one material for every slot
        (an entity's material)."""
        pos = self.positions if positions is None else positions
        nrm = self.normals if normals is None else normals
        out = []
        for s, name in enumerate(self.materials):
            sel = self.slots == s
            if sel.any():
                p = pos[..., sel, :, :]
                out.append(
                    Piece(
                        p,
                        nrm[..., sel, :, :],
                        np.broadcast_to(self.uvs[sel], p.shape[:-1] + (2,)),
                        [looks.look(override or name, used_by).surface],
                        None,
                    )
                )
        return out

    def add_to(
        self,
        frame: raster.Frame,
        looks: Looks,
        used_by: str,
        override: str = "",
        positions: np.ndarray | None = None,
        normals: np.ndarray | None = None,
    ) -> None:
        """Add the triangles to *frame* (:meth:`pieces`)."""
        for piece in self.pieces(looks, used_by, override, positions, normals):
            piece.add_to(frame)


@dataclass
class Piece:
    """Triangles ready to draw: corners ``(..., 3, 3)``, normals (None: flat), UVs ``(..., 3, 2)``,
    their surfaces and, when there are several, the surface of each triangle (``index``)."""

    positions: np.ndarray
    normals: np.ndarray | None
    uvs: np.ndarray
    surfaces: list[raster.Surface]
    index: np.ndarray | None

    def add_to(self, frame: raster.Frame) -> None:
        ids = np.asarray([frame.surface(s) for s in self.surfaces], dtype=np.int64)
        frame.add(self.positions, self.normals, self.uvs, ids[0] if self.index is None else ids[self.index])
