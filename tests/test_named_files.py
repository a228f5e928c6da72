"""Files a user names to a tool (issue 28): read only when regular and no larger than a cooked
file can be, in bounded time and memory; written only into a folder that exists. Real FIFOs,
real devices, real (sparse) huge files, real memory limits (RLIMIT_AS), the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.gamerepo import Game, memory_limit

GB = 1 << 30


def veduta(game: Game, *args: str, memory: int | None = None) -> subprocess.CompletedProcess:
    """``veduta ARGS`` in the game (under an address-space limit of *memory* bytes when given);
    a hang is the time-out's failure."""
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args],
        cwd=game.root,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=memory_limit(memory) if memory else None,
    )


def _clean(cp: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in cp.stdout + cp.stderr and "MemoryError" not in cp.stdout + cp.stderr, (
        cp.stdout + cp.stderr
    )


def test_dump_and_verify_of_a_fifo_or_a_device_end_at_once(game):
    os.mkfifo(game.root / "pipe.vda")  # dump and verify blocked on it for ever
    cp = veduta(game, "dump", "pipe.vda")
    _clean(cp)
    assert (cp.returncode, cp.stderr) == (
        1,
        "veduta dump: pipe.vda: cannot read: it is a FIFO (a named pipe), not a regular file\n",
    )
    cp = veduta(game, "verify", "--json", "pipe.vda", "/dev/zero", ".")
    _clean(cp)
    assert cp.returncode == 1
    assert [f["error"] for f in json.loads(cp.stdout)["files"]] == [
        "pipe.vda: cannot read: it is a FIFO (a named pipe), not a regular file",
        "/dev/zero: cannot read: it is a character device, not a regular file",
        ".: cannot read: it is a folder, not a regular file",
    ]


def test_a_file_larger_than_any_cooked_file_is_refused_unread(game):
    """3 GB (sparse: no disk used) under a 1 GB memory limit: verify used 3.2 GB, and under a
    limit dump was a MemoryError traceback."""
    with open(game.root / "huge.vda", "wb") as f:
        f.truncate(3 * GB)
    why = "huge.vda: cannot read: too large (3,221,225,472 bytes; a cooked file is at most 536,870,912)"
    cp = veduta(game, "verify", "huge.vda", memory=GB)
    _clean(cp)
    assert (cp.returncode, cp.stderr) == (1, why + "\n")
    cp = veduta(game, "dump", "huge.vda", memory=GB)
    _clean(cp)
    assert (cp.returncode, cp.stderr) == (1, f"veduta dump: {why}\n")


def test_a_file_that_does_not_fit_in_memory_is_a_message(game):
    """Under the size limit but over what memory allows: a message, not a MemoryError traceback."""
    with open(game.root / "big.vda", "wb") as f:
        f.truncate(400 << 20)
    cp = veduta(game, "dump", "big.vda", memory=300 << 20)
    _clean(cp)
    assert (cp.returncode, cp.stderr) == (
        1,
        "veduta dump: big.vda: cannot read: not enough memory to read its 419,430,400 bytes\n",
    )


@pytest.mark.parametrize(
    "args",
    [
        ["export", "gltf", "crate", "--out", "{out}.glb"],
        ["preview", "model", "crate", "--out", "{out}.png"],
        ["world", "map", "w", "--out", "{out}.png", "--size", "8,8"],
        ["inspect", "world", "w", "--sheet", "{out}.png"],
        ["preview", "texture", "t", "--out", "{out}.png"],
    ],
)
def test_every_output_option_refuses_a_missing_folder_and_makes_none(game, args):
    """One rule for every output option: export gltf made the folders, the others refused."""
    game.write(
        "textures/t.vtexture",
        '{"veduta": "texture/1", "size": [8, 8], "layers": [{"type": "checker", "colors": ["#ff0000", "#00ff00"]}]}\n',
    )
    game.write(
        "worlds/w.vworld", '{"veduta": "world/1", "seed": 1, "biomes": [{"name": "plain", "ground": "grass"}]}\n'
    )
    given = [a.replace("{out}", "no/such/dir/x") for a in args]
    cp = veduta(game, *given)
    _clean(cp)
    out = given[given.index("--out" if "--out" in given else "--sheet") + 1]
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert f"cannot write {out}: no folder no/such/dir (no folder is made for an output: create it first)" in cp.stderr
    assert not (game.root / "no").exists()
    (game.root / "no/such/dir").mkdir(parents=True)
    cp = veduta(game, *given)
    assert cp.returncode == 0 and (game.root / out).stat().st_size > 0, cp.stdout + cp.stderr
