"""Running a command with its standard error on a pseudo-terminal (progress lines show only there)."""

from __future__ import annotations

import os
import select
import subprocess


def stderr_on_a_terminal(
    cmd: list[str], cwd: str, env: dict[str, str] | None = None, timeout: float = 300
) -> tuple[int, str, bytes]:
    """(exit status, standard output, standard error's bytes) of *cmd* run in *cwd* with its
    standard error on a pseudo-terminal and its standard output a pipe (as ``cmd > file`` typed
    in a terminal)."""
    master, slave = os.openpty()
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        elif p.poll() is not None:
            break
    out = p.communicate(timeout=timeout)[0].decode()
    os.close(master)
    return p.returncode, out, err
