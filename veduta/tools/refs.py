"""The reference graph: which source names which asset, and where.

Every name a source writes for another asset (a part's ``material``, an entity's ``model``, a
material's ``texture``, a world's prefabs, a scene's ``map``, ...) is found from the source
formats' own declarations: a field declared with :class:`veduta.source.fields.Reference` is
marked ``"format": "veduta:<kind>"`` in the generated schema, and :mod:`.schemawalk` walks the
source's positioned JSON with it.  No list of reference fields is kept here, so a new reference
field in a compiler is found without a change here.

Besides asset kinds (:data:`veduta.base.kinds.NAMES`), a reference may name:

* ``"image"``: a PNG by its path under the assets folder (a texture layer's ``path``);
* ``"biome"``: a biome of the world (a world rule's ``biomes``; a prefab's ``biomes`` names
  biomes of any world that places it);
* ``"clip"``: a clip of a texture (a texture's ``play`` and clips' ``next``; an entity's
  ``anim``, a clip of its material's texture).

Those three are *local* (:attr:`Ref.asset` is False): they are not sources of their own.

API::

    refs = source_refs(text, "model", "models/crate.vmodel")   # one source, in memory
    graph = RefGraph.scan(project)                             # every source on disk
    graph.set_text("models/crate.vmodel", buffer)              # an unsaved buffer wins
    graph.to("material", "crate_wood")    # every Ref naming it, sorted by source, line, col
    graph.of("models/crate.vmodel")       # the Refs of one source
    graph.resolve(ref)                    # "materials/crate_wood.vmaterial", or None (missing)

A source that is not valid JSON has no references until it is (its own diagnostics say why).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from veduta.base.kinds import BY_NAME, NAMES, kind_of, name_of
from veduta.source.jsonpos import Arr, Node, Obj, Str, join_path, parse_spans
from veduta.tools import schemawalk as sw

if TYPE_CHECKING:
    from veduta.base.project import AssetIndex, Project

__all__ = ["Ref", "LOCAL_KINDS", "source_refs", "walk_refs", "RefGraph"]

#: What a reference may name besides an asset kind.
LOCAL_KINDS = ("image", "biome", "clip")


@dataclass(frozen=True, order=True)
class Ref:
    """One name written in a source.

    ``source`` is the referring source's path under the assets folder
    (``models/crate.vmodel``); ``line`` and ``col`` (1-based, columns in characters) point at
    the string's opening quote, as the cook's diagnostics do; ``end_col`` is the column just
    after its closing quote (a JSON string is on one line); ``start`` and ``end`` are the same
    span as character offsets into the source's text (for edits).  ``path`` is the JSON path
    (``parts[0].material``), ``kind`` what is named (an asset kind or one of
    :data:`LOCAL_KINDS`), ``name`` the name as written.
    """

    source: str
    line: int
    col: int
    end_col: int
    start: int
    end: int
    path: str
    kind: str
    name: str

    @property
    def asset(self) -> bool:
        """Whether the name is another source's (an asset kind), not a local name or a PNG."""
        return self.kind in BY_NAME

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line, "col": self.col, "end_col": self.end_col,
                "path": self.path, "kind": self.kind, "name": self.name}


def walk_refs(kind: str, root: Node) -> Iterator[tuple[Str, str, str]]:
    """``(string node, JSON path, what it names)`` for every reference in the positioned tree
    *root* of a source of *kind*, in file order."""
    stack: list[tuple[Node, str, tuple[sw.Schema, ...]]] = [(root, "", sw.top(kind))]
    found: list[tuple[Str, str, str]] = []
    while stack:
        node, path, schemas = stack.pop()
        if not schemas:
            continue
        here = sw.applying(schemas, sw.facts_of(node), sw.jtype_of(node))
        if isinstance(node, Str):
            to = sw.reference(here)
            if to is not None and node.value:
                found.append((node, path, to))
        elif isinstance(node, Obj):
            for key, child in node.items():
                stack.append((child, join_path(path, key), sw.member(here, key)))
        elif isinstance(node, Arr):
            for i, child in enumerate(node):
                stack.append((child, join_path(path, i), sw.member(here, i)))
    found.sort(key=lambda f: (f[0].line, f[0].col))
    yield from found


def source_refs(text: str | bytes, kind: str, source: str = "") -> list[Ref]:
    """Every reference of one source of *kind* given as *text* (a file's bytes, or an editor's
    unsaved buffer), in file order; *source* is what :attr:`Ref.source` says.  [] when the text
    is not valid JSON (or not UTF-8)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return []
    root, spans, _ = parse_spans(text)
    if root is None:
        return []
    out = []
    for node, path, to in walk_refs(kind, root):
        _, start, end = spans[id(node)]
        out.append(Ref(source, node.line, node.col, node.col + (end - start), start, end, path, to, node.value))
    return out


class RefGraph:
    """The references of every source of a game, both ways.

    Made by :meth:`scan` (every source on disk) and kept current by :meth:`set_text` (an
    editor's buffer), :meth:`forget` (a deleted source) and :meth:`refresh` (sources changed
    on disk, found by their size and modification time).  One source's references are parsed
    once per change; reading is a dictionary look-up.
    """

    def __init__(self, assets: str = ""):
        self.assets = assets
        #: source -> its references in file order
        self.by_source: dict[str, list[Ref]] = {}
        #: (kind, name) -> the references naming it (asset kinds and images)
        self._to: dict[tuple[str, str], list[Ref]] = {}
        #: (kind, name) -> the sources of that asset (more than one: a duplicate name)
        self._named: dict[tuple[str, str], list[str]] = {}
        self._stat: dict[str, tuple[int, int]] = {}
        self._buffers: set[str] = set()
        self._index: AssetIndex | None = None

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def scan(cls, project: Project, overlay: Mapping[str, str | bytes] | None = None) -> RefGraph:
        """The graph of every source of *project* as on disk, except those in *overlay*
        (path under the assets folder -> text: open buffers), read from there."""
        graph = cls(project.assets)
        for rel, text in (overlay or {}).items():
            graph.set_text(rel, text)
        graph.refresh(project)
        return graph

    def refresh(self, project: Project, sources: Iterable[str] | None = None) -> list[str]:
        """Read again the sources on disk that changed since they were last read (those of
        *sources*, or every source of the project, found by a scan); a source gone from disk
        is forgotten.  Sources set by :meth:`set_text` keep their text.  Returns the sources
        read."""
        rels = [s.rel for s in project.sources()] if sources is None else list(sources)
        read = []
        for rel in rels:
            if rel in self._buffers:
                continue
            path = project.source_path(rel)
            try:
                st = os.stat(path)
                key = (st.st_size, st.st_mtime_ns)
                if self._stat.get(rel) == key and rel in self.by_source:
                    continue
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                self.forget(rel)
                continue
            self._put(rel, data)
            self._stat[rel] = key
            read.append(rel)
        if sources is None:
            seen = set(rels)
            for rel in [r for r in self.by_source if r not in seen and r not in self._buffers]:
                self.forget(rel)
        return read

    def set_text(self, rel: str, text: str | bytes) -> None:
        """Source *rel* as in an editor's buffer: it wins over the file until :meth:`release`."""
        if kind_of(rel) is None:
            return
        self._buffers.add(rel)
        self._stat.pop(rel, None)
        self._put(rel, text)

    def release(self, rel: str) -> None:
        """The buffer of *rel* is closed: the file on disk counts again from the next
        :meth:`refresh` (which forgets the source if there is no file)."""
        self._buffers.discard(rel)
        self._stat.pop(rel, None)

    def forget(self, rel: str) -> None:
        """Source *rel* no longer exists."""
        self._buffers.discard(rel)
        self._stat.pop(rel, None)
        self._drop(rel)
        k = kind_of(rel)
        if k is not None and rel in self._named.get((k.name, name_of(rel)), ()):
            self._index = None
            key = (k.name, name_of(rel))
            left = [r for r in self._named.get(key, ()) if r != rel]
            if left:
                self._named[key] = left
            else:
                self._named.pop(key, None)

    def _drop(self, rel: str) -> None:
        for ref in self.by_source.pop(rel, ()):
            key = (ref.kind, ref.name)
            left = [r for r in self._to.get(key, ()) if r.source != rel]
            if left:
                self._to[key] = left
            else:
                self._to.pop(key, None)

    def _put(self, rel: str, text: str | bytes) -> None:
        k = kind_of(rel)
        if k is None:
            return
        self._drop(rel)
        refs = source_refs(text, k.name, rel)
        self.by_source[rel] = refs
        named = self._named.setdefault((k.name, name_of(rel)), [])
        if rel not in named:
            named.append(rel)
            named.sort()
            self._index = None
        for ref in refs:
            if ref.asset or ref.kind == "image":
                self._to.setdefault((ref.kind, ref.name), []).append(ref)

    # -- reading ----------------------------------------------------------------------------
    def of(self, rel: str) -> list[Ref]:
        """The references source *rel* makes, in file order."""
        return list(self.by_source.get(rel, ()))

    def to(self, kind: str, name: str) -> list[Ref]:
        """Every reference naming asset *kind* *name* (or the PNG at path *name*, kind
        ``"image"``), sorted by source, line and column."""
        return sorted(self._to.get((kind, name), ()))

    def to_source(self, rel: str) -> list[Ref]:
        """Every reference naming the asset whose source is *rel* (or the PNG at *rel*)."""
        k = kind_of(rel)
        return self.to(k.name, name_of(rel)) if k is not None else self.to("image", rel)

    def sources(self) -> list[str]:
        """Every source the graph knows, sorted."""
        return sorted(self.by_source)

    def names(self, kind: str) -> list[str]:
        """The names of the sources of asset *kind*, sorted."""
        return sorted(name for k, name in self._named if k == kind)

    def sources_of(self, kind: str, name: str) -> list[str]:
        """The sources of asset *kind* *name*, sorted (more than one: a duplicate name)."""
        return list(self._named.get((kind, name), ()))

    def asset_index(self) -> AssetIndex:
        """The sources the graph knows as the compilers' index (kept until a source comes or
        goes)."""
        if self._index is None:
            from veduta.compile import AssetIndex

            self._index = AssetIndex.from_paths(self.by_source)
        return self._index

    def resolve(self, ref: Ref) -> str | None:
        """The source (or PNG) *ref* names, as a path under the assets folder; None when there
        is none, or when the name is local (a biome, a clip)."""
        if ref.kind == "image":
            return ref.name if self.assets and os.path.isfile(os.path.join(self.assets, ref.name)) else None
        hits = self._named.get((ref.kind, ref.name)) if ref.asset else None
        return hits[0] if hits else None

    def missing(self) -> list[Ref]:
        """References to assets (and PNGs) that do not exist, sorted."""
        return sorted(r for refs in self.by_source.values() for r in refs
                      if (r.asset or r.kind == "image") and self.resolve(r) is None)


#: Everything a reference may name.
TARGET_KINDS = (*NAMES, *LOCAL_KINDS)
