"""Cooking ahead: the stale sources of a run cook in a process pool while doit records results.

doit runs tasks one at a time (``-n N`` ships one task per message to its workers and does all
bookkeeping in its main process), which leaves the cores idle or busy with overhead when
every task is a millisecond of compiling.  So once the up-to-date pass knows which sources
are stale, ``start`` hands them, in the order doit will ask for them, to a pool of worker
processes in batches (``cook_batch``: the models of a batch are built in one numpy batch).
Each task's action (``cook_one``) then only takes its result with :func:`take`; doit still
runs every task, saves its values, reports it and counts it, so per-asset errors, progress,
the summary and doit's database are what they were.

Nothing here changes what is cooked: a result is the one ``cook_one`` would have produced in
the worker.  When there is no pool (few stale sources, doit's own process workers, an
explicit ``-n 1``) or it broke, ``take`` returns None and the action cooks the source itself.

Ctrl-C: the cook decides, the workers do not.  The terminal sends SIGINT to the whole process
group, workers included; a worker ignores it, and the cook, when its SIGINT handler is
Python's own (it raises KeyboardInterrupt), stops its workers from that handler (SIGTERM: a
batch being cooked unwinds, so a file being written leaves no temporary file, and the worker
ends) before the KeyboardInterrupt unwinds the run.  The workers are forked with SIGINT held
back (:func:`interrupts_held`): a Ctrl-C during the fork is delivered to the cook just after
it, in its own code, never inside an at-fork hook (where Python prints "Exception ignored" and
goes on) nor to a worker before it ignores SIGINT (a KeyboardInterrupt traceback, or a child
that unwinds the cook's own frames).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from veduta.base.errors import Cancelled
from veduta.cook.run import MONITOR_FOLDER, WAIT_POLL

if TYPE_CHECKING:  # (imported where a pool starts: a run with nothing stale, or with fewer
    # than MIN_SOURCES, imports neither multiprocessing nor concurrent.futures)
    from concurrent.futures import Future, ProcessPoolExecutor

    from veduta.cook.warm import Warm

#: Sources per batch sent to a worker (enough to amortise numpy's per-call cost, small
#: enough that the first results come soon and the last batches balance).
BATCH = 32
#: Fewer stale sources than this cook in the action itself (a pool costs a few ms to start).
MIN_SOURCES = 8


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def one_thread() -> bool:
    """Whether this process runs one thread only, so that forking it is safe.  Counts the
    threads of the operating system (Linux: /proc/self/task), which include those a native
    library started (watchfiles' Rust watcher under ``veduta watch``) that
    ``threading.active_count()`` does not see."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # not Linux
        return threading.active_count() == 1


class Ahead:
    """A process pool cooking *jobs* (``cook_one`` argument tuples, in the order doit will run
    them) in batches; :meth:`take` hands out each source's result once."""

    def __init__(self, jobs: list[tuple], workers: int, batch: int = BATCH, waiting: Callable[[], None] | None = None):
        self.pid = os.getpid()
        #: called every WAIT_POLL seconds while the run's own thread waits for a batch (the
        #: caller's progress: it raises Cancelled once the caller cancelled the cook)
        self.waiting = waiting
        self.thread = threading.current_thread()
        self.workers = workers
        # small runs: smaller batches, so that every worker gets several
        size = max(1, min(batch, -(-len(jobs) // (4 * workers))))
        self.batches = [jobs[b : b + size] for b in range(0, len(jobs), size)]
        self.workers = min(workers, len(self.batches))  # -n 1024 of 40 sources: 40 workers, not 1024 idle
        self.where = {job[1]: b for b, batch_jobs in enumerate(self.batches) for job in batch_jobs}
        self.futures: list[Future | None] = []
        self.results: dict[str, dict] = {}
        self.pool: ProcessPoolExecutor | None = None
        #: sources of batches lost with a broken pool (a worker killed): their action cooks them,
        #: and what the dead worker may have written already still counts as cooked
        self.lost: set[str] = set()
        self._lock = threading.Lock()  # doit -n N with threads: several actions take at once
        #: set by Ctrl-C (this pool's SIGINT handler): the workers were told to stop
        self.interrupted = False
        self._handler_set = False  # whether this pool's SIGINT handler is installed

    def start(self) -> None:
        from concurrent.futures import ProcessPoolExecutor

        # fork: workers start in milliseconds with everything imported and the asset index set;
        # only safe while this process runs no other thread.  Ctrl-C is held back until the
        # workers run and the handler that stops them is set (see the module's docstring)
        stops = self._stops_on_interrupt()
        context = pool_context()  # (before: starting the resource tracker lets SIGINT go again)
        with interrupts_held() as held:
            self.pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=worker_start, initargs=(stops,)
            )
            # (the first submit forks the workers) a worker of the first batches may die while
            # later ones are still being handed on
            self.futures = [self._submit(jobs) for jobs in self.batches]
            atexit.register(self.close)
            if stops:
                held.handler = self._interrupt  # (a Ctrl-C held back is this handler's)
                self._handler_set = True

    def _submit(self, jobs: list[tuple]) -> Future | None:
        """The future of one batch; None when the pool is broken (a worker died): the actions of
        these sources cook them in this process."""
        assert self.pool is not None
        try:
            return self.pool.submit(cook_in_worker, jobs)
        except RuntimeError:  # BrokenProcessPool (or a pool shut down)
            return None

    def add(self, jobs: list[tuple]) -> None:
        """One more batch, after the others (cooked from now on when the pool has started)."""
        b = len(self.batches)
        self.batches.append(jobs)
        self.where.update((job[1], b) for job in jobs)
        if self.pool is not None:
            # (a fork server's pool starts a worker when a batch comes: a Ctrl-C held back until
            # it is one of the pool's, which the handler stops, never half started)
            with interrupts_held():
                self.futures.append(self._submit(jobs))

    @staticmethod
    def _stops_on_interrupt() -> bool:
        return stops_on_interrupt()

    def _interrupt(self, signum, frame) -> None:
        """Ctrl-C (this process's SIGINT handler while the pool runs): tell the workers to stop,
        then raise KeyboardInterrupt as Python's own handler does.  Only signals are sent here
        (the handler may run while this thread holds the pool's locks); the pool then finds
        its workers gone, and every batch not cooked fails."""
        self.interrupted = True
        stop_workers(self.pool)
        signal.default_int_handler(signum, frame)

    def take(self, rel: str) -> dict | None:
        """The result of source *rel*, waiting for its batch; None when this pool does not cook
        it (or broke, or this is another process): the caller then cooks it itself."""
        if os.getpid() != self.pid:
            return None
        if self.interrupted:  # (another of doit's threads, while Ctrl-C unwinds the main one)
            raise KeyboardInterrupt
        with self._lock:
            b = self.where.pop(rel, None)
            if b is None:
                return None
            if rel in self.results:
                return self.results.pop(rel)
            future = self.futures[b]
        if future is None:
            return None
        # waited for without the lock: doit -n N's other threads take results of other batches
        # meanwhile (each thread waiting for the same batch gets it from the same future)
        waiting = self.waiting if threading.current_thread() is self.thread else None
        if waiting is not None:
            from concurrent.futures import wait

            while not wait([future], WAIT_POLL).done:
                waiting()  # (a Cancelled it raises unwinds the run: close stops the workers)
        try:
            batch = future.result()
        except Exception as exc:  # noqa: BLE001 - a broken pool: the action cooks the source itself
            if self.interrupted:  # the workers were stopped by Ctrl-C: nothing is cooked here
                raise KeyboardInterrupt from None
            with self._lock:
                if not self.lost:
                    sys.stderr.write(
                        f"veduta: warning: a cook worker process ended ({exc}); cooking the rest in this process\n"
                    )
                self.lost.update(job[1] for job in self.batches[b])
            return None
        with self._lock:
            if self.futures[b] is not None:  # the first thread back files the whole batch
                self.futures[b] = None
                for job, result in zip(self.batches[b], batch, strict=True):
                    self.results[job[1]] = result
                self.batches[b] = []  # (its jobs' arguments: no longer needed)
            return self.results.pop(rel, None)

    def close(self) -> None:
        """Stop the pool (waiting for the batches being cooked; the rest are dropped; after
        Ctrl-C the workers are ending already).  A run unwinding from Ctrl-C or a cancel (the
        MCP server's, ``Cancelled``) stops its workers first, as Ctrl-C does: a batch being cooked
        unwinds, and no batch handed on to a worker's queue is cooked."""
        if self.pool is not None and os.getpid() == self.pid:
            if self.interrupted or isinstance(sys.exc_info()[1], KeyboardInterrupt | Cancelled):
                stop_workers(self.pool)  # (again after Ctrl-C: a fork server's worker started since)
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
            atexit.unregister(self.close)  # a long-lived process (veduta watch) keeps no dead pool
        if self._handler_set and threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGINT) == self._interrupt:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            self._handler_set = False


class _Held:
    """What :func:`interrupts_held` hands its block: *handler*, the SIGINT handler from the
    block's end on (the block may set it; by default the one before the block)."""

    def __init__(self) -> None:
        self.handler: Callable[..., object] | None = None
        self.caught: list[tuple] = []


@contextlib.contextmanager
def interrupts_held() -> Iterator[_Held]:
    """Hold SIGINT back while the block runs (it forks workers, or starts the fork server
    they come from): a Ctrl-C meanwhile is handled when the block ends, where Python's handler
    raises KeyboardInterrupt in the caller's code.  Unheld, it could land in an at-fork hook
    (Python prints "Exception ignored" there and the cook goes on), in a child before it
    ignores SIGINT (see :func:`worker_start`), or between a fork server's start of a worker
    and the pool's record of it (a worker left to fail alone, a traceback).

    Two holds: SIGINT is blocked in this thread (a child inherits the block; the workers' start
    lets it go), and in the main thread Python's handler is one that only takes note: in a
    process with other threads (``veduta watch``'s watcher) the kernel hands SIGINT to one of
    them, and Python runs the handler in the main thread all the same.  A forked child inherits
    that handler too; the workers' start puts back the one before (``held_from``)."""
    held = _Held()
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):

            def note(signum, frame) -> None:
                held.caught.append((signum, frame))

            note.held_from = handler  # type: ignore[attr-defined]
            held.handler = handler
            signal.signal(signal.SIGINT, note)
    mask = hasattr(signal, "pthread_sigmask")
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ()) if mask else None
    try:
        if mask:
            signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGINT,))
        yield held
    finally:
        if before is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)  # (a SIGINT held back is noted here)
        if held.handler is not None:
            signal.signal(signal.SIGINT, held.handler)
            if held.caught:
                held.handler(*held.caught[0])  # (Python's own, or the pool's: raises KeyboardInterrupt)


@contextlib.contextmanager
def finishing() -> Iterator[None]:
    """While a cook stopped by Ctrl-C records what it cooked and says so (doit's database, the
    summary): a further Ctrl-C is dropped, so the record and the summary are whole.  A second
    SIGINT is common: a second press, or ``timeout`` (a CI script's) passing the terminal's on to
    its child, which has had it already.  The work held is bounded (a commit, a few lines); the
    KeyboardInterrupt being handled goes on unwinding after it.  Nothing changes in a run that
    was not interrupted, in another thread, or under another program's SIGINT handler."""
    if not (
        isinstance(sys.exc_info()[1], KeyboardInterrupt)
        and threading.current_thread() is threading.main_thread()
        and callable(signal.getsignal(signal.SIGINT))
    ):
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def stops_on_interrupt() -> bool:
    """Whether Ctrl-C is a pool's to handle (its workers ignore it, and are stopped): SIGINT
    raises Python's KeyboardInterrupt in this thread, the main one (not under a handler of an
    embedding program, nor ignored, nor in a thread of the MCP server, whose workers keep Python's
    own handling)."""
    return (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )


def let_interrupts_go() -> None:
    """In a worker process started with SIGINT held back (:func:`interrupts_held`): let it go
    (one held back meanwhile is delivered now, or dropped when ignored)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT,))


def stop_workers(pool) -> None:
    """Send SIGTERM to the worker processes of *pool* (a ProcessPoolExecutor); only signals, so
    that a signal handler may call it.

    ProcessPoolExecutor keeps its workers in ``_processes`` (pid -> Process; None once shut
    down), checked against Python 3.11-3.13: no public call stops the workers without also
    shutting the pool down, which takes locks the interrupted thread may hold (3.14's
    ``terminate_workers`` does that)."""
    processes = getattr(pool, "_processes", None) if pool is not None else None
    for process in list(processes.values()) if processes else ():
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):  # gone already
            pass


#: whether this pool worker is cooking a batch (a SIGTERM then unwinds it; see :func:`_stopped`)
_COOKING = False
#: a worker's exit status when stopped (a shell's for SIGTERM)
STOPPED = 128 + signal.SIGTERM


def cook_in_worker(jobs: list[tuple]) -> list[dict]:
    """What a pool worker runs for a batch: :func:`veduta.cook.cook.cook_batch`, ended by the
    cook's SIGTERM (Ctrl-C) once what it was doing unwound."""
    global _COOKING
    from veduta.cook import cook

    try:
        _COOKING = True
        got = cook.cook_batch(jobs)
        _COOKING = False
    except SystemExit:  # SIGTERM (see _stopped): the file being written was removed
        os._exit(STOPPED)
    except BaseException:
        _COOKING = False
        raise
    return got


def _stopped(signum, frame) -> None:
    """SIGTERM in a pool worker: the cook was interrupted.  A batch being cooked unwinds (an
    atomic write in progress removes its temporary file) and :func:`cook_in_worker` ends the
    worker; an idle worker ends at once.  A second SIGTERM ends it whatever it does."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _COOKING:
        raise SystemExit(STOPPED)
    os._exit(STOPPED)


def worker_start(cook_stops_it: bool = False) -> None:
    """The start of a pool worker: Ctrl-C left to the cook, the cyclic garbage collector on,
    what the worker inherited set aside.

    With *cook_stops_it* (the cook's SIGINT handler stops the workers, see the module's
    docstring), SIGINT is ignored, and only then let go: the worker was forked with it held
    back (:func:`interrupts_held`), so a Ctrl-C since the fork, pending, is dropped.  Without,
    SIGINT is let go to the handler the cook had before it held SIGINT back.  Either way SIGTERM
    ends the worker cleanly (:func:`_stopped`): the cook sends it at Ctrl-C, and when a run in a
    server's thread is cancelled (:meth:`Ahead.close`).

    The task pass forks the pool while it keeps the collector paused (see ``cook_tasks``), and
    a worker that kept it paused grew by about 1 KB for each small model it compiled (10,000
    models on two workers: 43 -> 56 MB each, and growing; collected: flat at 45 MB).  What it
    inherited is frozen (``gc.freeze``) rather than scanned: never collected, never written
    to, so its pages stay shared with the main process."""
    signal.signal(signal.SIGTERM, _stopped)  # (also a cancelled cook's, in a server's thread: see Ahead.close)
    if cook_stops_it:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:  # forked while the cook held SIGINT back: the handler before the hold
        before = getattr(signal.getsignal(signal.SIGINT), "held_from", None)
        if before is not None:
            signal.signal(signal.SIGINT, before)
    let_interrupts_go()
    gc.freeze()
    gc.enable()


def pool_context():
    """How to start worker processes (the cook ahead's, veduta check's). fork: in milliseconds,
    with everything imported and the asset index set; only safe while this process runs no other
    thread. A process with threads (the MCP server, ``veduta watch``) lives long: a fork server,
    started once with the compilers imported, forks each run's workers (spawn would start a fresh
    interpreter per worker per run: about half a second)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if one_thread() and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # (cook.py imports the container codecs only where it reads or writes cooked files)
        ctx.set_forkserver_preload(
            ["veduta.cook.cook", "veduta.container.chunks", "veduta.container.meta", "veduta.compile.model.compile"]
        )
        from multiprocessing import forkserver, resource_tracker

        # started (once per process) with SIGINT held back, which its children inherit: a
        # Ctrl-C never lands in a worker before the worker's own start (worker_start) decides.
        # The resource tracker first: starting it lets SIGINT go in this thread (3.11-3.13)
        resource_tracker.ensure_running()
        with interrupts_held():
            forkserver.ensure_running()
        return ctx
    return multiprocessing.get_context("spawn")


#: The pool of the run in progress in this process (set by the cook's task creation), or the
#: warm compile worker its few stale sources were sent to.
CURRENT: Ahead | Warm | None = None


def take(rel: str) -> dict | None:
    ahead = CURRENT
    return ahead.take(rel) if ahead is not None else None


def lost(rel: str) -> bool:
    """Whether source *rel* was being cooked by a pool that broke in this run (its cooked file
    may be the dead worker's work of this run, not an earlier cook's)."""
    ahead = CURRENT
    return ahead is not None and rel in ahead.lost


def begin(jobs: list[tuple], workers: int, waiting: Callable[[], None] | None = None) -> Ahead | Warm | None:
    """Start cooking *jobs* ahead in *workers* processes.  Too few to be worth a pool: sent to
    the warm compile worker of ``veduta watch --monitor`` when one runs this process's code
    (veduta/cook/warm.py), else None (the actions cook them)."""
    global CURRENT
    end()
    if workers < 1 or not jobs:
        return None
    if len(jobs) < MIN_SOURCES:
        if not os.path.isdir(os.path.join(jobs[0][4], MONITOR_FOLDER)):  # (no monitor ever ran)
            return None
        from veduta.cook.warm import begin as warm_begin

        CURRENT = warm_begin(jobs, waiting)
        return CURRENT
    CURRENT = Ahead(jobs, workers, waiting=waiting)
    CURRENT.start()
    return CURRENT


class Feed:
    """The stale sources of a task pass (``cook_one``'s arguments, in task order) handed on to a
    pool of *workers*.

    With *stream*, a pass that finds many stale sources (a first cook) starts the pool once it
    has found ``4 x workers`` full batches, and hands on each batch as it fills: the workers
    compile while the pass makes the rest of doit's tasks, saves the stat cache and looks for
    orphans, which in a first cook of 10,000 small models is a tenth of a second of the cores'
    time.  The batches are those :func:`begin` makes of the same jobs (from ``4 x workers x
    BATCH`` jobs on, batches of ``BATCH``); with fewer jobs, or without *stream* (the jobs'
    arguments may still grow: the shared cache's fetch), :meth:`finish` calls :func:`begin` with
    them all.
    """

    def __init__(self, workers: int, stream: bool = True, waiting: Callable[[], None] | None = None):
        self.workers = workers
        self.waiting = waiting  # (Ahead.waiting)
        self.stream = stream
        self.jobs: list = []  # (argument lists or tuples: made tuples when handed on)
        self.sent = 0  # jobs handed on so far (whole batches)
        self.ahead: Ahead | None = None

    def add(self, job) -> None:
        self.jobs.append(job)
        n = len(self.jobs)
        if not self.stream or n - self.sent < BATCH or n < 4 * self.workers * BATCH:
            return
        batch, self.sent = [tuple(j) for j in self.jobs[self.sent :]], n  # the first time, 4 x workers batches
        if self.ahead is None:
            global CURRENT
            end()
            self.ahead = CURRENT = Ahead(batch, self.workers, BATCH, self.waiting)
            self.ahead.start()
        else:
            self.ahead.add(batch)

    def finish(self) -> Ahead | Warm | None:
        """Hand on what is left: the pool of the run (None: too few sources to be worth one)."""
        if self.ahead is None:
            return begin([tuple(j) for j in self.jobs], self.workers, self.waiting)
        for b in range(self.sent, len(self.jobs), BATCH):
            self.ahead.add([tuple(j) for j in self.jobs[b : b + BATCH]])
        self.sent = len(self.jobs)
        return self.ahead


def stop() -> None:
    """Stop the workers of this process's pool now (a cancelled run, before it records what it
    did; :meth:`Ahead.close` then finds them gone)."""
    ahead = CURRENT
    if isinstance(ahead, Ahead) and ahead.pool is not None and os.getpid() == ahead.pid:
        stop_workers(ahead.pool)
    elif ahead is not None and not isinstance(ahead, Ahead):  # (the warm compile worker, cooking this run's jobs)
        ahead.stop()


def end() -> None:
    global CURRENT
    if CURRENT is not None:
        CURRENT.close()
        CURRENT = None
