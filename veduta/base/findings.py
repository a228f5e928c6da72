"""Findings of the inspect tools: one shape, one ranking (docs/inspect.md).

A finding is a plain dict ``{"code", "severity", "message", ...}`` (extra keys say where: a
path, a part, a place, a cell, a chunk). ``inspect model``, ``inspect world`` and ``inspect
prefab`` all rank them the same way: errors, then warnings, then notes, discovery order within
one severity.
"""

from __future__ import annotations

from typing import Any

ERROR, WARNING, NOTE = "error", "warning", "note"
#: ranking of severities
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, NOTE: 2}


def finding(code: str, severity: str, message: str, **where: Any) -> dict[str, Any]:
    """A finding dict; keyword arguments whose value is None are left out."""
    out: dict[str, Any] = {"code": code, "severity": severity, "message": message}
    out.update((k, v) for k, v in where.items() if v is not None)
    return out


def source_errors(kind: str, errors: list[dict]) -> list[dict]:
    """An invalid source's errors (diagnostic dicts with their ``text``) as findings too:
    ``<KIND>_SOURCE_ERROR`` unless the compiler gave a code, located as the errors are, so that
    a reader of ``findings`` alone (an agent) sees them."""
    return [
        finding(
            e.get("code") or f"{kind.upper()}_SOURCE_ERROR",
            ERROR,
            e["text"],
            **{k: e.get(k) for k in ("path", "line", "col", "file")},
        )
        for e in errors
        if e.get("severity", ERROR) == ERROR
    ]


def ranked(findings: list[dict]) -> list[dict]:
    """Most severe first; stable within one severity."""
    return sorted(findings, key=lambda f: SEVERITY_ORDER[f["severity"]])


def has_error(findings: list[dict]) -> bool:
    return any(f["severity"] == ERROR for f in findings)
