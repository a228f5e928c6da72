"""File helpers: atomic writes, bounded reads of regular files, the MCP server's confinement.

Every file a tool reads because a user or a source named it goes through :func:`read_file`
(regular files only, size-checked before reading, never a FIFO's endless read); the cook's own
files through :func:`read_regular`. Every file a tool writes because a user named it goes
through :func:`write_output` (one rule for every ``--out``, ``--sheet``, ...).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
from collections.abc import Iterable, Iterator

from veduta.base.errors import VedutaError, shown_path

_UMASK = os.umask(0)
os.umask(_UMASK)
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _host() -> str:
    try:
        name = os.uname().nodename
    except AttributeError:  # Windows
        import socket

        name = socket.gethostname()
    return re.sub(r"[^A-Za-z0-9-]", "-", name)[:40] or "host"


#: this machine's name as it appears in temp file names (a folder may be shared between machines)
HOST = _host()
_SEQ = itertools.count()
#: ``.<name>.<host>.<pid>.<n>.tmp``: what :func:`temp_name` makes (the orphan sweep's pattern)
TEMP_SUFFIX_RE = r"\.[A-Za-z0-9-]+\.\d+\.\d+\.tmp"


def temp_name(path: str) -> str:
    """A temp file name beside *path* unique to this machine, process and call: two machines
    writing into one shared folder (a network share as the shared cache), two processes or
    two threads never write the same temp file."""
    folder, base = os.path.split(path)
    return os.path.join(folder, f".{base}.{HOST}.{os.getpid()}.{next(_SEQ)}.tmp")


@contextlib.contextmanager
def held_lock(path: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` of lock file *path* (made if missing, its folder too) until the
    block ends. ``flock`` locks belong to an open file, so two threads of one process (an MCP
    server's calls) wait for each other as two processes do. Where no lock can be taken (no
    ``fcntl``, a folder that cannot be written) the block runs without it."""
    fd = None
    try:
        import fcntl

        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except (ImportError, OSError):
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the lock


def atomic_write(path: str, data: bytes | Iterable[bytes], durable: bool = False, mode: int | None = None) -> None:
    """Write *data* to *path* so that readers see the old file or the new one, never a part.
    *data*: bytes, or an iterable of bytes written as they come (a long output in bounded memory).

    The bytes go to a temporary file in the same folder (``.<name>.<host>.<pid>.<n>.tmp``,
    see :func:`temp_name`) which is then renamed over *path* (atomic on POSIX and Windows): killing the
    writer at any moment leaves the old file or the new one.  ``durable`` also
    fsyncs before the rename, for files that must survive a power cut; cooked
    files and store entries don't need it, since readers check their CRCs and
    a torn file is simply stale.  *mode* sets the new file's permission bits (default: as
    the umask allows).
    """
    folder = os.path.dirname(path)
    tmp = temp_name(path)
    try:
        fd = os.open(tmp, _FLAGS, 0o666 & ~_UMASK)
    except FileNotFoundError:
        os.makedirs(folder or ".", exist_ok=True)
        fd = os.open(tmp, _FLAGS, 0o666 & ~_UMASK)
    except FileExistsError:  # left by a killed writer with this host, pid and sequence number
        os.unlink(tmp)
        fd = os.open(tmp, _FLAGS, 0o666 & ~_UMASK)
    try:
        try:  # os.write on the descriptor: a Python file object around it costs more than the write
            for part in (data,) if isinstance(data, (bytes, bytearray, memoryview)) else data:
                view = memoryview(part)
                while view:
                    view = view[os.write(fd, view) :]
            if mode is not None:
                os.chmod(tmp, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def rewrite_source(path: str, data: bytes) -> str:
    """Replace an author's file *path* with *data* atomically, as an editor would: a symlink's
    target is written (the link stays), the file keeps its mode, and a file with no write bits
    is refused (:class:`PermissionError`). Returns the path written. Cooked outputs use
    :func:`atomic_write`."""
    check_inside(path)
    real = os.path.realpath(path)
    st = os.stat(real)
    mode = stat.S_IMODE(st.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(f"{path} is read-only (mode {mode:o})")
    atomic_write(real, data, durable=True, mode=mode)
    return real


def write_output(path: str, data: bytes | Iterable[bytes]) -> None:
    """Write a file a command was asked to write (``--out``, ``--sheet``) atomically (*data*: bytes
    or an iterable of bytes, taken only once the path is found writable): the one rule
    of every output option (and every MCP tool that writes a file). Its folder must exist (no
    folder is made: a mistyped folder is a mistake to tell, not a tree to create); a folder in
    its place, a missing folder or a file where a folder should be is
    :class:`~veduta.base.errors.VedutaError` ``cannot write PATH: reason``. Under :func:`confine`, a
    path that resolves outside the game root is refused (:class:`OutsideRoot`)."""
    check_inside(path)
    folder = os.path.dirname(path) or "."
    reason = None
    if os.path.isdir(path):
        reason = "it is a folder"
    elif not os.path.isdir(folder):
        reason = (
            f"{folder} is not a folder"
            if os.path.exists(folder)
            else f"no folder {folder} (no folder is made for an output: create it first)"
        )
    if reason is None:
        try:
            atomic_write(path, data)
            return
        except OSError as e:
            reason = e.strerror or str(e)
    raise VedutaError(f"cannot write {path}: {reason}")


def remove_if_exists(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)

#: The largest cooked file a tool or a cache tier reads: no compiler writes one this large (the
#: largest are a tile map of 1024 x 1024 cells in 32 layers, 64 MB, and a flat-shaded model at the
#: limit of 1,000,000 triangles, about 76 MB), so a bigger file or cache object is refused before
#: it is read, not read whole into memory.
MAX_COOKED_BYTES = 512 << 20

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (a named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_in_words(mode: int) -> str:
    """What a file of stat mode *mode* that is not a regular file is, in words (``a folder``,
    ``a FIFO (a named pipe)``, ``a socket``, ...)."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


class FileProblem(OSError, VedutaError):
    """A file that may not or cannot be read or written, for a reason of veduta's (an OSError, so
    that code which copes with a file the system refused copes with it; a VedutaError, so that
    the faces tell it as a user's problem): ``strerror`` says why, ``filename`` which file."""

    def __init__(self, path: str, why: str):
        super().__init__(0, why, path)

    def __str__(self) -> str:
        return self.strerror or ""


class NotARegularFile(FileProblem):
    """A named file that is a folder, a FIFO, a device or a socket: never read (a FIFO or a
    device would block or never end)."""

    def __init__(self, path: str, what: str):
        super().__init__(path, f"it is {what}, not a regular file")


class TooLarge(FileProblem):
    """A file or cache object larger than the reader's limit, refused before it is read; *what* the
    limit is of (``a cooked file``, ``a model source``); *st*: the file's stat that told its size,
    when it was refused from it (None when it grew past the limit as it was read)."""

    def __init__(self, path: str, size: int, limit: int, what: str = "a cooked file", st: os.stat_result | None = None):
        super().__init__(path, f"too large ({size:,} bytes; {what} is at most {limit:,})")
        self.size = size
        self.limit = limit
        self.st = st


class ShortOfMemory(FileProblem):
    """A file within its reader's limit that memory could not hold as it was read."""


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """An open descriptor of *path* and its stat, if it is a regular file; :class:`NotARegularFile`
    otherwise (the caller closes the descriptor). Opened without blocking, so a FIFO is never
    waited on."""
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotARegularFile(path, kind_in_words(st.st_mode))
    return fd, st


def _read_fd(fd: int, st: os.stat_result, limit: int | None, path: str, what: str = "a cooked file") -> bytes:
    if limit is not None and st.st_size > limit:
        raise TooLarge(path, st.st_size, limit, what, st)
    parts = []
    got = 0
    # os.read on the descriptor: a file object around it costs more than reading a small file
    while chunk := os.read(fd, max(st.st_size + 1, 1 << 16)):  # to the end (it may have grown)
        parts.append(chunk)
        got += len(chunk)
        if limit is not None and got > limit:  # it grew past the limit while read
            raise TooLarge(path, got, limit, what)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def loads_kept(data: bytes, most: int = 16):
    """``marshal.loads`` of a file the cook keeps in cache/ (a tuple of at most *most* items at
    the top), raising :class:`ValueError` for damaged bytes, including a header that announces a
    container larger than memory: marshal allocates a list's or tuple's slots from its header
    before it reads an item, so a damaged count (``[`` and 0x7fffffff: 16 GB) ended every cook in
    MemoryError.  The top is checked before anything is allocated; deeper, the MemoryError of
    that allocation (which never happened) is the damage.  An allocation the system grants lazily
    is released as soon as marshal finds the data too short: seconds, once, as the file is then
    ignored and written anew (docs/cooking.md: "a damaged file ... is ignored")."""
    import marshal

    if len(data) < 2 or data[0] & 0x7F != 0x29 or data[1] > most:  # ")": a small tuple, count in one byte
        raise ValueError("not a file of the cook's state")
    try:
        return marshal.loads(data)
    except MemoryError:
        raise ValueError("a damaged count (larger than memory)") from None


def read_regular(path: str, limit: int | None = None) -> tuple[bytes, os.stat_result] | None:
    """The bytes of *path* and its stat taken before reading, if it is a regular file of at most
    *limit* bytes; else None (missing, unreadable, a FIFO, a device or a folder in its place, or
    too large). For the cook's own files (the store, the stat cache, sources it found): what
    cannot be read is simply not there. A file a user names goes through :func:`read_file`.

    Opened without blocking and checked before reading, so a FIFO, a device or a folder in
    the place of a file is never read (a FIFO would block the cook for ever).
    """
    try:
        fd, st = open_regular(path)
    except (OSError, ValueError):  # (ValueError: a NUL in the path)
        return None
    try:
        return _read_fd(fd, st, limit, path), st
    except (OSError, MemoryError):
        return None
    finally:
        os.close(fd)


def read_dependency(path: str, limit: int | None, what: str) -> tuple[bytes | None, os.stat_result | None, str | None]:
    """A file a source depends on (an image, another source), read as :func:`read_regular` reads
    (regular files only, never waited on) and at most *limit* bytes: ``(bytes, stat, None)``;
    ``(None, None, None)`` when it is missing, unreadable or not a regular file (the compiler
    tells which from the path); ``(None, stat or None, why)`` when it is there but not read, *why*
    in words: larger than *limit* (:class:`TooLarge`'s words, told from the *stat* given with
    them, before a byte is read: while that stat holds, the file is refused alike, so the cook's
    stat cache keeps it as the file's signature) or memory short of its size (no stat: it may
    be read another time; never the permissions a None would suggest)."""
    try:
        return *read_with_stat(path, limit, what), None
    except TooLarge as exc:
        return None, exc.st, exc.strerror
    except ShortOfMemory as exc:
        return None, None, exc.strerror
    except OSError:
        return None, None, None


def read_bounded(path: str, limit: int | None = None, what: str = "a cooked file") -> bytes:
    """The bytes of regular file *path*, at most *limit* bytes; an :class:`OSError` whose
    ``strerror`` says why in words otherwise, never a hang or a traceback: missing or unreadable
    (the system's reason), a folder, FIFO, device or socket (:class:`NotARegularFile`, checked
    before reading), larger than *limit* (:class:`TooLarge`, checked before reading), a NUL in
    the path, or memory short of the size."""
    return read_with_stat(path, limit, what)[0]


def read_with_stat(path: str, limit: int | None = None, what: str = "a cooked file") -> tuple[bytes, os.stat_result]:
    """:func:`read_bounded`, with the file's stat taken before reading (a signature of these
    bytes even if the file is replaced meanwhile)."""
    if "\0" in path:
        raise FileProblem(path, "a file name cannot hold a NUL character")
    fd, st = open_regular(path)
    try:
        return _read_fd(fd, st, limit, path, what), st
    except MemoryError:
        raise ShortOfMemory(path, f"not enough memory to read its {st.st_size:,} bytes") from None
    finally:
        os.close(fd)


def read_file(path: str, limit: int | None = None) -> bytes:
    """:func:`read_bounded` for a file a user (or a source, or an MCP argument) named: under
    :func:`confine`, a path that resolves outside the game root is :class:`OutsideRoot`."""
    check_inside(path)
    return read_bounded(path, limit)


# -- confinement (veduta mcp) -------------------------------------------------------------------

#: set by ``veduta mcp`` to the game root it serves, so that every file a tool reads or writes
#: (and the workers it starts, which inherit the environment) resolves inside that root
CONFINE_ENV = "VEDUTA_CONFINE"


def confine(root: str) -> None:
    """Confine this process, and the processes it starts, to *root* (``veduta mcp``): from now
    on every file found by name or named by an argument must resolve inside it. The
    confinement is of the process (as the current folder is): the server serves one game."""
    os.environ[CONFINE_ENV] = os.path.realpath(root)


def confined_root() -> str | None:
    """The root this process is confined to (:func:`confine`), or None."""
    return os.environ.get(CONFINE_ENV) or None


def outside(path: str) -> str | None:
    """Where *path* resolves (symlinks and ``..`` followed; a file to write need not exist yet) if
    this process is confined and that is outside its root; None otherwise."""
    root = confined_root()
    if root is None:
        return None
    real = os.path.realpath(path)
    return None if real == root or real.startswith(root.rstrip(os.sep) + os.sep) else real


class OutsideRoot(FileProblem):
    """A file found by name or named by an argument that resolves outside the confined root."""

    def __init__(self, path: str, real: str, root: str):
        super().__init__(
            path,
            f"{shown_path(path)} resolves to {shown_path(real)}, outside the game root {shown_path(root)} "
            f"(veduta mcp reads and writes only files inside it)",
        )
        self.real = real


def check_inside(path: str) -> None:
    """:class:`OutsideRoot` if this process is confined and *path* resolves outside its root."""
    real = outside(path)
    if real is not None:
        raise OutsideRoot(path, real, confined_root() or "")
