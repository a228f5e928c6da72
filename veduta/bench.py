"""``make bench``: cook speed on a generated game, model compile and world generation throughput.

    python -m veduta.bench [--assets N] [--jobs J] [--repeat R] [--skip-cook]

Cook figures are whole ``doit`` processes in a generated game of N small
models (as a user runs them): the first cook (parallel, J processes), the
no-op cook (median of R), and the floor: one Python process reading and
SHA-256-hashing every source by the spec's recipe.  The goal is a no-op cook
at most 2x the floor.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from veduta.cook.state import RACY_NS

SHAPES = [
    '{{ "shape": "box", "size": [{a}, {b}, 1], "position": [0, {h}, 0], "material": "m{m}" }}',
    '{{ "shape": "cylinder", "radius": {a}, "height": {b}, "segments": {s} }}',
    '{{ "shape": "sphere", "radius": {a}, "segments": {s}, "rings": 6, "position": [0, {h}, 0] }}',
    '{{ "shape": "lathe", "profile": [[0, 0], [{a}, 0], [{b}, 1], [0, 1.2]], "segments": {s} }}',
]

FLOOR = r"""
import hashlib, os, sys
root = sys.argv[1]
n = 0
for d, dirs, files in os.walk(os.path.join(root, "assets")):
    dirs[:] = [x for x in dirs if not x.startswith(".")]
    for f in files:
        if f.endswith(".vmodel"):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, os.path.join(root, "assets")).replace(os.sep, "/")
            with open(p, "rb") as fh:
                data = fh.read()
            h = hashlib.sha256(b"veduta-cook/1\nveduta-asset/0.8.0\n")
            h.update(f"source {rel} {len(data)}\n".encode())
            h.update(data)
            h.hexdigest()
            n += 1
print(n)
"""


def make_game(root: str, n: int) -> None:
    os.makedirs(os.path.join(root, "assets", "models"), exist_ok=True)
    with open(os.path.join(root, "dodo.py"), "w") as f:
        f.write("from veduta.dodo import *\n")
    for i in range(n):
        folder = os.path.join(root, "assets", "models", f"g{i // 500:03d}")
        os.makedirs(folder, exist_ok=True)
        parts = [SHAPES[(i + k) % len(SHAPES)].format(a=0.2 + (i % 7) * 0.1, b=0.5 + (i % 5) * 0.1, h=k * 0.5,
                                                      m=i % 3, s=6 + (i + k) % 10) for k in range(2)]
        with open(os.path.join(folder, f"m{i:05d}.vmodel"), "w") as f:
            f.write('{\n  "veduta": "model/1",\n  "pivot": "bottom-center",\n  "parts": [\n    '
                    + ",\n    ".join(parts) + "\n  ]\n}\n")
    t = time.time() - 60  # out of the racy window, as files in a repo are
    for d, _, files in os.walk(os.path.join(root, "assets")):
        for f in files:
            os.utime(os.path.join(d, f), (t, t))


def timed(cmd: list[str], cwd: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    cp = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if cp.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{cp.stdout}\n{cp.stderr}")
    return dt, cp.stdout


def bench_cook(n: int, jobs: int, repeat: int, where: str = "build") -> dict:
    # in the project's folder, not /tmp: a game repo lives on the project's file
    # system (here /tmp creates files 30x slower, which would skew the first cook)
    os.makedirs(where, exist_ok=True)
    root = os.path.abspath(tempfile.mkdtemp(prefix="bench-game-", dir=where))
    try:
        make_game(root, n)
        doit = [sys.executable, "-m", "doit"]
        first, first_out = timed(doit + ["-n", str(jobs), "cook"], root)
        # files written less than 2 s before a check are "racy" and get re-hashed once
        # (docs/cooking.md); the steady state is what every later no-op costs
        settle, _ = timed(doit + ["cook"], root)
        time.sleep(RACY_NS / 1e9)
        timed(doit + ["cook"], root)
        noops = [timed(doit + ["cook"], root)[0] for _ in range(repeat)]
        floors = []
        for _ in range(repeat):
            dt, out = timed([sys.executable, "-c", FLOOR, root], root)
            if int(out) != n:
                raise SystemExit(f"floor hashed {out.strip()} sources, not {n}")
            floors.append(dt)
        lists = [timed(doit + ["list", "--all", "--status"], root)[0] for _ in range(max(1, repeat // 2))]
        return {"assets": n, "jobs": jobs, "first": first, "settle": settle, "noop": statistics.median(noops),
                "floor": statistics.median(floors), "list": statistics.median(lists),
                "first_summary": first_out.strip().splitlines()[-1]}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_models() -> dict:
    from veduta.compile.model.bench import bench_geometry

    out = dict(bench_geometry())
    # a typical model end to end: source bytes -> validated -> built -> encoded container
    from veduta.compile import CompileContext
    from veduta.compile.model.compile import compile_model
    from veduta.container.chunks import write_chunks
    from veduta.formats import encode
    from veduta.source.diagnostics import Report

    src = open(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "robot.vmodel"), "rb").read() \
        if os.path.exists(os.path.join(os.path.dirname(__file__), "..", "assets", "models", "robot.vmodel")) else None
    if src is not None:
        times = []
        tris = 0
        for _ in range(30):
            t0 = time.perf_counter()
            ctx = CompileContext(".", "models/robot.vmodel", "model", "robot", Report("robot.vmodel"))
            mesh = compile_model(src, ctx)
            write_chunks([("MESH", encode(mesh))])
            times.append(time.perf_counter() - t0)
            tris = mesh.triangles
        out["robot_end_to_end_s"] = statistics.median(times)
        out["robot_triangles"] = tris
    return out


def bench_world() -> dict:
    from veduta.world.bench import bench_world as bw

    return dict(bw())


def bench_draw() -> dict:
    from veduta.world.bench import bench_draw as bd

    return dict(bd())


def _print_figures(d: dict) -> None:
    for k, v in d.items():
        if k.endswith("_s"):
            print(f"  {k[:-2]:32} {v * 1000:9.2f} ms")
        elif k.endswith("_ms"):
            print(f"  {k[:-3]:32} {v:9.2f} ms")
        else:
            print(f"  {k:32} {v}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--assets", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-cook", action="store_true")
    ap.add_argument("--dir", default="build", help="where the generated game goes (default build/)")
    args = ap.parse_args(argv)

    print(f"veduta bench on {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    sections = (("model compile", "model compile (median):", bench_models),
                ("world generation", "world generation (median):", bench_world),
                ("world drawing model", "world drawing model (ground LOD: median per chunk; inspect world: best "
                                        "warm run):", bench_draw))
    for name, title, run in sections:
        try:
            figures = run()
        except ImportError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        print(title)
        _print_figures(figures)
    if not args.skip_cook:
        r = bench_cook(args.assets, args.jobs, args.repeat, args.dir)
        print(f"cook of {r['assets']} small models (whole doit processes, median of {args.repeat}):")
        print(f"  first cook (-n {r['jobs']})            {r['first']:8.2f} s   [{r['first_summary']}]")
        print(f"  no-op right after (re-hashes)   {r['settle']:8.3f} s")
        print(f"  no-op cook                      {r['noop']:8.3f} s")
        print(f"  floor (read + SHA-256 sources)  {r['floor']:8.3f} s")
        print(f"  no-op / floor                   {r['noop'] / r['floor']:8.2f} x   (goal <= 2)")
        print(f"  doit list --all --status        {r['list']:8.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
