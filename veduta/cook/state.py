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

The cache also holds what META must not (container-vda.md fixes META byte for byte): the
toolchain that wrote it (:data:`veduta.TOOLCHAIN`: the spec's compiler version and veduta's own
rules), so that the sources an earlier toolchain cooked are *owed* a cook after an upgrade even
when their META still matches; and each source's *notes* from its last compile: the warnings it
gave (shown again by ``veduta check`` and counted by a no-op cook) and the references its output
keeps by name only (a model's materials), whose appearing or disappearing makes it stale.
"""

from __future__ import annotations

import marshal
import os
import struct
from bisect import bisect_left
from itertools import repeat

from veduta.base.fsutil import atomic_write, loads_kept, read_regular

RACY_NS = 2_000_000_000
_FORMAT = "veduta-state/6"
#: the format before, read as this one (same entries; the next save writes the new one)
_PACKED_DICT = "veduta-state/5"
#: the formats of earlier toolchains whose sources are owed a cook (their rules may differ)
_EARLIER = ("veduta-state/4",)

Sig = tuple[int, int, int, int] | None


def sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


#: An entry: (source_hash, cooked file sig, ((path, sig), ...), notes) with the source
#: first and paths relative to the assets folder; a sig is (size, mtime_ns,
#: inode, ctime_ns), () for a file that was missing, None when racy.  *notes* (see
#: :data:`Notes`) may be left out (unknown).
Entry = tuple

#: What the last compile of a source found besides its output: ``(watch, warnings)``, *watch* the
#: references its output keeps by name only (:attr:`veduta.compile.CompileContext.watch`),
#: *warnings* its warnings as ``(line, col, json path, message, code)``; ``()`` when it found
#: neither, None when unknown (the output was found fresh or restored without a record of them).
Notes = tuple | None
#: no watched reference, no warning
CLEAN: tuple = ()


def make_notes(watch, warnings) -> tuple:
    """The notes of a compile: *watch* a set of strings, *warnings* Diagnostic objects."""
    if not watch and not warnings:
        return CLEAN
    return (tuple(sorted(watch)), tuple((d.line, d.col, d.path, d.message, d.code) for d in warnings))


def mask_racy(s, now_ns: int):
    """A signature as the cache may keep it: None when it was taken less than RACY_NS
    after the file's mtime or ctime (*now_ns*: when it was taken, or earlier)."""
    if not s:
        return s
    return None if now_ns - max(s[1], s[3]) < RACY_NS else s


def make_entry(source_hash: str, cooked_sig, files, now_ns: int, notes: Notes = None) -> Entry:
    """An entry from current signatures (racy ones masked)."""
    return (source_hash, mask_racy(cooked_sig, now_ns), tuple((p, mask_racy(s, now_ns)) for p, s in files), notes)


def entry_from_json(v) -> Entry:
    """An entry that travelled through JSON (doit's values) back to tuples."""
    h, csig, files = v[:3]
    notes = v[3] if len(v) > 3 else None
    if notes:
        notes = (tuple(notes[0]), tuple(tuple(w) for w in notes[1]))
    elif notes is not None:
        notes = CLEAN
    return (
        h,
        None if csig is None else tuple(csig),
        tuple((p, None if s is None else tuple(s)) for p, s in files),
        notes,
    )


#: How the cache holds an entry of source *rel* (in memory and in its file): (source_hash,
#: the signatures of the cooked file, the source and each dependency packed as 32 bytes each
#: (:data:`SIG`; :data:`RACY` for None, :data:`MISSING` for ()), the dependency paths), then
#: its notes: nothing more when they are clean (most sources), ``None`` when unknown, else
#: ``watch, warnings``.  A no-op cook loads one entry per source: three objects, where (hash,
#: sig tuple, ((path, sig tuple), ...)) took sixteen (loading them was a tenth of a no-op at
#: 50,000 sources).
Packed = tuple

#: A signature packed: size, mtime_ns, inode, ctime_ns.
SIG = struct.Struct("<qqQq")
#: Two signatures packed (a cooked file's and its source's: the common entry's whole blob, one
#: call and one object where two packs and a join took three).
SIG2 = struct.Struct("<" + SIG.format[1:] * 2)
#: The packed "racy" signature (never matches: no file has a negative size).
RACY = SIG.pack(-1, 0, 0, 0)
#: The packed "missing" signature.
MISSING = SIG.pack(-2, 0, 0, 0)


def pack_entry(rel: str, entry: Entry) -> Packed:
    """*entry* of source *rel* as the cache holds it (its first file must be *rel*)."""
    h, csig, files = entry[:3]
    notes = entry[3] if len(entry) > 3 else None
    if not files or files[0][0] != rel:
        raise ValueError(f"the first file of the stat-cache entry of {rel} is not {rel}")
    sigs = [csig, *(s for _, s in files)]
    packed = (
        h,
        b"".join(RACY if s is None else MISSING if s == () else SIG.pack(*s) for s in sigs),
        tuple(p for p, _ in files[1:]),
    )
    return packed + ((None,) if notes is None else notes)


def unpack_entry(rel: str, packed: Packed) -> Entry:
    """The entry of source *rel* from its :data:`Packed` form."""
    h, blob, deps = packed[:3]
    sigs = [
        None if b == RACY else () if b == MISSING else SIG.unpack(b)
        for b in (blob[i : i + SIG.size] for i in range(0, len(blob), SIG.size))
    ]
    return (h, sigs[0], tuple(zip((rel, *deps), sigs[1:], strict=True)), packed_notes(packed))


def packed_notes(packed) -> Notes:
    """The notes of a packed entry (:data:`Notes`)."""
    n = len(packed)
    return CLEAN if n == 3 else None if n == 4 else (packed[3], packed[4])


def well_formed(packed) -> bool:
    """Whether *packed* has the shape of a :data:`Packed` entry: a damaged cache file can still
    be valid marshal data (a flipped byte in a length or a type code), and the users of an entry
    must never see a traceback for it.  (0.2-0.5 us an entry: checked where an entry is unpacked,
    not on the no-op path, where fresh_by_stat finds an entry of another shape not fresh by
    checking only what its signature comparisons leave open.)"""
    return (
        type(packed) is tuple
        and 3 <= len(packed) <= 5
        and type(packed[0]) is str
        and type(packed[1]) is bytes
        and type(packed[2]) is tuple
        and len(packed[1]) == SIG.size * (len(packed[2]) + 2)
        and all(type(p) is str for p in packed[2])
        and (len(packed) != 4 or packed[3] is None)
        and (len(packed) != 5 or notes_formed(packed[3], packed[4]))
    )


def notes_formed(watch, warnings) -> bool:
    """Whether *watch*, *warnings* have the shape of :data:`Notes` that are neither clean nor unknown."""
    return (
        type(watch) is tuple
        and all(type(w) is str for w in watch)
        and type(warnings) is tuple
        and all(
            type(w) is tuple
            and len(w) == 5
            and type(w[0]) is int
            and type(w[1]) is int
            and all(type(x) is str for x in w[2:])
            for w in warnings
        )
    )


class StatCache:
    """source path -> entry for one toolchain (:data:`veduta.TOOLCHAIN`), in one file in cache/
    (entries are kept packed, see :data:`Packed`).

    ``owed``: the sources an earlier toolchain cooked (the file named another toolchain, or was
    of an earlier format), which must be compiled again however fresh their META looks; kept in
    the file until each is cooked, so an interrupted cook still owes the rest.
    """

    def __init__(self, path: str, toolchain: str):
        self.path = path
        self.toolchain = toolchain
        #: rel -> Packed; None while the file's table (see :meth:`table`) has not been unpacked
        self._entries: dict[str, Packed] | None = {}
        #: as read from a file of this format: (rels joined by NUL, sorted; the table; the
        #: source_hashes, 64 characters each; the entries that are not in the table, by rel)
        self._compact: tuple[str, bytes, str, dict] | None = None
        self._rels: list[str] | None = None  # the rels of _compact, split when first needed
        #: entries set (or dropped: None) over the file's table since it was read
        self._over: dict[str, Packed | None] = {}
        self.owed: set[str] = set()
        self.dirty = False
        #: whether an entry was recorded since the file was read (what a check took reading and
        #: hashing to find; a dropped entry or owed source is found again by the next run alone)
        self.learned = False
        #: (size, mtime_ns, inode, ctime_ns) of the file as read (None: none read); the monitor's
        #: mark names the file it vouches for so (veduta/cook/monitor.py)
        self.file_sig: list[int] | None = None
        try:
            got = read_regular(path)  # a regular file only: a FIFO would block every command
            if got:
                st = got[1]
                self.file_sig = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
            data = loads_kept(got[0]) if got else None  # (marshal.load(f) reads item by item: 10x slower)
            if isinstance(data, tuple) and len(data) == 7 and data[0] == _FORMAT and _compact_formed(data):
                if data[1] == toolchain:
                    self._entries = None
                    self._compact = (data[2], data[3], data[4], data[5])
                    self.owed = {r for r in data[6] if type(r) is str}
                else:  # another toolchain's rules: what it cooked is owed a cook
                    rels = data[2].split("\0") if data[2] else []
                    self.owed = {r for r in (*rels, *data[5], *data[6]) if type(r) is str}
                    self.dirty = True
            elif (
                isinstance(data, tuple)
                and len(data) == 4
                and data[0] == _PACKED_DICT
                and isinstance(data[2], dict)
                and isinstance(data[3], tuple)
            ):
                if data[1] == toolchain:
                    self._entries = data[2]
                    self.owed = {r for r in data[3] if type(r) is str}
                    self.dirty = True  # (written anew in this format by the next cook's end)
                else:
                    self.owed = {r for r in (*data[2], *data[3]) if type(r) is str}
                    self.dirty = True
            elif isinstance(data, tuple) and len(data) == 3 and data[0] in _EARLIER and isinstance(data[2], dict):
                self.owed = {r for r in data[2] if type(r) is str}
                self.dirty = True
        except (OSError, EOFError, ValueError, TypeError):
            self._entries = {}
            self._compact = None
            self.owed = set()

    @property
    def entries(self) -> dict[str, Packed]:
        """rel -> :data:`Packed` entry (the file's table unpacked the first time it is asked)."""
        if self._entries is None:
            rels, table, hashes, rest = self._compact or ("", b"", "", {})
            keys = self._split()
            n = TABLE_ROW
            entries = dict(
                zip(
                    keys,
                    zip(
                        [hashes[i : i + 64] for i in range(0, 64 * len(keys), 64)],
                        [table[i : i + n] for i in range(0, n * len(keys), n)],
                        repeat(()),
                    ),
                )
            )
            entries.update(rest)
            for rel, packed in self._over.items():
                if packed is None:
                    entries.pop(rel, None)
                else:
                    entries[rel] = packed
            self._entries = entries
            self._compact = self._rels = None
            self._over = {}
        return self._entries

    def _split(self) -> list[str]:
        if self._rels is None:
            rels = self._compact[0] if self._compact else ""
            self._rels = rels.split("\0") if rels else []
        return self._rels

    def __len__(self) -> int:
        """How many entries there are (the table is not unpacked to count them)."""
        if self._entries is not None:
            return len(self._entries)
        if self._rels is not None:
            n = len(self._rels)
        else:  # (counted in the one string: 50,000 paths are not made to be counted)
            rels = self._compact[0] if self._compact else ""
            n = rels.count("\0") + 1 if rels else 0
        for rel, packed in self._over.items():
            had = self._from_file(rel) is not None
            n += (packed is not None) - had
        return n

    def table(self, rels: str) -> tuple[bytes, dict] | None:
        """When the file read holds an entry for exactly the sources *rels* (sorted, joined by
        NUL) and nothing has been unpacked or changed since: its table (one :data:`TABLE_ROW` of
        bytes per source in that order: the packed signatures of its cooked file and itself, for
        a source whose entry has nothing more, else a row no file matches) and the entries that
        are not in it, by rel.  Else None.  A no-op cook compares the whole table at once."""
        if self._entries is not None or self._compact is None or self._over or self._compact[0] != rels:
            return None
        return self._compact[1], self._compact[3]

    def get(self, rel: str) -> Entry | None:
        """The entry of *rel*; None when it has none, or when the file held something else there
        (damaged: the source is re-hashed)."""
        packed = self.packed(rel)
        if packed is None or not well_formed(packed):
            return None
        return unpack_entry(rel, packed)

    def packed(self, rel: str) -> Packed | None:
        """The entry of *rel* as kept, unchecked (for :func:`veduta.cook.cook.fresh_by_stat`, which
        finds an entry of the wrong shape not fresh: the no-op path pays no :func:`well_formed`).
        Read from the file's table without unpacking it."""
        if self._entries is not None:
            return self._entries.get(rel)
        if rel in self._over:
            return self._over[rel]
        return self._from_file(rel)

    def _from_file(self, rel: str) -> Packed | None:
        rels, table, hashes, rest = self._compact or ("", b"", "", {})
        got = rest.get(rel)
        if got is not None:
            return got
        i = self._row(rel)
        if i is None:
            return None
        return (hashes[64 * i : 64 * i + 64], table[TABLE_ROW * i : TABLE_ROW * i + TABLE_ROW], ())

    def _row(self, rel: str) -> int | None:
        """The row of *rel* in the file's table (None: it has none)."""
        keys = self._split()
        i = bisect_left(keys, rel)
        return i if i < len(keys) and keys[i] == rel else None

    def _put(self, rel: str, packed: Packed | None) -> None:
        """*rel*'s entry is now *packed* (None: dropped): in the dict, or over the file's table."""
        if self._entries is not None:
            if packed is None:
                self._entries.pop(rel, None)
            else:
                self._entries[rel] = packed
        elif packed is None and self._row(rel) is None:
            self._over.pop(rel, None)  # (never in the file: nothing to drop there)
        else:
            self._over[rel] = packed

    def set(self, rel: str, entry: Entry) -> None:
        """Record *entry* for *rel* (made by this toolchain: no longer owed).  Unknown notes keep
        the notes of the entry there was for the same source_hash (a touched file, a cooked file
        found fresh), else are recorded as unknown."""
        old = self.packed(rel)
        if len(entry) < 4 or entry[3] is None:
            if old is not None and well_formed(old) and old[0] == entry[0]:
                entry = (*entry[:3], packed_notes(old))
        packed = pack_entry(rel, entry)
        if old != packed:
            self._put(rel, packed)
            self.dirty = self.learned = True
        if rel in self.owed:
            self.owed.discard(rel)
            self.dirty = True

    def notes(self, rel: str) -> Notes:
        """The notes of *rel*'s entry (None when unknown or when it has no entry)."""
        packed = self.packed(rel)
        return None if packed is None or not well_formed(packed) else packed_notes(packed)

    def discard(self, rel: str) -> None:
        if self.packed(rel) is not None:
            self._put(rel, None)
            self.dirty = True
        if rel in self.owed:
            self.owed.discard(rel)
            self.dirty = True

    def keep_only(self, rels) -> None:
        keep = set(rels)
        for rel in [r for r in self.entries if r not in keep]:
            del self.entries[rel]
            self.dirty = True
        if not self.owed <= keep:
            self.owed &= keep
            self.dirty = True

    def rels(self):
        """The sources with an entry (an iterator: nothing is unpacked until it is iterated)."""
        yield from self.entries

    def save(self) -> None:
        if not self.dirty:
            return
        patched = self._patched()
        data = patched if patched is not None else _compact_file(self.toolchain, self.entries, self.owed)
        atomic_write(self.path, marshal.dumps(data))
        self.dirty = self.learned = False

    def _patched(self) -> tuple | None:
        """The file's tuple with this run's changes written over the rows of the sources they
        concern, when each of them has a row and keeps an entry (one edited source: its row, not
        100,000 entries packed again); None otherwise (then made from every entry)."""
        if self._entries is not None or self._compact is None:
            return None
        rels, table, hashes, rest = self._compact
        rows = {}
        for rel, packed in self._over.items():
            i = self._row(rel)
            if i is None or packed is None:
                return None
            rows[i] = (rel, packed)
        if not rows:
            return (_FORMAT, self.toolchain, rels, table, hashes, rest, tuple(sorted(self.owed)))
        new_table = bytearray(table)
        parts, at = [], 0
        rest = dict(rest)
        for i in sorted(rows):
            rel, packed = rows[i]
            if _in_table(packed):
                row, digest = packed[1], packed[0]
                rest.pop(rel, None)
            else:
                row, digest = _NOT_IN_TABLE, " " * 64
                rest[rel] = packed
            new_table[TABLE_ROW * i : TABLE_ROW * (i + 1)] = row
            parts += [hashes[at : 64 * i], digest]
            at = 64 * (i + 1)
        parts.append(hashes[at:])
        rest = dict(sorted(rest.items()))
        return (_FORMAT, self.toolchain, rels, bytes(new_table), "".join(parts), rest, tuple(sorted(self.owed)))


#: A row of the state file's table: the packed signatures of a source's cooked file and of the
#: source (:data:`SIG2`), for an entry that holds nothing more (no dependency, clean notes).
TABLE_ROW = 2 * SIG.size
#: The row of an entry kept whole beside the table (never matches: see :data:`RACY`).
_NOT_IN_TABLE = RACY * 2


def _in_table(packed) -> bool:
    return (
        type(packed) is tuple
        and len(packed) == 3
        and packed[2] == ()
        and type(packed[0]) is str
        and len(packed[0]) == 64
        and packed[0].isascii()
        and type(packed[1]) is bytes
        and len(packed[1]) == TABLE_ROW
    )


def _compact_file(toolchain: str, entries: dict, owed: set[str]) -> tuple:
    """The state file's tuple: format, toolchain, every rel sorted and joined by NUL, the table
    (one row per rel), the source_hashes (64 characters per rel: the table's, or 64 spaces), the
    other entries by rel (a dependency, notes, or anything odd), the owed sources.  Loading it
    makes six objects, where a dict of entries made four per source (at 100,000 sources that was
    0.08 s of a no-op)."""
    rels = sorted(r for r in entries if type(r) is str and "\0" not in r and r)
    rows, hashes, rest = [], [], {}
    for rel in rels:
        packed = entries[rel]
        if _in_table(packed):
            rows.append(packed[1])
            hashes.append(packed[0])
        else:
            rows.append(_NOT_IN_TABLE)
            hashes.append(" " * 64)
            rest[rel] = packed
    return (_FORMAT, toolchain, "\0".join(rels), b"".join(rows), "".join(hashes), rest, tuple(sorted(owed)))


def _compact_formed(data: tuple) -> bool:
    """Whether a state file's tuple has the shape :func:`_compact_file` gives it (a damaged file
    can still be valid marshal data): every entry it holds is then at least looked up safely."""
    _, toolchain, rels, table, hashes, rest, owed = data
    if not (
        type(toolchain) is str
        and type(rels) is str
        and type(table) is bytes
        and type(hashes) is str
        and type(rest) is dict
        and type(owed) is tuple
    ):
        return False
    n = rels.count("\0") + 1 if rels else 0
    if len(table) != TABLE_ROW * n or len(hashes) != 64 * n:
        return False
    return not rest or set(rest) <= set(rels.split("\0"))  # (each kept whole has its row)
