"""texture/1 sources to TEXR (docs/formats/texture.md; container spec "TEXR").

Stages, each callable alone:

* :func:`validate` checks the positioned JSON, reads every image layer's PNG through
  ``ctx.read_dep`` (so each lands in META deps) and returns a :class:`TextureSpec`, or None
  after reporting every problem;
* :func:`build` composites the layers, builds the mip chain and returns the ``Texture`` record.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veduta.base.errors import quote
from veduta.compile import CompileContext
from veduta.compile.common import HEADER, NAME, check_name, load_validated, one_of
from veduta.compile.image import (
    MAX_SIDE,
    ImageError,
    argb_to_rgba,
    checker,
    composite,
    decode_png,
    from_premultiplied,
    mip_chain,
    pack_argb,
    png_size,
    to_premultiplied,
)
from veduta.formats.texture import Clip, Edge, Texture
from veduta.source.diagnostics import Report
from veduta.source.fields import (
    INVALID,
    NAME_RE,
    Any_,
    BoolSpec,
    Color,
    Declared,
    Enum,
    Field,
    Int,
    ListOf,
    Num,
    ObjectSpec,
    Reference,
    Spec,
    Values,
    Variants,
    Vec,
    describe,
    js_pattern,
    schema_rules,
)
from veduta.source.jsonpos import Arr, Node, Obj, join_path

FORMAT = "texture/1"
MAX_LAYERS = 32
MAX_CLIPS = 256
MAX_CLIP_FRAMES = 4096
MAX_GRID = 256
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1

#: Image paths: relative to the assets folder, forward slashes, no "." or ".." parts, no
#: backslashes or control characters, ".png" (spaces and non-ASCII letters are fine).
PATH_RE = re.compile(r"(?!.*(?:^|/)\.{1,2}(?:/|$))[^/\\\x00-\x1f]+(?:/[^/\\\x00-\x1f]+)*\.[pP][nN][gG]")
IMAGE_PATH = Reference(
    "image",
    pattern=PATH_RE,
    what="a PNG path relative to the assets folder "
    '(forward slashes, no "." or ".." parts, no backslashes, ending in .png)',
)

LAYER_TYPES = ("image", "fill", "checker")
BLENDS = ("normal", "multiply")
COMMON_LAYER_FIELDS = {
    "type": Field(Any_()),
    "opacity": Field(Num(0, 1), 1.0),
    "blend": Field(Enum(*BLENDS), "normal"),
}
LAYER_FIELDS = {
    "image": {
        "path": Field(IMAGE_PATH, doc="A PNG, relative to the assets folder."),
        "at": Field(Vec(2, Int(-MAX_SIDE, MAX_SIDE)), (0, 0), "[x, y] of the image's top-left pixel."),
    },
    "fill": {"color": Field(Color(), doc="The whole texture in one colour.")},
    "checker": {
        "colors": Field(ListOf(Color(), min_len=2, max_len=2), doc="The two colours, first at the top left."),
        "cell": Field(Int(1, MAX_SIDE), 8, "The squares' side in pixels."),
    },
}
_ALL_LAYER_FIELDS = {k for f in LAYER_FIELDS.values() for k in f}


def _unknown_layer_field(kind: str) -> Callable[[str], str]:
    def message(key: str) -> str:
        if key in _ALL_LAYER_FIELDS:
            return f"not used by a layer of type {kind}"
        import difflib

        close = difflib.get_close_matches(key, [*COMMON_LAYER_FIELDS, *LAYER_FIELDS[kind]], n=1, cutoff=0.75)
        return f'unknown field (did you mean "{close[0]}"?)' if close else "unknown field"

    return message


LAYER_RECORDS = {
    k: ObjectSpec({**COMMON_LAYER_FIELDS, **f}, unknown=_unknown_layer_field(k)) for k, f in LAYER_FIELDS.items()
}
_LAYER_TYPE = Enum(*LAYER_TYPES)
LAYERS = ListOf(Variants("type", LAYER_RECORDS, "What the layer draws."), min_len=1, max_len=MAX_LAYERS)

CLIP = ObjectSpec(
    {
        "frames": Field(ListOf(Int(0, 65535), min_len=1, max_len=MAX_CLIP_FRAMES)),
        "fps": Field(Num(gt=0, le=1000), 8.0),
        "loop": Field(BoolSpec(), True),
        "next": Field(Reference("clip", optional=True), ""),
    }
)

EDGE = ObjectSpec(
    {
        "priority": Field(Int(1, 1_000_000)),
        "width": Field(Num(gt=0, le=4), 0.25),
        "roughness": Field(Num(0, 1), 0.5),
        "seed": Field(Int(I64_MIN, I64_MAX), 0),
    }
)


@dataclass
class _Layer:
    opacity: float
    blend: str


@dataclass
class ImageLayer(_Layer):
    """An image layer: ``pixels`` decoded from ``path``, placed at ``at``."""

    pixels: np.ndarray  # (h, w, 4) uint8
    at: tuple[int, int]
    path: str
    where: Node | None  # the node errors about the layer's placement point at
    where_path: str


@dataclass
class FillLayer(_Layer):
    color: int


@dataclass
class CheckerLayer(_Layer):
    colors: tuple[int, int]
    cell: int


#: one validated layer
LayerSpec = ImageLayer | FillLayer | CheckerLayer


@dataclass
class TextureSpec:
    width: int
    height: int
    layers: list[LayerSpec]
    tiling: bool
    wrap: int  # 0 repeat, 1 clamp
    mipmaps: bool
    grid: tuple[int, int]
    clips: list[Clip] = field(default_factory=list)
    play: str = ""
    edge: Edge | None = None
    autotile: bool = False


class Clips(Spec):
    """``{"name": {clip}, ...}``; returns {name: Values} even when some clips have errors (those
    are reported; ``vals.ok`` tells), so the checks between clips still run."""

    what = "an object of clips by name"

    def read(self, rep: Report, node: Node, path: str) -> Any:
        if not isinstance(node, Obj):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        if len(node.value) > MAX_CLIPS:
            rep.error(node, path, f"{len(node.value)} clips, more than the limit of {MAX_CLIPS}")
            return INVALID
        out = {}
        for name, child in node.items():
            p = join_path(path, name)
            if not NAME_RE.fullmatch(name):
                rep.error(
                    node.keys[name],
                    p,
                    f'"{name}" is not a valid clip name (1-64 of a-z, 0-9, _, -, starting with a letter or digit)',
                )
            out[name] = CLIP.read_partial(rep, child, p)  # INVALID when not an object (reported)
        return out

    def schema(self) -> dict:
        return {
            "type": "object",
            "propertyNames": {"pattern": js_pattern(NAME_RE)},
            "additionalProperties": CLIP.schema(),
            "maxProperties": MAX_CLIPS,
        }


TOP = ObjectSpec(
    {
        "veduta": HEADER,
        "name": Field(NAME, ""),
        "size": Field(Vec(2, Int(1, MAX_SIDE)), None),
        "layers": Field(Declared(LAYERS)),  # read by _read_layers
        "tiling": Field(BoolSpec(), False),
        "wrap": Field(Enum("repeat", "clamp"), None),
        "mipmaps": Field(BoolSpec(), None),
        "grid": Field(Vec(2, Int(1, MAX_GRID)), None),
        "clips": Field(Clips(), {}),
        "play": Field(Reference("clip", optional=True), ""),
        "edge": Field(EDGE, None),
        "autotile": Field(BoolSpec(), False),
    }
)
# what validate checks between the fields (located as it locates them)
schema_rules(
    TOP,
    {
        "if": {"properties": {"tiling": {"const": True}}, "required": ["tiling"]},
        "then": {
            "properties": {
                "wrap": {
                    "not": {"const": "clamp"},
                    "errorMessage": 'a tiling texture repeats (leave wrap out or set it to "repeat")',
                }
            }
        },
    },
    {
        "if": {
            "properties": {
                "layers": {
                    "type": "array",
                    "not": {"contains": {"properties": {"type": {"const": "image"}}, "required": ["type"]}},
                }
            },
            "required": ["layers"],
        },
        "then": {"required": ["size"], "errorMessage": "size is required (no layer is an image to take the size from)"},
    },
)


def read_image(ctx: CompileContext, rel: str, node: Node | None, path: str) -> np.ndarray | None:
    """Read and decode a PNG through ``ctx.read_dep`` (a META dependency from then on); errors
    point at *node* (None: the file's start).

    The size is checked from the PNG header before decoding, so a huge image is an error, not an
    out-of-memory.  Every problem is an error naming the file.
    """
    rep = ctx.report
    data = ctx.read_dep(rel)
    if data is None:
        full = os.path.join(ctx.assets_dir, rel)
        why = ctx.unread.get(rel)
        if why is not None:  # too large, or memory short of it: not the permissions
            rep.error(
                node,
                path,
                f"image {quote(rel)} is {why}"
                if why.startswith("too large")
                else f"image {quote(rel)} cannot be read ({why})",
            )
        elif os.path.lexists(full):
            why = "is not a readable file" if not os.path.isfile(full) else "cannot be read (permissions?)"
            rep.error(node, path, f"image {quote(rel)} {why}")
        else:
            rep.error(node, path, f"image {quote(rel)} not found (paths are relative to the assets folder)")
        return None
    try:
        w, h = png_size(data)
        if w > MAX_SIDE or h > MAX_SIDE:
            rep.error(
                node, path, f"image {quote(rel)} is {w} x {h} pixels, beyond the limit of {MAX_SIDE} x {MAX_SIDE}"
            )
            return None
        return decode_png(data)
    except ImageError as exc:
        rep.error(node, path, f"image {quote(rel)} {exc}")
        return None


def _read_layers(ctx: CompileContext, node: Node, path: str) -> list[LayerSpec] | None:
    """The layers, or None when one has a problem (every problem reported)."""
    rep = ctx.report
    if not isinstance(node, Arr):
        rep.error(node, path, f"expected an array of layers, found {describe(node)}")
        return None
    if not 1 <= len(node) <= MAX_LAYERS:
        rep.error(
            node,
            path,
            "must not be empty" if not len(node) else f"{len(node)} layers, more than the limit of {MAX_LAYERS}",
        )
        return None
    out: list[LayerSpec] = []
    bad = False
    images: dict[str, np.ndarray | None] = {}
    for i, item in enumerate(node):
        p = join_path(path, i)
        if not isinstance(item, Obj):
            rep.error(item, p, f"expected an object, found {describe(item)}")
            bad = True
            continue
        tnode = item.get("type")
        if tnode is None:
            rep.error(item, join_path(p, "type"), f"required field is missing (want {one_of(LAYER_TYPES)})")
            bad = True
            continue
        kind = _LAYER_TYPE.read(rep, tnode, join_path(p, "type"))
        if kind is INVALID:
            bad = True
            continue
        vals = LAYER_RECORDS[kind].read_partial(rep, item, p)
        pixels = None
        if kind == "image" and vals["path"] is not INVALID:
            rel = vals["path"]
            if rel not in images:
                images[rel] = read_image(ctx, rel, vals.node("path"), join_path(p, "path"))
            pixels = images[rel]
        if not vals.ok or (kind == "image" and pixels is None):
            bad = True
            continue
        layer: LayerSpec
        if pixels is not None:
            at = "at" if "at" in vals.nodes else "path"
            layer = ImageLayer(
                vals["opacity"],
                vals["blend"],
                pixels=pixels,
                at=vals["at"],
                path=vals["path"],
                where=vals.node(at),
                where_path=join_path(p, at),
            )
        elif kind == "fill":
            layer = FillLayer(vals["opacity"], vals["blend"], color=vals["color"])
        else:
            layer = CheckerLayer(vals["opacity"], vals["blend"], colors=tuple(vals["colors"]), cell=vals["cell"])
        out.append(layer)
    return None if bad else out


def _check_clips(rep: Report, vals: Values, frames: int | None, grid_text: str) -> list[Clip] | None:
    """Frames inside the grid, next and play naming clips; the clips in name order, or None."""
    clips = vals["clips"]
    if clips is INVALID:
        return None
    ok = all(c is not INVALID and c.ok for c in clips.values())
    for name, c in clips.items():
        if c is INVALID:
            continue
        p = join_path("clips", name)
        if frames is not None and c["frames"] is not INVALID:
            for k, (f, fnode) in enumerate(zip(c["frames"], c.node("frames").value, strict=True)):
                if f >= frames:
                    rep.error(
                        fnode,
                        join_path(join_path(p, "frames"), k),
                        f"frame {f} is outside the {frames} frame{'s' if frames > 1 else ''} of the "
                        f"{grid_text} (want 0..{frames - 1})",
                    )
                    ok = False
        nxt = c["next"]
        if nxt not in (INVALID, ""):
            if nxt not in clips:
                rep.error(
                    c.node("next"),
                    join_path(p, "next"),
                    f'"{nxt}" is not a clip of this texture (want {one_of(sorted(clips))})',
                )
                ok = False
            elif c["loop"] is True:
                rep.error(
                    c.node("next"),
                    join_path(p, "next"),
                    'a looping clip never ends, so "next" is never played (set "loop": false)',
                )
                ok = False
    play = vals["play"]
    if play not in (INVALID, "") and play not in clips:
        want = f"want {one_of(sorted(clips))}" if clips else "this texture has no clips"
        rep.error(vals.node("play"), "play", f'"{play}" is not a clip of this texture ({want})')
        ok = False
    if not ok:
        return None
    return [
        Clip(name=n, frames=list(c["frames"]), fps=c["fps"], loop=c["loop"], next=c["next"])
        for n, c in sorted(clips.items())
    ]


def validate(root: Obj, ctx: CompileContext) -> TextureSpec | None:
    """Check a texture/1 source and read its images; None after reporting every problem."""
    rep = ctx.report
    vals = TOP.read_partial(rep, root, "")
    if vals is INVALID:
        return None
    ok = vals.ok and check_name(rep, vals, ctx.name)
    lnode = vals.node("layers")
    layers = _read_layers(ctx, lnode, "layers") if lnode is not None else None
    ok &= layers is not None

    # size: given, else the first image layer's
    size = vals["size"]
    if size is None and layers is not None:
        first = next((lay for lay in layers if isinstance(lay, ImageLayer)), None)
        if first is None:
            rep.error(root, "size", "required field is missing (no layer is an image to take the size from)")
            ok = False
        else:
            size = (first.pixels.shape[1], first.pixels.shape[0])
    if size not in (None, INVALID) and layers is not None:
        for lay in layers:
            if not isinstance(lay, ImageLayer):
                continue
            h, w = lay.pixels.shape[:2]
            x, y = lay.at
            if x >= size[0] or y >= size[1] or x + w <= 0 or y + h <= 0:
                rep.error(
                    lay.where,
                    lay.where_path,
                    f"image {quote(lay.path)} ({w} x {h}) at [{x}, {y}] lies outside the {size[0]} x {size[1]} texture",
                )
                ok = False

    # wrap and tiling
    tiling = vals["tiling"]
    wrap = vals["wrap"]
    if wrap == "clamp" and tiling is True:
        rep.error(vals.node("wrap"), "wrap", 'a tiling texture repeats (leave wrap out or set it to "repeat")')
        ok = False
    wrap_code = 1 if wrap == "clamp" or (wrap is None and not tiling) else 0

    # grid, frames, clips
    grid = vals["grid"]
    frames: int | None = None
    grid_text = "single image (no grid)"
    if grid is None:
        frames = 1
    elif grid is not INVALID:
        frames = grid[0] * grid[1]
        grid_text = f"{grid[0]} x {grid[1]} grid"
        if size not in (None, INVALID) and (size[0] % grid[0] or size[1] % grid[1]):
            bad = [
                f"width {size[0]} is not a multiple of {grid[0]}" if size[0] % grid[0] else "",
                f"height {size[1]} is not a multiple of {grid[1]}" if size[1] % grid[1] else "",
            ]
            rep.error(
                vals.node("grid"),
                "grid",
                f"{size[0]} x {size[1]} pixels do not split into "
                f"{grid[0]} x {grid[1]} frames ({', '.join(b for b in bad if b)})",
            )
            ok = False
    clips = _check_clips(rep, vals, frames, grid_text)
    ok &= clips is not None

    # autotile: every frame is 6 x 3 tiles
    cols, rows = grid if grid not in (None, INVALID) else (1, 1)
    if (
        vals["autotile"] is True
        and size not in (None, INVALID)
        and grid is not INVALID
        and size[0] % cols == 0
        and size[1] % rows == 0
    ):
        fw, fh = size[0] // cols, size[1] // rows
        if fw % 6 or fh % 3:
            rep.error(
                vals.node("autotile"),
                "autotile",
                f"a frame of {fw} x {fh} pixels does not split into 6 x 3 tiles "
                f"(want a width that is a multiple of 6 and a height that is a multiple of 3)",
            )
            ok = False

    edge = vals["edge"]
    if not ok or not rep.ok or layers is None or clips is None:  # (a None one made ok False)
        return None
    mipmaps = vals["mipmaps"] if vals["mipmaps"] is not None else grid is None
    return TextureSpec(
        width=size[0],
        height=size[1],
        layers=layers,
        tiling=tiling,
        wrap=wrap_code,
        mipmaps=mipmaps,
        grid=grid or (0, 0),
        clips=clips,
        play=vals["play"],
        edge=None
        if edge is None
        else Edge(priority=edge["priority"], width=edge["width"], roughness=edge["roughness"], seed=edge["seed"]),
        autotile=vals["autotile"],
    )


def composite_layers(width: int, height: int, layers: list[LayerSpec]) -> np.ndarray:
    """Level 0: the layers composited in order over transparent black, ``(h, w, 4) uint8``."""
    first = layers[0]
    if (
        len(layers) == 1
        and isinstance(first, ImageLayer)
        and first.at == (0, 0)
        and first.opacity == 1
        and first.pixels.shape[:2] == (height, width)
    ):
        return first.pixels  # exact, transparent pixels keep their colour
    canvas = np.zeros((height, width, 4), np.float32)
    for lay in layers:
        if isinstance(lay, ImageLayer):
            h, w = lay.pixels.shape[:2]
            x, y = lay.at
            x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, width), min(y + h, height)
            src = to_premultiplied(lay.pixels[y0 - y : y1 - y, x0 - x : x1 - x], lay.opacity)
            composite(canvas[y0:y1, x0:x1], src, lay.blend)
            continue
        if isinstance(lay, FillLayer):
            pixels = np.broadcast_to(np.array(argb_to_rgba(lay.color), np.uint8), (height, width, 4))
        else:
            pixels = checker(width, height, lay.cell, *lay.colors)
        composite(canvas, to_premultiplied(pixels, lay.opacity), lay.blend)
    return from_premultiplied(canvas)


def build(spec: TextureSpec, name: str) -> Texture:
    level0 = composite_layers(spec.width, spec.height, spec.layers)
    chain = mip_chain(level0) if spec.mipmaps else [level0]
    return Texture(
        name=name,
        tiling=spec.tiling,
        layers=len(spec.layers),
        width=spec.width,
        height=spec.height,
        levels=len(chain),
        wrap=spec.wrap,
        images=[pack_argb(lv) for lv in chain],
        grid=spec.grid,
        clips=spec.clips,
        play=spec.play,
        edge=spec.edge,
        autotile=spec.autotile,
    )


def compile_texture(data: bytes, ctx: CompileContext) -> Texture | None:
    """Compile a texture/1 source; None with every problem in ``ctx.report``."""
    spec = load_validated(data, ctx, FORMAT, lambda root: validate(root, ctx))
    if spec is None:
        return None
    return build(spec, ctx.name)
