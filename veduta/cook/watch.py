"""``veduta watch``: cook, then recook whatever each save makes stale.

Every cook is a whole ``veduta cook`` in a child process: the cook's own staleness decides
what a save touched (a material edit recooks the models that use it, a PNG its texture), a
no-op pass costs a fraction of a second even at 10,000 sources, and a child keeps no state
between cooks that could go stale.  Changes under the assets folder are collected by
watchfiles and debounced, so an editor's save (write, rename, touch) makes one cook.  A
source with errors only prints its diagnostics; Ctrl-C stops the cook in progress (its
atomic writes leave every cooked file whole) and exits with status 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from veduta.cook.project import Project

__all__ = ["watch", "watch_filter"]


def watch_filter(project: Project):
    """A watchfiles filter: files under the assets folder that a cook may read, not the cooked
    folder, hidden files (atomic writes' temporaries, editors' swap files) or editor backups."""
    cooked = os.path.abspath(project.cooked) + os.sep

    def keep(change, path: str) -> bool:
        if (path + os.sep).startswith(cooked):
            return False
        base = os.path.basename(path)
        return not (base.startswith(".") or base.endswith(("~", ".swp", ".tmp")))

    return keep


def _cook(project: Project, jobs: int, fmt: str) -> int:
    argv = [sys.executable, "-m", "veduta.cli", "cook", "--format", fmt]
    if jobs > 1:
        argv += ["-n", str(jobs)]
    child = subprocess.Popen(argv, cwd=project.root)
    try:
        return child.wait()
    except KeyboardInterrupt:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        raise


def watch(project: Project, jobs: int = 0, fmt: str = "text", debounce_ms: int = 150) -> int:
    """Cook, then watch the assets folder and cook again after every batch of changes, until
    Ctrl-C (exit status 0)."""
    import watchfiles

    def say(text: str) -> None:
        print(f"watch: {text}", file=sys.stderr, flush=True)

    assets = os.path.abspath(project.assets)
    try:
        _cook(project, jobs, fmt)
        say(f"watching {project.assets}/ (Ctrl-C stops)")
        for changes in watchfiles.watch(assets, watch_filter=watch_filter(project), debounce=debounce_ms,
                                        step=50, raise_interrupt=True):
            paths = sorted({os.path.relpath(p, assets).replace(os.sep, "/") for _, p in changes})
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            say(f"changed: {shown}")
            started = time.monotonic()
            _cook(project, jobs, fmt)
            say(f"cooked in {time.monotonic() - started:.2f} s; watching")
    except KeyboardInterrupt:
        say("stopped")
    return 0
