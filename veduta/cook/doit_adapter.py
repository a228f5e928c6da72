"""The one door to doit's internals (STYLE.md rule 12).

veduta cook leans on a few things doit offers no public API for.  Each one is a
function or class here whose docstring names the doit version it was checked
against (:data:`DOIT_CHECKED`, the version ``pyproject.toml`` pins) and why no
public API serves.  Nothing else in veduta touches a private doit name;
``tests/cook/test_doit_adapter.py`` checks every assumption made here against the
installed doit, so a doit upgrade that breaks one fails there, by name.

Where the internals are described: doit's own source, ``doit/dependency.py``
(``Dependency``, ``SqliteDB``), ``doit/runner.py`` (the
order of ``save_success`` and the reporter's ``add_success``),
``doit/reporter.py`` (``ConsoleReporter.failures``), ``doit/control.py``
(``TaskDispatcher`` and its ``ExecNode``), ``doit/task.py``
(``configure_task`` on ``uptodate`` items), ``doit/cmd_base.py`` and
``doit/cmd_run.py`` (how the checker and reporter classes are instantiated);
a summary of what the cook relies on is in ``/work/shared/notes/doit.md`` and
``docs/cooking.md``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from importlib.metadata import entry_points as _metadata_entry_points
from operator import itemgetter
from typing import Any, ClassVar, TypeVar, cast

from doit import plugin as _plugin
from doit.action import BaseAction
from doit.cmd_list import List
from doit.cmd_run import Run
from doit.control import ExecNode, TaskDispatcher
from doit.dependency import JSONCodec, SqliteDB
from doit.globals import Globals
from doit.task import IOConfig, Task, UptodateCalculator, first_line

#: The doit version every use below was read from and tested against.
DOIT_CHECKED = "0.37.0"

T = TypeVar("T", bound=type)


# -- classes doit instantiates itself ---------------------------------------------------------


def bind_class(cls: T, **attrs: Any) -> T:
    """A subclass of *cls* carrying *attrs* as class attributes, under the same name.

    doit 0.37 takes ``check_file_uptodate`` and ``reporter`` from DOIT_CONFIG as
    classes and instantiates them itself (``checker_cls()`` in
    ``Dependency.__init__``; ``reporter_cls(outstream, options)`` in
    ``cmd_run.Run._execute``), so there is no public way to hand them an object
    of ours: per-run state reaches them as a class attribute of a subclass made
    for that run.  The name stays the same because doit records the checker's
    class name in every task's row (``checker:``) and runs every task again when
    it changes.
    """
    bound = type(cls.__name__, (cls,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__, **attrs})
    return cast(T, bound)


class PreloadedSqliteDB(SqliteDB):
    """doit's sqlite3 backend, every row read in one query once more than a few are asked for.

    doit 0.37's ``SqliteDB`` runs one SELECT per task (``_get_task_data``), a large
    share of a no-op cook of 10,000 tasks.  No public hook changes how rows are
    read, so this subclass uses ``SqliteDB._conn`` (the open connection),
    ``_cache`` (rows decoded so far) and overrides ``_get_task_data``; rows are
    decoded only when their task is asked for.  A plain no-op ``doit cook`` asks for a
    handful of rows (the fresh sources get no task): those are read one by one, and only
    the ``PRELOAD_AFTER``-th read loads every row.  Registered as the doit backend
    ``veduta`` (entry point ``doit.BACKEND`` in pyproject.toml).

    Faults never end a cook in a traceback (the cooked files are safe whatever
    happens to this database; losing it only means re-checking every source):
    a folder that cannot be made or written means cooking with a database in
    memory, a damaged file is moved aside and a new one started, and a failed
    save at the end of the run (``cache/`` deleted meanwhile) is a warning.
    Each says so in one ``veduta: warning:`` line on stderr.
    """

    desc = "sqlite3, preloaded in one query (veduta cook)"
    PRELOAD_AFTER = 16

    def __init__(self, name, codec, *, module_name=None):
        import sqlite3

        from doit.dependency import DatabaseException

        self._raw: dict[str, str] | None = None  # every row, once preloaded
        self._reads = 0
        self._gone: set[str] = set()  # removed before the preload
        self._ignored: set[str] | None = None  # see may_be_ignored
        self._written: set[str] = set()  # rows written before the end of the run (write_now)
        name = _writable_db_path(name)
        try:
            super().__init__(name, codec, module_name=module_name)
            self._check()
        except (DatabaseException, sqlite3.DatabaseError) as exc:
            if name == ":memory:":
                raise
            reason = str(exc).rsplit("Original error: ", 1)[-1]
            aside = _move_aside(name)
            _warn(
                f"{name}: doit's database is damaged ({reason}); "
                + (f"moved it to {aside} and started a new one" if aside else "started a new one in memory")
                + " (this cook re-checks every source)"
            )
            if not aside:
                name = ":memory:"
            super().__init__(name, codec, module_name=module_name)
            self._check()

    def _check(self) -> None:
        """Fail (the connection closed) when the file is damaged: every row's data is read, in
        sqlite only.  Skipped when the file is the very one an earlier check found whole
        (:func:`_checked_before`): at 100,000 sources reading every row was a tenth of a no-op."""
        before = _db_signature(self.name)
        if before is not None and _checked_before(self.name, before):
            return
        try:  # a damaged file fails here at the latest
            self._conn.execute("select sum(length(task_id) + length(task_data)) from doit").fetchone()
        except Exception:
            self._conn.close()
            raise
        if before is not None and _db_signature(self.name) == before:
            _record_checked(self.name, before)

    def _preload(self) -> dict[str, str]:
        if self._raw is None:
            try:
                cur = self._conn.execute("select task_id, cast(task_data as text) as d from doit")
                self._raw = {row["task_id"]: row["d"] for row in cur if row["task_id"] not in self._gone}
            except Exception:  # noqa: BLE001 - checked at open: behaves like an empty database
                self._raw = {}
        return self._raw

    def _one(self, task_id) -> str | None:
        try:
            row = self._conn.execute(
                "select cast(task_data as text) as d from doit where task_id=?", (task_id,)
            ).fetchone()
        except Exception:  # noqa: BLE001 - as above
            return None
        return row["d"] if row else None

    def may_be_ignored(self, task_id) -> bool:
        """False when the saved row of *task_id* surely has no ``ignore:`` entry (``doit
        ignore``); the rows that do are found by one query, without decoding any row.  Rows
        another codec than doit's JSONCodec wrote (DOIT_CONFIG ``codec_cls``) cannot be read so:
        True (ask doit)."""
        maybe = self.maybe_ignored()
        return maybe is None or task_id in maybe

    def maybe_ignored(self) -> set[str] | None:
        """The tasks whose saved row may have an ``ignore:`` entry (:meth:`may_be_ignored` of each
        name is whether it is in this set); None when any may (another codec, a failed query)."""
        if type(self.codec) is not JSONCodec:
            return None
        if self._ignored is None:
            try:
                cur = self._conn.execute("""select task_id from doit where task_data like '%"ignore:"%'""")
                self._ignored = {row["task_id"] for row in cur}
            except Exception:  # noqa: BLE001 - unsure: ask doit
                return None
        return self._ignored.union(self._cache) if self._cache else self._ignored

    def dump(self):
        import sqlite3

        if isinstance(sys.exc_info()[1], KeyboardInterrupt):  # a cook stopped by Ctrl-C saves what it did
            from veduta.cook.ahead import finishing

            with finishing():
                return self._dump(sqlite3)
        return self._dump(sqlite3)

    def _dump(self, sqlite3) -> None:
        try:
            super().dump()
        except sqlite3.Error as exc:
            _warn(
                f"{self.name}: could not save doit's database ({exc}); the cooked files are safe, "
                f"the next cook re-checks every source"
            )

    def write_now(self, task_id) -> None:
        """Write the row of *task_id* into the database now, in the transaction of the run
        (committed with the rest at its end: a killed cook still leaves the database as it
        was), and let go of it in memory.  ``SqliteDB.dump`` would write it at the end of the
        run the same way (``insert or replace``, the row encoded by the codec); until then
        every finished task of a first cook kept its row's objects (about half a kilobyte)."""
        import sqlite3

        row = self._cache.get(task_id)
        if row is None or task_id not in self._dirty:
            return
        try:
            self._conn.execute("insert or replace into doit values (?,?)", (task_id, self.codec.encode(row)))
        except sqlite3.Error:
            return  # kept for the end of the run, whose dump says what is wrong (dump)
        del self._cache[task_id]
        self._dirty.discard(task_id)
        self._written.add(task_id)
        if self._raw is not None:
            self._raw.pop(task_id, None)

    def _get_task_data(self, task_id):
        if task_id in self._written:  # (read back from the database, as written)
            raw = self._one(task_id)
            return self.codec.decode(raw) if raw else {}
        if self._raw is None:
            self._reads += 1
            if self._reads < self.PRELOAD_AFTER:
                raw = self._one(task_id)
                return self.codec.decode(raw) if raw else {}
        raw = self._preload().pop(task_id, None)
        return self.codec.decode(raw) if raw else {}

    def in_(self, task_id):
        if task_id in self._cache or task_id in self._written:
            return True
        if self._raw is None:
            return self._one(task_id) is not None
        return task_id in self._raw

    def remove(self, task_id):
        self._written.discard(task_id)
        if self._raw is None:
            self._gone.add(task_id)
        else:
            self._raw.pop(task_id, None)
        super().remove(task_id)

    def remove_all(self):
        self._written = set()
        self._raw = {}
        super().remove_all()


def _warn(message: str) -> None:
    import sys

    sys.stderr.write(f"veduta: warning: {message}\n")


def _writable_db_path(name: str) -> str:
    """*name*, its folder made if needed; ":memory:" (with a warning) when it cannot be written."""
    if name == ":memory:":
        return name
    folder = os.path.dirname(name) or "."
    try:
        os.makedirs(folder, exist_ok=True)
        if not os.access(folder, os.W_OK) or (os.path.exists(name) and not os.access(name, os.W_OK)):
            import errno

            raise OSError(errno.EACCES, "not writable")
    except OSError as exc:
        _warn(
            f"cannot write the cache folder {folder} ({exc.strerror or exc}): cooking without doit's "
            f"database and the cache (every source is re-checked; cooked files are written as usual)"
        )
        return ":memory:"
    return name


#: The record of the last check that found doit's database whole: ``<database>.checked``.
CHECKED_SUFFIX = ".checked"
_CHECKED_FORMAT = "veduta-dbcheck/1"


def _db_signature(name: str) -> tuple[int, ...] | None:
    """(device, inode, size, mtime_ns, ctime_ns) of the database file *name*; None for a database
    in memory, a missing file, or one changed less than ``RACY_NS`` ago (a later write in the
    same timestamp tick could keep its signature: such a file is always checked)."""
    if name == ":memory:":
        return None
    try:
        st = os.stat(name)
    except (OSError, ValueError):
        return None
    import time

    from veduta.cook.state import RACY_NS

    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _checked_before(name: str, sig: tuple[int, ...]) -> bool:
    """Whether the record beside the database *name* says a check found it whole when its
    signature was *sig*.  Every write to the file (sqlite's, a tool's, a copy over it, a
    truncation) moves its ctime, and the record is only kept for a signature that was not racy,
    so a file with that signature has not been written since that check."""
    from veduta.base.fsutil import loads_kept, read_regular

    got = read_regular(name + CHECKED_SUFFIX, 4096)
    try:
        return got is not None and loads_kept(got[0]) == (_CHECKED_FORMAT, *sig)
    except (EOFError, ValueError, TypeError):
        return False  # (a damaged record: the database is checked, the record written again)


def _record_checked(name: str, sig: tuple[int, ...]) -> None:
    """Record that the database *name* was found whole with signature *sig* (see _check)."""
    import marshal

    from veduta.base.fsutil import atomic_write

    try:
        atomic_write(name + CHECKED_SUFFIX, marshal.dumps((_CHECKED_FORMAT, *sig)))
    except OSError:
        pass  # (the next run checks the database again)


def _move_aside(name: str) -> str | None:
    """Move a damaged database file to ``<name>.damaged``; None when that fails."""
    aside = name + ".damaged"
    try:
        os.replace(name, aside)
    except OSError:
        return None
    for extra in ("-journal", "-wal", "-shm"):
        try:
            os.unlink(name + extra)
        except OSError:
            pass
    return aside


# -- the saved row of a task ------------------------------------------------------------------


def overwrite_saved(task_name: str, values: dict, file_dep: Iterable[str] | None = None) -> None:
    """Replace what doit just saved for a successful task: its values (and result), and
    optionally its file_dep list with their current states.

    doit 0.37 saves a task's row (``Dependency.save_success``) right before the
    reporter's ``add_success`` (``runner.Runner.process_task_result``) and offers
    no public way to change it: the values a task returns are saved whole, and
    the file_dep saved are the ones the task had when it was made.  This goes
    through ``doit.globals.Globals.dep_manager``, ``Dependency._set`` and
    ``dm.checker.get_state``.  A file_dep that vanished meanwhile raises OSError
    (doit then runs the task next time).
    """
    dm = Globals.dep_manager
    if dm is None:
        return
    dm._set(task_name, "_values_:", values)
    dm._set(task_name, "result:", values)
    if file_dep is None:
        return
    deps = list(file_dep)
    states = [(d, dm.checker.get_state(d, None)) for d in deps]
    for d, state in states:
        dm._set(task_name, d, state)
    dm._set(task_name, "deps:", tuple(deps))


def write_saved(task_name: str) -> None:
    """Write what doit saved for a finished task into its database now rather than at the end
    of the run, when the backend is veduta's (:meth:`PreloadedSqliteDB.write_now`).

    doit 0.37 keeps every saved row in the backend's memory (``SqliteDB._cache``) until
    ``Dependency.close`` dumps them all; the dependency manager is ``doit.globals.Globals.
    dep_manager`` and its backend ``Dependency.backend``.  Called after
    :func:`overwrite_saved`, once nothing more is saved for the task in this run.
    """
    dm = Globals.dep_manager
    backend = getattr(dm, "backend", None)
    if isinstance(backend, PreloadedSqliteDB):
        backend.write_now(task_name)


_NONE: frozenset = frozenset()


def release_executed(task) -> None:
    """Let go of what a task that ran holds only for its run: the values and result its action
    returned (a cook result: the stat-cache entry, diagnostics, store keys; about a kilobyte)
    and its action objects with their arguments, its file_dep and its targets.

    Called by the reporter's ``add_success`` once it has used them.  doit 0.37 reads a task's
    ``values`` and ``result`` after its actions ran only in ``Dependency.save_success`` (called
    before ``add_success``: ``runner.Runner.process_task_result``) and, for another task's
    ``getargs``, from the database, never from the Task; its ``file_dep`` and ``targets`` when
    it makes the task's node (``control.TaskDispatcher._add_task``) and saves it (before
    ``add_success``); and it makes action objects again from
    ``Task._actions`` when ``Task.actions`` is read (``_action_instances`` None), which no
    command does after a run.  Each of the 100,000 Tasks of a first cook otherwise keeps them
    all to the end of the run.  ``tests/cook/test_doit_adapter.py`` checks the attributes.
    """
    task.values = {}
    task.result = None
    task._action_instances = None
    task._actions = []
    task.file_dep = _NONE  # (saved: Dependency.save_success read them, the reporter rewrote them)
    task.targets = _NONE


# -- the group task ---------------------------------------------------------------------------


class GroupHandle:
    """An ``uptodate`` item of a group task that keeps a reference to the group's Task.

    doit 0.37 calls ``configure_task(task)`` on every ``uptodate`` item that has
    one (``Task._init_uptodate``); it is how doit's own ``result_dep`` reaches
    its task, but it is not documented for user items.  A task dict has no other
    way to learn its Task object, which :func:`wait_only_for` needs.
    """

    def __init__(self) -> None:
        self.task: Any = None

    def configure_task(self, task) -> None:
        self.task = task

    def __call__(self) -> bool:
        return True  # the group does nothing itself; `doit list --status` shows it U


class Subtask(Task):
    """A doit Task whose attributes that are the same for every cook subtask, and that doit
    only reads or replaces (never changes in place), are class attributes rather than entries
    of each task's ``__dict__``: a subtask's dict holds 14 entries instead of 34 and no empty
    containers of its own (about half the memory of ``doit list`` at 50,000 sources).  The
    attributes doit changes in place (``task_dep``, ``values``, ``file_dep``, ...) or deletes
    from a copy of ``__dict__`` (``Task.pickle_safe_dict``) stay per task.  Read through the
    class, each is what ``Task.__init__`` would have set; :class:`SubtaskMaker` checks that
    against a Task doit made before using it.

    Each subtask is given its attributes one by one, in one order, those doit sets while it runs
    included (:data:`RUNTIME`): CPython then keeps the names of every Subtask's attributes in one
    table that all share, and each task only its values (about 200 bytes instead of 500: a dict
    of its own, which a name added later in another order would give it)."""

    #: attributes doit 0.37 sets on a task while it runs it (``Dependency.get_status``,
    #: ``Task.overwrite_verbosity``, ``Task.execute``, ``Task.init_options``), set on each subtask
    #: when it is made
    RUNTIME: ClassVar[tuple[str, ...]] = ("dep_changed", "verbosity", "executed", "options", "result")

    #: attribute -> the value every subtask shares (doit 0.37 ``Task.__init__`` defaults)
    SHARED: ClassVar[dict[str, Any]] = {
        "params": (),
        "creator_params": [],
        "options": None,
        "pos_arg": None,
        "pos_arg_val": None,
        "setup_tasks": [],
        "io": IOConfig({}),
        "dep_changed": None,
        "wild_dep": [],
        "calc_dep": set(),
        "loader": None,
        "getargs": {},
        "has_subtask": False,
        "result": None,
        "verbosity": None,
        "cfg_values": None,
        "_remove_targets": True,
        "watch": (),
        "meta": None,
        "executed": False,
    }

    options: dict[str, Any] | None  # (None until init_options: a class attribute of SHARED)

    def init_options(self, args=None):
        """``Task.init_options`` of doit 0.37 for a task with no parameters (every subtask:
        ``params`` and ``creator_params`` are empty): its options are ``{}`` and *args* come back
        as given, without the option parser doit makes and runs on nothing for each task."""
        if self.options is None and not args and not self.params and not self.creator_params:
            self.options = {}
            return args
        return super().init_options(args)


for _attr, _value in Subtask.SHARED.items():
    setattr(Subtask, _attr, _value)


def _same(a: Any, b: Any) -> bool:
    return vars(a) == vars(b) if isinstance(a, IOConfig) else a == b


def doit_doc(doc: str | None) -> str:
    """*doc* as doit 0.37's ``Task.__init__`` keeps it: its first non-blank line, stripped
    (``doit.task.first_line``); a one-line doc with no space at either end, as is, at once."""
    if doc and doc.isprintable() and doc[0] != " " and doc[-1] != " ":
        return doc  # (printable: no line break, and no other whitespace than " ")
    return first_line(doc)


#: doit's entry in ``Task.uptodate`` for a bool item (``(item, args, kwargs)``), one of each
_UPTODATE_ITEM = {False: (False, None, None), True: (True, None, None)}


class SubtaskMaker:
    """The subtasks of one group as doit ``Task`` objects, made without ``Task.__init__``.

    doit 0.37 turns each task dict a generator yields into a Task (``loader.
    _generate_task_from_yield``: ``dict_to_task``, then the name ``group:name``, ``subtask_of``
    and an entry in the group's ``task_dep``), and ``Task.__init__`` checks nineteen
    attributes and builds fifteen containers: for 10,000 sources that was most of ``doit list
    --all --status``.  A task generator may yield Task objects as well (``generate_tasks``
    keeps them as they are), so the first subtask dict is made into a Task by doit itself, and,
    once that shows doit's defaults are :attr:`Subtask.SHARED`, every later one is a
    :class:`Subtask` holding the fields that differ and fresh containers for what doit changes in
    place; the three steps of the loader are done here.  A dict this does not know how to copy
    (other keys, an ``uptodate`` item that is not a bool, a doc of several lines) is returned as
    it is, for doit to make.
    ``tests/cook/test_doit_adapter.py`` checks, attribute by attribute, that a task made here
    is the one doit makes of the same dict, and that doit runs, lists and pickles it alike.
    """

    #: the task dict keys handled (``clean`` must be True)
    KEYS = frozenset({"name", "actions", "file_dep", "targets", "clean", "doc", "uptodate"})

    def __init__(self, group: GroupHandle) -> None:
        self.group = group
        #: whether doit's defaults are Subtask.SHARED (None: no subtask made yet; False: doit
        #: makes every subtask)
        self._lean: bool | None = None
        self._new = object.__new__

    def __call__(self, d: dict) -> Any:
        """The Task of subtask dict *d* (or *d* itself, for doit to make)."""
        uptodate = d.get("uptodate", ())
        if (
            self.group.task is None
            or not self.KEYS.issuperset(d)
            or d.get("clean") is not True
            or "\n" in (d.get("doc") or "")
            or not all(isinstance(u, bool) for u in uptodate)
        ):
            return d
        return self.make(d["name"], d["actions"], d.get("file_dep", ()), d.get("targets", ()), d.get("doc"), uptodate)

    def make(self, name: str, actions: list, file_dep, targets, doc: str | None, uptodate=()) -> Any:
        """The Task of the subtask dict ``{"name": name, "actions": actions, "file_dep": file_dep,
        "targets": targets, "doc": doc, "uptodate": uptodate, "clean": True}`` (a one-line *doc*,
        *uptodate* bools); that dict when the group's Task is not known."""
        group = self.group.task
        if group is None:
            return {
                "name": name,
                "actions": actions,
                "file_dep": list(file_dep),
                "targets": list(targets),
                "doc": doc,
                "uptodate": list(uptodate),
                "clean": True,
            }
        name = f"{group.name}:{name}"
        if self._lean:
            # attribute by attribute, always in this order (never ``__dict__ = {...}``): CPython
            # then keeps every Subtask's attributes in one table of names shared by all, and each
            # task holds only its values (a fifth of a kilobyte less a task)
            task = self._new(Subtask)
            task.name = name
            task._action_instances = None
            task._actions = list(actions)
            task.file_dep = set(file_dep)
            task.task_dep = []
            task.value_savers = []
            task.uptodate = [_UPTODATE_ITEM[u] for u in uptodate]
            task.targets = list(targets)
            task.subtask_of = None
            task.values = {}
            task.custom_title = None
            task.clean_actions = ()
            task.teardown = []
            task.doc = doit_doc(doc)
            # what doit sets on a task while it runs (its defaults are Subtask.SHARED's): set here
            # first, so that no name is added later, which would give the task a table of its own
            task.dep_changed = None
            task.verbosity = None
            task.executed = False
            task.options = None
            task.result = None
        else:  # the first subtask (and every one, should doit's defaults not be Subtask.SHARED)
            from doit.task import dict_to_task

            task = dict_to_task(
                {
                    "name": name,
                    "actions": actions,
                    "file_dep": file_dep,
                    "targets": targets,
                    "doc": doc,
                    "uptodate": list(uptodate),
                    "clean": True,
                }
            )
            if self._lean is None:
                made = vars(task)
                self._lean = all(
                    k in made and type(made[k]) is type(v) and _same(made[k], v) for k, v in Subtask.SHARED.items()
                )
        task.subtask_of = group.name
        group.task_dep.append(name)
        return task


def wait_only_for(group: GroupHandle, drop: set[str]) -> bool:
    """Let the group task wait for its subtasks except those named in *drop*.

    With ``create_after``, doit 0.37 fills a group task's ``task_dep`` with every
    subtask as they are yielded and copies the list into the group's execution
    node only once the creator is exhausted (``doit/control.py``: ``ExecNode``
    copies ``task.task_dep``); a subtask that is known fresh can be left out of
    the list then, so that doit spends nothing on it.  There is no public way to
    yield a subtask the group does not wait for.  Returns False when the group's
    Task is unknown (nothing changed).
    """
    if group.task is None:
        return False
    group.task.task_dep = [t for t in group.task.task_dep if t not in drop]
    return True


# -- the dispatcher's nodes -----------------------------------------------------------------


class _Waiting:
    """The ``waiting_me`` of a :class:`LeanNode`: the nodes waiting for it, kept in the node
    (none, one, or a set of several), with the two operations doit 0.37 uses on that set
    (``TaskDispatcher._node_add_wait_run`` adds, ``_update_waiting`` iterates)."""

    __slots__ = ("node",)

    def __init__(self, node: LeanNode) -> None:
        self.node = node

    def add(self, waiter: ExecNode) -> None:
        node = self.node
        got = node._waiting
        if got is None:
            node._waiting = waiter
        elif type(got) is set:
            got.add(waiter)
        elif got is not waiter:
            node._waiting = {got, waiter}

    def _all(self) -> tuple | set:
        got = self.node._waiting
        return () if got is None else got if type(got) is set else (got,)

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __contains__(self, waiter: object) -> bool:
        return waiter in self._all()


class LeanNode(ExecNode):
    """doit's ``ExecNode`` of a cook subtask that depends on nothing: the same answers to
    everything doit 0.37 asks of a node, in a fifth of its memory.

    doit's dispatcher (``control.TaskDispatcher``) makes a node for every task it will run,
    all of them at once when it reaches their group (``_add_task`` yields one for each of the
    group's ``task_dep``), and keeps every one to the end of the run: with the task's name in
    a list of ancestors, five sets and three lists of its own, and a generator
    (``_add_task``) holding a frame, about 1.6 KB a node with its entry in the dispatcher's
    table (``tracemalloc``; a lean one: 140 bytes); a first cook of 100,000 small models held
    160 MB of them.  A subtask with no ``task_dep``, ``calc_dep``,
    ``setup_tasks`` or loader (every cook subtask that is not made after a task of the dodo
    file's own) waits for nothing, so its node needs none of them: its ``_add_task`` would
    only yield its Task once (:meth:`step`), its ``wait_run``, ``wait_run_calc``,
    ``calc_dep``, ``task_dep``, ``bad_deps`` and ``ignored_deps`` stay empty (shared empty
    tuples and frozensets here: a change would raise, not pass unseen), and the nodes waiting
    for it (its group) are kept in the node itself (:class:`_Waiting`).  A node that doit
    could change in another way is doit's own (:meth:`LeanDispatcher._gen_node`).
    ``tests/cook/test_doit_adapter.py`` checks the attributes doit reads against doit's own
    node and runs, serially and in doit's threads and processes, with lean nodes.
    """

    __slots__ = ("task", "run_status", "_up", "_waiting", "_sent")

    # what a node that waits for nothing holds, shared
    task_dep: Any = ()
    calc_dep: Any = frozenset()
    wait_run: Any = frozenset()
    wait_run_calc: Any = frozenset()
    bad_deps: Any = ()
    ignored_deps: Any = ()
    wait_select = False
    generator = None

    def __init__(self, task, parent) -> None:  # (not ExecNode.__init__: nothing of its own made)
        self.task = task
        self.run_status = None
        self._up = parent.ancestors if parent else ()  # (the parent's list, not a copy)
        self._waiting: Any = None
        self._sent = False

    @property
    def ancestors(self) -> list:
        return [*self._up, self.task.name]

    @property
    def waiting_me(self) -> Any:
        return _Waiting(self)

    def step(self):
        """The Task once (``_add_task`` of a task with nothing to wait for yields only that),
        then None: nothing left."""
        if self._sent:
            return None
        self._sent = True
        return self.task


class LeanDispatcher(TaskDispatcher):
    """doit's ``TaskDispatcher`` making a :class:`LeanNode` for each cook subtask that depends
    on nothing (``type(task) is Subtask``), and doit's own ``ExecNode`` for every other task.
    Put in place by :func:`lean_dispatch`."""

    def _gen_node(self, parent, task_name):
        if task_name not in self.nodes:
            task = self.tasks[task_name]
            if (
                type(task) is Subtask
                and not task.task_dep
                and not task.calc_dep
                and not task.setup_tasks
                and not task.loader
            ):
                node = self.nodes[task_name] = LeanNode(task, parent)
                return node
        return super()._gen_node(parent, task_name)


def lean_dispatch() -> bool:
    """Make the dispatcher of the doit run in progress a :class:`LeanDispatcher` (False: none
    found, nothing changed).

    Called by the reporter's ``initialize``, before the dispatcher made any node.  doit 0.37
    makes its ``TaskDispatcher`` inside ``cmd_run.Run._execute`` (``TaskControl.
    task_dispatcher``) and hands it to ``Runner.run_all``, which calls ``reporter.initialize``
    and then runs the tasks, with no hook to choose the dispatcher's class: so this finds it
    in the calling frames (``run_all``'s ``task_dispatcher``), as :func:`runner_parallelism`
    finds the Runner, and changes its class (a subclass adding no attribute: the same object,
    the same state)."""
    f: Any = sys._getframe(1)
    while f is not None:
        found = f.f_locals.get("task_dispatcher")
        if type(found) is TaskDispatcher:
            found.__class__ = LeanDispatcher
            return True
        if isinstance(found, LeanDispatcher):
            return True
        f = f.f_back
    return False


# -- the status of a task --------------------------------------------------------------------


def trust_fresh(fresh: set[str]) -> None:
    """Let doit take the tasks named in *fresh* as up to date without checking them itself.

    The cook's own pass has just verified these (stat cache or re-hash), and doit 0.37's
    per-task check (``Dependency.get_status``: the task's saved row decoded, each file_dep's
    state compared) and ``status_is_ignore`` (the row decoded again) made ``doit list --all
    --status`` several times a no-op.  doit has no hook for a task's status other than
    ``uptodate`` items, which do not skip the file_dep checks; so the current dependency
    manager (``Globals.dep_manager``, set before tasks are loaded) gets instance-level
    wrappers: a trusted task is 'up-to-date' with no changed deps, and is ignored only if its
    saved row mentions ``"ignore:"`` (``doit ignore``; then doit's own check answers).
    ``get_log=True`` (``doit info``, which prints the reasons) always asks doit.
    """
    from doit.dependency import DependencyStatus

    dm = Globals.dep_manager
    if dm is None or not fresh:
        return
    get_status, status_is_ignore = dm.get_status, dm.status_is_ignore
    backend = dm.backend

    def trusted_status(task, tasks_dict, get_log=False):
        if not get_log and task.name in fresh:
            task.dep_changed = []
            return DependencyStatus(False)
        return get_status(task, tasks_dict, get_log)

    def trusted_ignore(task):
        if task.name in fresh and hasattr(backend, "may_be_ignored") and not backend.may_be_ignored(task.name):
            return None
        return status_is_ignore(task)

    dm.get_status = trusted_status
    dm.status_is_ignore = trusted_ignore


# -- doit list --------------------------------------------------------------------------------


class FreshListing:
    """The fresh subtasks one ``doit list`` is told of by name and doc instead of as Tasks.

    Made by :class:`CookList` for each ``doit list`` and found by the task pass through
    :func:`fresh_listing` while doit loads the tasks.  *params* and *args* are the command's
    options and positional arguments as doit's ``DoitCmdBase.execute`` holds them: read when the
    task pass asks, they include the dodo file's ``DOIT_CONFIG`` defaults.
    """

    def __init__(self, cmd: Any, params: Any, args: list[str]) -> None:
        self.cmd, self.params, self.args = cmd, params, args
        #: (task name, doc) of each fresh subtask taken, in the order taken
        self.entries: list[tuple[str, str]] = []
        #: a task pass asked and was told to give fresh subtasks by name
        self.claimed = False
        #: the name of the group the fresh subtasks belong to, and what makes its tasks again
        #: with none handed to this listing (set by the task pass: :meth:`bind`)
        self.group: str | None = None
        self.remake: Callable[[], Any] | None = None
        self.off = False

    def applies(self) -> bool:
        """Whether this listing can print a fresh subtask it never saw as a Task: not with task
        names to list (doit looks each up), ``--deps`` (each Task's file_dep) or ``--sort
        definition`` (each Task's place among the rest)."""
        p = self.params
        return not self.off and not self.args and not p.get("list_deps") and p.get("sort", "name") == "name"

    def bind(self, group: str, remake: Callable[[], Any]) -> None:
        """The fresh subtasks taken are the group *group*'s; *remake* is its task creator's
        generator made again (see :meth:`every_task`)."""
        self.group, self.remake = group, remake

    def every_task(self, tasks: list) -> list:
        """*tasks* with the group's Tasks made again, the fresh subtasks among them: the task pass
        runs once more and hands nothing to this listing (``doit.loader.generate_tasks``, as
        doit's loader makes a creator's tasks)."""
        from doit.loader import generate_tasks

        self.off = True
        old = next((t for t in tasks if t.name == self.group), None)
        if old is None or self.remake is None:
            return tasks  # (never: the task pass binds the listing before it takes a subtask)
        made = generate_tasks(old.name, self.remake(), old.doc)
        out: list = []
        for t in tasks:
            if t is old:
                out += made
            elif t.subtask_of != self.group:
                out.append(t)
        return out

    def take(self, name: str, doc: str) -> bool:
        """List the fresh subtask *name* from here, no Task made, with *doc* as doit's Task would
        keep it; False when doit must see its Task after all: its saved row may say ``doit
        ignore`` (shown ``I``)."""
        backend = getattr(self.cmd.dep_manager, "backend", None)
        if backend is None or not hasattr(backend, "may_be_ignored") or backend.may_be_ignored(name):
            return False
        self.entries.append((name, doit_doc(doc)))
        return True

    def take_all(self, names: list[str], docs: list[str]) -> list[bool]:
        """:meth:`take` of each fresh subtask of *names* with its doc of *docs*, in one pass (the
        sources a no-op's table finds fresh): whether each was taken."""
        backend = getattr(self.cmd.dep_manager, "backend", None)
        maybe = backend.maybe_ignored() if isinstance(backend, PreloadedSqliteDB) else None
        if maybe is None:
            return [False] * len(names)
        if maybe:
            taken = [n not in maybe for n in names]
            self.entries += [(n, doit_doc(d)) for n, d, t in zip(names, docs, taken) if t]
            return taken
        self.entries += zip(names, map(doit_doc, docs))
        return [True] * len(names)


_LISTING: ContextVar[FreshListing | None] = ContextVar("veduta_fresh_listing", default=None)


def fresh_listing() -> FreshListing | None:
    """The :class:`FreshListing` of the ``doit list`` loading tasks right now, when it can take
    fresh subtasks by name; None in any other command (and in a list that cannot)."""
    listing = _LISTING.get()
    if listing is None or not listing.applies():
        return None
    listing.claimed = True
    return listing


def quiet_stdout() -> None:
    """After a broken pipe on stdout: point it at the null device, so that the flush at exit
    raises nothing more (Python's advice for a command piped into ``head``)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


class CookList(List):
    """doit's ``list``, printing the fresh cook subtasks without a Task made for each.

    ``doit list --all --status`` of 50,000 fresh sources spent as much on each Task (made,
    loaded, its status asked, printed) as a whole no-op spends on a source.  doit 0.37 has no
    hook between loading tasks and listing them, so this subclass of ``doit.cmd_list.List``
    (registered as the doit command ``list``, entry point ``doit.COMMAND``) lets the task pass
    hand it fresh subtasks as (name, doc) pairs (:func:`fresh_listing`), already known to be up
    to date, and prints them among doit's own Tasks exactly as ``List._execute`` would: the
    same template, column width, order and status letter (``U``; a task that may be ignored is
    made as a Task, so doit decides its ``I``).  Options it cannot serve that way (task names,
    ``--deps``, ``--sort definition``) make the task pass make every Task, and a dodo file that
    is not veduta's never claims the listing: both are then doit's own code, unchanged.  So is
    a ``--status`` listing of a task whose status doit decides from the other Tasks (an
    ``uptodate`` item that is a ``doit.task.UptodateCalculator``: ``result_dep``, ``getargs``):
    the cook group's Tasks are made again, every one of them, before doit lists them.
    """

    name = "list"

    def execute(self, params, args):
        token = _LISTING.set(listing := FreshListing(self, params, args))
        self._fresh = listing
        try:
            return super().execute(params, args)
        except BrokenPipeError:  # `doit list --all --status | head`: the reader has all it wanted
            quiet_stdout()
            return 0
        finally:
            _LISTING.reset(token)

    def _execute(
        self,
        subtasks=False,
        quiet=True,
        status=False,
        private=False,
        list_deps=False,
        template=None,
        sort="name",
        pos_args=None,
    ):
        listing = getattr(self, "_fresh", None)
        if listing is None or not listing.claimed or not listing.entries:
            return super()._execute(subtasks, quiet, status, private, list_deps, template, sort, pos_args)
        made = self._list_all(subtasks)
        if not private:
            made = [t for t in made if not t.name.startswith("_")]
        if status and any(isinstance(u, UptodateCalculator) for t in made for u, _, _ in t.uptodate):
            # its status is decided from the dict of every Task: doit's own code, every Task made
            self.task_list: list = listing.every_task(self.task_list)
            return super()._execute(subtasks, quiet, status, private, list_deps, template, sort, pos_args)
        # List._execute of doit 0.37, with the fresh (name, doc) pairs among the Tasks
        tasks = {t.name: t for t in self.task_list}
        fresh = listing.entries if subtasks else []
        up_to_date = self.STATUS_MAP["up-to-date"]
        line: Callable[[str, str], str]
        if template is None:
            width = max([len(t.name) for t in made] + [len(n) for n, _ in fresh], default=0)
            template = "{name:<" + str(width + 3) + "}"
            if not quiet:
                template += "{doc}"
            if status:
                template = "{status} " + template
            # a fresh subtask's line as that template makes it ("{name:<W}" is str.ljust(W))
            head, pad = (up_to_date + " " if status else ""), width + 3
            line = (lambda n, d: f"{head}{n.ljust(pad)}\n") if quiet else (lambda n, d: f"{head}{n.ljust(pad)}{d}\n")
        else:
            fmt = (template + "\n").format
            line = (lambda n, d: fmt(name=n, doc=d, status=up_to_date)) if status else (lambda n, d: fmt(name=n, doc=d))
        template += "\n"
        rows: list[tuple[str, Any]] = [(t.name, t) for t in made]
        rows += fresh
        rows.sort(key=itemgetter(0))
        write = self.outstream.write
        lines: list[str] = []  # the fresh subtasks' lines since the last Task's, written at once
        for name, item in rows:
            if isinstance(item, str):  # a fresh subtask's doc
                lines.append(line(name, item))
                if len(lines) == 4096:  # (a few hundred kilobytes at a time)
                    write("".join(lines))
                    lines.clear()
            else:
                if lines:
                    write("".join(lines))
                    lines.clear()
                self._print_task(template, item, status, list_deps, tasks)
        if lines:
            write("".join(lines))
        return 0


# -- the action -------------------------------------------------------------------------------


class CallAction(BaseAction):
    """doit's ``PythonAction`` of ``(func, args)`` for a *func* that takes no doit meta argument
    (``targets``, ``dependencies``, ``changed``, ``task``) and writes nothing of its own to
    stdout: the same call, and its return value taken as ``PythonAction.execute`` takes it, but
    without what that does on every call for such a function (``BaseAction._prepare_kwargs``:
    ``inspect.signature(func).bind_partial(*args)``; two ``StringIO`` and two ``Writer``
    around the call to capture output there is none of).  In a first cook of 10,000 small
    models that was a third of doit's own work per task.  doit 0.37 takes an action that is a
    ``BaseAction`` as it is (``action.create_action``: only ``task`` is set); ``out`` and
    ``err`` stay None, as doit's reporter skips them.  *args* is a list the task creator may
    still extend.  ``tests/cook/test_doit_adapter.py`` checks it against ``PythonAction`` for
    every kind of return value, in real runs (threads, ``-P process``) and pickled.
    """

    def __init__(self, func: Callable, args: list) -> None:
        self.py_callable, self.args = func, args
        self.task: Any = None
        self.out: str | None = None
        self.err: str | None = None
        self.result: Any = None
        self.values: dict = {}

    def execute(self, out=None, err=None):
        from doit.exceptions import TaskError, TaskFailed

        try:
            returned = self.py_callable(*self.args)
        except Exception as exc:  # noqa: BLE001 - as PythonAction: the task fails with it
            return TaskError("PythonAction Error", exc)
        # PythonAction.execute's rules, in its order
        if returned is False:
            return TaskFailed(f"Python Task failed: '{self.py_callable}' returned {returned}")
        if returned is True or returned is None:
            return None
        if isinstance(returned, str):
            self.result = returned
        elif isinstance(returned, dict):
            self.values = returned
            self.result = returned
        elif isinstance(returned, (TaskFailed, TaskError)):
            return returned
        else:
            return TaskError(
                f"Python Task error: '{self.py_callable}'. It must return:\nFalse for failed task.\n"
                f"True, None, string or dict for successful task\nreturned {returned} "
                f"({type(returned)})"
            )
        return None

    def __str__(self) -> str:
        return "Python: " + str(self.py_callable)[1:].split(" at ")[0]  # (PythonAction's text)

    def __repr__(self) -> str:
        return f"<CallAction: {self.py_callable!r}>"


# -- the runner -------------------------------------------------------------------------------

#: The attribute that marks veduta's task creators (``task_cook``; see :class:`CookRunCommand`):
#: the start every file_dep of their tasks has (the assets folder and a separator; True: any)
COOK_CREATOR = "veduta_cook"

#: ``-n N`` of the doit run in progress when :class:`CookRunCommand` runs it serially.
_POOL: ContextVar[int] = ContextVar("veduta_cook_pool", default=0)
#: The targets of the tasks doit knows as the run starts (a dodo file's own; veduta's are made
#: while it runs): see :func:`known_targets`.
_TARGETS: ContextVar[frozenset[str]] = ContextVar("veduta_known_targets", default=frozenset())

#: The entry points of every installed distribution, read once for a :class:`CookRunCommand`
#: (see :func:`_entry_points_impl`); None: doit's own look-up, one read each time.
_ENTRY_POINTS: ContextVar[list | None] = ContextVar("veduta_entry_points", default=None)


def _entry_points_impl():
    """What ``doit.plugin.entry_points_impl`` answers (a function ``f(group=...)`` giving the entry
    points of a group), reading every installed distribution's entry points once for the command
    in progress when :class:`CookRunCommand` asks (its reporters and its database backends), and
    once a call otherwise, as doit's own does.

    doit 0.37 reads the plugins of each category (``doit.COMMAND``, ``doit.REPORTER``,
    ``doit.BACKEND``) by a fresh ``importlib.metadata.entry_points(group=...)``, and each call
    reads every installed distribution's metadata (about 6 ms of CPU in this project's
    environment, 106 distributions); ``doit cook`` makes three of them, before and after any
    code of veduta runs.  ``PluginDict._from_entry_points`` looks ``entry_points_impl`` up in
    its module when it is called, so the answer is installed there when this module is imported
    (the command ``list`` and ``run`` plugins import it, after doit's ``COMMAND`` look-up); no
    public API lets a command share one read.  The same entry points, in the same order:
    ``entry_points().select(group=g)`` is what ``entry_points(group=g)`` returns.
    """
    memo = _ENTRY_POINTS.get()
    if memo is None:
        return _DOIT_ENTRY_POINTS_IMPL()

    def select(group: str):
        if not memo:
            memo.append(_metadata_entry_points())
        return memo[0].select(group=group)

    return select


def _one_read(command: Any, method: Callable[[], Any]) -> Any:
    """*method* (a look-up of plugins) with every entry point read at most once for *command*."""
    token = _ENTRY_POINTS.set(command.__dict__.setdefault("_veduta_entry_points", []))
    try:
        return method()
    finally:
        _ENTRY_POINTS.reset(token)


_DOIT_ENTRY_POINTS_IMPL = _plugin.entry_points_impl
_plugin.entry_points_impl = _entry_points_impl


class CookRunCommand(Run):
    """doit's ``run`` (the command of ``doit cook`` and ``doit -n N cook``), with a cook-only
    ``-n N`` run by doit's serial runner.

    A cook subtask's action only takes its source's result from the pool of worker processes
    that cooks the stale sources ahead (``veduta/cook/ahead.py``), so doit's thread workers
    (``-n N`` under veduta's ``par_type: thread``) bring nothing but a hand-over between threads
    on each task: ``doit -n 2 cook`` cost 1.27x the 2-process compile floor where a plain ``doit
    cook`` (the same pool, doit's serial runner) cost 1.17x.  So when every task selected is a
    task of a veduta task creator (``cook``, ``cook:<path>``; the default tasks of veduta's
    dodo), this passes doit ``num_process=0`` and keeps N for the task pass
    (:func:`runner_parallelism` answers ``("serial", N)``): the pool gets N workers, ``-n 1``
    still means no pool.  Any other selection, ``-P process``, every dodo file that is not
    veduta's, and a run that holds a task of the dodo file's own after all (one whose target is
    a cook input, e.g. a task writing sources: doit's implicit task_dep runs it before that
    source's cook) run in doit's own way.

    doit 0.37 picks the runner inside ``Run._execute`` from its ``num_process`` and ``par_type``
    arguments, with no hook; ``DoitCmdBase.execute`` passes ``_execute`` the options its
    signature names (``inspect.signature``), so the signature below is ``Run._execute``'s
    (``tests/cook/test_doit_adapter.py`` compares them).  Registered as the doit command ``run``
    (entry point ``doit.COMMAND``), which doit also runs when no command is named.
    """

    name = "run"

    def get_reporters(self):
        return _one_read(self, super().get_reporters)

    def get_backends(self):
        return _one_read(self, super().get_backends)

    def _execute(
        self,
        outfile,
        verbosity=None,
        always=False,
        continue_=False,
        reporter="console",
        num_process=0,
        par_type="process",
        single=False,
        auto_delayed_regex=False,
        force_verbosity=False,
        failure_verbosity=0,
        pdb=False,
    ):
        targets = frozenset(t for task in self.task_list for t in task.targets)
        pool = 0
        if num_process > 0 and par_type == "thread" and self._cook_only(targets):  # (-n -1: doit's)
            pool, num_process = num_process, 0
        tokens = _POOL.set(pool), _TARGETS.set(targets)
        try:
            return super()._execute(
                outfile,
                verbosity,
                always,
                continue_,
                reporter,
                num_process,
                par_type,
                single,
                auto_delayed_regex,
                force_verbosity,
                failure_verbosity,
                pdb,
            )
        finally:
            _TARGETS.reset(tokens[1])
            _POOL.reset(tokens[0])

    def _cook_only(self, targets: frozenset[str]) -> bool:
        """Whether every task selected (by name, or the dodo file's default tasks) is made by a
        veduta task creator (the group itself or one of its subtasks, no task option given), and
        no other task has a target among their inputs (doit would run it first)."""
        creators = {t.name: getattr(t.loader, "creator", None) for t in self.task_list if t.loader is not None}
        selected = self.sel_tasks or []
        marks = [
            getattr(creators.get(s.split(":", 1)[0]), COOK_CREATOR, None)
            if isinstance(s, str) and not s.startswith("-")
            else None
            for s in selected
        ]
        if not marks or not all(marks):
            return False
        inputs = tuple(m if isinstance(m, str) else "" for m in marks)
        return not any(t.startswith(inputs) for t in targets)


def known_targets() -> frozenset[str]:
    """The targets of the tasks doit knew as the run in progress started (the dodo file's own
    tasks; empty outside :class:`CookRunCommand`).  A cook subtask with one of them among its
    file_dep runs after the task that makes it (doit's implicit task_dep), so its source may
    change after the task pass: it is not cooked ahead."""
    return _TARGETS.get()


def runner_parallelism() -> tuple[str, int]:
    """How the doit run creating tasks right now runs actions: ``("serial", 0)``,
    ``("threads", N)`` or ``("processes", N)`` (``-n N`` with ``-P thread|process``);
    ``("serial", N)`` for a cook-only ``-n N`` that :class:`CookRunCommand` runs serially;
    ``("none", 0)`` outside a run (``doit list``, ``doit info``).

    doit 0.37 passes its options (``num_process``, ``par_type``) to the runner only, and a
    ``create_after`` task creator is called from inside the runner's loop
    (``Runner.run_tasks`` -> ``TaskDispatcher``); no public API tells a task creator which
    runner it is under, so this looks for the Runner in the calling frames.  The answer
    matters: actions of ``MRunner`` run in processes doit forks after the tasks are made.
    """
    import sys

    from doit.runner import MRunner, MThreadRunner, Runner

    f: Any = sys._getframe(1)
    while f is not None:
        obj = f.f_locals.get("self")
        if isinstance(obj, Runner):
            if isinstance(obj, MThreadRunner):
                return "threads", obj.num_process
            if isinstance(obj, MRunner):
                return "processes", obj.num_process
            return "serial", _POOL.get()
        f = f.f_back
    return "none", 0


def exit_as_failure(also_success: bool = False) -> None:
    """Make the doit run in progress exit 1 (a task failed) where doit would exit 2 (an error)
    (with *also_success*, where it would exit 0 too: warnings fail a strict cook).

    Called from the reporter's ``complete_run`` when the only errors of the run were the cook
    group's ``UnmetDependency`` (a source failed, so the group whose ``task_dep`` it is cannot
    run).  doit 0.37 counts every failure that is not a ``TaskFailed`` as an error
    (``Runner._handle_task_error`` sets ``final_result`` to ``ERROR``), so a plain ``doit
    cook`` with one broken source exited 2, the code for a configuration mistake.  No public
    API sets the exit status: ``Runner.finish`` calls ``reporter.complete_run()`` and then
    returns ``self.final_result``, so this finds the Runner in the calling frames (as
    :func:`runner_parallelism` does) and sets ``final_result`` from ``ERROR`` to ``FAILURE``.
    """
    import sys

    from doit.runner import ERROR, FAILURE, SUCCESS, Runner

    f: Any = sys._getframe(1)
    while f is not None:
        obj = f.f_locals.get("self")
        if isinstance(obj, Runner):
            if obj.final_result == ERROR or (also_success and obj.final_result == SUCCESS):
                obj.final_result = FAILURE
            return
        f = f.f_back


# -- the reporter -----------------------------------------------------------------------------


def drop_failures(reporter, unwanted: Callable[[Any], bool]) -> None:
    """Forget the failures of the tasks *unwanted(task)* names before the final report.

    doit 0.37's ``ConsoleReporter`` keeps failures in the undocumented list
    ``self.failures`` (dicts with a ``task`` key) and prints them all in
    ``complete_run``; no option leaves some out, and the cook has already
    reported its own failures as located lines.
    """
    reporter.failures = [f for f in reporter.failures if not unwanted(f["task"])]


__all__ = [
    "DOIT_CHECKED",
    "bind_class",
    "PreloadedSqliteDB",
    "overwrite_saved",
    "GroupHandle",
    "wait_only_for",
    "drop_failures",
    "release_executed",
    "lean_dispatch",
    "LeanDispatcher",
    "LeanNode",
    "write_saved",
    "runner_parallelism",
    "trust_fresh",
    "exit_as_failure",
    "CallAction",
    "CookList",
    "CookRunCommand",
    "COOK_CREATOR",
    "known_targets",
    "FreshListing",
    "fresh_listing",
    "doit_doc",
]
