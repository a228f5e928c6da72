"""The MCP tools deps, rename and report: the real server, the SDK's client, the CLI's --json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from tests.test_mcp import REPO, cli_json, serve, text_of  # noqa: E402


@pytest.fixture
def sample_game(tmp_path) -> Path:
    """A game repo holding the repository's sample assets (nothing cooked)."""
    root = tmp_path / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    return root


def test_deps_rename_and_report_over_mcp(sample_game):
    async def body(s):
        out = {}
        out["deps"] = await s.call_tool("deps", {"name": "bark", "reverse": True})
        out["all"] = await s.call_tool("deps", {"name": "valley", "depth": 0, "dot": True})
        out["orphans"] = await s.call_tool("deps", {"orphans": True})
        out["dry"] = await s.call_tool("rename", {"kind": "material", "old": "bark", "new": "wood", "dry_run": True})
        out["taken"] = await s.call_tool("rename", {"kind": "material", "old": "bark", "new": "leaf"})
        out["unknown"] = await s.call_tool("deps", {"name": "barkk"})
        out["cook"] = await s.call_tool("cook", {})
        out["report"] = await s.call_tool("report", {"html": "report.html"})
        out["outside"] = await s.call_tool("report", {"html": "../report.html"})
        return out

    async def rename(s):
        return {"rename": await s.call_tool("rename", {"kind": "material", "old": "bark", "new": "wood"})}

    r = serve(sample_game, body)
    for name in ("deps", "all", "orphans", "dry", "cook", "report"):
        assert not r[name].is_error, (name, text_of(r[name]))
        assert json.loads(text_of(r[name])) == r[name].structured_content, name
    assert r["deps"].structured_content == cli_json(sample_game, "deps", "bark", "--reverse")
    assert r["all"].structured_content == cli_json(sample_game, "deps", "valley", "--depth", "all", "--dot")
    assert r["all"].structured_content["dot"].startswith("digraph deps {")
    assert r["orphans"].structured_content["unused"] == [
        {"kind": "material", "name": "ground", "source": "materials/ground.vmaterial"}]
    dry = r["dry"].structured_content
    assert dry["written"] is False and len(dry["edits"]) == 5 and dry["to"] == "assets/materials/wood.vmaterial"
    assert r["taken"].is_error and 'material "leaf" exists already' in text_of(r["taken"])
    assert r["unknown"].is_error and 'no asset "barkk" (did you mean bark or brick?)' in text_of(r["unknown"])
    report = r["report"].structured_content
    assert report["html"] == "report.html" and (sample_game / "report.html").is_file()
    assert report["total"]["cooked"] == report["total"]["assets"] > 50
    assert r["outside"].is_error and "outside the game root" in text_of(r["outside"])
    r = serve(sample_game, rename)
    assert json.loads(text_of(r["rename"])) == r["rename"].structured_content
    assert r["rename"].structured_content["written"] is True
    assert (sample_game / "assets/materials/wood.vmaterial").is_file()
    assert not (sample_game / "assets/materials/bark.vmaterial").exists()
