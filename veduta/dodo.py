"""What a game repo's dodo.py imports: ``from veduta.dodo import *``.

It provides ``task_cook`` (one subtask per source, named by its path under the
assets folder, e.g. ``cook:models/crate.vmodel``) and ``DOIT_CONFIG``.
"""

from __future__ import annotations

import sys

from veduta.cook.tasks import doit_config, task_cook
from veduta.errors import ConfigError

try:
    DOIT_CONFIG = doit_config()
except ConfigError as exc:  # a user mistake: say it, no traceback
    print(f"veduta: {exc}", file=sys.stderr)
    raise SystemExit(2) from None

__all__ = ["task_cook", "DOIT_CONFIG"]
