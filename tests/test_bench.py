"""make bench must keep working: a tiny run of the cook benchmark."""

from __future__ import annotations

import pytest

from bench.cook import bench_cook, make_game


def test_generated_game_cooks_and_the_bench_reports(tmp_path):
    r = bench_cook(30, 2, 1, str(tmp_path))
    assert r["first_summary"].startswith("cook: 30 cooked, 0 up to date")
    assert r["noop"] > 0 and r["floor"] > 0 and r["settle"] > 0
    assert r["check"] > 0 and r["check_one"] > 0 and r["check_all"] > 0 and r["why"] > 0
    # issue 23's no-op goals: the no-op beside the stat floor and ninja, and with the monitor running
    assert r["goal_noop"] > 0 and r["goal_stat"] > 0 and r["goal_monitor"] > 0 and r["goal_startup"] > 0
    assert r["goal_monitor_said"].startswith("cook: 0 cooked, 30 up to date")
    make_game(str(tmp_path / "g"), 3)
    assert len(list((tmp_path / "g" / "assets" / "models").rglob("*.vmodel"))) == 3


def test_world_editing_bench_reports_every_command(tmp_path):
    from bench.world_edit import CASES, bench_edit

    r = bench_edit(1, str(tmp_path))
    assert all(r[f"edit_{key}_dry_s"] > 0 for key, _, _ in CASES)
    assert r["edit_floor_compile_valley_s"] > 0 and r["edit_place_and_remove_written_s"] > 0
    assert not list(tmp_path.iterdir())  # the copied game is gone


def test_the_floor_of_inspect_all_is_every_height_and_the_table_prints_every_row(tmp_path, monkeypatch, capsys):
    """heights_floor (the floor of inspect world --all) sums the generator's ground heights over
    every vertex of the world, as one rectangle gives them; print_scale prints every row of the
    issue 22 table, --all beside that floor."""
    from bench.games import sample_game
    from bench.world_edit import ALL_CASES, FLOOR_LABEL, SCALE_CASES, heights_floor, print_scale
    from veduta.base.project import Project
    from veduta.tools.world_edit import load_world_source

    root = str(tmp_path / "g")
    sample_game(root)
    monkeypatch.chdir(root)
    ws = load_world_source(Project.at(root), "valley")
    gen = ws.generator(ws.world)
    n = gen.p.cells
    assert heights_floor(rows=100) == int(gen.heights(-n, -n, 2 * n + 1, 2 * n + 1).sum())
    rows = [
        {"call": label, "wall_s": 1.0 + k, "cpu_s": 0.5, "peak_mb": 60.0, "base": base}
        | ({"wall_x": 1.0 + k, "cpu_x": 1.0} if base else {})
        for k, (label, _, base) in enumerate(SCALE_CASES + ALL_CASES)
    ]
    print_scale(rows, 3)
    out = capsys.readouterr().out
    assert all(f"  {label:48} " in out for label, _, _ in SCALE_CASES + ALL_CASES)
    assert f"  {FLOOR_LABEL:48} " in out.split("beside its floor")[1]


def test_language_server_bench_reports(tmp_path):
    """A short run of bench/lsp.py: every figure there, the server gone with status 0."""
    import pytest

    pytest.importorskip("pygls")
    from bench.lsp import bench_lsp

    r = bench_lsp(edits=4, world_edits=2, large_edits=2)
    medians = [k for k in r if k.endswith("median_s")]
    assert len(medians) == 3 and all(r[k] > 0 for k in medians)
    assert r["exit status"] == 0


def test_pictures_bench_reports_each_picture_against_its_floor():
    from bench.pictures import bench_pictures

    r = bench_pictures(1)
    assert r["preview_world_320x240_s"] > 0 and r["preview_world_floor_drawing_model_s"] > 0
    assert r["preview_model_512px_s"] > 0 and r["preview_model_floor_blank_sheet_s"] > 0
    assert r["preview_world_ratio"].endswith("x") and r["preview_model_cells"] == 6


@pytest.mark.parametrize(
    "args, said",
    [
        (["--repeat", "0"], "expected at least 1, not 0"),
        (["--jobs", "-1"], "expected at least 1, not -1"),
        (["--first-repeat", "x"], "expected a whole number, not 'x'"),
    ],
)
def test_counts_out_of_range_are_argparse_errors_not_tracebacks(args, said, capsys):
    from bench.cook import main

    with pytest.raises(SystemExit) as stop:
        main([*args, "--skip-cook"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
