"""How diagnostics are printed: the format names and the default ``$VEDUTA_FORMAT`` picks.

Apart from :mod:`veduta.source.diagnostics` (which formats them) so that a cook that prints
none, such as a no-op, need not import the source modules to learn the format.
"""

from __future__ import annotations

import os

#: How diagnostics are printed for people (``text``) and tools (``json``, ``github``).
FORMATS = ("text", "json", "github")
#: The environment variable that picks the format where no option can (``doit cook``), and the
#: default of ``--format``.
FORMAT_ENV = "VEDUTA_FORMAT"


def default_format() -> str:
    """The format $VEDUTA_FORMAT names, else ``text``."""
    fmt = os.environ.get(FORMAT_ENV, "").strip().lower()
    return fmt if fmt in FORMATS else "text"


__all__ = ["FORMATS", "FORMAT_ENV", "default_format"]
