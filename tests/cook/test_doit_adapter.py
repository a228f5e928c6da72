"""Every use of doit's internals (veduta/cook/doit_adapter.py), checked against the installed doit."""

from __future__ import annotations

import io
import os
import re
import tomllib
from pathlib import Path

import doit
from doit.cmd_base import ModuleTaskLoader
from doit.dependency import Dependency, JSONCodec, SqliteDB
from doit.doit_cmd import DoitMain
from doit.globals import Globals
from doit.reporter import ConsoleReporter
from doit.task import Task

from veduta.cook import doit_adapter as da

ROOT = Path(__file__).resolve().parents[2]


def test_the_pin_the_checked_version_and_minversion_agree(tmp_path):
    pin = next(d for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
               if d.startswith("doit"))
    low, high = re.fullmatch(r"doit>=([\d.]+),<([\d.]+)", pin).groups()
    assert low == da.DOIT_CHECKED
    installed = tuple(doit.__version__)
    assert tuple(int(x) for x in low.split(".")) <= installed < tuple(int(x) for x in high.split("."))
    from veduta.cook.project import Project
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


def _dep(tmp_path, checker_cls=None):
    kw = {"checker_cls": checker_cls} if checker_cls else {}
    return Dependency(da.PreloadedSqliteDB, str(tmp_path / "dep.sqlite3"), **kw)


def test_bind_class_keeps_the_name_doit_records(tmp_path):
    class Checker(da.PrestatChecker):
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


def test_prestat_checker_is_asked_exists_and_info(tmp_path):
    f, out = tmp_path / "src", tmp_path / "out"
    f.write_text("x")
    out.write_text("y")
    seen = {str(f): os.stat(f), str(out): os.stat(out)}

    class Checker(da.PrestatChecker):
        def __init__(self):
            super().__init__()
            self.prestat = seen

        def check_modified(self, file_path, file_stat, state):
            return False

        def get_state(self, dep, current_state):
            return "s"

    dm = _dep(tmp_path, Checker)
    task = Task("t", [], file_dep=[str(f)], targets=[str(out)])
    dm.save_success(task)
    status = dm.get_status(task, {"t": task})
    assert status.status == "up-to-date"
    assert str(f) not in seen  # info() took the stat result of the pass (used once)


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


def test_group_handle_and_wait_only_for_in_a_real_run():
    ran = []

    def act(name):
        ran.append(name)

    handle = da.GroupHandle()

    @doit.create_after()
    def task_g():
        yield {"name": None, "uptodate": [handle]}
        for n in ("a", "b", "c"):
            yield {"name": n, "actions": [(act, [n])]}
        assert da.wait_only_for(handle, {"g:b"})

    out = io.StringIO()
    loader = ModuleTaskLoader({"task_g": task_g, "DOIT_CONFIG": {"dep_file": ":memory:", "backend": "sqlite3",
                                                                   "outfile": out}})
    assert DoitMain(loader).run(["run", "g"]) == 0
    assert isinstance(handle.task, Task) and handle.task.name == "g"
    assert ran == ["a", "c"]  # the group no longer waited for g:b, so doit never ran it


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
    final = out.getvalue()[len(shown):]  # the report at the end repeats the failures kept
    assert "keep <stderr>" in final and "drop <stderr>" not in final


def test_two_runs_in_one_process_keep_their_own_state(game, tmp_path):
    from tests.gamerepo import make_game
    from veduta.cook.project import Project
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
        loader = ModuleTaskLoader({"task_p": task_p, "DOIT_CONFIG": {"dep_file": ":memory:", "backend": "sqlite3",
                                                                       "outfile": io.StringIO()}})
        assert DoitMain(loader).run(["run", *args, "p"]) == 0

    run()
    run("-n", "3", "-P", "thread")
    run("-n", "2", "-P", "process")
    assert seen == [("serial", 0), ("threads", 3), ("processes", 2)]
    assert da.runner_parallelism() == ("none", 0)


def test_fix_action_signature_is_what_doit_binds_arguments_with():
    from doit.action import PythonAction

    def act(a, b, targets):
        return {"got": (a, b, targets)}

    da.fix_action_signature(act)
    assert act.__signature__ is not None
    task = Task("t", [(act, [1, 2])], targets=["out"])
    task.options = {}
    action = task.actions[0]
    assert isinstance(action, PythonAction)
    assert action._prepare_kwargs() == {"targets": ["out"]}


def test_exit_as_failure_from_complete_run_turns_an_error_into_1():
    from doit.exceptions import TaskError

    class Reporter(ConsoleReporter):
        def complete_run(self):
            da.exit_as_failure()
            super().complete_run()

    def run(reporter):
        loader = ModuleTaskLoader({"task_e": lambda: {"actions": [(lambda: TaskError("x"), [])]},
                                   "DOIT_CONFIG": {"dep_file": ":memory:", "backend": "sqlite3",
                                                   "outfile": io.StringIO(), "reporter": reporter}})
        return DoitMain(loader).run(["run", "e"])

    assert run(ConsoleReporter) == 2
    assert run(Reporter) == 1
    da.exit_as_failure()  # outside a run: nothing to change
