"""material/1 sources to MATL (docs/formats/material.md; container spec "MATL").

The texture reference is checked when the texture exists (its source becomes a META dependency;
a missing texture is a warning naming it). ``grid`` defaults to the texture's grid, so a material
on a sprite sheet picks frames the way the sheet is cut without repeating it.
"""

from __future__ import annotations

from veduta.compile import CompileContext
from veduta.compile.common import HEADER, NAME, Refs, check_name, load_validated, vec_text
from veduta.formats.material import ALPHA_MODES, CULL, FILTER, Material
from veduta.source.fields import (
    INVALID,
    BoolSpec,
    Color,
    Enum,
    Field,
    Int,
    Num,
    ObjectSpec,
    Reference,
    Vec,
    schema_rules,
    unused,
)
from veduta.source.jsonpos import Obj

FORMAT = "material/1"

TOP = ObjectSpec(
    {
        "veduta": HEADER,
        "name": Field(NAME, ""),
        "albedo": Field(Color(), 0xFFFFFFFF),
        "texture": Field(Reference("texture", optional=True), ""),
        "unlit": Field(BoolSpec(), False),
        "alpha": Field(Enum(*ALPHA_MODES), "opaque"),
        "cutoff": Field(Num(0, 1), 0.5),
        "cull": Field(Enum(*CULL), "back"),
        "filter": Field(Enum(*FILTER), "bilinear"),
        "grid": Field(Vec(2, Int(1, 256)), None),
    }
)
schema_rules(
    TOP,
    {
        "if": {"properties": {"alpha": {"const": "cutout"}}, "required": ["alpha"]},  # (validate)
        "else": {"properties": {"cutoff": unused('not used without "alpha": "cutout"')}},
    },
    {
        "if": {"anyOf": [{"not": {"required": ["texture"]}}, {"properties": {"texture": {"const": ""}}}]},
        "then": {
            "properties": {"grid": unused("a grid cuts the texture into frames, and this material has no texture")}
        },
    },
)


def validate(root: Obj, ctx: CompileContext, refs: Refs | None = None) -> Material | None:
    """Check a material/1 source and its texture reference; the MATL record or None."""
    rep = ctx.report
    refs = refs or Refs(ctx)
    vals = TOP.read_partial(rep, root, "")
    if vals is INVALID:
        return None
    ok = vals.ok and check_name(rep, vals, ctx.name)
    if "cutoff" in vals.nodes and vals["alpha"] not in ("cutout", INVALID):
        rep.error(vals.node("cutoff"), "cutoff", f'not used with "alpha": "{vals["alpha"]}" (only with "cutout")')
        ok = False
    tex, grid = vals["texture"], vals["grid"]
    out_grid = grid if grid not in (None, INVALID) else (0, 0)
    if tex not in ("", INVALID):
        facts = refs.texture(tex, vals.node("texture"), "texture")
        if facts is not None and facts.grid is not None:
            if grid is None:
                out_grid = facts.grid
            elif grid is not INVALID and facts.grid != (0, 0) and tuple(grid) != facts.grid:
                rep.error(
                    vals.node("grid"),
                    "grid",
                    f'{vec_text(grid)} is not the grid of texture "{tex}" '
                    f"({vec_text(facts.grid)}; leave grid out to use it)",
                )
                ok = False
    elif tex == "" and grid not in (None, INVALID):
        rep.error(vals.node("grid"), "grid", "a grid cuts the texture into frames, and this material has no texture")
        ok = False
    if not ok or not rep.ok:
        return None
    return Material(
        name=ctx.name,
        albedo=vals["albedo"],
        texture=tex,
        unlit=vals["unlit"],
        alpha=vals["alpha"],
        cutoff=vals["cutoff"],
        cull=CULL.index(vals["cull"]),
        filter=FILTER.index(vals["filter"]),
        grid=out_grid,
    )


def compile_material(data: bytes, ctx: CompileContext) -> Material | None:
    """Compile a material/1 source; None with every problem in ``ctx.report``."""
    return load_validated(data, ctx, FORMAT, lambda root: validate(root, ctx))
