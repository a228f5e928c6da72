"""Diagnostics: located problems in a source, collected and reported together.

Every line has the shape ``<file>:<line>:<col>: <json path>: <message>`` (a
warning adds ``warning: `` before the message), line and column 1-based and
pointing at the offending value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from veduta.source.jsonpos import JsonProblem, Node, clip

ERROR = "error"
WARNING = "warning"
#: Longest message and JSON path a diagnostic keeps (a huge value or key is quoted in part).
MAX_MESSAGE = 400
MAX_PATH = 100


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
        return f"{self.file}:{self.line}:{self.col}: {self.path or '$'}: {tag}{self.message}"

    def to_json(self) -> dict:
        d = {"file": self.file, "line": self.line, "col": self.col, "path": self.path or "$",
             "severity": self.severity, "message": self.message}
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

    def add(self, where: Node | tuple[int, int] | None, path: str, message: str,
            severity: str = ERROR, code: str = "") -> None:
        if where is None:
            line, col = 1, 1
        elif isinstance(where, tuple):
            line, col = where
        else:
            line, col = where.line, where.col
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
