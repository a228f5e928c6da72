"""A content-addressed store of cooked files (``cache/store/``).

Keys are lowercase hex SHA-256 strings; values are bytes.  The interface is
``get(key)`` and ``put(key, data)``, so that a shared team store (an HTTP or
S3 back end) can sit behind it later; ``put`` may be given a file holding the
bytes, which this local store hard-links instead of copying.  Writes are
atomic.  Callers verify what they get (cooked files carry CRCs and their META,
whose source_hash must equal the key), and ``put`` replaces an entry whose
bytes are not the ones given, so an entry damaged through a linked cooked file
(overwritten in place, against the rules) is neither used nor kept.

Entries live in a folder named by veduta's toolchain salt (:func:`namespace`):
``<root>/<namespace>/<key[:2]>/<key[2:]>``.  A key is an output's META source_hash, which holds
the spec's compiler version only; a release of veduta that writes other bytes for the same
sources bumps the salt, and what an earlier release stored is then never restored (a source
reverted to content an earlier release cooked compiles), only pruned.

Growth: one entry per distinct cooked output (a hard link to the cooked file
while that output is current, so no extra space until the cooked file is
replaced) plus one small manifest per distinct content of a source that has
deps; cooking never deletes.  ``veduta cache prune`` removes entries unused
for a number of days.
"""

from __future__ import annotations

import os
import re
import time

from veduta.base.fsutil import MAX_COOKED_BYTES, atomic_write, read_regular

_KEY = re.compile(r"[0-9a-f]{64}")


def namespace() -> str:
    """The folder of a store (local or shared) that holds this toolchain's entries:
    :data:`veduta.TOOLCHAIN_SALT` as one path segment (``veduta-cook-rules/1`` ->
    ``veduta-cook-rules-1``)."""
    import veduta

    return re.sub(r"[^A-Za-z0-9._-]", "-", veduta.TOOLCHAIN_SALT)


def _link(src: str, dest: str) -> None:
    try:
        os.link(src, dest)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        os.link(src, dest)


class Store:
    def __init__(self, root: str):
        self.root = root
        #: the folder of this toolchain's entries
        self.folder = os.path.join(root, namespace())
        self._prefix = os.path.join(self.folder, "")  # (os.path.join(folder, a, b) is _prefix + a + "/" + b)

    def _path(self, key: str) -> str:
        if not _KEY.fullmatch(key):
            raise ValueError(f"bad store key {key!r}")
        return self._prefix + key[:2] + "/" + key[2:]

    def get(self, key: str) -> bytes | None:
        # reading refreshes the access time prune goes by; a regular file only (a FIFO in the
        # store would block the cook for ever), no larger than a cooked file can be
        got = read_regular(self._path(key), MAX_COOKED_BYTES)
        return None if got is None else got[0]

    def put(self, key: str, data: bytes, path: str | None = None) -> None:
        """Store *data*; *path*, a file holding exactly these bytes, may be hard-linked
        instead of writing a copy (a new inode costs ten times a link here)."""
        dest = self._path(key)
        try:
            if path is not None:
                try:
                    _link(path, dest)
                    return
                except FileExistsError:
                    # keep an entry only if it still holds these bytes (a cooked file it was
                    # linked to may have been overwritten in place since)
                    if self.get(key) == data:
                        return
                except OSError:
                    pass  # another file system, no hard links: write a copy
            atomic_write(dest, data)
        except OSError:
            pass  # a cache that cannot be written is only a slower cache

    def has(self, key: str) -> bool:
        return os.path.exists(self._path(key))

    def copy_out(self, key: str, path: str, data: bytes) -> None:
        """Put the entry *key* (whose bytes are *data*) at *path*, atomically, as a copy
        (a link would let an in-place edit of the cooked file reach the store)."""
        atomic_write(path, data)

    # -- maintenance (not part of the get/put interface) ---------------------
    def entries(self, every: bool = False):
        """(path, size, mtime) of every entry of this toolchain; *every*: of every toolchain (and
        of the layout before toolchain folders, ``<root>/<key[:2]>/<key[2:]>``)."""
        if not every:
            yield from self._entries_in(self.folder)
            return
        try:
            tops = sorted(os.listdir(self.root))
        except OSError:
            return
        for top in tops:
            if len(top) == 2:
                yield from self._entries_in(self.root, [top])
            elif not top.startswith(".") and os.path.isdir(os.path.join(self.root, top)):
                yield from self._entries_in(os.path.join(self.root, top))

    @staticmethod
    def _entries_in(folder: str, tops: list[str] | None = None):
        if tops is None:
            try:
                tops = sorted(n for n in os.listdir(folder) if len(n) == 2)
            except OSError:
                return
        for top in tops:
            d = os.path.join(folder, top)
            if not os.path.isdir(d):
                continue
            for name in sorted(os.listdir(d)):
                if name.startswith("."):
                    continue  # a temp file of a write in progress
                p = os.path.join(d, name)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                yield p, st.st_size, max(st.st_mtime, st.st_atime)

    def prune(self, older_than_days: float, dry_run: bool = False) -> tuple[int, int, int, int]:
        """Remove entries unused for *older_than_days* (last written or read: the later of
        mtime and atime; relatime file systems refresh atime at least daily, which suits
        a prune counted in days); returns (removed, removed bytes, kept, kept bytes)."""
        cutoff = time.time() - older_than_days * 86400
        removed = rbytes = kept = kbytes = 0
        for p, size, mtime in list(self.entries(every=True)):
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
