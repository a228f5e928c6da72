"""``make bench``: cook speed against its floors, model compile and world generation throughput.

    python -m bench.cook [--assets N[,N...]] [--jobs J] [--repeat R] [--heavy/--no-heavy]
                           [--compare/--no-compare] [--skip-cook]

Every cook figure is a whole process (as a user runs it), the median of R runs, measured in
the same run as the floor it is compared with:

- a game of N small generated models, and a heavier game (the sample assets plus worlds,
  512 x 512 textures with their mip chains and large models) where compile work dominates;
- first cook: ``doit -n J cook`` and plain ``doit cook`` (which uses every core by itself),
  each from nothing (no cooked files, no cache), against the *compile floor*: the project's
  compiler (``veduta.cook.cook.cook_batch``: read, compile, write, store) in a J-process pool
  with no doit, and in one process;
- no-op ``doit cook`` against the *re-hash floor* (one process reading and SHA-256-hashing
  every source by the spec's recipe) and, beside it, the *stat floor* (one process stat()ing
  every source), ninja's no-op with one edge per asset and plain doit's with one task and a
  file_dep per asset (``--compare``);
- ``doit list --all --status`` against the no-op, time and peak memory.

The no-op, its floors, ``doit list``, ``veduta check`` and ``veduta why`` run in turn, round by
round, so that a slow spell of the machine weighs on each of them alike.  Beside them, issue
23's interactive and memory figures (bench/interactive.py): one edited source against the
no-op, a first cook's peak memory (the whole process tree) against the compile floor's, and
one small model compiled alone against its per-model share of a batch.

Before the cook: model compile, world generation, drawing and editing figures, and the language
server's (bench/lsp.py: the time from a change to its diagnostics, its memory over 1,000 edits).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.games import _ENV, SUFFIXES, _fresh, make_game, make_heavy_game
from bench.interactive import bench_first_memory, bench_one_edit, bench_single_model, print_rows, table_rows
from veduta.cook.state import RACY_NS

#: One process visiting every source (a dot folder is skipped, as the cook does) and doing EACH
#: to the file at ``p`` (relative path ``rel``); prints the count.
_EVERY_SOURCE = r"""
import hashlib, os, sys
root = os.path.join(sys.argv[1], "assets")
n = 0
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if not x.startswith(".")]
    for f in files:
        if f.endswith(SUFFIXES):
            p = os.path.join(d, f)
            EACH
            n += 1
print(n)
""".replace("SUFFIXES", repr(SUFFIXES))

#: One process reading and hashing every source as the spec's source_hash recipe starts.
REHASH_FLOOR = _EVERY_SOURCE.replace(
    "EACH",
    """rel = os.path.relpath(p, root).replace(os.sep, "/")
            with open(p, "rb") as fh:
                data = fh.read()
            h = hashlib.sha256(b"veduta-cook/1\\nveduta-asset/0.8.0\\n")
            h.update(f"source {rel} {len(data)}\\n".encode())
            h.update(data)
            h.hexdigest()""",
)

#: One process stat()ing every source (what any up-to-date check must at least do).
STAT_FLOOR = _EVERY_SOURCE.replace("EACH", "os.stat(p)")

#: The compile floor: the project's compiler over every source in a pool of J processes, no doit.
COMPILE_FLOOR = r"""
import sys
sys.path.insert(0, BENCH_ROOT)
from bench.cook import compile_floor
print(compile_floor(sys.argv[1], int(sys.argv[2])))
""".replace("BENCH_ROOT", repr(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

#: Plain doit: one task per asset with its source as file_dep and a stamp as target.
PLAIN_DODO = r"""
import os
DOIT_CONFIG = {"dep_file": "cache/plain.sqlite3", "backend": "sqlite3", "verbosity": 0}

def stamp(targets):
    open(targets[0], "wb").close()

def task_plain():
    root = "assets"
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in sorted(files):
            if f.endswith(SUFFIXES):
                src = os.path.join(d, f)
                yield {"name": src, "file_dep": [src], "targets": [os.path.join("stamps", f)],
                       "actions": [stamp]}
""".replace("SUFFIXES", repr(SUFFIXES))


def compile_floor(root: str, jobs: int, batch: int = 32) -> int:
    """Cook every source of the game at *root* with the project's compiler and no doit: batches
    of ``cook_batch`` in a pool of *jobs* processes (one: in this process).  Returns the count."""
    import multiprocessing

    from veduta.base.project import AssetIndex, Project
    from veduta.cook.cook import FAILED, cook_batch, set_index

    project = Project.find(root)
    sources = project.scan()[0]
    set_index(project.assets, AssetIndex.from_paths(s.rel for s in sources))
    work = [
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
    ]
    batches = [work[i : i + batch] for i in range(0, len(work), batch)]
    if jobs <= 1:
        results = [r for b in batches for r in cook_batch(b)]
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = [r for rs in pool.imap_unordered(cook_batch, batches) for r in rs]
    failed = [m for r in results if r["outcome"] == FAILED for m in r["messages"]]
    if failed:
        raise SystemExit("the compile floor failed:\n" + "\n".join(failed[:5]))
    return len(results)


#: CPU seconds (user + system) of every run, its waited-for children included (a pool's workers).
CPU: list[float] = []


@functools.cache
def _gnu_time() -> str | None:
    """GNU time, if this machine has it (``-f %M``: the peak of the command alone); looked for
    once, when a first command is run (not on import: the compile floor imports this module)."""
    path = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if path is None:
        return None
    try:
        cp = subprocess.run([path, "-f", "%M", "true"], capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    return path if cp.returncode == 0 and cp.stderr.strip().isdigit() else None


def run(cmd: list[str], cwd: str) -> tuple[float, str, int]:
    """Run *cmd* to its end: (wall seconds, stdout, peak resident KiB of the process).

    The peak is the command's own, measured by GNU time when there is one: a process started
    from this one inherits this process's peak in its own ``ru_maxrss`` (Linux carries the
    high-water mark across fork and exec), and this process grows to some 160 MB while it
    benchmarks the compilers, which would hide every smaller figure."""
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    peak_file = None
    gnu_time = _gnu_time()
    if gnu_time:
        fd, peak_file = tempfile.mkstemp(prefix="bench-peak-")
        os.close(fd)
        cmd = [gnu_time, "-f", "%M", "-o", peak_file, *cmd]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=_ENV)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    text = out.read().decode("utf-8", "replace")
    peak = usage.ru_maxrss
    if peak_file is not None:
        with open(peak_file) as f:
            lines = f.read().split()
        os.unlink(peak_file)
        peak = int(lines[-1]) if lines and lines[-1].isdigit() else peak
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{text}\n{err.read().decode('utf-8', 'replace')}")
    CPU.append(usage.ru_utime + usage.ru_stime)
    return dt, text, peak


def timed(cmd: list[str], cwd: str) -> tuple[float, str]:
    dt, text, _ = run(cmd, cwd)
    return dt, text


def _interleaved(cmds: dict[str, list[str]], root: str, repeat: int) -> dict[str, tuple[float, str, int, float]]:
    """:func:`_median` of each command of *cmds*, their runs in turn (every command once, then
    again, *repeat* rounds), so that their ratios are taken over the same spells of the machine."""
    runs: dict[str, list[tuple[float, str, int, float]]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for key, cmd in cmds.items():
            dt, text, peak = run(cmd, root)
            runs[key].append((dt, text, peak, CPU[-1]))
    return {
        k: (
            statistics.median(x[0] for x in v),
            v[-1][1],
            int(statistics.median(x[2] for x in v)),
            statistics.median(x[3] for x in v),
        )
        for k, v in runs.items()
    }


def _median(cmd: list[str], root: str, repeat: int, fresh: bool = False) -> tuple[float, str, int, float]:
    """(median wall seconds, last output, median peak KiB, median CPU seconds) of *repeat* runs."""
    times, peaks, cpus, text = [], [], [], ""
    for _ in range(repeat):
        if fresh:
            _fresh(root)
        dt, text, peak = run(cmd, root)
        times.append(dt)
        peaks.append(peak)
        cpus.append(CPU[-1])
    return statistics.median(times), text, int(statistics.median(peaks)), statistics.median(cpus)


def bench_cook(
    n: int,
    jobs: int,
    repeat: int,
    where: str = "build",
    heavy: bool = False,
    compare: bool = False,
    first_repeat: int | None = None,
) -> dict:
    """Every cook figure of one game (n small models, or the heavy game) in one run."""
    # in the project's folder, not /tmp: a game repo lives on the project's file
    # system (here /tmp creates files 30x slower, which would skew the first cook)
    os.makedirs(where, exist_ok=True)
    root = os.path.abspath(tempfile.mkdtemp(prefix="bench-game-", dir=where))
    py = sys.executable
    doit = [py, "-m", "doit"]
    first_repeat = max(1, min(repeat, 3)) if first_repeat is None else first_repeat
    try:
        if heavy:
            n = make_heavy_game(root)
        else:
            make_game(root, n)
        r: dict = {"assets": n, "jobs": jobs, "heavy": heavy}
        # bytecode of everything a cook imports, as an installed veduta has
        run([py, "-c", "import veduta.cook.tasks, veduta.compile.model.compile, veduta.formats, doit.doit_cmd"], root)
        # first cooks from nothing, paired run by run with the compile floors
        firsts, plains, floors, floor1 = [], [], [], []
        trash = root + "-trash"  # each first cook starts with nothing deleted just before it
        for _ in range(first_repeat):  # one of each in turn, so that a busy spell hits all four
            _fresh(root, trash)
            dt, out, _ = run(doit + ["-n", str(jobs), "cook"], root)
            firsts.append((dt, CPU[-1]))
            r["first_summary"] = out.strip().splitlines()[-1]
            _fresh(root, trash)
            plains.append((run(doit + ["cook"], root)[0], CPU[-1]))
            _fresh(root, trash)
            dt, out, _ = run([py, "-c", COMPILE_FLOOR, root, str(jobs)], root)
            if int(out) != n:
                raise SystemExit(f"the compile floor cooked {out.strip()} sources, not {n}")
            floors.append((dt, CPU[-1]))
            _fresh(root, trash)
            floor1.append((run([py, "-c", COMPILE_FLOOR, root, "1"], root)[0], CPU[-1]))
        shutil.rmtree(trash, ignore_errors=True)
        for key, got in (
            ("first", firsts),
            ("first_plain", plains),
            ("compile_floor", floors),
            ("compile_floor_1", floor1),
        ):
            if got:
                r[key] = statistics.median(w for w, _ in got)
                r[key + "_cpu"] = statistics.median(c for _, c in got)
        # the game cooked by doit, then no-ops
        _fresh(root)
        run(doit + ["cook"], root)
        # files written less than 2 s before a check are "racy" and get re-hashed once
        # (docs/cooking.md); the steady state is what every later no-op costs
        r["settle"] = run(doit + ["cook"], root)[0]
        time.sleep(RACY_NS / 1e9)
        run(doit + ["cook"], root)
        veduta = [py, "-m", "veduta"]
        # the no-op and every figure compared with it or with its floor, run in turn round by
        # round (a slow spell of this machine then weighs on all of them, not on one)
        timed = _interleaved(
            {
                "noop": doit + ["cook"],
                "floor": [py, "-c", REHASH_FLOOR, root],
                "stat_floor": [py, "-c", STAT_FLOOR, root],
                # what any doit command costs before it reads a dodo file: Python and doit starting
                "startup": doit + ["--version"],
                "list": doit + ["list", "--all", "--status"],
                # as a pre-commit hook runs it (fresh sources known good by their cooked files)
                "check": veduta + ["check"],
                "why": veduta + ["why"],
            },
            root,
            repeat,
        )
        for key, (wall, _, _, cpu) in timed.items():
            r[key], r[key + "_cpu"] = wall, cpu
        r["noop_kib"], r["list_kib"] = timed["noop"][2], timed["list"][2]
        if int(timed["floor"][1]) != n:
            raise SystemExit(f"the re-hash floor hashed {timed['floor'][1].strip()} sources, not {n}")
        r.update(bench_one_edit(root, repeat))  # (issue 23: bench/interactive.py)
        r.update(_bench_authoring(root, jobs, repeat))
        if compare:
            r.update(_compare(root, repeat))
        r.update(_noop_goals(root, repeat))
        if not heavy:
            r.update(bench_single_model())
            r.update(bench_first_memory(root, jobs))
        return r
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(root + "-trash", ignore_errors=True)


def _bench_authoring(root: str, jobs: int, repeat: int) -> dict:
    """veduta check on the cooked game (docs/authoring-tools.md) besides the one timed with the
    no-op: check of one source, check --all (every source compiled, as on a fresh clone)."""
    veduta = [sys.executable, "-m", "veduta"]
    one = None
    for d, dirs, files in os.walk(os.path.join(root, "assets")):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        named = sorted(f for f in files if f.endswith(SUFFIXES))
        if named:
            one = os.path.relpath(os.path.join(d, named[0]), root)
            break
    out: dict = {}
    out["check_all"] = run(veduta + ["check", "--all", "-n", str(jobs)], root)[0]
    out["check_all_cpu"] = CPU[-1]
    if one is not None:
        out["check_one"], _, _, out["check_one_cpu"] = _median(veduta + ["check", one], root, repeat)
    return out


def _ninja_game(root: str) -> str | None:
    """ninja (the binary, or the PyPI package's) with a build.ninja of one edge per source of the
    game at *root*, built once (so that its next run is a no-op); None when there is no ninja."""
    ninja = shutil.which("ninja")
    if ninja is None:
        try:
            import ninja as ninja_pkg  # the PyPI package ships the binary

            ninja = os.path.join(ninja_pkg.BIN_DIR, "ninja")
        except ImportError:
            return None
    sources = []
    for d, dirs, files in os.walk(os.path.join(root, "assets")):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        sources += sorted(os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(SUFFIXES))
    os.makedirs(os.path.join(root, "stamps"), exist_ok=True)
    with open(os.path.join(root, "build.ninja"), "w") as f:
        f.write("rule stamp\n  command = touch $out\n")
        for i, s in enumerate(sources):
            f.write(f"build stamps/n{i}: stamp {s}\n")
    run([ninja, "-j", "2"], root)
    return ninja


def _compare(root: str, repeat: int) -> dict:
    """No-ops of other tools on the same sources: ninja (one edge per asset), plain doit."""
    out: dict = {}
    ninja = _ninja_game(root)
    if ninja:
        out["ninja"], _, _, out["ninja_cpu"] = _median([ninja], root, repeat)
    with open(os.path.join(root, "plain_dodo.py"), "w") as f:
        f.write(PLAIN_DODO)
    plain = [sys.executable, "-m", "doit", "-f", "plain_dodo.py"]
    run(plain, root)
    time.sleep(RACY_NS / 1e9)
    out["plain_doit"], _, _, out["plain_doit_cpu"] = _median(plain, root, repeat)
    return out


class _Monitor:
    """``veduta watch --monitor`` running in the game at *root* (docs/cooking.md), until stopped."""

    def __init__(self, root: str):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "veduta", "watch", "--monitor"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=_ENV,
        )
        end = time.monotonic() + 120
        while b"monitoring" not in self._said():
            if self.proc.poll() is not None or time.monotonic() > end:
                raise SystemExit(f"veduta watch --monitor did not start:\n{self._said().decode()}")
            time.sleep(0.05)

    def _said(self) -> bytes:
        self.log.seek(0)
        return self.log.read()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()


def _noop_goals(root: str, repeat: int) -> dict:
    """Issue 23's no-op goals, paired round by round: the no-op ``doit cook`` beside ninja's no-op
    (one edge per asset; goal <= 1.5x at 10,000 sources and above) and the stat floor (goal <= 2x
    at 50,000 and above), with doit's start-up alone beside them (what no ``doit cook`` can go
    under), and the no-op with the file-system monitor running (``veduta watch --monitor``, which
    is started for it in each round: a first cook leaves the mark the timed one trusts, and it is
    stopped again, its folder removed, before the next round's no-op)."""
    py = sys.executable
    doit = [py, "-m", "doit"]
    ninja = _ninja_game(root)
    cmds = {
        "goal_noop": doit + ["cook"],
        "goal_stat": [py, "-c", STAT_FLOOR, root],
        "goal_startup": doit + ["--version"],
    }
    if ninja:
        cmds["goal_ninja"] = [ninja]
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in [*cmds, "goal_monitor"]}
    monitor_said = ""
    for _ in range(repeat):
        for key, cmd in cmds.items():
            runs[key].append((run(cmd, root)[0], CPU[-1]))
        mon = _Monitor(root)
        try:
            run(doit + ["cook"], root)  # leaves the mark
            dt, out, _ = run(doit + ["cook"], root)
            runs["goal_monitor"].append((dt, CPU[-1]))
            monitor_said = out.strip().splitlines()[-1]
        finally:
            mon.stop()
            shutil.rmtree(os.path.join(root, "cache", "monitor"), ignore_errors=True)
    out: dict = {"goal_monitor_said": monitor_said}
    for key, got in runs.items():
        out[key] = statistics.median(w for w, _ in got)
        out[key + "_cpu"] = statistics.median(c for _, c in got)
    return out


def bench_models() -> dict:
    from bench.models import bench_geometry

    out = dict(bench_geometry())
    # a typical model end to end: source bytes -> validated -> built -> encoded container
    from veduta.compile import CompileContext
    from veduta.compile.model.compile import compile_model
    from veduta.container.chunks import write_chunks
    from veduta.formats import encode
    from veduta.source.diagnostics import Report

    src = (
        open(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "robot.vmodel"), "rb").read()
        if os.path.exists(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "robot.vmodel"))
        else None
    )
    if src is not None:
        from veduta.base.project import AssetIndex

        # the sample game's materials, which the robot names (a missing one would be a warning)
        index = AssetIndex.from_paths(
            f"materials/{m}" for m in os.listdir(os.path.join(os.path.dirname(__file__), "..", "assets", "materials"))
        )
        times = []
        tris = 0
        for _ in range(30):
            t0 = time.perf_counter()
            ctx = CompileContext(".", "models/robot.vmodel", "model", "robot", Report("robot.vmodel"), index)
            mesh = compile_model(src, ctx)
            assert mesh is not None, ctx.report.items
            write_chunks([("MESH", encode(mesh))])
            times.append(time.perf_counter() - t0)
            tris = mesh.triangles
        out["robot_end_to_end_s"] = statistics.median(times)
        out["robot_triangles"] = tris
    return out


LARGEST_MODEL = r"""
import json, resource, sys, time
from veduta.compile import CompileContext
from veduta.compile.model.compile import compile_model
from veduta.compile.model.source import total_triangles, validate_model
from veduta.compile.model.types import MAX_TRIANGLES
from veduta.source.diagnostics import Report
n = MAX_TRIANGLES // 65024  # the largest parts (256 x 128 spheres) that fit the limit
parts = [{"shape": "sphere", "radius": 1 + i / 100, "segments": 256, "rings": 128, "position": [3 * i, 0, 0]}
         for i in range(n)]
src = json.dumps({"veduta": "model/1", "parts": parts}).encode()
tris = total_triangles(validate_model(src, "big.vmodel", "big").spec)
t0 = time.perf_counter()
mesh = compile_model(src, CompileContext(".", "models/big.vmodel", "model", "big", Report("big.vmodel")))
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"triangles": tris, "time": dt, "peak": peak, "ok": mesh is not None}))
"""


def bench_largest_model() -> dict:
    """The largest legal model (docs/formats/model.md, Limits) built in a process of its own:
    time and peak memory (the process's maximum resident size)."""
    import json

    cp = subprocess.run([sys.executable, "-c", LARGEST_MODEL], capture_output=True, text=True, check=True)
    r = json.loads(cp.stdout)
    return {"triangles": f"{r['triangles']:,}", "build_s": r["time"], "peak_memory": f"{r['peak'] / 2**20:.0f} MiB"}


def bench_world() -> dict:
    from bench.world import bench_world as bw

    return dict(bw())


def bench_draw() -> dict:
    from bench.world import bench_draw as bd

    return dict(bd())


def bench_pictures(repeat: int) -> dict:
    from bench.pictures import bench_pictures as bp

    return dict(bp(repeat))


def bench_edit(repeat: int, where: str) -> dict:
    from bench.world_edit import bench_edit as be

    return dict(be(repeat, where))


def bench_lsp() -> dict:
    from bench.lsp import bench_lsp as bl

    return dict(bl())


def bench_scale(repeat: int, where: str) -> list:
    from bench.world_edit import bench_scale as bs

    return bs(repeat, where)


def _print_figures(d: dict) -> None:
    for k, v in d.items():
        if k.endswith("_s"):
            print(f"  {k[:-2]:32} {v * 1000:9.2f} ms")
        elif k.endswith("_ms"):
            print(f"  {k[:-3]:32} {v:9.2f} ms")
        else:
            print(f"  {k:32} {v}")


def print_cook(r: dict, repeat: int) -> None:
    what = f"heavy game of {r['assets']} sources" if r["heavy"] else f"{r['assets']} small models"
    j = r["jobs"]
    print(f"cook, {what} (whole processes, medians; ratios within this run; cpu = user + system of the")
    print("process and its workers, which a busy machine disturbs less than wall time):")
    print(f"  {'':48} {'wall':>9}    {'cpu':>7}    ratio (wall, cpu)")

    def row(label: str, key: str, base: str = "", goal: str = "") -> None:
        wall, cpu = r[key], r.get(key + "_cpu", float("nan"))
        ratio = ""
        if base:
            ratio = f"{wall / r[base]:5.2f}x {r[base + '_cpu'] and cpu / r[base + '_cpu']:5.2f}x {goal}"
        print(f"  {label:48} {wall:8.3f} s  {cpu:7.3f} s  {ratio}")

    if "first" in r:
        row(f"first cook, doit -n {j} cook", "first", "compile_floor", "of the compile floor (goal <= 1.25)")
        row("first cook, plain doit cook", "first_plain", "compile_floor", "of the compile floor")
        row(f"compile floor: compiler in a {j}-process pool", "compile_floor")
        row("compile floor, one process", "compile_floor_1", "compile_floor")
    if "settle" in r:
        print(f"  {'no-op right after the first cook (re-hashes)':48} {r['settle']:8.3f} s")
    row("no-op doit cook", "noop", "floor", "of the re-hash floor (goal <= 1.0)")
    row("re-hash floor: one process hashing every source", "floor")
    row("stat floor: one process stat()ing every source", "stat_floor", "floor")
    if "startup" in r:
        row("start-up floor: doit --version (no dodo, no task)", "startup", "floor")
    if "ninja" in r:
        row("ninja no-op, one edge per asset", "ninja", "floor")
    if "plain_doit" in r:
        row("plain doit no-op, one file_dep per asset", "plain_doit", "floor")
    if "goal_noop" in r:
        print("  issue 23's no-op goals (paired round by round; the monitor row with veduta watch --monitor running):")
        row("no-op doit cook", "goal_noop", "goal_stat", "of the stat floor (goal <= 2.0 at 50,000+)")
        if "goal_ninja" in r:
            row("no-op doit cook", "goal_noop", "goal_ninja", "of ninja's no-op (goal <= 1.5 at 10,000+)")
        row("no-op doit cook, monitor running", "goal_monitor", "goal_stat", "of the stat floor")
        if "goal_ninja" in r:
            row("no-op doit cook, monitor running", "goal_monitor", "goal_ninja", "of ninja's no-op")
        row("stat floor: one process stat()ing every source", "goal_stat")
        if "goal_ninja" in r:
            row("ninja no-op, one edge per asset", "goal_ninja", "goal_stat", "of the stat floor")
            row("start-up floor: doit --version", "goal_startup", "goal_ninja", "of ninja's no-op")
        print(f"  monitored no-op said: {r['goal_monitor_said']}")
    row("doit list --all --status", "list", "noop", "of the no-op (goal <= 1.5)")
    if "check" in r:
        row("veduta check (fresh sources known good)", "check", "noop", "of the no-op")
        if "check_one" in r:
            row("veduta check SOURCE (one source)", "check_one")
        if "compile_floor" in r:
            row(
                f"veduta check --all -n {j} (every source compiled)",
                "check_all",
                "compile_floor",
                "of the compile floor",
            )
        row("veduta why (nothing stale)", "why", "noop", "of the no-op")
    print(
        f"  {'peak memory: list / no-op':48} {r['list_kib'] / 1024:7.0f} MB / {r['noop_kib'] / 1024:.0f} MB"
        f"  {r['list_kib'] / r['noop_kib']:5.2f}x"
    )
    print_rows(r, j)
    if "first_summary" in r:
        print(f"  first cook said: {r['first_summary']}")


#: The side-by-side table's rows: label, figure, what its ratio is to (and the goal), as in
#: issue 15's table.
TABLE = (
    ("first cook, `doit -n J cook`", "first", "compile_floor", "<= 1.25"),
    ("first cook, plain `doit cook`", "first_plain", "compile_floor", ""),
    ("compile floor: the compiler in a J-process pool, no doit", "compile_floor", "", ""),
    ("compile floor, one process", "compile_floor_1", "compile_floor", ""),
    ("no-op `doit cook`", "noop", "floor", "<= 1.0"),
    ("re-hash floor: one process re-hashing every source", "floor", "", ""),
    ("stat floor: one process stat()ing every source", "stat_floor", "floor", ""),
    ("start-up floor: `doit --version`", "startup", "floor", ""),
    ("ninja no-op, one edge per asset", "ninja", "floor", ""),
    ("plain doit no-op, file_dep per asset", "plain_doit", "floor", ""),
    ("`doit list --all --status`", "list", "noop", "<= 1.5"),
    # issue 23's no-op goals, paired round by round (bench.cook._noop_goals)
    ("no-op `doit cook`, paired", "goal_noop", "goal_ninja", "<= 1.5 at 10,000+"),
    ("no-op `doit cook`, paired", "goal_noop", "goal_stat", "<= 2.0 at 50,000+"),
    ("no-op `doit cook`, `veduta watch --monitor` running", "goal_monitor", "goal_ninja", "<= 1.5 at 10,000+"),
    ("no-op `doit cook`, `veduta watch --monitor` running", "goal_monitor", "goal_stat", "<= 2.0 at 50,000+"),
    ("ninja no-op, paired", "goal_ninja", "goal_stat", ""),
    ("stat floor, paired", "goal_stat", "", ""),
    ("start-up floor: `doit --version`, paired", "goal_startup", "goal_ninja", ""),
)


def print_table(games: list[dict]) -> None:
    """Every game size side by side, as a Markdown table (the README's): wall seconds, and the
    wall and CPU ratios to the figure each row is measured against."""
    if not games:
        return
    j = games[0]["jobs"]
    print()
    print("| | " + " | ".join(f"{g['assets']:,}" for g in games) + " |")
    print("|---|" + "---|" * len(games))
    for label, key, base, goal in TABLE:
        if not any(key in g for g in games):
            continue
        label = label.replace("J", str(j))
        cells = []
        for g in games:
            if key not in g:
                cells.append("")
                continue
            cell = f"{g[key]:.3f} s"
            if base and base in g:
                cell += f" ({g[key] / g[base]:.2f}x, cpu {g[key + '_cpu'] / g[base + '_cpu']:.2f}x)"
            cells.append(cell)
        base_name = {
            "compile_floor": "of the compile floor",
            "floor": "of the re-hash floor",
            "noop": "of the no-op",
            "goal_ninja": "of ninja's no-op",
            "goal_stat": "of the stat floor",
        }.get(base, "")
        suffix = f" ({base_name}{', goal ' + goal if goal else ''})" if base_name else ""
        print(f"| {label}{suffix} | " + " | ".join(cells) + " |")
    print(
        "| peak memory, list / no-op | "
        + " | ".join(f"{g['list_kib'] / 1024:.0f} / {g['noop_kib'] / 1024:.0f} MB" for g in games)
        + " |"
    )
    for line in table_rows(games):
        print(line)


def _sizes(text: str) -> list[int]:
    """``--assets``: game sizes, comma-separated, each at least 1."""
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes such as 1000,10000, not {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected sizes of at least 1, such as 1000,10000, not {text!r}")
    return sizes


def _count(least: int):
    """An integer option of at least ``least`` (``--repeat``, ``--jobs``): argparse's error, not a traceback."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if n < least:
            raise argparse.ArgumentTypeError(f"expected at least {least}, not {n}")
        return n

    return parse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assets", default=[10000], type=_sizes, help="game sizes, comma-separated (default 10000)")
    ap.add_argument("--jobs", type=_count(1), default=os.cpu_count() or 2)
    ap.add_argument("--repeat", type=_count(1), default=5)
    ap.add_argument("--first-repeat", type=_count(0), default=3, help="runs of each first cook (default 3; 0: none)")
    ap.add_argument(
        "--heavy",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also the heavy game (worlds, textures with mips, large models)",
    )
    ap.add_argument(
        "--compare", action=argparse.BooleanOptionalAction, default=True, help="also ninja's and plain doit's no-op"
    )
    ap.add_argument(
        "--shared",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also a fresh clone restoring from a warm shared cache against compiling (bench/shared.py)",
    )
    ap.add_argument("--skip-cook", action="store_true")
    ap.add_argument("--skip-compilers", action="store_true")
    ap.add_argument("--dir", default="build", help="where the generated game goes (default build/)")
    args = ap.parse_args(argv)

    print(f"veduta bench on {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    sections = (
        ("model compile", "model compile (median):", bench_models),
        ("largest model", "largest legal model (one process):", bench_largest_model),
        ("world generation", "world generation (median):", bench_world),
        (
            "world drawing model",
            "world drawing model (ground LOD: median per chunk; inspect world: best warm run):",
            bench_draw,
        ),
        (
            "world editing",
            f"world editing on valley (in-process, median of {args.repeat}; dry runs unless written):",
            lambda: bench_edit(args.repeat, args.dir),
        ),
        (
            "language server",
            "language server (veduta lsp on stdio; a change to its diagnostics, debounce 0; docs/editors.md):",
            bench_lsp,
        ),
        ("world at scale", "", lambda: bench_scale(args.repeat, args.dir)),
        (
            "pictures",
            f"preview images (CPU of this process, median of {args.repeat}; ratio to a floor of the same run):",
            lambda: bench_pictures(args.repeat),
        ),
    )
    for name, title, run in sections if not args.skip_compilers else ():
        try:
            figures: Any = run()
        except ImportError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        if name == "world at scale":
            from bench.world_edit import print_scale

            print_scale(figures, args.repeat)
            continue
        print(title)
        _print_figures(figures)
    if not args.skip_cook:
        games = []
        for n in args.assets:
            r = bench_cook(n, args.jobs, args.repeat, args.dir, compare=args.compare, first_repeat=args.first_repeat)
            print_cook(r, args.repeat)
            games.append(r)
            sys.stdout.flush()
        print_table(games)
        if args.heavy:
            r = bench_cook(0, args.jobs, args.repeat, args.dir, heavy=True, first_repeat=args.first_repeat)
            print_cook(r, args.repeat)
        if args.shared:
            from bench.shared import bench_shared, print_shared

            shared_repeat = max(1, min(args.repeat, 3))
            for n, heavy in [(n, False) for n in args.assets] + [(0, True)] * args.heavy:
                print_shared(bench_shared(n, args.jobs, shared_repeat, args.dir, heavy=heavy), shared_repeat)
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
