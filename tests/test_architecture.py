"""The floors of docs/architecture.md, read from the code's own imports: every import of a veduta
module (at the top of a module or inside a function, under TYPE_CHECKING too) points to the same
floor or one below, and no two modules import each other, directly or round a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "veduta"

#: Floors, lowest first: a module may import its own floor and the floors below it.
FLOORS: list[tuple[str, ...]] = [
    ("veduta", "veduta.base"),
    ("veduta.container",),
    ("veduta.formats",),
    ("veduta.source", "veduta.schemas"),
    ("veduta.world",),
    ("veduta.compile",),
    ("veduta.cook", "veduta.dodo"),
    ("veduta.tools",),
    ("veduta.api",),
    ("veduta.faces", "veduta.__main__"),
]


def floor_of(module: str) -> int:
    """The floor of *module*: the one whose longest prefix names it (``veduta`` itself is the base:
    its ``__init__`` holds the compiler version and nothing else)."""
    best, found = -1, -1
    for i, names in enumerate(FLOORS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), i
    if found < 0:
        raise AssertionError(f"{module} is on no floor: add its package to FLOORS and docs/architecture.md")
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every veduta module *path* imports (``from veduta.x import y`` counts as ``veduta.x``, and as
    ``veduta.x.y`` when that is a module)."""
    mod = module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "veduta" or target.startswith("veduta."):
                out.add(target)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in MODULES:
                        out.add(sub)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name == "veduta" or a.name.startswith("veduta."))
    out.discard(mod)
    return out


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {m: {t for t in imports_of(p) if t in MODULES} for m, p in MODULES.items()}


def test_every_import_points_to_its_floor_or_below():
    upward = [
        f"{m} (floor {floor_of(m)}) imports {t} (floor {floor_of(t)})"
        for m, targets in sorted(GRAPH.items())
        for t in sorted(targets)
        if floor_of(t) > floor_of(m)
    ]
    assert upward == []


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        n = stack.pop()
                        on_stack.discard(n)
                        comp.append(n)
                        if n == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_no_module_imports_round_a_circle():
    assert _circles(GRAPH) == []


def test_the_circle_finder_finds_circles():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", ["veduta.dodo", "veduta.cook.tasks", "veduta.cook.doit_adapter"])
def test_the_cook_path_imports_no_tool_and_no_face(module):
    """What ``doit cook`` imports (transitively) holds no tool, face or api module."""
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(GRAPH[m])
    assert sorted(m for m in seen if floor_of(m) > floor_of("veduta.cook")) == []
