"""scene/1 sources to SCEN (docs/formats/scene.md; container spec "SCEN").

Camera, light and entities are read by :mod:`veduta.compile.common`, shared with prefabs and
worlds. References (entity models and materials, a material's texture for frames and clips, the
scene's map) are checked when the asset exists and recorded as META dependencies.
"""

from __future__ import annotations

from veduta.compile import CompileContext
from veduta.compile.common import (
    CAMERA_FIELD,
    ENTITIES_FIELD,
    HEADER,
    LIGHT_FIELD,
    NAME,
    Refs,
    check_name,
    load_validated,
    read_camera,
    read_entities,
    read_light,
)
from veduta.formats.scene import Scene
from veduta.source.fields import INVALID, Color, Field, ObjectSpec, Reference
from veduta.source.jsonpos import Obj

FORMAT = "scene/1"

TOP = ObjectSpec(
    {
        "veduta": HEADER,
        "name": Field(NAME, ""),
        "camera": CAMERA_FIELD,
        "light": LIGHT_FIELD,
        "background": Field(Color(), 0xFF000000),
        "entities": ENTITIES_FIELD,
        "map": Field(Reference("map", optional=True), ""),
    }
)


def validate(root: Obj, ctx: CompileContext, refs: Refs | None = None) -> Scene | None:
    """Check a scene/1 source and its references; the SCEN record or None."""
    rep = ctx.report
    refs = refs or Refs(ctx)
    vals = TOP.read_partial(rep, root, "")
    if vals is INVALID:
        return None
    ok = vals.ok and check_name(rep, vals, ctx.name)
    camera = read_camera(rep, vals.node("camera"), "camera")
    light = read_light(rep, vals.node("light"), "light")
    entities = read_entities(rep, vals.node("entities"), "entities", refs)
    if vals["map"] not in ("", INVALID):
        refs.exists("map", vals["map"], vals.node("map"), "map")
    if not ok or camera is None or light is None or entities is None or not rep.ok:
        return None
    return Scene(
        name=ctx.name, camera=camera, light=light, background=vals["background"], entities=entities, map=vals["map"]
    )


def compile_scene(data: bytes, ctx: CompileContext) -> Scene | None:
    """Compile a scene/1 source; None with every problem in ``ctx.report``."""
    return load_validated(data, ctx, FORMAT, lambda root: validate(root, ctx))
