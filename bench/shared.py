"""``make bench``: a fresh clone cooking from a warm shared cache against compiling it.

For a generated game (n small models, or the heavy game: worlds, 512 x 512 textures with
mip chains, large models) and each tier served on this machine (an S3 server, moto's,
on 127.0.0.1 when moto is installed; a folder), in whole ``doit`` processes:

- fill: a CI cook from nothing with writes on (compiles and uploads);
- restore: a fresh clone (no cooked files, no cache/) cooking with reads on: everything
  comes from the shared cache, byte-identical to the compiled files (checked);
- compile: the same fresh clone without a shared cache.

The figure is compile / restore, medians of *repeat* runs each, measured in the same run.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def _cooked_digest(root: str) -> str:
    h = hashlib.sha256()
    base = os.path.join(root, "assets", ".cooked")
    for d, dirs, files in sorted(os.walk(base)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(os.path.relpath(p, base).encode() + b"\0")
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def _cook(root: str, jobs: int, env: dict) -> tuple[float, str]:
    from bench.games import _ENV

    e = {k: v for k, v in _ENV.items() if not k.startswith(("VEDUTA_CACHE", "AWS_"))}
    e.update(env)
    t0 = time.perf_counter()
    cp = subprocess.run(
        [sys.executable, "-m", "doit", "-n", str(jobs), "cook"],
        cwd=root,
        env=e,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    dt = time.perf_counter() - t0
    if cp.returncode != 0:
        raise SystemExit(f"cook failed in {root}:\n{cp.stdout[-2000:]}\n{cp.stderr[-2000:]}")
    return dt, cp.stdout.strip().splitlines()[-1]


def _tiers(where: str):
    """(name, env of a writing cook, cleanup) of each tier served here."""
    share = os.path.abspath(tempfile.mkdtemp(prefix="bench-share-", dir=where))
    out = [("folder", {"VEDUTA_CACHE_URL": share}, lambda: shutil.rmtree(share, ignore_errors=True))]
    try:
        import logging

        from moto.server import ThreadedMotoServer
    except ImportError:
        return out
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    srv.start()
    host, port = srv.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    import boto3

    boto3.session.Session().client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        region_name="us-east-1",
    ).create_bucket(Bucket="bench")
    out.append(("s3 (moto server, 127.0.0.1)", dict(env, VEDUTA_CACHE_URL="s3://bench/game"), srv.stop))
    return out


def bench_shared(n: int, jobs: int, repeat: int, where: str = "build", heavy: bool = False) -> dict:
    from bench.games import _fresh, make_game, make_heavy_game

    os.makedirs(where, exist_ok=True)
    root = os.path.abspath(tempfile.mkdtemp(prefix="bench-shared-", dir=where))
    tiers = []
    try:
        if heavy:
            n = make_heavy_game(root)
        else:
            make_game(root, n)
        r: dict = {"assets": n, "jobs": jobs, "heavy": heavy, "tiers": {}}
        compiles = []
        for _ in range(repeat):
            _fresh(root)
            compiles.append(_cook(root, jobs, {})[0])
        r["compile"] = statistics.median(compiles)
        want = _cooked_digest(root)
        tiers = _tiers(where)
        for name, env, _ in tiers:
            _fresh(root)
            fill, _ = _cook(root, jobs, dict(env, VEDUTA_CACHE_WRITE="1"))
            restores = []
            for _ in range(repeat):
                _fresh(root)
                dt, said = _cook(root, jobs, dict(env, VEDUTA_CACHE_WRITE="0"))
                restores.append(dt)
                m = re.search(r"(\d+) from the shared cache", said)
                if not m or int(m.group(1)) != n:
                    raise SystemExit(f"the fresh clone did not restore all {n} sources from {name}: {said}")
                if _cooked_digest(root) != want:
                    raise SystemExit(f"restored files differ from compiled ones ({name})")
            r["tiers"][name] = {"fill": fill, "restore": statistics.median(restores), "said": said}
        return r
    finally:
        for _, _, stop in tiers:
            stop()
        shutil.rmtree(root, ignore_errors=True)


def print_shared(r: dict, repeat: int) -> None:
    what = f"heavy game of {r['assets']} sources" if r["heavy"] else f"{r['assets']} small models"
    print(f"shared cache, {what}, fresh clone, doit -n {r['jobs']} cook (medians of {repeat}):")
    print(f"  {'compile everything (no shared cache)':48} {r['compile']:9.3f} s")
    for name, t in r["tiers"].items():
        print(
            f"  {'restore from ' + name:48} {t['restore']:9.3f} s  "
            f"{r['compile'] / t['restore']:5.2f}x faster than compiling"
        )
        print(
            f"  {'  CI fill (compile + upload), ' + name.split(' ')[0]:48} {t['fill']:9.3f} s  "
            f"{t['fill'] / r['compile']:5.2f}x compiling"
        )
    for name, t in r["tiers"].items():
        print(f"  {name.split(' ')[0]} restore said: {t['said']}")
