"""world/1 sources to WRLD (docs/formats/world.md; world-format.md; container spec "WRLD").

A world source names rules, not meshes: biomes, terrain and features, scatter, sites, places
and vegetation, plus the camera, light and persistent entities of a scene (read by
:mod:`veduta.compile.common`). This module checks every field against the ranges of the WRLD
table, fills in the documented defaults (``DEFAULTS`` and ``FEATURE_DEFAULTS`` below, the same
numbers docs/formats/world.md lists) and checks the references:

* biome names used by rules must be biomes of the world (error);
* prefabs (scatter, sites, places, vegetation prefab rules) are read from their sources when
  they exist: a prefab too large for its cell (scatter and vegetation prefab rules), for its
  site spacing, or for the world is an error; a missing prefab is a warning naming it;
* models (vegetation model rules, entities) and materials (biome grounds, the terrain's water)
  are dependencies, a warning when missing.

Footprints are measured exactly as the generator does (docs/world-generation.md, section 2):
``fw = max(1, ceil(milli(w) / cell_mm))`` on the f32 values the cooked files hold, and a site
rule keeps ``fw <= spacing - margin`` (``veduta.world.structures``).
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from veduta.compile import CompileContext
from veduta.compile.common import (
    CAMERA_FIELD,
    COORD_LIMIT,
    ENTITIES_FIELD,
    HEADER,
    LIGHT_FIELD,
    NAME,
    TAG,
    Refs,
    check_name,
    load_validated,
    one_of,
    read_camera,
    read_entities,
    read_light,
)
from veduta.container.binary import to_f32
from veduta.formats.world import Biome, Feature, Place, Scatter, Site, Terrain, Vegetation, World
from veduta.source.diagnostics import Report
from veduta.source.fields import (
    INVALID,
    BoolSpec,
    Color,
    Declared,
    Enum,
    Field,
    Int,
    ListOf,
    Num_,
    ObjectSpec,
    Reference,
    Values,
    Vec,
    fmt_num,
    schema_rules,
    unused,
)
from veduta.source.jsonpos import Arr, Node, Obj, join_path, to_plain
from veduta.source.jsonpos import Num as JsonNum
from veduta.world.intmath import to_milli

FORMAT = "world/1"

#: extent x chunk x cell may not exceed this many metres (float32 precision at the edge)
WORLD_LIMIT_M = 8192
#: list limits (not in the WRLD table: they keep a world something the generator can answer fast)
MAX_BIOMES = 256
MAX_FEATURES = 1024
MAX_RULES = 256  # scatter, sites and vegetation, each
MAX_PLACES = 4096
MAX_SITE_PREFABS = 64
MAX_BIOME_REFS = 256

DEFAULTS = {
    "seed": 0,
    "cell": 1.0,
    "chunk": 16,
    "extent": 512,  # 512 x 16 x 1 m = 8192 m: the largest world at the default cell and chunk
    "view": 1,
    "biome_scale": 64,
    "background": 0xFF000000,
}
TERRAIN_DEFAULTS = {
    "relief": 0.0,
    "relief_scale": 48,
    "sea": False,
    "sea_level": 0.0,
    "water": "",
    "lod_distance": 24.0,
}
#: per kind: the fields a feature may have besides name, kind, cell and radius, with their
#: defaults. A field a kind does not use is an error; WRLD still stores every field, so the
#: unused ones get the value in UNUSED (inside the WRLD ranges, ignored by the generator).
FEATURE_DEFAULTS: dict[str, dict[str, float | int | None]] = {
    "hill": {"height": 4.0},
    "plain": {"height": None, "falloff": 4},
    "lake": {"height": None, "depth": 2.0, "falloff": 4, "roughness": 0.3},
    "sea": {"height": None, "depth": 8.0, "falloff": 8, "roughness": 0.3},
}
UNUSED = {"height": 0.0, "depth": 2.0, "falloff": 0, "roughness": 0.0}
ROTATIONS = (0, 90, 180, 270)


class F32Num(Num_):
    """A number stored as f32: its range is checked again after rounding, so a tiny positive value
    that rounds to 0 (``1e-46``) is reported here rather than failing the readers' checks."""

    def __init__(
        self, ge: float | None = None, le: float | None = None, *, gt: float | None = None, lt: float | None = None
    ):
        super().__init__(ge, le, gt=gt, lt=lt)

    def read(self, rep: Report, node: Node, path: str) -> Any:
        v = super().read(rep, node, path)
        if v is not INVALID and isinstance(node, JsonNum) and not self.in_range(to_f32(v)):
            rep.error(node, path, f"{node.text} is {fmt_num(to_f32(v))} as f32, out of range {self.range_text()}")
            return INVALID
        return v


CELL2 = Vec(2, Int())  # [x, z] in cells; ranges are checked against the world's size below

BIOME = ObjectSpec(
    {
        "name": Field(NAME),
        "ground": Field(Reference("material")),
        "weight": Field(Int(1, 1000), 1),
    }
)

TERRAIN = ObjectSpec(
    {
        "relief": Field(F32Num(0, 256), TERRAIN_DEFAULTS["relief"]),
        "relief_scale": Field(Int(4, 4096), TERRAIN_DEFAULTS["relief_scale"]),
        "sea": Field(BoolSpec(), TERRAIN_DEFAULTS["sea"]),
        "sea_level": Field(F32Num(-1024, 1024), TERRAIN_DEFAULTS["sea_level"]),
        "water": Field(Reference("material", optional=True), TERRAIN_DEFAULTS["water"]),
        "lod_distance": Field(F32Num(gt=0, le=COORD_LIMIT), TERRAIN_DEFAULTS["lod_distance"]),
    }
)

FEATURE = ObjectSpec(
    {
        "name": Field(NAME),
        "kind": Field(Enum(*FEATURE_DEFAULTS)),
        "cell": Field(CELL2),
        "radius": Field(Int(1, 16384)),
        "height": Field(F32Num(-1024, 1024), None),
        "depth": Field(F32Num(gt=0, le=256), None),
        "falloff": Field(Int(0, 16384), None),
        "roughness": Field(F32Num(0, 1), None),
    }
)
#: a field a kind does not use is an error (_feature)
schema_rules(
    FEATURE,
    *(
        {
            "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
            "then": {
                "properties": {
                    k: unused(f"not used by a {kind} (a {kind} has {', '.join(['cell', 'radius', *uses])})")
                    for k in UNUSED
                    if k not in uses
                }
            },
        }
        for kind, uses in FEATURE_DEFAULTS.items()
    ),
)

BIOME_REFS = ListOf(Reference("biome"), max_len=MAX_BIOME_REFS, unique=True)

VEGETATION = ObjectSpec(
    {
        "name": Field(NAME),
        "prefab": Field(Reference("prefab"), None),
        "model": Field(Reference("model"), None),
        "density": Field(F32Num(gt=0, le=1)),
        "biomes": Field(BIOME_REFS, []),
        "cell": Field(CELL2, None),
        "radius": Field(Int(1, 16384), None),
        "scale": Field(Vec(2, F32Num(gt=0, le=16)), None),
    }
)
# what _vegetation checks between the fields, located at the field it names
schema_rules(
    VEGETATION,
    {
        "anyOf": [{"required": ["prefab"]}, {"required": ["model"]}],
        "errorMessage": 'a vegetation rule needs "prefab" (trees, rocks: a prefab per cell) or "model" (flora: plants)',
    },
    {
        "if": {"required": ["prefab", "model"]},
        "then": {"properties": {"model": unused('a vegetation rule has either "prefab" or "model", not both')}},
    },
    {
        "if": {"required": ["prefab"]},
        "then": {"properties": {"scale": unused("not used by a prefab rule (only model rules scale their plants)")}},
    },
    {
        "if": {"required": ["cell"]},
        "then": {
            "required": ["radius"],
            "errorMessage": 'an area needs both "cell" and "radius" ("radius" is missing)',
        },
    },
    {
        "if": {"required": ["radius"]},
        "then": {"required": ["cell"], "errorMessage": 'an area needs both "cell" and "radius" ("cell" is missing)'},
    },
)

SCATTER = ObjectSpec(
    {
        "prefab": Field(Reference("prefab")),
        "biomes": Field(BIOME_REFS, []),
        "density": Field(F32Num(gt=0, le=1)),
    }
)

SITE = ObjectSpec(
    {
        "tag": Field(TAG),
        "prefabs": Field(ListOf(Reference("prefab"), min_len=1, max_len=MAX_SITE_PREFABS)),
        "biomes": Field(BIOME_REFS, []),
        "spacing": Field(Int(2, 4096)),
        "chance": Field(F32Num(gt=0, le=1), 1.0),
    }
)

PLACE = ObjectSpec(
    {
        "name": Field(NAME),
        "prefab": Field(Reference("prefab")),
        "cell": Field(CELL2),
        "rotation": Field(Int(), 0),
    }
)
schema_rules(
    PLACE,
    {
        "properties": {
            "rotation": {
                "enum": list(ROTATIONS),
                "errorMessage": "not 0, 90, 180 or 270 (places turn by quarter turns)",
            }
        }
    },
)

TOP = ObjectSpec(
    {
        "veduta": HEADER,
        "name": Field(NAME, ""),
        "seed": Field(Int(0, (1 << 64) - 1), DEFAULTS["seed"]),
        "cell": Field(F32Num(gt=0, le=64), DEFAULTS["cell"]),
        "chunk": Field(Int(4, 64), DEFAULTS["chunk"]),
        "extent": Field(Int(1, 4096), DEFAULTS["extent"]),
        "view": Field(Int(1, 4), DEFAULTS["view"]),
        "biome_scale": Field(Int(4, 4096), DEFAULTS["biome_scale"]),
        "camera": CAMERA_FIELD,
        "light": LIGHT_FIELD,
        "background": Field(Color(), DEFAULTS["background"]),
        # the lists below are read with these specs by _read_list (their items one by one)
        "biomes": Field(Declared(ListOf(BIOME, min_len=1, max_len=MAX_BIOMES))),
        "terrain": Field(Declared(TERRAIN), None),
        "features": Field(Declared(ListOf(FEATURE, max_len=MAX_FEATURES)), None),
        "vegetation": Field(Declared(ListOf(VEGETATION, max_len=MAX_RULES)), None),
        "scatter": Field(Declared(ListOf(SCATTER, max_len=MAX_RULES)), None),
        "sites": Field(Declared(ListOf(SITE, max_len=MAX_RULES)), None),
        "places": Field(Declared(ListOf(PLACE, max_len=MAX_PLACES)), None),
        "entities": ENTITIES_FIELD,
    }
)


# -- prefabs as the world sees them --------------------------------------------------------------


@dataclass(frozen=True)
class PrefabInfo:
    """What a world checks about an existing prefab, read leniently from its source (its own cook
    reports a malformed one). ``footprint`` is (w, d) in metres as f32, None when unusable."""

    name: str
    footprint: tuple[float, float] | None
    written: tuple[float, float] | None  # the footprint as written in the source, for messages
    tags: tuple[str, ...]
    biomes: tuple[str, ...]
    distances: dict[str, int]  # tag -> mm, as the generator reads them

    @functools.cached_property
    def footprint_mm(self) -> tuple[int, int] | None:
        """The footprint in whole millimetres (computed once: a world asks for every place)."""
        return None if self.footprint is None else (to_milli(self.footprint[0]), to_milli(self.footprint[1]))

    def cells(self, cell_mm: int) -> tuple[int, int] | None:
        """Footprint in cells (fw, fd) as the generator computes it, None when unknown."""
        mm = self.footprint_mm
        if mm is None:
            return None
        return max(1, -(-mm[0] // cell_mm)), max(1, -(-mm[1] // cell_mm))


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def prefab_info(name: str, root: object) -> PrefabInfo:
    plain = to_plain(root) if isinstance(root, Node) else None
    if not isinstance(plain, dict):
        return PrefabInfo(name, None, None, (), (), {})
    fp = plain.get("footprint")
    footprint = written = None
    if isinstance(fp, list) and len(fp) == 2 and all(_number(x) and 0 < x <= 1024 for x in fp):
        written = (fp[0], fp[1])
        footprint = (to_f32(float(fp[0])), to_f32(float(fp[1])))
    tags = plain.get("tags", [])
    tags = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
    biomes = plain.get("biomes", [])
    biomes = tuple(b for b in biomes if isinstance(b, str)) if isinstance(biomes, list) else ()
    dist: dict[str, int] = {}
    md = plain.get("min_distance", {})
    if isinstance(md, dict):
        for tag, m in md.items():
            if _number(m) and 0 <= m <= 4096:
                dist[tag] = to_milli(to_f32(float(m)))
    return PrefabInfo(name, footprint, written, tags, biomes, dist)


class WorldRefs(Refs):
    """:class:`Refs` plus the prefab facts a world checks (footprint, tags, biomes, distances)."""

    def __init__(self, ctx: CompileContext):
        super().__init__(ctx)
        self._infos: dict[str, PrefabInfo] = {}

    def prefab_info(self, name: str, where: Node | None, path: str) -> PrefabInfo | None:
        """None when the prefab does not exist (a warning naming it is reported).  Read once
        per prefab (a world of 4,096 places naming one prefab read it 4,096 times)."""
        if not self.exists("prefab", name, where, path):
            return None
        info = self._infos.get(name)
        if info is None:
            info = self._infos[name] = prefab_info(name, self.parsed("prefab", name))
        return info


# -- helpers ------------------------------------------------------------------------------------


def _read_list(rep: Report, node: Node | None, path: str, item: ObjectSpec, max_len: int) -> list[Values | None]:
    """Every item of an optional array of records (None for an item that is not an object)."""
    if node is None:
        return []
    if not isinstance(node, Arr):
        rep.error(node, path, f"expected an array of objects, found {node.kind}")
        return [None]
    if len(node) > max_len:
        rep.error(node, path, f"{len(node)} items, more than the limit of {max_len}")
        return [None]
    out = []
    for i, child in enumerate(node):
        v = item.read_partial(rep, child, join_path(path, i))
        out.append(None if v is INVALID else v)
    return out


def _unique(rep: Report, items: list[Values | None], path: str, key: str, what: str) -> None:
    first: dict[str, int] = {}
    for i, v in enumerate(items):
        if v is None or v[key] in (INVALID, None):
            continue
        name = v[key]
        if name in first:
            rep.error(
                v.node(key), join_path(join_path(path, i), key), f'"{name}" is already the name of {what} {first[name]}'
            )
        else:
            first[name] = i


#: prefixes of the names the generator gives (docs/world-generation.md, entity names)
GENERATED_PREFIXES = ("site_", "chunk_")


def _check_generated_names(
    rep: Report,
    places: list[Values | None],
    sites: list[Values | None],
    entities: list[Any] | None,
    entities_node: Node | None,
) -> None:
    """Entity names must stay unique in a running world: places and persistent entities may
    not take the generator's name patterns or each other's names, and no site rule's tag may
    make its sites' names those of another rule (tag "v_1" against the second "v" rule)."""
    entity_names = {e.name for e in entities or []}
    for i, v in enumerate(places):
        if not _ok(v, "name"):
            continue
        path = join_path(join_path("places", i), "name")
        if v["name"].startswith(GENERATED_PREFIXES):
            rep.error(
                v.node("name"),
                path,
                f'"{v["name"]}" starts like the names the generator gives '
                f"({', '.join(GENERATED_PREFIXES)}); choose another name",
            )
        elif v["name"] in entity_names:
            rep.error(v.node("name"), path, f'"{v["name"]}" is also the name of a persistent entity')
    for e in entities or []:
        if e.name.startswith(GENERATED_PREFIXES):
            rep.error(
                entities_node,
                "entities",
                f'entity "{e.name}" starts like the names the generator gives '
                f"({', '.join(GENERATED_PREFIXES)}); choose another name",
            )
    tags = [v["tag"] if _ok(v, "tag") else None for v in sites]
    for i, v in enumerate(sites):
        if not _ok(v, "tag"):
            continue
        tag = v["tag"]
        m = re.fullmatch(r"(.+)_(\d+)", tag)
        if m and m.group(1) in tags and tags.count(m.group(1)) > int(m.group(2)):
            rep.error(
                v.node("tag"),
                join_path(join_path("sites", i), "tag"),
                f'"{tag}" would name its sites like rule {int(m.group(2)) + 1} of tag "{m.group(1)}" '
                f"(site_{tag}_...); choose another tag",
            )


def _ok(v: Values | None, *keys: str) -> TypeGuard[Values]:
    """A record (not None) whose fields *keys* are valid."""
    return v is not None and all(v[k] is not INVALID for k in keys)


def _f32(v: float) -> float:
    return to_f32(float(v))


class _Checker:
    """The cross-field checks of one world: sizes, biome names, prefabs."""

    def __init__(
        self,
        ctx: CompileContext,
        refs: WorldRefs,
        cells: int | None,
        cell_mm: int | None,
        biome_names: list[str] | None,
    ):
        self.ctx, self.rep, self.refs = ctx, ctx.report, refs
        self.cells, self.cell_mm = cells, cell_mm  # None when the world's size is unusable
        self.biome_names = biome_names  # None when the biomes are unusable

    # sizes

    def inside(self, v: Values, path: str, vertices: bool, what: str) -> bool:
        """The item's "cell" lies inside the world (cells -n..n-1, or vertices -n..n)."""
        if self.cells is None or v["cell"] in (INVALID, None):
            return True
        n = self.cells
        hi = n if vertices else n - 1
        x, z = v["cell"]
        if -n <= x <= hi and -n <= z <= hi:
            return True
        self.rep.error(
            v.node("cell"), join_path(path, "cell"), f"[{x}, {z}] is outside the world ({what} {-n}..{hi} on each axis)"
        )
        return False

    # biomes

    def biome_refs(self, v: Values, path: str) -> bool:
        names = v["biomes"]
        if names is INVALID or self.biome_names is None:
            return True
        ok = True
        node = v.node("biomes")
        for i, b in enumerate(names):
            if b in self.biome_names:
                continue
            close = difflib.get_close_matches(b, self.biome_names, n=1, cutoff=0.6)
            hint = f'did you mean "{close[0]}"?' if close else f"want {one_of(self.biome_names)}"
            where = node.value[i] if isinstance(node, Arr) else node
            self.rep.error(
                where, join_path(join_path(path, "biomes"), i), f'"{b}" is not a biome of this world ({hint})'
            )
            ok = False
        return ok

    def never_fires(self, info: PrefabInfo, rule_biomes: list, where: Node | None, path: str, what: str) -> None:
        """Warn when no biome of the world allows both the rule and its prefab."""
        if self.biome_names is None or not info.biomes:
            return
        allowed = [b for b in self.biome_names if (not rule_biomes or b in rule_biomes) and b in info.biomes]
        if not allowed:
            self.rep.warning(
                where,
                path,
                f'prefab "{info.name}" allows only biomes {one_of(info.biomes)}, '
                f"none of which {what} (it never places it)",
                code="WORLD_PREFAB_BIOMES",
            )

    # prefabs

    def one_cell_prefab(self, name: str, where: Node | None, path: str, what: str, rule_biomes: list[str]) -> None:
        info = self.refs.prefab_info(name, where, path)
        if info is None:
            return
        self.never_fires(
            info, rule_biomes, where, path, "this rule allows" if rule_biomes else "is a biome of this world"
        )
        cell_mm = self.cell_mm
        size = info.cells(cell_mm) if cell_mm else None
        if not cell_mm or size is None or size == (1, 1):
            return
        assert info.written is not None  # a footprint (size) comes with the one written
        w, d = info.written
        cell = cell_mm / 1000
        self.rep.error(
            where,
            path,
            f'prefab "{name}" footprint {fmt_num(w)} x {fmt_num(d)} m is larger than '
            f"a cell ({fmt_num(cell)} x {fmt_num(cell)} m): {what} places one-cell prefabs",
        )

    def site_prefabs(self, v: Values, path: str) -> None:
        names = v["prefabs"]
        node = v.node("prefabs")
        assert isinstance(node, Arr)  # prefabs is required and was read (the caller checks)
        infos: list[tuple[int, PrefabInfo]] = []
        for i, name in enumerate(names):
            p = join_path(join_path(path, "prefabs"), i)
            info = self.refs.prefab_info(name, node.value[i], p)
            if info is not None:
                infos.append((i, info))
                self.never_fires(
                    info,
                    v["biomes"] or [],
                    node.value[i],
                    p,
                    "this rule allows" if v["biomes"] else "is a biome of this world",
                )
        if self.cell_mm is None or v["spacing"] is INVALID or v["tag"] is INVALID:
            return
        # the generator's margin (veduta.world.structures.Structures._margin)
        tags = {v["tag"]}
        for _, info in infos:
            tags.update(info.tags)
        dself = max((info.distances.get(t, 0) for _, info in infos for t in tags), default=0)
        margin = max(1, -(-dself // self.cell_mm))
        spacing = v["spacing"]
        room = spacing - margin
        for i, info in infos:
            size = info.cells(self.cell_mm)
            if size is None:
                continue
            fw, fd = size
            p = join_path(join_path(path, "prefabs"), i)
            if max(fw, fd) > room:
                why = "" if margin == 1 else f" (the rule's prefabs keep {fmt_num(dself / 1000)} m from each other)"
                self.rep.error(
                    node.value[i],
                    p,
                    f'prefab "{info.name}" is {fw} x {fd} cells, too large for spacing {spacing}: a site '
                    f"keeps {margin} free cell{'s' if margin > 1 else ''} in its region{why}, so at most "
                    f"{max(room, 0)} x {max(room, 0)} cells fit",
                )
            elif self.cells is not None and max(fw, fd) > 2 * self.cells:
                self.rep.error(
                    node.value[i],
                    p,
                    f'prefab "{info.name}" is {fw} x {fd} cells, larger than the '
                    f"world ({2 * self.cells} x {2 * self.cells} cells)",
                )

    def place_prefab(self, v: Values, path: str, check_fit: bool = True) -> None:
        info = self.refs.prefab_info(v["prefab"], v.node("prefab"), join_path(path, "prefab"))
        if info is None or not check_fit or self.cell_mm is None or self.cells is None:
            return
        size = info.cells(self.cell_mm)
        if size is None or v["cell"] is INVALID or v["rotation"] is INVALID:
            return
        fw, fd = size
        if v["rotation"] in (90, 270):
            fw, fd = fd, fw
        n = self.cells
        x, z = v["cell"]
        x0, z0 = x - fw // 2, z - fd // 2
        if max(fw, fd) > 2 * n:
            self.rep.error(
                v.node("prefab"),
                join_path(path, "prefab"),
                f'prefab "{info.name}" is {fw} x {fd} cells, larger than the world ({2 * n} x {2 * n} cells)',
            )
        elif x0 < -n or z0 < -n or x0 + fw > n or z0 + fd > n:
            self.rep.error(
                v.node("cell"),
                join_path(path, "cell"),
                f'the footprint of prefab "{info.name}" (cells [{x0}, {z0}] to [{x0 + fw - 1}, '
                f"{z0 + fd - 1}]) leaves the world (cells {-n}..{n - 1})",
            )


# -- sections ------------------------------------------------------------------------------------


def _read_biomes(rep: Report, node: Node | None, refs: Refs) -> list[Values | None] | None:
    if node is None:
        return None
    if isinstance(node, Arr) and len(node) == 0:
        rep.error(node, "biomes", "a world needs at least one biome")
        return None
    items = _read_list(rep, node, "biomes", BIOME, MAX_BIOMES)
    _unique(rep, items, "biomes", "name", "biome")
    for i, v in enumerate(items):
        if _ok(v, "ground"):
            refs.material(v["ground"], v.node("ground"), join_path(join_path("biomes", i), "ground"))
    return items


def _feature(rep: Report, v: Values, path: str) -> Feature | None:
    kind = v["kind"]
    if kind is INVALID:
        return None
    uses = FEATURE_DEFAULTS[kind]
    ok = v.ok
    for key in ("height", "depth", "falloff", "roughness"):
        if key in v.nodes and key not in uses:
            rep.error(
                v.node(key),
                join_path(path, key),
                f"not used by a {kind} (a {kind} has {', '.join(['cell', 'radius', *uses])})",
            )
            ok = False
    if not ok:
        return None

    def get(key: str) -> Any:
        if key in v.nodes:
            return v[key]
        d = uses.get(key)  # None: not used by this kind, or height without a default (ground level)
        return UNUSED[key] if d is None else d

    return Feature(
        name=v["name"],
        kind=kind,
        x=v["cell"][0],
        z=v["cell"][1],
        radius=v["radius"],
        has_height="height" in v.nodes,
        height=_f32(get("height")),
        depth=_f32(get("depth")),
        falloff=int(get("falloff")),
        roughness=_f32(get("roughness")),
    )


def _vegetation(rep: Report, v: Values, path: str) -> Vegetation | None:
    ok = v.ok
    has_prefab, has_model = "prefab" in v.nodes, "model" in v.nodes
    if has_prefab and has_model:
        rep.error(
            v.node("model"), join_path(path, "model"), 'a vegetation rule has either "prefab" or "model", not both'
        )
        ok = False
    elif not has_prefab and not has_model:
        rep.error(
            v.obj,
            join_path(path, "prefab"),
            'a vegetation rule needs "prefab" (trees, rocks: a prefab per cell) or "model" (flora: plants)',
        )
        ok = False
    if has_prefab and "scale" in v.nodes:
        rep.error(
            v.node("scale"), join_path(path, "scale"), "not used by a prefab rule (only model rules scale their plants)"
        )
        ok = False
    if ("cell" in v.nodes) != ("radius" in v.nodes):
        have, need = ("cell", "radius") if "cell" in v.nodes else ("radius", "cell")
        rep.error(v.node(have), join_path(path, have), f'an area needs both "cell" and "radius" ("{need}" is missing)')
        ok = False
    scale = v["scale"] if v["scale"] is not None else (1.0, 1.0)
    if scale is not INVALID and scale[0] > scale[1]:
        rep.error(
            v.node("scale"),
            join_path(path, "scale"),
            f"[{fmt_num(scale[0])}, {fmt_num(scale[1])}] is not [min, max] (min above max)",
        )
        ok = False
    if not ok:
        return None
    area = "cell" in v.nodes
    x, z = v["cell"] if area else (0, 0)
    return Vegetation(
        name=v["name"],
        prefab=v["prefab"] or "",
        model=v["model"] or "",
        density=_f32(v["density"]),
        biomes=list(v["biomes"]),
        area=area,
        x=x,
        z=z,
        radius=v["radius"] if area else 0,
        scale_min=_f32(scale[0]),
        scale_max=_f32(scale[1]),
    )


# -- the compiler --------------------------------------------------------------------------------


def validate(root: Obj, ctx: CompileContext, refs: WorldRefs | None = None) -> World | None:
    """Check a world/1 source and its references; the WRLD record or None."""
    rep = ctx.report
    refs = refs or WorldRefs(ctx)
    top = TOP.read_partial(rep, root, "")
    if top is INVALID:
        return None
    check_name(rep, top, ctx.name)

    # the world's size: extent x chunk x cell (f32, as readers check it) <= 8192 m
    cells = cell_mm = None
    cell = top["cell"]
    if cell is not INVALID:
        cell = _f32(cell)
        cell_mm = max(1, to_milli(cell))
        if abs(cell * 1000 - cell_mm) > 1e-3:  # the generator places everything in whole mm
            rep.error(
                top.where("cell"),
                "cell",
                f"{fmt_num(cell)} m is not a whole number of millimetres (the generator works in "
                f"whole millimetres; e.g. {fmt_num(cell_mm / 1000)})",
            )
            cell = INVALID
    if cell is not INVALID and top["chunk"] is not INVALID and top["extent"] is not INVALID:
        size = top["extent"] * top["chunk"] * cell
        if size > WORLD_LIMIT_M:
            most = int(WORLD_LIMIT_M // (top["chunk"] * cell))
            rep.error(
                top.where("extent"),
                "extent",
                f"extent x chunk x cell = {top['extent']} x {top['chunk']} x {fmt_num(cell)} = "
                f"{fmt_num(size)} m, more than {WORLD_LIMIT_M} m "
                f"(at most extent {most} with this chunk and cell)",
            )
        else:
            cells = top["extent"] * top["chunk"]

    camera = read_camera(rep, top.node("camera"), "camera")
    light = read_light(rep, top.node("light"), "light")

    biome_vals = _read_biomes(rep, top.node("biomes"), refs)
    biome_names = None
    named = [b for b in biome_vals if _ok(b, "name")] if biome_vals is not None else []
    if biome_vals is not None and len(named) == len(biome_vals):  # every biome has a name
        biome_names = list(dict.fromkeys(b["name"] for b in named))
    chk = _Checker(ctx, refs, cells, cell_mm, biome_names)

    terrain: Terrain | None = Terrain(
        **{k: (_f32(v) if isinstance(v, float) else v) for k, v in TERRAIN_DEFAULTS.items()}
    )
    tnode = top.node("terrain")
    if tnode is not None:
        t = TERRAIN.read(rep, tnode, "terrain")
        if t is INVALID:
            terrain = None
        else:
            terrain = Terrain(
                relief=_f32(t["relief"]),
                relief_scale=t["relief_scale"],
                sea=t["sea"],
                sea_level=_f32(t["sea_level"]),
                water=t["water"],
                lod_distance=_f32(t["lod_distance"]),
            )
            if t["water"]:
                refs.material(t["water"], t.node("water"), "terrain.water")

    # features
    fvals = _read_list(rep, top.node("features"), "features", FEATURE, MAX_FEATURES)
    _unique(rep, fvals, "features", "name", "feature")
    features: list[Feature] | None = []
    for i, v in enumerate(fvals):
        p = join_path("features", i)
        f = _feature(rep, v, p) if v is not None else None
        if v is not None:
            chk.inside(v, p, vertices=True, what="vertices")
        if f is None:
            features = None
        elif features is not None:
            features.append(f)

    # vegetation
    vvals = _read_list(rep, top.node("vegetation"), "vegetation", VEGETATION, MAX_RULES)
    _unique(rep, vvals, "vegetation", "name", "vegetation rule")
    vegetation: list[Vegetation] | None = []
    for i, v in enumerate(vvals):
        p = join_path("vegetation", i)
        g = _vegetation(rep, v, p) if v is not None else None
        if v is not None:
            chk.inside(v, p, vertices=True, what="vertices")
            chk.biome_refs(v, p)
            if v["prefab"] not in (None, INVALID):
                rb = v["biomes"] if v["biomes"] is not INVALID else []
                chk.one_cell_prefab(
                    v["prefab"], v.node("prefab"), join_path(p, "prefab"), "a vegetation prefab rule", rb
                )
            elif v["model"] not in (None, INVALID):
                refs.model(v["model"], v.node("model"), join_path(p, "model"))
        if g is None:
            vegetation = None
        elif vegetation is not None:
            vegetation.append(g)

    # scatter
    svals = _read_list(rep, top.node("scatter"), "scatter", SCATTER, MAX_RULES)
    scatter: list[Scatter] | None = []
    for i, v in enumerate(svals):
        p = join_path("scatter", i)
        if v is not None:
            chk.biome_refs(v, p)
            if v["prefab"] is not INVALID:
                rb = v["biomes"] if v["biomes"] is not INVALID else []
                chk.one_cell_prefab(v["prefab"], v.node("prefab"), join_path(p, "prefab"), "scatter", rb)
        if v is None or not v.ok:
            scatter = None
        elif scatter is not None:
            scatter.append(Scatter(prefab=v["prefab"], biomes=list(v["biomes"]), density=_f32(v["density"])))

    # sites
    sitevals = _read_list(rep, top.node("sites"), "sites", SITE, MAX_RULES)
    sites: list[Site] | None = []
    for i, v in enumerate(sitevals):
        p = join_path("sites", i)
        if v is not None:
            chk.biome_refs(v, p)
            if v["prefabs"] is not INVALID:
                chk.site_prefabs(v, p)
        if v is None or not v.ok:
            sites = None
        elif sites is not None:
            sites.append(
                Site(
                    tag=v["tag"],
                    prefabs=list(v["prefabs"]),
                    biomes=list(v["biomes"]),
                    spacing=v["spacing"],
                    chance=_f32(v["chance"]),
                )
            )

    # places
    pvals = _read_list(rep, top.node("places"), "places", PLACE, MAX_PLACES)
    _unique(rep, pvals, "places", "name", "place")
    places: list[Place] | None = []
    for i, v in enumerate(pvals):
        p = join_path("places", i)
        ok = v is not None and v.ok
        if v is not None and v["rotation"] is not INVALID and v["rotation"] not in ROTATIONS:
            rep.error(
                v.node("rotation"),
                join_path(p, "rotation"),
                f"{v['rotation']} is not 0, 90, 180 or 270 (places turn by quarter turns)",
            )
            ok = False
        if v is not None:
            inside = chk.inside(v, p, vertices=False, what="cells")
            if v["prefab"] is not INVALID:
                chk.place_prefab(v, p, check_fit=inside)
            ok &= inside
        if v is None or not ok:
            places = None
        elif places is not None:
            places.append(
                Place(name=v["name"], prefab=v["prefab"], x=v["cell"][0], z=v["cell"][1], rotation=v["rotation"])
            )

    entities = read_entities(rep, top.node("entities"), "entities", refs)
    _check_generated_names(rep, pvals, sitevals, entities, top.node("entities"))

    if (
        not rep.ok
        or not top.ok
        or cells is None
        or biome_names is None
        or camera is None
        or light is None
        or terrain is None
        or features is None
        or vegetation is None
        or scatter is None
        or sites is None
        or places is None
        or entities is None
    ):
        return None
    biomes = [Biome(name=b["name"], ground=b["ground"], weight=b["weight"]) for b in named]
    return World(
        name=ctx.name,
        seed=top["seed"],
        cell=cell,
        chunk=top["chunk"],
        extent=top["extent"],
        view=top["view"],
        biome_scale=top["biome_scale"],
        camera=camera,
        light=light,
        background=top["background"],
        biomes=biomes,
        scatter=scatter,
        sites=sites,
        places=places,
        entities=entities,
        terrain=terrain,
        features=features,
        vegetation=vegetation,
    )


def compile_world(data: bytes, ctx: CompileContext) -> World | None:
    """Compile a world/1 source; None with every problem in ``ctx.report``."""
    return load_validated(data, ctx, FORMAT, lambda root: validate(root, ctx))
