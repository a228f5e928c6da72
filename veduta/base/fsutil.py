"""File helpers: atomic writes."""

from __future__ import annotations

import itertools
import os
import re
import stat

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


def atomic_write(path: str, data: bytes, durable: bool = False, mode: int | None = None) -> None:
    """Write *data* to *path* so that readers see the old file or the new one, never a part.

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
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
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
    real = os.path.realpath(path)
    st = os.stat(real)
    mode = stat.S_IMODE(st.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(f"{path} is read-only (mode {mode:o})")
    atomic_write(real, data, durable=True, mode=mode)
    return real


def write_output(path: str, data: bytes) -> None:
    """Write a file a command was asked to write (``--out``, ``--sheet``) atomically; a folder in
    its place, a missing folder or a file where a folder should be is
    :class:`~veduta.base.errors.VedutaError` ``cannot write PATH: reason`` (no folder is made)."""
    from veduta.base.errors import VedutaError

    folder = os.path.dirname(path) or "."
    reason = None
    if os.path.isdir(path):
        reason = "it is a folder"
    elif not os.path.isdir(folder):
        reason = f"{folder} is not a folder" if os.path.exists(folder) else f"no folder {folder}"
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


def read_regular(path: str) -> tuple[bytes, os.stat_result] | None:
    """The bytes of *path* and its stat taken before reading, if it is a regular file; else None.

    Opened without blocking and checked before reading, so a FIFO, a device or a folder in
    the place of a file is never read (a FIFO would block the cook for ever).
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:  # os.read on the descriptor: a file object around it costs more than reading a small file
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        parts = []
        try:
            while chunk := os.read(fd, max(st.st_size + 1, 1 << 16)):  # to the end (it may have grown)
                parts.append(chunk)
        except OSError:
            return None
        return (parts[0] if len(parts) == 1 else b"".join(parts)), st
    finally:
        os.close(fd)
