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
    ("terrain_sea_replace", "world_terrain", dict(name="west_sea", kind="sea", cell=(-800, 0), radius=640,
                                                  height=-0.5)),
    ("vegetation_area", "world_vegetation", dict(name="daisies", model="poppy", density=0.5, cell=(-20, -20),
                                                 radius=8)),
    ("vegetation_world", "world_vegetation", dict(name="ferns", model="grass_tuft", density=0.2,
                                                  biomes=["forest"])),
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
