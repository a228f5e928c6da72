"""make bench must keep working: a tiny run of the cook benchmark."""

from __future__ import annotations

from veduta.bench import bench_cook, make_game


def test_generated_game_cooks_and_the_bench_reports(tmp_path):
    r = bench_cook(30, 2, 1, str(tmp_path))
    assert r["first_summary"].startswith("cook: 30 cooked, 0 up to date")
    assert r["noop"] > 0 and r["floor"] > 0 and r["settle"] > 0
    make_game(str(tmp_path / "g"), 3)
    assert len(list((tmp_path / "g" / "assets" / "models").rglob("*.vmodel"))) == 3
