"""Progress of a long call, and how a face hears of it (LAYOUT.md, "Progress and cancellation").

A long core function takes ``progress: Progress | None = None`` and calls it at least every
~0.25 s of work with what is done so far. The face turns the calls into a terminal progress
line or MCP progress notifications; when its caller cancelled, its callback raises
:class:`~veduta.base.errors.Cancelled`, which the core lets propagate, having written nothing (it
writes at the end, atomically).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Progress", "tell", "throttled"]


class Progress(Protocol):
    def __call__(self, done: float, total: float | None, message: str) -> None:
        """*done* of *total* units (None: not known) are done; *message* says of what."""


def tell(progress: Progress | None, done: float, total: float | None, message: str) -> None:
    """One step of a tool's progress, when it has a callback (LAYOUT.md's convention: a face's
    callback, which may raise Cancelled; nothing is written before the last step)."""
    if progress is not None:
        progress(done, total, message)


def throttled(
    report: Callable[[float, float | None, str], None],
    interval: float = 0.2,
    clock: Callable[[], float] = time.monotonic,
) -> Progress:
    """*report*, called at most once per *interval* seconds, and always for the last step
    (*done* == *total*): a core function may call its progress as often as it likes."""
    last = [-float("inf")]

    def progress(done: float, total: float | None, message: str) -> None:
        now = clock()
        if now - last[0] >= interval or (total is not None and done >= total):
            last[0] = now
            report(done, total, message)

    return progress
