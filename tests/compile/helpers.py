"""Compile a source in a throwaway assets folder (shared by the per-kind compiler tests)."""

from __future__ import annotations

from pathlib import Path

from veduta.base.kinds import kind_of, name_of
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.source.diagnostics import Report


def compile_in(tmp_path: Path, files: dict[str, str | bytes], rel: str):
    """Write *files* under tmp_path/assets and compile *rel*; (body, ctx)."""
    root = tmp_path / "assets"
    for p, content in files.items():
        f = root / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(content if isinstance(content, bytes) else content.encode())
    kind = kind_of(rel).name
    ctx = CompileContext(str(root), rel, kind, name_of(rel), Report(rel), AssetIndex.from_paths(files))
    return compile_source(kind, (root / rel).read_bytes(), ctx), ctx


def lines(ctx) -> list[str]:
    """The diagnostics as printed, in file order."""
    return [str(d) for d in ctx.report.sorted()]


def documented_error_example(doc: str) -> tuple[str, str, list[str]]:
    """The first source block and the printed lines that follow it in the "## Errors" section of
    docs/formats/<doc>: (source path, source text, expected lines)."""
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "formats" / doc).read_text()
    section = text[text.index("## Errors") :]
    src, shown = re.findall(r"```(?:json)?\n(.*?)```", section, re.S)[:2]
    expected = shown.strip().splitlines()
    return expected[0].split(":")[0], src, expected
