"""Every use of doit's internals (veduta/cook/doit_adapter.py), checked against the installed doit."""

from __future__ import annotations

import inspect
import io
import re
import tomllib
from pathlib import Path

import doit
import pytest
from doit.cmd_base import ModuleTaskLoader
from doit.dependency import Dependency, FileChangedChecker, JSONCodec, SqliteDB
from doit.doit_cmd import DoitMain
from doit.globals import Globals
from doit.reporter import ConsoleReporter
from doit.task import Task

from veduta.cook import doit_adapter as da

ROOT = Path(__file__).resolve().parents[2]


def test_the_pin_the_checked_version_and_minversion_agree(tmp_path):
    pin = next(
        d
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        if d.startswith("doit")
    )
    low, high = re.fullmatch(r"doit>=([\d.]+),<([\d.]+)", pin).groups()
    assert low == da.DOIT_CHECKED
    installed = tuple(doit.__version__)
    assert tuple(int(x) for x in low.split(".")) <= installed < tuple(int(x) for x in high.split("."))
    from veduta.base.project import Project
    from veduta.cook.tasks import CookRun, doit_config

    assert doit_config(CookRun(Project.at(str(tmp_path))))["minversion"] == da.DOIT_CHECKED


def test_preloaded_db_reads_what_sqlite_db_wrote(tmp_path):
    path = str(tmp_path / "db.sqlite3")
    db = SqliteDB(path, JSONCodec())
    db.set("a", "x", 1)
    db.set("b", "y", [2])
    db.dump()
    for preload_after in (16, 1):  # a few rows read one by one; then every row in one query
        pre = da.PreloadedSqliteDB(path, JSONCodec())
        pre.PRELOAD_AFTER = preload_after
        assert pre.in_("a") and not pre.in_("c")
        assert pre.get("a", "x") == 1 and pre.get("b", "y") == [2] and pre.get("c", "z") is None
        assert (pre._raw is None) == (preload_after == 16)
        assert pre.in_("b")
    pre = da.PreloadedSqliteDB(path, JSONCodec())
    pre.remove("b")
    pre.dump()
    again = da.PreloadedSqliteDB(path, JSONCodec())
    again.PRELOAD_AFTER = 1
    assert again.get("a", "x") == 1 and not again.in_("b") and set(again._preload()) == set()


@pytest.mark.parametrize("preload_after", [16, 1])
def test_a_row_written_now_reads_back_and_lands_with_the_run(tmp_path, preload_after):
    path = str(tmp_path / "db.sqlite3")
    first = SqliteDB(path, JSONCodec())
    first.set("old", "x", 1)
    first.dump()
    db = da.PreloadedSqliteDB(path, JSONCodec())
    db.PRELOAD_AFTER = preload_after
    assert db.get("old", "x") == 1
    db.set("t", "_values_:", {"outcome": "cooked"})
    db.set("t", "src/a", [1, 2, 3, 4])
    db.write_now("t")
    assert "t" not in db._cache and "t" not in db._dirty  # no longer held in memory
    assert db.in_("t") and db.get("t", "src/a") == [1, 2, 3, 4]  # read back from the database
    db.write_now("nothing")  # (no row: nothing written)
    assert not db.in_("nothing")
    db.dump()
    again = da.PreloadedSqliteDB(path, JSONCodec())
    again.PRELOAD_AFTER = preload_after
    assert again.get("t", "_values_:") == {"outcome": "cooked"} and again.get("old", "x") == 1


def test_a_row_written_now_is_not_in_the_database_of_a_killed_run(tmp_path):
    """Written in the run's one transaction: a cook killed before its end leaves the database
    as the last whole run left it, readable."""
    import subprocess
    import sys

    path = str(tmp_path / "db.sqlite3")
    first = SqliteDB(path, JSONCodec())
    first.set("old", "x", 1)
    first.dump()
    script = (
        f"import os\nfrom doit.dependency import JSONCodec\nfrom veduta.cook import doit_adapter as da\n"
        f"db = da.PreloadedSqliteDB({path!r}, JSONCodec())\n"
        "db.set('t', 'x', 2)\ndb.write_now('t')\nassert db.get('t', 'x') == 2\nos._exit(9)\n"
    )
    assert subprocess.run([sys.executable, "-c", script], cwd=ROOT).returncode == 9
    again = da.PreloadedSqliteDB(path, JSONCodec())
    assert again.get("old", "x") == 1 and not again.in_("t")


class _Base64Codec(JSONCodec):
    """A codec a dodo file may set (DOIT_CONFIG codec_cls): rows that are not JSON text."""

    def encode(self, data):
        import base64

        return base64.b64encode(super().encode(data).encode()).decode()

    def decode(self, data):
        import base64

        return super().decode(base64.b64decode(data).decode())


@pytest.mark.parametrize("codec", [JSONCodec, _Base64Codec])
def test_may_be_ignored_finds_every_row_doit_ignore_wrote(tmp_path, codec):
    path = str(tmp_path / "db.sqlite3")
    dm = Dependency(da.PreloadedSqliteDB, path, codec_cls=codec)
    dm.ignore(Task("cook:models/tree.vmodel", None))
    dm._set("cook:models/crate.vmodel", "result:", "x")
    dm.close()
    db = da.PreloadedSqliteDB(path, codec())
    assert db.may_be_ignored("cook:models/tree.vmodel")  # (`doit list` shows it I: doit decides)
    assert db.may_be_ignored("cook:models/crate.vmodel") == (codec is not JSONCodec)  # unsure: ask doit
    # the same answer for every task at once (`doit list` of the sources the table finds fresh)
    assert db.maybe_ignored() == ({"cook:models/tree.vmodel"} if codec is JSONCodec else None)
    assert db.get("cook:models/crate.vmodel", "result:") == "x"  # (a row decoded: doit's own to judge)
    assert db.may_be_ignored("cook:models/crate.vmodel")
    if codec is JSONCodec:
        assert db.maybe_ignored() == {"cook:models/tree.vmodel", "cook:models/crate.vmodel"}


def _dep(tmp_path, checker_cls=None):
    kw = {"checker_cls": checker_cls} if checker_cls else {}
    return Dependency(da.PreloadedSqliteDB, str(tmp_path / "dep.sqlite3"), **kw)


def test_bind_class_keeps_the_name_doit_records(tmp_path):
    class Checker(FileChangedChecker):
        def check_modified(self, file_path, file_stat, state):
            return False

        def get_state(self, dep, current_state):
            return None

    bound = da.bind_class(Checker, run="the run")
    assert bound.run == "the run" and bound.__name__ == "Checker" and issubclass(bound, Checker)
    f = tmp_path / "src"
    f.write_text("x")
    dm = _dep(tmp_path, bound)
    task = Task("t", [], file_dep=[str(f)])
    dm.save_success(task)
    assert dm._get("t", "checker:") == "Checker"  # what a renamed class would change


def test_overwrite_saved_replaces_values_and_file_dep(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1")
    b.write_text("2")
    dm = _dep(tmp_path)
    task = Task("t", [], file_dep=[str(a)])
    task.values = {"big": "x" * 100}
    dm.save_success(task)  # what doit does before the reporter's add_success
    saved, Globals.dep_manager = Globals.dep_manager, dm
    try:
        da.overwrite_saved("t", {"outcome": "cooked"}, [str(a), str(b)])
    finally:
        Globals.dep_manager = saved
    assert dm.get_values("t") == {"outcome": "cooked"}
    assert dm._get("t", "deps:") == (str(a), str(b)) and dm._get("t", str(b)) is not None


def _group_g(subtasks, after=None):
    """``task_g``: a group g (with a GroupHandle) of subtasks a, b, c; each time doit makes
    them, ``subtasks(handle)`` gives the function that makes subtask *name* as
    ``(name, act)``, where ``act(name)`` appends to the list returned with it.
    ``after(handle)`` runs once every subtask is made."""
    ran: list[str] = []
    handle = da.GroupHandle()

    def act(name):  # (a function: doit refuses a built-in as an action)
        ran.append(name)

    @doit.create_after()
    def task_g():
        yield {"name": None, "uptodate": [handle]}
        subtask = subtasks(handle)
        for n in ("a", "b", "c"):
            yield subtask(n, act)
        if after is not None:
            after(handle)

    return ran, handle, task_g


def test_group_handle_and_wait_only_for_in_a_real_run():
    def only_a_and_c(handle):
        assert da.wait_only_for(handle, {"g:b"})

    ran, handle, task_g = _group_g(lambda handle: lambda n, act: {"name": n, "actions": [(act, [n])]}, only_a_and_c)
    out = io.StringIO()
    loader = ModuleTaskLoader(
        {"task_g": task_g, "DOIT_CONFIG": {"dep_file": ":memory:", "backend": "sqlite3", "outfile": out}}
    )
    assert DoitMain(loader).run(["run", "g"]) == 0
    assert isinstance(handle.task, Task) and handle.task.name == "g"
    assert ran == ["a", "c"]  # the group no longer waited for g:b, so doit never ran it


def _act(name):
    return {"ran": name}


def _doit_made(tasks: list[dict], group: str = "g") -> dict[str, Task]:
    """What doit's own loader makes of a group *group* and its subtask dicts."""
    from doit.loader import generate_tasks

    def gen():
        yield {"name": None, "doc": "group"}
        yield from (dict(t) for t in tasks)

    return {t.name: t for t in generate_tasks(group, gen())}


def _made_here(tasks: list[dict], group: str = "g") -> dict[str, Task]:
    from doit.loader import generate_tasks

    handle = da.GroupHandle()

    def gen():
        yield {"name": None, "doc": "group", "uptodate": [handle]}
        make = da.SubtaskMaker(handle)
        yield from (make(dict(t)) for t in tasks)

    return {t.name: t for t in generate_tasks(group, gen())}


def _attrs(task: Task, names) -> dict:
    # every attribute doit's Task has, read as doit reads it (through the class for a Subtask's
    # shared ones); uptodate items and actions compare by what they hold (the GroupHandle is ours)
    d = {n: getattr(task, n) for n in names}
    d["io"] = vars(d["io"])
    d["uptodate"] = [u for u in d["uptodate"] if not isinstance(u[0], da.GroupHandle)]
    return d


SUBTASKS = [
    {
        "name": "a",
        "actions": [(_act, ["a", [1, 2]])],
        "file_dep": ["src/a", "src/shared"],
        "clean": True,
        "doc": "model a",
        "targets": ["out/a"],
    },
    {
        "name": "b",
        "actions": [(_act, ["b"])],
        "file_dep": ["src/b"],
        "clean": True,
        "doc": "model b",
        "targets": ["out/b"],
        "uptodate": [False],
    },
    {"name": "c", "actions": [(_act, ["c"])], "file_dep": ["src/c"], "clean": True, "doc": "model c"},
    {
        "name": "d",
        "actions": [(_act, ["d"])],
        "file_dep": [],
        "clean": True,
        "doc": "model d",
        "targets": ["out/d"],
        "uptodate": [True, False],
    },
]


def test_subtask_maker_makes_the_tasks_doit_makes():
    theirs, ours = _doit_made(SUBTASKS), _made_here(SUBTASKS)
    assert list(theirs) == list(ours) == ["g", "g:a", "g:b", "g:c", "g:d"]
    assert ours["g"].task_dep == theirs["g"].task_dep == ["g:a", "g:b", "g:c", "g:d"]
    names = list(vars(theirs["g:a"]))
    for name in ("g:a", "g:b", "g:c", "g:d"):
        assert isinstance(ours[name], Task)
        assert _attrs(ours[name], names) == _attrs(theirs[name], names), name
    assert type(ours["g:a"]) is Task and type(ours["g:b"]) is da.Subtask  # the first is doit's own
    # a Subtask keeps only what differs, what doit changes in place and what it sets while it runs
    b, c = ours["g:b"], ours["g:c"]
    assert not set(vars(b)) & set(da.Subtask.SHARED) - set(da.Subtask.RUNTIME)
    assert len(set(vars(b)) - set(da.Subtask.RUNTIME)) < len(names) / 2
    for attr, value in vars(b).items():
        if isinstance(value, (list, set, dict)):
            assert value is not getattr(c, attr), attr
    assert b.actions[0].args == ["b"]  # doit makes its action objects from them as usual


def test_a_subtasks_options_are_those_doit_gives_a_task_without_params():
    for args in (None, [], ["cook:other"], ["--x"]):
        theirs, ours = _doit_made(SUBTASKS)["g:c"], _made_here(SUBTASKS)["g:c"]
        assert type(ours) is da.Subtask
        try:
            want = ("returns", theirs.init_options(list(args) if args is not None else None))
        except BaseException as exc:  # noqa: BLE001 - doit's own refusal of an unknown option
            want = ("raises", type(exc))
        try:
            got = ("returns", ours.init_options(list(args) if args is not None else None))
        except BaseException as exc:  # noqa: BLE001
            got = ("raises", type(exc))
        assert got == want and ours.options == theirs.options, args
        assert ours.init_options() is None and ours.options == theirs.options  # once only
    assert theirs.options == {} and da.Subtask.options is None  # (each task gets a dict of its own)


#: docs doit's Task trims to their first non-blank line, stripped (doit.task.first_line): a
#: source named ``odd .vmodel`` or ``a\rb.vmodel`` is listed (and fails its cook), doc and all
ODD_DOCS = [
    "model odd ",
    " model lead",
    "model cr\r",
    "model a\rb",
    "model tab\t",
    "model nbsp\xa0",
    "model ls\u2028x",
    "model nel\x85",
    "model ff\x0c",
    "",
    "model tab\there",
]


def test_subtask_maker_keeps_a_doc_as_doit_keeps_it():
    # the first subtask is made by doit itself: the odd docs come after it, on the copying path
    tasks = SUBTASKS[:1] + [
        {"name": f"o{i}", "actions": [(_act, ["o"])], "clean": True, "doc": doc} for i, doc in enumerate(ODD_DOCS)
    ]
    theirs, ours = _doit_made(tasks), _made_here(tasks)
    assert [ours[f"g:o{i}"].doc for i in range(len(ODD_DOCS))] == [theirs[f"g:o{i}"].doc for i in range(len(ODD_DOCS))]
    assert theirs["g:o0"].doc == "model odd" and theirs["g:o3"].doc == "model a"  # (what doit keeps)
    assert type(ours["g:o0"]) is da.Subtask


def test_a_subtask_pickles_as_doit_process_workers_pickle_it():
    import pickle

    from doit.runner import JobTask, JobTaskPickle

    task = _made_here(SUBTASKS)["g:b"]
    assert type(task) is da.Subtask
    again = pickle.loads(pickle.dumps(task))  # (doit's JobTask, for a task sent to a worker)
    assert type(again) is da.Subtask and again.name == "g:b" and again.file_dep == {"src/b"}
    assert again.io.capture is True and again.getargs == {} and again.subtask_of == "g"
    JobTask(task)
    safe = JobTaskPickle(task).task_dict  # Task.pickle_safe_dict, what a worker sends back
    assert "uptodate" not in safe and safe["name"] == "g:b"
    again.update_from_pickle(safe)
    assert again.name == "g:b"


def test_subtask_maker_leaves_to_doit_what_it_does_not_copy():
    handle = da.GroupHandle()
    make = da.SubtaskMaker(handle)
    d = {"name": "x", "actions": [(_act, ["x"])], "clean": True, "doc": "x"}
    assert make(d) is d  # the group's Task is not known yet
    handle.task = Task("g", None, has_subtask=True)
    for odd in (
        {"verbosity": 2},
        {"clean": [(_act, ["c"])]},
        {"doc": "two\nlines"},
        {"uptodate": [lambda: True]},
        {"setup": ["other"]},
    ):
        d = dict({"name": "x", "actions": [(_act, ["x"])], "clean": True, "doc": "x"}, **odd)
        assert make(d) is d, odd
    assert handle.task.task_dep == []


@pytest.mark.parametrize("made_here", [False, True])
def test_subtasks_made_here_run_in_a_real_doit_run(tmp_path, capsys, made_here):
    def subtasks(handle):
        make = da.SubtaskMaker(handle) if made_here else (lambda d: d)
        return lambda n, act: make(
            {
                "name": n,
                "actions": [(act, [n])],
                "clean": True,
                "doc": f"doc {n}",
                "uptodate": [n != "b"],
                "file_dep": [str(tmp_path / "src")],
                "targets": [str(tmp_path / n)],
            }
        )

    ran, handle, task_g = _group_g(subtasks)

    def run(*args):
        out = io.StringIO()
        loader = ModuleTaskLoader(
            {"task_g": task_g, "DOIT_CONFIG": {"dep_file": str(tmp_path / "db"), "backend": "sqlite3", "outfile": out}}
        )
        assert DoitMain(loader).run(list(args)) == 0, out.getvalue()
        return out.getvalue()

    (tmp_path / "src").write_text("x")
    run("run", "g")
    assert ran == ["a", "b", "c"]  # never run before: every task runs
    for n in "ac":
        (tmp_path / n).write_text(n)
    ran.clear()
    run("run", "g")
    assert ran == ["b"]  # a and c are up to date (file_dep unchanged, targets there); b never is
    capsys.readouterr()
    run("list", "--all", "--status")  # doit list prints on stdout
    assert [line.split() for line in capsys.readouterr().out.splitlines()] == [
        ["U", "g"],
        ["U", "g:a", "doc", "a"],
        ["R", "g:b", "doc", "b"],
        ["U", "g:c", "doc", "c"],
    ]


def test_drop_failures_leaves_them_out_of_the_final_report():
    from doit.exceptions import TaskFailed

    out = io.StringIO()
    rep = ConsoleReporter(out, {"failure_verbosity": 0})
    keep, drop = Task("keep", [], verbosity=0), Task("drop", [], verbosity=0)
    for t in (keep, drop):
        t.executed = True
        rep.add_failure(t, TaskFailed(f"{t.name} failed"))
    shown = out.getvalue()
    da.drop_failures(rep, lambda task: task.name == "drop")
    rep.complete_run()
    final = out.getvalue()[len(shown) :]  # the report at the end repeats the failures kept
    assert "keep <stderr>" in final and "drop <stderr>" not in final


def test_two_runs_in_one_process_keep_their_own_state(game, tmp_path):
    from tests.gamerepo import make_game
    from veduta.base.project import Project
    from veduta.cook.tasks import CookRun, cook_tasks

    (tmp_path / "other").mkdir()
    other = make_game(tmp_path / "other")
    game.cook(check=True)
    other.cook(check=True)
    a, b = CookRun(Project.at(str(game.root))), CookRun(Project.at(str(other.root)))
    list(cook_tasks(a))
    list(cook_tasks(b))
    assert a.verified and b.verified
    assert all(p.startswith(a.project.assets) for p in a.verified)
    assert all(p.startswith(b.project.assets) for p in b.verified)
    assert a.cache is not b.cache


def _nothing():
    pass  # an action doit's worker processes can unpickle


def test_runner_parallelism_seen_from_a_task_creator():
    seen = []

    @doit.create_after()
    def task_p():
        seen.append(da.runner_parallelism())
        yield {"name": "a", "actions": [(_nothing, [])]}

    def run(*args):
        loader = ModuleTaskLoader(
            {"task_p": task_p, "DOIT_CONFIG": {"dep_file": ":memory:", "backend": "sqlite3", "outfile": io.StringIO()}}
        )
        assert DoitMain(loader).run(["run", *args, "p"]) == 0

    run()
    run("-n", "3", "-P", "thread")
    run("-n", "2", "-P", "process")
    assert seen == [("serial", 0), ("threads", 3), ("processes", 2)]
    assert da.runner_parallelism() == ("none", 0)


def test_a_cook_only_n_run_is_serial_with_its_n_for_the_pool(tmp_path):
    """doit's run command is veduta's (entry point), and it runs a -n N selection of veduta task
    creators' tasks in doit's serial runner, telling the task pass N; any other selection, any
    other creator and -P process get doit's own runners."""
    import threading

    from doit.cmd_run import Run

    seen = []

    def made(name, marked):
        @doit.create_after()
        def creator():
            seen.append((name, da.runner_parallelism()))
            yield {"name": "a", "actions": [(_where, [seen])]}
            yield {"name": "b", "actions": [(_where, [seen])]}

        if marked:
            setattr(creator, da.COOK_CREATOR, True)
        return creator

    def run(*args, default=("cook",)):
        seen.clear()
        loader = ModuleTaskLoader(
            {
                "task_cook": made("cook", True),
                "task_other": made("other", False),
                "DOIT_CONFIG": {
                    "dep_file": ":memory:",
                    "backend": "sqlite3",
                    "par_type": "thread",
                    "outfile": io.StringIO(),
                    "default_tasks": list(default),
                },
            }
        )
        main = DoitMain(loader)
        assert main.get_cmds()["run"].get() is da.CookRunCommand
        assert main.run(list(args)) == 0
        return seen[0][1], {w for w in seen[1:]}

    main_thread = {threading.main_thread().name}
    assert run("-n", "3", "cook") == (("serial", 3), main_thread)
    assert run("-n", "3") == (("serial", 3), main_thread)  # the default tasks: cook's
    assert run("-n", "2", "cook:a", "cook:b") == (("serial", 2), main_thread)
    assert run("-n", "1", "cook") == (("serial", 1), main_thread)  # -n 1: no pool (the task pass)
    assert run("cook") == (("serial", 0), main_thread)
    assert run("-n", "2", "other")[0] == ("threads", 2)  # not a veduta creator
    assert run("-n", "2", default=("cook", "other"))[0] == ("threads", 2)
    assert run("-n", "2", "-P", "process", "cook")[0] == ("processes", 2)
    # the arguments doit hands _execute are named by its signature: Run._execute's, exactly
    assert inspect.signature(da.CookRunCommand._execute) == inspect.signature(Run._execute)


def test_a_cook_only_n_run_gives_way_to_a_task_writing_the_cooks_inputs(tmp_path, monkeypatch):
    """A task of the dodo file's own with a target under the creator's inputs (assets/: it writes a
    source, and doit runs it before that source's cook) makes the run doit's own; a target elsewhere
    does not.  known_targets() tells the task pass those targets."""
    monkeypatch.chdir(tmp_path)
    seen = []

    @doit.create_after()
    def task_cook():
        seen.append((da.runner_parallelism(), da.known_targets()))
        yield {"name": "a", "actions": [lambda: None]}

    setattr(task_cook, da.COOK_CREATOR, "assets/")

    def run(target):
        seen.clear()
        made = {
            "actions": [lambda: (tmp_path / target).parent.mkdir(exist_ok=True) or (tmp_path / target).touch()],
            "targets": [target],
        }
        loader = ModuleTaskLoader(
            {
                "task_cook": task_cook,
                "task_made": lambda: made,
                "DOIT_CONFIG": {
                    "dep_file": ":memory:",
                    "backend": "sqlite3",
                    "par_type": "thread",
                    "outfile": io.StringIO(),
                    "default_tasks": ["cook"],
                },
            }
        )
        assert DoitMain(loader).run(["-n", "2", "cook"]) == 0
        return seen[0]

    assert run("game.zip") == (("serial", 2), frozenset({"game.zip"}))
    assert run("assets/gen.vmodel") == (("threads", 2), frozenset({"assets/gen.vmodel"}))
    assert da.known_targets() == frozenset()  # outside a run


def _where(seen):
    import threading

    seen.append(threading.current_thread().name)


def test_exit_as_failure_from_complete_run_turns_an_error_into_1():
    from doit.exceptions import TaskError

    class Reporter(ConsoleReporter):
        def complete_run(self):
            da.exit_as_failure()
            super().complete_run()

    def run(reporter):
        loader = ModuleTaskLoader(
            {
                "task_e": lambda: {"actions": [(lambda: TaskError("x"), [])]},
                "DOIT_CONFIG": {
                    "dep_file": ":memory:",
                    "backend": "sqlite3",
                    "outfile": io.StringIO(),
                    "reporter": reporter,
                },
            }
        )
        return DoitMain(loader).run(["run", "e"])

    assert run(ConsoleReporter) == 2
    assert run(Reporter) == 1
    da.exit_as_failure()  # outside a run: nothing to change


def _returns(value):
    if isinstance(value, Exception) and not hasattr(value, "get_msg"):
        raise value
    return value


def _failing_kinds():
    from doit.exceptions import TaskError, TaskFailed

    return [
        {"outcome": "cooked", "entry": None},
        None,
        True,
        False,
        "text",
        TaskFailed("no"),
        TaskError("bad"),
        ValueError("compiler bug"),
        42,
        ["a list"],
    ]


@pytest.mark.parametrize("returned", _failing_kinds(), ids=repr)
def test_call_action_takes_every_return_value_as_python_action_does(returned):
    from doit.action import PythonAction

    tasks = Task("t", [(_returns, [returned])]), Task("t", [da.CallAction(_returns, [returned])])
    for t in tasks:
        t.init_options()  # (as Task.execute does first)
    theirs, ours = (t.actions[0] for t in tasks)
    assert isinstance(theirs, PythonAction) and isinstance(ours, da.CallAction)
    assert ours.task is not None  # doit set it, as on its own actions
    got_theirs, got_ours = theirs.execute(), ours.execute()
    assert type(got_ours) is type(got_theirs)
    if got_theirs is not None:  # the same message and exception (the traceback's frames differ)
        assert got_ours.message == got_theirs.message
        assert repr(getattr(got_ours, "exception", None)) == repr(getattr(got_theirs, "exception", None))
        assert got_ours.get_msg().splitlines()[-1] == got_theirs.get_msg().splitlines()[-1]
    assert (ours.values, ours.result) == (theirs.values, theirs.result)
    assert str(ours) == str(theirs)


def _cook_like(name, log):
    with open(log, "a") as f:
        f.write(name + "\n")
    return {"outcome": "cooked", "name": name}


@pytest.mark.parametrize(
    "args", [["run", "g"], ["run", "-n", "2", "g"], ["run", "-n", "2", "-P", "process", "g"]], ids=" ".join
)
def test_call_actions_run_in_a_real_doit_run(tmp_path, args):
    """Subtasks whose action is a CallAction run in doit's serial runner, its threads and its
    processes (pickled), and doit saves each one's values as it does a PythonAction's."""
    log = str(tmp_path / "log")

    def task_g():
        for n in "abc":
            yield {"name": n, "actions": [da.CallAction(_cook_like, [n, log])], "uptodate": [False]}

    out = io.StringIO()
    db = str(tmp_path / "db")
    loader = ModuleTaskLoader({"task_g": task_g, "DOIT_CONFIG": {"dep_file": db, "backend": "sqlite3", "outfile": out}})
    assert DoitMain(loader).run(args) == 0, out.getvalue()
    assert sorted(open(log).read().split()) == ["a", "b", "c"]
    saved = Dependency(SqliteDB, db, codec_cls=JSONCodec)
    assert saved._get("g:b", "_values_:") == {"outcome": "cooked", "name": "b"}
    saved.close()


class _Releasing(ConsoleReporter):
    """A reporter that lets go of each task's run as the cook's does (after doit saved it)."""

    seen: list = []

    def add_success(self, task):
        super().add_success(task)
        _Releasing.seen.append((task, dict(task.values), len(task.actions)))
        da.release_executed(task)


def test_release_executed_lets_go_of_values_and_actions_and_doit_keeps_what_it_saved(tmp_path):
    import sys

    log = str(tmp_path / "log")
    handle = da.GroupHandle()
    made: list = []

    def task_g():
        yield {"name": None, "uptodate": [handle]}
        make = da.SubtaskMaker(handle)
        for n in "abc":
            t = make(
                {
                    "name": n,
                    "actions": [da.CallAction(_cook_like, [n, log])],
                    "clean": True,
                    "doc": n,
                    "uptodate": [False],
                }
            )
            made.append(t)
            yield t

    _Releasing.seen = []
    out = io.StringIO()
    db = str(tmp_path / "db")
    loader = ModuleTaskLoader(
        {
            "task_g": task_g,
            "DOIT_CONFIG": {"dep_file": db, "backend": "sqlite3", "outfile": out, "reporter": _Releasing},
        }
    )
    assert DoitMain(loader).run(["run", "g"]) == 0, out.getvalue()
    assert sorted(open(log).read().split()) == ["a", "b", "c"]
    ran = {t.name: (values, n) for t, values, n in _Releasing.seen if t.name != "g"}
    assert ran == {f"g:{n}": ({"outcome": "cooked", "name": n}, 1) for n in "abc"}  # (as the reporter saw them)
    for t in made:
        assert t.values == {} and t.result is None and t.actions == []  # let go of
        assert t.executed is True
    # what doit saved stays saved
    saved = Dependency(SqliteDB, db, codec_cls=JSONCodec)
    assert saved._get("g:b", "_values_:") == {"outcome": "cooked", "name": "b"}
    saved.close()
    # a Subtask that doit ran keeps its attributes in the table of names all Subtasks share
    # (CPython's split dict: smaller than the same attributes in a dict of their own)
    assert type(made[1]) is da.Subtask
    assert sys.getsizeof(vars(made[1])) < sys.getsizeof(dict(vars(made[1])))


# -- the dispatcher's lean nodes ---------------------------------------------------------------


class _Nodes(ConsoleReporter):
    """A reporter that records what doit does with each task and keeps the run's dispatcher;
    with *lean*, it makes the dispatcher a LeanDispatcher, as the cook's reporter does."""

    lean = False
    events: list = []
    dispatcher: object = None

    def initialize(self, tasks, selected_tasks):
        import sys

        if self.lean:
            assert da.lean_dispatch()
        _Nodes.dispatcher = sys._getframe(1).f_locals["task_dispatcher"]

    def execute_task(self, task):
        _Nodes.events.append(("execute", task.name))

    def add_success(self, task):
        _Nodes.events.append(("success", task.name))

    def add_failure(self, task, fail):
        last = fail.get_msg().splitlines()[-1]  # (the names a group waited for: in the order they failed)
        _Nodes.events.append(("failure", task.name, type(fail).__name__, " ".join(sorted(last.split(" ")))))

    def skip_uptodate(self, task):
        _Nodes.events.append(("up-to-date", task.name))

    def skip_ignore(self, task):
        _Nodes.events.append(("ignore", task.name))

    def complete_run(self):
        pass


def _node_run(tmp_path, lean: bool, args: list[str]) -> tuple[list, dict]:
    """A group of subtasks made as the cook makes them (some failing, one up to date, two made
    after another task by doit's implicit task_dep, one of those after a failure), run by doit;
    (the reporter's events, what each node holds at the end)."""
    handle = da.GroupHandle()
    out = tmp_path / ("lean" if lean else "doit")
    out.mkdir()

    @doit.create_after()  # (as task_cook: its tasks made while doit runs)
    def task_g():
        yield {"name": None, "uptodate": [handle]}
        make = da.SubtaskMaker(handle)
        for n in "abcdefgh":
            fails = n in "ce"
            yield make(
                {
                    "name": n,
                    "actions": [da.CallAction(_write_or_fail, [str(out / n), fails])],
                    # f waits for b (whose target it reads), h for c, which fails
                    "file_dep": [str(out / {"f": "b", "h": "c"}[n])] if n in "fh" else [],
                    "targets": [str(out / n)] if n != "d" else [],
                    "clean": True,
                    "doc": f"model {n}",
                    "uptodate": [n == "d"],
                }
            )

    def task_other():
        return {"actions": [(_write_or_fail, [str(out / "other"), False])], "targets": [str(out / "other")]}

    _Nodes.lean, _Nodes.events, _Nodes.dispatcher = lean, [], None
    loader = ModuleTaskLoader(
        {
            "task_g": task_g,
            "task_other": task_other,
            "DOIT_CONFIG": {"dep_file": str(out / "db"), "backend": "sqlite3", "reporter": _Nodes, "continue": True},
        }
    )
    rc = DoitMain(loader).run(args)
    nodes = {
        name: (
            node.run_status,
            sorted(w.task.name for w in node.waiting_me),
            len(node.waiting_me),
            node.ancestors,
            set(node.wait_run),
            set(node.wait_run_calc),
            sorted(n.task.name for n in node.bad_deps),
            list(node.ignored_deps),
            list(node.task_dep),
            set(node.calc_dep),
            node.wait_select,
        )
        for name, node in _Nodes.dispatcher.nodes.items()
    }
    kinds = {name: type(node).__name__ for name, node in _Nodes.dispatcher.nodes.items()}
    return [rc, *_Nodes.events], nodes, kinds


def _write_or_fail(path, fails):
    if fails:
        return False
    with open(path, "w") as f:
        f.write("x")
    return {"outcome": "cooked"}


@pytest.mark.parametrize(
    "args", [["run", "g", "other"], ["run", "-n", "2", "-P", "thread", "g"], ["run", "-n", "2", "-P", "process", "g"]]
)
def test_lean_nodes_run_as_doits_own(tmp_path, args):
    """A run whose dispatcher makes lean nodes reports the same events (serially: in the same
    order) and leaves every node answering as doit's own node does; the subtasks that wait for
    nothing got a lean node, the others (the group, the first subtask doit made itself, those
    made after another task) doit's."""
    theirs, their_nodes, their_kinds = _node_run(tmp_path, False, args)
    ours, our_nodes, our_kinds = _node_run(tmp_path, True, args)
    if "-n" in args:  # (in parallel: in some order, and who still waited for a node as it ended varies)
        theirs, ours = sorted(theirs, key=repr), sorted(ours, key=repr)
        their_nodes = {k: v[:1] + v[3:] for k, v in their_nodes.items()}
        our_nodes = {k: v[:1] + v[3:] for k, v in our_nodes.items()}
    assert ours == theirs and 2 in ours  # (doit's exit status of a run with an unmet dependency)
    assert ("failure", "g:h", "UnmetDependency", "g:c") in ours
    assert ("up-to-date", "g:d") in ours and ("success", "g:f") in ours
    assert our_nodes == their_nodes
    assert set(their_kinds.values()) == {"ExecNode"}
    lean = sorted(n for n, k in our_kinds.items() if k == "LeanNode")
    assert lean == ["g:b", "g:c", "g:d", "g:e", "g:g"]  # (g:a is doit's own Task; f and h wait)


def test_a_lean_node_holds_a_fraction_of_doits():
    """The memory doit's dispatcher takes for the nodes of 2,000 subtasks of a group (all made
    at once, kept to the end of the run), doit's nodes against lean ones."""
    import tracemalloc

    from doit.control import TaskDispatcher
    from doit.loader import generate_tasks

    handle = da.GroupHandle()

    def gen():
        yield {"name": None, "uptodate": [handle]}
        make = da.SubtaskMaker(handle)
        for i in range(2001):
            yield make({"name": f"s{i}", "actions": [da.CallAction(_returns, [None])], "clean": True, "doc": "x"})

    tasks = {t.name: t for t in generate_tasks("g", gen())}
    names = [n for n in tasks if n != "g"]

    def nodes(cls) -> int:
        dispatcher = cls(tasks, {}, ["g"])
        group = dispatcher._gen_node(None, "g")
        dispatcher._gen_node(group, names[0])  # (the first: doit's own Task either way)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for name in names[1:]:
                dispatcher._gen_node(group, name).waiting_me.add(group)  # (the group waits for each)
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    theirs, ours = nodes(TaskDispatcher), nodes(da.LeanDispatcher)
    assert ours * 5 < theirs, (ours, theirs)


def test_lean_dispatch_finds_nothing_outside_a_run():
    assert da.lean_dispatch() is False


def test_a_cook_reads_the_installed_entry_points_once_for_its_reporters_and_backends(monkeypatch):
    """doit looks its plugins up by a fresh read of every installed distribution's entry points
    per category; CookRunCommand (doit cook) reads them once for its reporters and its backends
    (da._entry_points_impl, installed as doit.plugin.entry_points_impl) and gets the very
    plugins doit's own Run gets.  Outside it, doit reads them as it always does."""
    import importlib.metadata

    import doit.plugin
    from doit.cmd_run import Run

    assert doit.plugin.entry_points_impl is da._entry_points_impl
    reads: list[dict] = []

    def counted(**params):
        reads.append(params)
        return importlib.metadata.entry_points(**params)

    monkeypatch.setattr(doit.plugin, "entry_points", counted)  # (what doit's own look-up calls)
    monkeypatch.setattr(da, "_metadata_entry_points", counted)
    plain = Run(task_loader=ModuleTaskLoader({}), config={})  # (looks up its backends, then reporters)
    assert [r.get("group") for r in reads] == ["doit.BACKEND", "doit.REPORTER"]  # doit's: one read each
    reads.clear()
    cook = da.CookRunCommand(task_loader=ModuleTaskLoader({}), config={})
    assert reads == [{}]  # every group at once, once
    assert cook.reporters == plain.reporters
    assert cook._backends == plain._backends and cook._backends["veduta"] is da.PreloadedSqliteDB
    assert cook.cmdparser["backend"].choices == plain.cmdparser["backend"].choices
    assert cook.cmdparser["reporter"].choices == plain.cmdparser["reporter"].choices
    reads.clear()
    assert da._ENTRY_POINTS.get() is None  # (only while its look-ups run)
    assert [p.name for p in doit.plugin.entry_points_impl()(group="doit.COMMAND")] == ["list", "run"]
    assert reads == [{"group": "doit.COMMAND"}]  # doit's own read, outside the command
