"""Shared pieces of the export tests: a copy of the sample game and the Khronos glTF Validator."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np

from bench import games
from veduta.tools.export.glb import read_glb

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "export" / "gltf_validate.js"
VALIDATOR = ROOT / "node_modules" / "gltf-validator"


def sample_game(dest: Path) -> Path:
    """A copy of the repo's sample assets (without cooked files) as a game repo at *dest*."""
    games.sample_game(dest)
    return dest


def validate(*files: Path) -> list[dict]:
    """The validator's report of each file (node and `make node_modules/.installed` must have run)."""
    assert shutil.which("node"), "node is not on PATH: the glTF tests need Node.js"
    assert VALIDATOR.is_dir(), f"{VALIDATOR} is missing: run `make node_modules/.installed` (make test does)"
    proc = subprocess.run(["node", str(SCRIPT), *map(str, files)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def problems(report: dict) -> list[dict]:
    """The errors and warnings of a report (severity 0 and 1)."""
    return [m for m in report["issues"]["messages"] if m["severity"] <= 1]


def accessor_array(doc: dict, binary: bytes, index: int) -> np.ndarray:
    """The data of accessor *index* as a numpy array (float32 VEC2/VEC3 or u32 SCALAR)."""
    acc = doc["accessors"][index]
    bv = doc["bufferViews"][acc["bufferView"]]
    width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3}[acc["type"]]
    dtype = {5126: "<f4", 5125: "<u4"}[acc["componentType"]]
    stride = bv.get("byteStride", 4 * width)
    start = bv.get("byteOffset", 0) + acc.get("byteOffset", 0)
    raw = np.frombuffer(binary, np.uint8, count=bv["byteLength"] - acc.get("byteOffset", 0), offset=start)
    rows = []
    for i in range(acc["count"]):
        rows.append(np.frombuffer(raw[i * stride : i * stride + 4 * width].tobytes(), dtype))
    return np.array(rows).reshape(acc["count"], width) if width > 1 else np.array(rows).reshape(-1)


def load(path: Path) -> tuple[dict, bytes]:
    return read_glb(path.read_bytes())
