"""The local store keeps each toolchain's entries in a folder of its own; prune and info see all."""

from __future__ import annotations

import veduta
from veduta.cook.store import Store, namespace

K1, K2, K3 = "ab" * 32, "0f" * 32, "cd" * 32


def test_entries_of_another_toolchain_are_never_read_but_pruned(tmp_path, monkeypatch):
    root = tmp_path / "store"
    Store(str(root)).put(K1, b"this release")
    monkeypatch.setattr(veduta, "TOOLCHAIN_SALT", "veduta-cook-rules/next")
    assert namespace() == "veduta-cook-rules-next"
    nxt = Store(str(root))
    assert nxt.get(K1) is None and not nxt.has(K1)  # another release's entry: a miss
    nxt.put(K2, b"next release")
    (root / K3[:2]).mkdir()
    (root / K3[:2] / K3[2:]).write_bytes(b"the layout before toolchain folders")
    assert [p for p, _, _ in nxt.entries()] == [str(root / "veduta-cook-rules-next" / K2[:2] / K2[2:])]
    assert len(list(nxt.entries(every=True))) == 3
    assert nxt.prune(0, dry_run=True)[:2] == (3, len(b"this releasenext releasethe layout before toolchain folders"))
    nxt.prune(0)
    assert list(nxt.entries(every=True)) == []
    monkeypatch.undo()
    assert Store(str(root)).get(K1) is None
