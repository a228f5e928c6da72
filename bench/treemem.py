"""Peak memory of a whole process tree (a command and the worker processes it starts).

``ru_maxrss`` (and GNU time's ``%M``) is the peak of the largest single process: a cook's
workers would not count.  :func:`run_tree` samples the tree instead, every *every* seconds
while the command runs: the processes whose parent chain leads to it (found from
``/proc/*/stat``), each counted by its proportional set size (``Pss`` of
``/proc/PID/smaps_rollup``: a page shared by a forked worker with its parent counts once,
split between them), summed; the peak of that sum.  Linux only; elsewhere (or when /proc
cannot be read) the figure is None.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process this one may see."""
    out: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        out[int(name)] = int(fields[1])
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_pss_kib(root: int) -> tuple[int, int]:
    """(summed Pss in KiB, number of processes) of *root* and its descendants now."""
    parents = _parents()
    members = {root}
    grew = True
    while grew:  # (a few rounds: the tree is shallow)
        grew = False
        for pid, ppid in parents.items():
            if ppid in members and pid not in members:
                members.add(pid)
                grew = True
    return sum(_pss_kib(p) for p in members), len(members)


def run_tree(cmd: list[str], cwd: str, env: dict | None = None, every: float = 0.02) -> tuple[float, int | None, int]:
    """Run *cmd* to its end: (wall seconds, peak summed Pss of its process tree in KiB or None,
    the most processes seen at once).  Raises SystemExit when the command fails."""
    if not os.path.exists("/proc/self/smaps_rollup"):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0, None, 1
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        peak, most = 0, 1
        while p.poll() is None:
            kib, n = tree_pss_kib(p.pid)
            peak, most = max(peak, kib), max(most, n)
            time.sleep(every)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read().decode('utf-8', 'replace')}")
    return dt, peak, most
