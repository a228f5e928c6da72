"""veduta.world: the deterministic world generator (docs/world-generation.md).

Pure functions of a decoded world (WRLD) and its prefabs (PRFB): ground heights in whole
millimetres, biomes, water, sites and places with their pads, scatter, vegetation, chunk
entities with deterministic names, ``veduta world query`` and the top-down map.
"""

from __future__ import annotations

from .generator import Generator, Layers, chunk_name
from .structures import SiteDecision, Structure
from .terrain import NO_WATER

__all__ = ["NO_WATER", "Generator", "Layers", "SiteDecision", "Structure", "chunk_name"]
