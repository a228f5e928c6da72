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
import math
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from veduta.base.errors import VedutaError, bounded, clip_words, quote


def json_in_argv(argv: Sequence[str]) -> bool:
    """Whether a command line asks for JSON output (``--json``, ``--format json``,
    ``--format=json``), read before (or without) parsing it: argparse's own mistakes are found
    while parsing. Words after ``--`` are operands, not options."""
    words = list(argv)
    if "--" in words:
        words = words[: words.index("--")]
    for i, w in enumerate(words):
        if w == "--json" or w == "--format=json" or (w == "--format" and words[i + 1 : i + 2] == ["json"]):
            return True
    return False


def wants_json(args: argparse.Namespace | None) -> bool:
    """Whether the parsed command line asked for JSON output."""
    return bool(getattr(args, "json", False)) or getattr(args, "format", None) == "json"


def refusal(message: str, findings: list | None = None, **extra: Any) -> str:
    """The JSON document of a refused command (one line)."""
    return json.dumps({"refused": True, "message": message, "findings": findings or [], **extra}, ensure_ascii=False)


def tell(as_json: bool, message: str, code: int, prog: str = "veduta", findings: list | None = None) -> int:
    """Report a mistake (JSON on stdout, or ``prog: message`` on stderr) and return *code*."""
    message = bounded(message)  # the last guard: no message echoes a huge value whole
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


#: a byte of an argument that is not UTF-8 as a repr spells it (``'\\udcff'``: Python keeps such a
#: byte as a lone surrogate), after an even run of backslashes (an odd one is a backslash typed)
_REPR_BYTE = re.compile(r"(?<!\\)((?:\\\\)*)\\udc([89a-f][0-9a-f])")


#: a value as repr quotes it (in single quotes; the only place a repr's ``\\udcff`` can be)
_REPR_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'")


def _bytes_shown(message: str) -> str:
    """argparse's *message* with each byte of an argument that is not UTF-8 spelled ``\\xff``, as
    the rest of the product shows it (:func:`~veduta.base.errors.shown_path`): argparse and the
    argument types quote a value with repr, which spells it ``\\udcff``; only inside such a
    quoted value (text put in a message without repr, as typed, is left as it is)."""
    return _REPR_QUOTED.sub(lambda m: _REPR_BYTE.sub(r"\1\\x\2", m.group(0)), message)


class Parser(argparse.ArgumentParser):
    """The parser of ``veduta`` and, through ``add_subparsers``, of every sub-command: a mistake
    raises :class:`CommandLineMistake`, which ``veduta.faces.cli.main.main`` reports (text or JSON)."""

    def error(self, message: str) -> NoReturn:
        # argparse quotes a bad value whole ("invalid choice: '...'"): keep its start and length
        raise CommandLineMistake(self, bounded(clip_words(self._suggest(_bytes_shown(message)))))

    def _suggest(self, message: str) -> str:
        """argparse's message about a word it does not know, with the closest words it knows: a
        command (``invalid choice: 'plce'; did you mean place?``) or an option (``unrecognized
        arguments: --dryrun; did you mean --dry-run?``)."""
        from veduta.base.names import closest

        choice = re.match(r"(.*invalid choice: '([^']*)')( \(choose from (.*)\))$", message, re.S)
        if choice:
            close = closest(choice.group(2), re.findall(r"'([^']*)'", choice.group(4)))
            if close:
                return f"{choice.group(1)}; did you mean {' or '.join(close)}?{choice.group(3)}"
            return message
        if message.startswith("unrecognized arguments: "):
            known = [o for a in self._actions for o in a.option_strings]
            hints = [
                f"{w}: did you mean {' or '.join(c)}?"
                for w in message.split()[2:]
                if w.startswith("--") and (c := closest(w.split("=", 1)[0], known, 2))
            ]
            if hints:
                return message + " (" + "; ".join(hints) + ")"
        return message

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
        raise argparse.ArgumentTypeError(f"{quote(text)} is not two integers X,Z")
    if len(text) > 64:  # (int() refuses 4,300 digits and more; no cell has a twentieth of that)
        raise argparse.ArgumentTypeError(f"{quote(text)} is far outside any world")
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


#: json.dumps(v, ensure_ascii=False) and with separators (", ", ": "), built once (json.dumps
#: builds an encoder per call when given options: most of the time of a long report)
_SCALAR = json.JSONEncoder(ensure_ascii=False).encode
_ONE_LINE = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
_KEYS: dict[str, str] = {}
_STRING = json.encoder.encode_basestring  # the C encoder of a str, as json.dumps(s, ensure_ascii=False)


def compact_json(value, indent: str = "") -> str:
    """JSON with one item per line, except lists of numbers and strings, which stay on one line."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = _KEYS
        items = []
        for k, v in value.items():
            key = keys.get(k) if type(k) is str else None
            if key is None:
                key = _SCALAR(k)
                if type(k) is str:
                    keys[k] = key
            t = type(v)  # scalars inline (a long report is mostly small dicts of them)
            text = compact_json(v, inner) if t is dict or t is list else _scalar(v)
            items.append(f"{inner}{key}: {text}")
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        flat = all(not isinstance(v, (dict, list)) for v in value)
        small_lists = len(value) <= 4 and all(
            isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v) for v in value
        )
        if flat or small_lists:
            one_line = "[" + ", ".join(map(_scalar, value)) + "]" if flat else _ONE_LINE(value)
            if small_lists or len(one_line) <= 100 or all(isinstance(v, (int, float)) for v in value):
                return one_line
        if not value:
            return "[]"
        return (
            "[\n"
            + ",\n".join(
                inner + (_flat_dict(v, inner) or compact_json(v, inner))
                if type(v) is dict
                else inner + compact_json(v, inner)
                for v in value
            )
            + "\n"
            + indent
            + "]"
        )
    return _scalar(value)


_SEPARATORS: dict[tuple, list[str]] = {}


def _flat_dict(d: dict, indent: str) -> str | None:
    """:func:`compact_json` of a dict whose values are all scalars or lists of numbers (a list's
    element in a long report: a change, a view), from the separators of its keys made once; None
    for any other dict."""
    if not d:
        return None
    vals = []
    for v in d.values():
        t = type(v)
        if t is list:
            if not all(type(x) is int for x in v):
                return None
            vals.append("[" + ", ".join(map(int.__repr__, v)) + "]")
        elif t is dict:
            return None
        else:
            vals.append(_scalar(v))
    shape = (indent, *d)
    seps = _SEPARATORS.get(shape)
    if seps is None:
        if not all(type(k) is str for k in d):
            return None
        inner = indent + "  "
        seps = [("{\n" if i == 0 else ",\n") + inner + _SCALAR(k) + ": " for i, k in enumerate(d)]
        _SEPARATORS[shape] = seps
    return "".join([a + b for a, b in zip(seps, vals, strict=True)]) + "\n" + indent + "}"


def _scalar(v) -> str:
    """json.dumps(v, ensure_ascii=False) of a str, int, float, bool or None, the common ones
    without building an encoder."""
    t = type(v)
    if t is int:
        return int.__repr__(v)
    if t is str:
        return _STRING(v)
    if t is float and math.isfinite(v):
        return float.__repr__(v)
    return _SCALAR(v)


class ProgressLine:
    """A progress callback (``progress(done, total, message)``, the core functions' convention)
    that keeps one line on a terminal up to date: ``message: 42%`` (or ``message: done`` without
    a total), at most ten times a second; :meth:`close` clears it. Use :func:`progress_line`,
    which gives None when the stream is not a terminal (pipes and files get no progress)."""

    def __init__(self, stream):
        self.stream = stream
        self.last = 0.0
        self.width = 0

    def __call__(self, done: float, total: float | None, message: str) -> None:
        import time

        now = time.monotonic()
        if now - self.last < 0.1:
            return
        self.last = now
        amount = f"{100.0 * done / total:.0f}%" if total else f"{done:g}"
        text = f"{message}: {amount}"[:120]
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def close(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0


def progress_line(stream=None) -> ProgressLine | None:
    """A :class:`ProgressLine` on ``stream`` (standard error) when it is a terminal, else None."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return ProgressLine(stream) if tty else None
