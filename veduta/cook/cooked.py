"""Cook when stale, then read: the one way a tool gets an asset's cooked record.

:func:`cook_and_read` cooks one asset when its cooked file is stale (exactly as ``doit cook``
would, through :func:`veduta.cook.cook.cook_file`) and reads the body record. The tools build on
it: :func:`cooked_record` for an asset a tool cannot do without, :func:`load_world` for a world
and the prefabs it names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from veduta.base.errors import VedutaError
from veduta.base.project import no_such_asset


class CookedAsset(NamedTuple):
    """What :func:`cook_and_read` found: the body record (None unless ``status == "ok"``),
    ``status`` ("ok", "missing", "invalid"), the cook's lines (warnings, or the errors of an
    invalid source) and, for an invalid source, its diagnostics as dicts when the cook gave them."""

    record: Any
    status: str
    messages: list[str]
    diagnostics: list[dict] | None = None


def cook_and_read(project, kind: str, name: str, index=None, write: bool = True) -> CookedAsset:
    """Cook asset *name* of *kind* of *project* when stale, and read its body record. *index*: the
    game's assets (default: as they are now, ``project.index()``: a source written a moment ago
    counts; a caller reading several assets passes one index to all).  With ``write=False``
    nothing is written (``veduta check``): a fresh cooked file is read, a stale source is
    compiled in memory, exactly as the cook would compile it."""
    from veduta.cook.builds import record_result
    from veduta.cook.cook import FAILED, cook_file
    from veduta.formats.asset import read_asset_file

    src = project.find_source(kind, name) if name else None
    if src is None:
        return CookedAsset(None, "missing", [])
    cooked = project.cooked_path(kind, name)
    if not write:
        return _compile_and_read(project, kind, src, cooked, index if index is not None else project.index())
    out = cook_file(
        kind, src.rel, project.assets, cooked, project.cache, index=index if index is not None else project.index()
    )
    record_result(project.cache, src.rel, out)  # how the cooked file was made, for veduta report
    if out["outcome"] == FAILED:
        return CookedAsset(None, "invalid", list(out["messages"]), out.get("diagnostics"))
    return CookedAsset(read_asset_file(cooked).body, "ok", list(out["messages"]))


def _compile_and_read(project, kind: str, src, cooked: str, index) -> CookedAsset:
    """:func:`cook_and_read` writing nothing: the fresh cooked file, else the source compiled in
    memory (its body encoded and decoded again: the record a cooked file would give)."""
    from veduta.base.fsutil import TooLarge
    from veduta.compile import CompileContext, compile_source
    from veduta.cook.cook import check_fresh
    from veduta.formats import decode, encode
    from veduta.formats.asset import read_asset_file
    from veduta.source import read_source
    from veduta.source.diagnostics import Report

    if check_fresh(kind, src.rel, project.assets, cooked, index)[0]:
        return CookedAsset(read_asset_file(cooked).body, "ok", [])
    shown = project.source_path(src.rel)
    rep = Report(shown)
    try:
        data: bytes | None = read_source(shown, kind)[0]
    except TooLarge as exc:  # from one stat, before a byte is read
        rep.error((1, 1), "$", exc.strerror or "")
        data = None
    except OSError as exc:
        rep.error((1, 1), "$", f"cannot read the source ({exc.strerror})")
        data = None
    body = None
    if data is not None:
        ctx = CompileContext(project.assets, src.rel, kind, src.name, rep, index)
        body = compile_source(kind, data, ctx)
    found = rep.sorted()
    if body is None:
        return CookedAsset(None, "invalid", [str(d) for d in found], [d.to_json() for d in found])
    return CookedAsset(decode(type(body), encode(body)), "ok", [str(d) for d in found])


def cooked_record(project, kind: str, name: str, warn: Callable[[str], None] | None = None, index=None):
    """Cook (when stale) and read asset *name* of *kind*: its body record.

    Raises :class:`~veduta.base.errors.VedutaError` when no such source exists or it has errors (the
    message lists them).  Warning lines of the cook go to *warn* when given.  *index*: as
    :func:`cook_and_read`.
    """
    from veduta.base.kinds import kind_named

    kind_named(kind)
    got = cook_and_read(project, kind, name, index)
    if got.status == "missing":
        raise no_such_asset(project, kind, name)
    if got.status == "invalid":
        raise VedutaError(f"{kind} {name} has errors:\n" + "\n".join(got.messages))
    if warn is not None:
        for m in got.messages:
            warn(m)
    return got.record


def load_world(project, name: str, warn: Callable[[str], None] | None = None) -> tuple[Any, dict[str, Any]]:
    """The cooked world *name* of *project* and the cooked prefabs it names, by name.

    Raises :class:`~veduta.base.errors.VedutaError` when the world does not exist or has errors.  A
    named prefab that does not exist is left out; one with errors is left out and said to *warn*.
    """
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
