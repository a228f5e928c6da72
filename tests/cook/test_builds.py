"""The build log (veduta/cook/builds.py): an edit's cook reads and writes a small file of recent
entries, never the log of every source; the two read as one."""

from __future__ import annotations

import marshal
import os

from veduta.cook import builds
from veduta.cook.builds import FOLD_AT, RECENT_FILE, log_of


def _stat(path):
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns, st.st_size


def _h(i: int) -> str:
    return f"{i:016x}" * 4


def test_a_first_cook_writes_the_log_and_an_edit_only_the_recent_file(tmp_path):
    cache = str(tmp_path)
    log = log_of(cache)
    for i in range(10):
        log.record(f"models/m{i}.vmodel", _h(i), "cooked", 0.001)
    log.save()
    base = os.path.join(cache, builds.BUILDS_FILE)
    recent = os.path.join(cache, RECENT_FILE)
    assert os.path.exists(base) and not os.path.exists(recent)  # no log yet: the log itself
    before = _stat(base)
    edit = log_of(cache)
    edit.record("models/m3.vmodel", _h(33), "cooked", 0.002)
    edit.save()
    assert edit._entries is None  # the log was not read
    assert _stat(base) == before and os.path.exists(recent)  # nor written
    again = log_of(cache)
    assert again.get("models/m3.vmodel", _h(33)) == (_h(33)[:16], "cooked", 0.002)  # the recent entry wins
    assert again.get("models/m3.vmodel", _h(3)) is None
    assert again.get("models/m4.vmodel", _h(4)) == (_h(4)[:16], "cooked", 0.001)
    assert len(again.entries) == 10
    # a restore after that: the recent file grows, the log stays
    more = log_of(cache)
    more.record("models/m4.vmodel", _h(44), "restored")
    more.save()
    assert _stat(base) == before
    assert log_of(cache).get("models/m4.vmodel", _h(44)) == (_h(44)[:16], "restored", None)
    assert log_of(cache).get("models/m3.vmodel", _h(33)) is not None  # (kept from the first edit)


def test_the_recent_entries_are_folded_into_the_log_at_fold_at(tmp_path):
    cache = str(tmp_path)
    log = log_of(cache)
    log.record("models/old.vmodel", _h(1), "cooked")
    log.save()
    base = os.path.join(cache, builds.BUILDS_FILE)
    recent = os.path.join(cache, RECENT_FILE)
    for start in range(0, FOLD_AT - 1, 500):  # cooks of up to 500 sources, FOLD_AT - 1 in all
        run = log_of(cache)
        for i in range(start, min(start + 500, FOLD_AT - 1)):
            run.record(f"models/m{i}.vmodel", _h(i), "cooked")
        run.save()
        assert os.path.exists(recent)
    before = _stat(base)
    last = log_of(cache)
    last.record("models/last.vmodel", _h(7), "cooked")
    last.save(keep=[f"models/m{i}.vmodel" for i in range(FOLD_AT - 1)] + ["models/last.vmodel"])
    assert not os.path.exists(recent) and _stat(base) != before  # folded
    entries = log_of(cache).entries
    assert len(entries) == FOLD_AT and "models/old.vmodel" not in entries  # (keep dropped it)
    assert entries["models/last.vmodel"] == (_h(7)[:16], "cooked", None)


def test_a_cook_killed_between_the_fold_writes_reads_the_same(tmp_path):
    cache = str(tmp_path)
    log = log_of(cache)
    log.record("models/a.vmodel", _h(1), "cooked")
    log.save()
    edit = log_of(cache)
    edit.record("models/a.vmodel", _h(2), "cooked")
    edit.save()
    recent = os.path.join(cache, RECENT_FILE)
    kept = open(recent, "rb").read()
    folded = log_of(cache)
    assert len(folded.entries) == 1  # (read: the next save folds)
    folded.record("models/b.vmodel", _h(3), "cooked")
    folded.save()
    assert not os.path.exists(recent)
    with open(recent, "wb") as f:  # as if killed after writing the log, before removing the recent file
        f.write(kept)
    got = log_of(cache)
    assert got.get("models/a.vmodel", _h(2)) is not None and got.get("models/b.vmodel", _h(3)) is not None


def test_a_damaged_recent_file_is_an_empty_one(tmp_path):
    cache = str(tmp_path)
    log = log_of(cache)
    log.record("models/a.vmodel", _h(1), "cooked")
    log.save()
    with open(os.path.join(cache, RECENT_FILE), "wb") as f:
        f.write(b"\x00not marshal")
    assert log_of(cache).get("models/a.vmodel", _h(1)) is not None
    with open(os.path.join(cache, RECENT_FILE), "wb") as f:
        f.write(marshal.dumps(("another/1", {"models/a.vmodel": (_h(9)[:16], "cooked", None)})))
    assert log_of(cache).get("models/a.vmodel", _h(1)) is not None
    edit = log_of(cache)
    edit.record("models/b.vmodel", _h(2), "cooked")
    edit.save()  # (the damaged file replaced by a good one)
    assert log_of(cache).get("models/b.vmodel", _h(2)) is not None
    assert log_of(cache).get("models/a.vmodel", _h(1)) is not None
