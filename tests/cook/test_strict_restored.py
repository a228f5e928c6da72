"""A strict cook's exit status does not depend on where the bytes came from (hostile5 #9).

Warnings fail a cook with ``strict = true``: those of this cook and those that stand from an
earlier compile of a fresh source (its notes, kept by the cook). An output restored from the shared
cache, or found fresh with no record of its notes, has warnings unknown to the cook: a strict cook
compiles it to find them. And the notes of every compile are kept beside the local store, so an
output restored from there keeps watching the materials it names by name only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from tests.gamerepo import Game, make_game
from veduta.cook.state import RACY_NS

MATERIAL = '{ "veduta": "material/1", "albedo": "#8a6a40" }\n'


def painted(material: str, size: int = 1) -> str:
    part = f'{{ "shape": "box", "size": [{size}, 1, 1], "material": "{material}" }}'
    return f'{{ "veduta": "model/1", "parts": [ {part} ] }}\n'


MISSING = 'assets/models/crate.vmodel:1:84: parts[0].material: warning: material "ghost" does not exist (not checked)'
STRICT_FAILED = "cook: failed: 1 warning (strict = true in [tool.veduta] makes every warning an error"


def veduta(game: Game, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args],
        cwd=game.root,
        env=dict(os.environ, **(env or {})),
        capture_output=True,
        text=True,
        timeout=300,
    )


def strict_game(root) -> Game:
    root.mkdir()
    g = Game(root)
    (root / "pyproject.toml").write_text("[tool.veduta]\nstrict = true\n")
    g.write("models/crate.vmodel", painted("ghost"))  # a material that does not exist: a warning
    g.write("models/barrel.vmodel", painted("", 2).replace(', "material": ""', ""))
    return g


def clone(game: Game, where) -> Game:
    shutil.copytree(game.root, where, ignore=shutil.ignore_patterns("cache", ".cooked"))
    return Game(where)


def test_a_strict_cook_of_a_clone_fails_as_the_writers_did_whatever_the_shared_cache_holds(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    ci = strict_game(tmp_path / "ci")
    writes = {"VEDUTA_CACHE_URL": str(share), "VEDUTA_CACHE_WRITE": "1"}
    cp = ci.cook(env=writes)
    assert cp.returncode == 1 and MISSING in cp.stdout and STRICT_FAILED in cp.stdout + cp.stderr, cp.stdout + cp.stderr
    assert "shared cache: uploaded 2 objects" in cp.stdout, cp.stdout  # (a strict writer still uploads)
    want = ci.cooked("models/crate.vda").read_bytes()

    # a fresh clone, strict: compiles (it takes nothing its notes are unknown of), says the
    # warning and fails as the writer did; its next cook: the warning stands, exit 1
    dev = clone(ci, tmp_path / "dev")
    reads = {"VEDUTA_CACHE_URL": str(share)}
    cp = dev.cook(env=reads)
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "cook: 2 cooked, 0 up to date, 0 restored from cache, 0 from the shared cache, 0 failed" in cp.stdout, (
        cp.stdout
    )
    assert MISSING in cp.stdout and STRICT_FAILED in cp.stdout + cp.stderr
    assert dev.cooked("models/crate.vda").read_bytes() == want
    cp = dev.cook(env=reads)
    assert cp.returncode == 1 and "cook: 0 cooked, 2 up to date" in cp.stdout, cp.stdout + cp.stderr
    assert "cook: 1 warning stands in 1 up-to-date source" in cp.stdout + cp.stderr, cp.stdout + cp.stderr

    # a clone that restored from the shared cache without strict (its notes unknown), then a
    # strict cook there: the restored sources are cooked again, the warning said, exit 1
    lax = clone(ci, tmp_path / "lax")
    (lax.root / "pyproject.toml").write_text("[tool.veduta]\n")
    cp = lax.cook(env=reads)
    assert cp.returncode == 0 and "2 from the shared cache" in cp.stdout, cp.stdout + cp.stderr
    (lax.root / "pyproject.toml").write_text("[tool.veduta]\nstrict = true\n")
    cp = lax.cook(env=reads)
    assert cp.returncode == 1 and MISSING in cp.stdout, cp.stdout + cp.stderr
    assert "cook: 2 cooked, 0 up to date" in cp.stdout, cp.stdout
    cp = veduta(lax, "cook", env=reads)  # and veduta cook, as doit cook
    assert cp.returncode == 1 and "1 warning stands" in cp.stdout + cp.stderr, cp.stdout + cp.stderr
    assert lax.cooked("models/crate.vda").read_bytes() == want


def test_an_output_restored_from_the_local_store_still_notices_a_material_deleted(tmp_path):
    """hostile5 #9 (b): model solo_m names material solo; edited, cooked, reverted (restored from
    the store), then solo.vmaterial deleted: the model is stale (REFERENCE_GONE), compiled with its
    warning, and a strict cook exits 1, as a cook of the same sources from scratch does."""
    game = make_game(tmp_path)
    (game.root / "pyproject.toml").write_text("[tool.veduta]\nstrict = true\n")
    game.write("materials/solo.vmaterial", MATERIAL)
    first = painted("solo")
    model = game.write("models/solo_m.vmodel", first)
    assert game.cook().returncode == 0
    model.write_text(painted("solo", 2))
    assert "cook: 1 cooked" in game.cook(check=True).stdout
    model.write_text(first)
    cp = game.cook(check=True)
    assert "cook: 0 cooked, 5 up to date, 1 restored from cache" in cp.stdout, cp.stdout
    (game.root / "assets/materials/solo.vmaterial").unlink()
    why = veduta(game, "why", "models/solo_m.vmodel")
    assert "[REFERENCE_GONE]" in why.stdout, why.stdout + why.stderr
    cp = game.cook()
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "cook: 1 cooked, 4 up to date" in cp.stdout, cp.stdout
    assert 'parts[0].material: warning: material "solo" does not exist' in cp.stdout
    # the same sources cooked from scratch: the same exit status and bytes
    scratch = clone(game, tmp_path / "scratch")
    cp2 = scratch.cook()
    assert cp2.returncode == 1 and "cook: 5 cooked" in cp2.stdout, cp2.stdout
    for rel in ("models/solo_m.vda", "models/crate.vda"):
        assert scratch.cooked(rel).read_bytes() == game.cooked(rel).read_bytes()


def test_a_strict_cook_finds_the_warnings_of_a_fresh_output_whose_notes_it_lost(tmp_path):
    """The cook's state gone (cache/state.marshal deleted): the cooked files are fresh by their META,
    their notes unknown; a strict cook takes them from the notes kept beside the store (no compile)
    and fails as before; with the notes gone too, it compiles the source to find them."""
    game = strict_game(tmp_path / "g")
    assert game.cook().returncode == 1
    (game.root / "cache/state.marshal").unlink()
    cp = game.cook()
    assert cp.returncode == 1 and MISSING in cp.stdout, cp.stdout + cp.stderr
    assert "cook: 0 cooked, 2 up to date" in cp.stdout, cp.stdout
    (game.root / "cache/state.marshal").unlink()
    shutil.rmtree(game.root / "cache/notes")
    cp = game.cook()
    assert cp.returncode == 1 and MISSING in cp.stdout, cp.stdout + cp.stderr
    assert "cook: 2 cooked, 0 up to date" in cp.stdout, cp.stdout


PREFAB = """{
  "veduta": "prefab/1",
  "footprint": [2, 2],
  "entities": [ { "name": "crate", "kind": "prop", "model": "crate" } ]
}
"""


def test_a_referrer_records_the_file_its_name_resolves_to_while_two_sources_share_it(tmp_path):
    """hostile5 #2: while two models share a name (DUPLICATE_NAME, the cook fails), a prefab and a
    model's level of detail naming it kept the dep of their last cook, where a cook from scratch
    records the other file (the first by path): they are stale (DEP_MOVED) and cook again, so every
    cooked file is the one a cook from scratch gives; removing the copy brings them back."""
    game = make_game(tmp_path)
    game.write("prefabs/box.vprefab", PREFAB)
    assert game.cook().returncode == 0
    time.sleep(RACY_NS / 1e9 + 0.1)
    assert "cook: 0 cooked" in game.cook(check=True).stdout  # (records signatures that are not racy)
    crate = (game.root / "assets/models/crate.vmodel").read_text()
    game.write("models/a/crate.vmodel", crate.replace('"size": [1, 1, 1]', '"size": [2, 1, 1]'))
    far = (game.root / "assets/models/tree_far.vmodel").read_text()
    game.write("models/a/tree_far.vmodel", far.replace('"radius": 0.6', '"radius": 0.7'))
    why = veduta(game, "why", "prefabs/box.vprefab", "models/tree.vmodel")
    assert (
        "assets/prefabs/box.vprefab: models/crate.vmodel: the name crate resolves to models/a/crate.vmodel now "
        "[DEP_MOVED]" in why.stdout
    ), why.stdout + why.stderr
    assert "the name tree_far resolves to models/a/tree_far.vmodel now [DEP_MOVED]" in why.stdout, why.stdout
    for _ in range(2):
        cp = game.cook()
        assert cp.returncode == 1, cp.stdout + cp.stderr
        scratch = clone(game, tmp_path / f"scratch{_}")
        assert scratch.cook().returncode == 1
        for rel in ("prefabs/box.vda", "models/tree.vda", "models/barrel.vda"):
            assert game.cooked(rel).read_bytes() == scratch.cooked(rel).read_bytes(), rel
    assert "cook: 0 cooked" in cp.stdout, cp.stdout  # (the second: nothing more to do)
    assert b"models/a/crate.vmodel" in game.cooked("prefabs/box.vda").read_bytes()
    # the copies removed: back to the first files
    (game.root / "assets/models/a/crate.vmodel").unlink()
    (game.root / "assets/models/a/tree_far.vmodel").unlink()
    cp = game.cook()
    assert cp.returncode == 0 and b"models/crate.vmodel" in game.cooked("prefabs/box.vda").read_bytes()


def test_clean_notes_are_links_to_one_file_and_a_new_one_past_the_link_limit(tmp_path, monkeypatch):
    """The note of every compile is kept (no note means unknown), a clean one as a hard link (a new
    file for each cost a full cook a third more CPU); past the links one file may have, a new one."""
    from veduta.cook import cook
    from veduta.cook.state import CLEAN
    from veduta.cook.store import namespace

    monkeypatch.setattr(cook, "CLEAN_NOTE_LINKS", 3)
    keys = [f"{i:064x}" for i in range(5)]
    for k in keys:
        cook.store_notes(str(tmp_path), k, CLEAN)
    cook.store_notes(str(tmp_path), "f" * 64, (("materials/oak.vmaterial",), ()))
    assert [cook.stored_notes(str(tmp_path), k) for k in keys] == [CLEAN] * 5
    assert cook.stored_notes(str(tmp_path), "f" * 64) == (("materials/oak.vmaterial",), ())
    assert cook.stored_notes(str(tmp_path), "e" * 64) is None  # never kept: unknown
    clean = tmp_path / "notes" / namespace() / "clean"
    assert clean.read_bytes() == b"[[],[]]" and clean.stat().st_nlink == 2  # (the third file, and one link)


def test_why_says_what_a_strict_cook_does_with_notes_not_on_record(tmp_path):
    # `veduta why` called a source whose notes are unknown fresh, while a strict cook compiles it
    import json
    import shutil

    from tests.cook.test_cook import summary

    game = make_game(tmp_path)
    sources = ["models/crate.vmodel", "models/props/barrel.vmodel", "models/tree.vmodel", "models/tree_far.vmodel"]

    def stale(*args: str) -> dict:
        cp = veduta(game, "why", "--json", *args)
        assert cp.returncode == 0, cp.stderr
        return {s["source"]: [r["code"] for r in s["reasons"]] for s in json.loads(cp.stdout)["stale"]}

    game.cook(check=True)
    shutil.rmtree(game.root / "cache")  # the cooked files stay, their notes are on record nowhere
    assert stale() == {}  # not strict: fresh, as a plain cook finds them
    assert stale("--strict") == {rel: ["NOTES_UNKNOWN"] for rel in sources}
    cp = veduta(game, "cook", "--strict")
    assert cp.returncode == 0 and summary(cp)["cooked"] == 4, cp.stdout + cp.stderr
    assert stale("--strict") == {}
    (game.root / "pyproject.toml").write_text("[tool.veduta]\nstrict = true\n")
    shutil.rmtree(game.root / "cache")
    assert stale() == {rel: ["NOTES_UNKNOWN"] for rel in sources}  # strict = true: the same
    line = veduta(game, "why", "models/tree.vmodel").stdout
    assert line == (
        "assets/models/tree.vmodel: strict: the warnings of assets/.cooked/models/tree.vda are not on record in "
        "cache/ (restored from the shared cache, cooked by an earlier veduta, or the cache folder deleted), so a "
        "strict cook compiles it to find them [NOTES_UNKNOWN]\n"
    )
    assert "R cook:models/tree.vmodel " in game.doit("list", "--all", "--status", check=True).stdout
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 4 and stale() == {}
    # the stat cache lost, the notes kept beside the store: a strict cook reads them, compiles nothing
    (game.root / "cache/state.marshal").unlink()
    assert stale() == {}
    cp = game.cook(check=True)
    assert summary(cp) == {"cooked": 0, "uptodate": 4, "restored": 0, "failed": 0}
