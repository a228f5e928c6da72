"""Geometry timings for `make bench` (build stage only: no I/O, no encoding)."""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable

from veduta.compile.model.build import build_model, triangle_count
from veduta.compile.model.examples import CRATE, ROBOT, TREE
from veduta.compile.model.types import LodSpec, ModelSpec, PartSpec

#: The largest sphere the limits allow: 256 segments x 128 rings, 65,024 triangles.
BIG_SPHERE = ModelSpec(name="big_sphere", parts=(PartSpec(0, "sphere", radius=1.0, segments=256, rings=128),))

#: A typical prop of about a thousand triangles (982) using every shape, with one LOD level.
TYPICAL = ModelSpec(
    name="typical",
    pivot="bottom-center",
    symmetry="x",
    lod=(LodSpec(20.0),),
    parts=(
        PartSpec(0, "box", size=(1.0, 0.8, 0.6), position=(0.0, 0.6, 0.0), material="body"),
        PartSpec(1, "cylinder", radius=0.08, height=0.9, segments=16, position=(0.6, 0.6, 0.0),
                 rotation_deg=(0.0, 0.0, -30.0), material="metal"),
        PartSpec(2, "mirror", axis="x", of=1),
        PartSpec(3, "sphere", radius=0.25, segments=16, rings=10, position=(0.0, 1.25, 0.0), material="glass"),
        PartSpec(4, "lathe", profile=((0.0, 0.0), (0.3, 0.0), (0.35, 0.1), (0.25, 0.2), (0.0, 0.22)),
                 segments=24, position=(0.0, -0.02, 0.0), material="metal"),
        PartSpec(5, "extrude", profile=((0.0, 0.0), (0.3, 0.0), (0.3, 0.1), (0.1, 0.1), (0.1, 0.4),
                                         (0.0, 0.4)), depth=0.05, position=(0.5, 0.2, 0.3)),
        PartSpec(6, "mirror", axis="x", of=5),
        PartSpec(7, "sphere", radius=0.06, segments=12, rings=6, position=(0.75, 0.2, 0.0), material="metal"),
        PartSpec(8, "mirror", axis="x", of=7),
        PartSpec(9, "plane", size=(2.0, 2.0), material="shadow"),
        PartSpec(10, "lathe", profile=((0.3, 0.0), (0.36, 0.0), (0.36, 0.05), (0.3, 0.05), (0.3, 0.0)),
                 segments=16, position=(0.0, 1.0, 0.0), material="metal"),
    ),
)  # fmt: skip


def _median_seconds(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _base_only(spec: ModelSpec) -> ModelSpec:
    return ModelSpec(
        name=spec.name,
        pivot=spec.pivot,
        symmetry=spec.symmetry,
        smooth_angle_deg=spec.smooth_angle_deg,
        parts=spec.parts,
    )


def bench_geometry(runs: int = 7) -> dict[str, float | int]:
    """Median build times in milliseconds (and triangle counts) of reference models."""
    typical_base = _base_only(TYPICAL)
    figures: dict[str, float | int] = {
        "sphere_256x128_triangles": triangle_count(BIG_SPHERE),
        "sphere_256x128_ms": _median_seconds(lambda: build_model(BIG_SPHERE), max(3, runs // 2)) * 1e3,
        "typical_triangles": triangle_count(TYPICAL),
        "typical_ms": _median_seconds(lambda: build_model(typical_base), runs * 5) * 1e3,
        "typical_with_lod_ms": _median_seconds(lambda: build_model(TYPICAL), runs * 5) * 1e3,
    }
    for name, spec in (("crate", CRATE), ("robot", ROBOT), ("tree", TREE)):
        figures[f"{name}_triangles"] = triangle_count(spec)
        figures[f"{name}_ms"] = _median_seconds(functools.partial(build_model, spec), runs * 5) * 1e3
    return figures


if __name__ == "__main__":
    for key, value in bench_geometry().items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
