"""Closest-name suggestions for unknown names: ``no model "crat" (did you mean crate?)``.

Every message about a name that does not exist (an asset, a kind, a place in a world) names the
closest existing ones, so that a typo costs one look, not a search. Suggestions are a pure
function of the word and the set of candidates (sorted, no hash order), so a message is the same
on every run.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["closest", "unknown", "did_you_mean", "NAME_RE", "NAME_RULE", "is_name", "LONGEST"]

#: how alike a candidate must be (difflib's ratio) to be suggested
CUTOFF = 0.6

#: A word longer than this gets no suggestion (difflib's cost grows with the product of lengths,
#: and no asset name is that long: a 5 MB name must not cost minutes).
LONGEST = 64

#: The asset name rule (model-format.md): 1-64 characters of a-z, 0-9, _ and -, starting with a
#: letter or digit. An asset's name is its file name without the suffix, and every reference to an
#: asset is such a name; place, feature and rule names follow it too.
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: The rule in words, as every message quotes it.
NAME_RULE = "1-64 of a-z, 0-9, _, -, starting with a letter or digit"


def is_name(text: object) -> bool:
    """Whether *text* is a string that follows the asset name rule."""
    return isinstance(text, str) and NAME_RE.fullmatch(text) is not None


def closest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to *n* of *candidates* closest to *word*, most alike first (ties in name order); a
    candidate that differs from *word* only in case comes first. [] when none is close."""
    if not word or len(word) > LONGEST:
        return []
    pool = sorted({c for c in candidates if len(c) <= LONGEST})
    if not pool or n <= 0:
        return []
    folded = word.casefold()
    same_case = [c for c in pool if c.casefold() == folded and c != word]
    rest = [c for c in difflib.get_close_matches(folded, [c.casefold() for c in pool], n=len(pool), cutoff=CUTOFF)]
    by_fold: dict[str, list[str]] = {}
    for c in pool:
        by_fold.setdefault(c.casefold(), []).append(c)
    out = list(same_case)
    for f in rest:
        out += [c for c in by_fold[f] if c not in out and c != word]
    return out[:n]


def did_you_mean(word: str, candidates: Iterable[str], n: int = 3) -> str:
    """``" (did you mean crate?)"``, ``" (did you mean crate, crater or grate?)"``, or ``""``
    when no candidate is close: the tail of a message about an unknown *word*."""
    close = closest(word, candidates, n)
    if not close:
        return ""
    said = close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]
    return f" (did you mean {said}?)"


def unknown(kind: str, word: str, candidates: Iterable[str]) -> str:
    """The message about an unknown name: ``no model "crat" (did you mean crate?)``."""
    return f'no {kind} "{word}"{did_you_mean(word, candidates)}'
