"""What every command-line face shares: its argument parser, and how a mistake is told.

A command given ``--json`` (or ``--format json``, where that option exists) promises JSON on
standard output, so every mistake it reports is one JSON document there, one line:
``{"refused": true, "message": "...", "findings": [...]}`` (the shape the world editing commands
use for refusals), and ``"usage"`` when the mistake is in the command line itself (argparse's
usage line of the command). Without it, a mistake is a ``veduta ...: message`` line on standard
error, and argparse's usage text for a command-line mistake. Exit codes: docs/authoring-tools.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from veduta.base.errors import VedutaError


def json_in_argv(argv: Sequence[str]) -> bool:
    """Whether a command line asks for JSON output (``--json``, ``--format json``,
    ``--format=json``), read before (or without) parsing it: argparse's own mistakes are found
    while parsing. Words after ``--`` are operands, not options."""
    words = list(argv)
    if "--" in words:
        words = words[:words.index("--")]
    for i, w in enumerate(words):
        if w == "--json" or w == "--format=json" or (w == "--format" and words[i + 1:i + 2] == ["json"]):
            return True
    return False


def wants_json(args: argparse.Namespace | None) -> bool:
    """Whether the parsed command line asked for JSON output."""
    return bool(getattr(args, "json", False)) or getattr(args, "format", None) == "json"


def refusal(message: str, findings: list | None = None, **extra: Any) -> str:
    """The JSON document of a refused command (one line)."""
    return json.dumps({"refused": True, "message": message, "findings": findings or [], **extra},
                      ensure_ascii=False)


def tell(as_json: bool, message: str, code: int, prog: str = "veduta", findings: list | None = None) -> int:
    """Report a mistake (JSON on stdout, or ``prog: message`` on stderr) and return *code*."""
    if as_json:
        sys.stdout.write(refusal(message, findings) + "\n")
    else:
        sys.stderr.write(f"{prog}: {message}\n")
    return code


class CommandLineMistake(Exception):
    """Raised by :class:`Parser` where argparse would print its usage and exit 2."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser
        self.message = message

    def report(self, as_json: bool) -> NoReturn:
        """Print the mistake as argparse does (usage text and ``prog: error: ...`` on stderr) or,
        *as_json*, as one JSON document on stdout; exit 2 as argparse does."""
        if as_json:
            usage = " ".join(self.parser.format_usage().split())  # one line
            sys.stdout.write(refusal(f"{self.parser.prog}: {self.message}", usage=usage) + "\n")
            sys.stdout.flush()
            raise SystemExit(2)
        argparse.ArgumentParser.error(self.parser, self.message)


class Parser(argparse.ArgumentParser):
    """The parser of ``veduta`` and, through ``add_subparsers``, of every sub-command: a mistake
    raises :class:`CommandLineMistake`, which ``veduta.faces.cli.main.main`` reports (text or JSON)."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineMistake(self, message)

    def parse_known_args(self, args=None, namespace=None):
        # a sub-command's parser with no sub-commands of its own is the last one to read the
        # command line: words it does not know are its mistake, told with its usage
        # (argparse would leave them to ``veduta``'s parser, whose usage says nothing of them)
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


# -- shared argument types and output ------------------------------------------------------

_PAIR = re.compile(r"^\s*(-?\d+)\s*,\s*(-?\d+)\s*$")


def parse_pair(text: str) -> tuple[int, int]:
    """``"X,Z"`` (integers, either may be negative) as a tuple."""
    m = _PAIR.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not two integers X,Z")
    try:
        from veduta.tools.world_query import check_cell

        return check_cell((int(m.group(1)), int(m.group(2))))
    except VedutaError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_size(text: str) -> tuple[int, int]:
    try:
        from veduta.tools.world_query import check_size

        return check_size(parse_pair(text))
    except VedutaError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def allow_negative_pairs(parser: argparse.ArgumentParser) -> None:
    # argparse treats "-30,20" as an option unless it looks like a negative number to it
    if hasattr(parser, "_negative_number_matcher"):
        parser._negative_number_matcher = re.compile(r"^-\d+$|^-\d*\.\d+$|^-?\d+,-?\d+$")


def compact_json(value, indent: str = "") -> str:
    """JSON with one item per line, except lists of numbers and strings, which stay on one line."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {compact_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        one_line = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        flat = all(not isinstance(v, (dict, list)) for v in value)
        small_lists = len(value) <= 4 and all(
            isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v) for v in value)
        if (flat and (len(one_line) <= 100 or all(isinstance(v, (int, float)) for v in value))) or small_lists:
            return one_line
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + compact_json(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)
