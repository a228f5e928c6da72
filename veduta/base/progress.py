"""Progress of long work, and how a face cancels it.

A long core function takes ``progress: Progress | None = None`` and calls it as it goes:
``progress(done, total, message)`` (``total`` None when unknown). The face decides what to show: the
CLI a progress line on a terminal, the MCP server progress notifications. To cancel, the face's
callback raises :class:`veduta.base.errors.Cancelled`; the core lets it propagate and has written
nothing (it writes at the end, atomically). :class:`Throttle` calls the face at most every
*interval* seconds (and always for the first and the last step), so a core may report every step.
"""

from __future__ import annotations

import time
from typing import Protocol


class Progress(Protocol):
    def __call__(self, done: float, total: float | None, message: str) -> None: ...


class Throttle:
    """A :class:`Progress` that passes calls on to *inner* at most every *interval* seconds, the
    first call and the last one (``done == total``) always; ``inner`` None swallows everything.
    A cancellation raised by *inner* propagates from the call that reached it."""

    def __init__(self, inner: Progress | None, interval: float = 0.25, clock=time.monotonic):
        self.inner = inner
        self.interval = interval
        self.clock = clock
        self._last: float | None = None

    def __call__(self, done: float, total: float | None, message: str) -> None:
        if self.inner is None:
            return
        now = self.clock()
        last = self._last
        if last is None or now - last >= self.interval or (total is not None and done >= total):
            self._last = now
            self.inner(done, total, message)
