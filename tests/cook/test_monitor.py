"""The file-system monitor (``veduta watch --monitor``) with real processes: a real inotify monitor,
real ``doit cook`` runs and real edits, the monitor killed, stopped, hung and restarted between
and during them.  The oracle after every cook is ``veduta why --json``, which checks every source
by its signatures and hashes without the monitor: whatever the monitor did, nothing may be left
stale.  No speed is asserted (docs/cooking.md, "The file-system monitor", says what it saves)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.gamerepo import BARREL, CRATE, Game

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the monitor needs inotify")


class MonitorProcess:
    """``veduta watch --monitor`` in the game's root, started and waited for until it watches."""

    def __init__(self, game: Game, script: str | None = None):
        """*script*: Python run instead of ``veduta watch --monitor`` (a test double inside)."""
        self.game = game
        self.err = open(game.root.parent / f"monitor-{time.monotonic_ns()}.log", "w+")  # noqa: SIM115
        env = dict(os.environ)
        env.pop("VEDUTA_FORMAT", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "veduta", "watch", "--monitor"]
            if script is None
            else [sys.executable, "-c", script],
            cwd=game.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.err,
            text=True,
        )
        end = time.monotonic() + 60
        while "monitoring" not in self.log():
            assert self.proc.poll() is None, self.log()
            assert time.monotonic() < end, self.log()
            time.sleep(0.02)

    def log(self) -> str:
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        """SIGKILL: no chance to tidy up (its state file stays, naming a dead pid)."""
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it: exit 0."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def monitors(game):
    started: list[MonitorProcess] = []

    def start(script: str | None = None) -> MonitorProcess:
        m = MonitorProcess(game, script)
        started.append(m)
        return m

    yield start
    for m in started:
        if m.proc.poll() is None:
            m.stop()
        m.err.close()


def marked(game: Game, monitors) -> MonitorProcess:
    """A monitor started and two cooks run: the second leaves the mark the next cook trusts."""
    m = monitors()
    cook(game)
    cook(game)
    return m


def cook(game: Game) -> str:
    cp = game.cook()
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return cp.stdout + cp.stderr


def nothing_stale(game: Game) -> None:
    cp = game.veduta("why", "--json")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert json.loads(cp.stdout)["stale"] == [], cp.stdout


def status(game: Game) -> dict:
    cp = game.veduta("watch", "--status", "--json")
    return json.loads(cp.stdout)


def bigger(text: str, n: int) -> str:
    return text.replace('"size": [1, 1, 1]', f'"size": [{n}, 1, 1]').replace('"radius": 0.4', f'"radius": 0.{n}')


def test_monitor_cooks_every_change_and_the_journal_spares_the_rest(game, monitors):
    assert status(game)["running"] is False
    monitors()
    assert "cook: 4 cooked" in cook(game)
    got = status(game)
    assert got["running"] and got["trusted"] and got["marked"], got
    assert "0 cooked, 4 up to date" in cook(game)

    # the journal names one source: the cook checks that one and trusts the other three unstat'd
    game.write("models/crate.vmodel", bigger(CRATE, 2))
    from veduta import TOOLCHAIN
    from veduta.base.project import Project
    from veduta.cook.run import CookRun
    from veduta.cook.state import StatCache
    from veduta.cook.tasks import STATE_FILE, _journal_pass

    before = os.getcwd()
    os.chdir(game.root)  # (the project's paths are relative to the game's root, as in a cook)
    try:
        project = Project.at(".")
        run = CookRun(project, executing=True, selected=["cook"])
        jp = _journal_pass(run, StatCache(os.path.join(project.cache, STATE_FILE), TOOLCHAIN))
    finally:
        os.chdir(before)
    assert jp is not None
    assert [s.rel for s in jp.sources] == ["models/crate.vmodel"] and jp.fresh == 3
    # (asking took the mark away, as every cook does: the next cook checks every source)
    assert "1 cooked, 3 up to date" in cook(game)  # the edit, after a full check
    nothing_stale(game)

    game.write("models/crate.vmodel", bigger(CRATE, 3))  # written in place
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)

    # an editor's save: a temp file renamed over the source
    tmp = game.root / "assets" / "models" / "props" / ".barrel.vmodel.swp"
    tmp.write_text(bigger(BARREL, 7))
    os.replace(tmp, game.root / "assets" / "models" / "props" / "barrel.vmodel")
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)

    game.write("models/box.vmodel", bigger(CRATE, 4))  # a new source
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale(game)
    (game.root / "assets" / "models" / "box.vmodel").unlink()  # a source gone: its cooked file too
    out = cook(game)
    assert "removed" in out and "box.vda" in out, out
    assert not game.cooked("models/box.vda").exists()
    game.cooked("models/tree.vda").unlink()  # a cooked file gone
    assert "0 cooked, 3 up to date, 1 restored from cache" in cook(game)
    assert game.cooked("models/tree.vda").exists()
    nothing_stale(game)
    assert "0 cooked, 4 up to date" in cook(game)
    assert status(game)["marked"]


def test_monitor_killed_and_restarted_mid_edit(game, monitors):
    m = marked(game, monitors)
    game.write("models/crate.vmodel", bigger(CRATE, 2))
    m.kill()  # mid-edit: one file changed before, one after, none cooked
    game.write("models/props/barrel.vmodel", bigger(BARREL, 5))
    out = cook(game)
    assert "2 cooked, 2 up to date" in out, out
    assert "did not answer" not in out  # a dead monitor is seen dead at once: no wait
    nothing_stale(game)

    # restarted while a save is under way: the first cook with the new monitor checks everything
    game.write("models/crate.vmodel", bigger(CRATE, 3))
    monitors()
    game.write("models/tree.vmodel", bigger(CRATE, 6))
    assert "2 cooked, 2 up to date" in cook(game)
    nothing_stale(game)
    game.write("models/crate.vmodel", bigger(CRATE, 4))  # and then the journal sees every save
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)


def test_monitor_stopped_restarted_and_hung(game, monitors):
    m = marked(game, monitors)
    assert m.stop() == 0  # SIGTERM: its state goes; cooks no longer ask it
    assert "monitor stopped" in m.log()
    assert status(game)["running"] is False
    game.write("models/crate.vmodel", bigger(CRATE, 2))  # while no monitor runs
    m = monitors()
    game.write("models/props/barrel.vmodel", bigger(BARREL, 5))
    assert "2 cooked, 2 up to date" in cook(game)
    nothing_stale(game)
    cook(game)

    # stopped (SIGSTOP) while a file changes: its events wait in the kernel's queue, ahead of
    # the cook's cookie, and are journaled before it once it runs on
    m.signal(signal.SIGSTOP)
    game.write("models/crate.vmodel", bigger(CRATE, 3))
    m.signal(signal.SIGCONT)
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)

    # hung for good: the cook waits a bounded time, says so and checks every source
    m.signal(signal.SIGSTOP)
    game.write("models/props/barrel.vmodel", bigger(BARREL, 8))
    out = cook(game)
    assert "monitor" in out and "did not answer" in out and "checking every source" in out, out
    assert "1 cooked, 3 up to date" in out
    nothing_stale(game)
    m.signal(signal.SIGCONT)
    assert "0 cooked, 4 up to date" in cook(game)  # (answers again: no mark yet, a full check)
    game.write("models/tree.vmodel", bigger(CRATE, 7))
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)


def _journal(game: Game) -> str:
    return (game.root / "cache" / "monitor" / "journal").read_text()


def _new_journal(game: Game, old: str) -> None:
    """Wait until the monitor started a journal under another id than the one that began *old*
    (bounded: a monitor that never does fails the test)."""
    end = time.monotonic() + 60
    while _journal(game).split("\n", 1)[0] == old.split("\n", 1)[0]:
        assert time.monotonic() < end, "the monitor did not watch the assets folder again"
        time.sleep(0.05)


def test_monitor_watches_the_assets_folder_again_when_it_comes_back(game, monitors):
    """The assets folder gone for a moment and back: ``git checkout`` of a branch without it
    (removed, then made anew: another folder at the same path), or ``mv assets x`` and a new
    folder in its place.  The monitor watched none of the new folder, so the cooks that trusted
    its journal left an edit in it stale.  It now drops the old folder's watches, watches the
    folder again once it is back and starts a new journal (a new id: no mark is trusted, the
    next cook checks every source)."""
    marked(game, monitors)
    assets, away = game.root / "assets", game.root / "away"
    for how in ("made anew", "moved away"):
        before = _journal(game)
        if how == "made anew":
            shutil.copytree(assets, away, symlinks=True)
            shutil.rmtree(assets)
            shutil.copytree(away, assets, symlinks=True)
            shutil.rmtree(away)
        else:
            os.rename(assets, away)
            shutil.copytree(away, assets, symlinks=True)
            (away / "models" / "tree.vmodel").write_text(bigger(CRATE, 8))  # no longer the game's
        _new_journal(game, before)
        assert "0 cooked, 4 up to date" in cook(game)  # (a new journal: every source checked)
        assert "0 cooked, 4 up to date" in cook(game)  # (the mark of the one before trusted)
        game.write("models/crate.vmodel", bigger(CRATE, 2 if how == "made anew" else 3))
        assert "1 cooked, 3 up to date" in cook(game)
        assert "a models/crate.vmodel\n" in _journal(game)  # seen by a watch of the new folder
        nothing_stale(game)
    shutil.rmtree(away)


def test_monitor_overflowed_queue_means_a_full_check(game, monitors):
    m = marked(game, monitors)
    m.signal(signal.SIGSTOP)
    game.write("models/crate.vmodel", bigger(CRATE, 2))
    junk = game.root / "assets" / "models"
    limit = int(open("/proc/sys/fs/inotify/max_queued_events").read())
    for i in range(limit + 100):  # more events than the kernel queues: it drops the rest
        (junk / f"{i}.txt").touch()
    m.signal(signal.SIGCONT)
    out = cook(game)
    assert "1 cooked, 3 up to date" in out, out
    journal = (game.root / "cache" / "monitor" / "journal").read_text()
    assert "\no\n" in journal
    nothing_stale(game)


def test_monitor_does_not_trust_links(game, monitors):
    outside = game.root / "more"
    outside.mkdir()
    (outside / "rock.vmodel").write_text(CRATE)
    os.symlink(outside, game.root / "assets" / "models" / "more")
    m = monitors()
    assert "symbolic link" in m.log()
    assert "cook: 5 cooked" in cook(game)
    got = status(game)
    assert got["running"] and not got["trusted"] and not got["marked"], got
    (outside / "rock.vmodel").write_text(bigger(CRATE, 6))  # no watch sees this: behind the link
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale(game)


def test_monitor_command_line(game, monitors):
    cp = game.veduta("watch", "--status")
    assert cp.returncode == 1 and "no monitor runs" in cp.stdout
    cp = game.veduta("watch", "--json")
    assert cp.returncode == 2 and json.loads(cp.stdout)["refused"] is True
    monitors()
    cp = game.veduta("watch", "--status")
    assert cp.returncode == 0 and "a monitor runs" in cp.stdout
    cp = game.veduta("watch", "--monitor")  # a second one for the same game
    assert cp.returncode == 2 and "already runs" in cp.stderr, cp.stderr


def test_a_failure_propagates_when_the_journal_is_trusted(game, monitors):
    from tests.gamerepo import BAD

    marked(game, monitors)
    (game.root / "assets/models/tree_far.vmodel").write_text(BAD)  # tree names it (its far level)
    cp = game.cook()
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "1 failed, 1 with a failed dependency" in cp.stdout, cp.stdout
    assert "assets/models/tree.vmodel:" in cp.stdout and "tree_far" in cp.stdout, cp.stdout


def test_monitor_a_line_like_the_one_before_a_cookie_is_journaled_after_it(game, monitors):
    """A source touched (the cook finds its bytes unchanged: nothing cooked, nothing written in
    the cooked folder), then edited: the edit's line is the same as the touch's, which the monitor
    used to drop as a repeat although a cook's cookie (and its mark) came in between."""
    marked(game, monitors)
    crate = game.root / "assets" / "models" / "crate.vmodel"
    os.utime(crate)
    assert "0 cooked, 4 up to date" in cook(game)
    game.write("models/crate.vmodel", bigger(CRATE, 2))
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)
    # the cooked side: its file written by that cook (the journal's last line for it), a no-op,
    # then the file deleted: the same line again, after a cookie
    assert "0 cooked, 4 up to date" in cook(game)
    game.cooked("models/crate.vda").unlink()
    assert "1 restored from cache" in cook(game)
    assert game.cooked("models/crate.vda").exists()
    nothing_stale(game)


def _write_in_place(path, text: str) -> None:
    """Written through this name, the file kept (its inode and so its other names): as vim saves a
    file with more than one name."""
    with open(path, "r+") as f:
        f.truncate(0)
        f.write(text)


def test_monitor_a_file_with_more_than_one_name(game, monitors):
    """A hard link: a write is reported under the name it was made through, or under none when
    that name is outside the watched folders; every name of the file must be checked.  Two sources
    with one inode, a source whose other name is outside the assets folder, and a link made while
    the monitor runs (its new name no source): each written through the other name."""
    assets = game.root / "assets"
    os.link(assets / "models" / "crate.vmodel", assets / "models" / "crate_copy.vmodel")
    outside = game.root / "barrel-art.json"
    os.link(assets / "models" / "props" / "barrel.vmodel", outside)
    marked(game, monitors)
    assert "0 cooked, 5 up to date" in cook(game)

    _write_in_place(assets / "models" / "crate.vmodel", bigger(CRATE, 2))
    assert "2 cooked, 3 up to date" in cook(game)  # crate and crate_copy
    nothing_stale(game)
    assert "0 cooked, 5 up to date" in cook(game)

    _write_in_place(outside, bigger(BARREL, 3))  # no watch sees this write
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale(game)

    # a link made now, inside the assets folder, under a name that is no source
    (assets / "art").mkdir()
    assert "0 cooked, 5 up to date" in cook(game)  # (a folder made: every source checked)
    cook(game)
    os.link(assets / "models" / "tree.vmodel", assets / "art" / "tree.json")
    assert "0 cooked, 5 up to date" in cook(game)
    _write_in_place(assets / "art" / "tree.json", bigger(CRATE, 4))
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale(game)
    assert "0 cooked, 5 up to date" in cook(game)


SAMPLE_TEXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "assets", "textures")


def test_monitor_watches_dot_folders_a_texture_reads(game, monitors):
    """The cook's scan skips dot folders for sources, but a texture layer may name an image in
    one (source art kept in ``textures/.src/``): its edits must be cooked while the monitor runs."""
    src = game.root / "assets" / "textures" / ".src"
    src.mkdir(parents=True)
    shutil.copyfile(os.path.join(SAMPLE_TEXTURES, "crate.png"), src / "crate.png")
    game.write(
        "textures/crate.vtexture",
        '{ "veduta": "texture/1", "layers": [ { "type": "image", "path": "textures/.src/crate.png" } ] }\n',
    )
    marked(game, monitors)
    assert "0 cooked, 5 up to date" in cook(game)
    with open(os.path.join(SAMPLE_TEXTURES, "hero.png"), "rb") as f:
        (src / "crate.png").write_bytes(f.read())  # (in place)
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale(game)
    (src / "new").mkdir()  # a folder made in a dot folder: a full check, then trusted again
    assert "0 cooked, 5 up to date" in cook(game)
    shutil.copyfile(os.path.join(SAMPLE_TEXTURES, "water.png"), src / "new" / "w.png")
    os.replace(src / "new" / "w.png", src / "crate.png")  # renamed over it
    assert "1 cooked, 4 up to date" in cook(game)
    nothing_stale(game)


def _all_cooked(game: Game, cooked: str = "assets/.cooked") -> None:
    for name in ("crate", "barrel", "tree", "tree_far"):
        assert game.cooked(f"models/{name}.vda", cooked).is_file(), name


def test_monitor_of_other_folders_is_not_trusted(game, monitors):
    """A cook whose cooked or assets folder is not the monitor's (``[tool.veduta]`` changed while
    it runs) checks every source: the journal says nothing of the new folders."""
    marked(game, monitors)
    (game.root / "pyproject.toml").write_text('[tool.veduta]\ncooked = "build/cooked"\n')
    out = cook(game)
    assert "4 restored from cache" in out, out
    _all_cooked(game, "build/cooked")
    nothing_stale(game)
    cook(game)
    assert "0 cooked, 4 up to date" in cook(game)

    shutil.copytree(game.root / "assets", game.root / "assets2")
    game.write("models/crate.vmodel", bigger(CRATE, 2), assets="assets2")
    (game.root / "pyproject.toml").write_text('[tool.veduta]\nassets = "assets2"\ncooked = "build/cooked"\n')
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)


def test_monitor_of_another_checkout_sharing_the_cache_folder(game, monitors, tmp_path):
    """Two checkouts of one game with one cache folder (``cache`` set to the same path in both),
    a monitor running for the first: a cook in the second checks every source of its own."""
    from tests.gamerepo import make_game

    shared = tmp_path / "shared-cache"
    (tmp_path / "second").mkdir()
    other = make_game(tmp_path / "second")
    for g in (game, other):
        (g.root / "pyproject.toml").write_text(f'[tool.veduta]\ncache = "{shared}"\n')
    other.write("models/crate.vmodel", bigger(CRATE, 5))
    marked(game, monitors)
    assert status(game)["marked"]
    out = cook(other)
    assert "1 cooked, 0 up to date, 3 restored from cache" in out, out
    _all_cooked(other)
    nothing_stale(other)
    assert "0 cooked, 4 up to date" in cook(game)  # (the first checkout's cooks go on as before)
    nothing_stale(game)


#: ``veduta watch --monitor`` with the kernel's inotify_add_watch refusing one folder (ENOSPC, as
#: when the user's fs.inotify.max_user_watches is used up): a test double of that call only
_REFUSING = """
import errno, os, sys
import veduta.cook.monitor as m
real = m._Inotify.add
def add(self, path):
    if path.endswith(os.sep + os.path.join("models", "props")):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
    return real(self, path)
m._Inotify.add = add
from veduta.faces.cli import run
sys.argv = ["veduta", "watch", "--monitor", "--no-worker"]
sys.exit(run())
"""


def test_monitor_that_cannot_watch_a_folder_is_not_trusted(game, monitors):
    """A watch the kernel refuses (anything but the folder gone meanwhile) means changes there go
    unseen: the monitor is untrusted (journal ``o``, state, ``--status``, its start message) and
    every cook checks every source."""
    m = monitors(_REFUSING)
    said = "the monitor cannot watch assets/models/props (No space left on device): cooks check every source"
    assert said in m.log(), m.log()
    assert "o\n" in _journal(game).split("\n", 1)[1]
    assert "4 cooked" in cook(game)
    cook(game)
    got = status(game)
    assert got["running"] and not got["trusted"] and not got["marked"], got
    assert got["why"] == "the monitor cannot watch assets/models/props (No space left on device)", got
    cp = game.veduta("watch", "--status")
    assert cp.returncode == 0 and said in cp.stdout, cp.stdout
    game.write("models/props/barrel.vmodel", bigger(BARREL, 3))  # in the folder no watch sees
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)

    # the same refusal for a folder made while it runs: untrusted from then on
    m.stop()
    shutil.move(game.root / "assets" / "models" / "props", game.root / "props")
    m = monitors(_REFUSING)
    assert "monitoring assets/ for cooks; Ctrl-C stops" in m.log(), m.log()
    cook(game)
    cook(game)
    assert status(game)["marked"]
    shutil.move(game.root / "props", game.root / "assets" / "models" / "props")
    assert "3 up to date, 1 restored from cache" in cook(game)  # (a folder came: every source checked)
    game.write("models/props/barrel.vmodel", bigger(BARREL, 6))
    assert "1 cooked, 3 up to date" in cook(game)
    nothing_stale(game)
    assert not status(game)["trusted"]
    assert said in m.log()  # (said on its standard error when it happens)


def test_two_monitors_started_at_once_one_runs(game):
    """One monitor per game was a check-then-start race: two started at the same moment both
    ran, and stopping the one the state file names left the other unseen.  A lock held for the
    monitor's life: the second says the first one's pid and exits 2."""
    cmd = [sys.executable, "-m", "veduta", "watch", "--monitor", "--no-worker"]
    for _ in range(3):
        procs = [
            subprocess.Popen(cmd, cwd=game.root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        try:
            end = time.monotonic() + 60
            while all(p.poll() is None for p in procs):
                assert time.monotonic() < end, "neither monitor refused to start"
                time.sleep(0.02)
            lost = next(p for p in procs if p.poll() is not None)
            won = next(p for p in procs if p is not lost)
            err = lost.stderr.read()
            assert lost.returncode == 2, err
            assert f"a monitor already runs for this game (pid {won.pid})" in err, err
            end = time.monotonic() + 60
            while status(game).get("pid") != won.pid:
                assert won.poll() is None and time.monotonic() < end, status(game)
                time.sleep(0.02)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()  # (no tidying up: its state file stays, naming a dead pid)
                p.wait(timeout=30)
                p.stderr.close()
        assert status(game)["running"] is False
