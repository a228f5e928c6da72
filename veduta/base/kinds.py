"""The asset kinds: folder, suffix, source format and body chunk of each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str  # META "kind"
    folder: str  # under the assets folder, and under the cooked folder
    suffix: str
    chunk: str
    compiler: str  # "module:function" of the compiler, imported only when needed
    spec: str  # "module:attribute" of the top-level field declaration (the JSON Schema's source)
    title: str  # what a source of this kind is, in a few words (schemas, docs, editors)
    batch_compiler: str = ""  # "module:function" compiling many sources at once, when the kind has one
    #: the largest source of this kind any tool reads, in bytes (docs/authoring-tools.md, "Source
    #: sizes"): a larger one is an error at its 1:1, told from one stat before a byte is read
    max_bytes: int = 16 << 20

    @property
    def format(self) -> str:
        return f"{self.name}/1"


KINDS: tuple[Kind, ...] = (
    Kind(
        "model",
        "models",
        ".vmodel",
        "MESH",
        "veduta.compile.model.compile:compile_model",
        "veduta.compile.model.source:TOP",
        "a model made of primitive parts",
        "veduta.compile.model.compile:compile_models",
        max_bytes=16 << 20,
    ),
    Kind(
        "texture",
        "textures",
        ".vtexture",
        "TEXR",
        "veduta.compile.texture:compile_texture",
        "veduta.compile.texture:TOP",
        "a texture composited from layers, with an optional sprite grid and clips",
        max_bytes=32 << 20,
    ),
    Kind(
        "material",
        "materials",
        ".vmaterial",
        "MATL",
        "veduta.compile.material:compile_material",
        "veduta.compile.material:TOP",
        "how a surface is drawn",
        max_bytes=1 << 20,
    ),
    Kind(
        "scene",
        "scenes",
        ".vscene",
        "SCEN",
        "veduta.compile.scene:compile_scene",
        "veduta.compile.scene:TOP",
        "a camera, a light and entities",
        max_bytes=32 << 20,
    ),
    Kind(
        "prefab",
        "prefabs",
        ".vprefab",
        "PRFB",
        "veduta.compile.prefab:compile_prefab",
        "veduta.compile.prefab:TOP",
        "a group of entities a world or map places together",
        max_bytes=32 << 20,
    ),
    Kind(
        "world",
        "worlds",
        ".vworld",
        "WRLD",
        "veduta.compile.world:compile_world",
        "veduta.compile.world:TOP",
        "a procedural world: biomes, terrain, features, vegetation, structures",
        max_bytes=64 << 20,
    ),
    Kind(
        "map",
        "maps",
        ".vmap",
        "TMAP",
        "veduta.compile.tilemap:compile_map",
        "veduta.compile.tilemap:TOP",
        "a tile map: terrains, layers of cells and objects",
        max_bytes=128 << 20,
    ),
)

#: The META "kind" values, in the order of KINDS.
NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
BY_NAME = {k.name: k for k in KINDS}
BY_FOLDER = {k.folder: k for k in KINDS}
BY_SUFFIX = {k.suffix: k for k in KINDS}


def kind_of(rel: str) -> Kind | None:
    """The kind of a source path relative to the assets folder, or None."""
    folder, _, rest = rel.partition("/")
    k = BY_FOLDER.get(folder)
    if k is None or not rest.endswith(k.suffix):
        return None
    return k


#: The largest PNG file an image layer reads, in bytes (docs/formats/texture.md, Images): twice
#: the largest PNG a texture can use as encoders write it (2048 x 2048 pixels of 16-bit RGBA
#: stored without compression is 33,556,480 bytes of rows, 33.6 MB with its zlib, chunk and
#: header bytes), room for metadata chunks; a larger file is refused from its stat before a byte
#: is read, so a PNG followed by gigabytes of junk never fills memory.
MAX_PNG_BYTES = 64 << 20


def is_png(path: str) -> bool:
    """Whether *path* names a PNG image as texture layers take it: ending in ``.png`` in any case
    (``wall.PNG`` too). The one rule for the cook's bound, ``veduta deps``, the watch, the editor
    and the language server."""
    return path[-4:].lower() == ".png"


def dep_limit(rel: str) -> tuple[int | None, str]:
    """The largest dependency *rel* (relative to the assets folder) a compiler reads, in bytes,
    and what it is in words (for :class:`~veduta.base.fsutil.TooLarge`): a PNG image
    (:data:`MAX_PNG_BYTES`), a source of its kind (``Kind.max_bytes``); None for any other file."""
    if is_png(rel):
        return MAX_PNG_BYTES, "a PNG image"
    k = kind_of(rel)
    if k is not None:
        return k.max_bytes, f"a {k.name} source"
    return None, "a file"


def name_of(rel: str) -> str:
    base = rel.rsplit("/", 1)[-1]
    return base[: base.rfind(".")] if "." in base else base


def kind_named(name: str) -> Kind:
    """The kind called *name* (``model``, ...); a UsageError naming the kinds otherwise, the
    closest first (``no asset kind "modle" (did you mean model?)``)."""
    k = BY_NAME.get(name)
    if k is None:
        from veduta.base.errors import UsageError, quote
        from veduta.base.names import did_you_mean

        raise UsageError(f"no asset kind {quote(name)}{did_you_mean(name, NAMES)} (want one of {', '.join(NAMES)})")
    return k
