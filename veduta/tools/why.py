"""``veduta why``: which assets are stale, and why.

The cook decides staleness by the cooked file's META (docs/cooking.md): the file must be whole,
name this source and the current compiler, and its source_hash must equal the hash of the
source and of every dependency as they are now.  The hash says *that* something changed; which
file did is told by the stat cache (cache/state.marshal), which holds the signature (size,
mtime, inode, ctime) of the source and of every dependency as the last good cook saw them.

Reads only: nothing is cooked, and neither the stat cache nor doit's database is written.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veduta.base.project import Project, Source

__all__ = ["why", "REASONS"]

#: Every reason code, with what it means (docs/cooking.md lists them too).
REASONS = {
    "NEVER_COOKED": "there is no cooked file and no record of one",
    "COOKED_MISSING": "the cooked file was removed since the last cook",
    "COOKED_DAMAGED": "the cooked file is not a whole, valid .vda of this kind",
    "COMPILER_CHANGED": "the cooked file was made by another compiler version",
    "TOOLCHAIN_CHANGED": "an earlier veduta cooked it, whose rules differ (its META may still match)",
    "SOURCE_MOVED": "the cooked file was made from another source path",
    "DUPLICATE_NAME": "another source of this kind has the same name (never cooked until renamed)",
    "SOURCE_CHANGED": "the source changed since the last cook",
    "DEP_CHANGED": "a dependency changed since the last cook",
    "DEP_APPEARED": "a dependency that was missing at the last cook exists now",
    "DEP_DISAPPEARED": "a dependency is gone",
    "REFERENCE_APPEARED": "an asset it names by name only (a model's material) exists now; it was missing",
    "REFERENCE_GONE": "an asset it names by name only (a model's material) is gone or moved",
    "CHANGED": "the source or a dependency changed (no record of the last cook's files tells which)",
    "NOTES_UNKNOWN": "strict: the warnings of its cooked file are not on record, so a strict cook compiles it",
}


def _reason(code: str, message: str, dep: str | None = None) -> dict:
    out = {"code": code, "message": message}
    if dep is not None:
        out["dep"] = dep
    return out


def damage(path: str, kind: str) -> str | None:
    """How a cooked file is damaged (None when it is whole and of *kind*)."""
    from veduta.base.errors import VdaError
    from veduta.base.kinds import BY_NAME, KINDS, name_of
    from veduta.container.chunks import read_chunks
    from veduta.container.meta import Meta
    from veduta.cook.cook import layout_fault

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    try:
        chunks = read_chunks(data, path)
    except VdaError as exc:
        return (
            exc.reason
            + (f" (chunk {exc.chunk})" if exc.chunk else "")
            + (f" at byte {exc.offset}" if exc.offset is not None else "")
        )
    metas = [c for c in chunks if c.type == "META"]
    if len(metas) != 1:
        return f"{len(metas)} META chunks, want 1"
    bodies = [c.type for c in chunks if c.type in {k.chunk for k in KINDS}]
    want = BY_NAME[kind].chunk
    if bodies != [want]:
        return f"body chunks {', '.join(bodies) or 'none'}, want one {want}"
    try:
        meta = Meta.decode(metas[0].payload)
    except VdaError as exc:
        return f"META {exc.reason}"
    if meta.kind != kind:
        return f'META says kind "{meta.kind}", want "{kind}"'
    if meta.name != name_of(meta.source):
        return f'META names the asset "{meta.name}", not "{name_of(meta.source)}"'
    return layout_fault(chunks, kind)


def _explain(project: Project, src: Source, index, cache, dups, strict: bool = False) -> list[dict]:
    """The reasons *src* is stale ([] when it is up to date); *strict*: for a strict cook, which
    takes no output whose notes (its warnings) are not on record."""
    from veduta import COMPILER_VERSION
    from veduta.base.kinds import kind_of, name_of
    from veduta.cook.cook import check_fresh, cooked_meta, fresh_by_stat, stale_reference
    from veduta.cook.state import sig

    if dups:
        others = ", ".join(project.source_path(p) for p in dups)
        return [_reason("DUPLICATE_NAME", f"the name is also used by {others}")]
    kind, rel, assets = src.kind.name, src.rel, project.assets
    cooked = project.cooked_path(src.kind, src.name)
    if rel in cache.owed:
        return [_reason("TOOLCHAIN_CHANGED", "cooked by an earlier veduta whose rules differ; it cooks again")]
    packed = cache.packed(rel)
    if packed is not None and fresh_by_stat(rel, packed, assets, cooked, index):
        # every signature the last good cook recorded still matches: nothing to read (but a dep
        # whose name resolves to another file now, while another source has its name)
        moved = _moved_reasons(project, packed[2], index) if type(packed[2]) is tuple else []
        if moved or not strict or len(packed) != 4:  # (an entry of 4 items: its notes unknown)
            return moved
        return _unknown_notes(project, cooked, packed[0])
    entry = cache.get(rel)
    if not os.path.exists(cooked):
        if entry is None:
            return [_reason("NEVER_COOKED", "never cooked (or its last cook failed)")]
        return [_reason("COOKED_MISSING", f"the cooked file {cooked} was removed since the last cook")]
    meta, _ = cooked_meta(cooked, kind)
    if meta is None:
        return [_reason("COOKED_DAMAGED", f"the cooked file {cooked} is damaged: {damage(cooked, kind)}")]
    if meta.compiler != COMPILER_VERSION:
        return [_reason("COMPILER_CHANGED", f'cooked by compiler "{meta.compiler}", now "{COMPILER_VERSION}"')]
    if meta.source != rel:
        return [_reason("SOURCE_MOVED", f"cooked from {meta.source}, now {rel}")]
    fresh, deps, _, _ = check_fresh(kind, rel, assets, cooked, index)
    if fresh:
        notes = entry[3] if entry is not None and entry[0] == meta.source_hash else None
        if notes is None and strict:
            return _unknown_notes(project, cooked, meta.source_hash)
        return _watch_reasons(notes[0], index) if notes else []

    def now_sig(p: str):
        try:
            return sig(os.stat(os.path.join(assets, p)))
        except OSError:
            return ()

    reasons: list[dict] = _moved_reasons(project, deps, index)
    if entry is not None and entry[0] == meta.source_hash:  # the record of the cook that made this file
        recorded = dict(entry[2])
        racy = []  # written within RACY_NS of the last cook: their signatures were not kept
        for p, was in entry[2]:
            cur = now_sig(p)
            if p == rel:
                # (a signature that changed, or none kept: the content decides, as a checkout or a copy
                # gives an unchanged source new signatures)
                same = was == cur or _source_unchanged(project, src, meta)
                if not same:
                    reasons.append(_reason("SOURCE_CHANGED", f"the source {project.source_path(rel)} changed"))
            elif was == () and cur != ():
                reasons.append(_reason("DEP_APPEARED", f"{p} exists now (it was missing)", p))
            elif was != () and cur == ():
                reasons.append(_reason("DEP_DISAPPEARED", f"{p} is gone", p))
            elif was is None:
                racy.append(p)
            elif was != cur:
                reasons.append(_reason("DEP_CHANGED", f"{p} changed", p))
        for p in deps:
            if p not in recorded and now_sig(p) != ():
                reasons.append(_reason("DEP_APPEARED", f"{p} exists now (it was missing)", p))
        if not reasons:
            reasons = [
                _reason("DEP_CHANGED", f"{p} changed (or was written just before the last cook)", p) for p in racy
            ]
    for p in deps:  # a missing reference that now exists under another folder
        if now_sig(p) == () and stale_reference(p, index):
            k = kind_of(p)
            found = index.resolve(k.name, name_of(p)) if k else None
            if not any(r.get("dep") == p for r in reasons):
                reasons.append(_reason("DEP_APPEARED", f"{p} was missing and now exists as {found}", p))
    if not reasons:
        reasons = _guess(project, src, meta, deps)
    return reasons


def _unknown_notes(project: Project, cooked: str, key: str) -> list[dict]:
    """``NOTES_UNKNOWN`` for a fresh cooked file (source_hash *key*) whose notes the stat cache
    does not hold, when no compile of this toolchain kept them beside the store either (then a
    strict cook reads them there and compiles nothing: [])."""
    from veduta.cook.cook import stored_notes

    if stored_notes(project.cache, key) is not None:
        return []
    return [
        _reason(
            "NOTES_UNKNOWN",
            f"strict: the warnings of {cooked} are not on record in {project.cache}/ (restored from the "
            "shared cache, cooked by an earlier veduta, or the cache folder deleted), so a strict cook "
            "compiles it to find them",
        )
    ]


def _moved_reasons(project: Project, deps, index) -> list[dict]:
    """``DEP_MOVED`` for each of *deps* that is there and whose name resolves to another file now
    (another source of its kind and name came: a cook from scratch records the first by path)."""
    from veduta.base.kinds import kind_of, name_of
    from veduta.cook.cook import moved_reference

    out = []
    for p in deps:
        if moved_reference(p, index) and os.path.exists(os.path.join(project.assets, p)):
            k = kind_of(p)
            found = index.resolve(k.name, name_of(p)) if k else None
            out.append(_reason("DEP_MOVED", f"{p}: the name {name_of(p)} resolves to {found} now", p))
    return out


def _watch_reasons(watch, index) -> list[dict]:
    """Why the references a cooked file keeps by name only (see
    :attr:`veduta.compile.CompileContext.watch`) make it stale: each that resolves otherwise now."""
    from veduta.base.kinds import kind_of, name_of
    from veduta.compile import WATCH_MISSING

    out = []
    for w in watch:
        missing = w.startswith(WATCH_MISSING)
        rel = w[1:] if missing else w
        k = kind_of(rel)
        if k is None:
            continue
        found = index.resolve(k.name, name_of(rel))
        if missing and found is not None:
            out.append(
                _reason("REFERENCE_APPEARED", f"{k.name} {name_of(rel)} exists now as {found} (it was missing)", found)
            )
        elif not missing and found != rel:
            now = f"moved to {found}" if found else "is gone"
            out.append(_reason("REFERENCE_GONE", f"{k.name} {name_of(rel)} ({rel}) {now}", rel))
    return out


def _source_unchanged(project: Project, src: Source, meta) -> bool:
    """Whether the source's content is the one this cooked file was made from, by the store's
    manifest of outputs cooked from this exact source content (cache/store)."""
    from veduta.cook.cook import _load_manifest, manifest_key
    from veduta.cook.store import Store
    from veduta.source import read_source

    try:
        data = read_source(project.source_path(src.rel), src.kind.name)[0]
    except OSError:  # (larger than its kind's limit too)
        return False
    store = Store(os.path.join(project.cache, "store"))
    key = manifest_key(src.rel, data)
    if not store.has(key):
        return False
    return (list(meta.deps), meta.source_hash) in _load_manifest(store.get(key))


def _guess(project: Project, src: Source, meta, deps) -> list[dict]:
    """No record tells which file changed: test the one hypothesis the hash can confirm (a
    dependency that was missing at the cook exists now), else say what is known."""
    from veduta import COMPILER_VERSION
    from veduta.base.fsutil import read_dependency
    from veduta.base.kinds import dep_limit
    from veduta.container.meta import source_hash

    def read(p):  # as the cook reads a dependency: a regular file within its limit, else missing
        return read_dependency(os.path.join(project.assets, p), *dep_limit(p))[0]

    from veduta.source import read_source

    try:
        data = read_source(project.source_path(src.rel), src.kind.name)[0]
    except OSError:  # (larger than its kind's limit: no hypothesis to test)
        return []
    current = {p: read(p) for p in deps}
    gone = [p for p in deps if current[p] is None]

    def without(p: str):
        """The reader of the files as they are now, *p* missing (as it was at the last cook)."""
        return lambda d: None if d == p else current[d]

    for p in deps:
        if current[p] is not None:
            h = source_hash(COMPILER_VERSION, src.rel, data, deps, without(p))
            if h == meta.source_hash:
                return [_reason("DEP_APPEARED", f"{p} exists now (it was missing)", p)]
    out = [
        _reason(
            "CHANGED",
            "the source or one of its dependencies changed since the last cook (dependencies: "
            f"{', '.join(deps) or 'none'}; no record in {project.cache}/ tells which)",
        )
    ]
    out += [
        _reason("DEP_DISAPPEARED", f"{p} is missing (it may have been missing at the last cook too)", p) for p in gone
    ]
    return out


def why(project: Project, sources: list[str] | None = None, strict: bool | None = None) -> dict[str, Any]:
    """Why each stale source of *project* (or of those named) would cook again.

    *strict*: as a strict cook decides (``veduta cook --strict``; None: the game's ``strict``
    setting), which compiles a fresh output whose warnings are not on record (``NOTES_UNKNOWN``).
    Returns ``{"checked", "stale": [{"source", "file", "reasons": [{"code", "message", "dep"?}]}]}``
    in source order; ``stale`` is empty when everything is up to date.
    """
    from veduta import TOOLCHAIN
    from veduta.base.project import AssetIndex
    from veduta.cook.state import StatCache
    from veduta.cook.tasks import STATE_FILE

    all_sources, _, selected = project.select(sources)
    index = AssetIndex.from_paths(s.rel for s in all_sources)
    cache = StatCache(os.path.join(project.cache, STATE_FILE), TOOLCHAIN)  # read, never saved
    stale = []
    strict = bool(project.strict if strict is None else strict)
    for src in selected:
        paths = index.by_kind[src.kind.name][src.name]
        dups = [p for p in paths if p != src.rel] if len(paths) > 1 else None
        reasons = _explain(project, src, index, cache, dups, strict)
        if reasons:
            stale.append({"source": src.rel, "file": project.source_path(src.rel), "reasons": reasons})
    return {"checked": len(selected), "stale": stale}
