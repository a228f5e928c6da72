"""Strict sources: positioned JSON, diagnostics and shared field validators."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from veduta.source.diagnostics import ERROR, WARNING, Diagnostic, Report, Reported, Within
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
    "Unlocated",
    "Reported",
    "Within",
    "source_limit",
    "too_large",
    "read_source",
]


def source_limit(kind: str) -> int:
    """The largest source of *kind* (``model``, ...) any tool reads, in bytes (``Kind.max_bytes``;
    docs/authoring-tools.md, "Source sizes")."""
    from veduta.base.kinds import BY_NAME

    return BY_NAME[kind].max_bytes


def _what(kind: str) -> str:
    return f"a {kind} source"


def too_large(data: bytes | str, kind: str) -> str | None:
    """Why source *data* of *kind* (bytes, or an editor's text) is not read: ``too large
    (104,857,600 bytes; a model source is at most 16,777,216)``; None when it is within the
    limit. The same words as :func:`read_source`'s refusal of a file that size."""
    limit = source_limit(kind)
    size = len(data)
    if isinstance(data, str) and limit < 4 * size:  # a character is 1 to 4 bytes
        size = len(data.encode("utf-8", "surrogatepass"))
    return f"too large ({size:,} bytes; {_what(kind)} is at most {limit:,})" if size > limit else None


def read_source(path: str, kind: str | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of source file *path* of *kind* (by default the kind its suffix says) and its
    stat taken before reading; an OSError whose ``strerror`` says why otherwise (missing,
    unreadable, a FIFO or a folder in its place: never waited on). One larger than
    :func:`source_limit` is :class:`~veduta.base.fsutil.TooLarge` (``strerror``:
    :func:`too_large`'s words), raised after one stat, before a byte is read. Every tool reads a
    source file through here (the cook, check, deps, rename, report, the language server, the
    MCP and world tools)."""
    from veduta.base.fsutil import read_with_stat
    from veduta.base.kinds import BY_SUFFIX

    if kind is None:
        kind = BY_SUFFIX[os.path.splitext(path)[1]].name
    return read_with_stat(path, source_limit(kind), _what(kind))


def size_report(data: bytes | str, file: str, kind: str) -> Report | None:
    """The report of a source too large to read (:func:`too_large`, at 1:1), or None."""
    why = too_large(data, kind)
    if why is None:
        return None
    rep = Report(file)
    rep.error((1, 1), "$", why)
    return rep


class NoProblems(Report):
    """The report of a validation that is expected to find nothing (of a tree from
    :func:`load_fast`, whose nodes have no positions): the first problem or warning reported
    raises :class:`Reported`, and the caller reads the source again with :func:`load_source`
    to report everything, located."""

    def add(self, where, path: str, message: str, severity: str = ERROR, code: str = "") -> None:
        raise Reported


class Unlocated(Report):
    """The report of a validation of a tree without positions (from :func:`load_fast`): a
    problem at a node is kept with it, and :meth:`located` finds those nodes in the text, all in
    one pass (:func:`~veduta.source.jsonpos.locate`), for the report the strict parser's tree
    gives, byte for byte: the text is parsed once, and a position found only for a value a
    problem is reported at."""

    def __init__(self, file: str):
        super().__init__(file)
        #: (index in items, the node it is at, how its place follows from the node's: Within.at)
        self.at: list[tuple[int, Node, Callable[[Node], tuple[int, int]] | None]] = []
        self.hints: dict[int, str] = {}  # id(node) -> the path of a problem at it (where to look)

    def add(self, where, path: str, message: str, severity: str = ERROR, code: str = "") -> None:
        within = None
        if isinstance(where, Within) and not where.node.line:
            within, where = where.at, where.node
        if isinstance(where, Node) and not where.line:
            self.at.append((len(self.items), where, within))
            self.hints.setdefault(id(where), path)
            where = (0, 0)  # (found by located)
        super().add(where, path, message, severity, code)

    def located(self, text: str, root: Node, also: Mapping[str, Node | None] | None = None) -> Report:
        """The report with every problem at its place in *text* (which *root* was read from);
        the nodes of *also* (JSON path -> node) get their positions too."""
        from dataclasses import replace

        from veduta.source.jsonpos import locate

        extra = {path: n for path, n in (also or {}).items() if n is not None}
        hints = self.hints | {id(n): path for path, n in extra.items()}
        locate(text, root, [n for _, n, _ in self.at] + list(extra.values()), hints)
        items = list(self.items)
        for k, node, within in self.at:
            line, col = within(node) if within is not None else (node.line, node.col)
            items[k] = replace(items[k], line=line, col=col)
        return Report(self.file, items)


def load_fast(data: bytes, fmt: str) -> Obj | None:
    """The root object of *data* read by :func:`~veduta.source.jsonpos.parse_fast` (no
    positions) when the JSON has no problem and its header is ``"veduta": fmt``; else None,
    and :func:`load_source` says what is wrong (with positions)."""
    if too_large(data, fmt.partition("/")[0]) is not None:
        return None  # (load_source says so)
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
    big = size_report(data, file, fmt.partition("/")[0])
    if big is not None:
        return None, big
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
