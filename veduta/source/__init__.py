"""Strict sources: positioned JSON, diagnostics and shared field validators."""

from __future__ import annotations

from veduta.source.diagnostics import ERROR, WARNING, Diagnostic, Report, Reported
from veduta.source.jsonpos import Node, Obj, parse, parse_fast

__all__ = [
    "Diagnostic",
    "Report",
    "ERROR",
    "WARNING",
    "Node",
    "Obj",
    "parse",
    "load_source",
    "load_fast",
    "NoProblems",
    "Reported",
]


class NoProblems(Report):
    """The report of a validation that is expected to find nothing (of a tree from
    :func:`load_fast`, whose nodes have no positions): the first problem or warning reported
    raises :class:`Reported`, and the caller reads the source again with :func:`load_source`
    to report everything, located."""

    def add(self, where, path: str, message: str, severity: str = ERROR, code: str = "") -> None:
        raise Reported


def load_fast(data: bytes, fmt: str) -> Obj | None:
    """The root object of *data* read by :func:`~veduta.source.jsonpos.parse_fast` (no
    positions) when the JSON has no problem and its header is ``"veduta": fmt``; else None,
    and :func:`load_source` says what is wrong (with positions)."""
    root = parse_fast(data)
    if type(root) is not Obj:
        return None
    head = root.value.get("veduta")
    return root if head is not None and head.kind == "string" and head.value == fmt else None


def load_source(data: bytes, file: str, fmt: str) -> tuple[Obj | None, Report]:
    """Parse *data* strictly and check its ``"veduta": fmt`` header.

    Returns the root object (None when the file is not usable JSON or not an
    object) and the report holding every problem found so far.  A wrong or
    missing header is reported but the root is still returned, so a validator
    can report the rest too.
    """
    rep = Report(file)
    root, problems = parse(data)
    rep.extend_json(problems)
    if root is None:
        return None, rep
    if not isinstance(root, Obj):
        rep.error(root, "$", f"expected a JSON object at the top, found {root.kind}")
        return None, rep
    head = root.get("veduta")
    if head is None:
        rep.error(root, "veduta", f'required field is missing (want "{fmt}")')
    elif head.kind != "string":
        from veduta.source.fields import describe

        rep.error(head, "veduta", f'expected the string "{fmt}", found {describe(head)}')
    elif head.value != fmt:
        from veduta.base.errors import quote

        rep.error(head, "veduta", f'{quote(head.value)} is not "{fmt}"')
    return root, rep
