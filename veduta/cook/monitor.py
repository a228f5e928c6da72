"""The file-system monitor: a journal of changed paths that lets a no-op cook stat nothing.

``veduta watch --monitor`` runs :func:`run_monitor`: it watches the assets folder, the cooked
folder and its own cookie folder with Linux's inotify (through ctypes: no dependency) and
appends one line per changed path to ``<cache>/monitor/journal``.  A cook that can prove the
journal current (:func:`sync`) trusts every source none of whose files (the source, what it
read, its cooked file) the journal names since the last complete cook, without a ``stat()``;
everything else is checked as without a monitor.  As git's fsmonitor with watchman, the proof
is a *cookie*: the cook creates a file in the cookie folder and waits until the monitor has
journaled it; inotify reports the events of one instance in the order they happened, so every
change made before the cookie is in the journal above it.

The journal (text, one event a line; paths relative to the assets or the cooked folder):

- ``veduta-monitor/1 <id>``: the first line; *id* is new at every start of a monitor;
- ``a <rel>``: a file under the assets folder was written, or its attributes changed;
- ``n <rel>``: a file under the assets folder was made, removed or renamed (either name);
- ``k <rel>``: a file under the cooked folder changed in any way;
- ``D``: a folder was made, removed or renamed, or a link was made (a cook then checks all);
- ``o``: the monitor may have missed something (inotify's queue overflowed, a path it cannot
  write on one line, a symbolic link in the watched folders): a cook then checks every source;
- ``c <name>``: a cook's cookie; before it, an ``a`` line for every file under the assets folder
  with more than one name (a hard link: a write through another name is reported under that
  name, or under none when it is outside the watched folders), so every cook checks those.

Why it stays correct (docs/cooking.md, "The file-system monitor"): a cook trusts the journal
only from the *mark* that the last complete cook (every source fresh or cooked, nothing failed,
the whole group run) left in ``<cache>/monitor/mark.json``: the monitor's id, the journal offset
of that cook's cookie and the signature of the stat cache it saved.  A monitor that is absent,
killed (its pid gone), hung (no answer to the cookie in :data:`SYNC_TIMEOUT_S`), restarted (a new
id) or that overflowed means a cook that checks every source by its signatures, as without a
monitor, and leaves a new mark for the next one.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import struct
import sys
import time
from dataclasses import dataclass, field

from veduta.cook.run import MONITOR_FOLDER

FORMAT = "veduta-monitor/1"
#: the monitor's folder under the cache folder (named in veduta/cook/run.py: a cook looks for it
#: without importing this module)
FOLDER = MONITOR_FOLDER
STATE = "state.json"
#: the file a running monitor holds an exclusive flock on for its whole life (its pid inside)
LOCK = "lock"
JOURNAL = "journal"
MARK = "mark.json"
COOKIES = "cookies"
#: how long a cook waits for a running monitor to journal its cookie before checking everything
SYNC_TIMEOUT_S = 2.0
#: a journal grown past this starts again under a new id (the next cook checks every source once)
MAX_JOURNAL = 64 << 20
#: at most this many files with more than one name (hard links) are named before each cookie;
#: more, and the journal says ``o`` there instead (the cook checks every source)
MAX_LINKED = 4096

# inotify(7)
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x4000, 0x8000, 0x1000000, 0x2000000, 0x40000000
IN_CLOEXEC = 0o2000000
_CONTENT = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE
_NAMES = IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_MASK = _CONTENT | _NAMES | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW
_EVENT = struct.Struct("iIII")


class MonitorUnavailable(Exception):
    """This system offers no inotify (not Linux): there is no monitor, cooks check every source."""


#: why a monitor with a symbolic link in its folders is not trusted
LINK = "a symbolic link is in the watched folders"


def folder_of(cache: str) -> str:
    return os.path.join(cache, FOLDER)


class MonitorRunning(Exception):
    """Another monitor of this game holds the lock; *pid* is its process id (None: not said)."""

    def __init__(self, pid: int | None) -> None:
        super().__init__(pid)
        self.pid = pid


def hold_lock(cache: str) -> int:
    """Take the one-monitor-per-game lock: an exclusive ``flock`` on ``<cache>/monitor/lock``,
    held by the descriptor returned (closed when the monitor ends, or by the kernel when it
    dies), with this process's pid written inside.  Two monitors started at the same moment:
    one gets it, the other :class:`MonitorRunning` with the first one's pid."""
    import fcntl

    where = folder_of(cache)
    os.makedirs(where, exist_ok=True)
    fd = os.open(os.path.join(where, LOCK), os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            os.close(fd)
            raise
        pid = None
        end = time.monotonic() + 1.0  # (the holder writes its pid just after it took the lock)
        while pid is None and time.monotonic() < end:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            pid = int(text) if text.isdigit() else None
            if pid is None:
                time.sleep(0.01)
        os.close(fd)
        raise MonitorRunning(pid) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _shown(path: str) -> str:
    """*path* as said to the user: relative to the current folder when under it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


# -- the cook's side --------------------------------------------------------------------------


@dataclass
class Sync:
    """What a cook learnt from a running monitor: its *id* and the journal *offset* just after
    the cook's cookie; *changed* the journal lines since the last complete cook's mark (None
    when there is no usable mark: every source is checked)."""

    id: str
    offset: int
    #: the folders of the cook (:func:`folders`): the monitor's, or it would not have answered
    where: list[str] = field(default_factory=list)
    changed: Changes | None = None
    #: the last complete cook found no stray or temp file in the cooked folder
    cooked_clean: bool = False


@dataclass
class Changes:
    """The journal since a mark: files written (``a``), names made or removed (``n``) under the
    assets folder, and cooked files touched (``k``), as paths relative to their folders."""

    written: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)
    cooked: set[str] = field(default_factory=set)

    @property
    def assets(self) -> set[str]:
        return self.written | self.named


def _read_json(path: str):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read(1 << 16))
    except (OSError, ValueError):
        return None


def _alive(pid) -> bool:
    if type(pid) is not int or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (EPERM: it exists, as another user's)
        return True
    return True


def folders(root: str, assets: str, cooked: str) -> list[str]:
    """The game's root, assets and cooked folders as real paths: a monitor's state and a cook's
    mark name them, and a cook of other folders (another checkout sharing the cache folder, or
    ``[tool.veduta]`` ``assets``/``cooked`` changed) trusts neither."""
    return [os.path.realpath(root), os.path.realpath(assets), os.path.realpath(cooked)]


def state_signature(path: str) -> list[int] | None:
    """The stat cache file's (size, mtime_ns, inode, ctime_ns): a mark holds it, so that a stat
    cache written since by anything else voids the mark."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


def sync(cache: str, state_sig: list[int] | None, game: list[str], timeout: float = SYNC_TIMEOUT_S) -> Sync | None:
    """Ask the running monitor of the game whose cache folder is *cache* for the changes since
    the last complete cook, whose stat cache file had signature *state_sig* (as this cook read
    it: :func:`state_signature`); *game* is the cook's folders (:func:`folders`).  None when no
    monitor runs, when it watches other folders than *game* (or it does not answer in
    *timeout*: a warning says so).  Removes the mark: a cook that does not complete leaves none."""
    where = folder_of(cache)
    mark = _read_json(os.path.join(where, MARK))
    try:
        os.unlink(os.path.join(where, MARK))
    except OSError:
        pass
    state = _read_json(os.path.join(where, STATE))
    if not isinstance(state, dict) or state.get("format") != FORMAT or not _alive(state.get("pid")):
        return None
    ident = state.get("id")
    if type(ident) is not str or state.get("folders") != game:
        return None  # (another game's folders: its journal says nothing of this one's)
    journal = os.path.join(where, JOURNAL)
    try:
        fd = os.open(journal, os.O_RDONLY)
    except OSError:
        return None
    try:
        head = os.pread(fd, 200, 0).split(b"\n", 1)[0].decode("ascii", "replace")
        if head != f"{FORMAT} {ident}":
            return None
        start = os.fstat(fd).st_size
        cookie = f"c-{os.getpid()}-{time.monotonic_ns()}"
        cookie_path = os.path.join(where, COOKIES, cookie)
        try:
            os.close(os.open(cookie_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except OSError:
            return None
        try:
            end = _await_cookie(fd, start, f"c {cookie}\n".encode(), timeout)
        finally:
            try:
                os.unlink(cookie_path)
            except OSError:
                pass
        if end is None:
            sys.stderr.write(
                f"veduta: warning: the file-system monitor ({where}, pid {state.get('pid')}) did not "
                f"answer in {timeout:g} s; checking every source\n"
            )
            return None
        got = Sync(ident, end, game)
        if (
            state.get("trusted") is True
            and isinstance(mark, dict)
            and mark.get("id") == ident
            and mark.get("folders") == game
            and type(mark.get("offset")) is int
            and 0 < mark["offset"] <= end
            and mark.get("state") == state_sig
        ):
            got.changed = _changes(os.pread(fd, end - mark["offset"], mark["offset"]))
            got.cooked_clean = mark.get("clean") is True
        return got
    finally:
        os.close(fd)


def _await_cookie(fd: int, start: int, line: bytes, timeout: float) -> int | None:
    """The journal offset just after *line*, which the monitor appends after *start* (a line
    boundary: the monitor writes whole lines); None when it has not in *timeout* seconds."""
    deadline = time.monotonic() + timeout
    needle = b"\n" + line
    buf, pos, searched, pause = b"\n", start, 0, 0.0002  # buf[i] is the byte at start - 1 + i
    while True:
        chunk = os.pread(fd, 1 << 20, pos)
        if chunk:
            buf += chunk
            pos += len(chunk)
            at = buf.find(needle, searched)
            if at >= 0:
                return start + at + len(line)
            searched = max(0, len(buf) - len(needle))
            continue
        if time.monotonic() > deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


def _changes(data: bytes) -> Changes | None:
    """The changes in journal lines *data*; None when they hold anything that voids the journal
    (a folder made or moved, an overflow, a line that cannot be read)."""
    out = Changes()
    add = {"a": out.written.add, "n": out.named.add, "k": out.cooked.add}
    try:
        text = data.decode("utf-8", "surrogateescape")
    except UnicodeDecodeError:  # (surrogateescape decodes every byte)
        return None
    for line in text.split("\n"):
        if not line:
            continue
        tag, _, path = line.partition(" ")
        if tag == "c":
            continue
        put = add.get(tag)
        if put is None or not path:
            return None  # D, o, or a line of no known kind
        put(path)
    return out


def write_mark(cache: str, got: Sync, state_file: str, cooked_clean: bool) -> None:
    """Leave the mark of a complete cook that synced as *got* (and found the cooked folder
    *cooked_clean*: no stray or temp file): the next cook trusts the journal from its offset on."""
    sig = state_signature(state_file)
    if sig is None:
        return
    from veduta.base.fsutil import atomic_write

    data = json.dumps(
        {
            "format": FORMAT,
            "id": got.id,
            "offset": got.offset,
            "state": sig,
            "clean": cooked_clean,
            "folders": got.where,
        }
    ).encode()
    try:
        atomic_write(os.path.join(folder_of(cache), MARK), data)
    except OSError:
        pass  # (the next cook checks every source)


def status(cache: str) -> dict:
    """Whether a monitor runs for the game whose cache folder is *cache*, as plain data."""
    where = folder_of(cache)
    state = _read_json(os.path.join(where, STATE))
    running = isinstance(state, dict) and state.get("format") == FORMAT and _alive(state.get("pid"))
    mark = _read_json(os.path.join(where, MARK))
    trusted = bool(running and state.get("trusted"))
    why = state.get("why") if running and not trusted else None
    return {
        "running": running,
        "pid": state.get("pid") if running else None,
        "trusted": trusted,
        #: why a running monitor is not trusted ("" when it is, or none runs)
        "why": why if type(why) is str and why else ("" if trusted or not running else "it cannot see every change"),
        "marked": bool(
            running and state.get("trusted") and isinstance(mark, dict) and mark.get("id") == state.get("id")
        ),
        "journal": os.path.join(where, JOURNAL),
    }


# -- the monitor ------------------------------------------------------------------------------


class _Inotify:
    """A minimal inotify instance through ctypes (Linux)."""

    def __init__(self) -> None:
        import ctypes
        import ctypes.util

        if not sys.platform.startswith("linux"):
            raise MonitorUnavailable("the file-system monitor needs Linux's inotify")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        self._ctypes = ctypes
        self.fd = libc.inotify_init1(IN_CLOEXEC)
        if self.fd < 0:
            err = ctypes.get_errno()
            raise MonitorUnavailable(f"inotify_init1 failed: {os.strerror(err)}")

    def add(self, path: str) -> int:
        wd = self._add(self.fd, os.fsencode(path), _MASK)
        if wd < 0:
            err = self._ctypes.get_errno()
            raise OSError(err, os.strerror(err), path)
        return wd

    def remove(self, wd: int) -> None:
        self._rm(self.fd, wd)  # (a watch already gone: EINVAL, nothing to do)

    def read(self, timeout: float) -> list[tuple[int, int, str]]:
        import select

        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        data = os.read(self.fd, 1 << 20)
        out, pos = [], 0
        while pos + _EVENT.size <= len(data):
            wd, mask, _cookie, n = _EVENT.unpack_from(data, pos)
            pos += _EVENT.size
            name = data[pos : pos + n].rstrip(b"\0")
            pos += n
            out.append((wd, mask, os.fsdecode(name)))
        return out

    def close(self) -> None:
        os.close(self.fd)


class Monitor:
    """The running monitor of one game: its watches and its journal (see the module's doc)."""

    def __init__(self, assets: str, cooked: str, cache: str, max_journal: int = MAX_JOURNAL, root: str = ".") -> None:
        self.assets = os.path.abspath(assets)
        self.cooked = os.path.abspath(cooked)
        #: the game's folders (:func:`folders`): a cook of others does not trust this journal
        self.where = folders(root, assets, cooked)
        self.folder = os.path.abspath(folder_of(cache))
        self.cookies = os.path.join(self.folder, COOKIES)
        self.max_journal = max_journal
        self.ino = _Inotify()
        #: wd -> (area, folder relative to it): area "a" assets, "k" cooked, "c" cookies
        self.dirs: dict[int, tuple[str, str]] = {}
        self.trusted = True  # False once a link is seen: every cook then checks every source
        #: why it is not trusted (the first reason found): said by --status and at the start
        self.why = ""
        #: areas ("a", or "k" outside the assets folder) whose root folder was removed or moved
        #: away, watched again once it is back (see _lose, _watch_again)
        self.lost: set[str] = set()
        #: the files under the assets folder with more than one name (st_nlink > 1, a hard link):
        #: a write through another name is reported under that name only, or not at all when the
        #: name is outside the watched folders, so every one of them is named before each cookie
        #: (the cook then checks it by its signature, as without a monitor); (st_dev, st_ino) ->
        #: its names under the assets folder, and each name's key
        self.links: dict[tuple[int, int], set[str]] = {}
        self.link_of: dict[str, tuple[int, int]] = {}
        #: a name made of a file with more than one name, whose other names are not known: the
        #: watched folders are listed again for them before the next cookie
        self._find_links = False
        self.id = ""
        self._journal = -1
        self._size = 0
        self._last = b""

    # the journal
    def _start_journal(self) -> None:
        import secrets

        from veduta.base.fsutil import atomic_write

        self.id = f"{os.getpid()}-{secrets.token_hex(8)}"
        path = os.path.join(self.folder, JOURNAL)
        head = f"{FORMAT} {self.id}\n".encode()
        atomic_write(path, head)
        if self._journal >= 0:
            os.close(self._journal)
        self._journal = os.open(path, os.O_WRONLY | os.O_APPEND)
        self._size = len(head)
        self._last = b""
        self._write_state()

    def _write(self, lines: list[bytes]) -> None:
        if not lines:
            return
        data = b"".join(lines)
        os.write(self._journal, data)
        self._size += len(data)

    # the watches
    def _watch_tree(self, area: str, root: str, rel: str) -> bool:
        """Watch folder *rel* of *root* and every folder under it (dot folders too: the cook's
        scan skips them for sources, but a texture layer may read an image in one; the cooked
        folder met under the assets folder is watched as the cooked folder); False when a
        symbolic link is met (the monitor cannot see through one)."""
        ok = True
        stack = [rel]
        while stack:
            r = stack.pop()
            path = os.path.join(root, r) if r else root
            if os.path.islink(path):
                ok = self._blind(LINK)
                continue
            if area == "a" and path == self.cooked:
                ok = self._watch_tree("k", self.cooked, "") and ok
                continue
            try:
                wd = self.ino.add(path)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    continue  # gone meanwhile (its removal is journaled by its parent)
                # the kernel refuses (ENOSPC: the user's fs.inotify.max_user_watches used up;
                # ENOMEM, EACCES): changes in that folder would go unseen
                ok = self._blind(f"the monitor cannot watch {_shown(path)} ({os.strerror(exc.errno or 0)})")
                continue
            self.dirs[wd] = (area, r)
            try:
                entries = list(os.scandir(path))
            except OSError:
                continue
            for e in entries:
                if e.is_symlink():
                    ok = self._blind(LINK)
                elif area == "a" and e.is_file(follow_symlinks=False):
                    self._note_links(f"{r}/{e.name}" if r else e.name, e.path)
                elif e.is_dir(follow_symlinks=False):
                    stack.append(f"{r}/{e.name}" if r else e.name)
        return ok

    def _note_links(self, rel: str, path: str) -> None:
        """Remember *rel* (the file at *path*) when it has more than one name; a name made of a
        file whose other names are not known yet has the watched folders listed again for them."""
        try:
            st = os.lstat(path)
        except OSError:
            return  # (gone meanwhile: its removal is journaled)
        if st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
            return
        key = (st.st_dev, st.st_ino)
        names = self.links.setdefault(key, set())
        if not names and self.id:  # (after the start: the others were listed before it was made)
            self._find_links = True
        names.add(rel)
        self.link_of[rel] = key

    def _forget_link(self, rel: str) -> None:
        key = self.link_of.pop(rel, None)
        if key is not None:
            names = self.links.get(key, set())
            names.discard(rel)
            if not names:
                del self.links[key]

    def _list_links(self) -> None:
        """Find every name of the files with more than one name: each watched folder under the
        assets folder listed again (only after a name was made for a file already named elsewhere,
        ``ln a b``: rare)."""
        self._find_links = False
        self.links.clear()
        self.link_of.clear()
        for area, rel in list(self.dirs.values()):
            if area != "a":
                continue
            folder = os.path.join(self.assets, rel) if rel else self.assets
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for e in entries:
                if e.is_file(follow_symlinks=False):
                    self._note_links(f"{rel}/{e.name}" if rel else e.name, e.path)

    def _linked_lines(self) -> list[bytes]:
        """The journal lines that name every file with more than one name (written before each
        cookie: the cook checks them, whatever name they were changed through)."""
        if self._find_links:
            self._list_links()
        if not self.link_of:
            return []
        if len(self.link_of) > MAX_LINKED:
            return [b"o\n"]
        out = []
        for rel in sorted(self.link_of):
            out.append(b"o\n" if "\n" in rel else f"a {rel}\n".encode("utf-8", "surrogateescape"))
        return out

    def start(self) -> None:
        os.makedirs(self.cookies, exist_ok=True)
        wd = self.ino.add(self.cookies)
        self.dirs[wd] = ("c", "")
        ok = self._watch_tree("a", self.assets, "")
        if not self.cooked.startswith(self.assets + os.sep):
            if os.path.isdir(self.cooked):
                ok = self._watch_tree("k", self.cooked, "") and ok
            else:
                # made by the first cook where no watch sees it made
                ok = self._blind(f"the cooked folder {_shown(self.cooked)} is not there to watch")
        self.trusted = ok
        self._start_journal()
        if not ok:
            self._write([b"o\n"])

    def _blind(self, why: str) -> bool:
        """The monitor cannot see every change (*why*): remembered (the first reason); False."""
        if not self.why:
            self.why = why
        return False

    def _distrust(self) -> None:
        """A link is in the watched folders, or a folder cannot be watched: from now on no cook
        trusts this monitor (said on its standard error and by ``--status``)."""
        if self.trusted:
            self.trusted = False
            self._write_state()
            sys.stderr.write(f"veduta: warning: {self.why or LINK}: cooks check every source\n")
            sys.stderr.flush()

    def _write_state(self) -> None:
        from veduta.base.fsutil import atomic_write

        state = {
            "format": FORMAT,
            "id": self.id,
            "pid": os.getpid(),
            "trusted": self.trusted,
            "why": "" if self.trusted else self.why,
            "assets": self.assets,
            "cooked": self.cooked,
            "folders": self.where,
        }
        atomic_write(os.path.join(self.folder, STATE), json.dumps(state).encode())

    def _area_root(self, area: str) -> str:
        return self.assets if area == "a" else self.cooked

    def handle(self, events: list[tuple[int, int, str]]) -> None:
        lines: list[bytes] = []
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                lines.append(b"o\n")
                continue
            where = self.dirs.get(wd)
            if where is None:
                continue
            area, rel = where
            if mask & IN_IGNORED:
                self.dirs.pop(wd, None)
                continue
            if area == "c":
                if mask & IN_CREATE and name.startswith("c-"):
                    lines += self._linked_lines()
                    lines.append(f"c {name}\n".encode())
                    # (a line like the one before the cookie is journaled again after it: the
                    # cook's mark is after the cookie, and trusts what follows it alone)
                    self._last = b""
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                if rel == "" and (area == "a" or not self.cooked.startswith(self.assets + os.sep)):
                    self._lose(area)
                lines.append(b"D\n")
                continue
            path = f"{rel}/{name}" if rel else name
            if mask & IN_ISDIR:
                if mask & (IN_CREATE | IN_MOVED_TO) and not self._watch_tree(area, self._area_root(area), path):
                    self._distrust()
                lines.append(b"D\n")
                continue
            if "\n" in path:
                lines.append(b"o\n")
                continue
            if mask & (IN_CREATE | IN_MOVED_TO) and os.path.islink(os.path.join(self._area_root(area), path)):
                self._blind(LINK)
                self._distrust()
                lines.append(b"D\n")
                continue
            if area == "a" and mask & _NAMES:
                if mask & (IN_MOVED_FROM | IN_DELETE):
                    self._forget_link(path)
                else:
                    self._note_links(path, os.path.join(self.assets, path))
            tag = "k" if area == "k" else "n" if mask & _NAMES else "a"
            line = f"{tag} {path}\n".encode("utf-8", "surrogateescape")
            if line != self._last:
                lines.append(line)
                self._last = line
        if not self.trusted and lines:
            lines.append(b"o\n")
        self._write(lines)
        if self._size > self.max_journal:
            self._start_journal()  # a new id: the next cook checks every source once

    def _lose(self, area: str) -> None:
        """The root folder of *area* was removed or moved away (``git checkout`` of a branch
        without it, ``mv assets x``): its watches are dropped (a moved folder's would go on
        reporting the folder where it went, and a folder made in its place is watched by none),
        until :meth:`_watch_again` finds the folder back."""
        areas = {area, "k"} if area == "a" and self.cooked.startswith(self.assets + os.sep) else {area}
        for wd, (a, _rel) in list(self.dirs.items()):
            if a in areas:
                self.ino.remove(wd)
                del self.dirs[wd]
        if area == "a":
            self.links.clear()
            self.link_of.clear()
        self.lost.add(area)

    def _watch_again(self) -> None:
        """Watch the lost root folders that are back, then start a new journal: its new id
        names no cook's mark, so the next cook checks every source (what changed before the
        watches were in place, the new folder's files included) and leaves a mark on it."""
        back = sorted(a for a in self.lost if os.path.isdir(self._area_root(a)))
        if not back:
            return
        ok = True
        for area in back:
            self.lost.discard(area)
            ok = self._watch_tree(area, self._area_root(area), "") and ok
        if not ok:
            self.trusted = False
        self._start_journal()
        if not self.trusted:
            self._write([b"o\n"])

    def run(self, should_stop=lambda: False, poll: float = 0.5, tick=None) -> None:
        """Journal what inotify reports until *should_stop()*; *tick()* after each wait (the
        warm compile worker's keeper: started again when it ended)."""
        while not should_stop():
            events = self.ino.read(poll)
            if events:
                self.handle(events)
            if self.lost:
                self._watch_again()
            if tick is not None:
                tick()

    def close(self) -> None:
        """Stop: the state file goes (cooks stop asking), then the journal."""
        try:
            state = _read_json(os.path.join(self.folder, STATE))
            if isinstance(state, dict) and state.get("id") == self.id:
                os.unlink(os.path.join(self.folder, STATE))
        except OSError:
            pass
        if self._journal >= 0:
            os.close(self._journal)
            self._journal = -1
        self.ino.close()


__all__ = [
    "FORMAT",
    "Sync",
    "Changes",
    "Monitor",
    "MonitorUnavailable",
    "MonitorRunning",
    "hold_lock",
    "sync",
    "write_mark",
    "status",
    "SYNC_TIMEOUT_S",
    "folder_of",
    "state_signature",
    "folders",
]
