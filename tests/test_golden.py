"""Golden bytes: every sample asset cooks to the bytes pinned in tests/fixtures/golden_hashes.json,
on any machine, and whichever SIMD code numpy picks for this CPU.

The pins were written on x86-64 with AVX-512; CI on another CPU, OS or C library compares against
them. After an intended change to cooked bytes run ``.venv/bin/python tests/fixtures/update_golden.py``
and commit the new file together with the change.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "fixtures" / "update_golden.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("update_golden", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


golden = _load_script()


def _differences(got: dict, want: dict) -> list[str]:
    lines = []
    for section in sorted(set(got) | set(want)):
        g, w = got.get(section, {}), want.get(section, {})
        for key in sorted(set(g) | set(w)):
            if g.get(key) != w.get(key):
                lines.append(f"{section}/{key}: pinned {w.get(key, 'nothing')}, now {g.get(key, 'nothing')}")
    return lines


def _check(got: dict, label: str = "") -> None:
    want = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    diff = _differences(got, want)
    assert not diff, (
        f"cooked bytes differ from tests/fixtures/golden_hashes.json{label}:\n  "
        + "\n  ".join(diff)
        + "\nIf the change is intended, run .venv/bin/python tests/fixtures/update_golden.py and commit the file."
    )


def test_every_sample_asset_cooks_to_the_pinned_bytes():
    _check(golden.golden_hashes())


def test_the_pins_cover_every_sample_source():
    want = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    sources = golden.asset_sources(ROOT / "assets")
    assert sorted(want["assets"]) == sources
    assert {rel.split("/")[0] for rel in sources} >= {"models", "textures", "materials", "scenes", "prefabs",
                                                      "worlds", "maps"}  # fmt: skip


def _cpu_configs() -> list[tuple[str, str]]:
    """(label, NPY_DISABLE_CPU_FEATURES) turning off numpy's AVX-512 code, then all its optional SIMD
    code (only targets this CPU has; numpy refuses to disable its baseline)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath
    targets = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
    configs = []
    no512 = [f for f in targets if "512" in f or f == "X86_V4"]
    if no512 and len(no512) < len(targets):
        configs.append(("no-avx512", " ".join(no512)))
    if targets:
        configs.append(("baseline", " ".join(targets)))
    return configs


@pytest.mark.parametrize("label,disabled", _cpu_configs() or [pytest.param("none", "", marks=pytest.mark.skip(
    reason="numpy has no optional SIMD code on this CPU"))])  # fmt: skip
def test_same_bytes_whatever_simd_code_numpy_runs(label, disabled):
    """numpy's arctan2/arccos (among others) give other last bits without AVX-512; the cooked
    bytes must not change (they did for five sample models before veduta.compile.detmath)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NPY_DISABLE_CPU_FEATURES=disabled)
    out = subprocess.run([sys.executable, str(SCRIPT), "--print"], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    _check(json.loads(out.stdout), f" with NPY_DISABLE_CPU_FEATURES={disabled!r}")
