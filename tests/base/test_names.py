"""Closest-name suggestions (veduta.base.names): what every "no such ..." message ends with."""

from __future__ import annotations

from veduta.base.names import closest, did_you_mean, unknown

MODELS = ["barrel", "crate", "crater", "grass_tuft", "grate", "tree", "tree_far", "well"]


def test_a_typo_names_the_closest_names_most_alike_first():
    assert closest("crat", MODELS) == ["crate", "crater", "grate"]
    assert closest("tre", MODELS) == ["tree"]
    assert closest("crat", MODELS, n=1) == ["crate"]
    assert unknown("model", "crat", MODELS) == 'no model "crat" (did you mean crate, crater or grate?)'
    assert unknown("model", "wel", MODELS) == 'no model "wel" (did you mean well?)'


def test_a_case_slip_comes_first_and_nothing_close_says_nothing():
    assert closest("Crate", MODELS)[0] == "crate"
    assert unknown("world", "nope", ["valley"]) == 'no world "nope"'
    assert did_you_mean("anything", []) == ""
    assert closest("crate", ["crate"]) == []  # the word itself is no suggestion


def test_suggestions_do_not_depend_on_the_order_of_the_candidates():
    assert closest("crat", reversed(MODELS)) == closest("crat", set(MODELS)) == closest("crat", MODELS)
    assert did_you_mean("tree_fa", MODELS) == " (did you mean tree_far or tree?)"
