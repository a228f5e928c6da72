"""A world and the prefabs it names, cooked when stale and read: what the world tools work on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from veduta.errors import VedutaError


def load_world(project, name: str, warn: Callable[[str], None] | None = None) -> tuple[Any, dict[str, Any]]:
    """The cooked world *name* of *project* and the cooked prefabs it names, by name.

    Raises :class:`~veduta.errors.VedutaError` when the world does not exist or has errors.  A
    named prefab that does not exist is left out; one with errors is left out and said to *warn*.
    """
    from veduta.cooked import cooked_record
    from veduta.world.params import prefab_names

    index = project.index()  # the game as it is now, once for the world and its prefabs
    world = cooked_record(project, "world", name, warn, index)
    prefabs = {}
    for n in prefab_names(world):
        if project.find_source("prefab", n) is not None:
            try:
                prefabs[n] = cooked_record(project, "prefab", n, warn, index)
            except VedutaError as exc:
                if warn is not None:
                    warn(f"warning: prefab {n}: {exc}")
    return world, prefabs
