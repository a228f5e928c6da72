"""``veduta list`` and ``veduta write`` as a user runs them: real processes in a temporary game."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.gamerepo import BAD, Game

CUBE = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}\n'


def run(game: Game, *args: str, stdin: str | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args],
        cwd=cwd or game.root,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_list_prints_each_asset_and_its_state_and_exits_1_when_one_failed(game: Game):
    game.write("models/tree_far.vmodel", BAD)
    out = run(game, "list")
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["never", "cooked", "model", "crate", "assets/models/crate.vmodel"]
    assert lines[3].startswith("failed ") and lines[3].endswith("assets/models/tree_far.vmodel  (3 errors)")
    assert out.stderr == "list: 4 assets: 1 failed, 3 never cooked\n"
    as_json = run(game, "list", "model", "--json")
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert [(a["name"], a["state"], a["errors"]) for a in data["assets"]] == [
        ("crate", "never_cooked", 0),
        ("barrel", "never_cooked", 0),
        ("tree", "never_cooked", 0),
        ("tree_far", "failed", 3),
    ]
    game.write("models/tree_far.vmodel", CUBE)
    assert run(game, "cook").returncode == 0
    again = run(game, "list", "-n", "1")
    assert again.returncode == 0 and again.stderr == "list: 4 assets: 4 fresh\n"
    assert run(game, "list", "world").stdout == ""


def test_write_from_a_file_or_standard_input(game: Game):
    (game.root / "cube.json").write_text(CUBE)
    out = run(game, "write", "model", "cube", "cube.json")
    assert (out.returncode, out.stdout, out.stderr) == (0, "assets/models/cube.vmodel: created (+1 -0 lines)\n", "")
    assert (game.root / "assets/models/cube.vmodel").read_text() == CUBE
    bigger = CUBE.replace("[1, 1, 1]", "[2, 1, 1]")
    out = run(game, "write", "model", "cube", "-", stdin=bigger)
    assert out.stdout == (
        "assets/models/cube.vmodel: replaced (+1 -1 lines)\n  parts[0].size: changed [1, 1, 1] -> [2, 1, 1]\n"
    )
    dry = run(game, "write", "model", "cube", "-", "--dry-run", "--json", stdin=CUBE)
    assert json.loads(dry.stdout)["action"] == "replaced" and json.loads(dry.stdout)["written"] is False
    assert (game.root / "assets/models/cube.vmodel").read_text() == bigger
    # from a sub-folder, the file is found from there, and the source still goes under assets/
    (game.root / "work").mkdir()
    (game.root / "work/crate.json").write_text(CUBE)
    out = run(game, "write", "model", "crate", "crate.json", cwd=game.root / "work")
    assert out.returncode == 0 and out.stdout.startswith("../assets/models/crate.vmodel: replaced")


def test_a_refused_write_names_every_error_and_writes_nothing(game: Game):
    out = run(game, "write", "model", "broken", "-", stdin=BAD)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(
        "veduta: model broken has 3 errors, so nothing was written to "
        "assets/models/broken.vmodel; fix them and write it again:\n"
    )
    assert "  assets/models/broken.vmodel:5:68: parts[1].segments: 2 out of range [3, 256]\n" in out.stderr
    as_json = run(game, "write", "model", "broken", "-", "--json", stdin=BAD)
    refusal = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and refusal["refused"] is True
    assert {
        "code": "MODEL_SOURCE_ERROR",
        "severity": "error",
        "message": "2 out of range [3, 256]",
        "file": "assets/models/broken.vmodel",
        "line": 5,
        "col": 68,
        "path": "parts[1].segments",
    } in refusal["findings"]
    assert not (game.root / "assets/models/broken.vmodel").exists()


def test_unknown_kinds_and_bad_names_are_usage_mistakes_with_suggestions(game: Game):
    out = run(game, "list", "modle")
    assert out.returncode == 2
    assert out.stderr == (
        'veduta: no asset kind "modle" (did you mean model?) (want one of model, texture, '
        "material, scene, prefab, world, map)\n"
    )
    out = run(game, "write", "prefabs", "x", "-", "--json", stdin="{}")
    assert out.returncode == 2 and 'no asset kind "prefabs" (did you mean prefab?)' in json.loads(out.stdout)["message"]
    out = run(game, "write", "model", "Cube", "-", stdin=CUBE)
    assert out.returncode == 2 and "'Cube' is not an asset name" in out.stderr
    out = run(game, "write", "model", "cube", "missing.json")
    assert out.returncode == 2 and out.stderr == "veduta: cannot read missing.json: No such file or directory\n"
    (game.root / "latin1.json").write_bytes(b'{"veduta": "model/1", "name": "caf\xe9"}')
    out = run(game, "write", "model", "cube", "latin1.json")
    assert out.returncode == 2 and "latin1.json is not UTF-8 text" in out.stderr
    out = run(game, "inspect", "model", "crat")
    assert out.returncode == 2 and out.stderr.endswith('no model "crat" under assets/models/ (did you mean crate?)\n')


def test_a_mistyped_command_or_option_names_the_closest_ones(game: Game):
    out = run(game, "world", "plce", "valley")
    assert out.returncode == 2
    assert "invalid choice: 'plce'; did you mean place? (choose from 'query', 'map', 'place'" in out.stderr
    out = run(game, "write", "model", "x", "-", "--dryrun", stdin=CUBE)
    assert out.returncode == 2 and "unrecognized arguments: --dryrun (--dryrun: did you mean --dry-run?)" in out.stderr
    out = run(game, "list", "--jsn", "--json")
    assert out.returncode == 2 and "did you mean --json" in json.loads(out.stdout)["message"]
    out = run(game, "zzz")
    assert out.returncode == 2 and "did you mean" not in out.stderr and "invalid choice: 'zzz'" in out.stderr


def test_write_reads_no_more_than_a_source_may_be_and_never_waits_on_a_fifo(game: Game, tmp_path):
    """A device, a FIFO or an endless stream: refused at once or after the limit, never read
    whole (once /dev/zero grew the process by a gigabyte a second, and a FIFO blocked for ever)."""
    import os

    from veduta.tools.write_source import MAX_SOURCE_BYTES

    fifo = tmp_path / "pipe.vmodel"
    os.mkfifo(fifo)
    for name, why in ((os.devnull, "not a regular file"), (str(fifo), "it is a FIFO (a named pipe)")):
        cp = run(game, "write", "model", "newone", name, "--json")
        assert cp.returncode == 2, cp
        doc = json.loads(cp.stdout)
        assert doc["refused"] and f"cannot read {name}: " in doc["message"] and why in doc["message"], doc
    big = tmp_path / "big.vmodel"
    big.write_bytes(CUBE.encode() + b" " * MAX_SOURCE_BYTES)
    cp = run(game, "write", "model", "newone", str(big))
    assert cp.returncode == 2 and f"{big.stat().st_size:,} bytes, more than the 16,777,216 bytes" in cp.stderr
    assert "a larger source is cooked as any other" in cp.stderr
    with open("/dev/zero", "rb") as endless:  # a stream that never ends: read to the limit, then refused
        cp = subprocess.run(
            [sys.executable, "-m", "veduta", "write", "model", "newone", "-"],
            cwd=game.root,
            stdin=endless,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert cp.returncode == 2 and "standard input: more than the 16,777,216 bytes" in cp.stderr, cp
    assert not (game.root / "assets/models/newone.vmodel").exists()


def test_write_from_a_closed_standard_input_is_a_clear_refusal(game: Game):
    """Started with standard input closed (`veduta write model zz - <&-`, a CI step or an agent's
    subprocess without one): a `veduta: ...` line and exit 2 (once a traceback, exit 1)."""
    import os

    for extra, want in (((), None), (("--json",), "json")):
        cp = subprocess.run(
            [sys.executable, "-m", "veduta", "write", "model", "zz", "-", *extra],
            cwd=game.root,
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: os.close(0),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cp.returncode == 2 and "Traceback" not in cp.stderr, cp
        if want is None:
            assert (cp.stdout, cp.stderr) == ("", "veduta: cannot read standard input: it is closed\n")
        else:
            assert json.loads(cp.stdout)["message"] == "cannot read standard input: it is closed", cp
    assert not (game.root / "assets/models/zz.vmodel").exists()
