"""veduta watch's memory over many cook cycles: what a cycle keeps is bounded (hostile3 #4).

Each watch cycle is a whole cook in the same process (veduta/faces/cli/watch.py ``_cook``).  A
cook's state is held by reference cycles (its bound classes, its group task) that, unfrozen into
Python's oldest generation, were rarely collected: the watch grew by about 50 KB a cook in the
sample game and 1.8 MB a cook at 2,000 sources (veduta/cook/inprocess.py now collects them).
Measured here in a fresh process (not pytest's heap): object counts of a cook's state, and
resident memory after 30 more cycles against the memory after the first 5.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.gamerepo import make_game

CYCLES = r"""
import contextlib, gc, io, json, sys
from veduta.base.project import Project
from veduta.faces.cli.watch import _cook

project = Project.at(".")
path = "assets/models/crate.vmodel"
base = open(path).read()

def cycle(i):
    with open(path, "w") as f:  # an editor's save: one source changed, the rest up to date
        f.write(base.replace("[1, 1, 1]", f"[1, {1 + i % 5}, 1]"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert _cook(project, 1, "text") == 0

def rss_kb():
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS")).split()[1])

def alive():
    gc.collect()
    names = ("CookRun", "Connection", "PreloadedSqliteDB", "StatCache", "CollectingReporter")
    found = {n: 0 for n in names}
    for o in gc.get_objects():
        if type(o).__name__ in found:
            found[type(o).__name__] += 1
    return found

for i in range(5):
    cycle(i)
first, alive_first = rss_kb(), alive()
for i in range(30):
    cycle(i)
print(json.dumps({"first": first, "last": rss_kb(), "alive_first": alive_first, "alive_last": alive()}))
"""

MODEL = '{ "veduta": "model/1", "parts": [ { "shape": "box", "size": [%d, 1, 1] } ] }\n'


def test_watch_cycles_keep_no_cook_state_and_give_memory_back(tmp_path):
    game = make_game(tmp_path)
    for i in range(600):  # enough sources that a cook's freed heap is megabytes, not noise
        game.write(f"models/many/m{i}.vmodel", MODEL % (i % 5 + 2))
    done = subprocess.run([sys.executable, "-c", CYCLES], cwd=game.root, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    # no cook's state outlives the next cook: the same counts after 5 cycles and after 35
    assert got["alive_last"] == got["alive_first"], got
    assert all(n <= 1 for n in got["alive_last"].values()), got
    # without that collection this grew by megabytes over these 30 cycles (600 sources)
    assert got["last"] - got["first"] < 4096, got
