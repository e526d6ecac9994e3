"""Minimal variations of a refused valid input, and the calls that tell whether the refusal was
of what the schema declares or of the tool's domain.

A tool that refuses a valid input while it serves a variation of it, one top-level property
changed in one way the schema allows, may show where its schema does not tell the truth:

- ``bound``: a value at a declared bound refused, the value next to it inside served;
- ``enum``: an enum member refused, another member served;
- ``optional``: an optional property refused when present, served when left out;
- ``extra``: a property the schema does not declare (nor forbid) refused, served without it;
- ``cap``: a value within a declared bound (or a number where no minimum is declared) refused,
  a value further inside served: the bound the tool serves is found between them by bisection
  (:class:`Cap`).

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
from typing import Any, Literal, TypeGuard

from axm_conformance._strategies._document import Document
from axm_conformance._strategies._json import canonical

__all__ = ["Cap", "Served", "Variation", "variations_of"]

VariationKind = Literal["bound", "enum", "optional", "extra", "cap"]
_KINDS: tuple[VariationKind, ...] = ("bound", "enum", "optional", "extra", "cap")
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

    def values(self, name: str) -> list[Any]:
        """The values of ``name`` in the latest inputs served."""
        return [context[name] for context in self.latest.values() if name in context]

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
    # For a bound: where to look for the bound the tool serves when the neighbour is refused too.
    cap: Cap | None = None


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
    for kind, varied, said, confirmations, confirms, cap in _candidates(schema, value, served):
        if not document.is_valid(document.root, varied):
            continue
        confirmed = confirming(confirmations)
        if confirmed:
            found.append(Variation(kind, varied, said, confirmed, confirms, cap))
    # What a schema states outright (a bound, a member) first, then what it leaves open.
    found.sort(key=lambda variation: _KINDS.index(variation.kind))
    return found[:_MOST]


_Candidate = tuple[VariationKind, dict[str, Any], str, list[dict[str, Any]], str, "Cap | None"]


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
            confirms = f"{name!r} added to other inputs it served"
            yield "extra", without, said, put(item), confirms, None
            continue
        if not isinstance(declared, dict) or served.serves(name, item):
            continue
        text = canonical(item)
        same = f"{name!r} = {text} in other inputs it served"
        for neighbour, bound in _inside_neighbours(declared, item):
            said = f"{name!r} set to {canonical(neighbour)}, next to its {bound} inside"
            yield "bound", {**value, name: neighbour}, said, put(item), same, None
        members = declared.get("enum")
        if isinstance(members, list) and any(canonical(member) == text for member in members):
            others = [member for member in members if canonical(member) != text]
            others = served.members(name, others)
            if others:
                said = f"{name!r} set to {canonical(others[0])}, another member of its enum"
                yield "enum", {**value, name: others[0]}, said, put(item), same, None
        cap = Cap.of(name, declared, item, served)
        for inside in [] if cap is None else cap.inside(value, served)[:1]:
            said = f"{name!r} set to {canonical(inside[name])}, a value it served elsewhere"
            yield "cap", inside, said, put(item), same, cap
        named = _named_values(declared)
        if name in optional and named and not served.serves(name):
            given = [{**value, name: other} for other in named if canonical(other) != text][:1]
            given += put(named[0])
            said = f"without {name!r}, an optional property"
            confirms = f"{name!r} given a value its schema names"
            yield "optional", without, said, given, confirms, None


# A number without a step has its bound found to within this fraction of its size: a bound found
# to a tenth of a percent in a dozen calls or so.
_TOLERANCE = 1e-3
# Served values of a property a bisection may start from, the nearest the refused value first.
_INSIDE_TRIES = 2


@dataclass(frozen=True)
class Cap:
    """Where to look for the bound a tool really serves, when it refuses a value ``item`` of
    property ``name`` that its schema declares within a bound (``keyword``, at ``limit``), or a
    number below which it declares no minimum, and serves the same input with a value further
    inside: between the two, by bisection.

    Numbers are bisected by value (integers, and multiples of a ``multipleOf``, exactly; other
    numbers to a tolerance), strings and arrays under a maximum length by length, keeping the
    refused value's first items.
    """

    name: str
    keyword: str
    limit: float
    item: Any
    # The distance between neighbouring values; None for numbers that have none.
    step: float | None
    # False where the schema declares no bound on that side: ``limit`` is then the refused value.
    declares: bool = True

    @classmethod
    def of(cls, name: str, declared: dict[str, Any], item: Any, served: Served) -> Cap | None:
        """The cap to look for between ``item`` and the values of ``name`` served elsewhere,
        toward the bound on ``item``'s side of them; None where there is none to look for."""
        values = served.values(name)
        # A cap refuses everything past it: a value past ``item`` served anywhere rules one out.
        if isinstance(item, str | list):
            keyword = "maxLength" if isinstance(item, str) else "maxItems"
            limit = declared.get(keyword)
            lengths = [len(v) for v in values if type(v) is type(item)]
            beyond = bool(lengths) and max(lengths) < len(item)
            return cls(name, keyword, limit, item, 1) if _number(limit) and beyond else None
        if not _number(item) or not math.isfinite(item):
            return None
        step = declared.get("multipleOf")
        if not _number(step) or step <= 0:
            integral = declared.get("type") == "integer" or isinstance(item, int)
            step = 1 if integral else None
        numbers = [v for v in values if _number(v)]
        if not numbers:
            return None
        for keyword, past in (("maximum", max(numbers) < item), ("minimum", min(numbers) > item)):
            limit = declared.get(keyword)
            if past and _number(limit):
                return cls(name, keyword, limit, item, step)
            # No minimum declared (a count refused at 0): the refused value is where the
            # bisection starts from. Not above: the values a tool serves end where its world
            # does (the ids it holds), which no schema states.
            undeclared = limit is None and "exclusiveMinimum" not in declared
            if past and keyword == "minimum" and undeclared:
                return cls(name, keyword, item, item, step, declares=False)
        return None

    def inside(self, refused: dict[str, Any], served: Served) -> list[dict[str, Any]]:
        """``refused`` with the property set to values served elsewhere, inside its value, the
        nearest first: where a bisection can start."""
        here = self._position(self.item)
        assert here is not None
        found = {}
        for value in served.values(self.name):
            if isinstance(self.item, str | list):
                value = self.item[: len(value)] if type(value) is type(self.item) else None
            position = None if value is None else self._position(value)
            if position is not None and position > here:
                found[canonical(value)] = (position, value)
        nearest = sorted(found.values(), key=lambda pair: pair[0])[:_INSIDE_TRIES]
        return [{**refused, self.name: value} for _, value in nearest]

    def between(self, served: Any, refused: Any) -> Any | None:
        """The value halfway between a served one and a refused one; None once they are next
        to each other (or within the tolerance): the bound is found."""
        inner, outer = self._position(served), self._position(refused)
        if inner is None or outer is None or inner - outer <= self._resolution(served):
            return None
        middle = (inner + outer) / 2
        return self._value(middle if self.step is None else math.floor(middle))

    def lies_between(self, value: Any, served: Any, refused: Any) -> bool:
        """Whether ``value`` lies strictly between a served value and a refused one."""
        here, inner, outer = map(self._position, (value, served, refused))
        return None not in (here, inner, outer) and outer < here < inner  # type: ignore[operator]

    def within(self, served: Any, steps: int) -> list[Any]:
        """The ``steps`` values next to ``served`` further inside, the nearest first: served
        too where ``served`` ends a range the tool serves, as a cap's is."""
        position = self._position(served)
        assert position is not None
        resolution = self._resolution(served)
        found = [self._value(position + resolution * (n + 1)) for n in range(steps)]
        return [value for value in found if self._position(value) is not None]

    def past(self, served: Any) -> Any:
        """The first value beyond ``served``, away from the inside, that a bisection tells
        apart from it."""
        position = self._position(served)
        assert position is not None
        return self._value(position - self._resolution(served))

    def said(self, served: Any) -> str:
        """What the tool serves, in the schema's terms: "refuses above 50"."""
        if self.keyword in ("maxLength", "maxItems"):
            what = "characters" if isinstance(self.item, str) else "items"
            return f"refuses more than {len(served)} {what}"
        beyond = "above" if self.keyword == "maximum" else "below"
        return f"refuses {beyond} {canonical(served)}"

    @property
    def declared(self) -> str:
        return f"{self.keyword} {canonical(self.limit)}" if self.declares else f"no {self.keyword}"

    def _position(self, value: Any) -> float | None:
        """How far ``value`` lies inside the declared bound, in steps (in the value's own units
        for numbers without a step); None for a value of another kind or beyond the bound."""
        if self.keyword in ("maxLength", "maxItems"):
            distance: float = self.limit - len(value)
        elif not _number(value):
            return None
        else:
            distance = (self.limit - value) if self.keyword == "maximum" else (value - self.limit)
            distance = distance if self.step is None else distance / self.step
        return distance if distance >= 0 else None

    def _value(self, position: float) -> Any:
        if self.keyword in ("maxLength", "maxItems"):
            return self.item[: int(self.limit - position)]
        offset = position if self.step is None else position * self.step
        value = self.limit - offset if self.keyword == "maximum" else self.limit + offset
        integral = isinstance(self.item, int) and float(value).is_integer()
        return int(value) if integral else value

    def _resolution(self, served: Any) -> float:
        """How near a served and a refused value must be for the bound to count as found: next
        to each other, or, for numbers without a step, within the tolerance of their size."""
        if self.step is not None:
            return 1
        return max(abs(float(self.limit)), abs(float(served)), 1.0) * _TOLERANCE


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


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
