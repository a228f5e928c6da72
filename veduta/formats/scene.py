"""SCEN: compiled scene, and the entity, camera and light records PRFB and WRLD share."""

from __future__ import annotations

from veduta.formats.codec import (
    AABB,
    BOOL,
    COLOR,
    F32,
    I64,
    STR,
    U32,
    VEC3,
    List,
    Opt,
    Struct,
    StructType,
)


class Camera(Struct):
    """SCEN fields 2-8."""

    FIELDS = (
        ("ortho", BOOL),
        ("fov_deg", F32),
        ("size", F32),
        ("near", F32),
        ("far", F32),
        ("position", VEC3),
        ("look_at", VEC3),
    )


class Light(Struct):
    """SCEN fields 9-11: direction as written, colours in linear RGB [0, 1]."""

    FIELDS = (("direction", VEC3), ("color", VEC3), ("ambient", VEC3))

    def check(self, fail):
        for f in ("color", "ambient"):
            if not all(0 <= c <= 1 for c in getattr(self, f)):
                raise fail(f, f"{list(getattr(self, f))} is not linear RGB in [0, 1]")


class Entity(Struct):
    FIELDS = (
        ("name", STR),
        ("kind", STR),
        ("model", STR),
        ("material", STR),
        ("position", VEC3),
        ("rotation_deg", VEC3),
        ("scale", VEC3),
        ("tags", List(STR)),
        ("parent", STR),
        ("visible", BOOL),
        ("hitbox", Opt(AABB)),
        ("layer", I64),
        ("frame", U32),
        ("anim", STR),
    )

    def check(self, fail):
        if self.hitbox is not None:
            lo, hi = self.hitbox
            if not all(a <= b for a, b in zip(lo, hi, strict=True)):
                raise fail("hitbox", f"hitbox min {list(lo)} is not <= max {list(hi)} on every axis")
        if not -1000 <= self.layer <= 1000:
            raise fail("layer", f"{self.layer} out of range [-1000, 1000]")
        if self.frame > 65535:
            raise fail("frame", f"{self.frame} out of range [0, 65535]")


# smallest entity: 6 empty str (name, kind, model, material, parent, anim), tags count, 3 vec3,
# visible, has_hitbox, layer i64, frame u32 = 78 bytes
ENTITIES = List(StructType(Entity))


class Scene(Struct):
    CHUNK = "SCEN"
    FIELDS = (
        ("name", STR),
        ("camera", StructType(Camera)),
        ("light", StructType(Light)),
        ("background", COLOR),
        ("entities", ENTITIES),
        ("map", STR),
    )
