"""Compiled kernels for the whole-world passes (``inspect world --all``): numba, when installed.

numba is an optional extra (``pip install 'veduta-cook[fast]'``; the ``dev`` extra has it too): it
is heavy (LLVM, some 200 MB), and only a pass over every chunk of a large world needs it. Without
it, or with ``VEDUTA_JIT=0`` in the environment, every caller takes its numpy path, which gives
the same answers (tests/world/test_jit.py runs both and compares them). numba is imported at the
first :func:`enabled` that says yes, never by the cook nor by a tool that does not ask.

A kernel is a plain Python function decorated with :func:`kernel`: compiled on its first call
(``njit``, ``cache=True``: the machine code is kept beside the module, or in numba's user cache
folder when that is not writable, so a later process only loads it), with numpy's error model (a
division by zero gives inf or nan, as the numpy path does) and no fast-math: every floating-point
operation is the IEEE one written, in the order written, so a kernel that writes the numpy path's
operations in its order gives the same bits. Keep it so: no ``fastmath``, no ``parallel`` (a
reduction's order would change), sums of floats in the order the numpy path takes them.

Only the passes that pay for it take the kernels: :func:`enabled` is true within :func:`wanted`
(``inspect world --all`` enters it), never elsewhere unless ``VEDUTA_JIT=1`` (the tests' switch).
numba's own switch ``NUMBA_DISABLE_JIT`` (a whole number but 0) turns them off as ``VEDUTA_JIT=0``
does: under it numba would run each kernel as plain Python (the same bytes, but slower than the
numpy path by far, and with overflow warnings from the hashes' uint64 constants).

Memory: numba and LLVM take some 180 MB of address space, and compiling the kernels more (see
:data:`ROOM`). Before numba is imported, that much is asked of the system and given back at once;
when it is refused (a ``ulimit -v``, a container's limit), or when compiling or loading a kernel
runs out of memory anyway, the kernels are off for the rest of the process (:func:`enabled` says
no), with one warning line on stderr: the numpy path needs less, and gives the same answers. A
kernel that ran out raises :class:`OutOfMemory` (a MemoryError): a caller that can start its pass
again does so (:func:`or_numpy`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

#: the environment variable that switches the kernels: "0" (or false, no, off) never (every caller
#: takes its numpy path), "1" (or true, yes, on) wherever a caller has one (tests), unset or
#: anything else: only within :func:`wanted`
ENV = "VEDUTA_JIT"

#: numba's own switch: a whole number but 0 makes every ``njit`` a plain Python function, so the
#: kernels are off (the numpy path); anything else, as numba reads it, leaves them as they are
NUMBA_OFF = "NUMBA_DISABLE_JIT"

#: the address space asked of the system (and given back) before numba is imported: numba and
#: LLVM (about 180 MB), compiling every kernel (about 80 MB more at its peak; loading them from the
#: cache, less) and numpy's BLAS buffers, which the kernels' pass needs (OpenBLAS ends the process
#: when it cannot get them), with a margin: the sample valley's ``inspect world --all`` with
#: ``VEDUTA_JIT=1`` peaks 275 MB above its size where numba is imported, compiling
ROOM = 320 << 20

_state: dict[str, Any] = {}
_local = threading.local()


@contextlib.contextmanager
def wanted(yes: bool = True) -> Iterator[None]:
    """Within it (in this thread), :func:`enabled` says whether numba is there: the whole-world
    passes (``inspect world --all``) enter it; everything else (a world edit, a preview, the
    named views) keeps the numpy path, so that a small call never imports numba nor waits for a
    kernel to compile (the first call after an install compiles them: seconds)."""
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + (1 if yes else 0)
    try:
        yield
    finally:
        _local.depth = depth


def enabled() -> bool:
    """Whether the compiled kernels are used here: ``VEDUTA_JIT`` not "0", within :func:`wanted`
    (or ``VEDUTA_JIT=1``), ``NUMBA_DISABLE_JIT`` not set, numba importable with the memory it needs,
    and no kernel out of memory yet (the environment is read at each call: tests switch it)."""
    env = env_says()
    if env is False or (env is None and not getattr(_local, "depth", 0)):
        return False
    return not numba_off() and available() and not _state.get("out")


def env_says() -> bool | None:
    """``VEDUTA_JIT``: False for 0/false/no/off, True for 1/true/yes/on (any case), else None."""
    env = os.environ.get(ENV, "").strip().lower()
    return False if env in ("0", "false", "no", "off") else True if env in ("1", "true", "yes", "on") else None


def numba_off() -> bool:
    """numba's own switch: ``NUMBA_DISABLE_JIT`` a whole number but 0 now (numba reads it as it
    is imported; read here at each call, as ``VEDUTA_JIT`` is), or numba imported with it on."""
    try:
        if int(os.environ.get(NUMBA_OFF, "0") or "0"):
            return True
    except ValueError:  # (numba warns and takes 0)
        pass
    numba = _state.get("numba")
    return bool(numba is not None and numba.config.DISABLE_JIT)


def available() -> bool:
    """Whether numba can be imported, with :data:`ROOM` to spare (imports it, once, and points
    its cache at :func:`cache_folder`; without the room, says so once on stderr)."""
    if "numba" not in _state:
        _state["numba"] = None
        import importlib.util

        if importlib.util.find_spec("numba") is None:
            return False
        if not room(ROOM):
            out_of_memory(f"numba's kernels need about {ROOM >> 20} MB more than this process can get")
            return False
        try:
            import numba

            _state["numba"] = numba
        except (ImportError, OSError):  # (OSError: an llvmlite whose library does not load)
            pass
        except MemoryError:
            out_of_memory("numba ran out of memory as it was imported")
        else:
            folder = cache_folder(numba.__version__)
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError:  # (numba then keeps its own places: beside the package, or its user cache)
                pass
            else:
                numba.config.CACHE_DIR = folder  # type: ignore[attr-defined]  # (read as each kernel is compiled)
    return _state["numba"] is not None


def room(size: int) -> bool:
    """Whether the system gives this process *size* bytes more memory now: an anonymous mapping
    of that size, made and given back at once (its pages never touched); what a memory limit
    (``ulimit -v``) or a strict overcommit refuses is refused here."""
    import mmap

    try:
        if hasattr(mmap, "MAP_PRIVATE"):  # (POSIX: private, as a heap's memory is)
            mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE).close()
        else:
            mmap.mmap(-1, size).close()
    except (OSError, ValueError, OverflowError, MemoryError):
        return False
    return True


class OutOfMemory(MemoryError):
    """A kernel could not get the memory to compile or load: the kernels are off for the rest of
    the process (:func:`enabled` says no), as the warning line on stderr said; :func:`or_numpy`
    starts the pass again."""


def out_of_memory(why: str) -> None:
    """Turn the kernels off for the rest of the process, saying so once on stderr (a warning, not
    in a ``--json`` answer on stdout)."""
    if not _state.get("out"):
        _state["out"] = why
        sys.stderr.write(f"veduta: warning: {why}: the numpy path instead (the same answers, slower)\n")
        sys.stderr.flush()


def or_numpy(call: Callable[[], Any]) -> Any:
    """``call()``; when a kernel ran out of memory in it (:class:`OutOfMemory`: the kernels are off
    now), ``call()`` again, by the numpy path. For a call that can start again (it wrote nothing it
    would not write the same)."""
    try:
        return call()
    except OutOfMemory:
        return call()


#: the modules whose code the kernels compile: a kernel calls functions of another module, and
#: numba's cache looks only at the kernel's own file, so a change to intmath.py alone would leave
#: old machine code in use; the cache folder is named by a digest of all of them instead
SOURCES = ("jit.py", "intmath.py", "layer_kernels.py", "chunk_kernels.py", "view_kernels.py")


def cache_folder(numba_version: str) -> str:
    """Where numba keeps the compiled kernels: ``NUMBA_CACHE_DIR`` (else the user's cache folder,
    ``$XDG_CACHE_HOME`` or ``~/.cache``) / ``veduta-kernels`` / a digest of :data:`SOURCES` and
    numba's version: any change to the code they run compiles them again."""
    import hashlib

    here = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(numba_version.encode())
    for name in SOURCES:
        try:
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read())
        except OSError:
            h.update(b"\0missing " + name.encode())
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "veduta"
    )
    return os.path.join(base, "veduta-kernels", h.hexdigest()[:16])


def helper(fn: Callable[..., Any]) -> Callable[..., Any]:
    """*fn* compiled by numba (the kernels' options and cache), for kernels to call: only when
    :func:`available`."""
    return _state["numba"].njit(cache=True, nogil=True, error_model="numpy")(fn)


class _Kernel:
    """A function compiled by numba at its first call (:func:`kernel`)."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.compiled: Callable[..., Any] | None = None
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args: Any) -> Any:
        if self.compiled is None:
            if not available() or env_says() is False or numba_off() or _state.get("out"):
                why = (
                    "numba is not available"
                    if not available()
                    else "turned off by VEDUTA_JIT"
                    if env_says() is False
                    else f"turned off by {NUMBA_OFF}"
                    if numba_off()
                    else f"turned off: {_state['out']}"
                )
                raise RuntimeError(f"{self.__name__}: {why} (check jit.enabled() first)")
            try:
                compiled = helper(self.fn)
                out = interrupt_after(lambda: compiled(*args))  # (the first call compiles, or loads)
            except MemoryError:
                out_of_memory(f"numba ran out of memory compiling or loading {self.__name__}")
                raise OutOfMemory(f"{self.__name__}: out of memory compiling or loading it") from None
            self.compiled = compiled
            return out
        return self.compiled(*args)


def interrupt_after(call: Callable[[], Any]) -> Any:
    """``call()`` with a Ctrl-C (SIGINT) held until it returns, then acted on as it would have
    been: numba's compiler runs Python callbacks from LLVM (through ctypes), where a
    KeyboardInterrupt is swallowed and leaves numba half way (a traceback, once a segfault,
    instead of one line and 130: the CLI's promise). Only in the main thread (where Python
    runs signal handlers); elsewhere, or when the SIGINT handler was not set from Python (an
    embedding program's own: ``signal.getsignal`` gives None, and Python could not put it back),
    ``call()`` as it is."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    try:
        if signal.getsignal(signal.SIGINT) is None:
            return call()
    except ValueError:  # (not the main interpreter)
        return call()
    got: list[int] = []
    try:
        old = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    except ValueError:  # (not the main interpreter)
        return call()
    try:
        out = call()
    finally:
        signal.signal(signal.SIGINT, old)
        if got:
            if callable(old):
                old(signal.SIGINT, None)
            else:  # (SIG_DFL: the process ends as it would have; SIG_IGN: nothing)
                signal.raise_signal(signal.SIGINT)
    return out


def kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """*fn* compiled by numba at its first call (see the module's text for the rules a kernel
    keeps). Call it only when :func:`enabled`; :attr:`__wrapped__` is the plain function (slow,
    but the same operations: for a test of a few values without numba)."""
    return _Kernel(fn)
