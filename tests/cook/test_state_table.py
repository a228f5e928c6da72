"""The stat cache's file (veduta-state/6, veduta/cook/state.py): a table of packed signatures a
no-op compares whole, the other entries kept beside it.  It reads back exactly what was saved;
damaged, truncated, older or other files are never a traceback; and a source is fresh by the
table exactly when the per-source check finds it fresh."""

from __future__ import annotations

import marshal
import os
import shutil
import time

from veduta import TOOLCHAIN
from veduta.cook.state import (
    CLEAN,
    RACY_NS,
    SIG,
    TABLE_ROW,
    StatCache,
    make_entry,
    pack_entry,
    well_formed,
)

H = "ab" * 32
BOX = '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]}'


def _entries() -> dict:
    """Entries of every shape: clean (in the table), with a dependency, with notes, notes
    unknown, a racy signature, a hash of another length (kept whole)."""
    now = time.time_ns()
    old = now - 10 * RACY_NS
    sig = (100, old, 7, old)
    out = {}
    for i in range(50):
        rel = f"models/g{i % 3}/m{i:03d}.vmodel"
        out[rel] = pack_entry(rel, (H, (200 + i, old, 1000 + i, old), ((rel, (100 + i, old, 2000 + i, old)),), CLEAN))
    out["models/dep.vmodel"] = pack_entry(
        "models/dep.vmodel", (H, sig, (("models/dep.vmodel", sig), ("textures/t.vtexture", ())), CLEAN)
    )
    out["models/noted.vmodel"] = pack_entry(
        "models/noted.vmodel",
        (H, sig, (("models/noted.vmodel", sig),), (("materials/x.vmaterial",), ((1, 2, "$", "m", "CODE"),))),
    )
    out["models/unknown.vmodel"] = pack_entry(
        "models/unknown.vmodel", (H, sig, (("models/unknown.vmodel", sig),), None)
    )
    out["models/racy.vmodel"] = pack_entry(
        "models/racy.vmodel", make_entry(H, (1, now, 2, now), (("models/racy.vmodel", (1, now, 3, now)),), now, CLEAN)
    )
    out["models/short.vmodel"] = pack_entry("models/short.vmodel", ("abc", sig, (("models/short.vmodel", sig),), CLEAN))
    return out


def _saved(tmp_path, entries: dict, owed=()) -> str:
    path = str(tmp_path / "state.marshal")
    if os.path.exists(path):
        os.unlink(path)
    c = StatCache(path, TOOLCHAIN)
    for rel, packed in entries.items():
        c.entries[rel] = packed
    c.owed = set(owed)
    c.dirty = True
    c.save()
    return path


def test_the_file_reads_back_what_was_saved_with_or_without_unpacking_the_table(tmp_path):
    entries = _entries()
    path = _saved(tmp_path, entries, owed=["models/owed.vmodel"])
    data = marshal.loads(open(path, "rb").read())
    assert data[0] == "veduta-state/6" and len(data) == 7
    assert len(data[3]) == TABLE_ROW * len(entries)  # a row each; 5 entries kept whole beside it
    assert sorted(data[5]) == sorted(
        ["models/dep.vmodel", "models/noted.vmodel", "models/unknown.vmodel", "models/short.vmodel"]
    ) or sorted(data[5]) == sorted(
        [
            "models/dep.vmodel",
            "models/noted.vmodel",
            "models/unknown.vmodel",
            "models/short.vmodel",
            "models/racy.vmodel",
        ]
    )
    c = StatCache(path, TOOLCHAIN)
    assert len(c) == len(entries) and c.owed == {"models/owed.vmodel"} and not c.dirty
    assert c._rels is None  # (counted in the file's one string of paths: none made to count them)
    # looked up one by one without unpacking the table: what was saved
    for rel, packed in entries.items():
        assert c.packed(rel) == packed
    assert c.packed("models/none.vmodel") is None and c.packed("") is None and c.packed("zzz") is None
    assert c._entries is None
    assert c.entries == entries and len(c) == len(entries)  # unpacked: the same
    for rel in entries:
        assert c.get(rel) == StatCache(path, TOOLCHAIN).get(rel)
    # saved again (nothing changed): the same file (marshal's bytes may share objects otherwise)
    c.dirty = True
    before = marshal.loads(open(path, "rb").read())
    c.save()
    assert marshal.loads(open(path, "rb").read()) == before


def test_the_table_is_offered_only_for_the_very_sources_it_holds(tmp_path):
    entries = _entries()
    path = _saved(tmp_path, entries)
    rels = sorted(entries)
    c = StatCache(path, TOOLCHAIN)
    assert c.table("\0".join(rels[:-1])) is None and c.table("\0".join(reversed(rels))) is None
    table, whole = c.table("\0".join(rels))
    assert len(table) == TABLE_ROW * len(rels) and set(whole) < set(rels)
    for i, rel in enumerate(rels):
        row = table[TABLE_ROW * i : TABLE_ROW * (i + 1)]
        assert row == (entries[rel][1] if rel not in whole else SIG.pack(-1, 0, 0, 0) * 2)
    c.set(rels[0], make_entry("cd" * 32, (1, 1, 1, 1), ((rels[0], (2, 2, 2, 2)),), 10**19, CLEAN))
    assert c.table("\0".join(rels)) is None  # changed: no longer the file's table
    empty = _saved(tmp_path / "e" if (tmp_path / "e").mkdir() is None else tmp_path, {})
    e = StatCache(empty, TOOLCHAIN)
    assert len(e) == 0 and e.table("") == (b"", {}) and e.entries == {}


def test_the_format_before_is_read_as_this_one_and_written_anew(tmp_path):
    entries = _entries()
    path = str(tmp_path / "state.marshal")
    with open(path, "wb") as f:
        f.write(marshal.dumps(("veduta-state/5", TOOLCHAIN, entries, ("models/owed.vmodel",))))
    c = StatCache(path, TOOLCHAIN)
    assert c.entries == entries and c.owed == {"models/owed.vmodel"} and c.dirty
    c.save()
    again = StatCache(path, TOOLCHAIN)
    assert marshal.loads(open(path, "rb").read())[0] == "veduta-state/6"
    assert again.entries == entries and again.owed == {"models/owed.vmodel"}


def test_another_toolchains_file_owes_every_source_it_held(tmp_path):
    entries = _entries()
    path = _saved(tmp_path, entries, owed=["models/owed.vmodel"])
    c = StatCache(path, TOOLCHAIN + "+other")
    assert c.entries == {} and c.owed == {*entries, "models/owed.vmodel"} and c.dirty and len(c) == 0


def _damaged(data: bytes):
    yield b""
    for cut in (1, 2, 5, 17, len(data) // 3, len(data) // 2, len(data) - 1):
        yield data[:cut]
    for at in range(0, len(data), max(1, len(data) // 97)):
        yield data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1 :]
    head, toolchain, rels, table, hashes, whole, owed = marshal.loads(data)
    for bad in (
        (head, toolchain, rels, table[:-1], hashes, whole, owed),
        (head, toolchain, rels, table, hashes + "x", whole, owed),
        (head, toolchain, rels + "\0extra", table, hashes, whole, owed),
        (head, toolchain, rels, table, hashes, {**whole, "not/a/row.vmodel": whole[next(iter(whole))]}, owed),
        (head, toolchain, rels, table, hashes, {7: 1}, owed),
        (head, toolchain, rels, table, hashes, [], owed),
        (head, toolchain, 7, table, hashes, whole, owed),
        (head, toolchain, rels, table, hashes, {**whole, "models/dep.vmodel": 7}, owed),
        (head, toolchain, rels, table, hashes, whole, (7, None)),
        (head, toolchain, rels, table, hashes, whole),
    ):
        yield marshal.dumps(bad)


def test_a_damaged_or_truncated_file_is_never_a_traceback(tmp_path):
    entries = _entries()
    path = _saved(tmp_path, entries)
    good = open(path, "rb").read()
    rels = sorted(entries)
    for data in _damaged(good):
        with open(path, "wb") as f:
            f.write(data)
        c = StatCache(path, TOOLCHAIN)
        got = c.table("\0".join(rels))
        assert got is None or len(got[0]) == TABLE_ROW * len(rels)
        for rel in rels:
            packed = c.packed(rel)
            if packed is not None and well_formed(packed):
                c.get(rel)
            c.notes(rel)
        assert len(c.entries) == len(c) and all(type(r) is str for r in c.owed)
        c.discard(rels[0])
        c.keep_only(rels[1:])
        c.save()  # written whole again
        assert StatCache(path, TOOLCHAIN).entries == c.entries


# -- the table against the per-source check, on a cooked game ------------------------------------


def test_fresh_by_the_table_exactly_when_fresh_by_each_sources_check(game, monkeypatch):
    from veduta.base.project import Project
    from veduta.cook.cook import fresh_by_stat, index_of
    from veduta.cook.scancache import ScanCache
    from veduta.cook.tasks import STATE_FILE, _fresh_by_table

    for i in range(20):
        game.write(f"models/gen/m{i:02d}.vmodel", BOX)
    game.cook(check=True)
    time.sleep(RACY_NS / 1e9 + 0.2)
    game.cook(check=True)  # entries recorded out of the racy window
    monkeypatch.chdir(game.root)
    project = Project.find(str(game.root))

    def compare() -> set[str]:
        sources = project.scan([], ScanCache(project.cache).walk)[0]
        rels = [s.rel for s in sources]
        cache = StatCache(os.path.join(project.cache, STATE_FILE), TOOLCHAIN)
        dirs = {s.kind.name: os.path.join(project.cooked, s.kind.folder) + os.sep for s in sources}
        prefix = project.assets + os.sep
        by_table = _fresh_by_table(cache, sources, rels, dirs, prefix)
        index = index_of(sources)
        each = set()
        for s in sources:
            cooked = dirs[s.kind.name] + s.name + ".vda"
            packed = cache.packed(s.rel)
            if packed is not None and fresh_by_stat(s.rel, packed, project.assets, cooked, index):
                if len(packed) == 3 and packed[2] == ():
                    each.add(s.rel)
        if by_table is None:  # (a file missing)
            return set()
        assert by_table == each, by_table ^ each
        return by_table

    everything = compare()
    assert {f"models/gen/m{i:02d}.vmodel" for i in range(20)} <= everything  # (tree reads tree_far: not)
    cooked = game.cooked("models/m03.vda")
    # each change any tool can make to a cooked file or a source is seen
    os.utime(cooked)  # touched
    assert "gen/m03" not in str(compare()) and "models/gen/m03.vmodel" not in compare()
    with open(cooked, "r+b") as f:  # truncated in place
        f.truncate(10)
    assert "models/gen/m03.vmodel" not in compare()
    shutil.copy(game.cooked("models/m04.vda"), game.cooked("models/m05.vda"))  # written over in place
    assert "models/gen/m05.vmodel" not in compare()
    os.replace(game.cooked("models/m06.vda"), game.cooked("models/m07.vda"))  # replaced, one gone
    assert compare() == set()  # (a cooked file missing: each source checked on its own)
    src = game.root / "assets/models/gen/m08.vmodel"
    src.write_text(src.read_text())  # the same bytes written again
    got = compare()
    assert "models/gen/m08.vmodel" not in got and "models/gen/m09.vmodel" not in got or got == set()


def test_a_noop_cook_and_an_edit_through_the_table(game):
    """Whole cooks: a no-op found fresh by the table, then each kind of change cooked again."""
    from tests.cook.test_cook import summary

    for i in range(20):
        game.write(f"models/gen/m{i:02d}.vmodel", BOX)
    game.cook(check=True)
    time.sleep(RACY_NS / 1e9 + 0.2)
    game.cook(check=True)
    assert marshal.loads((game.root / "cache/state.marshal").read_bytes())[0] == "veduta-state/6"
    assert summary(game.cook(check=True))["cooked"] == 0
    os.utime(game.cooked("models/m01.vda"))
    with open(game.cooked("models/m02.vda"), "r+b") as f:
        f.truncate(10)
    src = game.root / "assets/models/gen/m03.vmodel"
    src.write_text(src.read_text().replace("box", "box", 1) + " ")
    cp = game.cook(check=True)
    assert summary(cp)["cooked"] == 2 and summary(cp)["uptodate"] == 22, cp.stdout  # m01: META still fresh
    assert summary(game.cook(check=True))["cooked"] == 0


def test_changes_over_the_table_read_and_save_as_the_whole_dict_would(tmp_path):
    """Entries set or dropped over the file's table (what one edit does) are read back at once;
    saved, the file is the one every entry packed again would give, written over the rows when
    each changed source keeps a row (no entry unpacked), made whole otherwise."""
    from veduta.cook.state import _compact_file

    entries = _entries()
    rels = sorted(entries)
    now = time.time_ns()
    old = now - 10 * RACY_NS

    def clean(rel):
        return make_entry("ef" * 32, (9, old, 9, old), ((rel, (8, old, 8, old)),), now, CLEAN)

    def noted(rel):
        return make_entry("ef" * 32, (9, old, 9, old), ((rel, (8, old, 8, old)),), now, (("m",), ()))

    for changes, patched in (
        ({rels[3]: clean(rels[3])}, True),  # a row rewritten
        ({rels[5]: noted(rels[5]), "models/dep.vmodel": clean("models/dep.vmodel")}, True),  # whole, and back
        ({rels[7]: None, rels[7] + "x": None}, False),  # dropped: the file made whole
        ({rels[3]: None, "models/new.vmodel": clean("models/new.vmodel")}, False),
        ({rels[9]: None}, False),
        ({}, True),  # only the owed sources changed
    ):
        path = _saved(tmp_path, entries)
        c = StatCache(path, TOOLCHAIN)
        want = dict(entries)
        for rel, entry in changes.items():
            if entry is None:
                c.discard(rel)
                want.pop(rel, None)
            else:
                c.set(rel, entry)
                want[rel] = pack_entry(rel, entry)
        c.owed = {"models/owed.vmodel"}
        c.dirty = True
        assert len(c) == len(want) and c._entries is None
        for rel in {*want, *changes}:
            assert c.packed(rel) == want.get(rel)
        assert (c.table("\0".join(rels)) is None) == bool(changes)
        assert (c._patched() is not None) == patched
        c.save()
        assert (c._entries is None) == patched
        again = StatCache(path, TOOLCHAIN)
        assert again.entries == want and again.owed == {"models/owed.vmodel"}
        assert marshal.loads(open(path, "rb").read()) == _compact_file(TOOLCHAIN, want, {"models/owed.vmodel"})
    # dropped, then set again in the same run (an edited source found stale, then cooked): a row
    path = _saved(tmp_path, entries)
    c = StatCache(path, TOOLCHAIN)
    c.discard(rels[2])
    assert c.packed(rels[2]) is None and len(c) == len(entries) - 1
    c.set(rels[2], clean(rels[2]))
    assert c._patched() is not None and len(c) == len(entries)


def test_each_signature_of_the_table_pass_is_the_one_a_stat_of_its_path_gives(game, monkeypatch):
    """The table pass stats each file from a descriptor of its folder (tasks._signatures): the
    same signature os.stat of its path gives, for every kind's cooked folder and sources in
    nested folders, one reached through a symbolic link; a folder or file missing is the
    OSError a stat of the path raises."""
    import pytest

    from veduta.base.project import Project
    from veduta.cook.scancache import ScanCache
    from veduta.cook.tasks import _by_folder, _cooked_by_kind, _signatures

    for i in range(5):
        game.write(f"models/gen/deep/m{i:02d}.vmodel", BOX)
    for name in ("grass", "iron/dark"):  # (a second kind: another cooked folder)
        game.write(f"materials/{name}.vmaterial", '{"veduta": "material/1", "albedo": "#4f9a45"}')
    os.makedirs(game.root / "elsewhere")
    (game.root / "elsewhere/linked.vmodel").write_text(BOX)
    os.symlink(game.root / "elsewhere", game.root / "assets/models/via_link")
    game.cook(check=True)
    monkeypatch.chdir(game.root)
    project = Project.find(str(game.root))
    sources = project.scan([], ScanCache(project.cache).walk)[0]
    rels = [s.rel for s in sources]
    assert "models/via_link/linked.vmodel" in rels and "models/gen/deep/m04.vmodel" in rels
    assert len({s.kind for s in sources}) == 2 and len({r.rpartition("/")[0] for r in rels}) >= 6

    def sig(path: str) -> bytes:
        st = os.stat(path)
        return SIG.pack(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)

    prefix = project.assets + os.sep
    dirs = {s.kind.name: os.path.join(project.cooked, s.kind.folder) + os.sep for s in sources}
    assert _signatures(_by_folder(prefix, rels)) == [sig(prefix + r) for r in rels]
    assert _signatures(_cooked_by_kind(sources, dirs)) == [sig(dirs[s.kind.name] + s.name + ".vda") for s in sources]
    with pytest.raises(FileNotFoundError):
        _signatures(_by_folder(prefix, ["models/gone/m.vmodel"]))
    with pytest.raises(FileNotFoundError):
        _signatures(_by_folder(prefix, ["models/gen/deep/gone.vmodel"]))
