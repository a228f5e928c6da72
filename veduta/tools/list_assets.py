"""``list_assets``: every source of the game, its kind, name and state, with its error and
warning counts (``veduta list``, the MCP tool ``list_assets``).

The state of a source says what the cook would do with it now:

- ``fresh``: its cooked file is up to date (made by this compiler from exactly the current
  source and dependencies);
- ``stale``: it has a cooked file, but the source or a dependency changed since; it cooks
  again without errors;
- ``failed``: the source has errors, so the cook refuses it (a cooked file from an earlier
  version may still be there);
- ``never_cooked``: no cooked file yet, and no errors.

The counts are those of the cook's own checks (:func:`veduta.tools.check.assess`, reading only:
nothing is cooked or written), so they match ``veduta check``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from veduta.source.diagnostics import ERROR, WARNING

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project

__all__ = ["STATES", "list_assets"]

#: every state, in the order the counts list them
STATES = ("fresh", "stale", "failed", "never_cooked")


def list_assets(
    project: Project, kind: str | None = None, jobs: int = 1, progress: Progress | None = None
) -> dict[str, Any]:
    """Every source (of *kind*, or of every kind), sorted by path:
    ``{"assets": [{"kind", "name", "path", "state", "errors", "warnings"}], "counts": {state: n},
    "problems": [diagnostic]}``. What is not known good is compiled, in *jobs* processes; a
    fresh source's warnings are those its cook recorded, as ``veduta check`` reports them."""
    from veduta.base.kinds import kind_named
    from veduta.tools.check import assess

    sources = None
    if kind is not None:
        kind_named(kind)
        sources = [s.rel for s in project.sources() if s.kind.name == kind]
    found = assess(project, sources, jobs=jobs, progress=progress, states=True)
    shown = {project.source_path(s.rel): s for s in found.selected}
    counts: dict[str, list[int]] = {}
    problems = []
    for d in found.diagnostics:
        if d["file"] not in shown:
            problems.append(d)
            continue
        tally = counts.setdefault(d["file"], [0, 0])
        if d["severity"] == ERROR:
            tally[0] += 1
        elif d["severity"] == WARNING:
            tally[1] += 1
    assets: list[dict[str, Any]] = []
    for path, src in shown.items():
        errors, warnings = counts.get(path, (0, 0))
        if src.rel in found.fresh:
            state = "fresh"
        elif errors:
            state = "failed"
        elif os.path.exists(project.cooked_path(src.kind, src.name)):
            state = "stale"
        else:
            state = "never_cooked"
        assets.append(
            {
                "kind": src.kind.name,
                "name": src.name,
                "path": path.replace(os.sep, "/"),
                "state": state,
                "errors": errors,
                "warnings": warnings,
            }
        )
    tally_states = {s: 0 for s in STATES}
    for a in assets:
        tally_states[a["state"]] += 1
    return {"assets": assets, "counts": tally_states, "problems": problems}
