"""The one exception hierarchy of veduta cook.

User mistakes in sources are not exceptions: validators collect
:class:`~veduta.source.diagnostics.Diagnostic` objects and report them all.
Exceptions are for files that cannot be used at all.
"""

from __future__ import annotations

#: How much of a long value a message quotes (then its length): every face and every
#: diagnostic echoes user input through :func:`quote` or :func:`clip`.
QUOTE_CHARS = 40
#: The longest message a face prints or returns whole; a longer one is cut (:func:`bounded`).
MESSAGE_CHARS = 2000


def quote(text: str) -> str:
    """*text* in double quotes for a message; a long one as its first characters and its length:
    ``"xxxx..." (5000000 characters)``. A message never echoes a huge value whole."""
    if len(text) <= QUOTE_CHARS:
        return f'"{text}"'
    return f'"{text[:QUOTE_CHARS]}..." ({len(text)} characters)'


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """*text* if short, else its first characters and its length (no quotes)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def bounded(message: str) -> str:
    """*message* cut to :data:`MESSAGE_CHARS` (its start and its length): the faces' last guard,
    for a message that quoted some value whole (argparse's, pydantic's, an OS error's)."""
    return clip(message, MESSAGE_CHARS)


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
            where.append(self.file)
        if self.chunk:
            where.append(f"chunk {self.chunk}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        return (": ".join([", ".join(where), self.reason]) if where else self.reason)

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


class Cancelled(VedutaError):
    """The caller cancelled a long call (an MCP client's ``notifications/cancelled``). Raised by the
    face's ``progress`` callback (:mod:`veduta.base.progress`); a core function lets it propagate
    and has written nothing."""

    def __init__(self, message: str = "cancelled by the client; nothing was written"):
        super().__init__(message)
