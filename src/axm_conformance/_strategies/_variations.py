"""Minimal variations of a valid input: one top-level property changed in one way the schema
allows, each variation itself valid.

A tool that refuses a valid input while it serves a variation of it shows where its schema does
not tell the truth: a value at a declared bound refused while the value next to it inside is
served (a bound off by one); a property the schema does not declare refused while the input
without it is served.

Two changes are not made, because a refusal they undo may be of a value the tool rightly
refuses: another member of an enum (``divide`` refused for a zero divisor while ``add`` is
served), and an optional property left out (``{"start": "tomorrow"}`` refused for its value,
served without it). Telling those apart needs a value the tool is known to serve there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from axm_conformance._strategies._document import Document
from axm_conformance._strategies._json import canonical

__all__ = ["Variation", "variations_of"]

VariationKind = Literal["bound", "extra"]
_KINDS: tuple[VariationKind, ...] = ("bound", "extra")
# Variations tried per refused input: each is a real call of the tool.
_MOST = 4


@dataclass(frozen=True)
class Variation:
    """A valid input one change away from another: the change's ``kind``, and what it is."""

    kind: VariationKind
    value: dict[str, Any]
    said: str


def variations_of(document: Document, value: Any) -> list[Variation]:
    """The valid variations of ``value`` under the document's schema, at most a few."""
    schema = document.root.schema
    if not isinstance(schema, dict) or not isinstance(value, dict):
        return []
    found = [
        variation
        for variation in _candidates(schema, value)
        if document.is_valid(document.root, variation.value)
    ]
    # What a schema states outright (a bound) first, then what it leaves open.
    found.sort(key=lambda variation: _KINDS.index(variation.kind))
    return found[:_MOST]


def _candidates(schema: dict[str, Any], value: dict[str, Any]) -> Iterator[Variation]:
    listed = schema.get("properties")
    properties: dict[str, Any] = listed if isinstance(listed, dict) else {}
    for name, item in value.items():
        declared = properties.get(name)
        if declared is None:
            without = {key: other for key, other in value.items() if key != name}
            patterns = schema.get("patternProperties")
            if not (isinstance(patterns, dict) and any(_matches(p, name) for p in patterns)):
                said = f"without {name!r}, which the schema does not declare"
                yield Variation("extra", without, said)
            continue
        if not isinstance(declared, dict):
            continue
        for neighbour, bound in _inside_neighbours(declared, item):
            yield Variation(
                "bound",
                {**value, name: neighbour},
                f"{name!r} set to {canonical(neighbour)}, next to its {bound} inside",
            )


def _inside_neighbours(schema: dict[str, Any], item: Any) -> Iterator[tuple[Any, str]]:
    """The value next to ``item`` inside its declaration, when ``item`` is at a declared
    bound: a number at its minimum or maximum, a string or array at its length bounds."""
    if isinstance(item, bool):
        return
    if isinstance(item, int | float) and math.isfinite(item):
        step = schema.get("multipleOf")
        if not isinstance(step, int | float) or isinstance(step, bool) or step <= 0:
            integral = schema.get("type") == "integer" or isinstance(item, int)
            step = 1 if integral else None
        for keyword, direction in (("minimum", 1), ("maximum", -1)):
            if schema.get(keyword) == item and step is not None:
                yield item + direction * step, f"{keyword} {canonical(schema[keyword])}"
    elif isinstance(item, str):
        if schema.get("maxLength") == len(item) and item:
            yield item[:-1], f"maxLength {len(item)}"
        if schema.get("minLength") == len(item):
            yield item + (item[-1:] or "a"), f"minLength {len(item)}"
    elif isinstance(item, list) and schema.get("maxItems") == len(item) and item:
        yield item[:-1], f"maxItems {len(item)}"


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return True  # a pattern Python cannot read may declare it: not judged
