"""veduta check, veduta why and the diagnostics formats, as a user runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess

from tests.gamerepo import BAD, TREE_FAR, Game

MATERIAL = '{ "veduta": "material/1", "albedo": "#8a6a40" }\n'
#: a model whose far level names a model that does not exist: a warning, not an error
GHOST = """{
  "veduta": "model/1",
  "lod": [ { "distance": 20, "model": "ghost" } ],
  "parts": [ { "shape": "box", "size": [1, 1, 1] } ]
}
"""


def veduta(game: Game, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return game.veduta(*args, env=env)


def tree_state(root) -> dict:
    """Every file and folder under the game with its size and mtime."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.stat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


# -- check ---------------------------------------------------------------------------------------


def test_check_reports_what_the_cook_reports_and_writes_nothing(game):
    game.write("models/bad.vmodel", BAD)
    game.write("models/lonely.vmodel", GHOST)
    before = tree_state(game.root)
    cp = veduta(game, "check")
    assert cp.returncode == 1
    assert tree_state(game.root) == before  # no cooked file, no cache, no doit database
    lines = cp.stdout.splitlines()
    assert "assets/models/bad.vmodel:4:52: parts[0].radius: not used by shape box" in lines
    assert "assets/models/bad.vmodel:5:68: parts[1].segments: 2 out of range [3, 256]" in lines
    # a missing reference is a warning, as in the cook
    assert (
        'assets/models/lonely.vmodel:3:39: lod[0].model: warning: model "ghost" does not exist (not checked)' in lines
    )
    assert "check: 6 sources, 3 errors, 1 warning " in cp.stderr
    # the same lines as the cook prints
    cook = game.cook()
    for line in lines:
        assert line in cook.stdout


def test_check_passes_with_warnings_only_and_checks_named_sources(game):
    game.write("models/lonely.vmodel", GHOST)
    cp = veduta(game, "check")
    assert cp.returncode == 0 and "1 warning" in cp.stderr, cp.stdout + cp.stderr
    game.write("models/bad.vmodel", BAD)
    cp = veduta(game, "check", "assets/models/tree.vmodel", "models/tree_far.vmodel")
    assert cp.returncode == 0 and cp.stdout == "" and "check: 2 sources, 0 errors, 0 warnings" in cp.stderr
    cp = veduta(game, "check", "assets/models/bad.vmodel")
    assert cp.returncode == 1 and "check: 1 source, 3 errors" in cp.stderr
    cp = veduta(game, "check", "models/nope.vmodel")
    assert cp.returncode == 2 and "no such source: models/nope.vmodel" in cp.stderr and "Traceback" not in cp.stderr


def test_check_references_and_duplicate_names(game):
    game.write("materials/crate_wood.vmaterial", MATERIAL)
    cp = veduta(game, "check", "--json")
    result = json.loads(cp.stdout)
    assert result == {
        "ok": True,
        "checked": 5,
        "compiled": 5,
        "fresh": 0,
        "errors": 0,
        "warnings": 0,
        "strict": False,
        "strict_errors": 0,
        "diagnostics": [],
    }
    game.write("models/more/crate.vmodel", (game.root / "assets/models/crate.vmodel").read_text())
    cp = veduta(game, "check", "--json")
    result = json.loads(cp.stdout)
    assert cp.returncode == 1 and result["errors"] == 2
    assert all("names must be unique per kind" in d["message"] for d in result["diagnostics"])


def test_format_json_is_one_object_per_line(game):
    game.write("models/bad.vmodel", BAD)
    game.write("models/lonely.vmodel", GHOST)
    cp = veduta(game, "check", "--format", "json")
    assert cp.returncode == 1
    objs = [json.loads(line) for line in cp.stdout.splitlines()]
    assert len(objs) == 4
    first = next(o for o in objs if o["path"] == "parts[0].radius")
    assert first == {
        "file": "assets/models/bad.vmodel",
        "line": 4,
        "col": 52,
        "path": "parts[0].radius",
        "severity": "error",
        "message": "not used by shape box",
    }
    warn = next(o for o in objs if o["severity"] == "warning")
    assert warn["code"] == "MISSING_REFERENCE" and warn["file"] == "assets/models/lonely.vmodel"
    # the summary on stderr, as the cook's (a CI log keeps the count; stdout stays diagnostics only)
    assert re.fullmatch(r"check: 6 sources, 3 errors, 1 warning \(\d+\.\d\d s\)\n", cp.stderr), cp.stderr


def test_format_github_annotations_and_the_environment_variable(game):
    game.write("models/bad.vmodel", BAD)
    game.write("models/lonely.vmodel", GHOST)
    cp = veduta(game, "check", env={"VEDUTA_FORMAT": "github"})
    lines = cp.stdout.splitlines()
    assert (
        "::error file=assets/models/bad.vmodel,line=5,col=68,title=parts[1].segments::"
        "parts[1].segments: 2 out of range [3, 256]" in lines
    )
    assert (
        "::warning file=assets/models/lonely.vmodel,line=3,col=39,title=MISSING_REFERENCE::"
        'lod[0].model: model "ghost" does not exist (not checked)' in lines
    )
    assert all(line.startswith(("::error ", "::warning ")) for line in lines)
    assert cp.stderr.startswith("check: 6 sources, 3 errors, 1 warning ("), cp.stderr


def test_format_on_cook_and_doit_cook(game):
    game.write("models/bad.vmodel", BAD)
    game.write("models/lonely.vmodel", GHOST)
    cp = veduta(game, "cook", "--format", "json")
    assert cp.returncode != 0
    objs = [json.loads(line) for line in cp.stdout.splitlines() if line.startswith("{")]
    assert {o["path"] for o in objs if o["severity"] == "error"} == {
        "parts[0].radius",
        "parts[1].segments",
        "parts[2].of",
    }
    assert any(o["severity"] == "warning" for o in objs)
    game.write("models/bad.vmodel", BAD.replace('"segments": 2', '"segments": 3'))
    cp = game.cook(env={"VEDUTA_FORMAT": "github"})
    lines = [line for line in cp.stdout.splitlines() if line.startswith("::")]
    assert lines and all(line.startswith(("::error ", "::warning ")) for line in lines)
    assert any("title=parts[0].radius::" in line for line in lines)


# -- why -----------------------------------------------------------------------------------------


def why(game: Game, *args: str) -> dict:
    cp = veduta(game, "why", "--json", *args)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return {item["source"]: [r["code"] for r in item["reasons"]] for item in json.loads(cp.stdout)["stale"]}


def test_why_tells_each_reason(game):
    assert why(game) == {
        s: ["NEVER_COOKED"]
        for s in ["models/crate.vmodel", "models/props/barrel.vmodel", "models/tree.vmodel", "models/tree_far.vmodel"]
    }
    game.cook(check=True)
    cp = veduta(game, "why")
    assert cp.returncode == 0 and cp.stdout.startswith("nothing is stale (4 sources up to date)")

    before = tree_state(game.root)
    game.write("models/crate.vmodel", (game.root / "assets/models/crate.vmodel").read_text() + "\n")
    assert why(game) == {"models/crate.vmodel": ["SOURCE_CHANGED"]}
    game.write("models/tree_far.vmodel", (game.root / "assets/models/tree_far.vmodel").read_text() + " ")
    assert why(game) == {
        "models/crate.vmodel": ["SOURCE_CHANGED"],
        "models/tree.vmodel": ["DEP_CHANGED"],
        "models/tree_far.vmodel": ["SOURCE_CHANGED"],
    }
    # (when tree_far was written less than 2 s before the cook, the stat cache kept no signature
    # of it, and the message adds "(or was written just before the last cook)")
    line = next(x for x in veduta(game, "why").stdout.splitlines() if x.startswith("assets/models/tree.vmodel"))
    assert line.startswith("assets/models/tree.vmodel: models/tree_far.vmodel changed") and line.endswith(
        "[DEP_CHANGED]"
    )
    game.cook(check=True)
    assert why(game) == {}
    game.write("models/lonely.vmodel", GHOST)
    game.cook()
    game.write("models/ghost.vmodel", TREE_FAR)
    assert why(game, "assets/models/lonely.vmodel") == {"models/lonely.vmodel": ["DEP_APPEARED"]}
    game.cook(check=True)

    (game.root / "assets/models/tree_far.vmodel").unlink()
    assert why(game) == {"models/tree.vmodel": ["DEP_DISAPPEARED"]}
    game.write("models/tree_far.vmodel", "{}")
    game.cook()
    os.unlink(game.cooked("models/crate.vda"))
    p = game.cooked("models/barrel.vda")
    data = bytearray(p.read_bytes())
    data[-3] ^= 0xFF
    p.write_bytes(bytes(data))
    result = json.loads(veduta(game, "why", "--json").stdout)
    reasons = {i["source"]: i["reasons"] for i in result["stale"]}
    assert [r["code"] for r in reasons["models/crate.vmodel"]] == ["COOKED_MISSING"]
    assert [r["code"] for r in reasons["models/props/barrel.vmodel"]] == ["COOKED_DAMAGED"]
    assert "CRC" in reasons["models/props/barrel.vmodel"][0]["message"]
    assert [r["code"] for r in reasons["models/tree_far.vmodel"]] == ["NEVER_COOKED"]  # its cook failed
    assert os.path.exists(game.root / "cache")
    assert {k: v for k, v in tree_state(game.root).items() if k.startswith("cache")} != before  # cooks wrote


def test_why_writes_nothing_and_doit_list_status_still_works(game):
    game.cook(check=True)
    game.write("models/crate.vmodel", (game.root / "assets/models/crate.vmodel").read_text() + "\n")
    before = tree_state(game.root)
    assert why(game) == {"models/crate.vmodel": ["SOURCE_CHANGED"]}
    assert tree_state(game.root) == before
    cp = game.doit("list", "--all", "--status", check=True)
    assert "R cook:models/crate.vmodel" in cp.stdout and "U cook:models/tree.vmodel" in cp.stdout


def test_why_without_the_stat_cache_still_explains(game):
    game.write("models/lonely.vmodel", GHOST)
    game.cook()
    for f in (game.root / "cache").iterdir():
        if f.is_file():
            f.unlink()
    game.write("models/ghost.vmodel", TREE_FAR)
    assert why(game) == {"models/ghost.vmodel": ["NEVER_COOKED"], "models/lonely.vmodel": ["DEP_APPEARED"]}
    game.write("models/tree.vmodel", (game.root / "assets/models/tree.vmodel").read_text() + "\n")
    assert why(game, "models/tree.vmodel") == {"models/tree.vmodel": ["CHANGED"]}


def test_check_trusts_fresh_cooked_files_unless_all(game):
    game.write("models/lonely.vmodel", GHOST)
    game.cook()
    before = tree_state(game.root)
    cp = veduta(game, "check", "--json")
    result = json.loads(cp.stdout)
    assert result["ok"] and (result["checked"], result["fresh"], result["compiled"]) == (5, 5, 0)
    # as a no-op cook, known-good sources are not compiled again; the warning their cook recorded
    # stands, the very diagnostic a compile gives
    assert result["warnings"] == 1
    standing = result["diagnostics"]
    cp = veduta(game, "check", "--all", "-n", "2", "--json")
    result = json.loads(cp.stdout)
    assert (result["fresh"], result["compiled"], result["warnings"]) == (0, 5, 1)
    assert result["diagnostics"] == standing and standing[0]["code"] == "MISSING_REFERENCE"
    game.write("models/tree_far.vmodel", BAD)  # tree depends on it: both are compiled again
    result = json.loads(veduta(game, "check", "--json").stdout)
    assert (result["fresh"], result["compiled"], result["errors"]) == (3, 2, 3)
    assert {d["file"] for d in result["diagnostics"] if d["severity"] == "error"} == {"assets/models/tree_far.vmodel"}
    assert {k: v for k, v in tree_state(game.root).items() if not k.startswith("assets/models/tree_far")} == {
        k: v for k, v in before.items() if not k.startswith("assets/models/tree_far")
    }


def test_check_in_batches_finds_what_one_by_one_finds(game):
    from veduta.base.project import AssetIndex, Project
    from veduta.tools.check import check_sources

    game.write("models/bad.vmodel", BAD)
    game.write("models/lonely.vmodel", GHOST)
    for i in range(12):
        game.write(f"models/many/m{i:02d}.vmodel", BAD if i % 5 == 0 else GHOST)
    project = Project.at(str(game.root))
    sources, _ = project.scan()
    index = AssetIndex.from_paths(s.rel for s in sources)
    jobs = [(s, None) for s in sources]
    batched = check_sources(project, jobs, index)
    single = [check_sources(project, [job], index)[0] for job in jobs]
    assert batched == single
    assert sum(len(d) for d in batched) == 3 * 4 + 10  # 4 bad models, 10 with a missing lod model


def test_the_sample_game_checks_clean():
    """The repo's own sample game has no error (every source compiled, nothing written)."""
    from veduta import api
    from veduta.base.project import Project

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    result = api.check(Project.at(root), full=True)
    assert result["ok"] and result["checked"] == result["compiled"] > 50, [
        d for d in result["diagnostics"] if d["severity"] == "error"
    ]


def test_why_of_an_unknown_source_is_a_usage_mistake(game):
    game.write("models/tree_far.vmodel", TREE_FAR)
    cp = veduta(game, "why", "models/nope.vmodel")
    assert cp.returncode == 2 and "no such source: models/nope.vmodel" in cp.stderr and "Traceback" not in cp.stderr


#: a model whose parts name a material that exists, one that does not, and a mirror with its own
#: missing material (a mirror without one inherits its source part's)
PAINTED = """{
  "veduta": "model/1",
  "parts": [
    { "shape": "box", "size": [1, 1, 1], "material": "oak" },
    { "shape": "box", "size": [1, 1, 1], "position": [2, 0, 0], "material": "okra" },
    { "shape": "mirror", "axis": "x", "of": 1 },
    { "shape": "mirror", "axis": "x", "of": 0, "material": "gilt" }
  ]
}
"""


def test_a_missing_part_material_is_the_same_warning_in_check_and_cook(game):
    game.write("materials/oak.vmaterial", MATERIAL)
    game.write("models/painted.vmodel", PAINTED)
    want = [
        'assets/models/painted.vmodel:5:77: parts[1].material: warning: material "okra" does not exist (not checked)',
        'assets/models/painted.vmodel:7:60: parts[3].material: warning: material "gilt" does not exist (not checked)',
    ]
    cp = veduta(game, "check", "--all", "models/painted.vmodel")
    assert cp.returncode == 0 and cp.stdout.splitlines() == want, cp.stdout + cp.stderr
    checked = json.loads(veduta(game, "check", "--json", "--all", "models/painted.vmodel").stdout)
    assert [d["code"] for d in checked["diagnostics"]] == ["MISSING_REFERENCE"] * 2
    # the cook's diagnostics are check's, field for field
    cook = veduta(game, "cook", "--format", "json", "models/painted.vmodel")
    assert cook.returncode == 0 and [json.loads(line) for line in cook.stdout.splitlines()] == checked["diagnostics"]

    # no material is a META dependency (the mesh keeps their names only; the spec's crate names
    # crate_wood with "deps": []): whether each exists is the cook's own state
    meta = json.loads(veduta(game, "dump", "assets/.cooked/models/painted.vda").stdout)["chunks"][0]["meta"]
    assert meta["deps"] == [] and meta["compiler"] == "veduta-asset/0.8.0"
    game.write("materials/oak.vmaterial", MATERIAL.replace("8a6a40", "123456"))  # editing one changes nothing
    assert "painted" not in veduta(game, "why", "models/painted.vmodel").stdout
    assert "cook: 2 warnings stand in 1 up-to-date source" in game.cook("cook:models/painted.vmodel").stdout
    game.write("materials/okra.vmaterial", MATERIAL)  # adding a missing one makes the model stale ...
    why = veduta(game, "why", "models/painted.vmodel").stdout
    assert why == (
        "assets/models/painted.vmodel: material okra exists now as materials/okra.vmaterial "
        "(it was missing) [REFERENCE_APPEARED]\n"
    ), why
    cp = veduta(game, "check", "models/painted.vmodel")  # ... and the check compiles it again
    assert cp.stdout.splitlines() == want[1:], cp.stdout
    cook = game.cook()  # ... and so does the cook, though the cooked file's META is fresh
    assert cook.stdout.splitlines()[0] == want[1] and "cook: 7 cooked" in cook.stdout, cook.stdout
    assert "painted" not in veduta(game, "why").stdout
    (game.root / "assets/materials/oak.vmaterial").unlink()  # removing one that was there: stale again
    assert "[REFERENCE_GONE]" in veduta(game, "why", "models/painted.vmodel").stdout
    cook = game.cook()
    assert 'parts[0].material: warning: material "oak" does not exist' in cook.stdout, cook.stdout


def test_lines_end_at_a_lone_cr_and_at_crlf_as_at_lf_in_check_and_cook(game):
    """The spec's bad crate written with "\\r\\n" and with lone "\\r" line ends: veduta check (text
    and --json) and the cook print its errors at the lines and columns of the "\\n" file, as
    editors and the language server count lines. Before, a lone-"\\r" file's were all on line 1."""
    path = game.root / "assets" / "models" / "bad.vmodel"

    def mine(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln.startswith("assets/models/bad.vmodel:")]

    game.write("models/bad.vmodel", BAD)
    want = mine(veduta(game, "check").stdout)
    assert len(want) == 3 and want[0].startswith("assets/models/bad.vmodel:4:52: "), want
    want_json = json.loads(veduta(game, "check", "--json").stdout)["diagnostics"]
    for end in ("\r\n", "\r"):
        path.write_bytes(BAD.replace("\n", end).encode())
        assert mine(veduta(game, "check").stdout) == want, repr(end)
        assert json.loads(veduta(game, "check", "--json").stdout)["diagnostics"] == want_json
        assert mine(game.cook().stdout) == want
