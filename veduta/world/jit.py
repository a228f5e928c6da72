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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

#: the environment variable that turns the kernels off ("0"): every caller takes its numpy path
ENV = "VEDUTA_JIT"

_state: dict[str, Any] = {}


def enabled() -> bool:
    """Whether the compiled kernels are used: numba importable and ``VEDUTA_JIT`` not "0" (read at
    each call: tests switch it)."""
    if os.environ.get(ENV, "").strip() == "0":
        return False
    if "numba" not in _state:
        try:
            import numba

            _state["numba"] = numba
        except ImportError:
            _state["numba"] = None
    return _state["numba"] is not None


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
            if not enabled():
                raise RuntimeError(f"{self.__name__}: numba is not available (check jit.enabled() first)")
            numba = _state["numba"]
            self.compiled = numba.njit(cache=True, nogil=True, error_model="numpy")(self.fn)
        return self.compiled(*args)


def kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """*fn* compiled by numba at its first call (see the module's text for the rules a kernel
    keeps). Call it only when :func:`enabled`; :attr:`__wrapped__` is the plain function (slow,
    but the same operations: for a test of a few values without numba)."""
    return _Kernel(fn)
