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


def test_a_huge_word_gets_no_suggestion_quickly():
    from veduta.base.names import LONGEST

    assert closest("c" * (LONGEST + 1), ["c" * LONGEST]) == []
    assert did_you_mean("x" * 1_000_000, MODELS) == ""


def test_an_unknown_asset_names_the_closest_of_its_kind(game):
    from veduta.base.project import Project, no_such_asset

    project = Project.find(str(game.root))
    assert (
        str(no_such_asset(project, "model", "crat"))
        == f'no model "crat" under {project.assets}/models/ (did you mean crate?)'
    )
    assert str(no_such_asset(project, "material", "crat")).endswith("materials/")  # other kinds are not offered


def test_the_name_rule():
    from veduta.base.names import NAME_RULE, is_name

    assert is_name("crate_wood-2") and is_name("9lives")
    assert not any(is_name(x) for x in ("", "Crate", "_x", "a" * 65, "crate wood", None, 3))
    assert NAME_RULE == "1-64 of a-z, 0-9, _, -, starting with a letter or digit"


def test_throttled_progress_passes_the_first_the_last_and_one_call_per_interval():
    from veduta.base.progress import throttled

    now = [0.0]
    seen = []
    p = throttled(lambda d, n, m: seen.append(d), interval=1.0, clock=lambda: now[0])
    for i in range(10):
        now[0] = i * 0.3
        p(i, 10, "step")
    p(10, 10, "done")
    assert seen == [0, 4, 8, 10]
