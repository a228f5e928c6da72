"""The shared cache tier in real cooks: CI fills it, a fresh clone restores from it.

Every cook is a whole ``doit`` process talking S3 over HTTP to moto's server on
127.0.0.1 (tests/s3server.py), configured only through the environment a studio's
CI and developers would set.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from tests.gamerepo import Game, make_game, memory_limit
from tests.s3server import client
from veduta.cook.cook import manifest_key
from veduta.cook.remote import namespace
from veduta.cook.shared import deps_member
from veduta.cook.store import Store

SOURCES = ["models/crate.vmodel", "models/props/barrel.vmodel", "models/tree.vmodel", "models/tree_far.vmodel"]
NS = namespace()  # the folder of this toolchain's objects in a tier
COOKED = ["models/barrel.vda", "models/crate.vda", "models/tree.vda", "models/tree_far.vda"]


def summary(cp) -> dict[str, int]:
    m = re.search(
        r"cook: (\d+) cooked, (\d+) up to date, (\d+) restored from cache, (?:(\d+) from the shared "
        r"cache, )?(\d+) failed",
        cp.stdout,
    )
    assert m, cp.stdout + cp.stderr
    return dict(zip(("cooked", "uptodate", "restored", "shared", "failed"), (int(g or 0) for g in m.groups())))


def clone(game: Game, where) -> Game:
    """A fresh clone: the sources (and dodo.py), no cache/, no cooked files."""
    os.makedirs(where)
    shutil.copy(game.root / "dodo.py", where / "dodo.py")
    for rel in SOURCES:
        (where / "assets" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(game.root / "assets" / rel, where / "assets" / rel)
    return Game(where)


def cooked_bytes(game: Game) -> dict[str, bytes]:
    return {rel: game.cooked(rel).read_bytes() for rel in COOKED}


def objects(s3) -> dict[str, bytes]:
    c = client(s3["env"])
    names = [o["Key"] for o in c.list_objects_v2(Bucket=s3["bucket"]).get("Contents", [])]
    return {n: c.get_object(Bucket=s3["bucket"], Key=n)["Body"].read() for n in names}


def env(s3, write: bool = False, **more) -> dict[str, str]:
    e = dict(s3["env"], VEDUTA_CACHE_URL=f"s3://{s3['bucket']}/game", VEDUTA_CACHE_WRITE="1" if write else "0")
    e.update(more)
    return e


@pytest.fixture
def ci(tmp_path, s3):
    """A game that CI has cooked with writes on: (game, its cooked bytes, the bucket's objects)."""
    game = make_game(tmp_path)
    cp = game.cook(env=env(s3, write=True), check=True)
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "shared": 0, "failed": 0}
    # 4 cooked files and the manifest of tree.vmodel (it reads tree_far.vmodel)
    assert "shared cache: uploaded 5 objects" in cp.stdout, cp.stdout
    return game, cooked_bytes(game), objects(s3)


def test_ci_fills_the_cache_and_a_fresh_clone_restores_without_compiling(tmp_path, s3, ci):
    game, want, objs = ci
    assert len(objs) == 5 and all(n.startswith("game/") for n in objs)
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env=env(s3), check=True)
    assert summary(cp) == {"cooked": 0, "uptodate": 0, "restored": 0, "shared": 4, "failed": 0}, cp.stdout
    assert cooked_bytes(dev) == want
    assert cp.stderr == ""
    # then the usual: a no-op, and after an edit the local store and the compiler as before
    assert summary(dev.cook(env=env(s3), check=True))["uptodate"] == 4
    assert objects(s3) == objs  # a developer's cook never uploads


def test_parallel_cook_restores_too(tmp_path, s3, ci):
    game, want, _ = ci
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook("-n", "2", "cook", env=env(s3), check=True)
    assert summary(cp)["shared"] == 4
    assert cooked_bytes(dev) == want


def test_writes_off_uploads_nothing(tmp_path, s3):
    game = make_game(tmp_path)
    cp = game.cook(env=env(s3, write=False), check=True)
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "shared": 0, "failed": 0}
    assert "uploaded" not in cp.stdout
    assert objects(s3) == {}
    # the pyproject setting alone does not write either
    (game.root / "pyproject.toml").write_text(f'[tool.veduta]\ncache_url = "s3://{s3["bucket"]}/game"\n')
    game.write("models/crate.vmodel", (game.root / "assets/models/crate.vmodel").read_text() + "\n")
    e = dict(s3["env"])
    assert summary(game.cook(env=e, check=True))["cooked"] == 1
    assert objects(s3) == {}


def test_poisoned_objects_are_rejected_recompiled_and_replaced(tmp_path, s3, ci):
    game, want, objs = ci
    c = client(s3["env"])
    name = {rel: n for n, data in objs.items() for rel in COOKED if data == want[rel]}
    # a truncated object, a foreign one (another asset's bytes under crate's key), a flipped byte
    c.put_object(Bucket=s3["bucket"], Key=name["models/barrel.vda"], Body=want["models/barrel.vda"][:-9])
    c.put_object(Bucket=s3["bucket"], Key=name["models/crate.vda"], Body=want["models/tree_far.vda"])
    bad = bytearray(want["models/tree.vda"])
    bad[len(bad) // 2] ^= 0x40
    c.put_object(Bucket=s3["bucket"], Key=name["models/tree.vda"], Body=bytes(bad))

    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env=env(s3), check=True)
    assert summary(cp) == {"cooked": 3, "uptodate": 0, "restored": 0, "shared": 1, "failed": 0}, cp.stdout
    assert cooked_bytes(dev) == want
    warnings = sorted(ln for ln in cp.stdout.splitlines() if "rejected" in ln)
    assert len(warnings) == 3, cp.stdout
    assert warnings[0].startswith("assets/models/crate.vmodel:1:1: $: warning: shared cache object ")
    assert "cooked from another source (model models/tree_far.vmodel)" in warnings[0]
    assert "not a whole cooked file" in warnings[1] and "props/barrel.vmodel" in warnings[1]
    assert "not a whole cooked file" in warnings[2] and "CRC" in warnings[2]
    assert objects(s3)[name["models/crate.vda"]] == want["models/tree_far.vda"]  # reading never writes

    # a writing cook replaces them
    ci2 = clone(game, tmp_path / "ci2")
    cp = ci2.cook(env=env(s3, write=True), check=True)
    # the 3 objects and tree's manifest (tree compiled again)
    assert summary(cp)["cooked"] == 3 and "shared cache: uploaded 4 objects" in cp.stdout, cp.stdout
    assert objects(s3) == objs
    cp = clone(game, tmp_path / "dev2").cook(env=env(s3), check=True)
    assert summary(cp)["shared"] == 4 and "rejected" not in cp.stdout


def test_a_poisoned_manifest_only_costs_a_compile(tmp_path, s3, ci):
    game, want, objs = ci
    src = (game.root / "assets/models/tree.vmodel").read_bytes()
    mkey = manifest_key("models/tree.vmodel", src)
    c = client(s3["env"])
    (member,) = [n for n in objs if n.startswith(f"game/{NS}/{mkey[:2]}/{mkey[2:]}.d/")]
    assert objs[member] == deps_member(["models/tree_far.vmodel"])
    # a garbled whole manifest (as earlier versions wrote), a member whose bytes are not what its
    # name says, and well-formed members naming a file outside the assets and a missing one
    c.put_object(Bucket=s3["bucket"], Key=f"game/{NS}/{mkey[:2]}/{mkey[2:]}", Body=b"\x00garbage\nab cd\n")
    c.put_object(Bucket=s3["bucket"], Key=member, Body=deps_member(["models/crate.vmodel"]))
    for deps in (["../../game/assets/models/tree_far.vmodel"], ["models/nothing.vmodel"]):
        m = deps_member(deps)
        name = f"game/{NS}/{mkey[:2]}/{mkey[2:]}.d/{hashlib.sha256(m).hexdigest()}"
        c.put_object(Bucket=s3["bucket"], Key=name, Body=m)
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env=env(s3), check=True)
    assert summary(cp) == {"cooked": 1, "uptodate": 0, "restored": 0, "shared": 3, "failed": 0}
    assert cooked_bytes(dev) == want


def test_a_cache_written_by_earlier_versions_is_still_read(tmp_path, s3, ci):
    """Earlier versions kept a whole manifest at the manifest key (lines ``<output key> <deps>``)
    instead of the set of deps lists: a cache they filled restores as before."""
    game, want, objs = ci
    src = (game.root / "assets/models/tree.vmodel").read_bytes()
    mkey = manifest_key("models/tree.vmodel", src)
    c = client(s3["env"])
    (member,) = [n for n in objs if n.startswith(f"game/{NS}/{mkey[:2]}/{mkey[2:]}.d/")]
    c.delete_object(Bucket=s3["bucket"], Key=member)
    tree_key = next(n for n, d in objs.items() if d == want["models/tree.vda"]).removeprefix(f"game/{NS}/")
    c.put_object(
        Bucket=s3["bucket"],
        Key=f"game/{NS}/{mkey[:2]}/{mkey[2:]}",
        Body=f"{'0' * 64} models/gone.vmodel\n{tree_key.replace('/', '')} models/tree_far.vmodel\n".encode(),
    )
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env=env(s3), check=True)
    assert summary(cp) == {"cooked": 0, "uptodate": 0, "restored": 0, "shared": 4, "failed": 0}, cp.stdout
    assert cooked_bytes(dev) == want


def _variant(game: Game, where, i: int) -> Game:
    """A clone whose tree_far.vmodel (a dep of tree.vmodel, whose own bytes are the same in every
    variant) is variant *i*: as CI jobs of different branches would have."""
    g = clone(game, where)
    path = g.root / "assets/models/tree_far.vmodel"
    path.write_text(path.read_text().replace('"radius": 0.6', f'"radius": {0.6 + 0.05 * i:g}'))
    return g


def _concurrent_writers(game: Game, tmp_path, e: dict[str, str], n: int = 4) -> list[Game]:
    """*n* writing cooks of *n* variants, started together."""
    writers = [_variant(game, tmp_path / f"ci{i}", i) for i in range(n)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "doit", "cook"],
            cwd=w.root,
            env=dict(os.environ, **e),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in writers
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, out + err
        assert "shared cache: uploaded" in out and "warning" not in out + err, out + err
    return writers


def _every_variant_restores(game: Game, tmp_path, e: dict[str, str], writers: list[Game]) -> None:
    for i, w in enumerate(writers):
        dev = _variant(game, tmp_path / f"dev{i}", i)
        cp = dev.cook(env=e, check=True)
        assert summary(cp) == {"cooked": 0, "uptodate": 0, "restored": 0, "shared": 4, "failed": 0}, cp.stdout
        assert cooked_bytes(dev) == cooked_bytes(w)
    assert len({cooked_bytes(w)["models/tree.vda"] for w in writers}) == len(writers)


def test_concurrent_writers_lose_nothing_s3(tmp_path, s3):
    """Four CI jobs cook four variants of one source's dep at once against one bucket: afterwards
    a fresh clone of each variant restores everything, none compiles.  (Earlier versions kept one
    manifest per source content and each job replaced it with its own list, so three of the
    four tree.vmodel outputs could not be found.)"""
    game = make_game(tmp_path)
    writers = _concurrent_writers(game, tmp_path, env(s3, write=True))
    _every_variant_restores(game, tmp_path, env(s3), writers)
    src = (game.root / "assets/models/tree.vmodel").read_bytes()
    mkey = manifest_key("models/tree.vmodel", src)
    # 2 shared outputs, 4 tree_far and 4 tree outputs, one member (every job read the same deps)
    names = sorted(objects(s3))
    assert len(names) == 11 and [n for n in names if ".d/" in n] == [
        f"game/{NS}/{mkey[:2]}/{mkey[2:]}.d/{hashlib.sha256(deps_member(['models/tree_far.vmodel'])).hexdigest()}"
    ]


def test_concurrent_writers_lose_nothing_folder(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    game = make_game(tmp_path)
    writers = _concurrent_writers(game, tmp_path, {"VEDUTA_CACHE_URL": str(share), "VEDUTA_CACHE_WRITE": "1"})
    _every_variant_restores(game, tmp_path, {"VEDUTA_CACHE_URL": str(share), "VEDUTA_CACHE_WRITE": "0"}, writers)
    assert not [p for p in share.rglob("*") if p.name.endswith(".tmp")]


def test_a_stopped_server_degrades_to_compiling(tmp_path, s3, ci):
    game, want, _ = ci
    with __import__("socket").socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once closed
    dev = clone(game, tmp_path / "dev")
    t0 = time.monotonic()
    cp = dev.cook(env=env(s3, write=True, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}"))
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "shared": 0, "failed": 0}
    assert cooked_bytes(dev) == want
    warnings = [ln for ln in cp.stderr.splitlines() if "shared cache" in ln]
    assert len(warnings) == 1 and "unreachable" in warnings[0] and "going on without it" in warnings[0]
    assert time.monotonic() - t0 < 60


def test_no_op_cook_imports_no_storage_client(tmp_path, s3):
    game = make_game(tmp_path)
    code = (
        "import sys; from veduta.faces.cli.main import main; rc = main(['cook']); "
        "print('BOTO', 'boto3' in sys.modules, 'botocore' in sys.modules); sys.exit(rc)"
    )

    def run():
        e = dict(os.environ, **env(s3))
        cp = subprocess.run(
            [sys.executable, "-c", code], cwd=game.root, env=e, capture_output=True, text=True, timeout=300
        )
        assert cp.returncode == 0, cp.stdout + cp.stderr
        return cp.stdout

    assert "BOTO True True" in run()  # stale sources: the tier is asked
    assert "BOTO False False" in run()  # nothing stale: not even imported


def test_push_seeds_the_tier_and_info_reports_it(tmp_path, s3):
    game = make_game(tmp_path)
    game.cook(check=True)  # no shared cache at all
    want = cooked_bytes(game)
    e = dict(os.environ, **env(s3))

    def veduta(*args):
        return subprocess.run(
            [sys.executable, "-m", "veduta", *args], cwd=game.root, env=e, capture_output=True, text=True, timeout=300
        )

    cp = veduta("cache", "info")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert f"shared cache: s3://{s3['bucket']}/game (from VEDUTA_CACHE_URL)" in cp.stdout
    assert "writes: off" in cp.stdout and "  reachable: bucket" in cp.stdout
    cp = veduta("cache", "push")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout.startswith("pushed 5 entries"), cp.stdout
    assert "pushed 0 entries" in veduta("cache", "push").stdout  # only what the tier lacks
    dev = clone(game, tmp_path / "dev")
    assert summary(dev.cook(env=env(s3), check=True))["shared"] == 4
    assert cooked_bytes(dev) == want

    e["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"  # nothing there
    cp = veduta("cache", "info")
    assert cp.returncode == 1 and "NOT reachable: unreachable" in cp.stdout
    cp = veduta("cache", "push")
    assert cp.returncode != 0 and "unreachable" in cp.stderr and "Traceback" not in cp.stderr

    del e["VEDUTA_CACHE_URL"]  # nothing to push to: a configuration mistake (exit 2), one line
    cp = veduta("cache", "push")
    assert cp.returncode == 2 and cp.stderr.startswith("veduta: no shared cache set: [tool.veduta] cache_url"), (
        cp.stdout + cp.stderr
    )


def test_folder_tier_end_to_end(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    game = make_game(tmp_path)
    e = {"VEDUTA_CACHE_URL": share.as_uri(), "VEDUTA_CACHE_WRITE": "1"}
    assert "uploaded 5 objects" in game.cook(env=e, check=True).stdout
    want = cooked_bytes(game)
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env={"VEDUTA_CACHE_URL": str(share), "VEDUTA_CACHE_WRITE": "0"}, check=True)
    assert summary(cp)["shared"] == 4 and cooked_bytes(dev) == want
    assert not [p for p in share.rglob("*") if p.name.endswith(".tmp")]


NEXT_RELEASE = """\
import veduta

veduta.TOOLCHAIN_SALT = "veduta-cook-rules/next"
veduta.TOOLCHAIN = f"{veduta.COMPILER_VERSION}+{veduta.TOOLCHAIN_SALT}"
"""


def test_another_toolchain_salt_never_restores_or_overwrites_this_ones_objects(tmp_path):
    """The next release of veduta, as veduta/__init__.py prescribes one (the toolchain salt bumped,
    the spec's compiler version, so META, unchanged), shares no object with this one: its clones
    compile instead of restoring what an earlier release wrote (whose bytes its own compiler may
    no longer write), and its writes land apart, so this release's clones still restore theirs."""
    share = tmp_path / "share"
    share.mkdir()
    game = make_game(tmp_path)
    e = {"VEDUTA_CACHE_URL": str(share), "VEDUTA_CACHE_WRITE": "1"}
    assert "uploaded 5 objects" in game.cook(env=e, check=True).stdout
    want = cooked_bytes(game)
    (tmp_path / "next").mkdir()
    (tmp_path / "next/sitecustomize.py").write_text(NEXT_RELEASE)
    pythonpath = os.pathsep.join([str(tmp_path / "next")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    nxt = clone(game, tmp_path / "next-clone")
    cp = nxt.cook(env=dict(e, PYTHONPATH=pythonpath), check=True)
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "shared": 0, "failed": 0}, cp.stdout
    assert "uploaded 5 objects" in cp.stdout, cp.stdout
    assert sorted(p.name for p in share.iterdir()) == sorted([NS, "veduta-cook-rules-next"])
    again = clone(game, tmp_path / "next-again")  # the next release restores what it wrote itself
    cp = again.cook(env={"VEDUTA_CACHE_URL": str(share), "PYTHONPATH": pythonpath}, check=True)
    assert summary(cp)["shared"] == 4
    dev = clone(game, tmp_path / "dev")  # and this release still restores its own objects
    cp = dev.cook(env={"VEDUTA_CACHE_URL": str(share)}, check=True)
    assert summary(cp)["shared"] == 4 and cooked_bytes(dev) == want


def test_the_local_store_never_restores_what_another_toolchain_salt_stored(tmp_path):
    """A source reverted to a content that an earlier release cooked (switching a branch back
    after an upgrade) compiles under the next release: that release's rules may write other
    bytes, and the entry the earlier release stored is kept apart (only a prune removes it)."""
    game = make_game(tmp_path)
    game.cook(check=True)  # this release stores crate's output of its first content
    (tmp_path / "next").mkdir()
    (tmp_path / "next/sitecustomize.py").write_text(NEXT_RELEASE)
    e = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "next")] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    crate = game.root / "assets/models/crate.vmodel"
    first = crate.read_bytes()
    crate.write_bytes(first + b"\n")
    cp = game.cook(env=e, check=True)  # the next release: everything owed a cook
    assert summary(cp) == {"cooked": 4, "uptodate": 0, "restored": 0, "shared": 0, "failed": 0}, cp.stdout
    crate.write_bytes(first)
    cp = game.cook(env=e, check=True)
    assert summary(cp) == {"cooked": 1, "uptodate": 3, "restored": 0, "shared": 0, "failed": 0}, cp.stdout
    assert sorted(p.name for p in (game.root / "cache/store").iterdir()) == sorted([NS, "veduta-cook-rules-next"])


def test_a_store_entry_of_another_compiler_is_not_restored(game):
    """A cooked file edited in place (so its store entry, a hard link, too) to name another
    compiler is recompiled once, not restored from the store on every cook."""
    from veduta.container.chunks import read_chunks, write_chunks
    from veduta.container.meta import Meta

    game.cook(check=True)
    path = game.cooked("models/crate.vda")
    chunks = read_chunks(path.read_bytes())
    meta = Meta.decode(chunks[0].payload)
    other = Meta("veduta-asset/0.0.1", meta.deps, meta.kind, meta.name, meta.source, meta.source_hash)
    data = write_chunks([("META", other.encode())] + [(c.type, c.payload) for c in chunks[1:]])
    with open(path, "r+b") as f:  # in place, against the rules: the store's link sees it too
        f.write(data)
        f.truncate()
    key = meta.source_hash
    assert Store(str(game.root / "cache" / "store")).get(key) == data
    cp = game.cook(check=True)
    assert "cook: 1 cooked, 3 up to date, 0 restored from cache" in cp.stdout, cp.stdout
    cp = game.cook(check=True)
    assert "cook: 0 cooked, 4 up to date" in cp.stdout, cp.stdout


def test_the_bench_restores_from_both_tiers(tmp_path):
    from bench.shared import bench_shared

    r = bench_shared(12, 2, 1, str(tmp_path))
    assert r["compile"] > 0 and set(r["tiers"]) == {"folder", "s3 (moto server, 127.0.0.1)"}
    for t in r["tiers"].values():
        assert "12 from the shared cache" in t["said"] and t["restore"] > 0 and t["fill"] > 0
    assert not list(tmp_path.iterdir())  # cleaned up


def _fill_share(game: Game, share) -> list:
    """A folder shared cache *share* that CI filled from *game*: its objects (cooked files), largest first."""
    share.mkdir()
    game.cook(env={"VEDUTA_CACHE_URL": str(share), "VEDUTA_CACHE_WRITE": "1"}, check=True)
    objs = [p for p in (share / NS).glob("??/*") if p.is_file()]
    return sorted(objs, key=lambda p: (-p.stat().st_size, p.name))


def test_a_fifo_in_a_folder_shared_cache_blocks_no_cook(tmp_path):
    game = make_game(tmp_path)
    share = tmp_path / "share"
    poisoned = _fill_share(game, share)[0]
    poisoned.unlink()
    os.mkfifo(poisoned)  # a reader that opened it as a file would wait for a writer for ever
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env={"VEDUTA_CACHE_URL": str(share)})  # a hang is the subprocess time-out
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert summary(cp) == {"cooked": 1, "uptodate": 0, "restored": 0, "shared": 3, "failed": 0}
    assert (
        f"veduta: warning: shared cache {share}: object {NS}/{poisoned.parent.name}/{poisoned.name} skipped: "
        "it is a FIFO (a named pipe), not a regular file" in cp.stderr
    )


def test_a_huge_shared_cache_object_is_refused_unread_under_a_memory_limit(tmp_path):
    """A 1.5 GB object (sparse: no disk used) in the share, and the cook under a 1 GB address-space
    limit: it is skipped by its size, never read (it pushed a cook to 1.56 GB, or ended it in
    ``MemoryError:``), and the cook goes on with the rest of the shared cache."""
    game = make_game(tmp_path)
    share = tmp_path / "share"
    big = _fill_share(game, share)[0]
    with open(big, "r+b") as f:
        f.truncate(1_500_000_000)
    dev = clone(game, tmp_path / "dev")
    e = dict(os.environ, VEDUTA_CACHE_URL=str(share))
    cp = subprocess.run(
        [sys.executable, "-m", "doit", "cook"],
        cwd=dev.root,
        env=e,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=memory_limit(1 << 30),
    )
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert summary(cp) == {"cooked": 1, "uptodate": 0, "restored": 0, "shared": 3, "failed": 0}
    assert (
        f"object {NS}/{big.parent.name}/{big.name} skipped: too large (1,500,000,000 bytes; a cooked file is at "
        "most 536,870,912)" in cp.stderr
    )
    assert "MemoryError" not in cp.stderr


def _undecodable(data: bytes) -> bytes:
    """*data* (a cooked file) with its META byte for byte and 0xFF bytes for its body's payload,
    framed anew (right lengths and CRCs): what a buggy or hostile writer with the write key uploads."""
    from veduta.container.chunks import read_chunks, write_chunks

    return write_chunks(
        [(c.type, c.payload if c.type == "META" else b"\xff" * len(c.payload)) for c in read_chunks(data)]
    )


def test_an_object_whose_body_does_not_decode_is_rejected_by_both_tiers(tmp_path):
    """Framing and META are not enough: a restored body must decode (with the reader `veduta
    verify` uses), from the shared cache and from the local store alike, else the cook, `check
    --strict` and `list` called good a file the engine cannot load."""
    from veduta.container.chunks import read_chunks
    from veduta.container.meta import Meta
    from veduta.formats.asset import read_asset_file

    game = make_game(tmp_path)
    share = tmp_path / "share"
    _fill_share(game, share)
    want = cooked_bytes(game)
    obj = next(p for p in (share / NS).glob("??/*") if p.is_file() and p.read_bytes() == want["models/crate.vda"])
    obj.write_bytes(_undecodable(want["models/crate.vda"]))
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env={"VEDUTA_CACHE_URL": str(share)}, check=True)
    assert summary(cp) == {"cooked": 1, "uptodate": 0, "restored": 0, "shared": 3, "failed": 0}, cp.stdout
    (warning,) = [ln for ln in cp.stdout.splitlines() if "rejected" in ln]
    assert warning.startswith("assets/models/crate.vmodel:1:1: $: warning: shared cache object ")
    assert "its MESH chunk does not decode: " in warning, warning
    assert cooked_bytes(dev) == want
    read_asset_file(str(dev.cooked("models/crate.vda")))  # (verify's reader)

    # the local store: an entry replaced (a new file, not through its link) by such bytes
    crate = dev.cooked("models/crate.vda")
    key = Meta.decode(read_chunks(want["models/crate.vda"])[0].payload).source_hash
    entry = dev.root / "cache" / "store" / NS / key[:2] / key[2:]
    assert entry.read_bytes() == want["models/crate.vda"]
    entry.unlink()
    entry.write_bytes(_undecodable(want["models/crate.vda"]))
    crate.unlink()
    cp = dev.cook(check=True)
    assert "cook: 1 cooked, 3 up to date, 0 restored from cache" in cp.stdout, cp.stdout
    assert cooked_bytes(dev) == want


def _relaid(data: bytes, form: str) -> bytes:
    """*data* (a cooked file) with the same META and body, framed anew (right lengths and CRCs) in
    a layout no cook writes: ``body-first`` (the body, then META: the same length) or ``junk`` (META,
    the body, then a chunk no reader knows and skips): what a buggy or hostile writer uploads."""
    from veduta.container.chunks import read_chunks, write_chunks

    meta, body = read_chunks(data)
    if form == "body-first":
        return write_chunks([(body.type, body.payload), ("META", meta.payload)])
    return write_chunks([("META", meta.payload), (body.type, body.payload), ("JUNK", b"x" * 100_000)])


@pytest.mark.parametrize("form", ["body-first", "junk"])
def test_an_object_in_another_layout_is_rejected_by_the_shared_cache(tmp_path, s3, ci, form):
    """Chunks in another order, or an extra chunk, pass every CRC and the META check: the object
    is still not what a cook writes, so it is rejected with a warning and compiled, and the cooked
    file is the one a cook from scratch gives (it was restored and kept for good)."""
    game, want, objs = ci
    name = next(n for n, data in objs.items() if data == want["models/crate.vda"])
    bad = _relaid(want["models/crate.vda"], form)
    client(s3["env"]).put_object(Bucket=s3["bucket"], Key=name, Body=bad)
    dev = clone(game, tmp_path / "dev")
    cp = dev.cook(env=env(s3), check=True)
    assert summary(cp) == {"cooked": 1, "uptodate": 0, "restored": 0, "shared": 3, "failed": 0}, cp.stdout
    (warning,) = [ln for ln in cp.stdout.splitlines() if "rejected" in ln]
    chunks = "MESH, META" if form == "body-first" else "META, MESH, JUNK"
    assert warning.startswith("assets/models/crate.vmodel:1:1: $: warning: shared cache object "), warning
    assert f"rejected: its chunks are {chunks}, where a cook writes META then MESH only" in warning, warning
    assert cooked_bytes(dev) == want
    # the bad object is not used again: the next cook is a no-op, and the local store holds the good bytes
    cp = dev.cook(env=env(s3), check=True)
    assert summary(cp) == {"cooked": 0, "uptodate": 4, "restored": 0, "shared": 0, "failed": 0}, cp.stdout
    key = name.rsplit("/", 2)[-2] + name.rsplit("/", 1)[-1]
    assert Store(str(dev.root / "cache" / "store")).get(key) == want["models/crate.vda"]
    # nor pushed on: a push from this clone finds the tier's object present (it is not replaced) and
    # a local entry of that layout is never uploaded (see the local-store test)
    assert objects(s3)[name] == bad


@pytest.mark.parametrize("form", ["body-first", "junk"])
def test_an_entry_in_another_layout_is_rejected_by_the_local_store(tmp_path, form):
    """The local store's entries pass the same check: an entry of another layout (a new file put
    there, not through its link) is warned about, compiled, replaced, and never uploaded."""
    from veduta.container.chunks import read_chunks
    from veduta.container.meta import Meta

    game = make_game(tmp_path)
    game.cook(check=True)
    want = cooked_bytes(game)
    key = Meta.decode(read_chunks(want["models/crate.vda"])[0].payload).source_hash
    entry = game.root / "cache" / "store" / NS / key[:2] / key[2:]
    entry.unlink()
    entry.write_bytes(_relaid(want["models/crate.vda"], form))
    share = tmp_path / "share"
    share.mkdir()
    push = subprocess.run(
        [sys.executable, "-m", "veduta", "cache", "push", "--json"],
        cwd=game.root,
        env=dict(os.environ, VEDUTA_CACHE_URL=str(share)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert push.returncode == 0, push.stdout + push.stderr
    assert key in push.stdout and not (share / NS / key[:2] / key[2:]).exists()  # skipped
    game.cooked("models/crate.vda").unlink()
    # (strict: the rejection is the cache's state, a note, not a warning of the source's: a strict
    # cook's exit status does not depend on what the store held)
    (game.root / "pyproject.toml").write_text("[tool.veduta]\nstrict = true\n")
    cp = game.cook(check=True)
    (game.root / "pyproject.toml").unlink()
    assert "cook: 1 cooked, 3 up to date, 0 restored from cache" in cp.stdout, cp.stdout
    chunks = "MESH, META" if form == "body-first" else "META, MESH, JUNK"
    assert (
        f"assets/models/crate.vmodel:1:1: $: local store entry {key[:12]} rejected: its chunks are "
        f"{chunks}, where a cook writes META then MESH only; this cook replaces it" in cp.stdout
    ), cp.stdout
    assert cooked_bytes(game) == want
    assert entry.read_bytes() == want["models/crate.vda"]  # replaced: not used again
    game.cooked("models/crate.vda").unlink()
    cp = game.cook(check=True)
    assert "cook: 0 cooked, 3 up to date, 1 restored from cache" in cp.stdout and "rejected" not in cp.stdout


def test_a_cooked_file_with_a_chunk_appended_is_stale(game):
    """The cook's own up-to-date check asks the same layout of a cooked file: a chunk appended to
    one (its store entry, a new file, keeps the good bytes) makes it stale, restored, and `veduta
    why` says how it is damaged."""
    from veduta.container.chunks import put_chunk

    game.cook(check=True)
    want = cooked_bytes(game)
    path = game.cooked("models/crate.vda")
    path.unlink()  # (a new file: appending in place would change the store's entry too, its link)
    path.write_bytes(want["models/crate.vda"] + put_chunk("JUNK", b"x" * 100))
    why = subprocess.run(
        [sys.executable, "-m", "veduta", "why"], cwd=game.root, capture_output=True, text=True, timeout=300
    )
    assert (
        "assets/models/crate.vmodel: the cooked file assets/.cooked/models/crate.vda is damaged: its chunks are "
        "META, MESH, JUNK, where a cook writes META then MESH only [COOKED_DAMAGED]" in why.stdout
    ), why.stdout + why.stderr
    cp = game.cook(check=True)
    assert "cook: 0 cooked, 3 up to date, 1 restored from cache" in cp.stdout, cp.stdout
    assert cooked_bytes(game) == want
    # a compiled file appended to in place (its store entry, a link, with it): compiled again
    src = game.root / "assets/models/crate.vmodel"
    src.write_text(src.read_text() + "\n")
    assert "cook: 1 cooked, 3 up to date" in game.cook(check=True).stdout
    want = cooked_bytes(game)
    with open(path, "ab") as f:
        f.write(put_chunk("JUNK", b"y" * 100))
    cp = game.cook(check=True)
    assert "cook: 1 cooked, 3 up to date, 0 restored from cache" in cp.stdout, cp.stdout
    assert "local store entry" in cp.stdout and "rejected: its chunks are META, MESH, JUNK" in cp.stdout
    assert cooked_bytes(game) == want
