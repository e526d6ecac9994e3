"""Where an input's values come from: the sources, the hints given, the values a schema names."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from axm_conformance._schema_keywords import subschemas
from axm_conformance._strategies._json import canonical, kind_of

__all__ = [
    "HINT_SOURCES",
    "SOURCES",
    "Example",
    "HintPools",
    "Hints",
    "illustrations",
    "neighbours",
]

# Where an input's values came from: deterministic edge cases ("boundary"), the hints
# ("tool-output": what other tools of its server or package returned or were given;
# "worker-file", "source-literal", "description", "schema-example"), or Hypothesis alone
# ("generated"). An input that draws on several hints counts under the first of them in this
# order.
SOURCES: Final = (
    "boundary",
    "tool-output",
    "worker-file",
    "source-literal",
    "description",
    "schema-example",
    "generated",
)
HINT_SOURCES: Final = SOURCES[1:6]

# Keywords whose values are values of the schema's instances, not schema.
_NAMING: Final = frozenset({"examples", "default", "const", "enum"})


@dataclass(frozen=True)
class Example:
    """A valid input, what it exercises, and where its values came from (see `SOURCES`)."""

    value: Any
    label: str
    source: str = "boundary"


@dataclass(frozen=True)
class Hints:
    """Values likely to reach a tool's domain, each with its source: the literals of its code
    ("source-literal"), the names of the files it finds ("worker-file"), the values its
    descriptions name ("description").

    With hints, generation also draws on the values the schema itself names ("schema-example":
    ``examples``, ``default``, ``const`` and ``enum`` anywhere in it), whether or not any are
    given. A hint only ever changes which valid inputs are tried: it is used where the schema
    allows it, and nowhere else.
    """

    values: tuple[tuple[str, str | int | float], ...] = ()

    @classmethod
    def of(cls, sources: dict[str, Iterable[str | int | float]]) -> Hints:
        """Hints from each source's values, in the order given."""
        return cls(tuple((source, value) for source, values in sources.items() for value in values))


def illustrations(schema: Any) -> list[tuple[Any, str]]:
    """The values a subschema offers as illustrations, with the keyword offering each."""
    if not isinstance(schema, dict):
        return []
    examples = schema.get("examples")
    out = [(value, "examples") for value in examples] if isinstance(examples, list) else []
    return out + ([(schema["default"], "default")] if "default" in schema else [])


def neighbours(value: Any) -> tuple[Any, ...]:
    """A number and its neighbours: one apart for an integer, the next floats for a float
    (a float that is a whole number given as an int, as integers are drawn); nothing for
    anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ()
    if isinstance(value, int):
        return value, value - 1, value + 1
    near = (value, math.nextafter(value, -math.inf), math.nextafter(value, math.inf))
    return tuple(int(x) if x.is_integer() else x for x in near)


class HintPools:
    """The hints one schema can take: those given, less the schema's own words, and the values
    the schema names; per kind of leaf, by source."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._pools: dict[tuple[Hints, str], list[tuple[str, tuple[Any, ...]]]] = {}

    @cached_property
    def _named(self) -> tuple[Any, ...]:
        """The strings and numbers the schema names: examples, default, const, enum values."""
        found = []
        for _, sub in subschemas(self.schema):
            if isinstance(sub, dict):
                found += [value for value, _ in illustrations(sub)]
                found += sub["enum"] if isinstance(sub.get("enum"), list) else []
                found += [sub["const"]] if "const" in sub else []
        return tuple(value for value in found if kind_of(value) in ("string", "integer", "number"))

    @cached_property
    def _words(self) -> frozenset[str]:
        """The words of the schema's own structure: keywords, property names, types, formats,
        patterns, titles, descriptions (not the values it names: see `_named`)."""
        found: set[str] = set()

        def walk(node: Any) -> None:
            if isinstance(node, str):
                found.add(node)
            elif isinstance(node, list):
                for item in node:
                    walk(item)
            elif isinstance(node, dict):
                found.update(key for key in node if isinstance(key, str))
                for key, item in node.items():
                    if key not in _NAMING:
                        walk(item)

        walk(self.schema)
        return frozenset(found)

    def usable(self, hints: Hints) -> list[tuple[str, Any]]:
        """The hints and the values the schema names, without the words of the schema: a
        tool that declares its schema in its source has them among its literals, and the
        schema already says where they go."""
        words = self._words
        given = [(source, value) for source, value in hints.values if value not in words]
        return given + [("schema-example", value) for value in self._named]

    def leaf(self, hints: Hints, kind: str) -> list[tuple[str, tuple[Any, ...]]]:
        """Per source, the hints a leaf of `kind` may take: numbers with their neighbours."""
        key = (hints, kind)
        if key not in self._pools:
            found: dict[str, dict[str, Any]] = {}
            for source, hint in self.usable(hints):
                for value in neighbours(hint) if kind != "string" else (hint,):
                    if kind_of(value) == kind:
                        found.setdefault(source, {})[canonical(value)] = value
            self._pools[key] = [
                (source, tuple(found[source].values()))
                for source in HINT_SOURCES
                if source in found
            ]
        return self._pools[key]
