"""Expected dump text of a few sample assets, beside the golden hashes (tests/test_golden.py).

A hash says that a body changed; this text says what changed. Each file in tests/fixtures/dumps/
is the body record of one sample asset as ``veduta dump`` prints it (arrays summarised), made by
compiling the source as the cook does. Regenerate after a deliberate change with
``python -m tests.test_golden_dumps`` and read the diff.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"
DUMPS = ROOT / "tests" / "fixtures" / "dumps"

#: One sample of each kind the sample game has (the world's body is large; its hash covers it).
SAMPLES = (
    "models/crate.vmodel",
    "models/hero.vmodel",
    "materials/crate_wood.vmaterial",
    "textures/tiles.vtexture",
    "prefabs/well.vprefab",
    "scenes/demo.vscene",
    "maps/town.vmap",
)


def dump_text(rel: str) -> str:
    """The body of sample *rel*, compiled as the cook compiles it, as ``veduta dump`` shows it."""
    from tests.fixtures.update_golden import asset_sources
    from veduta.base.kinds import kind_of, name_of
    from veduta.base.project import AssetIndex
    from veduta.compile import CompileContext, compile_source
    from veduta.faces.cli.common import compact_json
    from veduta.source.diagnostics import Report

    kind = kind_of(rel)
    assert kind is not None, rel
    index = AssetIndex.from_paths(asset_sources(ASSETS))
    ctx = CompileContext(str(ASSETS), rel, kind.name, name_of(rel), Report(rel), index)
    body = compile_source(kind.name, (ASSETS / rel).read_bytes(), ctx)
    assert body is not None, [str(d) for d in ctx.report.sorted()]
    return compact_json({"type": body.CHUNK, "body": body.to_json()}) + "\n"


def expected_path(rel: str) -> Path:
    return DUMPS / (rel.replace("/", "__") + ".json")


def present_samples() -> list[str]:
    return [rel for rel in SAMPLES if (ASSETS / rel).is_file()]


@pytest.mark.parametrize("rel", present_samples())
def test_sample_dump_is_as_expected(rel):
    want = expected_path(rel).read_text(encoding="utf-8")
    got = dump_text(rel)
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected", "now", n=2))
        pytest.fail(f"{rel}: the body changed (python -m tests.test_golden_dumps regenerates):\n{diff[:4000]}")


def test_every_expected_dump_has_its_sample():
    assert sorted(p.name for p in DUMPS.glob("*.json")) == sorted(expected_path(r).name for r in present_samples())


def main() -> int:
    DUMPS.mkdir(parents=True, exist_ok=True)
    for rel in present_samples():
        expected_path(rel).write_text(dump_text(rel), encoding="utf-8")
        print(f"wrote {expected_path(rel).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
