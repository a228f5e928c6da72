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


def test_numbas_own_switch_means_no_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """``NUMBA_DISABLE_JIT=1`` would make every kernel plain Python (the same bytes, but far slower
    than numpy and with overflow warnings from the hashes' uint64 constants): it is read as
    ``VEDUTA_JIT=0`` is, at each call; numba's own reading of it (its config) too."""
    monkeypatch.setenv(jit.ENV, "1")
    for off in ("1", "2", " 1"):
        monkeypatch.setenv(jit.NUMBA_OFF, off)
        assert not jit.enabled()
        with jit.wanted():
            assert not jit.enabled()
        with pytest.raises(RuntimeError, match="turned off by NUMBA_DISABLE_JIT"):
            jit.kernel(lambda: 0)()
    for on in ("0", "", "yes"):  # (numba takes a value that is not a whole number as 0, warning)
        monkeypatch.setenv(jit.NUMBA_OFF, on)
        assert jit.enabled()
    monkeypatch.delenv(jit.NUMBA_OFF)
    assert jit.enabled()
    monkeypatch.setattr(numba.config, "DISABLE_JIT", 1)  # (numba imported with it)
    assert not jit.enabled()


# -- through the command, on the sample valley ---------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALL = ["inspect", "world", "valley", "--all", "--json", "--views-file", "views.jsonl"]


def _veduta(root, argv: list[str], env: dict[str, str], limit: int | None = None):
    """``python ARGV`` in the game *root*, with *env* over this process's environment (without the
    caller's kernel switches) and an address-space *limit* in bytes (``ulimit -v``): the finished
    process (its stdout and stderr as bytes) and the views file's bytes (None: none written)."""

    limited = None
    if limit is not None:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        limited = lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, hard))  # noqa: E731 (in the child)

    full = {k: v for k, v in os.environ.items() if k not in (jit.ENV, jit.NUMBA_OFF)} | env
    (root / "views.jsonl").unlink(missing_ok=True)
    cp = subprocess.run(
        [sys.executable, *argv],
        cwd=root,
        env=full,
        capture_output=True,
        preexec_fn=limited,
        timeout=600,
    )
    views = (root / "views.jsonl").read_bytes() if (root / "views.jsonl").exists() else None
    return cp, views


@pytest.fixture(scope="module")
def valley(tmp_path_factory):
    """The sample game, cooked, and the numpy path's answer to ``inspect world valley --all
    --json --views-file views.jsonl``: ``(root, stdout, views)``."""
    import shutil

    root = tmp_path_factory.mktemp("jit") / "game"
    shutil.copytree(os.path.join(ROOT, "assets"), root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    cp, views = _veduta(root, ["-m", "veduta", *ALL], {jit.ENV: "0"})
    assert cp.returncode == 0, cp.stderr
    assert b'"views_file": "views.jsonl"' in cp.stdout and views
    return root, cp.stdout, views


def test_numbas_own_switch_gives_the_numpy_path(valley) -> None:
    """Before, the kernels ran as Python: a RuntimeWarning (overflow) from the first hash, here an
    error, and minutes instead of seconds."""
    root, want, views = valley
    cp, got = _veduta(root, ["-W", "error::RuntimeWarning", "-m", "veduta", *ALL], {jit.ENV: "1", jit.NUMBA_OFF: "1"})
    assert (cp.returncode, cp.stderr, cp.stdout, got) == (0, b"", want, views)
    code = "import sys; from veduta.world import jit; print(jit.enabled(), 'numba' in sys.modules)"
    cp, _ = _veduta(root, ["-c", code], {jit.ENV: "1", jit.NUMBA_OFF: "1"})
    assert cp.stdout == b"False False\n"  # (not even imported)


#: ``python -c`` this ``ARGS...``: ``veduta ARGS``, then the process's peak address space (kB,
#: /proc/self/status's VmPeak) on a last line of stderr
PEAK = """
import sys
from veduta.faces.cli.main import main

code = main(sys.argv[1:])
peak = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmPeak:")]
sys.stderr.write(peak[0] + "\\n")
sys.exit(code)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="a limit of address space (RLIMIT_AS) as Linux keeps it")
def test_too_little_memory_for_numba_gives_the_numpy_path(valley) -> None:
    """Under a limit the numpy path fits in (``ulimit -v 400000`` here), numba and LLVM loaded but
    left too little for numpy's BLAS buffers: OpenBLAS ended the process (``OpenBLAS error: Memory
    allocation still failed after 10 retries, giving up.``, 1); a limit a little higher, a
    MemoryError while compiling ("out of memory", 1). Now the room numba needs is asked for first,
    and refused: one warning line, then the numpy path's bytes. (The limit: 400 MB, or the numpy
    path's own peak and 100 MB where that is more: a machine of many cores, whose BLAS threads'
    stacks take address space.)"""
    root, want, views = valley
    cp, _ = _veduta(root, ["-c", PEAK, *ALL], {jit.ENV: "0"})
    assert cp.returncode == 0 and cp.stdout == want
    limit = max(400_000 * 1024, (int(cp.stderr.splitlines()[-1]) + 100_000) * 1024)
    cp, got = _veduta(root, ["-m", "veduta", *ALL], {jit.ENV: "1"}, limit=limit)
    assert cp.stderr.decode() == (
        f"veduta: warning: numba's kernels need about {jit.ROOM >> 20} MB more than this process can get: "
        "the numpy path instead (the same answers, slower)\n"
    )
    assert (cp.returncode, cp.stdout, got) == (0, want, views)


#: ``python -c`` this ``NAME ARGS...``: ``veduta ARGS`` where kernel NAME runs out of memory as it is
#: compiled or loaded (as numba does under a memory limit: a MemoryError from its compiler)
FAILING = """
import sys
from veduta.faces.cli.main import main
from veduta.world import jit

name, real = sys.argv[1], jit.helper


def helper(fn):
    if fn.__name__ != name:
        return real(fn)

    def out_of_memory(*args):
        raise MemoryError()

    return out_of_memory


jit.helper = helper
sys.exit(main(sys.argv[2:]))
"""


def test_a_kernel_out_of_memory_starts_the_views_again_by_numpy(valley) -> None:
    """A kernel that runs out of memory while numba compiles or loads it, half way through the
    pass over every chunk (the views' kernel, the last one compiled): the kernels are off for the
    rest of the process, one warning line says so, and the views start again by numpy: the same
    report and views file as the numpy path's."""
    root, want, views = valley
    cp, got = _veduta(root, ["-c", FAILING, "_views", *ALL], {jit.ENV: "1"})
    assert cp.stderr.decode() == (
        "veduta: warning: numba ran out of memory compiling or loading _views: "
        "the numpy path instead (the same answers, slower)\n"
    )
    assert (cp.returncode, cp.stdout, got) == (0, want, views)


def test_a_ctrl_c_handler_of_an_embedding_program_is_left_alone(tmp_path) -> None:
    """A program embedding Python with its own SIGINT handler (set in C): ``signal.getsignal``
    gives None, and Python cannot put that handler back: a kernel's first call is made as it is
    (it raised TypeError, restoring None), and the program's handler is still the one in place."""
    import shutil
    import sysconfig

    cc = shutil.which(sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc")
    include, libdir = sysconfig.get_paths()["include"], sysconfig.get_config_var("LIBDIR")
    if not (cc and sysconfig.get_config_var("Py_ENABLE_SHARED") and os.path.isfile(f"{include}/Python.h")):
        pytest.skip("no C compiler, or no shared libpython to embed")
    (tmp_path / "host.c").write_text(
        "#include <Python.h>\n#include <signal.h>\n#include <unistd.h>\n"
        'static void host_handler(int signum) { (void)signum; write(1, "host\\n", 5); }\n'
        "int main(int argc, char **argv) {\n"
        "    signal(SIGINT, host_handler);\n"
        "    Py_InitializeEx(0);\n"
        "    int rc = PyRun_SimpleString(argv[1]);\n"
        "    if (Py_FinalizeEx() < 0) rc = 1;\n"
        "    return rc ? 1 : 0;\n"
        "}\n"
    )
    lib = f"python{sysconfig.get_config_var('LDVERSION')}"
    subprocess.run(
        [cc, "host.c", f"-I{include}", f"-L{libdir}", f"-l{lib}", f"-Wl,-rpath,{libdir}", "-o", "host"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    code = (
        "import os, signal, sys, time\n"
        "from veduta.world import jit\n"
        "print(signal.getsignal(signal.SIGINT), flush=True)\n"
        "print(jit.interrupt_after(lambda: 7), flush=True)\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(0.05)\n"
        "print('still here', flush=True)\n"
    )
    path = os.pathsep.join(p for p in sys.path if p)
    cp = subprocess.run(
        [str(tmp_path / "host"), code],
        env=os.environ | {"PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (cp.returncode, cp.stdout, cp.stderr) == (0, "None\n7\nhost\nstill here\n", "")
