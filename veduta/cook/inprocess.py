"""The cook as a function: run the doit tasks in this process and return what happened as data.

``veduta cook`` and the MCP ``cook`` tool call :func:`run_cook` (through ``veduta.api.cook``).
It runs the same tasks, database and reporter as ``doit cook``; the reporter here also keeps
every diagnostic as a dict, and writes its text (the lines ``doit cook`` prints) to *echo*,
or nowhere: on an MCP server stdout is the protocol channel.
"""

from __future__ import annotations

import gc
import io
import os
from typing import TYPE_CHECKING, Any, TextIO

from veduta.base.errors import UsageError, clip_words
from veduta.base.project import Project
from veduta.cook.cook import COOKED, FAILED, RESTORED, UPTODATE
from veduta.cook.doit_adapter import bind_class
from veduta.cook.run import CookRun
from veduta.cook.tasks import BASENAME, CookReporter, doit_config, task_creator

if TYPE_CHECKING:
    from veduta.base.progress import Progress


class CollectingReporter(CookReporter):
    """The cook's reporter, which also keeps the diagnostics of every source as dicts, and tells
    :attr:`progress` (when set) of every source it reaches."""

    def __init__(self, outstream, options):
        super().__init__(outstream, options)
        self.diagnostics: list[dict] = []
        self.progress: Progress | None = None
        self._told: tuple[float, float | None, str] | None = None  # the last progress told

    def _progress(self, label: str):
        super()._progress(label)
        if self.progress is not None:
            total = max(self.run.to_run or self.total, self.done, 1)
            self._told = (self.done, total, f"cooking {label}" if label else f"{self.done} of {total} sources")
            self._tell(self.progress, self._told)

    def waiting(self) -> None:
        """The run waits for its pool (:attr:`CookRun.waiting`): the last progress told again, so
        that a caller that cancelled meanwhile stops the run now (its callback raises Cancelled)."""
        if self.progress is not None:
            self._tell(
                self.progress, self._told or (self.done, max(self.run.to_run or self.total, self.done, 1), "cooking")
            )

    def looking(self) -> None:
        """The run lists and looks at the sources, before the cooking begins
        (:attr:`CookRun.looking`): told as not begun, the total not known yet, so that a caller
        that cancelled meanwhile stops the run now."""
        if self.progress is not None:
            self._tell(self.progress, self._told or (0, None, "looking at the sources"))

    @staticmethod
    def _tell(progress: Progress, told: tuple[float, float | None, str]) -> None:
        """Tell *progress*; when it raises Cancelled, the run's pool stops at once (before doit
        saves its database and the run ends: its workers would go on writing meanwhile)."""
        from veduta.base.errors import Cancelled

        try:
            progress(*told)
        except Cancelled:
            from veduta.cook import ahead

            ahead.stop()
            raise

    def add_success(self, task):
        if self._is_cook(task):
            self.diagnostics += (task.values or {}).get("diagnostics") or []
        return super().add_success(task)

    def _emit_extra(self, found: list) -> None:
        self.diagnostics += [d.to_json() for d in found]
        super()._emit_extra(found)

    def add_failure(self, task, fail):
        if (
            task.name != BASENAME
            and task.name.startswith(BASENAME + ":")
            and (self._is_cook(task) or task.name == f"{BASENAME}:_sources")
        ):
            found = getattr(fail, "diagnostics", None)
            if found is None:  # problems known only as lines (unreadable folders, duplicate names)
                from veduta.source.diagnostics import parse_lines

                found = parse_lines(getattr(fail, "message", "") or "")
            self.diagnostics += found
        return super().add_failure(task, fail)


def source_task_names(project: Project, sources: list[str]) -> list[str]:
    """doit task names (``cook:models/crate.vmodel``) of source paths: absolute, relative to the
    current folder (the game root when the project was found from it), or under the assets folder."""
    from veduta.base.kinds import kind_of
    from veduta.base.project import not_a_source, plain_rel

    assets = os.path.abspath(project.assets)
    names = []
    for s in sources:
        full = os.path.abspath(s)
        if os.path.exists(full) and (full + os.sep).startswith(assets + os.sep):
            rel: str | None = os.path.relpath(full, assets).replace(os.sep, "/")
        else:
            rel = plain_rel(s)  # (models//crate.vmodel, models/./crate.vmodel: as listed)
        if rel is None or kind_of(rel) is None or not os.path.isfile(os.path.join(assets, rel)):
            odd = not_a_source(os.path.join(project.assets, rel)) if rel and kind_of(rel) else None
            if odd is not None:  # (a FIFO named like a source: the scan's words for it)
                raise UsageError(clip_words(odd))
            raise UsageError(
                f"{clip_words(os.path.join(project.assets, rel or s))}: no such source (give the path of a "
                f"source file, from the game root or under {project.assets}/, e.g. models/crate.vmodel)"
            )
        names.append(f"{BASENAME}:{rel}")
    return names


#: whether a run of this process ended since the last collection (:func:`run_cook`)
_collect = False


def run_cook(
    project: Project,
    sources: list[str] | None = None,
    jobs: int = 0,
    echo: TextIO | None = None,
    fmt: str | None = None,
    progress: Progress | None = None,
    strict: bool | None = None,
) -> dict[str, Any]:
    """Cook *sources* (every source when empty) of *project* with doit, in this process.

    *jobs* > 1 cooks in that many worker processes.  The text ``doit cook`` prints goes to
    *echo* (None: dropped), its diagnostics in format *fmt* (text, json or github lines;
    default: VEDUTA_FORMAT or text).  *strict*: warnings fail the cook (None: as ``strict`` in
    [tool.veduta] says).  Returns ``{"ok", "summary": {"cooked", "up_to_date", "restored",
    "failed", "removed", "with_failed_dependency", "warnings", "standing_warnings", "strict"},
    "diagnostics": [...]}``, the diagnostics sorted by file, line and column (dicts as
    :meth:`~veduta.source.diagnostics.Diagnostic.to_json` makes them; a warning that stands from an
    earlier cook of a fresh source is counted, not listed: ``veduta check`` lists them).
    *progress* hears of every source reached (:mod:`veduta.base.progress`); when it raises
    Cancelled the cook stops as at Ctrl-C: the files cooked so far are whole and recorded, the
    rest stale, and Cancelled propagates.
    """
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    global _collect
    if _collect:
        # the last run of this process (a watch, the MCP server): its bound classes and its group
        # task are reference cycles holding the whole run (tasks, indexes, doit's database), which
        # unfreezing put in the oldest generation, which Python rarely collects: a process that
        # cooks again and again grew by each run (1.8 MB a cook at 2,000 sources).  Collected
        # here, before this run makes (and freezes) its own, rather than at the end of each run:
        # a one-shot cook, about to exit, would pay ~7 ms at 20,000 sources for nothing
        gc.collect()
        _collect = False
    root = os.path.abspath(project.root)
    if os.path.abspath(os.getcwd()) != root:
        os.chdir(root)  # doit's paths are relative to the game root, as with a dodo.py
    project = Project.at(".")
    project.need_assets()  # a configuration mistake, told before doit runs
    names = source_task_names(project, list(sources or []))
    run = CookRun(project, strict=strict)
    if fmt:
        run.fmt = fmt

    # doit takes a reporter object as well as a class (cmd_run.Run._execute): one made here
    # keeps what it collected for this function to return
    reporter = bind_class(CollectingReporter, run=run)(echo if echo is not None else io.StringIO(), {})
    reporter.progress = progress
    if progress is not None:
        run.waiting, run.looking = reporter.waiting, reporter.looking
    config = doit_config(run) | {"reporter": reporter}
    # the tasks are made while doit runs (after its reporter starts), as with a dodo.py
    argv = ["run"]
    if jobs:  # -n 1 too: an explicit -n 1 cooks serially (no pool, veduta/cook/ahead.py)
        argv += ["-n", str(jobs)]
    argv += names or [BASENAME]
    try:
        rc = DoitMain(ModuleTaskLoader({"task_cook": task_creator(run), "DOIT_CONFIG": config})).run(argv)
    except KeyboardInterrupt as stop:
        # what was recorded before Ctrl-C (veduta cook --json prints it): the summary doit cook printed
        stop.result = _result(project, run, reporter, 1, strict)  # type: ignore[attr-defined]
        raise
    finally:
        gc.unfreeze()  # cook_tasks froze this run's tasks: a long-lived process must free them,
        _collect = True  # which the next run of this process does first
        if getattr(reporter, "_lock", None) is not None:
            # doit stopped before its run ended (complete_run releases it): drop the game's cook
            # lock here, or the next cook of this process (the MCP server's) would wait forever
            from veduta.cook import runlock

            runlock.release(reporter._lock)
            reporter._lock = None
    c = reporter.counts
    if progress is not None:
        n = sum(c.values())  # every source the run reached (fresh ones of the group counted as up to date)
        progress(n, n, f"cooked {c[COOKED]}, {c[UPTODATE]} up to date, {c[FAILED]} failed")
    return _result(project, run, reporter, rc, strict)


def _result(
    project: Project, run: CookRun, reporter: CollectingReporter, rc: int, strict: bool | None
) -> dict[str, Any]:
    """What :func:`run_cook` returns, from its reporter (*rc*: doit's exit status)."""
    c = reporter.counts
    diagnostics = sorted(reporter.diagnostics, key=lambda d: (d["file"], d["line"], d["col"]))
    standing = sum(n for _, n in run.standing)
    return {
        "ok": rc == 0 and not c[FAILED],
        "summary": {
            "cooked": c[COOKED],
            "up_to_date": c[UPTODATE],
            "restored": c[RESTORED],
            "failed": c[FAILED],
            "removed": list(reporter.pruned),
            "with_failed_dependency": reporter.affected,
            "warnings": reporter.warned,
            "standing_warnings": standing,
            "strict": bool(project.strict if strict is None else strict),
        },
        "diagnostics": diagnostics,
    }
