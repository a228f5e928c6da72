"""veduta watch with a real process, real file edits and a real SIGINT."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

from tests.gamerepo import BAD, CRATE, Game


class Watcher:
    def __init__(self, game: Game):
        env = dict(os.environ)
        env.pop("VEDUTA_FORMAT", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "veduta", "watch"],
            cwd=game.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 300) -> str:
        """The next line printed holding *text*; *timeout*: a bound for a broken watch only, never
        reached by a working one however loaded the machine (each step here is a cook of a few
        small models)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                assert self.proc.poll() is None, "\n".join(self.seen)
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no {text!r} in:\n" + "\n".join(self.seen))

    def stop(self) -> int:
        """SIGINT, as Ctrl-C sends; the exit status, with every line printed in ``seen``."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=300)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.pump.join(timeout=10)
            while not self.lines.empty():
                self.seen.append(self.lines.get())


def test_watch_recooks_saves_survives_errors_and_stops_on_ctrl_c(game):
    w = Watcher(game)
    try:
        w.wait_for("cook: 4 cooked")
        w.wait_for("watch: watching")
        crate = game.cooked("models/crate.vda")
        before = crate.read_bytes()

        # a save recooks what it made stale (how soon is the machine's: no bound on it here)
        game.write("models/crate.vmodel", CRATE.replace('"size": [1, 1, 1]', '"size": [2, 1, 1]'))
        w.wait_for("changed: models/crate.vmodel")
        w.wait_for("cook: 1 cooked, 3 up to date")
        assert crate.read_bytes() != before

        # a source with errors prints its diagnostics and the watch goes on
        game.write("models/crate.vmodel", BAD)
        w.wait_for("parts[1].segments: 2 out of range [3, 256]")
        w.wait_for("1 failed")
        w.wait_for("watch: cooked in")
        assert not crate.exists()

        # fixing it cooks again; a dependency's edit recooks its dependents
        game.write("models/crate.vmodel", CRATE)
        w.wait_for("1 restored from cache")  # the content cooked before
        game.write("models/tree_far.vmodel", (game.root / "assets/models/tree_far.vmodel").read_text() + "\n")
        w.wait_for("cook: 2 cooked")
        assert crate.exists()
    finally:
        code = w.stop()
    assert code == 0
    out = "\n".join(w.seen)
    assert "watch: stopped" in out and "Traceback" not in out
    # no temporary file is left behind
    assert not [p for p in (game.root / "assets").rglob(".*.tmp")]


def test_watch_ignores_an_editors_temporary_file_and_follows_folders(game):
    """`sed -i` writes a temporary file without a suffix (sedXXXXXX) beside the source and renames
    it over the source: only the source's change makes a cook (the temporary file made one of its
    own). A folder moved away takes its sources with it: that makes a cook."""
    w = Watcher(game)
    try:
        w.wait_for("watch: watching")
        crate = game.root / "assets/models/crate.vmodel"
        subprocess.run(["sed", "-i", "s/1, 1, 1/2, 1, 1/", str(crate)], check=True)
        w.wait_for("cook: 1 cooked")
        w.wait_for("watch: cooked in")
        (game.root / "assets/models/notes").write_text("not an asset")  # no suffix: no cook
        (game.root / "assets/models/props").rename(game.root / "props")  # a folder moved away: a cook
        w.wait_for("cook:")
        w.wait_for("watch: cooked in")
    finally:
        assert w.stop() == 0
    changed = [line for line in w.seen if line.startswith("watch: changed:")]
    assert changed[0] == "watch: changed: models/crate.vmodel", changed
    assert changed[1:] == ["watch: changed: models/props"], changed
    assert not game.cooked("models/barrel.vda").exists()  # its source went with the folder


def test_watch_recooks_a_texture_when_its_png_named_in_capitals_changes(game):
    """Texture layers take ``.PNG`` in any case (one rule, ``kinds.is_png``): an edit of
    ``wall.PNG`` wakes the watch and recooks the texture that reads it, and only that. (A guard:
    the watch's filter lowercased names before the rule was made one; it held then too.)"""
    import numpy as np

    from tests.compile.test_texture import png_bytes

    pixels = np.zeros((4, 4, 4), dtype=np.uint8)
    png = game.root / "assets/textures/wall.PNG"
    png.parent.mkdir(parents=True)
    png.write_bytes(png_bytes(pixels))
    game.write(
        "textures/wall.vtexture", '{"veduta": "texture/1", "layers": [{"type": "image", "path": "textures/wall.PNG"}]}'
    )
    w = Watcher(game)
    try:
        w.wait_for("cook: 5 cooked")
        w.wait_for("watch: watching")
        before = game.cooked("textures/wall.vda").read_bytes()
        png.write_bytes(png_bytes(pixels + 255))
        w.wait_for("watch: changed: textures/wall.PNG")
        w.wait_for("cook: 1 cooked, 4 up to date")
        w.wait_for("watch: cooked in")
        assert game.cooked("textures/wall.vda").read_bytes() != before
    finally:
        assert w.stop() == 0


def test_watch_waits_for_the_assets_folder_when_it_goes_and_cooks_when_it_is_back(game):
    """The assets folder gone for a moment (``mv assets x && mv x assets``; ``git checkout`` of a
    branch without it: removed, then made anew): the watch exited 2 ("no assets folder"). It now
    says so once, waits, watches the folder that is back (a watcher of the old one sees nothing
    of a new one) and cooks what changed meanwhile; only Ctrl-C stops it."""
    import shutil

    assets, away = game.root / "assets", game.root / "away"
    w = Watcher(game)
    try:
        w.wait_for("watch: watching")
        os.rename(assets, away)
        w.wait_for("watch: assets/ is gone; waiting for it to come back (Ctrl-C stops)")
        (away / "models/crate.vmodel").write_text(CRATE.replace('"size": [1, 1, 1]', '"size": [2, 1, 1]'))
        os.rename(away, assets)
        w.wait_for("watch: assets/ is back")
        w.wait_for("cook: 1 cooked, 3 up to date")  # the edit made while it was away
        w.wait_for("watch: cooked in")

        shutil.copytree(assets, away, symlinks=True)
        shutil.rmtree(assets)
        w.wait_for("watch: assets/ is gone")
        shutil.copytree(away, assets, symlinks=True)  # (a new folder at the same path)
        w.wait_for("watch: assets/ is back")
        w.wait_for("cook: 0 cooked, 4 up to date")
        w.wait_for("watch: cooked in")
        game.write("models/crate.vmodel", CRATE.replace('"size": [1, 1, 1]', '"size": [3, 1, 1]'))
        w.wait_for("watch: changed: models/crate.vmodel")  # seen by a watcher of the new folder
        w.wait_for("cook: 1 cooked, 3 up to date")
        w.wait_for("watch: cooked in")
    finally:
        code = w.stop()
    assert code == 0
    out = "\n".join(w.seen)
    assert out.count("is gone") == 2 and "watch: stopped" in out and "Traceback" not in out, out
    cp = game.veduta("why", "--json")
    assert cp.returncode == 0 and '"stale": []' in cp.stdout, cp.stdout + cp.stderr


def _descendants(pid: int) -> dict[int, bytes]:
    """The processes under *pid* (children, theirs, ...): pid -> command line."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = {}, [pid]
    while todo:
        p = todo.pop()
        for child, parent in parents.items():
            if parent == p and child not in found:
                try:
                    with open(f"/proc/{child}/cmdline", "rb") as f:
                        found[child] = f.read()
                except OSError:
                    continue
                todo.append(child)
    return found


def _alive(pid: int, cmdline: bytes) -> bool:
    """Whether *pid* still runs that command (a zombie or a reused pid does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return state != b"Z" and f.read() == cmdline
    except OSError:
        return False


def test_watch_stopped_by_sigterm_while_its_pool_cooks_leaves_no_process(game):
    """hostile3 #9: SIGTERM (a supervisor's, an editor plugin's) while the pool cooks stops the
    watch as Ctrl-C does: its workers, fork server and resource tracker end with it."""
    model = '{ "veduta": "model/1", "parts": [ { "shape": "box", "size": [%d, 1, 1] } ] }\n'
    w = Watcher(game)
    try:
        w.wait_for("watch: watching")
        for i in range(1500):  # enough stale sources that the cook runs its process pool
            game.write(f"models/many/m{i}.vmodel", model % (i % 5 + 2))
        w.wait_for("watch: changed:")
        kids: dict[int, bytes] = {}
        end = time.monotonic() + 300  # a bound for a broken watch only
        while not any(b"multiprocessing" in c for c in kids.values()) and w.proc.poll() is None:
            assert time.monotonic() < end, "\n".join(w.seen)
            kids = _descendants(w.proc.pid)
            time.sleep(0.02)
        w.proc.send_signal(signal.SIGTERM)
        code = w.proc.wait(timeout=300)
    finally:
        w.stop()
    assert code == 128 + signal.SIGTERM, "\n".join(w.seen)
    assert "watch: stopped" in "\n".join(w.seen)
    # every process the watch started ends (they are not waited for by it: poll a while)
    end = time.monotonic() + 60
    while [p for p, c in kids.items() if _alive(p, c)] and time.monotonic() < end:
        time.sleep(0.1)
    assert not [c for p, c in kids.items() if _alive(p, c)]


def test_an_idle_watch_holds_no_database_open(game):
    """Between cooks the watch keeps no file of the game open: doit's database is closed at the
    end of each cook (its backend's dump), so a ``git checkout`` or a ``veduta cache`` command
    meets no open handle of it."""
    w = Watcher(game)
    try:
        w.wait_for("watch: watching")
        game.write("models/crate.vmodel", CRATE.replace('"size": [1, 1, 1]', '"size": [2, 1, 1]'))
        w.wait_for("cook: 1 cooked")
        w.wait_for("watch: cooked in")
        fds = os.listdir(f"/proc/{w.proc.pid}/fd")
        opened = []
        for fd in fds:
            try:
                opened.append(os.readlink(f"/proc/{w.proc.pid}/fd/{fd}"))
            except OSError:
                continue  # (closed meanwhile)
    finally:
        code = w.stop()
    assert code == 0
    assert not [p for p in opened if str(game.root) in p], opened
