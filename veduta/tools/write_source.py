"""``write_source``: write (create or replace) one asset's source, checked first by the cook's own
checks (``veduta write KIND NAME FILE``, the MCP tool ``write_source``).

A source with an error is refused with every located diagnostic and nothing is written; one
without is written atomically (a reader sees the old file or the new one), at the path of the
asset when it exists (the file keeps its mode; a symlink's target is written) or at
``<assets>/<folder>/<name><suffix>`` when it is new. The reply says whether the source was
created or replaced and what changed (JSON paths with their old and new values), with the
source's warnings. The tools that read sources (inspect, preview, export, cook) see the new
text at once: they cook what is stale before they read it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import TYPE_CHECKING, Any

from veduta.base.errors import UsageError, VedutaError
from veduta.base.fsutil import check_inside

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project

__all__ = ["MAX_SOURCE_BYTES", "SourceRefused", "too_large", "write_source"]

#: the largest source written (the cook reads sources whole)
MAX_SOURCE_BYTES = 16 << 20
#: changes listed at most (the rest are counted in ``more_changes``)
MAX_CHANGES = 50
#: a value in a change is shown whole up to this many characters of JSON
MAX_VALUE = 200


class SourceRefused(VedutaError):
    """The source has errors; nothing was written. ``findings``: every diagnostic, located."""

    def __init__(self, message: str, findings: list[dict]):
        super().__init__(message)
        self.findings = findings


def write_source(
    project: Project, kind: str, name: str, text: str, dry_run: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Write *text* as the source of asset *name* of *kind* (created or replaced), when the cook's
    checks find no error in it; :class:`SourceRefused` with every diagnostic otherwise (nothing
    written). *dry_run*: check and report, write nothing.

    ``{"kind", "name", "path", "action": "created"|"replaced"|"unchanged", "written", "dry_run",
    "bytes", "changes": [{"path", "change": "added"|"removed"|"changed", "old"?, "new"?}],
    "more_changes", "lines": {"added", "removed"}, "diagnostics": [warnings]}``.

    *progress* hears of the three steps (waiting for a world's edit lock and checking, writing,
    written); a progress that raises :class:`~veduta.base.errors.Cancelled` before the write stops
    it with nothing written.
    """
    from veduta.base.kinds import kind_named
    from veduta.base.project import Source
    from veduta.source.diagnostics import ERROR
    from veduta.source.fields import NAME_RE
    from veduta.tools.check import check_sources

    k = kind_named(kind)
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"{name!r} is not an asset name: 1-64 characters of a-z, 0-9, _ and -, starting with a "
            f"letter or digit (the file name without {k.suffix})"
        )
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"the source text is not Unicode text (character {exc.start} is a lone surrogate)") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise UsageError(f"the source: {too_large(len(data))}")
    step = progress or _quiet
    step(0, 2, f"checking {kind} {name}" + (" (waiting for the world's edit lock)" if kind == "world" else ""))
    with _lock(project, kind, name):
        index = project.index()
        paths = index.by_kind.get(kind, {}).get(name, [])
        if len(paths) > 1:
            raise UsageError(
                f'{kind} name "{name}" is used by several sources ({", ".join(paths)}); names must be '
                f"unique per kind: rename or remove all but one, then write it"
            )
        rel = paths[0] if paths else f"{k.folder}/{name}{k.suffix}"
        if not paths:
            index.by_kind.setdefault(kind, {})[name] = [rel]  # as the cook will see it once written
        path = project.source_path(rel)
        shown = path.replace(os.sep, "/")
        check_inside(path)  # (veduta mcp: a source linked out of the game root is neither read nor written)
        diagnostics = [
            d.to_json() for d in check_sources(project, [(Source(k, name, rel), None)], index, overlay={rel: data})[0]
        ]
        errors = [d for d in diagnostics if d["severity"] == ERROR]
        if errors:
            raise SourceRefused(_refusal(kind, name, shown, errors), [_finding(kind, d) for d in diagnostics])
        old = _read(path, kind) if paths else None
        action = "created" if old is None else ("unchanged" if old == data else "replaced")
        written = False
        step(1, 2, f"writing {shown}" if not dry_run and action != "unchanged" else f"checked {shown}")
        if not dry_run and action != "unchanged":
            _write(path, data, old is not None)
            written = True
    step(2, 2, f"{action} {shown}" if written else f"checked {shown}, nothing written")
    changes, more = _changes(old, data) if action == "replaced" else ([], 0)
    lines = _lines(old or b"", data) if action != "unchanged" else {"added": 0, "removed": 0}
    return {
        "kind": kind,
        "name": name,
        "path": shown,
        "action": action,
        "written": written,
        "dry_run": bool(dry_run),
        "bytes": len(data),
        "changes": changes,
        "more_changes": more,
        "lines": lines,
        "diagnostics": diagnostics,
    }


def too_large(size: int | None) -> str:
    """Why a source of *size* bytes (None: more than the limit, not read further) is refused: the
    limit is this tool's (a text an agent sends whole), not the cook's, which reads any size."""
    got = "" if size is None else f"{size:,} bytes, "
    return (
        f"{got}more than the {MAX_SOURCE_BYTES:,} bytes (16 MiB) veduta write and write_source take; "
        f"a larger source is cooked as any other, but is not written by this tool"
    )


def _quiet(done: float, total: float | None, message: str) -> None:
    pass


def _lock(project: Project, kind: str, name: str):
    """The source's edit lock, held from reading the old text to writing the new: two writes of
    one source at once (two MCP calls, an agent and a terminal) take turns, each reporting the
    changes from what the other wrote, not both from the same old text. A world's is its edit
    lock, which the world editing tools take too."""
    if kind == "world":
        from veduta.tools.world_edit import edit_lock

        return edit_lock(project, name)
    import hashlib

    from veduta.base.fsutil import held_lock

    key = hashlib.sha256(f"{kind}/{name}".encode()).hexdigest()[:16]
    return held_lock(os.path.join(project.cache, f"source-edit-{key}.lock"))


def _refusal(kind: str, name: str, shown: str, errors: list[dict]) -> str:
    from veduta.base.errors import shown_path
    from veduta.source.diagnostics import format_diagnostic

    listed = [format_diagnostic(d) for d in errors[:20]]
    if len(errors) > 20:
        listed.append(f"... and {len(errors) - 20} more")
    n = len(errors)
    return (
        f"{kind} {name} has {n} error{'s' if n != 1 else ''}, so nothing was written to {shown_path(shown)}; fix "
        f"{'them' if n != 1 else 'it'} and write it again:\n  " + "\n  ".join(listed)
    )


def _finding(kind: str, d: dict) -> dict:
    """A diagnostic as a finding of the refusal: located (file, line, col, path), with a code
    (the check's own, else ``<KIND>_SOURCE_ERROR`` / ``<KIND>_SOURCE_WARNING``)."""
    return {
        "code": d.get("code") or f"{kind.upper()}_SOURCE_{d['severity'].upper()}",
        "severity": d["severity"],
        "message": d["message"],
        "file": d["file"],
        "line": d["line"],
        "col": d["col"],
        "path": d["path"],
    }


def _read(path: str, kind: str) -> bytes | None:
    """The source before the write (checked inside the game root already): a regular file (a FIFO
    is never waited on) within its kind's limit (docs/authoring-tools.md, "Source sizes")."""
    from veduta.source import read_source

    try:
        return read_source(path, kind)[0]
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise VedutaError(f"cannot read {path}: {exc.strerror or exc}") from None


def _write(path: str, data: bytes, exists: bool) -> None:
    from veduta.base.fsutil import atomic_write, rewrite_source

    try:
        if exists:
            rewrite_source(path, data)  # keeps the file's mode; a symlink's target is written
        else:
            atomic_write(path, data, durable=True)
    except PermissionError as exc:
        raise VedutaError(f"cannot write {path}: {exc.strerror or exc}; nothing was written") from None
    except OSError as exc:
        raise VedutaError(f"cannot write {path}: {exc.strerror or exc}; nothing was written") from None


# -- what changed --------------------------------------------------------------------------------


def _lines(old: bytes, new: bytes) -> dict[str, int]:
    """Lines added and removed (as a multiset: a moved line counts as neither)."""
    a = Counter(old.decode("utf-8", "replace").splitlines())
    b = Counter(new.decode("utf-8", "replace").splitlines())
    return {"added": sum((b - a).values()), "removed": sum((a - b).values())}


def _changes(old: bytes | None, new: bytes) -> tuple[list[dict], int]:
    """What changed between two sources, as JSON paths (``parts[2].radius``), with the old and new
    values (a large value summarised), the first :data:`MAX_CHANGES`, and how many more."""
    try:
        before = json.loads(old) if old is not None else None
        after = json.loads(new)
    except (ValueError, RecursionError):  # the old source was no JSON: all of it changed
        return [{"path": "$", "change": "changed"}], 0
    out: list[dict] = []
    try:
        _diff(before, after, "", out)
    except RecursionError:
        return [{"path": "$", "change": "changed"}], 0
    return out[:MAX_CHANGES], max(0, len(out) - MAX_CHANGES)


def _diff(a: Any, b: Any, path: str, out: list[dict]) -> None:
    from veduta.source.jsonpos import join_path

    if isinstance(a, dict) and isinstance(b, dict):
        for key in a:
            if key not in b:
                out.append({"path": join_path(path, key), "change": "removed", "old": _shown(a[key])})
        for key in b:
            if key not in a:
                out.append({"path": join_path(path, key), "change": "added", "new": _shown(b[key])})
            else:
                _diff(a[key], b[key], join_path(path, key), out)
        return
    if isinstance(a, list) and isinstance(b, list) and not (_flat(a) and _flat(b)):  # a vector is one value
        named_a, named_b = _by_name(a), _by_name(b)
        if named_a is not None and named_b is not None:  # lists of named items: matched by name
            where = {n: i for i, n in enumerate(named_b)}
            for i, n in enumerate(named_a):
                if n not in where:
                    out.append({"path": join_path(path, i), "change": "removed", "old": _shown(a[i])})
            old_at = {n: i for i, n in enumerate(named_a)}
            for j, n in enumerate(named_b):
                if n not in old_at:
                    out.append({"path": join_path(path, j), "change": "added", "new": _shown(b[j])})
                else:
                    _diff(a[old_at[n]], b[j], join_path(path, j), out)
            return
        for i in range(min(len(a), len(b))):
            _diff(a[i], b[i], join_path(path, i), out)
        for i in range(len(b), len(a)):
            out.append({"path": join_path(path, i), "change": "removed", "old": _shown(a[i])})
        for i in range(len(a), len(b)):
            out.append({"path": join_path(path, i), "change": "added", "new": _shown(b[i])})
        return
    if a != b or type(a) is not type(b):
        out.append({"path": path or "$", "change": "changed", "old": _shown(a), "new": _shown(b)})


def _flat(items: list) -> bool:
    """A list of plain values (a vector, a colour, a list of tags): changed as one value."""
    return not any(isinstance(x, (dict, list)) for x in items)


def _by_name(items: list) -> list[str] | None:
    """The names of a list of objects that each have a distinct string ``name``, else None."""
    names = [x.get("name") for x in items if isinstance(x, dict)]
    strings = [n for n in names if isinstance(n, str)]
    if len(strings) != len(items) or len(set(strings)) != len(strings):
        return None
    return strings


def _shown(value: Any) -> Any:
    """*value* itself when its JSON is short, else a summary (``"object of 12 keys"``)."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= MAX_VALUE:
        return value
    if isinstance(value, dict):
        return f"(an object of {len(value)} keys)"
    if isinstance(value, list):
        return f"(a list of {len(value)} items)"
    return f"({text[:MAX_VALUE]}... {len(text)} characters)"
