"""Cooked files as the tools see them: dump, verify, and cook-then-read one asset.

Each function returns plain data (what ``--json`` prints and the MCP tools return) and raises
:class:`~veduta.base.errors.VedutaError` for a user mistake.  Paths are taken as given: relative to
the current folder (the MCP server works in the game root).
"""

from __future__ import annotations

import json
import threading
from typing import Any, cast

from veduta.base.errors import VdaError, clip


def dump_file(path: str, full: bool = False) -> dict[str, Any]:
    """``{"file": path, "chunks": [...]}``: META as JSON, each body chunk as its record's JSON
    (arrays summarised unless *full*: then every element, pixels as ``#aarrggbb``), unknown chunks
    by type and length.  Raises :class:`~veduta.base.errors.VdaError` for a file that breaks the spec."""
    from veduta.container.meta import Meta
    from veduta.formats import Struct
    from veduta.formats.asset import read_asset_file

    asset = read_asset_file(path)
    chunks: list[dict[str, Any]] = []
    with _SUMMARY_LOCK:
        for ctype, value in asset.chunks:
            if isinstance(value, Meta):
                chunks.append({"type": ctype, "meta": json.loads(value.encode())})
            elif isinstance(value, Struct):
                chunks.append({"type": ctype, "body": _full_json(value) if full else value.to_json()})
            else:
                chunks.append({"type": ctype, "unknown": True, "length": len(cast(bytes, value))})
    return {"file": path, "chunks": chunks}


#: Held while a dump turns records into JSON (``--full`` switches the shared array declarations).
_SUMMARY_LOCK = threading.Lock()


def _full_json(rec) -> dict:
    """Like to_json but with every array element listed (pixels as 0xAARRGGBB hex)."""
    import numpy as np

    # The array types are shared declarations (one type may stand in several fields): each is
    # switched once and put back as it was, under the lock every dump takes (the MCP server dumps
    # in several threads).
    saved = {id(t): (t, t.summary) for t in _array_types(rec)}
    for t, _ in saved.values():
        t.summary = 0
    try:
        out = rec.to_json()
    finally:
        for t, s in saved.values():
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
    from veduta.formats.asset import read_asset_file

    files: list[dict[str, Any]] = []
    for path in paths:
        try:
            a = read_asset_file(path)
        except VdaError as exc:  # (the path as given, in part if huge: it is what the user typed)
            files.append({"file": clip(path, 240), "ok": False, "error": str(exc)})
            continue
        files.append(
            {
                "file": path,
                "ok": True,
                "kind": a.meta.kind,
                "name": a.meta.name,
                "compiler": a.meta.compiler,
                "current": a.meta.compiler == COMPILER_VERSION,
            }
        )
    return {"ok": all(f["ok"] for f in files), "files": files}
