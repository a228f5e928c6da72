"""Body chunk codecs, one module per chunk payload."""

from __future__ import annotations

from veduta.base.kinds import KINDS
from veduta.formats.codec import Struct, decode, encode
from veduta.formats.material import Material
from veduta.formats.mesh import Mesh
from veduta.formats.prefab import Prefab
from veduta.formats.scene import Scene
from veduta.formats.texture import Texture
from veduta.formats.tilemap import Tilemap
from veduta.formats.world import World

#: Body record class by chunk type.
BODIES: dict[str, type[Struct]] = {c.CHUNK: c for c in (Mesh, Texture, Material, Scene, Prefab, World, Tilemap)}

#: Body chunk type by asset kind (META "kind"), from veduta.base.kinds.
KIND_CHUNK = {k.name: k.chunk for k in KINDS}

__all__ = [
    "BODIES",
    "KIND_CHUNK",
    "Struct",
    "encode",
    "decode",
    "Mesh",
    "Texture",
    "Material",
    "Scene",
    "Prefab",
    "World",
    "Tilemap",
]
