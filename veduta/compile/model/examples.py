"""The specification's example models as ModelSpec values (used by tests and the benchmark)."""

from __future__ import annotations

from veduta.compile.model.types import LodSpec, ModelSpec, PartSpec

MINIMAL = ModelSpec(
    parts=(PartSpec(0, "box", size=(1.0, 1.0, 1.0), position=(0.0, 0.5, 0.0), material="crate_wood"),),
)

CRATE = ModelSpec(
    name="crate",
    pivot="bottom-center",
    smooth_angle_deg=30.0,
    parts=(
        PartSpec(0, "box", size=(1.0, 1.0, 1.0), position=(0.0, 0.5, 0.0), material="crate_wood"),
        PartSpec(1, "cylinder", radius=0.1, height=1.2, segments=12, position=(0.6, 0.6, 0.0)),
        PartSpec(2, "sphere", radius=0.3, segments=16, rings=8),
        PartSpec(3, "plane", size=(10.0, 10.0)),
        PartSpec(4, "extrude", profile=((0.0, 0.0), (1.0, 0.0), (1.0, 2.0), (0.0, 2.0)), depth=0.5),
        PartSpec(5, "lathe", profile=((0.0, 0.0), (0.5, 0.0), (0.4, 1.0), (0.0, 1.2)), segments=16),
        PartSpec(6, "mirror", axis="x", of=1),
    ),
)

ROBOT = ModelSpec(
    name="robot",
    pivot="bottom-center",
    symmetry="x",
    parts=(
        PartSpec(0, "box", size=(0.5, 0.6, 0.4), position=(0.0, 0.3, 0.0), material="body"),
        PartSpec(
            1,
            "cylinder",
            radius=0.07,
            height=0.7,
            segments=12,
            position=(0.45, 0.55, 0.0),
            rotation_deg=(0.0, 0.0, -50.0),
            material="arm",
        ),
        PartSpec(2, "mirror", axis="x", of=1),
        PartSpec(
            3,
            "sphere",
            radius=0.12,
            segments=12,
            rings=6,
            position=(0.72, 0.8, 0.1),
            material="hand",
        ),
        PartSpec(4, "mirror", axis="x", of=3),
        PartSpec(
            5,
            "lathe",
            profile=((0.0, 0.6), (0.18, 0.6), (0.16, 0.8), (0.0, 0.85)),
            segments=16,
            material="head",
        ),
    ),
)

TREE = ModelSpec(
    name="tree",
    pivot="bottom-center",
    lod=(LodSpec(15.0), LodSpec(35.0, "tree_far")),
    draw_distance=80.0,
    parts=(
        PartSpec(0, "cylinder", radius=0.15, height=1.2, segments=8, position=(0.0, 0.6, 0.0), material="bark"),
        PartSpec(1, "sphere", radius=0.7, segments=12, rings=6, position=(0.0, 1.6, 0.0), material="leaf"),
    ),
)

EXAMPLES = {"minimal": MINIMAL, "crate": CRATE, "robot": ROBOT, "tree": TREE}
