"""The compilers, one module per kind, behind one entry point.

``compile_source(kind, data, ctx)`` runs a kind's compiler on the source
bytes: load (JSON; positions found only for the values a problem is reported
at, :func:`veduta.compile.common.load_validated`) -> validate (every problem
into ``ctx.report``) -> build (the body record).  It returns the body record, or
None when the report holds errors.  Compilers are pure functions of the
source bytes and of what they read through ``ctx`` (which records every
file read as a dependency).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from veduta.base.kinds import BY_NAME
from veduta.base.project import WATCH_MISSING, AssetIndex, canonical_path

if TYPE_CHECKING:  # the formats (and numpy) load only when something compiles; the source
    # modules only when a source is read (a no-op cook needs AssetIndex alone)
    from veduta.formats import Struct
    from veduta.source.diagnostics import Report
    from veduta.source.jsonpos import Node


@dataclass
class CompileContext:
    """What a compiler may know and read besides its source bytes."""

    assets_dir: str  # the assets folder (absolute or relative to the cwd)
    source: str  # the source path relative to the assets folder, e.g. "models/crate.vmodel"
    kind: str
    name: str
    report: Report
    index: AssetIndex = field(default_factory=AssetIndex)
    #: Every file read besides the source: relative path -> bytes (None = missing).
    deps: dict[str, bytes | None] = field(default_factory=dict)
    #: Why a dependency that is there was read as missing (relative path -> words: ``too large
    #: (...)``, ``not enough memory to read its ... bytes``), for the compiler's message.
    unread: dict[str, str] = field(default_factory=dict)
    #: References the output keeps by name only (see :meth:`name_reference`), for the cook's own
    #: state, never META: the path each resolved to, or ``"!"`` + the path it would have
    watch: set[str] = field(default_factory=set)
    #: Files as an editor has them (relative path -> bytes), read instead of the disk (the
    #: language server's unsaved buffers); None for a cook.
    overlay: Mapping[str, bytes] | None = None
    #: Values of the source whose places the caller wants (JSON path -> node; None: none): a
    #: source read without positions (:func:`veduta.compile.common.load_validated`) finds them
    #: in its text once validated, with the values its problems are at.
    placed: dict[str, Node] | None = None

    def read_dep(self, rel: str) -> bytes | None:
        """Read a file relative to the assets folder, recording it as a dependency."""
        if rel in self.deps:
            return self.deps[rel]
        if self.overlay is not None and rel in self.overlay:
            self.deps[rel] = self.overlay[rel]
            return self.deps[rel]
        from veduta.base.fsutil import read_dependency
        from veduta.base.kinds import dep_limit

        path = os.path.join(self.assets_dir, rel)
        if self.refused(path):
            data = None
        else:  # regular files only (a FIFO would block), at most dep_limit's bytes
            data, _, why = read_dependency(path, *dep_limit(rel))
            if why is not None:
                self.unread[rel] = why
        self.deps[rel] = data
        return data

    def refused(self, path: str) -> bool:
        """Whether dependency *path* may not be read: under ``veduta mcp``'s confinement, a file
        that resolves outside the game root (a link out of it) is an error of this source naming
        it and where it resolves, and is read as missing."""
        from veduta.base.errors import shown_path
        from veduta.base.fsutil import confined_root, outside

        real = outside(path)
        if real is None:
            return False
        self.report.error(
            None,
            "$",
            f"{shown_path(path)} resolves to {shown_path(real)}, outside the game root "
            f"{shown_path(confined_root() or '')} (veduta mcp reads and writes only files inside it)",
        )
        return True

    def reference(self, kind: str, name: str, where: Node | None, path: str) -> str | None:
        """Resolve a reference to another asset and record its source as a dependency.

        Returns its path relative to the assets folder, or None when no such
        asset exists: then a warning naming it is reported and the path where it
        would be looked for is recorded (``missing`` in the source_hash), so that
        adding it there makes this asset stale.
        """
        rel = self.index.resolve(kind, name)
        if rel is None:
            self._missing(kind, name, where, path)
            self.deps.setdefault(canonical_path(kind, name), None)
            return None
        self.read_dep(rel)
        return rel

    def name_reference(self, kind: str, name: str, where: Node | None, path: str) -> str | None:
        """A reference the compiled output keeps by name only (a model part's material): checked
        as :meth:`reference` checks (a missing asset is a warning), but no dependency, since the
        output does not depend on that asset's bytes (container-vda.md: META ``deps`` are the
        input files the output depends on).  Whether it exists goes to :attr:`watch`, which the
        cook keeps in its own state, so that its appearing or disappearing recooks the referrer
        (and so repeats or ends the warning)."""
        rel = self.index.resolve(kind, name)
        if rel is None:
            self._missing(kind, name, where, path)
            self.watch.add(WATCH_MISSING + canonical_path(kind, name))
        else:
            self.watch.add(rel)
        return rel

    def _missing(self, kind: str, name: str, where: Node | None, path: str) -> None:
        """The warning about a reference to an asset that does not exist, naming the closest
        names of that kind (``did you mean crate_wood?``)."""
        from veduta.base.names import closest

        close = closest(name, self.index.by_kind.get(kind, ()), 2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        self.report.warning(
            where, path, f'{kind} "{name}" does not exist (not checked){hint}', code="MISSING_REFERENCE"
        )


Compiler = Callable[[bytes, CompileContext], "Struct | None"]
_compilers: dict[str, Compiler] = {}

#: The variable OpenBLAS (numpy's linear algebra library) reads its thread count from, once, when
#: numpy is first imported.
BLAS_THREADS = "OPENBLAS_NUM_THREADS"


def _load(target: str):
    """The object *target* (``module:attribute``) names, its module imported.

    The compilers use no linear algebra (``veduta.compile.detmath``: no ``dot``, ``einsum`` or
    ``matmul``), but importing numpy starts OpenBLAS's thread pool, one thread per core, and on
    the project's loaded 2-core machine that start cost half as much again as the import itself
    (``import numpy``: 0.16 s wall, 0.17 s CPU; with one thread 0.11 s and 0.11 s), in the one
    edited source's cook that pays the import.  So when this import is numpy's first in the
    process, no thread count was asked for, and no other thread runs (one could start a process
    meanwhile, which would inherit the variable: with ``doit -n N`` a compiler is imported
    alike, with OpenBLAS's pool), numpy is imported with OpenBLAS kept to the calling thread;
    the variable is set only meanwhile, so processes this one starts later (a dodo's own tasks)
    get OpenBLAS as they would have.  This process's numpy keeps one BLAS thread to its end:
    a Python action of the dodo file's own in the same run doing linear algebra runs it on one
    thread."""
    mod, _, attr = target.partition(":")
    if "numpy" in sys.modules or BLAS_THREADS in os.environ or threading.active_count() > 1:
        return getattr(importlib.import_module(mod), attr)
    os.environ[BLAS_THREADS] = "1"
    try:
        return getattr(importlib.import_module(mod), attr)
    finally:
        os.environ.pop(BLAS_THREADS, None)


def get_compiler(kind: str) -> Compiler:
    fn = _compilers.get(kind)
    if fn is None:
        fn = _compilers[kind] = _load(BY_NAME[kind].compiler)
    return fn


def compile_sources(kind: str, items: list[tuple[bytes, CompileContext]]) -> list[Struct | None | BaseException]:
    """`compile_source` of several sources of one kind, with the same results, but in one
    call of the kind's batch compiler if it has one (``Kind.batch_compiler``) (for small models the per-call cost of
    numpy, not the arithmetic, dominates).  An exception raised while compiling one source is
    returned in its place."""
    target = BY_NAME[kind].batch_compiler
    if not target or len(items) < 2:
        out: list[Struct | None | BaseException] = []
        for data, ctx in items:
            try:
                out.append(compile_source(kind, data, ctx))
            except Exception as exc:  # noqa: BLE001 - the caller reports it on this source
                out.append(exc)
        return out
    batch = _load(target)
    named = [i for i, (_, ctx) in enumerate(items) if _name_ok(ctx)]
    results: list[Struct | None | BaseException] = [None] * len(items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bodies = batch([items[i] for i in named])
    for i, body in zip(named, bodies, strict=True):
        results[i] = body if isinstance(body, BaseException) or items[i][1].report.ok else None
    return results


def _name_ok(ctx: CompileContext) -> bool:
    from veduta.base.errors import quote
    from veduta.base.names import NAME_RULE, is_name

    if is_name(ctx.name):
        return True
    why = f"file name {quote(ctx.name)} is not a valid asset name ({NAME_RULE}); rename the file"
    ctx.report.error((1, 1), "$", why)
    return False


def compile_source(kind: str, data: bytes, ctx: CompileContext) -> Struct | None:
    """Compile one source; errors and warnings go to ``ctx.report``.

    The asset name (the file name without its suffix) must follow the name rule of
    the spec: other assets refer to it by that name.
    """
    if not _name_ok(ctx):
        return None
    with warnings.catch_warnings():
        # overflow in a hopeless number (1e308) is reported as an error by the validators;
        # numpy's own warning on the way there is noise
        warnings.simplefilter("ignore", RuntimeWarning)
        body = get_compiler(kind)(data, ctx)
    if not ctx.report.ok:
        return None
    return body
