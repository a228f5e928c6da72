"""`doit list` is veduta's CookList (entry point doit.COMMAND): fresh cook subtasks are printed
from their names, no Task made, and every listing is byte for byte doit's own List's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain

from tests.cook.test_cook import age, age_all
from tests.gamerepo import CRATE, make_game
from veduta.cook import doit_adapter as da
from veduta.cook import tasks as cook_tasks_module
from veduta.cook.state import RACY_NS

#: doit's own `list` (doit.cmd_list.List), whatever the entry points say
PLAIN_DOIT = """
import sys
from doit.cmd_list import List
from doit.doit_cmd import DoitMain

class PlainDoit(DoitMain):
    def get_cmds(self):
        cmds = super().get_cmds()
        assert cmds["list"].name == "list"  # veduta's, from the entry point
        cmds["list"] = List
        return cmds

sys.exit(PlainDoit().run(sys.argv[1:]))
"""

USER_TASKS = '''
def task_notes():
    """the team's notes"""
    return {"actions": [], "uptodate": [True]}


def task__scratch():
    """a private task"""
    return {"actions": [], "uptodate": [False]}
'''

LISTINGS = [
    ["list"],
    ["list", "--all"],
    ["list", "--all", "--status"],
    ["list", "-s"],
    ["list", "--all", "-q", "--status"],
    ["list", "--all", "--status", "--private"],
    ["list", "--all", "--status", "--template", "{status}|{name}|{doc}"],
    ["list", "--all", "--template", "{name}"],
    # served by doit's own code (every Task made): definition order, file_dep, named tasks
    ["list", "--all", "--status", "--sort", "definition"],
    ["list", "--all", "--deps"],
    ["list", "--all", "--status", "cook:models/crate.vmodel", "notes"],
    ["list", "--status", "cook"],
]


def _cooked_and_known_by_stat(game):
    """Cook *game*, then again out of the racy window: the stat cache holds every source."""
    game.cook(check=True)
    age_all(game)
    time.sleep(RACY_NS / 1e9 + 0.1)  # (the cooked files too: their ctime cannot be set back)
    game.cook(check=True)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A test game with every status a cook subtask can list: fresh by the stat cache, fresh by
    re-hashing (a racy source), stale (edited), stale (cooked file gone), ignored (doit ignore),
    and user tasks beside the cook, one of them private.  (Listing changes nothing: the tests
    share it.)"""
    game = make_game(tmp_path_factory.mktemp("list"))
    with open(game.root / "dodo.py", "a") as f:
        f.write(USER_TASKS)
    _cooked_and_known_by_stat(game)
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[1, 2, 1]"))
    age(game.root / "assets/models/crate.vmodel")
    game.cooked("models/barrel.vda").unlink()
    game.doit("ignore", "cook:models/tree_far.vmodel", check=True)
    game.write("models/town/stone/wall.vmodel", CRATE)
    game.cook("cook:models/town/stone/wall.vmodel", check=True)  # wall's entry is racy: re-hashed when listed
    return game


#: doit prints a task's file_dep (a set) in its hash order: the same seed in both processes
SEED = {"PYTHONHASHSEED": "7"}


def _plain(game, args):
    return subprocess.run(
        [sys.executable, "-c", PLAIN_DOIT, *args],
        cwd=game.root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **SEED},
    )


@pytest.mark.parametrize("args", LISTINGS, ids=" ".join)
def test_every_listing_is_doits_own_byte_for_byte(mixed, args):
    ours, theirs = mixed.doit(*args, env=SEED), _plain(mixed, args)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), ours.stderr + theirs.stderr
    assert ours.returncode == 0, ours.stderr


@pytest.fixture(scope="module")
def tabled(tmp_path_factory):
    """A test game whose state file's table holds a row for exactly its sources, every cooked file
    there (a listing compares the table as a no-op does, tasks._fresh_by_table), with a source
    the table finds fresh, more of them, a stale one (edited), one whose stat changed but not
    its content (fresh once re-hashed), an ignored one (doit ignore), and user tasks."""
    game = make_game(tmp_path_factory.mktemp("tabled"))
    for name in ("alpha", "beta", "gamma"):
        game.write(f"models/more/{name}.vmodel", CRATE)
    with open(game.root / "dodo.py", "a") as f:
        f.write(USER_TASKS)
    _cooked_and_known_by_stat(game)
    game.write("models/crate.vmodel", CRATE.replace("[1, 1, 1]", "[1, 2, 1]"))
    age(game.root / "assets/models/crate.vmodel")
    age(game.root / "assets/models/props/barrel.vmodel", seconds=5)  # touched: the same bytes
    game.doit("ignore", "cook:models/tree_far.vmodel", check=True)
    return game


@pytest.mark.parametrize("args", LISTINGS, ids=" ".join)
def test_every_listing_by_the_table_is_doits_own_byte_for_byte(tabled, args):
    ours, theirs = tabled.doit(*args, env=SEED), _plain(tabled, args)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), ours.stderr + theirs.stderr
    assert ours.returncode == 0, ours.stderr


def test_a_listing_takes_the_sources_the_table_finds_fresh(tabled, monkeypatch, capsys):
    """The listing compares the state file's table as the no-op does: the sources whose rows
    match are taken by name (not the ignored one, whose Task doit sees); the edited and the
    touched source, and the tree (its entry names a dependency, tree_far: no table row), are
    checked one by one, the touched one fresh once re-hashed: the fresh ones taken too."""
    found = []
    by_table = cook_tasks_module._fresh_by_table

    def spy(*args):
        found.append(by_table(*args))
        return found[-1]

    monkeypatch.setattr(cook_tasks_module, "_fresh_by_table", spy)
    out, listing = _list_in_process(tabled, monkeypatch, capsys, "list", "--all", "--status")
    more = [f"models/more/{n}.vmodel" for n in ("alpha", "beta", "gamma")]
    assert found == [{*more, "models/tree_far.vmodel"}]
    assert sorted(listing.entries) == [
        *[(f"cook:{rel}", f"model {rel[12:-7]}") for rel in more],
        ("cook:models/props/barrel.vmodel", "model barrel"),
        ("cook:models/tree.vmodel", "model tree"),
    ]
    rows = [line.split()[:2] for line in out.splitlines()]
    assert rows == [
        ["U", "cook"],
        ["U", "cook:_orphans"],
        ["R", "cook:models/crate.vmodel"],
        *[["U", f"cook:{rel}"] for rel in more],
        ["U", "cook:models/props/barrel.vmodel"],
        ["U", "cook:models/tree.vmodel"],
        ["I", "cook:models/tree_far.vmodel"],
    ]  # (in this process the loader has the cook's tasks only)


def test_a_missing_cooked_file_is_listed_without_the_table(mixed, monkeypatch, capsys):
    """A cooked file gone (the mixed game's barrel): the table is not compared (no row could
    say why), each source is checked, and the listing is the same (test_statuses_of_the_mixed_game)."""
    found = []
    by_table = cook_tasks_module._fresh_by_table
    monkeypatch.setattr(cook_tasks_module, "_fresh_by_table", lambda *a: found.append(by_table(*a)) or found[-1])
    _list_in_process(mixed, monkeypatch, capsys, "list", "--all", "--status")
    assert found == [None]


#: user tasks whose status doit decides from other tasks (doit hands each the dict of every
#: Task): result_dep of the group, and result_dep and getargs of a fresh source
PACK_TASK = '''
from doit.tools import result_dep


def task_pack():
    """pack what the cook made"""
    return {"actions": [], "uptodate": [result_dep("cook")]}
'''
#: (doit runs no task of a dodo file with these: a task_dep on a subtask of a create_after
#: creator is unknown to doit run; doit list lists them)
RESULT_TASKS = '''

def task_after_tree():
    """after the tree"""
    return {"actions": [], "uptodate": [result_dep("cook:models/tree.vmodel")]}


def show(outcome):
    print(outcome)


def task_tree_outcome():
    """the tree's outcome"""
    return {"actions": [show], "getargs": {"outcome": ("cook:models/tree.vmodel", "outcome")}}
'''


@pytest.fixture(scope="module")
def related(tmp_path_factory):
    """A test game whose dodo file has PACK_TASK (run) and RESULT_TASKS, every source fresh by the stat
    cache, and one source whose odd name (a trailing space) doit trims from its doc."""
    game = make_game(tmp_path_factory.mktemp("related"))
    with open(game.root / "dodo.py", "a") as f:
        f.write(PACK_TASK)
    _cooked_and_known_by_stat(game)
    game.doit("pack", check=True)
    with open(game.root / "dodo.py", "a") as f:
        f.write(RESULT_TASKS)
    game.write("models/odd .vmodel", CRATE)  # (not an asset name: stale, it fails to cook)
    return game


@pytest.mark.parametrize("args", [["list", "-s"], ["list", "--all", "--status"], ["list", "--all"]], ids=" ".join)
def test_tasks_that_ask_other_tasks_and_odd_docs_list_as_doit_lists_them(related, args):
    ours, theirs = related.doit(*args, env=SEED), _plain(related, args)
    assert theirs.returncode == 0, theirs.stderr
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), ours.stderr
    if "--all" in args:
        # the doc as doit's Task keeps it (trimmed)
        assert re.search(r"^(R )?cook:models/odd \.vmodel +model odd$", ours.stdout, re.M), ours.stdout


def test_a_cook_creator_under_another_name_lists_its_subtasks_by_that_name(game):
    """A dodo file may import task_cook as another task (task_assets): doit names the subtasks
    after it, and so does the listing (doit's own: only cook:<path> subtasks are trusted fresh)."""
    _cooked_and_known_by_stat(game)
    (game.root / "dodo.py").write_text(
        "from veduta.dodo import DOIT_CONFIG, task_cook as task_assets\n"
        'DOIT_CONFIG = {**DOIT_CONFIG, "default_tasks": ["assets"]}\n'
    )
    args = ["list", "--all", "--status"]
    ours, theirs = game.doit(*args), _plain(game, args)
    assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), ours.stderr + theirs.stderr
    assert "assets:models/tree.vmodel" in ours.stdout and "cook:" not in ours.stdout


def test_statuses_of_the_mixed_game(mixed):
    rows = [line.split()[:2] for line in mixed.doit("list", "--all", "--status", check=True).stdout.splitlines()]
    assert rows == [
        ["U", "cook"],
        ["U", "cook:_orphans"],
        ["R", "cook:models/crate.vmodel"],
        ["R", "cook:models/props/barrel.vmodel"],
        ["U", "cook:models/town/stone/wall.vmodel"],
        ["U", "cook:models/tree.vmodel"],
        ["I", "cook:models/tree_far.vmodel"],
        ["U", "notes"],
    ]


def _list_in_process(game, monkeypatch, capsys, *args):
    """Run `doit list ARGS` in this process (the entry point's command, a namespace like the
    dodo file's); returns (stdout, the FreshListing the task pass filled or None)."""
    from veduta.base.project import Project
    from veduta.cook.tasks import CookRun, doit_config, task_creator

    seen = []

    def spy():
        listing = da.fresh_listing()
        seen.append(listing)
        return listing

    monkeypatch.setattr(cook_tasks_module, "fresh_listing", spy)
    monkeypatch.chdir(game.root)
    run = CookRun(Project.find(str(game.root)))
    capsys.readouterr()
    assert (
        DoitMain(ModuleTaskLoader({"task_cook": task_creator(run), "DOIT_CONFIG": doit_config(run)})).run(list(args))
        == 0
    )
    assert len(seen) == 1
    return capsys.readouterr().out, seen[0]


def test_fresh_subtasks_are_taken_by_name_only_where_the_listing_allows(mixed, monkeypatch, capsys):
    out, listing = _list_in_process(mixed, monkeypatch, capsys, "list", "--all", "--status")
    assert isinstance(listing, da.FreshListing) and listing.claimed
    # the fresh ones, not the ignored one (doit decides its I) and not the stale ones
    assert sorted(listing.entries) == [
        ("cook:models/town/stone/wall.vmodel", "model wall"),
        ("cook:models/tree.vmodel", "model tree"),
    ]
    # (the longest name is a fresh one's: the column is as wide as doit makes it for all)
    assert "U cook:models/tree.vmodel              model tree\n" in out
    for args in (["--all", "--deps"], ["--all", "--sort", "definition"], ["--all", "cook:models/tree.vmodel"]):
        out, listing = _list_in_process(mixed, monkeypatch, capsys, "list", *args)
        assert listing is None, args  # every Task made: doit's own code lists them
        assert "cook:models/tree.vmodel" in out


def test_a_dodo_file_without_cook_tasks_gets_doits_own_list(tmp_path):
    (tmp_path / "dodo.py").write_text(USER_TASKS)
    args = ["list", "--all", "--status", "--private"]
    ours = subprocess.run([sys.executable, "-m", "doit", *args], cwd=tmp_path, capture_output=True, text=True)
    theirs = subprocess.run([sys.executable, "-c", PLAIN_DOIT, *args], cwd=tmp_path, capture_output=True, text=True)
    assert ours.returncode == theirs.returncode == 0, ours.stderr + theirs.stderr
    assert ours.stdout == theirs.stdout == "R _scratch   a private task\nU notes      the team's notes\n"


def test_doit_help_list_is_doits_own():
    out = subprocess.run([sys.executable, "-m", "doit", "help", "list"], capture_output=True, text=True).stdout
    assert out.startswith("doit list [TASK ...]") or "list tasks from dodo file" in out
    assert "--status" in out and "--deps" in out


NOOP_IMPORTS = """
import sys
if sys.argv[1] == "veduta":
    from veduta.faces.cli.main import main
    rc = main(sys.argv[2:])
else:
    from doit.doit_cmd import DoitMain
    rc = DoitMain().run(sys.argv[2:])
print(" ".join(sorted(m for m in sys.modules if m.startswith(("veduta", "numpy")))))
sys.exit(rc)
"""


@pytest.mark.parametrize(
    "args", [["doit", "cook"], ["doit", "list", "--all", "--status"], ["veduta", "cook"]], ids=" ".join
)
def test_a_no_op_imports_no_reader_codec_or_compiler(game, args):
    """What a no-op cook and a listing of fresh sources import: they decide by stat() alone, so no
    source parser, diagnostics, container codec, shared-cache client or numpy (docs/cooking.md);
    doit's no-op and listing not even the compilers' package or the edits' journal.
    (veduta cook builds its whole command line first: the light faces of the other commands.)"""
    _cooked_and_known_by_stat(game)
    cp = subprocess.run(
        [sys.executable, "-c", NOOP_IMPORTS, *args], cwd=game.root, capture_output=True, text=True, timeout=120
    )
    assert cp.returncode == 0, cp.stderr
    loaded = set(cp.stdout.split("\n")[-2].split())
    assert "veduta.cook.tasks" in loaded  # (the line is the module list)
    faces: set[str] = set()
    heavy = {
        m
        for m in loaded
        if m.startswith(
            (
                "numpy",
                "veduta.source",
                "veduta.container",
                "veduta.formats",
                "veduta.compile.",
                "veduta.cook.remote",
                "veduta.cook.shared",
            )
        )
    }
    assert heavy - faces == set()
    if args[0] == "doit":
        # nor the compilers' package, nor the edits' journal (unless an edit set waits)
        assert loaded.isdisjoint({"veduta.compile", "veduta.cook.journal"}), sorted(loaded)


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "doit", "list", "--all", "--status"],
        ["-m", "doit", "cook"],
        ["-m", "veduta", "cook"],
        ["-m", "veduta", "check"],
        ["-m", "veduta", "why"],
    ],
)
def test_a_reader_that_went_away_is_no_traceback(tmp_path, args):
    """`doit list --all --status | head` ended in a BrokenPipeError traceback (issue 28). Here
    the reader (head) has gone before the command writes a byte: every write meets a closed
    pipe, whatever the machine's speed. The cook still cooks everything it would have."""
    g = make_game(tmp_path)
    g.write("models/bad.vmodel", '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1], "radius": 1}]}')
    r, w = os.pipe()
    os.close(r)  # head has read its lines and gone
    try:
        cp = subprocess.run(
            [sys.executable, *args], cwd=g.root, stdout=w, stderr=subprocess.PIPE, text=True, timeout=300
        )
    finally:
        os.close(w)
    assert "Traceback" not in cp.stderr and "BrokenPipe" not in cp.stderr, cp.stderr
    assert cp.returncode in (0, 1), (cp.returncode, cp.stderr)
    if "cook" in args:
        assert g.cooked("models/crate.vda").is_file() and g.cooked("models/tree.vda").is_file()
