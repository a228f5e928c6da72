from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from veduta.base.project import Project

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sample(tmp_path, monkeypatch) -> Project:
    """A temporary copy of the repository's sample game (its sources only), the current folder
    (so that paths read as the user sees them: ``assets/models/crate.vmodel``)."""
    root = tmp_path / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked", "*.py"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    monkeypatch.chdir(root)
    return Project.find(".")
