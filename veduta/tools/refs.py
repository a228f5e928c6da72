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

Speed: the graph indexes each source by the names it writes, from the standard library's C
JSON decoder and a walk that skips what cannot hold a reference (10,000 models of 4 kB: 1.4 s);
positions come from the strict parser when asked for (about 1 ms per 4 kB source), once per
change of a source.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from veduta.base.kinds import BY_NAME, NAMES, kind_of, name_of
from veduta.source import read_source, too_large
from veduta.source.fields import REF_FORMAT
from veduta.source.jsonpos import Node, Str, join_path, parse_spans, to_plain
from veduta.tools import schemawalk as sw

if TYPE_CHECKING:
    from veduta.base.project import AssetIndex, Project

__all__ = ["Ref", "LOCAL_KINDS", "source_refs", "walk_refs", "plain_refs", "RefGraph"]

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
        return {
            "source": self.source,
            "line": self.line,
            "col": self.col,
            "end_col": self.end_col,
            "path": self.path,
            "kind": self.kind,
            "name": self.name,
        }


def plain_refs(kind: str, value: Any) -> list[tuple[tuple[str | int, ...], str, str]]:
    """``(keys, what it names, name)`` for every reference in the plain JSON *value* (dicts,
    lists, strings: ``json.loads``) of a source of *kind*, in document order; *keys* lead from
    the root to the string.  Subtrees whose schema holds no reference are not walked."""
    found: list[tuple[tuple[str | int, ...], str, str]] = []

    def visit(v: Any, keys: tuple[str | int, ...], schemas: tuple[sw.Schema, ...]) -> None:
        if isinstance(v, dict):
            plan = _plan(schemas, v)
            for k, x in v.items():
                step = plan.get(k)
                if step is None:
                    step = plan[k] = _step(plan[_HERE], k)
                sub, reaches, to = step
                if to is not None and isinstance(x, str):
                    if x:
                        found.append(((*keys, k), to, x))
                elif reaches and isinstance(x, _CONTAINERS):
                    visit(x, (*keys, k), sub)
        elif isinstance(v, list):
            sub, reaches, to = _item(schemas)
            if to is not None:
                found.extend(((*keys, i), to, x) for i, x in enumerate(v) if isinstance(x, str) and x)
            elif reaches:
                for i, x in enumerate(v):
                    if isinstance(x, _CONTAINERS):
                        visit(x, (*keys, i), sub)

    visit(value, (), sw.top(kind))
    return found


# The walk's plans, cached by the identity of the (shipped, cached) schemas and the values of
# the fields their conditions test: what each field of an object is (its schemas, whether a
# reference may lie below, what a string there names).  Bounded: cleared when it grows large
# (tag values being typed are new keys).
_HERE = object()
_CONTAINERS = (dict, list)
_PLANS: dict[Any, dict[Any, Any]] = {}
_ITEMS: dict[Any, tuple] = {}
_CONDS: dict[Any, tuple[str, ...]] = {}
_REACHES: dict[int, bool] = {}
_MAX_PLANS = 20_000


def _plan(schemas: tuple[sw.Schema, ...], obj: dict) -> dict[Any, Any]:
    ids = tuple(map(id, schemas))
    conds = _CONDS.get(ids)
    if conds is None:
        conds = _CONDS[ids] = tuple(sorted(_cond_keys(schemas)))
    key = (ids, *[_fact(obj, k) for k in conds])
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > _MAX_PLANS:
            _PLANS.clear()
        facts = {k: (sw.PRESENT if isinstance(x, _CONTAINERS) else x) for k, x in obj.items() if k in conds}
        plan = _PLANS[key] = {_HERE: sw.applying(schemas, facts, "object")}
    return plan


def _fact(obj: dict, k: str) -> Any:
    if k not in obj:
        return _HERE  # (absent)
    x = obj[k]
    return sw.PRESENT if isinstance(x, _CONTAINERS) else (type(x), x)


def _step(here: tuple[sw.Schema, ...], k: str | int) -> tuple[tuple[sw.Schema, ...], bool, str | None]:
    sub = sw.member(here, k)
    return sub, bool(sub) and _reaches(sub), sw.reference(sw.applying(sub, None, "string")) if sub else None


def _item(schemas: tuple[sw.Schema, ...]) -> tuple[tuple[sw.Schema, ...], bool, str | None]:
    ids = tuple(map(id, schemas))
    got = _ITEMS.get(ids)
    if got is None:
        got = _ITEMS[ids] = _step(sw.applying(schemas, None, "array"), 0)
    return got


def _cond_keys(schemas: tuple[sw.Schema, ...] | list[Any]) -> set[str]:
    """The fields the ``if`` conditions in *schemas* (and their branches) test."""
    out: set[str] = set()
    for s in schemas:
        if not isinstance(s, dict):
            continue
        cond = s.get("if")
        if isinstance(cond, dict):
            out.update(cond.get("properties", {}))
            out.update(cond.get("required", ()))
        out |= _cond_keys([*s.get("allOf", ()), *s.get("anyOf", ()), s.get("then"), s.get("else")])
    return out


def _reaches(schemas: tuple[sw.Schema, ...]) -> bool:
    """Whether a reference may lie at or below a value *schemas* describe."""
    return any(_reaches_one(s) for s in schemas)


def _reaches_one(s: Any) -> bool:
    if not isinstance(s, dict):
        return False
    key = id(s)  # the schemas are the cached shipped ones: their ids stay
    got = _REACHES.get(key)
    if got is None:
        _REACHES[key] = False  # (no schema refers to itself; this only stops a loop)
        fmt = s.get("format")
        got = (isinstance(fmt, str) and fmt.startswith(REF_FORMAT)) or any(
            _reaches_one(sub)
            for sub in (
                *s.get("properties", {}).values(),
                s.get("items"),
                s.get("additionalProperties"),
                *s.get("allOf", ()),
                *s.get("anyOf", ()),
                s.get("then"),
                s.get("else"),
            )
        )
        _REACHES[key] = got
    return got


def walk_refs(kind: str, root: Node) -> Iterator[tuple[Str, str, str]]:
    """``(string node, JSON path, what it names)`` for every reference in the positioned tree
    *root* of a source of *kind*, in file order."""
    found = []
    for keys, to, _ in plain_refs(kind, to_plain(root)):
        node: Node = root
        path = ""
        for k in keys:
            node = node.value[k]
            path = join_path(path, k)
        assert isinstance(node, Str)
        found.append((node, path, to))
    found.sort(key=lambda f: (f[0].line, f[0].col))
    yield from found


def source_refs(text: str | bytes, kind: str, source: str = "") -> list[Ref]:
    """Every reference of one source of *kind* given as *text* (a file's bytes, or an editor's
    unsaved buffer), in file order; *source* is what :attr:`Ref.source` says.  [] when the text
    is not valid JSON (or not UTF-8)."""
    if too_large(text, kind):
        return []  # (the cook refuses it unread: it names nothing)
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
    on disk, found by their size and modification time).  Each source is indexed by the names
    it writes, read with the standard library's C decoder (10,000 sources in about a second);
    the positions of its references (:meth:`of`, :meth:`to`) are found when asked for, by the
    strict parser, and kept until the source changes.
    """

    def __init__(self, assets: str = ""):
        self.assets = assets
        #: source -> the (kind, name) pairs it names (asset kinds and images)
        self._names: dict[str, frozenset[tuple[str, str]]] = {}
        #: source -> its references with positions, once asked for
        self._refs: dict[str, list[Ref]] = {}
        #: (kind, name) -> the sources naming it
        self._to: dict[tuple[str, str], set[str]] = {}
        #: the keys of ``_to`` whose sets are this graph's alone, None: all of them (since a
        #: :meth:`copy`, the sets are shared with it until one of the two changes one: :meth:`_users`)
        self._mine: set[tuple[str, str]] | None = None
        #: (kind, name) -> the sources of that asset (more than one: a duplicate name); a list is
        #: never changed in place (replaced), so that copies share it
        self._named: dict[tuple[str, str], list[str]] = {}
        self._stat: dict[str, tuple[int, int]] = {}
        #: sources as an editor has them (their text wins over the files)
        self._buffers: dict[str, str | bytes] = {}
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
            try:
                st = os.stat(self._path(rel))
                key = (st.st_size, st.st_mtime_ns)
                if self._stat.get(rel) == key and rel in self._names:
                    continue
                data = _read_source(self._path(rel), rel)
            except OSError:
                self.forget(rel)
                continue
            self._put(rel, data)
            self._stat[rel] = key
            read.append(rel)
        if sources is None:
            seen = set(rels)
            for rel in [r for r in self._names if r not in seen and r not in self._buffers]:
                self.forget(rel)
        return read

    def copy(self) -> RefGraph:
        """A graph of its own with what this one knows now (another thread may read and update
        it while this one changes).  Its tables are copied, not what they hold: the two share
        the sets of sources naming each asset until one of them changes one, which it copies
        first (:meth:`_users`): a copy of a game of 20,000 sources, 11,000 names, takes about
        0.5 ms rather than 10-30 ms for a copy of every set."""
        out = RefGraph(self.assets)
        out._names = dict(self._names)
        out._refs = dict(self._refs)
        out._to = dict(self._to)
        self._mine, out._mine = set(), set()
        out._named = dict(self._named)
        out._stat = dict(self._stat)
        out._buffers = dict(self._buffers)
        out._index = self._index
        return out

    def adopt(self, rel: str, other: RefGraph) -> None:
        """Source *rel* as *other* (a :meth:`copy` of this graph) read it from the same text
        given to both by :meth:`set_text`: its names (and positions, if found), not read again."""
        self._buffers[rel] = other._buffers[rel]
        self._stat.pop(rel, None)
        self._put(rel, other._buffers[rel], other._names[rel])
        if rel in other._refs:
            self._refs[rel] = other._refs[rel]

    def set_text(self, rel: str, text: str | bytes) -> None:
        """Source *rel* as in an editor's buffer: it wins over the file until :meth:`release`."""
        if kind_of(rel) is None:
            return
        self._buffers[rel] = text
        self._stat.pop(rel, None)
        self._put(rel, text)

    def release(self, rel: str) -> None:
        """The buffer of *rel* is closed: the file on disk counts again from the next
        :meth:`refresh` (which forgets the source if there is no file)."""
        self._buffers.pop(rel, None)
        self._stat.pop(rel, None)

    def forget(self, rel: str) -> None:
        """Source *rel* no longer exists."""
        self._buffers.pop(rel, None)
        self._stat.pop(rel, None)
        self._drop(rel)
        self._names.pop(rel, None)
        k = kind_of(rel)
        if k is not None and rel in self._named.get((k.name, name_of(rel)), ()):
            self._index = None
            key = (k.name, name_of(rel))
            left = [r for r in self._named[key] if r != rel]
            if left:
                self._named[key] = left
            else:
                del self._named[key]

    def _drop(self, rel: str) -> None:
        self._refs.pop(rel, None)
        for key in self._names.get(rel, ()):
            users = self._to.get(key)
            if users is not None and rel in users:
                if len(users) == 1:
                    del self._to[key]
                else:
                    self._users(key).discard(rel)

    def _users(self, key: tuple[str, str]) -> set[str]:
        """The set of sources naming *key*, this graph's own (copied first when it is shared
        with a :meth:`copy`), to change."""
        users = self._to.get(key)
        if users is None or (self._mine is not None and key not in self._mine):
            users = self._to[key] = set(users or ())
        if self._mine is not None:
            self._mine.add(key)
        return users

    def _put(self, rel: str, data: str | bytes, names: frozenset[tuple[str, str]] | None = None) -> None:
        """Index source *rel* by the names its text *data* writes (*names*, when they are known)."""
        k = kind_of(rel)
        if k is None:
            return
        self._drop(rel)
        if names is None:
            plain = None if too_large(data, k.name) else _loads(data)  # (too large: it names nothing, as bad JSON)
            names = frozenset((to, name) for _, to, name in plain_refs(k.name, plain) if to in BY_NAME or to == "image")
        self._names[rel] = names
        for key in names:
            self._users(key).add(rel)
        named = self._named.get((k.name, name_of(rel)), [])
        if rel not in named:
            self._named[(k.name, name_of(rel))] = sorted([*named, rel])
            self._index = None

    def _path(self, rel: str) -> str:
        return os.path.join(self.assets, *rel.split("/"))

    # -- reading ----------------------------------------------------------------------------
    def of(self, rel: str) -> list[Ref]:
        """The references source *rel* makes, in file order, with their positions."""
        if rel not in self._names:
            return []
        refs = self._refs.get(rel)
        if refs is None:
            text = self._buffers.get(rel)
            if text is None:
                try:
                    text = _read_source(self._path(rel), rel)
                except OSError:
                    text = b""
            k = kind_of(rel)
            refs = self._refs[rel] = source_refs(text, k.name, rel) if k is not None else []
        return list(refs)

    def to(self, kind: str, name: str) -> list[Ref]:
        """Every reference naming asset *kind* *name* (or the PNG at path *name*, kind
        ``"image"``), sorted by source, line and column."""
        return sorted(
            r for rel in self._to.get((kind, name), ()) for r in self.of(rel) if r.kind == kind and r.name == name
        )

    def to_source(self, rel: str) -> list[Ref]:
        """Every reference naming the asset whose source is *rel* (or the PNG at *rel*)."""
        k = kind_of(rel)
        return self.to(k.name, name_of(rel)) if k is not None else self.to("image", rel)

    def names_in(self, rel: str) -> frozenset[tuple[str, str]]:
        """The ``(kind, name)`` pairs source *rel* names (assets and PNGs), without positions."""
        return self._names.get(rel, frozenset())

    def users(self, kind: str, name: str) -> list[str]:
        """The sources naming asset *kind* *name* (or the PNG at path *name*, kind ``"image"``),
        sorted, without positions."""
        return sorted(self._to.get((kind, name), ()))

    def sources(self) -> list[str]:
        """Every source the graph knows, sorted."""
        return sorted(self._names)

    def has(self, rel: str) -> bool:
        return rel in self._names

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

            self._index = AssetIndex.from_paths(self._names)
        return self._index

    def resolve(self, ref: Ref) -> str | None:
        """The source (or PNG) *ref* names, as a path under the assets folder; None when there
        is none, or when the name is local (a biome, a clip)."""
        if ref.kind == "image":
            return ref.name if self.assets and os.path.isfile(self._path(ref.name)) else None
        hits = self._named.get((ref.kind, ref.name)) if ref.asset else None
        return hits[0] if hits else None

    def missing(self) -> list[Ref]:
        """References to assets (and PNGs) that do not exist, sorted."""
        gone = [
            key
            for key in self._to
            if (key[0] == "image" and not os.path.isfile(self._path(key[1])))
            or (key[0] != "image" and key not in self._named)
        ]
        return sorted(r for key in gone for r in self.to(*key))


def _read_source(path: str, rel: str) -> bytes:
    """Source *rel*'s bytes; b"" (it names nothing, as a source that is not JSON) when it is larger
    than its kind's limit, found from one stat before a byte is read."""
    from veduta.base.fsutil import TooLarge

    k = kind_of(rel)
    try:
        return read_source(path, k.name)[0] if k is not None else b""
    except TooLarge:
        return b""


def _loads(data: str | bytes) -> Any:
    """A source's plain JSON for the index (None when it is not JSON, or holds more values than
    any source may)."""
    from veduta.source.jsonpos import bounded_loads

    return bounded_loads(data)


#: Everything a reference may name.
TARGET_KINDS = (*NAMES, *LOCAL_KINDS)
