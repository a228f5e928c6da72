"""Diagnostics: located problems in a source, collected and reported together.

Every line has the shape ``<file>:<line>:<col>: <json path>: <message>`` (a
warning adds ``warning: `` before the message), line and column 1-based and
pointing at the offending value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from veduta.base.errors import clip, shown_path
from veduta.source.jsonpos import JsonProblem, Node

ERROR = "error"
WARNING = "warning"
NOTE = "note"
#: Longest message and JSON path a diagnostic keeps (a huge value or key is quoted in part).
MAX_MESSAGE = 400
MAX_PATH = 100


class Reported(Exception):
    """Raised by :class:`veduta.source.NoProblems` at the first problem reported."""


class Within:
    """A place told from a value's position: ``at(node)`` gives the line and column (a character
    of a string as written: a map's cell). A report takes it where it takes a node, and a report
    of a tree without positions (:class:`veduta.source.Unlocated`) asks ``at`` only once the node
    is found in the text."""

    __slots__ = ("node", "at")

    def __init__(self, node: Node, at: Callable[[Node], tuple[int, int]]):
        self.node, self.at = node, at


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    col: int
    path: str
    message: str
    severity: str = ERROR
    code: str = ""

    def __str__(self) -> str:
        tag = "warning: " if self.severity == WARNING else ""
        return f"{shown_path(self.file)}:{self.line}:{self.col}: {self.path or '$'}: {tag}{self.message}"

    def to_json(self) -> dict:
        d = {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "path": self.path or "$",
            "severity": self.severity,
            "message": self.message,
        }
        if self.code:
            d["code"] = self.code
        return d


@dataclass
class Report:
    """Collects the diagnostics of one source file, in the order found."""

    file: str
    items: list[Diagnostic] = field(default_factory=list)
    #: positions of values the JSON reader already reported (a non-finite or huge number):
    #: a validator's error about the same value would only repeat it
    json_reported: set[tuple[int, int]] = field(default_factory=set)

    def add(
        self,
        where: Node | Within | tuple[int, int] | None,
        path: str,
        message: str,
        severity: str = ERROR,
        code: str = "",
    ) -> None:
        if isinstance(where, Within):
            where = where.at(where.node) if where.node.line else where.node  # (no position: refused below)
        if where is None:
            line, col = 1, 1
        elif isinstance(where, tuple):
            line, col = where
        else:
            line, col = where.line, where.col
            if not line:
                raise ValueError(
                    f"{self.file}: {path}: a problem reported at a node with no position "
                    "(read by parse_fast: read the source again with parse)"
                )
        if severity == ERROR and (line, col) in self.json_reported:
            return
        if len(message) > MAX_MESSAGE or len(path) > MAX_PATH:
            message, path = clip(message, MAX_MESSAGE), clip(path, MAX_PATH)
        self.items.append(Diagnostic(self.file, line, col, path, message, severity, code))

    def error(self, where, path: str, message: str, code: str = "") -> None:
        self.add(where, path, message, ERROR, code)

    def warning(self, where, path: str, message: str, code: str = "") -> None:
        self.add(where, path, message, WARNING, code)

    def extend_json(self, problems: list[JsonProblem]) -> None:
        for p in problems:
            self.add((p.line, p.col), p.path, p.message)
            self.json_reported.add((p.line, p.col))

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == WARNING]

    @property
    def ok(self) -> bool:
        return not any(d.severity == ERROR for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        """By position in the file; problems at one position keep the order found."""
        return sorted(self.items, key=lambda d: (d.line, d.col))


def format_diagnostic(d: Diagnostic | dict, fmt: str = "text") -> str:
    """One diagnostic as one line in *fmt* (see :data:`veduta.base.diagformat.FORMATS`).

    ``text``: ``file:line:col: path: [warning: ]message``; ``json``: the object of
    :meth:`Diagnostic.to_json` (file, line, col, severity, path, message, code when there is
    one); ``github``: a workflow command (``::error file=...,line=...,col=...,title=...::...``)
    that GitHub Actions shows as an annotation on the line.
    """
    if isinstance(d, Diagnostic):
        d = d.to_json()
    if fmt == "json":
        import json

        return json.dumps(d, ensure_ascii=False)
    if fmt == "github":
        level = {ERROR: "error", WARNING: "warning"}.get(d["severity"], "notice")
        title = d.get("code") or d["path"]
        props = ",".join(
            f"{k}={_gh_prop(v)}"
            for k, v in (("file", d["file"]), ("line", d["line"]), ("col", d["col"]), ("title", title))
        )
        return f"::{level} {props}::{_gh_data(d['path'] + ': ' + d['message'])}"
    tag = "" if d["severity"] == ERROR else f"{d['severity']}: "
    return f"{shown_path(d['file'])}:{d['line']}:{d['col']}: {d['path']}: {tag}{d['message']}"


def _gh_data(text: str) -> str:
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(value) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")


_LINE = re.compile(
    r'(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<path>(?:[^ "]|"(?:[^"\\]|\\.)*")+): '
    r"(?:(?P<sev>warning|note): )?(?P<message>.*)"
)


def parse_lines(text: str) -> list[dict]:
    """Diagnostics printed as text back to :meth:`Diagnostic.to_json` objects (no codes: the
    text has none).  A line that does not start a diagnostic continues the one before (a
    traceback), or is a problem of a whole file (``path: message``) when it comes first."""
    out: list[dict] = []
    for line in text.splitlines():
        m = _LINE.fullmatch(line)
        if m:
            out.append(
                {
                    "file": m["file"],
                    "line": int(m["line"]),
                    "col": int(m["col"]),
                    "path": m["path"],
                    "severity": m["sev"] or ERROR,
                    "message": m["message"],
                }
            )
        elif out:
            out[-1]["message"] += "\n" + line
        elif line.strip():
            file, sep, message = line.partition(": ")
            out.append(
                {
                    "file": file if sep else "",
                    "line": 1,
                    "col": 1,
                    "path": "$",
                    "severity": ERROR,
                    "message": message if sep else line,
                }
            )
    return out
