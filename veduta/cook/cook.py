"""Cooking one source, deciding staleness, pruning orphans.

Nothing here knows about meshes or pixels: compilers are reached through
:func:`veduta.compile.compile_source`.  ``cook_one`` is the doit action; it
takes only plain, picklable arguments so that ``doit -n N`` (process mode)
can run it in workers.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING

from veduta import COMPILER_VERSION, TOOLCHAIN
from veduta.base.errors import VdaError
from veduta.base.fsutil import (
    MAX_COOKED_BYTES,
    TEMP_SUFFIX_RE,
    TooLarge,
    atomic_write,
    open_regular,
    outside,
    read_regular,
    remove_if_exists,
)
from veduta.base.kinds import BY_FOLDER, BY_NAME, kind_of, name_of
from veduta.base.project import AssetIndex, watch_holds
from veduta.cook.state import (
    CLEAN,
    MISSING,
    RACY,
    SIG,
    make_entry,
    make_notes,
    notes_formed,
    packed_notes,
    sig,
    well_formed,
)
from veduta.cook.store import Store

# A no-op cook decides every source by stat() (fresh_by_stat) and never reads a cooked file or
# a source: the container codecs and diagnostics are imported by the functions that read,
# hash or compile (a tenth of a no-op's start-up was spent importing them).
if TYPE_CHECKING:
    from veduta.compile import CompileContext
    from veduta.container.meta import Meta
    from veduta.source.diagnostics import Diagnostic

UPTODATE, COOKED, RESTORED, SHARED, FAILED = "uptodate", "cooked", "restored", "shared", "failed"
STRAY_TEMP_AGE_S = 600

# The asset index of the game, per assets folder, shared by every cook in a
# process (and inherited by forked workers).
_INDEX: dict[str, AssetIndex] = {}


def set_index(assets: str, index: AssetIndex) -> None:
    _INDEX[os.path.abspath(assets)] = index


def get_index(assets: str) -> AssetIndex:
    key = os.path.abspath(assets)
    idx = _INDEX.get(key)
    if idx is None:
        from veduta.base.project import Project

        p = Project(".", assets, "", "")
        idx = _INDEX[key] = AssetIndex.from_paths(s.rel for s in p.sources())
    return idx


def _read(path: str) -> bytes | None:
    """A cooked file's bytes (None: missing, not a regular file, or larger than any cooked file)."""
    got = read_regular(path, MAX_COOKED_BYTES)
    return None if got is None else got[0]


def _read_with_sig(path: str, limit: int | None = None) -> tuple[bytes | None, object]:
    """The bytes of a file and its signature taken before reading (() when missing)."""
    got = read_regular(path, limit)
    if got is None:
        return None, ()
    return got[0], sig(got[1])


def _read_dep_with_sig(path: str, rel: str) -> tuple[bytes | None, object, str | None]:
    """A dependency's bytes (at most :func:`~veduta.base.kinds.dep_limit`'s), its signature taken
    before reading (() when it is not read: then it is hashed as missing) and why a file that is
    there was not read (:func:`~veduta.base.fsutil.read_dependency`).  A file refused as too large
    from its stat is hashed as missing too, but keeps that stat's signature: while it holds, the
    file is refused alike, so a no-op finds its user fresh by stat (with (), it was re-hashed on
    every no-op)."""
    from veduta.base.fsutil import read_dependency
    from veduta.base.kinds import dep_limit

    data, st, why = read_dependency(path, *dep_limit(rel))
    return data, (() if st is None else sig(st)), why


def _read_source(path: str, kind: str) -> tuple[bytes | None, object, str]:
    """A source's bytes, its signature taken before reading and ""; (None, (), why) when it cannot
    be read, *why* the system's or veduta's words (``Permission denied``, ``not enough memory to
    read its ... bytes``); :class:`TooLarge` past its kind's limit
    (:func:`veduta.source.read_source`)."""
    from veduta.source import read_source

    try:
        data, st = read_source(path, kind)
    except TooLarge:
        raise
    except OSError as exc:
        return None, (), exc.strerror or type(exc).__name__
    return data, sig(st), ""


def cooked_meta(path: str, kind: str) -> tuple[Meta | None, object]:
    """The META of a cooked file if the file is whole and laid out as a cook writes it (magic,
    every length and CRC, a canonical META then one body chunk of the right kind, nothing else:
    :func:`layout_fault`), and the file's
    signature taken from the descriptor it was read through (so it describes these
    bytes even if the file is replaced meanwhile); (None, sig) otherwise."""
    data, s = _read_with_sig(path, MAX_COOKED_BYTES)
    if data is None:
        return None, s
    return _meta_of_bytes(data, kind, path, exact=True), s


_BODY_CHUNKS = frozenset(k.chunk for k in BY_NAME.values())


def layout_fault(chunks, kind: str) -> str | None:
    """Why *chunks* (of a whole container) are not laid out as a cook writes a cooked file of
    *kind*, or None: the writer's layout is fixed (container-vda.md: META first, then the body,
    and no other chunk), so a file in the cooked folder or a store whose chunks are in another
    order, or that carries another chunk, is not what a cook of its source gives, whatever its
    META says.  (Readers, ``veduta verify`` and the engine, keep the spec's leniency.)"""
    want = BY_NAME[kind].chunk
    if len(chunks) == 2 and chunks[0].type == "META" and chunks[1].type == want:
        return None
    return f"its chunks are {', '.join(c.type for c in chunks) or 'none'}, where a cook writes META then {want} only"


def _meta_of_bytes(data: bytes, kind: str | None, path: str = "", exact: bool = False) -> Meta | None:
    """The META of a whole cooked file of *kind* (of the kind its META names when None): one META
    and one body chunk of the right kind (other chunks and any order allowed, as a reader takes
    them), or with *exact* laid out as a cook writes it (:func:`layout_fault`); None otherwise."""
    from veduta.container.chunks import read_chunks
    from veduta.container.meta import Meta

    try:
        chunks = read_chunks(data, path)
    except VdaError:
        return None
    if exact:
        if kind is None or layout_fault(chunks, kind) is not None:
            return None
        metas = bodies = chunks[:1]
    else:
        metas = [c for c in chunks if c.type == "META"]
        bodies = [c for c in chunks if c.type in _BODY_CHUNKS]
        if len(metas) != 1 or len(bodies) != 1:
            return None
    try:
        meta = Meta.decode(metas[0].payload)
    except VdaError:
        return None
    if kind is None:
        kind = meta.kind
    if meta.kind != kind or not exact and bodies[0].type != BY_NAME[kind].chunk:
        return None
    return meta if not exact or meta.name == name_of(meta.source) else None


def body_fault(chunk) -> str | None:
    """Why the body *chunk* of a cooked file does not decode (the reader ``veduta verify`` and
    the engine's loaders use), or None when it does: what a store gives back is checked so before
    it is used or uploaded, since its CRCs only say the bytes are the ones its writer framed."""
    from veduta.formats import BODIES, decode

    try:
        decode(BODIES[chunk.type], chunk.payload)
    except (VdaError, ValueError) as exc:
        return f"its {chunk.type} chunk does not decode: {exc}"
    return None


def check_output(data: bytes, kind: str, rel: str, key: str, deps) -> str | None:
    """Why *data* is not the cooked output of source *rel* (of *kind*) whose current
    source_hash over *deps* is *key*, or None when it is: a whole container (magic, every
    length and CRC) laid out as a cook writes it (a canonical META, then one body chunk of the
    right kind that decodes, and nothing else: :func:`layout_fault`), META naming this source
    (and its name), these deps, the current compiler and *key* as its source_hash.  What came
    from a store (local or shared) is used only after this check (a shared store is never
    trusted): what passes is laid out byte for byte as a cook of this source writes it (only a
    body that decodes but is another asset's is not caught)."""
    from veduta.container.chunks import read_chunks
    from veduta.container.meta import Meta

    try:
        chunks = read_chunks(data)
    except VdaError as exc:
        return f"not a whole cooked file: {exc}"
    why = layout_fault(chunks, kind)
    if why is not None:
        return why
    try:
        m = Meta.decode(chunks[0].payload)
    except VdaError as exc:
        return f"bad META: {exc}"
    if m.kind != kind or m.source != rel:
        return f"cooked from another source ({m.kind} {m.source})"
    if m.name != name_of(rel):
        return f'its META names the asset "{m.name}", not "{name_of(rel)}"'
    if m.compiler != COMPILER_VERSION:
        return f"compiled by {m.compiler}, not {COMPILER_VERSION}"
    if m.source_hash != key or list(m.deps) != list(deps):
        return "its META source_hash is not the one of these source files"
    return body_fault(chunks[1])


def stale_reference(dep: str, index: AssetIndex) -> bool:
    """A dependency that was missing at cook time but now exists at another path."""
    k = kind_of(dep)
    if k is None:
        return False
    found = index.resolve(k.name, name_of(dep))
    return found is not None and found != dep


def moved_reference(dep: str, index: AssetIndex) -> bool:
    """A dependency that is there, an asset source the output named by its name, whose name now
    resolves to another file (another source of that kind and name came: while two share it, the
    name resolves to the first by path, which a cook from scratch records).  A compiler reads an
    asset source only through its name (:meth:`veduta.compile.CompileContext.reference`)."""
    k = kind_of(dep)
    return k is not None and index.resolve(k.name, name_of(dep)) != dep


def stale_dep(dep: str, s, index: AssetIndex) -> bool:
    """Whether dependency *dep* (*s*: its signature, ``()`` when missing) no longer resolves as the
    output recorded it: a missing one found elsewhere now, or one there whose name resolves elsewhere."""
    return stale_reference(dep, index) if s == () else moved_reference(dep, index)


def hash_inputs(rel: str, src: bytes, deps, assets: str) -> tuple[str, list]:
    """source_hash of the current files and the (path, sig) list for the stat cache."""
    from veduta.container.meta import source_hash

    files: list[tuple[str, object]] = [(rel, None)]
    data: dict[str, bytes | None] = {}
    for d in deps:
        path = os.path.join(assets, d)
        # (under veduta mcp's confinement a dep linked out of the game root is not read: missing,
        # so the output is stale and its compile says why)
        b, s, _ = (None, (), None) if outside(path) else _read_dep_with_sig(path, d)
        data[d] = b
        files.append((d, s))
    return source_hash(COMPILER_VERSION, rel, src, deps, data.__getitem__), files


def check_fresh(
    kind: str,
    rel: str,
    assets: str,
    cooked: str,
    index: AssetIndex,
    now_ns: int | None = None,
    prior=None,
    owed: bool = False,
):
    """The full up-to-date check (reads and hashes).

    Returns (fresh, META deps, stat-cache entry, [(path, current signature), ...] of the
    source and deps read); the last two are None when stale.

    Fresh when the cooked file is whole, its META names this source and the
    current compiler, and the source_hash of the current source and META deps
    equals the recorded one; and the cook's own state does not say otherwise: *owed* (an earlier
    toolchain cooked it) is stale, and so is a source whose *prior* stat-cache entry (packed) of
    this source_hash holds references that no longer resolve as they did.  The entry keeps the
    notes of *prior* when it is of this source_hash, else its notes are unknown.
    """
    now_ns = time.time_ns() if now_ns is None else now_ns
    meta, csig = cooked_meta(cooked, kind)
    if meta is None or meta.compiler != COMPILER_VERSION or meta.source != rel or owed:
        return False, list(meta.deps) if meta else [], None, None
    src, src_sig = _read_with_sig(os.path.join(assets, rel), BY_NAME[kind].max_bytes)  # (larger: the cook says so)
    if src is None:
        return False, list(meta.deps), None, None
    h, files = hash_inputs(rel, src, meta.deps, assets)
    files[0] = (rel, src_sig)
    if h != meta.source_hash or any(stale_dep(d, s, index) for d, s in files[1:]):
        return False, list(meta.deps), None, None
    notes = None
    if prior is not None and well_formed(prior) and prior[0] == h:
        notes = packed_notes(prior)
        if notes and not watch_holds(notes[0], index):
            return False, list(meta.deps), None, None
    return True, list(meta.deps), make_entry(h, csig, files, now_ns, notes), files


def fresh_by_stat(rel: str, packed, assets: str, cooked: str, index: AssetIndex) -> bool:
    """The cheap check: every signature the last good cook of source *rel* recorded (its stat-cache
    entry, *packed*: see :data:`veduta.cook.state.Packed`) still matches (the stat cache holds
    entries of the current compiler only).  An entry of another shape (from a damaged cache file
    that is still valid marshal data) is never fresh, whatever its signatures (it is re-hashed and
    recorded again): a fresh entry is one :func:`veduta.cook.state.well_formed` accepts, checked
    without going over it twice (each dependency path is a str when it could be joined, the blob
    bytes when its slices matched; only notes are gone over, as rare as warnings)."""
    pack, size = SIG.pack, SIG.size
    try:  # the cooked file and the source: always there
        blob, deps = packed[1], packed[2]
        if (
            type(packed) is not tuple
            or type(packed[0]) is not str
            or type(deps) is not tuple
            or len(blob) != size * (len(deps) + 2)
        ):
            return False
        st = os.stat(cooked)
        if pack(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) != blob[:size]:
            return False  # (a racy or missing signature never matches)
        st = os.stat(assets + "/" + rel)
        if pack(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) != blob[size : 2 * size]:
            return False
        for i, dep in enumerate(deps, 2):
            s = blob[size * i : size * (i + 1)]
            if s == RACY:
                return False
            try:
                st = os.stat(assets + "/" + dep)
            except OSError:
                if s != MISSING or stale_reference(dep, index):
                    return False
                continue
            if pack(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) != s:
                return False
        n = len(packed)
        if n == 3:
            return True
        if n == 4:
            return packed[3] is None  # (notes unknown)
        # references the output keeps by name only (a model's materials): still as they were
        return n == 5 and notes_formed(packed[3], packed[4]) and watch_holds(packed[3], index)
    except (OSError, TypeError, ValueError, IndexError, KeyError, AttributeError):  # (free until it raises)
        return False


# -- the action ------------------------------------------------------------------------------


def as_action(result: dict):
    """A result of :func:`cook_batch` as a doit action returns it (a failure as ``TaskFailed``)."""
    if result["outcome"] != FAILED:
        return result
    from doit.exceptions import TaskFailed

    fail = TaskFailed("\n".join(result["messages"]))
    fail.diagnostics = result.get("diagnostics")  # for --format json|github (with codes)
    return fail


def cook_batch(jobs: list[tuple]) -> list[dict]:
    """Cook several sources, each job the arguments of :func:`cook_one`; one plain result dict
    per job (picklable: what a worker process sends back), a failure included, as
    ``{"outcome": "failed", "messages": [...], "entry": None}``.  Sources that need
    compiling are compiled together (see :func:`veduta.compile.compile_sources`)."""
    steps = []
    where = []
    indexes: dict[str, AssetIndex] = {}  # (the jobs of a batch share their assets folder, as a rule)
    for kind, rel, assets, cooked, cache, duplicate_of, display_root, *shared_notes in jobs:
        shown = os.path.join(display_root or assets, rel) if display_root != "-" else rel
        where.append((cooked, shown))
        if duplicate_of:
            remove_if_exists(cooked)
            others = ", ".join(os.path.join(assets, p) for p in duplicate_of)
            steps.append(
                _failed(
                    f'{shown}:1:1: $: {BY_NAME[kind].name} name "{name_of(rel)}" is also used by '
                    f"{others}; names must be unique per kind across folders"
                )
            )
        else:
            index = indexes.get(assets)
            if index is None:
                index = indexes[assets] = get_index(assets)
            steps.append(_cook_steps(kind, rel, assets, cooked, cache, shown, *shared_notes, index=index))
    return _drive(steps, where)


def _failed(message: str) -> dict:
    return {"outcome": FAILED, "messages": [message], "entry": None}


def _drive(steps: list, where: list[tuple[str, str]]) -> list[dict]:
    """Run cook generators (see ``_cook_steps``) to their end, compiling what they ask for in
    one `compile_sources` call per kind."""
    from veduta.compile import compile_sources, get_compiler

    results: list = [None] * len(steps)
    waiting: dict[str, list] = {}

    def advance(i, gen, send=None, throw=None):
        try:
            want = gen.throw(throw) if throw is not None else gen.send(send)
        except StopIteration as stop:
            results[i] = stop.value
        except OSError as exc:  # the file system said no (permissions, full disk, ...)
            cooked, shown = where[i]
            place = f" {exc.filename}" if exc.filename else ""
            results[i] = _failed(f"{shown}:1:1: $: cannot cook: {exc.strerror or exc}{place}")
        except MemoryError:
            cooked, shown = where[i]
            remove_if_exists(cooked)
            results[i] = _failed(f"{shown}:1:1: $: out of memory while cooking this source")
        else:
            waiting.setdefault(want[0], []).append((i, gen, want))

    for i, step in enumerate(steps):
        if isinstance(step, dict):
            results[i] = step
        else:
            advance(i, step)
    for kind in sorted(waiting):
        batch = waiting[kind]
        items = [(src, ctx) for _, _, (_, src, ctx) in batch]
        # a batch compiler's sources share its time; other kinds are compiled (and timed) one by one
        groups = [items] if BY_NAME[kind].batch_compiler else [[item] for item in items]
        get_compiler(kind)  # (imported before the clock starts: a compile time is the compile's own)
        bodies: list = []
        took: list[float] = []
        for group in groups:
            started = time.perf_counter()
            try:
                got = compile_sources(kind, group)
            except MemoryError as exc:
                got = [exc] * len(group)
            bodies += got
            took += [(time.perf_counter() - started) / len(group)] * len(group)
        for (i, gen, _), body, seconds in zip(batch, bodies, took, strict=True):
            if isinstance(body, BaseException):
                advance(i, gen, throw=body)
            else:
                advance(i, gen, send=(body, seconds))
    return results


def cook_file(
    kind: str,
    rel: str,
    assets: str,
    cooked: str,
    cache: str,
    shown: str | None = None,
    shared: list | None = None,
    notes: list | None = None,
    recook: bool = False,
    strict: bool = False,
    *,
    index: AssetIndex | None = None,
) -> dict:
    """Bring one cooked file up to date: already fresh, restored from the store, or compiled.

    *shared*: store keys this run fetched from the shared tier (a hit on one is SHARED, not
    RESTORED); *notes*: warnings about this source from before the run (a shared object
    that was rejected), shown as this source's warnings; *recook*: compile it, however fresh
    its cooked file and whatever the store holds (the cook's state found it stale for a reason
    its META cannot show: an earlier toolchain cooked it, a material it names appeared);
    *strict*: a strict cook's (warnings fail it), which takes no output whose notes it does not
    know (one restored from the shared cache, or cooked by an earlier veduta): it compiles the
    source to find its warnings, so that its exit status never depends on where the bytes came from;
    *index*: the game's assets as the caller sees them now (default: this process's,
    :func:`get_index`, which a long-lived process such as the MCP server made before sources
    were added).
    Returns ``{"outcome": ..., "messages": [...], "entry": stat-cache entry or None,
    "put": [store keys a writing shared tier should get], "took": seconds of the compile}``
    (``took`` when compiled).
    """
    gen = _cook_steps(kind, rel, assets, cooked, cache, shown, shared, notes, recook, strict, index=index)
    try:
        _, src, ctx = next(gen)
    except StopIteration as stop:
        return stop.value
    from veduta.compile import compile_source, get_compiler

    try:
        get_compiler(kind)  # (imported before the clock starts: a compile time is the compile's own)
        started = time.perf_counter()
        body = compile_source(kind, src, ctx)
    except Exception as exc:  # noqa: BLE001 - reported by the steps, as when compiled in a batch
        return _finish(gen, throw=exc)
    return _finish(gen, send=(body, time.perf_counter() - started))


def _finish(gen, send=None, throw=None) -> dict:
    try:
        gen.throw(throw) if throw is not None else gen.send(send)
    except StopIteration as stop:
        return stop.value
    raise RuntimeError("a cook step asked for a second compile")


def _cook_steps(
    kind: str,
    rel: str,
    assets: str,
    cooked: str,
    cache: str,
    shown: str | None = None,
    shared: list | None = None,
    notes: list | None = None,
    recook: bool = False,
    strict: bool = False,
    *,
    index: AssetIndex | None = None,
):
    """`cook_file` as a generator: it yields ``(kind, source bytes, CompileContext)`` when the
    source must be compiled, is sent ``(body, seconds the compile took)`` (or thrown the
    compiler's exception), and returns the result dict.  *index*: ``get_index(assets)``, when the caller has it."""
    from veduta.container.chunks import write_chunks
    from veduta.container.meta import Meta, source_hash
    from veduta.source.diagnostics import Report

    now_ns = time.time_ns()
    shown = shown or os.path.join(assets, rel)
    if index is None:
        index = get_index(assets)
    try:
        src, src_sig, why = _read_source(os.path.join(assets, rel), kind)
    except TooLarge as exc:  # refused from its size alone, before a byte is read
        from veduta.source.diagnostics import Diagnostic

        remove_if_exists(cooked)
        too = Diagnostic(shown, 1, 1, "$", exc.strerror or "")
        return {"outcome": FAILED, "messages": [str(too)], "diagnostics": [too.to_json()], "entry": None}
    if src is None:
        remove_if_exists(cooked)
        return {"outcome": FAILED, "messages": [f"{shown}:1:1: $: cannot read the source ({why})"], "entry": None}

    # 1. the cooked file may already be current (a touched file, or no doit DB yet, or put
    #    in place by this run's fetch from the shared cache: *shared* names its key)
    meta, csig = cooked_meta(cooked, kind) if not recook else (None, None)
    if meta is not None and meta.compiler == COMPILER_VERSION and meta.source == rel:
        h, files = hash_inputs(rel, src, meta.deps, assets)
        if h == meta.source_hash and not any(stale_dep(d, s, index) for d, s in files[1:]):
            # its notes, when a compile of this toolchain kept them: said again and recorded (a
            # watched reference that resolves otherwise now, or notes unknown to a strict cook:
            # compiled, for its warnings)
            known = stored_notes(cache, h)
            if (known is not None or not strict) and not (known and not watch_holds(known[0], index)):
                files[0] = (rel, src_sig)
                found = _notes(shown, notes) + _stored_warnings(shown, known)
                return {
                    "outcome": SHARED if h in (shared or ()) else UPTODATE,
                    "messages": [str(d) for d in found],
                    "diagnostics": [d.to_json() for d in found],
                    "entry": make_entry(h, csig, files, now_ns, known),
                }

    # 2. the store may hold the output of this exact source content (put there by an
    #    earlier cook, or fetched from the shared tier for this run: *shared* names those keys)
    #    (not for a recook: what it holds may have been made by an earlier toolchain)
    store = Store(os.path.join(cache, "store"))
    mkey = manifest_key(rel, src)
    alone = source_hash(COMPILER_VERSION, rel, src, [], _no_read)  # the key of an output with no deps
    rejected: list[str] = []  # store entries that failed check_output: warned about, compiled, replaced
    hit, manifest = (
        find_in_store(store, kind, rel, src, assets, index, mkey, alone, rejected) if not recook else (None, [])
    )
    stored = None
    if hit is not None:
        stored = stored_notes(cache, hit[0])
        if stored and not watch_holds(stored[0], index):
            hit = None  # a material the model names appeared or went since: compiled, for its warnings
        elif stored is None and strict:
            hit = None  # its warnings unknown (from the shared cache, or an earlier veduta's): compiled
    if hit is not None:
        key, data, files = hit
        store.copy_out(key, cooked, data)
        files[0] = (rel, src_sig)
        shared_hit = key in (shared or ())
        found = _notes(shown, notes) + _stored_warnings(shown, stored)
        return {
            "outcome": SHARED if shared_hit else RESTORED,
            "messages": [str(d) for d in found],
            "diagnostics": [d.to_json() for d in found],
            "entry": make_entry(key, sig(os.stat(cooked)), files, now_ns, stored),
            "put": [] if shared_hit else [key] + ([mkey] if files[1:] else []),
        }

    # 3. compile
    # (a rejected local store entry is the cache's state, not the source's: said as a note, which
    # a strict cook does not count, so that its exit status does not depend on the cache)
    said = [f"local store entry {why}; this cook replaces it" for why in rejected]
    rep = Report(shown)
    from veduta.compile import CompileContext

    ctx = CompileContext(assets_dir=assets, source=rel, kind=kind, name=name_of(rel), report=rep, index=index)
    sigs: dict[str, object] = {}
    # every dependency read is recorded with its signature taken before the read (for the stat
    # cache); an instance attribute shadows the method, which mypy cannot tell is intended
    ctx.read_dep = _recording_reader(ctx, assets, sigs)  # type: ignore[method-assign]
    took = None
    try:
        body, took = yield (kind, src, ctx)  # (the body, and the seconds its compile took)
    except RecursionError:
        rep.error(None, "$", "source nested too deeply")
        body = None
    except Exception as exc:  # a compiler bug: say so, with the traceback to report
        import traceback

        tb = "".join(traceback.format_exception(exc)).rstrip()
        rep.error(None, "$", f"internal compiler error, please report: {type(exc).__name__}: {exc}\n{tb}")
        body = None
    found = _notes(shown, notes) + _notes(shown, said, "note") + rep.sorted()
    messages = [str(d) for d in found]
    diagnostics = [d.to_json() for d in found]  # the same, as data (--format json|github)
    if body is None:
        remove_if_exists(cooked)
        return {"outcome": FAILED, "messages": messages, "diagnostics": diagnostics, "entry": None}
    from veduta.formats import encode

    deps = sorted(ctx.deps)
    h = source_hash(COMPILER_VERSION, rel, src, deps, ctx.deps.__getitem__) if deps else alone
    meta = Meta(COMPILER_VERSION, tuple(deps), kind, name_of(rel), rel, h)
    try:
        data = write_chunks([("META", meta.encode()), (body.CHUNK, encode(body))])
    except (ValueError, TypeError, OverflowError) as exc:  # a value the format cannot hold: a compiler bug
        remove_if_exists(cooked)
        messages.append(f"{shown}:1:1: $: internal compiler error, please report: cannot encode: {exc}")
        return {"outcome": FAILED, "messages": messages, "entry": None}
    atomic_write(cooked, data)
    store.put(h, data, cooked)
    if deps and (deps, h) not in manifest:
        store.put(mkey, _dump_manifest(manifest + [(deps, h)]))
    found_notes = make_notes(ctx.watch, rep.warnings)
    # kept for a restore of this output, clean ones too: no note then means unknown, never clean
    store_notes(cache, h, found_notes)
    files = [(rel, src_sig)] + [(d, sigs.get(d, ())) for d in deps]
    return {
        "outcome": COOKED,
        "messages": messages,
        "diagnostics": diagnostics,
        "entry": make_entry(h, sig(os.stat(cooked)), files, now_ns, found_notes),
        "put": [h] + ([mkey] if deps else []),
        "took": took,
    }


#: The folder in cache/ of the notes of the outputs this toolchain compiled (not in the store:
#: ``veduta cache push`` uploads whole cooked files and manifests only); an output with no note
#: there (restored from the shared cache, or stored by an earlier veduta) has notes unknown
NOTES_DIR = "notes"


#: the note of a compile that found neither a warning nor a watched reference, and the file in the
#: notes folder holding it, which the note of every such output is a hard link to (at most
#: CLEAN_NOTE_LINKS links to one file: ext4 allows 65,000)
CLEAN_NOTE, CLEAN_NOTE_FILE, CLEAN_NOTE_LINKS = b"[[],[]]", "clean", 60_000


def _notes_key(key: str) -> str:
    return hashlib.sha256(f"veduta-notes/1\n{TOOLCHAIN}\n{key}".encode()).hexdigest()


def store_notes(cache: str, key: str, notes) -> None:
    """Keep the notes (:data:`veduta.cook.state.Notes`) of the stored output *key*, for a restore."""
    import json

    store = Store(os.path.join(cache, NOTES_DIR))
    if notes:
        store.put(_notes_key(key), json.dumps(notes, ensure_ascii=False).encode())
        return
    # clean (most compiles): a hard link to one file holding the clean note, as the store links a
    # cooked file (a new file for each took a full cook of 10,000 models 1.36 times the CPU)
    clean = os.path.join(store.folder, CLEAN_NOTE_FILE)
    try:
        fresh = os.stat(clean).st_nlink < CLEAN_NOTE_LINKS
    except OSError:
        fresh = False
    try:
        if not fresh:  # (missing, or linked as often as a file system allows: a new one)
            atomic_write(clean, CLEAN_NOTE)
    except OSError:
        pass  # (put writes a copy)
    store.put(_notes_key(key), CLEAN_NOTE, clean)


def stored_notes(cache: str, key: str):
    """The notes kept for the stored output *key* by a compile of this toolchain (CLEAN when it
    found neither a warning nor a watched reference); None when none were kept (unknown: the output
    came from the shared cache, or an earlier veduta, which kept only notes with warnings, stored it)."""
    import json

    data = Store(os.path.join(cache, NOTES_DIR)).get(_notes_key(key))
    if data is None:
        return None
    try:
        watch, warnings = json.loads(data)
        notes = (tuple(watch), tuple((int(ln), int(col), str(p), str(m), str(c)) for ln, col, p, m, c in warnings))
    except (ValueError, TypeError):
        return None
    if not notes[0] and not notes[1]:
        return CLEAN
    return notes if all(type(w) is str for w in notes[0]) else None


def _stored_warnings(shown: str, notes) -> list[Diagnostic]:
    """The warnings of *notes* as diagnostics of the source shown as *shown*."""
    if not notes:
        return []
    from veduta.source.diagnostics import WARNING, Diagnostic

    return [Diagnostic(shown, ln, col, path, message, WARNING, code) for ln, col, path, message, code in notes[1]]


def _notes(shown: str, notes, severity: str = "warning") -> list[Diagnostic]:
    """Warnings about a source from before its cook (a rejected shared cache object), or, with
    *severity* ``note``, what the cook says about the cache (a rejected local store entry)."""
    if not notes:
        return []
    from veduta.source.diagnostics import Diagnostic

    return [Diagnostic(shown, 1, 1, "$", n, severity) for n in notes]


def find_in_store(
    store,
    kind: str,
    rel: str,
    src: bytes,
    assets: str,
    index: AssetIndex,
    mkey: str | None = None,
    alone: str | None = None,
    rejected: list[str] | None = None,
):
    """An output of source *rel* (content *src*) in *store* that its current deps still hash to:
    ``((key, bytes, [(path, sig), ...] of the source and deps), manifest)``, or ``(None, manifest)``.

    With no deps the key is the source_hash of the source alone; with deps, a manifest keyed
    by the source content lists the deps each earlier output had.  An entry is used only if
    :func:`check_output` passes (its META names this source, deps, compiler and source_hash).
    *mkey* and *alone*, when the caller has them: :func:`manifest_key` and the source_hash of
    the source with no deps.  *rejected*, when given, gets ``<key[:12]> rejected: <why>`` for each
    entry there that failed :func:`check_output` (damaged, or written by something other than a cook).
    """
    manifest = _load_manifest(store.get(mkey or manifest_key(rel, src)))
    if alone is None:
        from veduta.container.meta import source_hash

        alone = source_hash(COMPILER_VERSION, rel, src, [], _no_read)
    candidates: list[tuple[list[str], str]] = [([], alone)]
    for deps, key in reversed(manifest):  # newest first
        if deps and (deps, key) not in candidates:
            candidates.append((deps, key))
    for deps, key in candidates:
        if deps:
            h, files = hash_inputs(rel, src, deps, assets)
            if h != key or any(stale_dep(d, s, index) for d, s in files[1:]):
                continue
        else:  # the key is the source's own hash
            files = [(rel, None)]
        data = store.get(key)
        if data is None:
            continue
        why = check_output(data, kind, rel, key, deps)
        if why is None:
            return (key, data, files), manifest
        if rejected is not None:
            rejected.append(f"{key[:12]} rejected: {why}")
    return None, manifest


def _no_read(dep: str) -> bytes | None:
    raise AssertionError("no deps to read")


def _recording_reader(ctx: CompileContext, assets: str, sigs: dict):
    def read_dep(rel: str) -> bytes | None:
        if rel in ctx.deps:
            return ctx.deps[rel]
        path = os.path.join(assets, rel)
        data, sig, why = (None, (), None) if ctx.refused(path) else _read_dep_with_sig(path, rel)
        if why is not None:
            ctx.unread[rel] = why
        ctx.deps[rel] = data
        sigs[rel] = sig
        return data

    return read_dep


def manifest_key(rel: str, src: bytes) -> str:
    """Store key of the manifest listing the outputs cooked from this exact source content."""
    h = hashlib.sha256(b"veduta-manifest/1\n")
    h.update(f"{COMPILER_VERSION}\n{rel}\n".encode())
    h.update(src)
    return h.hexdigest()


def _load_manifest(data: bytes | None) -> list[tuple[list[str], str]]:
    if not data:
        return []
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, deps = line.partition(" ")
        if len(key) == 64:
            out.append(([d for d in deps.split("\t") if d], key))
    return out


def _dump_manifest(entries) -> bytes:
    # newest last; keep the manifest small
    entries = entries[-16:]
    return "".join(f"{key} {chr(9).join(deps)}\n" for deps, key in entries).encode("utf-8")


# -- orphans ---------------------------------------------------------------------------------

# atomic_write's temp files (and the ``.<name>.<pid>.tmp`` of earlier versions)
_TEMP_RE = re.compile(r"\..+\.vda(?:" + TEMP_SUFFIX_RE + r"|\.\d+\.tmp)")


def orphans(
    cooked_root: str,
    names_by_folder: dict[str, set[str]],
    young: list[str] | None = None,
    subs: dict | None = None,
    seen: dict | None = None,
) -> list[str]:
    """Cooked files with no source behind them, and temp files left by killed cooks.

    Only files veduta wrote are candidates: a ``.vda`` whose META names a source
    of this folder's kind (the cooked folder may be shared with other files), and
    temp files of the pattern ``atomic_write`` uses, older than ten minutes (never
    one a running cook is writing); younger ones are appended to *young*.  In a kind's
    folder, a ``.vda`` named after no source of the kind is stray; in a folder under it (where
    the cook writes nothing: a folder's sources cook to files named after them, at the top),
    and at the top of the cooked folder (outside every kind's folder: left from an older layout
    or put there by hand), one whose META names a source of its kind by a name no source has
    now (left from a removed source; a copy of a current source's output is kept).  A file is
    judged by its META alone, read as :func:`_sweep_meta` does (never its body).  Dot files and
    dot folders are never looked at, links to folders never followed, and at the top of the
    cooked folder only ``.vda`` files are (no temp file is written there, no other folder
    entered).  *subs* gets the stat of every folder under a kind's folder, taken before it was
    listed (the cook keeps them, ``veduta/cook/scancache.py``); *seen* the signature of each
    file returned, taken as it was judged (the sweep's action removes a file only while it is
    the one judged: :func:`prune_orphans`).
    """
    out = _stray_on_top(cooked_root, names_by_folder, seen)
    for folder, names in sorted(names_by_folder.items()):
        d = os.path.join(cooked_root, folder)
        try:
            entries = os.listdir(d)
        except OSError:
            continue
        # the names with no source, found as a set difference (a folder holds one per source)
        cooked = {fn[:-4] for fn in entries if fn.endswith(".vda")}
        odd = sorted({n + ".vda" for n in cooked - names} | {fn for fn in entries if not fn.endswith(".vda")})
        kind = BY_FOLDER[folder].name
        for fn in odd:
            if fn.endswith(".vda") and not fn.startswith("."):
                path = os.path.join(d, fn)
                meta, s = _sweep_meta(path, kind)
                if meta is not None and meta.source.startswith(folder + "/"):
                    out.append(path)
                    if seen is not None:
                        seen[path] = s
            elif _TEMP_RE.fullmatch(fn):
                path = os.path.join(d, fn)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                if time.time() - st.st_mtime > STRAY_TEMP_AGE_S:
                    out.append(path)
                    if seen is not None:
                        seen[path] = sig(st)
                elif young is not None:
                    young.append(path)  # (a later cook removes it, once old)
            elif not fn.startswith("."):
                out += _stray_below(os.path.join(d, fn), folder, names, subs, seen)
    return out


def _stray_on_top(cooked_root: str, names_by_folder: dict[str, set[str]], seen: dict | None) -> list[str]:
    """The stray cooked files at the top of *cooked_root*, outside every kind's folder: ``.vda``
    files whose META names a source of its kind (in that kind's folder) by a name that no source
    of the kind has (see :func:`orphans`)."""
    try:
        entries = sorted(os.listdir(cooked_root))
    except OSError:
        return []
    out = []
    for fn in entries:
        if fn.endswith(".vda") and len(fn) > 4 and not fn.startswith("."):
            path = os.path.join(cooked_root, fn)
            meta, s = _sweep_meta(path, None)
            if meta is None:
                continue
            folder = BY_NAME[meta.kind].folder
            names = names_by_folder.get(folder)
            if names is not None and meta.source.startswith(folder + "/") and name_of(meta.source) not in names:
                out.append(path)
                if seen is not None:
                    seen[path] = s
    return out


def _stray_below(top: str, folder: str, names: set[str], subs: dict | None, seen: dict | None) -> list[str]:
    """The stray cooked files in *top* and the folders under it, if *top* is a folder (not a
    link to one): ``.vda`` files whose META names a source of *folder*'s kind by a name that
    is not in *names*; see :func:`orphans`."""
    try:
        st = os.lstat(top)
    except OSError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        return []
    if subs is not None:
        subs[top] = st
    kind = BY_FOLDER[folder].name
    out = []
    for d, dirs, files in os.walk(top):  # (a link to a folder is listed, never followed)
        dirs[:] = [n for n in dirs if not n.startswith(".")]
        if subs is not None:
            for n in dirs:
                try:
                    st = os.lstat(os.path.join(d, n))  # (before os.walk lists it)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    subs[os.path.join(d, n)] = st
        for fn in files:
            if fn.endswith(".vda") and len(fn) > 4 and not fn.startswith("."):
                path = os.path.join(d, fn)
                meta, s = _sweep_meta(path, kind)
                if meta is not None and meta.source.startswith(folder + "/") and name_of(meta.source) not in names:
                    out.append(path)
                    if seen is not None:
                        seen[path] = s
    out.sort()
    return out


def _sweep_meta(path: str, kind: str | None) -> tuple[Meta | None, tuple | None]:
    """The META of *path* if it may be a cooked file of *kind* (of any kind when None), and the
    file's signature taken before reading (None when it is no regular file).  Only what a cook
    could have written is a candidate: a regular file of at most :data:`MAX_COOKED_BYTES`.  One
    that starts as a cook writes it, the magic then META (CRC right, canonical, of the kind), is
    judged by that META alone: nothing past it is read, so a stray of any size costs a read of
    its first few hundred bytes, and a damaged body does not hide a file the cook wrote.  One
    whose first chunk is another (a reader takes META anywhere, the cook never writes it so) is
    read whole and judged as a reader takes it: one META and one body chunk of the kind."""
    from veduta.container.chunks import meta_at_start
    from veduta.container.meta import Meta

    try:
        fd, st = open_regular(path)
    except (OSError, ValueError):  # (ValueError: a NUL in the path)
        return None, None
    s = sig(st)
    try:
        if st.st_size > MAX_COOKED_BYTES:
            return None, s
        payload = meta_at_start(fd, st.st_size, path)
    except (OSError, VdaError, MemoryError):  # (MemoryError: a META announcing hundreds of MB)
        return None, s
    finally:
        os.close(fd)
    if payload is None:
        data = _read(path)
        return (_meta_of_bytes(data, kind, path) if data is not None else None), s
    try:
        meta = Meta.decode(payload)
    except VdaError:
        return None, s
    return (meta if kind is None or meta.kind == kind else None), s


def prune_orphans(cooked_root: str, stray: list) -> dict:
    """The action of ``cook:_orphans``: remove the stray files the task pass found (*stray*:
    ``(path, signature)`` pairs, from :func:`orphans`), each only while it is the file judged
    (the same signature: one replaced or rewritten since is left to the next cook, which judges
    it again), so nothing is listed or read again."""
    removed = []
    for f, was in stray:
        try:
            now = sig(os.stat(f))
        except OSError:
            continue
        if now == was and remove_if_exists(f):
            removed.append(f)
    root = os.path.abspath(cooked_root)
    for f in removed:  # a folder under a kind's folder that only stray files kept goes too
        d = os.path.dirname(os.path.abspath(f))
        while os.path.dirname(os.path.dirname(d)).startswith(root):  # (below a kind's folder)
            try:
                os.rmdir(d)  # (only when empty: anything else in it is kept)
            except OSError:
                break
            d = os.path.dirname(d)
    return {"outcome": "pruned", "removed": removed}


def names_by_folder(sources) -> dict[str, set[str]]:
    from veduta.base.kinds import KINDS

    out: dict[str, set[str]] = {k.folder: set() for k in KINDS}
    for s in sources:
        out[s.kind.folder].add(s.name)
    return out


def index_of(sources) -> AssetIndex:
    """The asset index of sources sorted by path (as ``Project.scan`` gives them): what
    ``AssetIndex.from_paths`` makes of their paths, without working out kinds and names again,
    and only when first asked (:class:`SourcesIndex`)."""
    return SourcesIndex(sources)


class SourcesIndex(AssetIndex):
    """The asset index of a scan's sources, made the first time ``by_kind`` is read: a no-op
    cook whose sources are all fresh by their signatures never reads it (at 50,000 sources
    making it was a twentieth of a no-op); :meth:`names` answers the question it does ask."""

    def __init__(self, sources) -> None:
        self._sources = sources
        self._by_kind: dict[str, dict[str, list[str]]] | None = None

    @property
    def by_kind(self) -> dict[str, dict[str, list[str]]]:
        if self._by_kind is None:
            by_kind: dict[str, dict[str, list[str]]] = {}
            for s in self._sources:
                by_kind.setdefault(s.kind.name, {}).setdefault(s.name, []).append(s.rel)
            self._by_kind, self._sources = by_kind, ()
        return self._by_kind

    @by_kind.setter
    def by_kind(self, value: dict[str, dict[str, list[str]]]) -> None:
        self._by_kind, self._sources = value, ()

    def names(self) -> int:
        """How many (kind, name) the index holds: fewer than its sources when two sources of a
        kind share a name.  Counted without making the index (sources of one kind come one
        after another, as a scan sorts them; groupby compares their Kind by identity)."""
        if self._by_kind is not None:
            return sum(map(len, self._by_kind.values()))
        seen: dict[str, set[str]] = {}
        for kind, group in groupby(self._sources, key=_KIND):
            seen.setdefault(kind.name, set()).update(map(_NAME, group))
        return sum(map(len, seen.values()))


#: a Source's kind and name (Source is a named tuple: kind, name, rel)
_KIND, _NAME = itemgetter(0), itemgetter(1)


def index_names(index: AssetIndex) -> int:
    """How many (kind, name) *index* holds (see :meth:`SourcesIndex.names`)."""
    return index.names() if isinstance(index, SourcesIndex) else sum(map(len, index.by_kind.values()))
