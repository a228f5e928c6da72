"""The stat cache: what each source's last good cook saw, to skip re-hashing.

For every source the cache keeps the compiler version, the source_hash, the
stat signature (size, mtime_ns, inode) of the cooked file and of the source
and every dependency as they were *before* they were read.  When every
signature still matches, the source_hash would come out the same, so the
asset is up to date without reading a byte.

Safe against same-second edits: a signature taken less than ``RACY_NS`` after
the file's mtime is recorded as racy (never matches), so a later edit in the
same timestamp tick cannot hide; the next check re-hashes and records it
again, by then no longer racy.  Anything unexpected (missing cache, other
Python, corrupt file) just means re-hashing.
"""

from __future__ import annotations

import marshal
import os
import time

from veduta.fsutil import atomic_write

RACY_NS = 2_000_000_000
_FORMAT = "veduta-state/1"

Sig = tuple[int, int, int] | None


def sig_of(st: os.stat_result, now_ns: int | None = None) -> Sig:
    """The signature of a stat result; None when racy (modified less than RACY_NS before now)."""
    if now_ns is None:
        now_ns = time.time_ns()
    if now_ns - st.st_mtime_ns < RACY_NS:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def stat_sig(path: str) -> tuple[int, int, int] | None:
    """The current signature of a path (never racy-masked), or None when missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class Entry(tuple):
    """(compiler, source_hash, cooked_sig, ((path, sig), ...)) with paths relative to the assets folder."""

    __slots__ = ()

    @property
    def compiler(self) -> str:
        return self[0]

    @property
    def source_hash(self) -> str:
        return self[1]

    @property
    def cooked_sig(self):
        return self[2]

    @property
    def files(self):
        return self[3]


def make_entry(compiler: str, source_hash: str, cooked_sig, files) -> list:
    return [compiler, source_hash, None if cooked_sig is None else list(cooked_sig),
            [[p, None if s is None else list(s)] for p, s in files]]


class StatCache:
    """source path -> entry, loaded from and saved to one file in cache/."""

    def __init__(self, path: str):
        self.path = path
        self.entries: dict[str, list] = {}
        self.dirty = False
        try:
            with open(path, "rb") as f:
                data = marshal.load(f)
            if isinstance(data, dict) and data.get("format") == _FORMAT:
                self.entries = data["entries"]
        except (OSError, EOFError, ValueError, TypeError, KeyError):
            self.entries = {}

    def get(self, rel: str):
        return self.entries.get(rel)

    def set(self, rel: str, entry: list) -> None:
        if self.entries.get(rel) != entry:
            self.entries[rel] = entry
            self.dirty = True

    def discard(self, rel: str) -> None:
        if self.entries.pop(rel, None) is not None:
            self.dirty = True

    def keep_only(self, rels) -> None:
        keep = set(rels)
        for rel in [r for r in self.entries if r not in keep]:
            del self.entries[rel]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        atomic_write(self.path, marshal.dumps({"format": _FORMAT, "entries": self.entries}))
        self.dirty = False
