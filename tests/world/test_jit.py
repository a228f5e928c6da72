"""The compiled kernels' switch (veduta/world/jit.py): numba when installed, off with VEDUTA_JIT=0;
a kernel computes what its plain function computes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from veduta.world import jit

numba = pytest.importorskip("numba")


@jit.kernel
def _dot_plus(a: np.ndarray, b: np.ndarray, d: float) -> np.ndarray:
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i, 0] * b[i, 0] + a[i, 1] * b[i, 1] + a[i, 2] * b[i, 2] + d
    return out


def test_a_kernel_gives_the_numpy_paths_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(jit.ENV, raising=False)
    assert jit.available()
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(1000, 3)) * 1e4, rng.normal(size=(1000, 3))
    got = _dot_plus(a, b, 0.1)
    # the numpy path's order: ((a0 b0 + a1 b1) + a2 b2) + d, no fused multiply-add
    want = a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2] + 0.1
    assert got.tobytes() == want.tobytes()
    assert _dot_plus.__wrapped__(a[:5], b[:5], 0.1).tobytes() == want[:5].tobytes()  # type: ignore[attr-defined]


def test_only_where_wanted_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(jit.ENV, raising=False)
    assert not jit.enabled()  # a world edit, a preview, the named views: numpy
    with jit.wanted():
        assert jit.enabled()
        with jit.wanted(False):  # (nested: still wanted)
            assert jit.enabled()
        seen: list[bool] = []
        t = threading.Thread(target=lambda: seen.append(jit.enabled()))
        t.start()
        t.join()
        assert seen == [False]  # (another thread's pass is its own)
    assert not jit.enabled()
    monkeypatch.setenv(jit.ENV, "1")
    assert jit.enabled()
    for off in ("0", "false", "No", " OFF "):
        monkeypatch.setenv(jit.ENV, off)
        with jit.wanted():
            assert not jit.enabled()
    for on in ("1", "true", "Yes", "on"):
        monkeypatch.setenv(jit.ENV, on)
        assert jit.enabled()
    monkeypatch.setenv(jit.ENV, "off")
    with pytest.raises(RuntimeError, match="turned off by VEDUTA_JIT"):
        jit.kernel(lambda: 0)()


def test_the_cook_never_imports_numba() -> None:
    code = (
        "import sys, veduta.api, veduta.cook.cook, veduta.world.draw, veduta.world.jit; print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_ctrl_c_while_a_kernel_compiles_is_acted_on_once_it_is_done() -> None:
    """numba compiles through LLVM callbacks that swallow a KeyboardInterrupt (a traceback or a
    segfault instead of the CLI's one line and 130): the signal is held, then raised."""
    done: list[str] = []

    def compiling() -> str:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # (a handler runs between bytecodes: it has run by now)
        done.append("compiled")
        return "kernel"

    with pytest.raises(KeyboardInterrupt):
        jit.interrupt_after(compiling)
    assert done == ["compiled"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert jit.interrupt_after(lambda: 7) == 7  # (no signal: the call's value)


def test_the_kernels_cache_is_named_by_the_code_they_run(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """numba's cache looks only at a kernel's own file: the layer kernels call intmath's functions,
    so the folder is named by a digest of every module the kernels run (and numba's version)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    here = os.path.dirname(jit.__file__)
    a = jit.cache_folder("0.68.1")
    assert os.path.dirname(a) == str(tmp_path / "veduta-kernels")
    assert jit.cache_folder("0.68.1") == a and jit.cache_folder("0.69.0") != a
    assert set(jit.SOURCES) >= {"intmath.py", "layer_kernels.py", "view_kernels.py", "chunk_kernels.py"}
    for name in jit.SOURCES:
        assert os.path.isfile(os.path.join(here, name)), name
    # a change to intmath.py alone (a copy of the package's world folder, one byte more)
    copy = tmp_path / "world"
    copy.mkdir()
    for name in jit.SOURCES:
        (copy / name).write_bytes(open(os.path.join(here, name), "rb").read())
    monkeypatch.setattr(jit, "__file__", str(copy / "jit.py"))
    assert jit.cache_folder("0.68.1") == a
    with open(copy / "intmath.py", "a") as f:
        f.write("\n")
    assert jit.cache_folder("0.68.1") != a
