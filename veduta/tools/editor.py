"""What an editor asks about the sources being edited, as plain data: the language server's core.

A :class:`Workspace` holds one game (its :class:`~veduta.base.project.Project`), the editor's
open buffers (unsaved text, by path under the assets folder) and the reference graph of every
source (:class:`veduta.tools.refs.RefGraph`), the buffers winning over the files.  Its methods
answer in the cook's own terms, positions as 1-based lines and columns counted in characters
(the language server turns them into the protocol's units):

* :meth:`Workspace.diagnostics`: exactly what the cook reports for the buffer's text (the same
  compiler in-process, its references checked against the other buffers and the files), each
  with the range of the offending value;
* :meth:`Workspace.completion`: field names, enum values and names of the right kind;
* :meth:`Workspace.hover`: a field's documentation (the schema's description), a model part's
  triangles and vertices at each level of detail, a world place's cell, biome and height;
* :meth:`Workspace.definition` and :meth:`Workspace.references`.

Nothing here writes a file: sources and cooked files are only read.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from veduta.base.kinds import BY_NAME, is_png, kind_of, name_of
from veduta.source import too_large
from veduta.source.diagnostics import Report
from veduta.source.fields import fmt_num
from veduta.source.jsonpos import Arr, Node, Obj, Str, parse
from veduta.tools import schemawalk as sw
from veduta.tools.jsoncursor import Lines, Place, locate, token_span
from veduta.tools.refs import RefGraph

if TYPE_CHECKING:
    from veduta.base.project import Project

__all__ = ["Workspace", "diagnose"]

#: Most completion items returned at once (a game may have thousands of models).
MAX_ITEMS = 1000


class Workspace:
    """One game being edited: its open buffers and what the editor asks about them."""

    def __init__(self, project: Project):
        self.project = project
        self.assets = os.path.abspath(project.assets)
        #: open buffers: source path under the assets folder -> text
        self.buffers: dict[str, str] = {}
        #: the open buffers as bytes: what the compilers read instead of the files
        self.overlay: dict[str, bytes] = {}
        #: open buffer -> the files its last check read or looked for (what can change its diagnostics)
        self.deps: dict[str, frozenset[str]] = {}
        self.graph = RefGraph.scan(project)
        self._stale: set[str] = set()  # buffers whose references the graph has not read yet
        self._pngs: list[str] | None = None
        #: world source -> (what it was made from, its generator), for hovers on places
        self.generators: dict[str, tuple[Any, Any]] = {}
        self._since: dict[str, tuple[Any, Any]] = {}  # (detached: the generators it was made with)

    # -- paths ----------------------------------------------------------------------------------
    def source_of(self, path: str) -> str | None:
        """The source path under the assets folder of file *path*, or None when it is not a
        source of this game (outside the assets folder, not a source suffix, in .cooked)."""
        full = os.path.abspath(path)
        if not full.startswith(self.assets + os.sep):
            return None
        rel = os.path.relpath(full, self.assets).replace(os.sep, "/")
        if kind_of(rel) is None or any(part.startswith(".") for part in rel.split("/")):
            return None
        return rel

    def path_of(self, rel: str) -> str:
        """The absolute path of *rel* (a path under the assets folder)."""
        return os.path.join(self.assets, *rel.split("/"))

    def text(self, rel: str) -> str | None:
        """A source's text: its buffer, else its file (None when neither)."""
        if rel in self.buffers:
            return self.buffers[rel]
        from veduta.source import read_source

        try:
            return read_source(self.path_of(rel))[0].decode("utf-8", "replace")
        except OSError:  # (too large for its kind: its diagnostics say so)
            return None

    # -- buffers --------------------------------------------------------------------------------
    def open(self, rel: str, text: str) -> list[str]:
        """The editor opened *rel* with *text*; the other open buffers whose diagnostics may
        change (see :meth:`change`)."""
        return self.change(rel, text)

    def change(self, rel: str, text: str) -> list[str]:
        """The editor's text of *rel* is now *text*.  Returns the other open buffers whose
        diagnostics may change with it: those whose last check read *rel*, or looked for an
        asset of its kind and name and did not find it."""
        self.buffers[rel] = text
        self.overlay[rel] = text.encode("utf-8", "surrogateescape")
        if self.graph.has(rel):
            self._stale.add(rel)  # its references are read when asked for, not on every keystroke
        else:
            self.graph.set_text(rel, text)  # a new source: a name the others may use at once
        return self.dependents([rel])

    def sync(self) -> RefGraph:
        """The reference graph with every buffer's latest text."""
        for rel in sorted(self._stale):
            if rel in self.buffers:
                self.graph.set_text(rel, self.buffers[rel])
        self._stale.clear()
        return self.graph

    def detached(self) -> Workspace:
        """A copy of this workspace, as it is now, that another thread may ask (hover,
        completion, definition, references: a large buffer's, whose answer reads all of it)
        while this one goes on changing; :meth:`adopt` takes back what it read."""
        out = copy.copy(self)
        out.buffers = dict(self.buffers)
        out.overlay = dict(self.overlay)
        out.deps = dict(self.deps)
        out._stale = set(self._stale)
        out.graph = self.graph.copy()
        out.generators = dict(self.generators)
        out._since = dict(self.generators)
        return out

    def adopt(self, other: Workspace) -> None:
        """What *other* (:meth:`detached` from this workspace) read of buffers whose text is
        still the one it had, so that it is not read again here: their references (a large
        buffer's: a read of all of it) and world generators."""
        for rel in sorted(self._stale):
            if rel in other.buffers and rel not in other._stale and other.buffers[rel] is self.buffers.get(rel):
                self.graph.adopt(rel, other.graph)
                self._stale.discard(rel)
        for rel, made in sorted(other.generators.items()):
            if other.buffers.get(rel) is self.buffers.get(rel) and self.generators.get(rel) is other._since.get(rel):
                self.generators[rel] = made

    def close(self, rel: str) -> list[str]:
        """The editor closed *rel*: its file counts again (or, unsaved and new, it is gone)."""
        self.buffers.pop(rel, None)
        self.overlay.pop(rel, None)
        self._stale.discard(rel)
        self.deps.pop(rel, None)
        self.generators.pop(rel, None)
        self.graph.release(rel)
        self.graph.refresh(self.project, [rel])
        return self.dependents([rel])

    def files_changed(self, rels: Iterable[str] | None = None) -> list[str]:
        """Files changed on disk (*rels*, paths under the assets folder; None: look at every
        source).  Returns the open buffers whose diagnostics may change."""
        self._pngs = None
        if rels is None:
            read = self.graph.refresh(self.project)
            return sorted(self.buffers) if read else []
        rels = [r for r in rels if r not in self.buffers]
        self.graph.refresh(self.project, [r for r in rels if kind_of(r) is not None])
        return self.dependents(rels)

    def dependents(self, rels: Iterable[str]) -> list[str]:
        from veduta.compile import canonical_path

        changed = set(rels)
        for rel in list(changed):
            k = kind_of(rel)
            if k is not None:
                changed.add(canonical_path(k.name, name_of(rel)))
        return sorted(b for b, deps in self.deps.items() if b in self.buffers and b not in changed and deps & changed)

    # -- diagnostics ------------------------------------------------------------------------------
    def diagnostics(self, rel: str) -> list[dict[str, Any]]:
        """What the cook reports for the buffer of *rel* (or its file), in file order:
        ``{"line", "col", "end_line", "end_col", "severity", "message", "path", "code"}``, the
        range covering the offending value (a value over several lines: its first line)."""
        job = self.check_job(rel)
        if job is None:
            return []
        found, deps = job()
        self.checked(rel, deps)
        return found

    def check_job(self, rel: str) -> Callable[[], tuple[list[dict[str, Any]], frozenset[str]]] | None:
        """:meth:`diagnostics` of *rel* as a call that reads nothing of this workspace (its
        buffers and index as they are now), so that it may run in another thread while the
        buffers change: it returns the diagnostics and what to hand :meth:`checked`; None
        when *rel* is no source (or has no text)."""
        k = kind_of(rel)
        text = self.text(rel)
        if k is None or text is None:
            return None
        data = self.overlay.get(rel)
        if data is None:
            data = text.encode("utf-8", "surrogateescape")
        name = name_of(rel)
        index = self.graph.asset_index()
        dups = [p for p in index.by_kind.get(k.name, {}).get(name, ()) if p != rel]
        return functools.partial(diagnose, self.project, rel, text, data, index, dups, dict(self.overlay))

    def checked(self, rel: str, deps: frozenset[str]) -> None:
        """A check of *rel* (:meth:`check_job`) read *deps* (what can change its diagnostics)."""
        if rel in self.buffers:
            self.deps[rel] = deps

    # -- the schema at a place -------------------------------------------------------------------
    def _place(self, rel: str, line: int, col: int, hover: bool = False) -> tuple[str, Lines, Place, str] | None:
        """What (*line*, *col*) of *rel* is on, the graph brought up to date first: the text,
        its lines, the place and the source's kind (None when *rel* is no source)."""
        self.sync()
        text = self.text(rel)
        k = kind_of(rel)
        if text is None or k is None or too_large(text, k.name):  # (too large: its diagnostic says so)
            return None
        lines = Lines(text)
        return text, lines, locate(text, lines.offset(line, col), hover), k.name

    @staticmethod
    def _schemas(kind: str, place: Place) -> tuple[sw.Schema, ...]:
        """The schemas of what *place* is on: the value (role value) or the object (role key)."""
        schemas = sw.top(kind)
        for i, key in enumerate(place.path):
            facts = place.facts[i] if i < len(place.facts) else None
            schemas = sw.member(sw.applying(schemas, facts, "object" if facts is not None else "array"), key)
        if place.role == "key" or len(place.facts) > len(place.path):
            return sw.applying(schemas, place.facts[len(place.path)], "object")
        return sw.applying(schemas)

    @staticmethod
    def _range(lines: Lines, start: int, end: int) -> dict[str, int]:
        line, col = lines.position(start)
        end_line, end_col = lines.position(end)
        return {"line": line, "col": col, "end_line": end_line, "end_col": end_col}

    # -- completion --------------------------------------------------------------------------------
    def completion(self, rel: str, line: int, col: int) -> dict[str, Any]:
        """What may be typed at (*line*, *col*): ``{"range": the text the choice replaces,
        "items": [{"label", "kind": "field"|"value"|<what a name names>, "insert", "detail",
        "documentation"}]}``; no items where nothing is expected."""
        found = self._place(rel, line, col)
        empty: dict[str, Any] = {"items": [], "range": None}
        if found is None:
            return empty
        text, lines, place, kind = found
        if place.role not in ("key", "value"):
            return empty
        schemas = self._schemas(kind, place)
        items: list[dict[str, Any]] = []
        if place.role == "key":
            facts = place.facts[len(place.path)] or {}
            present = set(facts) - {place.word}
            after = text[place.end :].lstrip(" \t")
            colon = "" if after.startswith(":") else ": "
            req = set(sw.required(schemas))
            for name, sub in sw.fields(schemas).items():
                if name in present:
                    continue
                items.append(
                    {
                        "label": name,
                        "kind": "field",
                        "insert": json.dumps(name) + colon,
                        "detail": ("required " if name in req else "") + _type_text(sub),
                        "documentation": sw.description((sub,)),
                    }
                )
        else:
            to = sw.reference(schemas)
            if to is not None:
                for name, detail in self._names(to, rel, place)[:MAX_ITEMS]:
                    items.append(
                        {"label": name, "kind": to, "insert": json.dumps(name), "detail": detail, "documentation": ""}
                    )
            else:
                choices = sw.values(schemas)
                if not choices and any(s.get("type") == "boolean" for s in schemas):
                    choices = [True, False]
                for v in choices:
                    items.append(
                        {
                            "label": json.dumps(v) if not isinstance(v, str) else v,
                            "kind": "value",
                            "insert": json.dumps(v),
                            "detail": "",
                            "documentation": sw.description(schemas),
                        }
                    )
        return {"items": items, "range": self._range(lines, place.start, place.end)}

    def _names(self, to: str, rel: str, place: Place) -> list[tuple[str, str]]:
        """The names a reference to *to* may take here, with a detail each (where it is declared)."""
        if to in BY_NAME:
            return [(n, self.graph.sources_of(to, n)[0]) for n in self.graph.names(to)]
        if to == "image":
            return [(p, "") for p in self.pngs()]
        if to == "biome":
            here = kind_of(rel)
            worlds = (
                [rel]
                if here is not None and here.name == "world"
                else [r for r in self.graph.sources() if r.startswith("worlds/")]
            )
            out: dict[str, str] = {}
            for w in worlds:
                for name in _biomes(self._root(w)):
                    out.setdefault(name, w)
            return sorted(out.items())
        if to == "clip":
            tex = self._clip_texture(rel, place.facts[-1] if place.facts else None)
            root = self._root(tex) if tex else None
            clips = root.get("clips") if isinstance(root, Obj) else None
            return [(c, tex or "") for c in sorted(clips.value)] if isinstance(clips, Obj) else []
        return []

    def _clip_texture(self, rel: str, facts: dict[str, Any] | None) -> str | None:
        """The texture source whose clips a clip name in *rel* names: *rel* itself for a
        texture, else the texture of the entity's material (its *facts*)."""
        k = kind_of(rel)
        if k is not None and k.name == "texture":
            return rel
        mat = facts.get("material") if facts else None
        mats = self.graph.sources_of("material", mat) if isinstance(mat, str) else []
        root = self._root(mats[0]) if mats else None
        tex = root.get("texture") if isinstance(root, Obj) else None
        if isinstance(tex, Str):
            texs = self.graph.sources_of("texture", tex.value)
            return texs[0] if texs else None
        return None

    def _root(self, rel: str) -> Node | None:
        text = self.text(rel)
        k = kind_of(rel)
        return parse(text)[0] if text is not None and k is not None and not too_large(text, k.name) else None

    def pngs(self) -> list[str]:
        """Every PNG under the assets folder (outside dot folders), sorted."""
        if self._pngs is None:
            found = []
            for top, dirs, files in os.walk(self.assets):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in files:
                    if is_png(f):
                        found.append(os.path.relpath(os.path.join(top, f), self.assets).replace(os.sep, "/"))
            self._pngs = sorted(found)
        return self._pngs

    # -- hover ---------------------------------------------------------------------------------------
    def hover(self, rel: str, line: int, col: int) -> dict[str, Any] | None:
        """What the thing under (*line*, *col*) is: ``{"text": markdown, "range"}`` or None."""
        found = self._place(rel, line, col, hover=True)
        if found is None:
            return None
        text, lines, place, kind = found
        out: list[str] = []
        if place.role == "key":
            obj = self._schemas(kind, place)
            sub = sw.applying(sw.member(obj, place.word))
            if sub:
                out.append(_field_doc(place.word, sub, place.word in sw.required(obj)))
        elif place.role == "value" and place.path:
            sub = self._schemas(kind, place)
            key = place.path[-1]
            if isinstance(key, str) and sub:
                out.append(_field_doc(key, sub, False))
            to = sw.reference(sub)
            if to is not None and place.word:
                out.append(self._ref_doc(to, place.word, rel, place))
        if place.role in ("key", "value"):
            out += self._extra(kind, rel, text, place)
        out = [s for s in out if s]
        if not out:
            return None
        return {"text": "\n\n".join(out), "range": self._range(lines, place.start, place.end)}

    def _ref_doc(self, to: str, name: str, rel: str, place: Place) -> str:
        if to in BY_NAME:
            srcs = self.graph.sources_of(to, name)
            return f"{to} `{name}`: `{srcs[0]}`" if srcs else f"no {to} `{name}` in this game"
        if to == "image":
            return f"image `{name}`" + ("" if name in self.pngs() else ": no such file")
        if to == "clip":
            tex = self._clip_texture(rel, place.facts[-1] if place.facts else None)
            return f"clip `{name}` of `{tex}`" if tex else ""
        return ""

    def _extra(self, kind: str, rel: str, text: str, place: Place) -> list[str]:
        path = place.path
        if (
            kind == "model"
            and len(path) >= 2
            and path[0] == "parts"
            and isinstance(path[1], int)
            and (len(path) > 2 or place.role == "key")
        ):
            return [self._part_doc(rel, text, path[1])]
        if (
            kind == "world"
            and len(path) >= 2
            and path[0] == "places"
            and isinstance(path[1], int)
            and (len(path) > 2 or place.role == "key")
        ):
            return [self._place_doc(rel, text, path[1])]
        return []

    def _part_doc(self, rel: str, text: str, index: int) -> str:
        """A model part's triangles and vertices at each level of detail (as cooked)."""
        from veduta.tools.peek import part_counts

        got = part_counts(text.encode("utf-8", "surrogateescape"), name_of(rel), index)
        if isinstance(got, str):
            return got
        rows = []
        for lv in got["levels"]:
            where = "model" if lv["level"] == 0 else f"lod {lv['level']} (from {fmt_num(lv['distance'])} m)"
            rows.append(
                f"| {where} | drawn by model `{lv['model']}` | |"
                if "model" in lv
                else f"| {where} | {lv['triangles']} | {lv['vertices']} |"
            )
        head = (
            f"**part {index}** ({got['shape']}): {got['levels'][0]['triangles']} triangles, "
            f"{got['levels'][0]['vertices']} vertices"
        )
        return head + "\n\n| level | triangles | vertices |\n|---|---|---|\n" + "\n".join(rows)

    def _place_doc(self, rel: str, text: str, index: int) -> str:
        """A world place's cell in metres, its biome and the ground height (the generator's
        answer for the buffer's world)."""
        from veduta.tools.peek import place_info

        got = place_info(self, rel, text, index)
        if isinstance(got, str):
            return got
        return (
            f"**place {got['name']}**: cell [{got['cell'][0]}, {got['cell'][1]}] = "
            f"x {got['metres'][0]} m, z {got['metres'][1]} m; biome `{got['biome']}`, "
            f"height {got['height']} m" + (", under water" if got.get("wet") else "")
        )

    # -- definition and references -------------------------------------------------------------------
    def definition(self, rel: str, line: int, col: int) -> dict[str, Any] | None:
        """Where the name under (*line*, *col*) is declared: ``{"file": absolute path, "line",
        "col", "end_line", "end_col"}`` (an asset: its source file; a biome or a clip: its
        declaration), or None."""
        found = self._place(rel, line, col, hover=True)
        if found is None:
            return None
        _, _, place, kind = found
        if place.role != "value" or not place.word:
            return None
        to = sw.reference(self._schemas(kind, place))
        if to in BY_NAME:
            srcs = self.graph.sources_of(to, place.word)
            return _file_start(self.path_of(srcs[0])) if srcs else None
        if to == "image":
            return _file_start(self.path_of(place.word)) if place.word in self.pngs() else None
        if to == "biome":
            worlds = [rel] if kind == "world" else [r for r in self.graph.sources() if r.startswith("worlds/")]
            for w in worlds:
                node = _biomes(self._root(w)).get(place.word)
                if node is not None:
                    return self._at(w, node)
            return None
        if to == "clip":
            tex = self._clip_texture(rel, place.facts[-1] if place.facts else None)
            root = self._root(tex) if tex else None
            clips = root.get("clips") if isinstance(root, Obj) else None
            if tex and isinstance(clips, Obj) and place.word in clips.keys:
                return self._at(tex, clips.keys[place.word])
        return None

    def _at(self, rel: str, node: Node) -> dict[str, Any]:
        text = self.text(rel) or ""
        lines = Lines(text)
        end_line, end_col = lines.position(token_span(text, lines.offset(node.line, node.col)))
        return {"file": self.path_of(rel), "line": node.line, "col": node.col, "end_line": end_line, "end_col": end_col}

    def references(self, rel: str, line: int, col: int, declaration: bool = True) -> list[dict[str, Any]]:
        """The sources that name an asset: the one whose name is under (*line*, *col*), else
        *rel* itself; each reference ``{"file", "line", "col", "end_line", "end_col"}``, sorted,
        with the asset's source first when *declaration*."""
        found = self._place(rel, line, col, hover=True)
        target = rel
        if found is not None:
            _, _, place, kind = found
            if place.role == "value" and place.word:
                to = sw.reference(self._schemas(kind, place))
                if to in BY_NAME:
                    srcs = self.graph.sources_of(to, place.word)
                    target = srcs[0] if srcs else f"{BY_NAME[to].folder}/{place.word}{BY_NAME[to].suffix}"
        out = [_file_start(self.path_of(target))] if declaration and self.graph.has(target) else []
        for r in self.graph.to_source(target):
            out.append(
                {"file": self.path_of(r.source), "line": r.line, "col": r.col, "end_line": r.line, "end_col": r.end_col}
            )
        return out


def diagnose(
    project: Project,
    rel: str,
    text: str,
    data: bytes,
    index: Any,
    dups: list[str],
    overlay: dict[str, bytes],
) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """The diagnostics of source *rel* (:meth:`Workspace.diagnostics`) whose editor text is
    *text* (*data* its bytes), the game's sources being *index* and its open buffers *overlay*;
    and the files the check read or looked for."""
    from veduta.base.project import Source
    from veduta.compile import CompileContext
    from veduta.tools.check import compile_reported, duplicate_error

    k = kind_of(rel)
    assert k is not None  # (check_job's)
    name = name_of(rel)
    rep = Report(project.source_path(rel))
    deps: frozenset[str] = frozenset()
    if dups:
        duplicate_error(project, Source(k, name, rel), dups, rep)
    else:
        ctx = CompileContext(project.assets, rel, k.name, name, rep, index, overlay=overlay)
        compile_reported(k.name, [(data, ctx)])
        deps = frozenset(ctx.deps) | {w.lstrip("!") for w in ctx.watch}
    lines = Lines(text)
    out = []
    for d in rep.sorted():
        start = lines.offset(d.line, d.col)
        end_line, end_col = lines.position(token_span(text, start))
        item = {
            "line": d.line,
            "col": d.col,
            "end_line": end_line,
            "end_col": max(end_col, d.col + 1) if end_line == d.line else end_col,
            "severity": d.severity,
            "message": d.message,
            "path": d.path or "$",
        }
        if d.code:
            item["code"] = d.code
        out.append(item)
    return out, deps


def _file_start(path: str) -> dict[str, Any]:
    return {"file": path, "line": 1, "col": 1, "end_line": 1, "end_col": 1}


def _biomes(root: Node | None) -> dict[str, Node]:
    """A world's biome names -> the node of each name."""
    biomes = root.get("biomes") if isinstance(root, Obj) else None
    out: dict[str, Node] = {}
    if isinstance(biomes, Arr):
        for b in biomes:
            name = b.get("name") if isinstance(b, Obj) else None
            if isinstance(name, Str):
                out.setdefault(name.value, name)
    return out


def _type_text(s: sw.Schema) -> str:
    """A field's type in a few words (for a completion item)."""
    if "enum" in s:
        return " | ".join(json.dumps(v) for v in s["enum"][:8]) + (" | ..." if len(s["enum"]) > 8 else "")
    if "const" in s:
        return json.dumps(s["const"])
    fmt = s.get("format", "")
    if isinstance(fmt, str) and fmt.startswith("veduta:"):
        return f"{fmt[7:]} name"
    t = s.get("type")
    if t == "array" and isinstance(s.get("items"), dict):
        return f"array of {_type_text(s['items'])}"
    if isinstance(t, list):
        return " | ".join(t)
    if t is None and "anyOf" in s:
        return " | ".join(_type_text(x) for x in s["anyOf"])
    return str(t or "value")


def _field_doc(name: str, schemas: tuple[sw.Schema, ...], required: bool) -> str:
    """A field's hover text: its name and type, its description, its default."""
    desc = sw.description(schemas)
    first = schemas[0] if schemas else {}
    head = f"**{name}** ({'required, ' if required else ''}{_type_text(first)})"
    parts = [head]
    if desc:
        parts.append(desc)
    default = next((s["default"] for s in schemas if "default" in s), None)
    if default is not None:
        parts.append(f"Default: `{json.dumps(default)}`")
    return "\n\n".join(parts)
