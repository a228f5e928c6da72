"""What a game repo's dodo.py imports: ``from veduta.dodo import *``.

It provides ``task_cook`` (one subtask per source, named by its path under the
assets folder, e.g. ``cook:models/crate.vmodel``) and ``DOIT_CONFIG``, both bound
to one :class:`~veduta.cook.run.CookRun` for the game found from the current folder.
"""

from __future__ import annotations

import os
import sys

from veduta.base.errors import ConfigError
from veduta.base.project import Project
from veduta.cook.tasks import CookRun, doit_config, task_creator

try:
    _RUN = CookRun(Project.find(os.getcwd()))
    DOIT_CONFIG = doit_config(_RUN)
except ConfigError as exc:  # a user mistake: say it, no traceback
    print(f"veduta: {exc}", file=sys.stderr)
    raise SystemExit(2) from None

task_cook = task_creator(_RUN)

__all__ = ["task_cook", "DOIT_CONFIG"]
