"""An independent reader of cooked files, written from the spec's text alone (container-vda.md),
run over everything the cook writes for the sample game and for the spec's crate example.

It imports nothing of veduta's container code: framing, CRCs, canonical META and the source_hash
recipe are re-implemented here from the spec, so that a drift of the writer (the compiler
string, a dependency the spec does not list, another hash recipe) cannot hide behind a reader
that shares its code.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: container-vda.md, META, key "compiler": "veduta-asset/0.8.0 since map tilesets" (this feature set)
SPEC_COMPILER = "veduta-asset/0.8.0"
#: container-vda.md: "Chunk | Kind" (the body chunk of each kind)
BODY = {
    "model": "MESH",
    "texture": "TEXR",
    "material": "MATL",
    "scene": "SCEN",
    "prefab": "PRFB",
    "world": "WRLD",
    "map": "TMAP",
}
KEYS = ["compiler", "deps", "kind", "name", "source", "source_hash"]


def read_vda(data: bytes) -> list[tuple[str, bytes]]:
    """The chunks of a .vda file: magic "VDA1", then type (4 ASCII letters or digits), u32 length,
    payload, u32 CRC-32 of type + payload, little-endian."""
    assert data[:4] == b"VDA1", "magic"
    chunks, at = [], 4
    while at < len(data):
        assert at + 8 <= len(data), "truncated chunk header"
        ctype = data[at : at + 4]
        assert ctype.isascii() and ctype.isalnum(), ctype
        (length,) = struct.unpack("<I", data[at + 4 : at + 8])
        payload = data[at + 8 : at + 8 + length]
        assert len(payload) == length and at + 12 + length <= len(data), "truncated payload"
        (crc,) = struct.unpack("<I", data[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(ctype + payload), "CRC"
        chunks.append((ctype.decode("ascii"), payload))
        at += 12 + length
    return chunks


def spec_source_hash(compiler: str, source: str, assets: Path, deps: list[str]) -> str:
    """SHA-256 over "veduta-cook/1\\n", the compiler version and "\\n", then "source <path>
    <length>\\n" and the source bytes, then for each dependency in deps order "dep <path>
    <length>\\n" and its bytes ("missing <path>\\n" when it cannot be read)."""
    h = hashlib.sha256(b"veduta-cook/1\n" + compiler.encode() + b"\n")
    src = (assets / source).read_bytes()
    h.update(f"source {source} {len(src)}\n".encode() + src)
    for dep in deps:
        p = assets / dep
        if p.is_file():
            b = p.read_bytes()
            h.update(f"dep {dep} {len(b)}\n".encode() + b)
        else:
            h.update(f"missing {dep}\n".encode())
    return h.hexdigest()


def accept(path: Path, assets: Path) -> dict:
    """Read one cooked file as the engine would, and check its META against the spec; its META."""
    chunks = read_vda(path.read_bytes())
    metas = [p for t, p in chunks if t == "META"]
    assert len(metas) == 1 and chunks[0][0] == "META", "exactly one META, first"
    meta = json.loads(metas[0])
    assert list(meta) == KEYS, "META keys in sorted order"
    canonical = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert canonical == metas[0], "canonical META (no whitespace, UTF-8, no escapes beyond JSON's)"
    assert meta["compiler"] == SPEC_COMPILER, f"compiler {meta['compiler']!r}"
    assert meta["deps"] == sorted(set(meta["deps"])), "deps sorted without duplicates"
    bodies = [t for t, _ in chunks if t in BODY.values()]
    assert bodies == [BODY[meta["kind"]]], f"one {BODY[meta['kind']]} body, found {bodies}"
    assert meta["name"] == path.stem and meta["source"].rsplit("/", 1)[-1].rsplit(".", 1)[0] == meta["name"]
    assert meta["source_hash"] == spec_source_hash(meta["compiler"], meta["source"], assets, meta["deps"]), (
        "source_hash is not the spec's recipe over the source and deps"
    )
    return meta


def cook(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VEDUTA_FORMAT", "VEDUTA_CACHE_URL")}
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "cook"], cwd=root, capture_output=True, text=True, timeout=600, env=env
    )
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_every_cooked_sample_file_is_accepted_with_the_specs_compiler_and_hash(tmp_path):
    game = tmp_path / "game"
    shutil.copytree(ROOT / "assets", game / "assets", ignore=shutil.ignore_patterns(".cooked", "__pycache__"))
    cook(game)
    assets = game / "assets"
    cooked = sorted((assets / ".cooked").rglob("*.vda"))
    golden = json.loads((ROOT / "tests/fixtures/golden_hashes.json").read_text(encoding="utf-8"))["meta"]
    assert len(cooked) == len(golden)
    got = {}
    for path in cooked:
        meta = accept(path, assets)
        got[meta["source"]] = {"compiler": meta["compiler"], "deps": meta["deps"]}
    assert got == golden  # the pins of tests/fixtures/golden_hashes.json are what the cook writes


@pytest.mark.parametrize("with_material", [False, True])
def test_the_specs_crate_example_has_no_deps_whether_or_not_its_material_exists(tmp_path, with_material):
    """container-vda.md's example META: the crate (naming the material crate_wood) has
    "deps": []; a model's MESH keeps a material by name, never its bytes."""
    game = tmp_path / "game"
    (game / "assets/models").mkdir(parents=True)
    (game / "assets/models/crate.vmodel").write_text(
        '{\n  "veduta": "model/1",\n  "pivot": "bottom-center",\n  "parts": [\n    { "shape": "box", "size": '
        '[1, 1, 1], "position": [0, 0.5, 0], "material": "crate_wood" }\n  ]\n}\n'
    )
    if with_material:
        (game / "assets/materials").mkdir()
        (game / "assets/materials/crate_wood.vmaterial").write_text('{ "veduta": "material/1", "albedo": "#8a6a40" }\n')
    cook(game)
    meta = accept(game / "assets/.cooked/models/crate.vda", game / "assets")
    assert (meta["compiler"], meta["deps"], meta["kind"], meta["name"], meta["source"]) == (
        SPEC_COMPILER,
        [],
        "model",
        "crate",
        "models/crate.vmodel",
    )
