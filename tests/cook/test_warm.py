"""The warm compile worker of ``veduta watch --monitor`` (veduta/cook/warm.py), with real processes:
a real monitor and its worker, real ``doit cook`` runs and real edits; the worker killed and hung
mid-request, its code changed under it, its socket left behind or in a folder others may enter.
The oracle is a second copy of the game, edited alike and cooked without any monitor: the cooked
files, doit's database (but for the file signatures, which differ between copies) and what the
cook said must be the same.  No speed is asserted."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.gamerepo import Game, sample_game

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the monitor needs inotify")

EDITS = ("models/crate.vmodel", "textures/crate.vtexture", "worlds/valley.vworld")


class Monitor:
    """``veduta watch --monitor`` in the game's root, waited for until its worker listens."""

    def __init__(self, game: Game, *args: str, env: dict | None = None, worker: bool = True):
        self.game = game
        self.err = open(game.root.parent / f"monitor-{time.monotonic_ns()}.log", "w+")  # noqa: SIM115
        e = dict(os.environ)
        e.pop("VEDUTA_FORMAT", None)
        e.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "veduta", "watch", "--monitor", *args],
            cwd=game.root,
            env=e,
            stdout=subprocess.DEVNULL,
            stderr=self.err,
        )
        wait_for(lambda: "monitoring" in self.log(), self.log, self.proc)
        if worker:
            wait_for(lambda: worker_status(game)["running"], self.log, self.proc)

    def log(self) -> str:
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.err.close()


def wait_for(cond, said=lambda: "", proc=None, bound: float = 120) -> None:
    """Wait (generously bounded) until *cond()*."""
    end = time.monotonic() + bound
    while not cond():
        assert proc is None or proc.poll() is None, said()
        assert time.monotonic() < end, said()
        time.sleep(0.02)


def status(game: Game) -> dict:
    cp = game.veduta("watch", "--status", "--json")
    return json.loads(cp.stdout)


def worker_status(game: Game) -> dict:
    return status(game)["worker"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # (a zombie: dead, not yet waited for by the monitor)
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.fixture
def pair(tmp_path):
    """Two copies of the sample game, both cooked: (the one the worker will serve, the oracle)."""
    games = []
    for name in ("warm", "cold"):
        g = sample_game(tmp_path / name)
        cp = g.cook()
        assert cp.returncode == 0, cp.stdout + cp.stderr
        games.append(g)
    return games


@pytest.fixture
def monitors():
    started: list[Monitor] = []

    def start(game: Game, *args: str, **kw) -> Monitor:
        m = Monitor(game, *args, **kw)
        started.append(m)
        return m

    yield start
    for m in started:
        m.stop()


def edit(game: Game, rels=EDITS, tail: str = "\n ") -> None:
    for rel in rels:
        with open(game.root / "assets" / rel, "a") as f:
            f.write(tail)


def said(cp: subprocess.CompletedProcess) -> str:
    return re.sub(r"\(\d+\.\d+ s\)", "(T s)", cp.stdout)


def cooked_files(game: Game) -> dict[str, bytes]:
    base = game.root / "assets" / ".cooked"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def database(game: Game) -> dict:
    """doit's rows, without the file signatures (keyed by path; another copy's inodes), the
    ``deps:`` as a set (doit saves a set as a list: its order is the hash seed's)."""
    con = sqlite3.connect(game.root / "cache" / "doit.sqlite3")
    try:
        rows = dict(con.execute("select task_id, task_data from doit"))
    finally:
        con.close()
    out = {}
    for task, data in rows.items():
        d = json.loads(data)
        if isinstance(d.get("deps:"), list):
            d["deps:"] = sorted(d["deps:"])
        out[task] = ({k: v for k, v in d.items() if k.endswith(":")}, sorted(d))
    return out


def same(warm: Game, cold: Game, warm_cp, cold_cp) -> None:
    assert "Traceback" not in warm_cp.stderr, warm_cp.stderr
    assert warm_cp.returncode == cold_cp.returncode, warm_cp.stdout + warm_cp.stderr
    assert said(warm_cp) == said(cold_cp)
    assert cooked_files(warm) == cooked_files(cold)
    dw, dc = database(warm), database(cold)
    assert dw == dc


def settle(game: Game) -> None:
    """Two cooks: the second leaves the mark the next one trusts."""
    for _ in range(2):
        cp = game.cook()
        assert cp.returncode == 0, cp.stdout + cp.stderr


def test_the_worker_cooks_what_a_cold_cook_does(pair, monitors):
    warm, cold = pair
    monitors(warm)
    settle(warm)
    served = worker_status(warm)["served"]
    # a model, a texture and a world: fewer than a pool's worth, sent to the worker
    edit(warm)
    edit(cold)
    w, c = warm.cook(), cold.cook()
    assert re.search(r"cook: [1-7] cooked, .* 0 failed", w.stdout), w.stdout + w.stderr  # (and what uses them)
    same(warm, cold, w, c)
    assert worker_status(warm)["served"] == served + 1
    assert w.stderr == c.stderr
    # a failure: the same message, from the worker
    for g in (warm, cold):
        (g.root / "assets/models/crate.vmodel").write_text('{"veduta": "model/1", "parts": [{"shape": "box"}]}')
    w, c = warm.cook(), cold.cook()
    assert w.returncode != 0 and "crate.vmodel" in w.stdout + w.stderr
    same(warm, cold, w, c)
    assert w.stderr == c.stderr
    assert worker_status(warm)["served"] == served + 2
    # and the no-op after it: nothing left stale
    edit(warm, ["models/crate.vmodel"], "")
    cp = warm.veduta("why", "--json")
    assert [s["source"] for s in json.loads(cp.stdout)["stale"]] == ["models/crate.vmodel"], cp.stdout  # (failing)


def _held_cook(pair, tmp_path, monitors, timeout: str):
    """A monitor whose worker holds a request (VEDUTA_WARM_TEST_HOLD) of a ``doit cook`` of both
    copies' edits, started and waited for until the worker holds it: (monitor, worker's pid,
    the cook's process, the hold file)."""
    warm, cold = pair
    hold = tmp_path / "hold"
    m = monitors(warm, env={"VEDUTA_WARM_TEST_HOLD": str(hold)})
    settle(warm)
    pid = worker_status(warm)["pid"]
    edit(warm)
    edit(cold)
    cook = subprocess.Popen(
        [sys.executable, "-m", "doit", "cook"],
        cwd=warm.root,
        env={**os.environ, "VEDUTA_WARM_TIMEOUT": timeout},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for(hold.exists, m.log, cook)  # the worker holds the request
    return m, pid, cook, hold


@pytest.mark.parametrize("how", ["killed", "hung"])
def test_a_worker_killed_or_hung_mid_request(pair, tmp_path, monitors, how):
    """The worker holds the request (VEDUTA_WARM_TEST_HOLD): killed then, or never letting go
    (the cook's bound, then it is killed), the cook cooks the sources itself; the monitor starts
    another worker."""
    warm, cold = pair
    m, pid, cook, hold = _held_cook(pair, tmp_path, monitors, "3" if how == "hung" else "600")
    if how == "killed":
        os.kill(pid, signal.SIGKILL)
    out, err = cook.communicate(timeout=300)
    w = subprocess.CompletedProcess(cook.args, cook.returncode, out.decode(), err.decode())
    same(warm, cold, w, cold.cook())
    why = "it ended (the other side closed the connection)" if how == "killed" else "no answer in 3 s; stopped"
    assert f"veduta: warning: the warm compile worker (pid {pid}): {why}; cooking in this process" in w.stderr
    assert not _alive(pid)
    hold.unlink()
    wait_for(lambda: worker_status(warm)["running"] and worker_status(warm)["pid"] != pid, m.log, m.proc)


def test_the_monitor_stopped_by_sigterm_mid_cook_leaves_no_process(pair, tmp_path, monitors):
    """``veduta watch --monitor`` stopped by SIGTERM (a service manager's) while its worker compiles
    for a cook: the monitor exits 0 as documented (docs/cooking.md), its worker ends with it (no
    orphan), and the cook cooks the sources itself, as a cook without the worker would."""
    warm, cold = pair
    m, pid, cook, hold = _held_cook(pair, tmp_path, monitors, "600")  # mid-cook
    m.proc.send_signal(signal.SIGTERM)
    assert m.proc.wait(timeout=120) == 0, m.log()
    assert "watch: monitor stopped" in m.log()
    out, err = cook.communicate(timeout=300)
    w = subprocess.CompletedProcess(cook.args, cook.returncode, out.decode(), err.decode())
    same(warm, cold, w, cold.cook())
    assert f"veduta: warning: the warm compile worker (pid {pid}): it ended" in w.stderr
    end = time.monotonic() + 60  # (ended by the monitor; a bound for an orphan only)
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _alive(pid)
    assert not worker_status(warm)["running"] and not status(warm)["running"]


def test_a_worker_that_does_not_answer_the_handshake_is_not_used(pair, monitors):
    warm, cold = pair
    m = monitors(warm)
    settle(warm)
    got = worker_status(warm)
    os.kill(got["pid"], signal.SIGSTOP)
    try:
        edit(warm)
        edit(cold)
        w, c = warm.cook(), cold.cook()
    finally:
        os.kill(got["pid"], signal.SIGCONT)
    same(warm, cold, w, c)
    assert "the warm compile worker (cache/monitor/worker) did not answer in 2 s; cooking in this process" in w.stderr
    assert worker_status(warm)["served"] == got["served"]
    # it serves the next cook as before
    edit(warm, ["models/barrel.vmodel"])
    edit(cold, ["models/barrel.vmodel"])
    w, c = warm.cook(), cold.cook()
    same(warm, cold, w, c)
    assert worker_status(warm) == {**got, "served": got["served"] + 1}
    assert m.proc.poll() is None


@pytest.mark.parametrize("how", ["replaced", "edited in place, its mtime put back"])
def test_changed_code_is_not_used_and_the_worker_is_replaced(pair, tmp_path, monitors, how):
    """A copy of the veduta package first on the path: one of its compiler's files replaced (same
    text, a new file), or edited in place (one letter of a comment, the same size) with its mtime
    put back (as ``touch -r`` or ``rsync -t`` leave it: only its ctime tells), while the worker
    runs.  The cook does not use the worker; the worker ends, the monitor starts a fresh one, and
    that one serves the next cook."""
    warm, cold = pair
    import veduta

    pkg = tmp_path / "pkg"
    shutil.copytree(Path(veduta.__file__).parent, pkg / "veduta", ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": os.pathsep.join([str(pkg), *filter(None, [os.environ.get("PYTHONPATH")])])}
    m = monitors(warm, env=env)
    settle(warm)
    got = worker_status(warm)
    pid, served = got["pid"], got["served"]
    state = warm.root / "cache" / "monitor" / "worker" / "state.json"
    m.proc.send_signal(signal.SIGSTOP)  # (it starts no other worker meanwhile)
    try:
        module = pkg / "veduta" / "compile" / "model" / "build.py"
        text = module.read_bytes()
        if how == "replaced":
            module.unlink()
            module.write_bytes(text)  # (a new inode: as a reinstall leaves it)
        else:
            before = module.stat()
            at = re.search(rb"\n *# ([A-Za-z])", text).start(1)  # a comment's first letter, its case swapped
            with open(module, "r+b") as f:
                f.seek(at)
                f.write(text[at : at + 1].swapcase())
            os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
            after = module.stat()
            assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
                before.st_size,
                before.st_mtime_ns,
                before.st_ino,
            )
            assert module.read_bytes() != text
        edit(warm)
        edit(cold)
        w, c = warm.cook(env=env), cold.cook()
        same(warm, cold, w, c)
        assert "warm compile worker" not in w.stderr  # (the stopped monitor's journal is not trusted)
        assert json.loads(state.read_text())["served"] == served  # not used
        wait_for(lambda: not _alive(pid))  # it saw its code change and ended
    finally:
        m.proc.send_signal(signal.SIGCONT)
    wait_for(lambda: worker_status(warm)["running"], m.log, m.proc)
    assert worker_status(warm)["pid"] != pid
    edit(warm, ["models/barrel.vmodel"])
    edit(cold, ["models/barrel.vmodel"])
    w, c = warm.cook(env=env), cold.cook()
    same(warm, cold, w, c)
    assert worker_status(warm)["served"] == 1  # the fresh worker runs the new code: used


def test_same_code():
    """The cook's side of the handshake: every recorded file as this process finds it, and the
    same toolchain, Python and package."""
    from veduta.cook.warm import Code, same_code

    hello = Code().hello()
    assert same_code(hello)
    path, (size, mtime, ino, ctime) = hello["files"][0]
    assert not same_code({**hello, "files": [(path, (size, mtime + 1, ino, ctime)), *hello["files"][1:]]})
    assert not same_code({**hello, "files": [(path, (size, mtime, ino, ctime - 1)), *hello["files"][1:]]})
    assert not same_code({**hello, "files": [(path, None), *hello["files"][1:]]})
    assert not same_code({**hello, "files": []})
    assert not same_code({**hello, "toolchain": "veduta-asset/0.0.0"})
    assert not same_code({**hello, "package": "/elsewhere/veduta"})
    assert not same_code({**hello, "format": "veduta-warm/0"})
    assert not same_code({**hello, "env": [*hello["env"], ["VEDUTA_CONFINE", "/elsewhere"]]})
    assert not same_code(None)


def test_a_socket_left_behind_and_a_folder_others_may_enter(pair, monitors):
    warm, cold = pair
    m = monitors(warm)
    settle(warm)
    folder = warm.root / "cache" / "monitor" / "worker"
    assert (folder.stat().st_mode & 0o777) == 0o700
    assert ((folder / "sock").stat().st_mode & 0o777) == 0o600
    served = worker_status(warm)["served"]
    # a folder others may enter: not trusted
    os.chmod(folder, 0o755)
    edit(warm)
    edit(cold)
    w, c = warm.cook(), cold.cook()
    same(warm, cold, w, c)
    assert worker_status(warm)["served"] == served
    os.chmod(folder, 0o700)
    # the monitor and its worker killed: their socket file stays, nobody listens
    pid = worker_status(warm)["pid"]
    m.proc.kill()
    m.proc.wait(timeout=60)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not _alive(pid))
    assert (folder / "sock").exists()
    edit(warm, ["models/barrel.vmodel"])
    edit(cold, ["models/barrel.vmodel"])
    w, c = warm.cook(), cold.cook()
    same(warm, cold, w, c)
    assert w.stderr == c.stderr  # (nothing to say: no worker)
    # an impostor listening there, that says it runs other code: not used
    (folder / "sock").unlink()
    impostor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()  # (a socket's path is short when bound from its folder; cwd restored)
    os.chdir(folder)
    try:
        impostor.bind("sock")
    finally:
        os.chdir(here)
    impostor.listen(1)
    edit(warm, ["models/tree.vmodel"])
    edit(cold, ["models/tree.vmodel"])
    cook = subprocess.Popen(
        [sys.executable, "-m", "doit", "cook"], cwd=warm.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    impostor.settimeout(120)
    conn, _ = impostor.accept()
    from veduta.cook.warm import FORMAT, _send

    _send(conn, {"format": FORMAT, "toolchain": "other", "files": [], "pid": os.getpid()})
    out, err = cook.communicate(timeout=300)
    conn.close()
    impostor.close()
    w = subprocess.CompletedProcess(cook.args, cook.returncode, out.decode(), err.decode())
    same(warm, cold, w, cold.cook())


def test_the_worker_refuses_another_games_paths(pair, tmp_path, monitors):
    warm, _ = pair
    monitors(warm)
    from veduta.cook.warm import FORMAT, SOCKET, _recv, _send

    folder = warm.root / "cache" / "monitor" / "worker"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "models").mkdir(parents=True)
    (elsewhere / "models" / "x.vmodel").write_text("{}")
    jobs = {
        "another game's assets folder": (
            "model",
            "models/x.vmodel",
            str(elsewhere),
            "assets/.cooked/models/x.vda",
            "cache",
        ),
        "a source outside the assets folder": (
            "model",
            "../../elsewhere/models/x.vmodel",
            "assets",
            "assets/.cooked/models/x.vda",
            "cache",
        ),
        "a cooked file outside the game's cooked folder": (
            "model",
            "models/crate.vmodel",
            "assets",
            str(tmp_path / "x.vda"),
            "cache",
        ),
    }
    for why, job in jobs.items():
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(120)
        here = os.getcwd()
        os.chdir(folder)
        try:
            conn.connect(SOCKET)
        finally:
            os.chdir(here)
        with conn:
            hello = _recv(conn)
            assert hello["format"] == FORMAT
            _send(conn, {"cwd": str(warm.root), "jobs": [(*job, None, "")], "index": {}})
            got = _recv(conn)
        assert why in got.get("refused", ""), got
    assert not (tmp_path / "x.vda").exists()


def test_no_worker(pair, monitors):
    warm, cold = pair
    monitors(warm, "--no-worker", worker=False)
    assert worker_status(warm)["running"] is False
    cp = warm.veduta("watch", "--status")
    assert "no warm compile worker runs" in cp.stdout
    settle(warm)
    edit(warm)
    edit(cold)
    same(warm, cold, warm.cook(), cold.cook())
    cp = warm.veduta("watch", "--no-worker")
    assert cp.returncode == 2 and "--no-worker goes with --monitor" in cp.stdout + cp.stderr


def test_a_cook_cancelled_while_the_worker_cooks_for_it_stops_the_worker_and_writes_nothing(pair, tmp_path, monitors):
    """``veduta mcp``'s cook of three edited sources, sent to the warm worker (of a monitor
    confined to the game as the server is), which holds the
    request (VEDUTA_WARM_TEST_HOLD), cancelled by the client (notifications/cancelled): the cook
    hears it while it waits for the worker's answer, stops the worker (so that it writes nothing
    after) and ends; the next cook finds the three sources still stale and cooks them as a cook
    without a monitor does. Before, the cook waited for the worker's answer (up to the worker's
    timeout) and the cancel was not heard."""
    pytest.importorskip("mcp")
    import asyncio

    from mcp import ClientSession

    from tests.test_mcp_first_hour import _session

    warm, cold = pair
    hold = tmp_path / "hold"
    # (veduta mcp confines itself, and its workers, to the game: VEDUTA_CONFINE; this monitor runs
    # confined alike; one started by hand serves the server too, test_veduta_mcp_uses_...)
    confined = {"VEDUTA_CONFINE": os.path.realpath(warm.root)}
    m = monitors(warm, env={"VEDUTA_WARM_TEST_HOLD": str(hold), **confined})
    settle(warm)
    pid = worker_status(warm)["pid"]
    edit(warm)
    edit(cold)
    base = warm.root / "assets" / ".cooked"

    def stats() -> dict[str, tuple[int, int]]:
        return {str(p.relative_to(base)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(base.rglob("*"))}

    before = stats()
    env = {k: v for k, v in os.environ.items() if k != "VEDUTA_FORMAT"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent.parent)

    async def body(s: ClientSession):
        call = asyncio.ensure_future(s.call_tool("cook", {}))
        await asyncio.to_thread(wait_for, hold.exists, m.log)  # the worker holds the cook's request
        assert not call.done(), call.result()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.to_thread(wait_for, lambda: not _alive(pid), m.log)  # stopped by the cancelled cook
        written = stats()
        hold.unlink()
        again = await s.call_tool("cook", {})
        return written, again

    written, again = asyncio.run(_session(warm.root, body, env=env))
    assert written == before  # the cancelled cook wrote no cooked file
    summary = again.structured_content["summary"]
    cold_cp = cold.veduta("cook", "--json")
    assert cold_cp.returncode == 0, cold_cp.stdout + cold_cp.stderr
    assert not again.is_error and summary == json.loads(cold_cp.stdout)["summary"], summary
    assert summary["cooked"] >= len(EDITS)  # (the edited sources, and those that name them)
    assert cooked_files(warm) == cooked_files(cold)


def test_a_heeded_wait_for_the_warm_worker_is_one_timeout_not_two(monkeypatch, capsys):
    """A cook with a cancel callback (MCP) waits for the worker's answer calling it every poll;
    when the whole timeout passes with no answer begun, the worker is stopped then: no second wait
    of a whole timeout in which the callback is never called (review6 F1). A fake clock and a
    select that never finds the answer ready: nothing here depends on the machine's speed."""
    import select as select_module
    import socket as socket_module

    from veduta.cook import warm

    clock = [0.0]

    def monotonic() -> float:
        clock[0] += 0.1
        return clock[0]

    received: list[int] = []
    monkeypatch.setenv("VEDUTA_WARM_TIMEOUT", "2")
    monkeypatch.setattr(warm.time, "monotonic", monotonic)
    monkeypatch.setattr(select_module, "select", lambda r, w, x, t=None: ([], [], []))
    monkeypatch.setattr(warm, "_recv", lambda sock: received.append(1))
    mine, other = socket_module.socketpair()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    heeded: list[float] = []
    try:
        w = warm.Warm(mine, sleeper.pid, [("model", "models/a.vmodel")], heed=lambda: heeded.append(clock[0]))
        assert w.take("models/a.vmodel") is None
        assert sleeper.wait(timeout=30) == -signal.SIGKILL  # stopped: it must write nothing more
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        other.close()
    assert received == []  # no second wait for an answer
    assert len(heeded) >= 5 and w.lost == {"models/a.vmodel"}
    assert "no answer in 2 s; stopped" in capsys.readouterr().err


def test_veduta_mcp_uses_a_worker_started_by_hand_confined_as_the_server_per_request(pair, tmp_path, monitors):
    """``veduta mcp`` confines itself (VEDUTA_CONFINE) where a monitor started by hand is not: the
    worker refused every MCP cook as one of other VEDUTA_* variables, so MCP never used it. Now the
    cook sends its confinement with each request and the worker cooks that request confined as
    the cook would have been: an image linked in from outside the game root is refused for the
    MCP cook (as a cook without the worker refuses it) and read for the next, unconfined, cook
    of the command line, by the same worker."""
    pytest.importorskip("mcp")
    import asyncio

    from mcp import ClientSession

    from tests.test_mcp_first_hour import _session

    warm, cold = pair
    monitors(warm)  # by hand: not confined
    settle(warm)
    served = worker_status(warm)["served"]
    env = {k: v for k, v in os.environ.items() if k not in ("VEDUTA_FORMAT", "VEDUTA_CONFINE")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent.parent)

    def mcp_cook() -> dict:
        async def body(s: ClientSession):
            return (await s.call_tool("cook", {})).structured_content

        return asyncio.run(_session(warm.root, body, env=env))

    def confined_cold() -> dict:  # the oracle: what veduta mcp's own cook does, confined, no worker
        cp = cold.veduta("cook", "--json", env={"VEDUTA_CONFINE": os.path.realpath(cold.root)})
        return json.loads(cp.stdout)

    def plain(result: dict, game: Game) -> str:
        return json.dumps(result, sort_keys=True).replace(os.path.realpath(game.root), "GAME")

    edit(warm)
    edit(cold)
    got = mcp_cook()
    assert got["ok"] and plain(got, warm) == plain(confined_cold(), cold)
    assert got["summary"]["cooked"] >= len(EDITS)
    assert cooked_files(warm) == cooked_files(cold)
    assert worker_status(warm)["served"] == served + 1  # used (before: never)
    # an image linked in from outside the game root: the confinement is the request's
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(warm.root / "assets/textures/crate.png", outside / "crate.png")
    for g in (warm, cold):
        (g.root / "assets/textures/crate.png").unlink()
        os.symlink(outside / "crate.png", g.root / "assets/textures/crate.png")
    edit(warm, ["textures/crate.vtexture"])
    edit(cold, ["textures/crate.vtexture"])
    got = mcp_cook()
    assert not got["ok"] and "outside the game root" in json.dumps(got["diagnostics"]), got
    assert plain(got, warm) == plain(confined_cold(), cold)
    assert worker_status(warm)["served"] == served + 2
    w, c = warm.cook(), cold.cook()  # the command line: not confined, the image read through its link
    same(warm, cold, w, c)
    assert w.returncode == 0 and worker_status(warm)["served"] == served + 3
