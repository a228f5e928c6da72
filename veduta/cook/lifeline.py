"""Worker processes end when the cook that started them dies (a ``kill -9`` of ``doit -n N``).

``doit -n N`` (process mode) forks its workers with :mod:`multiprocessing`; killed with
SIGKILL, the main process cannot stop them, and they would go on compiling (and holding
files) for minutes.  :func:`install` arms every process that this one forks from then on
with Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, through ctypes), so
the kernel ends them as soon as their parent is gone.  A child whose parent died before it
was armed ends itself.  Elsewhere than Linux it does nothing (documented limit, docs/cooking.md).

Only forks are covered: under the ``spawn`` or ``forkserver`` start methods the hook does not
run in the workers (Python 3.11-3.13 on Linux fork by default).
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1

_installed = False
_forker = 0  # pid of the process that forked (set just before each fork, inherited by the child)


def _before_fork() -> None:
    global _forker
    _forker = os.getpid()


def _arm_child() -> None:
    while True:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            break
        except (OSError, AttributeError):
            return
        except KeyboardInterrupt:  # Ctrl-C reached the new child here (a worker of doit -P process;
            # the cook's pool forks with SIGINT held back): the cook got it too and stops its
            # children; arm this one anyway, rather than Python's "Exception ignored" at the fork
            continue
    if os.getppid() != _forker:  # the parent died before the signal was armed
        os._exit(1)


def install() -> None:
    """Arm every child forked by this process from now on (once per process; Linux only)."""
    global _installed
    if _installed or not sys.platform.startswith("linux"):
        return
    os.register_at_fork(before=_before_fork, after_in_child=_arm_child)
    _installed = True


__all__ = ["install"]
