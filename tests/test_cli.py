"""The veduta command as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.gamerepo import BAD, CRATE, Game


def veduta(game: Game, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args], cwd=game.root, capture_output=True, text=True, timeout=300
    )


def test_cook_without_dodo_then_dump_and_verify(game):
    (game.root / "dodo.py").unlink()
    cp = veduta(game, "cook", "-n", "2")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert "cook: 4 cooked" in cp.stdout
    cp = veduta(game, "cook")
    assert "cook: 0 cooked, 4 up to date" in cp.stdout
    cp = veduta(game, "dump", "assets/.cooked/models/crate.vda")
    assert cp.returncode == 0
    d = json.loads(cp.stdout)
    assert [c["type"] for c in d["chunks"]] == ["META", "MESH"]
    assert d["chunks"][0]["meta"]["name"] == "crate"
    assert d["chunks"][1]["body"]["bounds"] == [[-0.5, 0.0, -0.5], [0.5, 1.0, 0.5]]
    assert len(d["chunks"][1]["body"]["vertices"]) == 24
    cp = veduta(game, "verify", "assets/.cooked/models/crate.vda", "assets/.cooked/models/tree.vda")
    assert cp.returncode == 0 and cp.stdout.count(": ok,") == 2


def test_cook_json_is_one_object_with_the_summary_and_located_diagnostics(game):
    game.write("models/broken.vmodel", BAD)
    cp = veduta(game, "cook", "--json", "-n", "2")
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert len(cp.stdout.splitlines()) == 1  # nothing of what doit cook prints
    r = json.loads(cp.stdout)
    assert r["ok"] is False
    assert r["summary"] == {
        "cooked": 4,
        "up_to_date": 0,
        "restored": 0,
        "failed": 1,
        "removed": [],
        "with_failed_dependency": 0,
        "warnings": 0,
        "standing_warnings": 0,
        "strict": False,
    }
    errors = [d for d in r["diagnostics"] if d["severity"] == "error"]
    assert len(errors) >= 3 and all(d["file"].endswith("models/broken.vmodel") for d in errors)
    assert {"path": "parts[0].radius", "line": 4, "col": 52} in [
        {k: d[k] for k in ("path", "line", "col")} for d in errors
    ]
    game.write("models/broken.vmodel", CRATE)
    r = json.loads(veduta(game, "cook", "--json").stdout)
    assert r["ok"] is True and r["summary"]["cooked"] == 1 and r["summary"]["up_to_date"] == 4
    cp = veduta(game, "cook", "--json", "models/nope.vmodel")  # a mistake: refused, as JSON too
    assert cp.returncode == 2 and json.loads(cp.stdout)["refused"] is True


def test_cook_only_named_sources(game):
    cp = veduta(game, "cook", "assets/models/crate.vmodel")
    assert "cook: 1 cooked" in cp.stdout, cp.stdout + cp.stderr
    assert game.cooked("models/crate.vda").exists() and not game.cooked("models/tree.vda").exists()


def test_cook_named_sources_from_a_sub_folder(game):
    def cook_from(where, *sources):
        return subprocess.run(
            [sys.executable, "-m", "veduta", "cook", *sources],
            cwd=game.root / where,
            capture_output=True,
            text=True,
            timeout=300,
        )

    cp = cook_from("assets/models", "crate.vmodel")
    assert cp.returncode == 0 and "cook: 1 cooked" in cp.stdout, cp.stdout + cp.stderr
    cp = cook_from("assets", "models/tree.vmodel", str(game.root / "assets/models/props/barrel.vmodel"))
    assert cp.returncode == 0 and "cook: 2 cooked" in cp.stdout, cp.stdout + cp.stderr
    assert not game.cooked("models/tree_far.vda").exists()
    cp = cook_from("assets/models", "nope.vmodel")
    assert cp.returncode == 2 and "no such source" in cp.stdout + cp.stderr, cp.stdout + cp.stderr


def test_verify_reports_every_bad_file(game):
    veduta(game, "cook")
    p = game.cooked("models/crate.vda")
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF
    p.write_bytes(bytes(data))
    cp = veduta(game, "verify", str(p), "assets/.cooked/models/tree.vda", "nope.vda")
    assert cp.returncode == 1
    assert "crate.vda, chunk MESH, byte" in cp.stderr and "CRC mismatch" in cp.stderr
    assert "nope.vda: cannot read" in cp.stderr
    assert "tree.vda: ok" in cp.stdout
    assert "Traceback" not in cp.stderr


def test_cook_errors_without_traceback(game):
    game.write("models/crate.vmodel", BAD)
    cp = veduta(game, "cook")
    assert cp.returncode != 0
    assert "assets/models/crate.vmodel:5:68: parts[1].segments: 2 out of range [3, 256]" in cp.stdout
    assert "Traceback" not in cp.stdout + cp.stderr
    assert "1 failed" in cp.stdout


def test_cache_info_and_prune(game):
    veduta(game, "cook")
    cp = veduta(game, "cache", "info")
    assert "cache/store: " in cp.stdout and " entries" in cp.stdout
    cp = veduta(game, "cache", "prune", "--days", "0", "--dry-run")
    assert cp.returncode == 0 and "would remove" in cp.stdout
    cp = veduta(game, "cache", "prune", "--days", "0")
    assert "removed" in cp.stdout
    assert "0 entries" in veduta(game, "cache", "info").stdout


def test_dump_of_a_bad_file(game, tmp_path):
    (tmp_path / "x.vda").write_bytes(b"NOPE")
    cp = veduta(game, "dump", str(tmp_path / "x.vda"))
    assert cp.returncode == 1 and "bad magic" in cp.stderr


def test_a_huge_argument_is_quoted_in_part_with_its_length(game):
    """A 100,000-character name and a 5,000-digit cell were echoed whole (issue 28)."""
    name = "x" * 100_000
    cases = [
        (["inspect", "model", name], 'veduta: no model "' + "x" * 40 + '..." (100000 characters) under assets/models/'),
        (
            ["export", "gltf", name, "--out", "x.glb"],
            'veduta: no model "' + "x" * 40 + '..." (100000 characters) under assets/models/',
        ),
        (
            ["world", "query", "w", "--at", "1" + "0" * 5000 + ",0"],
            'argument --at/--cell: "' + "1" + "0" * 39 + '..." (5003 characters) is far outside any world',
        ),
        (
            ["inspect", "model", "crate", "--nope=" + name],
            "unrecognized arguments: --nope=" + "x" * 33 + "... (100007 characters)",
        ),
        (["cook", f"models/{name}.vmodel"], "no such source"),
    ]
    for args, want in cases:
        for json_too in ([], ["--json"]):
            cp = veduta(game, *args, *json_too)
            out = cp.stdout + cp.stderr
            assert cp.returncode == 2 and len(out) < 1000, (args[:2], json_too, out[:500])
            assert (want if not json_too else want.removeprefix("veduta: ")) in out.replace('\\"', '"'), (
                args[:2],
                json_too,
                out[:500],
            )


def test_cache_prune_json_counts_what_goes_and_what_stays(game):
    import json

    veduta(game, "cook")
    entries = json.loads(veduta(game, "cache", "info", "--json").stdout)["local"]["entries"]
    assert entries > 0
    dry = json.loads(veduta(game, "cache", "prune", "--days", "30", "--dry-run", "--json").stdout)
    assert (
        dry
        == {
            "days": 30.0,
            "dry_run": True,
            "removed": 0,
            "removed_bytes": 0,
            "kept": entries,
            "kept_bytes": dry["kept_bytes"],
        }
        and dry["kept_bytes"] > 0
    )
    gone = json.loads(veduta(game, "cache", "prune", "--days", "0", "--json").stdout)
    assert gone["removed"] == entries and gone["kept"] == 0 and gone["removed_bytes"] == dry["kept_bytes"]
    cp = veduta(game, "cache", "prune", "--days", "-1", "--json")
    assert cp.returncode == 2 and json.loads(cp.stdout)["refused"] is True


def test_source_paths_are_normalised_in_one_place_and_kept_under_assets(game):
    """models//crate.vmodel and models/./crate.vmodel are crate's source (plain_rel), for
    veduta cook (--json too), check, why and doit cook:<path>; a path out of the assets folder
    is no source (exit 2), never a failed one."""
    from veduta.base.project import plain_rel

    assert [plain_rel(p) for p in ("models//crate.vmodel", "./models/./crate.vmodel", "models/x/../crate.vmodel")] == [
        "models/crate.vmodel"
    ] * 3
    assert [plain_rel(p) for p in ("", ".", "..", "../a.vmodel", "models/../../a.vmodel", "/a/b.vmodel")] == [None] * 6
    game.write("scenes/s.vscene", '{ "veduta": "scene/1", "entities": [ { "name": "a", "model": "crate" } ] }\n')

    def one_cooked(cp):  # crate, and no warning (about the scene naming it)
        ok = "cook: 1 cooked" in cp.stdout and " 0 failed (" in cp.stdout and "warning" not in cp.stdout
        assert cp.returncode == 0 and ok, cp.stdout + cp.stderr

    for i, path in enumerate(("models//crate.vmodel", "models/./crate.vmodel")):
        game.write("models/crate.vmodel", CRATE + "\n" * i)  # a text not cooked before
        one_cooked(veduta(game, "cook", path))
        r = json.loads(veduta(game, "cook", "--json", path).stdout)
        assert r["ok"] is True and r["summary"]["up_to_date"] == 1 and r["diagnostics"] == [], r
        assert veduta(game, "check", path).returncode == 0
        assert veduta(game, "why", path).returncode == 0
        game.write("models/crate.vmodel", CRATE + "\n" * i + " ")  # stale again: doit cooks it, named plainly
        one_cooked(game.doit(f"cook:{path}"))
    for path in ("models/../../pyproject.toml", "../assets/models/crate.vmodel", "models/../../dodo.py"):
        cp = veduta(game, "cook", path)
        assert cp.returncode == 2 and "no such source" in cp.stderr, (path, cp.stdout + cp.stderr)
        assert veduta(game, "check", path).returncode == 2


def test_watch_refusals_go_to_stderr_unless_json_was_typed(game):
    """``watch --no-worker`` without ``--monitor`` (hostile3 #7): a ``veduta: ...`` line on stderr
    like every other refusal, once a JSON refusal on stdout although no --json was typed."""
    cp = veduta(game, "watch", "--no-worker")
    assert (cp.returncode, cp.stdout, cp.stderr) == (2, "", "veduta: --no-worker goes with --monitor\n")
    for args in (["--no-worker", "--json"], ["--json"]):
        cp = veduta(game, "watch", *args)
        assert cp.returncode == 2 and cp.stderr == "", cp
        assert json.loads(cp.stdout)["message"].startswith("--json goes with --status"), cp
