"""inspect model: counts, lod_triangles, findings, exit statuses, text and JSON."""

from __future__ import annotations

import argparse
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from veduta.base.project import Project
from veduta.faces.cli.inspect_model import add_inspect_model
from veduta.tools.inspect_model import (
    exit_status,
    inspect_model,
    mirror_mismatch,
)

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "assets" / "models"

ROBOT = (MODELS / "robot.vmodel").read_text()
# The robot with its left hand placed by hand, 2 cm off the mirror image of the right one.
ROBOT_ASYMMETRIC = ROBOT.replace(
    '{ "shape": "mirror", "axis": "x", "of": 3 }',
    '{ "shape": "sphere", "radius": 0.12, "segments": 12, "rings": 6, '
    '"position": [-0.72, 0.82, 0.1], "material": "hand" }',
)
assert ROBOT_ASYMMETRIC != ROBOT

BOXES_WITH_LOD = """{
  "veduta": "model/1",
  "lod": [ { "distance": 10 } ],
  "parts": [ { "shape": "box", "size": [1, 1, 1] }, { "shape": "plane", "size": [2, 2] } ]
}"""

BROKEN = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "radius": 0.5}]}'
BROKEN_COL = BROKEN.index("0.5") + 1

BUSY = """{
  "veduta": "model/1",
  "triangle_budget": 100,
  "draw_distance": 50,
  "lod": [ { "distance": 20 }, { "distance": 60, "model": "ghost" } ],
  "parts": [ { "shape": "sphere", "radius": 1, "segments": 16, "rings": 8 } ]
}"""


@pytest.fixture
def project(tmp_path) -> Project:
    (tmp_path / "pyproject.toml").write_text("[tool.veduta]\n")
    models = tmp_path / "assets" / "models"
    models.mkdir(parents=True)
    for p in MODELS.glob("*.vmodel"):
        shutil.copy(p, models / p.name)
    extra = models / "extra"
    extra.mkdir()
    (extra / "robot_asym.vmodel").write_text(ROBOT_ASYMMETRIC.replace('"name": "robot"', '"name": "robot_asym"'))
    (extra / "boxes.vmodel").write_text(BOXES_WITH_LOD)
    (extra / "busy.vmodel").write_text(BUSY)
    (extra / "broken.vmodel").write_text(BROKEN)
    (extra / "far_broken.vmodel").write_text(
        '{"veduta": "model/1", "lod": [{"distance": 5, "model": "broken"}], '
        '"parts": [{"shape": "box", "size": [1, 1, 1]}]}'
    )
    return Project.at(str(tmp_path))


def codes(report: dict) -> list[tuple[str, str]]:
    return [(f["severity"], f["code"]) for f in report["findings"]]


def test_tree_counts_and_levels(project):
    r = inspect_model(project, "tree")
    assert r["status"] == "ok" and exit_status(r) == 0 and r["errors"] == []
    assert r["triangles"] == 152
    assert [(p["index"], p["shape"], p["material"], p["triangles"]) for p in r["parts"]] == [
        (0, "cylinder", "bark", 32),
        (1, "sphere", "leaf", 120),
    ]
    assert r["lod_triangles"] == [40, 20]  # level 2 is tree_far's own triangles
    assert r["lods"] == [
        {"distance": 15.0, "model": "", "triangles": 40},
        {"distance": 35.0, "model": "tree_far", "triangles": 20},
    ]
    assert r["bounds"] == {"min": [-0.7, 0.0, -0.7], "max": [0.7, 2.3, 0.7]}
    assert r["materials"] == ["bark", "leaf"]
    assert r["draw_distance"] == 80.0
    assert r["findings"] == []


@pytest.mark.parametrize("name", sorted(p.stem for p in MODELS.glob("*.vmodel")))
def test_samples_have_no_findings(project, name):
    r = inspect_model(project, name)
    assert r["findings"] == [] and exit_status(r) == 0


def test_symmetric_robot_passes_and_asymmetric_variant_fails(project):
    assert codes(inspect_model(project, "robot")) == []
    r = inspect_model(project, "robot_asym")
    assert codes(r) == [("error", "MESH_ASYMMETRIC")]
    f = r["findings"][0]
    assert f["part"] == 3 and f["path"] == "symmetry"
    assert "in part(s) 3, 4" in f["message"]
    assert r["status"] == "findings" and exit_status(r) == 1


def test_lod_that_saves_nothing(project):
    r = inspect_model(project, "boxes")
    assert r["lod_triangles"] == [14] and r["triangles"] == 14
    assert codes(r) == [("warning", "MESH_LOD_NO_GAIN")]
    assert r["findings"][0]["message"] == "level 1 (10 m) draws 14 triangles, no fewer than the 14 before it"
    assert exit_status(r) == 0


def test_findings_most_severe_first(project):
    r = inspect_model(project, "busy")
    assert r["triangles"] == 224 and r["lod_triangles"] == [48, None]
    assert codes(r) == [
        ("error", "MESH_OVER_BUDGET"),
        ("error", "MESH_LOD_MISSING_MODEL"),
        ("warning", "MESH_LOD_NEVER_DRAWN"),
    ]
    over, missing, never = r["findings"]
    assert over["message"] == "224 triangles, over the triangle_budget of 100"
    assert missing["path"] == "lod[1].model" and '"ghost"' in missing["message"]
    assert never["path"] == "lod[1].distance"
    assert exit_status(r) == 1


def test_lod_naming_an_invalid_model(project):
    r = inspect_model(project, "far_broken")
    assert codes(r) == [("error", "MESH_LOD_INVALID_MODEL")] and r["lod_triangles"] == [None]


def test_source_errors_and_missing_model(project):
    r = inspect_model(project, "broken")
    assert r["status"] == "invalid" and exit_status(r) == 1
    assert [e["text"] for e in r["errors"]] == [
        f"{project.source_path('models/extra/broken.vmodel')}:1:{BROKEN_COL}: parts[0].radius: not used by shape box"
    ]
    # the source's errors are findings too, for a reader of findings alone
    assert [(f["code"], f["severity"], f["message"], f["path"], f["line"], f["col"]) for f in r["findings"]] == [
        ("MODEL_SOURCE_ERROR", "error", r["errors"][0]["text"], "parts[0].radius", 1, BROKEN_COL)
    ]
    r = inspect_model(project, "nope")
    assert r["status"] == "missing" and exit_status(r) == 2 and r["findings"] == []


def run(project, *argv) -> tuple[int, str, str]:
    ap = argparse.ArgumentParser(prog="veduta")
    sub = ap.add_subparsers(dest="command")
    inspect = sub.add_parser("inspect").add_subparsers(dest="what")
    add_inspect_model(inspect)
    args = ap.parse_args(["inspect", "model", *argv])
    args.project = project
    out, err = io.StringIO(), io.StringIO()
    return args.func(args, out, err), out.getvalue(), err.getvalue()


def test_cli_text(project):
    status, out, err = run(project, "tree")
    assert status == 0 and err == ""
    assert out == (
        "model tree (models/tree.vmodel)\n"
        "triangles: 152, vertices: 139\n"
        "  part   0  cylinder  bark      32\n"
        "  part   1  sphere    leaf     120\n"
        "lod_triangles: 40 from 15 m, 20 from 35 m (tree_far)\n"
        "draw_distance: 80 m\n"
        "bounds: (-0.7, 0, -0.7) .. (0.7, 2.3, 0.7)\n"
        "materials: bark, leaf\n"
        "findings: none\n"
    )
    status, out, _ = run(project, "busy")
    assert status == 1
    assert out.endswith(
        "findings:\n"
        "  error: MESH_OVER_BUDGET: 224 triangles, over the triangle_budget of 100\n"
        '  error: MESH_LOD_MISSING_MODEL: level 2 (60 m) names model "ghost", which does not exist\n'
        "  warning: MESH_LOD_NEVER_DRAWN: level 2 starts at 60 m, not before draw_distance 50 m: it is never drawn\n"
    )


def test_cli_json_and_exit_statuses(project):
    status, out, _ = run(project, "robot_asym", "--json")
    assert status == 1
    assert json.loads(out) == inspect_model(project, "robot_asym")
    status, out, err = run(project, "broken")
    assert status == 1 and out == ""
    assert err.endswith(f"broken.vmodel:1:{BROKEN_COL}: parts[0].radius: not used by shape box\n")
    status, out, err = run(project, "nope")
    assert status == 2 and 'no model "nope" under ' in err


def test_mirror_mismatch_tolerance():
    rng = np.random.default_rng(7)
    half = rng.uniform(0.1, 1.0, size=(50, 3))
    pts = np.concatenate([half, half * [-1, 1, 1]])
    assert not mirror_mismatch(pts, "x", 1e-5).any()
    jitter = pts + rng.uniform(-2e-7, 2e-7, size=pts.shape)
    assert not mirror_mismatch(jitter, "x", 1e-5).any()
    moved = pts.copy()
    moved[3, 1] += 1e-3
    bad = mirror_mismatch(moved, "x", 1e-5)
    assert np.flatnonzero(bad).tolist() == [3, 53]
    assert mirror_mismatch(pts, "z", 1e-5).all()
