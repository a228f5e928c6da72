"""Hostile inputs and faults (issue 14): each a clear located error or a warning, never a
traceback, a hang or a crash of the whole cook."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from tests.cook.test_cook import summary


def _lines(cp) -> list[str]:
    return (cp.stdout + cp.stderr).splitlines()


def _no_traceback(cp) -> None:
    assert "Traceback" not in cp.stdout + cp.stderr, cp.stdout + cp.stderr


def _slow_cook_started(game, n: int, segments: int, rings: int, wait_for: str) -> subprocess.Popen:
    """A `doit cook` of *n* big spheres, started once *wait_for* (under the game root) exists."""
    import time

    for i in range(n):
        game.write(
            f"models/gen/s{i:02d}.vmodel",
            '{"veduta": "model/1", "parts": [{"shape": "sphere", '
            f'"radius": {1 + i / 100}, "segments": {segments}, "rings": {rings}}}]}}',
        )
    p = subprocess.Popen(
        [sys.executable, "-m", "doit", "cook"], cwd=game.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while not (game.root / wait_for).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return p


def test_absurd_numbers_are_located_errors(game):
    box = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, N, 1]}]}'
    game.write("models/huge.vmodel", box.replace("N", "9" * 5000))
    game.write("models/neg.vmodel", box.replace("N", "-" + "9" * 5000))
    cp = game.cook()
    _no_traceback(cp)
    assert (
        "assets/models/huge.vmodel:1:62: parts[0].size[1]: 99999999999999999999... is too large a number "
        "(5000 digits)" in cp.stdout
    )
    assert (
        "assets/models/neg.vmodel:1:62: parts[0].size[1]: -9999999999999999999... is too large a number "
        "(5000 digits)" in cp.stdout
    )
    assert summary(cp)["failed"] == 2 and summary(cp)["cooked"] == 4


def test_a_huge_value_is_quoted_in_part_with_its_length(game):
    big = "x" * 5_000_000
    game.write(
        "models/a.vmodel",
        '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "material": "BIG"}]}'.replace("BIG", big),
    )
    game.write("models/b.vmodel", '{"veduta": "BIG", "BIG": 1}'.replace("BIG", big))
    cp = game.cook()
    _no_traceback(cp)
    assert max(len(line) for line in _lines(cp)) < 400
    assert 'parts[0].material: "' + "x" * 40 + '..." (5000000 characters) is not a valid name' in cp.stdout
    assert 'veduta: "' + "x" * 40 + '..." (5000000 characters) is not "model/1"' in cp.stdout


def test_non_finite_numbers_do_not_stop_the_report(game):
    game.write(
        "models/a.vmodel",
        '{"veduta": "model/1", "parts": [{"shape": "box", "size": [NaN, 1, Infinity],\n"material": 3}]}',
    )
    game.write(
        "models/b.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "material": 1e400}]}'
    )
    cp = game.cook()
    _no_traceback(cp)
    out = cp.stdout
    assert "assets/models/a.vmodel:1:59: parts[0].size[0]: NaN is not a finite number" in out
    assert "assets/models/a.vmodel:1:67: parts[0].size[2]: Infinity is not a finite number" in out
    assert "assets/models/a.vmodel:2:13: parts[0].material: expected a string, found 3" in out  # reported too
    b = [line for line in out.splitlines() if line.startswith("assets/models/b.vmodel")]
    assert b == ["assets/models/b.vmodel:1:81: parts[0].material: 1e400 is not a finite number"]  # one line


def test_a_missing_source_named_on_the_command_line(game):
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "cook", "models/ghost.vmodel"],
        cwd=game.root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    _no_traceback(cp)
    assert cp.returncode != 0
    assert "assets/models/ghost.vmodel: no such source" in cp.stdout + cp.stderr
    assert "veduta list" not in cp.stdout + cp.stderr and "invalid parameter" not in cp.stdout + cp.stderr


def test_a_damaged_database_is_moved_aside(game):
    game.cook(check=True)
    db = game.root / "cache/doit.sqlite3"
    db.write_bytes(b"this is not a database" * 100)
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode == 0
    assert [line for line in cp.stderr.splitlines() if "damaged" in line] == [
        "veduta: warning: cache/doit.sqlite3: doit's database is damaged (file is not a database); moved it to "
        "cache/doit.sqlite3.damaged and started a new one (this cook re-checks every source)"
    ]
    assert summary(cp)["cooked"] == 0 and (game.root / "cache/doit.sqlite3.damaged").exists()
    sqlite3.connect(db).execute("select * from doit").fetchall()  # a good one again
    cp = game.cook(check=True)
    assert "warning" not in cp.stderr


def test_an_unwritable_cache_folder_means_cooking_without_it(game):
    # /proc cannot be written, not even by root (a chmod would not stop root)
    (game.root / "pyproject.toml").write_text('[tool.veduta]\ncache = "/proc/veduta-cache"\n')
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "veduta: warning: cannot write the cache folder /proc/veduta-cache (" in cp.stderr
    assert summary(cp)["cooked"] == 4
    cp = game.cook()
    assert cp.returncode == 0 and summary(cp)["cooked"] == 0  # the cooked files still count


def test_deleting_the_cache_during_a_cook_ends_with_a_message(game):
    import shutil
    import time

    p = _slow_cook_started(game, 30, 128, 64, "cache/doit.sqlite3")
    time.sleep(0.3)
    # the cook writes into it meanwhile (a file made after rmtree listed its folder stops it with
    # ENOTEMPTY): again on what is left, until it is gone once
    for _ in range(100):
        shutil.rmtree(game.root / "cache", ignore_errors=True)
        if not (game.root / "cache").exists():
            break
    out, err = p.communicate(timeout=300)
    assert "Traceback" not in out + err, out + err
    assert "cook:" in out  # the summary
    if "could not save" in err:  # sqlite needed the folder back to save (it usually does)
        assert "veduta: warning: cache/doit.sqlite3: could not save doit's database" in err


def test_an_image_path_that_is_a_fifo_is_an_error_not_a_hang(game):
    import os

    (game.root / "assets/textures").mkdir()
    os.mkfifo(game.root / "assets/textures/pipe.png")
    game.write(
        "textures/t.vtexture", '{"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/pipe.png"}]}'
    )
    cp = game.doit("cook")  # a hang would hit the subprocess timeout
    _no_traceback(cp)
    assert 'layers[0].path: image "textures/pipe.png" is not a readable file' in cp.stdout
    assert summary(cp)["failed"] == 1


def test_a_fifo_or_device_named_like_a_source_is_an_error_naming_it(game):
    # a FIFO (or a link to a device) named like a source was skipped silently by every scan: the
    # cook exited 0 and check said nothing, where docs/cooking.md promised an error
    models = game.root / "assets/models"
    game.cook(check=True)  # (the folder's listing kept, from before the FIFO came)
    os.mkfifo(models / "x.vmodel")
    os.symlink("/dev/null", models / "props/null.vmodel")
    fifo = "assets/models/x.vmodel: not a source: it is a FIFO (a named pipe), not a regular file (never read)"
    dev = "assets/models/props/null.vmodel: not a source: it is a character device, not a regular file (never read)"
    for _ in range(2):  # (the second with the listings the first cook kept)
        cp = game.cook()  # a read of the FIFO would hit the subprocess timeout
        _no_traceback(cp)
        assert cp.returncode == 1, cp.stdout + cp.stderr
        assert f"{fifo}\n" in cp.stdout and f"{dev}\n" in cp.stdout
        assert summary(cp) == {"cooked": 0, "uptodate": 4, "restored": 0, "failed": 2}
    cp = game.veduta("cook")
    assert cp.returncode == 1 and fifo + "\n" in cp.stdout, cp
    listed = game.doit("list", "--all", "--status", check=True).stdout
    assert "R cook:_sources " in listed and "U cook:models/crate.vmodel " in listed
    cp = game.veduta("check")
    assert cp.returncode == 1, cp
    assert fifo.replace(": not", ":1:1: $: not") + "\n" in cp.stdout
    assert dev.replace(": not", ":1:1: $: not") + "\n" in cp.stdout
    cp = game.veduta("list", "--json")
    assert sorted(d["file"] for d in json.loads(cp.stdout)["problems"]) == [
        "assets/models/props/null.vmodel",
        "assets/models/x.vmodel",
    ]
    (models / "x.vmodel").unlink()
    (models / "props/null.vmodel").unlink()
    cp = game.cook(check=True)
    assert summary(cp)["failed"] == 0


def test_a_fifo_named_as_a_source_is_the_same_error_as_listed(game, monkeypatch):
    # named directly, a FIFO was "no such source" (or "no model"), where the folder's listing says
    # what it is: every command that takes a source by path (or by name) now says what the
    # listing says, and exits 2 at once (a read of the FIFO would hit the subprocess timeout)
    from veduta import api
    from veduta.base.errors import UsageError
    from veduta.base.project import Project

    models = game.root / "assets/models"
    os.mkfifo(models / "props/x.vmodel")
    fifo = "assets/models/props/x.vmodel: not a source: it is a FIFO (a named pipe), not a regular file (never read)"
    for args in (
        ["cook", "models/props/x.vmodel"],
        ["cook", "assets/models/props/x.vmodel"],
        ["check", "models/props/x.vmodel"],
        ["check", "assets/models/props/x.vmodel"],
        ["why", "models/props/x.vmodel"],
        ["inspect", "model", "x"],
        ["preview", "model", "x", "--out", "x.png"],
    ):
        cp = game.veduta(*args)
        _no_traceback(cp)
        assert (cp.returncode, cp.stdout, cp.stderr) == (2, "", f"veduta: {fifo}\n"), (args, cp)
    cp = game.veduta("check", "models/props/x.vmodel", "models/ghost.vmodel")
    assert cp.returncode == 2 and cp.stderr == (
        f"veduta: {fifo}; no such source: models/ghost.vmodel (give a source file, or a path under assets/ "
        f"such as models/crate.vmodel)\n"
    ), cp
    cp = game.veduta("cook", "models/ghost.vmodel")  # (a name that is nothing: as before)
    assert cp.returncode == 2 and "assets/models/ghost.vmodel: no such source (give the path" in cp.stderr, cp
    cp = game.doit("cook:models/props/x.vmodel")
    _no_traceback(cp)
    assert cp.returncode != 0 and f"{fifo}\n" in cp.stdout and "no such source" not in cp.stdout, cp
    monkeypatch.chdir(game.root)
    project = Project.find(".")
    for call in (
        lambda: api.why(project, ["models/props/x.vmodel"]),
        lambda: api.check(project, ["models/props/x.vmodel"]),
    ):
        with pytest.raises(UsageError) as got:
            call()
        assert str(got.value) == fifo


def test_a_fifo_in_the_cache_folder_is_never_read(game):
    # the stat cache and the store's entries are read as regular files only: a FIFO in their
    # place blocked every command (doit cook, list, veduta why, check) for ever
    import os

    game.cook(check=True)
    state = game.root / "cache/state.marshal"
    state.unlink()
    os.mkfifo(state)
    for entry in (game.root / "cache/store").rglob("*"):
        if entry.is_file():
            entry.unlink()
            os.mkfifo(entry)
    for rel in ("crate", "barrel", "tree", "tree_far"):
        game.cooked(f"models/{rel}.vda").unlink()  # the store is asked before compiling
    for args in (["-m", "doit", "list", "--all", "--status"], ["-m", "veduta", "why"], ["-m", "doit", "cook"]):
        cp = subprocess.run([sys.executable, *args], cwd=game.root, capture_output=True, text=True, timeout=60)
        _no_traceback(cp)
        assert cp.returncode == 0, (args, cp.stdout + cp.stderr)
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "failed": 0}


def test_symlink_loops_are_skipped_with_a_warning(game):
    import os

    models = game.root / "assets/models"
    os.symlink("self.vmodel", models / "self.vmodel")
    os.symlink(".", models / "props/again")
    os.symlink("../..", models / "props/up")
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert (
        "assets/models/self.vmodel: warning: skipped, cannot follow it (Too many levels of symbolic links)" in cp.stderr
    )
    assert "assets/models/props/again: warning: skipped, a link to a folder above it (a loop)" in cp.stderr
    assert "assets/models/props/up/models: warning: skipped, a link to a folder above it (a loop)" in cp.stderr
    assert summary(cp)["cooked"] == 4


def test_a_model_over_the_triangle_limit_is_a_located_error(game):
    import time

    parts = ", ".join('{"shape": "sphere", "radius": 1, "segments": 256, "rings": 128}' for _ in range(256))
    game.write("models/huge.vmodel", '{"veduta": "model/1",\n "parts": [' + parts + "]}")
    t0 = time.monotonic()
    cp = game.cook()
    assert time.monotonic() - t0 < 60  # refused before building (building took 86 s and 15.6 GB)
    _no_traceback(cp)
    assert (
        "assets/models/huge.vmodel:2:11: parts: 16,646,144 triangles (every level of detail counted), "
        "beyond the limit of 1,000,000 per model" in cp.stdout
    )
    assert summary(cp)["failed"] == 1 and summary(cp)["cooked"] == 4


def test_cooked_or_cache_folders_overlapping_the_sources_are_refused(game):
    for key, value, why in (
        ("cooked", "assets", "it is the assets folder"),
        ("cooked", ".", "it holds the assets folder"),
        ("cooked", "assets/models", "it is the models source folder"),
        ("cache", "assets/models/c", "it is inside the models source folder"),
    ):
        (game.root / "pyproject.toml").write_text(f'[tool.veduta]\n{key} = "{value}"\n')
        cp = game.cook()
        _no_traceback(cp)
        assert cp.returncode == 2
        assert cp.stderr.startswith(f"veduta: pyproject.toml: [tool.veduta] {key} = '{value}': {why}; "), cp.stderr
        assert not list(game.root.rglob("*.vda"))


def test_a_cache_folder_in_the_cooked_folder_is_refused(game):
    # the engine loads the cooked folder: doit's database, the stat cache and the store are no part of it
    for toml, why in (
        (
            'cache = "assets/.cooked"',
            "cache = 'assets/.cooked': the cache folder assets/.cooked is the cooked folder assets/.cooked",
        ),
        (
            'cache = "assets/.cooked/models"',
            "cache = 'assets/.cooked/models': the cache folder assets/.cooked/models is inside the cooked folder",
        ),
        ('cooked = "cache"', "cooked = 'cache': the cache folder cache is the cooked folder cache"),
        (
            'cooked = "out"\ncache = "out/cache"',
            "cache = 'out/cache': the cache folder out/cache is inside the cooked folder out",
        ),
    ):
        (game.root / "pyproject.toml").write_text(f"[tool.veduta]\n{toml}\n")
        cp = game.cook()
        _no_traceback(cp)
        assert cp.returncode == 2, cp.stdout + cp.stderr
        assert cp.stderr.startswith(f"veduta: pyproject.toml: [tool.veduta] {why}"), cp.stderr
        assert not list(game.root.rglob("*.vda")) and not list(game.root.rglob("doit.sqlite3*"))
    (game.root / "pyproject.toml").write_text('[tool.veduta]\ncooked = "cache/cooked"\n')  # the other way round is fine
    assert game.cook().returncode == 0 and (game.root / "cache/cooked/models/crate.vda").is_file()


def test_a_cooked_folder_that_is_a_file_is_one_line(game):
    game.write("materials/m.vmaterial", '{"veduta": "material/1", "albedo": "#5c6b7a"}')  # a second kind
    (game.root / "assets/.cooked").write_text("not a folder")
    line = "assets/.cooked: is a file, not a folder (cooked files go under assets/.cooked/); move it away"
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode != 0
    assert cp.stdout.splitlines()[0] == line
    assert len(cp.stdout.splitlines()) == 2  # that line (one, for both kinds) and the summary
    # a source asked for by name says why it cannot be cooked, not that it does not exist
    for named in (
        game.cook("cook:models/crate.vmodel"),
        subprocess.run(
            [sys.executable, "-m", "veduta", "cook", "models/crate.vmodel"],
            cwd=game.root,
            capture_output=True,
            text=True,
            timeout=300,
        ),
    ):
        _no_traceback(named)
        assert named.returncode != 0 and line in named.stdout, named.stdout + named.stderr
        assert "no such source" not in named.stdout + named.stderr
    (game.root / "assets/.cooked").unlink()
    (game.root / "assets/.cooked").mkdir()
    (game.root / "assets/.cooked/models").write_text("a file where the models go")
    cp = game.cook()
    assert cp.stdout.splitlines()[0] == (
        "assets/.cooked/models: is a file, not a folder (cooked files go under assets/.cooked/models/); move it away"
    )
    assert summary(cp)["cooked"] == 1  # the material still cooks


def test_a_second_cook_waits_for_the_first(game):
    # big enough that the first cook is still running when the second starts (0.3 s later)
    first = _slow_cook_started(game, 16, 256, 128, "cache/cook.lock")
    second = game.cook()
    out1, err1 = first.communicate(timeout=300)
    assert "veduta: another cook is running in this game (cache/cook.lock); waiting for it to finish" in second.stderr
    assert summary(second)["cooked"] == 0 and summary(second)["uptodate"] == 20  # no work done twice
    assert summary(type("cp", (), {"stdout": out1, "stderr": err1})())["cooked"] == 20


def test_a_dangling_link_is_named_as_a_warning_by_cook_and_check(game):
    import json
    import os

    os.symlink("gone/crate2.vmodel", game.root / "assets/models/crate2.vmodel")  # skipped without a word
    os.symlink("/nowhere/shared", game.root / "assets/models/shared")  # a folder link to nothing, too
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode == 0 and summary(cp)["cooked"] == 4, cp.stdout + cp.stderr
    want = [
        "assets/models/crate2.vmodel: warning: skipped, a link to nothing (gone/crate2.vmodel does not exist)",
        "assets/models/shared: warning: skipped, a link to nothing (/nowhere/shared does not exist)",
    ]
    assert sorted(line for line in cp.stderr.splitlines() if "link to nothing" in line) == want
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "check", "--json"], cwd=game.root, capture_output=True, text=True, timeout=120
    )
    got = json.loads(cp.stdout)
    assert cp.returncode == 0 and got["warnings"] == 2, cp.stdout + cp.stderr
    assert sorted(f"{d['file']}: warning: {d['message']}" for d in got["diagnostics"]) == want


def test_an_empty_assets_folder_says_so_and_a_missing_one_is_a_configuration_error(game):
    import shutil

    shutil.rmtree(game.root / "assets/models")
    cp = game.cook()  # printed nothing at all
    assert (cp.returncode, cp.stderr) == (0, ""), cp.stdout + cp.stderr
    assert cp.stdout.startswith("cook: no sources under assets/ (a source is one of models/**/*.vmodel, "), cp.stdout
    (game.root / "assets").rmdir()  # counted as "1 failed", and check showed it at "assets:1:1: $:"
    why = (
        "veduta: no assets folder: assets does not exist (a game keeps its sources in assets/, or names the "
        "folder with [tool.veduta] assets in pyproject.toml)\n"
    )
    for args in (["-m", "doit", "cook"], ["-m", "veduta", "check"], ["-m", "veduta", "cook"]):
        cp = subprocess.run([sys.executable, *args], cwd=game.root, capture_output=True, text=True, timeout=120)
        assert (cp.returncode, cp.stdout, cp.stderr) == (2, "", why), (args, cp.stdout + cp.stderr)


def test_a_file_name_cannot_break_or_forge_a_line_of_the_cook_output(game):
    """A source named with a newline, a C1 next line and a line separator in it: each diagnostic
    is one line in text (the name escaped), so no line of its name reads as a CI workflow command
    (``::error ...::``); JSON keeps the name as the file system has it."""
    import json

    name = "a\n::error::FORGED\x85::warning::FORGED\u2028b.vmodel"
    game.write(f"models/{name}", '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}')
    shown = "a\\n::error::FORGED\\x85::warning::FORGED\\u2028b"
    for cp in (game.cook(), game.veduta("check")):
        assert cp.returncode == 1, cp
        lines = (cp.stdout + cp.stderr).split("\n")
        assert not [ln for ln in lines if ln.startswith("::")], lines
        (line,) = [ln for ln in lines if "FORGED" in ln]
        assert line.startswith(f'assets/models/{shown}.vmodel:1:1: $: file name "{shown}" is not a valid asset name')
    cp = game.veduta("check", "--json")
    (d,) = json.loads(cp.stdout)["diagnostics"]
    assert d["file"] == f"assets/models/{name}"


def test_a_source_path_with_an_equals_sign_fails_alone(game):
    """doit refuses a task named with '=' and aborted the whole cook ("Execution aborted", nothing
    cooked). Now such a path is a problem of its own, named, and every other source cooks."""
    game.write("models/a=b.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}')
    game.write("models/x=y/c.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}')
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode == 1 and "Execution aborted" not in cp.stdout + cp.stderr, cp
    out = cp.stdout + cp.stderr
    for path in ("assets/models/a=b.vmodel", "assets/models/x=y/c.vmodel"):
        assert f"{path}: a path holding '=' cannot be a source" in out, out
    assert summary(cp)["cooked"] == 4 and game.cooked("models/crate.vda").is_file()
    cp = game.veduta("check")
    assert cp.returncode == 1 and "assets/models/a=b.vmodel:1:1: $: a path holding '='" in cp.stdout + cp.stderr


def test_a_cache_folder_in_the_assets_folder_is_refused(game):
    # the file-system monitor watches the assets folder, and its own folder (cookies, journal) is in
    # the cache folder: a cook's cookie was journaled as a change, never as the answer (every cook
    # waited 2 s for it, warned and checked every source)
    for toml, why in (
        ('cache = "assets/vcache"', "cache = 'assets/vcache': the cache folder assets/vcache is inside the assets"),
        ('cache = "assets/.cache"', "cache = 'assets/.cache': the cache folder assets/.cache is inside the assets"),
        ('assets = "."\ncooked = "out"', "assets = '.': the cache folder cache is inside the assets folder ."),
    ):
        (game.root / "pyproject.toml").write_text(f"[tool.veduta]\n{toml}\n")
        for cp in (game.cook(), game.veduta("watch", "--monitor")):
            _no_traceback(cp)
            assert cp.returncode == 2, cp.stdout + cp.stderr
            assert cp.stderr.startswith(f"veduta: pyproject.toml: [tool.veduta] {why}"), cp.stderr
        assert not list(game.root.rglob("*.vda"))
    # a link named as the cache folder, leading into the assets folder: where it really is counts
    (game.root / "assets" / "vc").mkdir()
    os.symlink(game.root / "assets" / "vc", game.root / "linked-cache")
    (game.root / "pyproject.toml").write_text('[tool.veduta]\ncache = "linked-cache"\n')
    cp = game.cook()
    _no_traceback(cp)
    assert cp.returncode == 2 and "the cache folder linked-cache is inside the assets folder" in cp.stderr, cp.stderr
    os.unlink(game.root / "linked-cache")
    (game.root / "assets" / "vc").rmdir()
    (game.root / "pyproject.toml").write_text('[tool.veduta]\ncache = "assets-cache"\n')  # beside it is fine
    assert game.cook().returncode == 0 and (game.root / "assets-cache").is_dir()
