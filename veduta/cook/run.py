"""The state of one cook run, handed around instead of kept in module globals (STYLE.md 13).

A :class:`CookRun` is made once per run (``veduta cook``, a game's ``dodo.py``, a
test, a watch cycle) and handed to everything that shares state during the run:
the task pass (``veduta.cook.tasks.cook_tasks``), doit's file checker and the
reporter (bound to it by ``veduta.cook.tasks.doit_config``).  Two runs in one
process each have their own, so nothing of one leaks into the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from veduta.base.diagformat import default_format
from veduta.base.project import Project
from veduta.cook.state import StatCache

#: the file-system monitor's folder under cache/ (veduta/cook/monitor.py): a cook looks for it
#: before it imports anything of the monitor
MONITOR_FOLDER = "monitor"
#: Seconds between two calls of a run's ``waiting`` (its cancel check) while a result is waited
#: for: from a pool (veduta.cook.ahead) or the warm worker (veduta.cook.warm)
WAIT_POLL = 0.1
#: the journal a set of edits leaves in the cache folder until it is whole
#: (``veduta.cook.journal.JOURNAL``), named here too: a cook looks for one before it imports
#: anything of the journal
EDITS_JOURNAL = "edits.journal"


@dataclass
class CookRun:
    """What the task pass, the file checker and the reporter of one run tell each other."""

    project: Project
    #: how source paths are shown in messages ("" = under the assets folder, "-" = relative)
    display_root: str = ""
    #: how the reporter prints diagnostics: text, json or github (--format, else $VEDUTA_FORMAT)
    fmt: str = field(default_factory=default_format)
    #: the stat cache, opened by the task pass
    cache: StatCache | None = None
    #: set by the reporter: this process runs tasks (doit's run command)
    executing: bool = False
    #: the task names doit run selected (None before the reporter starts)
    selected: list[str] | None = None
    #: fresh sources the cook group does not wait for in this run
    fresh_skipped: int = 0
    #: sources the cook group waits for
    to_run: int = 0
    #: (source, warnings) of the fresh sources whose last compile gave warnings (set by the task
    #: pass; the reporter says how many stand)
    standing: list[tuple[str, int]] = field(default_factory=list)
    #: warnings fail the run (``strict = true`` in [tool.veduta], or ``veduta cook --strict``);
    #: None: as the project says
    strict: bool | None = None
    #: every source path of the run (under the assets folder) and the asset index, from the
    #: task pass (failures propagate to the sources that name them: veduta.cook.propagate)
    sources: list[str] = field(default_factory=list)
    index: Any = None
    #: file_dep path -> signature that the up-to-date pass verified against the source_hash
    #: (by hashing, or by the stat cache of an earlier hash)
    #: (signatures packed as the stat cache keeps them: veduta.cook.state.SIG)
    verified: dict[str, bytes] = field(default_factory=dict)
    #: the shared cache of this run (veduta.cook.shared.SharedCache), made by the task pass
    #: when a URL is set and a source is stale; the reporter hands it what to upload
    shared: Any = None
    #: the build log (veduta.cook.builds.BuildLog), made by the reporter on the first result that
    #: made a cooked file (a no-op run never opens it)
    builds: Any = None
    #: what the file-system monitor said at the start of a whole-group cook (a
    #: veduta.cook.monitor.Sync), None when none runs; the reporter leaves its mark
    monitor: Any = None
    #: set by the task pass: the cooked folder held no stray or temp file (for the monitor's mark)
    cooked_clean: bool = False
    #: called every few tenths of a second while the run waits for its pool's results (the
    #: caller's progress told again: a cancelled caller's raises Cancelled there, not only when the
    #: next result comes); None: nothing to tell (set by ``run_cook``)
    waiting: Any = None
    #: called before each kind's folder is listed and every 64 sources looked at, before the
    #: cooking begins (a cancelled caller's progress raises Cancelled there); None: nothing to tell
    #: (set by ``run_cook``)
    looking: Any = None

    def is_strict(self) -> bool:
        """Whether warnings fail this run (:attr:`strict`, else the project's setting)."""
        return bool(self.project.strict if self.strict is None else self.strict)

    def start(self) -> None:
        """A new doit run begins (its reporter starts; the tasks are made after this)."""
        self.executing = True
        self.selected = None
        self.fresh_skipped = self.to_run = 0
        self.standing = []
        self.sources = []
        self.index = None
        self.shared = None
        self.builds = None
        self.monitor = None
        self.cooked_clean = False


__all__ = ["CookRun"]
