"""The language server's core (veduta/tools/editor.py) on the sample game: what it answers
besides what tests/faces/lsp drives over stdio."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.base.project import Project
from veduta.tools.editor import Workspace
from veduta.tools.jsoncursor import locate, token_span

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ws(tmp_path) -> Workspace:
    """The sample game's sources in a folder of their own (nothing cooked there)."""
    shutil.copytree(ROOT / "assets", tmp_path / "assets", ignore=shutil.ignore_patterns(".cooked"))
    (tmp_path / "dodo.py").write_text("from veduta.dodo import *\n")
    return Workspace(Project.at(str(tmp_path)))


def _at(text: str, needle: str, into: int = 1) -> tuple[int, int]:
    """(line, col) of *needle*'s character *into* (1-based), first occurrence."""
    i = text.index(needle) + into
    line = text.count("\n", 0, i) + 1
    return line, i - (text.rfind("\n", 0, i) + 1) + 1


def test_a_place_hover_is_the_generators_answer(ws, tmp_path):
    from veduta.tools.peek import place_info
    from veduta.world.generator import Generator

    rel = "worlds/valley.vworld"
    text = ws.text(rel)
    ws.open(rel, text)
    hover = ws.hover(rel, *_at(text, '"village_well"'))
    got = place_info(ws, rel, text, 0)
    assert f"biome `{got['biome']}`" in hover["text"] and f"height {got['height']} m" in hover["text"]
    # the generator on the cooked world says the same
    from veduta import api

    q = api.world_query(Project.at(str(tmp_path)), "valley", tuple(got["cell"]))
    assert (q["biome"], q["height"]) == (got["biome"], got["height"])
    assert isinstance(Generator, type)


def test_world_place_hover_follows_the_unsaved_text(ws):
    rel = "worlds/valley.vworld"
    text = ws.text(rel)
    moved = text.replace('"prefab": "well", "cell": [-70, 0]', '"prefab": "well", "cell": [10, 12]', 1)
    assert moved != text
    ws.open(rel, moved)
    assert "cell [10, 12] = x 10..11 m, z 12..13 m" in ws.hover(rel, *_at(moved, '"village_well"'))["text"]


def test_biomes_and_clips_complete_and_go_to_their_declaration(ws):
    world = "worlds/valley.vworld"
    text = ws.text(world)
    ws.open(world, text)
    spot = _at(text, '"biomes": ["meadow"', len('"biomes": ["'))
    assert [i["label"] for i in ws.completion(world, *spot)["items"]] == ["forest", "heath", "meadow"]
    found = ws.definition(world, *spot)
    assert found["file"].endswith("valley.vworld") and found["line"] < spot[0]
    scene = "scenes/demo.vscene"
    stext = ws.text(scene)
    spot = _at(stext, '"anim": "walk"', len('"anim": "'))
    assert [i["label"] for i in ws.completion(scene, *spot)["items"]] == ["idle", "jump", "walk"]
    assert ws.definition(scene, *spot)["file"].endswith("hero.vtexture")


def test_an_unsaved_material_clears_a_models_warning_and_references_follow(ws):
    model = "models/crate.vmodel"
    text = ws.text(model).replace('"crate_wood"', '"oak_planks"')
    ws.open(model, text)
    (d,) = ws.diagnostics(model)
    assert d["code"] == "MISSING_REFERENCE" and 'material "oak_planks"' in d["message"]
    # the new material, unsaved: the model's check read nothing of it (a name only), but looked
    # for it: it is among the buffers to check again
    assert ws.open("materials/oak_planks.vmaterial", '{ "veduta": "material/1" }') == [model]
    assert ws.diagnostics(model) == []
    refs = ws.references("materials/oak_planks.vmaterial", 1, 1)
    assert [r["file"].rsplit("/", 1)[-1] for r in refs] == ["oak_planks.vmaterial", "crate.vmodel"]
    assert ws.close("materials/oak_planks.vmaterial") == [model]
    assert [d["code"] for d in ws.diagnostics(model)] == ["MISSING_REFERENCE"]


def test_diagnostic_ranges_cover_the_value(ws):
    rel = "materials/crate_wood.vmaterial"
    text = '{ "veduta": "material/1",\n  "albedo": "#12",\n  "grid": [0, 0], "cull": {\n "x": 1 } }\n'
    ws.open(rel, text)
    got = {d["path"]: (d["line"], d["col"], d["end_line"], d["end_col"]) for d in ws.diagnostics(rel)}
    assert got["albedo"] == (2, 13, 2, 18)  # "#12" with its quotes
    # an object over several lines: its first line, from its brace
    assert got["cull"] == (*_at(text, "{\n", 0), 3, len('  "grid": [0, 0], "cull": {') + 1)


def test_the_cursor_in_text_being_typed():
    text = '{ "parts": [ { "shape": "box", "mat'
    p = locate(text, len(text))
    assert (p.role, p.path, p.word) == ("key", ["parts", 0], "mat") and p.facts[-1] == {"shape": "box"}
    text = '{ "parts": [ { "shape": "box", "material": "cr'
    p = locate(text, len(text))
    assert (p.role, p.path, p.word, p.quoted) == ("value", ["parts", 0, "material"], "cr", True)
    assert locate('{ "a": "b" }', 10).role == ""  # after a closed string
    assert locate('{ "a": 1, }', 10).role == "key"
    text = '{"a": [1, 2], "b": "x\\"y"}'
    assert text[text.index("[") : token_span(text, text.index("["))] == "[1, 2]"
    assert text[text.index('"x') : token_span(text, text.index('"x'))] == '"x\\"y"'


def test_a_detached_copy_answers_as_the_workspace_and_its_reading_is_adopted(ws, monkeypatch):
    """:meth:`Workspace.detached` (what the language server asks about a large buffer in its
    thread) answers a hover, a completion and the references as the workspace itself would,
    while the workspace goes on changing; afterwards the workspace adopts what the copy read of
    a buffer still unchanged (its references: not read again) and nothing of one changed since."""
    from veduta.tools.refs import RefGraph

    rel = "scenes/demo.vscene"
    text = ws.text(rel)
    ws.open(rel, text)
    ws.sync()
    moved = text.replace('"model": "crate"', '"model": "barrel"', 1)
    ws.change(rel, moved)  # its references not read yet
    where = _at(moved, '"barrel"', 2)
    aside = ws.detached()
    answers = [aside.hover(rel, *where), aside.completion(rel, *where), aside.references(rel, *where)]
    assert rel in ws._stale and not aside._stale
    fresh = Workspace(ws.project)
    fresh.open(rel, moved)
    assert answers == [fresh.hover(rel, *where), fresh.completion(rel, *where), fresh.references(rel, *where)]

    put = RefGraph._put

    def unread(self, source, data, names=None):
        assert names is not None or source != rel, "read again"
        put(self, source, data, names)

    monkeypatch.setattr(RefGraph, "_put", unread)
    ws.adopt(aside)
    assert rel not in ws._stale and ws.graph.names_in(rel) == fresh.graph.names_in(rel)
    assert ("model", "barrel") in ws.graph.names_in(rel)
    monkeypatch.setattr(RefGraph, "_put", put)

    again = moved.replace('"model": "barrel"', '"model": "well"', 1)
    aside = ws.detached()
    ws.change(rel, again)  # changed while the copy reads the older text
    aside.hover(rel, *where)
    ws.adopt(aside)
    assert rel in ws._stale  # not the copy's reading: the newer text is read when asked
    assert ("model", "well") in ws.sync().names_in(rel) and ("model", "barrel") not in ws.graph.names_in(rel)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet='ab"\\\r\nu0é\t ', max_size=16))
def test_a_string_being_typed_is_read_as_reading_it_one_character_at_a_time_does(rest):
    """The cursor's string reader steps over runs of plain characters at C speed (a hover at the
    end of a 17 MB scene: most of its time was this): where a string ends, its value and whether
    it is closed are what reading it one character at a time gives."""
    import re
    from unittest import mock

    from veduta.tools import jsoncursor

    texts = [('"' + rest, 0), ('x "' + rest, 2)]
    got = [jsoncursor._string_end(*t) for t in texts]
    with mock.patch.object(jsoncursor, "_PLAIN_RUN", re.compile("")):  # no run: one character at a time
        assert got == [jsoncursor._string_end(*t) for t in texts]


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='ab "\\/{}[],:\t\u2028é😀\ud83d\ude00\udfff', max_size=6)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='ab"\\{', max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


@st.composite
def _typed_json(draw) -> str:
    """JSON as an editor holds it: any value, written with or without indentation and escapes
    (surrogate pairs and lone surrogates as \\u escapes or raw), lines ending in "\\n", "\\r\\n"
    or "\\r", and often broken by typing (cut short, a character put in or taken out)."""
    import json

    text = json.dumps(draw(_VALUES), indent=draw(st.sampled_from([None, 1, 2])), ensure_ascii=draw(st.booleans()))
    text = text.replace("\n", draw(st.sampled_from(["\n", "\r\n", "\r"])))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(list('{}[]",:\\\n\r 1ax'))) + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_locate_jumping_over_valid_values_finds_what_stepping_through_every_token_does(data):
    """:func:`locate` jumps over an object or array before the cursor that is valid JSON (read by
    the C decoder) and stops once every object on the cursor's path is closed (a hover near the end
    of a 17 MB scene: 0.7-1.2 s -> 30-80 ms): at every offset, hovering or typing, what it finds
    (role, path, token, word, the facts of every object on the way) is what stepping through
    every token finds."""
    from unittest import mock

    from veduta.tools import jsoncursor

    text = data.draw(_typed_json())
    offsets = data.draw(st.lists(st.integers(0, len(text)), min_size=1, max_size=8))
    for offset in offsets:
        for hover in (False, True):
            got = locate(text, offset, hover)
            with mock.patch.object(jsoncursor, "_JUMP", False):
                assert vars(got) == vars(locate(text, offset, hover)), (text, offset, hover)


def test_locate_in_deep_nesting_decodes_the_values_holding_the_cursor_a_bounded_number_of_times(monkeypatch):
    """Each value that holds the cursor, decoded in vain up to it, costs the text from its start
    to the cursor: after HOLDERS_TRIED of them the deeper ones are stepped through (a depth of 16
    cost more than stepping, 256 about a minute), and the answer is the stepping one's."""
    import json as json_module

    from veduta.tools import jsoncursor

    inner = json_module.dumps([{"a": i, "b": [i, i + 1]} for i in range(50)])
    for depth in (1, 3, 16, 64):
        text = "[" * depth + inner + "]" * depth
        offset = len(text) - depth - 5
        ran_out: list[int] = []
        decode = jsoncursor._DECODE

        def counted(s, i, decode=decode, ran_out=ran_out):
            try:
                return decode(s, i)
            except json_module.JSONDecodeError as exc:
                if exc.pos >= len(s):
                    ran_out.append(i)
                raise

        monkeypatch.setattr(jsoncursor, "_JUMP", True)
        monkeypatch.setattr(jsoncursor, "_DECODE", counted)
        jumped = jsoncursor.locate(text, offset)
        monkeypatch.setattr(jsoncursor, "_JUMP", False)
        stepped = jsoncursor.locate(text, offset)
        assert jumped == stepped
        assert len(ran_out) <= jsoncursor.HOLDERS_TRIED, (depth, ran_out)
