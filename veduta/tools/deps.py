"""``veduta deps``: what an asset uses, what uses it, and what is missing or unused.

Built on the reference graph (:mod:`veduta.tools.refs`): every asset name written in a source
(a part's ``material``, an entity's ``model``, a world's prefabs, a texture layer's PNG ``path``,
...) is one edge, located at the string that names it.  Local names (biomes, texture clips) are
not edges: they name nothing outside their source.

Three questions, one core function (:func:`deps`):

* ``deps(project, "bark")``: the assets *bark* names, level by level down to *depth*;
  ``reverse=True``: the assets that name it (and those that name them, ...);
* ``deps(project)``: the whole graph, every asset with the references it makes;
* ``deps(project, orphans=True)``: references to assets (or PNGs) that do not exist, and assets
  nothing names that are not a root kind (:data:`ROOT_KINDS`: worlds and scenes, which a game
  loads by name), and PNGs under the assets folder no texture names.

A node is ``{"kind", "name", "source"}``: ``source`` is the path of its source file under the
assets folder, None when it does not exist; a PNG is kind ``"image"`` named by its path.  A
reference is ``{"from", "to", "file", "line", "col", "path"}`` (``file`` as the cook's diagnostics
show it, ``line``/``col`` 1-based at the string's opening quote, ``path`` the JSON path), with
its ``level`` in a walk.  Everything is sorted (no dict or hash order).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from veduta.base.errors import shown_path
from veduta.base.kinds import NAMES, is_png, kind_of, name_of

if TYPE_CHECKING:
    from veduta.base.progress import Progress
    from veduta.base.project import Project
    from veduta.tools.refs import Ref, RefGraph

__all__ = ["ROOT_KINDS", "deps", "to_dot", "scan"]

#: Kinds a game loads by name (its entry points): never "unused".
ROOT_KINDS = ("world", "scene")
#: what an image node's kind is called (the reference graph's name for a PNG)
IMAGE = "image"
#: the order of kinds in listings (asset kinds in the order of KINDS, then images)
_KIND_ORDER = {k: i for i, k in enumerate((*NAMES, IMAGE))}

Node = tuple[str, str]  # (kind, name); an image: ("image", path under the assets folder)


def scan(project: Project, progress: Progress | None = None) -> RefGraph:
    """The reference graph of every source of *project* as on disk."""
    from veduta.tools.refs import RefGraph

    if progress is not None:
        progress(0, None, "reading sources")
    graph = RefGraph.scan(project)
    if progress is not None:
        progress(1, 1, "reading sources")
    return graph


def deps(
    project: Project,
    name: str | None = None,
    kind: str | None = None,
    reverse: bool = False,
    depth: int | None = 1,
    orphans: bool = False,
    dot: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """What asset *name* (of *kind*, needed when several kinds have that name) uses, or with
    *reverse* what uses it, *depth* levels deep (None: every level); without a name the whole
    graph; with *orphans* the missing references and the unused assets and PNGs.  *dot*: the
    result also holds ``"dot"``, the graph as Graphviz DOT text.

    *name* may also be a source path under the assets folder (``models/crate.vmodel``) or a
    PNG's (``textures/crate.png``, whose users *reverse* finds).  An unknown name is a
    :class:`~veduta.base.errors.UsageError` naming the closest ones."""
    from veduta.base.errors import UsageError

    if kind is not None and kind != IMAGE:
        from veduta.base.kinds import kind_named

        kind_named(kind)
    if depth is not None and depth < 1:
        raise UsageError(f"depth {depth} is below 1 (1: direct references only; leave it out for every level)")
    if orphans and name is not None:
        raise UsageError("--orphans lists the whole game's missing and unused assets: give no NAME with it")
    graph = scan(project, progress)
    if orphans:
        out = _orphans(project, graph)
    elif name is None:
        out = _whole(project, graph)
    else:
        start = _find(project, graph, name, kind)
        out = _walk(project, graph, start, reverse, depth)
    if dot:
        out["dot"] = to_dot(out)
    return out


# -- nodes and references --------------------------------------------------------------------


def _source(graph: RefGraph, node: Node) -> str | None:
    kind, name = node
    if kind == IMAGE:
        return name if graph.assets and os.path.isfile(os.path.join(graph.assets, *name.split("/"))) else None
    found = graph.sources_of(kind, name)
    return found[0] if found else None


def _node(graph: RefGraph, node: Node) -> dict[str, Any]:
    return {"kind": node[0], "name": node[1], "source": _source(graph, node)}


def _node_of_source(rel: str) -> Node:
    k = kind_of(rel)
    assert k is not None, rel  # the graph holds sources only
    return k.name, name_of(rel)


def _edges(graph: RefGraph, refs: Iterable[Ref]) -> list[Ref]:
    """The references that name another file (an asset or a PNG), not a local name."""
    return [r for r in refs if r.asset or r.kind == IMAGE]


def _ref(project: Project, graph: RefGraph, ref: Ref, level: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "from": _node(graph, _node_of_source(ref.source)),
        "to": _node(graph, (ref.kind, ref.name)),
        "file": _shown(project, ref.source),
        "line": ref.line,
        "col": ref.col,
        "path": ref.path,
    }
    if level is not None:
        out["level"] = level
    return out


def _shown(project: Project, rel: str) -> str:
    """A source path as the cook's diagnostics show it (the assets folder, then the path)."""
    return project.source_path(rel).replace(os.sep, "/")


def _sort_key(node: Node) -> tuple[int, str]:
    return _KIND_ORDER.get(node[0], len(_KIND_ORDER)), node[1]


def _under_assets(project: Project, path: str) -> str:
    """*path* as the graph names it (``./a``, ``a//b`` and ``a/../b`` written plainly); a path
    that leads out of the assets folder is refused, without looking whether it exists there."""
    from veduta.base.errors import UsageError, quote
    from veduta.base.project import plain_rel

    plain = plain_rel(path)
    if plain is None:
        raise UsageError(f"{quote(path)} is not a path under {project.assets}/")
    return plain


def _find(project: Project, graph: RefGraph, name: str, kind: str | None) -> Node:
    """The node named *name* (a name, a source path or a PNG path), of *kind* when given."""
    from veduta.base.errors import UsageError
    from veduta.base.names import unknown

    k = kind_of(name)
    if "/" in name or k is not None or is_png(name):  # a path under the assets folder
        name = _under_assets(project, name)
        if is_png(name) and kind in (None, IMAGE):
            if _source(graph, (IMAGE, name)) is None and not graph.users(IMAGE, name):
                raise UsageError(f"no PNG {name} under {project.assets}/ and no texture names it")
            return IMAGE, name
        if k is not None and kind in (None, k.name) and graph.has(name):
            return k.name, name_of(name)
        raise UsageError(unknown("source", name, graph.sources()))
    kinds = [kind] if kind is not None else list(NAMES)
    hits = [(kd, name) for kd in kinds if kd != IMAGE and graph.sources_of(kd, name)]
    if not hits and kind is not None:
        # named but missing (a reference to it exists): its users can still be listed
        if graph.users(kind, name):
            return kind, name
        raise UsageError(unknown(kind, name, graph.names(kind)))
    if not hits:
        named = [n for kd in NAMES for n in graph.names(kd)]
        missing = [kd for kd in NAMES if graph.users(kd, name)]
        if len(missing) == 1:
            return missing[0], name
        raise UsageError(unknown("asset", name, named))
    if len(hits) > 1:
        kinds_said = " and ".join(f"a {kd}" for kd, _ in hits)
        which = " or ".join(kd for kd, _ in hits)
        raise UsageError(f'"{name}" names {kinds_said}; say which kind ({which}: --kind, or the tool\'s kind)')
    return hits[0]


# -- the three questions ---------------------------------------------------------------------


def _walk(project: Project, graph: RefGraph, start: Node, reverse: bool, depth: int | None) -> dict[str, Any]:
    """Breadth first from *start*: each reference once, each asset at the level it is first
    reached (its own references are followed from there)."""
    seen: dict[Node, int] = {start: 0}
    frontier = [start]
    refs: list[dict[str, Any]] = []
    level = 0
    while frontier and (depth is None or level < depth):
        level += 1
        nxt: list[Node] = []
        for node in frontier:
            if reverse:
                found = _edges(graph, graph.to(*node))
            else:
                found = _edges(graph, (r for rel in graph.sources_of(*node) for r in graph.of(rel)))
            for ref in found:
                other = _node_of_source(ref.source) if reverse else (ref.kind, ref.name)
                refs.append(_ref(project, graph, ref, level))
                if other not in seen:
                    seen[other] = level
                    if other[0] != IMAGE and _source(graph, other) is not None:
                        nxt.append(other)
        frontier = sorted(nxt, key=_sort_key)
    reached = sorted((n for n in seen if n != start), key=lambda n: (seen[n], *_sort_key(n)))
    return {
        "asset": _node(graph, start),
        "direction": "used_by" if reverse else "uses",
        "depth": depth,
        "references": sorted(refs, key=lambda r: (r["level"], r["file"], r["line"], r["col"])),
        "assets": [{**_node(graph, n), "level": seen[n]} for n in reached],
        "missing": [_node(graph, n) for n in sorted(reached, key=_sort_key) if _source(graph, n) is None],
    }


def _whole(project: Project, graph: RefGraph) -> dict[str, Any]:
    """Every asset with the references it makes, and how many references name it."""
    assets = []
    for rel in graph.sources():
        node = _node_of_source(rel)
        uses = [_ref(project, graph, r) for r in _edges(graph, graph.of(rel))]
        assets.append({**_node(graph, node), "source": rel, "uses": uses, "used_by": len(graph.users(*node))})
    assets.sort(key=lambda a: (*_sort_key((a["kind"], a["name"])), a["source"]))
    refs = sum(len(a["uses"]) for a in assets)
    return {
        "assets": assets,
        "reference_count": refs,
        "missing": [_ref(project, graph, r) for r in _edges(graph, graph.missing())],
    }


def _orphans(project: Project, graph: RefGraph) -> dict[str, Any]:
    missing = [_ref(project, graph, r) for r in _edges(graph, graph.missing())]
    for m in missing:
        m["message"] = _missing_message(graph, m["to"]["kind"], m["to"]["name"])
    unused = []
    for rel in graph.sources():
        node = _node_of_source(rel)
        if node[0] not in ROOT_KINDS and not graph.users(*node):
            unused.append({"kind": node[0], "name": node[1], "source": rel})
    unused.sort(key=lambda a: (*_sort_key((a["kind"], a["name"])), a["source"]))
    images = [{"kind": IMAGE, "name": p, "source": p} for p in _pngs(project) if not graph.users(IMAGE, p)]
    return {"missing": missing, "unused": unused + images, "roots": list(ROOT_KINDS)}


def _missing_message(graph: RefGraph, kind: str, name: str) -> str:
    from veduta.base.names import did_you_mean

    if kind == IMAGE:
        return f"no PNG {name} under the assets folder"
    return f'{kind} "{name}" does not exist{did_you_mean(name, graph.names(kind))}'


def _pngs(project: Project) -> list[str]:
    """Every PNG under the assets folder (dot folders skipped: the cooked files), sorted."""
    out = []
    top = project.assets
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        rel = os.path.relpath(d, top)
        for f in files:
            if is_png(f) and not f.startswith("."):
                out.append(f if rel == "." else f"{rel.replace(os.sep, '/')}/{f}")
    return sorted(out)


# -- Graphviz --------------------------------------------------------------------------------


def _dot_id(node: dict[str, Any]) -> str:
    # a name's backslashes doubled before its control characters are shown escaped: two
    # different names stay two nodes, and no raw control character reaches the DOT text
    return _quote(shown_path(f"{node['kind']}:{node['name'].replace(chr(92), chr(92) * 2)}"))


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _quote(text: str) -> str:
    return f'"{_escape(text)}"'


def to_dot(result: dict[str, Any]) -> str:
    """A :func:`deps` result as a Graphviz digraph: one node per asset (dashed: missing), one
    edge per pair of assets, labelled with the JSON paths of its references."""
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[str, str], list[str]] = {}

    def add(node: dict[str, Any]) -> str:
        i = _dot_id(node)
        nodes.setdefault(i, node)
        return i

    refs: list[dict[str, Any]] = []
    if "asset" in result:
        add(result["asset"])
        refs = result["references"]
    elif "assets" in result:
        for a in result["assets"]:
            add(a)
            refs += a["uses"]
    else:
        refs = result["missing"]
        for a in result["unused"]:
            add(a)
    for r in refs:
        edges.setdefault((add(r["from"]), add(r["to"])), []).append(r["path"])
    lines = ["digraph deps {", "  rankdir=LR;", '  node [shape=box, fontname="Helvetica"];']
    for i in sorted(nodes):
        n = nodes[i]
        style = ", style=dashed" if n["source"] is None else ""
        lines.append(f'  {i} [label="{_escape(n["kind"])}\\n{_escape(shown_path(n["name"]))}"{style}];')
    for a, b in sorted(edges):
        paths = sorted(set(edges[(a, b)]))
        label = ", ".join(shown_path(p) for p in paths[:3]) + (f" (+{len(paths) - 3})" if len(paths) > 3 else "")
        lines.append(f"  {a} -> {b} [label={_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
