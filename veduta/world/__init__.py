"""veduta.world: the deterministic world generator (docs/world-generation.md).

Pure functions of a decoded world (WRLD) and its prefabs (PRFB): ground heights in whole
millimetres, biomes, water, sites and places with their pads, scatter, vegetation, chunk
entities with deterministic names, ``veduta world query`` and the top-down map.
"""

from __future__ import annotations

import importlib

__all__ = ["NO_WATER", "Generator", "Layers", "SiteDecision", "Structure", "chunk_name"]

_HOMES = {
    "Generator": "generator",
    "Layers": "generator",
    "chunk_name": "generator",
    "SiteDecision": "structures",
    "Structure": "structures",
    "NO_WATER": "terrain",
}


def __getattr__(name: str):
    # numpy and the generator load on first use, so `veduta world --help` (and every
    # other veduta command, which registers the world commands) starts fast
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
