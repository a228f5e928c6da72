"""`veduta lsp` driven over stdio by a real LSP client (pygls's), as an editor would."""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pygls")

from lsprotocol import types as lsp  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from tests.gamerepo import BAD as BAD_CRATE  # noqa: E402 - the spec's crate with three mistakes (model-format.md)
from tests.gamerepo import GATE_WAIT  # noqa: E402

SPEC_LINES = [
    "crate.vmodel:4:52: parts[0].radius: not used by shape box",
    "crate.vmodel:5:68: parts[1].segments: 2 out of range [3, 256]",
    "crate.vmodel:6:45: parts[2].of: 7 is not the index of an earlier part (want 0..1)",
]
CRATE = """{
  "veduta": "model/1",
  "pivot": "bottom-center",
  "parts": [ { "shape": "box", "size": [1, 1, 1], "position": [0, 0.5, 0], "material": "crate_wood" } ]
}
"""
FILES = {
    "models/crate.vmodel": CRATE,
    "models/barrel.vmodel": '{ "veduta": "model/1", "parts": [ { "shape": "cylinder", "radius": 0.4, '
    '"height": 1 } ] }\n',
    "materials/crate_wood.vmaterial": '{ "veduta": "material/1", "texture": "crate" }\n',
    "materials/iron.vmaterial": '{ "veduta": "material/1", "albedo": "#404040" }\n',
    "textures/crate.vtexture": '{ "veduta": "texture/1", "size": [8, 8], "layers": [ { "type": "fill", '
    '"color": "#806040" } ] }\n',
    "prefabs/camp.vprefab": """{
  "veduta": "prefab/1",
  "footprint": [4, 4],
  "entities": [
    { "name": "a", "model": "crate" },
    { "name": "b", "model": "barrel" }
  ]
}
""",
}


def make_game(root: Path, files: dict[str, str] | None = None) -> Path:
    (root / "dodo.py").write_text("from veduta.dodo import *\n")
    for rel, text in (FILES if files is None else files).items():
        p = root / "assets" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


class Editor(LanguageClient):
    """An LSP client as an editor is: it opens buffers and shows what the server publishes."""

    def __init__(self) -> None:
        super().__init__("test-editor", "1")
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = defaultdict(list)
        self.arrived = asyncio.Condition()
        self.returncode: int | None = None
        self.versions: dict[str, int] = {}

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            async with self.arrived:
                self.published[params.uri].append(params)
                self.arrived.notify_all()

        self.shown: list[lsp.ShowMessageParams] = []  # pop-ups the server asked for

        @self.feature(lsp.WINDOW_SHOW_MESSAGE)
        def on_show_message(params: lsp.ShowMessageParams) -> None:
            self.shown.append(params)

    async def server_exit(self, server) -> None:
        self.returncode = server.returncode

    async def diagnostics(self, uri: str, version: int | None = None, timeout: float = 60) -> list[lsp.Diagnostic]:
        """The diagnostics published for *uri* at *version* (the latest version by default)."""
        want = self.versions.get(uri) if version is None else version

        def ready() -> bool:
            return any(p.version == want for p in self.published[uri])

        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(ready), timeout)
        return [p for p in self.published[uri] if p.version == want][-1].diagnostics

    def open(self, path: Path, text: str) -> str:
        uri = from_fs_path(str(path))
        self.versions[uri] = 1
        self.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
            )
        )
        return uri

    async def raw_request(self, msg_id: int | str, method: str, params: object, timeout: float = 60) -> object:
        """Send a request exactly as given (params not checked by the client) and wait for the
        answer on *msg_id*: its result, or the :class:`JsonRpcException` of its error."""
        future = asyncio.get_running_loop().create_future()
        self.protocol._request_futures[msg_id] = future  # where the client files the answer to msg_id
        self.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(future, timeout)
        except JsonRpcException as exc:
            return exc

    def replace(self, uri: str, text: str) -> None:
        """The whole text replaced (as an editor sends a full change)."""
        self.versions[uri] += 1
        self.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, uri: str, line: int, char: int, end_char: int, text: str) -> None:
        """An incremental change on one line (0-based, as the protocol counts)."""
        self.versions[uri] += 1
        rng = lsp.Range(start=lsp.Position(line=line, character=char), end=lsp.Position(line=line, character=end_char))
        self.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=text)],
            )
        )


def run_editor(root: Path, body, options: dict | None = None, encodings=None, argv: tuple[str, ...] | None = None):
    """Start `veduta lsp` (or ``python *argv*``) in *root*, initialize it, run ``await
    body(editor)``, then shut it down and make it exit; the result of body and the server's exit
    status."""

    async def main():
        editor = Editor()
        await editor.start_io(sys.executable, *(argv or ("-m", "veduta", "lsp")), cwd=str(root))
        caps = (
            lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(position_encodings=encodings))
            if encodings
            else lsp.ClientCapabilities()
        )
        result = await asyncio.wait_for(
            editor.initialize_async(
                lsp.InitializeParams(
                    capabilities=caps,
                    root_uri=from_fs_path(str(root)),
                    process_id=os.getpid(),
                    initialization_options=options,
                )
            ),
            120,
        )
        editor.initialized(lsp.InitializedParams())
        try:
            out = await body(editor, result)
        finally:
            await asyncio.wait_for(editor.shutdown_async(None), 60)
            editor.exit(None)
            await asyncio.wait_for(editor.stop(), 60)
        return out, editor.returncode

    return asyncio.run(main())


def _cook_lines(root: Path, rel: str) -> list[dict]:
    """What the cook (veduta check, another process) reports for a source on disk."""
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "check", "--json", f"assets/{rel}"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return json.loads(cp.stdout)["diagnostics"]


def _lsp_as_cook(text: str, diags: list[lsp.Diagnostic]) -> list[tuple]:
    """LSP diagnostics back in the cook's terms: 1-based line and column (in characters),
    the message the cook prints after the position, severity, code."""
    lines = text.split("\n")
    out = []
    for d in diags:
        line = lines[d.range.start.line]
        col = len(line.encode("utf-16-le")[: 2 * d.range.start.character].decode("utf-16-le")) + 1
        sev = {lsp.DiagnosticSeverity.Error: "error", lsp.DiagnosticSeverity.Warning: "warning"}[d.severity]
        out.append((d.range.start.line + 1, col, d.message, sev, d.code or ""))
    return out


def test_the_spec_crate_unsaved_then_fixed_then_shutdown_and_exit(tmp_path):
    root = make_game(tmp_path)
    crate = root / "assets" / "models" / "crate.vmodel"

    async def body(ed, init):
        caps = init.capabilities
        assert caps.completion_provider and caps.hover_provider and caps.definition_provider
        uri = ed.open(crate, BAD_CRATE)  # the file on disk is the good crate: the buffer is unsaved
        bad = await ed.diagnostics(uri)
        fixed = (
            BAD_CRATE.replace(', "radius": 0.5 }', " }")
            .replace('"segments": 2', '"segments": 8')
            .replace('"of": 7', '"of": 1')
        )
        ed.replace(uri, fixed)
        return bad, await ed.diagnostics(uri)

    (bad, fixed), code = run_editor(root, body)
    assert [
        f"crate.vmodel:{d.range.start.line + 1}:{d.range.start.character + 1}: {d.message}" for d in bad
    ] == SPEC_LINES
    assert all(d.severity == lsp.DiagnosticSeverity.Error and d.source == "veduta" for d in bad)
    # each range covers the offending value
    assert [(d.range.start.character, d.range.end.character) for d in bad] == [(51, 54), (67, 68), (44, 45)]
    assert list(fixed) == []
    assert code == 0
    assert crate.read_text() == CRATE  # the server never writes a source, a cooked file or a cache
    assert not (root / "assets" / ".cooked").exists() and not (root / "cache").exists()


def test_diagnostics_are_exactly_the_cooks_for_every_kind(tmp_path):
    """Broken sources of every kind, opened unsaved: the server's diagnostics are the cook's
    (veduta check, in another process, on the same text saved), message, position, severity, code."""
    broken = {
        "models/crate.vmodel": BAD_CRATE.replace('"of": 7', '"of": 7, "material": "crate_wod"'),
        "textures/crate.vtexture": '{ "veduta": "texture/1", "size": [8, 8], "grid": [3, 3], "layers": '
        '[ { "type": "fill", "colour": "#806040" } ], "play": "walk" }\n',
        "materials/crate_wood.vmaterial": '{ "veduta": "material/1", "texture": "crate", "cutoff": 2, '
        '"alpha": "blend" }\n',
        "prefabs/camp.vprefab": FILES["prefabs/camp.vprefab"]
        .replace('"barrel"', '"barel"')
        .replace("[4, 4]", "[4, 0]"),
        "scenes/s.vscene": '{ "veduta": "scene/1", "camera": { "type": "perspective", "near": 5, "far": 1 },\n'
        '  "entities": [ { "name": "a", "model": "crate", "parent": "a" } ], "map": "nope" }\n',
        "worlds/w.vworld": '{ "veduta": "world/1", "biomes": [ { "name": "meadow", "ground": "grass" } ],\n'
        '  "places": [ { "name": "p", "prefab": "camp", "cell": [9000, 0] } ],\n'
        '  "scatter": [ { "prefab": "camp", "density": 0.1, "biomes": ["medow"] } ] }\n',
        "maps/m.vmap": '{ "veduta": "map/1", "terrains": [ { "key": "g", "name": "grass", "material": "iron" } ],\n'
        '  "layers": [ { "name": "ground", "rows": ["gg", "gx"] } ] }\n',
    }
    root = make_game(tmp_path)
    for rel in broken:
        (root / "assets" / rel).parent.mkdir(parents=True, exist_ok=True)
    uris = {}

    async def body(ed, init):
        for rel, text in broken.items():
            uris[rel] = ed.open(root / "assets" / rel, text)
        return {rel: await ed.diagnostics(uri) for rel, uri in uris.items()}

    got, code = run_editor(root, body)
    assert code == 0
    for rel, text in broken.items():
        (root / "assets" / rel).write_text(text)
    for rel, text in broken.items():
        cook = [
            (d["line"], d["col"], f"{d['path']}: {d['message']}", d["severity"], d.get("code", ""))
            for d in _cook_lines(root, rel)
        ]
        assert cook, rel  # every broken source has something to say
        assert _lsp_as_cook(text, got[rel]) == cook, rel


def test_a_prefab_naming_a_missing_model_is_warned_on_that_line(tmp_path):
    root = make_game(tmp_path)
    camp = root / "assets" / "prefabs" / "camp.vprefab"
    text = FILES["prefabs/camp.vprefab"].replace('"barrel"', '"barel"')

    async def body(ed, init):
        uri = ed.open(camp, text)
        first = await ed.diagnostics(uri)
        # the model appears (another buffer, unsaved): the warning goes away
        other = ed.open(
            root / "assets" / "models" / "barel.vmodel",
            '{ "veduta": "model/1", "parts": [ { "shape": "box", "size": [1, 1, 1] } ] }',
        )
        await ed.diagnostics(other)
        return first, await _next(ed, uri, len(ed.published[uri]))

    (first, after), code = run_editor(root, body)
    (d,) = first
    assert d.severity == lsp.DiagnosticSeverity.Warning and d.code == "MISSING_REFERENCE"
    assert d.range.start.line == 5  # the line of "model": "barel" (0-based)
    line = text.split("\n")[5]
    assert line[d.range.start.character : d.range.end.character] == '"barel"'
    assert d.message == 'entities[1].model: model "barel" does not exist (not checked); did you mean barrel?'
    assert list(after) == [] and code == 0


async def _next(ed: Editor, uri: str, seen: int, timeout: float = 60) -> list[lsp.Diagnostic]:
    """The diagnostics of the next publication for *uri* after the first *seen*."""
    async with ed.arrived:
        await asyncio.wait_for(ed.arrived.wait_for(lambda: len(ed.published[uri]) > seen), timeout)
    return ed.published[uri][-1].diagnostics


def test_completion_definition_references_and_hover(tmp_path):
    root = make_game(tmp_path)
    crate = root / "assets" / "models" / "crate.vmodel"
    text = CRATE.replace('"crate_wood"', '""')
    line = 3
    col = text.split("\n")[line].index('""') + 1  # inside the quotes

    async def body(ed, init):
        uri = ed.open(crate, text)
        pos = lsp.Position(line=line, character=col)
        comp = await ed.text_document_completion_async(
            lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
        )
        ed.replace(uri, CRATE)
        await ed.diagnostics(uri)
        on_name = lsp.Position(line=line, character=CRATE.split("\n")[line].index("crate_wood") + 2)
        ident = lsp.TextDocumentIdentifier(uri=uri)
        definition = await ed.text_document_definition_async(
            lsp.DefinitionParams(text_document=ident, position=on_name)
        )
        on_shape = lsp.Position(line=line, character=CRATE.split("\n")[line].index('"box"') + 1)
        hover = await ed.text_document_hover_async(lsp.HoverParams(text_document=ident, position=on_shape))
        refs = await ed.text_document_references_async(
            lsp.ReferenceParams(
                text_document=ident,
                position=lsp.Position(line=0, character=0),
                context=lsp.ReferenceContext(include_declaration=False),
            )
        )
        key = lsp.Position(line=line, character=CRATE.split("\n")[line].index('{ "shape"') + 2)
        keys = await ed.text_document_completion_async(lsp.CompletionParams(text_document=ident, position=key))
        return comp, definition, hover, refs, keys

    (comp, definition, hover, refs, keys), code = run_editor(root, body)
    labels = [i.label for i in comp.items]
    assert labels == ["crate_wood", "iron"]  # the game's materials, not its models
    edit = comp.items[0].text_edit
    assert edit.new_text == '"crate_wood"'
    assert (edit.range.start.character, edit.range.end.character) == (col - 1, col + 1)
    assert definition.uri == from_fs_path(str(root / "assets" / "materials" / "crate_wood.vmaterial"))
    assert "12 triangles" in hover.contents.value and "24 vertices" in hover.contents.value
    assert [(r.uri.rsplit("/", 1)[-1], r.range.start.line) for r in refs] == [("camp.vprefab", 4)]
    assert keys is not None and list(keys.items) == []  # between "{" and "shape"... a key there would run into it
    assert code == 0


def test_field_names_and_enum_values_complete_from_the_declarations(tmp_path):
    root = make_game(tmp_path)
    text = '{\n  "veduta": "model/1",\n  "pivot": "",\n  "parts": [ { "shape": "box",  } ]\n}\n'

    async def body(ed, init):
        uri = ed.open(root / "assets" / "models" / "new.vmodel", text)  # not on disk at all
        ident = lsp.TextDocumentIdentifier(uri=uri)
        pivot = await ed.text_document_completion_async(
            lsp.CompletionParams(text_document=ident, position=lsp.Position(line=2, character=12))
        )
        fields = await ed.text_document_completion_async(
            lsp.CompletionParams(text_document=ident, position=lsp.Position(line=3, character=30))
        )
        hover = await ed.text_document_hover_async(
            lsp.HoverParams(text_document=ident, position=lsp.Position(line=2, character=4))
        )
        return pivot, fields, hover

    (pivot, fields, hover), code = run_editor(root, body)
    from veduta.compile.model.types import PIVOTS

    assert [i.label for i in pivot.items] == list(PIVOTS)
    names = [i.label for i in fields.items]
    assert "size" in names and "material" in names and "shape" not in names and "radius" not in names
    size = fields.items[names.index("size")]
    assert size.text_edit.new_text == '"size": ' and size.detail.startswith("required")
    from veduta.schemas import schema_of

    assert schema_of("model")["properties"]["pivot"]["description"] in hover.contents.value
    assert code == 0


def test_positions_in_utf16_and_utf32(tmp_path):
    """Columns count characters in the cook, UTF-16 code units in the protocol by default."""
    root = make_game(tmp_path)
    text = '{ "veduta": "material/1", "name": "𝄞é", "texture": "nope" }\n'

    async def body(ed, init):
        uri = ed.open(root / "assets" / "materials" / "crate_wood.vmaterial", text)
        return init.capabilities.position_encoding, await ed.diagnostics(uri)

    at = text.index('"nope"')  # in characters; the clef before it is two UTF-16 units
    for encodings, char in ((None, at + 1), ([lsp.PositionEncodingKind.Utf32], at)):
        (enc, diags), code = run_editor(root, body, encodings=encodings)
        (warning,) = [d for d in diags if d.code == "MISSING_REFERENCE"]
        assert (warning.range.start.character, warning.range.end.character) == (char, char + 6), enc
        assert code == 0


def test_requests_whose_params_cannot_be_read_are_answered_with_invalid_params(tmp_path):
    """Every request is answered (JSON-RPC): bad params give error -32602 on the request's id,
    naming the mistake; a notification with bad params gets nothing; nothing pops up."""
    root = make_game(tmp_path)
    crate = root / "assets" / "models" / "crate.vmodel"

    async def body(ed, init):
        uri = ed.open(crate, CRATE)
        await ed.diagnostics(uri)
        doc = {"uri": uri}
        answers = [
            await ed.raw_request(
                41, "textDocument/hover", {"textDocument": doc, "position": {"line": -1, "character": 0}}
            ),
            await ed.raw_request("h-2", "textDocument/hover", {"textDocument": doc}),
            await ed.raw_request(43, "textDocument/completion", [doc, {"line": 0, "character": 0}]),
            await ed.raw_request(44, "textDocument/hover", {"textDocument": doc, "position": [0, 0]}),
        ]
        # a notification with bad params (no text): dropped, then the server still answers
        ed.protocol._send_data(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri + "x"}}}
        )
        line = CRATE.split("\n")[3]
        good = await ed.raw_request(
            45,
            "textDocument/hover",
            {"textDocument": doc, "position": {"line": 3, "character": line.index('"box"') + 1}},
        )
        return answers, good, list(ed.shown)

    (answers, good, shown), code = run_editor(root, body)
    assert [(type(a).__name__, a.code) for a in answers] == [("JsonRpcInvalidParams", -32602)] * 4
    assert [a.message for a in answers] == [
        "textDocument/hover: invalid params: params.position: "
        "Position.line should be in range [0:2147483647], but was -1.",
        "textDocument/hover: invalid params: params.position: required field missing",
        "textDocument/completion: invalid params: params: expected an object, got an array",
        "textDocument/hover: invalid params: params.position: expected an object, got an array",
    ]
    assert "12 triangles" in good.contents.value  # the answer to a good request (read as named tuples)
    assert shown == []
    assert code == 0


def _cook_refusal(root: Path) -> str:
    """The one line `veduta cook` prints when it refuses the game, without its "veduta: "."""
    cp = subprocess.run([sys.executable, "-m", "veduta", "cook"], cwd=root, capture_output=True, text=True, timeout=300)
    assert cp.returncode != 0 and cp.stdout == ""
    (line,) = cp.stderr.splitlines()
    assert line.startswith("veduta: ")
    return line[len("veduta: ") :]


def test_a_game_whose_pyproject_cannot_be_read_says_so_on_the_open_document(tmp_path):
    root = make_game(tmp_path)
    pyproject = root / "pyproject.toml"
    crate = root / "assets" / "models" / "crate.vmodel"
    syntax = "[tool.veduta\n"
    unknown = "[tool]\nveduta = 3\n"  # (an AttributeError in the project's reader once: shown nowhere)
    pyproject.write_text(unknown)
    unknown_refusal = _cook_refusal(root)
    pyproject.write_text(syntax)
    syntax_refusal = _cook_refusal(root)
    bad = BAD_CRATE

    async def body(ed, init):
        uri = ed.open(crate, bad)
        broken = await ed.diagnostics(uri)
        pyproject.write_text('[tool.veduta]\nassets = "assets"\n')
        ed.replace(uri, bad)  # the next change reads the fixed configuration
        fixed = await ed.diagnostics(uri)
        pyproject.write_text(unknown)  # broken again while the game is loaded: the watcher says so
        seen = len(ed.published[uri])
        event = lsp.FileEvent(uri=from_fs_path(str(pyproject)), type=lsp.FileChangeType.Changed)
        ed.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[event]))
        watched = await _next(ed, uri, seen)
        pyproject.write_text("")  # fixed, then the document saved: read again
        seen = len(ed.published[uri])
        ed.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
        saved = await _next(ed, uri, seen)
        return broken, fixed, watched, saved, list(ed.shown)

    (broken, fixed, watched, saved, shown), code = run_editor(root, body)
    (d,) = broken
    assert d.severity == lsp.DiagnosticSeverity.Error and d.source == "veduta"
    assert d.message == f"the game's configuration cannot be read: {syntax_refusal}"
    assert "Expected ']'" in d.message and str(pyproject) in d.message
    assert (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) == (0, 0, 0, 1)
    spec = [f"crate.vmodel:{x.range.start.line + 1}:{x.range.start.character + 1}: {x.message}" for x in fixed]
    assert spec == SPEC_LINES  # the configuration is read: the crate's own mistakes
    assert [x.message for x in watched] == [f"the game's configuration cannot be read: {unknown_refusal}"]
    assert "tool.veduta: expected a table ([tool.veduta]), not an integer" in watched[0].message
    assert [x.message for x in saved] == [x.message for x in fixed]
    assert shown == []
    assert code == 0


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


def _server_pid() -> int:
    """The `veduta lsp` process this test started (a child of this process)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if ppid == me and b"lsp" in cmd:
                return int(entry)
    raise AssertionError("no veduta lsp process")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the server's memory from /proc")
def test_memory_stays_flat_over_many_edits(tmp_path):
    """600 edits of a 200 kB source, each waited for: a server that kept a copy of the text (or
    of anything made from it) per edit would grow by 100 MB, one that kept 2 kB per edit (pygls's
    own leak of a future per notification, see faces/lsp/server.py) by 1 MB."""
    root = make_game(tmp_path)
    text = CRATE.replace("{\n", "{" + " " * 200_000 + "\n", 1)
    line = text.split("\n").index([ln for ln in text.split("\n") if '"shape"' in ln][0])
    col = text.split("\n")[line].index('"size": [1, 1, 1]') + len('"size": [')

    async def body(ed, init):
        uri = ed.open(root / "assets" / "models" / "crate.vmodel", text)
        await ed.diagnostics(uri)
        pid = _server_pid()
        rss = {}
        for i in range(1, 601):
            ed.edit(uri, line, col, col + 1, "0" if i % 2 else "1")  # size 0 (an error), then 1 again
            diags = await ed.diagnostics(uri)
            assert len(diags) == i % 2
            if i in (100, 600):
                rss[i] = _rss_kb(pid)
        return rss

    rss, code = run_editor(root, body, options={"debounce_ms": 0})
    assert rss[600] - rss[100] < 512, rss
    assert code == 0


def test_a_buffer_past_its_kinds_size_limit_is_one_diagnostic_and_never_parsed(tmp_path):
    """A material buffer one byte past the material limit: the cook's error at 1:1 (docs/authoring-tools.md,
    "Source sizes"), no completion or hover from it; at the limit it is read as any other."""
    from veduta.base.kinds import BY_NAME

    limit = BY_NAME["material"].max_bytes
    root = make_game(tmp_path)
    iron = root / "assets" / "materials" / "iron.vmaterial"
    head = '{ "veduta": "material/1", "albedo": "#404040"'
    over = head + " " * (limit + 1 - len(head) - 2) + "}\n"
    at = head + " " * (limit - len(head) - 2) + "}\n"
    assert len(over.encode()) == limit + 1 and len(at.encode()) == limit

    async def body(ed, init):
        uri = ed.open(iron, over)
        big = await ed.diagnostics(uri)
        ident = lsp.TextDocumentIdentifier(uri=uri)
        comp = await ed.text_document_completion_async(
            lsp.CompletionParams(text_document=ident, position=lsp.Position(line=0, character=30))
        )
        hover = await ed.text_document_hover_async(
            lsp.HoverParams(text_document=ident, position=lsp.Position(line=0, character=4))
        )
        ed.replace(uri, at)
        return big, comp, hover, await ed.diagnostics(uri)

    (big, comp, hover, fine), code = run_editor(root, body)
    assert [(d.range.start.line, d.range.start.character, d.message) for d in big] == [
        (0, 0, f"$: too large ({limit + 1:,} bytes; a material source is at most {limit:,})")
    ]
    assert big[0].severity == lsp.DiagnosticSeverity.Error
    assert comp is None or list(comp.items) == []
    assert hover is None
    assert list(fine) == []
    assert code == 0


def test_an_interrupted_rename_is_left_to_the_next_command_and_said_once(tmp_path):
    """The server never writes: a rename journal in the cache is neither completed nor set aside
    (it would write sources behind the editor's buffers); one warning says the next command will."""
    root = make_game(tmp_path)
    (root / "cache").mkdir()
    journal = root / "cache" / "edits.journal"
    doc = {
        "format": "veduta-edits/1",
        "what": "rename of material bark to wood",
        "changes": [{"path": "models/written.vmodel", "old": None, "new": "written\n", "mode": None}],
    }
    journal.write_text(json.dumps(doc))
    before = journal.read_bytes()
    crate = root / "assets" / "models" / "crate.vmodel"

    async def body(ed, init):
        uri = ed.open(crate, CRATE)
        diags = await ed.diagnostics(uri)
        barrel = ed.open(root / "assets" / "models" / "barrel.vmodel", FILES["models/barrel.vmodel"])
        await ed.diagnostics(barrel)  # the same game: not said again
        return diags, list(ed.shown)

    (diags, shown), code = run_editor(root, body)
    assert list(diags) == []
    assert [(m.type, m.message) for m in shown] == [
        (
            lsp.MessageType.Warning,
            f"veduta: an interrupted rename of material bark to wood waits in {journal}: some sources may "
            "still hold the old text; the next veduta command (veduta cook, doit cook, veduta check) "
            "completes it (the language server never writes a file)",
        )
    ]
    assert journal.read_bytes() == before
    assert not (root / "assets" / "models" / "written.vmodel").exists()
    assert not (root / "cache" / "edits.journal.bad").exists()
    assert code == 0
    cp = subprocess.run(
        [sys.executable, "-m", "veduta", "check"], cwd=root, capture_output=True, text=True, timeout=300
    )  # as the message says
    assert "completed an interrupted rename of material bark to wood" in cp.stderr
    assert (root / "assets" / "models" / "written.vmodel").read_text() == "written\n" and not journal.exists()


def _lsp_to_cook(text: str, diags: list[lsp.Diagnostic]) -> list[tuple]:
    """As :func:`_lsp_as_cook`, for any line ends: the protocol's lines and the cook's end at
    "\\n", "\\r\\n" and "\\r" (LSP 3.17); the columns differ (UTF-16 units, characters)."""
    import re

    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]
    out = []
    for d in diags:
        start = starts[d.range.start.line]
        utf16 = text[start:].encode("utf-16-le")[: 2 * d.range.start.character].decode("utf-16-le")
        at = start + len(utf16)
        line, col = d.range.start.line + 1, at - start + 1
        sev = {lsp.DiagnosticSeverity.Error: "error", lsp.DiagnosticSeverity.Warning: "warning"}[d.severity]
        out.append((line, col, d.message, sev, d.code or ""))
    return out


def test_incremental_edits_after_unicode_line_separators_and_with_any_line_end(tmp_path):
    """U+2028, U+2029 and U+0085 are legal raw in a JSON string and end no line in the protocol:
    an incremental edit on the next line lands where the editor made it; "\\r" and "\\r\\n" end
    lines. After each edit the server's diagnostics are the cook's for the editor's text."""
    root = make_game(tmp_path)
    cases = [(sep, "\n") for sep in ("\u2028", "\u2029", "\u0085")] + [("\u2028", "\r"), ("\u2028", "\r\n")]
    texts = {
        f"models/t{i}.vmodel": '{"veduta": "model/1", "parts": [{"shape": "box", "size": [1,1,1], "name": "a'
        + sep
        + 'b"}],'
        + end
        + '  "pivot": "center",'
        + end
        + '  "lods": [{"distance": 10, "detail": 2}], "x": 1 }'
        + end
        for i, (sep, end) in enumerate(cases)
    }

    async def body(ed, init):
        got = {}
        for rel, text in texts.items():
            uri = ed.open(root / "assets" / rel, text)
            ed.edit(uri, 1, 12, 18, "bogus")  # "center" on the protocol's line 1
            at = '  "lods": [{"distance": 10'.index("10")
            ed.edit(uri, 2, at, at + 2, "0")  # "10" on line 2: distance 0
            got[rel] = await ed.diagnostics(uri)
        return got

    got, code = run_editor(root, body)
    assert code == 0
    for rel, text in texts.items():
        now = text.replace('"center"', '"bogus"').replace('"distance": 10', '"distance": 0')
        (root / "assets" / rel).write_bytes(now.encode())
        cook = [
            (d["line"], d["col"], f"{d['path']}: {d['message']}", d["severity"], d.get("code", ""))
            for d in _cook_lines(root, rel)
        ]
        assert any("bogus" in c[2] for c in cook) and any(c[2].startswith("x:") for c in cook), cook
        assert _lsp_to_cook(now, got[rel]) == cook, rel
        (x,) = [d for d in got[rel] if d.message.startswith("x:")]  # on the value 1 of "x"
        assert (x.range.start.line, x.range.start.character) == (2, now.split(now[-1])[2].index('"x": 1') + 5)


def test_files_outside_any_game_get_no_diagnostics(tmp_path):
    """A JSON file (or a source-suffixed one) in no game, in a plain Python project, or beside a
    broken pyproject.toml that is no source, is not the server's: nothing published, no answers;
    a game's own source opened next is checked as ever."""
    (tmp_path / "game").mkdir()
    root = make_game(tmp_path / "game")
    outside = {
        tmp_path / "plain" / "package.json": '{"name": "x"}',
        tmp_path / "py" / "package.json": '{"name": "x"}',
        tmp_path / "py" / "conf" / "settings.json": '{"name": "x"}',
        tmp_path / "loose" / "x.vmodel": '{"veduta": "model/1", "parts": 3}',
        tmp_path / "broken" / "package.json": '{"name": "x"}',
    }
    for path, text in outside.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "py" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "broken" / "pyproject.toml").write_text("[tool.veduta\n")

    async def body(ed, init):
        uris = [ed.open(path, text) for path, text in outside.items()]
        hovers = [
            await ed.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=u), position=lsp.Position(line=0, character=3)
                )
            )
            for u in uris
        ]
        crate = ed.open(root / "assets" / "models" / "crate.vmodel", BAD_CRATE)
        found = await ed.diagnostics(crate)  # published after anything the others would have had
        return {u: list(ed.published[u]) for u in uris}, hovers, found, list(ed.shown)

    (published, hovers, found, shown), code = run_editor(root, body)
    assert published == dict.fromkeys(published, [])
    assert [f"crate.vmodel:{x.range.start.line + 1}:{x.range.start.character + 1}: {x.message}" for x in found] == (
        SPEC_LINES
    )
    assert hovers == [None] * len(published)
    assert shown == []
    assert code == 0


def test_lifecycle_requests_before_initialize_and_after_shutdown_and_exit_status(tmp_path):
    """LSP 3.17: a request before initialize is answered -32002 (no traceback), one after shutdown
    -32600; exit after shutdown exits 0, exit without shutdown 1."""
    root = make_game(tmp_path)
    crate = root / "assets" / "models" / "crate.vmodel"
    hover = {"textDocument": {"uri": from_fs_path(str(crate))}, "position": {"line": 3, "character": 20}}
    init = {"processId": os.getpid(), "rootUri": from_fs_path(str(root)), "capabilities": {}}

    async def session(shutdown: bool):
        ed = Editor()
        await ed.start_io(sys.executable, "-m", "veduta", "lsp", cwd=str(root))
        early = await ed.raw_request(1, "textDocument/hover", hover)
        ed.protocol._send_data({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}})  # dropped
        await ed.raw_request(2, "initialize", init)
        ed.initialized(lsp.InitializedParams())
        ed.open(crate, CRATE)
        fine = await ed.raw_request(3, "textDocument/hover", hover)
        late = None
        if shutdown:
            await ed.raw_request(4, "shutdown", None)
            late = await ed.raw_request(5, "textDocument/hover", hover)
        ed.exit(None)
        await asyncio.wait_for(ed.stop(), 60)
        return early, fine, late, ed.returncode

    early, fine, late, code = asyncio.run(session(True))
    assert early.code == -32002
    assert early.message == "textDocument/hover: the server is not initialized (send initialize first)"
    assert early.data is None  # no traceback
    assert "12 triangles" in fine.contents.value
    assert (type(late).__name__, late.code) == ("JsonRpcInvalidRequest", -32600)
    assert late.message == "textDocument/hover: the server is shut down (only exit is left)"
    assert code == 0
    *_, code = asyncio.run(session(False))
    assert code == 1


def test_a_large_buffer_is_checked_once_its_typing_pauses(tmp_path):
    """A buffer past server.LARGE characters waits server.LARGE_DEBOUNCE_MS after its last change
    (even with debounce_ms 0), so a burst of edits is checked once, for its last text; a small
    buffer meanwhile is checked at once. (The edits are sent back to back, far within the wait.)"""
    from veduta.faces.lsp.server import LARGE

    root = make_game(tmp_path)
    big = CRATE.replace("{\n", "{" + " " * (LARGE + 10) + "\n", 1)
    line = big.split("\n").index([ln for ln in big.split("\n") if '"shape"' in ln][0])
    col = big.split("\n")[line].index('"size": [1, 1, 1]') + len('"size": [')

    async def body(ed, init):
        uri = ed.open(root / "assets" / "models" / "crate.vmodel", big)
        for i in range(1, 6):
            ed.edit(uri, line, col, col + 1, "0" if i % 2 else "1")  # ends with size 0: one error
        small = ed.open(root / "assets" / "models" / "barrel.vmodel", FILES["models/barrel.vmodel"])
        first = await ed.diagnostics(small)
        last = await ed.diagnostics(uri)
        return list(first), last, [p.version for p in ed.published[uri]]

    (first, last, versions), code = run_editor(root, body, options={"debounce_ms": 0})
    assert first == []
    assert len(last) == 1 and last[0].message.startswith("parts[0].size"), last
    assert versions == [6]  # not the open's (version 1) nor any edit's but the last
    assert code == 0


#: ``veduta lsp`` whose check of a buffer past server.LARGE characters waits, once it has begun
#: (it touches GATE.started), until the file GATE exists (at most 120 s).
GATED_LSP = """
import os, sys, time
import veduta.tools.check as check
from veduta.faces.lsp.server import LARGE
real = check.compile_reported
def gated(kind, items):
    if any(len(data) > LARGE for data, _ in items):
        open(os.environ["GATE"] + ".started", "a").close()
        for _ in range(12000):
            if os.path.exists(os.environ["GATE"]):
                break
            time.sleep(0.01)
    return real(kind, items)
check.compile_reported = gated
from veduta.faces.cli.main import main
sys.exit(main(["lsp"]))
"""


def test_a_large_buffer_being_checked_blocks_no_other_request_and_only_its_newest_text_is_published(
    tmp_path, monkeypatch
):
    """The check of a buffer past server.LARGE characters runs beside the server's loop: while it
    is held (a gate in the check itself, opened by the test), a hover on another buffer is
    answered and that buffer's diagnostics are published; an edit of the large buffer meanwhile
    supersedes the check under way, whose result is dropped: only the newest text's diagnostics
    are published, and they are the cook's. Before, the check ran in the loop and nothing was
    answered until it ended."""
    from veduta.faces.lsp.server import LARGE

    root = make_game(tmp_path)
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATE", str(gate))
    big = CRATE.replace("{\n", "{" + " " * (LARGE + 10) + "\n", 1)
    worse = big.replace('"size": [1, 1, 1]', '"size": [1, 0, 1]')

    async def body(ed, init):
        uri = ed.open(root / "assets" / "models" / "crate.vmodel", big)
        while not Path(f"{gate}.started").exists():  # the check of version 1 has begun, and waits
            await asyncio.sleep(0.01)
        ed.replace(uri, worse)  # version 2
        small = ed.open(root / "assets" / "models" / "barrel.vmodel", FILES["models/barrel.vmodel"])
        hover = await asyncio.wait_for(
            ed.text_document_hover_async(
                lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=small), position=lsp.Position(line=0, character=40)
                )
            ),
            60,
        )
        small_found = await ed.diagnostics(small)
        before = list(ed.published[uri])  # nothing yet: the check is held
        gate.touch()
        last = await ed.diagnostics(uri, 2)
        return hover, small_found, before, last, [p.version for p in ed.published[uri]]

    (hover, small_found, before, last, versions), code = run_editor(root, body, argv=("-c", GATED_LSP))
    assert hover is not None and "triangles" in hover.contents.value, hover
    assert list(small_found) == []
    assert before == []
    assert versions == [2]  # version 1's check ended after version 2 came: dropped
    (root / "assets" / "models" / "crate.vmodel").write_text(worse)
    cook = [
        (d["line"], d["col"], f"{d['path']}: {d['message']}", d["severity"], "")
        for d in _cook_lines(root, "models/crate.vmodel")
    ]
    assert [x[2] for x in cook] == ["parts[0].size[1]: 0 out of range (must be > 0)"]
    assert _lsp_to_cook(worse, last) == cook
    assert code == 0


#: ``veduta lsp`` whose hovers, completions, definitions and references on a buffer past
#: server.LARGE characters wait, once begun (each writes its name and line in GATE.started), until
#: the file GATE exists (at most 300 s).
GATED_ASK_LSP = (
    """
import os, sys, time
"""
    + GATE_WAIT
    + """
import veduta.tools.editor as editor
from veduta.faces.lsp.server import LARGE
def gated(real):
    def ask(self, rel, *args):
        if len(self.text(rel) or "") > LARGE:
            wait_for_gate(f"{real.__name__} {args[0]}")
        return real(self, rel, *args)
    return ask
editor.Workspace.hover = gated(editor.Workspace.hover)
editor.Workspace.completion = gated(editor.Workspace.completion)
editor.Workspace.definition = gated(editor.Workspace.definition)
editor.Workspace.references = gated(editor.Workspace.references)
from veduta.faces.cli.main import main
sys.exit(main(["lsp"]))
"""
)


def _at(uri: str, line: int, character: int) -> dict:
    return {
        "text_document": lsp.TextDocumentIdentifier(uri=uri),
        "position": lsp.Position(line=line, character=character),
    }


def test_a_large_buffers_hover_and_completion_block_no_other_documents_request(tmp_path, monkeypatch):
    """A hover and a completion on a buffer past server.LARGE characters read all of its text:
    they are answered beside the server's loop, so while they are held (a gate in the answer
    itself, opened by the test) a hover and a completion on another buffer are answered and its
    diagnostics published; then the held ones are answered, as for the same text small (the
    field's documentation, the range of the key under the cursor, the fields that may be typed).
    Before, they ran in the loop and nothing else was answered until they ended."""
    from veduta.faces.lsp.server import LARGE

    root = make_game(tmp_path)
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATE", str(gate))
    big = CRATE.replace("{\n", "{" + " " * (LARGE + 10) + "\n", 1)
    line = big.split("\n").index([ln for ln in big.split("\n") if '"shape"' in ln][0])
    at = big.split("\n")[line].index('"size"')
    key = at + 2  # (on its "i")
    hole = big.split("\n")[line].index(', "size"') + 1  # after a comma: a field name may be typed there

    async def body(ed, init):
        uri = ed.open(root / "assets" / "models" / "crate.vmodel", big)
        held = asyncio.ensure_future(ed.text_document_hover_async(lsp.HoverParams(**_at(uri, line, key))))
        typing = asyncio.ensure_future(ed.text_document_completion_async(lsp.CompletionParams(**_at(uri, line, hole))))
        while not Path(f"{gate}.started").exists():  # the hover of the large buffer has begun, and waits
            await asyncio.sleep(0.01)
        small = ed.open(root / "assets" / "models" / "barrel.vmodel", FILES["models/barrel.vmodel"])
        other = await asyncio.wait_for(ed.text_document_hover_async(lsp.HoverParams(**_at(small, 0, 40))), 60)
        words = await asyncio.wait_for(ed.text_document_completion_async(lsp.CompletionParams(**_at(small, 0, 40))), 60)
        small_found = await ed.diagnostics(small)
        waiting = (held.done(), typing.done())
        gate.touch()
        return other, words, small_found, waiting, await asyncio.wait_for(held, 60), await asyncio.wait_for(typing, 60)

    (other, words, small_found, waiting, got, typed), code = run_editor(root, body, argv=("-c", GATED_ASK_LSP))
    assert other is not None and "triangles" in other.contents.value, other
    assert words is not None and list(small_found) == []
    assert waiting == (False, False)
    assert got is not None and got.contents.value.startswith("**size**"), got
    assert (got.range.start.line, got.range.start.character, got.range.end.character) == (line, at, at + 6)
    labels = {item.label for item in typed.items}
    assert {"scale", "rotation_deg", "uv"} <= labels and not labels & {"shape", "size", "position", "material"}
    assert code == 0


def _plain(value: object) -> object:
    """A raw answer (the client's namedtuples) as plain JSON values."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def test_a_large_buffers_definition_and_references_answer_from_the_uris_as_asked_and_cancel(tmp_path, monkeypatch):
    """Definition and references on a buffer past server.LARGE characters are answered beside
    the server's loop, from what was so when they were asked, URIs included: while they are held
    (a gate in the answer itself) the client closes a source they name and opens it under another
    spelling of its URI, and they still name it as it was open when asked. A ``$/cancelRequest``
    of the running one answers "cancelled" at once (its job ends when the gate opens, and what it
    read is taken back only then); of a queued one, it never runs. Asked again after, the answer
    names the file as it is open now. Before, the answer's thread read the server's live URI
    tables (the new spelling)."""
    from veduta.faces.lsp.server import LARGE

    (tmp_path / "jeu é").mkdir()
    files = dict(FILES)
    files["prefabs/yard.vprefab"] = (
        '{ "veduta": "prefab/1", "footprint": [2, 2],\n  "entities": [ { "name": "c", "model": "crate" } ] }\n'
    )
    root = make_game(tmp_path / "jeu é", files)
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATE", str(gate))
    crate = root / "assets" / "models" / "crate.vmodel"
    camp = root / "assets" / "prefabs" / "camp.vprefab"
    big = FILES["prefabs/camp.vprefab"].replace("{\n", "{" + " " * (LARGE + 10) + "\n", 1)
    line = 4
    assert '"model": "crate"' in big.split("\n")[line]
    on_crate = big.split("\n")[line].index('"crate"') + 2
    raw_crate = "file://" + str(crate)  # (not percent-encoded: a client may send that)

    def started() -> list[str]:
        return Path(f"{gate}.started").read_text().split() if Path(f"{gate}.started").exists() else []

    async def body(ed, init):
        ed.versions[raw_crate] = 1
        ed.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=raw_crate, language_id="json", version=1, text=CRATE)
            )
        )
        await ed.diagnostics(raw_crate)
        uri = ed.open(camp, big)
        at = {"textDocument": {"uri": uri}, "position": {"line": line, "character": on_crate}}
        refs = {**at, "context": {"includeDeclaration": True}}
        asked = {
            1: asyncio.ensure_future(ed.raw_request(1, "textDocument/definition", at)),
            2: asyncio.ensure_future(ed.raw_request(2, "textDocument/references", refs)),
            3: asyncio.ensure_future(ed.raw_request(3, "textDocument/definition", at)),
            4: asyncio.ensure_future(ed.raw_request(4, "textDocument/references", refs)),
        }
        while not started():  # the first definition has begun, and waits
            await asyncio.sleep(0.01)
        for msg_id in (2, 1):  # one queued, one running
            ed.protocol._send_data({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}})
        cancelled = [await asyncio.wait_for(asked[i], 60) for i in (1, 2)]
        ed.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=raw_crate)))
        encoded = ed.open(crate, CRATE)
        await ed.diagnostics(encoded)
        gate.touch()
        held = [_plain(await asyncio.wait_for(asked[i], 60)) for i in (3, 4)]
        again = _plain(await ed.raw_request(5, "textDocument/definition", at))
        return uri, encoded, cancelled, held, again

    (uri, encoded, cancelled, (definition, references), again), code = run_editor(
        root, body, argv=("-c", GATED_ASK_LSP)
    )
    assert code == 0
    assert "%20%C3%A9" in encoded and encoded != raw_crate
    assert [(type(c).__name__, getattr(c, "code", None)) for c in cancelled] == [
        ("JsonRpcRequestCancelled", -32800)
    ] * 2
    start = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    assert definition == {"uri": raw_crate, "range": start}  # as the client had it open when asking
    name = big.split("\n")[line].index('"crate"')
    yard = files["prefabs/yard.vprefab"].split("\n")[1].index('"crate"')
    assert references == [
        {"uri": raw_crate, "range": start},
        {
            "uri": uri,
            "range": {"start": {"line": line, "character": name}, "end": {"line": line, "character": name + 7}},
        },
        {
            "uri": from_fs_path(str(root / "assets" / "prefabs" / "yard.vprefab")),
            "range": {"start": {"line": 1, "character": yard}, "end": {"line": 1, "character": yard + 7}},
        },
    ]
    assert again == {"uri": encoded, "range": start}  # as it is open now
    assert Path(f"{gate}.started").read_text().split("\n") == [
        f"definition {line + 1}",
        f"definition {line + 1}",
        f"references {line + 1}",
        f"definition {line + 1}",
        "",
    ]  # the queued references cancelled never ran


def _protocol_position(text: str, offset: int) -> lsp.Position:
    """Offset *offset* of *text* as the protocol's position (lines ending at "\\r\\n", "\\r",
    "\\n"; UTF-16 units), from a full index of *text*."""
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]
    line = bisect.bisect_right(starts, offset) - 1
    return lsp.Position(line=line, character=len(text[starts[line] : offset].encode("utf-16-le")) // 2)


def test_a_large_buffer_after_many_incremental_edits_is_the_editors_text(tmp_path):
    """A buffer past server.LARGE characters changed by 150 incremental edits (whitespace
    inserted and deleted anywhere, "\\r", "\\n" and "\\r\\n" among it, ranges across lines and
    line ends, an "\\r" and a "\\n" joined into one line end and split again), then a mistake
    made: its diagnostics are those of the same text opened fresh, at the position a full index of
    the editor's text gives. The server keeps where the lines start from one edit to the next,
    reading only the lines an edit touched (before, it read all of the text again at each edit)."""
    import random

    from veduta.faces.lsp.server import LARGE

    root = make_game(tmp_path)
    rnd = random.Random(20261203)
    text = CRATE.replace("{\n", "{" + " \r\n  " * (LARGE // 5) + "\n", 1)
    edits = []

    def inside(text: str, at: int) -> bool:
        """Whether *at* is between the "\\r" and the "\\n" of a line end (no position of the protocol's)."""
        return 0 < at < len(text) and text[at - 1 : at + 1] == "\r\n"

    for _ in range(150):
        at = rnd.randrange(len(text))
        while text[at] not in " \r\n" or inside(text, at):
            at = rnd.randrange(len(text))
        if rnd.random() < 0.5:  # a run of whitespace deleted (it may hold line ends)
            end = at
            while end < len(text) and text[end] in " \r\n" and end - at < rnd.randint(1, 6):
                end += 1
            end += inside(text, end)
            new = ""
        else:
            end, new = at, "".join(rnd.choice([" ", "\r", "\n", "\r\n"]) for _ in range(rnd.randint(1, 4)))
        edits.append((_protocol_position(text, at), _protocol_position(text, end), new))
        text = text[:at] + new + text[end:]
    at = text.index('"size": [1, 1, 1]') + len('"size": [1, ')
    edits.append((_protocol_position(text, at), _protocol_position(text, at + 1), "0"))
    text = text[:at] + "0" + text[at + 1 :]

    async def body(ed, init):
        uri = ed.open(
            root / "assets" / "models" / "crate.vmodel", CRATE.replace("{\n", "{" + " \r\n  " * (LARGE // 5) + "\n", 1)
        )
        for start, end, new in edits:
            ed.versions[uri] += 1
            ed.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=ed.versions[uri]),
                    content_changes=[
                        lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=new)
                    ],
                )
            )
        edited = await ed.diagnostics(uri)
        fresh = ed.open(root / "assets" / "models" / "fresh.vmodel", text)
        return edited, await ed.diagnostics(fresh)

    (edited, fresh), code = run_editor(root, body)
    assert code == 0
    assert [(d.range, d.message) for d in edited] == [(d.range, d.message) for d in fresh]
    assert [d.message for d in edited] == ["parts[0].size[1]: 0 out of range (must be > 0)"]
    assert edited[0].range.start == _protocol_position(text, at)
    assert len(text) > LARGE and sum(text.count(e) for e in ("\r\n", "\r", "\n")) > 3 * (LARGE // 5)


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet="ab\r\n\u2028é😀", max_size=40),
    st.lists(
        st.tuples(
            st.integers(0, 12),
            st.integers(0, 8),
            st.integers(0, 12),
            st.integers(0, 8),
            st.text(alphabet="a\r\n😀", max_size=4),
        ),
        max_size=12,
    ),
)
def test_where_lines_start_is_kept_through_incremental_edits_as_a_full_index_finds_it(text, changes):
    """The server's document keeps where its lines start from one incremental change to the next
    (only the lines a change touched read again): after each change (any range, in UTF-16 units,
    past line ends and the text's end; any text, "\\r" and "\\n" among it), its text is the one
    a full index gives and where its lines start is the full index of that text."""
    from veduta.faces.lsp.server import _Document, _Lines
    from veduta.source.jsonpos import line_starts

    doc = _Document("file:///x.vmodel", source=text, version=1)
    encoding = doc.position_codec.encoding
    for line, char, end_line, end_char, new in changes:
        start, end = lsp.Position(line=line, character=char), lsp.Position(line=end_line, character=end_char)
        full = _Lines(text)
        a, b = sorted((full.offset(start, encoding), full.offset(end, encoding)))
        text = text[:a] + new + text[b:]
        doc.apply_change(lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=new))
        assert doc.source == text
        assert doc.line_starts().tolist() == line_starts(text)


#: ``veduta lsp`` whose check of a buffer past server.LARGE characters, once begun (it touches
#: GATE.started), waits for a file GATE that never comes (300 s).
HELD_CHECK_LSP = GATED_LSP.replace("range(12000)", "range(30000)")


def test_exit_with_a_large_buffers_check_under_way_ends_the_process(tmp_path, monkeypatch):
    """``shutdown`` and ``exit`` while a large buffer's check is held in the server's thread: the
    process ends (status 0) without waiting for the check, its thread a daemon. Before, the
    check ran in a ThreadPoolExecutor's thread, which the interpreter joins at exit: the process
    lived on until the check ended."""
    from veduta.faces.lsp.server import LARGE

    root = make_game(tmp_path)
    gate = tmp_path / "gate"
    monkeypatch.setenv("GATE", str(gate))
    big = CRATE.replace("{\n", "{" + " " * (LARGE + 10) + "\n", 1)

    async def main():
        ed = Editor()
        await ed.start_io(sys.executable, "-c", HELD_CHECK_LSP, cwd=str(root))
        try:
            await asyncio.wait_for(
                ed.initialize_async(
                    lsp.InitializeParams(
                        capabilities=lsp.ClientCapabilities(), root_uri=from_fs_path(str(root)), process_id=os.getpid()
                    )
                ),
                120,
            )
            ed.initialized(lsp.InitializedParams())
            ed.open(root / "assets" / "models" / "crate.vmodel", big)
            while not Path(f"{gate}.started").exists():  # the check has begun, and is held
                await asyncio.sleep(0.01)
            await asyncio.wait_for(ed.shutdown_async(None), 60)
            ed.exit(None)
            await asyncio.wait_for(ed.stop(), 60)  # the server process ended
            return ed._server.returncode, gate.exists()
        finally:
            if ed._server is not None and ed._server.returncode is None:
                ed._server.kill()

    code, opened = asyncio.run(main())
    assert (code, opened) == (0, False)


def test_sources_whose_paths_hold_a_space_and_a_non_ascii_letter(tmp_path):
    """A game folder and sources whose names hold a space and "é", opened as editors name them
    (percent-encoded: ``jeu%20%C3%A9``) or not: diagnostics, hover and definition work, and every
    publication goes to the URI the client gave, also when another buffer's change republishes it."""
    (tmp_path / "jeu é").mkdir()
    files = {k: v for k, v in FILES.items() if k not in ("models/crate.vmodel", "prefabs/camp.vprefab")}
    root = make_game(tmp_path / "jeu é", files)
    model = root / "assets" / "models" / "old wall" / "é" / "crate.vmodel"  # (file names are asset names)
    camp = root / "assets" / "prefabs" / "old wall" / "camp.vprefab"
    model.parent.mkdir(parents=True)
    camp.parent.mkdir(parents=True)
    model.write_text(BAD_CRATE)
    prefab = FILES["prefabs/camp.vprefab"].replace('"barrel"', '"barel"')
    camp.write_text(prefab)
    line = 3

    async def body(ed, init):
        uri = ed.open(model, BAD_CRATE)
        bad = await ed.diagnostics(uri)
        raw = "file://" + str(camp)  # not encoded: a client may send that too
        ed.versions[raw] = 1
        ed.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=raw, language_id="json", version=1, text=prefab)
            )
        )
        missing = await ed.diagnostics(raw)
        seen = len(ed.published[raw])
        ed.open(root / "assets" / "models" / "barel.vmodel", CRATE)  # the prefab's warning goes away
        after = await _next(ed, raw, seen)
        ed.replace(uri, CRATE)
        fixed = await ed.diagnostics(uri)
        ident = lsp.TextDocumentIdentifier(uri=uri)
        on_shape = lsp.Position(line=line, character=CRATE.split("\n")[line].index('"box"') + 1)
        hover = await ed.text_document_hover_async(lsp.HoverParams(text_document=ident, position=on_shape))
        on_name = lsp.Position(line=line, character=CRATE.split("\n")[line].index("crate_wood") + 2)
        definition = await ed.text_document_definition_async(
            lsp.DefinitionParams(text_document=ident, position=on_name)
        )
        return uri, raw, bad, missing, after, fixed, hover, definition, set(ed.published)

    (uri, raw, bad, missing, after, fixed, hover, definition, published), code = run_editor(root, body)
    assert "%20" in uri and "%C3%A9" in uri and " " not in uri
    assert [f"crate.vmodel:{d.range.start.line + 1}:{d.range.start.character + 1}: {d.message}" for d in bad] == (
        SPEC_LINES
    )
    assert [d.code for d in missing] == ["MISSING_REFERENCE"]
    assert list(after) == [] and list(fixed) == []
    assert hover is not None and "12 triangles" in hover.contents.value
    assert definition is not None
    assert definition.uri == from_fs_path(str(root / "assets" / "materials" / "crate_wood.vmaterial"))
    assert "%20%C3%A9" in definition.uri
    assert raw in published and from_fs_path(str(camp)) not in published  # sent back as the client spelled it
    assert code == 0
