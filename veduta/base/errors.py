"""The one exception hierarchy of veduta cook.

User mistakes in sources are not exceptions: validators collect
:class:`~veduta.source.diagnostics.Diagnostic` objects and report them all.
Exceptions are for files that cannot be used at all.
"""

from __future__ import annotations

import re

#: How much of a long value a message quotes (then its length): every face and every
#: diagnostic echoes user input through :func:`quote` or :func:`clip`.
QUOTE_CHARS = 40
#: The longest message a face prints or returns whole; a longer one is cut (:func:`bounded`).
MESSAGE_CHARS = 2000


#: control characters as a message shows them: ``\x00``, ``\n`` (a NUL or a newline in a quoted
#: value would otherwise vanish from the line, or break it)
_CONTROLS = {i: f"\\x{i:02x}" for i in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r", 127: "\\x7f"}


#: what else breaks a line where a file name is printed: the C1 controls (U+0085, next line, among
#: them) and Unicode's line and paragraph separators, which str.splitlines() and editors split at
_LINE_BREAKERS = _CONTROLS | {i: f"\\x{i:02x}" for i in range(0x80, 0xA0)} | {0x2028: "\\u2028", 0x2029: "\\u2029"}


def shown_path(path: str) -> str:
    """*path* as a line of text shows it (``file:line:col: ...`` of a diagnostic): every character
    that could end or rewrite the line escaped (``a\\nb.vmodel``), so that one problem is one line
    and no file name can smuggle a line of its own into a CI log (``::error ...::``). The rest of
    the name, and every ``--format json`` field, is as the file system has it."""
    return path.translate(_LINE_BREAKERS)


def quote(text: str) -> str:
    """*text* in double quotes for a message, control characters escaped (``"a\x00b"``); a long
    one as its first characters and its length: ``"xxxx..." (5000000 characters)``. A message
    never echoes a huge value whole."""
    if len(text) <= QUOTE_CHARS:
        return f'"{text.translate(_LINE_BREAKERS)}"'
    return f'"{text[:QUOTE_CHARS].translate(_LINE_BREAKERS)}..." ({len(text)} characters)'


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """*text* if short, else its first characters and its length (no quotes); control characters
    escaped, as :func:`quote` does."""
    if len(text) <= limit:
        return text.translate(_LINE_BREAKERS)
    return f"{text[:limit].translate(_LINE_BREAKERS)}... ({len(text)} characters)"


def clip_words(message: str, limit: int = 60) -> str:
    """*message* with every word (a run without spaces) longer than *limit* cut to its start and
    its length, and control characters in words escaped: a message that quotes a user's value
    whole (argparse's ``invalid value: '...'``, a path) keeps its words and says how long the
    value was. Line breaks between words stay."""
    return re.sub(r"\S+", lambda m: clip(m.group(0), QUOTE_CHARS if len(m.group(0)) > limit else limit), message)


def bounded(message: str) -> str:
    """*message* cut to :data:`MESSAGE_CHARS` (its start and its length): the faces' last guard,
    for a message that quoted some value whole (pydantic's, an OS error's). Line breaks stay."""
    if len(message) <= MESSAGE_CHARS:
        return message
    return f"{message[:MESSAGE_CHARS]}... ({len(message)} characters)"


class VedutaError(Exception):
    """Base class of every error veduta raises on purpose."""


class VdaError(VedutaError):
    """A .vda file (or payload) that breaks the container spec.

    The message always names the file, the chunk and the byte offset (from
    the start of the file when the chunk is known to sit in a file, else from
    the start of the payload).
    """

    def __init__(self, message: str, *, file: str = "", chunk: str = "", offset: int | None = None):
        self.file = file
        self.chunk = chunk
        self.offset = offset
        self.reason = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.file:
            where.append(clip(self.file, 240))  # a path a user typed: in part, with its length, if huge
        if self.chunk:
            where.append(f"chunk {self.chunk}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        return ": ".join([", ".join(where), self.reason]) if where else self.reason

    def located(self, *, file: str | None = None, chunk: str | None = None, base: int = 0) -> VdaError:
        """Return a copy with file/chunk filled in and the offset shifted by *base*."""
        return VdaError(
            self.reason,
            file=self.file or (file or ""),
            chunk=self.chunk or (chunk or ""),
            offset=None if self.offset is None else self.offset + base,
        )


class ConfigError(VedutaError):
    """A problem with the game repo's layout or configuration."""


class UsageError(VedutaError):
    """A usage mistake: a bad argument, an option value out of range, an unknown asset name.
    The command line exits with status 2 (1 is for problems found in assets)."""


class Cancelled(BaseException):
    """The caller cancelled a long call (an MCP client's ``notifications/cancelled``). Raised by the
    face's ``progress`` callback (:mod:`veduta.base.progress`); a core function lets it propagate
    and has written nothing. A BaseException, as KeyboardInterrupt and asyncio's CancelledError
    are: an ``except Exception`` on the way (a compiler's guard, doit's runner) lets it through."""

    def __init__(self, message: str = "cancelled by the client"):
        super().__init__(message)
