"""Folder listings kept between cooks: a folder whose signature has not changed lists the same.

Making, removing or renaming an entry of a folder moves the folder's mtime and ctime (POSIX), so
a folder whose (device, inode, mtime_ns, ctime_ns) is what it was when it was last listed holds
the same entries; what the files hold is the stat cache's business (``veduta/cook/state.py``).
A no-op cook then lists only the folders that changed: at 100,000 sources the scan was a sixth
of a no-op.  The same goes for the cooked folders' orphan sweep: a cooked folder that has not
changed since a sweep found nothing stray, while the sources are the same ones, still has
nothing stray.

Where this could be wrong, the folder is listed: a signature taken less than ``RACY_NS`` after the
folder changed (an entry made in the same timestamp tick would not move it) is never matched; a
folder that holds a symbolic link (whose target may change kind without the folder changing) or a
FIFO, socket or device named like a source, that cannot be read, or any oddity
:func:`veduta.base.project._walk` has words for, makes its whole kind folder scanned the ordinary
way; and under ``veduta mcp``'s confinement nothing is cached. The file (``cache/scan.marshal``) is
written by a cook, read by any run; a damaged or unknown one is ignored.
"""

from __future__ import annotations

import marshal
import os
import time

from veduta.base.fsutil import atomic_write, confined_root, loads_kept, read_regular
from veduta.base.project import _walk
from veduta.cook.state import RACY_NS

FILE = "scan.marshal"
_FORMAT = "veduta-scan/2"


def _sig(st: os.stat_result, now: int):
    """The signature a listing is kept under; None (never matches) when racy at *now*."""
    if now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


class ScanCache:
    """The kept listings of one game (see the module's doc)."""

    def __init__(self, cache_folder: str):
        self.path = os.path.join(cache_folder, FILE)
        #: folder path -> (signature, files ending in the kind's suffix joined by NUL, sub-folders),
        #: names sorted
        self.old: dict = {}
        self.new: dict = {}
        #: cooked folder path -> signature, of the folders a sweep found nothing stray in
        self.cooked_old: dict = {}
        self.cooked_new: dict = {}
        self._sweep_at = 0  # (when cooked_signatures took its signatures)
        try:
            got = read_regular(self.path)
            data = loads_kept(got[0]) if got else None
        except (OSError, EOFError, ValueError, TypeError):
            data = None
        if (
            isinstance(data, tuple)
            and len(data) == 3
            and data[0] == _FORMAT
            and isinstance(data[1], dict)
            and isinstance(data[2], dict)
        ):
            self.old, self.cooked_old = data[1], data[2]

    def walk(
        self,
        top: str,
        suffix: str,
        problems: list[str] | None = None,
        warnings: list[str] | None = None,
        confined: bool = False,
    ) -> list[str]:
        """What :func:`veduta.base.project._walk` answers (its arguments), from the kept listing
        of every folder under *top* whose signature is unchanged."""
        if (confined and confined_root() is not None) or os.path.islink(top):
            return _walk(top, suffix, problems, warnings, confined)
        now = time.time_ns()
        out: list[str] = []
        seen: dict = {}
        stack = [("", top)]
        old = self.old
        while stack:
            prefix, d = stack.pop()
            try:
                st = os.stat(d)
            except FileNotFoundError:
                if d == top:
                    return []
                continue  # (gone since its parent was listed: _walk skips it too)
            except OSError:
                return _walk(top, suffix, problems, warnings, confined)
            rec = old.get(d)
            sig = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            if type(rec) is tuple and len(rec) == 3 and rec[0] == sig and type(rec[1]) is str:
                files, subdirs = rec[1].split("\0") if rec[1] else (), rec[2]
            else:
                files, subdirs = [], []
                try:
                    with os.scandir(d) as it:
                        for e in it:
                            name = e.name
                            if name.startswith("."):
                                continue
                            if e.is_symlink():
                                return _walk(top, suffix, problems, warnings, confined)
                            if e.is_dir(follow_symlinks=False):
                                subdirs.append(name)
                            elif name.endswith(suffix) and len(name) > len(suffix):
                                if not e.is_file(follow_symlinks=False):  # a FIFO, socket or device: said
                                    return _walk(top, suffix, problems, warnings, confined)
                                files.append(name)
                except OSError:
                    return _walk(top, suffix, problems, warnings, confined)
                files.sort()
                subdirs.sort()
                # (the names as one string: a hundred strings load faster than 100,000)
                rec = (_sig(st, now), "\0".join(files), tuple(subdirs))
            seen[d] = rec
            if prefix:
                out += [prefix + f for f in files]
            else:
                out += files
            stack += [(prefix + s + "/", os.path.join(d, s)) for s in subdirs]
        self.new.update(seen)
        out.sort()
        return out

    # the orphan sweep of the cooked folders
    def cooked_clean(self, folders: list[str]) -> bool:
        """Whether every folder of *folders* (missing ones aside), and every folder under them a
        sweep listed, is as it was when a sweep found nothing stray in it (the caller knows the
        sources are the same ones).  A folder made or removed under one changes its parent."""
        now = time.time_ns()
        under = tuple(d + os.sep for d in folders)
        kept = {d: s for d, s in self.cooked_old.items() if d in folders or d.startswith(under)}
        for d in (*folders, *(d for d in kept if d not in folders)):
            try:
                st = os.lstat(d) if d not in folders else os.stat(d)
            except FileNotFoundError:
                continue
            except OSError:
                return False
            sig = _sig(st, now)
            if sig is None or kept.get(d) != sig:
                return False
        self.cooked_new = kept
        return True

    def cooked_signatures(self, folders: list[str]) -> dict:
        """The signatures of *folders*, taken before a sweep lists them (None where racy)."""
        self._sweep_at = now = time.time_ns()
        out = {}
        for d in folders:
            try:
                out[d] = _sig(os.stat(d), now)
            except OSError:
                out[d] = None
        return out

    def swept(self, sigs: dict, clean: bool, subs: dict | None = None) -> None:
        """A sweep of the folders of *sigs* (taken before it) found nothing stray (*clean*);
        *subs*: the stat of each folder under them, taken before the sweep listed it (their
        signatures are judged racy from the time of *sigs*, earlier: never less strict)."""
        sigs = dict(sigs)
        for d, st in (subs or {}).items():
            sigs[d] = _sig(st, self._sweep_at)
            clean = clean and sigs[d] is not None  # (one left out would never be looked at)
        self.cooked_new = {d: s for d, s in sigs.items() if s is not None} if clean else {}

    def save(self) -> None:
        if self.new == self.old and self.cooked_new == self.cooked_old:
            return
        try:
            atomic_write(self.path, marshal.dumps((_FORMAT, self.new, self.cooked_new)))
        except OSError:
            pass  # (the next cook lists every folder)


__all__ = ["ScanCache", "FILE"]
