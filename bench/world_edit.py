"""``bench_edit()``: the world editing tools on the sample ``valley`` world (called by ``make bench``).

Each command runs in-process on a copy of the sample game's sources (median of *repeat* runs,
each from a cold start: sources re-read and compiled, a fresh generator). The floor is what
every edit must do anyway: read the world's source and compile it with the world compiler (and
its prefabs). ``--dry-run`` timings are the whole command but the atomic write; one real
place-then-remove pair measures the write too.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial

from bench.games import sample_game

#: what the commands are asked, on valley
CASES: list[tuple[str, str, dict]] = [
    ("place_cell", "world_place", dict(name="inn", prefab="cottage", cell=(-74, 0))),
    ("place_near", "world_place", dict(name="inn", prefab="cottage", near=(-70, 0))),
    ("terrain_hill", "world_terrain", dict(name="bump", kind="hill", cell=(-60, 10), radius=20, height=3)),
    ("terrain_lake", "world_terrain", dict(name="pond2", kind="lake", cell=(-75, 5), radius=6)),
    (
        "terrain_sea_replace",
        "world_terrain",
        dict(name="west_sea", kind="sea", cell=(-800, 0), radius=640, height=-0.5),
    ),
    (
        "vegetation_area",
        "world_vegetation",
        dict(name="daisies", model="poppy", density=0.5, cell=(-20, -20), radius=8),
    ),
    ("vegetation_world", "world_vegetation", dict(name="ferns", model="grass_tuft", density=0.2, biomes=["forest"])),
    ("remove_feature", "world_remove", dict(name="mill_pond")),
    ("remove_vegetation", "world_remove", dict(name="poppies")),
    ("remove_place", "world_remove", dict(name="keeper_cottage")),
]


def _game(where: str | None) -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    assets = os.path.normpath(os.path.join(here, "..", "assets"))
    if not os.path.isfile(os.path.join(assets, "worlds", "valley.vworld")):
        raise ImportError("the sample game's assets/ (valley) is not beside the package")
    if where:
        os.makedirs(where, exist_ok=True)
    root = tempfile.mkdtemp(prefix="bench-edit-", dir=where)
    sample_game(root)
    return root


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_edit(repeat: int = 5, where: str | None = None) -> dict:
    """Seconds per command (median), the floor, and each command's ratio to the floor."""
    from veduta import api
    from veduta.base.project import Project
    from veduta.tools.world_edit import load_world_source

    root = _game(where)
    try:
        project = Project.at(root)

        def floor() -> None:
            ws = load_world_source(project, "valley")
            ws.generator(ws.world)

        out: dict[str, float] = {"edit_floor_compile_valley_s": _median(floor, repeat)}
        for key, tool, kw in CASES:
            fn = getattr(api, tool)
            out[f"edit_{key}_dry_s"] = _median(partial(fn, project, "valley", dry_run=True, **kw), repeat)

        def write_pair() -> None:
            api.world_place(project, "valley", "inn", "cottage", cell=(-74, 0))
            api.world_remove(project, "valley", "inn")

        path = project.source_path("worlds/valley.vworld")
        with open(path, "rb") as f:
            before = f.read()
        out["edit_place_and_remove_written_s"] = _median(write_pair, repeat)
        with open(path, "rb") as f:
            if f.read() != before:
                raise SystemExit("place then remove did not give valley back byte for byte")
        floor_s = out["edit_floor_compile_valley_s"]
        slowest = max(v for k, v in out.items() if k.endswith("_dry_s"))
        out["edit_slowest_dry_over_floor_x"] = round(slowest / floor_s, 1)
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    import json

    print(json.dumps(bench_edit(), indent=2))


def heights_floor(world: str = "valley", rows: int = 64) -> int:
    """The floor of ``inspect world --all`` (issue 22): one pass of the generator's ground heights
    over every vertex of the cells of *world* of the game in the current folder (its source read
    and compiled, then strips of *rows* rows of vertices, the world's whole width). Returns a sum of
    the heights, so that the pass is not for nothing."""
    from veduta.base.project import Project
    from veduta.tools.world_edit import load_world_source

    ws = load_world_source(Project.at(os.getcwd()), world)
    gen = ws.generator(ws.world)
    n = gen.p.cells
    total = 0
    for z in range(-n, n + 1, rows):  # vertex rows -n..n, each once
        total += int(gen.heights(-n, z, 2 * n + 1, min(rows, n + 1 - z)).sum())
    return total


# -- at world scale (issue 22) --------------------------------------------------------------------

#: the largest legal extent (chunks of 16 cells of 1 m: cells -8192..8191 on each axis)
LARGEST_EXTENT = 512

#: (label, world, command after ``veduta``, the label of the call it is compared with)
SCALE_CASES: list[tuple[str, list[str], str]] = [
    (
        "terrain hill, radius 16",
        ["world", "terrain", "valley", "dome", "--kind", "hill", "--cell", "0,0", "--radius", "16", "--height", "3"],
        "",
    ),
    (
        "terrain hill, radius 16,384 (the whole world)",
        ["world", "terrain", "valley", "dome", "--kind", "hill", "--cell", "0,0", "--radius", "16384", "--height", "3"],
        "terrain hill, radius 16",
    ),
    (
        "terrain hill, radius 1,024",
        ["world", "terrain", "valley", "dome", "--kind", "hill", "--cell", "0,0", "--radius", "1024", "--height", "3"],
        "terrain hill, radius 16",
    ),
    (
        "terrain sea, radius 16",
        [
            "world",
            "terrain",
            "valley",
            "ocean",
            "--kind",
            "sea",
            "--cell",
            "-600,0",
            "--radius",
            "16",
            "--height",
            "-0.5",
        ],
        "",
    ),
    (
        "terrain sea, radius 8,000",
        [
            "world",
            "terrain",
            "valley",
            "ocean",
            "--kind",
            "sea",
            "--cell",
            "-600,0",
            "--radius",
            "8000",
            "--height",
            "-0.5",
        ],
        "terrain sea, radius 16",
    ),
    (
        "terrain sea, radius 1,000",
        [
            "world",
            "terrain",
            "valley",
            "ocean",
            "--kind",
            "sea",
            "--cell",
            "-600,0",
            "--radius",
            "1000",
            "--height",
            "-0.5",
        ],
        "terrain sea, radius 16",
    ),
    ("remove a hill of radius 16", ["world", "remove", "valley_bump", "bump"], ""),
    ("remove a hill of radius 16,384", ["world", "remove", "valley_dome", "dome"], "remove a hill of radius 16"),
    ("remove the west sea (radius 640)", ["world", "remove", "valley", "west_sea"], "remove a hill of radius 16"),
    (
        "vegetation model, radius 16",
        [
            "world",
            "vegetation",
            "valley",
            "ferns",
            "--model",
            "grass_tuft",
            "--density",
            "0.2",
            "--cell",
            "0,0",
            "--radius",
            "16",
        ],
        "",
    ),
    (
        "vegetation model, radius 256",
        [
            "world",
            "vegetation",
            "valley",
            "ferns",
            "--model",
            "grass_tuft",
            "--density",
            "0.2",
            "--cell",
            "0,0",
            "--radius",
            "256",
        ],
        "vegetation model, radius 16",
    ),
    (
        "vegetation model, the whole world",
        ["world", "vegetation", "valley", "ferns", "--model", "grass_tuft", "--density", "0.2"],
        "vegetation model, radius 16",
    ),
    (
        "vegetation prefab, radius 16",
        [
            "world",
            "vegetation",
            "valley",
            "grove",
            "--prefab",
            "oak",
            "--density",
            "0.2",
            "--cell",
            "0,0",
            "--radius",
            "16",
        ],
        "",
    ),
    (
        "vegetation prefab, radius 256",
        [
            "world",
            "vegetation",
            "valley",
            "grove",
            "--prefab",
            "oak",
            "--density",
            "0.2",
            "--cell",
            "0,0",
            "--radius",
            "256",
        ],
        "vegetation prefab, radius 16",
    ),
    (
        "place --near, search 16",
        ["world", "place", "valley", "inn", "cottage", "--near", "-70,0", "--search", "16"],
        "",
    ),
    (
        "place --near, search 256",
        ["world", "place", "valley", "inn", "cottage", "--near", "-70,0", "--search", "256"],
        "place --near, search 16",
    ),
    ("inspect world", ["inspect", "world", "valley"], ""),
    (
        "inspect world, 64 more views",
        ["inspect", "world", "valley"]
        + [a for k in range(64) for a in ("--at", f"{(k * 7919) % 16000 - 8000},{(k * 104729) % 16000 - 8000}")],
        "inspect world",
    ),
]

#: the floor of inspect world --all: a whole process that reads and compiles valley and computes
#: the generator's ground heights over every vertex of its cells (bench.world_edit.heights_floor)
FLOOR_LABEL = "floor: ground heights over every cell"
#: (label, command after ``veduta``, the label it is compared with): whole-world views, timed apart
#: (minutes each at the largest extent)
ALL_CASES: list[tuple[str, list[str], str]] = [
    (FLOOR_LABEL, [], ""),
    ("inspect world --all (1,048,576 views)", ["inspect", "world", "valley", "--all"], FLOOR_LABEL),
]


def _largest_game(where: str | None) -> str:
    """The sample game with valley at the largest legal extent, and two variants of it with one
    more hill (radius 16 and radius 16,384) to remove."""
    root = _game(where)
    path = os.path.join(root, "assets", "worlds", "valley.vworld")
    with open(path, encoding="utf-8") as f:
        text = f.read().replace('"extent": 64', f'"extent": {LARGEST_EXTENT}', 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    for name, radius in (("bump", 16), ("dome", 16384)):
        feature = f'{{ "name": "{name}", "kind": "hill", "cell": [0, 0], "radius": {radius}, "height": 3 }},\n    '
        with open(os.path.join(root, "assets", "worlds", f"valley_{name}.vworld"), "w", encoding="utf-8") as f:
            f.write(text.replace('{ "name": "east_ridge"', feature + '{ "name": "east_ridge"', 1))
    return root


#: what the kernels of inspect world --all were in the last :func:`bench_scale` (printed by :func:`print_scale`)
KERNELS: dict[str, float] = {}


def kernels_line() -> str:
    """Which code computes inspect world --all here: numba's kernels (its version) or numpy."""
    from veduta.world import jit

    if jit.available() and jit.env_says() is not False:
        import numba

        return f"kernels: numba {numba.__version__} (veduta/world/jit.py)"
    return "kernels: none, the numpy path (numba not installed, or VEDUTA_JIT=0)"


def bench_scale(repeat: int = 3, where: str | None = None, all_repeat: int = 1, only_all: bool = False) -> list[dict]:
    """The issue's table on the largest legal world: each call a whole process (``veduta ...
    --dry-run --json``, as an author or an agent runs it), the median of *repeat* runs, each
    call in turn with the radius-16 call it is compared with (ratios over the same spells of a
    shared machine); then ``inspect world --all`` beside its floor (:func:`heights_floor`, a
    whole process too), *all_repeat* runs each (interleaved); ``only_all``: those two only
    (``python -c "from bench.world_edit import bench_scale, print_scale; print_scale(bench_scale(
    all_repeat=2, only_all=True), 0, 2)"``). Rows: ``{"call", "wall_s", "cpu_s", "peak_mb", "base",
    "wall_x", "cpu_x"}``."""
    import sys

    from bench.cook import _interleaved

    root = _largest_game(where)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        py = [sys.executable, "-m", "veduta"]
        cmds = {}
        for label, argv, _ in SCALE_CASES:
            dry = ["--dry-run"] if argv[0] == "world" else []
            cmds[label] = py + argv + dry + ["--json"]
        floor = [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {here!r}); "
            "from bench.world_edit import heights_floor; print(heights_floor())",
        ]
        every = {label: (py + argv + ["--json"] if argv else floor) for label, argv, _ in ALL_CASES}
        # cook once (inspect reads cooked files), so no run pays for it
        _interleaved({"cook": py + ["cook"]}, root, 1)
        # the compiled kernels (veduta/world/jit.py) compiled or loaded from numba's cache once,
        # on the sample world (extent 64: VEDUTA_JIT=1, as it is below KERNEL_VIEWS), so that no
        # timed run pays for compiling them
        small = _game(where)
        try:
            warm_cmd = ["env", "VEDUTA_JIT=1"] + py + ["inspect", "world", "valley", "--all", "--json"]
            warm = _interleaved({"warm": warm_cmd}, small, 1)["warm"]
            KERNELS["warm_s"] = warm[0]
        finally:
            shutil.rmtree(small, ignore_errors=True)
        got = {} if only_all else _interleaved(cmds, root, repeat)
        got.update(_interleaved(every, root, all_repeat))
        rows = []
        for label, _, base in ([] if only_all else SCALE_CASES) + ALL_CASES:
            wall, _, peak, cpu = got[label]
            row = {"call": label, "wall_s": wall, "cpu_s": cpu, "peak_mb": peak / 1024, "base": base}
            if base:
                row["wall_x"], row["cpu_x"] = wall / got[base][0], cpu / got[base][3]
            rows.append(row)
        return rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


def print_scale(rows: list[dict], repeat: int, all_repeat: int = 1) -> None:
    print(
        f"world at scale: valley at extent {LARGEST_EXTENT} (cells -8192..8191, 268 million), whole processes "
        f"(dry run, --json), median of {repeat}, each beside the radius-16 call it is compared with; goal 3x"
    )
    print(f"  {'call':48} {'wall':>8} {'cpu':>8} {'peak':>7}   ratio (wall, cpu)")
    for r in rows:
        if r["call"] == FLOOR_LABEL:
            print(
                f"inspect world --all beside its floor (one pass of the generator's ground heights over every "
                f"cell, a whole process), {'median of ' if all_repeat > 1 else ''}{all_repeat} run(s); goal 3x"
            )
            warm = f"; compiled or loaded before timing in {KERNELS['warm_s']:.1f} s" if "warm_s" in KERNELS else ""
            print(f"  {kernels_line()}{warm}")
        ratio = f"{r['wall_x']:6.2f}x {r['cpu_x']:6.2f}x" if r["base"] else ""
        print(f"  {r['call']:48} {r['wall_s']:7.2f}s {r['cpu_s']:7.2f}s {r['peak_mb']:5.0f}MB   {ratio}")
