"""What a client's rules are made of: a rule with its source, a breach of it at a place."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from axm_conformance._clients._walk import Node, is_object, nodes, place, pointer

__all__ = [
    "Breach",
    "Rule",
    "closed_objects",
    "enum_values",
    "every_property_required",
    "formats_outside",
    "keywords",
    "name_breach",
    "nesting_and_size",
    "pattern_features",
    "refs",
    "root_object",
]


@dataclass(frozen=True)
class Rule:
    """One rule of a client, as its source states it: ``source`` a documentation page (with the
    date it was read) or the code of the vendor's own library, ``fix`` what to change."""

    id: str
    requires: str
    source: str
    fix: str


@dataclass(frozen=True)
class Breach:
    """Where a tool breaks a rule: ``place`` is ``name`` or a place in the input schema
    (``$.properties.when.anyOf``), ``what`` what is there."""

    rule: Rule
    place: str
    what: str

    def __str__(self) -> str:
        rule = self.rule
        return f"{self.place}: {self.what} (rule {rule.id}: {rule.requires}); {rule.fix}"

    @property
    def at(self) -> str:
        """Its place as a JSON Pointer into the input schema (``""`` for the tool's name)."""
        return pointer(self.place)


Judge = Callable[[Any], Iterator[Breach]]


def name_breach(rule: Rule, pattern: str, name: Any) -> Iterator[Breach]:
    """The name breaks the rule unless it matches ``pattern`` whole."""
    if not isinstance(name, str) or not re.fullmatch(pattern, name):
        yield Breach(rule, "name", f"the name {name!r} does not match {pattern}")


_ROOT_COMBINATORS = ("oneOf", "anyOf", "allOf", "enum", "not", "const")


def root_object(
    rule: Rule, schema: Any, combinators: Iterable[str] = _ROOT_COMBINATORS
) -> Iterator[Breach]:
    """The root describes objects (``type: "object"``) and combines no schemas at the top."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        kind = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
        yield Breach(rule, "$", f"the root's type is {kind!r}, not 'object'")
        return
    for keyword in combinators:
        if keyword in schema:
            yield Breach(rule, place("$", keyword), f"{keyword} at the top level")


def keywords(rule: Rule, schema: Any, forbidden: Iterable[str]) -> Iterator[Breach]:
    """Every use of a keyword the client does not take."""
    names = tuple(forbidden)
    for node in nodes(schema):
        for keyword in names:
            if keyword in node.schema:
                yield Breach(rule, place(node.place, keyword), f"uses {keyword}")


def closed_objects(rule: Rule, schema: Any) -> Iterator[Breach]:
    """Every object sets ``additionalProperties: false``."""
    for node in nodes(schema):
        if is_object(node.schema) and node.schema.get("additionalProperties") is not False:
            found = node.schema.get("additionalProperties", "absent")
            yield Breach(rule, node.place, f"an object whose additionalProperties is {found!r}")


def every_property_required(rule: Rule, schema: Any) -> Iterator[Breach]:
    """Every object lists ``properties`` and requires each of them."""
    for node in nodes(schema):
        if not is_object(node.schema):
            continue
        properties = node.schema.get("properties")
        if not isinstance(properties, dict):
            yield Breach(rule, node.place, "an object that lists no properties")
            continue
        required = node.schema.get("required") or []
        optional = [name for name in properties if name not in required]
        if optional:
            yield Breach(rule, node.place, f"optional properties {optional!r}")


def formats_outside(rule: Rule, schema: Any, allowed: Iterable[str]) -> Iterator[Breach]:
    """Every ``format`` outside those the client takes."""
    known = set(allowed)
    for node in nodes(schema):
        found = node.schema.get("format")
        if found is not None and found not in known:
            yield Breach(rule, place(node.place, "format"), f"the format {found!r}")


def pattern_features(rule: Rule, schema: Any, features: dict[str, str]) -> Iterator[Breach]:
    """Every ``pattern`` that uses a regex feature the client does not take (``features``
    maps a regex that finds it to its name)."""
    for node in nodes(schema):
        pattern = node.schema.get("pattern")
        if not isinstance(pattern, str):
            continue
        for finder, feature in features.items():
            if re.search(finder, pattern):
                yield Breach(rule, place(node.place, "pattern"), f"{feature} in {pattern!r}")
                break


def refs(rule: Rule, schema: Any, allowed: str) -> Iterator[Breach]:
    """Every ``$ref`` that does not match ``allowed`` whole."""
    for node in nodes(schema):
        ref = node.schema.get("$ref")
        if isinstance(ref, str) and not re.fullmatch(allowed, ref):
            yield Breach(rule, place(node.place, "$ref"), f"the reference {ref!r}")


def nesting_and_size(rule: Rule, schema: Any, *, depth: int, properties: int) -> Iterator[Breach]:
    """No path passes more than ``depth`` objects with properties, and there are at most
    ``properties`` object properties, counted as :class:`~._walk.Node` counts them."""
    every = list(nodes(schema))
    deepest = max(every, key=lambda node: node.depth, default=None)
    if deepest is not None and deepest.depth > depth:
        yield Breach(rule, deepest.place, f"{deepest.depth} levels of nested objects")
    counted = sum(len(node.schema.get("properties") or {}) for node in every)
    if counted > properties:
        yield Breach(rule, "$", f"{counted} object properties in all")


def enum_values(schema: Any) -> list[tuple[Node, list[Any]]]:
    """Every ``enum`` of the schema, with the node it is in."""
    return [
        (node, node.schema["enum"])
        for node in nodes(schema)
        if isinstance(node.schema.get("enum"), list)
    ]
