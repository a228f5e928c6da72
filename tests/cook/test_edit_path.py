"""What a cook of one edited source does beyond a no-op (docs/cooking.md, "How the check stays
cheap"): with the same sources as the last cook, it lists no cooked folder and writes the stat
cache once; what it leaves undone is found again by the next cook, even when it is killed
before its end.  Each cook runs in a process of its own, as ``doit cook``, with a probe that
counts the sweeps of the cooked folders and the writes of the stat cache."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.cook.test_cook import summary
from tests.gamerepo import Game
from veduta.cook.state import RACY_NS

#: ``doit cook`` in this process, counting the orphan sweeps (listings of the cooked folders)
#: and the writes of cache/state.marshal; with KILL, the process dies in its first cook
#: action, before it writes anything (as a cook killed by SIGKILL right after its task pass)
PROBE = """if True:
    import json, os, sys
    from veduta.cook import action, state, tasks
    seen = {"sweeps": 0, "state_writes": 0}
    sweep, write = tasks.orphans, state.atomic_write
    def orphans(*a, **k):
        seen["sweeps"] += 1
        return sweep(*a, **k)
    def atomic_write(path, data):
        seen["state_writes"] += path.endswith("state.marshal")
        return write(path, data)
    tasks.orphans, state.atomic_write = orphans, atomic_write
    if KILL:
        action.cook_batch = lambda jobs: os._exit(9)
    from doit.doit_cmd import DoitMain
    rc = DoitMain().run(["cook"])
    sys.stderr.write("SEEN " + json.dumps(seen) + "\\n")
    sys.exit(rc)
"""


def settle() -> None:
    """Wait out the racy window: what the last cook saw of its files and folders is kept."""
    time.sleep(RACY_NS / 1e9 + 0.2)


def probed_cook(game: Game, kill: bool = False) -> tuple[subprocess.CompletedProcess, dict]:
    cp = subprocess.run(
        [sys.executable, "-c", PROBE.replace("KILL", repr(kill))],
        cwd=game.root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if kill:
        assert cp.returncode == 9, cp.stdout + cp.stderr
        return cp, {}
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return cp, json.loads(cp.stderr.split("SEEN ", 1)[1].splitlines()[0])


def edit(game: Game, rel: str) -> None:
    with open(game.root / "assets" / rel, "a") as f:
        f.write(" ")  # (JSON whitespace: new content, the same model)


def cooked_and_settled(game: Game) -> None:
    game.cook(check=True)
    settle()
    game.cook(check=True)  # every signature kept, the cooked folders swept and found clean
    settle()


def test_an_edit_lists_no_cooked_folder_and_writes_the_state_once(game):
    cooked_and_settled(game)
    _, seen = probed_cook(game)
    assert seen == {"sweeps": 0, "state_writes": 0}  # a no-op, for comparison
    before = game.snapshot()
    edit(game, "models/crate.vmodel")
    cp, seen = probed_cook(game)
    assert summary(cp) == {"cooked": 1, "uptodate": 3, "restored": 0, "failed": 0}
    assert seen == {"sweeps": 0, "state_writes": 1}
    after = game.snapshot()
    assert [k for k in after if after[k][:2] != before[k][:2]] == ["models/crate.vda"]
    # the same bytes as a cook from nothing makes of the edited source
    for rel in after:
        game.cooked(rel).unlink()
    game.cook(check=True)
    assert {k: v[2] for k, v in game.snapshot().items()} == {k: v[2] for k, v in after.items()}


def test_sources_removed_after_an_edit_are_swept(game):
    cooked_and_settled(game)
    edit(game, "models/crate.vmodel")
    _, seen = probed_cook(game)
    assert seen["sweeps"] == 0
    settle()
    (game.root / "assets/models/props/barrel.vmodel").unlink()
    cp, seen = probed_cook(game)
    assert seen["sweeps"] == 1 and "removed assets/.cooked/models/barrel.vda (its source is gone)" in cp.stdout
    assert not game.cooked("models/barrel.vda").exists()


def test_a_cook_killed_after_finding_a_source_stale_leaves_it_stale_and_its_cooked_file_known(game):
    cooked_and_settled(game)
    edit(game, "models/crate.vmodel")
    probed_cook(game, kill=True)  # the pass found crate stale; nothing cooked, nothing saved
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 1  # still stale: cooked now
    cooked_and_settled(game)
    edit(game, "models/crate.vmodel")
    probed_cook(game, kill=True)
    settle()
    # the stale source removed after the killed cook: its cooked file is an orphan, found as one
    # (the state still names the source, so the sources are not the same as the last cook's)
    (game.root / "assets/models/crate.vmodel").unlink()
    cp, seen = probed_cook(game)
    assert seen["sweeps"] == 1 and "removed assets/.cooked/models/crate.vda (its source is gone)" in cp.stdout
    assert not game.cooked("models/crate.vda").exists()
