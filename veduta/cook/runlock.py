"""One cook at a time per game: a lock file in the cache folder.

Two cooks started at once in one game both used to succeed while doing the same work twice.
The first takes ``cache/cook.lock`` (``flock``, released when its process ends or its run
completes); a second says it is waiting, then waits, and finds the first one's work done.
Where the lock cannot be taken (no ``fcntl``, a cache that cannot be written) cooks run as
before.
"""

from __future__ import annotations

import os
import sys

LOCK_FILE = "cook.lock"


def acquire(cache: str):
    """Hold the cook lock of the game whose cache folder is *cache*; returns a handle for
    :func:`release` (None when no lock could be taken)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return None
    path = os.path.join(cache, LOCK_FILE)
    try:
        os.makedirs(cache, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.stderr.write(f"veduta: another cook is running in this game ({path}); waiting for it to finish\n")
        sys.stderr.flush()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            return None
    except OSError:
        os.close(fd)
        return None
    return fd


def release(handle) -> None:
    if handle is not None:
        try:
            os.close(handle)  # closing the descriptor drops the lock
        except OSError:
            pass


__all__ = ["acquire", "release", "LOCK_FILE"]
