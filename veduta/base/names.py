"""Suggestions for a name that does not exist: "did you mean crate?".

Every tool and face says an unknown asset name the same way (:func:`veduta.base.errors.no_such_asset`
uses :func:`did_you_mean`); the language server and the MCP server use :func:`closest` for their own
messages. Deterministic: candidates are ranked by similarity, ties by name.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

#: The asset name rule (model-format.md): 1-64 characters of a-z, 0-9, _ and -, starting with a
#: letter or digit. An asset's name is its file name without the suffix, and every reference to an
#: asset is such a name; place, feature and rule names follow it too.
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: The rule in words, as every message quotes it.
NAME_RULE = "1-64 of a-z, 0-9, _, -, starting with a letter or digit"


def is_name(text: object) -> bool:
    """Whether *text* is a string that follows the asset name rule."""
    return isinstance(text, str) and NAME_RE.fullmatch(text) is not None

#: A word longer than this gets no suggestion (difflib's cost grows with the product of lengths,
#: and no asset name is that long).
LONGEST = 64


def closest(word: str, candidates: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to *n* of *candidates* most like *word* (best first, ties by name), none below *cutoff*
    (difflib's ratio, 0..1)."""
    if not word or len(word) > LONGEST:
        return []
    pool = sorted({c for c in candidates if c != word and len(c) <= LONGEST})
    scored = []
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(word.lower())
    for c in pool:
        matcher.set_seq1(c.lower())
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            r = matcher.ratio()
            if r >= cutoff:
                scored.append((-r, c))
    return [c for _, c in sorted(scored)[:n]]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``" (did you mean crate?)"``, ``" (did you mean crate or crates?)"``, or ``""`` when nothing is close."""
    best = closest(word, candidates)
    if not best:
        return ""
    shown = best[0] if len(best) == 1 else ", ".join(best[:-1]) + " or " + best[-1]
    return f" (did you mean {shown}?)"
