"""Byte-preserving array edits (veduta.source.jsonedit): only the edited array changes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veduta.source.jsonedit import EditError, JsonDoc, append_item, remove_item, replace_item
from veduta.source.jsonpos import parse, to_plain

ORDER = ["veduta", "seed", "biomes", "features", "vegetation", "places", "entities"]

ALIGNED = """{
  "veduta": "world/1",
  "seed": 3,
  "features": [
    { "name": "east_ridge",    "kind": "hill",  "cell": [220, -40], "radius": 60, "height": 14 },
    { "name": "mill_pond",     "kind": "lake",  "cell": [-35, 40],  "radius": 12, "depth": 2.5 }
  ],
  "places": [ { "name": "well", "prefab": "well", "cell": [-70, 0] },
              { "name": "keeper", "prefab": "cottage", "cell": [-59, -7], "rotation": 90 } ],
  "entities": []
}
"""

PRETTY = (
    json.dumps(
        {
            "veduta": "world/1",
            "features": [
                {"name": "a", "kind": "hill", "cell": [1, 2], "radius": 3},
                {"name": "b", "kind": "plain", "cell": [4, 5], "radius": 6},
            ],
            "places": [{"name": "p", "prefab": "well", "cell": [0, 0]}],
        },
        indent=4,
    )
    + "\n"
)

MINIFIED = (
    '{"veduta":"world/1","places":[{"name":"p","prefab":"well","cell":[0,0]},{"name":"q","prefab":"x","cell":[1,1]}]}'
)

TABS = '{\n\t"veduta": "world/1",\n\t"places": [\n\t\t{"name": "p", "prefab": "well", "cell": [0, 0]}\n\t]\n}\n'

CRLF = ALIGNED.replace("\n", "\r\n")

LAYOUTS = {"aligned": ALIGNED, "pretty": PRETTY, "minified": MINIFIED, "tabs": TABS, "crlf": CRLF}
NEW = {"name": "inn", "prefab": "cottage", "cell": [-40, 12], "rotation": 90}


def _arrays(text):
    return {k: v for k, v in to_plain(parse(text)[0]).items()}


def _outside(text: str, key: str) -> tuple[str, str]:
    """The text before and after the array root[key]."""
    doc = JsonDoc(text)
    a, b = doc.span(doc.root.get(key))
    return text[:a], text[b:]


def _items(text: str, key: str) -> list[str]:
    doc = JsonDoc(text)
    out = []
    for node in doc.root.get(key):
        a, b = doc.span(node)
        out.append(text[a:b])
    return out


@pytest.mark.parametrize(
    "layout, key",
    [(lay, key) for lay in sorted(LAYOUTS) for key in ("places", "features") if key in _arrays(LAYOUTS[lay])],
)
def test_append_keeps_every_other_byte(layout, key):
    text = LAYOUTS[layout]
    new = append_item(text, key, NEW)
    before, after = _outside(text, key)
    assert new.startswith(before) and new.endswith(after)
    old_items = _items(text, key)
    assert _items(new, key)[:-1] == old_items  # the earlier elements, byte for byte
    assert _arrays(new)[key] == _arrays(text)[key] + [NEW]
    # appending then removing the new element gives the file back exactly
    assert remove_item(new, key, len(old_items)) == text
    if "\r\n" in text:
        assert "\n" not in new.replace("\r\n", "")


def test_append_follows_the_neighbours_style():
    new = append_item(ALIGNED, "places", NEW)
    assert (
        '{ "name": "keeper", "prefab": "cottage", "cell": [-59, -7], "rotation": 90 },\n'
        '              { "name": "inn", "prefab": "cottage", "cell": [-40, 12], "rotation": 90 } ],'
    ) in new
    new = append_item(ALIGNED, "features", {"name": "h", "kind": "hill", "cell": [1, 2], "radius": 5})
    # a column-aligned table: the new row is aligned too
    assert (
        '"depth": 2.5 },\n    { "name": "h",             "kind": "hill",  "cell": [1, 2],     "radius": 5 }\n  ],'
    ) in new
    new = append_item(MINIFIED, "places", NEW)
    assert new.endswith(',{"name":"inn","prefab":"cottage","cell":[-40,12],"rotation":90}]}')
    new = append_item(PRETTY, "places", NEW)
    assert '        },\n        {\n            "name": "inn",\n' in new
    assert '            "cell": [-40, 12],\n' in new  # flat lists are written on one line
    new = append_item(TABS, "places", NEW)
    assert '[0, 0]},\n\t\t{"name": "inn"' in new


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_replace_and_remove_each_element(layout):
    text = LAYOUTS[layout]
    key = "places"
    items = _items(text, key)
    plain = _arrays(text)[key]
    before, after = _outside(text, key)
    for i in range(len(items)):
        new = replace_item(text, key, i, NEW)
        assert new.startswith(before) and new.endswith(after)
        got = _items(new, key)
        assert got[:i] == items[:i] and got[i + 1 :] == items[i + 1 :]
        assert _arrays(new)[key] == plain[:i] + [NEW] + plain[i + 1 :]
        assert ("\n" in got[i]) == ("\n" in items[i])  # the replaced element's own style
        gone = remove_item(text, key, i)
        assert gone.startswith(before) and gone.endswith(after)
        assert _items(gone, key) == items[:i] + items[i + 1 :]
        assert _arrays(gone)[key] == plain[:i] + plain[i + 1 :]


def test_remove_the_only_element_leaves_an_empty_array():
    assert remove_item(TABS, "places", 0) == '{\n\t"veduta": "world/1",\n\t"places": []\n}\n'


def test_create_a_missing_or_empty_array():
    new = append_item(ALIGNED, "vegetation", {"name": "g", "model": "grass", "density": 0.3}, ORDER)
    # after "features" (the field before it in ORDER), in the file's own element style
    assert '\n  ],\n  "vegetation": [\n    { "name": "g", "model": "grass", "density": 0.3 }\n  ],\n  "places"' in new
    i = new.index('"vegetation"')
    j = new.index('"places"')
    assert new[:i] + new[j:] == ALIGNED[:i] + ALIGNED[ALIGNED.index('"places"') :]
    new = append_item(ALIGNED, "entities", {"name": "e"}, ORDER)
    assert '"entities": [\n    { "name": "e" }\n  ]\n}' in new
    new = append_item(MINIFIED, "features", {"name": "h"}, ORDER)
    assert new == MINIFIED.replace('"places"', '"features":[{"name":"h"}],"places"')
    new = append_item('{"veduta": "world/1"}', "places", {"name": "p"}, ORDER)
    assert to_plain(parse(new)[0]) == {"veduta": "world/1", "places": [{"name": "p"}]}


def test_refuses_what_it_cannot_edit():
    with pytest.raises(EditError):
        append_item("[1, 2]", "places", NEW)
    with pytest.raises(EditError):
        append_item('{"places": 3}', "places", NEW)
    with pytest.raises(EditError):
        remove_item(ALIGNED, "places", 5)
    with pytest.raises(EditError):
        replace_item('{"places": [1,', "places", 0, NEW)


# -- random layouts --------------------------------------------------------------------------------

WS = st.sampled_from(["", " ", "  ", "\n", "\n  ", "\n\t", " \n    ", "\r\n  "])
SCALAR = st.one_of(
    st.integers(-1000, 1000),
    st.sampled_from(["a", "b c", "é"]),
    st.booleans(),
    st.floats(-100, 100, allow_nan=False).map(lambda f: round(f, 3)),
)
VALUE = st.one_of(SCALAR, st.lists(st.integers(-50, 50), max_size=3))
ELEMENT = st.dictionaries(st.sampled_from(["name", "kind", "cell", "radius", "x"]), VALUE, min_size=1, max_size=4)


@st.composite
def layouts(draw):
    """A JSON text of {"veduta", "items": [objects], "tail"} with random whitespace between tokens."""

    def w():
        return draw(WS)

    def obj(d):
        parts = []
        for k, v in d.items():
            if isinstance(v, list):
                val = "[" + w() + ("," + w()).join(json.dumps(x) for x in v) + w() + "]"
            else:
                val = json.dumps(v, ensure_ascii=False)
            parts.append(json.dumps(k) + w() + ":" + w() + val)
        return "{" + w() + ("," + w()).join(parts) + w() + "}"

    items = draw(st.lists(ELEMENT, min_size=1, max_size=4))
    arr = "[" + w() + ("," + w()).join(obj(d) for d in items) + w() + "]"
    return (
        "{"
        + w()
        + '"veduta"'
        + w()
        + ":"
        + w()
        + '"world/1"'
        + w()
        + ","
        + w()
        + '"items"'
        + w()
        + ":"
        + w()
        + arr
        + w()
        + ","
        + w()
        + '"tail"'
        + w()
        + ":"
        + w()
        + "[1, 2]"
        + w()
        + "}"
        + w()
    )


@settings(max_examples=150, deadline=None)
@given(layouts(), ELEMENT, st.data())
def test_random_layouts(text, element, data):
    items = _items(text, "items")
    plain = _arrays(text)["items"]
    before, after = _outside(text, "items")
    new = append_item(text, "items", element)
    assert new.startswith(before) and new.endswith(after)
    assert _arrays(new)["items"] == plain + [json.loads(json.dumps(element))]
    assert remove_item(new, "items", len(items)) == text
    i = data.draw(st.integers(0, len(items) - 1))
    rep = replace_item(text, "items", i, element)
    assert rep.startswith(before) and rep.endswith(after)
    assert _items(rep, "items")[:i] == items[:i] and _items(rep, "items")[i + 1 :] == items[i + 1 :]
    gone = remove_item(text, "items", i)
    assert gone.startswith(before) and gone.endswith(after)
    assert _items(gone, "items") == items[:i] + items[i + 1 :]


@settings(max_examples=100, deadline=None)
@given(layouts())
def test_every_span_is_its_value_as_written(text):
    from veduta.source.jsonpos import parse_spans

    root, spans, problems = parse_spans(text)
    assert root is not None and not problems
    assert len(spans) > 3
    for node, a, b in spans.values():
        assert json.loads(text[a:b]) == to_plain(node)
        assert not text[a:b].startswith((" ", "\n")) and not text[a:b].endswith((" ", "\n"))
    assert parse_spans("[1,")[0] is None
