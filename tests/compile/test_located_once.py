"""Every kind's source read once by the standard library's decoder (no positions), validated, and
only then its problems' values found in the text (`common.load_validated`): the report (each
diagnostic's text, line, column, severity and code, in order), the files read and the cooked body
are the strict parser's, byte for byte, for sources with mistakes anywhere."""

from __future__ import annotations

import copy
import json
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veduta.base.kinds import KINDS, kind_of, name_of
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.formats.codec import encode
from veduta.source.diagnostics import Report

ASSETS = Path(__file__).resolve().parents[2] / "assets"
SOURCES = sorted(str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*") if kind_of(str(p.relative_to(ASSETS))))
INDEX = AssetIndex.from_paths(SOURCES)
OTHER_KINDS = [k.name for k in KINDS if k.name != "model"]


class _Recording(CompileContext):
    """A compile that wants the place of every reference (as the cook's propagation of a
    failure does: ``placed``)."""

    def reference(self, kind, name, where, path):
        self.seen.append((kind, name, where, path))
        self.placed[path] = where
        return super().reference(kind, name, where, path)

    def name_reference(self, kind, name, where, path):
        self.seen.append((kind, name, where, path))
        self.placed[path] = where
        return super().name_reference(kind, name, where, path)


def _compile(rel: str, data: bytes) -> list:
    """Everything a compile of *data* as the source *rel* of the sample game gives: the report,
    the body, the files read and watched, and where each reference is."""
    kind = kind_of(rel).name
    ctx = _Recording(str(ASSETS), rel, kind, name_of(rel), Report(rel), INDEX, placed={})
    ctx.seen = []
    try:
        body = compile_source(kind, data, ctx)
    except Exception as exc:  # noqa: BLE001 - compared as it is raised
        body = exc
    shown = repr(body) if isinstance(body, Exception) else (None if body is None else encode(body))
    items = [(str(d), d.severity, d.code) for d in ctx.report.items]
    refs = [(kind, name, where.line, where.col, path) for kind, name, where, path in ctx.seen if where is not None]
    return [items, shown, sorted(ctx.deps.items()), sorted(ctx.watch), refs]


@contextmanager
def _strict_only():
    """Every source read by the strict parser (positions for every value), as before."""
    with mock.patch("veduta.source.load_fast", lambda data, fmt: None):
        yield


def _fields(kind: str) -> list[str]:
    keys: set[str] = set()

    def walk(v) -> None:
        if isinstance(v, dict):
            keys.update(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for rel in SOURCES:
        if kind_of(rel).name == kind:
            walk(json.loads((ASSETS / rel).read_bytes()))
    return sorted(keys) + ["colour"]


FIELDS = {k: _fields(k) for k in OTHER_KINDS}
_ODD = [None, True, 0, -1, 0.5, 2, 300, 1e39, 2**53 + 1, -0.0, "", "x", "Bad Name", "#fff", "#12345678", "red"]
_ODD += ["grass", "tiles", "crate", "camp", "perspective", "hill", "prop", [], {}, [1, 2], [0, 1, 0], [4, 4], {"x": 1}]


def _containers(v, out: list) -> list:
    if isinstance(v, (dict, list)):
        out.append(v)
        for x in v.values() if isinstance(v, dict) else v:
            _containers(x, out)
    return out


@st.composite
def _sources(draw, kind: str) -> tuple[str, bytes]:
    """A sample source of *kind* with up to four mistakes anywhere: a field set to an odd value
    (or a new one), dropped, an item replaced, removed or repeated, a character of a string
    changed (a map's cell), written compactly or indented, sometimes escaped."""
    rel = draw(st.sampled_from([r for r in SOURCES if kind_of(r).name == kind]))
    doc = json.loads((ASSETS / rel).read_bytes())
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.sampled_from(_containers(doc, [])))
        how = draw(st.integers(0, 3))
        if isinstance(at, dict):
            key = draw(st.sampled_from(FIELDS[kind] + list(at)))
            if how == 0:
                at.pop(key, None)
            elif how == 1 and isinstance(at.get(key), str) and at[key]:
                i = draw(st.integers(0, len(at[key]) - 1))
                at[key] = at[key][:i] + draw(st.sampled_from("Q木\t")) + at[key][i + 1 :]
            else:
                at[key] = copy.deepcopy(draw(st.sampled_from(_ODD)))
        elif at:
            i = draw(st.integers(0, len(at) - 1))
            if how == 0:
                del at[i]
            elif how == 1:
                at.insert(i, copy.deepcopy(at[i]))
            elif how == 2 and isinstance(at[i], str) and at[i]:
                k = draw(st.integers(0, len(at[i]) - 1))
                at[i] = at[i][:k] + draw(st.sampled_from("Q木\t")) + at[i][k + 1 :]
            else:
                at[i] = copy.deepcopy(draw(st.sampled_from(_ODD)))
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 1, 2])), ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 3)) == 0:
        text = draw(st.sampled_from(["\r\n", "\r"])).join(text.split("\n"))
    return rel, text.encode()


@pytest.mark.parametrize("kind", OTHER_KINDS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_source_located_once_gives_the_strict_parsers_report_and_body(kind, data):
    rel, source = data.draw(_sources(kind))
    got = _compile(rel, source)
    with _strict_only():
        want = _compile(rel, source)
    assert got == want


def _big(kind: str) -> tuple[str, bytes, int]:
    """A sample source of *kind* with a mistake in each of many values (every one of them a
    value the decoder reads without complaint): (path, bytes, how many errors)."""
    if kind == "map":
        rows = ["g" * 40] * 30
        rows = [r[:k] + "ABCDEFGHIJ"[k // 3] + r[k + 1 :] if k % 3 == 0 else r for k, r in enumerate(rows)]
        doc = {
            "veduta": "map/1",
            "terrains": [{"key": "g", "name": "grass", "texture": "tiles", "tile": [0, 0]}],
            "layers": [{"name": f"l{n}", "rows": rows} for n in range(4)],
            "objects": [{"name": f"o{k}", "cell": [99, k]} for k in range(20)],
        }
        return "maps/town.vmap", json.dumps(doc, indent=2).encode(), 4 * 10 + 20
    if kind == "texture":
        clips = {f"c{k}": {"frames": [0, 1, 99] if k % 2 else [0, "x"], "fps": 2} for k in range(40)}
        doc = {"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/hero.png"}], "grid": [4, 2]}
        return "textures/hero.vtexture", json.dumps(doc | {"clips": clips}, indent=1).encode(), 40
    if kind == "material":
        doc = json.loads((ASSETS / "materials/grass.vmaterial").read_bytes())
        return "materials/grass.vmaterial", json.dumps(doc | {f"x{k}": k for k in range(30)}).encode(), 30
    ents = [{"name": f"e{k}", "kind": "prop", "model": "crate", "position": [0, "up", 0], "hue": 1} for k in range(30)]
    rel = {"scene": "scenes/demo.vscene", "prefab": "prefabs/camp.vprefab", "world": "worlds/valley.vworld"}[kind]
    doc = json.loads((ASSETS / rel).read_bytes())
    return rel, json.dumps(doc | {"entities": ents}, indent=2).encode(), 60


@pytest.mark.parametrize("kind", OTHER_KINDS)
def test_many_problems_are_located_without_the_strict_parser(kind, monkeypatch):
    """A source whose JSON is clean but many of whose values are wrong is reported in full and
    located, and the strict parser (a position for every value) never reads it."""
    from veduta.source import jsonpos

    rel, source, errors = _big(kind)
    with _strict_only():
        want = _compile(rel, source)
    assert len([d for d in want[0] if d[1] == "error"]) == errors

    strict = jsonpos._Parser.__init__

    def refused(self, text):
        assert text != source.decode(), "the strict parser read the source"
        strict(self, text)  # (the files it names are read so, as before)

    monkeypatch.setattr(jsonpos._Parser, "__init__", refused)
    assert _compile(rel, source) == want
