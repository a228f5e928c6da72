"""errors.quote, clip and shown_path: what a message shows of a user's value."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from veduta.base.errors import clip, clip_words, quote, shown_path


def _format_characters() -> list[str]:
    return [chr(i) for i in range(sys.maxunicode + 1) if unicodedata.category(chr(i)) == "Cf"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("evil\u202egpj.vmodel", '"evil\\u202egpj.vmodel"'),  # right-to-left override
        ("a\u200bb", '"a\\u200bb"'),  # zero-width space
        ("\ufeffcrate", '"\\ufeffcrate"'),  # a byte-order mark
        ("\u2066x\u2067y\u2068z\u2069", '"\\u2066x\\u2067y\\u2068z\\u2069"'),  # isolates
        ("tag\U000e0041", '"tag\\U000e0041"'),  # a tag character, beyond the BMP
        ("caf\u00e9 \u6728", '"caf\u00e9 \u6728"'),  # letters stay as they are
        ("a\x00b\n", '"a\\x00b\\n"'),  # control characters, as before
    ],
)
def test_quote_escapes_format_characters(text, shown):
    assert quote(text) == shown


def test_every_format_character_is_escaped_everywhere_a_value_is_shown():
    chars = _format_characters()
    assert "\u202e" in chars and "\u200b" in chars and "\ufeff" in chars
    for ch in chars:
        want = f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"
        assert quote(ch) == f'"{want}"'
        assert clip(ch) == want
        assert shown_path(f"models/{ch}.vmodel") == f"models/{want}.vmodel"
        assert clip_words(f"bad {ch}x") == f"bad {want}x"
    long = "\u202e" * 100
    assert quote(long) == '"' + "\\u202e" * 40 + '..." (100 characters)'


def test_a_byte_that_is_not_utf8_shows_as_the_byte_everywhere_a_value_is_shown():
    """A Latin-1 file name (``caf\\xe9``, a lone surrogate once the file system decoding has it):
    one spelling, ``\\xe9``, in every line (as a veduta report page shows it), whatever the
    stream's encoding (before: the raw byte, ``\\udce9`` or a UnicodeEncodeError, by stream);
    another lone surrogate (from a ``\\u`` escape) as ``\\ud800``."""
    import os

    name = os.fsdecode(b"models/caf\xe9\xff.vmodel")
    assert shown_path(name) == "models/caf\\xe9\\xff.vmodel"
    assert quote(name) == '"models/caf\\xe9\\xff.vmodel"'
    assert clip(name) == "models/caf\\xe9\\xff.vmodel"
    assert clip_words(f"bad {name}") == "bad models/caf\\xe9\\xff.vmodel"
    assert shown_path("a\ud800b\udfffc") == "a\\ud800b\\udfffc"
    for ch in map(chr, range(0xD800, 0xE000)):
        shown_path(ch).encode("utf-8")  # (strict: a line that any stream can write)
    assert shown_path(shown_path(name + "\n\u202e")) == shown_path(name + "\n\u202e")  # shown once is shown
