"""Source parts shared by scene, prefab, world and map sources: cameras, lights, entities,
colours, tags, and the look-ups that check references between assets.

Everything here reads positioned JSON through :mod:`veduta.source.fields` and reports every
problem into a :class:`~veduta.source.diagnostics.Report`; nothing raises for a user mistake.

Source shapes (docs/formats/scene.md has the full reference):

* camera ``{"type": "perspective"|"orthographic", "fov_deg", "size", "near", "far", "position",
  "look_at"}``: ``fov_deg`` only on a perspective camera, ``size`` only on an orthographic one;
* light ``{"direction", "color", "ambient"}``: colours ``"#rrggbb"`` in sRGB, stored as linear RGB
  (:func:`srgb_to_linear`);
* entity ``{"name", "kind", "model", "material", "position", "rotation_deg", "scale", "tags",
  "parent", "visible", "hitbox": {"min", "max"}, "layer", "frame", "anim"}``.

:class:`Refs` resolves references to other assets through the compile context: the referenced
source becomes a META dependency, a missing one is a warning naming it, and facts of an existing
one (a texture's grid and clips, a material's grid, a prefab's footprint) are read from its
source so the referrer can check frames, clips and sizes without cooking it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from veduta.base.errors import quote
from veduta.base.names import NAME_RULE
from veduta.base.project import canonical_path
from veduta.compile import CompileContext
from veduta.formats.scene import Camera, Entity, Light
from veduta.source import too_large
from veduta.source.diagnostics import Report
from veduta.source.fields import (
    INVALID,
    NAME_RE,
    NAME_WHAT,
    Any_,
    BoolSpec,
    Declared,
    Enum,
    Field,
    Int,
    ListOf,
    Num,
    ObjectSpec,
    Reference,
    Scale,
    Spec,
    StrSpec,
    Values,
    Vec,
    color_text,
    describe,
    fmt_num,
    js_pattern,
    parse_color,
    schema_rules,
    unused,
)
from veduta.source.jsonpos import Arr, Node, Obj, join_path, parse, to_plain

T = TypeVar("T")

__all__ = [
    "F32_MAX",
    "COORD",
    "TAG",
    "TAGS",
    "NAME",
    "OPT_NAME",
    "RgbColor",
    "Scale",
    "srgb_to_linear",
    "load_validated",
    "linear_rgb",
    "CAMERA",
    "DEFAULT_CAMERA",
    "read_camera",
    "LIGHT",
    "DEFAULT_LIGHT",
    "read_light",
    "ENTITY",
    "read_entities",
    "Refs",
    "TextureFacts",
    "MaterialFacts",
    "PrefabFacts",
    "check_name",
    "load",
    "one_of",
    "ENTITIES",
    "CAMERA_FIELD",
    "LIGHT_FIELD",
    "ENTITIES_FIELD",
]

#: The largest finite binary32 value.
F32_MAX = 3.4028234663852886e38
#: Coordinates in meters (f32 keeps centimetres up to about 1e5; the world limit is 8192).
COORD_LIMIT = 1e6
COORD = Num(-COORD_LIMIT, COORD_LIMIT)
ANGLE = Num(-3600, 3600)

_NAME_WHAT = NAME_WHAT
NAME = StrSpec(pattern=NAME_RE, what=_NAME_WHAT)
OPT_NAME = StrSpec(pattern=re.compile("|" + NAME_RE.pattern), what=_NAME_WHAT)
TAG = StrSpec(pattern=NAME_RE, what=f"a valid tag ({NAME_RULE})")
MAX_TAGS = 64
TAGS = ListOf(TAG, max_len=MAX_TAGS, unique=True)
MAX_ENTITIES = 4096


def one_of(names) -> str:
    """'"a", "b" or "c"' for messages."""
    names = [f'"{n}"' for n in names]
    if not names:
        return "none"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def vec_text(v) -> str:
    """[1, 0.5, 2] as people write it."""
    return "[" + ", ".join(fmt_num(x) for x in v) + "]"


def check_name(rep: Report, vals: Values, name: str) -> bool:
    """The optional top-level ``name`` must equal the file name (as in model sources)."""
    given = vals.get("name")
    if given and given is not INVALID and given != name:
        rep.error(vals.node("name"), "name", f'{quote(given)} is not the file name (want "{name}")')
        return False
    return True


def load(data: bytes, ctx: CompileContext, fmt: str) -> Obj | None:
    """Strictly parse a source into ``ctx.report``; the root object or None."""
    from veduta.source import load_source

    root, rep = load_source(data, ctx.report.file, fmt)
    ctx.report.items.extend(rep.items)
    return root


def load_validated(data: bytes, ctx: CompileContext, fmt: str, validate: Callable[[Obj], T | None]) -> T | None:
    """``validate(root)`` of the source *data* of format *fmt*, every problem in ``ctx.report``
    as the strict parser's tree gives it (:func:`load`), byte for byte.

    A source the strict parser has nothing to say about (valid JSON with no duplicate key, NaN,
    number out of range, ...: :func:`~veduta.source.load_fast`) is read once, by the standard
    library's decoder, as nodes without positions, and validated into a report that keeps the
    nodes its problems are at (:class:`~veduta.source.Unlocated`); only those are then found in
    the text, in one pass (as a model source is read: :func:`veduta.compile.model.source.
    validate_model`), and so are the values ``ctx.placed`` names. The strict parser, about three
    times slower and with a position kept for every value, reads only a source with such a
    problem, and says where."""
    from veduta.source import Unlocated, load_fast

    root = load_fast(data, fmt)
    if root is None:
        root = load(data, ctx, fmt)
        return None if root is None else validate(root)
    kept, found = ctx.report, Unlocated(ctx.report.file)
    ctx.report = found
    try:
        return validate(root)
    finally:
        ctx.report = kept
        if found.items or ctx.placed:
            kept.items.extend(found.located(data.decode("utf-8"), root, ctx.placed).items)


# -- colours ------------------------------------------------------------------------------------


def srgb_to_linear(byte: int) -> float:
    """An 8-bit sRGB channel to linear light in [0, 1] (IEC 61966-2-1).

    c = byte / 255; linear = c / 12.92 when c <= 0.04045, else ((c + 0.055) / 1.055) ** 2.4,
    computed in 40-digit decimal arithmetic so every machine gets the same double (callers store
    it as the nearest f32).
    """
    from decimal import Decimal

    from veduta.compile.image import srgb_decode

    return srgb_decode(Decimal(byte) / 255)


def linear_rgb(argb: int) -> tuple[float, float, float]:
    """0xAARRGGBB (alpha ignored) to linear (r, g, b), each rounded to the nearest f32."""
    from veduta.container.binary import to_f32

    return tuple(to_f32(srgb_to_linear((argb >> s) & 0xFF)) for s in (16, 8, 0))  # type: ignore[return-value]


class RgbColor(Spec):
    """``"#rrggbb"`` only (a light has no alpha); returns 0xFFRRGGBB."""

    what = 'a colour "#rrggbb"'

    def read(self, rep, node, path):
        if node.kind != "string":
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        c = parse_color(node.value)
        if c is None or len(node.value) != 7:
            extra = " (a light colour has no alpha)" if c is not None else ""
            rep.error(node, path, f"{quote(node.value)} is not {self.what}{extra}")
            return INVALID
        return c

    def schema(self) -> dict:
        return {"type": "string", "pattern": js_pattern(r"#[0-9a-fA-F]{6}")}

    def to_json(self, value):
        return color_text(value) if isinstance(value, int) else value


# -- camera ------------------------------------------------------------------------------------

CAMERA_TYPES = ("perspective", "orthographic")
CAMERA = ObjectSpec(
    {
        "type": Field(Enum(*CAMERA_TYPES), "perspective"),
        "fov_deg": Field(Num(gt=0, lt=180), 60.0),
        "size": Field(Num(gt=0, le=COORD_LIMIT), 10.0),
        "near": Field(Num(gt=0, le=COORD_LIMIT), 0.1),
        "far": Field(Num(gt=0, le=COORD_LIMIT), 100.0),
        "position": Field(Vec(3, COORD), (0.0, 5.0, 10.0)),
        "look_at": Field(Vec(3, COORD), (0.0, 0.0, 0.0)),
    }
)
_NOT_USED_BY = {"perspective": "size", "orthographic": "fov_deg"}
schema_rules(
    CAMERA,
    {
        "if": {"properties": {"type": {"const": "orthographic"}}, "required": ["type"]},
        "then": {"properties": {_NOT_USED_BY["orthographic"]: unused("not used by an orthographic camera")}},
        "else": {"properties": {_NOT_USED_BY["perspective"]: unused("not used by a perspective camera")}},
    },
)

#: The camera of a source that has none.
DEFAULT_CAMERA = Camera(
    ortho=False, fov_deg=60.0, size=0.0, near=0.1, far=100.0, position=(0.0, 5.0, 10.0), look_at=(0.0, 0.0, 0.0)
)


def read_camera(rep: Report, node: Node | None, path: str = "camera") -> Camera | None:
    """A camera source object (absent: :data:`DEFAULT_CAMERA`); None after errors."""
    if node is None:
        return DEFAULT_CAMERA
    vals = CAMERA.read_partial(rep, node, path)
    if vals is INVALID:
        return None
    ok = vals.ok
    kind = vals["type"]
    if kind is not INVALID:
        other = _NOT_USED_BY[kind]
        if other in vals.nodes:
            article = "an" if kind == "orthographic" else "a"
            rep.error(vals.node(other), join_path(path, other), f"not used by {article} {kind} camera")
            ok = False
    near, far = vals["near"], vals["far"]
    if near is not INVALID and far is not INVALID and not far > near:
        rep.error(vals.where("far"), join_path(path, "far"), f"{fmt_num(far)} is not beyond near ({fmt_num(near)})")
        ok = False
    pos, at = vals["position"], vals["look_at"]
    if pos is not INVALID and at is not INVALID and pos == at:
        rep.error(
            vals.where("look_at"), join_path(path, "look_at"), "is the camera position (the camera must look somewhere)"
        )
        ok = False
    if not ok:
        return None
    ortho = kind == "orthographic"
    return Camera(
        ortho=ortho,
        fov_deg=0.0 if ortho else vals["fov_deg"],
        size=vals["size"] if ortho else 0.0,
        near=near,
        far=far,
        position=pos,
        look_at=at,
    )


# -- light -------------------------------------------------------------------------------------

LIGHT = ObjectSpec(
    {
        "direction": Field(Vec(3, Num(-COORD_LIMIT, COORD_LIMIT)), (-0.4, -1.0, -0.3)),
        "color": Field(RgbColor(), 0xFFFFFFFF),
        "ambient": Field(RgbColor(), 0xFF404040),
    }
)

#: The light of a source that has none: white from above, dark grey ambient.
DEFAULT_LIGHT = Light(direction=(-0.4, -1.0, -0.3), color=linear_rgb(0xFFFFFFFF), ambient=linear_rgb(0xFF404040))


def read_light(rep: Report, node: Node | None, path: str = "light") -> Light | None:
    """A light source object (absent: :data:`DEFAULT_LIGHT`); colours become linear RGB."""
    if node is None:
        return DEFAULT_LIGHT
    vals = LIGHT.read_partial(rep, node, path)
    if vals is INVALID:
        return None
    ok = vals.ok
    d = vals["direction"]
    if d is not INVALID and not any(d):
        rep.error(vals.node("direction"), join_path(path, "direction"), "must not be [0, 0, 0]")
        ok = False
    if not ok:
        return None
    return Light(direction=d, color=linear_rgb(vals["color"]), ambient=linear_rgb(vals["ambient"]))


# -- references --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextureFacts:
    """What a referrer may check about a texture, read from its source.

    ``grid`` is (columns, rows), (0, 0) without a grid, None when the source's grid is unusable
    (its own cook reports that); ``clips`` the clip names, None when unusable.
    """

    name: str
    grid: tuple[int, int] | None
    clips: tuple[str, ...] | None

    @property
    def frames(self) -> int | None:
        return None if self.grid is None else max(1, self.grid[0] * self.grid[1])


@dataclass(frozen=True)
class MaterialFacts:
    """A material's texture name ("" for none), its own grid (None when it sets none or it is
    unusable) and the facts of its texture (None when it has none or it does not exist)."""

    name: str
    texture: str | None
    own_grid: tuple[int, int] | None
    texture_facts: TextureFacts | None

    @property
    def grid(self) -> tuple[int, int] | None:
        """The grid frames are picked from: the material's, else its texture's; None = unknown."""
        if self.own_grid is not None:
            return self.own_grid
        if self.texture == "":
            return (0, 0)
        if self.texture_facts is not None:
            return self.texture_facts.grid
        return None


@dataclass(frozen=True)
class PrefabFacts:
    name: str
    footprint: tuple[float, float] | None


def _grid_of(v) -> tuple[int, int] | None:
    if isinstance(v, list) and len(v) == 2 and all(type(x) is int and 1 <= x <= 256 for x in v):
        return (v[0], v[1])
    return None


def texture_facts(name: str, root) -> TextureFacts:
    plain = to_plain(root) if isinstance(root, Node) else None
    if not isinstance(plain, dict):
        return TextureFacts(name, None, None)
    grid = _grid_of(plain["grid"]) if "grid" in plain else (0, 0)
    clips = plain.get("clips", {})
    names = tuple(sorted(clips)) if isinstance(clips, dict) else None
    return TextureFacts(name, grid, names)


class Refs:
    """Reference look-ups for one compile, each source parsed once.

    ``model``/``texture``/``material``/``prefab``/``map`` resolve a reference written in the
    source: the referenced source goes into ``ctx.deps``; a missing asset is a warning naming it
    (and its would-be path a ``missing`` dependency, so adding it makes the referrer stale).
    A material's own texture is looked up quietly (the material's cook warns about it) but is a
    dependency too, since the referrer checks clips and frames against it.
    """

    def __init__(self, ctx: CompileContext):
        self.ctx = ctx
        self._roots: dict[tuple[str, str], object] = {}

    def _root(self, kind: str, name: str, where: Node | None, path: str, quiet: bool = False):
        key = (kind, name)
        if key in self._roots:
            root = self._roots[key]
            if root is _MISSING and not quiet and where is not None:
                # every reference to a missing asset is located in the report
                self.ctx.reference(kind, name, where, path)
            return root
        if quiet:
            rel = self.ctx.index.resolve(kind, name)
            if rel is None:
                self.ctx.deps.setdefault(canonical_path(kind, name), None)
                data = None
            else:
                data = self.ctx.read_dep(rel)
        else:
            rel = self.ctx.reference(kind, name, where, path)
            data = None if rel is None else self.ctx.deps.get(rel)
        if rel is None:
            root = _MISSING
        elif data is None or too_large(data, kind) is not None:  # (its own cook says so)
            root = None
        else:
            root, _ = parse(data)
        self._roots[key] = root
        return root

    def parsed(self, kind: str, name: str):
        """The positioned JSON root of an asset looked up before (None when it is missing, was
        not looked up, or is not valid JSON)."""
        root = self._roots.get((kind, name))
        return None if root is _MISSING else root

    def exists(self, kind: str, name: str, where: Node | None, path: str) -> bool:
        return self._root(kind, name, where, path) is not _MISSING

    def model(self, name: str, where: Node | None, path: str) -> bool:
        return self.exists("model", name, where, path)

    def texture(self, name: str, where: Node | None, path: str, quiet: bool = False) -> TextureFacts | None:
        root = self._root("texture", name, where, path, quiet)
        if root is _MISSING:
            return None
        return texture_facts(name, root)

    def material(self, name: str, where: Node | None, path: str) -> MaterialFacts | None:
        root = self._root("material", name, where, path)
        if root is _MISSING:
            return None
        plain = to_plain(root) if isinstance(root, Node) else None
        if not isinstance(plain, dict):
            return MaterialFacts(name, None, None, None)
        tex = plain.get("texture", "")
        if not isinstance(tex, str) or (tex and not NAME_RE.fullmatch(tex)):
            return MaterialFacts(name, None, None, None)
        own = _grid_of(plain["grid"]) if "grid" in plain else None
        if "grid" in plain and plain["grid"] == [0, 0]:
            own = (0, 0)
        facts = self.texture(tex, None, "", quiet=True) if tex else None
        return MaterialFacts(name, tex, own, facts)

    def prefab(self, name: str, where: Node | None, path: str) -> PrefabFacts | None:
        root = self._root("prefab", name, where, path)
        if root is _MISSING:
            return None
        plain = to_plain(root) if isinstance(root, Node) else None
        fp = plain.get("footprint") if isinstance(plain, dict) else None
        if (
            isinstance(fp, list)
            and len(fp) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x <= 1024 for x in fp)
        ):
            return PrefabFacts(name, (float(fp[0]), float(fp[1])))
        return PrefabFacts(name, None)


_MISSING = object()


# -- entities ----------------------------------------------------------------------------------


def _check_hitbox(rep: Report, vals: Values, path: str) -> None:
    lo, hi = vals["min"], vals["max"]
    bad = [i for i in range(3) if lo[i] > hi[i]]
    if bad:
        axes = ", ".join("xyz"[i] for i in bad)
        rep.error(vals.node("max"), join_path(path, "max"), f"{vec_text(hi)} is below min {vec_text(lo)} on {axes}")


HITBOX = ObjectSpec(
    {
        "min": Field(Vec(3, COORD), doc="[x, y, z] corner, meters, relative to the entity."),
        "max": Field(Vec(3, COORD), doc="[x, y, z] corner, not below min on any axis."),
    },
    check=_check_hitbox,
)

ENTITY = ObjectSpec(
    {
        "name": Field(NAME),
        "kind": Field(OPT_NAME, ""),
        "model": Field(Reference("model", optional=True), ""),
        "material": Field(Reference("material", optional=True), ""),
        "position": Field(Vec(3, COORD), (0.0, 0.0, 0.0)),
        "rotation_deg": Field(Vec(3, ANGLE), (0.0, 0.0, 0.0)),
        "scale": Field(Scale(10000), (1.0, 1.0, 1.0)),
        "tags": Field(TAGS, []),
        "parent": Field(OPT_NAME, ""),
        "visible": Field(BoolSpec(), True),
        "hitbox": Field(HITBOX, None),
        "layer": Field(Int(-1000, 1000), 0),
        "frame": Field(Int(0, 65535), 0),
        "anim": Field(Reference("clip", optional=True), ""),
    }
)


def _check_sprite(rep: Report, refs: Refs, vals: Values, path: str) -> bool:
    """frame and anim against the entity's material (its grid) and the material's texture (clips)."""
    frame, anim, mat = vals["frame"], vals["anim"], vals["material"]
    uses_frame = frame is not INVALID and frame > 0
    uses_anim = anim not in (INVALID, "")
    if mat is INVALID:
        return True
    if not mat:
        ok = True
        if uses_frame:
            rep.error(
                vals.node("frame"),
                join_path(path, "frame"),
                f"frame {frame} needs a material whose texture has frames (this entity has no material)",
            )
            ok = False
        if uses_anim:
            rep.error(
                vals.node("anim"),
                join_path(path, "anim"),
                f'anim "{anim}" needs a material whose texture has clips (this entity has no material)',
            )
            ok = False
        return ok
    facts = refs.material(mat, vals.node("material"), join_path(path, "material"))
    if facts is None:
        return True  # missing material: warned, nothing to check against
    ok = True
    grid = facts.grid
    if uses_frame and grid is not None:
        n = max(1, grid[0] * grid[1])
        if frame >= n:
            shape = f"{grid[0]} x {grid[1]} grid" if grid != (0, 0) else "single image, no grid"
            rep.error(
                vals.node("frame"),
                join_path(path, "frame"),
                f'{frame} is outside the {n} frame{"s" if n > 1 else ""} of material "{mat}" '
                f"({shape}; want 0..{n - 1})",
            )
            ok = False
    if uses_anim:
        if facts.texture == "":
            rep.error(
                vals.node("anim"), join_path(path, "anim"), f'"{anim}" is not a clip: material "{mat}" has no texture'
            )
            ok = False
        elif facts.texture_facts is not None and facts.texture_facts.clips is not None:
            clips = facts.texture_facts.clips
            if anim not in clips:
                want = f"want {one_of(clips)}" if clips else "it has no clips"
                rep.error(
                    vals.node("anim"),
                    join_path(path, "anim"),
                    f'"{anim}" is not a clip of texture "{facts.texture}" ({want})',
                )
                ok = False
    return ok


def _entity(vals: Values) -> Entity:
    hb = vals["hitbox"]
    return Entity(
        name=vals["name"],
        kind=vals["kind"],
        model=vals["model"],
        material=vals["material"],
        position=vals["position"],
        rotation_deg=vals["rotation_deg"],
        scale=vals["scale"],
        tags=list(vals["tags"]),
        parent=vals["parent"],
        visible=vals["visible"],
        hitbox=None if hb is None else (hb["min"], hb["max"]),
        layer=vals["layer"],
        frame=vals["frame"],
        anim=vals["anim"],
    )


def read_entities(rep: Report, node: Node | None, path: str, refs: Refs | None) -> list[Entity] | None:
    """An ``entities`` array (absent: []): every entity checked, names unique, parents existing
    and acyclic, references resolved through *refs* (None: references not checked).
    Returns the entities in file order, or None after errors."""
    if node is None:
        return []
    if not isinstance(node, Arr):
        rep.error(node, path, f"expected an array of entities, found {describe(node)}")
        return None
    if len(node) > MAX_ENTITIES:
        rep.error(node, path, f"{len(node)} entities, more than the limit of {MAX_ENTITIES}")
        return None
    ok = True
    all_vals: list[Values | None] = []
    first: dict[str, int] = {}
    for i, item in enumerate(node):
        p = join_path(path, i)
        vals = ENTITY.read_partial(rep, item, p)
        if vals is INVALID:
            ok = False
            all_vals.append(None)
            continue
        ok &= vals.ok
        name = vals["name"]
        if name is not INVALID:
            if name in first:
                rep.error(
                    vals.node("name"), join_path(p, "name"), f'"{name}" is already the name of entity {first[name]}'
                )
                ok = False
            else:
                first[name] = i
        if refs is not None:
            if vals["model"] not in (INVALID, ""):
                refs.model(vals["model"], vals.node("model"), join_path(p, "model"))
            ok &= _check_sprite(rep, refs, vals, p)
        all_vals.append(vals)
    # parents: exist, not self, no cycle (reported once, at the first entity of the cycle)
    parent_of: dict[str, str] = {}
    for i, entity in enumerate(all_vals):
        if entity is None or entity["parent"] in (INVALID, "") or entity["name"] is INVALID:
            continue
        par = entity["parent"]
        p = join_path(join_path(path, i), "parent")
        if par == entity["name"]:
            rep.error(entity.node("parent"), p, f'"{par}" is the entity itself')
            ok = False
        elif par not in first:
            rep.error(entity.node("parent"), p, f'"{par}" is not the name of an entity here')
            ok = False
        elif first[entity["name"]] == i:
            parent_of[entity["name"]] = par
    reported: set[str] = set()
    for i, entity in enumerate(all_vals):
        if entity is None or entity["name"] not in parent_of or entity["name"] in reported:
            continue
        chain = [entity["name"]]
        seen = {entity["name"]}
        cur = entity["name"]
        while cur in parent_of:
            cur = parent_of[cur]
            if cur in seen:
                if cur == entity["name"]:
                    chain.append(cur)
                    rep.error(
                        entity.node("parent"),
                        join_path(join_path(path, i), "parent"),
                        "parents form a cycle: " + " -> ".join(chain),
                    )
                    reported.update(chain)
                    ok = False
                break
            seen.add(cur)
            chain.append(cur)
    if not ok:
        return None
    return [_entity(v) for v in all_vals if v is not None]  # none is None when ok


# -- small helpers for compilers --------------------------------------------------------------

HEADER = Field(Any_(), None)  # "veduta": checked by load_source

#: The fields scene, prefab and world sources share, read by read_camera, read_light and
#: read_entities with the specs declared here.
ENTITIES = ListOf(ENTITY, max_len=MAX_ENTITIES)
CAMERA_FIELD = Field(Declared(CAMERA), None, "The camera the engine starts with.")
LIGHT_FIELD = Field(Declared(LIGHT), None, "The directional light and the ambient colour.")
ENTITIES_FIELD = Field(Declared(ENTITIES), None, "Entities: a model or sprite each, placed, tagged and parented.")
