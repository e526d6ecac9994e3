"""Schema locations: a subschema in context, one alternative at a location, and what it allows.

The subschemas that apply at one location form a conjunction; a compiled document splits it into
alternatives (`Alt`) and combines the keywords of each (`Facts`), which the strategies, the
boundary examples and the mutations read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, reduce
from typing import Any, NamedTuple

from referencing._core import Resolver  # where referencing defines it; not re-exported
from referencing.jsonschema import DRAFT202012

from axm_conformance._strategies._json import Check, escape, kind_of

__all__ = ["Alt", "Bound", "Empty", "Facts", "Node", "as_kind", "closure"]


class Empty(NamedTuple):
    """No value exists at a location; `reason` ends up in UnsatisfiableSchemaError."""

    reason: str


class Bound(NamedTuple):
    """A lower or upper bound on numbers, and whether the bound itself is excluded."""

    value: int | float
    exclusive: bool


def _fraction(number: int | float) -> Fraction:
    # A float multipleOf is meant as the decimal it was written as (0.1, not its binary value).
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def _lcm(steps: Iterable[Fraction]) -> Fraction:
    def pair(a: Fraction, b: Fraction) -> Fraction:
        return Fraction(math.lcm(a.numerator, b.numerator), math.gcd(a.denominator, b.denominator))

    return reduce(pair, steps)


def as_kind(value: Fraction, kind: str) -> int | float:
    """An exact number as a JSON value of `kind` ("integer" or "number")."""
    return int(value) if kind == "integer" else float(value)


def closure(keys: Iterable[str], dependent: dict[str, tuple[str, ...]]) -> list[str]:
    """The keys plus every key they require through dependentRequired, in discovery order."""
    out: list[str] = []
    pending = list(keys)
    while pending:
        key = pending.pop(0)
        if key not in out:
            out.append(key)
            pending.extend(dependent.get(key, ()))
    return out


@dataclass(frozen=True)
class Node:
    """A subschema in context: the resolver knows its base URI, the pointer names it."""

    schema: Any
    pointer: str  # JSON pointer in the document; made-up nodes carry a "!..." suffix
    resolver: Resolver[Any] | None  # None for made-up nodes, which never hold a $ref

    def child(self, *keys: str | int) -> Node:
        schema = self.schema
        for key in keys:
            schema = schema[key]
        pointer = self.pointer + "".join(f"/{escape(key)}" for key in keys)
        resolver = self.resolver
        if resolver is not None and isinstance(schema, dict) and "$id" in schema:
            resolver = resolver.in_subresource(DRAFT202012.create_resource(schema))
        return Node(schema, pointer, resolver)


@dataclass(frozen=True)
class Alt:
    """One alternative at a location: the plain subschemas that all apply, and the filters."""

    nodes: tuple[Node, ...]
    checks: tuple[Check, ...]


@dataclass(frozen=True, eq=False)
class Facts:
    """One alternative with its keywords combined; object and array details stay per node."""

    pointer: str
    alt: Alt
    kinds: frozenset[str]
    enum: tuple[Any, ...] | None  # the listed values that satisfy the alternative
    enum_keyword: str
    lower: Bound | None
    upper: Bound | None
    multiples: tuple[int | float, ...]
    min_length: int
    max_length: int | None
    patterns: tuple[str, ...]
    formats: tuple[str, ...]
    min_items: int
    max_items: int | None
    unique: bool
    min_props: int
    max_props: int | None
    required: tuple[str, ...]
    dependent: dict[str, tuple[str, ...]]
    constrained: bool

    def _all(self, keyword: str) -> list[tuple[Node, Any]]:
        return [(n, n.schema[keyword]) for n in self.alt.nodes if keyword in n.schema]

    @cached_property
    def value_kinds(self) -> frozenset[str]:
        """Kinds a value may have here (enum values decide when listed)."""
        if self.enum is None:
            return self.kinds
        kinds = {kind_of(value) for value in self.enum}
        return frozenset(kinds | ({"number"} if "integer" in kinds else set()))

    # numbers
    def step(self, kind: str) -> Fraction | None:
        """The spacing of valid values, or None for any float."""
        steps = [_fraction(m) for m in self.multiples]
        if kind == "integer":
            steps.append(Fraction(1))
        return _lcm(steps) if steps else None

    def grid(self, step: Fraction) -> tuple[int | None, int | None]:
        """The range of k for which k * step lies within the bounds."""
        low = high = None
        if self.lower is not None:
            low = math.ceil(Fraction(self.lower.value) / step)
            low += self.lower.exclusive and low * step == Fraction(self.lower.value)
        if self.upper is not None:
            high = math.floor(Fraction(self.upper.value) / step)
            high -= self.upper.exclusive and high * step == Fraction(self.upper.value)
        return low, high

    # objects
    @cached_property
    def declared(self) -> tuple[str, ...]:
        names = [name for _, props in self._all("properties") for name in props]
        return tuple(dict.fromkeys(names + list(self.required)))

    @cached_property
    def patterns_of_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for _, props in self._all("patternProperties") for p in props))

    @cached_property
    def names(self) -> tuple[Node, ...]:
        return tuple(node.child("propertyNames") for node, _ in self._all("propertyNames"))

    def value_conj(self, key: str) -> tuple[Node, ...]:
        """Every subschema that applies to the value of property `key`."""
        out = []
        for node in self.alt.nodes:
            schema = node.schema
            matched = False
            if key in schema.get("properties", {}):
                out.append(node.child("properties", key))
                matched = True
            for pattern in schema.get("patternProperties", {}):
                if re.search(pattern, key):
                    out.append(node.child("patternProperties", pattern))
                    matched = True
            if not matched and "additionalProperties" in schema:
                out.append(node.child("additionalProperties"))
        return tuple(out)

    def pattern_conj(self, pattern: str) -> tuple[Node, ...]:
        """What applies to a key that matches `pattern` and no other pattern or declared name."""
        out = []
        for node in self.alt.nodes:
            if pattern in node.schema.get("patternProperties", {}):
                out.append(node.child("patternProperties", pattern))
            elif "additionalProperties" in node.schema:
                out.append(node.child("additionalProperties"))
        return tuple(out)

    @cached_property
    def additional_conj(self) -> tuple[Node, ...]:
        return tuple(
            node.child("additionalProperties") for node, _ in self._all("additionalProperties")
        )

    @cached_property
    def forbids_additional(self) -> bool:
        return any(value is False for _, value in self._all("additionalProperties"))

    # arrays
    @cached_property
    def prefix_len(self) -> int:
        return max((len(items) for _, items in self._all("prefixItems")), default=0)

    def index_conj(self, index: int) -> tuple[Node, ...]:
        """Every subschema that applies to array item `index` (any index >= prefix_len alike)."""
        out = []
        for node in self.alt.nodes:
            prefix = node.schema.get("prefixItems", [])
            if index < len(prefix):
                out.append(node.child("prefixItems", index))
            elif "items" in node.schema:
                out.append(node.child("items"))
        return tuple(out)

    @cached_property
    def contains(self) -> tuple[tuple[Node, int, int | None], ...]:
        return tuple(
            (
                node.child("contains"),
                node.schema.get("minContains", 1),
                node.schema.get("maxContains"),
            )
            for node, _ in self._all("contains")
        )
