"""File helpers: atomic writes."""

from __future__ import annotations

import os
import tempfile

_UMASK = os.umask(0)
os.umask(_UMASK)


def atomic_write(path: str, data: bytes) -> None:
    """Write *data* to *path* so that readers see the old file or the new one, never a part.

    The bytes go to a temporary file in the same folder, are flushed to disk,
    and the file is renamed over *path* (atomic on POSIX and Windows).
    """
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_UMASK)  # mkstemp makes 0600; cooked files are ordinary files
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def remove_if_exists(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False
