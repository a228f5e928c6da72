"""The warm compile worker: a process the file-system monitor keeps with numpy and the compilers
imported, so that a cook of one edited source does not import them (docs/cooking.md, "The warm
compile worker").

``veduta watch --monitor`` starts it as a child (``python -m veduta.cook.warm``) and starts it
again when it ends.  It listens on a Unix socket, ``<cache>/monitor/worker/sock``, in a folder
only its user can enter (0700; the socket 0600).  A cook whose stale sources are too few for a
process pool (fewer than :data:`veduta.cook.ahead.MIN_SOURCES`) and that has not imported numpy
itself asks it (:func:`begin`): it sends the jobs the pool would get (``cook_one``'s argument
tuples, the paths as the cook has them, relative to its working folder) with the asset index,
and each task's action takes its result as it takes a pool's (``take``), so doit still runs,
records and reports every task.

Why a result is the one the cook would have made itself:

- *The same code.*  On each connection the worker says what it runs: the toolchain, Python's
  version, executable and prefix, the veduta package's folder, and the (size, mtime_ns, inode,
  ctime_ns) every imported module file (stdlib aside) had *when the worker imported it*.  The cook
  stats those files itself and uses the worker only when every one is as recorded and the rest
  is its own; the worker also checks its files before each request, and every second while
  idle, and ends when one changed (the monitor then starts a fresh one).
- *The same inputs, no state.*  Each request carries the cook's working folder, its jobs and its
  asset index; the worker moves to that folder, sets that index and cooks the jobs with
  :func:`veduta.cook.cook.cook_batch`, the pool's own function.  What it keeps between requests
  are the compilers' pure caches (as a pool worker keeps them between batches).
- *Only its game, only its user.*  The cook trusts the socket only in a folder of its own user
  that no one else may enter, and only a peer of its own user (``SO_PEERCRED``); the worker
  answers only peers of its own user and refuses a job whose folders are not its game's.
- *Never a hang, never a traceback.*  No socket, a dead worker, a stale socket file, another
  code fingerprint or any error: the cook cooks the sources itself.  A worker that does not
  answer in :data:`RESULT_TIMEOUT_S` is killed (so that it writes nothing later) and a worker
  that dies mid-request is named in a warning; the actions cook their sources themselves, as
  after a pool worker's death.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import socket
import stat
import struct
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from veduta.base.fsutil import CONFINE_ENV, confined_root
from veduta.cook.run import MONITOR_FOLDER, WAIT_POLL
from veduta.cook.state import sig

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable

FORMAT = "veduta-warm/2"  # (2: a module file's signature holds its ctime)
#: the worker's folder under the monitor's (0700) and what is in it
FOLDER = "worker"
SOCKET = "sock"
STATE = "state.json"
#: how long a cook waits to connect and hear what the worker runs before cooking itself
HELLO_TIMEOUT_S = 2.0
#: how long a cook waits for the results of its jobs before killing the worker and cooking
#: them itself (VEDUTA_WARM_TIMEOUT overrides it)
RESULT_TIMEOUT_S = 120.0
#: how long the worker waits for a request once a cook connected
REQUEST_TIMEOUT_S = 30.0
#: the worker ends (and the monitor starts a fresh one) after this many requests, or once its
#: peak resident memory passed MAX_RSS_KIB
MAX_REQUESTS = 1000
MAX_RSS_KIB = 1 << 20
#: the largest message either side accepts
MAX_FRAME = 1 << 30
_LEN = struct.Struct(">Q")
#: the modules the worker imports before it listens (the compilers, the codecs, numpy)
PRELOAD = (
    "numpy",
    "veduta.cook.cook",
    "veduta.compile",
    "veduta.compile.model.compile",
    "veduta.container.chunks",
    "veduta.container.meta",
)


def folder_of(cache: str) -> str:
    return os.path.join(cache, MONITOR_FOLDER, FOLDER)


# -- the wire ---------------------------------------------------------------------------------


def _send(sock: socket.socket, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_LEN.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the connection")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _recv(sock: socket.socket):
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if n > MAX_FRAME:
        raise EOFError(f"a message of {n} bytes")
    return pickle.loads(_recv_exact(sock, n))


def _peer(sock: socket.socket) -> tuple[int, int]:
    """The (pid, uid) of the process at the other end of a Unix socket (Linux: SO_PEERCRED)."""
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return pid, uid


class _Address:
    """The socket's address: its path, or, when that is too long for a Unix socket address (108
    bytes), the same file reached through an open descriptor of its folder (Linux's
    /proc/self/fd)."""

    def __init__(self, folder: str):
        self.fd = -1
        path = os.path.join(folder, SOCKET)
        if len(os.fsencode(path)) < 100:
            self.path = path
        else:
            self.fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self.path = f"/proc/self/fd/{self.fd}/{SOCKET}"

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _private_folder(folder: str) -> bool:
    """Whether *folder* is a real folder of this user that no one else may enter."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


# -- what code runs ---------------------------------------------------------------------------


def _stdlib_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The standard library's folders, and the folders of installed packages (which may lie
    inside them: ``lib/python3.X/site-packages``)."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    std = {os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if k in paths}
    sites = {os.path.realpath(paths[k]) + os.sep for k in ("purelib", "platlib") if k in paths}
    try:
        sites.update(os.path.realpath(p) + os.sep for p in site.getsitepackages())
    except AttributeError:  # (an old virtualenv's site module)
        pass
    sites.update(os.path.realpath(p) + os.sep for p in sys.path if p and "-packages" in p)
    return tuple(std), tuple(sites)


def _sig(path: str) -> tuple[int, int, int, int] | None:
    """A module file's signature, the cook's own (:func:`veduta.cook.state.sig`: size, mtime_ns,
    inode, ctime_ns): an edit in place with its mtime put back (``touch -r``, ``rsync -t``)
    still moves the ctime."""
    try:
        return sig(os.stat(path))
    except OSError:
        return None


#: variables of veduta's that change nothing a worker makes (how the cook shows diagnostics; the
#: worker's own test hook and the cook's timeout), and the confinement of ``veduta mcp``
#: (VEDUTA_CONFINE), which does change what a compile reads but which each request carries: the
#: worker is confined as the cook that asks is, for that request alone (:func:`_confined_as`)
_ENV_IGNORED = frozenset({"VEDUTA_FORMAT", "VEDUTA_WARM_TIMEOUT", "VEDUTA_WARM_TEST_HOLD", CONFINE_ENV})


def _environment() -> list[list[str]]:
    """The process's VEDUTA_* variables that could change a cook (the shared cache's, ...): a cook
    uses only a worker that has the same."""
    return sorted([k, v] for k, v in os.environ.items() if k.startswith("VEDUTA_") and k not in _ENV_IGNORED)


@contextmanager
def _confined_as(root: str | None):
    """This process confined to *root* (the asking cook's :func:`~veduta.base.fsutil.confined_root`;
    None: not confined) while the block runs, then as it was."""
    own = os.environ.get(CONFINE_ENV)
    if root is None:
        os.environ.pop(CONFINE_ENV, None)
    else:
        os.environ[CONFINE_ENV] = root
    try:
        yield
    finally:
        if own is None:
            os.environ.pop(CONFINE_ENV, None)
        else:
            os.environ[CONFINE_ENV] = own


def _package_dir() -> str:
    import veduta

    return os.path.dirname(os.path.abspath(veduta.__file__))


class Code:
    """The worker's record of its code: every module file it imported (but the standard library's,
    which changes only with Python, whose version and executable are compared), with its
    signature when first seen."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, int, int, int] | None] = {}
        self._stdlib = _stdlib_dirs()
        self.learn()

    def learn(self) -> None:
        """Record the modules imported since the last call."""
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if not isinstance(f, str) or f in self.files:
                continue
            real = os.path.realpath(f)
            if real.startswith(self._stdlib[0]) and not real.startswith(self._stdlib[1]):
                continue
            self.files[f] = _sig(f)

    def changed(self) -> bool:
        return any(_sig(f) != was for f, was in self.files.items())

    def hello(self) -> dict:
        from veduta import TOOLCHAIN

        return {
            "format": FORMAT,
            "toolchain": TOOLCHAIN,
            "python": sys.version,
            "executable": sys.executable,
            "prefix": sys.prefix,
            "base_prefix": sys.base_prefix,
            "package": _package_dir(),
            "files": sorted(self.files.items()),
            "env": _environment(),
            "pid": os.getpid(),
        }


def same_code(hello) -> bool:
    """Whether the worker that said *hello* runs this process's code (see :class:`Code`)."""
    from veduta import TOOLCHAIN

    if not isinstance(hello, dict) or hello.get("format") != FORMAT:
        return False
    if (
        hello.get("toolchain") != TOOLCHAIN
        or hello.get("python") != sys.version
        or hello.get("executable") != sys.executable
        or hello.get("prefix") != sys.prefix
        or hello.get("base_prefix") != sys.base_prefix
        or hello.get("package") != _package_dir()
        or hello.get("env") != _environment()
    ):
        return False
    files = hello.get("files")
    if not isinstance(files, list) or not files:
        return False
    try:
        return all(was is not None and _sig(f) == tuple(was) for f, was in files)
    except (TypeError, ValueError):
        return False


# -- the cook's side --------------------------------------------------------------------------


def _timeout() -> float:
    try:
        return float(os.environ.get("VEDUTA_WARM_TIMEOUT", "")) or RESULT_TIMEOUT_S
    except ValueError:
        return RESULT_TIMEOUT_S


class Warm:
    """The jobs of one cook sent to the warm worker; :meth:`take` hands out each source's result
    once (the interface of :class:`veduta.cook.ahead.Ahead`)."""

    def __init__(self, sock: socket.socket, worker_pid: int, jobs: list[tuple], heed: Callable[[], None] | None = None):
        self.pid = os.getpid()
        self.sock = sock
        self.worker_pid = worker_pid
        self.jobs = jobs
        self.waiting = {job[1] for job in jobs}
        #: called every WAIT_POLL seconds while the answer is waited for in the cook's thread (the
        #: run's ``waiting``: a Cancelled it raises stops the worker and unwinds the run)
        self.heed = heed
        self.thread = threading.current_thread()
        self.results: dict[str, dict] | None = None
        #: sources whose results were lost with the worker (it may have written their cooked files)
        self.lost: set[str] = set()
        self._lock = threading.Lock()

    def take(self, rel: str) -> dict | None:
        if os.getpid() != self.pid:
            return None
        with self._lock:
            if rel not in self.waiting:
                return None
            self.waiting.discard(rel)
            if self.results is None and not self.lost:
                self._receive()
            return self.results.pop(rel, None) if self.results is not None else None

    def _receive(self) -> None:
        timeout = _timeout()
        why = ""
        try:
            left = timeout
            if self.heed is not None and threading.current_thread() is self.thread:
                left = self._heed_until_ready(timeout)
                if left <= 0:
                    import select

                    if not select.select([self.sock], [], [], 0)[0]:
                        raise TimeoutError  # (no answer begun in the whole timeout)
                # once it has begun, the rest comes in one go: a few seconds for it at least
                # (a worker that stops halfway is the rare case the timeout is for)
                left = max(left, 10.0)
            self.sock.settimeout(left)  # (what is left of the one timeout, not a second one)
            got = _recv(self.sock)
            if (
                isinstance(got, dict)
                and isinstance(got.get("results"), list)
                and len(got["results"]) == len(self.jobs)
                and all(isinstance(r, dict) and isinstance(r.get("outcome"), str) for r in got["results"])
            ):
                self.results = {job[1]: r for job, r in zip(self.jobs, got["results"], strict=True)}
            elif isinstance(got, dict) and got.get("refused"):
                self.results = {}  # (refused before cooking anything: nothing lost)
            elif isinstance(got, dict) and got.get("failed"):
                why = f"it failed ({got['failed']})"
            else:
                why = "an answer of no known kind"
        except TimeoutError:
            why = f"no answer in {timeout:g} s; stopped"
            try:
                os.kill(self.worker_pid, signal.SIGKILL)  # it must write nothing once this cook writes
            except OSError:
                pass
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, struct.error) as exc:
            why = f"it ended ({exc or type(exc).__name__})"
        finally:
            self.close()
        if why:
            self.lost = {job[1] for job in self.jobs}
            sys.stderr.write(
                f"veduta: warning: the warm compile worker (pid {self.worker_pid}): {why}; cooking in this process\n"
            )

    def _heed_until_ready(self, timeout: float) -> float:
        """Wait until the answer begins (or *timeout* seconds pass), calling :attr:`heed` every
        WAIT_POLL seconds; when it raises (Cancelled), the worker is stopped first, so that it
        writes nothing more. Returns the seconds left of *timeout* (0 or less: none came)."""
        import select

        end = time.monotonic() + timeout
        while time.monotonic() < end and not select.select([self.sock], [], [], WAIT_POLL)[0]:
            try:
                self.heed()  # type: ignore[misc]
            except BaseException:
                self.stop()
                raise
        return end - time.monotonic()

    def stop(self) -> None:
        """Stop the worker while it cooks this cook's jobs (the cook was cancelled): it must write
        nothing once the cook has unwound (the monitor starts another)."""
        if self.results is None and not self.lost and os.getpid() == self.pid:
            self.lost = {job[1] for job in self.jobs}
            try:
                os.kill(self.worker_pid, signal.SIGKILL)
            except OSError:
                pass
            self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def begin(jobs: list[tuple], heed: Callable[[], None] | None = None) -> Warm | None:
    """Send *jobs* (``cook_one`` argument tuples of one game) to the game's warm worker; None (the
    actions cook their sources themselves) when there is none, or it runs other code, or anything
    goes wrong on the way."""
    if not jobs or "numpy" in sys.modules or not sys.platform.startswith("linux"):
        return None  # (a process with the compilers imported gains nothing)
    from veduta.cook.cook import _INDEX

    assets, cache = jobs[0][2], jobs[0][4]
    index = _INDEX.get(os.path.abspath(assets))
    if index is None or any(job[2] != assets or job[4] != cache for job in jobs):
        return None
    folder = folder_of(cache)
    if not _private_folder(folder):
        return None
    try:
        st = os.lstat(os.path.join(folder, SOCKET))
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    address = _Address(folder)
    try:
        sock.settimeout(HELLO_TIMEOUT_S)
        sock.connect(address.path)
        pid, uid = _peer(sock)
        if uid != os.getuid():
            raise OSError("a worker of another user")
        hello = _recv(sock)
        if not same_code(hello) or hello.get("pid") != pid:
            raise OSError("a worker of other code")
        _send(sock, {"cwd": os.getcwd(), "jobs": jobs, "index": index.by_kind, "confine": confined_root()})
    except TimeoutError:
        sock.close()
        sys.stderr.write(
            f"veduta: warning: the warm compile worker ({folder}) did not answer in {HELLO_TIMEOUT_S:g} s; "
            "cooking in this process\n"
        )
        return None
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, struct.error):
        sock.close()
        return None
    finally:
        address.close()
    return Warm(sock, pid, jobs, heed)


# -- the worker -------------------------------------------------------------------------------


class Game:
    """The folders of the worker's game (absolute, resolved)."""

    def __init__(self, assets: str, cooked: str, cache: str):
        self.assets = os.path.realpath(assets)
        self.cooked = os.path.realpath(cooked)
        self.cache = os.path.realpath(cache)

    def refuses(self, cwd, jobs, index) -> str:
        """Why a request is not this game's (or not well formed); "" when it is."""
        from veduta.base.project import BY_NAME

        if not isinstance(cwd, str) or not os.path.isabs(cwd) or not isinstance(jobs, list) or not jobs:
            return "no working folder or jobs"
        if not isinstance(index, dict) or not all(
            isinstance(k, str)
            and isinstance(v, dict)
            and all(
                isinstance(n, str) and isinstance(p, list) and all(isinstance(x, str) for x in p) for n, p in v.items()
            )
            for k, v in index.items()
        ):
            return "an asset index of no known shape"
        for job in jobs:
            if not isinstance(job, tuple) or not 7 <= len(job) <= 11:
                return "a job of no known shape"
            kind, rel, assets, cooked, cache, duplicate_of, display_root, *rest = job
            if kind not in BY_NAME or not isinstance(rel, str) or not isinstance(display_root, str):
                return "a job of no known shape"
            if not all(isinstance(p, str) for p in (assets, cooked, cache)):
                return "a job of no known shape"
            if rel.startswith("/") or ".." in rel.split("/") or "\\" in rel or "\0" in rel:
                return f"a source outside the assets folder: {rel!r}"
            if os.path.realpath(os.path.join(cwd, assets)) != self.assets:
                return f"another game's assets folder: {assets!r}"
            if os.path.realpath(os.path.join(cwd, cache)) != self.cache:
                return f"another game's cache folder: {cache!r}"
            if not os.path.realpath(os.path.join(cwd, cooked)).startswith(self.cooked + os.sep):
                return f"a cooked file outside the game's cooked folder: {cooked!r}"
            if duplicate_of is not None and not (
                isinstance(duplicate_of, list) and all(isinstance(p, str) for p in duplicate_of)
            ):
                return "a job of no known shape"
            if len(rest) > 2 and not isinstance(rest[2], bool):
                return "a job of no known shape"
        return ""


def serve(assets: str, cooked: str, cache: str, parent: int, max_requests: int = MAX_REQUESTS) -> int:
    """Run the warm worker of the game until its parent (the monitor, pid *parent*) is gone, its
    code changed, or it served *max_requests* (or grew past MAX_RSS_KIB)."""
    import importlib
    import resource

    for name in PRELOAD:
        importlib.import_module(name)
    from veduta.compile import get_compiler

    for kind in sorted(_kinds()):
        try:
            get_compiler(kind)
        except Exception:  # noqa: BLE001,S112 - a compiler that does not import: imported (or not) when asked
            continue
    from veduta.base.project import AssetIndex
    from veduta.cook.cook import _INDEX, cook_batch

    code = Code()
    game = Game(assets, cooked, cache)
    folder = folder_of(game.cache)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    os.chmod(folder, 0o700)
    if not _private_folder(folder):
        sys.stderr.write(f"veduta: the warm compile worker cannot use {folder} (not a private folder of this user)\n")
        return 1
    address = _Address(folder)
    path = os.path.join(folder, SOCKET)
    try:
        os.unlink(path)  # (a socket left by a worker that died)
    except FileNotFoundError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        server.bind(address.path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    server.listen(8)
    server.settimeout(1.0)
    st = os.stat(path)
    me = (st.st_ino, st.st_dev)
    served = 0
    _write_state(folder, served)
    gc.collect()
    gc.freeze()
    try:
        while served < max_requests:
            if os.getppid() != parent or code.changed():
                return 0
            st2 = _sig_of_socket(path)
            if st2 != me:
                return 0  # another worker took the socket's place
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(REQUEST_TIMEOUT_S)
                try:
                    _pid, uid = _peer(conn)
                    if uid != os.getuid():
                        continue
                    code.learn()
                    if code.changed():
                        return 0  # (the cook finds the fingerprint wrong and cooks itself)
                    _send(conn, code.hello())
                    req = _recv(conn)
                except (OSError, EOFError, pickle.UnpicklingError, ValueError, struct.error):
                    continue
                if not isinstance(req, dict):
                    continue
                cwd, jobs, index, confine = req.get("cwd"), req.get("jobs"), req.get("index"), req.get("confine")
                why = game.refuses(cwd, jobs, index)
                if not why and not (confine is None or isinstance(confine, str) and os.path.isabs(confine)):
                    why = "a confinement of no known shape"
                if why:
                    try:
                        _send(conn, {"refused": why})
                    except OSError:
                        pass
                    continue
                assert isinstance(cwd, str) and isinstance(jobs, list) and isinstance(index, dict)
                _hold()
                try:
                    os.chdir(cwd)
                except OSError as exc:
                    try:
                        _send(conn, {"refused": f"cannot enter {cwd}: {exc.strerror}"})
                    except OSError:
                        pass
                    continue
                try:
                    _INDEX.clear()
                    _INDEX[os.path.abspath(jobs[0][2])] = AssetIndex(index)
                    with _confined_as(confine):  # (veduta mcp's cook: read only inside its root, as itself)
                        reply: dict = {"results": cook_batch(jobs)}
                except Exception as exc:  # noqa: BLE001 - the cook's own actions then cook them
                    reply = {"failed": f"{type(exc).__name__}: {exc}"}
                finally:
                    _INDEX.clear()
                    os.chdir("/")
                served += 1
                _write_state(folder, served)  # (before the answer: a cook that has it sees the count)
                try:
                    _send(conn, reply)
                except OSError:
                    pass
            del req, jobs, index, reply
            gc.collect()
            if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > MAX_RSS_KIB:
                return 0
        return 0
    finally:
        server.close()
        if _sig_of_socket(path) == me:
            try:
                os.unlink(path)
            except OSError:
                pass
        address.close()


def _hold() -> None:
    """For the tests of a worker killed or hung mid-request: with VEDUTA_WARM_TEST_HOLD set to a
    path, the worker makes that file once it holds a request and waits (at most a minute)
    until it is removed."""
    hold = os.environ.get("VEDUTA_WARM_TEST_HOLD")
    if not hold:
        return
    with open(hold, "w"):
        pass
    end = time.monotonic() + 60
    while os.path.exists(hold) and time.monotonic() < end:
        time.sleep(0.01)


def _kinds() -> list[str]:
    from veduta.base.project import BY_NAME

    return list(BY_NAME)


def _sig_of_socket(path: str):
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_dev)


def _write_state(folder: str, served: int) -> None:
    from veduta.base.fsutil import atomic_write

    data = json.dumps({"format": FORMAT, "pid": os.getpid(), "served": served}).encode()
    try:
        atomic_write(os.path.join(folder, STATE), data)
    except OSError:
        pass


def status(cache: str) -> dict:
    """Whether the warm worker of the game whose cache folder is *cache* runs, as plain data."""
    from veduta.cook.monitor import _alive, _read_json

    folder = folder_of(cache)
    state = _read_json(os.path.join(folder, STATE))
    running = (
        isinstance(state, dict)
        and state.get("format") == FORMAT
        and _alive(state.get("pid"))
        and os.path.exists(os.path.join(folder, SOCKET))
    )
    return {
        "running": bool(running),
        "pid": state.get("pid") if running else None,
        "served": state.get("served") if running else None,
        "socket": os.path.join(folder, SOCKET),
    }


# -- the monitor's side -----------------------------------------------------------------------


class Keeper:
    """The monitor's warm worker: started as a child process, started again when it ends (at
    most once every :attr:`pause` seconds, longer after it fails at once), stopped with it."""

    def __init__(self, assets: str, cooked: str, cache: str):
        self.args = [os.path.abspath(p) for p in (assets, cooked, cache)]
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.next_start = 0.0
        self.pause = 1.0

    def tend(self) -> None:
        import subprocess

        if self.proc is not None:
            if self.proc.poll() is None:
                return
            quick = time.monotonic() - self.started < 5
            self.pause = min(self.pause * 2, 60.0) if quick else 1.0
            self.next_start = time.monotonic() + self.pause
            self.proc = None
        if time.monotonic() < self.next_start:
            return
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "veduta.cook.warm", *self.args, str(os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            close_fds=True,
        )

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except Exception:  # noqa: BLE001 - (subprocess.TimeoutExpired)
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    assets, cooked, cache, parent = argv
    try:
        return serve(assets, cooked, cache, int(parent))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["FORMAT", "Warm", "begin", "serve", "status", "Keeper", "same_code", "Code", "folder_of"]
