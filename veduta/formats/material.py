"""MATL: compiled material (container spec, "MATL — compiled material")."""

from __future__ import annotations

from veduta.formats.codec import BOOL, COLOR, F32, STR, U8, U32, Struct, Tuple

ALPHA_MODES = ("opaque", "blend", "cutout")
CULL = ("back", "none")
FILTER = ("bilinear", "nearest")


class Material(Struct):
    CHUNK = "MATL"
    FIELDS = (
        ("name", STR),
        ("albedo", COLOR),
        ("texture", STR),
        ("unlit", BOOL),
        ("alpha", STR),
        ("cutoff", F32),
        ("cull", U8),
        ("filter", U8),
        ("grid", Tuple(U32, U32, name="u32 x 2")),
    )

    def check(self, fail):
        if self.alpha not in ALPHA_MODES:
            raise fail("alpha", f"{self.alpha!r} is not opaque, blend or cutout")
        if self.cull > 1:
            raise fail("cull", f"{self.cull} is not 0 (back) or 1 (none)")
        if self.filter > 1:
            raise fail("filter", f"{self.filter} is not 0 (bilinear) or 1 (nearest)")
        c, r = self.grid
        if not ((c == 0 and r == 0) or (1 <= c <= 256 and 1 <= r <= 256)):
            raise fail("grid", f"grid {c} x {r} is not 0 x 0 or 1..256 each")
