"""Simplest text matching a regular expression, for boundary values.

No Hypothesis engine is involved, so it also works inside a running test. Best effort: the result
is checked with re.search.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

__all__ = ["long_match", "pattern_text"]

_sre: Final[Any] = importlib.import_module("re._parser")
_CATEGORY_CHARS: Final = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": " ",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
}
_PATTERN_LENGTHS: Final = 256  # lengths tried when looking for text that matches a pattern


def _class_matches(char: str, items: Sequence[tuple[Any, Any]]) -> bool:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and ord(char) == arg:
            return True
        if name == "RANGE" and arg[0] <= ord(char) <= arg[1]:
            return True
        if name == "CATEGORY" and _CATEGORY_CHARS.get(str(arg)) == char:
            return True
    return False


def _class_char(items: Sequence[tuple[Any, Any]]) -> str:
    if items and str(items[0][0]) == "NEGATE":
        return next(
            (char for char in "a0 A_-.!~" if not _class_matches(char, items[1:])), "\N{SNOWMAN}"
        )
    op, arg = items[0]
    name = str(op)
    if name == "LITERAL":
        return chr(arg)
    if name == "RANGE":
        return chr(arg[0])
    return _CATEGORY_CHARS.get(str(arg), "a")


def _regex_text(items: Iterable[tuple[Any, Any]], groups: dict[int, str], extra: int) -> str:
    """Text the parsed regex matches, each repetition taken `extra` times beyond its minimum."""
    out = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("b" if arg == ord("a") else "a")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_class_char(arg))
        elif name == "BRANCH":
            out.append(_regex_text(arg[1][0], groups, extra))
        elif name == "SUBPATTERN":
            text = _regex_text(arg[-1], groups, extra)
            if arg[0] is not None:
                groups[arg[0]] = text
            out.append(text)
        elif name.endswith("REPEAT"):
            out.append(_regex_text(arg[2], groups, extra) * min(arg[1], arg[0] + extra))
        elif name == "ATOMIC_GROUP":
            out.append(_regex_text(arg, groups, extra))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
    return "".join(out)


def pattern_text(pattern: str, shortest: int, longest: int) -> str | None:
    """Short text matching `pattern` with a length in [shortest, longest], if one is found."""
    parsed = _sre.parse(pattern)
    for extra in range(min(shortest, _PATTERN_LENGTHS) + 1):
        text = _regex_text(parsed, {}, extra)
        if len(text) > longest:
            break
        if shortest <= len(text) and re.search(pattern, text):
            return text
    return None


def long_match(pattern: str) -> str:
    """Text shaped by `pattern` with every repetition taken as often as it may be (up to 256)."""
    return _regex_text(_sre.parse(pattern), {}, _PATTERN_LENGTHS)
