"""Suggestions for unknown names, and the progress throttle every long tool reports through."""

from __future__ import annotations

import pytest

from veduta.base.errors import Cancelled, no_such_asset
from veduta.base.names import LONGEST, closest, did_you_mean
from veduta.base.progress import Throttle


def test_closest_ranks_by_likeness_then_name():
    names = ["barrel", "crate", "crates", "tree", "tree_far", "create"]
    assert closest("crat", names) == ["crate", "crates", "create"]
    assert closest("tre", names) == ["tree"]
    assert closest("zzz", names) == []
    assert closest("crate", ["crate"]) == []  # the word itself is no suggestion


def test_did_you_mean_reads_as_a_sentence():
    assert did_you_mean("crat", ["crate"]) == " (did you mean crate?)"
    assert did_you_mean("crat", ["crate", "crates"]) == " (did you mean crate or crates?)"
    assert did_you_mean("crat", ["crate", "crates", "create"]) == " (did you mean crate, crates or create?)"
    assert did_you_mean("nothing", ["crate"]) == ""


def test_a_huge_word_gets_no_suggestion_quickly():
    assert closest("c" * (LONGEST + 1), ["c" * LONGEST]) == []
    assert did_you_mean("x" * 1_000_000, ["crate"]) == ""


def test_an_unknown_asset_names_the_closest_of_its_kind(game):
    from veduta.base.project import Project

    project = Project.find(str(game.root))
    msg = str(no_such_asset(project, "model", "crat"))
    assert msg == f'no model "crat" under {project.assets}/models/ (did you mean crate?)'
    assert str(no_such_asset(project, "material", "crat")).endswith("materials/")  # other kinds are not offered


def test_throttle_passes_first_last_and_one_call_per_interval():
    now = [0.0]
    seen = []
    t = Throttle(lambda d, n, m: seen.append((d, n, m)), interval=1.0, clock=lambda: now[0])
    for i in range(10):
        now[0] = i * 0.3
        t(i, 10, "step")
    t(10, 10, "done")
    assert [d for d, _, _ in seen] == [0, 4, 8, 10]
    Throttle(None)(1, 2, "nothing happens")


def test_a_cancel_raised_by_the_face_reaches_the_core():
    def face(done, total, message):
        raise Cancelled("cancelled by the client")

    with pytest.raises(Cancelled):
        Throttle(face)(0, 1, "first call always passes")
