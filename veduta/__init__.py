"""veduta cook: the asset compiler of the Veduta engine."""

from __future__ import annotations

__version__ = "0.1.0"

#: The compiler version recorded in every META chunk (asset.CompilerVersion).
#: Changing it makes every cooked asset stale.
COMPILER_VERSION = "veduta-asset/0.8.0"
