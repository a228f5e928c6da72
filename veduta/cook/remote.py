"""The shared cache tier: the store's ``get(key)`` / ``put(key, data)`` on a team's storage.

Two back ends behind one small interface (:class:`Tier`):

- ``s3://bucket/prefix``: any S3-compatible object storage, through boto3 (the
  reference S3 client; endpoint, region and credentials come from the standard AWS
  environment and config files: ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
  ``AWS_PROFILE``, ``~/.aws/config``, ..., never from the game's files);
- ``file:///path`` or a plain path: a folder, e.g. a network share.

Objects are laid out as the local store is, in a folder named by veduta's toolchain salt
(:func:`veduta.cook.store.namespace`): ``<prefix>/<namespace>/<key[:2]>/<key[2:]>``, so a folder tier can be
copied into a bucket (``aws s3 sync``) and back.  A key is an output's META source_hash, which
holds the spec's compiler version only; the salt changes when a release of veduta comes to
write other bytes for the same sources, and its objects then live apart from an earlier
release's (never restored for it, never overwritten by it).  Besides objects, a tier
holds *sets*: :meth:`Tier.add` puts a member of set *key* at
``<namespace>/<key[:2]>/<key[2:]>.d/<sha256 of the member>`` and :meth:`Tier.get_set` reads them all with
one listing.  Every name is a function of what it holds (an output's source_hash, a member's
digest), so concurrent writers only ever write the same bytes to one name or different
names: nothing a writer adds can be lost to another's write (docs/shared-cache.md).

A tier never raises and never hangs a cook: every call has short time-outs, and the
first failure (unreachable, refused, timed out, access denied) prints one warning and
turns the tier off for the rest of the run (:attr:`Tier.down`); later calls return at
once.  A miss (no such object) is not a failure.  Nothing here trusts what it reads:
callers verify every object (``veduta.cook.cook.check_output``).

This module imports nothing heavy; boto3 is imported when an ``s3://`` tier is opened.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import threading
import time
from dataclasses import dataclass

from veduta.base.errors import ConfigError
from veduta.base.fsutil import MAX_COOKED_BYTES, NotARegularFile, TooLarge, read_bounded
from veduta.base.project import ENV_CACHE_URL as ENV_URL
from veduta.cook.store import namespace

ENV_WRITE = "VEDUTA_CACHE_WRITE"
ENV_TIMEOUT = "VEDUTA_CACHE_TIMEOUT"
DEFAULT_TIMEOUT_S = 5.0
CONNECT_TIMEOUT_S = 2.0
#: parallel requests (downloads while cooking, uploads, push)
WORKERS = 16
#: members of one set read by :meth:`Tier.get_set` (the newest)
SET_READ = 16
SET_SUFFIX = ".d"

_KEY = re.compile(r"[0-9a-f]{64}")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


@dataclass(frozen=True)
class Settings:
    """Where the shared tier is and what this run may do with it."""

    url: str  # as configured
    url_from: str  # "VEDUTA_CACHE_URL" or "<root>/pyproject.toml"
    write: bool
    write_from: str  # "VEDUTA_CACHE_WRITE", "<root>/pyproject.toml" or "default"
    scheme: str  # "s3" or "file"
    bucket: str = ""  # s3
    prefix: str = ""  # s3: "" or "some/prefix/" (with the slash)
    path: str = ""  # file: the folder
    timeout: float = DEFAULT_TIMEOUT_S

    @property
    def where(self) -> str:
        """The tier as a short URL for messages."""
        if self.scheme == "s3":
            return f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        return self.path


def parse_url(url: str, root: str = ".") -> dict:
    """``s3://bucket[/prefix]``, ``file:///path`` or a plain path (relative to *root*, the
    game root) as the fields of :class:`Settings`; ConfigError for anything else."""
    if url.startswith("s3://"):
        bucket, _, prefix = url[5:].partition("/")
        if not re.fullmatch(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]", bucket):
            raise ConfigError(f"cache_url {url!r}: {bucket!r} is not an S3 bucket name")
        prefix = prefix.strip("/")
        return {"scheme": "s3", "bucket": bucket, "prefix": prefix + "/" if prefix else ""}
    if url.startswith("file://"):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            raise ConfigError(f"cache_url {url!r}: a file:// URL names a local path (file:///path)")
        path = unquote(parts.path)
        if not path:
            raise ConfigError(f"cache_url {url!r}: no path")
        return {"scheme": "file", "path": path}
    if re.match(r"[A-Za-z][A-Za-z0-9+.\-]*://", url):
        raise ConfigError(f"cache_url {url!r}: only s3://bucket/prefix, file:///path or a folder path")
    return {"scheme": "file", "path": os.path.normpath(os.path.join(root, os.path.expanduser(url)))}


def _flag(text: str, name: str) -> bool:
    t = text.strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise ConfigError(f"{name}={text!r}: expected 1 or 0 (true/false)")


def settings(project, environ=None) -> Settings | None:
    """The shared tier of *project*, or None when no URL is set.

    ``VEDUTA_CACHE_URL`` wins over ``[tool.veduta] cache_url``; ``VEDUTA_CACHE_WRITE``
    over ``cache_write`` (default off).  An empty ``VEDUTA_CACHE_URL`` turns the tier off.
    """
    env = os.environ if environ is None else environ
    cfg_file = os.path.join(project.root, "pyproject.toml")
    if ENV_URL in env:
        url, url_from = env[ENV_URL].strip(), ENV_URL
    else:
        url, url_from = getattr(project, "cache_url", ""), cfg_file
    if not url:
        return None
    if ENV_WRITE in env:
        write, write_from = _flag(env[ENV_WRITE], ENV_WRITE), ENV_WRITE
    elif getattr(project, "cache_write", False):
        write, write_from = True, cfg_file
    else:
        write, write_from = False, "default"
    timeout = DEFAULT_TIMEOUT_S
    if env.get(ENV_TIMEOUT):
        try:
            timeout = float(env[ENV_TIMEOUT])
        except ValueError:
            timeout = -1
        if not 0 < timeout <= 600:
            raise ConfigError(f"{ENV_TIMEOUT}={env[ENV_TIMEOUT]!r}: expected seconds, above 0 and at most 600")
    return Settings(url, url_from, write, write_from, timeout=timeout, **parse_url(url, project.root))


def open_tier(s: Settings, warn=None) -> Tier:
    """The tier for *s*; *warn(message)* gets the one warning when it fails (default: stderr)."""
    return (S3Tier if s.scheme == "s3" else FolderTier)(s, warn)


def _warn_stderr(message: str) -> None:
    print(f"veduta: warning: {message}", file=sys.stderr, flush=True)


class Tier:
    """``get(key)``, ``put(key, data)``, ``add(key, member)``, ``get_set(key)``, ``keys()``,
    ``names()`` and ``probe()`` on one shared store."""

    def __init__(self, s: Settings, warn=None):
        self.settings = s
        self.warn = warn or _warn_stderr
        #: why the tier is off for the rest of this run (None while it works)
        self.down: str | None = None
        self._lock = threading.Lock()
        #: objects and bytes this run uploaded (the cook's closing note, cache push's report)
        self.puts = 0
        self.bytes_out = 0
        #: the folder of this toolchain's objects (:func:`veduta.cook.store.namespace`)
        self.ns = namespace()

    # -- the interface ---------------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        """The object *key*, or None (a miss, or the tier is down)."""
        _check_key(key)
        if self.down:
            return None
        try:
            data = self._get(key)
        except (TooLarge, NotARegularFile) as exc:  # this object only: the tier stays on
            self.skip(key, exc)
            return None
        except Exception as exc:  # noqa: BLE001 - whatever the transport raises, the cook goes on
            self.fail(exc)
            return None
        return data

    def put(self, key: str, data: bytes) -> bool:
        """Store *data* as *key* (replacing what is there); False when the tier is down."""
        _check_key(key)
        return self._store(self.object_name(key), data)

    def add(self, key: str, member: bytes) -> bool:
        """Add *member* to set *key* (a no-op when it is there already: the same name holds the
        same bytes); False when the tier is down."""
        _check_key(key)
        return self._store(self.member_name(key, member), member)

    def _store(self, name: str, data: bytes) -> bool:
        if self.down:
            return False
        try:
            self._put_name(name, data)
        except Exception as exc:  # noqa: BLE001 - whatever the transport raises, the cook goes on
            self.fail(exc)
            return False
        with self._lock:
            self.puts += 1
            self.bytes_out += len(data)
        return True

    def get_set(self, key: str) -> tuple[bytes | None, list[bytes]]:
        """The object *key* itself (None if absent) and the members of set *key*, newest first
        (at most :data:`SET_READ`; a member whose bytes do not hash to its name is left out), in
        one listing and a GET for each: ``(None, [])`` on a miss or when the tier is down."""
        _check_key(key)
        if self.down:
            return None, []
        try:
            whole, members = self._get_set(key)
        except (TooLarge, NotARegularFile) as exc:  # this set only: the tier stays on
            self.skip(key, exc)
            return None, []
        except Exception as exc:  # noqa: BLE001
            self.fail(exc)
            return None, []
        got = [m for name, m in members if m is not None and name == self.member_name(key, m)]
        return whole, got

    def keys(self) -> set[str]:
        """Every object key in the tier (empty when it is down)."""
        return {k for k in (_key_of(n, self.ns) for n in self.names()) if k}

    def names(self) -> set[str]:
        """Every name in the tier of this toolchain: objects ``<ns>/ab/cdef...`` and set members
        ``<ns>/ab/cdef....d/<digest>`` (:meth:`member_name`); empty when it is down."""
        if self.down:
            return set()
        try:
            return {n for n in self._names() if _key_of(n, self.ns) or _member_of(n, self.ns)}
        except Exception as exc:  # noqa: BLE001
            self.fail(exc)
            return set()

    def probe(self) -> dict:
        """``{"reachable": bool, "detail": str, "ms": float}``: can this machine read the tier?"""
        t0 = time.perf_counter()
        try:
            detail = self._probe()
            ok = True
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, _describe(exc)
        return {"reachable": ok, "detail": detail, "ms": round((time.perf_counter() - t0) * 1000, 1)}

    def skip(self, key: str, exc: OSError) -> None:
        """Say that object *key* was left unread (too large, or not a regular file)."""
        self.warn(f"shared cache {self.settings.where}: object {self.object_name(key)} skipped: {exc.strerror}")

    def fail(self, exc: BaseException | str) -> None:
        """Turn the tier off for this run, with one warning."""
        why = exc if isinstance(exc, str) else _describe(exc)
        with self._lock:
            if self.down:
                return
            self.down = why
        self.warn(f"shared cache {self.settings.where}: {why}; going on without it")

    def object_name(self, key: str) -> str:
        return f"{self.ns}/{key[:2]}/{key[2:]}"

    def member_name(self, key: str, member: bytes) -> str:
        """Where *member* of set *key* is kept: named by its own digest."""
        return f"{self.object_name(key)}{SET_SUFFIX}/{hashlib.sha256(member).hexdigest()}"

    #: what a request that overran the time-out says (``{t}``: the time-out)
    _STALLED = "no whole answer in {t:g} s"

    def _bounded(self, fn, *args):
        """``fn(*args)`` in a thread of its own, waited for at most the tier's time-out as a whole
        (connecting, the answer's headers and all its body: a server that trickles bytes is cut
        as one that never answers); past it, :class:`TimeoutError`.  The thread stays blocked in
        the file system or the socket, which no thread can interrupt; it is a daemon, so it never
        holds the process up at exit, and the tier is off for the rest of the run."""
        box: list = []
        done = threading.Event()

        def run():
            try:
                box.append((True, fn(*args)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box.append((False, exc))
            finally:
                done.set()

        threading.Thread(target=run, daemon=True, name="veduta-cache-request").start()
        if not done.wait(self.settings.timeout):
            raise TimeoutError(self._STALLED.format(t=self.settings.timeout))
        ok, value = box[0]
        if not ok:
            raise value
        return value

    # -- back ends ---------------------------------------------------------------------------
    def _get(self, key: str) -> bytes | None:
        raise NotImplementedError

    def _put_name(self, name: str, data: bytes) -> None:
        raise NotImplementedError

    def _get_set(self, key: str) -> tuple[bytes | None, list[tuple[str, bytes | None]]]:
        """The object *key* and ``(name, bytes)`` of the newest :data:`SET_READ` members."""
        raise NotImplementedError

    def _names(self):
        raise NotImplementedError

    def _probe(self) -> str:
        raise NotImplementedError


def _check_key(key: str) -> None:
    if not _KEY.fullmatch(key):
        raise ValueError(f"bad store key {key!r}")


def _key_of(name: str, ns: str) -> str | None:
    """The key of an object name ``<ns>/ab/cdef...`` (None for anything else: set members, temp
    files, strays, another toolchain's objects)."""
    head, _, name = name.partition("/")
    if head != ns:
        return None
    top, _, rest = name.partition("/")
    key = top + rest
    return key if len(top) == 2 and _KEY.fullmatch(key) else None


def _member_of(name: str, ns: str) -> tuple[str, str] | None:
    """``(set key, member digest)`` of a member name ``<ns>/ab/cdef....d/<digest>`` (else None)."""
    head, sep, digest = name.rpartition(SET_SUFFIX + "/")
    key = _key_of(head, ns) if sep else None
    return (key, digest) if key and _KEY.fullmatch(digest) else None


def _describe(exc: BaseException) -> str:
    """A short, human reason for a transport failure."""
    resp = getattr(exc, "response", None)
    if isinstance(resp, dict):
        err = resp.get("Error") or {}
        status = (resp.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        code = err.get("Code") or status
        msg = err.get("Message") or ""
        if str(code) in ("403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            return f"access denied ({code}{': ' + msg if msg else ''}; check the AWS credentials)"
        if code == "NoSuchBucket":
            return "no such bucket"
        return f"{code}{': ' + msg if msg else ''}"
    name = type(exc).__name__
    if isinstance(exc, MemoryError):
        return "not enough memory to read an object"
    if name in ("ConnectTimeoutError", "ReadTimeoutError", "TimeoutError"):
        return f"timed out ({exc})"
    if name == "EndpointConnectionError" or isinstance(exc, ConnectionError):
        url = str(getattr(exc, "kwargs", {}).get("endpoint_url", ""))
        m = re.match(r"[a-z]+://[^/]+", url)
        return f"unreachable ({m.group(0) if m else exc})"
    if name in ("NoCredentialsError", "PartialCredentialsError"):
        return "no AWS credentials (set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}{' ' + str(exc.filename) if exc.filename else ''}"
    return f"{name}: {exc}"


class FolderTier(Tier):
    """A folder (a network share): the local store's layout, written atomically with temp
    names unique per machine and process (``veduta.base.fsutil.temp_name``).

    Only regular files are read (a FIFO is never waited on), none larger than
    :data:`~veduta.base.fsutil.MAX_COOKED_BYTES`, and every operation on the folder is bounded in
    time (:meth:`_bounded`, the tier's time-out): a stalled share turns the tier off with one
    warning, as an S3 endpoint that does not answer does, and the cook goes on without it."""

    _STALLED = "no answer from the folder in {t:g} s: a stalled share?"

    def __init__(self, s: Settings, warn=None):
        super().__init__(s, warn)
        self.root = s.path
        self._root_ok = False

    def _path(self, key: str) -> str:
        return os.path.join(self.root, self.ns, key[:2], key[2:])

    def _need_root(self) -> None:
        if not self._root_ok:
            if not self._bounded(os.path.isdir, self.root):
                # never create the share's root: a share that is not mounted must not become
                # an empty local folder that everyone's cook then "shares"
                raise FileNotFoundError(2, "no such folder (is the share mounted?)", self.root)
            self._root_ok = True

    @staticmethod
    def _read(path: str) -> bytes | None:
        """An object's bytes (None when absent): a regular file of at most MAX_COOKED_BYTES."""
        try:
            return read_bounded(path, MAX_COOKED_BYTES)
        except FileNotFoundError:
            return None

    def _get(self, key: str) -> bytes | None:
        self._need_root()
        return self._bounded(self._read, self._path(key))

    def _put_name(self, name: str, data: bytes) -> None:
        from veduta.base.fsutil import atomic_write

        self._need_root()
        self._bounded(atomic_write, os.path.join(self.root, *name.split("/")), data)

    def _get_set(self, key: str):
        whole = self._get(key)
        return whole, self._bounded(self._members, key)

    def _members(self, key: str) -> list[tuple[str, bytes]]:
        d = self._path(key) + SET_SUFFIX
        try:
            names = [n for n in os.listdir(d) if _KEY.fullmatch(n)]
        except (FileNotFoundError, NotADirectoryError):
            return []
        dated = []
        for n in names:
            try:
                dated.append((os.stat(os.path.join(d, n)).st_mtime_ns, n))
            except FileNotFoundError:
                continue
        out = []
        for _, n in sorted(dated, reverse=True)[:SET_READ]:
            try:
                data = self._read(os.path.join(d, n))
            except (TooLarge, NotARegularFile):
                continue  # never a member: a member is a short list of paths
            if data is not None:
                out.append((f"{self.object_name(key)}{SET_SUFFIX}/{n}", data))
        return out

    def _names(self):
        self._need_root()
        listdir = functools.partial(self._bounded, _sorted_listing)
        root = os.path.join(self.root, self.ns)
        if not self._bounded(os.path.isdir, root):
            return  # nothing written by this toolchain yet
        for top in listdir(root):
            d = os.path.join(root, top)
            if len(top) != 2 or not self._bounded(os.path.isdir, d):
                continue
            for name in listdir(d):
                if name.endswith(SET_SUFFIX) and self._bounded(os.path.isdir, os.path.join(d, name)):
                    for m in listdir(os.path.join(d, name)):
                        yield f"{self.ns}/{top}/{name}/{m}"
                else:
                    yield f"{self.ns}/{top}/{name}"

    def _probe(self) -> str:
        self._need_root()
        self._bounded(os.listdir, self.root)
        writable = os.access(self.root, os.W_OK)
        return f"folder {self.root} ({'writable' if writable else 'read-only'} for this user)"


def _sorted_listing(folder: str) -> list[str]:
    return sorted(os.listdir(folder))


class S3Tier(Tier):
    """S3-compatible object storage through boto3."""

    def __init__(self, s: Settings, warn=None):
        super().__init__(s, warn)
        self._client = None
        self._client_lock = threading.Lock()

    @property
    def client(self):
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._make_client()
        return self._client

    def _make_client(self):
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise RuntimeError("an s3:// shared cache needs boto3: pip install 'veduta-cook[s3]'") from None
        t = self.settings.timeout
        # short time-outs and one retry: a dead or black-holed server costs seconds, once
        cfg = Config(
            connect_timeout=min(t, CONNECT_TIMEOUT_S),
            read_timeout=t,
            retries={"total_max_attempts": 2, "mode": "standard"},
            max_pool_connections=WORKERS * 2,
            user_agent_extra="veduta-cook",
        )
        # the standard chain: AWS_* environment, AWS_PROFILE, ~/.aws/config and credentials
        return boto3.session.Session().client("s3", config=cfg)

    _STALLED = "no whole answer from the endpoint in {t:g} s: a slow or stalled server?"

    def _name(self, key: str) -> str:
        return self.settings.prefix + self.object_name(key)

    # every request is bounded as a whole (:meth:`Tier._bounded`): botocore's read_timeout is per
    # socket read, which a server sending a byte a second never reaches
    def _get(self, key: str) -> bytes | None:
        self.client  # made (boto3 imported) outside the request's time  # noqa: B018
        return self._bounded(self._get_now, key)

    def _get_now(self, key: str) -> bytes | None:
        client = self.client
        try:
            r = client.get_object(Bucket=self.settings.bucket, Key=self._name(key))
        except client.exceptions.NoSuchKey:
            return None
        except Exception as exc:
            resp = getattr(exc, "response", None) or {}
            if (resp.get("ResponseMetadata") or {}).get("HTTPStatusCode") == 404 and (resp.get("Error") or {}).get(
                "Code"
            ) != "NoSuchBucket":
                return None
            raise
        with r["Body"] as body:
            return _read_body(body, r.get("ContentLength"), self._name(key))

    def _put_name(self, name: str, data: bytes) -> None:
        # one PUT is atomic: readers see the old object or the new one; writers of one name
        # write the same bytes (an output's key is its inputs' hash, a member's name its own
        # digest), so the last one winning is harmless
        put = functools.partial(self.client.put_object, Bucket=self.settings.bucket, Key=self.settings.prefix + name)
        self._bounded(functools.partial(put, Body=data))

    def _get_set(self, key: str):
        # one LIST finds both the object (a whole manifest of earlier versions) and the members:
        # keys have a fixed length, so nothing else starts with this name
        name = self._name(key)
        whole, dated = None, []
        for obj in self._listing(name):
            if obj["Key"] == name:
                whole = self._get(key)
            elif obj["Key"].startswith(name + SET_SUFFIX + "/"):
                dated.append((obj["LastModified"], obj["Key"]))
        out = []
        n = len(self.settings.prefix)
        for _, k in sorted(dated, reverse=True)[:SET_READ]:
            data = self._bounded(self._member, k)
            if data is not None:
                out.append((k[n:], data))
        return whole, out

    def _member(self, k: str) -> bytes | None:
        try:
            body = self.client.get_object(Bucket=self.settings.bucket, Key=k)["Body"]
        except self.client.exceptions.NoSuchKey:
            return None
        with body:
            return _read_body(body, None, k)

    def _listing(self, prefix: str):
        """The objects under *prefix*, one LIST request (a page) at a time, each bounded."""
        pages = iter(self.client.get_paginator("list_objects_v2").paginate(Bucket=self.settings.bucket, Prefix=prefix))
        while True:
            page = self._bounded(next, pages, None)
            if page is None:
                return
            yield from page.get("Contents", ())

    def _names(self):
        n = len(self.settings.prefix)
        for obj in self._listing(f"{self.settings.prefix}{self.ns}/"):
            yield obj["Key"][n:]

    def _probe(self) -> str:
        client = self.client
        self._bounded(functools.partial(client.head_bucket, Bucket=self.settings.bucket))
        return f"bucket {self.settings.bucket} at {client.meta.endpoint_url} ({client.meta.region_name or 'no region'})"


def _read_body(body, length: int | None, name: str) -> bytes:
    """An S3 object's body, refused (:class:`TooLarge`) past MAX_COOKED_BYTES: by its announced
    length before any byte is read, else once that much has come."""
    if length is not None and length > MAX_COOKED_BYTES:
        raise TooLarge(name, length, MAX_COOKED_BYTES)
    data = body.read(MAX_COOKED_BYTES + 1)
    if len(data) > MAX_COOKED_BYTES:
        raise TooLarge(name, len(data), MAX_COOKED_BYTES)
    return data


def parallel(fn, items, workers: int = WORKERS) -> list:
    """``[fn(item) for item in items]`` in up to *workers* threads (network-bound work), in order."""
    items = list(items)
    if len(items) <= 1:
        return [fn(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix="veduta-cache") as ex:
        return list(ex.map(fn, items))


__all__ = [
    "Settings",
    "Tier",
    "FolderTier",
    "S3Tier",
    "settings",
    "open_tier",
    "parse_url",
    "parallel",
    "ENV_URL",
    "ENV_WRITE",
    "ENV_TIMEOUT",
]
