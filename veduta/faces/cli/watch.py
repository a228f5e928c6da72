"""``veduta watch``: cook, then recook whatever each save makes stale.

Every cook is a whole ``veduta cook`` run (in this process, each run with its own state): the
cook's own staleness decides what a save touched (a material edit recooks the models that use
it, a PNG its texture), and a no-op pass costs a fraction of a second even at 10,000 sources.
Changes under the assets folder are collected by watchfiles and debounced, so an editor's save
(write, rename, touch) makes one cook.  A source with errors only prints its diagnostics;
Ctrl-C stops the cook in progress (its atomic writes leave every cooked file whole) and exits
with status 0.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from veduta.base.project import Project

__all__ = ["watch", "watch_filter"]


#: the files a cook reads besides sources: a texture's images
DEPENDENCY_SUFFIXES = (".png",)


def watch_filter(project: Project):
    """A watchfiles filter: changes under the assets folder that a cook may read: a source (by
    its kind's suffix), an image, or a folder (made, moved or removed: its sources with it).
    Not the cooked folder, hidden files (atomic writes' temporaries, editors' swap files), editor
    backups, or any other file: an editor's temporary file without a suffix (``sed -i``'s
    ``sedXXXXXX``, vim's ``4913``) is no change of the game, and made a cook."""
    from veduta.base.kinds import KINDS

    cooked = os.path.abspath(project.cooked) + os.sep
    wanted = tuple(k.suffix for k in KINDS) + DEPENDENCY_SUFFIXES
    # the folders under the assets folder: a folder moved or removed no longer says it was one
    folders = {os.path.abspath(d) for d, _, _ in os.walk(project.assets)}

    def keep(change, path: str) -> bool:
        if (path + os.sep).startswith(cooked):
            return False
        base = os.path.basename(path)
        if base.startswith(".") or base.endswith(("~", ".swp", ".tmp")):
            return False
        if base.lower().endswith(wanted):
            return True
        if os.path.isdir(path):
            folders.add(path)
            return True
        if path in folders:  # a folder moved away or removed
            folders.discard(path)
            return True
        return False

    return keep


def _cook(project: Project, jobs: int, fmt: str) -> int:
    """One whole ``veduta cook`` in this process (each with its own CookRun; the compilers
    stay imported, so a recook after a save costs tens of milliseconds, not a new Python)."""
    from veduta import api

    try:
        return 0 if api.cook(project, [], jobs, echo=sys.stdout, fmt=fmt)["ok"] else 1
    except KeyboardInterrupt:
        from veduta.cook.tasks import INTERRUPTED

        sys.stderr.write(f"\n{INTERRUPTED}\n")  # as doit cook says it: the summary above is not the end
        raise
    finally:
        sys.stdout.flush()


def watch(project: Project, jobs: int = 0, fmt: str = "text", debounce_ms: int = 150) -> int:
    """Cook, then watch the assets folder and cook again after every batch of changes, until
    Ctrl-C (exit status 0)."""
    import watchfiles

    def say(text: str) -> None:
        print(f"watch: {text}", file=sys.stderr, flush=True)

    assets = os.path.abspath(project.assets)
    try:
        changes_seen = watchfiles.watch(assets, watch_filter=watch_filter(project), debounce=debounce_ms, step=50,
                                        rust_timeout=500, yield_on_timeout=True, raise_interrupt=True)
        next(changes_seen)  # the watcher runs from here on: a save during the first cook is not lost
        _cook(project, jobs, fmt)
        say(f"watching {project.assets}/ (Ctrl-C stops)")
        for changes in changes_seen:
            if not changes:
                continue  # a timeout: nothing changed
            paths = sorted({os.path.relpath(p, assets).replace(os.sep, "/") for _, p in changes})
            shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
            say(f"changed: {shown}")
            started = time.monotonic()
            _cook(project, jobs, fmt)
            say(f"cooked in {time.monotonic() - started:.2f} s; watching")
    except KeyboardInterrupt:
        say("stopped")
    return 0
