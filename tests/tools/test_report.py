"""``veduta report``: its numbers against ``inspect``, ``dump`` and the files on disk; where each
cooked file came from (compiled, local store, shared cache); warnings; the CLI; and that a no-op
cook leaves the build log alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from veduta import api


def cook(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [sys.executable, "-m", "veduta", "cook", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def by_name(result: dict) -> dict[tuple[str, str], dict]:
    return {(a["kind"], a["name"]): a for a in result["assets"]}


def test_numbers_agree_with_inspect_dump_and_the_disk(sample):
    cook()
    r = api.report(sample)
    rows = by_name(r)
    assert len(rows) == len(sample.sources())
    sizes = [a["bytes"] for a in r["assets"]]
    assert sizes == sorted(sizes, reverse=True)  # largest first
    for (kind, name), a in rows.items():
        path = sample.cooked_path(kind, name)
        assert a["bytes"] == os.path.getsize(path), name
        assert a["state"] == "fresh" and a["origin"] == "compiled", name
        assert isinstance(a["compile_s"], float) and a["compile_s"] >= 0
        assert a["warnings"] == 0
        if kind == "model":
            seen = api.inspect_model(sample, name)
            assert a["triangles"] == [seen["triangles"], *seen["lod_triangles"]], name
        elif kind == "texture":
            (texr,) = [c for c in api.dump(None, path)["chunks"] if c["type"] == "TEXR"]
            levels = texr["body"]["images"]
            assert a["mip_levels"] == len(levels) == texr["body"]["levels"]
            assert a["texture_memory"] == sum(lv["width"] * lv["height"] * 4 for lv in levels)
        else:
            assert a["triangles"] is None and a["texture_memory"] is None
        rel = sample.find_source(kind, name).rel
        uses = {(x["to"]["kind"], x["to"]["name"]) for x in api.deps(sample, rel)["references"]}
        assert a["deps"] == len(uses)
    assert rows[("model", "tree")]["triangles"] == [152, 40, 20]  # level 2 is drawn with tree_far
    assert rows[("model", "tree")]["used_by"] == 3  # prefabs tree and camp, scene demo
    every = [os.path.join(d, f) for d, _, fs in os.walk(sample.cooked) for f in fs if f.endswith(".vda")]
    assert r["total"]["bytes"] == sum(os.path.getsize(p) for p in every)
    assert r["total"]["assets"] == r["total"]["cooked"] == r["total"]["fresh"] == len(every)
    assert sum(t["bytes"] for t in r["totals"].values()) == r["total"]["bytes"]
    assert r["totals"]["model"]["triangles"] == sum(a["triangles"][0] for a in r["assets"] if a["kind"] == "model")
    assert r["totals"]["texture"]["texture_memory"] == sum(
        a["texture_memory"] for a in r["assets"] if a["kind"] == "texture"
    )
    times = [s["compile_s"] for s in r["slowest"]]
    assert len(times) == 10 and times == sorted(times, reverse=True)
    assert times[0] == max(a["compile_s"] for a in r["assets"])


def test_origins_warnings_and_staleness(sample, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    env = {"VEDUTA_CACHE_URL": shared.as_uri(), "VEDUTA_CACHE_WRITE": "1"}
    crate = Path(sample.source_path("models/crate.vmodel"))
    crate.write_text(crate.read_text().replace('"crate_wood"', '"no_such"'))  # a warning
    cook(env=env)
    rows = by_name(api.report(sample))
    assert rows[("model", "crate")]["warnings"] == 1
    (line,) = rows[("model", "crate")]["warning_lines"]
    assert line.startswith("assets/models/crate.vmodel:") and 'material "no_such" does not exist' in line
    check = api.check(sample, ["models/crate.vmodel"])
    assert [d["message"] for d in check["diagnostics"]] == [line.split(": warning: ")[1]]
    # restored from the local store: the cooked file removed
    os.remove(sample.cooked_path("model", "barrel"))
    cook()
    rows = by_name(api.report(sample))
    assert rows[("model", "barrel")]["origin"] == "local store" and rows[("model", "barrel")]["compile_s"] is None
    assert rows[("model", "crate")]["origin"] == "compiled"
    # from the shared cache: this machine's cache and cooked files gone
    shutil.rmtree(sample.cache)
    shutil.rmtree(sample.cooked)
    cook(env={"VEDUTA_CACHE_URL": shared.as_uri()})
    rows = by_name(api.report(sample))
    assert {a["origin"] for a in rows.values()} == {"shared cache"}
    # a source changed since its cook: stale, its last cook still described
    barrel = Path(sample.source_path("models/barrel.vmodel"))
    barrel.write_text(barrel.read_text().replace('"parts"', '"draw_distance": 40, "parts"'))
    a = by_name(api.report(sample))[("model", "barrel")]
    assert a["state"] == "stale" and a["origin"] == "shared cache" and a["warnings"] is None


def test_not_cooked_and_a_no_op_leaves_the_log_alone(sample):
    r = api.report(sample)
    assert {a["state"] for a in r["assets"]} == {"not_cooked"} and r["total"]["bytes"] == 0
    cook()
    log = Path(sample.cache) / "builds.marshal"
    before = log.stat()
    out = cook()
    assert "0 cooked" in out.stdout
    after = log.stat()
    assert (after.st_mtime_ns, after.st_ino, after.st_size) == (before.st_mtime_ns, before.st_ino, before.st_size)


def test_cli(sample):
    cook()
    out = subprocess.run(
        [sys.executable, "-m", "veduta", "report", "--json"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = api.report(sample)
    for doc in (got, want):  # (equal but for nothing: the same state read twice)
        doc.pop("html", None)
    assert got == want
    out = subprocess.run(
        [sys.executable, "-m", "veduta", "report", "--top", "3", "--html", "r.html"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "largest:"
    assert lines[2].split()[:2] == ["model", "hero"] and "704 / 272 / 136" in lines[2]
    assert lines[5] == f"  ... and {len(want['assets']) - 3} more (--top N, --json or --html FILE for all)"
    assert "slowest compiles:" in lines and "totals:" in lines
    assert out.stderr == "wrote r.html\n"
    page = Path("r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "http" not in page.replace("http-equiv", "")  # self-contained
    bad = subprocess.run(
        [sys.executable, "-m", "veduta", "report", "--html", "r.txt"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and "must end in .html" in bad.stderr


def test_report_html_in_a_game_folder_whose_name_is_not_utf8(tmp_path):
    """hostile3 #5: a game folder named with a Latin-1 byte (``g\\xe9``): once a UnicodeEncodeError
    traceback and no page; now the page, its title showing the byte escaped."""
    from tests.gamerepo import CRATE, Game

    root = Path(os.fsdecode(bytes(tmp_path) + b"/g\xe9"))
    root.mkdir()
    Game(root).write("models/crate.vmodel", CRATE)
    (root / "pyproject.toml").write_text('[tool.veduta]\nassets = "assets"\n')
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "report", "--html", "r.html"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cp.returncode == 0 and "Traceback" not in cp.stderr, cp
    assert cp.stderr.endswith("wrote r.html\n"), cp.stderr
    page = (root / "r.html").read_text(encoding="utf-8")
    assert "<title>veduta report: g\\xe9</title>" in page and "<td" in page


def test_report_spells_a_byte_that_is_not_utf8_one_way_in_text_and_one_way_in_json(tmp_path):
    """A game folder named with a Latin-1 byte (``g\\xe9``) and ``--html`` into it: the page's title,
    the ``wrote`` line and every other line show the byte as ``\\xe9`` (the ``wrote`` line said
    ``\\udce9``); ``--json`` keeps the path as the file system has it (JSON writes ``\\udce9``,
    which reads back as that file), as every command's JSON does."""
    from tests.gamerepo import CRATE, Game

    root = Path(os.fsdecode(bytes(tmp_path) + b"/g\xe9"))
    root.mkdir()
    Game(root).write("models/crate.vmodel", CRATE)
    (root / "pyproject.toml").write_text('[tool.veduta]\nassets = "assets"\n')
    html = str(root / "r.html")
    shown = html.replace("g\udce9", "g\\xe9")
    for errors in ("strict", "surrogateescape"):  # a strict locale, and Python's UTF-8 mode
        env = {**os.environ, "PYTHONIOENCODING": f"utf-8:{errors}"}
        cmd = [sys.executable, "-m", "veduta", "report", "--html", html]
        cp = subprocess.run(cmd, cwd=root, capture_output=True, timeout=120, env=env)
        assert cp.returncode == 0 and b"Traceback" not in cp.stderr, cp
        assert cp.stderr.decode("utf-8").endswith(f"wrote {shown}\n"), cp.stderr
        page = (root / "r.html").read_text(encoding="utf-8")
        assert "<title>veduta report: g\\xe9</title>" in page
        cp = subprocess.run([*cmd, "--json"], cwd=root, capture_output=True, timeout=120, env=env)
        assert cp.returncode == 0 and b"g\\udce9/r.html" in cp.stdout, cp
        assert os.fsencode(json.loads(cp.stdout.decode("utf-8"))["html"]) == os.fsencode(html)
