"""Killing a cook, progress on a terminal."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.cook.test_cook import summary
from veduta.formats.asset import read_asset_file

BIG = """{{
  "veduta": "model/1",
  "parts": [ {{ "shape": "sphere", "radius": {r}, "segments": 96, "rings": 48 }},
             {{ "shape": "lathe", "profile": [[0, 0], [1, 0], [0.5, 1], [0, 1.5]], "segments": 128 }} ]
}}
"""


def test_killing_a_cook_never_leaves_a_partial_file(game):
    for i in range(40):
        game.write(f"models/gen/big{i:02d}.vmodel", BIG.format(r=0.5 + i / 100))
    cooked = game.root / "assets/.cooked"
    for delay in (0.4, 0.8, 1.2, 1.6, 2.0):
        p = subprocess.Popen(
            [sys.executable, "-m", "doit", "-n", "2", "cook"],
            cwd=game.root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        for f in cooked.rglob("*.vda"):
            read_asset_file(str(f))  # whole, or the reader raises
    cp = game.cook(check=True)
    s = summary(cp)
    assert s["failed"] == 0 and s["cooked"] + s["uptodate"] + s["restored"] == 44
    assert len(list(cooked.rglob("*.vda"))) == 44
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 0


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _reporter(t, root):
    """The reporter class of a run of no game in particular (doit makes the reporter itself)."""
    from veduta.base.project import Project
    from veduta.cook.doit_adapter import bind_class

    return bind_class(t.CookReporter, run=t.CookRun(Project.at(str(root))))


class _Task:
    def __init__(self, name, values=None):
        self.name = name
        self.values = values or {}
        self.file_dep = set()
        self.actions = []


def test_progress_on_a_terminal_and_summary(monkeypatch, tmp_path):
    from veduta.cook import tasks as t

    err, out = _Tty(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    rep = _reporter(t, tmp_path)(out, {})
    rep._started -= 5  # a long cook
    names = [f"cook:models/m{i}.vmodel" for i in range(3)]
    rep.initialize({n: None for n in names}, ["cook"])
    for n in names[:2]:
        rep.execute_task(_Task(n))
        rep.add_success(_Task(n, {"outcome": "cooked", "messages": [], "entry": None}))
        rep._last_progress = 0
    rep.skip_uptodate(_Task(names[2]))
    rep.complete_run()
    assert "cook [" in err.getvalue() and "1/3 models/m1.vmodel" in err.getvalue() and "3/3" in err.getvalue()
    assert err.getvalue().endswith("\r\x1b[K")  # the bar is cleared before the summary
    assert "cook: 2 cooked, 1 up to date, 0 restored from cache, 0 failed" in out.getvalue()


def test_no_progress_when_not_a_terminal(monkeypatch, tmp_path):
    from veduta.cook import tasks as t

    err, out = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    rep = _reporter(t, tmp_path)(out, {})
    rep._started -= 5
    rep.initialize({"cook:a.vmodel": None}, ["cook"])
    rep.add_success(_Task("cook:a.vmodel", {"outcome": "cooked", "messages": ["w: warning: x"], "entry": None}))
    rep.complete_run()
    assert err.getvalue() == ""
    assert out.getvalue().startswith("w: warning: x\ncook: 1 cooked")


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.update(int(x) for x in f.read().split())
    except OSError:
        pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal: Linux only")
def test_workers_end_when_the_cook_is_killed(game):
    for i in range(12):
        game.write(f"models/gen/big{i:02d}.vmodel", BIG.format(r=0.5 + i / 100))
    p = subprocess.Popen(
        [sys.executable, "-m", "doit", "-n", "2", "cook"],
        cwd=game.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
        workers = _children(p.pid)
    assert len(workers) >= 2, "doit -n 2 started no workers"
    os.kill(p.pid, signal.SIGKILL)  # the main process only, as kill -9 PID does
    p.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"workers {left} outlived their parent"
