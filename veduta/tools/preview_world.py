"""``veduta preview world WORLD --at X,Z``: what the world's camera sees from a start cell.

The view ``render { world, at }`` shows (world-format.md, "Rendering"), drawn with the toolchain's
drawing model (:mod:`veduta.world.draw`) so that the picture and its figures are the engine's:

- the camera is the world's, placed relative to the centre of the start cell on the ground there
  (:func:`~veduta.world.draw.focus_origin`); the (2 view + 1)^2 chunks around the start cell's
  chunk are loaded (the window, as just after ``LoadWorld``);
- each loaded chunk whose box lies wholly outside the view volume is culled; the others draw their
  ground at the level the engine picks by distance (:meth:`~veduta.world.draw.Drawer.chunks_seen`),
  flat runs merged, skirts under the edges that are not straight, and their water;
- every structure, scattered or vegetation prefab, plant and persistent entity with a model is
  judged as the engine judges it (:meth:`~veduta.world.draw.Drawer.judge`): culled outside the
  view volume, its model's level by distance, nothing past draw_distance, flora thinned; what is
  left is drawn with its model's level of detail, placed, turned and scaled as the generator puts
  it;
- materials as cooked (:mod:`veduta.tools.export.looks`), the world's light and background.

The picture holds the console's 320 x 240 frame, pixel for pixel, the same view at ``scale``
times that size (supersampled 2 x 2) when ``scale`` > 1, and the draw report: the loaded chunks
(culled, drawn at each level), the entities considered, culled, too far, thinned and drawn at a
lower level, and the triangles by kind against the 1,200 a frame a console draws. The rasteriser
(:mod:`veduta.tools.export.raster`) makes the same bytes on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from veduta.base.errors import UsageError
from veduta.tools.export import raster
from veduta.tools.export.looks import BUILTIN_WATER, Looks, ModelTriangles, Piece, argb_rgba

if TYPE_CHECKING:
    from PIL import Image

    from veduta.base.progress import Progress
    from veduta.base.project import Project
    from veduta.world.draw import Drawer, Judged
    from veduta.world.generator import Generator

#: the console's frame (world-format.md, "Rendering")
CONSOLE = (320, 240)
#: ``scale``: the larger frame is scale x the console's (1: the console frame alone)
DEFAULT_SCALE, MAX_SCALE = 2, 4
PAD = 8
PAPER = (250, 250, 248)
INK = (24, 24, 24)
DIM = (96, 96, 96)
OVER = (200, 40, 30)


@dataclass
class Thing:
    """An entity with a model, as the generator places it."""

    name: str
    model: str
    material: str
    position: np.ndarray  # metres, parents' positions added (as the drawing model does)
    rotation: tuple[float, float, float]  # degrees
    scale: tuple[float, float, float]
    flora: bool
    thin: int  # the growth hash of a plant's cell (0 for other entities)


@dataclass
class Scene:
    """What the engine draws from one start cell (computed once, drawn at any size)."""

    gen: Generator
    at: tuple[int, int]
    camera: dict[str, Any]
    origin: tuple[float, float, float]
    chunks: list[tuple[int, int]]
    visible: np.ndarray
    distance: np.ndarray
    level: np.ndarray
    things: list[Thing]
    judged: Judged
    model_index: dict[str, int]


def _things(gen: Generator, drawer: Drawer, chunks: list[tuple[int, int]], origin) -> list[Thing]:
    """Every entity with a known model that the loaded chunks spawn (structures once, even when
    they touch several chunks), then the persistent entities; parents' positions added; a plant's
    growth hash from its rule and cell (world-generation.md, section 12), as the drawing model
    thins with it."""
    from veduta.world.draw import _persistent, entity_position
    from veduta.world.entities import chunk_entities
    from veduta.world.intmath import hash2_np

    ents: list[dict] = []
    seen: set[str] = set()
    for cx, cz in chunks:
        for e in chunk_entities(gen, cx, cz):
            if e["name"] not in seen:
                seen.add(e["name"])
                ents.append(e)
    ents += _persistent(gen, origin)
    by = {e["name"]: e for e in ents}
    rules = {r.name: r for r in gen.p.vegetation}
    cm = gen.p.cell_mm
    out: list[Thing] = []
    plants: dict[str, list[tuple[int, int, int]]] = {}  # rule -> (thing, x, z)
    for e in ents:
        name = e.get("model") or ""
        if not name or not e.get("visible", True) or name not in drawer.index:
            continue
        flora = e.get("kind") == "flora" and e.get("source", {}).get("kind") == "plant"
        if flora:
            x = int(round(float(e["position"][0]) * 1000)) // cm
            z = int(round(float(e["position"][2]) * 1000)) // cm
            plants.setdefault(e["source"]["rule"], []).append((len(out), x, z))
        out.append(
            Thing(
                e["name"],
                name,
                e.get("material") or "",
                entity_position(e, by),
                raster.vec3(e.get("rotation_deg") or (0, 0, 0)),
                raster.vec3(e.get("scale") or (1, 1, 1)),
                flora,
                0,
            )
        )
    for rule, cells in plants.items():
        at = np.asarray(cells, dtype=np.int64)
        for i, h in zip(at[:, 0].tolist(), hash2_np(rules[rule].key, at[:, 1], at[:, 2]).tolist(), strict=True):
            out[i].thin = int(h)
    return out


def scene(gen: Generator, drawer: Drawer, at: tuple[int, int]) -> Scene:
    """Decide what the engine draws from start cell *at* (no pixels yet)."""
    from veduta.world.draw import Things, focus_origin, loaded_chunks, make_camera

    origin = focus_origin(gen, at)
    cam = make_camera(drawer.camera, origin)
    keys = loaded_chunks(gen, at)
    drawer.prepare(keys)
    visible, distance, level = drawer.chunks_seen(cam, [drawer.chunk(cx, cz) for cx, cz in keys])
    things = _things(gen, drawer, keys, origin)
    if things:
        pos = np.stack([t.position for t in things])
        rad = np.array([drawer.models[t.model].radius * max(abs(v) for v in t.scale) for t in things])
        mod = np.array([drawer.index[t.model] for t in things], dtype=np.int64)
        th = Things(
            pos,
            rad,
            mod,
            np.array([t.thin for t in things], dtype=np.uint64),
            np.array([t.flora for t in things], dtype=bool),
        )
    else:
        th = Things.of(np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=np.int64))
    judged = drawer.judge(cam, th)
    return Scene(
        gen, at, dict(drawer.camera), origin, keys, visible, distance, level, things, judged, dict(drawer.index)
    )


def draw_report(sc: Scene, drawer: Drawer) -> dict[str, Any]:
    """The figures of a scene: chunks and the ground's levels, entities considered, culled, too
    far, thinned, drawn (and at a lower level), triangles by kind against the budget."""
    from veduta.world.draw import FRAME_BUDGET

    ground = skirts = water = 0
    levels: dict[str, int] = {}
    for i, key in enumerate(sc.chunks):
        if not sc.visible[i]:
            continue
        cg = drawer.chunk(*key).ground
        k = int(sc.level[i])
        ground += cg.triangles[k]
        skirts += cg.skirt_triangles[k]
        water += cg.water_triangles
        levels[str(k)] = levels.get(str(k), 0) + 1
    j = sc.judged
    flora = np.array([t.flora for t in sc.things], dtype=bool)
    drawn = j.triangles > 0
    tris = {
        "ground": ground,
        "skirts": skirts,
        "water": water,
        "flora": int(j.triangles[flora].sum()),
        "entities": int(j.triangles[~flora].sum()),
    }
    total = sum(tris.values())
    return {
        "chunks": len(sc.chunks),
        "chunks_culled": int((~sc.visible).sum()),
        "chunks_drawn": int(sc.visible.sum()),
        "ground_levels": dict(sorted(levels.items())),
        "considered": len(sc.things),
        "culled": int((~j.inside).sum()),
        "too_far": int(j.too_far.sum()),
        "thinned": int(j.thinned.sum()),
        "drawn": int(drawn.sum()),
        "lower_level": int((drawn & (j.level > 0)).sum()),
        "plants_drawn": int((drawn & flora).sum()),
        "entities_drawn": int((drawn & ~flora).sum()),
        **tris,
        "triangles": total,
        "budget": FRAME_BUDGET,
        "over_budget": total > FRAME_BUDGET,
    }


# -- pixels ------------------------------------------------------------------------------------


def _view(sc: Scene, width: int, height: int) -> raster.View:
    cam, o = sc.camera, sc.origin
    eye = [o[i] + float(cam["position"][i]) for i in range(3)]
    target = [o[i] + float(cam["look_at"][i]) for i in range(3)]
    ortho = cam["type"] == "orthographic"
    return raster.View.looking(
        eye,
        target,
        width,
        height,
        ortho=ortho,
        half_height=float(cam["size"]) / 2.0,
        fov_deg=float(cam["fov_deg"]),
        near=float(cam["near"]),
        far=float(cam["far"]),
    )


def _light(world) -> raster.Light:
    lt = getattr(world, "light", None)
    if lt is None:
        return raster.Light(raster.vec3(raster.unit(np.array([0.4, 1.0, 0.3]))), (1.0, 1.0, 1.0), (0.25, 0.25, 0.25))
    d = raster.unit(-np.asarray(lt.direction, dtype=np.float64))
    return raster.Light(raster.vec3(d), raster.vec3(lt.color), raster.vec3(lt.ambient))


class Painter:
    """Draws one scene at any size: its geometry (ground at the chosen levels, skirts, water,
    each drawn entity's model level placed) is made once."""

    def __init__(self, sc: Scene, looks: Looks, models: dict[str, dict[int, ModelTriangles]]):
        self.sc, self.looks, self.models = sc, looks, models
        self.pieces: list[Piece] = self._ground() + self._entities()

    def frame(self, width: int, height: int, ss: int) -> np.ndarray:
        """The view, ``(height, width, 3) uint8`` (drawn at ``ss`` x ``ss`` samples a pixel)."""
        world = self.sc.gen.world
        bg = argb_rgba(int(getattr(world, "background", 0xFF000000)))[:3]
        frame = raster.Frame(_view(self.sc, width, height), bg, _light(world), ss=ss)
        for piece in self.pieces:
            piece.add_to(frame)
        return frame.render()

    def _ground(self) -> list[Piece]:
        from veduta.world.draw import chunk_ground, ground_mesh, skirt_mesh, water_mesh

        sc, gen, looks = self.sc, self.sc.gen, self.looks
        grounds = [
            looks.look(g, f"biome {b}").surface for b, g in zip(gen.p.biome_names, gen.p.biome_grounds, strict=True)
        ]
        wname = getattr(getattr(gen.world, "terrain", None), "water", "") or ""
        water = (
            looks.look(wname, "the terrain's water").surface
            if wname
            else raster.Surface(albedo=BUILTIN_WATER, alpha="blend")
        )
        c, cell = gen.p.chunk, gen.p.cell_mm / 1000.0
        out = []
        for i, (cx, cz) in enumerate(sc.chunks):
            if not sc.visible[i]:
                continue
            k = int(sc.level[i])
            m = ground_mesh(gen, cx, cz, k)
            pos = np.asarray(m["vertices"])[np.asarray(m["triangles"])]
            out.append(Piece(pos, None, pos[..., [0, 2]], grounds, np.asarray(m["biomes"])))
            s = skirt_mesh(gen, cx, cz, k)
            if len(s["triangles"]):  # each skirt quad in the ground of the cell along its edge
                pos = np.asarray(s["vertices"])[np.asarray(s["triangles"])]
                mid = (pos[:, 0] + pos[:, 1] + pos[:, 2]) / 3.0
                ii = np.clip(np.floor(mid[:, 0] / cell).astype(np.int64) - cx * c, 0, c - 1)
                jj = np.clip(np.floor(mid[:, 2] / cell).astype(np.int64) - cz * c, 0, c - 1)
                uv = np.stack([pos[..., 0] + pos[..., 2], -pos[..., 1]], axis=-1)
                out.append(Piece(pos, None, uv, grounds, np.asarray(chunk_ground(gen, cx, cz).biome)[jj, ii]))
            w = water_mesh(gen, cx, cz)
            if len(w["triangles"]):
                pos = np.asarray(w["vertices"])[np.asarray(w["triangles"])]
                out.append(Piece(pos, None, pos[..., [0, 2]], [water], None))
        return out

    def _entities(self) -> list[Piece]:
        sc, j = self.sc, self.sc.judged
        groups: dict[tuple[str, int, str, bool], list[int]] = {}
        for i in np.flatnonzero(j.triangles > 0).tolist():
            t = sc.things[i]
            mirrored = sum(v < 0 for v in t.scale) % 2 == 1
            groups.setdefault((t.model, int(j.level[i]), t.material, mirrored), []).append(i)
        out: list[Piece] = []
        for (model, level, material, mirrored), members in sorted(groups.items()):
            mt = self.models.get(model, {}).get(level)
            if mt is None or not len(mt.positions):
                continue
            things = [sc.things[i] for i in members]
            r = np.stack([raster.rotation(t.rotation) for t in things])
            scale = np.stack([np.asarray(t.scale) for t in things])
            pos = _apply_many(r * scale[:, None, :], mt.positions, np.stack([t.position for t in things]))
            nrm = _apply_many(r, mt.normals, None, 1.0 / scale)  # (R S)^-T = R S^-1
            if mirrored:  # a mirror turns the winding round: put it back
                pos, nrm = pos[..., [0, 2, 1], :], nrm[..., [0, 2, 1], :]
                mt = ModelTriangles(mt.positions, mt.normals, mt.uvs[:, [0, 2, 1], :], mt.slots, mt.materials)
            out += mt.pieces(self.looks, f"model {model}", material, pos, nrm)
        return out


def _apply_many(m: np.ndarray, p: np.ndarray, t: np.ndarray | None, inv: np.ndarray | None = None) -> np.ndarray:
    """Points p ``(n, 3, 3)`` through k matrices m ``(k, 3, 3)`` (and translations t ``(k, 3)``):
    ``(k, n, 3, 3)``, each coordinate summed in index order; with *inv* ``(k, 3)`` the points are
    first divided by it per axis (normals under a scale)."""
    x, y, z = p[None, ..., 0], p[None, ..., 1], p[None, ..., 2]
    if inv is not None:
        x, y, z = x * inv[:, None, None, 0], y * inv[:, None, None, 1], z * inv[:, None, None, 2]
    out = []
    for i in range(3):
        v = x * m[:, i, 0, None, None] + y * m[:, i, 1, None, None] + z * m[:, i, 2, None, None]
        if t is not None:
            v = v + t[:, i, None, None]
        out.append(v)
    return np.stack(out, axis=-1)


# -- the picture -------------------------------------------------------------------------------


def _fmt(n: int) -> str:
    return f"{n:,}"


def report_lines(sc: Scene, rep: dict[str, Any]) -> list[tuple[str, tuple[int, int, int]]]:
    """The draw report as lines of text (and their colours) for the picture."""
    cam = sc.camera
    lens = (
        f"perspective, {cam['fov_deg']:g} deg"
        if cam["type"] == "perspective"
        else f"orthographic, {cam['size']:g} m high"
    )
    levels = ", ".join(f"{n} at level {k}" for k, n in rep["ground_levels"].items()) or "none"
    over = rep["triangles"] - rep["budget"]
    lines = [
        (f"camera: {lens}, near {cam['near']:g} m, far {cam['far']:g} m", INK),
        (f"chunks loaded: {rep['chunks']} ({rep['chunks_culled']} culled, {rep['chunks_drawn']} drawn)", INK),
        (f"  ground drawn: {levels}", DIM),
        (
            f"triangles: {_fmt(rep['triangles'])} of the {_fmt(rep['budget'])} a frame"
            + (f" (over by {_fmt(over)})" if over > 0 else f" ({_fmt(-over)} to spare)"),
            OVER if over > 0 else INK,
        ),
        (f"  ground {_fmt(rep['ground'])}, skirts {_fmt(rep['skirts'])}, water {_fmt(rep['water'])}", DIM),
        (f"  flora {_fmt(rep['flora'])}, entities {_fmt(rep['entities'])}", DIM),
        (f"entities considered: {_fmt(rep['considered'])}", INK),
        (f"  culled (outside the view): {_fmt(rep['culled'])}", DIM),
        (f"  too far (past draw_distance): {_fmt(rep['too_far'])}", DIM),
        (f"  thinned (flora, by distance): {_fmt(rep['thinned'])}", DIM),
        (f"  drawn: {_fmt(rep['drawn'])}, {_fmt(rep['lower_level'])} of them at a lower level", DIM),
    ]
    return lines


def picture(
    world: str,
    sc: Scene,
    rep: dict[str, Any],
    console: np.ndarray,
    large: np.ndarray | None,
    boxes: list[list[int]] | None = None,
) -> Image.Image:
    """The console frame with the report under it, and the larger frame beside them; *boxes* gets
    each frame's pixels in the picture (left, top, right, bottom)."""
    from PIL import Image, ImageDraw

    from veduta.tools.mapimage import _font

    font = _font()
    lines = report_lines(sc, rep)
    line_h = 12
    cw, ch = console.shape[1], console.shape[0]
    title = f"world {world} seen from cell [{sc.at[0]}, {sc.at[1]}] (the camera at the cell's centre)"
    left_h = line_h + ch + line_h + len(lines) * line_h
    text_w = max(int(ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength(s, font=font)) for s, _ in lines)
    left_w = max(cw, text_w)
    width = PAD + left_w + (PAD * 2 + large.shape[1] if large is not None else 0) + PAD
    height = PAD + line_h + max(left_h, line_h + (large.shape[0] if large is not None else 0)) + PAD
    width = max(width, PAD * 2 + int(ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength(title, font=font)))
    img = Image.new("RGB", (width, height), PAPER)
    d = ImageDraw.Draw(img)
    d.text((PAD, PAD), title, fill=INK, font=font)
    y = PAD + line_h
    d.text((PAD, y), f"console frame, {cw} x {ch} px", fill=DIM, font=font)
    img.paste(Image.fromarray(console, "RGB"), (PAD, y + line_h))
    if boxes is not None:
        boxes.append([PAD, y + line_h, PAD + cw, y + line_h + ch])
    ty = y + line_h + ch + 4
    for text, colour in lines:
        d.text((PAD, ty), text, fill=colour, font=font)
        ty += line_h
    if large is not None:
        x = PAD + left_w + 2 * PAD
        d.text((x, y), f"the same view at {large.shape[1]} x {large.shape[0]} px", fill=DIM, font=font)
        img.paste(Image.fromarray(large, "RGB"), (x, y + line_h))
        if boxes is not None:
            boxes.append([x, y + line_h, x + large.shape[1], y + line_h + large.shape[0]])
    return img


# -- the tool ------------------------------------------------------------------------------------


def preview_world(
    project: Project,
    world: str,
    at: Sequence[int] = (0, 0),
    out: str | None = None,
    scale: int = DEFAULT_SCALE,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Draw what world *world*'s camera sees from start cell *at*; write the PNG to *out* when
    given. ``{"world", "at", "origin", "camera", "frames", "draw" (the draw report), "chunks",
    "models", "materials", "out", "width", "height", "bytes", "findings", "messages", "png"}``
    (the faces write or send ``png``; ``--json`` shows the rest)."""
    from veduta.base.fsutil import write_output
    from veduta.tools.export.cooked import PREVIEW, Cooked
    from veduta.tools.export.gltf import model_levels
    from veduta.tools.inspect_world import model_draws, needed_models
    from veduta.tools.world_query import check_cell
    from veduta.world.draw import Drawer
    from veduta.world.generator import Generator
    from veduta.world.params import prefab_names

    at = check_cell(at, "at")
    if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= MAX_SCALE:
        raise UsageError(f"scale {scale!r} out of range [1, {MAX_SCALE}] (the larger frame is scale x 320 x 240)")

    def step(done: float, message: str) -> None:
        if progress is not None:
            progress(done, 4, message)

    step(0, "reading the world")
    cooked = Cooked(project, finite=PREVIEW)
    rec = cooked.require("world", world)
    prefabs = {}
    for n in prefab_names(rec):
        got = cooked.get("prefab", n, f"world {world}")
        if got is not None:
            prefabs[n] = got
    gen = Generator(rec, prefabs)
    cells = gen.p.cells
    if not (-cells <= at[0] < cells and -cells <= at[1] < cells):
        raise UsageError(
            f"start cell {at[0]},{at[1]} is outside world {world}: its cells are {-cells}..{cells - 1} on x and z"
        )
    models, _, _ = model_draws(project, needed_models(gen))
    # a model whose cooked file cannot be drawn (a NaN or an infinity in it) is left out of the
    # view as a broken one is, with Cooked's warning: not counted as drawn beside a picture without it
    models = {n: m for n, m in models.items() if cooked.get("model", n, f"world {world}") is not None}
    drawer = Drawer(gen, models)
    step(1, "deciding what is drawn")
    sc = scene(gen, drawer, at)
    rep = draw_report(sc, drawer)
    used = sorted({t.model for t, k in zip(sc.things, sc.judged.triangles.tolist(), strict=True) if k})
    tris: dict[str, dict[int, ModelTriangles]] = {}
    for name in used:
        mesh = cooked.get("model", name, f"world {world}")
        if mesh is not None:
            tris[name] = {lv["level"]: ModelTriangles.of_level(lv) for lv in model_levels(cooked, mesh, name)}
    looks = Looks(cooked)
    painter = Painter(sc, looks, tris)
    step(2, "drawing the console frame")
    console = painter.frame(CONSOLE[0], CONSOLE[1], 1)
    large = None
    if scale > 1:
        step(3, f"drawing the frame at {scale} x")
        large = painter.frame(CONSOLE[0] * scale, CONSOLE[1] * scale, 2)
    boxes: list[list[int]] = []
    img = picture(world, sc, rep, console, large, boxes)
    from veduta.tools.mapimage import png_bytes

    data = png_bytes(img)
    step(4, "done")
    if out is not None:
        write_output(str(out), data)
    per_model: dict[str, dict[str, Any]] = {}
    for t, k, lv in zip(sc.things, sc.judged.triangles.tolist(), sc.judged.level.tolist(), strict=True):
        m = per_model.setdefault(t.model, {"model": t.model, "considered": 0, "drawn": 0, "levels": {}, "triangles": 0})
        m["considered"] += 1
        if k:
            m["drawn"] += 1
            m["triangles"] += k
            m["levels"][str(lv)] = m["levels"].get(str(lv), 0) + 1
    chunks = []
    for i, key in enumerate(sc.chunks):
        cg = drawer.chunk(*key).ground
        row: dict[str, Any] = {
            "chunk": list(key),
            "drawn": bool(sc.visible[i]),
            "distance_m": round(float(sc.distance[i]), 3),
        }
        if sc.visible[i]:
            row["level"] = int(sc.level[i])
            row["grid"] = int(cg.grids[int(sc.level[i])])
        chunks.append(row)
    materials = sorted(set(gen.p.biome_grounds) | {n for m in tris.values() for t in m.values() for n in t.materials})
    frames = [{"width": CONSOLE[0], "height": CONSOLE[1], "supersample": 1, "box": boxes[0]}]
    if large is not None:
        frames.append({"width": large.shape[1], "height": large.shape[0], "supersample": 2, "box": boxes[1]})
    return {
        "world": world,
        "at": list(at),
        "origin": [round(v, 4) for v in sc.origin],
        "camera": sc.camera,
        "frames": frames,
        "draw": rep,
        "chunks": chunks,
        "models": [per_model[k] for k in sorted(per_model)],
        "materials": [looks.look(m).info for m in materials if m],
        "out": None if out is None else str(out),
        "width": img.width,
        "height": img.height,
        "bytes": len(data),
        "findings": cooked.findings,
        "messages": cooked.messages,
        "png": data,
    }
