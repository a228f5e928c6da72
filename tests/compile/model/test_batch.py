"""Models compiled in one batch (as the cook's workers do) come out byte for byte as alone."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from veduta.base.kinds import name_of
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source, compile_sources
from veduta.compile.model import build as build_mod
from veduta.formats import encode
from veduta.source.diagnostics import Report

ROOT = Path(__file__).resolve().parents[3]
ASSETS = ROOT / "assets"
GOLDEN = json.loads((ROOT / "tests" / "fixtures" / "golden_hashes.json").read_text(encoding="utf-8"))
MODELS = sorted(r for r in GOLDEN["assets"] if r.startswith("models/"))
INDEX = AssetIndex.from_paths(GOLDEN["assets"])


def _ctx(rel: str) -> CompileContext:
    return CompileContext(str(ASSETS), rel, "model", name_of(rel), Report(rel), INDEX)


def _generated(i: int) -> bytes:
    angle = (15, 30, 45, 60)[i % 4]
    parts = [
        f'{{"shape": "cylinder", "radius": {0.2 + i % 7 * 0.1}, "height": 1, "segments": {6 + i % 10}}}',
        f'{{"shape": "sphere", "radius": 0.5, "segments": {8 + i % 5}, "rings": 6, "position": [0, 1, 0]}}',
        '{"shape": "box", "size": [1, 2, 1], "rotation_deg": [0, 30, 0], "material": "m"}',
        '{"shape": "mirror", "of": 2, "axis": "x"}',
    ]
    return (
        f'{{"veduta": "model/1", "smooth_angle_deg": {angle}, "parts": [{", ".join(parts[: 2 + i % 3])}],'
        f' "lod": [{{"distance": 10}}]}}'
    ).encode()


def test_every_sample_model_in_one_batch_cooks_to_the_pinned_bytes():
    items = [((ASSETS / rel).read_bytes(), _ctx(rel)) for rel in MODELS]
    bodies = compile_sources("model", items)
    got = {rel: hashlib.sha256(encode(b)).hexdigest() for rel, b in zip(MODELS, bodies, strict=True)}
    assert got == {rel: GOLDEN["assets"][rel] for rel in MODELS}
    # the warnings are the ones each model gets alone
    for rel, (data, ctx) in zip(MODELS, items, strict=True):
        alone = _ctx(rel)
        compile_source("model", data, alone)
        assert [str(d) for d in ctx.report.sorted()] == [str(d) for d in alone.report.sorted()]


def test_models_of_different_smoothing_angles_in_one_batch_match_alone():
    sources = [_generated(i) for i in range(24)]
    alone = [encode(compile_source("model", s, _ctx(f"models/g{i}.vmodel"))) for i, s in enumerate(sources)]
    batch = compile_sources("model", [(s, _ctx(f"models/g{i}.vmodel")) for i, s in enumerate(sources)])
    assert [encode(b) for b in batch] == alone


def test_a_broken_source_or_a_compiler_bug_stays_with_its_own_source(monkeypatch):
    good = _generated(1)
    broken = b'{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1]}]}'
    bad_name = _generated(2)
    items = [
        (good, _ctx("models/a.vmodel")),
        (broken, _ctx("models/b.vmodel")),
        (bad_name, _ctx("models/Bad Name.vmodel")),
        (_generated(3), _ctx("models/c.vmodel")),
    ]
    real = build_mod.build_model

    def build_model(spec):
        if spec.name == "c":
            raise ZeroDivisionError("a compiler bug")
        return real(spec)

    def build_models(specs):
        return [build_model(s) for s in specs]

    monkeypatch.setattr("veduta.compile.model.compile.build_model", build_model)
    monkeypatch.setattr("veduta.compile.model.compile.build_models", build_models)
    out = compile_sources("model", items)
    assert encode(out[0]) == encode(compile_source("model", good, _ctx("models/a.vmodel")))
    assert out[1] is None and "size" in str(items[1][1].report.sorted()[0])
    assert out[2] is None and "not a valid asset name" in str(items[2][1].report.sorted()[0])
    assert isinstance(out[3], ZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        compile_source("model", _generated(3), _ctx("models/c.vmodel"))


def test_diagnostics_in_a_batch_are_the_ones_each_source_gets_alone():
    """Sources read by the fast JSON path and checked in one pass (overflow, degenerate parts,
    lod references, mistakes found by the validators or only by the strict parser): every
    diagnostic, with its line and column, is the one the source gets compiled alone."""
    sources = [
        _generated(0),
        b'{"veduta": "model/1", "parts": [{"shape": "box", "size": [1e39, 1, 1]}]}',
        b'{"veduta": "model/1",\n "parts": [{"shape": "box", "size": [1, 1, 1]},\n'
        b'  {"shape": "box", "size": [1, 1, 1], "scale": 1e-300}]}',
        b'{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}],\n'
        b' "lod": [{"distance": 5, "model": "nowhere"}, {"distance": 9, "model": "g0"}]}',
        b'{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "radius": 2}]}',
        b'{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}], "parts": []}',
        b'{"veduta": "model/1", "parts": [{"shape": "sphere", "radius": NaN}]}',
        b'{"veduta": "model/2", "parts": [{"shape": "box", "size": [1, 1, 1]}]}',
        b'{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "name": "\\ud800"}]}',
        _generated(3),
    ]
    index = AssetIndex.from_paths([f"models/g{i}.vmodel" for i in range(len(sources))])

    def ctx(i: int) -> CompileContext:
        rel = f"models/g{i}.vmodel"
        return CompileContext(str(ASSETS), rel, "model", name_of(rel), Report(rel), index)

    alone = [(c := ctx(i), compile_source("model", s, c)) for i, s in enumerate(sources)]
    together = [ctx(i) for i in range(len(sources))]
    bodies = compile_sources("model", list(zip(sources, together, strict=True)))
    for (actx, abody), bctx, bbody in zip(alone, together, bodies, strict=True):
        assert [str(d) for d in bctx.report.sorted()] == [str(d) for d in actx.report.sorted()]
        assert (bbody is None) == (abody is None)
        assert abody is None or encode(bbody) == encode(abody)
        assert bctx.deps == actx.deps
    lines = [str(d) for c in together for d in c.report.sorted()]
    assert [line.split(": ")[0] + ": " + line.split(": ")[1] for line in lines] == [
        "models/g1.vmodel:1:32: parts",
        "models/g2.vmodel:3:3: parts[1]",
        "models/g3.vmodel:2:35: lod[0].model",
        "models/g4.vmodel:1:79: parts[0].radius",
        "models/g5.vmodel:1:80: parts",
        "models/g6.vmodel:1:63: parts[0].radius",
        "models/g7.vmodel:1:12: veduta",
        "models/g8.vmodel:1:78: parts[0].name",
    ]


@pytest.mark.parametrize("chunk", [1, 50, 700])
def test_parts_built_and_assembled_in_small_chunks_give_the_same_bytes(monkeypatch, chunk):
    """A large model's parts are built and their vertices shared a chunk at a time: with chunks
    of a part or a few, every sample model and a batch of generated ones keep their bytes."""
    monkeypatch.setattr(build_mod, "CHUNK_TRIANGLES", chunk)
    items = [((ASSETS / rel).read_bytes(), _ctx(rel)) for rel in MODELS]
    bodies = compile_sources("model", items)
    assert {rel: hashlib.sha256(encode(b)).hexdigest() for rel, b in zip(MODELS, bodies, strict=True)} == {
        rel: GOLDEN["assets"][rel] for rel in MODELS
    }
    sources = [_generated(i) for i in range(12)]
    batch = compile_sources("model", [(s, _ctx(f"models/g{i}.vmodel")) for i, s in enumerate(sources)])
    monkeypatch.undo()
    alone = [encode(compile_source("model", s, _ctx(f"models/g{i}.vmodel"))) for i, s in enumerate(sources)]
    assert [encode(b) for b in batch] == alone
