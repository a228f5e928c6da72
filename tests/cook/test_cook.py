"""The cook as users rely on it, end to end through doit in a temporary game repo."""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from tests.gamerepo import BAD, CRATE, TREE_FAR
from veduta.formats.asset import read_asset_file


def summary(cp) -> dict[str, int]:
    m = re.search(r"cook: (\d+) cooked, (\d+) up to date, (\d+) restored from cache, (\d+) failed", cp.stdout)
    assert m, cp.stdout + cp.stderr
    return dict(zip(("cooked", "uptodate", "restored", "failed"), map(int, m.groups())))


def age(path, seconds=10):
    """Make a file look edited *seconds* ago (out of the racy window)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def age_all(game):
    for p in (game.root / "assets").rglob("*"):
        if p.is_file() and ".cooked" not in p.parts:
            age(p)


def test_first_cook_then_noop_rewrites_nothing(game):
    cp = game.cook(check=True)
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "failed": 0}
    snap = game.snapshot()
    assert sorted(snap) == ["models/barrel.vda", "models/crate.vda", "models/tree.vda", "models/tree_far.vda"]
    for rel in snap:
        a = read_asset_file(str(game.cooked(rel)))
        assert a.meta.name == rel.split("/")[1][:-4]
    meta = read_asset_file(str(game.cooked("models/barrel.vda"))).meta
    assert meta.source == "models/props/barrel.vmodel" and meta.deps == ()
    assert read_asset_file(str(game.cooked("models/tree.vda"))).meta.deps == ("models/tree_far.vmodel",)
    age_all(game)
    cp = game.cook(check=True)
    assert summary(cp) == {"cooked": 0, "uptodate": 4, "restored": 0, "failed": 0}
    assert game.snapshot() == snap
    # and once more, now answered by the stat cache alone
    cp = game.cook(check=True)
    assert summary(cp)["uptodate"] == 4 and game.snapshot() == snap


def test_touching_without_changing_compiles_nothing(game):
    game.cook(check=True)
    snap = game.snapshot()
    for p in (game.root / "assets").rglob("*.vmodel"):
        os.utime(p)  # new mtime, same bytes
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 0
    assert game.snapshot() == snap


def test_editing_a_source_or_a_dep_recooks_exactly_the_affected(game):
    game.cook(check=True)
    age_all(game)
    game.cook(check=True)
    before = game.snapshot()
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[2, 1, 1]"))
    cp = game.cook(check=True)
    assert summary(cp) == {"cooked": 1, "uptodate": 3, "restored": 0, "failed": 0}
    after = game.snapshot()
    assert [k for k in after if after[k] != before[k]] == ["models/crate.vda"]
    # tree_far is a dependency of tree (its lod level): editing it recooks both
    far = game.root / "assets/models/tree_far.vmodel"
    far.write_text(far.read_text().replace('"segments": 4', '"segments": 5'))
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 2
    again = game.snapshot()
    assert sorted(k for k in again if again[k] != after[k]) == ["models/tree.vda", "models/tree_far.vda"]


def test_same_second_edit_is_not_missed(game):
    """An edit that keeps size and lands in the same mtime tick is still seen (racy signatures)."""
    p = game.root / "assets/models/crate.vmodel"
    game.cook(check=True)
    st = p.stat()
    p.write_text(CRATE.replace('"bottom-center"', '"center"       '))  # same length
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the very same mtime
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 1


def test_deleting_a_source_removes_its_cooked_file(game):
    game.cook(check=True)
    assert game.cooked("models/barrel.vda").exists()
    (game.root / "assets/models/props/barrel.vmodel").unlink()
    cp = game.cook(check=True)
    assert not game.cooked("models/barrel.vda").exists()
    assert "removed assets/.cooked/models/barrel.vda" in cp.stdout
    assert summary(cp)["uptodate"] == 3


def test_errors_are_located_all_at_once_and_others_still_cook(game):
    game.cook(check=True)
    game.write("models/crate.vmodel", BAD)
    cp = game.cook()
    assert cp.returncode != 0
    lines = cp.stdout.splitlines()
    assert lines[:3] == [
        "assets/models/crate.vmodel:4:52: parts[0].radius: not used by shape box",
        "assets/models/crate.vmodel:5:68: parts[1].segments: 2 out of range [3, 256]",
        "assets/models/crate.vmodel:6:45: parts[2].of: 7 is not the index of an earlier part (want 0..1)",
    ]
    assert "Traceback" not in cp.stdout + cp.stderr
    assert not game.cooked("models/crate.vda").exists()  # the previous one is removed
    assert summary(cp) == {"cooked": 0, "uptodate": 3, "restored": 0, "failed": 1}
    game.write("models/new.vmodel", CRATE)
    cp = game.cook()
    assert summary(cp) == {"cooked": 1, "uptodate": 3, "restored": 0, "failed": 1}


def test_duplicate_names_name_both_paths(game):
    game.write("models/other/crate.vmodel", CRATE)
    cp = game.cook()
    assert cp.returncode != 0
    assert (
        'assets/models/crate.vmodel:1:1: $: model name "crate" is also used by assets/models/other/crate.vmodel'
    ) in cp.stdout
    assert (
        'assets/models/other/crate.vmodel:1:1: $: model name "crate" is also used by assets/models/crate.vmodel'
    ) in cp.stdout
    assert not game.cooked("models/crate.vda").exists()
    assert summary(cp)["cooked"] == 3


def test_returning_to_earlier_content_restores_from_the_store(game):
    game.cook(check=True)
    original = game.cooked("models/crate.vda").read_bytes()
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[3, 1, 1]"))
    assert summary(game.cook(check=True))["cooked"] == 1
    game.write("models/crate.vmodel", CRATE)  # a branch switch back
    cp = game.cook(check=True)
    assert summary(cp) == {"cooked": 0, "uptodate": 3, "restored": 1, "failed": 0}
    assert game.cooked("models/crate.vda").read_bytes() == original


def test_corrupt_or_truncated_cooked_files_are_stale(game):
    game.cook(check=True)
    age_all(game)
    good = game.cooked("models/crate.vda").read_bytes()
    game.cooked("models/crate.vda").write_bytes(good[:-10])
    bad = bytearray(game.cooked("models/tree.vda").read_bytes())
    bad[40] ^= 1
    game.cooked("models/tree.vda").write_bytes(bytes(bad))
    out = game.doit("list", "--all", "--status", check=True).stdout
    assert "R cook:models/crate.vmodel" in out and "R cook:models/tree.vmodel" in out
    assert "U cook:models/props/barrel.vmodel" in out
    cp = game.cook(check=True)
    assert summary(cp)["uptodate"] == 2
    assert game.cooked("models/crate.vda").read_bytes() == good


def test_list_status_marks_stale_and_fresh(game):
    out = game.doit("list", "--all", "--status", check=True).stdout
    assert "R cook:models/crate.vmodel" in out
    game.cook(check=True)
    age_all(game)
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[1, 2, 1]"))
    age(game.root / "assets/models/crate.vmodel")
    out = game.doit("list", "--all", "--status", check=True).stdout
    assert "R cook:models/crate.vmodel" in out
    for rel in ("models/props/barrel.vmodel", "models/tree.vmodel", "models/tree_far.vmodel"):
        assert f"U cook:{rel}" in out


def test_parallel_and_hash_seed_give_identical_bytes(game, tmp_path):
    game.cook(env={"PYTHONHASHSEED": "1"}, check=True)
    serial = {k: v[2] for k, v in game.snapshot().items()}
    for args, seed in ((("-n", "3"), "2"), (("-n", "2", "-P", "thread"), "3")):
        os.system(f"rm -rf '{game.root}/assets/.cooked' '{game.root}/cache'")
        cp = game.cook(*args, env={"PYTHONHASHSEED": seed}, check=True)
        assert summary(cp)["cooked"] == 4
        assert {k: v[2] for k, v in game.snapshot().items()} == serial


def test_the_hash_seed_orders_nothing_but_the_deps_in_doits_database(tmp_path):
    """docs/cooking.md, Determinism: the sample game cooked, two sources with deps changed and cooked
    again, under three hash seeds. The cooked files, the store and the build record (but for its
    compile times) are the same bytes; doit's rows say the same once each ``deps:`` list is sorted
    (a source cooked again with the same deps has them in the seed's set order, which nothing
    reads: doit compares them as sets). (The stat records, cache/state.marshal and scan.marshal,
    and the file states in doit's rows hold the files' stat data: when they were written, not
    the seed.)"""
    import marshal
    import sqlite3

    from tests.gamerepo import sample_game

    stat_data = {"cache/state.marshal", "cache/scan.marshal", "cache/doit.sqlite3", "cache/doit.sqlite3.checked"}

    def files(root):  # the cooked folder and cache/, but for lock files and stat records
        return {
            rel: p.read_bytes()
            for p in sorted(root.rglob("*"))
            if p.is_file()
            and (rel := str(p.relative_to(root))).startswith(("cache/", "assets/.cooked/"))
            and not rel.endswith(".lock")
            and rel not in stat_data
        }

    runs = []
    for seed in ("1", "2", "3"):
        g = sample_game(tmp_path / seed)
        g.veduta("cook", "-n", "1", env={"PYTHONHASHSEED": seed})
        for rel in ("maps/town.vmap", "scenes/demo.vscene"):  # (deps: materials, textures, models...)
            path = g.root / "assets" / rel
            path.write_bytes(path.read_bytes() + b" ")
        cp = g.veduta("cook", "-n", "2", env={"PYTHONHASHSEED": seed})
        assert cp.returncode == 0 and "cook: 2 cooked," in cp.stdout, cp
        got = files(g.root)
        for name in ("builds.marshal", "builds.recent.marshal"):
            _, entries = marshal.loads(got[f"cache/{name}"])
            got[f"cache/{name}"] = {rel: entry[:2] for rel, entry in entries.items()}  # (not the compile time)
        db = sqlite3.connect(g.root / "cache/doit.sqlite3")
        rows = {name: json.loads(row) for name, row in db.execute("select * from doit")}
        said = {
            name: (sorted(row["deps:"]), row["_values_:"], row["result:"], row["checker:"])
            for name, row in rows.items()
        }
        runs.append((got, said))
    assert len(runs[0][0]) > 100 and "assets/.cooked/scenes/demo.vda" in runs[0][0]
    assert len(runs[0][1]) == 57 and len(runs[0][1]["cook:scenes/demo.vscene"][0]) == 7
    for got, said in runs[1:]:
        assert got.keys() == runs[0][0].keys()
        assert [k for k in got if got[k] != runs[0][0][k]] == []
        assert said == runs[0][1]


def test_config_moves_assets_and_cooked(game):
    (game.root / "assets").rename(game.root / "src")
    (game.root / "pyproject.toml").write_text('[tool.veduta]\nassets = "src"\ncooked = "build/cooked"\n')
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 4
    assert (game.root / "build/cooked/models/crate.vda").exists()
    assert not (game.root / "src/.cooked").exists()


def test_bad_config_is_a_clear_error(game):
    (game.root / "pyproject.toml").write_text('[tool.veduta]\nasets = "src"\n')
    cp = game.cook()
    assert cp.returncode != 0
    assert "[tool.veduta] asets: unknown key" in cp.stdout + cp.stderr


def test_missing_reference_warns_then_adding_it_anywhere_makes_the_referrer_stale(game):
    from tests.gamerepo import TREE_FAR

    (game.root / "assets/models/tree_far.vmodel").unlink()
    cp = game.cook(check=True)
    warn = [line for line in cp.stdout.splitlines() if "warning:" in line]
    assert len(warn) == 1 and warn[0].startswith("assets/models/tree.vmodel:")
    assert 'model "tree_far" does not exist' in warn[0]
    assert read_asset_file(str(game.cooked("models/tree.vda"))).meta.deps == ("models/tree_far.vmodel",)
    age_all(game)
    assert summary(game.cook(check=True))["cooked"] == 0
    game.write("models/far/tree_far.vmodel", TREE_FAR)  # in a sub-folder, not where it was looked for
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 2 and "warning" not in cp.stdout
    assert read_asset_file(str(game.cooked("models/tree.vda"))).meta.deps == ("models/far/tree_far.vmodel",)


def test_an_in_place_edit_with_the_old_mtime_put_back_is_seen(game):
    """Same size, same mtime, same inode (cp -p, touch -r): the ctime still moved."""
    p = game.root / "assets/models/crate.vmodel"
    age(p, 30)
    game.cook(check=True)
    time.sleep(2.1)  # out of the racy window, so the stat cache answers the next run
    assert summary(game.cook(check=True))["cooked"] == 0
    st = p.stat()
    with open(p, "r+b") as f:  # in place: same inode
        f.write(p.read_bytes().replace(b'"bottom-center"', b'"center"       '))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_mtime_ns == st.st_mtime_ns and p.stat().st_size == st.st_size
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 1
    assert read_asset_file(str(game.cooked("models/crate.vda"))).body.pivot == "center"


def test_the_store_is_not_poisoned_by_a_cooked_file_overwritten_in_place(game):
    game.cook(check=True)
    crate = game.cooked("models/crate.vda")
    original = crate.read_bytes()
    with open(crate, "r+b") as f:  # against the rules: writes through the store's hard link
        f.write(game.cooked("models/tree_far.vda").read_bytes())
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[2, 1, 1]"))
    game.cook(check=True)
    game.write("models/crate.vmodel", CRATE)
    cp = game.cook(check=True)  # the damaged entry is not served; the recompile repairs it
    assert crate.read_bytes() == original
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[2, 1, 1]"))
    game.cook(check=True)
    game.write("models/crate.vmodel", CRATE)
    cp = game.cook(check=True)
    assert summary(cp)["restored"] == 1 and crate.read_bytes() == original


def test_a_source_name_that_is_not_utf8_fails_the_run_and_names_it(game):
    """Named as every line shows a byte that is not UTF-8 (``caf\\xe9``, errors.shown_path), in
    cook, check and list alike, whatever the stream's encoding; in JSON as the file system has it
    (the name it once gave, ``caf\ufffd``, a U+FFFD for the byte, named no file, or another one)."""
    bad = (game.root / "assets/models").joinpath(os.fsdecode(b"caf\xe9.vmodel"))
    bad.write_text(CRATE)
    cp = game.cook()
    assert cp.returncode != 0
    line = "assets/models/caf\\xe9.vmodel: file name is not valid UTF-8 (source names are text in META); rename it"
    assert line + "\n" in cp.stdout
    assert "Traceback" not in cp.stdout + cp.stderr
    assert summary(cp)["cooked"] == 4
    for errors in ("strict", "surrogateescape"):  # a strict locale, and Python's UTF-8 mode
        env = {"PYTHONIOENCODING": f"utf-8:{errors}"}
        cp = game.veduta("cook", env=env)
        assert cp.returncode == 1 and line + "\n" in cp.stdout, cp
        cp = game.veduta("check", env=env)
        assert cp.returncode == 1 and line.replace(": file", ":1:1: $: file") + "\n" in cp.stdout, cp
        cp = game.veduta("list", env=env)
        assert cp.returncode == 0 and line + "\n" in cp.stderr, cp
    for args, key in (
        (("cook", "--json"), "diagnostics"),
        (("check", "--json"), "diagnostics"),
        (("list", "--json"), "problems"),
    ):
        (d,) = json.loads(game.veduta(*args).stdout)[key]
        assert os.fsencode(d["file"]) == b"assets/models/caf\xe9.vmodel", (args, d)
        assert os.path.samefile(game.root / d["file"], bad)  # the very file
    cp = game.veduta("cook", "--format", "json")
    (d,) = [json.loads(ln) for ln in cp.stdout.splitlines() if ln.startswith("{")]
    assert os.fsencode(d["file"]) == b"assets/models/caf\xe9.vmodel", cp


def test_plain_doit_cook_makes_no_task_for_a_fresh_source(game, monkeypatch):
    """The no-op speed rests on this: under `doit run` the cook tasks are made late
    (create_after) and a plain `doit cook` gets no task object for a fresh source."""
    from veduta.base.project import Project
    from veduta.cook import tasks

    game.cook(check=True)
    age_all(game)
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[1, 3, 1]"))
    age(game.root / "assets/models/crate.vmodel")
    monkeypatch.chdir(game.root)
    run = tasks.CookRun(Project.find(str(game.root)))
    assert hasattr(tasks.task_creator(run), "doit_create_after")
    run.start()
    run.selected = ["cook"]
    names = [t["name"] for t in tasks.cook_tasks(run)]
    assert names == [None, "models/crate.vmodel", "_orphans"]
    assert run.fresh_skipped == 3
    run.selected = ["cook:models/tree.vmodel"]
    names = [t["name"] for t in tasks.cook_tasks(run)]
    assert len(names) == 6  # group, four sources, orphan sweep: every subtask when one is named


def test_stat_cache_entries_pack_and_unpack_exactly():
    from veduta.cook.state import CLEAN, MISSING, RACY, SIG, SIG2, pack_entry, unpack_entry, well_formed

    rel = "models/a.vmodel"
    big = (2**63 - 1, -5_000_000_000, 2**64 - 1, 1_796_115_461_858_610_222)  # ino unsigned, mtime before 1970
    noted = (
        ("!materials/okra.vmaterial", "materials/oak.vmaterial"),
        ((5, 77, "parts[1].material", 'material "okra" does not exist (not checked)', "MISSING_REFERENCE"),),
    )
    for entry, length in [
        (("ab" * 32, (3222, 17, 99, 18), ((rel, (235, 1, 2, 3)),), CLEAN), 3),  # clean: three objects
        (("cd" * 32, None, ((rel, None),), None), 4),  # racy cooked file and source; notes unknown
        (
            (
                "ef" * 32,
                big,
                (
                    (rel, big),
                    ("materials/m.vmaterial", ()),
                    ("textures/t.vtexture", None),
                    ("materials/n.vmaterial", (0, 0, 1, 0)),
                ),
                noted,
            ),
            5,
        ),
    ]:
        packed = pack_entry(rel, entry)
        assert len(packed[1]) == SIG.size * (1 + len(entry[2])) and len(packed) == length and well_formed(packed)
        assert unpack_entry(rel, packed) == entry
    assert RACY != MISSING and SIG.size == 32
    # the no-op's check of the common entry packs both signatures at once: the same bytes
    clean = pack_entry(rel, ("ab" * 32, big, ((rel, (235, 1, 2, 3)),), CLEAN))
    assert SIG2.pack(*big, 235, 1, 2, 3) == clean[1] == SIG.pack(*big) + SIG.pack(235, 1, 2, 3)
    with pytest.raises(ValueError):
        pack_entry("models/b.vmodel", ("00" * 32, None, ((rel, None),)))


def test_state_of_an_older_format_is_dropped_and_rebuilt(game):
    import marshal

    from veduta import TOOLCHAIN
    from veduta.cook.state import StatCache

    game.cook(check=True)
    state = game.root / "cache/state.marshal"
    fmt, toolchain, *_, owed = marshal.loads(state.read_bytes())
    assert (fmt, toolchain, owed) == ("veduta-state/6", TOOLCHAIN, ()) and StatCache(str(state), TOOLCHAIN).entries
    state.write_bytes(marshal.dumps(("veduta-state/3", "x", {"models/props/barrel.vmodel": ("x", None, ())})))
    out = game.cook(check=True).stdout
    assert "cook: 0 cooked" in out  # nothing cooked again: the cooked files' META proved them fresh
    assert marshal.loads(state.read_bytes())[0] == "veduta-state/6"


def test_sources_an_earlier_toolchain_cooked_are_owed_a_cook_until_cooked(game):
    """The toolchain salt lives in the stat cache, not in META: a state written by another
    toolchain (or the format of the one before, veduta-state/4) makes every source it held owed a
    cook, though each cooked file's META is fresh; a cook that does not reach one (only another
    source named) keeps it owed."""
    import marshal

    from veduta import COMPILER_VERSION, TOOLCHAIN
    from veduta.cook.state import StatCache

    game.cook(check=True)
    state = game.root / "cache/state.marshal"
    entries = StatCache(str(state), TOOLCHAIN).entries
    metas = {p: p.read_bytes() for p in (game.root / "assets/.cooked").rglob("*.vda")}
    # (the format before, whose entries this toolchain reads as its own, names another toolchain)
    state.write_bytes(marshal.dumps(("veduta-state/5", f"{COMPILER_VERSION}+veduta-cook-rules/0", entries, ())))
    why = json.loads(game.veduta("why", "--json").stdout)
    assert {s["source"]: [r["code"] for r in s["reasons"]] for s in why["stale"]} == {
        rel: ["TOOLCHAIN_CHANGED"] for rel in entries
    }
    assert json.loads(game.veduta("check", "--json").stdout)["compiled"] == len(entries)
    assert summary(game.doit("cook:models/crate.vmodel", check=True))["cooked"] == 1
    assert sorted(marshal.loads(state.read_bytes())[-1]) == sorted(set(entries) - {"models/crate.vmodel"})
    assert summary(game.cook(check=True))["cooked"] == len(entries) - 1
    assert marshal.loads(state.read_bytes())[-1] == ()
    assert summary(game.cook(check=True))["cooked"] == 0
    # the same bytes (the rules of this toolchain and of the one before agree on them)
    assert {p: p.read_bytes() for p in metas} == metas
    # the stat cache of veduta-asset/0.8.1 (format 4, no salt): every source owed once
    state.write_bytes(marshal.dumps(("veduta-state/4", "veduta-asset/0.8.1", {r: e[:3] for r, e in entries.items()})))
    assert summary(game.cook(check=True))["cooked"] == len(entries)


def test_doit_info_sees_a_touched_source_as_up_to_date_and_an_edited_one_as_stale(game):
    # doit info asks doit's own check (not the cook's trust): the file checker then takes a
    # touched file whose content this pass verified as unchanged (signatures as the stat cache
    # packs them)
    game.cook(check=True)
    src = game.root / "assets/models/crate.vmodel"
    os.utime(src)  # new mtime, same bytes
    info = game.doit("info", "cook:models/crate.vmodel", check=True).stdout
    assert re.search(r"status\s*: up-to-date", info), info
    src.write_text(src.read_text().replace('"crate"', '"crate" ', 1) + " ")
    info = game.doit("info", "cook:models/crate.vmodel").stdout
    assert re.search(r"status\s*: run", info), info


def crate_sigs(game) -> bytes:
    """The packed signatures of crate's cooked file and source as they are now: what its stat-cache
    entry holds when its last cook was not racy (more than RACY_NS after they were written)."""
    from veduta.cook.state import SIG, sig

    return b"".join(
        SIG.pack(*sig(os.stat(p))) for p in (game.cooked("models/crate.vda"), game.root / "assets/models/crate.vmodel")
    )


#: Entries of crate's of the wrong shape (valid marshal data: a flipped byte in a length or type
#: code can give that), from its (hash, blob of matching signatures, deps): each but the first
#: three holds signatures that all still match, so only its shape can tell it is not fresh.
def damaged_entries(h, blob, deps) -> list:
    return [
        7,
        (h, blob[:40], deps),
        (h, blob, None),
        (h, blob + blob[:32], (("x", 1),)),
        (h, blob, deps, 1),
        (h, blob, deps, ("!x",), ((1, 1, "$", "m"),)),
        (h, blob, deps, (7,), ()),
        (h, blob, deps, 1, 2, 3),
        [h, blob, deps],
        (7, blob, deps),
        (h.encode(), blob, deps, None),
        (h, blob, list(deps)),
        (h, blob + blob[:32], deps, None),
        (h, blob, deps, (), ((1, 1, "$", "m"),)),
        (h, blob, deps, (), ((1, 1, "$", "m", 7),)),
        (h, blob, deps, (), (), 3),
    ]


def test_a_damaged_state_entry_is_never_fresh_by_stat(game, monkeypatch):
    # the no-op check (fresh_by_stat) trusts only an entry well_formed accepts, however well its
    # signatures match: it used to take (h, blob, deps, 1) and others for fresh, and the cache kept
    # them for good (found when a loaded machine let crate's last cook record no racy signature)
    from veduta.base.project import Project
    from veduta.cook.cook import fresh_by_stat, index_of
    from veduta.cook.scancache import ScanCache
    from veduta.cook.state import well_formed

    game.cook(check=True)
    monkeypatch.chdir(game.root)
    project = Project.find(str(game.root))
    index = index_of(project.scan([], ScanCache(project.cache).walk)[0])
    h, blob, deps = "0" * 64, crate_sigs(game), ()
    cooked = str(game.cooked("models/crate.vda"))
    fresh = [
        fresh_by_stat("models/crate.vmodel", e, project.assets, cooked, index)
        for e in [(h, blob, deps), (h, blob, deps, None), (h, blob, deps, (), ((1, 1, "$", "m", "c"),))]
    ]
    assert fresh == [True, True, True]
    for bad in damaged_entries(h, blob, deps):
        assert not well_formed(bad), bad
        assert not fresh_by_stat("models/crate.vmodel", bad, project.assets, cooked, index), bad


def test_a_damaged_state_entry_means_re_hashing_never_a_traceback(game):
    # valid marshal data in the wrong shape (a flipped byte in a length or type code can give
    # that): each tool that reads the stat cache re-hashes the source instead, and the cook
    # records its entry again
    import json
    import marshal
    import subprocess
    import sys

    from veduta.cook.state import well_formed

    game.cook(check=True)
    age_all(game)
    game.cook(check=True)
    state = game.root / "cache/state.marshal"
    from veduta import TOOLCHAIN
    from veduta.cook.state import StatCache

    # (damaged entries written in the format before, a dict of entries, which is read as it is)
    fmt, compiler, entries, owed = "veduta-state/5", TOOLCHAIN, StatCache(str(state), TOOLCHAIN).entries, ()
    assert len(entries) == 4
    h, _, deps = entries["models/crate.vmodel"]
    # signatures that match, whether or not the cook above recorded them racy (it does when it ran
    # within RACY_NS of age_all: the usual case, where a damaged entry was re-hashed whatever its
    # shape, and the shapes fresh_by_stat took for fresh went unseen but on a loaded machine)
    blob = crate_sigs(game)
    # (the shapes fresh_by_stat is shown to refuse, above, but one a process each: the first eight,
    # then a source_hash of another type, which the cook's inline check of the common entry sees)
    for bad in [*damaged_entries(h, blob, deps)[:8], (7, blob, deps)]:
        state.write_bytes(marshal.dumps((fmt, compiler, {**entries, "models/crate.vmodel": bad}, owed)))
        for args in (["why", "--json"], ["check"]):
            cp = subprocess.run(
                [sys.executable, "-m", "veduta", *args], cwd=game.root, capture_output=True, text=True, timeout=300
            )
            assert cp.returncode == 0 and "Traceback" not in cp.stderr, (bad, args, cp.stdout + cp.stderr)
        assert (
            json.loads(
                subprocess.run(
                    [sys.executable, "-m", "veduta", "why", "--json"],
                    cwd=game.root,
                    capture_output=True,
                    text=True,
                    timeout=300,
                ).stdout
            )["stale"]
            == []
        )
        listed = game.doit("list", "--all", "--status", check=True).stdout
        assert re.search(r"^U cook:models/crate.vmodel", listed, re.M), listed
        assert summary(game.cook(check=True)) == {"cooked": 0, "uptodate": 4, "restored": 0, "failed": 0}
        kept = StatCache(str(state), TOOLCHAIN).packed("models/crate.vmodel")  # re-hashed and recorded again
        assert well_formed(kept) and kept[0] == h and kept[2] == deps, bad


def test_a_dependency_too_large_to_read_keeps_its_signature_so_a_no_op_is_one(game, monkeypatch):
    """tree's lod names tree_far; tree_far's source grown past its kind's bound fails its own cook
    ("too large", from its stat) and tree cooks with a warning, hashing tree_far as missing. Its
    stat-cache entry kept tree_far as missing (MISSING) though the file is there, so every no-op
    re-hashed tree; it now keeps tree_far's stat signature: a no-op finds tree fresh by stat."""
    from veduta import TOOLCHAIN
    from veduta.base.project import Project
    from veduta.cook.cook import fresh_by_stat, index_of
    from veduta.cook.scancache import ScanCache
    from veduta.cook.state import RACY_NS, SIG, StatCache, sig

    game.cook(check=True)
    far = game.root / "assets/models/tree_far.vmodel"
    os.truncate(far, (16 << 20) + 1)
    age_all(game)
    too = "assets/models/tree_far.vmodel:1:1: $: too large (16,777,217 bytes; a model source is at most 16,777,216)"
    cp = game.cook()
    assert too in cp.stdout.splitlines(), cp.stdout
    assert summary(cp) == {"cooked": 1, "uptodate": 2, "restored": 0, "failed": 1}
    # past the racy window of tree's new cooked file (its ctime cannot be set back), re-hashed once
    time.sleep(max(0, RACY_NS - (time.time_ns() - os.stat(game.cooked("models/tree.vda")).st_ctime_ns)) / 1e9 + 0.1)
    for _ in range(2):
        cp = game.cook()
        assert too in cp.stdout.splitlines(), cp.stdout  # still failing, and saying why
        assert summary(cp) == {"cooked": 0, "uptodate": 3, "restored": 0, "failed": 1}
    packed = StatCache(str(game.root / "cache/state.marshal"), TOOLCHAIN).packed("models/tree.vmodel")
    assert packed[2] == ("models/tree_far.vmodel",)
    assert packed[1][64:] == SIG.pack(*sig(os.stat(far)))  # (before: MISSING)
    monkeypatch.chdir(game.root)
    project = Project.find(str(game.root))
    index = index_of(project.scan([], ScanCache(project.cache).walk)[0])
    cooked = str(game.cooked("models/tree.vda"))
    assert fresh_by_stat("models/tree.vmodel", packed, project.assets, cooked, index)  # not re-hashed
    # the file changed (still too large): re-hashed, still fresh; readable again: stale
    os.truncate(far, (16 << 20) + 2)
    assert not fresh_by_stat("models/tree.vmodel", packed, project.assets, cooked, index)
    assert summary(game.cook()) == {"cooked": 0, "uptodate": 3, "restored": 0, "failed": 1}
    far.write_text(TREE_FAR)
    assert summary(game.cook(check=True)) == {"cooked": 0, "uptodate": 2, "restored": 2, "failed": 0}


PACK_AFTER_COOK = '''

from doit.tools import result_dep


def task_pack():
    """pack the cooked files when the cook's results change"""
    return {"actions": ["echo packed"], "uptodate": [result_dep("cook")], "verbosity": 2}
'''


def test_result_dep_on_the_cook_sees_every_change_of_a_source(game):
    """doit's result_dep("cook") runs a task again when the cook's results change: a cook's result
    names what it cooked (its source_hash), not only that it cooked, so a second edit of the same
    source is a change too."""
    with open(game.root / "dodo.py", "a") as f:
        f.write(PACK_AFTER_COOK)

    def pack_ran():
        return "packed" in game.doit("pack", check=True).stdout

    assert pack_ran()
    for size in ("[1, 2, 1]", "[1, 3, 1]"):  # the same source edited twice, each edit then packed
        game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", size))
        assert pack_ran(), size


@pytest.mark.parametrize("name", ["state.marshal", "scan.marshal"])
@pytest.mark.parametrize(
    "damage",
    [
        b"[\xff\xff\xff\x7f",  # a list of 2**31 - 1 items at the top (the hostile study's file)
        b")\x07[\xff\xff\xff\x7f",  # the same inside a tuple, as a 2-byte change of a real file makes it
    ],
    ids=["at-the-top", "inside"],
)
def test_a_damaged_count_in_the_cooks_state_is_ignored_under_a_memory_limit(game, name, damage):
    """A cache file whose marshal header announces a container larger than memory: marshal
    allocates it before reading an item, which under a memory limit (a CI runner, ``ulimit -v``)
    was a MemoryError traceback in every later command. It is a damaged file like any other:
    ignored, that cook re-hashes, and the file is written anew."""
    import marshal
    import subprocess
    import sys

    from tests.gamerepo import memory_limit

    game.cook(check=True)
    path = game.root / "cache" / name
    path.write_bytes(damage)
    for args in (["veduta", "cook"], ["doit", "cook"], ["doit", "list", "--all", "--status"]):
        cp = subprocess.run(
            [sys.executable, "-m", *args] if args[0] == "doit" else [sys.executable, "-m", "veduta", *args[1:]],
            cwd=game.root,
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=memory_limit(1 << 30),
        )
        assert cp.returncode == 0 and "Traceback" not in cp.stderr, (args, cp.stdout, cp.stderr)
        if args[-1] == "cook":
            assert "cook: 0 cooked" in cp.stdout, cp.stdout  # (the cooked files' META proves them fresh)
    assert marshal.loads(path.read_bytes())[0] in ("veduta-state/6", "veduta-scan/2")  # written anew
