"""The build log: how each cooked file was last made, for ``veduta report``.

For every source the log keeps the start of the source_hash of the cooked file its last cook
made (or put in place), where that file came from (:data:`ORIGINS`: compiled here, restored
from the local store, fetched from the shared cache) and, when compiled, how long the compile
took in seconds (models compiled together in one batch share its time equally).  The report
trusts an entry only while the cooked file's META still has that source_hash.

The log is its own small file, ``cache/builds.marshal`` (about 60 bytes a source), apart from
the stat cache: a cook that makes nothing (a no-op) neither reads nor writes it.  A cook that
makes a few files (an edit) in a game that has a log does not read it either: what it made goes to a second small file,
``cache/builds.recent.marshal``, read and written whole (atomically) by such a cook, whose
entries stand over the log's; once that holds :data:`FOLD_AT` entries, a cook folds them into
the log (which is then written first, and the small file removed after: a cook killed between
the two leaves the same entries in both).  Reading the log reads both.  Anything unexpected in
either file (another format, a damaged file) is an empty one.
"""

from __future__ import annotations

import marshal
import os

from veduta.base.fsutil import atomic_write, loads_kept, read_regular

__all__ = ["BUILDS_FILE", "RECENT_FILE", "FOLD_AT", "ORIGINS", "BuildLog", "record_result"]

BUILDS_FILE = "builds.marshal"
#: the entries of the last cooks, over the log's (see above)
RECENT_FILE = "builds.recent.marshal"
#: entries the recent file holds before a cook folds them into the log: an edit of one file
#: reads and writes a file of at most this many entries, never the log of every source (at
#: 100,000 sources, 0.2 s of loading and saving in each cook that makes something)
FOLD_AT = 2048
_FORMAT = "veduta-builds/1"
#: a cook outcome -> where the cooked file came from (veduta.cook.cook's outcome names)
ORIGINS = {"cooked": "compiled", "restored": "local store", "shared": "shared cache"}

#: An entry: (the first KEY_CHARS of the source_hash, outcome, compile seconds or None)
Entry = tuple
#: how much of a source_hash an entry keeps: enough to tell one cooked file of a source from another
#: (half the size of a log of whole hashes: 60 bytes a source)
KEY_CHARS = 16


class BuildLog:
    """source path -> :data:`Entry`: the log at *path* and the recent entries beside it (see
    above), each loaded on first use."""

    def __init__(self, path: str):
        self.path = path
        self.recent_path = os.path.join(os.path.dirname(path), RECENT_FILE)
        self._entries: dict[str, Entry] | None = None  # the log's and the recent ones, merged
        self._new: dict[str, Entry] = {}  # recorded by this run
        self.dirty = False

    @property
    def entries(self) -> dict[str, Entry]:
        if self._entries is None:
            self._entries = _load(self.path)
            self._entries.update(_load(self.recent_path))
            self._entries.update(self._new)
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
        entry = (source_hash[:KEY_CHARS], outcome, None if took is None else round(float(took), 6))
        self._new[rel] = entry
        if self._entries is not None:
            self._entries[rel] = entry
        self.dirty = True

    def save(self, keep=None) -> None:
        """Write what this run recorded, when it recorded something: into the recent file while
        it stays under :data:`FOLD_AT` entries (and there is a log), else folded into the log,
        where *keep* (the sources that exist), when given, drops the entries of the others."""
        if not self.dirty:
            return
        if self._entries is None and len(self._new) < FOLD_AT and os.path.exists(self.path):
            recent = _load(self.recent_path)
            recent.update(self._new)
            if len(recent) < FOLD_AT:
                atomic_write(self.recent_path, _dumps(recent))
                self.dirty = False
                return
        entries = self.entries
        if keep is not None:
            keep = set(keep)
            entries = self._entries = {r: e for r, e in entries.items() if r in keep}
        atomic_write(self.path, _dumps(entries))
        try:
            os.unlink(self.recent_path)
        except FileNotFoundError:
            pass
        self.dirty = False


def _dumps(entries: dict[str, Entry]) -> bytes:
    return marshal.dumps((_FORMAT, dict(sorted(entries.items()))))


def _load(path: str) -> dict[str, Entry]:
    try:
        got = read_regular(path)
        data = loads_kept(got[0]) if got else None
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(data, tuple) and len(data) == 2 and data[0] == _FORMAT and isinstance(data[1], dict)):
        return {}
    return {
        r: e
        for r, e in data[1].items()
        if type(r) is str
        and type(e) is tuple
        and len(e) == 3
        and type(e[0]) is str
        and type(e[1]) is str
        and (e[2] is None or type(e[2]) is float)
    }


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
