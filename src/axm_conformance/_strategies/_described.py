"""Values a tool's descriptions name: hints, as the values its schema names are.

A server written in any language tells its domain in words ("allowed commands: echo, cat, ls";
"the unit, e.g. `cm`"), which reach the kit where its source does not. From the tool's
description, the descriptions anywhere in its input schema and its server's instructions, these
are taken: what stands in backquotes or quotes, and the items listed after a cue ("one of",
"allowed", "e.g.", "such as", "for example", "valid values", "supported", "choices",
"options"). A hint only ever changes which valid inputs are tried; a word that is no value costs
a few calls at most.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

from axm_conformance._schema_keywords import subschemas

__all__ = ["described_values", "property_names", "singular", "told_of"]

# Longer than this, a quoted or listed text is prose, not a value.
_LONGEST: Final = 64
_MOST_WORDS: Final = 3
_MOST: Final = 64
_QUOTED: Final = re.compile(r"`([^`\n]+)`|(?<!\w)[\"“'‘]([^\"”'’\n]+)[\"”'’](?!\w)")
_CUE: Final = re.compile(
    r"\b(?:one of|allowed(?: \w+)?|e\.g\.|i\.e\.|such as|for example|valid(?: \w+)?|"
    r"supported(?: \w+)?|choices?|options?|accepts?)(?!\w)\s*(?:are|is|include)?\s*[:=\-]?\s*"
    r"(.+?)(?=\.\s|\.$|[;)\]\n]|$)",
    re.IGNORECASE,
)
_ITEMS: Final = re.compile(r"\s*(?:,|\||/(?=\s)|\bor\b|\band\b)\s*")
_TRIM: Final = " \t\"'`“”‘’.,:;()[]{}"
# A sentence ends at a stop and a space, not after "e.g." or "i.e.", or at a line's end.
_SENTENCE: Final = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+|\n+", re.IGNORECASE)
_WORD: Final = re.compile(r"[a-z0-9_]+")


def described_values(
    description: Any, schema: Any, instructions: str = ""
) -> list[str | int | float]:
    """The values named in ``description``, in the schema's descriptions, then in what the
    tool's home tells of all its tools (``instructions``), in the order met, each once: numbers
    as numbers."""
    texts = [description] if isinstance(description, str) else []
    texts += [
        sub["description"]
        for _, sub in subschemas(schema)
        if isinstance(sub, dict) and isinstance(sub.get("description"), str)
    ]
    texts += [instructions] if instructions else []
    found: dict[str, str | int | float] = {}
    for text in texts:
        for word in _named(text):
            found.setdefault(word, _typed(word))
            if len(found) == _MOST:
                return list(found.values())
    return list(found.values())


def _named(text: str) -> Iterator[str]:
    for match in _QUOTED.finditer(text):
        yield from _kept([match.group(1) or match.group(2)])
    for match in _CUE.finditer(text):
        yield from _kept(_ITEMS.split(match.group(1)))


def _kept(words: Iterable[str]) -> Iterator[str]:
    for word in words:
        word = word.strip(_TRIM)
        if word and len(word) <= _LONGEST and len(word.split()) <= _MOST_WORDS:
            yield word


def _typed(word: str) -> str | int | float:
    """A number written as one is offered as that number, else as the text."""
    try:
        return int(word)
    except ValueError:
        pass
    try:
        number = float(word)
    except ValueError:
        return word
    return number if number == number and abs(number) != float("inf") else word


def told_of(text: str, name: Any, schema: Any) -> str:
    """The sentences of ``text``, what a server tells of all its tools, that name the tool or
    one of its properties (in either number): a path its instructions give "paths" reaches a
    tool's ``path``; the names of the server's other tools and settings reach no other tool."""
    words = {singular(word) for word in property_names(schema)}
    tool = str(name).lower() if isinstance(name, str) else ""
    told = []
    for sentence in _SENTENCE.split(text):
        lowered = sentence.lower()
        said = {singular(word) for word in _WORD.findall(lowered)}
        if (tool and tool in lowered) or words & said:
            told.append(sentence)
    return "\n".join(told)


def property_names(schema: Any) -> set[str]:
    """The names of the schema's properties, at any depth, in lower case."""
    names: set[str] = set()
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            names |= {str(name).lower() for name in properties}
            for sub in properties.values():
                names |= property_names(sub)
        for key in ("items", "additionalProperties"):
            names |= property_names(schema.get(key))
    return names


def singular(word: str) -> str:
    """An English plural's singular, closely enough to match names ("paths", "path")."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
