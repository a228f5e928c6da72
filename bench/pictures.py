"""``bench_pictures()``: what the preview images cost (called by ``make bench``), each against a
floor measured in the same run, on a copy of the sample game (cooked first, so the figures are
the drawing, not the cook):

- ``preview world valley --at -66,4 --scale 1`` (the console's 320 x 240 frame and its report, in
  the village: houses, a well, trees and grass), against the floor of the drawing model's own
  decisions for that view (:meth:`veduta.world.draw.Drawer.view`, a fresh drawer: what the
  engine computes anyway);
- ``preview model tree --size 512`` (five 512 px cells: three orthographic views, the perspective
  one and two levels of detail), against the floor of the same sheet with blank cells (layout,
  captions and the PNG encoding, no rasterising).

CPU seconds of this process (user + system), median of ``repeat`` runs; the ratio is the figure
to watch (a shared machine moves both sides alike).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time


def _cpu(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def bench_pictures(repeat: int = 5) -> dict:
    from PIL import Image

    from bench.games import sample_game
    from veduta import api
    from veduta.base.project import Project
    from veduta.cook.cooked import load_world
    from veduta.tools.inspect_world import model_draws, needed_models
    from veduta.tools.preview_texture import _font, _ready, _Sheet
    from veduta.world.draw import Drawer
    from veduta.world.generator import Generator

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "game")
        sample_game(root)
        project = Project.at(root)
        try:
            api.cook(project, None, 1)
        finally:
            os.chdir(here)  # the in-process cook works from the game root
        at = (-66, 4)
        view = api.preview_world(project, "valley", at, None, 1)  # warm: cooked, imported
        gen = Generator(*load_world(project, "valley"))
        models, _, _ = model_draws(project, needed_models(gen))
        world_s = _cpu(lambda: api.preview_world(project, "valley", at, None, 1), repeat)
        floor_w = _cpu(lambda: Drawer(gen, models).view(at, kept=False), repeat)

        model = api.preview_model(project, "tree", None, 512)
        model_s = _cpu(lambda: api.preview_model(project, "tree", None, 512), repeat)

        def blank_sheet() -> None:
            import io

            sheet = _Sheet(_font())
            sheet.add(
                model["cells"][0]["caption"],
                [_ready(Image.new("RGBA", (512, 512), (236, 238, 240, 255)), c["caption"]) for c in model["cells"]],
            )
            sheet.render().save(io.BytesIO(), format="PNG", compress_level=6, optimize=False)

        floor_m = _cpu(blank_sheet, repeat)
    return {
        "preview_world_320x240_s": round(world_s, 3),
        "preview_world_floor_drawing_model_s": round(floor_w, 3),
        "preview_world_ratio": f"{world_s / floor_w:.1f}x",
        "preview_world_triangles": f"{view['draw']['triangles']:,} (budget {view['draw']['budget']:,})",
        "preview_model_512px_s": round(model_s, 3),
        "preview_model_floor_blank_sheet_s": round(floor_m, 3),
        "preview_model_ratio": f"{model_s / floor_m:.1f}x",
        "preview_model_cells": len(model["cells"]),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(bench_pictures(), indent=2))
