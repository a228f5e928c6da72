"""An image layer's PNG is read only up to MAX_PNG_BYTES (hostile4 #8): a valid PNG followed by
gigabytes of junk is refused from its stat, in bounded memory, with the documented message; a
read that runs out of memory says so, never "permissions?". The junk is a sparse file
(truncate), so it costs no disk."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zlib

from tests.compile.helpers import compile_in, lines
from tests.compile.test_png import IEND, chunk, ihdr
from veduta.base import fsutil
from veduta.base.kinds import MAX_PNG_BYTES
from veduta.base.project import AssetIndex
from veduta.compile import CompileContext, compile_source
from veduta.source.diagnostics import Report

PNG = b"\x89PNG\r\n\x1a\n" + ihdr(13, 9, 8, 6) + chunk(b"IDAT", zlib.compress(b"\0" * (9 * 53))) + IEND
VTEX = '{"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/big.png"}]}'


def _game(tmp_path, size: int) -> None:
    for p, content in {"textures/big.png": PNG, "textures/big.vtexture": VTEX}.items():
        f = tmp_path / "assets" / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(content if isinstance(content, bytes) else content.encode())
    os.truncate(tmp_path / "assets/textures/big.png", size)


def _compile(tmp_path):
    files = {"textures/big.png": None, "textures/big.vtexture": VTEX}
    root = tmp_path / "assets"
    ctx = CompileContext(
        str(root),
        "textures/big.vtexture",
        "texture",
        "big",
        Report("textures/big.vtexture"),
        AssetIndex.from_paths(files),
    )
    return compile_source("texture", VTEX.encode(), ctx), ctx


def test_a_png_over_the_bound_is_refused_before_it_is_read(tmp_path):
    _game(tmp_path, MAX_PNG_BYTES + 1)
    tex, ctx = _compile(tmp_path)
    assert tex is None
    assert [x.split(": ", 2)[2] for x in lines(ctx)] == [
        'image "textures/big.png" is too large (67,108,865 bytes; a PNG image is at most 67,108,864)'
    ]


def test_the_bound_holds_for_a_png_named_in_any_case(tmp_path):
    """Texture paths take ``.PNG`` in any case: the bound does too (``big.PNG`` was read whole)."""
    vtex = VTEX.replace("big.png", "big.PNG")
    f = tmp_path / "assets/textures/big.PNG"
    f.parent.mkdir(parents=True)
    f.write_bytes(PNG)
    os.truncate(f, MAX_PNG_BYTES + 1)
    files = {"textures/big.PNG": None, "textures/big.vtexture": vtex}
    ctx = CompileContext(
        str(tmp_path / "assets"),
        "textures/big.vtexture",
        "texture",
        "big",
        Report("textures/big.vtexture"),
        AssetIndex.from_paths(files),
    )
    assert compile_source("texture", vtex.encode(), ctx) is None
    assert [x.split(": ", 2)[2] for x in lines(ctx)] == [
        'image "textures/big.PNG" is too large (67,108,865 bytes; a PNG image is at most 67,108,864)'
    ]


def test_a_png_at_the_bound_is_read_and_its_trailing_bytes_ignored(tmp_path):
    _game(tmp_path, MAX_PNG_BYTES)
    tex, ctx = _compile(tmp_path)
    assert lines(ctx) == []
    small, _ = compile_in(
        tmp_path / "small", {"textures/big.png": PNG, "textures/big.vtexture": VTEX}, "textures/big.vtexture"
    )
    assert tex == small


def test_a_read_short_of_memory_says_so_not_permissions(tmp_path, monkeypatch):
    _game(tmp_path, len(PNG))

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(fsutil, "_read_fd", no_memory)
    tex, ctx = _compile(tmp_path)
    assert tex is None
    assert [x.split(": ", 2)[2] for x in lines(ctx)] == [
        f'image "textures/big.png" cannot be read (not enough memory to read its {len(PNG)} bytes)'
    ]


def _run_measured(cwd, *args) -> tuple[int, str, int]:
    """veduta *args* in *cwd* under a 2 GB address-space limit: (exit status, output, the
    child's max RSS in KB), measured by a wrapper process whose only child it is."""
    veduta = os.path.join(os.path.dirname(sys.executable), "veduta")
    code = textwrap.dedent(f"""
        import resource, subprocess, sys
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))
        r = subprocess.run({[veduta, *args]!r}, preexec_fn=limit, capture_output=True, text=True)
        print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        sys.stdout.write(r.stdout + r.stderr)
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True).stdout
    head, _, rest = out.partition("\n")
    rc, rss = map(int, head.split())
    return rc, rest, rss


def test_cook_check_and_a_stale_recook_stay_in_bounded_memory(tmp_path):
    """3.5 GB of junk after the PNG: before, check ran out of memory and said "permissions?";
    1 GB cooked with 1 GB of memory. Now refused from the stat in tens of MB, the same by the
    cook's own reader (a fresh cook, and the freshness check of a cooked texture)."""
    (tmp_path / "dodo.py").write_text("from veduta.dodo import *\n")
    _game(tmp_path, len(PNG))
    rc, out, _ = _run_measured(tmp_path, "cook")
    assert rc == 0, out
    for size in (1_000_000_000, 3_500_000_000):  # (before: read whole; out of memory)
        os.truncate(tmp_path / "assets/textures/big.png", size)
        want = f'image "textures/big.png" is too large ({size:,} bytes; a PNG image is at most 67,108,864)'
        for args in (("check",), ("cook",)):  # the cooked texture is now stale: its dep is refused
            rc, out, rss = _run_measured(tmp_path, *args)
            assert rc == 1, out
            assert f"assets/textures/big.vtexture:1:62: layers[0].path: {want}" in out.splitlines()
            assert rss < 400_000, (args, size, rss)  # far below the file's size


def test_a_source_read_short_of_memory_says_so(tmp_path, monkeypatch):
    """The cook's own read of a source: the reason, not a bare "cannot read the source"."""
    from veduta.cook.cook import _read_source

    (tmp_path / "big.vtexture").write_text(VTEX)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(fsutil, "_read_fd", no_memory)
    assert _read_source(str(tmp_path / "big.vtexture"), "texture") == (
        None,
        (),
        f"not enough memory to read its {len(VTEX)} bytes",
    )
