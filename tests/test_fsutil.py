"""atomic_write: the bytes, the mode, no temp file left, whatever happens."""

from __future__ import annotations

import os
import stat

import pytest

from veduta.base import fsutil
from veduta.base.fsutil import atomic_write


@pytest.mark.parametrize("size", [0, 1, 5000, 3 * 2**20 + 7])
def test_atomic_write_writes_every_byte_and_leaves_no_temp_file(tmp_path, size):
    data = os.urandom(size)
    path = tmp_path / "sub" / "x.vda"  # the folder is made
    atomic_write(str(path), data)
    atomic_write(str(path), data[::-1], durable=True)  # replacing an existing file
    assert path.read_bytes() == data[::-1]
    assert os.listdir(path.parent) == ["x.vda"]


def test_atomic_write_sets_the_mode_asked_for(tmp_path):
    path = tmp_path / "x.vda"
    atomic_write(str(path), b"abc", mode=0o640)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_bytes() == b"abc"


def test_a_failed_write_keeps_the_old_file_and_removes_the_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "x.vda"
    path.write_bytes(b"old")

    def full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, "write", full)
    with pytest.raises(OSError, match="No space"):
        atomic_write(str(path), b"new")
    monkeypatch.undo()
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["x.vda"]
