"""Ctrl-C of a ``veduta`` command in its start: the imports of its modules, before an interrupted
rename is completed, before the command runs. Each ends with one line, ``veduta: interrupted``,
and exit status 130 (it was a KeyboardInterrupt traceback, from the import of the CLI's modules
or the parser, and a silent 130 later). Real processes, with SIGINT not ignored (as a shell's
background job would have it), sent where the test hook ``VEDUTA_TEST_PAUSE_START`` holds the
start (veduta/faces/cli/__init__.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from veduta.faces.cli.start import INTERRUPTED, PAUSE_START

#: the ``veduta`` console script of this environment (pyproject.toml [project.scripts])
SCRIPT = Path(sys.executable).parent / "veduta"


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # (inherited as ignored, Python would ignore it too)


def _ctrl_c_at(game, phase: str, command: list[str]) -> tuple[int, str, str]:
    """Start *command* in the game with the start held at *phase*, send it SIGINT once it says it is
    there: (status, stdout, stderr after the hook's line)."""
    p = subprocess.Popen(
        command,
        cwd=game.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, PAUSE_START: phase},
        preexec_fn=_sigint_default,
    )
    try:
        assert p.stderr is not None
        said = p.stderr.readline()
        assert said == f"start: {phase}\n", (said, p.communicate(timeout=60))
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err


@pytest.mark.parametrize("phase", ["import", "edits", "command"])
@pytest.mark.parametrize("args", [["cook"], ["check", "--json"], ["list"]])
def test_ctrl_c_in_the_start_of_a_command_is_one_line_and_130(game, args, phase):
    rc, out, err = _ctrl_c_at(game, phase, [sys.executable, "-m", "veduta", *args])
    assert (rc, out, err) == (130, "", f"{INTERRUPTED}\n")
    assert not (game.root / "assets/.cooked").exists()  # stopped before it cooked


@pytest.mark.skipif(not SCRIPT.is_file(), reason="the veduta script is not installed next to this Python")
def test_ctrl_c_in_the_imports_of_the_veduta_script_is_one_line_and_130(game):
    """The installed ``veduta`` script (its entry point, veduta.faces.cli:run, imports nothing
    heavy: Ctrl-C in the import of the command's modules is caught)."""
    rc, out, err = _ctrl_c_at(game, "import", [str(SCRIPT), "cook"])
    assert (rc, out, err) == (130, "", f"{INTERRUPTED}\n")


def test_the_entry_point_module_imports_nothing():
    """What runs before the entry point's handler is in place: veduta/__init__.py, veduta/faces
    and veduta/faces/cli/__init__.py, none of which imports a module (a Ctrl-C there would be a
    traceback again); nor does veduta/faces/cli/start.py, which its handler imports."""
    code = (
        "import sys; before = set(sys.modules); import veduta.faces.cli, veduta.faces.cli.start; "
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith('veduta')))"
    )
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert cp.stdout == "[]\n", cp.stdout
