"""A source larger than its kind's limit (docs/authoring-tools.md, "Source sizes") is an error at
its 1:1, told from one stat before a byte is read, by every command that reads sources; one at the
limit is read as any other. Deep nesting is a located error in every reader, never a traceback."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

from tests.cook.test_cook import summary
from tests.gamerepo import BARREL, CRATE
from veduta.base.kinds import BY_NAME

MODEL_LIMIT = BY_NAME["model"].max_bytes


def _padded(text: str, size: int) -> str:
    """*text* (a valid source) with spaces before its closing brace, *size* bytes in all."""
    head = text.rstrip().removesuffix("}")
    return head + " " * (size - len(head) - 2) + "}\n"


def _too_large(rel: str, size: int, kind: str = "model") -> str:
    limit = BY_NAME[kind].max_bytes
    return f"assets/{rel}:1:1: $: too large ({size:,} bytes; a {kind} source is at most {limit:,})"


def _no_traceback(cp) -> None:
    assert "Traceback" not in cp.stdout + cp.stderr, cp.stdout + cp.stderr


@pytest.fixture
def big(game):
    """The test game with models/big.vmodel one byte past the model limit (naming material wood)
    and models/props/barrel.vmodel exactly at it."""
    game.write("materials/wood.vmaterial", '{"veduta": "material/1"}\n')
    crate = CRATE.replace('"position": [0, 0.5, 0] }', '"position": [0, 0.5, 0], "material": "wood" }')
    game.write("models/big.vmodel", _padded(crate, MODEL_LIMIT + 1))
    game.write("models/props/barrel.vmodel", _padded(BARREL, MODEL_LIMIT))
    assert (game.root / "assets/models/big.vmodel").stat().st_size == MODEL_LIMIT + 1
    assert (game.root / "assets/models/props/barrel.vmodel").stat().st_size == MODEL_LIMIT
    return game


def test_check_and_the_cook_refuse_a_source_past_its_limit_and_read_one_at_it(big):
    want = _too_large("models/big.vmodel", MODEL_LIMIT + 1)
    cp = big.veduta("check")
    _no_traceback(cp)
    assert cp.returncode == 1
    assert cp.stdout.splitlines()[0] == want  # the one error: the barrel at the limit is good
    assert cp.stdout.count("\n") == 1 and "1 error, 0 warnings" in cp.stderr

    cp = big.veduta("check", "--json")
    assert cp.returncode == 1
    assert json.loads(cp.stdout)["diagnostics"] == [
        {
            "file": "assets/models/big.vmodel",
            "line": 1,
            "col": 1,
            "path": "$",
            "severity": "error",
            "message": want.split(": $: ")[1],
        }
    ]

    cp = big.cook()  # doit cook: a failed source, the others cooked
    _no_traceback(cp)
    assert want in cp.stdout
    assert summary(cp)["failed"] == 1 and summary(cp)["cooked"] == 5
    assert big.cooked("models/barrel.vda").exists() and not big.cooked("models/big.vda").exists()
    cp = big.veduta("cook")
    _no_traceback(cp)
    assert cp.returncode == 1 and want in cp.stdout + cp.stderr


def test_the_graph_tools_and_inspect_refuse_it_too(big):
    cp = big.veduta("rename", "material", "wood", "oak", "--dry-run")
    _no_traceback(cp)
    assert cp.returncode == 1
    assert (
        'these sources hold "wood" but are too large to read, so their references cannot be found: '
        f"assets/models/big.vmodel is too large ({MODEL_LIMIT + 1:,} bytes; a model source is at most "
        f"{MODEL_LIMIT:,}); fix them" in cp.stderr
    )
    cp = big.veduta("rename", "model", "big", "bigger")
    assert cp.returncode == 1
    assert f"cannot read assets/models/big.vmodel: too large ({MODEL_LIMIT + 1:,} bytes" in cp.stderr
    assert (big.root / "assets/models/big.vmodel").exists()

    cp = big.veduta("deps", "wood", "--reverse", "--json")  # the graph reads it as a source naming nothing
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["references"] == []

    cp = big.veduta("list", "model")
    assert cp.returncode == 1
    assert [line.split()[:3] for line in cp.stdout.splitlines() if "big" in line] == [["failed", "model", "big"]]

    cp = big.veduta("inspect", "model", "big")
    _no_traceback(cp)
    assert cp.returncode == 1 and _too_large("models/big.vmodel", MODEL_LIMIT + 1) in cp.stdout + cp.stderr


def _limited(gib: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))

    return limit


def test_a_huge_file_is_never_read(game):
    """An 8 GiB world (a sparse file: no disk used) under a 3 GiB address-space limit: told from its
    size alone (reading it would run out of memory)."""
    (game.root / "assets/worlds").mkdir()
    with open(game.root / "assets/worlds/vast.vworld", "wb") as f:
        f.write(b'{"veduta": "world/1"')
        f.truncate(8 << 30)
    for args in (["check", "--json"], ["rename", "model", "crate", "box", "--dry-run"], ["deps", "crate"]):
        cp = subprocess.run(
            [sys.executable, "-m", "veduta", *args],
            cwd=game.root,
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=_limited(3),
        )
        _no_traceback(cp)
        assert "memory" not in cp.stdout + cp.stderr, cp.stdout + cp.stderr
        if args[0] == "check":
            assert cp.returncode == 1
            assert [d["message"] for d in json.loads(cp.stdout)["diagnostics"]] == [
                f"too large ({8 << 30:,} bytes; a world source is at most {BY_NAME['world'].max_bytes:,})"
            ]
        else:
            assert cp.returncode == 0, cp.stderr


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("models/deep.vmodel", '{"veduta": "model/1", "parts": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        ("worlds/deep.vworld", '{"veduta": "world/1", "x": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001),
    ],
)
def test_deep_nesting_is_a_located_error_in_every_reader(game, rel, text):
    game.write(rel, text)
    game.write("materials/wood.vmaterial", '{"veduta": "material/1"}\n')
    kind = rel.split("/")[0].rstrip("s")
    name = rel.split("/")[1].split(".")[0]
    for args in (
        ["check"],
        ["cook"],
        ["deps", name],
        ["deps", "wood", "--reverse"],
        ["rename", "material", "wood", "oak", "--dry-run"],
        ["list", kind],
        ["report"],
        ["inspect", kind, name],
    ):
        cp = game.veduta(*args)
        _no_traceback(cp)
        assert "RecursionError" not in cp.stdout + cp.stderr
        if args[0] in ("check", "cook", "inspect"):
            assert "nesting deeper than 256 levels" in cp.stdout + cp.stderr, (args, cp.stdout, cp.stderr)


def test_the_docs_table_gives_every_kinds_limit():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs/authoring-tools.md").read_text()
    table = next(p for p in text.split("### Source sizes", 1)[1].split("\n\n") if p.startswith("| kind |"))
    rows = {}
    for line in table.splitlines()[2:]:
        kinds, size = line.split("|")[1:3]
        n, unit = size.split()
        for k in kinds.split(","):
            rows[k.strip()] = int(n) << {"MiB": 20, "GiB": 30}[unit]
    assert rows == {k: kind.max_bytes for k, kind in BY_NAME.items()}
