"""Numbers as people read them, the same in every face (a text report, an HTML page)."""

from __future__ import annotations

__all__ = ["size_text", "seconds_text", "levels_text"]


def size_text(n: int | None) -> str:
    """A byte count: ``812 B``, ``14.2 KiB``, ``3.1 MiB`` (binary units); "" for None."""
    if n is None:
        return ""
    if n < 1024:
        return f"{n} B"
    v = n / 1024
    for unit in ("KiB", "MiB"):
        if v < 1024:
            return f"{v:.1f} {unit}"
        v /= 1024
    return f"{v:.1f} GiB"


def seconds_text(s: float | None) -> str:
    """A duration in milliseconds, one decimal: ``12.5 ms``; "" for None."""
    return "" if s is None else f"{s * 1000:.1f} ms"


def levels_text(counts: list[int | None] | None) -> str:
    """Counts per level of detail, level 0 first: ``152 / 40 / 20`` (``?`` for one not known)."""
    return "" if not counts else " / ".join("?" if t is None else str(t) for t in counts)
