"""Cooked files as the tools see them: dump, verify, and cook-then-read one asset.

Each function returns plain data (what ``--json`` prints and the MCP tools return) and raises
:class:`~veduta.errors.VedutaError` for a user mistake.  Paths are taken as given: relative to
the current folder (the MCP server works in the game root).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from veduta.errors import VdaError, VedutaError, no_such_asset


def dump_file(path: str, full: bool = False) -> dict[str, Any]:
    """``{"file": path, "chunks": [...]}``: META as JSON, each body chunk as its record's JSON
    (arrays summarised unless *full*: then every element, pixels as ``#aarrggbb``), unknown chunks
    by type and length.  Raises :class:`~veduta.errors.VdaError` for a file that breaks the spec."""
    from veduta.container.meta import Meta
    from veduta.container.vda import read_asset_file
    from veduta.formats import Struct

    asset = read_asset_file(path)
    chunks: list[dict[str, Any]] = []
    for ctype, value in asset.chunks:
        if isinstance(value, Meta):
            chunks.append({"type": ctype, "meta": json.loads(value.encode())})
        elif isinstance(value, Struct):
            chunks.append({"type": ctype, "body": _full_json(value) if full else value.to_json()})
        else:
            chunks.append({"type": ctype, "unknown": True, "length": len(cast(bytes, value))})
    return {"file": path, "chunks": chunks}


def _full_json(rec) -> dict:
    """Like to_json but with every array element listed (pixels as 0xAARRGGBB hex)."""
    import numpy as np

    saved = []
    for t in _array_types(rec):
        saved.append((t, t.summary))
        t.summary = 0
    try:
        out = rec.to_json()
    finally:
        for t, s in saved:
            t.summary = s
    if getattr(rec, "CHUNK", "") == "TEXR":
        out["images"] = [[[f"#{p:08x}" for p in row] for row in np.asarray(img)] for img in rec.images]
    return out


def _array_types(rec):
    from veduta.formats.codec import Array, List, Opt, StructType, Tuple

    seen = []

    def walk(t):
        if isinstance(t, Array):
            seen.append(t)
        elif isinstance(t, (List, Opt)):
            walk(t.item)
        elif isinstance(t, Tuple):
            for x in t.items:
                walk(x)
        elif isinstance(t, StructType):
            for _, x in t.cls.FIELDS:
                walk(x)

    for _, t in type(rec).FIELDS:
        walk(t)
    return seen


def verify_files(paths: list[str]) -> dict[str, Any]:
    """Check cooked files against the container spec (magic, lengths, CRCs, META, body).

    ``{"ok": every file is whole, "files": [...]}``, one entry per path in order:
    ``{"file", "ok": true, "kind", "name", "compiler", "current"}`` (``current``: cooked by this
    compiler version) or ``{"file", "ok": false, "error"}`` naming the chunk and byte offset.
    """
    from veduta import COMPILER_VERSION
    from veduta.container.vda import read_asset_file

    files: list[dict[str, Any]] = []
    for path in paths:
        try:
            a = read_asset_file(path)
        except VdaError as exc:
            files.append({"file": path, "ok": False, "error": str(exc)})
            continue
        files.append({"file": path, "ok": True, "kind": a.meta.kind, "name": a.meta.name,
                      "compiler": a.meta.compiler, "current": a.meta.compiler == COMPILER_VERSION})
    return {"ok": all(f["ok"] for f in files), "files": files}


def cooked_record(project, kind: str, name: str, warn: Callable[[str], None] | None = None, index=None):
    """Cook (when stale) and read asset *name* of *kind*: its body record.

    Raises :class:`~veduta.errors.VedutaError` when no such source exists or it has errors (the
    message lists them).  Warning lines of the cook go to *warn* when given.  *index*: the game's
    assets (default: as they are now, ``project.index()``: a source written a moment ago counts).
    """
    from veduta.container.vda import read_asset_file
    from veduta.cook.cook import FAILED, cook_file
    from veduta.kinds import kind_named

    kind_named(kind)
    src = project.find_source(kind, name)
    if src is None:
        raise no_such_asset(project, kind, name)
    cooked = project.cooked_path(kind, name)
    out = cook_file(kind, src.rel, project.assets, cooked, project.cache,
                    index=index if index is not None else project.index())
    if out["outcome"] == FAILED:
        raise VedutaError(f"{kind} {name} has errors:\n" + "\n".join(out["messages"]))
    if warn is not None:
        for m in out["messages"]:
            warn(m)
    return read_asset_file(cooked).body
