"""make bench must keep working: a tiny run of the cook benchmark."""

from __future__ import annotations

from bench.cook import bench_cook, make_game


def test_generated_game_cooks_and_the_bench_reports(tmp_path):
    r = bench_cook(30, 2, 1, str(tmp_path))
    assert r["first_summary"].startswith("cook: 30 cooked, 0 up to date")
    assert r["noop"] > 0 and r["floor"] > 0 and r["settle"] > 0
    assert r["check"] > 0 and r["check_one"] > 0 and r["check_all"] > 0 and r["why"] > 0
    make_game(str(tmp_path / "g"), 3)
    assert len(list((tmp_path / "g" / "assets" / "models").rglob("*.vmodel"))) == 3


def test_world_editing_bench_reports_every_command(tmp_path):
    from bench.world_edit import CASES, bench_edit

    r = bench_edit(1, str(tmp_path))
    assert all(r[f"edit_{key}_dry_s"] > 0 for key, _, _ in CASES)
    assert r["edit_floor_compile_valley_s"] > 0 and r["edit_place_and_remove_written_s"] > 0
    assert not list(tmp_path.iterdir())  # the copied game is gone



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
