"""``veduta watch --monitor`` and ``--status``: the file-system monitor of a game
(``veduta/cook/monitor.py``; docs/cooking.md, "The file-system monitor")."""

from __future__ import annotations

import os
from collections.abc import Callable

from veduta.base.errors import UsageError
from veduta.base.project import Project


def monitor_status(project: Project) -> dict:
    """Whether a monitor runs for *project*, and whether the next cook can trust it:
    ``{"running", "pid", "trusted", "why", "marked", "journal", "worker"}`` (*trusted*: no link in
    the watched folders and every folder watched, else *why* says what it cannot see; *marked*:
    a complete cook left its mark, so the next no-op cook stats nothing; *worker*: its warm compile
    worker, ``{"running", "pid", "served", "socket"}``)."""
    from veduta.cook.monitor import status
    from veduta.cook.warm import status as worker_status

    return {**status(project.cache), "worker": worker_status(project.cache)}


def run_monitor(
    project: Project,
    should_stop: Callable[[], bool] = lambda: False,
    ready: Callable[[dict], None] | None = None,
    worker: bool = True,
) -> dict:
    """Watch *project*'s assets and cooked folders and keep the journal until *should_stop()*
    (checked twice a second) or KeyboardInterrupt; *ready* is called with the status once every
    folder is watched.  With *worker*, a warm compile worker is kept as a child process
    (veduta/cook/warm.py), started again whenever it ends.  Returns the last status.  Another
    running monitor of the same game, or a system without inotify, is a :class:`~veduta.base.errors.UsageError`."""
    from veduta.cook.monitor import MonitorRunning, hold_lock

    project.need_assets()
    try:
        # one monitor per game: a lock held for its life (two started at once: one runs)
        lock = hold_lock(project.cache)
    except MonitorRunning as exc:
        raise UsageError(
            f"a monitor already runs for this game (pid {exc.pid if exc.pid is not None else 'unknown'}); "
            "`veduta watch --status` shows it"
        ) from None
    except OSError as exc:
        raise UsageError(f"the monitor cannot lock {exc.filename or project.cache} ({exc.strerror})") from None
    try:
        return _run(project, should_stop, ready, worker)
    finally:
        os.close(lock)  # (after the state file went: a monitor started now finds none)


def _run(project: Project, should_stop: Callable[[], bool], ready: Callable[[dict], None] | None, worker: bool) -> dict:
    from veduta.cook.monitor import Monitor, MonitorUnavailable, status

    try:
        mon = Monitor(project.assets, project.cooked, project.cache, root=project.root)
    except MonitorUnavailable as exc:
        raise UsageError(f"{exc}; cooks check every source by its signatures") from None
    keeper = None
    if worker:
        from veduta.cook.warm import Keeper

        keeper = Keeper(project.assets, project.cooked, project.cache)
    try:
        try:
            mon.start()
        except OSError as exc:  # (its own folder: cache/monitor/cookies, or the journal)
            raise UsageError(
                f"the monitor cannot watch or write {exc.filename or mon.folder} ({os.strerror(exc.errno or 0)})"
            ) from None
        if keeper is not None:
            keeper.tend()
        if ready is not None:
            ready(status(project.cache))
        try:
            mon.run(should_stop, tick=keeper.tend if keeper is not None else None)
        except KeyboardInterrupt:
            pass
        return {**status(project.cache), "watched_folders": len(mon.dirs)}
    finally:
        if keeper is not None:
            keeper.stop()
        mon.close()


__all__ = ["monitor_status", "run_monitor"]
