"""The build log: how each cooked file was last made, for ``veduta report``.

For every source the log keeps the start of the source_hash of the cooked file its last cook
made (or put in place), where that file came from (:data:`ORIGINS`: compiled here, restored
from the local store, fetched from the shared cache) and, when compiled, how long the compile
took in seconds (models compiled together in one batch share its time equally).  The report
trusts an entry only while the cooked file's META still has that source_hash.

The log is its own small file, ``cache/builds.marshal`` (about 60 bytes a source), apart from
the stat cache: a cook that makes nothing (a no-op) neither reads nor writes it; a cook that
makes something loads it once, on its first result, and saves it at the end.  Anything
unexpected in it (another format, a damaged file) is an empty log.
"""

from __future__ import annotations

import marshal
import os

from veduta.base.fsutil import atomic_write, read_regular

__all__ = ["BUILDS_FILE", "ORIGINS", "BuildLog", "record_result"]

BUILDS_FILE = "builds.marshal"
_FORMAT = "veduta-builds/1"
#: a cook outcome -> where the cooked file came from (veduta.cook.cook's outcome names)
ORIGINS = {"cooked": "compiled", "restored": "local store", "shared": "shared cache"}

#: An entry: (the first KEY_CHARS of the source_hash, outcome, compile seconds or None)
Entry = tuple
#: how much of a source_hash an entry keeps: enough to tell one cooked file of a source from another
#: (half the size of a log of whole hashes: 60 bytes a source)
KEY_CHARS = 16


class BuildLog:
    """source path -> :data:`Entry`, loaded from *path* on first use."""

    def __init__(self, path: str):
        self.path = path
        self._entries: dict[str, Entry] | None = None
        self.dirty = False

    @property
    def entries(self) -> dict[str, Entry]:
        if self._entries is None:
            self._entries = _load(self.path)
        return self._entries

    def get(self, rel: str, source_hash: str) -> Entry | None:
        """The entry of *rel* if it describes the cooked file of *source_hash*."""
        e = self.entries.get(rel)
        return e if e is not None and e[0] == source_hash[:KEY_CHARS] else None

    def record(self, rel: str, source_hash: str, outcome: str, took: float | None = None) -> None:
        """A cook of *rel* made (or put in place) the cooked file of *source_hash*; *outcome* is
        the cook's (``cooked``, ``restored``, ``shared``); others are not recorded."""
        if outcome not in ORIGINS:
            return
        self.entries[rel] = (source_hash[:KEY_CHARS], outcome, None if took is None else round(float(took), 6))
        self.dirty = True

    def save(self, keep=None) -> None:
        """Write the log when it changed; *keep* (the sources that exist), when given, drops the
        entries of the others."""
        if not self.dirty or self._entries is None:
            return
        if keep is not None:
            keep = set(keep)
            self._entries = {r: e for r, e in self._entries.items() if r in keep}
        atomic_write(self.path, marshal.dumps((_FORMAT, dict(sorted(self._entries.items())))))
        self.dirty = False


def _load(path: str) -> dict[str, Entry]:
    try:
        got = read_regular(path)
        data = marshal.loads(got[0]) if got else None
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(data, tuple) and len(data) == 2 and data[0] == _FORMAT and isinstance(data[1], dict)):
        return {}
    return {r: e for r, e in data[1].items()
            if type(r) is str and type(e) is tuple and len(e) == 3 and type(e[0]) is str and type(e[1]) is str
            and (e[2] is None or type(e[2]) is float)}


def log_of(cache: str) -> BuildLog:
    """The build log of the game whose cache folder is *cache*."""
    return BuildLog(os.path.join(cache, BUILDS_FILE))


def record_result(cache: str, rel: str, result: dict) -> None:
    """Record one result of :func:`veduta.cook.cook.cook_file` made outside a cook run (a tool
    that cooks what it reads): loaded, updated and saved at once."""
    entry = result.get("entry")
    if not entry or result.get("outcome") not in ORIGINS:
        return
    log = log_of(cache)
    log.record(rel, entry[0], result["outcome"], result.get("took"))
    try:
        log.save()
    except OSError:
        pass  # the report then says it does not know where the file came from
