"""A content-addressed store of cooked files (``cache/store/``).

Keys are lowercase hex SHA-256 strings; values are bytes.  The interface is
two calls, ``get(key)`` and ``put(key, data)``, so that a shared team store
(an HTTP or S3 back end) can sit behind it later.  Writes are atomic; a
corrupt or partial entry is never returned because callers verify what they
get (cooked files carry CRCs and their META).

Growth: one file per distinct cooked output plus one small manifest per
distinct source content, never deleted by cooking.  ``veduta cache prune``
removes entries not used for a number of days (by mtime, refreshed on hit).
"""

from __future__ import annotations

import os
import re
import time

from veduta.fsutil import atomic_write

_KEY = re.compile(r"[0-9a-f]{64}")


class Store:
    def __init__(self, root: str):
        self.root = root

    def _path(self, key: str) -> str:
        if not _KEY.fullmatch(key):
            raise ValueError(f"bad store key {key!r}")
        return os.path.join(self.root, key[:2], key[2:])

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        try:
            os.utime(path)  # last use, for prune
        except OSError:
            pass
        return data

    def put(self, key: str, data: bytes) -> None:
        try:
            atomic_write(self._path(key), data)
        except OSError:
            pass  # a cache that cannot be written is only a slower cache

    # -- maintenance (not part of the get/put interface) ---------------------
    def entries(self):
        """(path, size, mtime) of every entry."""
        try:
            tops = sorted(os.listdir(self.root))
        except OSError:
            return
        for top in tops:
            d = os.path.join(self.root, top)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                p = os.path.join(d, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                yield p, st.st_size, st.st_mtime

    def prune(self, older_than_days: float, dry_run: bool = False) -> tuple[int, int, int, int]:
        """Remove entries unused for *older_than_days*; returns (removed, removed bytes, kept, kept bytes)."""
        cutoff = time.time() - older_than_days * 86400
        removed = rbytes = kept = kbytes = 0
        for p, size, mtime in list(self.entries()):
            if mtime < cutoff:
                removed += 1
                rbytes += size
                if not dry_run:
                    try:
                        os.unlink(p)
                    except OSError:
                        pass
            else:
                kept += 1
                kbytes += size
        return removed, rbytes, kept, kbytes
