"""The META chunk: canonical JSON metadata, and the source_hash recipe.

Canonical means: the keys ``compiler, deps, kind, name, source, source_hash``
in that (sorted) order, no whitespace, UTF-8 (no ``\\u`` escapes beyond the
ones JSON requires, no HTML escaping), ``deps`` sorted without duplicates.
Readers reject META whose bytes differ from the canonical encoding of what
they decode, so equal metadata always has equal bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from veduta.base.errors import VdaError
from veduta.base.kinds import NAMES as KINDS

KEYS = ("compiler", "deps", "kind", "name", "source", "source_hash")
#: json.dumps(obj, ensure_ascii=False, separators=(",", ":")) without a new encoder per call
_CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_HASH_RE = re.compile(r"[0-9a-f]{64}")
HASH_PREFIX = b"veduta-cook/1\n"


@dataclass(frozen=True)
class Meta:
    compiler: str
    deps: tuple[str, ...]
    kind: str
    name: str
    source: str
    source_hash: str

    def encode(self) -> bytes:
        if list(self.deps) != sorted(set(self.deps)):
            raise ValueError("META deps must be sorted without duplicates")
        obj = {
            "compiler": self.compiler,
            "deps": list(self.deps),
            "kind": self.kind,
            "name": self.name,
            "source": self.source,
            "source_hash": self.source_hash,
        }
        return _CANONICAL.encode(obj).encode("utf-8")

    @classmethod
    def decode(cls, payload: bytes) -> Meta:
        """Decode and check canonical META; VdaError with a payload offset otherwise."""
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise VdaError("META is not valid UTF-8", offset=exc.start) from None
        try:
            obj = json.loads(text, object_pairs_hook=_no_duplicates)
        except _Duplicate as exc:
            raise VdaError(f"META has duplicate key {exc.args[0]!r}", offset=0) from None
        except (ValueError, RecursionError) as exc:
            pos = getattr(exc, "pos", 0) or 0
            raise VdaError(
                f"META is not valid JSON: {getattr(exc, 'msg', exc)}", offset=len(text[:pos].encode("utf-8"))
            ) from None
        if not isinstance(obj, dict):
            raise VdaError("META is not a JSON object", offset=0)
        if tuple(sorted(obj)) != KEYS:
            missing = [k for k in KEYS if k not in obj]
            extra = sorted(k for k in obj if k not in KEYS)
            raise VdaError(
                "META keys wrong"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {extra}" if extra else ""),
                offset=0,
            )
        for k in ("compiler", "kind", "name", "source", "source_hash"):
            if not isinstance(obj[k], str):
                raise VdaError(f"META {k} is not a string", offset=0)
        deps = obj["deps"]
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise VdaError("META deps is not a list of strings", offset=0)
        if deps != sorted(set(deps)):
            raise VdaError("META deps are not sorted without duplicates", offset=0)
        if obj["kind"] not in KINDS:
            raise VdaError(f"META kind {obj['kind']!r} is not one of {', '.join(KINDS)}", offset=0)
        if not _HASH_RE.fullmatch(obj["source_hash"]):
            raise VdaError("META source_hash is not 64 lowercase hex digits", offset=0)
        meta = cls(obj["compiler"], tuple(deps), obj["kind"], obj["name"], obj["source"], obj["source_hash"])
        try:
            canon = meta.encode()
        except UnicodeEncodeError:  # "\ud800": valid JSON, not a Unicode string
            raise VdaError("META has a lone surrogate escape (not Unicode text)", offset=0) from None
        if canon != payload:
            at = next(
                (i for i, (a, b) in enumerate(zip(canon, payload, strict=False)) if a != b),
                min(len(canon), len(payload)),
            )
            raise VdaError("META is not canonical JSON (keys sorted, no whitespace, UTF-8, deps sorted)", offset=at)
        return meta


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise _Duplicate(k)
        d[k] = v
    return d


def source_hash(
    compiler: str, source: str, source_bytes: bytes, deps: Iterable[str], read: Callable[[str], bytes | None]
) -> str:
    """The spec's source_hash: SHA-256 over the compiler inputs.

    ``read(dep)`` returns a dependency's bytes, or None when it cannot be read
    (hashed as ``missing <path>``).
    """
    h = hashlib.sha256(HASH_PREFIX)
    h.update(compiler.encode("utf-8") + b"\n")
    h.update(f"source {source} {len(source_bytes)}\n".encode())
    h.update(source_bytes)
    for dep in deps:
        data = read(dep)
        if data is None:
            h.update(f"missing {dep}\n".encode())
        else:
            h.update(f"dep {dep} {len(data)}\n".encode())
            h.update(data)
    return h.hexdigest()
