"""``make bench``: the interactive and memory figures of a game (issue 23), each beside its floor.

- **one edit**: ``doit cook`` after one source was edited (a new byte at its end, so that it
  compiles: never a content cooked before, which the store would restore), against the no-op,
  run in turn round by round: what an artist pays between saving a file and seeing it cooked.
- **first-cook peak memory**: ``doit -n J cook`` from nothing against the compile floor (the
  project's compiler in a J-process pool, no doit), each one run sampled by
  :func:`bench.treemem.run_tree`: the peak of the summed proportional set size of the process
  and its workers (a page a forked worker shares with its parent counts once).
- **single model**: one small model compiled alone (``compile_sources`` of one source, as
  ``veduta check SOURCE``, the language server, preview and inspect compile one source; then
  its MESH chunk framed), against the per-model share of a batch of the same models compiled
  together (as the cook's workers compile them), in this process, medians.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from bench.games import _ENV, SHAPES, SUFFIXES, _fresh
from bench.treemem import run_tree


def _middle_source(root: str) -> str:
    """The source in the middle of the game's sorted list (neither the first the up-to-date
    pass meets nor the last)."""
    found = []
    for d, dirs, files in os.walk(os.path.join(root, "assets")):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        found += [os.path.join(d, f) for f in files if f.endswith(SUFFIXES)]
    found.sort()
    return found[len(found) // 2]


def bench_one_edit(root: str, repeat: int, monitor: bool = True) -> dict:
    """One edited source against the no-op, in turn, on a game cooked and settled.  Returns
    ``edit``/``edit_cpu``, and the no-op measured beside it (``edit_noop``/``edit_noop_cpu``).
    With *monitor*, each round then starts ``veduta watch --monitor`` (docs/cooking.md), waits
    for its warm compile worker, leaves the journal's mark with one cook, and times the same
    edit and no-op with them running (``edit_monitor``, ``edit_monitor_noop``), stopping it again
    before the next round: each round pairs all four.  (The CPU figures are the cook process's:
    the worker's compiling and the monitor's journaling are not in them.)"""
    from bench.cook import CPU, _Monitor, run

    doit = [sys.executable, "-m", "doit", "cook"]
    path = _middle_source(root)
    runs: dict[str, list[tuple[float, float]]] = {"edit": [], "edit_noop": []}
    if monitor:
        runs.update(edit_monitor=[], edit_monitor_noop=[])

    def one(edit_key: str, noop_key: str) -> None:
        with open(path, "ab") as f:  # one more byte (JSON whitespace): new content every round
            f.write(b" ")
        dt, out, _ = run(doit, root)
        if not out.strip().splitlines()[-1].startswith("cook: 1 cooked, "):
            raise SystemExit(f"one edit should cook one source, the cook said: {out.strip()}")
        runs[edit_key].append((dt, CPU[-1]))
        runs[noop_key].append((run(doit, root)[0], CPU[-1]))

    for _ in range(repeat):
        one("edit", "edit_noop")
        if not monitor:
            continue
        mon = _Monitor(root)
        try:
            served = _await_worker(root)
            run(doit, root)  # leaves the mark
            one("edit_monitor", "edit_monitor_noop")
            if _await_worker(root) != served + 1:
                raise SystemExit("the warm compile worker did not cook the edited source")
        finally:
            mon.stop()
            import shutil

            shutil.rmtree(os.path.join(root, "cache", "monitor"), ignore_errors=True)
    out: dict = {}
    for key, got in runs.items():
        out[key] = statistics.median(w for w, _ in got)
        out[key + "_cpu"] = statistics.median(c for _, c in got)
    return out


def _await_worker(root: str) -> int:
    """How many cooks the warm compile worker of the monitor running in *root* served, once it
    listens (waited for, generously bounded)."""
    from veduta.cook.warm import status

    end = time.monotonic() + 120
    while not (got := status(os.path.join(root, "cache")))["running"]:
        if time.monotonic() > end:
            raise SystemExit("the monitor's warm compile worker did not start")
        time.sleep(0.05)
    return got["served"]


def bench_first_memory(root: str, jobs: int) -> dict:
    """Peak memory of the process tree of a first ``doit -n J cook`` and of the compile floor
    (KiB), one run each from nothing, sampled (so not the runs that are timed)."""
    from bench.cook import COMPILE_FLOOR

    py = sys.executable
    trash = root + "-trash-memory"
    _fresh(root, trash)
    _, cook, cook_procs = run_tree([py, "-m", "doit", "-n", str(jobs), "cook"], root, _ENV)
    _fresh(root, trash)
    _, floor, floor_procs = run_tree([py, "-c", COMPILE_FLOOR, root, str(jobs)], root, _ENV)
    import shutil

    shutil.rmtree(trash, ignore_errors=True)
    if cook is None or floor is None:
        return {}
    return {"first_tree_kib": cook, "floor_tree_kib": floor, "first_procs": cook_procs, "floor_procs": floor_procs}


def small_model(i: int) -> bytes:
    """The *i*-th small model of the generated games (bench.games.make_game)."""
    parts = [
        SHAPES[(i + k) % len(SHAPES)].format(
            a=0.2 + (i % 7) * 0.1, b=0.5 + (i % 5) * 0.1, h=k * 0.5, s=6 + (i + k) % 10
        )
        for k in range(2)
    ]
    return (
        '{\n  "veduta": "model/1",\n  "pivot": "bottom-center",\n  "parts": [\n    '
        + ",\n    ".join(parts)
        + "\n  ]\n}\n"
    ).encode()


def bench_single_model(count: int = 256, rounds: int = 5) -> dict:
    """Seconds per small model: compiled alone, one after another (``single``), and compiled as
    one batch of *count* (``batched``: the batch's time over *count*); medians of *rounds*."""
    from veduta.base.project import AssetIndex
    from veduta.compile import CompileContext, compile_sources
    from veduta.container.chunks import write_chunks
    from veduta.formats import encode
    from veduta.source.diagnostics import Report

    sources = [small_model(i) for i in range(count)]
    index = AssetIndex.from_paths([])

    def ctx(i: int) -> CompileContext:
        return CompileContext(".", f"models/m{i:05d}.vmodel", "model", f"m{i:05d}", Report(f"m{i:05d}.vmodel"), index)

    def alone() -> None:
        for i, src in enumerate(sources):
            body = compile_sources("model", [(src, ctx(i))])[0]
            write_chunks([("MESH", encode(body))])

    def batched() -> None:
        for body in compile_sources("model", [(src, ctx(i)) for i, src in enumerate(sources)]):
            write_chunks([("MESH", encode(body))])

    alone()  # warm up (imports, first calls)
    batched()
    singles, batches = [], []
    for _ in range(rounds):  # in turn, so that a slow spell weighs on both
        t0 = time.perf_counter()
        alone()
        singles.append((time.perf_counter() - t0) / count)
        t0 = time.perf_counter()
        batched()
        batches.append((time.perf_counter() - t0) / count)
    return {"single": statistics.median(singles), "batched": statistics.median(batches)}


#: The rows of this module's figures in the side-by-side table: label, figure, its floor, goal.
ROWS = (
    ("one edited source, `doit cook`", "edit", "edit_noop", "of the no-op", "<= 1.25"),
    (
        "one edited source, `veduta watch --monitor` running",
        "edit_monitor",
        "edit_monitor_noop",
        "of the no-op with the monitor running",
        "<= 1.25",
    ),
    (
        "one edited source, `veduta watch --monitor` running",
        "edit_monitor",
        "edit_noop",
        "of the no-op without it",
        "<= 1.25",
    ),
    (
        "first cook peak memory, process tree (Pss), `doit -n J cook`",
        "first_tree_kib",
        "floor_tree_kib",
        "of the compile floor's",
        "<= 1.5",
    ),
    ("one small model compiled alone, per model", "single", "batched", "of its batched per-model cost", "<= 10"),
)


def cells(key: str, base: str, games: list[dict]) -> list[str]:
    """The table cells of figure *key* against *base* in each game (blank when not measured)."""
    out = []
    for g in games:
        if key not in g or base not in g:
            out.append("")
        elif key.endswith("_kib"):
            out.append(f"{g[key] / 1024:.0f} MB / {g[base] / 1024:.0f} MB ({g[key] / g[base]:.2f}x)")
        elif key in ("single",):
            out.append(f"{g[key] * 1e6:.0f} us / {g[base] * 1e6:.0f} us ({g[key] / g[base]:.2f}x)")
        else:
            cpu = f", cpu {g[key + '_cpu'] / g[base + '_cpu']:.2f}x" if g.get(base + "_cpu") else ""
            out.append(f"{g[key]:.3f} s / {g[base]:.3f} s ({g[key] / g[base]:.2f}x{cpu})")
    return out


def print_rows(r: dict, jobs: int) -> None:
    """This module's figures of one game, in the cook's report (bench.cook.print_cook)."""
    for label, key, base, of, goal in ROWS:
        got = cells(key, base, [r])[0]
        if got:
            print(f"  {label.replace('J', str(jobs)).replace('`', ''):48} {got} {of} (goal {goal})")
    if "first_procs" in r:
        print(f"  {'(processes sampled: cook / floor)':48} {r['first_procs']} / {r['floor_procs']}")


def table_rows(games: list[dict]) -> list[str]:
    """This module's rows of the side-by-side Markdown table (bench.cook.print_table)."""
    j = games[0]["jobs"] if games else 2
    out = []
    for label, key, base, of, goal in ROWS:
        if any(key in g for g in games):
            out.append(
                f"| {label.replace('J', str(j))} ({of}, goal {goal}) | " + " | ".join(cells(key, base, games)) + " |"
            )
    return out
