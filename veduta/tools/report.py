"""``veduta report``: every asset's cooked size, cook, weight and references, largest first.

Per asset (from what is on disk and in the cook's own state; nothing is cooked or written,
except the HTML page when asked for):

* ``bytes``: the size of its cooked file (None: not cooked); ``state``: ``fresh`` (the cooked
  file is that of the current sources, as the cook's stat cache proves without reading them),
  ``stale`` (cooked, but something changed since: the next cook makes it again) or
  ``not_cooked``;
* ``origin``: where the cooked file came from when the cook last made it: ``compiled``,
  ``local store`` (restored from ``cache/store``) or ``shared cache``; ``compile_s``: how long its
  compile took (models compiled together in one batch share its time equally); both None when
  the cook's build log (:mod:`veduta.cook.builds`) has no record of this very file;
* ``triangles``: a model's triangles at each level of detail (level 0 first; a level drawn
  with another model counts that model's), as ``veduta inspect model`` gives them;
  ``texture_memory``: a texture's pixels in bytes with its whole mip chain (4 bytes a pixel),
  ``mip_levels`` its levels;
* ``deps``: how many assets (and PNGs) its source names, ``used_by``: how many sources name it
  (:mod:`veduta.tools.refs`);
* ``warnings``: the warnings of its last compile, as the cook recorded them (None: unknown).

Totals per kind follow, and the slowest compiles.  ``html=FILE`` also writes the report as one
self-contained HTML page (a sortable table, no script or style from the network).
"""

from __future__ import annotations

import html as _html
import os
from typing import TYPE_CHECKING, Any

from veduta.base.errors import shown_path

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project

__all__ = ["report", "render_html", "SLOWEST"]

#: how many of the slowest compiles ``slowest`` lists
SLOWEST = 10
#: bytes a texture pixel takes in memory (TEXR colours are 32-bit)
PIXEL_BYTES = 4


def report(project: Project, html: str | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """The build report of *project*: ``{"assets": [...], "totals": {kind: {...}}, "total": {...},
    "slowest": [...]}`` (see the module's doc), assets largest first.  *html*: also write the
    report to that file (its name must end in ``.html``); the result then says ``"html": path``."""
    from veduta import TOOLCHAIN
    from veduta.base.kinds import NAMES
    from veduta.base.progress import throttled
    from veduta.cook.builds import ORIGINS, log_of
    from veduta.cook.state import StatCache
    from veduta.cook.tasks import STATE_FILE
    from veduta.tools.refs import RefGraph

    if html is not None:
        from veduta.base.argtypes import wrong_suffix
        from veduta.base.errors import UsageError

        wrong = wrong_suffix(html, ".html")
        if wrong:
            raise UsageError(wrong)
    step = throttled(progress) if progress is not None else None
    sources = project.sources()
    graph = RefGraph.scan(project)
    index = graph.asset_index()
    state = StatCache(os.path.join(project.cache, STATE_FILE), TOOLCHAIN)
    builds = log_of(project.cache)
    triangles_of: dict[str, int | None] = {}  # model name -> level-0 triangles (levels drawn with it)
    rows: list[dict[str, Any]] = []
    for i, src in enumerate(sources):
        if step is not None:
            step(i, len(sources), "reading cooked files")
        rows.append(_row(project, src, graph, index, state, builds, ORIGINS, triangles_of))
    for row in rows:  # a level drawn with another model: that model's triangles
        tris = row.pop("_lod_models", None)
        if tris:
            row["triangles"] = [t if not isinstance(t, str) else triangles_of.get(t) for t in row["triangles"]]
    rows.sort(key=lambda r: (-(r["bytes"] or -1), NAMES.index(r["kind"]), r["name"], r["source"]))
    if step is not None:
        step(len(sources), len(sources), "reading cooked files")
    out: dict[str, Any] = {"assets": rows, "totals": _totals(rows), "total": _total(rows), "slowest": _slowest(rows)}
    if html is not None:
        from veduta.base.fsutil import write_output

        write_output(html, render_html(out, os.path.basename(os.path.abspath(project.root))).encode("utf-8"))
        out["html"] = html
    return out


def _row(project, src, graph, index, state, builds, origins, triangles_of) -> dict[str, Any]:
    from veduta.cook.cook import check_fresh, fresh_by_stat

    kind, name, rel = src.kind.name, src.name, src.rel
    cooked = project.cooked_path(kind, name)
    notes_now = None
    row: dict[str, Any] = {
        "kind": kind,
        "name": name,
        "source": project.source_path(rel).replace(os.sep, "/"),
        "cooked": cooked.replace(os.sep, "/"),
        "state": "not_cooked",
        "bytes": None,
        "origin": None,
        "compile_s": None,
        "triangles": None,
        "texture_memory": None,
        "mip_levels": None,
        "deps": len(graph.names_in(rel)),
        "used_by": len(graph.users(kind, name)),
        "warnings": None,
        "warning_lines": [],
    }
    data = _read(cooked)
    if data is None:
        return row
    row["bytes"] = len(data)
    packed = state.packed(rel)
    fresh = packed is not None and fresh_by_stat(rel, packed, project.assets, cooked, index)
    if not fresh:  # (the stat cache cannot tell, e.g. a file written a moment ago: the hashes can)
        fresh, _, entry, _ = check_fresh(kind, rel, project.assets, cooked, index, prior=packed, owed=rel in state.owed)
        if fresh and entry is not None and entry[3] is not None:
            packed = None
            notes_now = entry[3]
    row["state"] = "fresh" if fresh else "stale"
    try:
        from veduta.formats.asset import read_asset

        asset = read_asset(data, cooked)
    except Exception:  # noqa: BLE001 - a damaged cooked file: its size only (the cook replaces it)
        row["state"] = "stale"
        return row
    if asset.meta.source != rel:
        row["state"] = "stale"
    logged = builds.get(rel, asset.meta.source_hash)
    if logged is not None:
        row["origin"] = origins[logged[1]]
        row["compile_s"] = logged[2]
    notes = (state.notes(rel) if packed is not None else notes_now) if fresh else None
    if notes is not None:
        warnings = notes[1] if notes else ()
        row["warnings"] = len(warnings)
        row["warning_lines"] = [
            f"{row['source']}:{ln}:{col}: {path or '$'}: warning: {msg}" for ln, col, path, msg, _ in warnings
        ]
    body = asset.body
    if kind == "model":
        base = len(body.indices) // 3
        triangles_of[name] = base
        levels: list[Any] = [base]
        for lod in body.lods or []:
            levels.append(lod.model if lod.model else len(lod.indices) // 3)
        row["triangles"] = levels
        if any(isinstance(t, str) for t in levels):
            row["_lod_models"] = True
    elif kind == "texture":
        row["texture_memory"] = sum(int(img.size) for img in body.images or []) * PIXEL_BYTES
        row["mip_levels"] = body.levels
    return row


def _read(path: str) -> bytes | None:
    from veduta.base.fsutil import MAX_COOKED_BYTES, read_regular

    try:
        got = read_regular(path, MAX_COOKED_BYTES)
    except OSError:
        return None
    return None if got is None else got[0]


def _sum(rows: list[dict[str, Any]], key: str) -> Any:
    vals = [r[key] for r in rows if r[key] is not None]
    return round(sum(vals), 6) if vals and isinstance(vals[0], float) else sum(vals)


def _total(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "assets": len(rows),
        "cooked": sum(1 for r in rows if r["bytes"] is not None),
        "fresh": sum(1 for r in rows if r["state"] == "fresh"),
        "bytes": _sum(rows, "bytes"),
        "compile_s": round(sum(r["compile_s"] or 0.0 for r in rows), 6),
        "triangles": sum(r["triangles"][0] for r in rows if r["triangles"]),
        "texture_memory": _sum(rows, "texture_memory"),
        "warnings": _sum(rows, "warnings"),
    }


def _totals(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    from veduta.base.kinds import NAMES

    return {k: _total([r for r in rows if r["kind"] == k]) for k in NAMES if any(r["kind"] == k for r in rows)}


def _slowest(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    timed = sorted(
        (r for r in rows if r["compile_s"] is not None), key=lambda r: (-r["compile_s"], r["kind"], r["name"])
    )
    return [{"kind": r["kind"], "name": r["name"], "compile_s": r["compile_s"]} for r in timed[:SLOWEST]]


# -- the HTML page ---------------------------------------------------------------------------

#: the table's columns: (key, heading, how a value is shown)
COLUMNS = (
    ("kind", "kind", "text"),
    ("name", "name", "text"),
    ("state", "state", "text"),
    ("bytes", "cooked size", "bytes"),
    ("origin", "origin", "text"),
    ("compile_s", "compile", "seconds"),
    ("triangles", "triangles per level", "levels"),
    ("texture_memory", "texture memory", "bytes"),
    ("deps", "uses", "int"),
    ("used_by", "used by", "int"),
    ("warnings", "warnings", "int"),
)


def cell_text(value: Any, how: str) -> str:
    """How the page shows one value."""
    from veduta.base.humane import levels_text, seconds_text, size_text

    if value is None:
        return ""
    if how == "bytes":
        return size_text(value)
    if how == "seconds":
        return seconds_text(value)
    if how == "levels":
        return levels_text(value)
    return str(value)


def _sort_value(value: Any, how: str) -> str:
    """The ``data-v`` a cell sorts by: numbers as numbers (levels by level 0), "" for none."""
    if value is None:
        return ""
    if how == "levels":
        return str(value[0] if value and value[0] is not None else "")
    return str(value)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; margin-bottom: 2em; }}
th, td {{ padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }}
td.n, th.n {{ text-align: right; }}
th {{ background: #f3f3f3; cursor: pointer; user-select: none; }}
th[aria-sort=ascending]::after {{ content: " \\25B2"; }}
th[aria-sort=descending]::after {{ content: " \\25BC"; }}
tr.stale td, tr.not_cooked td {{ color: #999; }}
caption {{ text-align: left; font-weight: bold; padding: .4em 0; }}
</style></head>
<body>
<h1>{title}</h1>
<p>{summary}</p>
<table id="totals"><caption>Totals per kind</caption>
<thead><tr>{total_head}</tr></thead>
<tbody>
{total_rows}
</tbody></table>
<table id="assets" class="sortable"><caption>Assets (click a heading to sort)</caption>
<thead><tr>{head}</tr></thead>
<tbody>
{rows}
</tbody></table>
<script>
for (const table of document.querySelectorAll("table.sortable")) {{
  const heads = table.tHead.rows[0].cells;
  for (const th of heads) {{
    th.addEventListener("click", () => {{
      const col = th.cellIndex, num = th.classList.contains("n");
      const now = th.getAttribute("aria-sort");  // numbers sort largest first, text from a; again: turned
      const down = now ? now === "ascending" : num;
      for (const h of heads) h.removeAttribute("aria-sort");
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      const body = table.tBodies[0], rows = Array.from(body.rows);
      const key = r => r.cells[col].dataset.v;
      rows.sort((a, b) => {{
        const x = key(a), y = key(b);
        if (x === "" || y === "") return (x === "") - (y === "");  // no value: always last
        const c = num ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);  // (code points: as JSON sorts)
        return down ? -c : c;
      }});
      for (const r of rows) body.appendChild(r);
    }});
  }}
}}
</script>
</body></html>
"""


def render_html(result: dict[str, Any], game: str = "") -> str:
    """A :func:`report` result as one self-contained HTML page: totals per kind and a table of
    every asset that sorts by any column (numbers as numbers, empty cells last)."""
    esc = _html.escape
    numeric = {"bytes", "seconds", "levels", "int"}

    def th(heading: str, how: str, sort: str = "") -> str:
        cls = ' class="n"' if how in numeric else ""
        return f"<th{cls}{sort}>{esc(heading)}</th>"

    head = "".join(th(h, how, ' aria-sort="descending"' if key == "bytes" else "") for key, h, how in COLUMNS)
    rows = []
    for r in result["assets"]:
        cells = []
        for key, _, how in COLUMNS:
            cls = ' class="n"' if how in numeric else ""
            title = ""
            if key == "warnings" and r["warning_lines"]:
                title = f' title="{esc(chr(10).join(r["warning_lines"]))}"'
            elif key == "name":
                title = f' title="{esc(r["source"])}"'
            cells.append(f'<td{cls} data-v="{esc(_sort_value(r[key], how))}"{title}>{esc(cell_text(r[key], how))}</td>')
        rows.append(f'<tr class="{esc(r["state"])}">' + "".join(cells) + "</tr>")
    total_cols = (
        ("assets", "int"),
        ("bytes", "bytes"),
        ("compile_s", "seconds"),
        ("triangles", "int"),
        ("texture_memory", "bytes"),
        ("warnings", "int"),
    )
    total_head = th("kind", "text") + "".join(th(k.replace("_", " "), how) for k, how in total_cols)
    total_rows = []
    for kind, t in [*result["totals"].items(), ("all", result["total"])]:
        total_rows.append(
            "<tr><td>"
            + esc(kind)
            + "</td>"
            + "".join(
                f'<td class="n">{esc(cell_text(t[k] or None if k in ("triangles", "texture_memory") else t[k], how))}'
                "</td>"
                for k, how in total_cols
            )
            + "</tr>"
        )
    t = result["total"]
    summary = (
        f"{t['assets']} assets, {t['cooked']} cooked ({t['fresh']} fresh), {cell_text(t['bytes'], 'bytes')}, "
        f"{t['compile_s']:.2f} s of compiling recorded."
    )
    # the game folder's name as a line shows it: a byte that is not UTF-8 (a Latin-1 folder name)
    # as \xe9, control characters escaped
    game = shown_path(game)
    title = f"veduta report{': ' + game if game else ''}"
    return _PAGE.format(
        title=esc(title),
        summary=esc(summary),
        head=head,
        rows="\n".join(rows),
        total_head=total_head,
        total_rows="\n".join(total_rows),
    )
