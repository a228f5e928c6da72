"""Under ``--json`` (``--format json``) every mistake is one JSON document on stdout, argparse's
own mistakes included; without it, argparse's text and ``veduta: ...`` lines on stderr. Real
``python -m veduta`` runs on a copy of the sample game."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from veduta.faces.cli.common import json_in_argv

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("json") / "game"
    shutil.copytree(REPO / "assets", root / "assets", ignore=shutil.ignore_patterns(".cooked"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def veduta(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "veduta", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )


# (command line with its JSON flag, exit code, text in the message, an argparse mistake)
CASES = [
    ("world place valley house --rotation 45 --json", 2, "argument --rotation: invalid choice: 45", True),
    ("world place valley house --cell 1,2 --json", 2, "required: prefab", True),
    ("world query valley 1 --json", 2, '"1" is not two integers X,Z', True),
    ("world map valley --out m.png --size 0,0 --json", 2, "size 0,0 out of range", True),
    ("inspect model --json", 2, "the following arguments are required: NAME", True),
    ("inspect world valley --at x --json", 2, "argument --at", True),
    ("check --json -n x", 2, "argument -n/--jobs: 'x' is not a whole number", True),
    ("check --format json -n -3", 2, "-3 out of range [0, 1024]", True),
    ("cook --format json -n 100000", 2, "100000 out of range [0, 1024]", True),
    ("cook --format=json --bogus", 2, "unrecognized arguments: --bogus", True),
    ("watch --format json --debounce -5", 2, "argument --debounce: -5 out of range", True),
    ("export gltf crate --out x.png --json", 2, "so its name must end in .glb", True),
    ("export gltf crate --out x.glb --lod 99 --json", 2, "99 out of range [0, 64]", True),
    ("preview model crate --out x.png --size 7 --json", 2, "argument --size", True),
    ("cache info --json --bogus", 2, "veduta cache info: unrecognized arguments: --bogus", True),
    ("cache push --json extra", 2, "unrecognized arguments: extra", True),
    ("schema --json --out", 2, "argument --out: expected one argument", True),
    ("dump --json", 2, "required: FILE.vda", True),
    ("verify --json", 2, "required: FILE", True),
    ("why --json --all", 2, "unrecognized arguments: --all", True),
    ("--json", 2, "required: COMMAND", True),
    ("bogus --json", 2, "invalid choice: 'bogus'", True),
    # mistakes found after parsing
    ("check --json nope.vmodel", 2, "no such source: nope.vmodel", False),
    ("check --format json nope.vmodel", 2, "no such source: nope.vmodel", False),
    ("why --json nope", 2, "no such source: nope", False),
    ("cook --format json models/nope.vmodel", 2, "no such source", False),
    ("dump nope.vda --json", 1, "nope.vda: cannot read", False),
    ("dump pyproject.toml --json", 1, "bad magic", False),
    ("world query nope 1,2 --json", 2, 'no world "nope" under assets/worlds/', False),
    ("world map nope --out m.png --json", 2, 'no world "nope"', False),
    ("world map valley --out assets --json", 1, "it is a folder", False),
    ("world remove nope x --json", 2, 'no world "nope"', False),
    ("export gltf --out x.glb --json", 2, "name a MODEL, or --world WORLD --chunk CX,CZ", False),
    ("export gltf crate --world valley --out x.glb --json", 2, "a MODEL or --world, not both", False),
    ("export gltf crate --out x.glb --lod 3 --json", 2, "--lod 3 is not one of them", False),
    ("preview model nope --out x.png --json", 2, 'no model "nope"', False),
    ("schema --out pyproject.toml --json", 1, "cannot write", False),
]


@pytest.mark.parametrize("line,code,text,from_argparse", CASES, ids=[c[0] for c in CASES])
def test_a_mistake_under_json_is_one_json_document(sample, line, code, text, from_argparse):
    cp = veduta(sample, *line.split())
    assert cp.returncode == code, cp.stdout + cp.stderr
    assert cp.stdout.endswith("\n") and cp.stdout.count("\n") == 1, cp.stdout  # one document, one line
    doc = json.loads(cp.stdout)
    assert doc["refused"] is True and doc["findings"] == [] and text in doc["message"], doc
    if from_argparse:
        assert set(doc) == {"refused", "message", "findings", "usage"}
        assert doc["usage"].startswith("usage: veduta") and "\n" not in doc["usage"]
        # the usage line of the command that went wrong, not of veduta (unless it is veduta's)
        assert doc["usage"].startswith("usage: " + doc["message"].split(":")[0] + " "), doc
    else:
        assert set(doc) == {"refused", "message", "findings"}
    assert "Traceback" not in cp.stderr and "usage:" not in cp.stderr

    # without --json: argparse's own text, or one veduta line, on stderr; the same exit code
    words = [w for w in line.split() if w not in ("--json", "--format=json")]
    if "--format" in words:
        i = words.index("--format")
        del words[i : i + 2]
    cp = veduta(sample, *words)
    assert cp.returncode == code and "Traceback" not in cp.stderr, cp.stderr
    if from_argparse:
        assert cp.stdout == "" and cp.stderr.startswith("usage: veduta") and "error: " in cp.stderr
    else:
        assert cp.stderr.startswith("veduta") and "usage:" not in cp.stderr


def test_help_and_success_are_unchanged_under_json(sample):
    cp = veduta(sample, "world", "place", "--help", "--json")
    assert cp.returncode == 0 and cp.stdout.startswith("usage: veduta world place")
    cp = veduta(sample, "world", "query", "valley", "3,-4", "--json")
    assert cp.returncode == 0 and json.loads(cp.stdout)["cell"] == [3, -4]


def test_mcp_root_that_is_no_folder_is_a_usage_line(sample):
    cp = veduta(sample, "mcp", "--root", str(sample / "nowhere"))
    assert cp.returncode == 2 and "Traceback" not in cp.stderr
    assert cp.stderr == f"veduta: --root {sample / 'nowhere'}: no such folder\n"


def test_json_is_read_from_the_options_only():
    assert json_in_argv(["check", "--json"]) and json_in_argv(["cook", "--format", "json"])
    assert json_in_argv(["cook", "--format=json"])
    assert not json_in_argv(["cook", "--format", "github"]) and not json_in_argv(["cook", "--format"])
    assert not json_in_argv(["dump", "--", "--json"])  # an operand after --


def test_a_configuration_mistake_is_json_and_exit_2_in_every_command(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.veduta]\nassets = 5\n")
    for line in (
        "check --json",
        "why --json",
        "cook --format json",
        "world query valley 1,2 --json",
        "world map valley --out m.png --json",
        "inspect model crate --json",
        "cache info --json",
        "export gltf crate --out x.glb --json",
        "world remove valley x --json",
    ):
        cp = veduta(tmp_path, *line.split())
        assert cp.returncode == 2, (line, cp.stdout, cp.stderr)
        doc = json.loads(cp.stdout)
        assert doc["refused"] is True and "[tool.veduta] assets" in doc["message"], (line, doc)


@pytest.mark.skipif(sys.platform == "win32", reason="undecodable bytes in arguments are a POSIX matter")
def test_an_undecodable_name_is_still_one_json_document_in_utf_8(sample):
    name = os.fsdecode(b"\xff")  # a name whose bytes are not UTF-8 (a lone surrogate in Python)
    # the second is argparse's mistake, which quotes the name with repr() (it said 'bogus\udcff');
    # a message shows the byte as every line does (errors.quote)
    for args, code, text in (
        (["world", "query", name, "1,2"], 2, 'no world "\\xff"'),
        (["bogus" + name], 2, "invalid choice: 'bogus\\xff'"),
    ):
        for errors in ("strict", "surrogateescape"):  # a strict locale, and Python's UTF-8 mode
            cp = subprocess.run(
                [sys.executable, "-m", "veduta", *args, "--json"],
                cwd=sample,
                capture_output=True,
                timeout=300,
                env={"PYTHONPATH": str(REPO), "PYTHONIOENCODING": f"utf-8:{errors}"},
            )
            assert cp.returncode == code and b"Traceback" not in cp.stderr, cp.stderr
            doc = json.loads(cp.stdout.decode("utf-8"))  # valid UTF-8, the name escaped
            assert doc["refused"] is True and text in doc["message"], doc


@pytest.mark.skipif(sys.platform == "win32", reason="undecodable bytes in arguments are a POSIX matter")
def test_argparse_spells_an_undecodable_byte_as_every_message_does(tmp_path):
    """argparse's usage errors quote a value with repr(), which spelled a byte that is not UTF-8
    ``\\udcff``; every other message spells it ``\\xff`` (shown_path). A backslash typed stays
    one (repr doubles it), and so does a typed ``\\udcff``. Exit 2, as before."""
    for args, said in (
        ([b"cook", b"--jobs", b"\xff"], "veduta cook: error: argument -n/--jobs: '\\xff' is not a whole number"),
        ([b"bogus\xff"], "veduta: error: argument COMMAND: invalid choice: 'bogus\\xff' (choose from"),
        ([b"a\\\xff"], "veduta: error: argument COMMAND: invalid choice: 'a\\\\\\xff' (choose from"),
        ([b"a\\udcff"], "veduta: error: argument COMMAND: invalid choice: 'a\\\\udcff' (choose from"),
        # text argparse puts in without repr: a typed \udcff as typed, the byte as every message
        ([b"check", b"--zz\\udcff"], "veduta check: error: unrecognized arguments: --zz\\udcff"),
        ([b"check", b"--zz\xff"], "veduta check: error: unrecognized arguments: --zz\\xff"),
    ):
        cp = subprocess.run(
            [sys.executable.encode(), b"-m", b"veduta", *args], cwd=tmp_path, capture_output=True, timeout=300
        )
        last = cp.stderr.decode("utf-8").splitlines()[-1]
        assert cp.returncode == 2 and cp.stdout == b"" and last.startswith(said), (args, last)


@pytest.mark.parametrize(
    "toml, why",
    [
        ("[tool]\nveduta = 3\n", "tool.veduta: expected a table ([tool.veduta]), not an integer"),
        ('tool = "x"\n', "tool: expected a table ([tool]), not a string"),
        ('[tool.veduta]\ncooked = "a\\u0000b"\n', "[tool.veduta] cooked: 'a\\x00b' holds a control character"),
        ('[tool.veduta]\nassets = "x\\ny"\n', "[tool.veduta] assets: 'x\\ny' holds a control character"),
    ],
)
def test_a_configuration_of_the_wrong_shape_is_one_line_and_exit_2(tmp_path, toml, why):
    """[tool.veduta] that is not a table, or a path holding a NUL or newline: the configuration
    error every command reports (once a traceback: AttributeError, ValueError: embedded null byte)."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "pyproject.toml").write_text(toml)
    for line in ("cook --format json", "check --json", "list --json"):
        cp = veduta(tmp_path, *line.split())
        assert cp.returncode == 2, (line, cp.stdout, cp.stderr)
        assert "Traceback" not in cp.stderr
        doc = json.loads(cp.stdout)
        assert doc["refused"] is True and why in doc["message"], (line, doc)
    cp = veduta(tmp_path, "cook")
    assert cp.returncode == 2 and cp.stdout == "" and cp.stderr.count("\n") == 1 and why in cp.stderr


def test_a_reader_gone_mid_output_is_exit_1_and_no_traceback(tmp_path):
    """`veduta check --json | head -c 100` of a long document: the refusal it then tried to write
    met the closed pipe too (a BrokenPipeError traceback). Now it stops quietly with 1 (an output
    that cannot be written: a gate cut short does not pass)."""
    import json as json_

    (tmp_path / "assets" / "models").mkdir(parents=True)
    src = {"veduta": "model/1", "parts": [{"shape": "box", "size": [1, 1, 1]}]} | {f"k{i}": 1 for i in range(20000)}
    (tmp_path / "assets/models/k2.vmodel").write_text(json_.dumps(src))
    for args in (["check", "--json"], ["check"]):  # each prints far more than a pipe holds
        p = subprocess.Popen(
            [sys.executable, "-m", "veduta", *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert p.stdout is not None and p.stderr is not None
        p.stdout.read(10)
        p.stdout.close()  # the reader has what it wanted and goes
        err = p.stderr.read().decode()
        assert p.wait(timeout=300) == 1, (args, err)
        assert "Traceback" not in err and "BrokenPipe" not in err and "Broken pipe" not in err, (args, err)


def test_inspect_of_a_missing_asset_is_a_refusal_and_its_report(sample):
    """`inspect model|prefab|world NAME --json` of no such asset: one line, a refusal as every
    command gives one (it was a pretty-printed report without "refused"), and the report
    docs/inspect.md promises (status missing, its error, no findings)."""
    for kind in ("model", "prefab", "world"):
        cp = veduta(sample, "inspect", kind, "nope", "--json")
        assert cp.returncode == 2 and cp.stdout.count("\n") == 1, (kind, cp.stdout)
        doc = json.loads(cp.stdout)
        want = f'no {kind} "nope" under assets/{kind}s/'
        assert doc["refused"] is True and doc["message"] == want, doc
        assert doc["status"] == "missing" and doc["findings"] == [] and doc["errors"] == [{"message": want}]
