"""The whole-database check of doit's database is skipped only for the very file an earlier check
found whole (veduta/cook/doit_adapter.py, ``PreloadedSqliteDB._check``): any write to it since,
a damaged record, or a file changed within the racy window means reading every row again."""

from __future__ import annotations

import os

import pytest
from doit.dependency import JSONCodec, SqliteDB

from veduta.cook import doit_adapter as da
from veduta.cook import state


def _db(tmp_path, rows: int = 400) -> str:
    path = str(tmp_path / "doit.sqlite3")
    db = SqliteDB(path, JSONCodec())
    for i in range(rows):
        db.set(f"cook:models/m{i:04d}.vmodel", "_values_:", {"outcome": "cooked", "key": f"{i:016x}" * 4})
    db.dump()
    return path


def _damage_a_middle_page(path: str) -> None:
    """Garbage over one b-tree page in the middle of the file, the size kept: opening the file
    (its first page) still works, reading every row does not."""
    size = os.path.getsize(path)
    page = 4096
    middle = (size // page // 2) * page
    with open(path, "r+b") as f:
        f.seek(middle)
        f.write(b"\xff" * page)


@pytest.fixture
def no_racy_window(monkeypatch):
    """Every file counts as old enough to be trusted (no two-second waits in the tests)."""
    monkeypatch.setattr(state, "RACY_NS", 0)


def test_a_check_that_finds_the_file_whole_is_recorded_and_spares_the_next(tmp_path, no_racy_window):
    path = _db(tmp_path)
    assert not os.path.exists(path + da.CHECKED_SUFFIX)
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()
    sig = da._db_signature(path)
    assert sig is not None and da._checked_before(path, sig)
    # the record is what spares the check: one that names a damaged file's signature (which no
    # check would write) lets it open without reading every row
    _damage_a_middle_page(path)
    da._record_checked(path, da._db_signature(path))
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()


def test_a_file_written_since_its_check_is_checked_again(tmp_path, no_racy_window, capsys):
    path = _db(tmp_path)
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()
    assert da._checked_before(path, da._db_signature(path))
    _damage_a_middle_page(path)  # (same size; the write moves the ctime)
    db = da.PreloadedSqliteDB(path, JSONCodec())
    err = capsys.readouterr().err
    assert "doit's database is damaged (database disk image is malformed); moved it to" in err
    assert os.path.exists(path + ".damaged") and db.get("cook:models/m0000.vmodel", "_values_:") is None
    # the new database is checked, and recorded, as any other
    db.set("t", "x", 1)
    db.dump()
    again = da.PreloadedSqliteDB(path, JSONCodec())
    assert again.get("t", "x") == 1 and da._checked_before(path, da._db_signature(path))


def test_rows_a_run_writes_mean_a_check_next_time(tmp_path, no_racy_window):
    path = _db(tmp_path)
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()
    old = da._db_signature(path)
    db = da.PreloadedSqliteDB(path, JSONCodec())
    db.set("cook:models/new.vmodel", "_values_:", {"outcome": "cooked"})
    db.dump()
    new = da._db_signature(path)
    assert new != old and not da._checked_before(path, new)


@pytest.mark.parametrize("record", [b"", b"\x00garbage", b"not marshal at all" * 300, b"\xe9\x03"])
def test_a_damaged_record_means_a_check_never_a_traceback(tmp_path, no_racy_window, record):
    path = _db(tmp_path)
    with open(path + da.CHECKED_SUFFIX, "wb") as f:
        f.write(record)
    assert not da._checked_before(path, da._db_signature(path))
    _damage_a_middle_page(path)
    with open(path + da.CHECKED_SUFFIX, "wb") as f:
        f.write(record)
    db = da.PreloadedSqliteDB(path, JSONCodec())  # damaged: found, moved aside
    assert os.path.exists(path + ".damaged")
    db._conn.close()


def test_a_fifo_or_a_folder_in_the_place_of_the_record_is_no_record(tmp_path, no_racy_window):
    path = _db(tmp_path)
    os.mkfifo(path + da.CHECKED_SUFFIX)  # (never read: it would block)
    assert not da._checked_before(path, da._db_signature(path))
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()  # checked; the record replaces the FIFO
    assert da._checked_before(path, da._db_signature(path))
    os.unlink(path + da.CHECKED_SUFFIX)
    os.mkdir(path + da.CHECKED_SUFFIX)
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()  # checked; no record can be written
    assert not da._checked_before(path, da._db_signature(path))


def test_a_racy_file_is_checked_and_not_recorded(tmp_path):
    path = _db(tmp_path)  # just written: within the racy window
    assert da._db_signature(path) is None
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()
    assert not os.path.exists(path + da.CHECKED_SUFFIX)
    _damage_a_middle_page(path)
    da.PreloadedSqliteDB(path, JSONCodec())._conn.close()
    assert os.path.exists(path + ".damaged")


def test_a_database_in_memory_has_no_record(tmp_path):
    assert da._db_signature(":memory:") is None
    da.PreloadedSqliteDB(":memory:", JSONCodec())._conn.close()
