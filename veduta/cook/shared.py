"""The shared cache tier in a cook: fetch before compiling, upload after, push, info.

One :class:`SharedCache` per cook run (made only when a URL is set and a source is
stale, so a no-op cook imports nothing of the storage client):

- :meth:`SharedCache.fetch`: for the stale sources, in parallel, ask the tier for the
  output of each source's current content (the same keys as the local store:
  source_hash of the source alone, else the deps lists earlier cooks of its content read,
  a set in the tier, and the output their files now hash to), verify every object (:func:`check_output`: container,
  CRCs, META naming this source, compiler and the source_hash this cook computed), and
  put what passes in place as the cooked file, hard-linked into the local store.  The
  task then finds it current and counts it as restored from the shared cache.  A rejected object becomes a warning
  on its source, which then compiles (and, when writing, replaces the object).
- :meth:`SharedCache.upload`: when writing, the store keys of what this run cooked or
  restored from the local store, uploaded in background threads while the cook goes
  on; :meth:`SharedCache.finish` waits for them at the end of the run.  A manifest of the
  local store goes up as members of a set (one per deps list), never as a whole file that
  another writer's upload could replace (docs/shared-cache.md, "Many writers").
"""

from __future__ import annotations

import os
import posixpath
import threading
from concurrent.futures import ThreadPoolExecutor

from veduta import COMPILER_VERSION
from veduta.base.errors import VdaError
from veduta.base.fsutil import atomic_write, read_regular
from veduta.base.kinds import BY_NAME
from veduta.container.chunks import MAGIC, read_chunks
from veduta.container.meta import Meta, source_hash
from veduta.cook import remote
from veduta.cook.cook import (
    _dump_manifest,
    _load_manifest,
    _no_read,
    body_fault,
    check_output,
    find_in_store,
    hash_inputs,
    layout_fault,
    manifest_key,
    stale_dep,
)
from veduta.cook.store import Store

STORE_DIR = "store"
#: the first line of a deps list kept in the shared tier (see :func:`deps_member`)
MEMBER_HEAD = "veduta-deps/1\n"


def valid_entry(key: str, data: bytes) -> bool:
    """Is *data* fit to be store entry *key*: a whole cooked file of the current compiler whose
    META source_hash is *key*, laid out as a cook writes it and whose body decodes, or a manifest
    (lines ``<key> <deps>``)?  Checked before an upload, so a damaged local entry never reaches the team."""
    if data[:4] == MAGIC:
        try:
            chunks = read_chunks(data)
            if not chunks or chunks[0].type != "META":
                return False
            m = Meta.decode(chunks[0].payload)
        except VdaError:
            return False
        return (
            m.source_hash == key
            and m.compiler == COMPILER_VERSION
            and layout_fault(chunks, m.kind) is None  # (META then its kind's body, nothing else)
            and body_fault(chunks[1]) is None
        )
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return False
    return bool(lines) and all(len(ln) > 65 and ln[64] == " " and remote._KEY.fullmatch(ln[:64]) for ln in lines)


def deps_member(deps) -> bytes:
    """A deps list as a member of the shared set of a source content (its manifest key)."""
    return (MEMBER_HEAD + "".join(f"{d}\n" for d in deps)).encode("utf-8")


def member_deps(data: bytes) -> list[str]:
    """The deps list of a member (empty for anything else)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    return text[len(MEMBER_HEAD) :].splitlines() if text.startswith(MEMBER_HEAD) and text.endswith("\n") else []


def manifest_members(data: bytes) -> list[bytes]:
    """The members a local manifest adds to the shared set: one per distinct deps list, oldest first."""
    out: list[bytes] = []
    for deps, _ in _load_manifest(data):
        m = deps_member(deps)
        if deps and m not in out:
            out.append(m)
    return out


def _inside(dep: str) -> bool:
    """Is *dep* a plain path inside the assets folder?  A deps list from the tier is not trusted:
    a dep elsewhere (``../``, ``/home/...``) would have a private file hashed into the key asked for."""
    return (
        bool(dep)
        and not dep.startswith("/")
        and "\\" not in dep
        and posixpath.normpath(dep) == dep
        and not dep.startswith("../")
        and dep != ".."
    )


class SharedCache:
    """The shared tier for one cook run (see the module doc)."""

    def __init__(self, settings: remote.Settings, cache_dir: str, warn=None):
        self.settings = settings
        self.tier = remote.open_tier(settings, warn)
        self.local = Store(os.path.join(cache_dir, STORE_DIR))
        self.uploaded = 0  # objects this run uploaded (the cook's closing note)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._queued: set[str] = set()
        self._futures: list = []

    @property
    def writing(self) -> bool:
        return self.settings.write

    # -- before compiling ----------------------------------------------------------------------
    def fetch(self, items, assets: str, index) -> dict[str, tuple[list[str], list[str]]]:
        """For *items* ``(kind name, source rel, cooked path)`` (stale sources), fetch what the
        tier has and put each verified object in place as the cooked file, hard-linked into the
        local store (as a compiled output is: one new file, no copy); returns
        ``{rel: ([store keys fetched], [warnings])}`` for the sources
        it fetched something for or has a warning about."""
        out: dict[str, tuple[list[str], list[str]]] = {}

        def one(item):
            kind, rel, cooked = item
            try:
                return rel, self._fetch_one(kind, rel, cooked, assets, index)
            except OSError:
                return rel, None  # a source that cannot be read: the cook says so

        for rel, got in remote.parallel(one, items):
            if got is not None and (got[0] or got[1]):
                out[rel] = got
        return out

    def _fetch_one(self, kind: str, rel: str, cooked: str, assets: str, index):
        if self.tier.down:
            return None
        got = read_regular(os.path.join(assets, rel), BY_NAME[kind].max_bytes)  # never a FIFO's endless read
        if got is None:
            return None  # the cook says why
        src = got[0]
        hit, local_manifest = find_in_store(self.local, kind, rel, src, assets, index)
        if hit is not None:
            return None  # the local store has it: restored from there, no download
        notes: list[str] = []
        key0 = source_hash(COMPILER_VERSION, rel, src, [], _no_read)
        data = self.tier.get(key0)
        if data is not None:
            return self._take(kind, rel, cooked, key0, [], data, notes, None, None)
        # the deps lists earlier cooks of this content read (the members of its set, newest
        # first, then a whole manifest of earlier versions): each names the files to hash,
        # and their hash is the key of the output to ask for
        mkey = manifest_key(rel, src)
        whole, members = self.tier.get_set(mkey)
        candidates: list[list[str]] = []
        for deps in [member_deps(m) for m in members] + [d for d, _ in reversed(_load_manifest(whole))]:
            if deps and deps not in candidates and all(map(_inside, deps)):
                candidates.append(deps)
        for deps in candidates:
            h, files = hash_inputs(rel, src, deps, assets)
            if any(stale_dep(d, s, index) for d, s in files[1:]):
                continue
            data = self.tier.get(h)
            if data is None:
                continue
            keys, notes = self._take(kind, rel, cooked, h, deps, data, notes, mkey, local_manifest)
            if keys:
                return keys, notes
        return [], notes

    def _take(self, kind, rel, cooked, key, deps, data, notes, mkey, local_manifest):
        why = check_output(data, kind, rel, key, deps)
        if why is not None:
            fix = "; this cook replaces it" if self.writing else ""
            notes.append(f"shared cache object {key[:12]} rejected: {why}{fix}")
            return [], notes
        try:
            atomic_write(cooked, data)
        except OSError:
            return [], notes  # the cook compiles it and says what the file system said
        self.local.put(key, data, cooked)
        if mkey is not None and (deps, key) not in local_manifest:
            self.local.put(mkey, _dump_manifest(local_manifest + [(deps, key)]))
        return [key], notes

    # -- after compiling -----------------------------------------------------------------------
    def upload(self, keys) -> None:
        """Queue the local store entries *keys* for upload (when writing); returns at once."""
        if not self.writing or self.tier.down:
            return
        new = [k for k in keys if k not in self._queued]
        if not new:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=remote.WORKERS, thread_name_prefix="veduta-upload")
        for k in new:
            self._queued.add(k)
            self._futures.append(self._pool.submit(self._upload_one, k))

    def _upload_one(self, key: str) -> None:
        data = self.local.get(key)
        if data is None or not valid_entry(key, data):
            return
        if data[:4] == MAGIC:
            n = int(self.tier.put(key, data))
        else:  # a manifest: its deps lists, each a member of the set of this source content
            n = sum(self.tier.add(key, m) for m in manifest_members(data))
        with self._lock:
            self.uploaded += n

    def finish(self) -> None:
        """Wait for the uploads of this run."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


# -- the tools ---------------------------------------------------------------------------------


def cache_info(project, probe: bool = True) -> dict:
    """The local store (entries, bytes) and the shared tier (settings, reachability)."""
    store = Store(os.path.join(project.cache, STORE_DIR))
    n = size = 0
    for _, s, _ in store.entries(every=True):  # (what it holds on disk, every toolchain's)
        n += 1
        size += s
    out: dict = {"local": {"path": store.root, "entries": n, "bytes": size}, "shared": None}
    s = remote.settings(project)
    if s is None:
        return out
    shared = {
        "url": s.url,
        "url_from": s.url_from,
        "kind": s.scheme,
        "read": True,
        "write": s.write,
        "write_from": s.write_from,
        "timeout_s": s.timeout,
    }
    if s.scheme == "s3":
        shared.update(bucket=s.bucket, prefix=s.prefix)
    else:
        shared.update(path=s.path)
    if probe:
        shared.update(remote.open_tier(s, warn=lambda m: None).probe())
    out["shared"] = shared
    return out


def cache_push(project) -> dict:
    """Upload every valid entry of the local store that the shared tier lacks.

    Pushing is an explicit act (seeding a new tier from a machine that has cooked), so it
    does not need ``cache_write``; the storage's credentials decide who may write.
    """
    from veduta.base.errors import ConfigError, VedutaError

    s = remote.settings(project)
    if s is None:  # a configuration mistake (exit 2), as the README's exit codes have it
        raise ConfigError(
            f"no shared cache set: [tool.veduta] cache_url in {project.root}/pyproject.toml or {remote.ENV_URL}"
        )
    failures: list[str] = []
    tier = remote.open_tier(s, warn=failures.append)
    store = Store(os.path.join(project.cache, STORE_DIR))
    have = tier.names()
    if tier.down:
        raise VedutaError(f"shared cache {s.where}: {tier.down}")
    local = []
    for path, _, _ in store.entries():
        key = os.path.basename(os.path.dirname(path)) + os.path.basename(path)
        if remote._KEY.fullmatch(key):
            local.append(key)
    skipped = []

    def one(key) -> tuple[bool, int]:
        """(was the entry there already, bytes uploaded)"""
        if tier.object_name(key) in have:
            return True, 0
        data = store.get(key)
        if data is None or not valid_entry(key, data):
            skipped.append(key)
            return False, 0
        if data[:4] == MAGIC:
            return False, len(data) if tier.put(key, data) else 0
        todo = [m for m in manifest_members(data) if tier.member_name(key, m) not in have]
        return not todo, sum(len(m) for m in todo if tier.add(key, m))

    done = remote.parallel(one, local)
    if tier.down:
        raise VedutaError(f"shared cache {s.where}: {tier.down} (uploaded {tier.puts} objects)")
    return {
        "url": s.url,
        "local": len(local),
        "present": sum(p for p, _ in done),
        "uploaded": sum(1 for _, n in done if n),
        "objects": tier.puts,
        "bytes": sum(n for _, n in done),
        "skipped": sorted(skipped),
    }


__all__ = ["SharedCache", "valid_entry", "deps_member", "member_deps", "manifest_members", "cache_info", "cache_push"]
