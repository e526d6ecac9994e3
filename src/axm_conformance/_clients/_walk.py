"""Every subschema of a JSON Schema, with where it is (``$.properties.when.anyOf[0]``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Node", "is_object", "nodes", "place", "pointer"]

# Keywords whose value is one subschema, a list of them, or a map of names to them.
_ONE = (
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


@dataclass(frozen=True)
class Node:
    """A subschema, the place it is at, and its depth: how many objects with ``properties`` its
    path passes, itself included (so a root object is at 1, and arrays do not count), each
    definition counted on its own, as the providers that limit nesting were observed to count
    (Pydantic AI's ``inline_objects``)."""

    schema: dict[str, Any]
    place: str
    depth: int


def place(parent: str, *steps: str | int) -> str:
    """A place below ``parent``: a name as ``.name`` (``['odd name']`` when not an
    identifier), an index as ``[0]``."""
    for step in steps:
        if isinstance(step, int):
            parent += f"[{step}]"
        elif step.replace("_", "a").replace("$", "a").isalnum():
            parent += f".{step}"
        else:
            parent += f"[{step!r}]"
    return parent


# One step of a place: ``.name``, ``[0]`` or ``['odd name']`` (a name's Python literal).
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[((?:'(?:[^'\\]|\\.)*')|(?:\"(?:[^\"\\]|\\.)*\"))\]")


def pointer(place: str) -> str:
    """The JSON Pointer (RFC 6901) of a place in the schema, ``""`` for the whole; a place
    outside the schema (the tool's ``name``) is nowhere in it: ``""`` too."""
    if not place.startswith("$"):
        return ""
    tokens = []
    for name, index, literal in _STEP.findall(place[1:]):
        token = name or index or ast.literal_eval(literal)
        tokens.append(token.replace("~", "~0").replace("/", "~1"))
    return "".join(f"/{token}" for token in tokens)


def is_object(schema: dict[str, Any]) -> bool:
    """Whether a subschema describes objects: its type says so, or it has properties."""
    kind = schema.get("type")
    return (
        kind == "object"
        or (isinstance(kind, list) and "object" in kind)
        or (kind is None and "properties" in schema)
    )


def nodes(schema: Any, at: str = "$", depth: int = 0) -> Iterator[Node]:
    """``schema`` and every subschema in it, depth first; a subschema that is a bool holds
    nothing to judge and is left out."""
    if not isinstance(schema, dict):
        return
    counted = depth + (1 if isinstance(schema.get("properties"), dict) else 0)
    yield Node(schema, at, counted)
    nested = counted
    for key in _ONE:
        value = schema.get(key)
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield from nodes(item, place(at, key, index), nested)
        else:
            yield from nodes(value, place(at, key), nested)
    for key in _MANY:
        value = schema.get(key)
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield from nodes(item, place(at, key, index), nested)
    for key in _NAMED:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, item in value.items():
                inner = 0 if key in ("$defs", "definitions") else nested
                yield from nodes(item, place(at, key, str(name)), inner)
