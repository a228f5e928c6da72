"""``bench_lsp()``: how soon ``veduta lsp`` answers an edit, and its memory (``make bench``).

Goal (issue 21): the diagnostics of a change to a typical source arrive well under 100 ms. The
server runs as an editor runs it: its own process on stdio, driven here by a plain JSON-RPC
client (Content-Length framing, no LSP library). Each figure is the time from writing a change
to reading its diagnostics, the server's debounce set to 0 so that the figure is the server's
own work plus the pipe (an editor adds the debounce, 30 ms by default); the edits, sent as an
editor sends them (the range that changed), alternate a mistake and its fix, so every change
has diagnostics to publish. The typical source is the
sample crate model, the heavy one the largest sample world, and beside them that world grown to
the most places a world may have (4,096; opened as an unsaved buffer, never written). Memory:
the server's resident size after 100 and after 1,000 edits of the typical source (it should
stay flat).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ASSETS = HERE / "assets"
GOAL_MS = 100.0


class Client:
    """The smallest LSP client: JSON-RPC messages with Content-Length headers over a pipe."""

    def __init__(self, root: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "veduta", "lsp"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, method: str, params, request: bool = False) -> int | None:
        msg: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        body = json.dumps(msg).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()
        return msg.get("id")

    def receive(self) -> dict:
        out = self.proc.stdout
        assert out is not None
        length = 0
        while True:
            line = out.readline()
            if not line:
                raise EOFError("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(out.read(length))

    def request(self, method: str, params) -> dict:
        rid = self.send(method, params, request=True)
        while True:
            msg = self.receive()
            if msg.get("id") == rid and "method" not in msg:
                return msg
            if "method" in msg and "id" in msg:  # a request of the server (registerCapability)
                self.reply(msg["id"])

    def reply(self, rid) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": None}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def diagnostics(self, uri: str, version: int) -> list:
        while True:
            msg = self.receive()
            if (
                msg.get("method") == "textDocument/publishDiagnostics"
                and msg["params"]["uri"] == uri
                and msg["params"].get("version") == version
            ):
                return msg["params"]["diagnostics"]
            if "method" in msg and "id" in msg:
                self.reply(msg["id"])

    def close(self) -> int:
        self.request("shutdown", None)
        self.send("exit", None)
        return self.proc.wait(60)


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


def _edits(client: Client, uri: str, text: str, good: str, bad: str, n: int, rss_at=()) -> tuple[list[float], dict]:
    """*n* changes of the first *good* in *text* to *bad* and back, as an editor sends them (the
    range that changed; the text is ASCII, so characters are UTF-16 units): the seconds from
    each change to its diagnostics, and the server's resident size after the edits of
    *rss_at*."""
    at = text.index(good)
    line = text.count("\n", 0, at)
    char = at - (text.rfind("\n", 0, at) + 1)
    times, rss = [], {}
    for i in range(1, n + 1):
        old, new = (good, bad) if i % 2 else (bad, good)
        change = {
            "range": {"start": {"line": line, "character": char}, "end": {"line": line, "character": char + len(old)}},
            "text": new,
        }
        t0 = time.perf_counter()
        client.send(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": i + 1}, "contentChanges": [change]}
        )
        found = client.diagnostics(uri, i + 1)
        times.append(time.perf_counter() - t0)
        assert bool(found) == bool(i % 2), (i, found)
        if i in rss_at and os.path.isdir("/proc/self"):
            rss[i] = _rss_kb(client.proc.pid)
    return times, rss


def _largest_world() -> Path:
    return max(ASSETS.glob("worlds/**/*.vworld"), key=lambda p: (p.stat().st_size, str(p)))


def _largest_legal_world(world: Path) -> str:
    """*world* with the most places a world may have (4,096), each a well on a grid: the text a
    large hand-edited world reaches (about 450 kB)."""
    from veduta.compile.world import MAX_PLACES

    doc = json.loads(world.read_text(encoding="utf-8"))
    doc["places"] = [
        {"name": f"p{k}", "prefab": "well", "cell": [-400 + (k % 64) * 12, -400 + (k // 64) * 12]}
        for k in range(MAX_PLACES)
    ]
    return json.dumps(doc, indent=2) + "\n"


def bench_lsp(edits: int = 1000, world_edits: int = 100, large_edits: int = 10) -> dict:
    """Figures of ``make bench``: change-to-diagnostics medians and 95th percentiles for the
    crate model, the largest sample world and (unsaved, beside it) that world with 4,096
    places, the server's start (initialize), and its memory."""
    crate = ASSETS / "models" / "crate.vmodel"
    world = _largest_world()
    large = world.with_name("bench_places.vworld")  # never written: an unsaved buffer
    large_text = _largest_legal_world(world)
    out: dict = {}
    client = Client(HERE)
    try:
        t0 = time.perf_counter()
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": HERE.as_uri(),
                "capabilities": {},
                "initializationOptions": {"debounce_ms": 0},
            },
        )
        client.send("initialized", {})
        out["initialize_s"] = time.perf_counter() - t0
        heavy = f"world {world.stem} ({world.stat().st_size // 1024} kB)"
        largest = f"world of 4,096 places ({len(large_text) // 1024} kB)"
        for path, good, bad, n, label in (
            (crate, '"box"', '"boxx"', edits, "crate model"),
            (world, '"meadow"', '"meadox"', world_edits, heavy),
            (large, '"meadow"', '"meadox"', large_edits, largest),
        ):
            uri = path.as_uri()
            text = large_text if path == large else path.read_text(encoding="utf-8")
            t0 = time.perf_counter()
            client.send(
                "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": text}}
            )
            client.diagnostics(uri, 1)
            out[f"{label}: open_s"] = time.perf_counter() - t0
            times, rss = _edits(client, uri, text, good, bad, n, rss_at=(100, n) if path == crate else ())
            times.sort()
            out[f"{label}: change to diagnostics, median_s"] = statistics.median(times)
            out[f"{label}: change to diagnostics, 95%_s"] = times[int(0.95 * (len(times) - 1))]
            for at, kb in rss.items():
                out[f"{label}: server memory after {at} edits"] = f"{kb / 1024:.1f} MiB"
            client.send("textDocument/didClose", {"textDocument": {"uri": uri}})
        out["goal"] = f"change to diagnostics of a typical source well under {GOAL_MS:.0f} ms"
    finally:
        out["exit status"] = client.close()
    return out


if __name__ == "__main__":
    for k, v in bench_lsp().items():
        print(f"  {k:56} {v * 1000:9.2f} ms" if k.endswith("_s") else f"  {k:56} {v}")
