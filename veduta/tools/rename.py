"""``veduta rename KIND OLD NEW``: rename an asset and every reference to it, as one set.

The recipe:

1. find the asset's source and every reference to it in the reference graph
   (:mod:`veduta.tools.refs`: every field declared as a reference, in every source);
2. build each changed source's new text by replacing the JSON string that names the asset, and
   nothing else: every other byte of every file is kept (formatting, field order, line endings);
   the asset's own source moves to ``NEW<suffix>`` in the same folder, its bytes unchanged
   but for its own ``"name"`` field when it writes one (it must be the file name);
3. check, with the cook's own checks (:func:`veduta.tools.check.check_sources`, the new texts
   read instead of the disk), every changed source, every source that names a changed one, and
   every other source whose text holds the old name as a JSON string (a reference the graph
   could not see): a diagnostic the rename would add refuses it, and nothing is written;
4. unless *dry_run*, write the set with :func:`veduta.cook.journal.write_set`: an interruption
   leaves every file old, or (killed mid-way) is completed by the next command (docs/rename.md).

Refused (:class:`~veduta.base.errors.UsageError`, nothing written): an unknown kind or asset (the
closest names suggested), a new name that is not an asset name or that an asset of the kind
already has, an asset whose name several sources share, a source that is a symbolic link (or
another source linked to it), a file that cannot be written.  A source among the users that is
another's file under a second name (a link) is written once (:func:`_one_name_per_file`).
Refused as :class:`RenameRefused` (exit 1): a rename the checks
find would break something.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from veduta.base.errors import UsageError, VedutaError
from veduta.source import read_source, source_limit

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project, Source
    from veduta.source.diagnostics import Diagnostic

__all__ = ["RenameRefused", "rename"]


class RenameRefused(VedutaError):
    """The checks found that the rename would break a source; nothing was written.
    ``findings``: the diagnostics it would add, located in the renamed texts."""

    def __init__(self, message: str, findings: list[dict]):
        super().__init__(message)
        self.findings = findings


def rename(
    project: Project, kind: str, old: str, new: str, dry_run: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Rename asset *old* of *kind* to *new*: its source file and every reference to it.

    ``{"kind", "old", "new", "from", "to", "edits": [{"file", "line", "col", "path", "old", "new"}],
    "files": [every file written: changed, created, removed], "checked", "dry_run", "written"}``;
    ``from``/``to`` are the source's paths as the cook shows them, each edit is located in the file
    before the rename (line and column of the string's opening quote, its JSON path) with the
    JSON text replaced.
    """
    from veduta.base.kinds import kind_named
    from veduta.base.names import NAME_RULE, is_name
    from veduta.base.project import no_such_asset
    from veduta.cook import journal, runlock
    from veduta.tools.refs import RefGraph, source_refs

    k = kind_named(kind)
    if not is_name(new):
        raise UsageError(f'"{new}" is not an asset name ({NAME_RULE}; the file name without {k.suffix})')
    step = progress or _quiet
    step(0, 3, "reading sources")
    lock = runlock.acquire(project.cache)
    try:
        journal.finish_edits(project)  # an interrupted set is completed before a new one starts
        graph = RefGraph.scan(project)
        paths = graph.sources_of(kind, old)
        if not paths:
            raise no_such_asset(project, kind, old)
        if len(paths) > 1:
            raise UsageError(
                f'{kind} name "{old}" is used by several sources ({", ".join(paths)}); names must be '
                f"unique per kind: rename or remove all but one first"
            )
        if old == new:
            raise UsageError(f'{kind} "{old}" is already called "{new}"')
        taken = graph.sources_of(kind, new)
        old_rel = paths[0]
        new_rel = old_rel[: old_rel.rfind("/") + 1] + new + k.suffix
        if taken or os.path.lexists(project.source_path(new_rel)):
            there = project.source_path(taken[0] if taken else new_rel).replace(os.sep, "/")
            raise UsageError(f'{kind} "{new}" exists already ({there}); pick another name, or remove it first')
        if os.path.islink(project.source_path(old_rel)):
            raise UsageError(
                f"{project.source_path(old_rel)} is a symbolic link; rename the file it points to and the link by hand"
            )

        # 2. the new texts: one file, one write (a source linked to another of the set is the same file)
        users, aliases = _one_name_per_file(project, graph, old_rel, {*graph.users(kind, old), old_rel})
        before: dict[str, bytes] = {}
        after: dict[str, bytes] = {}
        edits: list[dict[str, Any]] = []
        for rel in users:
            data = _read(project, rel)
            before[rel] = data
            text = data.decode("utf-8", "surrogateescape")  # (a source with references is UTF-8)
            spans = [
                (r.start, r.end, r.line, r.col, r.path)
                for r in source_refs(data, _kind(rel), rel)
                if r.kind == kind and r.name == old
            ]
            if rel == old_rel:
                spans += _own_name(text, old)
            shown = _shown(project, rel)
            written = json.dumps(new)
            for start, end, line, col, path in sorted(spans, reverse=True):
                edits.append(
                    {"file": shown, "line": line, "col": col, "path": path, "old": text[start:end], "new": written}
                )
                text = text[:start] + written + text[end:]
            after[rel] = text.encode("utf-8", "surrogateescape")
        edits.sort(key=lambda e: (e["file"], e["line"], e["col"]))
        changed = sorted(rel for rel in users if rel != old_rel and after[rel] != before[rel])
        # (a link among the users reads its file's new text, in the checks, but is not written)
        linked = sorted(alias for alias, rel in aliases.items() if rel in changed)

        # 3. the checks
        step(1, 3, f"checking {len(changed) + 1} changed sources")
        overlay = {rel: after[rel] for rel in changed}
        overlay.update((alias, after[aliases[alias]]) for alias in linked)
        overlay[new_rel] = after[old_rel]
        checked = _check(project, graph, kind, old, new, old_rel, new_rel, [*changed, *linked], overlay)

        # 4. the set
        files = [_shown(project, rel) for rel in sorted({*changed, old_rel, new_rel})]
        result = {
            "kind": kind,
            "old": old,
            "new": new,
            "from": _shown(project, old_rel),
            "to": _shown(project, new_rel),
            "edits": edits,
            "files": files,
            "checked": checked,
            "dry_run": bool(dry_run),
            "written": False,
        }
        if dry_run:
            step(3, 3, "dry run: nothing written")
            return result
        _writable(project, [*changed, old_rel], new_rel)
        changes = [journal.Change(rel, before[rel], after[rel]) for rel in changed]
        mode = _mode(project.source_path(old_rel))
        changes += [journal.Change(new_rel, None, after[old_rel], mode), journal.Change(old_rel, before[old_rel], None)]
        step(2, 3, f"writing {len(changes)} files")
        with _world_locks(project, [rel for rel in (*changed, *linked, old_rel) if _kind(rel) == "world"]):
            try:
                journal.write_set(project.assets, project.cache, changes, f"rename of {kind} {old} to {new}")
            except journal.EditSetError as exc:
                raise VedutaError(str(exc)) from None
        result["written"] = True
        step(3, 3, f"renamed {kind} {old} to {new}")
        return result
    finally:
        runlock.release(lock)


def _quiet(done: float, total: float | None, message: str) -> None:
    pass


def _one_name_per_file(project: Project, graph: Any, old_rel: str, rels: set[str]) -> tuple[list[str], dict[str, str]]:
    """The sources *rels* the rename edits, one name per file: ``(names, {alias: name})``.  A source
    that is a symbolic link to another of the set (or two links to one file, or sources in a folder
    linked twice) is one file under two names: it is edited and written once, under the name that
    is not itself a link (else the first in path order); the other names are its *aliases*.  Refused
    (:class:`UsageError`): another source that is the renamed asset's file under a second name (a
    link to it, which the move would leave pointing to nothing)."""
    real = {rel: os.path.realpath(project.source_path(rel)) for rel in rels}
    folder = old_rel[: old_rel.find("/") + 1]
    moved = _identity(project.source_path(old_rel))
    for rel in graph.sources() if moved is not None else ():  # (one stat a source of the kind)
        if rel == old_rel or not rel.startswith(folder) or _identity(project.source_path(rel)) != moved:
            continue
        if real.get(rel, os.path.realpath(project.source_path(rel))) == real[old_rel]:  # (not a hard link)
            raise UsageError(
                f"{_shown(project, rel)} is {_shown(project, old_rel)} under another name (a symbolic link to "
                f"it), and the rename moves that file, so the link would point to nothing; remove the link or "
                f"point it elsewhere first; nothing was written"
            )
    by_file: dict[str, list[str]] = {}
    for rel in sorted(rels):
        by_file.setdefault(real[rel], []).append(rel)
    names: list[str] = []
    aliases: dict[str, str] = {}
    for group in by_file.values():
        first = min(group, key=lambda rel: (os.path.islink(project.source_path(rel)), rel))
        names.append(first)
        aliases.update((rel, first) for rel in group if rel != first)
    return sorted(names), aliases


def _own_name(text: str, old: str) -> list[tuple[int, int, int, int, str]]:
    """The span of the source's own top-level ``"name"`` when it says *old* (a source may write its
    name, which must then be its file name): ``[(start, end, line, col, "name")]`` or []."""
    from veduta.source.jsonedit import EditError, JsonDoc
    from veduta.source.jsonpos import Str

    try:
        doc = JsonDoc(text)
    except EditError:
        return []
    node = doc.root.get("name")
    if not isinstance(node, Str) or node.value != old:
        return []
    start, end = doc.span(node)
    return [(start, end, node.line, node.col, "name")]


def _identity(path: str) -> tuple[int, int] | None:
    """The file *path* leads to (links followed), as (device, inode); None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _kind(rel: str) -> str:
    from veduta.base.kinds import kind_of

    k = kind_of(rel)
    assert k is not None, rel  # the graph holds sources only
    return k.name


def _shown(project: Project, rel: str) -> str:
    return project.source_path(rel).replace(os.sep, "/")


def _read(project: Project, rel: str) -> bytes:
    path = project.source_path(rel)
    try:
        return read_source(path, _kind(rel))[0]
    except OSError as exc:
        raise VedutaError(f"cannot read {path}: {exc.strerror or exc}") from None


def _written(name: str) -> re.Pattern[bytes]:
    """Every way JSON writes the string *name* (an asset name: ASCII): each character as itself or
    as a ``\\u`` escape (``"bark"``, ``"b\\u0061rk"``, ``"\\u0062\\u0061rk"``, hex digits in either
    case), quotes included.  Searched in a source's bytes, it finds the name whether or not the
    source is valid JSON; in a broken one a match may span two strings (then a refusal too many,
    never one too few)."""

    def char(c: str) -> bytes:
        code = f"{ord(c):04x}"
        escaped = b"".join(b"[" + re.escape(h.lower().encode()) + re.escape(h.upper().encode()) + b"]" for h in code)
        return b"(?:" + re.escape(c.encode()) + b"|\\\\u" + escaped + b")"

    return re.compile(b'"' + b"".join(char(c) for c in name) + b'"')


def _holds(project: Project, rel: str, name: str) -> bool:
    """Whether source *rel* holds the JSON string *name*, however written (:func:`_written`); one
    larger than its kind's limit is read in pieces (1 MiB at a time), never whole."""
    plain = json.dumps(name).encode()
    path = project.source_path(rel)

    def found(data: bytes) -> bool:  # (the plain form first: the escaped one only where an escape is)
        return plain in data or (b"\\u" in data and _written(name).search(data) is not None)

    try:
        if os.stat(path).st_size <= source_limit(_kind(rel)):
            return found(_read(project, rel))
        longest = 2 + 6 * len(name)
        with open(path, "rb") as f:
            tail = b""
            while piece := f.read(1 << 20):
                if found(tail + piece):
                    return True
                tail = piece[-(longest - 1) :]
    except OSError:
        pass  # (gone meanwhile: the checks tell)
    return False


def _unusable(project: Project, rel: str) -> str | None:
    """Why the cook cannot read source *rel* as JSON (too large, or not JSON); None if it can."""
    try:
        size = os.stat(project.source_path(rel)).st_size
    except OSError:
        return None  # (gone meanwhile: the checks tell)
    limit = source_limit(_kind(rel))
    if size > limit:
        return f"too large ({size:,} bytes; a {_kind(rel)} source is at most {limit:,})"
    return None if _is_json(_read(project, rel)) else "not valid JSON"


def _is_json(data: bytes) -> bool:
    """Whether the cook reads *data* as JSON: json.loads takes a UTF-8 byte-order mark, the cook
    does not (and so the reference graph does not see such a source's references)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return False
    from veduta.source.jsonpos import may_exceed_values, parse

    if may_exceed_values(data):  # (the strict parser counts them, and stops past the limit)
        return parse(data)[0] is not None
    try:
        json.loads(data)
        return True
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        return False


def _mode(path: str) -> int | None:
    import stat

    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None


def _writable(project: Project, rels: list[str], new_rel: str) -> None:
    """Refuse before anything is written when a file or the folder of the move cannot be written."""
    import stat

    for rel in rels:
        path = project.source_path(rel)
        mode = _mode(path)
        if mode is not None and not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise UsageError(
                f"{path} is read-only (mode {mode:o}), so nothing was written; make it writable (chmod u+w) to rename"
            )
    folder = os.path.dirname(project.source_path(new_rel))
    if not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write in {folder}, so nothing was written")


def _world_locks(project: Project, worlds: list[str]):
    """The edit locks of the worlds the rename changes (world edits take them), in name order."""
    import contextlib

    from veduta.base.kinds import name_of

    stack = contextlib.ExitStack()
    if worlds:
        from veduta.tools.world_edit import edit_lock

        for name in sorted({name_of(rel) for rel in worlds}):
            stack.enter_context(edit_lock(project, name))
    return stack


def _check(
    project: Project,
    graph: Any,
    kind: str,
    old: str,
    new: str,
    old_rel: str,
    new_rel: str,
    changed: list[str],
    overlay: dict[str, bytes],
) -> int:
    """Check the sources the rename touches before and after it; :class:`RenameRefused` with the
    diagnostics it would add.  Returns how many sources were checked."""
    from veduta.base.kinds import kind_of, name_of
    from veduta.base.project import AssetIndex, Source
    from veduta.tools.check import check_sources

    # changed sources, the sources that name them, and any other source that holds "old" as a
    # JSON string (a name the reference graph does not know as a reference: the checks tell)
    around = {user for rel in changed for user in graph.users(_kind(rel), name_of(rel))}
    mentions = {rel for rel in graph.sources() if rel not in overlay and _holds(project, rel, old)}
    why = {rel: _unusable(project, rel) for rel in sorted(mentions)}
    unreadable = {_shown(project, rel): w for rel, w in why.items() if w is not None}
    if unreadable:  # its references cannot be found: renaming now would leave them behind
        kinds = " or ".join(sorted({w if w == "not valid JSON" else "too large to read" for w in unreadable.values()}))
        raise RenameRefused(
            f'these sources hold "{old}" but are {kinds}, so their references cannot be found: '
            f"{', '.join(f if w == 'not valid JSON' else f'{f} is {w}' for f, w in unreadable.items())}; "
            "fix them (veduta check says why), then rename; nothing was written",
            [
                {
                    "file": f,
                    "line": 1,
                    "col": 1,
                    "path": "$",
                    "severity": "error",
                    "message": f'{w}, and holds "{old}"',
                }
                for f, w in unreadable.items()
            ],
        )
    names = sorted(({*changed, old_rel} | around | mentions) - {new_rel})

    def source(rel: str) -> Source:
        k = kind_of(rel)
        assert k is not None
        return Source(k, name_of(rel), rel)

    old_index = AssetIndex.from_paths(graph.sources())
    new_index = AssetIndex.from_paths([rel for rel in graph.sources() if rel != old_rel] + [new_rel])
    before = check_sources(project, [(source(rel), None) for rel in names], old_index)
    after_rels = [new_rel if rel == old_rel else rel for rel in names]
    after = check_sources(project, [(source(rel), None) for rel in after_rels], new_index, overlay=overlay)

    def key(d: Diagnostic, renamed: bool) -> tuple:
        msg = d.message
        if not renamed:
            msg = msg.replace(f'"{old}"', f'"{new}"').replace(old_rel, new_rel)
        return d.path, d.severity, d.code, msg

    added: list[Diagnostic] = []
    for was, now in zip(before, after, strict=True):
        had = {key(d, False) for d in was}
        added += [d for d in now if key(d, True) not in had]
    if added:
        listed = [str(d) for d in added[:20]] + ([f"... and {len(added) - 20} more"] if len(added) > 20 else [])
        n = len(added)
        raise RenameRefused(
            f"renaming {kind} {old} to {new} would add {n} problem{'s' if n != 1 else ''}, so "
            f"nothing was written:\n  " + "\n  ".join(listed),
            [d.to_json() for d in added],
        )
    return len(names)
