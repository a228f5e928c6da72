"""The cook run at its edges as a user meets them: -n 1, list, progress, exit codes, Ctrl-C, a dying pool."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.cook.test_cook import age_all
from tests.gamerepo import CRATE, Game, make_game
from tests.terminal import stderr_on_a_terminal
from veduta.cook.tasks import INTERRUPTED


def _many(tmp_path, n: int) -> Game:
    g = make_game(tmp_path)
    for i in range(n):
        g.write(f"models/gen/m{i:03d}.vmodel", CRATE.replace("[1, 1, 1]", f"[1, {1 + i / 100}, 1]"))
    return g


def _python(game: Game, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=game.root, capture_output=True, text=True, timeout=300)


def test_explicit_n_1_cooks_without_a_pool(tmp_path):
    g = _many(tmp_path, 20)
    probe = """if True:
        import sys
        from veduta.cook import ahead
        start = ahead.Ahead.start
        def told(self):
            print("POOL", self.workers)
            start(self)
        ahead.Ahead.start = told
        from veduta.faces.cli.main import main
        sys.exit(main(["cook", *sys.argv[1:]]))
    """
    cp = subprocess.run(
        [sys.executable, "-c", probe, "-n", "1"], cwd=g.root, capture_output=True, text=True, timeout=300
    )
    assert cp.returncode == 0 and "cook: 24 cooked" in cp.stdout, cp.stdout + cp.stderr
    assert "POOL" not in cp.stdout
    os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
    cp = subprocess.run(
        [sys.executable, "-c", probe, "-n", "2"], cwd=g.root, capture_output=True, text=True, timeout=300
    )
    assert "POOL 2" in cp.stdout and "cook: 24 cooked" in cp.stdout, cp.stdout + cp.stderr


def test_doit_list_leaves_the_cook_state_alone(game):
    game.cook(check=True)
    age_all(game)
    game.cook(check=True)
    state = game.root / "cache/state.marshal"
    before = state.read_bytes()
    os.unlink(game.cooked("models/barrel.vda"))
    game.doit("list", "--all", "--status", check=True)
    assert state.read_bytes() == before
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "why", "--json"], cwd=game.root, capture_output=True, text=True, timeout=300
    )
    reasons = {i["source"]: [r["code"] for r in i["reasons"]] for i in json.loads(cp.stdout)["stale"]}
    assert reasons == {"models/props/barrel.vmodel": ["COOKED_MISSING"]}


def test_progress_is_redrawn_at_most_ten_times_a_second(tmp_path):
    """On a terminal, a bar that is redrawn at most ten times a second (and always at the end).
    The bar shows only after PROGRESS_AFTER seconds of cooking, which a fast machine may never
    reach (the test failed a fresh clone's make test that way): here it is 0, so the bar is
    shown however fast the machine, and the bound is in the cook's own time."""
    g = _many(tmp_path, 400)
    code = (
        "import sys; from veduta.cook.tasks import CookReporter; CookReporter.PROGRESS_AFTER = 0; "
        "from doit.doit_cmd import DoitMain; sys.exit(DoitMain().run(['-n', '1', 'cook']))"
    )
    t0 = time.monotonic()
    _, out, err = stderr_on_a_terminal([sys.executable, "-c", code], g.root)
    elapsed = time.monotonic() - t0
    assert "cook: 404 cooked" in out, out + err.decode(errors="replace")
    redraws = len(re.findall(rb"\r\x1b\[Kcook \[", err))
    assert redraws >= 1, err[-500:]  # shown (the last redraw, 404/404, is never skipped)
    assert b"404/404" in err
    assert redraws <= elapsed * 10 + 3, (redraws, elapsed)


def test_runs_in_one_process_leave_no_frozen_objects_or_pools_behind(tmp_path):
    g = _many(tmp_path, 20)
    code = """if True:
        import gc, shutil, sys, weakref
        from veduta.cook import ahead
        pools = []
        init = ahead.Ahead.__init__
        def made(self, *a, **k):
            pools.append(weakref.ref(self))
            init(self, *a, **k)
        ahead.Ahead.__init__ = made
        from veduta.faces.cli.main import main
        seen = []
        for i in range(3):
            shutil.rmtree("assets/.cooked", ignore_errors=True)
            assert main(["cook", "-n", "2"]) == 0
            gc.collect()
            seen.append((gc.get_freeze_count(), len(pools), sum(p() is not None for p in pools)))
        print("SEEN", seen, file=sys.stderr)
    """
    cp = _python(g, code)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    seen = eval(cp.stderr.split("SEEN ", 1)[1].splitlines()[0])
    # every run froze its task objects and had a pool; none of either outlives its run
    assert seen == [(0, 1, 0), (0, 2, 0), (0, 3, 0)], seen


def test_list_status_shows_the_cooks_decision_without_doits_rows(game):
    """#2: fresh sources whose doit rows are gone (database deleted or damaged, a run killed
    before doit saved) are U in `doit list --status`, as the cook and `veduta why` decide."""
    game.cook(check=True)
    age_all(game)
    db = game.root / "cache/doit.sqlite3"
    sources = ["models/crate.vmodel", "models/props/barrel.vmodel", "models/tree.vmodel", "models/tree_far.vmodel"]
    for damage in ("delete", "garble"):
        if damage == "delete":
            db.unlink()
        else:
            db.write_bytes(b"not a database" * 100)
        cp = game.cook(check=True)
        assert "cook: 0 cooked, 4 up to date" in cp.stdout
        out = game.doit("list", "--all", "--status", check=True).stdout
        assert [f"U cook:{s}" in out for s in sources] == [True] * 4, out
    db.unlink()
    cp = game.doit("cook:models/crate.vmodel", check=True)
    assert "cook: 0 cooked, 1 up to date" in cp.stdout
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[1, 3, 1]"))
    out = game.doit("list", "--all", "--status", check=True).stdout
    assert "R cook:models/crate.vmodel" in out and "U cook:models/tree.vmodel" in out


def test_a_failed_source_exits_1_and_a_configuration_mistake_2(game):
    """#5: docs/authoring-tools.md: 1 = a source failed, 2 = configuration (or a doit error)."""
    game.write("models/bad.vmodel", "[1, 2")
    assert game.cook().returncode == 1
    assert game.cook("-n", "2", "cook").returncode == 1
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "cook"], cwd=game.root, capture_output=True, text=True, timeout=300
    )
    assert cp.returncode == 1 and "1 failed" in cp.stdout, cp.stdout + cp.stderr
    (game.root / "assets/models/bad.vmodel").unlink()
    assert game.cook().returncode == 0
    (game.root / "pyproject.toml").write_text('[tool.veduta]\nnope = "x"\n')
    assert game.cook().returncode == 2


def test_a_dead_pool_worker_is_one_warning_and_its_sources_count_as_cooked(tmp_path):
    """#8: a worker killed mid-run: one warning, the rest cooked in the main process, and the
    summary counts what the dead worker wrote as cooked (not up to date)."""
    g = _many(tmp_path, 40)
    code = """if True:
        import os, signal, sys
        import veduta.cook.cook as cook
        main_pid = os.getpid()
        batch = cook.cook_batch
        def dies_after_one_batch(jobs):
            done = batch(jobs)
            if os.getpid() != main_pid and any(j[1] == "models/gen/m005.vmodel" for j in jobs):
                os.kill(os.getpid(), signal.SIGKILL)  # after writing its batch's files
            return done
        cook.cook_batch = dies_after_one_batch
        from doit.doit_cmd import DoitMain
        from doit.cmd_base import DodoTaskLoader
        sys.exit(DoitMain(DodoTaskLoader()).run(["-n", "2", "cook"]))
    """
    cp = _python(g, code)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stderr.count("veduta: warning: a cook worker process ended") == 1, cp.stderr
    assert "cook: 44 cooked, 0 up to date" in cp.stdout, cp.stdout + cp.stderr
    assert "Traceback" not in cp.stderr
    assert "cook: 0 cooked, 44 up to date" in g.cook(check=True).stdout


def test_a_pool_that_breaks_while_the_task_pass_feeds_it_is_one_warning(tmp_path):
    """A first cook of 300 sources starts its pool during the task pass (ahead.Feed), which
    hands it more batches as it goes: a worker killed before the pass has handed on its last
    batch is one warning, the rest cooked in the main process (not BrokenProcessPool out of the
    task pass, a traceback and no cook)."""
    g = _many(tmp_path, 300)
    code = """if True:
        import concurrent.futures, os, signal, sys
        import veduta.cook.cook as cook
        from veduta.cook import ahead
        main_pid = os.getpid()
        batch = cook.cook_batch
        def dies(jobs):
            if os.getpid() != main_pid:
                os.kill(os.getpid(), signal.SIGKILL)
            return batch(jobs)
        cook.cook_batch = dies
        add = ahead.Ahead.add
        def add_once_broken(self, jobs):  # the pass goes on after the worker died (a big game's)
            concurrent.futures.wait(self.futures[:1])
            add(self, jobs)
        ahead.Ahead.add = add_once_broken
        from doit.doit_cmd import DoitMain
        from doit.cmd_base import DodoTaskLoader
        sys.exit(DoitMain(DodoTaskLoader()).run(["-n", "2", "cook"]))
    """
    cp = _python(g, code)
    assert "Traceback" not in cp.stderr, cp.stderr
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stderr.count("veduta: warning: a cook worker process ended") == 1, cp.stderr
    assert "cook: 304 cooked, 0 up to date" in cp.stdout, cp.stdout + cp.stderr
    cooked = {p.name: p.read_bytes() for p in (g.root / "assets/.cooked/models").iterdir()}
    os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
    assert "cook: 304 cooked, 0 up to date" in g.cook("-n", "1", check=True).stdout
    assert {p.name: p.read_bytes() for p in (g.root / "assets/.cooked/models").iterdir()} == cooked


def _ctrl_c_during(tmp_path, *args: str, code: str | None = None) -> tuple[int, str, str]:
    """Run ``python -m *args*`` (a cook) in a game of 30 big spheres and send it Ctrl-C (SIGINT
    to the whole process group, as a terminal sends it) once it has written its first cooked
    file, so in the middle of its cooking however fast or loaded the machine (a fixed delay
    after the cook lock appeared landed, on a loaded machine, while the pool's workers were
    being forked: see test_ctrl_c_while_the_pool_starts_stops_the_cook): (status, stdout, stderr)."""
    g = make_game(tmp_path)
    for i in range(30):
        g.write(
            f"models/gen/s{i:02d}.vmodel",
            '{"veduta": "model/1", "parts": [{"shape": "sphere", '
            f'"radius": {1 + i / 100}, "segments": 128, "rings": 64}}]}}',
        )
    p = subprocess.Popen(
        [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", *args],
        cwd=g.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    cooked = g.root / "assets/.cooked/models"  # (by name: s00.vda ...)
    deadline = time.monotonic() + 300  # a bound for a broken cook, never reached by a working one
    while not (cooked.is_dir() and any(cooked.glob("s*.vda"))):
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.01)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=300)
    return p.returncode, out, err


def test_ctrl_c_of_doit_cook_is_one_line_not_a_traceback(tmp_path):
    """#9: Ctrl-C during `doit cook`."""

    rc, out, err = _ctrl_c_during(tmp_path, "doit", "cook")
    assert rc in (-signal.SIGINT, 130), (rc, out, err)
    assert "Traceback" not in err, err
    assert "cook: interrupted" in err


def test_ctrl_c_of_veduta_cook_says_the_cook_was_interrupted(tmp_path):
    """The summary veduta cook prints when stopped reads like a finished cook: the line that
    doit cook adds follows it, and the exit status is 130."""
    rc, out, err = _ctrl_c_during(tmp_path, "veduta", "cook", "-n", "1")
    assert rc == 130, (rc, out, err)
    assert "Traceback" not in err, err
    assert err.endswith("\ncook: interrupted (cooked files are whole; the next cook goes on)\n"), (out, err)


#: a cook run by the probes below: ``doit -n 2 cook`` (doit's threads) or ``veduta cook -n 2``
_PROBE_RUNS = {
    "doit": """
        from doit.doit_cmd import DoitMain
        from doit.cmd_base import DodoTaskLoader
        sys.exit(DoitMain(DodoTaskLoader()).run(["-n", "2", "cook"]))
    """,
    "veduta": """
        from veduta.faces.cli.main import main
        sys.exit(main(["cook", "-n", "2"]))
    """,
    "check": """
        from veduta.faces.cli.main import main
        sys.exit(main(["check", "-n", "2"]))
    """,
}


def _ctrl_c_at_fork(tmp_path, hook: str, face: str) -> tuple[Game, int, str, str]:
    """Run a cook of 40 models with a pool of 2 workers whose probe sends Ctrl-C (SIGINT to the
    whole process group, as a terminal does) once, from the at-fork hook *hook* of the pool's
    first fork: ``before`` (in the cook, as it forks) or ``after_in_child`` (in the worker, before
    its own start).  Then checks what any Ctrl-C must leave: no process of the group running,
    no temporary file, and a next cook that goes on and cooks the same bytes as a cook from
    scratch.  (game, status, stdout, stderr)."""
    g = _many(tmp_path, 40)
    code = f"""if True:
        import os, signal, sys
        def ctrl_c():
            try:  # once: the first fork only (a file, since a child has its own memory)
                os.close(os.open("ctrl-c-sent", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os.killpg(0, signal.SIGINT)
        os.register_at_fork({hook}=ctrl_c)
        {_PROBE_RUNS[face].strip()}
    """
    p, out, err = _in_a_session(g, code)
    assert (g.root / "ctrl-c-sent").exists(), (p.returncode, out, err)  # (the pool was forked)
    _left_whole(g, p.pid)
    return g, p.returncode, out, err


def _in_a_session(g: Game, code: str) -> tuple[subprocess.Popen, str, str]:
    """Run ``python -c code`` in the game's root as the leader of a new session (its own process
    group, which a Ctrl-C of the probe reaches whole): (process, stdout, stderr)."""
    p = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=g.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, err = p.communicate(timeout=300)
    return p, out, err


def _left_whole(g: Game, group: int) -> None:
    """What a cook stopped by Ctrl-C leaves: no process of its group *group* (its pool's workers
    end with it; bounded wait, their end is asynchronous), no temporary file of a write cut
    short, and a next cook that goes on (exit 0, nothing to remove) to the bytes a cook from
    scratch makes."""
    deadline = time.monotonic() + 30
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            break
        if time.monotonic() > deadline:
            ps = subprocess.run(["ps", "-s", str(group), "-o", "pid,args"], capture_output=True, text=True)
            pytest.fail(f"left running:\n{ps.stdout}")
        time.sleep(0.05)
    assert [str(p) for folder in ("assets", "cache") for p in (g.root / folder).rglob(".*.tmp")] == []
    cp = g.cook("-n", "2")
    assert cp.returncode == 0 and "removed" not in cp.stderr + cp.stdout, cp.stdout + cp.stderr
    resumed = g.snapshot()
    os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
    g.cook("-n", "1", check=True)
    assert {k: v[2] for k, v in g.snapshot().items()} == {k: v[2] for k, v in resumed.items()}


_SECOND_CTRL_C = """if True:
    import os, signal, sys
    import doit.dependency
    from veduta.cook import tasks
    from veduta.faces.cli.main import main

    def again():  # a second Ctrl-C (a second press; timeout passing the terminal's on)
        os.kill(os.getpid(), signal.SIGINT)

    dump = doit.dependency.SqliteDB.dump
    def dump_again(self):
        again()
        return dump(self)
    doit.dependency.SqliteDB.dump = dump_again
    note = tasks.CookReporter._note
    def note_again(self, text):
        if text.startswith("cook: ") and "cooked" in text:
            again()
        return note(self, text)
    tasks.CookReporter._note = note_again
    sys.argv = ["veduta", *sys.argv[1:]]
    sys.exit(main())
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_second_ctrl_c_while_the_cook_stops_loses_neither_its_record_nor_its_summary(tmp_path, jobs):
    """A Ctrl-C more while a cook stopped by Ctrl-C saves doit's database and prints its summary
    (sent here from inside both) is dropped: the summary is printed, as text and with --json as
    the object with "interrupted", and the database holds what was cooked: the next cook finds
    those sources up to date. Before, the second KeyboardInterrupt came out of the commit: no
    summary, no JSON, nothing recorded."""
    rc, out, err = _ctrl_c_during(tmp_path, "cook", "--json", "-n", jobs, code=_SECOND_CTRL_C)
    assert rc == 130, (rc, out, err)
    assert "Traceback" not in err, err
    assert err.endswith("\ncook: interrupted (cooked files are whole; the next cook goes on)\n"), err
    result = json.loads(out)
    assert result["interrupted"] is True and result["ok"] is False, result
    recorded = result["summary"]["cooked"]
    assert 0 <= recorded <= 34, result  # (with the pool, doit may have recorded none yet)
    again = Game(tmp_path / "game").cook("-n", "1", check=True).stdout
    found = re.search(r"cook: (\d+) cooked, (\d+) up to date", again)
    assert found and int(found[2]) >= recorded and int(found[1]) + int(found[2]) == 34, (recorded, again)


@pytest.mark.parametrize("face", ["doit", "veduta"])
def test_ctrl_c_while_the_pool_starts_stops_the_cook(tmp_path, face):
    """Ctrl-C that lands while the cook forks its pool's workers stops the cook like any other
    (one line, exit status 130 in a shell). Sent at the fork itself (an at-fork hook of the
    probe), the moment a fixed delay after the cook lock hit on a loaded machine: the
    interrupt was swallowed ("Exception ignored in ... _releaseLock", the cook cooked on and
    exited 0) or a forked worker printed its KeyboardInterrupt traceback. The cook now holds
    SIGINT back while it forks (veduta/cook/ahead.py, interrupts_held)."""
    g, rc, out, err = _ctrl_c_at_fork(tmp_path, "before", face)
    assert rc == (-signal.SIGINT if face == "doit" else 130), (rc, out, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.endswith(f"\n{INTERRUPTED}\n") and err.count("cook: interrupted") == 1, err


@pytest.mark.parametrize("face", ["doit", "veduta"])
def test_ctrl_c_while_a_worker_starts_stops_the_cook(tmp_path, face):
    """Ctrl-C that reaches a pool worker before its own start (sent from the worker's at-fork
    hook) stops the cook, and the worker says nothing: before, the worker ran Python's handler
    in the hook ("Exception ignored in: <function ctrl_c>"), or later in its start (a
    KeyboardInterrupt traceback, or a second "cook: interrupted" line from a child that
    unwound the cook's frames). A worker now starts with SIGINT held back and ignores it (the
    cook stops its workers)."""
    g, rc, out, err = _ctrl_c_at_fork(tmp_path, "after_in_child", face)
    assert rc == (-signal.SIGINT if face == "doit" else 130), (rc, out, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.endswith(f"\n{INTERRUPTED}\n") and err.count("cook: interrupted") == 1, err


@pytest.mark.parametrize("hook", ["before", "after_in_child"])
def test_ctrl_c_while_the_check_forks_its_pool_stops_it_quietly(tmp_path, hook):
    """veduta check -n 2 forks a pool of its own: Ctrl-C sent at its first fork (in the check, or
    in the worker before its start) stops the check with 130 and one line (``veduta: interrupted``,
    as every veduta command stopped by Ctrl-C says), no process of the group left. Before, the
    fork was not held (a KeyboardInterrupt traceback from the worker, or "Exception ignored" from
    the hook, and the check went on); it now holds Ctrl-C as the cook does
    (veduta/cook/ahead.py, interrupts_held) and stops its workers."""
    g, rc, out, err = _ctrl_c_at_fork(tmp_path, hook, "check")
    assert rc == 130, (rc, out, err)
    assert err == "veduta: interrupted\n" and out == "", (out, err)


def test_a_slow_batch_does_not_hold_up_other_threads_takes(tmp_path):
    """#10: doit -n N threads take results of other batches while one waits for a slow batch."""
    import threading

    from veduta.base.project import AssetIndex, Project
    from veduta.cook import ahead
    from veduta.cook.cook import set_index

    g = make_game(tmp_path)
    g.write(
        "models/slow.vmodel",
        '{"veduta": "model/1", "parts": ['
        + ", ".join(f'{{"shape": "sphere", "radius": {1 + i / 10}, "segments": 256, "rings": 128}}' for i in range(6))
        + "]}",
    )
    project = Project.find(str(g.root))
    sources = project.scan()[0]
    set_index(project.assets, AssetIndex.from_paths(s.rel for s in sources))
    jobs = [
        (
            s.kind.name,
            s.rel,
            project.assets,
            os.path.join(project.cooked, s.kind.folder, s.name + ".vda"),
            project.cache,
            None,
            "",
        )
        for s in sources
        if s.name in ("slow", "crate")
    ]
    jobs.sort(key=lambda j: j[1] != "models/slow.vmodel")
    pool = ahead.Ahead(jobs, 2)
    assert len(pool.batches) == 2
    pool.start()
    done = {}

    def take(rel):
        got = pool.take(rel)
        done[rel] = (time.monotonic(), got["outcome"] if got else None)

    try:
        slow = threading.Thread(target=take, args=("models/slow.vmodel",))
        slow.start()
        time.sleep(0.05)
        take("models/crate.vmodel")
        slow.join()
    finally:
        pool.close()
    assert done["models/crate.vmodel"][1] == done["models/slow.vmodel"][1] == "cooked"
    assert done["models/crate.vmodel"][0] < done["models/slow.vmodel"][0]


def test_fork_is_avoided_while_a_thread_threading_does_not_know_runs(tmp_path):
    """#10: a native thread (watchfiles' watcher under veduta watch) is not in threading's count."""
    import _thread
    import threading

    from veduta.cook import ahead

    assert ahead.one_thread() == (len(os.listdir("/proc/self/task")) == 1)
    stop = threading.Event()
    _thread.start_new_thread(stop.wait, ())
    try:
        assert not ahead.one_thread()
    finally:
        stop.set()


def test_ctrl_c_while_watch_starts_its_pool_stops_the_watch(tmp_path):
    """veduta watch runs a thread (its watcher), so its pool's workers come from a fork server
    and the kernel may hand SIGINT to the watcher's thread: a Ctrl-C sent as the pool starts a
    worker (the probe's hook) stops the watch (exit 0, one line each) with no traceback of a
    worker left half started, and no process of the group but zombies (a fork server outlives
    the watch by a moment; this machine's init may not reap it)."""
    g = _many(tmp_path, 40)
    code = """if True:
        import os, signal, sys
        from concurrent.futures import process
        spawn = process.ProcessPoolExecutor._spawn_process
        def ctrl_c_then_spawn(self):
            if not os.path.exists("ctrl-c-sent"):
                open("ctrl-c-sent", "w").close()
                os.killpg(0, signal.SIGINT)
            spawn(self)
        process.ProcessPoolExecutor._spawn_process = ctrl_c_then_spawn
        from veduta.faces.cli.main import main
        sys.exit(main(["watch"]))
    """
    p, out, err = _in_a_session(g, code)
    assert (g.root / "ctrl-c-sent").exists(), (p.returncode, out, err)
    assert p.returncode == 0, (p.returncode, out, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.endswith(f"\n{INTERRUPTED}\nwatch: stopped\n"), err
    deadline = time.monotonic() + 30
    while True:
        ps = subprocess.run(["ps", "-s", str(p.pid), "-o", "stat=,args="], capture_output=True, text=True).stdout
        running = [line for line in ps.splitlines() if not line.lstrip().startswith("Z")]
        if not running:
            break
        assert time.monotonic() < deadline, running
        time.sleep(0.05)
    assert [str(p) for folder in ("assets", "cache") for p in (g.root / folder).rglob(".*.tmp")] == []
    assert g.cook("-n", "2").returncode == 0


def test_a_cook_leaves_its_collection_to_the_next_cook_of_the_process(tmp_path):
    """A run's state is reference cycles (its bound classes, its group task): a process that cooks
    again (watch, MCP) must collect them, but not a one-shot ``veduta cook`` about to exit (a full
    collection, ~7 ms at 20,000 sources, for nothing).  So the next run of the process collects
    the last one's before it starts: one collection per cook but the first, and the runs the
    process holds (garbage included) stay bounded: the last one, and the one before it, which it
    kept until the last replaced it."""
    g = _many(tmp_path, 5)
    probe = """if True:
        import gc, json
        from veduta import api
        from veduta.base.project import Project
        collect, calls = gc.collect, []
        gc.collect = lambda *a: calls.append(a) or collect(*a)
        def runs():  # CookRun objects the collector tracks, garbage included (none collected here)
            return sum(type(o).__name__ == "CookRun" for o in gc.get_objects())
        seen = []
        for _ in range(4):
            assert api.cook(Project.at("."))["ok"]
            seen.append([len(calls), runs()])
        print(json.dumps(seen))
    """
    out = _python(g, probe)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [[0, 1], [1, 2], [2, 2], [3, 2]]
