"""The doit side: ``task_cook``, ``DOIT_CONFIG``, the file checker and the reporter.

Speed notes (see docs/cooking.md): doit checks every task serially in its
main process, so the up-to-date decision is made here, once per source, in a
single pass at task creation: first by stat signatures (the stat cache),
falling back to reading the cooked META and re-hashing.  Each task then
carries a plain ``uptodate`` boolean and doit only compares file_dep stat
states in its (sqlite3) database, never hashing.
"""

from __future__ import annotations

import os
import sys
import time

from doit.dependency import FileChangedChecker
from doit.reporter import ConsoleReporter

from veduta import COMPILER_VERSION
from veduta.cook.cook import (
    COOKED, FAILED, RESTORED, UPTODATE, check_fresh, cook_one, fresh_by_stat, names_by_folder, orphans,
    prune_orphans, set_index,
)
from veduta.cook.project import Project
from veduta.cook.state import RACY_NS, StatCache

STATE_FILE = "state.marshal"
DB_FILE = "doit.sqlite3"
BASENAME = "cook"


#: file_dep path -> signature that this run's up-to-date pass verified against the
#: source_hash (by hashing, or by the stat cache of an earlier hash).
VERIFIED: dict[str, tuple[int, int, int]] = {}


class StatChecker(FileChangedChecker):
    """file_dep states are (size, mtime_ns, inode); a racy state never matches.

    Never hashes: a file whose signature changed but whose content this run's
    up-to-date pass verified (a touched file, a branch switched back) is not
    modified.
    """

    def check_modified(self, file_path, file_stat, state):
        cur = (file_stat.st_size, file_stat.st_mtime_ns, file_stat.st_ino)
        if state is not None and len(state) == 3 and tuple(state) == cur:
            return False
        return VERIFIED.get(file_path) != cur

    def get_state(self, dep, current_state):
        st = os.stat(dep)
        if time.time_ns() - st.st_mtime_ns < RACY_NS:
            return ["racy"]
        new = [st.st_size, st.st_mtime_ns, st.st_ino]
        return None if new == current_state else new


class _Run:
    """What the reporter needs from the task creation of this run."""

    project: Project | None = None
    cache: StatCache | None = None


RUN = _Run()


def cook_tasks(project: Project, display_root: str = ""):
    """Yield the doit task dicts of every source of *project* (and the orphan sweep)."""
    from veduta.compile import AssetIndex

    sources = project.sources()
    index = AssetIndex.from_paths(s.rel for s in sources)
    set_index(project.assets, index)
    cache = StatCache(os.path.join(project.cache, STATE_FILE))
    RUN.project, RUN.cache = project, cache
    assets = project.assets
    now = time.time_ns()

    yield {"name": None, "doc": "cook every asset source into a .vda file"}

    for src in sources:
        kind = src.kind
        paths = index.by_kind[kind.name][src.name]
        duplicate_of = [p for p in paths if p != src.rel] if len(paths) > 1 else None
        cooked = project.cooked_path(kind, src.name)
        source_path = os.path.join(assets, src.rel)
        if duplicate_of:
            fresh, deps = False, []
            cache.discard(src.rel)
        else:
            entry = cache.get(src.rel)
            if not fresh_by_stat(entry, src.rel, assets, cooked, index):
                fresh, deps, entry = check_fresh(kind.name, src.rel, assets, cooked, index, now)
                if fresh:
                    cache.set(src.rel, entry)
                else:
                    cache.discard(src.rel)
                    entry = None
            if entry is not None:
                fresh = True
                deps = []
                for p, s in entry[3]:
                    if s:  # exists, not racy
                        VERIFIED[os.path.join(assets, p)] = tuple(s)
                    if s != [] and p != src.rel:
                        deps.append(p)
            else:
                deps = [d for d in deps if os.path.exists(os.path.join(assets, d))]
        task = {
            "name": src.rel,
            "actions": [(cook_one, [kind.name, src.rel, assets, cooked, project.cache, duplicate_of, display_root])],
            "file_dep": [source_path] + [os.path.join(assets, d) for d in deps],
            "uptodate": [fresh],
            "doc": f"{kind.name} {src.name}",
            "clean": True,
        }
        if not duplicate_of:
            task["targets"] = [cooked]
        yield task

    stray = orphans(project.cooked, names_by_folder(sources))
    yield {
        "name": "_orphans",
        "actions": [(prune_orphans, [assets, project.cooked])],
        "uptodate": [not stray],
        "doc": "remove cooked files whose source is gone",
    }
    cache.keep_only(s.rel for s in sources)
    cache.save()


def task_cook():
    """Cook every asset source into a .vda file (one subtask per source)."""
    project = Project.find(os.getcwd())
    yield from cook_tasks(project)


# -- reporting -------------------------------------------------------------------------------

class CookReporter(ConsoleReporter):
    """Quiet, located output: diagnostics as they come, progress on a terminal, a summary.

    Tasks other than cook's are reported as doit's console reporter does.
    """

    desc = "veduta cook: diagnostics, progress on a terminal, summary"

    def __init__(self, outstream, options):
        super().__init__(outstream, options)
        self.counts = {COOKED: 0, UPTODATE: 0, RESTORED: 0, FAILED: 0}
        self.total = 0
        self.done = 0
        self.pruned: list[str] = []
        self.tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        self._last_progress = 0.0
        self._progress_shown = False
        self._started = time.monotonic()

    @staticmethod
    def _is_cook(task) -> bool:
        return task.name.startswith(BASENAME + ":") and not task.name.startswith(BASENAME + ":_")

    def initialize(self, tasks, selected_tasks):
        self.total = sum(1 for name in tasks if name.startswith(BASENAME + ":") and ":_" not in name)

    def _clear_progress(self):
        if self._progress_shown:
            sys.stderr.write("\r\x1b[K")
            self._progress_shown = False

    def _progress(self, label: str):
        if not self.tty:
            return
        now = time.monotonic()
        if now - self._last_progress < 0.1 and self.done < self.total:
            return
        if now - self._started < 0.5:
            return
        self._last_progress = now
        width = 30
        filled = width * self.done // max(1, self.total)
        line = f"cook [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {label}"
        sys.stderr.write("\r\x1b[K" + line[:118])
        sys.stderr.flush()
        self._progress_shown = True

    def execute_task(self, task):
        if self._is_cook(task):
            self._progress(task.name[len(BASENAME) + 1 :])
        elif not task.name.startswith(BASENAME + ":"):
            super().execute_task(task)

    def skip_uptodate(self, task):
        if self._is_cook(task):
            self.counts[UPTODATE] += 1
            self.done += 1
            self._progress("")
        elif task.name != BASENAME and not task.name.startswith(BASENAME + ":"):
            super().skip_uptodate(task)

    def add_success(self, task):
        if not self._is_cook(task):
            if task.name == f"{BASENAME}:_orphans":
                self.pruned = list((task.values or {}).get("removed", []))
            return super().add_success(task)
        values = task.values or {}
        outcome = values.get("outcome", COOKED)
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        self.done += 1
        rel = task.name[len(BASENAME) + 1 :]
        messages = values.get("messages") or []
        if messages:
            self._clear_progress()
            self.write("".join(m + "\n" for m in messages))
        entry = values.get("entry")
        if RUN.cache is not None:
            if entry:
                RUN.cache.set(rel, entry)
            else:
                RUN.cache.discard(rel)
        if entry:
            _record_file_deps(task, entry)
        self._progress(rel)

    def add_failure(self, task, fail):
        if task.name == BASENAME:
            return  # the group fails when a source fails: the summary says so
        if not self._is_cook(task):
            return super().add_failure(task, fail)
        self.counts[FAILED] += 1
        self.done += 1
        self._clear_progress()
        msg = fail.get_msg() if hasattr(fail, "get_msg") else str(fail)
        if getattr(fail, "exception", None) is not None and not isinstance(fail.exception, str):
            # an exception escaped a compiler: a bug, show it whole
            self.write(f"{task.name}: internal error (please report):\n{msg}\n")
        else:
            self.write(msg.rstrip("\n") + "\n")
        if RUN.cache is not None:
            RUN.cache.discard(task.name[len(BASENAME) + 1 :])

    def complete_run(self):
        self._clear_progress()
        if RUN.cache is not None:
            try:
                RUN.cache.save()
            except OSError:
                pass
        for f in self.pruned:
            self.write(f"removed {f} (its source is gone)\n")
        if self.total or any(self.counts.values()):
            c = self.counts
            self.write(
                f"cook: {c[COOKED]} cooked, {c[UPTODATE]} up to date, {c[RESTORED]} restored from cache, "
                f"{c[FAILED]} failed ({time.monotonic() - self._started:.2f} s)\n"
            )
        # doit's own failure report for cook tasks would repeat the diagnostics: drop them
        self.failures = [f for f in self.failures if not self._is_cook(f["task"])]
        super().complete_run()


def _record_file_deps(task, entry) -> None:
    """Tell doit's DB the file_dep this cook really had (the deps just found),
    so that the next run does not see a changed file_dep set and run it again."""
    from doit.globals import Globals

    dm = Globals.dep_manager
    if dm is None or RUN.project is None:
        return
    assets = RUN.project.assets
    deps = [os.path.join(assets, p) for p, s in entry[3] if s != []]
    if set(deps) == set(task.file_dep):
        return
    try:
        for d in deps:
            dm._set(task.name, d, dm.checker.get_state(d, None))
        dm._set(task.name, "deps:", tuple(deps))
    except OSError:
        pass  # a dep vanished meanwhile: doit will run the task next time


def doit_config(project: Project | None = None) -> dict:
    project = project or Project.find(os.getcwd())
    os.makedirs(project.cache, exist_ok=True)
    return {
        "default_tasks": [BASENAME],
        "dep_file": os.path.join(project.cache, DB_FILE),
        "backend": "veduta",  # CookDB: sqlite3 read in one query (veduta/cook/db.py)
        "check_file_uptodate": StatChecker,
        "reporter": CookReporter,
        "par_type": "process",
        "continue": True,  # one broken source never stops the others
        "minversion": "0.36.0",
    }


__all__ = ["task_cook", "doit_config", "CookReporter", "StatChecker", "COMPILER_VERSION"]
