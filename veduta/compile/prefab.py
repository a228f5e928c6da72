"""prefab/1 sources to PRFB (docs/formats/prefab.md; container spec "PRFB").

A prefab is a group of entities placed together by a world (scatter, sites, places) or a map
object: its footprint, tags, allowed biomes, minimum distances to other structures by tag, and
entities as in scenes (positions relative to the centre of the footprint, on the ground).
"""

from __future__ import annotations

from veduta.compile import CompileContext
from veduta.compile.common import (
    ENTITIES_FIELD,
    HEADER,
    NAME,
    TAG,
    TAGS,
    Refs,
    check_name,
    load_validated,
    read_entities,
)
from veduta.formats.prefab import Distance, Prefab
from veduta.source.fields import INVALID, Field, ListOf, Num, ObjectSpec, Reference, Spec, Vec, describe, js_pattern
from veduta.source.jsonpos import Obj, join_path

FORMAT = "prefab/1"
MAX_DISTANCES = 64


class Distances(Spec):
    """``{"tag": meters, ...}``: minimum distances to structures with that tag."""

    what = "an object of meters by tag"
    _meters = Num(0, 4096)

    def read(self, rep, node, path):
        if not isinstance(node, Obj):
            rep.error(node, path, f"expected {self.what}, found {describe(node)}")
            return INVALID
        if len(node.value) > MAX_DISTANCES:
            rep.error(node, path, f"{len(node.value)} tags, more than the limit of {MAX_DISTANCES}")
            return INVALID
        out = {}
        bad = False
        for tag, child in node.items():
            p = join_path(path, tag)
            if TAG.pattern and not TAG.pattern.fullmatch(tag):
                rep.error(node.keys[tag], p, f'"{tag}" is not {TAG.pattern_what}')
                bad = True
            v = self._meters.read(rep, child, p)
            if v is INVALID:
                bad = True
            out[tag] = v
        return INVALID if bad else out

    def schema(self) -> dict:
        return {
            "type": "object",
            "propertyNames": {"pattern": js_pattern(TAG.pattern or "")},
            "additionalProperties": self._meters.schema(),
            "maxProperties": MAX_DISTANCES,
        }


TOP = ObjectSpec(
    {
        "veduta": HEADER,
        "name": Field(NAME, ""),
        "footprint": Field(Vec(2, Num(gt=0, le=1024))),
        "tags": Field(TAGS, []),
        "biomes": Field(ListOf(Reference("biome"), max_len=64, unique=True), []),
        "min_distance": Field(Distances(), {}),
        "entities": ENTITIES_FIELD,
    }
)


def validate(root: Obj, ctx: CompileContext, refs: Refs | None = None) -> Prefab | None:
    """Check a prefab/1 source and its references; the PRFB record or None."""
    rep = ctx.report
    refs = refs or Refs(ctx)
    vals = TOP.read_partial(rep, root, "")
    if vals is INVALID:
        return None
    ok = vals.ok and check_name(rep, vals, ctx.name)
    entities = read_entities(rep, vals.node("entities"), "entities", refs)
    if not ok or entities is None or not rep.ok:
        return None
    distances = [Distance(tag=t, meters=m) for t, m in sorted(vals["min_distance"].items())]
    return Prefab(
        name=ctx.name,
        footprint=vals["footprint"],
        tags=list(vals["tags"]),
        biomes=list(vals["biomes"]),
        distances=distances,
        entities=entities,
    )


def compile_prefab(data: bytes, ctx: CompileContext) -> Prefab | None:
    """Compile a prefab/1 source; None with every problem in ``ctx.report``."""
    return load_validated(data, ctx, FORMAT, lambda root: validate(root, ctx))
