"""The command line's compact JSON (veduta.faces.cli.common.compact_json): one item per line,
lists of numbers and short lists of strings on one line. Its fast paths for long reports (no
encoder built per value; a list's flat dicts from separators made once) write exactly what it
wrote value by value (issue 22: a world edit's report of 44,000 changes)."""

from __future__ import annotations

import json

from veduta.faces.cli.common import compact_json

VALUE = {
    "name": 'é"x\n\t\u0001',
    "on": True,
    "none": None,
    "f": 1.5,
    "nan": float("nan"),
    "mixed": [1, 2, -0.0, 1e300, "x", None, False],
    "pairs": [[1, 2], [3]],
    "empty": [],
    "obj": {},
    "inf": [float("inf")],
    "long": ["a" * 60, "b" * 60],
    "floats": [1.5] * 40,
    "five": [[1], [2], [3], [4], [5]],
    "changes": [{"a": 1}, {"a": [1, 2]}, {"b": [1.5]}, {"c": [True]}, {}, {"d": {"e": 1}}, {"y": [1, 2.5]}],
}

# what compact_json wrote before its fast paths, value by value with json.dumps
EXPECTED = (
    '{\n  "name": "é\\"x\\n\\t\\u0001",\n  "on": true,\n  "none": null,\n  "f": 1.5,\n  "nan": NaN,\n'
    '  "mixed": [1, 2, -0.0, 1e+300, "x", null, false],\n  "pairs": [[1, 2], [3]],\n  "empty": [],\n'
    '  "obj": {},\n  "inf": [Infinity],\n  "long": [\n'
    '    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",\n'
    '    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"\n  ],\n'
    '  "floats": [' + ", ".join(["1.5"] * 40) + "],\n"
    '  "five": [\n    [1],\n    [2],\n    [3],\n    [4],\n    [5]\n  ],\n'
    '  "changes": [\n    {\n      "a": 1\n    },\n    {\n      "a": [1, 2]\n    },\n    {\n      "b": [1.5]\n'
    '    },\n    {\n      "c": [true]\n    },\n    {},\n    {\n      "d": {\n        "e": 1\n      }\n    },\n'
    '    {\n      "y": [1, 2.5]\n    }\n  ]\n}'
)


def test_compact_json_writes_what_it_wrote_value_by_value():
    assert compact_json(VALUE) == EXPECTED
    # twice: the separators made for the first list's dicts serve the second as they are
    assert compact_json({"again": VALUE["changes"]}) == compact_json({"again": [dict(d) for d in VALUE["changes"]]})
    back = json.loads(compact_json({k: v for k, v in VALUE.items() if k not in ("nan", "inf")}))
    assert back["changes"][1] == {"a": [1, 2]} and back["name"] == VALUE["name"]
