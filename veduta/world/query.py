"""What the engine answers about one cell: :func:`query`, the JSON of ``veduta world query``.

It sits above the generator and the drawing model (it reports the ground on the chunk's drawn
level of detail, what the runtime's HeightAt returns), so the generator needs neither.
"""

from __future__ import annotations

from veduta.world.cover import STRUCTURE
from veduta.world.draw import drawn_height
from veduta.world.generator import Generator, metres
from veduta.world.terrain import NO_WATER


def query(gen: Generator, x: int, z: int) -> dict:
    """Cell, chunk, biome, ground height at the cell centre (full detail, and ``drawn_height`` on
    the chunk's finest drawn level: what HeightAt returns), water, owner and plants of cell [x, z]."""
    p = gen.p
    structs, corners, level, centre, wet, biome = gen.cell_state(x, z)
    kind, index = gen.cover.owner_at(x, z, biome, wet, structs)
    covered = kind == STRUCTURE
    plants = gen.cover.plants_at(x, z, biome, wet, covered, corners)
    c = p.chunk
    return {
        "world": p.name,
        "cell": [x, z],
        "chunk": [x // c, z // c],
        "inside": -p.cells <= x < p.cells and -p.cells <= z < p.cells,
        "biome": p.biome_names[biome],
        "ground": p.biome_grounds[biome],
        "height": metres(centre),
        "drawn_height": metres(drawn_height(gen, x, z)),
        "water": {"level": None if level == NO_WATER else metres(level), "wet": bool(wet)},
        "owner": gen.owner_json(x, z, kind, index, structs),
        "plants": [gen.plant_json(x, z, pl) for pl in plants],
    }
