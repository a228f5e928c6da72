"""``veduta check``: every check the cook makes, writing nothing.

Each source is run through its compiler (load, validate, build: the very code the cook runs,
references to other assets included) with a context that only reads: no cooked file, no store
entry, no stat cache, no doit database is written, so a pre-commit hook or a CI step can run it
on a checkout without touching anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from veduta.base.errors import UsageError, clip_words
from veduta.source.diagnostics import ERROR, WARNING, Diagnostic, Report

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project, Source

__all__ = ["assess", "check", "check_sources", "resolve_sources"]


def resolve_sources(project: Project, names: list[str], cwd: str | None = None) -> list[str]:
    """Source paths relative to the assets folder for *names*, each a path to the file (from
    *cwd*) or a path under the assets folder (``models/crate.vmodel``).  A name that is
    neither is a user mistake (UsageError naming it)."""
    from veduta.base.kinds import kind_of
    from veduta.base.project import not_a_source, plain_rel

    cwd = cwd or os.getcwd()
    assets = os.path.abspath(project.assets)
    out, unknown, odd = [], [], []
    for name in names:
        full = os.path.abspath(os.path.join(cwd, name))
        if os.path.exists(full) and not os.path.isdir(full) and (full + os.sep).startswith(assets + os.sep):
            rel: str | None = os.path.relpath(full, assets).replace(os.sep, "/")
        else:
            rel = plain_rel(name)  # (models//crate.vmodel, ./models/crate.vmodel: as listed)
        if (
            rel is None or kind_of(rel) is None or not os.path.isfile(project.source_path(rel))
        ):  # only sources under the assets folder
            why = not_a_source(project.source_path(rel)) if rel and kind_of(rel) else None
            if why is not None:
                odd.append(clip_words(why))  # (a FIFO named like a source: the scan's words for it)
            else:
                unknown.append(name)
        else:
            out.append(rel)
    if unknown:
        odd.append(
            f"no such source: {', '.join(map(clip_words, unknown))} (give a source file, or a path under "
            f"{project.assets}/ such as models/crate.vmodel)"
        )
    if odd:
        raise UsageError("; ".join(odd))
    return list(dict.fromkeys(out))


def check_sources(
    project: Project, jobs: list[tuple[Source, list[str] | None]], index, overlay: Mapping[str, bytes] | None = None
) -> list[list[Diagnostic]]:
    """Every diagnostic the cook would report for each ``(source, duplicates)`` job, reading
    only; sources of a kind are compiled together (``compile_sources``: one batch call for
    small models, as the cook does).  *overlay* holds files as an editor has them (path under
    the assets folder -> bytes), read instead of the disk: the sources themselves and the
    assets they name."""
    from veduta.base.fsutil import TooLarge
    from veduta.compile import CompileContext
    from veduta.source import read_source

    reports = []
    by_kind: dict[str, list] = {}
    for src, duplicates in jobs:
        shown = project.source_path(src.rel)
        rep = Report(shown)
        reports.append(rep)
        if duplicates:
            duplicate_error(project, src, duplicates, rep)
            continue
        if overlay is not None and src.rel in overlay:
            data = overlay[src.rel]  # (a buffer too large: load_source says so, unparsed)
        else:
            try:
                data = read_source(shown, src.kind.name)[0]
            except TooLarge as exc:  # refused from one stat, before a byte is read
                rep.error((1, 1), "$", exc.strerror or "")
                continue
            except OSError as exc:
                rep.error((1, 1), "$", f"cannot read the source ({exc.strerror})")
                continue
        ctx = CompileContext(
            assets_dir=project.assets,
            source=src.rel,
            kind=src.kind.name,
            name=src.name,
            report=rep,
            index=index,
            overlay=overlay,
        )
        by_kind.setdefault(src.kind.name, []).append((data, ctx))
    for kind, items in by_kind.items():
        compile_reported(kind, items)
    return [rep.sorted() for rep in reports]


def duplicate_error(project: Project, src: Source, duplicates: list[str], rep: Report) -> None:
    """The error of a source whose name another source of its kind also has."""
    others = ", ".join(project.source_path(p) for p in duplicates)
    rep.error(
        (1, 1),
        "$",
        f'{src.kind.name} name "{src.name}" is also used by {others}; names must be unique per kind across folders',
    )


def compile_reported(kind: str, items: list) -> None:
    """Compile ``(data, context)`` items of *kind* (``compile_sources``), each problem in its
    context's report, an exception of the compiler too (as the cook reports it)."""
    from veduta.compile import compile_sources

    for body, (_, ctx) in zip(compile_sources(kind, items), items, strict=True):
        if isinstance(body, RecursionError):
            ctx.report.error(None, "$", "source nested too deeply")
        elif isinstance(body, BaseException):  # a compiler bug: say so, as the cook does
            ctx.report.error(None, "$", f"internal compiler error, please report: {type(body).__name__}: {body}")


def check_source(project: Project, src: Source, index, duplicates: list[str] | None = None) -> list[Diagnostic]:
    """Every diagnostic the cook would report for one source, reading only."""
    return check_sources(project, [(src, duplicates)], index)[0]


def _fresh(project: Project, src: Source, index, cache) -> tuple[bool, Any]:
    """Whether the cooked file proves the source good: made by this toolchain from exactly the
    current source and dependencies (the cook's own test), so compiling again cannot find an
    error; and the notes of the cook that made it (None when they are not known: the source is
    then compiled for its warnings).  Reads only (the stat cache is consulted, never saved)."""
    from veduta.cook.cook import check_fresh, fresh_by_stat

    cooked = project.cooked_path(src.kind, src.name)
    if src.rel in cache.owed:
        return False, None
    entry = cache.packed(src.rel)
    if entry is not None and fresh_by_stat(src.rel, entry, project.assets, cooked, index):
        return True, cache.notes(src.rel)
    fresh, _, made, _ = check_fresh(src.kind.name, src.rel, project.assets, cooked, index, prior=entry)
    return fresh, (made[3] if fresh else None)


def _standing(shown: str, notes) -> list[dict]:
    """The warnings a fresh source's last compile gave, as diagnostics of the file *shown*."""
    return (
        [
            Diagnostic(shown, ln, col, path, message, WARNING, code).to_json()
            for ln, col, path, message, code in notes[1]
        ]
        if notes
        else []
    )


_WORKER: dict = {}
#: sources compiled together in one batch (and sent to a worker at once)
BATCH = 32


def _init_worker(project: Project, index) -> None:
    _WORKER["project"], _WORKER["index"] = project, index


def _start_worker(project: Project, index, check_stops_it: bool) -> None:
    """The start of a pool worker, forked with Ctrl-C held back (veduta/cook/ahead.py,
    ``worker_start``): ignored when the check stops its workers itself, as the cook does."""
    from veduta.cook.ahead import worker_start

    worker_start(check_stops_it)
    _init_worker(project, index)


def _check_in_worker(jobs) -> list[dict]:
    found = check_sources(_WORKER["project"], jobs, _WORKER["index"])
    return [d.to_json() for diags in found for d in diags]


class Assessment(NamedTuple):
    """What :func:`assess` found: the sources looked at, those whose cooked file is fresh (paths
    under the assets folder), how many of them were known good without compiling, how many
    sources were compiled, and every diagnostic in source order."""

    selected: list[Source]
    fresh: set[str]
    known: int
    compiled: int
    diagnostics: list[dict]
    #: the game's assets the check resolved references with
    index: Any = None


def assess(
    project: Project,
    sources: list[str] | None = None,
    full: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    states: bool = False,
) -> Assessment:
    """Check every source of *project* (or those named, paths under the assets folder), source by
    source.

    A source whose cooked file is fresh (made by this toolchain from exactly the current source
    and dependencies) compiled without an error, so it is not compiled again unless *full*: its
    warnings are the ones its cook recorded (in the stat cache).  Every other source is
    compiled as the cook would, in *jobs* processes, and so is a fresh one whose cook's warnings
    are not on record (restored from a store, or no stat cache).  With *full*, which sources are
    fresh is found only when *states* asks for it.  *progress* hears of every batch compiled
    (:mod:`veduta.base.progress`).
    """
    from veduta import TOOLCHAIN
    from veduta.base.project import AssetIndex
    from veduta.cook.state import StatCache
    from veduta.cook.tasks import STATE_FILE

    skipped: list[str] = []
    all_sources, problems, selected = project.select(sources, skipped)
    index = AssetIndex.from_paths(s.rel for s in all_sources)
    diagnostics: list[dict] = []
    for text in problems:  # folders that cannot be read, file names that are not UTF-8
        file, _, message = text.partition(": ")
        diagnostics.append(Diagnostic(file, 1, 1, "$", message).to_json())
    for text in skipped:  # links skipped, as the cook warns: loops, links to nothing
        file, _, message = text.partition(": warning: ")
        diagnostics.append(Diagnostic(file, 1, 1, "$", message, WARNING).to_json())
    look = states or not full
    cache = StatCache(os.path.join(project.cache, STATE_FILE), TOOLCHAIN) if look else None
    work = []
    fresh: set[str] = set()
    standing: dict[str, list[dict]] = {}
    for src in selected:
        paths = index.by_kind[src.kind.name][src.name]
        dups = [p for p in paths if p != src.rel] if len(paths) > 1 else None
        if cache is not None and not dups:
            good, notes = _fresh(project, src, index, cache)
            if good:
                fresh.add(src.rel)
                if notes is not None and not full:
                    if notes:
                        standing[src.rel] = _standing(project.source_path(src.rel), notes)
                    continue
        work.append((src, dups))
    for found in standing.values():
        diagnostics.extend(found)
    size = max(1, min(BATCH, len(work) // max(1, 4 * jobs)))
    batches = [work[i : i + size] for i in range(0, len(work), size)]
    done = 0

    def step(found: list[dict], n: int) -> None:
        nonlocal done
        diagnostics.extend(found)
        done += n
        if progress is not None:
            progress(done, len(work), f"checked {done} of {len(work)} sources")

    if progress is not None:
        progress(0, len(work), f"checking {len(work)} sources")
    if jobs > 1 and len(batches) > 1:
        from concurrent.futures import ProcessPoolExecutor

        from veduta.cook.ahead import interrupts_held, pool_context, stop_workers, stops_on_interrupt

        # Ctrl-C is held back while the workers are forked (as the cook does): one landing in an
        # at-fork hook or in a worker before its start printed a traceback; it is delivered here
        # after the forks, and the workers, which ignore it then, are stopped
        stops = stops_on_interrupt()
        context = pool_context()  # (before: starting the resource tracker lets SIGINT go again)
        pool = None
        try:
            with interrupts_held():
                pool = ProcessPoolExecutor(
                    min(jobs, len(batches)),
                    mp_context=context,
                    initializer=_start_worker,
                    initargs=(project, index, stops),
                )
                results = pool.map(_check_in_worker, batches)  # (forks the workers)
            for batch, found in zip(batches, results):
                step(found, len(batch))
        except BaseException:
            if pool is not None:
                if stops:
                    stop_workers(pool)
                pool.shutdown(wait=True, cancel_futures=True)  # a cancelled check leaves no work behind
            raise
        pool.shutdown(wait=True)
    else:
        _init_worker(project, index)
        for batch in batches:
            step(_check_in_worker(batch), len(batch))
    # failures propagate: a source naming one that has errors gets DEPENDENCY_FAILED there
    rel_of = {project.source_path(src.rel): src.rel for src in selected}
    failed = {rel_of[d["file"]] for d in diagnostics if d["severity"] == ERROR and d["file"] in rel_of}
    spread = []
    if failed:
        from veduta.cook.propagate import affected

        spread = affected(project.assets, index, failed, rel_of.values(), project.source_path)
        diagnostics.extend(d.to_json() for d in spread)
    if standing or spread:  # in source order, the recorded warnings among the compiled sources' diagnostics
        order = {project.source_path(src.rel): i for i, src in enumerate(selected)}
        diagnostics.sort(key=lambda d: (order.get(d["file"], -1), d["line"], d["col"]))
    return Assessment(selected, fresh, len(selected) - len(work), len(work), diagnostics, index)


def check(
    project: Project,
    sources: list[str] | None = None,
    full: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    strict: bool | None = None,
) -> dict[str, Any]:
    """Check every source of *project* (or those named, paths under the assets folder), as
    :func:`assess` does.

    *strict* (None: ``strict`` in [tool.veduta]): every warning is an error, and the error
    findings of ``inspect`` for the models, prefabs and worlds checked are errors too
    (:mod:`veduta.tools.strict`).

    Returns ``{"ok", "checked", "compiled", "fresh", "errors", "warnings", "strict",
    "strict_errors", "diagnostics"}``, the diagnostics as :meth:`Diagnostic.to_json` objects in
    source order (``fresh``: sources known good by their fresh cooked files, not compiled;
    ``strict_errors``: errors only strict makes, warnings turned and inspect's findings); ``ok``
    is False when any is an error.
    """
    strict = project.strict if strict is None else strict
    found = assess(project, sources, full, jobs, progress)
    diagnostics = found.diagnostics
    turned = 0
    if strict:
        from veduta.tools.strict import inspect_errors

        extra = inspect_errors(project, found.selected, found.index, diagnostics)
        for d in diagnostics:
            if d["severity"] == WARNING:
                d["severity"] = ERROR
                turned += 1
        if extra:
            order = {project.source_path(src.rel): i for i, src in enumerate(found.selected)}
            diagnostics = sorted(diagnostics + extra, key=lambda d: (order.get(d["file"], -1), d["line"], d["col"]))
        turned += len(extra)
    errors = sum(1 for d in diagnostics if d["severity"] == ERROR)
    warnings = sum(1 for d in diagnostics if d["severity"] == WARNING)
    return {
        "ok": errors == 0,
        "checked": len(found.selected),
        "compiled": found.compiled,
        "fresh": found.known,
        "errors": errors,
        "warnings": warnings,
        "strict": strict,
        "strict_errors": turned,
        "diagnostics": diagnostics,
    }
