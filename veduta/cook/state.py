"""The stat cache: what each source's last good cook saw, to skip re-hashing.

For every source the cache keeps the compiler version, the source_hash, the
stat signature (size, mtime_ns, inode, ctime_ns) of the cooked file and of the
source and every dependency as they were *before* they were read.  ctime is
in it because a tool can put an old mtime back (``cp -p``, ``touch -r``, fixed
archive timestamps), while every write or utime moves the ctime.  When every
signature still matches, the source_hash would come out the same, so the
asset is up to date without reading a byte.

Safe against same-second edits: a signature taken less than ``RACY_NS`` after
the file's mtime or ctime is recorded as racy (never matches), so a later edit in the
same timestamp tick cannot hide; the next check re-hashes and records it
again, by then no longer racy.  Anything unexpected (missing cache, other
Python, corrupt file) just means re-hashing.
"""

from __future__ import annotations

import marshal
import os
import struct

from veduta.base.fsutil import atomic_write, read_regular

RACY_NS = 2_000_000_000
_FORMAT = "veduta-state/4"

Sig = tuple[int, int, int, int] | None


def sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


#: An entry: (source_hash, cooked file sig, ((path, sig), ...)) with the source
#: first and paths relative to the assets folder; a sig is (size, mtime_ns,
#: inode, ctime_ns), () for a file that was missing, None when racy.
Entry = tuple


def mask_racy(s, now_ns: int):
    """A signature as the cache may keep it: None when it was taken less than RACY_NS
    after the file's mtime or ctime (*now_ns*: when it was taken, or earlier)."""
    if not s:
        return s
    return None if now_ns - max(s[1], s[3]) < RACY_NS else s


def make_entry(source_hash: str, cooked_sig, files, now_ns: int) -> Entry:
    """An entry from current signatures (racy ones masked)."""
    return (source_hash, mask_racy(cooked_sig, now_ns), tuple((p, mask_racy(s, now_ns)) for p, s in files))


def entry_from_json(v) -> Entry:
    """An entry that travelled through JSON (doit's values) back to tuples."""
    h, csig, files = v
    return (h, None if csig is None else tuple(csig),
            tuple((p, None if s is None else tuple(s)) for p, s in files))


#: How the cache holds an entry of source *rel* (in memory and in its file): (source_hash,
#: the signatures of the cooked file, the source and each dependency packed as 32 bytes each
#: (:data:`SIG`; :data:`RACY` for None, :data:`MISSING` for ()), the dependency paths).  A no-op
#: cook loads one entry per source: three objects, where (hash, sig tuple, ((path, sig
#: tuple), ...)) took sixteen (loading them was a tenth of a no-op at 50,000 sources).
Packed = tuple[str, bytes, tuple[str, ...]]

#: A signature packed: size, mtime_ns, inode, ctime_ns.
SIG = struct.Struct("<qqQq")
#: The packed "racy" signature (never matches: no file has a negative size).
RACY = SIG.pack(-1, 0, 0, 0)
#: The packed "missing" signature.
MISSING = SIG.pack(-2, 0, 0, 0)


def pack_entry(rel: str, entry: Entry) -> Packed:
    """*entry* of source *rel* as the cache holds it (its first file must be *rel*)."""
    h, csig, files = entry
    if not files or files[0][0] != rel:
        raise ValueError(f"the first file of the stat-cache entry of {rel} is not {rel}")
    sigs = [csig, *(s for _, s in files)]
    return (h, b"".join(RACY if s is None else MISSING if s == () else SIG.pack(*s) for s in sigs),
            tuple(p for p, _ in files[1:]))


def unpack_entry(rel: str, packed: Packed) -> Entry:
    """The entry of source *rel* from its :data:`Packed` form."""
    h, blob, deps = packed
    sigs = [None if b == RACY else () if b == MISSING else SIG.unpack(b)
            for b in (blob[i:i + SIG.size] for i in range(0, len(blob), SIG.size))]
    return (h, sigs[0], tuple(zip((rel, *deps), sigs[1:], strict=True)))


def well_formed(packed) -> bool:
    """Whether *packed* has the shape of a :data:`Packed` entry: a damaged cache file can still
    be valid marshal data (a flipped byte in a length or a type code), and the users of an entry
    must never see a traceback for it.  (0.2-0.5 us an entry: checked where an entry is unpacked,
    not on the no-op path, where fresh_by_stat turns a shape error into "not fresh".)"""
    return (type(packed) is tuple and len(packed) == 3 and type(packed[0]) is str
            and type(packed[1]) is bytes and type(packed[2]) is tuple
            and len(packed[1]) == SIG.size * (len(packed[2]) + 2)
            and all(type(p) is str for p in packed[2]))


class StatCache:
    """source path -> entry for one compiler version, in one file in cache/ (entries are kept
    packed, see :data:`Packed`)."""

    def __init__(self, path: str, compiler: str):
        self.path = path
        self.compiler = compiler
        self.entries: dict[str, Packed] = {}
        self.dirty = False
        try:
            got = read_regular(path)  # a regular file only: a FIFO would block every command
            data = marshal.loads(got[0]) if got else None  # (marshal.load(f) reads item by item: 10x slower)
            if (isinstance(data, tuple) and len(data) == 3 and data[0] == _FORMAT and data[1] == compiler
                    and isinstance(data[2], dict)):
                self.entries = data[2]
        except (OSError, EOFError, ValueError, TypeError):
            self.entries = {}

    def get(self, rel: str) -> Entry | None:
        """The entry of *rel*; None when it has none, or when the file held something else there
        (damaged: the source is re-hashed)."""
        packed = self.entries.get(rel)
        if packed is None or not well_formed(packed):
            return None
        return unpack_entry(rel, packed)

    def packed(self, rel: str) -> Packed | None:
        """The entry of *rel* as kept, unchecked (for :func:`veduta.cook.cook.fresh_by_stat`, which
        finds an entry of the wrong shape not fresh: the no-op path pays no check per source)."""
        return self.entries.get(rel)

    def set(self, rel: str, entry: Entry) -> None:
        packed = pack_entry(rel, entry)
        if self.entries.get(rel) != packed:
            self.entries[rel] = packed
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
        atomic_write(self.path, marshal.dumps((_FORMAT, self.compiler, self.entries)))
        self.dirty = False
