"""Types, defaults and limits of the model/1 compiler (spec: model-format.md).

Input types (`PartSpec`, `LodSpec`, `ModelSpec`) are plain frozen dataclasses filled from the
validated JSON source; output types (`BuiltModel` and friends) are what `build.build_model`
returns. `VERTEX_DTYPE` is the one vertex layout shared by the builder, the MESH encoder and
the decoder.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

# One compiled vertex (little-endian float32 position, normal and UV, 32 bytes) and the index type,
# declared once by the MESH format.
from veduta.formats.mesh import INDEX_DTYPE, VERTEX_DTYPE  # noqa: F401 - the model compiler imports both from here

assert VERTEX_DTYPE.itemsize == 32

FORMAT = "model/1"
UNITS = "m"

SHAPES = ("box", "cylinder", "sphere", "plane", "extrude", "lathe", "mirror")
UV_MODES = ("box", "planar", "cylindrical", "spherical")
PIVOTS = ("origin", "center", "bottom-center")
AXES = ("x", "y", "z")

#: UV mode used when a part gives none (a mirror inherits its source's mode instead).
DEFAULT_UV = MappingProxyType(
    {
        "box": "box",
        "plane": "planar",
        "extrude": "box",
        "cylinder": "cylindrical",
        "lathe": "cylindrical",
        "sphere": "spherical",
    }
)

DEFAULT_PIVOT = "origin"
DEFAULT_SYMMETRY = ""
DEFAULT_SMOOTH_ANGLE_DEG = 30.0
SMOOTH_ANGLE_RANGE = (0.0, 180.0)
#: Tolerance added to smooth_angle_deg when comparing face normals.
SMOOTH_TOLERANCE_DEG = 0.001
DEFAULT_TRIANGLE_BUDGET = 0  # 0 = no budget
DEFAULT_DRAW_DISTANCE = 0.0  # 0 = no limit

DEFAULT_SEGMENTS = 16  # cylinder, sphere, lathe
DEFAULT_RINGS = 8  # sphere
SEGMENTS_RANGE = (3, 256)
RINGS_RANGE = (2, 128)
EXTRUDE_POINTS_RANGE = (3, 256)
LATHE_POINTS_RANGE = (2, 256)
PARTS_RANGE = (1, 256)
MAX_LOD_LEVELS = 8
#: Triangles of one model, every level of detail it builds counted (docs/formats/model.md,
#: Limits): building takes about 0.3 KB of memory per triangle (parts built in chunks of
#: build.CHUNK_TRIANGLES), so the largest legal model peaks near 300 MB (``make bench`` measures
#: it) instead of the 15 GB that 256 of the largest parts took.
MAX_TRIANGLES = 1_000_000
#: LOD levels never go below these counts.
LOD_MIN_SEGMENTS = 3
LOD_MIN_RINGS = 2

Vec2 = tuple[float, float]
Vec3 = tuple[float, float, float]
Bounds = tuple[Vec3, Vec3]


@dataclass(frozen=True)
class PartSpec:
    """One validated part. Fields a shape does not use keep their defaults.

    `uv` may be "" to mean the shape's default (`DEFAULT_UV`). A mirror uses only `axis`,
    `of` and, optionally, `material` ("" inherits the source's material).
    """

    index: int
    shape: str
    position: Vec3 = (0.0, 0.0, 0.0)
    rotation_deg: Vec3 = (0.0, 0.0, 0.0)
    scale: Vec3 = (1.0, 1.0, 1.0)
    material: str = ""
    uv: str = ""
    flip_normals: bool = False
    # shape parameters
    size: tuple[float, ...] = ()  # box: (x, y, z); plane: (x, z)
    radius: float = 0.0
    height: float = 0.0
    segments: int = DEFAULT_SEGMENTS
    rings: int = DEFAULT_RINGS
    depth: float = 0.0
    profile: tuple[Vec2, ...] = ()  # extrude: (x, y) points; lathe: (r, y) points
    axis: str = ""  # mirror: "x", "y" or "z"
    of: int = -1  # mirror: index of an earlier part

    @property
    def uv_mode(self) -> str:
        """The UV mode in effect for a non-mirror part."""
        return self.uv or DEFAULT_UV.get(self.shape, "")


@dataclass(frozen=True)
class LodSpec:
    distance: float
    model: str = ""  # "" = rebuild this model with fewer segments


@dataclass(frozen=True)
class ModelSpec:
    name: str = ""
    pivot: str = DEFAULT_PIVOT
    symmetry: str = DEFAULT_SYMMETRY
    smooth_angle_deg: float = DEFAULT_SMOOTH_ANGLE_DEG
    triangle_budget: int = DEFAULT_TRIANGLE_BUDGET
    parts: tuple[PartSpec, ...] = ()
    lod: tuple[LodSpec, ...] = ()
    draw_distance: float = DEFAULT_DRAW_DISTANCE


# --- outputs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeshPart:
    """One index range of the mesh: one per source part, in part order."""

    first: int  # first index (not triangle) in the index buffer
    count: int  # number of indices (3 per triangle)
    material: int  # index into BuiltModel.materials


@dataclass(frozen=True)
class BuiltPart:
    """Per-part report record."""

    index: int
    shape: str
    first: int
    count: int
    material: int  # index into BuiltModel.materials
    uv: str  # the mode in effect (a mirror reports its source's)
    flip_normals: bool  # in effect (a mirror reports its source's)
    of: int  # mirrored part, -1 for other shapes


@dataclass(frozen=True, eq=False)
class BuiltLevel:
    """One LOD level. A level with `model` set has empty geometry and the base bounds."""

    distance: float
    model: str
    bounds: Bounds
    vertices: np.ndarray  # (n,) VERTEX_DTYPE
    indices: np.ndarray  # (3t,) uint32
    mesh_parts: tuple[MeshPart, ...]

    @property
    def triangle_count(self) -> int:
        return int(self.indices.size // 3)


@dataclass(frozen=True, eq=False)
class BuiltModel:
    name: str
    vertices: np.ndarray  # (n,) VERTEX_DTYPE
    indices: np.ndarray  # (3t,) uint32
    mesh_parts: tuple[MeshPart, ...]
    materials: tuple[str, ...]  # first-use order, "" = part without material
    parts: tuple[BuiltPart, ...]
    pivot_offset: Vec3
    bounds: Bounds  # after the pivot
    lods: tuple[BuiltLevel, ...]
    smooth_angle_deg: float
    symmetry: str
    triangle_budget: int
    draw_distance: float

    @property
    def triangle_count(self) -> int:
        return int(self.indices.size // 3)
