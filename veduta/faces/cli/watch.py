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
import signal
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from veduta.base.project import Project

__all__ = ["watch", "watch_filter", "monitor", "monitor_status"]


def watch_filter(project: Project):
    """A watchfiles filter: changes under the assets folder that a cook may read: a source (by
    its kind's suffix), an image (``.png`` in any case, as texture layers take it), or a folder
    (made, moved or removed: its sources with it). Not the cooked folder, hidden files (atomic
    writes' temporaries, editors' swap files), editor backups, or any other file: an editor's
    temporary file without a suffix (``sed -i``'s ``sedXXXXXX``, vim's ``4913``) is no change of
    the game, and made a cook."""
    from veduta.base.kinds import KINDS, is_png

    cooked = os.path.abspath(project.cooked) + os.sep
    wanted = tuple(k.suffix for k in KINDS)
    # the folders under the assets folder: a folder moved or removed no longer says it was one
    folders = {os.path.abspath(d) for d, _, _ in os.walk(project.assets)}

    def keep(change, path: str) -> bool:
        if (path + os.sep).startswith(cooked):
            return False
        base = os.path.basename(path)
        if base.startswith(".") or base.endswith(("~", ".swp", ".tmp")):
            return False
        if base.endswith(wanted) or is_png(base):
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
    Ctrl-C (exit status 0).  When the assets folder itself goes (``git checkout`` of a branch
    without it, ``mv assets x``), the watch says so once and waits for it to come back, then
    watches the folder that is there (a watcher follows the folder it was given, moved away or
    removed, and sees nothing of one made in its place) and cooks."""
    import watchfiles

    from veduta.base.errors import ConfigError

    def say(text: str) -> None:
        print(f"watch: {text}", file=sys.stderr, flush=True)

    assets = os.path.abspath(project.assets)
    terminated = []

    def on_sigterm(signum, frame) -> None:
        """SIGTERM (a supervisor, an editor plugin, systemd) stops the watch as Ctrl-C does: the
        cook's SIGINT handler, while its pool runs, stops the pool's workers; the unwinding
        shuts the pool (its fork server, resource tracker) down.  Exit status 143, a shell's."""
        terminated.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)  # (Python's own or the pool's: raises KeyboardInterrupt)
        raise KeyboardInterrupt

    def watching():
        changes = watchfiles.watch(
            assets,
            watch_filter=watch_filter(project),
            debounce=debounce_ms,
            step=50,
            rust_timeout=500,
            yield_on_timeout=True,
            raise_interrupt=True,
        )
        next(changes)  # the watcher runs from here on: a save during the cook that follows is not lost
        return changes

    def cooked() -> bool:
        """One cook; False when the assets folder went during it (the cook found none)."""
        try:
            _cook(project, jobs, fmt)
        except ConfigError:
            if os.path.isdir(assets):
                raise
            return False
        return True

    changes_seen = None
    before = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        changes_seen = watching()
        went = not cooked()
        if not went:
            say(f"watching {project.assets}/ (Ctrl-C stops)")
        while True:
            if not went:
                changes = next(changes_seen)
                if not changes:
                    continue  # a timeout: nothing changed
                paths = sorted({os.path.relpath(p, assets).replace(os.sep, "/") for _, p in changes})
                started = time.monotonic()
                went = "." in paths or not os.path.isdir(assets)  # the folder itself went (or came back)
                if not went:
                    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
                    say(f"changed: {shown}")
                    went = not cooked()
            if went:  # watch the folder there now, once there is one, and cook
                changes_seen.close()
                if not os.path.isdir(assets):
                    say(f"{project.assets}/ is gone; waiting for it to come back (Ctrl-C stops)")
                    _wait_for_folder(assets, debounce_ms / 1000)
                    say(f"{project.assets}/ is back")
                started = time.monotonic()
                changes_seen = watching()
                went = not cooked()
                if went:
                    continue
            say(f"cooked in {time.monotonic() - started:.2f} s; watching")
    except KeyboardInterrupt:
        say("stopped")
    finally:
        signal.signal(signal.SIGTERM, before)
        if changes_seen is not None:
            changes_seen.close()
    return 128 + signal.SIGTERM if terminated else 0


def _wait_for_folder(folder: str, settle_s: float) -> None:
    """Return once *folder* is a folder again (looked for ten times a second), and *settle_s*
    more (a checkout writing it: its files come with it, not one cook for each)."""
    while not os.path.isdir(folder):
        time.sleep(0.1)
    time.sleep(settle_s)


def monitor_status(project: Project, as_json: bool) -> int:
    """``veduta watch --status``: whether a monitor runs (exit 0) or not (exit 1)."""
    import json

    from veduta import api

    got = api.monitor_status(project)
    if as_json:
        print(json.dumps(got))
    elif not got["running"]:
        print("watch: no monitor runs for this game (veduta watch --monitor starts one); cooks stat every source")
    else:
        trust = (
            (
                "the next cook trusts its journal"
                if got["marked"]
                else "the next complete cook leaves the mark that the cooks after it trust"
            )
            if got["trusted"]
            else f"not trusted: {got['why']}: cooks check every source"
        )
        print(f"watch: a monitor runs (pid {got['pid']}): {trust}")
        w = got.get("worker") or {}
        if w.get("running"):
            print(f"watch: its warm compile worker runs (pid {w['pid']}, {w['served']} cooks served)")
        else:
            print("watch: no warm compile worker runs (cooks of a few sources import the compilers themselves)")
    return 0 if got["running"] else 1


def monitor(project: Project, worker: bool = True) -> int:
    """``veduta watch --monitor``: keep the journal (and, unless not *worker*, the warm compile
    worker) until Ctrl-C or SIGTERM (exit 0)."""
    import signal

    from veduta import api

    def say(text: str) -> None:
        print(f"watch: {text}", file=sys.stderr, flush=True)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))

    def ready(status: dict) -> None:
        how = "" if status["trusted"] else f" ({status['why']}: cooks check every source)"
        say(f"monitoring {project.assets}/ for cooks{how}; Ctrl-C stops")

    api.run_monitor(project, lambda: bool(stop), ready, worker=worker)
    say("monitor stopped")
    return 0
