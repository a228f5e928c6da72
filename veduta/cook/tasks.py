"""The doit side: ``task_cook``, ``DOIT_CONFIG``, the file checker and the reporter.

Speed notes (see docs/cooking.md): doit checks every task serially in its
main process, so the up-to-date decision is made here, once per source, in a
single pass at task creation: first by stat signatures (the stat cache),
falling back to reading the cooked META and re-hashing.  Each task then
carries a plain ``uptodate`` boolean and doit only compares file_dep stat
states in its (sqlite3) database, never hashing.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
import time
from collections.abc import Callable
from itertools import groupby
from operator import itemgetter, methodcaller
from typing import Any

from doit import create_after
from doit.dependency import FileChangedChecker
from doit.reporter import ConsoleReporter

from veduta import COMPILER_VERSION, TOOLCHAIN
from veduta.base.kinds import BY_FOLDER, KINDS, kind_of, name_of
from veduta.base.project import AssetIndex, Project, Source, not_a_source, plain_rel, watch_holds
from veduta.cook.action import cook_one
from veduta.cook.cook import (
    COOKED,
    FAILED,
    RESTORED,
    SHARED,
    UPTODATE,
    check_fresh,
    fresh_by_stat,
    index_names,
    index_of,
    names_by_folder,
    orphans,
    prune_orphans,
    set_index,
)
from veduta.cook.doit_adapter import (
    COOK_CREATOR,
    DOIT_CHECKED,
    CallAction,
    GroupHandle,
    SubtaskMaker,
    bind_class,
    drop_failures,
    exit_as_failure,
    fresh_listing,
    known_targets,
    lean_dispatch,
    overwrite_saved,
    quiet_stdout,
    release_executed,
    runner_parallelism,
    trust_fresh,
    wait_only_for,
    write_saved,
)
from veduta.cook.run import EDITS_JOURNAL, MONITOR_FOLDER, CookRun
from veduta.cook.scancache import ScanCache
from veduta.cook.state import MISSING, RACY_NS, SIG, SIG2, TABLE_ROW, StatCache, entry_from_json, well_formed

STATE_FILE = "state.marshal"
DB_FILE = "doit.sqlite3"
BASENAME = "cook"


class StatChecker(FileChangedChecker):
    """file_dep states are (size, mtime_ns, inode, ctime_ns); a racy state never matches.

    Never hashes: a file whose signature changed but whose content this run's
    up-to-date pass verified (a touched file, a branch switched back) is not
    modified.  doit makes it itself: :func:`doit_config` binds a subclass to the
    run (``run``).
    """

    run: CookRun

    def __init__(self) -> None:
        super().__init__()
        self.verified = self.run.verified

    def check_modified(self, file_path, file_stat, state):
        cur = (file_stat.st_size, file_stat.st_mtime_ns, file_stat.st_ino, file_stat.st_ctime_ns)
        if state is not None and len(state) == 4 and tuple(state) == cur:
            return False
        return self.verified.get(file_path) != SIG.pack(*cur)

    def get_state(self, dep, current_state):
        st = os.stat(dep)
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
            return ["racy"]
        new = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
        return None if new == current_state else new


def cook_tasks(run: CookRun):
    """Yield the doit task dicts of every source of the run's project (and the orphan sweep)."""

    # Creating 10,000 tasks makes millions of small objects that all live to the
    # end of the run; CPython's cyclic GC would traverse them again and again
    # (half of a no-op cook).  Collect nothing while tasks are made, then move
    # them out of the collector's way.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    project, display_root = run.project, run.display_root
    verified_sigs = run.verified
    verified_sigs.clear()
    if run.executing and os.path.exists(os.path.join(project.cache, EDITS_JOURNAL)):  # (journal.pending)
        from veduta.cook.journal import finish_edits

        finish_edits(project)  # a set of edits a killed `veduta rename` left: completed first
    cache = run.cache = StatCache(os.path.join(project.cache, STATE_FILE), TOOLCHAIN)
    # Only the cook group (plain `doit cook`) selected: a fresh subtask would be made
    # only to be skipped, so it is not made at all.
    only_group = run.executing and run.selected == [BASENAME]
    # the file-system monitor's journal (veduta watch --monitor), when one runs and vouches for
    # everything since the last complete cook: only the sources it names are scanned and checked
    journaled = _journal_pass(run, cache) if only_group else None
    scans = None
    # a caller that may cancel the run (veduta mcp) is heard between the kinds' folders listed and
    # every 64 sources looked at, not only once the cooking begins
    waiting = run.looking
    if journaled is None:
        # the folders unchanged since the last cook are not listed again (veduta/cook/scancache.py)
        scans = ScanCache(project.cache)
        warnings: list[str] = []
        walk = scans.walk if waiting is None else _heeding(scans.walk, waiting, gc_was_enabled)
        sources, problems = project.scan(warnings, walk)
        if warnings:
            sys.stderr.write("".join(w + "\n" for w in warnings))
        index = index_of(sources)
        set_index(project.assets, index)
        run.index, run.sources = index, list(map(itemgetter(2), sources))  # (their paths, made in C)
    else:
        sources, problems, index = journaled.sources, [], journaled.index
        if sources:  # (a failure propagates to the sources that name it: every source known)
            set_index(project.assets, index)
            run.index, run.sources = index, sorted(cache.entries)
    owed = cache.owed
    assets = project.assets
    now = time.time_ns()
    # warnings fail a strict cook: one takes no output whose notes (its warnings) it does not know
    # (restored from the shared cache, or found fresh with no record of them): it cooks it again,
    # and the cook compiles it unless a compile of this toolchain kept its notes
    strict = run.is_strict()

    # `doit list` (veduta's CookList) prints a fresh subtask from its name and doc: no Task made
    listing = None if run.executing else fresh_listing()
    group = GroupHandle()
    yield {"name": None, "doc": "cook every asset source into a .vda file", "uptodate": [group]}
    if listing is not None:
        if group.task is None or group.task.name != BASENAME:
            # task_cook imported under another name (the subtasks are named after it, and only
            # cook:<path> are trusted fresh): every Task made, doit's own list
            listing = None
        else:
            listing.bind(BASENAME, lambda: cook_tasks(run))  # (see FreshListing.every_task)
    subtask = SubtaskMaker(group)  # a subtask dict made into doit's Task, cheaply
    fresh_names = []
    standing: list[tuple[str, int]] = []  # (fresh source, how many warnings its last compile gave)
    # stale tasks held back for one parallel fetch from the shared cache (when a URL is set)
    held: list[dict] | None = [] if run.executing and project.shared_cache_set() else None
    # the stale sources this run cooks go to a pool of worker processes, in task order: as the
    # pass finds them when it runs the whole group (the workers compile while the rest of this
    # pass runs), else at its end (after the one fetch from the shared cache, which may still
    # add to their arguments)
    feed = None
    sel = run.selected or []
    if run.executing and (workers := _pool_workers()):
        from veduta.cook.ahead import Feed

        feed = Feed(workers, stream=held is None and BASENAME in sel, waiting=run.waiting)
    named = (
        None if BASENAME in sel else {n[len(BASENAME) + 1 :] for n in sel if n.startswith(BASENAME + ":")}
    )  # only these run

    prefix = assets + os.sep
    # the targets under the assets folder of the dodo file's own tasks: a source one of them
    # writes is cooked after it (doit's implicit task_dep), by its action, not ahead from what
    # it holds now; and when it is fresh, its subtask is still made and left to doit (not
    # skipped, not trusted fresh), so that doit runs that task first and then finds whether the
    # source changed
    made = frozenset(t for t in known_targets() if t.startswith(prefix)) if run.executing else frozenset()
    # (by name: hashing a Kind is slower; groupby compares a run of one kind by identity, in C)
    kinds = {k.name: k for k, _ in groupby(sources, key=itemgetter(0))}
    cooked_dirs = {k.name: os.path.join(project.cooked, k.folder) + os.sep for k in kinds.values()}
    blocked = {name: why for name, d in cooked_dirs.items() if (why := _not_a_folder(d[:-1]))}
    blocked_rel: dict[str, str] = {}  # source -> why it cannot be cooked (asked for by name: said so)
    if blocked:  # one line per blocked folder, not one failure per source
        problems = problems + sorted(set(blocked.values()))
        blocked_rel = {s.rel: blocked[s.kind.name] for s in sources if s.kind.name in blocked}
        sources = [s for s in sources if s.kind.name not in blocked]
    # sources whose name another source of their kind also has (rare: looked up only when the
    # index, made of the paths in run.sources, holds fewer names than paths)
    shared_names = (
        {rel for by_name in index.by_kind.values() for paths in by_name.values() if len(paths) > 1 for rel in paths}
        if index_names(index) != len(run.sources)
        else set()
    )
    entry_of, stat, pack2 = cache.packed, os.stat, SIG2.pack
    loaded = len(cache)  # (as read: the pass below sets and drops entries)
    # the sources fresh by the state file's table, compared whole (see _fresh_by_table)
    by_table = (
        _fresh_by_table(cache, sources, run.sources, cooked_dirs, prefix)
        if (only_group or listing is not None) and not made and not blocked and not shared_names and not owed
        else None
    )
    if by_table and listing is not None:
        # `doit list`: the fresh sources it takes by name (all but those doit ignore may concern)
        # are listed from here, no task made; the others are checked and made as below
        table_fresh = [s for s in sources if s.rel in by_table]
        taken = listing.take_all(
            [f"{BASENAME}:{rel}" for _, _, rel in table_fresh], [f"{k.name} {name}" for k, name, _ in table_fresh]
        )
        by_table = {s.rel for s, t in zip(table_fresh, taken) if t}
    unknown = 0  # sources with no entry as read, or with a name another source has
    looked = sources
    if by_table and len(by_table) == len(sources):
        # every source fresh by the table (its sources are these: a no-op): none looked at again
        looked = []
        if only_group:
            fresh_names = list(map(itemgetter(2), sources))  # (their paths, as the loop below takes them)
    for i, src in enumerate(looked):
        if waiting is not None and not i % 64:
            _heed(waiting, gc_was_enabled)
        kind, name, rel = src
        if by_table is not None and rel in by_table:
            if only_group:
                fresh_names.append(rel)  # (no task made, as below; a listing's need no trust_fresh)
            continue
        cooked = cooked_dirs[kind.name] + name + ".vda"
        duplicate_of = None
        packed: Any = None  # the stat-cache entry, when every signature in it still matches
        if rel in shared_names:
            duplicate_of = [p for p in index.by_kind[kind.name][name] if p != rel]
            unknown += 1
        else:
            packed = entry_of(rel)  # (unchecked: fresh_by_stat finds a damaged entry not fresh)
            if packed is None:
                by_stat = False
            elif type(packed) is tuple and len(packed) == 3 and packed[2] == () and type(packed[0]) is str:
                # the common entry (no dependency, no notes): fresh_by_stat's check, inline (its
                # blob is the 64 bytes compared below when it matches: well formed, as there)
                try:
                    st, st_src = stat(cooked), stat(prefix + rel)
                    by_stat = (
                        pack2(
                            st.st_size,
                            st.st_mtime_ns,
                            st.st_ino,
                            st.st_ctime_ns,
                            st_src.st_size,
                            st_src.st_mtime_ns,
                            st_src.st_ino,
                            st_src.st_ctime_ns,
                        )
                        == packed[1]
                    )
                except OSError:
                    by_stat = False
            else:
                by_stat = (
                    fresh_by_stat(rel, packed, assets, cooked, index)
                    and not (strict and len(packed) == 4)
                    # a dep whose name another source has now: checked by its hash (moved_reference)
                    and not (shared_names and not shared_names.isdisjoint(packed[2]))
                )
            if by_stat:
                if made and _made_by_a_task(made, prefix, rel, packed[2]):
                    pass  # made, and left to doit: it runs that task first, then checks this one
                else:
                    fresh_names.append(rel)
                    if len(packed) == 5 and packed[4]:  # its last compile's warnings stand
                        standing.append((rel, len(packed[4])))
                    if only_group:
                        continue  # decided before any task is made: a fresh source costs no more
                    if listing is not None and listing.take(f"{BASENAME}:{rel}", f"{kind.name} {name}"):
                        continue
            else:
                packed = None
        file_dep = [prefix + rel]
        uptodate = None
        recook = False
        if duplicate_of:
            cache.discard(rel)
            uptodate = [False]
        elif packed is not None:
            # fresh by the stat cache; the packed entry as it is: no signature in it is racy, or
            # it would not have matched.  doit only compares the file_dep stat states (see
            # StatChecker); no uptodate item at all, since doit's handling of one costs more
            # than the check itself
            blob, deps, z = packed[1], packed[2], SIG.size
            verified_sigs[file_dep[0]] = blob[z : 2 * z]
            for i, d in enumerate(deps, 2):
                s = blob[z * i : z * i + z]
                if s != MISSING:
                    verified_sigs[prefix + d] = s
                    file_dep.append(prefix + d)
        else:
            prior = cache.packed(rel)
            unknown += prior is None
            fresh, deps, entry, verified = check_fresh(kind.name, rel, assets, cooked, index, now, prior, rel in owed)
            if fresh and strict and entry[3] is None:
                fresh = False  # its notes unknown: cooked, so that its warnings are known
            if fresh:
                cache.set(rel, entry)
                if not (made and _made_by_a_task(made, prefix, rel, deps)):  # (else as above)
                    fresh_names.append(rel)
                    if entry[3]:
                        standing.append((rel, len(entry[3][1])))
                    if only_group or listing is not None and listing.take(f"{BASENAME}:{rel}", f"{kind.name} {name}"):
                        continue
                for p, s in verified:
                    if s:  # exists (and is not racy)
                        verified_sigs[prefix + p] = SIG.pack(*s)
                    if s != () and p != rel:
                        file_dep.append(prefix + p)
            else:
                # stale for a reason META cannot show (an earlier toolchain cooked it, a material
                # it names came or went): compiled, however fresh the cooked file looks
                recook = rel in owed or (
                    prior is not None and well_formed(prior) and len(prior) == 5 and not watch_holds(prior[3], index)
                )
                if not recook:
                    cache.discard(rel)  # (an owed source stays owed until it is cooked)
                # a stale task runs anyway; its file_dep are the last cook's deps that still exist
                file_dep += [prefix + d for d in deps if os.path.exists(prefix + d)]
                uptodate = [False]
        args: list = [kind.name, src.rel, assets, cooked, project.cache, duplicate_of, display_root]
        if recook or strict:
            args += [None, None, recook] + [True] * strict  # cook_one(..., shared, notes, recook, strict)
        if (
            uptodate is not None
            and feed is not None
            and (named is None or rel in named)
            and not (made and not made.isdisjoint(file_dep))
        ):
            feed.add(args)
        doc = f"{kind.name} {src.name}"
        targets = () if duplicate_of else (cooked,)  # two tasks may not share a target: duplicates have none
        if held is not None and uptodate is not None and not duplicate_of:
            held.append(
                {
                    "name": src.rel,
                    "actions": [CallAction(cook_one, args)],
                    "file_dep": file_dep,
                    "clean": True,
                    "doc": doc,
                    "targets": [cooked],
                    "uptodate": uptodate,
                }
            )
            continue
        yield subtask.make(src.rel, [CallAction(cook_one, args)], file_dep, targets, doc, uptodate or ())
    if held:
        yield from map(subtask, shared_fetch(run, held, index))

    asked = [n for n in run.selected or [] if n.startswith(BASENAME + ":") and ":_" not in n]
    known = {f"{BASENAME}:{s.rel}" for s in sources} if asked else set()
    for name in asked:
        if name not in known:
            rel = name[len(BASENAME) + 1 :]
            plain = plain_rel(rel)  # cook:models//crate.vmodel: the source as listed, under its own name
            if plain is not None and plain != rel and f"{BASENAME}:{plain}" in known:
                yield {"name": rel, "actions": None, "task_dep": [f"{BASENAME}:{plain}"]}
                continue
            why = (
                blocked_rel.get(rel)
                or (not_a_source(os.path.join(assets, rel)) if kind_of(rel) else None)  # (a FIFO: the scan's words)
                or (
                    f"{os.path.join(assets, rel)}: no such source (cook:<path> takes a source path under "
                    f"{assets}/, e.g. cook:models/crate.vmodel)"
                )
            )
            yield {"name": rel, "actions": [(report_problems, [[why]])], "uptodate": [False]}
    if problems:
        # sources that cannot be named or read still fail the run, with their paths
        yield {
            "name": "_sources",
            "actions": [(report_problems, [problems])],
            "uptodate": [False],
            "doc": "sources that cannot be found or named",
        }

    # the same sources as the state file holds entries of (each source one, as many entries, none
    # owed), fresh or stale: no entry is left to drop, and no cooked file has lost its source
    # since the last cook (a stale source's cooked file is named as a fresh one's is)
    same_sources = not unknown and len(sources) == loaded and not owed
    young: list[str] = []
    seen: dict = {}  # stray file -> its signature as judged (the action removes only that file)
    if scans is not None:
        # the same sources, and cooked folders unchanged since a sweep found nothing stray in
        # them: nothing stray (the cooked folder itself too: a .vda at its top is swept)
        folders = [project.cooked] + [os.path.join(project.cooked, k.folder) for k in KINDS]
        if same_sources and scans.cooked_clean(folders):
            stray = []
        else:
            sigs = scans.cooked_signatures(folders)
            subs: dict = {}  # (the folders under them, each stat()ed before it was listed)
            stray = orphans(project.cooked, names_by_folder(sources), young, subs, seen)
            scans.swept(sigs, not stray and not young, subs)
    elif journaled is not None and journaled.orphans_checked:
        stray = []  # as the last complete cook left them: nothing came into the cooked folder since
    else:
        by_folder = {k.folder: set(index.by_kind.get(k.name, ())) for k in KINDS}
        stray = orphans(project.cooked, by_folder, young, None, seen)
    run.cooked_clean = not stray and not young
    yield {
        "name": "_orphans",
        # what the pass found, with each file's signature: the action lists and reads nothing again
        "actions": [(prune_orphans, [project.cooked, [(f, seen.get(f)) for f in stray]])],
        "uptodate": [not stray],
        "doc": "remove cooked files whose source is gone",
    }
    if fresh_names and not only_group:
        # made fresh subtasks (doit list --status, doit cook:<path>): doit need not check again
        trust_fresh({f"{BASENAME}:{rel}" for rel in fresh_names})
    if only_group:
        run.fresh_skipped = len(fresh_names) + (journaled.fresh if journaled is not None else 0)
    elif run.executing and fresh_names:
        # `doit cook` runs the group, which waits for every subtask.  Fresh ones are
        # known fresh already: let the group wait for the stale ones only, so that
        # doit spends nothing on the rest.  They stay defined (doit list, doit
        # cook:<path>, doit clean see them all).
        fresh = {f"{BASENAME}:{rel}" for rel in fresh_names}
        if wait_only_for(group, fresh):
            run.fresh_skipped = len(fresh)
    selected = [n for n in run.selected or [] if n.startswith(BASENAME + ":") and ":_" not in n]
    total = len(sources) + (journaled.fresh if journaled is not None else 0)
    run.to_run = len(selected) if selected and BASENAME not in (run.selected or []) else total - run.fresh_skipped
    if run.executing:
        if journaled is not None:
            standing += journaled.standing
        run.standing = [s for s in standing if s[1]]  # (not printed again: counted)
        # only a run that cooks (and holds the cook lock) writes the cook state: `doit list`,
        # `doit info` and the like look and leave it as it was
        if journaled is None and not same_sources:
            cache.keep_only(s.rel for s in sources)  # (the same sources: every entry is a source's)
        # what this pass found by reading and hashing is kept at once (a cook killed before its
        # end still keeps it); an entry dropped or trimmed is found so again by the next run, so
        # a run that only found sources stale saves its state once, at its end (complete_run)
        if cache.learned:
            try:
                cache.save()
            except OSError:
                pass  # a cache that cannot be written only makes the next run slower (the database warned)
        if scans is not None:
            scans.save()
    if feed is not None:
        feed.finish()
    gc.freeze()
    if gc_was_enabled:
        gc.enable()


def shared_fetch(run: CookRun, tasks: list[dict], index):
    """Yield the stale *tasks* after asking the shared cache, in parallel, for their outputs:
    what it has (and passes verification) is put in place (and in the local store), and the
    task's action is told which keys came from the shared cache, so that it counts them (and
    gets warnings about rejected objects).
    Only called when a URL is set and a task is stale: nothing of the storage client is
    imported otherwise."""
    from veduta.base.errors import ConfigError
    from veduta.cook import remote
    from veduta.cook.shared import SharedCache

    project = run.project
    try:
        settings = remote.settings(project)
    except ConfigError as exc:
        print(f"veduta: warning: shared cache: {exc}; going on without it", file=sys.stderr)
        yield from tasks
        return
    if settings is None:  # the caller checked that a URL is set; it was unset meanwhile
        yield from tasks
        return
    run.shared = shared = SharedCache(settings, project.cache)
    if run.is_strict():
        # a strict cook reads nothing from the shared cache: what it restored would have notes
        # unknown to it (the tier holds cooked files only), so it would compile them anyway; it
        # still uploads what it compiles, when writing
        yield from tasks
        return
    sel = run.selected or [BASENAME]
    wanted = [t for t in tasks if BASENAME in sel or f"{BASENAME}:{t['name']}" in sel]
    # cook_one's arguments: kind, rel, assets, cooked, ...
    got = shared.fetch(
        [(t["actions"][0].args[0], t["name"], t["actions"][0].args[3]) for t in wanted], project.assets, index
    )
    for t in tasks:
        keys, notes = got.get(t["name"], ([], []))
        if keys or notes:
            t["actions"][0].args[7:9] = [keys, notes]  # cook_one(..., shared, notes[, recook])
        yield t


class JournalPass:
    """What the monitor's journal leaves a cook to do (see :func:`_journal_pass`)."""

    def __init__(self, sources: list, index: AssetIndex, fresh: int, standing: list, orphans_checked: bool):
        self.sources = sources  # the sources the journal names (or whose files it names), by path
        self.index = index  # every source (empty when *sources* is and no cooked file changed)
        self.fresh = fresh  # how many others there are: fresh, not one stat'd
        self.standing = standing  # (source, warnings) of those whose last compile's warnings stand
        self.orphans_checked = orphans_checked  # the cooked folder holds no stray file: not listed


def _journal_pass(run: CookRun, cache: StatCache) -> JournalPass | None:
    """The sources a whole-group cook must check when the file-system monitor's journal vouches
    for every change since the last complete cook (docs/cooking.md, "The file-system monitor"),
    found from the stat cache and the journal alone: no scan, no stat of a source the journal
    does not name.  None (scan and check every source by its signatures) when no monitor runs,
    when it cannot be trusted (restarted, overflowed, a folder made or moved, a link), when a
    source came or went, or when the dodo file's own tasks write under the assets folder.  The
    monitor's answer is kept in *run* for the reporter's mark.  Nothing is imported, and nothing
    asked, when no monitor ever ran for this game."""
    project = run.project
    if not os.path.isdir(os.path.join(project.cache, MONITOR_FOLDER)):  # (nothing of the monitor imported)
        return None
    from veduta.cook.monitor import folders, sync

    entries = cache.entries
    where = folders(project.root, project.assets, project.cooked)
    got = run.monitor = sync(project.cache, cache.file_sig if entries else None, where)
    changes = got.changed if got is not None else None
    prefix = project.assets + os.sep
    if got is None or changes is None or cache.owed or any(t.startswith(prefix) for t in known_targets()):
        return None
    for p in changes.named:  # a name made or removed: an editor saving by renaming over its file
        if p in entries:
            try:
                if not stat.S_ISREG(os.lstat(prefix + p).st_mode):
                    return None  # a source gone (what references resolve to changes)
            except OSError:
                return None
        elif _source_path(p):
            return None  # a source come
    written = changes.assets
    names: set[str] = {p for p in written if p in entries}
    standing = []
    strict = run.is_strict()
    try:
        for rel, packed in entries.items():
            if packed[2] and not written.isdisjoint(packed[2]) or strict and len(packed) == 4:
                names.add(rel)  # a file it read changed (or its notes are unknown to a strict cook)
            if len(packed) == 5 and packed[4]:
                standing.append((rel, len(packed[4])))
    except (TypeError, IndexError):  # (a damaged entry: the mark named this very file, so never)
        return None
    index = AssetIndex({})
    orphans_checked = got.cooked_clean
    if changes.cooked or names:
        index = AssetIndex.from_paths(entries)
        if any(len(paths) > 1 for by_name in index.by_kind.values() for paths in by_name.values()):
            return None  # (a duplicate name fails a cook: no complete cook left a mark)
    for c in changes.cooked:
        folder, _, base = c.partition("/")
        k = BY_FOLDER.get(folder)
        paths = index.by_kind.get(k.name, {}).get(base[:-4]) if k and base.endswith(".vda") else None
        if paths and "/" not in base:
            names.update(paths)  # its cooked file changed
        else:
            orphans_checked = False  # something else came or went in the cooked folder
    standing = [s for s in standing if s[0] not in names]
    sources = [Source(BY_FOLDER[rel.partition("/")[0]], name_of(rel), rel) for rel in sorted(names)]
    return JournalPass(sources, index, len(entries) - len(names), standing, orphans_checked)


def _fresh_by_table(cache: StatCache, sources: list, rels: list[str], cooked_dirs: dict, prefix: str):
    """The sources that are fresh by the state file's table (:meth:`StatCache.table`), when it
    holds a row for exactly these *sources* (*rels*: their paths, sorted as the file's): every
    cooked file and source stat()ed in one pass, their signatures packed in rows and compared
    with the table whole, row by row only when it differs.  A source whose row matches has an
    entry of nothing more (no dependency, clean notes) whose every signature matches: what the
    per-source check (fresh_by_stat's common case) finds fresh.  None (check each source) when
    the table does not apply, or when a file is missing (a stale source: its check says why)."""
    got = cache.table("\0".join(rels))
    if got is None:
        return None
    table, whole = got
    try:
        # each row: the cooked file's signature, then the source's
        rows = _signatures(_by_folder(prefix, rels), _signatures(_cooked_by_kind(sources, cooked_dirs)))
    except OSError:
        return None
    n = TABLE_ROW
    if b"".join(rows) == table:
        fresh = set(rels)
    else:
        fresh = {rel for i, (rel, row) in enumerate(zip(rels, rows)) if row == table[n * i : n * i + n]}
    return fresh.difference(whole) if whole else fresh


#: how :func:`_signatures` opens a folder: only to look names up in it (``O_PATH`` where
#: there is one: no read permission needed, as for a path)
_AT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_PATH", 0) | getattr(os, "O_CLOEXEC", 0)
#: whether ``os.stat`` takes ``dir_fd`` here (``fstatat``; POSIX)
_STAT_AT = os.stat in os.supports_dir_fd


def _by_folder(prefix: str, rels: list[str]):
    """(folder, the names of *rels* in it) for each run of *rels* (paths under *prefix*, "/"
    separated) in one folder, in order: the sources of a scan, a few hundred to a folder."""
    for folder, run in groupby(map(methodcaller("rpartition", "/"), rels), key=itemgetter(0)):
        yield prefix + folder + "/" if folder else prefix, list(map(itemgetter(2), run))


def _cooked_by_kind(sources: list, cooked_dirs: dict):
    """(cooked folder, the names of the cooked files in it) for each run of *sources* of one kind
    (a scan's sources come kind by kind), in order."""
    for kind, run in groupby(sources, key=itemgetter(0)):
        # (made in C: "name.vda" for every name of the run)
        yield cooked_dirs[kind.name], (".vda\0".join(map(itemgetter(1), run)) + ".vda").split("\0")


def _signatures(folders, before: list[bytes] | None = None) -> list[bytes]:
    """The signature (:data:`SIG`, packed) of every file named in *folders* ((folder ending in a
    separator, names in it), in order), each after the one of *before* in its place (a row of the
    table: the cooked file's, then the source's).  Each file is looked up from a descriptor of its
    folder: the kernel then walks one path component a file, not every component of its path (at
    50,000 sources, 100,000 stat() calls: about 0.02 s of CPU less of the pass's 0.3 s).  OSError
    as ``os.stat`` of the path would raise it (a file or folder missing, say)."""
    stat, pack = os.stat, SIG.pack
    out: list[bytes] = []
    at = 0
    for folder, names in folders:
        if not _STAT_AT:  # pragma: no cover (every POSIX system has fstatat)
            names, fd = [folder + n for n in names], None
        else:
            fd = os.open(folder, _AT_FLAGS)
        try:
            if before is None:
                out += [
                    pack(s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns) for n in names for s in [stat(n, dir_fd=fd)]
                ]
            else:
                out += [
                    c + pack(s.st_size, s.st_mtime_ns, s.st_ino, s.st_ctime_ns)
                    for c, n in zip(before[at : at + len(names)], names)
                    for s in [stat(n, dir_fd=fd)]
                ]
                at += len(names)
        finally:
            if fd is not None:
                os.close(fd)
    if before is not None and at != len(before):
        raise OSError("a row without both signatures")  # (never: the same sources, each a file)
    return out


def _source_path(rel: str) -> bool:
    """Whether a file at *rel* under the assets folder would be a source (a scan would find it)."""
    k = kind_of(rel)
    return (
        k is not None
        and len(rel.rsplit("/", 1)[-1]) > len(k.suffix)
        and not any(part.startswith(".") for part in rel.split("/"))
    )


def _made_by_a_task(made: frozenset[str], prefix: str, rel: str, deps) -> bool:
    """Whether source *rel* or one of its inputs *deps* is a target of a task in *made*."""
    return prefix + rel in made or any(prefix + d in made for d in deps)


def _pool_workers() -> int:
    """How many worker processes cook this run's stale sources ahead: one per core (``-n N``: N);
    0 (each action cooks its own source) when doit runs the actions in processes of its own
    (``-P process``, forked after the tasks are made) and for an explicit ``-n 1``."""
    how, n = runner_parallelism()
    if how not in ("serial", "threads") or n == 1:
        return 0
    if n:
        return n
    from veduta.cook.ahead import cpu_count

    return cpu_count()


def _not_a_folder(path: str) -> str:
    """Why cooked files cannot be written under *path* (a file where a folder must be), or ""."""
    p = path
    while p and not os.path.isdir(p):
        if os.path.lexists(p):
            # (named by the file in the way: the cooked root as a file is one line, not one a kind)
            return f"{p}: is a file, not a folder (cooked files go under {p}/); move it away"
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return ""


def report_problems(problems: list[str]):
    """The failure of sources that cannot be named or read: each problem (``path: message``, the
    path as the file system has it) a line as a line shows it (:func:`~veduta.base.errors.shown_path`:
    a newline or a byte that is not UTF-8 escaped), and as data one diagnostic of that file each
    (--format json, veduta cook --json), naming the very file."""
    from doit.exceptions import TaskFailed

    from veduta.base.errors import shown_path

    fail = TaskFailed("\n".join(map(shown_path, problems)))
    fail.diagnostics = [
        {"file": file, "line": 1, "col": 1, "path": "$", "severity": "error", "message": message}
        for file, _, message in (p.partition(": ") for p in problems)
    ]
    return fail


def _heed(waiting: Callable[[], None], gc_was_enabled: bool) -> None:
    """``waiting()`` (the run's :attr:`~veduta.cook.run.CookRun.looking`) while :func:`cook_tasks`
    makes the tasks, the collector turned back on when it raises (Cancelled: the run unwinds)."""
    try:
        waiting()
    except BaseException:
        if gc_was_enabled:
            gc.enable()
        raise


def _heeding(
    walk: Callable[..., list[str]], waiting: Callable[[], None], gc_was_enabled: bool
) -> Callable[..., list[str]]:
    """*walk* (a kind's folder listed) after :func:`_heed`."""

    def heeding(*args: Any, **kwargs: Any) -> list[str]:
        _heed(waiting, gc_was_enabled)
        return walk(*args, **kwargs)

    return heeding


def task_creator(run: CookRun):
    """The ``task_cook`` of a dodo file (or of ``veduta cook``'s loader), making *run*'s tasks."""

    @create_after()  # doit run makes the tasks while running (after the reporter starts)
    def task_cook():
        """Cook every asset source into a .vda file (one subtask per source)."""
        from veduta.base.errors import ConfigError

        try:
            run.project.need_assets()
        except ConfigError as exc:  # a configuration mistake: one line, exit 2, as for [tool.veduta]
            print(f"veduta: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        yield from cook_tasks(run)

    # a cook-only `doit -n N` runs serially (CookRunCommand); every file_dep of a cook task starts so
    setattr(task_cook, COOK_CREATOR, run.project.assets + os.sep)
    return task_cook


# -- reporting -------------------------------------------------------------------------------


class CookReporter(ConsoleReporter):
    """Quiet, located output: diagnostics as they come, progress on a terminal, a summary.

    Tasks other than cook's are reported as doit's console reporter does.
    """

    desc = "veduta cook: diagnostics, progress on a terminal, summary"
    #: seconds a cook runs before its progress bar shows (a short cook shows none)
    PROGRESS_AFTER = 0.5
    #: the run this reporter reports (doit makes the reporter itself: doit_config binds it)
    run: CookRun

    def __init__(self, outstream, options):
        super().__init__(outstream, options)
        self.counts = {COOKED: 0, UPTODATE: 0, RESTORED: 0, SHARED: 0, FAILED: 0}
        self.total = 0
        self.done = 0
        self.pruned: list[str] = []
        self.failed: list[str] = []  # the sources that failed in this run
        self.warned = 0  # warnings the sources cooked in this run gave
        self.affected = 0  # sources with a dependency that failed
        self.tty = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        self._last_progress = 0.0
        self._progress_shown = False
        self._started = time.monotonic()
        self._group_ran = False
        # exit 1 when sources failed (the group then fails with doit's UnmetDependency, an error
        # for doit: exit 2); any other error keeps doit's 2 (docs/authoring-tools.md, Exit codes)
        self._group_unmet = False
        self._other_error = False
        self.run.start()  # a new run (the tasks are made after this)
        from veduta.cook.lifeline import install

        install()  # workers forked by `doit -n N` end when this process dies
        _quiet_interrupt()
        from veduta.cook import runlock

        self._lock = runlock.acquire(self.run.project.cache)  # one cook at a time per game

    @staticmethod
    def _is_cook(task) -> bool:
        return task.name.startswith(BASENAME + ":") and not task.name.startswith(BASENAME + ":_")

    def initialize(self, tasks, selected_tasks):
        self.run.selected = list(selected_tasks or [])
        lean_dispatch()  # doit's node of a cook subtask: a fifth of its memory (doit_adapter.LeanNode)
        self.total = sum(1 for name in tasks if name.startswith(BASENAME + ":") and ":_" not in name)

    def get_status(self, task):
        if task.name == BASENAME:
            self._group_ran = True  # the group's fresh subtasks count as up to date

    def _clear_progress(self):
        if self._progress_shown:
            sys.stderr.write("\r\x1b[K")
            self._progress_shown = False

    def _progress(self, label: str):
        if not self.tty:
            return
        # the tasks are made while doit runs (after initialize): the count is the run's
        total = max(self.run.to_run or self.total, self.done, 1)
        now = time.monotonic()
        if now - self._last_progress < 0.1 and self.done < total:
            return  # at most ten redraws a second, but always the last one
        if now - self._started < self.PROGRESS_AFTER:
            return
        self._last_progress = now
        width = 30
        filled = width * self.done // total
        line = f"cook [{'#' * filled}{'.' * (width - filled)}] {self.done}/{total} {label}"
        sys.stderr.write("\r\x1b[K" + line[:118])
        sys.stderr.flush()
        self._progress_shown = True

    def execute_task(self, task):
        if self._is_cook(task):
            self._progress(task.name[len(BASENAME) + 1 :])
        elif not task.name.startswith(BASENAME + ":"):
            super().execute_task(task)

    def skip_uptodate(self, task):
        if self._is_cook(task):
            self.counts[UPTODATE] += 1
            self.done += 1
            self._progress("")
        elif task.name != BASENAME and not task.name.startswith(BASENAME + ":"):
            super().skip_uptodate(task)

    def add_success(self, task):
        if not self._is_cook(task):
            if task.name == f"{BASENAME}:_orphans":
                self.pruned = list((task.values or {}).get("removed", []))
            return super().add_success(task)
        values = task.values or {}
        outcome = values.get("outcome")
        if outcome is None:
            return  # not one of ours (doit's placeholder for a name it could not find)
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        if values.get("put") and self.run.shared is not None:
            self.run.shared.upload(values["put"])  # when writing, in the background
        self.done += 1
        rel = task.name[len(BASENAME) + 1 :]
        messages = values.get("messages") or []
        self.warned += sum(1 for d in values.get("diagnostics") or () if d.get("severity") == "warning")
        if messages:
            self._clear_progress()
            self._diagnostics("\n".join(messages), values.get("diagnostics"))
        entry = values.get("entry")
        entry = entry_from_json(entry) if entry else None
        cache = self.run.cache
        if cache is not None:
            if entry:
                cache.set(rel, entry)
            else:
                cache.discard(rel)
        if entry and outcome != UPTODATE:  # made a cooked file: how, for veduta report
            if self.run.builds is None:
                from veduta.cook.builds import log_of

                self.run.builds = log_of(self.run.project.cache)
            self.run.builds.record(rel, entry[0], outcome, values.get("took"))
        # the result names what was cooked (doit's result_dep compares results): the key, cut short
        saved = {"outcome": outcome, "key": entry[0][:16]} if entry else {"outcome": outcome}
        _record_in_db(self.run.project, task, entry, saved)
        release_executed(task)  # saved and reported: the result and the action's arguments go
        self._progress(rel)

    def add_failure(self, task, fail):
        from doit.exceptions import TaskFailed, UnmetDependency

        if task.name == BASENAME and isinstance(fail, UnmetDependency):
            self._group_unmet = True
            return  # the group fails when a source fails: the summary says so
        if not isinstance(fail, TaskFailed):
            self._other_error = True
        if task.name == BASENAME:
            return
        if task.name == f"{BASENAME}:_sources":
            msg = fail.get_msg() if hasattr(fail, "get_msg") else str(fail)
            self._clear_progress()
            self._diagnostics(msg, getattr(fail, "diagnostics", None))
            self.counts[FAILED] += msg.rstrip("\n").count("\n") + 1
            return
        if not self._is_cook(task):
            return super().add_failure(task, fail)
        self.counts[FAILED] += 1
        self.done += 1
        self.failed.append(task.name[len(BASENAME) + 1 :])
        self._clear_progress()
        msg = fail.get_msg() if hasattr(fail, "get_msg") else str(fail)
        if getattr(fail, "exception", None) is not None and not isinstance(fail.exception, str):
            # an exception escaped a compiler: a bug, show it whole
            self._diagnostics(f"{task.name}: internal error (please report):\n{msg}")
        else:
            self._diagnostics(msg, getattr(fail, "diagnostics", None))
        if self.run.cache is not None:
            self.run.cache.discard(task.name[len(BASENAME) + 1 :])

    def _complete(self) -> bool:
        """Whether this run left every source fresh or cooked: the whole group ran, nothing
        failed or was left undone (the file-system monitor's mark may then be left)."""
        return (
            self._group_ran
            and self.run.selected == [BASENAME]
            and not self._other_error
            and not self._group_unmet
            and self.counts[FAILED] == 0
            and self.done >= self.run.to_run
        )

    def _diagnostics(self, text: str, found: list[dict] | None = None) -> None:
        """Diagnostics (text lines, and the same as data when the cook gave it) in the run's
        format: text as they are; json or github one per line (docs/cooking.md)."""
        fmt = self.run.fmt
        if fmt == "text":
            self.write(text.rstrip("\n") + "\n")
            return
        from veduta.source.diagnostics import format_diagnostic, parse_lines

        self.write("".join(format_diagnostic(d, fmt) + "\n" for d in (found or parse_lines(text))))

    def write(self, text: str) -> None:
        """doit's write, but a reader that went away (``doit cook | head``) stops nothing: the
        cook goes on to its end, writing into the null device."""
        try:
            super().write(text)
        except BrokenPipeError:
            quiet_stdout()
            self.outstream = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process

    def _note(self, text: str) -> None:
        """What is not a diagnostic (the summary, removed files): on stdout as text, on stderr
        when stdout carries json or github lines for a tool."""
        if self.run.fmt == "text":
            self.write(text)
        else:
            sys.stderr.write(text)

    def complete_run(self):
        ahead = sys.modules.get("veduta.cook.ahead")  # imported only by a run that cooks ahead
        if ahead is not None:
            ahead.end()
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):  # stopped by Ctrl-C: the summary is whole
            from veduta.cook.ahead import finishing

            with finishing():
                return self._complete_run()
        return self._complete_run()

    def _complete_run(self) -> None:
        self._clear_progress()
        if self.run.cache is not None:
            try:
                self.run.cache.save()
            except OSError:
                pass
            if self.run.monitor is not None and self._complete():
                from veduta.cook.monitor import write_mark

                write_mark(self.run.project.cache, self.run.monitor, self.run.cache.path, self.run.cooked_clean)
        if self.run.builds is not None:
            try:
                self.run.builds.save(self.run.cache.rels() if self.run.cache is not None else None)
            except OSError:
                pass  # (the report then says it does not know where those files came from)
        for f in self.pruned:
            why = "left by an interrupted cook" if f.endswith(".tmp") else "its source is gone"
            self._note(f"removed {f} ({why})\n")
        if self._group_ran:
            self.counts[UPTODATE] += self.run.fresh_skipped
        shared = self.run.shared
        if shared is not None:
            shared.finish()  # the uploads of this run
            if shared.uploaded:
                self._note(
                    f"shared cache: uploaded {shared.uploaded} objects "
                    f"({shared.tier.bytes_out / 1e6:.1f} MB) to {shared.settings.where}\n"
                )
        if self.failed and self.run.index is not None:
            self._propagate()
        standing = sum(n for _, n in self.run.standing)
        if standing:
            n = len(self.run.standing)
            self._note(
                f"cook: {standing} warning{'s stand' if standing != 1 else ' stands'} in {n} up-to-date "
                f"source{'s' if n != 1 else ''} (veduta check lists them)\n"
            )
        if self._group_ran and not self.total and not any(self.counts.values()):
            from veduta.base.kinds import KINDS

            where = ", ".join(f"{k.folder}/**/*{k.suffix}" for k in KINDS)
            self._note(f"cook: no sources under {self.run.project.assets}/ (a source is one of {where})\n")
        elif self.total or any(self.counts.values()):
            c = self.counts
            # restored from the shared cache, counted apart, when this run asked it
            remote = f"{c[SHARED]} from the shared cache, " if shared is not None or c[SHARED] else ""
            hurt = f", {self.affected} with a failed dependency" if self.affected else ""
            self._note(
                f"cook: {c[COOKED]} cooked, {c[UPTODATE]} up to date, {c[RESTORED]} restored from cache, "
                f"{remote}{c[FAILED]} failed{hurt} ({time.monotonic() - self._started:.2f} s)\n"
            )
        strict_failed = self._strict_failure(standing)
        # doit's own failure report for cook tasks would repeat the diagnostics: drop them
        drop_failures(self, self._is_cook)
        if (self._group_unmet and not self._other_error) or strict_failed:
            exit_as_failure(strict_failed)  # sources failed (or warnings, when strict): 1, not doit's 2
        super().complete_run()
        from veduta.cook import runlock

        runlock.release(self._lock)
        self._lock = None

    def _propagate(self) -> None:
        """The sources that name a source that failed in this run, directly or through another:
        a ``DEPENDENCY_FAILED`` warning each at the reference (veduta.cook.propagate)."""
        from veduta.cook.propagate import affected

        run = self.run
        assets = run.project.assets
        root = run.display_root

        def shown(rel: str) -> str:
            return rel if root == "-" else os.path.join(root or assets, rel)

        found = affected(assets, run.index, self.failed, run.sources, shown)
        if found:
            self._clear_progress()
            self._emit_extra(found)
            self.affected = len({d.file for d in found})
            self.warned += len(found)

    def _emit_extra(self, found: list) -> None:
        """Diagnostics the reporter makes itself (not a task's), printed in the run's format."""
        self._diagnostics("\n".join(str(d) for d in found), [d.to_json() for d in found])

    def _strict_failure(self, standing: int) -> bool:
        """Whether warnings fail this run (``strict``), saying so on the summary's stream."""
        run = self.run
        strict = run.is_strict()
        total = self.warned + standing
        if not strict or not total:
            return False
        why = "strict = true in [tool.veduta]" if run.strict is None else "--strict"
        self._note(
            f"cook: failed: {total} warning{'s' if total != 1 else ''} ({why} makes every warning an "
            "error; the cooked files are written)\n"
        )
        return True


#: What a cook stopped by Ctrl-C says on stderr (``doit cook`` and ``veduta cook``).
INTERRUPTED = "cook: interrupted (cooked files are whole; the next cook goes on)"


def _quiet_interrupt() -> None:
    """Ctrl-C of ``doit cook``: one line, not doit's KeyboardInterrupt traceback.

    doit lets KeyboardInterrupt out of its main; ``veduta cook`` catches it (exit 130).  A
    dodo's ``doit cook`` has no such frame of ours, so the process's excepthook says it in one
    line; the status stays the interrupted one (Python ends an unhandled KeyboardInterrupt
    with SIGINT: 130 in a shell).  Other exceptions go to the hook that was there.
    """
    previous = sys.excepthook
    if getattr(previous, "veduta_quiet", False):
        return

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            sys.stderr.write(f"\n{INTERRUPTED}\n")
            return
        previous(kind, value, tb)

    hook.veduta_quiet = True  # type: ignore[attr-defined]  # a mark on the function: installed once
    sys.excepthook = hook


def _record_in_db(project: Project, task, entry, values: dict) -> None:
    """Keep doit's DB row of a cook task small and right.

    The values (and result) doit saved carry the stat-cache entry, which the
    cache now holds: store just the outcome and the start of the source_hash
    (what ``result_dep("cook")`` compares), so every no-op run decodes small
    rows.  And record the file_dep this cook really had (the deps just found),
    so that the next run does not see a changed file_dep set and run it again.
    """
    deps = [os.path.join(project.assets, p) for p, s in entry[2] if s != ()] if entry else None
    if deps is not None and set(deps) == set(task.file_dep):
        deps = None
    try:
        overwrite_saved(task.name, values, deps)
        write_saved(task.name)  # (nothing more is saved for it in this run: its row leaves memory)
    except OSError:
        pass  # a dep vanished meanwhile: doit will run the task next time


def doit_config(run: CookRun) -> dict:
    """The DOIT_CONFIG of *run*: its file checker and reporter are bound to it."""
    project = run.project
    # nothing is made here (importing a dodo.py creates no folder): the database backend makes
    # the cache folder when a command opens it, and cooks without it when it cannot
    return {
        "default_tasks": [BASENAME],
        "dep_file": os.path.join(project.cache, DB_FILE),
        "backend": "veduta",  # sqlite3 read in one query (veduta/cook/doit_adapter.py)
        "check_file_uptodate": bind_class(StatChecker, run=run),
        "reporter": bind_class(CookReporter, run=run),
        # -n N runs actions in threads: the stale sources cook ahead in a process pool
        # (veduta/cook/ahead.py) and an action only takes its result
        "par_type": "thread",
        "continue": True,  # one broken source never stops the others
        "minversion": DOIT_CHECKED,  # the pin in pyproject.toml
    }


__all__ = ["CookRun", "cook_tasks", "task_creator", "doit_config", "CookReporter", "StatChecker", "COMPILER_VERSION"]
