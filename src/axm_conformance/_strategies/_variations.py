"""Minimal variations of a refused valid input, and the calls that tell whether the refusal was
of what the schema declares or of the tool's domain.

A tool that refuses a valid input while it serves a variation of it, one top-level property
changed in one way the schema allows, may show where its schema does not tell the truth:

- ``bound``: a value at a declared bound refused, the value next to it inside served;
- ``enum``: an enum member refused, another member served;
- ``optional``: an optional property refused when present, served when left out;
- ``extra``: a property the schema does not declare (nor forbid) refused, served without it.

One served variation is not enough: a tool rightly refuses ``divide`` with a zero divisor while it
serves ``add``, and ``{"start": "tomorrow"}`` for its value while it serves the input without
``start``. A refusal is of what the schema declares only when it does not depend on the rest of
the input or on an unconstrained value. So a variation carries confirmations, each a valid input
that must be refused too for the refusal to count: the same value put into other inputs the tool
served (``bound``, ``enum``, ``extra``), or the property given the values its schema names, in the
refused input and in served ones (``optional``: its ``enum``, ``const``, ``default`` and
``examples``, or both booleans). And no variation is made of a value, or a property, that the
tool has been seen to serve at that place: it is servable, and a refusal of it is about the rest.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from axm_conformance._strategies._document import Document
from axm_conformance._strategies._json import canonical

__all__ = ["Served", "Variation", "variations_of"]

VariationKind = Literal["bound", "enum", "optional", "extra"]
_KINDS: tuple[VariationKind, ...] = ("bound", "enum", "optional", "extra")
# Variations made per refused input: each is a real call of the tool, as is each confirmation.
_MOST = 4
_CONFIRMATIONS = 2
# Served inputs kept whole, as contexts for confirmations: the latest, which are the most varied
# (boundary examples come first, generated inputs after).
_CONTEXTS = 32


@dataclass
class Served:
    """What a tool was seen to serve: the latest inputs whole, and every top-level
    (property, value) pair and property name of all of them."""

    # The latest inputs served, by their canonical text, oldest first.
    latest: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Digests of (property, canonical value), and of each property name alone.
    places: set[bytes] = field(default_factory=set)

    @property
    def inputs(self) -> list[dict[str, Any]]:
        return list(self.latest.values())

    def add(self, value: Any) -> None:
        if not isinstance(value, dict):
            return
        text = canonical(value)
        self.latest.pop(text, None)
        self.latest[text] = value
        if len(self.latest) > _CONTEXTS:
            del self.latest[next(iter(self.latest))]
        for name, item in value.items():
            self.places.update((_place(name), _place(name, item)))

    def serves(self, name: str, item: Any = ...) -> bool:
        """Whether ``name`` was served with ``item`` (with any value, when no item is given)."""
        return (_place(name) if item is ... else _place(name, item)) in self.places

    def members(self, name: str, members: list[Any]) -> list[Any]:
        """``members`` with those served at ``name`` first."""
        return sorted(members, key=lambda member: not self.serves(name, member))


def _place(name: str, *item: Any) -> bytes:
    """A short digest of a property name, with a value when given: values may be large."""
    text = json.dumps([name, *(canonical(value) for value in item)])
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Variation:
    """A valid input one change away from a refused one (``value``; ``said`` says the change),
    and the valid inputs that must all be refused as well for the refusal to be of what changed
    (``confirmations``; ``confirming`` says what they are)."""

    kind: VariationKind
    value: dict[str, Any]
    said: str
    confirmations: tuple[dict[str, Any], ...]
    confirming: str


def variations_of(document: Document, value: Any, served: Served) -> list[Variation]:
    """The variations of the refused ``value`` worth calling, at most a few, each valid and with
    at least one confirmation."""
    schema = document.root.schema
    if not isinstance(schema, dict) or not isinstance(value, dict):
        return []

    def confirming(candidates: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
        texts = {canonical(value)}
        kept: list[dict[str, Any]] = []
        for candidate in candidates:
            text = canonical(candidate)
            if text not in texts and document.is_valid(document.root, candidate):
                texts.add(text)
                kept.append(candidate)
                if len(kept) == _CONFIRMATIONS:
                    break
        return tuple(kept)

    found = []
    for kind, varied, said, confirmations, confirms in _candidates(schema, value, served):
        if not document.is_valid(document.root, varied):
            continue
        confirmed = confirming(confirmations)
        if confirmed:
            found.append(Variation(kind, varied, said, confirmed, confirms))
    # What a schema states outright (a bound, a member) first, then what it leaves open.
    found.sort(key=lambda variation: _KINDS.index(variation.kind))
    return found[:_MOST]


_Candidate = tuple[VariationKind, dict[str, Any], str, list[dict[str, Any]], str]


def _candidates(
    schema: dict[str, Any], value: dict[str, Any], served: Served
) -> Iterator[_Candidate]:
    listed = schema.get("properties")
    properties: dict[str, Any] = listed if isinstance(listed, dict) else {}
    required = schema.get("required")
    optional = set(properties) - set(required if isinstance(required, list) else ())
    for name, item in value.items():
        without = {key: other for key, other in value.items() if key != name}
        declared = properties.get(name)
        put = functools.partial(_put, served, value, name)
        if declared is None:
            patterns = schema.get("patternProperties")
            if served.serves(name) or (
                isinstance(patterns, dict) and any(_matches(p, name) for p in patterns)
            ):
                continue
            said = f"without {name!r}, which the schema does not declare"
            yield "extra", without, said, put(item), f"{name!r} added to other inputs it served"
            continue
        if not isinstance(declared, dict) or served.serves(name, item):
            continue
        text = canonical(item)
        same = f"{name!r} = {text} in other inputs it served"
        for neighbour, bound in _inside_neighbours(declared, item):
            said = f"{name!r} set to {canonical(neighbour)}, next to its {bound} inside"
            yield "bound", {**value, name: neighbour}, said, put(item), same
        members = declared.get("enum")
        if isinstance(members, list) and any(canonical(member) == text for member in members):
            others = [member for member in members if canonical(member) != text]
            others = served.members(name, others)
            if others:
                said = f"{name!r} set to {canonical(others[0])}, another member of its enum"
                yield "enum", {**value, name: others[0]}, said, put(item), same
        named = _named_values(declared)
        if name in optional and named and not served.serves(name):
            given = [{**value, name: other} for other in named if canonical(other) != text][:1]
            given += put(named[0])
            said = f"without {name!r}, an optional property"
            yield "optional", without, said, given, f"{name!r} given a value its schema names"


def _put(served: Served, value: dict[str, Any], name: str, item: Any) -> list[dict[str, Any]]:
    """The served inputs with ``name`` set to ``item``: those that differ from ``value`` in the
    most other properties first, so that a refusal caused by the rest of ``value`` is not met
    again."""

    def differences(context: dict[str, Any]) -> int:
        keys = (set(context) | set(value)) - {name}
        return sum(_text(context, key) != _text(value, key) for key in keys)

    contexts = sorted(served.inputs, key=differences, reverse=True)
    return [{**context, name: item} for context in contexts]


def _text(value: dict[str, Any], key: str) -> str | None:
    return canonical(value[key]) if key in value else None


def _named_values(schema: dict[str, Any]) -> list[Any]:
    """The values a declaration names outright, which a tool that accepts the property at all
    must serve: its enum members, const, default and examples, or both booleans."""
    named: list[Any] = []
    if isinstance(schema.get("enum"), list):
        named += schema["enum"]
    for keyword in ("const", "default"):
        if keyword in schema:
            named.append(schema[keyword])
    if isinstance(schema.get("examples"), list):
        named += schema["examples"]
    if schema.get("type") == "boolean":
        named += [True, False]
    return named


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
