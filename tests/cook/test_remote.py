"""The shared cache tier's get/put interface against a real S3-protocol server and a folder."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
import time

import pytest

from veduta.base.errors import ConfigError
from veduta.base.fsutil import MAX_COOKED_BYTES
from veduta.base.project import Project
from veduta.cook import remote

K1, K2 = "ab" * 32, "0f" * 32
#: the folder of this toolchain's objects in a tier (veduta.TOOLCHAIN_SALT)
NS = remote.namespace()


def _project(tmp_path, url="", write=False) -> Project:
    return Project(str(tmp_path), str(tmp_path / "assets"), "", str(tmp_path / "cache"), url, write)


def _tier(tmp_path, url, warnings=None, **env):
    s = remote.settings(_project(tmp_path, url), environ=env)
    return remote.open_tier(s, warn=(warnings.append if warnings is not None else None))


# -- settings ------------------------------------------------------------------------------------


def test_environment_wins_over_pyproject_and_writes_are_off_by_default(tmp_path):
    p = _project(tmp_path, "s3://team-cache/game", write=False)
    s = remote.settings(p, environ={})
    assert (s.scheme, s.bucket, s.prefix, s.write, s.write_from) == ("s3", "team-cache", "game/", False, "default")
    s = remote.settings(p, environ={"VEDUTA_CACHE_URL": "file:///mnt/share/cache", "VEDUTA_CACHE_WRITE": "1"})
    assert (s.scheme, s.path, s.url_from, s.write, s.write_from) == (
        "file",
        "/mnt/share/cache",
        "VEDUTA_CACHE_URL",
        True,
        "VEDUTA_CACHE_WRITE",
    )
    assert (
        remote.settings(_project(tmp_path, "s3://b-b-b", write=True), environ={"VEDUTA_CACHE_WRITE": "0"}).write
        is False
    )
    assert remote.settings(p, environ={"VEDUTA_CACHE_URL": ""}) is None  # an empty URL turns it off
    assert remote.settings(_project(tmp_path), environ={}) is None
    rel = remote.settings(_project(tmp_path, "shared/cache"), environ={})
    assert rel.path == os.path.join(str(tmp_path), "shared", "cache")  # a plain path is relative to the game


@pytest.mark.parametrize(
    "url, why",
    [
        ("http://cache.example/x", "only s3://"),
        ("s3://A_Bucket/x", "not an S3 bucket name"),
        ("file://server/share", "local path"),
    ],
)
def test_bad_urls_are_config_errors(tmp_path, url, why):
    with pytest.raises(ConfigError, match=why):
        remote.settings(_project(tmp_path, url), environ={})
    with pytest.raises(ConfigError, match="VEDUTA_CACHE_WRITE"):
        remote.settings(_project(tmp_path, "s3://bbb"), environ={"VEDUTA_CACHE_WRITE": "maybe"})


def test_pyproject_keys(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.veduta]\ncache_url = "s3://bkt/p"\ncache_write = true\n')
    p = Project.at(str(tmp_path))
    assert (p.cache_url, p.cache_write) == ("s3://bkt/p", True)
    (tmp_path / "pyproject.toml").write_text('[tool.veduta]\ncache_write = "yes"\n')
    with pytest.raises(ConfigError, match="cache_write: expected true or false"):
        Project.at(str(tmp_path))


# -- S3 ------------------------------------------------------------------------------------------


def test_s3_get_put_keys_and_layout(tmp_path, s3):
    tier = _tier(tmp_path, f"s3://{s3['bucket']}/studio/game")
    assert tier.get(K1) is None and tier.down is None  # a miss is not a failure
    assert tier.put(K1, b"one") and tier.put(K2, b"two")
    assert tier.get(K1) == b"one" and tier.get(K2) == b"two"
    assert tier.keys() == {K1, K2}
    from tests.s3server import client

    names = sorted(o["Key"] for o in client(s3["env"]).list_objects_v2(Bucket=s3["bucket"])["Contents"])
    assert names == [f"studio/game/{NS}/0f/{K2[2:]}", f"studio/game/{NS}/ab/{K1[2:]}"]  # the local store's layout
    info = tier.probe()
    assert info["reachable"] and s3["bucket"] in info["detail"]
    with pytest.raises(ValueError):
        tier.get("../../etc/passwd")


def test_writers_of_one_key_replace_it_whole(tmp_path, s3):
    """Two machines writing one key (the same bytes, as cooking is deterministic, or a fix of a
    damaged object): each PUT replaces the object whole.  (Truly simultaneous PUTs of one key
    are S3's business, atomic there; moto's in-memory server races on them, so they are
    tested on the folder tier below.)"""
    a, b = _tier(tmp_path, f"s3://{s3['bucket']}"), _tier(tmp_path, f"s3://{s3['bucket']}")
    assert a.put(K1, b"damaged") and b.put(K1, b"good" * 1000)
    assert a.get(K1) == b"good" * 1000


def test_concurrent_writers_of_one_key_in_a_shared_folder(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    tiers = [_tier(tmp_path, str(share)) for _ in range(4)]
    data = os.urandom(300_000)
    assert all(remote.parallel(lambda i: tiers[i % 4].put(K1, data), range(24)))
    assert tiers[0].get(K1) == data
    assert sorted(os.listdir(share / NS / "ab")) == [K1[2:]]  # no temp file left, none clobbered


def _set_semantics(tier, listed):
    """add/get_set on *tier*; *listed()* lists the names the tier holds (its own listing)."""
    assert tier.get_set(K1) == (None, []) and tier.down is None  # a miss is not a failure
    assert tier.add(K1, b"first") and tier.add(K1, b"first")  # the same member twice: one name
    time.sleep(1.1)  # newest first goes by modification time (S3 lists it to the second)
    assert tier.add(K1, b"second") and tier.put(K1, b"whole")
    assert tier.get_set(K1) == (b"whole", [b"second", b"first"])
    first = tier.member_name(K1, b"first")
    assert first == f"{NS}/ab/{K1[2:]}.d/{hashlib.sha256(b'first').hexdigest()}"
    assert sorted(listed()) == sorted([f"{NS}/ab/{K1[2:]}", first, tier.member_name(K1, b"second")])
    assert tier.keys() == {K1} and tier.names() == set(listed())
    assert tier.get_set(K2) == (None, [])  # sets of other keys are apart


def test_s3_sets_are_members_named_by_their_digest(tmp_path, s3):
    from tests.s3server import client

    tier = _tier(tmp_path, f"s3://{s3['bucket']}/studio/game")

    def listed():
        return [
            o["Key"].removeprefix("studio/game/")
            for o in client(s3["env"]).list_objects_v2(Bucket=s3["bucket"]).get("Contents", [])
        ]

    _set_semantics(tier, listed)
    # a member whose bytes do not hash to its name (damaged, or written by hand) is left out
    client(s3["env"]).put_object(
        Bucket=s3["bucket"], Key="studio/game/" + tier.member_name(K1, b"first"), Body=b"tampered"
    )
    assert tier.get_set(K1) == (b"whole", [b"second"])


def test_folder_sets_are_members_named_by_their_digest(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    tier = _tier(tmp_path, str(share))
    _set_semantics(tier, lambda: [str(p.relative_to(share)) for p in share.rglob("*") if p.is_file()])
    (share / tier.member_name(K1, b"first")).write_bytes(b"tampered")
    assert tier.get_set(K1) == (b"whole", [b"second"])


@pytest.mark.parametrize("kind", ["s3", "folder"])
def test_concurrent_writers_of_one_set_lose_nothing(tmp_path, kind, request):
    """Sixteen writers (eight tiers, as eight machines) add to one set at once, half of them
    the same member: every member is there afterwards, each once."""
    if kind == "s3":
        s3 = request.getfixturevalue("s3")
        url = f"s3://{s3['bucket']}/game"
    else:
        (tmp_path / "share").mkdir()
        url = str(tmp_path / "share")
    tiers = [_tier(tmp_path, url) for _ in range(8)]
    members = [f"deps of writer {i}".encode() for i in range(8)] + [b"the same deps"] * 8
    barrier = threading.Barrier(len(members))

    def write(i):
        barrier.wait()
        return tiers[i % 8].add(K1, members[i])

    assert all(remote.parallel(write, range(len(members)), workers=len(members)))
    whole, got = _tier(tmp_path, url).get_set(K1)
    assert whole is None and sorted(got) == sorted(set(members))
    assert len(_tier(tmp_path, url).names()) == 9


def test_missing_bucket_warns_once_and_turns_the_tier_off(tmp_path, s3):
    warnings: list[str] = []
    tier = _tier(tmp_path, "s3://no-such-bucket-here", warnings)
    assert tier.get(K1) is None and tier.get(K2) is None and not tier.put(K1, b"x")
    assert tier.down == "no such bucket"
    assert warnings == ["shared cache s3://no-such-bucket-here: no such bucket; going on without it"]


def test_wrong_credentials_are_a_warning(tmp_path, s3, monkeypatch):
    from tests.s3server import client

    # moto accepts any key; a bucket policy that denies everyone is what a real server says
    client(s3["env"]).put_bucket_policy(
        Bucket=s3["bucket"],
        Policy=(
            '{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*",'
            f'"Resource":["arn:aws:s3:::{s3["bucket"]}","arn:aws:s3:::{s3["bucket"]}/*"]}}]}}'
        ),
    )
    warnings: list[str] = []
    tier = _tier(tmp_path, f"s3://{s3['bucket']}", warnings)
    tier.get(K1)
    if tier.down is None:
        pytest.skip("this moto does not enforce bucket policies")
    assert "access denied" in tier.down and len(warnings) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_server_is_one_warning_and_no_wait(tmp_path, s3, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    warnings: list[str] = []
    tier = _tier(tmp_path, "s3://bucket-x", warnings)
    t0 = time.monotonic()
    got = remote.parallel(tier.get, [K1, K2] * 20)
    assert got == [None] * 40
    assert time.monotonic() - t0 < 30  # one failed connection, then off (no 40 connection attempts)
    assert len(warnings) == 1 and "unreachable (http://127.0.0.1:" in warnings[0]
    assert not tier.probe()["reachable"]


@contextlib.contextmanager
def _server(on_connect):
    """A server on 127.0.0.1 that hands each connection to *on_connect(conn, stop)* in a thread of
    its own; yields its port; on exit *stop* is set and the connections are closed."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    stop = threading.Event()
    conns: list[socket.socket] = []

    def serve():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                c = srv.accept()[0]
            except OSError:
                continue
            conns.append(c)
            threading.Thread(target=on_connect, args=(c, stop), daemon=True).start()

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        th.join()
        for c in conns:
            c.close()
        srv.close()


def test_a_server_that_never_answers_times_out(tmp_path, s3, monkeypatch):
    """Accepts connections and never says a word: the time-out bounds the wait."""
    with _server(lambda c, stop: None) as port:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
        warnings: list[str] = []
        tier = _tier(tmp_path, "s3://bucket-y", warnings, VEDUTA_CACHE_TIMEOUT="0.5")
        t0 = time.monotonic()
        assert remote.parallel(tier.get, [K1] * 8) == [None] * 8
        assert time.monotonic() - t0 < 30  # 2 attempts of 0.5 s, in parallel (botocore's default: 60 s each)
        assert len(warnings) == 1 and "timed out" in warnings[0]


def test_a_server_that_trickles_its_answer_is_cut_by_the_whole_request_time_out(tmp_path, s3, monkeypatch):
    """Answers at once (headers, a 1,000-byte Content-Length), then sends one body byte every 0.1 s:
    no socket read ever waits long, so only a deadline on the whole request ends it; the tier is
    then off with one warning, as for a server that never answers. (The server gives up after
    40 s, so the old per-read time-out cannot hang the test.)"""
    sent: list[int] = []

    def answer(c, stop):
        try:
            c.recv(65536)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: application/xml\r\n\r\n")
            for _ in range(400):
                if stop.wait(0.1):
                    return
                c.sendall(b"x")
                sent.append(1)
        except OSError:
            pass

    with _server(answer) as port:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
        warnings: list[str] = []
        tier = _tier(tmp_path, "s3://bucket-t", warnings, VEDUTA_CACHE_TIMEOUT="1")
        assert remote.parallel(tier.get, [K1] * 8) == [None] * 8
        assert 0 < len(sent) < 8 * 1000  # cut while the bodies were still coming
        assert warnings == [
            f"shared cache {tier.settings.where}: timed out (no whole answer from the endpoint in 1 s: a slow or "
            "stalled server?); going on without it"
        ]
        assert tier.get(K2) is None and not tier.put(K2, b"x")  # off: no request waits again


# -- folder ----------------------------------------------------------------------------------------


def test_folder_tier(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    tier = _tier(tmp_path, share.as_uri())
    assert tier.get(K1) is None
    assert tier.put(K1, b"one") and tier.get(K1) == b"one"
    assert (share / NS / "ab" / K1[2:]).read_bytes() == b"one"
    (share / NS / "ab" / f".{K1[2:]}.otherhost.12.0.tmp").write_bytes(b"half")  # another machine's write
    assert tier.keys() == {K1}
    assert tier.probe()["reachable"]


def test_folder_tier_that_is_not_mounted_is_never_created(tmp_path):
    warnings: list[str] = []
    tier = _tier(tmp_path, str(tmp_path / "not-mounted"), warnings)
    assert tier.get(K1) is None and not tier.put(K1, b"x")
    assert not (tmp_path / "not-mounted").exists()
    assert len(warnings) == 1 and "no such folder" in warnings[0]


def test_temp_names_are_unique_per_host_process_and_call(tmp_path):
    from veduta.base.fsutil import HOST, temp_name

    a, b = temp_name(str(tmp_path / "x.vda")), temp_name(str(tmp_path / "x.vda"))
    assert a != b
    assert f".x.vda.{HOST}.{os.getpid()}." in a and a.endswith(".tmp")


def test_a_stalled_folder_times_out_once_and_the_tier_goes_off(tmp_path):
    """A share that stops answering (a hung NFS or SMB server): each operation on the folder waits
    at most the tier's time-out, then the tier is off with one warning and later calls return at
    once. The stall is a real blocked read (of a pipe nobody writes), in the place of the file
    system call a stalled share never returns from."""
    share = tmp_path / "share"
    share.mkdir()
    r, w = os.pipe()

    reads: list[str] = []

    class Stalled(remote.FolderTier):
        @staticmethod
        def _read(path: str) -> bytes | None:
            reads.append(path)
            return os.read(r, 1)  # blocks: nothing is ever written

    warnings: list[str] = []
    s = remote.settings(_project(tmp_path, str(share)), environ={"VEDUTA_CACHE_TIMEOUT": "0.5"})
    tier = Stalled(s, warnings.append)
    try:
        t0 = time.monotonic()
        assert remote.parallel(tier.get, [K1] * 8) == [None] * 8
        assert time.monotonic() - t0 < 30  # half a second per call in parallel, not for ever (a loaded machine is slow)
        assert tier.down and "no answer from the folder in 0.5 s" in tier.down
        assert len(warnings) == 1 and "going on without it" in warnings[0]
        tried = len(reads)
        assert tier.get(K2) is None and tier.get_set(K2) == (None, []) and not tier.put(K2, b"x")
        assert len(reads) == tried  # off: the folder is not touched again, so nothing waits
    finally:
        os.close(w)  # the blocked reads end (EOF) and their threads with them
        os.close(r)


def test_a_folder_tier_reads_regular_files_only_and_none_too_large(tmp_path):
    share = tmp_path / "share"
    (share / NS / "ab").mkdir(parents=True)
    os.mkfifo(share / NS / "ab" / K1[2:])  # a FIFO: opened without blocking, never read
    big = share / NS / K2[:2] / K2[2:]
    big.parent.mkdir()
    with open(big, "wb") as f:
        f.truncate(MAX_COOKED_BYTES + 1)  # sparse: larger than any cooked file, no disk used
    warnings: list[str] = []
    tier = _tier(tmp_path, str(share), warnings)
    t0 = time.monotonic()
    assert tier.get(K1) is None and tier.get(K2) is None
    assert time.monotonic() - t0 < 30  # the FIFO is not waited on
    assert not tier.down  # one object skipped is not the tier failing
    assert warnings == [
        f"shared cache {share}: object {NS}/ab/{K1[2:]} skipped: it is a FIFO (a named pipe), not a regular file",
        f"shared cache {share}: object {NS}/{K2[:2]}/{K2[2:]} skipped: too large (536,870,913 bytes; a cooked file is "
        f"at most 536,870,912)",
    ]
    k3 = "ef" * 32
    assert tier.put(k3, b"fine") and tier.get(k3) == b"fine"


def test_a_pyproject_past_its_limit_or_not_a_file_is_a_config_error_read_from_one_stat(tmp_path, monkeypatch):
    """pyproject.toml is read up to MAX_CONFIG_BYTES, told from one stat before a byte is read:
    one byte more is a configuration error naming the file and both sizes; a FIFO in its place is
    never opened for reading (it would block); at the limit it is read as ever."""
    from veduta.base import fsutil
    from veduta.base.project import MAX_CONFIG_BYTES

    head = "[tool.veduta]\nstrict = true\n"
    path = tmp_path / "pyproject.toml"
    path.write_text(head + "#" * (MAX_CONFIG_BYTES - len(head) - 1) + "\n")
    assert Project.at(str(tmp_path)).strict is True
    path.write_text(head + "#" * (MAX_CONFIG_BYTES - len(head)) + "\n")
    read = []
    monkeypatch.setattr(fsutil.os, "read", lambda *a: read.append(a) or b"")
    with pytest.raises(ConfigError) as err:
        Project.at(str(tmp_path))
    assert str(err.value) == (
        f"{path}: too large ({MAX_CONFIG_BYTES + 1:,} bytes; a game's pyproject.toml is at most {MAX_CONFIG_BYTES:,})"
    )
    assert read == []
    monkeypatch.undo()
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(ConfigError, match=r"pyproject.toml: it is a FIFO"):
        Project.at(str(tmp_path))
