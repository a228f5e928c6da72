"""A compiler that is numpy's first import keeps OpenBLAS to one thread (veduta.compile._load):
its thread pool is most of what importing numpy costs one edited source.  Each case runs in a
fresh process (numpy imports once per process), and is compared with plain ``import numpy``
under the thread count that case should amount to."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc (Linux)")

#: the threads of the process and the variable, after CODE
REPORT = "import os; print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))"


def run(code: str, blas: str | None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if blas is not None:
        env["OPENBLAS_NUM_THREADS"] = blas
    cp = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"], env=env, capture_output=True, text=True, timeout=120
    )
    assert cp.returncode == 0, cp.stderr
    threads, var = cp.stdout.split()
    return int(threads), var


COMPILE = "from veduta.compile import get_compiler; get_compiler('model'); import numpy"
BATCH = (
    "from veduta.compile import compile_sources\n"
    "from tests.compile.test_blas_threads import two_models\n"
    "assert all(compile_sources('model', two_models()))"
)


def two_models():
    """Two small models to compile in one batch (``compile_sources``: the batch compiler's path)."""
    from tests.gamerepo import BARREL, CRATE
    from veduta.base.project import AssetIndex
    from veduta.compile import CompileContext
    from veduta.source.diagnostics import Report

    index = AssetIndex.from_paths([])
    return [
        (src.encode(), CompileContext(".", f"models/{n}.vmodel", "model", n, Report(f"{n}.vmodel"), index))
        for n, src in (("crate", CRATE), ("barrel", BARREL))
    ]


@pytest.mark.parametrize("code", [COMPILE, BATCH], ids=["get_compiler", "compile_sources"])
def test_the_first_import_of_numpy_by_a_compiler_starts_no_blas_thread(code):
    one = run("import numpy", "1")
    assert run(code, None) == (one[0], "None")  # one thread, as OPENBLAS_NUM_THREADS=1; the variable unset


def test_a_thread_count_the_user_asked_for_is_kept():
    assert run(COMPILE, "2") == run("import numpy", "2")
    assert run(COMPILE, "2")[1] == "2"


def test_numpy_imported_before_is_left_as_it_was():
    assert run("import numpy\n" + COMPILE, None) == run("import numpy", None)


#: another thread starts a process over and over while a compiler is numpy's first import; prints
#: how many it started and how many of them saw the variable
BESIDE = """
import subprocess, threading
from veduta.compile import get_compiler
seen, stop = [], threading.Event()
def spawn():
    while not stop.is_set():
        cp = subprocess.run(['sh', '-c', 'echo $OPENBLAS_NUM_THREADS'], capture_output=True, text=True)
        seen.append(cp.stdout.strip())
t = threading.Thread(target=spawn)
t.start()
while not seen:
    pass
get_compiler('model')
stop.set()
t.join()
print(len(seen), sum(1 for s in seen if s))
"""


def test_with_another_thread_running_the_variable_is_never_set():
    """With another thread running (doit -n N), a process it starts meanwhile would inherit the
    variable: the compiler is then imported as numpy imports, the environment untouched. (Found
    by review: 46 of 46 processes started during the import saw OPENBLAS_NUM_THREADS=1.)"""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    cp = subprocess.run([sys.executable, "-c", BESIDE], env=env, capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    started, saw = map(int, cp.stdout.split())
    assert started >= 2 and saw == 0, cp.stdout
