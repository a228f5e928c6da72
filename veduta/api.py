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


def cache_info(project: Project, probe: bool = True) -> dict[str, Any]:
    """The local store (path, entries, bytes) and the shared cache tier (settings; with *probe*,
    whether this machine reaches it): ``{"local": {...}, "shared": {...} or None}``."""
    from veduta.cook.shared import cache_info as run

    return run(project, probe)


def cache_push(project: Project) -> dict[str, Any]:
    """Upload the local store's valid entries that the shared cache lacks:
    ``{"url", "local", "present", "uploaded", "bytes", "skipped"}``."""
    from veduta.cook.shared import cache_push as run

    return run(project)


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


def world_place(project: Project, world: str, name: str, prefab: str, cell: tuple[int, int] | None = None,
                near: tuple[int, int] | None = None, rotation: int = 0, search: int = 32,
                dry_run: bool = False) -> dict[str, Any]:
    """Add or replace place *name* at *cell*, or at the valid cell nearest *near* (checked as inspect world
    checks places); ``cell`` in the report is where it went."""
    from veduta.world.edit import world_place as run

    return run(project, world, name, prefab, cell=cell, near=near, rotation=rotation, search=search,
               dry_run=dry_run)


def world_terrain(project: Project, world: str, name: str, kind: str, cell: tuple[int, int], radius: int,
                  height: float | None = None, depth: float | None = None, falloff: int | None = None,
                  roughness: float | None = None, dry_run: bool = False) -> dict[str, Any]:
    """Add or replace feature *name* (hill, plain, lake, sea): ground ``before``/``after``, ``places_in_water``."""
    from veduta.world.edit import world_terrain as run

    return run(project, world, name, kind, cell, radius, height=height, depth=depth, falloff=falloff,
               roughness=roughness, dry_run=dry_run)


def world_vegetation(project: Project, world: str, name: str, density: float, prefab: str | None = None,
                     model: str | None = None, biomes: list[str] | None = None, cell: tuple[int, int] | None = None,
                     radius: int | None = None, scale: tuple[float, float] | None = None,
                     dry_run: bool = False) -> dict[str, Any]:
    """Add or replace vegetation rule *name*: ``plants``, ``triangles``, ``warnings``."""
    from veduta.world.edit import world_vegetation as run

    return run(project, world, name, density, prefab=prefab, model=model, biomes=biomes, cell=cell, radius=radius,
               scale=scale, dry_run=dry_run)


def world_remove(project: Project, world: str, name: str, section: str | None = None,
                 dry_run: bool = False) -> dict[str, Any]:
    """Remove the feature, vegetation rule or place *name* (``section`` when the name is in several lists)."""
    from veduta.world.edit import world_remove as run

    return run(project, world, name, section=section, dry_run=dry_run)


def export_gltf(project: Project, out: str, model: str | None = None, lod: int | None = None,
                world: str | None = None, chunk: tuple[int, int] | None = None, radius: int = 0) -> dict[str, Any]:
    """Write a binary glTF 2.0 file *out*: model *model* (every level of detail, or level *lod*),
    or the chunks within *radius* of *chunk* of world *world*. Returns what was written."""
    from veduta.errors import VedutaError

    if (model is None) == (world is None):
        raise VedutaError("export gltf takes a model name, or a world with a chunk, not both")
    if world is not None:
        if chunk is None:
            raise VedutaError("export gltf of a world needs the chunk CX,CZ to export")
        if lod is not None:
            raise VedutaError("--lod is for a model; a world chunk is exported at its finest drawn level")
        from veduta.export.world import export_chunk

        return export_chunk(project, world, chunk, out, radius)
    from veduta.export.gltf import export_model

    assert model is not None  # one of model and world, checked above
    return export_model(project, model, out, lod)


def preview_model(project: Project, model: str, out: str, size: int = 160) -> dict[str, Any]:
    """Write a PNG sheet of shaded views of model *model* and its levels of detail to *out*
    (*size* pixels per view). Returns what was drawn."""
    from veduta.export.preview import preview_model as run

    return run(project, model, out, size)


def check(project: Project, sources: list[str] | None = None, full: bool = False, jobs: int = 1) -> dict[str, Any]:
    """Every check the cook makes, on every source (or those named, paths under the assets
    folder), writing nothing: ``{ok, checked, compiled, fresh, errors, warnings, diagnostics}``.
    Sources whose cooked file is fresh are known good and not compiled again unless *full*."""
    from veduta.cook.check import check as run

    return run(project, sources, full, jobs)


def why(project: Project, sources: list[str] | None = None) -> dict[str, Any]:
    """Each stale source and the reasons it would cook again: ``{checked, stale: [...]}``."""
    from veduta.cook.why import why as run

    return run(project, sources)
