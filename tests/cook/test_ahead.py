"""Stale sources cooked ahead in a process pool (veduta/cook/ahead.py): the same bytes, the same
per-asset diagnostics and the same summary as cooking each source in its own action."""

from __future__ import annotations

import os
import re

from tests.cook.test_cook import summary
from tests.gamerepo import BAD, CRATE, make_game
from veduta.base.project import AssetIndex, Project
from veduta.cook import ahead
from veduta.cook.cook import cook_batch, set_index


def _big_game(tmp_path, n=30):
    g = make_game(tmp_path)
    for i in range(n):
        g.write(f"models/gen/m{i:02d}.vmodel", CRATE.replace("[1, 1, 1]", f"[1, {1 + i / 10}, 1]"))
    g.write("models/gen/broken.vmodel", BAD)
    g.write(
        "models/gen/warns.vmodel",
        CRATE.replace(
            '"pivot": "bottom-center",', '"pivot": "bottom-center", "lod": [{"distance": 9, "model": "nope"}],'
        ),
    )  # noqa: E501
    g.write("models/other/crate.vmodel", CRATE)  # a duplicate name
    return g


def _lines(cp) -> list[str]:
    return sorted(line for line in cp.stdout.splitlines() if not line.startswith("cook: "))


def test_pool_cook_matches_one_action_per_source(tmp_path):
    g = _big_game(tmp_path)
    # a task of the game's own: `doit -n 2 cook hello` is not cook-only, so doit's worker threads
    # run it, and the cook actions among them take their results from the pool
    (g.root / "dodo.py").write_text(
        (g.root / "dodo.py").read_text() + "\n\ndef task_hello():\n    return {'actions': [lambda: None]}\n"
    )
    runs = {}
    for label, args in (
        ("plain", ()),
        ("n2", ("-n", "2")),
        ("threads", ("-n", "2", "cook", "hello")),
        ("processes", ("-n", "2", "-P", "process")),
    ):
        os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
        cp = g.cook(*args)
        assert cp.returncode != 0  # the broken source and the duplicates fail the run
        assert "Traceback" not in cp.stdout + cp.stderr
        lines = _lines(cp)
        assert (".  hello" in lines) == (label == "threads"), (label, lines)
        runs[label] = (
            summary(cp),
            [ln for ln in lines if ln != ".  hello"],
            {k: v[2] for k, v in g.snapshot().items()},
        )
    assert runs["plain"] == runs["n2"] == runs["threads"] == runs["processes"]
    counts, lines, cooked = runs["plain"]
    assert counts == {"cooked": 34, "uptodate": 0, "restored": 0, "failed": 3}
    assert any(re.match(r"assets/models/gen/broken.vmodel:4:52: parts\[0\].radius", ln) for ln in lines)
    assert any("warns.vmodel" in ln and "warning" in ln and "nope" in ln for ln in lines)
    assert sum("is also used by" in ln for ln in lines) == 2
    # and the next run finds everything cooked up to date
    cp = g.cook()
    assert summary(cp) == {"cooked": 0, "uptodate": 34, "restored": 0, "failed": 3}


def _jobs(g) -> list[tuple]:
    """cook_one's arguments of the game's sources (the duplicate names left out), its asset
    index set as a cook's task pass sets it."""
    project = Project.find(str(g.root))
    sources = project.scan()[0]
    set_index(project.assets, AssetIndex.from_paths(s.rel for s in sources))
    return [
        (
            s.kind.name,
            s.rel,
            project.assets,
            os.path.join(project.cooked, s.kind.folder, s.name + ".vda"),
            project.cache,
            None,
            "",
        )
        for s in sources
        if "other" not in s.rel and s.name != "crate"
    ]


def test_ahead_hands_out_each_result_once_in_any_order(tmp_path):
    g = _big_game(tmp_path, n=12)
    jobs = _jobs(g)
    pool = ahead.begin(jobs, 2)
    try:
        assert pool is not None and len(pool.batches) > 2
        got = {j[1]: ahead.take(j[1]) for j in reversed(jobs)}
        assert ahead.take(jobs[0][1]) is None  # taken already: the action would cook it itself
        assert ahead.take("models/unknown.vmodel") is None
    finally:
        ahead.end()
    assert ahead.CURRENT is None and ahead.take(jobs[0][1]) is None
    again = dict(zip([j[1] for j in jobs], cook_batch(jobs), strict=True))
    for rel, r in got.items():
        assert r["outcome"] == ("failed" if "broken" in rel else "cooked")
        assert again[rel]["outcome"] == ("failed" if "broken" in rel else "uptodate")
        assert r["messages"] == again[rel]["messages"] or r["outcome"] == "cooked"


def test_a_first_cook_fed_to_the_pool_during_the_task_pass_matches_a_serial_one(tmp_path):
    """Over 4 x 2 workers x 32 stale sources, the task pass hands them to the pool as it finds
    them (doit cook, doit -n 2 cook): the same files, diagnostics and summary as -n 1, where
    each action cooks its own source."""
    g = _big_game(tmp_path, n=300)
    runs = {}
    for label, args in (("serial", ("-n", "1")), ("plain", ()), ("n2", ("-n", "2"))):
        os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
        cp = g.cook(*args)
        assert "Traceback" not in cp.stdout + cp.stderr
        runs[label] = (summary(cp), _lines(cp), {k: v[2] for k, v in g.snapshot().items()})
    assert runs["serial"] == runs["plain"] == runs["n2"]
    assert runs["plain"][0] == {"cooked": 304, "uptodate": 0, "restored": 0, "failed": 3}


def test_a_feed_hands_on_the_batches_begin_makes_of_the_same_jobs(tmp_path):
    """The task pass of a first cook hands stale sources to the pool as it finds them (Feed):
    the pool starts at 4 x workers full batches, and takes exactly the batches `begin` makes of
    all the jobs, whose results are those of cooking them apart."""
    g = _big_game(tmp_path, n=140)
    jobs = _jobs(g)
    jobs = jobs[:142]
    feed = ahead.Feed(1)
    try:
        for i, job in enumerate(jobs):
            feed.add(job)
            # 4 x 1 worker x 32: started at the 128th job, then one batch per 32
            assert (feed.ahead is not None) == (i + 1 >= 128)
            assert feed.sent == (0 if i + 1 < 128 else (i + 1) // 32 * 32)
        pool = feed.finish()
        assert pool is ahead.CURRENT and pool is feed.ahead
        assert pool.batches == ahead.Ahead(jobs, 1).batches
        assert [len(b) for b in pool.batches] == [32, 32, 32, 32, 14]
        assert all(f is not None for f in pool.futures) and len(pool.futures) == 5
        got = {j[1]: ahead.take(j[1]) for j in jobs}
    finally:
        ahead.end()
    assert all(r is not None for r in got.values())
    again = dict(zip([j[1] for j in jobs], cook_batch(jobs), strict=True))
    for rel, r in got.items():
        assert r["outcome"] == ("failed" if "broken" in rel else "cooked")
        assert again[rel]["outcome"] == ("failed" if "broken" in rel else "uptodate")
    # fewer jobs than 4 batches a worker: the pool of `begin`, at the end
    feed = ahead.Feed(2)
    try:
        for job in jobs[:20]:
            feed.add(job)
        assert feed.ahead is None
        pool = feed.finish()
        assert pool is ahead.CURRENT and pool.batches == ahead.Ahead(jobs[:20], 2).batches
    finally:
        ahead.end()


def test_pool_workers_collect_garbage_though_the_task_pass_paused_the_collector(tmp_path):
    """The pool is forked while the task pass keeps the cyclic GC paused: its workers turn it
    on again (a worker that never collected grew with every model it compiled), with what they
    inherited frozen."""
    import gc

    jobs = _jobs(_big_game(tmp_path, n=10))
    was = gc.isenabled()
    gc.disable()
    try:
        pool = ahead.Ahead(jobs, 1)
        pool.start()
    finally:
        if was:
            gc.enable()
    try:
        assert pool.pool is not None
        assert pool.pool.submit(gc.isenabled).result(timeout=60) is True
        assert pool.pool.submit(gc.get_freeze_count).result(timeout=60) > 0
        assert all(pool.take(j[1]) is not None for j in jobs)
    finally:
        pool.close()


def test_index_of_sources_is_the_index_of_their_paths(tmp_path):
    from veduta.cook.cook import index_of

    g = _big_game(tmp_path, n=3)
    sources = Project.find(str(g.root)).scan()[0]
    assert index_of(sources).by_kind == AssetIndex.from_paths(s.rel for s in sources).by_kind


def test_the_index_made_on_first_use_counts_names_as_the_index_does(tmp_path):
    """index_of's answer counts (kind, name) without making the index, as the index would: a name
    two kinds share is two, a name two folders of one kind share (a duplicate) is one."""
    from veduta.cook.cook import SourcesIndex, index_names, index_of

    g = _big_game(tmp_path, n=3)
    g.write("materials/crate.vmaterial", '{"veduta": "material/1"}')  # the model's name, another kind
    for extra in ([], ["models/other/barrel.vmodel", "models/zz/barrel.vmodel"]):
        for rel in extra:
            g.write(rel, CRATE)
        sources = Project.find(str(g.root)).scan()[0]
        index = index_of(sources)
        assert isinstance(index, SourcesIndex) and index._by_kind is None
        full = AssetIndex.from_paths(s.rel for s in sources)
        counted = index_names(index)
        assert index._by_kind is None  # (counted without making it)
        assert counted == sum(map(len, full.by_kind.values())) == len({(s.kind.name, s.name) for s in sources})
        assert counted < len(sources)  # (the game's models/other/crate.vmodel, and the extra barrels)
        assert index.by_kind == full.by_kind and index_names(index) == counted
        assert index.resolve("model", "barrel") == full.resolve("model", "barrel")


def test_list_status_trusts_the_cooks_own_check_but_not_over_doit_ignore(tmp_path):
    from tests.cook.test_cook import age_all

    g = _big_game(tmp_path, n=2)
    g.cook()
    age_all(g)
    g.cook()
    g.doit("ignore", "cook:models/crate.vmodel", check=True)
    g.write("models/tree_far.vmodel", CRATE)  # stale, and so is tree, which reads it
    out = g.doit("list", "--all", "--status", check=True).stdout
    assert "I cook:models/crate.vmodel" in out
    assert "R cook:models/tree_far.vmodel" in out and "R cook:models/tree.vmodel" in out
    assert "U cook:models/props/barrel.vmodel" in out and "U cook:models/gen/m01.vmodel" in out
    assert "R cook:models/gen/broken.vmodel" in out  # failed last time: no cooked file


def test_a_pool_that_breaks_while_its_first_batches_are_handed_on_is_no_error(tmp_path, monkeypatch):
    """A worker of the first batches killed while start() still hands on the others: submit
    raises BrokenProcessPool, which once escaped the task pass (a traceback, no cook; seen as a
    flaky test_a_pool_that_breaks_while_the_task_pass_feeds_it_is_one_warning). Now each batch
    it could not hand on is cooked by its sources' actions (take() answers None)."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    submit = ProcessPoolExecutor.submit
    calls = []

    def breaks_after_one(self, fn, *args, **kwargs):
        calls.append(fn)
        if len(calls) > 1:
            raise BrokenProcessPool("A child process terminated abruptly")
        return submit(self, fn, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", breaks_after_one)
    g = _big_game(tmp_path, n=12)
    jobs = _jobs(g)
    pool = ahead.begin(jobs, 2)
    try:
        assert pool is not None and len(pool.batches) > 2 and len(calls) == len(pool.batches)
        assert pool.futures[0] is not None and pool.futures[1:] == [None] * (len(pool.batches) - 1)
        later = pool.batches[-1][0][1]
        assert ahead.take(later) is None  # its action cooks it
        assert ahead.take(pool.batches[0][0][1]) is not None  # the batch handed on still counts
    finally:
        ahead.end()


def test_a_pool_has_no_more_workers_than_batches(tmp_path):
    g = _big_game(tmp_path, n=10)
    cp = g.cook("-n", "64")  # 17 sources, 64 asked for: the pool takes one worker per batch
    assert cp.returncode == 1 and "cook: 14 cooked" in cp.stdout, cp.stdout + cp.stderr
    import subprocess
    import sys

    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "check", "--all", "-n", "64"],
        cwd=g.root,
        capture_output=True,
        text=True,
        timeout=300,
    )  # so does check's pool
    assert cp.returncode == 1 and "check: 17 sources, 5 errors, 1 warning" in cp.stderr, cp.stderr
    jobs = [("model", f"models/m{i}.vmodel", "assets", "x", "cache", None, "") for i in range(12)]
    assert ahead.Ahead(jobs, 64).workers == 12 and ahead.Ahead(jobs, 2).workers == 2
    assert ahead.Ahead(jobs * 100, 64).workers == 64  # 1200 sources: 240 batches of 5


#: A dodo whose own task writes ten model sources (from template.txt): doit runs each before the
#: cook subtask of its source (the source is the task's target: doit's implicit task_dep)
GEN_DODO = """from veduta.dodo import *
import os
import threading

CRATE = {crate!r}


def _gen(i):
    with open("template.txt") as f:
        height = f.read().strip()
    with open("ran.txt", "a") as f:
        f.write(threading.current_thread().name + "\\n")
    os.makedirs("assets/models/gen", exist_ok=True)
    with open(f"assets/models/gen/g{{i}}.vmodel", "w") as f:
        f.write(CRATE.replace("[1, 1, 1]", f"[1, {{height}}, 1]"))


def task_gen():
    for i in range(10):
        yield {{"name": str(i), "actions": [(_gen, [i])], "file_dep": ["template.txt"],
               "targets": [f"assets/models/gen/g{{i}}.vmodel"]}}
"""


def test_a_source_a_task_of_the_game_rewrites_is_cooked_after_that_task(tmp_path):
    """A task of the game's own that writes sources runs before their cook (doit's implicit
    task_dep): the pool cooking ahead must not compile what it is about to rewrite, and `doit -n 2
    cook` runs that task in doit's worker threads, as doit would (not serially)."""
    g = make_game(tmp_path)
    (g.root / "dodo.py").write_text(GEN_DODO.format(crate=CRATE))

    def reset():
        os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache' '{g.root}/ran.txt'")
        for i in range(10):  # an older generation of the sources: doit's gen tasks rewrite them
            g.write(f"models/gen/g{i}.vmodel", CRATE.replace("[1, 1, 1]", "[1, 2, 1]"))
        (g.root / "template.txt").write_text("3\n")

    reset()
    assert g.cook("-n", "1", check=True)
    want = {k: v[2] for k, v in g.snapshot().items()}
    assert "[1, 3, 1]" in (g.root / "assets/models/gen/g4.vmodel").read_text()
    for args in ((), ("-n", "2")):
        reset()
        cp = g.cook(*args, check=True)
        assert summary(cp) == {"cooked": 14, "uptodate": 0, "restored": 0, "failed": 0}
        assert {k: v[2] for k, v in g.snapshot().items()} == want, args
        threads = set((g.root / "ran.txt").read_text().split())
        assert (threads == {"MainThread"}) == (args == ()), (args, threads)
        assert summary(g.cook(*args)) == {"cooked": 0, "uptodate": 14, "restored": 0, "failed": 0}


def test_a_fresh_source_a_task_of_the_game_rewrites_is_cooked_again(tmp_path):
    """A source whose cook is fresh still waits for the task of the game's own that writes it:
    when that task is stale (its template changed), doit runs it, then finds the source changed
    and cooks it again (doit cook, doit cook:<path>), instead of the cook skipping the source
    (or trusting it fresh) before doit sees the dependency."""
    g = make_game(tmp_path)
    (g.root / "dodo.py").write_text(GEN_DODO.format(crate=CRATE))
    (g.root / "template.txt").write_text("2\n")
    assert summary(g.doit("gen", "cook", check=True))["cooked"] == 14
    (g.root / "template.txt").write_text("3\n")
    assert summary(g.cook("cook:models/gen/g3.vmodel", check=True)) == {
        "cooked": 1,
        "uptodate": 0,
        "restored": 0,
        "failed": 0,
    }
    assert summary(g.cook(check=True)) == {"cooked": 9, "uptodate": 5, "restored": 0, "failed": 0}
    assert summary(g.cook("-n", "2", check=True)) == {"cooked": 0, "uptodate": 14, "restored": 0, "failed": 0}
    got = {k: v[2] for k, v in g.snapshot().items()}
    os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
    assert summary(g.cook("-n", "1", check=True))["cooked"] == 14
    assert {k: v[2] for k, v in g.snapshot().items()} == got
    assert "[1, 3, 1]" in (g.root / "assets/models/gen/g3.vmodel").read_text()


#: doit's own run command (doit.cmd_run.Run, not veduta's entry point) on the dodo file of the
#: current folder, with the arguments of the command line
DOITS_OWN_RUN = """if True:
    import sys
    from doit.cmd_base import DodoTaskLoader
    from doit.cmd_run import Run
    from doit.doit_cmd import DoitMain

    class Main(DoitMain):
        def get_cmds(self):
            cmds = super().get_cmds()
            cmds["run"] = Run
            return cmds

    sys.exit(Main(DodoTaskLoader()).run(sys.argv[1:]))
"""


def test_a_negative_n_gets_what_doit_makes_of_it(tmp_path):
    """`doit -n -1 cook` is not a cook-only -n N for veduta's run command: doit's own run decides
    (no pool of -1 workers, no traceback)."""
    import subprocess
    import sys

    g = _big_game(tmp_path, n=40)
    theirs = subprocess.run(
        [sys.executable, "-c", DOITS_OWN_RUN, "-n", "-1", "cook"],
        cwd=g.root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
    ours = g.cook("-n", "-1")
    assert "Traceback" not in ours.stdout + ours.stderr, ours.stderr
    assert (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)


#: ``doit`` with the dispatcher doit makes, not veduta's lean one (the reporter's lean_dispatch
#: turned off), on the dodo file of the current folder, with the arguments of the command line
DOITS_OWN_NODES = """if True:
    import sys
    import veduta.cook.tasks
    from doit.cmd_base import DodoTaskLoader
    from doit.doit_cmd import DoitMain

    veduta.cook.tasks.lean_dispatch = lambda: False
    sys.exit(DoitMain(DodoTaskLoader()).run(sys.argv[1:]))
"""


def test_a_first_cook_with_lean_nodes_is_the_one_with_doits_own(tmp_path):
    """A first cook whose cook subtasks get lean dispatcher nodes (doit_adapter.LeanNode) says,
    writes and saves what one with doit's own nodes does: the same output (diagnostics of the
    broken source and the duplicates, in the same order), exit status, cooked bytes and rows
    in doit's database."""
    import sqlite3
    import subprocess
    import sys

    g = _big_game(tmp_path, n=40)

    def rows() -> list[str]:
        with sqlite3.connect(g.root / "cache" / "doit.sqlite3") as db:
            return sorted(r[0] for r in db.execute("select task_id from doit"))

    def said(cp) -> tuple:
        out = re.sub(r"\(\d+\.\d\d s\)", "(s)", cp.stdout)
        return cp.returncode, out, cp.stderr

    for args in ((), ("-n", "2")):
        os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
        ours = g.cook(*args)
        ours_cooked, ours_rows = {k: v[2] for k, v in g.snapshot().items()}, rows()
        os.system(f"rm -rf '{g.root}/assets/.cooked' '{g.root}/cache'")
        theirs = subprocess.run(
            [sys.executable, "-c", DOITS_OWN_NODES, *args, "cook"],
            cwd=g.root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert said(ours) == said(theirs), args
        assert ours.returncode == 1 and "broken.vmodel" in ours.stdout
        assert ours_cooked == {k: v[2] for k, v in g.snapshot().items()} and len(ours_cooked) == 44
        assert ours_rows == rows() and len(ours_rows) > 40
