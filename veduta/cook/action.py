"""The doit action of a cook subtask: :func:`cook_one`.

It lives apart from :mod:`veduta.cook.cook` (the cooking itself) and :mod:`veduta.cook.ahead` (the
pool that cooks a run's stale sources ahead), above both: it takes its source's result from the
pool when the run has one, and cooks the source itself otherwise. The pool's module (and with it
multiprocessing) is imported only when it was used.
"""

from __future__ import annotations

import sys

from veduta.cook.cook import COOKED, UPTODATE, as_action, cook_batch


def cook_one(
    kind: str,
    rel: str,
    assets: str,
    cooked: str,
    cache: str,
    duplicate_of: list | None = None,
    display_root: str = "",
    shared: list | None = None,
    notes: list | None = None,
    recook: bool = False,
    strict: bool = False,
):
    """Cook one source (the doit action).

    Returns a dict (doit saves it as the task's values: the outcome, warning
    lines and the stat-cache entry) or a ``TaskFailed`` whose message is the
    diagnostics, one per line.  When the run cooks its stale sources ahead in a pool
    (:mod:`veduta.cook.ahead`), the result is taken from there.  *shared*, *notes*, *recook*, *strict*: see
    :func:`veduta.cook.cook.cook_file`.
    """
    ahead = sys.modules.get("veduta.cook.ahead")  # imported only by a run that cooks ahead
    got = ahead.take(rel) if ahead is not None else None
    if got is not None:
        return as_action(got)
    job = (kind, rel, assets, cooked, cache, duplicate_of, display_root, shared, notes, recook, strict)
    result = cook_batch([job])[0]
    if result["outcome"] == UPTODATE and ahead is not None and ahead.lost(rel):
        result["outcome"] = COOKED  # stale when the run began: a worker that died cooked it
    return as_action(result)
