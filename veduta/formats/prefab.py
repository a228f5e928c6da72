"""PRFB: compiled prefab (container spec, "PRFB — compiled prefab")."""

from __future__ import annotations

from veduta.formats.codec import F32, STR, VEC2, List, Struct, StructType
from veduta.formats.scene import ENTITIES


class Distance(Struct):
    FIELDS = (("tag", STR), ("meters", F32))


class Prefab(Struct):
    CHUNK = "PRFB"
    FIELDS = (
        ("name", STR),
        ("footprint", VEC2),
        ("tags", List(STR)),
        ("biomes", List(STR)),
        ("distances", List(StructType(Distance))),
        ("entities", ENTITIES),
    )

    def check(self, fail):
        w, d = self.footprint
        if not (0 < w <= 1024 and 0 < d <= 1024):
            raise fail("footprint", f"footprint {w} x {d} is not within (0, 1024] each")
        tags = [x.tag for x in self.distances or []]
        if tags != sorted(set(tags)):
            raise fail("distances", "distances are not sorted by tag without repeats")
        for x in self.distances or []:
            if not 0 <= x.meters <= 4096:
                raise fail("distances", f"distance {x.tag!r} {x.meters} out of range [0, 4096]")
