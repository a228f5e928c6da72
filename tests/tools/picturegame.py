"""A small game whose pictures can be checked pixel by pixel (tests of maps, sheets, previews).

- materials: ``red_ground`` (#b03020, plain), ``speckle_ground`` (white times a checker of
  #2040c0 and #4060e0, whose average is #3050d0), ``checker`` (a 4 x 4 texture of red and blue
  2 x 2 squares, nearest, unlit), ``leaves`` (a cutout texture: its left half opaque green, its
  right half transparent);
- models: ``cube`` (a 1 m box standing on the origin, in ``checker``), ``card`` (a plane in
  ``leaves``);
- prefab ``hut`` (a cube on a 2 x 2 footprint);
- world ``flat``: flat ground of two biomes (red and speckled), an orthographic camera looking
  straight down from 30 m (24 m high: 32 x 24 m in the 320 x 240 frame), a white light straight
  down and no ambient, so a lit face of the ground shows its material's colour exactly; one place
  ``home`` (a hut) at [3, -2].
"""

from __future__ import annotations

import json
from pathlib import Path

RED = (0xB0, 0x30, 0x20)
SPECKLE = ((0x20, 0x40, 0xC0), (0x40, 0x60, 0xE0))
SPECKLE_AVERAGE = (0x30, 0x50, 0xD0)
CHECKER = ((255, 0, 0), (0, 0, 255))
LEAF = (40, 160, 40)


def _write(root: Path, rel: str, data) -> None:
    path = root / "assets" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def flat_world(**over) -> dict:
    world = {
        "veduta": "world/1",
        "seed": 5,
        "cell": 1,
        "chunk": 16,
        "extent": 4,
        "view": 1,
        "biome_scale": 16,
        "camera": {
            "type": "orthographic",
            "size": 24,
            "position": [0, 30, 0],
            "look_at": [0, 0, 0],
            "near": 0.1,
            "far": 100,
        },
        "light": {"direction": [0, -1, 0], "color": "#ffffff", "ambient": "#000000"},
        "background": "#000000",
        "biomes": [
            {"name": "red", "ground": "red_ground", "weight": 1},
            {"name": "speckled", "ground": "speckle_ground", "weight": 1},
        ],
        "places": [{"name": "home", "prefab": "hut", "cell": [3, -2]}],
    }
    world.update(over)
    return world


def write_game(root: Path, world: dict | None = None) -> Path:
    """The game under *root* (its assets folder and a pyproject.toml); returns *root*."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.veduta]\n")
    _write(root, "materials/red_ground.vmaterial", {"veduta": "material/1", "albedo": "#b03020"})
    _write(root, "materials/speckle_ground.vmaterial", {"veduta": "material/1", "texture": "speckle"})
    _write(
        root,
        "textures/speckle.vtexture",
        {
            "veduta": "texture/1",
            "size": [4, 4],
            "tiling": True,
            "layers": [{"type": "checker", "colors": ["#2040c0", "#4060e0"], "cell": 1}],
        },
    )
    _write(
        root,
        "materials/checker.vmaterial",
        {"veduta": "material/1", "texture": "checker", "filter": "nearest", "unlit": True},
    )
    _write(
        root,
        "textures/checker.vtexture",
        {
            "veduta": "texture/1",
            "size": [4, 4],
            "tiling": True,
            "layers": [{"type": "checker", "colors": ["#ff0000", "#0000ff"], "cell": 2}],
        },
    )
    _write(
        root,
        "materials/leaves.vmaterial",
        {
            "veduta": "material/1",
            "texture": "leaves",
            "alpha": "cutout",
            "filter": "nearest",
            "unlit": True,
            "cull": "none",
        },
    )
    from PIL import Image

    leaves = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    for y in range(4):
        for x in range(2):
            leaves.putpixel((x, y), (*LEAF, 255))
    leaves.save(root / "assets/textures/leaves.png")
    _write(
        root,
        "textures/leaves.vtexture",
        {"veduta": "texture/1", "mipmaps": False, "layers": [{"type": "image", "path": "textures/leaves.png"}]},
    )
    _write(
        root,
        "models/cube.vmodel",
        {
            "veduta": "model/1",
            "pivot": "bottom-center",
            "parts": [{"shape": "box", "size": [1, 1, 1], "position": [0, 0.5, 0], "material": "checker"}],
        },
    )
    _write(
        root,
        "models/card.vmodel",
        {
            "veduta": "model/1",
            "pivot": "bottom-center",
            "parts": [{"shape": "plane", "size": [1, 1], "material": "leaves"}],
        },
    )
    _write(
        root,
        "prefabs/hut.vprefab",
        {"veduta": "prefab/1", "footprint": [2, 2], "entities": [{"name": "hut", "model": "cube"}]},
    )
    _write(root, "worlds/flat.vworld", world or flat_world())
    return root
