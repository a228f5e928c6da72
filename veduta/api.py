"""The toolchain's tools as plain functions: the one door every face goes through.

Each tool is one function that takes a :class:`~veduta.cook.project.Project` first and plain
arguments after it (names, cells as ``(x, z)`` tuples, numbers in the source's units), and
returns plain data: exactly the object its CLI prints with ``--json`` and its MCP tool returns
as structured content (``veduta/cli.py`` and ``veduta/mcp`` are thin faces over this module).
A user mistake (unknown asset, malformed argument, refused edit) raises a
:class:`~veduta.errors.VedutaError` whose message names the problem; the faces turn it into a
``veduta: ...`` line or a tool error.

Imports are deferred to the call, so importing this module costs nothing on the cook's path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veduta.cook.project import Project


def inspect_model(project: Project, model: str) -> dict[str, Any]:
    """Triangles per part and level, bounds and findings of model *model*."""
    from veduta.compile.model.inspect import inspect_model as run

    return run(project, model)


def inspect_world(project: Project, world: str, at: list[tuple[int, int]] | tuple = (), all_views: bool = False,
                  sheet: str | None = None) -> dict[str, Any]:
    """Findings of world *world* (places, prefabs, models, view, triangle budget per view), ranked."""
    from veduta.world.inspect import inspect_world as run

    return run(project, world, at=at, all_views=all_views, sheet=sheet)


def inspect_prefab(project: Project, prefab: str) -> dict[str, Any]:
    """Footprint, entities, triangles of their models and findings of prefab *prefab*."""
    from veduta.world.inspect import inspect_prefab as run

    return run(project, prefab)
