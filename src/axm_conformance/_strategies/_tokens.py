"""Structured strings made of a tool's own tokens: its words joined by the separators it uses.

A parser of ``key=value;key=value`` meets its defect in a chunk with two ``=`` (``a=1;b=c=d``),
which neither a whole literal nor a drawn string builds but by chance. A tool whose source
splits on ``";"`` and ``"="`` has both among its literals (a description names them inside the
values it shows: `` `unit=cm;scale=2` ``); from them and the tool's word-like literals, strings
are built in the shapes parsers stumble on: one pair, two pairs, a chunk with the inner
separator twice, a chunk without it, empty chunks and values, a separator at either end.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Final

__all__ = ["structured_strings"]

# What parsers split on; a space and a newline included.
SEPARATORS: Final = (";", "=", ",", ":", "|", "&", "/", " ", "\n")
_WORDS: Final = 3
_LONGEST_WORD: Final = 16
_MOST_PAIRS: Final = 6
_MOST: Final = 48
# Tokens to fill a shape with when the tool offers fewer words.
_FILLERS: Final = ("a", "1", "b", "c")


def structured_strings(values: Iterable[str | int | float]) -> list[str]:
    """Strings in parsers' awkward shapes, built from the separators among ``values`` (a whole
    value that is one, or one inside a value) and their word-like values; none without a
    separator to build with."""
    texts = [value for value in values if isinstance(value, str)]
    separators = [
        separator
        for separator in SEPARATORS
        if any(text == separator for text in texts)
        or any(separator in text and len(text) > 1 for text in texts if separator.strip())
    ]
    if not separators:
        return []
    pieces = (piece for text in texts for piece in _split(text, separators))
    words = [
        word for word in dict.fromkeys(pieces) if word.isalnum() and len(word) <= _LONGEST_WORD
    ][:_WORDS]
    a, b, c = (*words, *_FILLERS)[:3]
    built: dict[str, None] = {}
    for separator in separators:
        for shape in (
            f"{a}{separator}{b}",
            f"{a}{separator}{b}{separator}{c}",
            f"{a}{separator}{separator}{b}",
            f"{separator}{a}{separator}",
        ):
            built[shape] = None
    for outer, inner in itertools.islice(itertools.permutations(separators, 2), _MOST_PAIRS):
        for shape in (
            f"{a}{inner}{b}{outer}{c}{inner}{a}",
            f"{a}{inner}{b}{inner}{c}",
            f"{a}{inner}{b}{outer}{c}{inner}{a}{inner}{b}",
            f"{a}{outer}{b}{inner}{c}",
            f"{a}{inner}{outer}{inner}{b}",
            f"{a}{inner}{b}{outer}",
            f"{outer}{outer}{a}{inner}",
        ):
            built[shape] = None
    return list(built)[:_MOST]


def _split(text: str, separators: list[str]) -> list[str]:
    """The pieces of ``text`` between its separators."""
    for separator in separators[1:]:
        text = text.replace(separator, separators[0])
    return text.split(separators[0])
