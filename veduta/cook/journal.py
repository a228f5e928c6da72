"""Edits of several sources that land as a set: all of them, or none (``veduta rename``).

Each file is written atomically (:func:`veduta.base.fsutil.atomic_write`), but a set of files is
not: a process killed between two writes would leave some files old and some new.  So a set
is written in three steps:

1. the *journal* (``cache/edits.journal``, :data:`JOURNAL`), one JSON document holding every
   file's bytes before and after, is written atomically and durably: until it is whole,
   nothing has been touched (a kill leaves every file old);
2. the files are written one by one (changed files, then new ones, then removed ones);
3. the journal is removed: the set is done.

A process killed during step 2 leaves the journal behind.  The next command that looks at
the game (every ``veduta`` command, ``doit cook``, ``veduta cook``) finds it and *completes* the
set before doing anything else (:func:`recover`): each file that still holds its old bytes is
written, each that already holds its new bytes is left, so that every file ends new.  A file
that holds neither (someone changed it since) is left as it is and named.  An error or
Ctrl-C during step 2 in the writing process itself puts back the files written so far
(every file ends old) and removes the journal.

A journal names only sources, by their paths under the assets folder, and one that leads out of
it through a symbolic link (a shared folder linked in) only with a *seal*: an HMAC-SHA256, keyed
by a secret of the user's that never lies in a game (:func:`_user_key`), of the path, the real
folder it leads to and that folder's inode, recorded by :func:`write_set`. A journal from a cloned
repository can write nothing else (:func:`_checked`): it cannot make the seal of a folder outside
the game without the key (an inode alone can be guessed: a file system's top folder has a fixed
one).

Writing a set, and recovering one, is done under the cook lock (:mod:`veduta.cook.runlock`),
so that a cook never reads a half-written set.  For tests, ``VEDUTA_TEST_PAUSE_EDITS=SECONDS``
makes step 2 say each write on standard error (``edits: wrote PATH``) and pause after it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from typing import Any

from veduta.cook.run import EDITS_JOURNAL

__all__ = ["JOURNAL", "Change", "EditSetError", "write_set", "recover", "pending", "waiting", "finish_edits"]

#: the journal's file name in the game's cache folder (a cook looks for it by this name)
JOURNAL = EDITS_JOURNAL
_FORMAT = "veduta-edits/1"
#: test hook: pause this many seconds after each file write (and say it on stderr)
PAUSE_ENV = "VEDUTA_TEST_PAUSE_EDITS"


@dataclass(frozen=True)
class Change:
    """One file of a set: *rel* under the assets folder, its bytes *old* before (None: it must
    not exist) and *new* after (None: it is removed); *mode*: the permission bits of a new
    file (None: as the umask allows)."""

    rel: str
    old: bytes | None
    new: bytes | None
    mode: int | None = None


class _Changed(Exception):
    """A file of the set no longer held its old bytes when its turn to be written came."""


class EditSetError(Exception):
    """A set could not be written; every file is as it was (the message says why)."""


def pending(cache: str) -> bool:
    """Whether an interrupted set waits in the cache folder *cache*."""
    return os.path.exists(os.path.join(cache, JOURNAL))


def waiting(cache: str) -> str | None:
    """What the interrupted set waiting in *cache* is (its ``what``, or "an edit" when the
    journal cannot be read), None when none waits.  Reads only: for a face that never writes."""
    import json

    try:
        raw = _read(os.path.join(cache, JOURNAL))
    except OSError:
        return "an edit" if pending(cache) else None
    if raw is None:
        return None
    try:
        what = json.loads(raw).get("what")
    except (ValueError, AttributeError):
        what = None
    return what if isinstance(what, str) else "an edit"


def _path(assets: str, rel: str) -> str:
    return os.path.join(assets, *rel.split("/"))


def _q(value: Any) -> str:
    from veduta.base.errors import quote

    return quote(value if isinstance(value, str) else repr(value))


def _checked(assets: str, rel: Any, mode: Any, seal: Any = None) -> dict[str, Any]:
    """*rel* and *mode* of a journal's entry, if they are what :func:`write_set` writes: the path
    of a source as the cook's scan names it (a kind's folder, plain names, none hidden, the kind's
    suffix) and permission bits.  Once symbolic links are followed, the path stays in the assets
    folder, or it leads out of it through a link (a shared library linked in) to a folder whose
    *seal* (:func:`_seal`) is the one :func:`write_set` recorded.  A journal comes from the cache
    folder, which a cloned repository may hold: anything else is refused (ValueError), so that no
    journal writes or removes a file but a source of the game, nor one outside the assets folder
    that the rename itself did not write."""
    from veduta.base.fsutil import outside
    from veduta.base.kinds import BY_FOLDER

    if not isinstance(rel, str) or not rel or "\0" in rel:
        raise ValueError(f"path {_q(rel)} is not a path under the assets folder")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts) or os.path.isabs(rel):
        raise ValueError(f"path {_q(rel)} is not a path under the assets folder")
    k = BY_FOLDER.get(parts[0])
    name = parts[-1]
    if k is None or len(parts) < 2 or any(p.startswith(".") for p in parts) or not name.endswith(k.suffix):
        raise ValueError(f"path {_q(rel)} is not a source's path")
    out = _outside(assets, rel)
    if out is not None:
        want = _seal(out, rel, create=False)
        if type(seal) is not str or want is None or not hmac.compare_digest(seal, want):
            raise ValueError(f"path {_q(rel)} leads out of the assets folder")
    if outside(_path(assets, rel)) is not None:  # (veduta mcp: nothing outside the game root)
        raise ValueError(f"path {_q(rel)} leads out of the game root")
    if mode is not None and (type(mode) is not int or not 0 <= mode <= 0o777):
        raise ValueError(f"mode {_q(mode)} of {_q(rel)} is not permission bits")
    return {"rel": rel, "mode": mode}


def _outside(assets: str, rel: str) -> tuple[str, int | None] | None:
    """Where source *rel* resolves, when a symbolic link on its way leads out of the assets folder:
    ``(its real folder, that folder's inode)`` (None when the folder is not there); None when it
    stays in.  Both are sealed into the journal's entry (:func:`_seal`): the inode stays the same
    across a restart (the device number of a network share or a container's folder may not)."""
    root = os.path.realpath(assets)
    real = os.path.realpath(_path(assets, rel))
    if os.path.commonpath([root, real]) == root and real != root:
        return None
    where = os.path.dirname(real)
    try:
        return where, os.stat(where).st_ino
    except OSError:
        return where, None


#: the environment variable naming the folder of the user's journal key (default: the XDG state
#: folder, ``$XDG_STATE_HOME/veduta`` or ``~/.local/state/veduta``)
KEY_DIR_ENV = "VEDUTA_STATE_DIR"


def _user_key(create: bool) -> bytes | None:
    """The user's secret that seals a journal's paths out of the assets folder: 32 random bytes in
    ``journal.key`` of :data:`KEY_DIR_ENV`'s folder (mode 0600, made on first need when *create*);
    None when there is none (or it cannot be read: nothing is sealed, nothing out of the assets
    folder is completed). It lies outside every game, so a cloned repository cannot hold it."""
    base = os.environ.get(KEY_DIR_ENV) or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state"), "veduta"
    )
    path = os.path.join(base, "journal.key")
    for _ in range(2):
        try:
            with open(path, "rb") as f:
                key = f.read(64)
            return key if len(key) == 32 else None
        except FileNotFoundError:
            if not create:
                return None
        except OSError:
            return None
        try:
            os.makedirs(base, mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue  # (made meanwhile by another process: read it)
        except OSError:
            return None
        try:
            os.write(fd, os.urandom(32))
            os.fsync(fd)
        finally:
            os.close(fd)
    return None


def _seal(out: tuple[str, int | None], rel: str, create: bool) -> str | None:
    """The seal of source *rel* leading out of the assets folder to *out* (:func:`_outside`):
    HMAC-SHA256 with the user's key of the path, the real folder and its inode; None without a
    key or when the folder is not there."""
    where, inode = out
    key = _user_key(create)
    if key is None or inode is None:
        return None
    msg = "\0".join((rel, where, str(inode))).encode("utf-8", "surrogateescape")
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


def _read(path: str) -> bytes | None:
    from veduta.base.fsutil import read_regular

    got = read_regular(path)
    return None if got is None else got[0]


def _text(data: bytes | None) -> str | None:
    # any bytes survive JSON this way (ensure_ascii writes a lone surrogate as \\udcxx)
    return None if data is None else data.decode("utf-8", "surrogateescape")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogateescape")


def _put(assets: str, change: Change, data: bytes | None) -> None:
    """Make the file of *change* hold *data* (None: no file), atomically."""
    from veduta.base.fsutil import atomic_write, rewrite_source

    path = _path(assets, change.rel)
    if data is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    elif os.path.lexists(path):
        rewrite_source(path, data)
    else:
        atomic_write(path, data, durable=True, mode=change.mode)


def _pause(rel: str) -> None:
    wait = os.environ.get(PAUSE_ENV)
    if not wait:
        return
    import sys
    import time

    sys.stderr.write(f"edits: wrote {rel}\n")
    sys.stderr.flush()
    time.sleep(float(wait))


def _order(changes: list[Change]) -> list[Change]:
    """Changed files first, then new files, then removed ones: a kill leaves no reference to a
    file that is not there yet, and the old file goes last."""
    return (
        [c for c in changes if c.old is not None and c.new is not None]
        + [c for c in changes if c.old is None]
        + [c for c in changes if c.new is None]
    )


def write_set(assets: str, cache: str, changes: list[Change], what: str) -> None:
    """Write *changes* (files under the folder *assets*) as one set, with the journal in *cache*;
    *what* says what the set is (``rename material bark wood``), for the messages of a
    recovery.  The caller holds the cook lock.  :class:`EditSetError` when a file is no longer
    what the caller read (nothing written) or a write failed (every file put back)."""
    import json

    from veduta.base.fsutil import atomic_write

    changes = _order(changes)
    entries = []
    for c in changes:
        entry = {"path": c.rel, "old": _text(c.old), "new": _text(c.new), "mode": c.mode}
        out = _outside(assets, c.rel)
        if out is not None:  # (a source linked in from outside: recover takes it by its seal)
            seal = _seal(out, c.rel, create=True)
            if seal is None:
                raise EditSetError(
                    f"{_path(assets, c.rel)} leads out of the assets folder, and the key that lets an "
                    "interrupted write of it be completed cannot be made (set VEDUTA_STATE_DIR to a "
                    "folder of yours); nothing was written"
                )
            entry["seal"] = seal
        try:  # what recover would refuse is never written: every journal written can be completed
            _checked(assets, c.rel, c.mode, entry.get("seal"))
        except ValueError as exc:
            raise EditSetError(f"{exc}; nothing was written") from None
        entries.append(entry)
        if _read(_path(assets, c.rel)) != c.old:
            raise EditSetError(
                f"{_path(assets, c.rel)} changed while the edit was prepared; nothing was written (run it again)"
            )
    journal = os.path.join(cache, JOURNAL)
    doc = {"format": _FORMAT, "what": what, "changes": entries}
    try:
        atomic_write(journal, json.dumps(doc, indent=1).encode("ascii"), durable=True)
    except OSError as exc:
        raise EditSetError(f"cannot write the journal {journal}: {exc.strerror or exc}; nothing was written") from None
    done: list[Change] = []
    kept: list[str] = []
    try:
        for c in changes:
            if _read(_path(assets, c.rel)) != c.old:  # saved by someone while the set was written
                raise _Changed(_path(assets, c.rel))
            _put(assets, c, c.new)
            done.append(c)
            _pause(c.rel)
    except BaseException as exc:  # an error or Ctrl-C: put back what was written, then say why
        try:
            for c in reversed(done):
                if _read(_path(assets, c.rel)) == c.new:
                    _put(assets, c, c.old)
                else:  # changed since it was written: the user's edit stays
                    kept.append(_path(assets, c.rel))
        except OSError:
            raise EditSetError(
                f"writing {what} failed ({exc}) and so did putting the files back; the next "
                f"veduta command completes it from {journal}"
            ) from None
        os.unlink(journal)
        also = f" ({', '.join(kept)} changed since it was written, and keeps that change)" if kept else ""
        if isinstance(exc, _Changed):
            raise EditSetError(
                f"{exc} changed while {what} was being written, and keeps that change; every file "
                f"was put back as it was{also} (run it again)"
            ) from None
        if isinstance(exc, OSError):
            raise EditSetError(
                f"cannot write {getattr(exc, 'filename', '') or 'a file'}: "
                f"{exc.strerror or exc}; every file was put back as it was{also}"
            ) from None
        raise
    os.unlink(journal)


def recover(assets: str, cache: str) -> dict[str, Any] | None:
    """Complete the set an interrupted :func:`write_set` left in *cache*, if any (the caller holds
    the cook lock): ``{"what", "journal", "completed": [paths written now], "done": [paths that
    were new already], "conflicts": [paths changed since, left as they are]}``, or None when
    there was none.  The journal is removed; one that cannot be read is kept aside as
    ``edits.journal.bad`` (and said)."""
    import json

    journal = os.path.join(cache, JOURNAL)
    raw = _read(journal)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        if doc.get("format") != _FORMAT:
            raise ValueError(f"format {doc.get('format')!r}")
        changes = [
            Change(
                **_checked(assets, c["path"], c.get("mode"), c.get("seal")),
                old=_bytes(c["old"]),
                new=_bytes(c["new"]),
            )
            for c in doc["changes"]
        ]
        what = str(doc.get("what", "an edit"))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        os.replace(journal, journal + ".bad")
        return {
            "what": "an edit",
            "journal": journal,
            "completed": [],
            "done": [],
            "conflicts": [],
            "error": f"{journal} cannot be read ({exc}); kept as {journal}.bad",
        }
    out: dict[str, Any] = {"what": what, "journal": journal, "completed": [], "done": [], "conflicts": []}
    for c in changes:
        path = _path(assets, c.rel)
        now = _read(path)
        if now == c.new:
            out["done"].append(path)
        elif now == c.old:
            _put(assets, c, c.new)
            out["completed"].append(path)
        else:
            out["conflicts"].append(path)
    os.unlink(journal)
    return out


def describe(found: dict[str, Any]) -> str:
    """The lines a command prints about a recovery (:func:`recover`'s result)."""
    if found.get("error"):
        return f"veduta: warning: {found['error']}\n"
    n = len(found["completed"]) + len(found["done"])
    text = (
        f"veduta: completed an interrupted {found['what']} ({len(found['completed'])} of {n} file"
        f"{'s' if n != 1 else ''} written now)\n"
    )
    for path in found["conflicts"]:
        text += f"veduta: warning: {path} changed since the {found['what']} began; left as it is\n"
    return text


def finish_edits(project, locked: bool = True) -> dict[str, Any] | None:
    """Complete an interrupted set of *project* (a :class:`veduta.base.project.Project`), if any,
    saying so on standard error; *locked*: the caller holds the cook lock (else it is taken
    here).  Returns :func:`recover`'s result.  A file that cannot be written leaves the journal
    for the next command, with a warning."""
    import sys

    if not pending(project.cache):
        return None
    handle = None
    if not locked:
        from veduta.cook import runlock

        handle = runlock.acquire(project.cache)
    try:
        found = recover(project.assets, project.cache)
    except OSError as exc:
        where = getattr(exc, "filename", "") or os.path.join(project.cache, JOURNAL)
        sys.stderr.write(
            f"veduta: warning: cannot complete the interrupted edits: {where}: {exc.strerror or exc}; "
            f"the next command tries again\n"
        )
        return None
    finally:
        if handle is not None:
            from veduta.cook import runlock

            runlock.release(handle)
    if found:
        sys.stderr.write(describe(found))
    return found
