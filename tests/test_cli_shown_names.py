"""File names with a newline, an ESC or a right-to-left override (hostile3 #1): every text line
of ``veduta list``, ``why``, ``deps`` (each mode) and ``report`` shows them escaped, as ``cook``
and ``check`` do (veduta.base.errors.shown_path): one line per item, no forged CI command
(``::error ...::``), no terminal escape; ``--json`` keeps the names as the file system has them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.gamerepo import CRATE, TREE

NL = "a\n::error::x"  # a model whose name forges a GitHub Actions annotation
ESC = "esc\x1b[31mred"  # a terminal colour escape
RLO = "rlo\u202egpj"  # a right-to-left override
PNG = "p\n::error file=README.md,line=1::forged.png"
RAW = ("\x1b", "\u202e", "\n::")


@pytest.fixture
def hostile(game):
    game.write(f"models/{NL}.vmodel", CRATE)
    game.write(f"models/{ESC}.vmodel", TREE.replace('"tree_far"', json.dumps(RLO)))
    game.write(f"models/{RLO}.vmodel", CRATE.replace('"position"', '"material": "m\\u001b[1mx", "position"'))
    (game.root / "assets" / "textures").mkdir()
    (game.root / "assets" / "textures" / PNG).write_bytes(b"\x89PNG\r\n\x1a\n")
    return game


def _clean(cp, *shown: str) -> str:
    out = cp.stdout + cp.stderr
    assert "Traceback" not in out, out
    for raw in RAW:
        assert raw not in out, (raw, out)
    for s in shown:
        assert s in out, (s, out)
    return out


def test_list_why_deps_and_report_show_hostile_names_escaped(hostile):
    g = hostile
    nl, esc, rlo = "a\\n::error::x", "esc\\x1b[31mred", "rlo\\u202egpj"
    _clean(g.veduta("list"), nl, esc, rlo, f"models/{nl}.vmodel")
    _clean(g.veduta("why"), f"models/{nl}.vmodel", f"models/{esc}.vmodel")
    _clean(g.veduta("deps"), f"model {esc}: uses model {rlo}", nl)
    _clean(g.veduta("deps", ESC), f"model {esc} (models/{esc}.vmodel) uses:", f"model {rlo}")
    _clean(g.veduta("deps", RLO, "--reverse"), f"model {rlo} (models/{rlo}.vmodel) is used by:", f"model {esc}")
    cp = g.veduta("deps", "--orphans")
    assert cp.returncode == 1
    png = "p\\n::error file=README.md,line=1::forged.png"
    _clean(cp, f"unused: model {nl} (models/{nl}.vmodel)", f"unused: image textures/{png}", "m\\x1b[1mx")
    for args in (["--dot"], ["--orphans", "--dot"], [ESC, "--dot"]):
        cp = g.veduta("deps", *args)
        dot = _clean(cp)
        assert dot.startswith("digraph deps {") and dot.count("\n") == len(dot.splitlines())
        assert all(ord(c) >= 32 or c == "\n" for c in dot)
    dot = g.veduta("deps", "--dot").stdout
    two = {n: n.replace("\\", "\\\\") for n in (nl, esc, rlo)}  # (DOT doubles a backslash)
    assert f'"model:{two[esc]}" -> "model:{two[rlo]}"' in dot
    assert f'"model:{two[nl]}" [label="model\\n{two[nl]}"];' in dot
    g.cook()
    _clean(g.veduta("report", "--top", "100"), nl, esc, rlo)
    # the JSON keeps every name as the file system has it
    names = {a["name"] for a in json.loads(g.veduta("list", "--json").stdout)["assets"]}
    assert {NL, ESC, RLO} <= names


def test_rename_shows_a_hostile_user_file_escaped(hostile):
    g = hostile
    g.write("materials/m\x1b[1mx.vmaterial", '{"veduta": "material/1", "albedo": "#5c6b7a"}\n')
    cp = g.veduta("rename", "material", "m\x1b[1mx", "wood", "--dry-run")
    assert cp.returncode == 0, cp
    _clean(cp, "assets/models/rlo\\u202egpj.vmodel:4:", "materials/m\\x1b[1mx.vmaterial -> ")


def test_the_wrote_line_of_export_and_preview_shows_the_out_path_escaped(game):
    """``--out`` as the user typed it, with an ESC and a byte that is not UTF-8: the ``wrote`` line
    shows it escaped (it was written raw: a terminal escape, a raw byte), the file is where asked."""
    import os

    glb, png = os.fsdecode(b"x\x1b[31m\xe9.glb"), os.fsdecode(b"p\x1b[1m\xe9.png")
    cp = game.veduta("export", "gltf", "crate", "--out", glb)
    assert cp.returncode == 0 and cp.stdout.startswith("wrote x\\x1b[31m\\xe9.glb: 1 mesh"), cp
    cp = game.veduta("preview", "model", "crate", "--out", png)
    assert cp.returncode == 0 and cp.stdout.startswith("wrote p\\x1b[1m\\xe9.png: "), cp
    assert (game.root / glb).is_file() and (game.root / png).is_file()


def test_write_shows_the_source_path_and_file_escaped(game):
    """``veduta write`` refuses a NAME that is no asset name (a newline, an ESC: shown escaped), but
    writes a source that exists where it is: under a folder whose name holds a newline, an ESC and
    a right-to-left override. Its path, the refusal naming it and FILE are shown escaped, one line
    each (they were printed raw); --json keeps the path as it is."""
    folder = "a\n::error::x\x1b[31m\u202e"
    shown = "a\\n::error::x\\x1b[31m\\u202e"
    game.write(f"models/{folder}/lamp.vmodel", CRATE)
    new = CRATE.replace("[1, 1, 1]", "[1, 2, 1]")
    (game.root / f"new{folder}.json").write_text(new)
    cp = game.veduta("write", "model", "lamp", f"new{folder}.json")
    out = _clean(cp)
    assert cp.returncode == 0 and cp.stdout == (
        f"assets/models/{shown}/lamp.vmodel: replaced (+1 -1 lines)\n  parts[0].size: changed [1, 1, 1] -> [1, 2, 1]\n"
    ), out
    assert (game.root / f"assets/models/{folder}/lamp.vmodel").read_text() == new
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "write", "model", "lamp", "-", "--json"],
        cwd=game.root, input=CRATE, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert json.loads(cp.stdout)["path"] == f"assets/models/{folder}/lamp.vmodel"
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "write", "model", "lamp", "-"],
        cwd=game.root, input='{"veduta": "model/1"}', capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    _clean(cp, f"nothing was written to assets/models/{shown}/lamp.vmodel; fix it")
    assert cp.returncode == 1
    cp = game.veduta("write", "model", "lamp", f"gone{folder}.json")
    _clean(cp, f"veduta: cannot read gone{shown}.json: No such file or directory")
    cp = game.veduta("write", "model", "a\x1b[1m\nb", f"new{folder}.json")
    _clean(cp, "'a\\x1b[1m\\nb' is not an asset name")
    assert cp.returncode == 2


def test_a_texture_layers_image_path_is_escaped_in_every_image_message(game):
    """hostile4 #10: an image layer's ``path`` holding a right-to-left override or a zero-width
    space (missing, not a PNG, outside the texture) is shown escaped, in text and annotations."""
    textures = game.root / "assets" / "textures"
    textures.mkdir()
    (textures / "q\u202egnp.png").write_bytes(b"not a png")
    layer = '{"veduta": "texture/1", "layers": [{"type": "image", "path": %s}]}\n'
    game.write("textures/r.vtexture", layer % json.dumps("textures/\u202egnp.png"))
    game.write("textures/z.vtexture", layer % json.dumps("textures/z\u200bw.png"))
    game.write("textures/q.vtexture", layer % json.dumps("textures/q\u202egnp.png"))
    want = [
        'layers[0].path: image "textures/q\\u202egnp.png" is not a PNG file',
        'layers[0].path: image "textures/\\u202egnp.png" not found',
        'layers[0].path: image "textures/z\\u200bw.png" not found',
    ]
    cp = game.veduta("check")
    assert cp.returncode == 1
    out = _clean(cp, *want)
    assert "\u200b" not in out and len(out.splitlines()) == 4  # three problems, the summary
    cp = game.veduta("check", "--format", "github")
    out = cp.stdout + cp.stderr
    assert "\u202e" not in out and "\u200b" not in out
    shown = [line.split("::", 2)[2] for line in out.splitlines() if line.startswith("::error file=assets/textures/")]
    assert len(shown) == 3 and all(line.startswith(w) for line, w in zip(shown, want, strict=True))
