"""Suggestions for a name that does not exist: "did you mean crate?".

Every tool and face says an unknown asset name the same way (:func:`veduta.base.errors.no_such_asset`
uses :func:`did_you_mean`); the language server and the MCP server use :func:`closest` for their own
messages. Deterministic: candidates are ranked by similarity, ties by name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

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
