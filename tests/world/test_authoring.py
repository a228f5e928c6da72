"""The authoring loop of world-format.md (steps 2 to 6) on a new world, end to end: every command
of docs/world-authoring.md runs here in order, its printed outputs must be what the page shows,
and the file it ends with must be the page's."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from bench.games import sample_game
from veduta.base.project import Project
from veduta.faces.cli.main import main
from veduta.world.query import query

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "world-authoring.md"


def _blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)]


def _run(root: Path, line: str) -> tuple[int, str]:
    argv = shlex.split(line, comments=True)[1:]
    if argv[0] == "cook":  # a whole doit run, as a user has it
        cp = subprocess.run(
            [sys.executable, "-m", "veduta", *argv], cwd=root, capture_output=True, text=True, timeout=300
        )
        return cp.returncode, cp.stdout + cp.stderr
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def test_the_authoring_tutorial_runs_as_written(tmp_path, monkeypatch):
    root = tmp_path / "game"
    sample_game(root)
    monkeypatch.chdir(root)
    blocks = _blocks(DOC.read_text())
    jsons = [body for lang, body in blocks if lang == "json"]
    world = root / "assets" / "worlds" / "isle.vworld"
    world.write_text(jsons[0])  # step 2: the broad rules, by hand
    ran = 0
    outputs = ""
    for lang, body in blocks:
        if lang == "sh":
            outputs = ""
            for line in body.splitlines():
                if not line.startswith("veduta "):
                    continue
                code, out = _run(root, line)
                want = 1 if "# refused" in line else 0
                assert code == want, f"{line}\n{out}"
                outputs += out
                ran += 1
        elif lang == "" and outputs and not body.startswith("veduta world place WORLD"):
            # the output the page shows is what the commands above it printed
            got = set(outputs.replace("\\", "/").splitlines())
            missing = [ln for ln in body.splitlines() if ln not in got]
            assert not missing, f"the page shows lines the commands did not print: {missing}\n{outputs}"
    assert ran >= 15
    assert world.read_text() == jsons[-1]  # the page's final file, byte for byte
    assert world.read_text().startswith(jsons[0][: jsons[0].index('  "scatter"')])

    # the cooked world is the one the tools described
    from veduta.faces.cli.main import load_world
    from veduta.world.generator import Generator

    gen = Generator(*load_world(Project.at(str(root)), "isle"))
    assert query(gen, -2, -100)["owner"]["name"] == "town_well"
    assert query(gen, -10, -100)["owner"]["name"] == "inn"
    assert query(gen, -60, -40)["water"]["wet"] is True
    assert [s.name for s in gen.structs.places if s.wet] == []
    # step 6: inspect world finds no error (the page's `veduta inspect world isle` exited 0)
    from veduta import api

    report = api.inspect_world(Project.at(str(root)), "isle")
    assert report["status"] == "ok"
    # and the page's figures for its views are true
    lo, hi = (
        int(v.replace(",", "")) for v in re.search(r"draw ([\d,]+) to ([\d,]+) triangles", DOC.read_text()).groups()
    )
    tris = [v["triangles"] for v in report["views"]]
    assert [v["name"] for v in report["views"]][0] == "start" and len(tris) >= 2
    assert lo <= min(tris) and max(tris) <= hi and hi - lo <= max(tris) - min(tris) + 200, tris
    assert not [f for f in report["findings"] if f["severity"] == "error"]
