"""Failures propagate: a source whose dependency failed gets a diagnostic naming it.

A prefab names models, a world prefabs, materials and models, a material its texture, a scene
models, materials and its map, a map prefabs and textures.  Their cooked files only name those
assets (the spec's META deps say which source bytes an output depends on), so a referrer of a
source that failed to cook still cooks; but what it places draws nothing in the engine.  So,
once the failures of a cook or a check are known, :func:`affected` finds each source that names a
failed one, and each that names such a source in turn, and gives it a ``DEPENDENCY_FAILED``
diagnostic at the reference (file:line:col, JSON path) naming the source that failed, the root
cause (o3de's "dependency failed", Defold's missing-resource error).  A warning, as a missing
reference is (the spec's severity); ``strict = true`` makes it an error with every other warning.

Only run when something failed: the referrers are found by their text (the failed asset's name
as a JSON string), then compiled in memory with their references recorded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veduta.base.project import AssetIndex
    from veduta.source.diagnostics import Diagnostic

__all__ = ["DEPENDENCY_FAILED", "affected"]

DEPENDENCY_FAILED = "DEPENDENCY_FAILED"


def affected(
    assets: str, index: AssetIndex, failed: Iterable[str], sources: Iterable[str], shown: Callable[[str], str]
) -> list[Diagnostic]:
    """The ``DEPENDENCY_FAILED`` warnings of *sources* (paths under the assets folder *assets*)
    that name a source of *failed* (paths too), directly or through another such source, one per
    reference, sorted by file, line and column.  *shown* gives the path a diagnostic names for a
    source path (as the cook shows its own)."""
    from veduta.base.kinds import kind_of, name_of
    from veduta.source.diagnostics import WARNING, Diagnostic

    failed = sorted(set(failed))
    root_of = {rel: rel for rel in failed}  # source -> the failed source behind it
    via: dict[str, str] = {}  # an affected source -> the source it names that failed or is affected
    candidates = [rel for rel in sorted(set(sources)) if rel not in root_of]
    texts: dict[str, bytes | None] = {}
    found: list[Diagnostic] = []
    frontier = list(failed)
    while frontier:
        names = {}
        for rel in frontier:
            k = kind_of(rel)
            if k is not None:
                names[(k.name, name_of(rel))] = rel
        hits: dict[str, list] = {}
        for rel in candidates:
            if rel in root_of:
                continue
            data = texts.get(rel, b"")
            if rel not in texts:
                data = texts[rel] = _read(os.path.join(assets, rel), kind_of(rel))
            if data is None or not any(f'"{n}"'.encode() in data for _, n in names):
                continue
            refs = [r for r in _references(assets, rel, data, index) if (r[0], r[1]) in names]
            if refs:
                hits[rel] = refs
        frontier = []
        for rel, refs in sorted(hits.items()):
            for kind, name, line, col, path in refs:
                target = names[(kind, name)]
                root = root_of[target]
                message = (
                    f'{kind} "{name}" failed to cook ({shown(root)} has errors)'
                    if target == root
                    else (
                        f'{kind} "{name}" names {_what(via[target])}, which failed to cook ({shown(root)} has errors)'
                    )
                )
                found.append(Diagnostic(shown(rel), line, col, path, message, WARNING, DEPENDENCY_FAILED))
            target = names[(refs[0][0], refs[0][1])]
            root_of[rel] = root_of[target]
            via[rel] = target if target in failed else via[target]
            frontier.append(rel)
    return sorted(found, key=lambda d: (d.file, d.line, d.col))


def _what(rel: str) -> str:
    from veduta.base.kinds import kind_of, name_of

    k = kind_of(rel)
    return f'{k.name if k else "asset"} "{name_of(rel)}"'


def _read(path: str, kind) -> bytes | None:
    """A source's bytes; None when it cannot be read or is larger than its kind's limit (its own
    cook says so)."""
    from veduta.base.fsutil import read_regular

    got = read_regular(path, kind.max_bytes if kind is not None else None)
    return got[0] if got is not None else None


def _references(assets: str, rel: str, data: bytes, index: AssetIndex) -> list[tuple[str, str, int, int, str]]:
    """Every reference to another asset that source *rel* (bytes *data*) makes, as its compiler
    resolves them: (kind, name, line, col, JSON path), read only (compiled in memory)."""
    from veduta.base.kinds import kind_of, name_of
    from veduta.compile import CompileContext, compile_source
    from veduta.source.diagnostics import Report

    k = kind_of(rel)
    if k is None:
        return []
    seen: list[tuple[str, str, Any, str]] = []  # (kind, name, node, path), in the order resolved
    placed: dict[str, Any] = {}  # (found in the text once read, if read without positions)

    class Recording(CompileContext):
        def reference(self, kind, name, where, path):
            if where is not None:
                seen.append((kind, name, where, path))
                placed[path] = where
            return super().reference(kind, name, where, path)

        def name_reference(self, kind, name, where, path):
            if where is not None:
                seen.append((kind, name, where, path))
                placed[path] = where
            return super().name_reference(kind, name, where, path)

    ctx = Recording(assets, rel, k.name, name_of(rel), Report(rel), index, placed=placed)
    try:
        compile_source(k.name, data, ctx)
    except Exception:  # noqa: BLE001 - a compiler bug is reported on that source by the cook itself
        pass
    refs = [(kind, name, where.line, where.col, path) for kind, name, where, path in seen if where.line]
    return list(dict.fromkeys(refs))
