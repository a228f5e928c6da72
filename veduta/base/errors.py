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

#: Unicode's format characters (category Cf, as of Unicode 15.1): invisible, yet they change how a
#: line shows: U+202E (right-to-left override) and U+2066-2069 (isolates) reorder the text after
#: them (a file name ``x\u202egpj.vmodel`` shows as ``xlmodv.jpg``), U+200B (zero-width space)
#: and U+FEFF (a byte-order mark) make two different names look the same. A message shows them
#: as ``\u202e`` (``\U000e0001`` beyond the BMP); tests/base/test_errors.py checks the list
#: against the running Python's unicodedata.
_FORMAT_RANGES = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip
#: a lone surrogate: no character, and no line can be written with one (a strict UTF-8 stream
#: refuses it, a lenient one writes raw bytes or ``\\udce9``). A file name's byte that is not
#: UTF-8, which the file system decoding keeps as U+DC80-U+DCFF (``os.fsdecode(b"caf\\xe9")``),
#: shows as that byte, ``\\xe9``, as a veduta report page shows it; another as ``\\ud800``.
#: (``--format json`` keeps it, which JSON writes ``\\udce9`` and reads back as the same name.)
_SURROGATES = {i: f"\\x{i - 0xDC00:02x}" if 0xDC80 <= i < 0xDD00 else f"\\u{i:04x}" for i in range(0xD800, 0xE000)}
_SHOWN = (
    _LINE_BREAKERS
    | {i: f"\\u{i:04x}" if i < 0x10000 else f"\\U{i:08x}" for lo, hi in _FORMAT_RANGES for i in range(lo, hi + 1)}
    | _SURROGATES
)


def shown_path(path: str) -> str:
    """*path* as a line of text shows it (``file:line:col: ...`` of a diagnostic): every character
    that could end or rewrite the line escaped (``a\\nb.vmodel``), so that one problem is one line
    and no file name can smuggle a line of its own into a CI log (``::error ...::``), nor reorder
    or hide part of it (a right-to-left override, a zero-width space: ``\\u202e``); a byte that
    is not UTF-8 (a Latin-1 name) shows as ``\\xe9``, whatever the stream's encoding. The rest of
    the name, and every ``--format json`` field, is as the file system has it."""
    return path.translate(_SHOWN)


def quote(text: str) -> str:
    """*text* in double quotes for a message, control characters and Unicode's format characters
    escaped (``"a\\x00b"``, ``"a\\u202eb"``: a right-to-left override would reorder the rest of
    the line, a zero-width space hide a difference); a long
    one as its first characters and its length: ``"xxxx..." (5000000 characters)``. A message
    never echoes a huge value whole."""
    if len(text) <= QUOTE_CHARS:
        return f'"{text.translate(_SHOWN)}"'
    return f'"{text[:QUOTE_CHARS].translate(_SHOWN)}..." ({len(text)} characters)'


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """*text* if short, else its first characters and its length (no quotes); control and format
    characters escaped, as :func:`quote` does."""
    if len(text) <= limit:
        return text.translate(_SHOWN)
    return f"{text[:limit].translate(_SHOWN)}... ({len(text)} characters)"


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
