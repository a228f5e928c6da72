"""What a game repo's dodo.py imports: ``from veduta.dodo import *``.

It provides ``task_cook`` (one subtask per source, named by its path under the
assets folder, e.g. ``cook:models/crate.vmodel``) and ``DOIT_CONFIG``.
"""

from __future__ import annotations

from veduta.cook.tasks import doit_config, task_cook

DOIT_CONFIG = doit_config()

__all__ = ["task_cook", "DOIT_CONFIG"]
