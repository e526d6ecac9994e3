"""Tool inputs from a JSON Schema 2020-12: valid values, boundary examples, one-mistake mutations.

A tool's input schema is read as JSON Schema 2020-12, whatever its ``$schema`` says among the
published drafts (a custom dialect is rejected). From it this module makes:

- `valid_inputs`: a Hypothesis strategy of values that validate;
- `boundary_inputs`: a deterministic list of valid edge cases, each labelled;
- `invalid_inputs` / `invalid_examples`: values that break the schema at exactly one location in
  one known way, each a `Mutation` with a stable `kind`;
- `keywords_of`: the keywords a schema uses, so a report can say which ones were exercised.

Why not `hypothesis_jsonschema.from_schema` alone: it predates 2020-12 (no ``prefixItems``,
``dependentRequired``, ``$anchor`` or ``$id``-relative references) and, with current Hypothesis, it
cannot draw a single JSON object (it relies on a private Hypothesis helper whose interface changed).
Every tool input is an object, so objects, arrays, references and combinators are built here by
construction. hypothesis-jsonschema is kept for string leaves: its regex strategy (``pattern``) and
its table of ``format`` strategies work with every Hypothesis release and would be costly to
rewrite; it only ever receives a fresh leaf schema without ``$ref`` (it rewrites schemas that have
references in place). Numbers, booleans and null are built by hand: a few lines, exact
``multipleOf`` arithmetic, and unlike hypothesis-jsonschema integers as well as floats for
``number``.

How a schema is read. The subschemas that apply at one location (a ``$ref`` target and its
siblings, ``allOf`` branches) form a conjunction whose keywords are combined one by one: types
intersect, bounds tighten, ``properties``/``items`` of every member keep applying to the same keys
and indices. ``anyOf``, ``oneOf``, ``if``/``then``/``else`` and ``dependentSchemas`` split a
location into alternatives, each built by construction; ``oneOf`` (exactly one branch), ``not``
and the ``else`` side of a condition are then enforced by filters. A reference may re-enter itself
at most `_MAX_RECURSION` times on one path; deeper, that alternative is dropped, which bounds
recursive schemas (trees) without filtering. Strategies are built once per schema (cached by
canonical JSON), and every drawn value is re-checked with a cached ``Draft202012Validator`` that
also asserts the formats jsonschema can check, so an invalid value can never come out.

Errors, all raised when a schema is first used, never while drawing::

    ValueError
     ├── InvalidSchemaError        not a valid 2020-12 schema, or a $ref to nowhere or in a loop
     ├── UnsupportedSchemaError    valid, but uses a keyword this module cannot honour
     └── UnsatisfiableSchemaError  no value can satisfy it
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property, lru_cache, partial, reduce
from operator import attrgetter
from typing import Any, Final, NamedTuple
from urllib.parse import quote

from hypothesis import assume
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, SchemaError
from referencing import Registry
from referencing._core import Resolver  # where referencing defines it; not re-exported
from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable
from referencing.jsonschema import DRAFT202012

__all__ = [
    "MUTATION_KINDS",
    "SOURCES",
    "Example",
    "Hints",
    "InvalidSchemaError",
    "Mutation",
    "UnsatisfiableSchemaError",
    "UnsupportedSchemaError",
    "boundary_inputs",
    "discarded_count",
    "generated_inputs",
    "hinted_inputs",
    "invalid_examples",
    "invalid_inputs",
    "keywords_exercised",
    "keywords_of",
    "valid_inputs",
]


class InvalidSchemaError(ValueError):
    """The schema is not a valid JSON Schema 2020-12 document."""


class UnsupportedSchemaError(ValueError):
    """The schema is valid but uses a keyword whose inputs this module cannot generate correctly."""


class UnsatisfiableSchemaError(ValueError):
    """No JSON value satisfies the schema."""


@dataclass(frozen=True)
class Example:
    """A valid input, what it exercises, and where its values came from (see `SOURCES`)."""

    value: Any
    label: str
    source: str = "boundary"


@dataclass(frozen=True)
class Mutation:
    """An input that breaks the schema in exactly one known way."""

    value: Any
    kind: str
    path: tuple[str | int, ...]
    detail: str
    source: str = "boundary"  # of the valid input it was made from, see `SOURCES`


@dataclass(frozen=True)
class Hints:
    """Values likely to reach a tool's domain, each with its source: the literals of its code
    ("source-literal"), the names of the files it finds ("worker-file").

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


# Where an input's values came from: deterministic edge cases ("boundary"), the hints
# ("worker-file", "source-literal", "schema-example"), or Hypothesis alone ("generated"). An
# input that draws on several hints counts under the first of them in this order.
SOURCES: Final = ("boundary", "worker-file", "source-literal", "schema-example", "generated")
_HINT_SOURCES: Final = SOURCES[1:4]


# Mutation kinds and the keywords whose failure each one stands for. A mutation is kept only if
# validation fails on its path and for one of these keywords; the type kinds also accept `enum`
# and `const`, which fail with the type whenever they are present. invalid_inputs draws kinds
# in this order of preference (Hypothesis favours the first), the narrowest mistakes first.
_TYPE_KEYWORDS: Final = frozenset({"type", "enum", "const"})
_KIND_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    "below-minimum": frozenset({"minimum", "exclusiveMinimum"}),
    "above-maximum": frozenset({"maximum", "exclusiveMaximum"}),
    "not-multiple-of": frozenset({"multipleOf"}),
    "too-short": frozenset({"minLength"}),
    "too-long": frozenset({"maxLength"}),
    "pattern-mismatch": frozenset({"pattern"}),
    "too-few-items": frozenset({"minItems"}),
    "too-many-items": frozenset({"maxItems"}),
    "duplicate-items": frozenset({"uniqueItems"}),
    "not-in-enum": frozenset({"enum"}),
    "const-mismatch": frozenset({"const"}),
    "too-few-properties": frozenset({"minProperties"}),
    "too-many-properties": frozenset({"maxProperties"}),
    "missing-dependent": frozenset({"dependentRequired"}),  # a property another one requires
    "extra-property": frozenset({"additionalProperties"}),  # an unknown property added
    "missing-required": frozenset({"required"}),  # a required property removed
    "item-wrong-type": _TYPE_KEYWORDS,  # an array item of a type the items do not allow
    "wrong-type": _TYPE_KEYWORDS,  # a value of a type the location does not allow
    "null-not-allowed": _TYPE_KEYWORDS,  # null where null is not allowed
}
MUTATION_KINDS: Final = frozenset(_KIND_KEYWORDS)
# Keywords that report a failure found inside their subschemas rather than one of their own.
_WRAPPER_KEYWORDS: Final = frozenset({"anyOf", "oneOf", "not"})

_Strategy = st.SearchStrategy[Any]
_Path = tuple[str | int, ...]
_Check = Callable[[Any], bool]
_Pick = Callable[[Sequence[Any]], Any]

_FORMAT_CHECKER: Final = Draft202012Validator.FORMAT_CHECKER
_ROOT_URI: Final = "urn:axm-conformance:input-schema"
_DIALECTS: Final = frozenset(
    f"json-schema.org/{name}"
    for name in (
        "draft/2020-12/schema",
        "draft/2019-09/schema",
        "draft-07/schema",
        "draft-06/schema",
        "draft-04/schema",
    )
)
_UNSUPPORTED: Final[dict[str, str]] = {
    "unevaluatedProperties": "it depends on what every other subschema evaluated",
    "unevaluatedItems": "it depends on what every other subschema evaluated",
    "$dynamicRef": "dynamic references need the dynamic scope",
    "$recursiveRef": "draft 2019-09 recursive references need the dynamic scope",
    "dependencies": "draft 7 keyword, ignored by 2020-12: use dependentRequired/dependentSchemas",
}
# Keywords that restrict values; a location with none of them (and no filter) accepts any JSON.
_CONSTRAINTS: Final = frozenset(
    {
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "items", "prefixItems",
        "contains", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties",
        "required", "properties", "patternProperties", "additionalProperties",
        "dependentRequired", "propertyNames",
    }
)  # fmt: skip
# Keywords that only restrict values of one kind, and keywords that may restrict any kind.
_NUMBER_CONSTRAINTS: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
_OBJECT_CONSTRAINTS: Final = frozenset(
    {"properties", "patternProperties", "additionalProperties", "required", "minProperties",
     "maxProperties", "dependentRequired", "propertyNames", "dependentSchemas"}
)  # fmt: skip
_KIND_CONSTRAINTS: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "integer": _NUMBER_CONSTRAINTS,
    "number": _NUMBER_CONSTRAINTS,
    "array": frozenset({"items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems"}),
    "object": _OBJECT_CONSTRAINTS,
}
_ANY_KIND_CONSTRAINTS: Final = frozenset(
    {"enum", "const", "$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not",
     "if", "unevaluatedItems", "unevaluatedProperties"}
)  # fmt: skip
# Subschema positions of 2020-12 (plus draft 7's, so keywords_of sees their contents too).
_ONE_SCHEMA: Final = frozenset(
    {
        "additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems",
    }
)  # fmt: skip
_SCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAP: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

# JSON kinds, in the order simplest values are tried: "number" is a non-integer number here,
# since the JSON Schema type "number" admits integers too (see _TYPE_KINDS).
_KINDS: Final = ("string", "integer", "number", "boolean", "object", "array", "null")
_TYPE_KINDS: Final[dict[str, frozenset[str]]] = {
    **{name: frozenset({name}) for name in _KINDS},
    "number": frozenset({"integer", "number"}),
}
_KIND_NAMES: Final = {"integer": "an integer", "number": "a number", "array": "an array",
                      "object": "an object", "string": "a string", "boolean": "a boolean",
                      "null": "null"}  # fmt: skip

# Formats generated to conform: hypothesis-jsonschema has strategies for all but the two custom
# ones. A format jsonschema can check but that is missing here is rejected as unsupported; any
# other format is an annotation and ignored. The examples seed boundary values.
_FORMAT_EXAMPLES: Final = {
    "date": "2000-01-01",
    "date-time": "2000-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri": "https://example.com/",
    "iri-reference": "https://example.com/",
    "uri-template": "https://example.com/{id}",
    "json-pointer": "/a",
    "relative-json-pointer": "0",
    "regex": "^a$",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "duration": "P1D",
}
_CUSTOM_FORMATS: Final[dict[str, st.SearchStrategy[str]]] = {
    "uuid": st.uuids().map(str),
    "duration": st.builds("P{}D".format, st.integers(0, 10_000)),
}

_MAX_RECURSION: Final = 3  # times one $ref target may be re-entered on a path
_MAX_ALTERNATIVES: Final = 64  # alternatives one location may split into
_MAX_EXTRA_KEYS: Final = 3  # undeclared keys drawn beyond what minProperties needs
_MAX_EXTRA_ITEMS: Final = 6  # items drawn beyond what minItems needs
_NON_ASCII: Final = "Zürich — 東京 🚀"
_LONG_LENGTH: Final = 10_000
_PATTERN_LENGTHS: Final = 256  # lengths tried when looking for text that matches a pattern
_LARGE_NEGATIVE: Final = -1_000_000_000
# One input in this many takes values from the hints (with hints), and in such an input each
# string or number does with even odds: most inputs are left as the schema alone makes them, and
# those that are not combine hints. Taking hints is never the first choice, so that shrinking,
# which favours first choices, keeps a hint only where the failure needs it.
_HINTED_INPUTS: Final = 4
_HINTED_INPUT: Final = st.integers(0, _HINTED_INPUTS - 1)
_MISSING: Final[Any] = object()  # "no simplest value here"

_SCALARS: Final = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).map(lambda x: x + 0.0)  # no -0.0
    | st.text()
)
_ANY_JSON: Final[_Strategy] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


class _Empty(NamedTuple):
    """No value exists at a location; `reason` ends up in UnsatisfiableSchemaError."""

    reason: str


class _Bound(NamedTuple):
    value: int | float
    exclusive: bool


# ---------------------------------------------------------------------------------------------
# JSON helpers


def _normalized(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _normalized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    """Canonical JSON text: equal texts for values JSON Schema calls equal (1 == 1.0, true != 1)."""
    return json.dumps(
        _normalized(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _where(path: _Path) -> str:
    if not path:
        return "input"
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)
    return text.removeprefix(".")


def _pointer(pointer: str) -> str:
    return f"#{pointer}"


def _escape(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _replace(value: Any, path: _Path, new: Any) -> Any:
    """A copy of `value` with the location at `path` replaced; only the path itself is copied."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], rest, new)  # type: ignore[index]
    return copy


def _closure(keys: Iterable[str], dependent: dict[str, tuple[str, ...]]) -> list[str]:
    """The keys plus every key they require through dependentRequired, in discovery order."""
    out: list[str] = []
    pending = list(keys)
    while pending:
        key = pending.pop(0)
        if key not in out:
            out.append(key)
            pending.extend(dependent.get(key, ()))
    return out


def _free_kinds(schema: Any) -> frozenset[str]:
    """Kinds of which `schema` accepts every value, judged from its keywords alone."""
    if schema is True:
        return frozenset(_KINDS)
    if not isinstance(schema, dict) or _ANY_KIND_CONSTRAINTS & schema.keys():
        return frozenset()
    kinds = frozenset(_KINDS)
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        kinds = frozenset().union(*(_TYPE_KINDS[name] for name in names))
    return frozenset(k for k in kinds if not _KIND_CONSTRAINTS.get(k, frozenset()) & schema.keys())


def _excluding(kinds: frozenset[str], pointer: str) -> tuple[_Node, ...]:
    """A made-up subschema allowing every type but `kinds` (a filter rejects those anyway)."""
    if not kinds:
        return ()
    names = [name for name in ("null", "boolean", "string", "array", "object") if name not in kinds]
    if "number" not in kinds:
        names.append("number")
    elif "integer" not in kinds:
        names.append("integer")
    return (_Node({"type": names}, f"{pointer}!types", None),)


# What the label of a placed hint says about its source.
_HINT_NOTES: Final = {
    "worker-file": "a file in the working directory",
    "source-literal": "a literal in the tool's source",
    "schema-example": "a value the schema names",
}
# Keywords whose values are values of the schema's instances, not schema.
_NAMING: Final = frozenset({"examples", "default", "const", "enum"})
# How a boundary example taken from the schema's examples or default ends its label.
_OFFERED_LABELS: Final = ("(from examples)", "(from default)")


def _offered(schema: Any) -> list[tuple[Any, str]]:
    """The values a subschema offers as illustrations, with the keyword offering each."""
    if not isinstance(schema, dict):
        return []
    examples = schema.get("examples")
    out = [(value, "examples") for value in examples] if isinstance(examples, list) else []
    return out + ([(schema["default"], "default")] if "default" in schema else [])


def _near(value: Any) -> tuple[Any, ...]:
    """A number and its neighbours: one apart for an integer, the next floats for a float
    (a float that is a whole number given as an int, as integers are drawn); nothing for
    anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ()
    if isinstance(value, int):
        return value, value - 1, value + 1
    near = (value, math.nextafter(value, -math.inf), math.nextafter(value, math.inf))
    return tuple(int(x) if x.is_integer() else x for x in near)


# ---------------------------------------------------------------------------------------------
# Walking schemas


def _subschemas(schema: Any, pointer: str = "") -> Iterator[tuple[Any, str]]:
    """Every subschema with its JSON pointer, the schema itself first (keyword positions only)."""
    yield schema, pointer
    if not isinstance(schema, dict):
        return
    for keyword, value in schema.items():
        here = f"{pointer}/{_escape(keyword)}"
        if keyword in _ONE_SCHEMA and isinstance(value, dict | bool):
            yield from _subschemas(value, here)
        elif keyword in _SCHEMA_LIST and isinstance(value, list):
            for index, item in enumerate(value):
                yield from _subschemas(item, f"{here}/{index}")
        elif keyword in _SCHEMA_MAP and isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, dict | bool):
                    yield from _subschemas(item, f"{here}/{_escape(name)}")


def keywords_of(schema: Any) -> frozenset[str]:
    """The keywords used anywhere in `schema`; property names and $defs names are not keywords."""
    return frozenset(
        keyword for sub, _ in _subschemas(schema) if isinstance(sub, dict) for keyword in sub
    )


_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "examples", "$comment", "$defs", "definitions", "$schema",
     "$id", "deprecated", "readOnly", "writeOnly"}
)  # fmt: skip


def keywords_exercised(schema: Any, value: Any) -> frozenset[str]:
    """The keywords of the subschemas that `value` reaches: the root's, then those of each
    property, pattern, item or branch the value has. Local `$ref`s are followed once each."""
    found: set[str] = set()
    seen: set[int] = set()

    def visit(node: Any, item: Any) -> None:
        if not isinstance(node, dict) or id(node) in seen:
            return
        seen.add(id(node))
        found.update(key for key in node if key not in _ANNOTATIONS)
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#"):
            target: Any = schema
            for token in filter(None, reference[1:].split("/")):
                token = token.replace("~1", "/").replace("~0", "~")
                target = target.get(token) if isinstance(target, dict) else None
            visit(target, item)
        for key in ("allOf", "anyOf", "oneOf"):
            for branch in node.get(key) or ():
                visit(branch, item)
        if isinstance(item, dict):
            properties = node.get("properties") or {}
            patterns = node.get("patternProperties") or {}
            for name, member in item.items():
                matched = [sub for pattern, sub in patterns.items() if re.search(pattern, name)]
                if name in properties:
                    visit(properties[name], member)
                for sub in matched:
                    visit(sub, member)
                if name not in properties and not matched:
                    visit(node.get("additionalProperties"), member)
        elif isinstance(item, list):
            prefix = node.get("prefixItems") or []
            for index, member in enumerate(item):
                visit(prefix[index] if index < len(prefix) else node.get("items"), member)

    visit(schema, value)
    return frozenset(found)


def _dict_pointers(value: Any, pointer: str = "") -> Iterator[tuple[int, str]]:
    """`id` and pointer of every JSON object in a document, to name where a $ref lands."""
    if isinstance(value, dict):
        yield id(value), pointer
        for key, item in value.items():
            yield from _dict_pointers(item, f"{pointer}/{_escape(key)}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _dict_pointers(item, f"{pointer}/{index}")


# ---------------------------------------------------------------------------------------------
# Simplest string matching a regular expression, for boundary values (no Hypothesis engine, so it
# also works inside a running test). Best effort: the result is checked with re.search.

_sre: Final[Any] = importlib.import_module("re._parser")
_CATEGORY_CHARS: Final = {
    "CATEGORY_DIGIT": "0",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": " ",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
}


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


def _pattern_text(pattern: str, shortest: int, longest: int) -> str | None:
    """Short text matching `pattern` with a length in [shortest, longest], if one is found."""
    parsed = _sre.parse(pattern)
    for extra in range(min(shortest, _PATTERN_LENGTHS) + 1):
        text = _regex_text(parsed, {}, extra)
        if len(text) > longest:
            break
        if shortest <= len(text) and re.search(pattern, text):
            return text
    return None


# ---------------------------------------------------------------------------------------------
# Numbers


def _fraction(number: int | float) -> Fraction:
    # A float multipleOf is meant as the decimal it was written as (0.1, not its binary value).
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def _lcm(steps: Iterable[Fraction]) -> Fraction:
    def pair(a: Fraction, b: Fraction) -> Fraction:
        return Fraction(math.lcm(a.numerator, b.numerator), math.gcd(a.denominator, b.denominator))

    return reduce(pair, steps)


def _least(old: int | None, new: int | None) -> int | None:
    return new if old is None else old if new is None else min(old, new)


def _tighter(old: _Bound | None, new: _Bound, *, lower: bool) -> _Bound:
    """The stricter of two lower (or two upper) bounds."""
    if old is None:
        return new
    if new.value != old.value:
        return new if (new.value > old.value) == lower else old
    return old if old.exclusive else new


# ---------------------------------------------------------------------------------------------
# Schema locations


@dataclass(frozen=True)
class _Node:
    """A subschema in context: the resolver knows its base URI, the pointer names it."""

    schema: Any
    pointer: str  # JSON pointer in the document; made-up nodes carry a "!..." suffix
    resolver: Resolver[Any] | None  # None for made-up nodes, which never hold a $ref

    def child(self, *keys: str | int) -> _Node:
        schema = self.schema
        for key in keys:
            schema = schema[key]
        pointer = self.pointer + "".join(f"/{_escape(key)}" for key in keys)
        resolver = self.resolver
        if resolver is not None and isinstance(schema, dict) and "$id" in schema:
            resolver = resolver.in_subresource(DRAFT202012.create_resource(schema))
        return _Node(schema, pointer, resolver)


_STRING_NODE: Final = _Node({"type": "string"}, "!string", None)
_Option = tuple[tuple[_Node, ...], tuple[_Check, ...]]  # subschemas to add, filters to apply


@dataclass(frozen=True)
class _Alt:
    """One alternative at a location: the plain subschemas that all apply, and the filters."""

    nodes: tuple[_Node, ...]
    checks: tuple[_Check, ...]


@dataclass(frozen=True, eq=False)
class _Facts:
    """One alternative with its keywords combined; object and array details stay per node."""

    pointer: str
    alt: _Alt
    kinds: frozenset[str]
    enum: tuple[Any, ...] | None  # the listed values that satisfy the alternative
    enum_keyword: str
    lower: _Bound | None
    upper: _Bound | None
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

    def _all(self, keyword: str) -> list[tuple[_Node, Any]]:
        return [(n, n.schema[keyword]) for n in self.alt.nodes if keyword in n.schema]

    @cached_property
    def value_kinds(self) -> frozenset[str]:
        """Kinds a value may have here (enum values decide when listed)."""
        if self.enum is None:
            return self.kinds
        kinds = {_kind_of(value) for value in self.enum}
        return frozenset(kinds | ({"number"} if "integer" in kinds else set()))

    # objects
    @cached_property
    def declared(self) -> tuple[str, ...]:
        names = [name for _, props in self._all("properties") for name in props]
        return tuple(dict.fromkeys(names + list(self.required)))

    @cached_property
    def patterns_of_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for _, props in self._all("patternProperties") for p in props))

    @cached_property
    def names(self) -> tuple[_Node, ...]:
        return tuple(node.child("propertyNames") for node, _ in self._all("propertyNames"))

    def value_conj(self, key: str) -> tuple[_Node, ...]:
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

    def pattern_conj(self, pattern: str) -> tuple[_Node, ...]:
        """What applies to a key that matches `pattern` and no other pattern or declared name."""
        out = []
        for node in self.alt.nodes:
            if pattern in node.schema.get("patternProperties", {}):
                out.append(node.child("patternProperties", pattern))
            elif "additionalProperties" in node.schema:
                out.append(node.child("additionalProperties"))
        return tuple(out)

    @cached_property
    def additional_conj(self) -> tuple[_Node, ...]:
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

    def index_conj(self, index: int) -> tuple[_Node, ...]:
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
    def contains(self) -> tuple[tuple[_Node, int, int | None], ...]:
        return tuple(
            (
                node.child("contains"),
                node.schema.get("minContains", 1),
                node.schema.get("maxContains"),
            )
            for node, _ in self._all("contains")
        )


# ---------------------------------------------------------------------------------------------
# The document: references, validators, and everything built from one schema


class _Document:
    """One schema with its strategies, validators and derived examples, built once and cached."""

    def __init__(self, schema: Any) -> None:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as err:
            where = _pointer("".join(f"/{_escape(key)}" for key in err.absolute_path))
            raise InvalidSchemaError(
                f"not a valid JSON Schema 2020-12 document: {err.message} (at {where})"
            ) from None
        self.validator = Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
        self._uri = _ROOT_URI
        resolver = None
        if isinstance(schema, dict):
            resource = DRAFT202012.create_resource(schema)
            self._uri = resource.id() or _ROOT_URI
            self._registry: Registry[Any] = Registry().with_resource(self._uri, resource).crawl()
            resolver = self._registry.resolver(self._uri)
        self.root = _Node(schema, "", resolver)
        self._pointers = dict(_dict_pointers(schema))
        self._stack: list[str] = []  # $ref targets being built, for the recursion bound
        self._expansions: dict[tuple[Any, ...], tuple[list[_Facts | _Empty], tuple[str, ...]]] = {}
        self._strategies: dict[tuple[Any, ...], _Strategy | _Empty] = {}
        self._simplest: dict[tuple[Any, ...], Any] = {}
        self._pools: dict[tuple[str, ...], list[Any]] = {}
        self._validators: dict[str, Any] = {}
        self._hints: Hints | None = None  # the hints mixed into the strategies being built
        self._hinted: dict[Hints, tuple[_Strategy, st.SearchStrategy[Example]]] = {}
        self._hint_pools: dict[tuple[Hints, str], list[tuple[str, tuple[Any, ...]]]] = {}
        self._invalid: dict[Hints | None, st.SearchStrategy[Mutation]] = {}
        self._drawn: set[str] = set()  # the hint sources the value being drawn took values from
        built = self.strategy((self.root,))
        if isinstance(built, _Empty):
            raise UnsatisfiableSchemaError(f"no value satisfies the schema: {built.reason}")
        # Values that construction got wrong are dropped here, and counted: a kit reports how
        # many it threw away, since many discards mean the schema is hard to satisfy.
        self.discarded = 0
        self.valid: _Strategy = built.filter(self._kept)

    def _kept(self, value: Any) -> bool:
        kept: bool = self.validator.is_valid(value)
        self.discarded += not kept
        return kept

    # --- validation of subschemas

    def _is_valid(self, node: _Node, value: Any) -> bool:
        if isinstance(node.schema, bool):
            return node.schema
        validator = self._validators.get(node.pointer)
        if validator is None:
            # A document node is validated through a $ref to its absolute URI, so that its own
            # references resolve against the right base; made-up nodes have none.
            schema = (
                node.schema
                if node.resolver is None
                else {"$ref": f"{self._uri}#{quote(node.pointer, safe='/~')}"}
            )
            registry = {} if node.resolver is None else {"registry": self._registry}
            validator = Draft202012Validator(schema, format_checker=_FORMAT_CHECKER, **registry)
            self._validators[node.pointer] = validator
        return bool(validator.is_valid(value))

    def _accepts(self, facts: _Facts, value: Any) -> bool:
        alt = facts.alt
        return all(self._is_valid(n, value) for n in alt.nodes) and all(
            c(value) for c in alt.checks
        )

    def _matching(self, alts: list[_Facts], value: Any) -> _Facts:
        return next((f for f in alts if self._accepts(f, value)), alts[0])

    # --- reading the schema

    def _check_supported(self, node: _Node) -> None:
        schema = node.schema
        for keyword, reason in _UNSUPPORTED.items():
            if keyword in schema and schema[keyword] not in (True, {}):
                raise UnsupportedSchemaError(
                    f"unsupported keyword {keyword!r} at {_pointer(node.pointer)}: {reason}"
                )
        dialect = schema.get("$schema")
        if dialect is not None and dialect.rstrip("#").split("://")[-1] not in _DIALECTS:
            raise UnsupportedSchemaError(
                f"unsupported keyword '$schema' at {_pointer(node.pointer)}: custom dialect "
                f"{dialect!r}; only the published JSON Schema drafts are read (as 2020-12)"
            )
        fmt = schema.get("format")
        if fmt in _FORMAT_CHECKER.checkers and fmt not in _FORMAT_EXAMPLES:
            raise UnsupportedSchemaError(
                f"unsupported keyword 'format' at {_pointer(node.pointer)}: no generator for "
                f"format {fmt!r}, which the validator checks"
            )

    def _deref(self, node: _Node) -> _Node:
        ref = node.schema["$ref"]
        assert node.resolver is not None  # made-up nodes hold no $ref
        try:
            resolved = node.resolver.lookup(ref)
        except (PointerToNowhere, NoSuchAnchor):
            raise InvalidSchemaError(
                f"$ref {ref!r} at {_pointer(node.pointer)} points to nothing in the schema"
            ) from None
        except Unresolvable:
            raise UnsupportedSchemaError(
                f"unsupported keyword '$ref' at {_pointer(node.pointer)}: {ref!r} is a remote "
                "reference; only references within the schema are followed"
            ) from None
        contents = resolved.contents
        pointer = self._pointers.get(id(contents)) if isinstance(contents, dict) else None
        if pointer is None:
            pointer = ref[1:] if ref.startswith("#/") else f"!{ref}"
        return _Node(contents, pointer, resolved.resolver)

    def _splits(self, node: _Node) -> Iterator[list[_Option]]:
        """Each way the node splits its location: a list of (extra subschemas, filters)."""
        schema = node.schema
        if "anyOf" in schema:
            yield [((node.child("anyOf", i),), ()) for i in range(len(schema["anyOf"]))]
        if "oneOf" in schema:
            branches = [node.child("oneOf", i) for i in range(len(schema["oneOf"]))]

            def exactly_one(value: Any) -> bool:
                return sum(self._is_valid(branch, value) for branch in branches) == 1

            options: list[_Option] = []
            for branch in branches:
                # a kind another branch accepts wholesale can never satisfy exactly one branch
                others = [_free_kinds(b.schema) for b in branches if b is not branch]
                excluded = _excluding(frozenset().union(*others), branch.pointer)
                options.append(((branch, *excluded), (exactly_one,)))
            yield options
        if "if" in schema and ("then" in schema or "else" in schema):
            condition = node.child("if")
            then = (node.child("then"),) if "then" in schema else ()
            otherwise = (node.child("else"),) if "else" in schema else ()
            yield [((condition, *then), ()), (otherwise, (self._negation(condition),))]
        for name in schema.get("dependentSchemas", {}):
            where = f"{node.pointer}/dependentSchemas/{_escape(name)}"
            absent = _Node({"properties": {name: False}}, f"{where}!absent", None)
            present = _Node({"required": [name]}, f"{where}!present", None)
            yield [((absent,), ()), ((present, node.child("dependentSchemas", name)), ())]

    def _negation(self, node: _Node) -> _Check:
        return lambda value: not self._is_valid(node, value)

    def _expand(self, conj: tuple[_Node, ...]) -> tuple[list[_Alt | _Empty], tuple[str, ...]]:
        """Split a conjunction into alternatives of plain subschemas; also the $refs entered."""
        results: list[_Alt | _Empty] = []
        entered: dict[str, None] = {}

        # Each pending node comes with the subschemas it sits in at the same location, so that a
        # $ref back into one of them (a loop no value ever ends) is told from a mere repeat.
        def walk(
            pending: tuple[tuple[_Node, frozenset[str]], ...],
            plain: tuple[_Node, ...],
            checks: tuple[_Check, ...],
            seen: frozenset[str],
        ) -> None:
            if len(results) > _MAX_ALTERNATIVES:
                raise UnsupportedSchemaError(
                    f"unsupported combination at {_pointer(conj[0].pointer)}: more than "
                    f"{_MAX_ALTERNATIVES} alternatives (anyOf/oneOf/if/dependentSchemas)"
                )
            if not pending:
                results.append(_Alt(plain, checks))
                return
            (node, within), rest = pending[0], pending[1:]
            schema = node.schema
            if schema is True or node.pointer in seen:  # a schema and itself is that schema
                walk(rest, plain, checks, seen)
                return
            if schema is False:
                results.append(_Empty(f"false schema at {_pointer(node.pointer)}"))
                return
            self._check_supported(node)
            seen |= {node.pointer}
            extra = [node.child("allOf", i) for i in range(len(schema.get("allOf", ())))]
            if "$ref" in schema:
                target = self._deref(node)
                if target.pointer in within:
                    raise InvalidSchemaError(
                        f"$ref {schema['$ref']!r} at {_pointer(node.pointer)} loops back to "
                        f"{_pointer(target.pointer)} without reaching any value"
                    )
                if self._stack.count(target.pointer) >= _MAX_RECURSION:
                    results.append(
                        _Empty(f"recursion deeper than {_MAX_RECURSION} at {schema['$ref']}")
                    )
                    return
                entered[target.pointer] = None
                extra.append(target)
            if "not" in schema:
                negated = node.child("not")
                extra += _excluding(_free_kinds(negated.schema), negated.pointer)
                checks += (self._negation(negated),)
            branches: list[_Option] = [((), ())]
            for split in self._splits(node):
                branches = [(b + n, c + k) for b, c in branches for n, k in split]
            for nodes, filters in branches:
                inner = tuple((n, within | {n.pointer}) for n in (*extra, *nodes))
                walk(rest + inner, (*plain, node), checks + filters, seen)

        walk(tuple((n, frozenset({n.pointer})) for n in conj), (), (), frozenset())
        return results, tuple(entered)

    def alternatives(
        self, conj: tuple[_Node, ...]
    ) -> tuple[list[_Facts | _Empty], tuple[str, ...]]:
        """The alternatives at a location, keywords combined, given the $refs being built."""
        key = (tuple(n.pointer for n in conj), tuple(self._stack))
        cached = self._expansions.get(key)
        if cached is None:
            alts, entered = self._expand(conj)
            where = conj[0].pointer if conj else ""
            facts = [a if isinstance(a, _Empty) else self._facts(where, a) for a in alts]
            cached = self._expansions[key] = (facts, entered)
        return cached

    def _facts(self, where: str, alt: _Alt) -> _Facts | _Empty:
        kinds = frozenset(_KINDS)
        enum: list[Any] | None = None
        enum_keyword = "enum"
        lower = upper = None
        multiples: list[int | float] = []
        min_length = min_items = min_props = 0
        max_length: int | None = None
        max_items: int | None = None
        max_props: int | None = None
        patterns: list[str] = []
        formats: list[str] = []
        required: list[str] = []
        dependent: dict[str, list[str]] = {}
        for node in alt.nodes:
            s = node.schema
            if "type" in s:
                names = [s["type"]] if isinstance(s["type"], str) else s["type"]
                kinds &= frozenset().union(*(_TYPE_KINDS[name] for name in names))
            for keyword, listed in (("enum", s.get("enum")), ("const", [s.get("const")])):
                if keyword in s:
                    texts = {_canonical(value) for value in listed}
                    enum = [v for v in (listed if enum is None else enum) if _canonical(v) in texts]
                    if keyword == "const":
                        enum_keyword = keyword
            for keyword, exclusive in (("minimum", False), ("exclusiveMinimum", True)):
                if keyword in s:
                    lower = _tighter(lower, _Bound(s[keyword], exclusive), lower=True)
            for keyword, exclusive in (("maximum", False), ("exclusiveMaximum", True)):
                if keyword in s:
                    upper = _tighter(upper, _Bound(s[keyword], exclusive), lower=False)
            if "multipleOf" in s:
                multiples.append(s["multipleOf"])
            if "pattern" in s:
                patterns.append(s["pattern"])
            if s.get("format") in _FORMAT_EXAMPLES:
                formats.append(s["format"])
            min_length = max(min_length, s.get("minLength", 0))
            min_items = max(min_items, s.get("minItems", 0))
            min_props = max(min_props, s.get("minProperties", 0))
            max_length = _least(max_length, s.get("maxLength"))
            max_items = _least(max_items, s.get("maxItems"))
            max_props = _least(max_props, s.get("maxProperties"))
            required.extend(s.get("required", ()))
            for name, needs in s.get("dependentRequired", {}).items():
                dependent.setdefault(name, []).extend(needs)
        facts = _Facts(
            pointer=where,
            alt=alt,
            kinds=kinds,
            enum=None,
            enum_keyword=enum_keyword,
            lower=lower,
            upper=upper,
            multiples=tuple(multiples),
            min_length=min_length,
            max_length=max_length,
            patterns=tuple(patterns),
            formats=tuple(formats),
            min_items=min_items,
            max_items=max_items,
            unique=any(n.schema.get("uniqueItems") is True for n in alt.nodes),
            min_props=min_props,
            max_props=max_props,
            required=tuple(dict.fromkeys(required)),
            dependent={name: tuple(dict.fromkeys(needs)) for name, needs in dependent.items()},
            constrained=bool(alt.checks) or any(_CONSTRAINTS & n.schema.keys() for n in alt.nodes),
        )
        if enum is None:
            return facts
        valid = {_canonical(v): v for v in enum if self._accepts(facts, v)}
        if not valid:
            return _Empty(f"no value listed by {enum_keyword} at {_pointer(where)} fits there")
        return replace(facts, enum=tuple(valid.values()))

    # --- recursion bookkeeping

    @contextmanager
    def _entering(self, entered: tuple[str, ...]) -> Iterator[None]:
        """While inside, the $ref targets of a location count as being built."""
        self._stack.extend(entered)
        try:
            yield
        finally:
            del self._stack[len(self._stack) - len(entered) :]

    # --- strategies

    def strategy(self, conj: tuple[_Node, ...]) -> _Strategy | _Empty:
        """A strategy for the values allowed at a location, or why there are none."""
        alts, entered = self.alternatives(conj)
        # Keyed by the depth of the references entered here: a recursive schema unrolls into a
        # finite, acyclic set of strategies, and a location reached by several paths has one.
        key = (
            tuple(n.pointer for n in conj),
            tuple((t, self._stack.count(t)) for t in entered),
            self._hints,
        )
        built = self._strategies.get(key)
        if built is None:
            with self._entering(entered):
                built = _one_of(
                    [f if isinstance(f, _Empty) else self._alt_strategy(f) for f in alts]
                )
            offered = [value for node in conj for value, _ in _offered(node.schema)]
            if self._hints is not None and offered and not isinstance(built, _Empty):
                pools = [("schema-example", tuple(offered))]
                built = self._mixed(built, pools, lambda v: all(self._is_valid(n, v) for n in conj))
            self._strategies[key] = built
        return built

    def _alt_strategy(self, f: _Facts) -> _Strategy | _Empty:
        if f.enum is not None:
            built: _Strategy | _Empty = st.sampled_from(f.enum)
        elif not f.constrained:
            return _ANY_JSON
        else:
            built = _one_of([self._kind_strategy(f, kind) for kind in _KINDS if kind in f.kinds])
            if isinstance(built, _Empty) and not f.kinds:
                built = _Empty(f"no type is allowed at {_pointer(f.pointer)}")
        checks = f.alt.checks
        if isinstance(built, _Empty) or not checks:
            return built
        return built.filter(lambda value: all(check(value) for check in checks))

    def _few_values(self, conj: tuple[_Node, ...]) -> list[Any] | None:
        """Every value a location allows, if enum, const, boolean or null leave only a few."""
        values: list[Any] = []
        for f in self._live(conj)[0]:
            if f.enum is not None:
                values += f.enum
            elif f.constrained and f.kinds <= {"null", "boolean"}:
                values += [None] * ("null" in f.kinds) + [False, True] * ("boolean" in f.kinds)
            else:
                return None
        return list({_canonical(value): value for value in values}.values())

    def _kind_strategy(self, f: _Facts, kind: str) -> _Strategy | _Empty:
        if kind == "null":
            return st.none()
        if kind == "boolean":
            return st.booleans()
        if kind in ("integer", "number"):
            return self._with_hints(_numbers(f, kind), kind, partial(self._accepts, f))
        if kind == "string":
            return self._with_hints(_strings(f), kind, partial(self._accepts, f))
        return self._arrays(f) if kind == "array" else self._objects(f)

    def _arrays(self, f: _Facts) -> _Strategy | _Empty:
        where = _pointer(f.pointer)
        longest = math.inf if f.max_items is None else f.max_items
        prefix: list[_Strategy] = []
        for index in range(f.prefix_len):
            item = self.strategy(f.index_conj(index))
            if isinstance(item, _Empty):
                longest = min(longest, index)
                break
            prefix.append(item)
        rest = self.strategy(f.index_conj(f.prefix_len))
        few = self._few_values(f.index_conj(f.prefix_len)) if f.unique else None
        if isinstance(rest, _Empty):
            longest = min(longest, len(prefix))
        elif few is not None:  # unique items from a handful of values
            longest = min(longest, len(prefix) + len(few))
        if f.min_items > longest:
            return _Empty(f"the array at {where} cannot have {f.min_items} items")
        shortest, unique, contains = f.min_items, f.unique, f.contains
        first = contains[0] if contains and f.prefix_len == 0 else None
        matching = None if first is None else self.strategy((*f.index_conj(0), first[0]))

        @st.composite
        def draw_array(draw: st.DrawFn) -> list[Any]:
            out: list[Any] = []
            for index, item in enumerate(prefix):
                if index >= longest or (index >= shortest and not draw(st.booleans())):
                    return out
                out.append(draw(item))
            if isinstance(rest, _Empty) or len(out) >= longest:
                return out
            low = max(0, shortest - len(out))
            high = int(min(longest - len(out), low + _MAX_EXTRA_ITEMS))
            if first is not None and isinstance(matching, st.SearchStrategy):
                # contains by construction: how many items match, then the others around them
                node, at_least, at_most = first
                top = min(high, at_least + 2, high if at_most is None else at_most)
                if top >= at_least:
                    count = draw(st.integers(at_least, top))
                    others = rest if at_most is None else rest.filter(self._negation(node))
                    fewest, most = max(0, low - count), high - count
                    by = _unique_by(unique)
                    items = draw(st.lists(others, min_size=fewest, max_size=most, unique_by=by))
                    for _ in range(count):
                        items.insert(draw(st.integers(0, len(items))), draw(matching))
                    return out + items
            more = st.lists(rest, min_size=low, max_size=high, unique_by=_unique_by(unique))
            return out + draw(more)

        def whole(items: list[Any]) -> bool:
            if unique and len({_canonical(i) for i in items}) != len(items):
                return False
            for node, at_least, at_most in contains:
                count = sum(self._is_valid(node, i) for i in items)
                if count < at_least or (at_most is not None and count > at_most):
                    return False
            return True

        return draw_array().filter(whole) if unique or contains else draw_array()

    def _objects(self, f: _Facts) -> _Strategy | _Empty:
        where = _pointer(f.pointer)
        values: dict[str, _Strategy] = {}
        forbidden: dict[str, str] = {}
        for key in f.declared:
            if not all(self._is_valid(names, key) for names in f.names):
                forbidden[key] = f"its name is rejected by propertyNames at {where}"
                continue
            built = self.strategy(f.value_conj(key))
            if isinstance(built, _Empty):
                forbidden[key] = built.reason
            else:
                values[key] = built
        required = _closure(f.required, f.dependent)
        for key in required:
            if key not in values:
                reason = forbidden.get(key, "it is not allowed")
                return _Empty(f"required property {key!r} at {where} is impossible: {reason}")
        closures = {
            key: [k for k in _closure([key], f.dependent) if k not in required]
            for key in f.declared
            if key not in required
        }
        optional = [key for key, needs in closures.items() if all(k in values for k in needs)]
        extras = self._extra_properties(f)
        fewest, most = f.min_props, math.inf if f.max_props is None else f.max_props
        if len(required) > most or fewest > most:
            return _Empty(f"the object at {where} cannot have {fewest} to {most} properties")
        if not extras and len(required) + len(optional) < fewest:
            return _Empty(f"the object at {where} cannot have {fewest} properties")

        @st.composite
        def draw_object(draw: st.DrawFn) -> dict[str, Any]:
            obj = {key: draw(values[key]) for key in required}

            def add(key: str, *, choose: bool) -> None:
                new = [k for k in closures[key] if k not in obj]
                if new and len(obj) + len(new) <= most and (not choose or draw(st.booleans())):
                    obj.update((k, draw(values[k])) for k in new)

            for key in optional:
                add(key, choose=True)
            for key in optional:  # minProperties not reached by chance: take keys in order
                if len(obj) < fewest:
                    add(key, choose=False)
            if extras and len(obj) < most:
                low = max(0, fewest - len(obj))
                count = draw(st.integers(low, int(min(most - len(obj), low + _MAX_EXTRA_KEYS))))
                for _ in range(count):
                    keys, value = draw(st.sampled_from(extras))
                    key = draw(keys)
                    if key not in obj:
                        obj[key] = draw(value)
            assume(len(obj) >= fewest)
            return obj

        return draw_object()

    def _extra_properties(self, f: _Facts) -> list[tuple[st.SearchStrategy[str], _Strategy]]:
        """(key strategy, value strategy) for undeclared keys: per pattern, then additional."""
        declared = set(f.declared) | set(f.dependent)
        patterns = f.patterns_of_keys
        names = f.names

        def fresh(key: str, pattern: str | None = None) -> bool:
            return (
                key not in declared
                and all(p == pattern or not re.search(p, key) for p in patterns)
                and all(self._is_valid(n, key) for n in names)
            )

        def matching(pattern: str) -> st.SearchStrategy[str]:
            return st.from_regex(pattern).filter(lambda key: fresh(key, pattern))

        extras = []
        for pattern in patterns:
            value = self.strategy(f.pattern_conj(pattern))
            if not isinstance(value, _Empty):
                extras.append((matching(pattern), value))
        value = self.strategy(f.additional_conj)
        key_source = (
            self.strategy((*names, _STRING_NODE))
            if names
            else self._with_hints(st.text(max_size=12), "string", lambda _: True)
        )
        if not isinstance(value, _Empty) and not isinstance(key_source, _Empty):
            extras.append((key_source.filter(fresh), value))
        return extras

    # --- simplest values

    def simplest(self, conj: tuple[_Node, ...], *, fill: bool = False) -> Any:
        """The simplest valid value at a location (all optional properties too if `fill`)."""
        alts, entered = self.alternatives(conj)
        key = (tuple(n.pointer for n in conj), tuple(self._stack), fill)
        if key not in self._simplest:
            with self._entering(entered):
                found = (self._simplest_of(f, fill) for f in alts if isinstance(f, _Facts))
                self._simplest[key] = next((v for v in found if v is not _MISSING), _MISSING)
        return self._simplest[key]

    def _simplest_of(self, f: _Facts, fill: bool) -> Any:
        if f.enum is not None:
            return f.enum[0]
        for kind in _KINDS:
            if kind in f.kinds:
                value = self._simplest_kind(f, kind, fill)
                if value is not _MISSING and self._accepts(f, value):
                    return value
        return _MISSING

    def _simplest_kind(self, f: _Facts, kind: str, fill: bool) -> Any:
        if kind in ("null", "boolean"):
            return None if kind == "null" else False
        if kind in ("integer", "number"):
            return _closest(f, kind, 0)
        if kind == "string":
            return _simplest_string(f)
        if kind == "array":
            size = max(f.min_items, f.contains[0][1] if f.contains else 0)
            if fill and size == 0 and f.max_items != 0:  # a filled array shows an item
                items = self._simplest_items(f, 1, fill)
                if items is not _MISSING:
                    return items
            return self._simplest_items(f, size, fill)
        return self._simplest_object(f, {}, fill)

    def _simplest_items(self, f: _Facts, size: int, fill: bool) -> Any:
        """`size` simplest items, the first ones matching `contains` as far as it asks."""
        node, at_least, _ = f.contains[0] if f.contains else (None, 0, None)
        conjs = [f.index_conj(i) for i in range(size)]
        conjs = [
            (*c, node) if node is not None and i < at_least else c for i, c in enumerate(conjs)
        ]
        items = [self.simplest(conj, fill=fill) for conj in conjs]
        if _MISSING in items:
            return _MISSING
        if not f.unique:
            return items
        distinct = list({_canonical(item): item for item in items}.values())
        return distinct + self._fillers(f, distinct, size - len(distinct))

    def _simplest_object(self, f: _Facts, start: dict[str, Any], fill: bool) -> Any:
        """`start` plus the required properties, plus optional ones if `fill` or minProperties."""
        obj = dict(start)
        for key in _closure(f.required, f.dependent):
            if key not in obj:
                obj[key] = self.simplest(f.value_conj(key), fill=fill)
                if obj[key] is _MISSING:
                    return _MISSING
        for key in f.declared if fill else ():
            if key not in obj:
                self._add_optional(f, obj, key, fill)
        return self._grow(f, obj, f.min_props, fill)

    def _grow(self, f: _Facts, obj: dict[str, Any], size: int, fill: bool) -> dict[str, Any]:
        """`obj` with optional, then undeclared, properties added until it has `size` of them."""
        for key in [*f.declared, *self._spare_names(f, size)]:
            if len(obj) >= size:
                break
            if key not in obj:
                self._add_optional(f, obj, key, fill)
        return obj

    def _spare_names(self, f: _Facts, count: int) -> list[str]:
        """Undeclared property names propertyNames allows: pattern matches first, then x, xx..."""
        spare = []
        for pattern in f.patterns_of_keys:  # keys that match a pattern, longer and longer
            names = (_pattern_text(pattern, i + 1, 100) for i in range(count))
            spare += [name + "x" * i for i, name in enumerate(names) if name is not None]
        spare += ["x" * (i + 1) for i in range(count)]
        return [
            name
            for name in dict.fromkeys(spare)
            if name not in f.declared and all(self._is_valid(n, name) for n in f.names)
        ]

    def _add_optional(self, f: _Facts, obj: dict[str, Any], key: str, fill: bool) -> bool:
        """Add `key` and what it requires to `obj` with simplest values; False if impossible."""
        new = {k: self.simplest(f.value_conj(k), fill=fill) for k in _closure([key], f.dependent)}
        if _MISSING in new.values():
            return False
        obj.update({k: v for k, v in new.items() if k not in obj})
        return True

    # --- boundary examples

    def _live(self, conj: tuple[_Node, ...]) -> tuple[list[_Facts], tuple[str, ...]]:
        alts, entered = self.alternatives(conj)
        return [f for f in alts if isinstance(f, _Facts)], entered

    def variations(self, conj: tuple[_Node, ...], value: Any, path: _Path) -> list[tuple[Any, str]]:
        """Valid-looking replacements for `value`, each changing one thing, with labels."""
        alts, entered = self._live(conj)
        if not alts:
            return []
        current = self._matching(alts, value)
        where = _where(path)
        # Values the schema itself offers as illustrations: they often reach the narrow part of
        # a domain (an existing file, a known id) that generated values never hit.
        out: list[tuple[Any, str]] = [
            (example, f"{where} = {_short(example)} (from {keyword})")
            for node in conj
            for example, keyword in _offered(node.schema)
        ]
        with self._entering(entered):
            for f in alts:
                if f.enum is not None:
                    out += [(v, f"{where} = {_short(v)} ({f.enum_keyword} value)") for v in f.enum]
                    continue
                for kind in (k for k in _KINDS if k in f.kinds):
                    if kind not in ("array", "object"):
                        out += _scalar_variations(f, kind, where)
                        continue
                    if not f.constrained:  # any JSON goes here: nothing nested to vary
                        continue
                    base = value
                    if f is not current or _kind_of(value) != kind:  # another shape: its simplest
                        base = self._simplest_kind(f, kind, fill=False)
                        if base is _MISSING:
                            continue
                        out.append((base, f"{where} as {kind}"))
                    if kind == "array":
                        out += self._array_variations(f, base, path)
                    else:
                        out += self._object_variations(alts, f, base, path)
        return out

    def _array_variations(self, f: _Facts, value: list[Any], path: _Path) -> list[tuple[Any, str]]:
        where = _where(path)
        out: list[tuple[Any, str]] = []
        sizes = [(0, "empty"), (1, "one item"), (f.min_items, "minItems")]
        if f.max_items is not None and f.max_items <= 100:
            sizes.append((f.max_items, "maxItems"))
        for size, what in sizes:
            items = self._simplest_items(f, size, fill=False)
            if items is not _MISSING:
                out.append((items, f"{where}: {size} item{'' if size == 1 else 's'} ({what})"))
        base = value or self._simplest_items(f, 1, fill=False)
        if base is _MISSING:
            return out
        for index in range(min(len(base), f.prefix_len + 1)):  # each prefix item, one more
            for item, label in self.variations(f.index_conj(index), base[index], (*path, index)):
                out.append(([*base[:index], item, *base[index + 1 :]], label))
        return out

    def _object_variations(
        self, alts: list[_Facts], f: _Facts, obj: dict[str, Any], path: _Path
    ) -> list[tuple[Any, str]]:
        """Property by property of `f`, what `f` or another object alternative allows there."""
        shapes = [f, *(a for a in alts if a is not f and "object" in a.kinds and a.enum is None)]
        out: list[tuple[Any, str]] = []
        for key in f.declared:
            base = dict(obj)
            if key not in base:
                if not self._add_optional(f, base, key, fill=False):
                    continue
                out.append((base, f"{_where((*path, key))} present"))
            conjs = {tuple(n.pointer for n in c): c for c in (s.value_conj(key) for s in shapes)}
            for conj in conjs.values():
                for value, label in self.variations(conj, base[key], (*path, key)):
                    out.append(({**base, key: value}, label))
        for key in self._spare_names(f, 1)[:1]:  # one undeclared property, where allowed
            base, conj = dict(obj), f.value_conj(key)
            if key not in base and self._add_optional(f, base, key, fill=False):
                out.append((base, f"{_where(path)} with an undeclared property {key!r}"))
                for value, label in self.variations(conj, base[key], (*path, key)) if conj else ():
                    out.append(({**base, key: value}, label))
        full = self._simplest_object(f, obj, fill=True)
        if full is not _MISSING:
            out.append((full, f"all optional properties of {_where(path)} present"))
        return out

    @cached_property
    def boundaries(self) -> list[Example]:
        baseline = self.simplest((self.root,))
        if baseline is _MISSING:
            return []
        what = "required properties only" if isinstance(baseline, dict) else "simplest value"
        candidates = [(baseline, f"baseline: {what}"), *self.variations((self.root,), baseline, ())]
        examples: dict[str, Example] = {}
        for value, label in candidates:
            text = _canonical(value)
            if text not in examples and self.validator.is_valid(value):
                offered = label.endswith(_OFFERED_LABELS)
                examples[text] = Example(value, label, "schema-example" if offered else "boundary")
        return list(examples.values())

    # --- hints

    @contextmanager
    def _hinting(self, hints: Hints) -> Iterator[None]:
        """While inside, the strategies built mix in `hints`."""
        self._hints = hints
        try:
            yield
        finally:
            self._hints = None

    def hinted(self, hints: Hints) -> tuple[_Strategy, st.SearchStrategy[Example]]:
        """Valid values with `hints` mixed in, and the same values as Examples with a source."""
        found = self._hinted.get(hints)
        if found is None:
            plain = self.strategy((self.root,))
            with self._hinting(hints):
                mixed = self.strategy((self.root,))
            # hints change values, never alternatives
            assert not isinstance(plain, _Empty) and not isinstance(mixed, _Empty)
            drawn = self._drawn

            def kept(value: Any) -> bool:
                if self._kept(value):
                    return True
                drawn.clear()  # the filter draws again: what this attempt took does not count
                return False

            both = (self.valid, mixed.filter(kept))

            @st.composite
            def draw_example(draw: st.DrawFn) -> Example:
                drawn.clear()
                value = draw(both[draw(_HINTED_INPUT) == _HINTED_INPUTS - 1])
                return Example(value, "", self.source())

            examples = draw_example()
            valid = examples.map(attrgetter("value"))
            found = self._hinted[hints] = (valid, examples)
        return found

    def source(self) -> str:
        """The source of the value drawn last (see `SOURCES`)."""
        return next((source for source in _HINT_SOURCES if source in self._drawn), "generated")

    @cached_property
    def _named(self) -> tuple[Any, ...]:
        """The strings and numbers the schema names: examples, default, const, enum values."""
        found = []
        for sub, _ in _subschemas(self.root.schema):
            if isinstance(sub, dict):
                found += [value for value, _ in _offered(sub)]
                found += sub["enum"] if isinstance(sub.get("enum"), list) else []
                found += [sub["const"]] if "const" in sub else []
        return tuple(value for value in found if _kind_of(value) in ("string", "integer", "number"))

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

        walk(self.root.schema)
        return frozenset(found)

    def _usable(self, hints: Hints) -> list[tuple[str, Any]]:
        """The hints and the values the schema names, without the words of the schema: a
        tool that declares its schema in its source has them among its literals, and the
        schema already says where they go."""
        words = self._words
        given = [(source, value) for source, value in hints.values if value not in words]
        return given + [("schema-example", value) for value in self._named]

    def _leaf_hints(self, kind: str) -> list[tuple[str, tuple[Any, ...]]]:
        """Per source, the hints a leaf of `kind` may take: numbers with their neighbours."""
        assert self._hints is not None
        key = (self._hints, kind)
        if key not in self._hint_pools:
            found: dict[str, dict[str, Any]] = {}
            for source, hint in self._usable(self._hints):
                for value in _near(hint) if kind != "string" else (hint,):
                    if _kind_of(value) == kind:
                        found.setdefault(source, {})[_canonical(value)] = value
            self._hint_pools[key] = [
                (source, tuple(found[source].values()))
                for source in _HINT_SOURCES
                if source in found
            ]
        return self._hint_pools[key]

    def _with_hints(
        self, built: _Strategy | _Empty, kind: str, accepts: _Check
    ) -> _Strategy | _Empty:
        """`built`, mixed with the hints of `kind` (see _mixed); text is also spliced in."""
        if self._hints is None or isinstance(built, _Empty):
            return built
        pools = self._leaf_hints(kind)
        return self._mixed(built, pools, accepts, splice=kind == "string") if pools else built

    def _mixed(
        self,
        built: _Strategy,
        pools: list[tuple[str, tuple[Any, ...]]],
        accepts: _Check,
        *,
        splice: bool = False,
    ) -> _Strategy:
        """`built`, or one time in two a value from `pools` (a source, then one of its values),
        with `splice` maybe inserted into drawn text; where `accepts` allows it. Only inputs
        that take hints are drawn from such strategies (see _HINTED_INPUTS)."""
        drawn = self._drawn
        # Built once: making strategies while drawing costs more than drawing from them.
        sources = st.sampled_from([(source, st.sampled_from(values)) for source, values in pools])

        @st.composite
        def draw_mixed(draw: st.DrawFn) -> Any:
            if not draw(st.booleans()):
                return draw(built)
            source, values = draw(sources)
            value = draw(values)
            if splice and draw(st.booleans()):
                around = draw(built)
                at = draw(st.integers(0, len(around)))
                value = around[:at] + value + around[at:]
            if not accepts(value):
                return draw(built)
            drawn.add(source)
            return value

        return draw_mixed()

    def placed(self, hints: Hints, limit: int) -> list[Example]:
        """Up to `limit` valid inputs, each a base input with one hint put at one place.

        The places are the scalar values, not fixed by enum or const, of the simplest input and
        of the one with every optional property; each is changed in the simplest input that has
        it (an optional property is added alone where the schema allows). Each hint goes to
        every place that allows it before the next hint is tried: the hints in `SOURCES` order,
        the schema's named values last, then the neighbours of each number (one apart, or the
        next floats).
        """
        root = (self.root,)
        baseline = self.simplest(root)
        places: dict[_Path, tuple[Any, list[_Facts]]] = {}
        for base in (baseline, self.simplest(root, fill=True)):
            for path, alts in self._scalars(root, base, ()) if base is not _MISSING else ():
                if path not in places:
                    places[path] = (self._holding(baseline, base, path), alts)
        ordered = sorted(self._usable(hints), key=lambda hint: _HINT_SOURCES.index(hint[0]))
        values = [(source, (_near(value) or (value,))[0], "") for source, value in ordered]
        values += [
            (source, near, f"next to {_short(value)}, ")
            for source, value in ordered
            for near in _near(value)[1:]
        ]
        seen = {_canonical(example.value) for example in self.boundaries}
        out: list[Example] = []
        for source, value, near in values:
            for path, (base, alts) in places.items():
                if len(out) >= limit:
                    return out
                if not any(self._accepts(f, value) for f in alts):
                    continue
                candidate = _replace(base, path, value)
                text = _canonical(candidate)
                if text in seen or not self.validator.is_valid(candidate):
                    continue
                seen.add(text)
                label = f"{_where(path)} = {_short(value)} ({near}{_HINT_NOTES[source]})"
                out.append(Example(candidate, label, source))
        return out

    def _holding(self, baseline: Any, base: Any, path: _Path) -> Any:
        """The baseline with the property of `base` that holds `path` added, when that is
        valid: one change at a time, as the boundary inputs make them; else `base`."""
        if base is baseline or not isinstance(baseline, dict) or not path:
            return base
        smaller = {**baseline, path[0]: base[path[0]]}
        return smaller if self.validator.is_valid(smaller) else base

    def _scalars(
        self, conj: tuple[_Node, ...], value: Any, path: _Path
    ) -> Iterator[tuple[_Path, list[_Facts]]]:
        """The places of `value`'s scalars with the alternatives there, where not enum/const."""
        alts, _ = self._live(conj)
        if not alts:
            return
        f = self._matching(alts, value)
        if isinstance(value, dict) and "object" in f.kinds:
            for key, item in value.items():
                yield from self._scalars(f.value_conj(key), item, (*path, key))
        elif isinstance(value, list) and "array" in f.kinds:
            for index, item in enumerate(value):
                yield from self._scalars(f.index_conj(index), item, (*path, index))
        elif not isinstance(value, dict | list):
            free = [a for a in alts if a.enum is None]
            if free:
                yield path, free

    # --- mutations

    def sites(self, conj: tuple[_Node, ...], value: Any, path: _Path) -> Iterator[_Site]:
        """Every single-mistake mutation of the location at `path`, and of its contents."""
        alts, _ = self._live(conj)
        if not alts:
            return
        f = self._matching(alts, value)
        allowed = frozenset().union(*(a.value_kinds for a in alts))
        where = f"'{_where(path)}'" if path else "the input"
        if value is not None and "null" not in allowed:
            yield _fixed("null-not-allowed", path, None, f"{where} set to null")
        wrong = [kind for kind in _KINDS if kind not in allowed and kind != "null"]
        if wrong:
            expected = " or ".join(_KIND_NAMES[k] for k in _KINDS if k in allowed)
            item = bool(path) and isinstance(path[-1], int)

            def retype(pick: _Pick) -> tuple[Any, str]:
                kind = pick(wrong)
                new = _substitute(kind, value)
                return (
                    new,
                    f"{where} set to {_short(new)}, {_KIND_NAMES[kind]}; expected {expected}",
                )

            yield _Site("item-wrong-type" if item else "wrong-type", path, path, retype)
        if f.enum is not None:
            yield from _enum_sites(f, path, where)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield from _number_sites(f, value, path, where)
        elif isinstance(value, str):
            yield from _string_sites(f, value, path, where)
        elif isinstance(value, list) and "array" in f.kinds:
            yield from self._array_sites(f, value, path, where)
        elif isinstance(value, dict) and "object" in f.kinds:
            yield from self._object_sites(f, value, path, where)

    def _fillers(self, f: _Facts, items: list[Any], count: int) -> list[Any]:
        """Up to `count` valid items to append, distinct from `items` if uniqueItems asks."""
        conj = f.index_conj(len(items))
        key = tuple(n.pointer for n in conj)
        if key not in self._pools:  # the item's boundary values and a few plain values, if valid
            start = self.simplest(conj)
            found = [value for i in range(20) for value in (i, f"item {i}")]
            if start is not _MISSING:
                found[:0] = [start, *(v for v, _ in self.variations(conj, start, ()))]
            valid = (v for v in found if all(self._is_valid(n, v) for n in conj))
            self._pools[key] = list({_canonical(v): v for v in valid}.values())
        pool = self._pools[key]
        if not f.unique:
            return pool[:1] * count
        taken = {_canonical(item) for item in items}
        return [v for v in pool if _canonical(v) not in taken][:count]

    def _array_sites(self, f: _Facts, value: list[Any], path: _Path, where: str) -> Iterator[_Site]:
        size = len(value)
        if 0 < f.min_items <= size:
            new = value[: f.min_items - 1]
            yield _fixed(
                "too-few-items",
                path,
                new,
                f"{where} cut to {len(new)} items (minItems {f.min_items})",
            )
        if f.max_items is not None and f.max_items < 1000:
            grown = value + self._fillers(f, value, f.max_items + 1 - size)
            detail = f"{where} grown to {len(grown)} items (maxItems {f.max_items})"
            if len(grown) > f.max_items:
                yield _fixed("too-many-items", path, grown, detail)
        if f.unique and value and (f.max_items is None or size < f.max_items):
            yield _fixed(
                "duplicate-items", path, [*value, value[0]], f"{where} repeats its first item"
            )
        for index, item in enumerate(value):
            yield from self.sites(f.index_conj(index), item, (*path, index))

    def _object_sites(
        self, f: _Facts, obj: dict[str, Any], path: _Path, where: str
    ) -> Iterator[_Site]:
        required = _closure(f.required, f.dependent)

        def without(*keys: str) -> dict[str, Any]:
            return {k: v for k, v in obj.items() if k not in keys}

        for key in required:
            if key in obj:
                detail = f"required property {key!r} removed from {where}"
                yield _fixed("missing-required", path, without(key), detail, key)
        for name, needs in f.dependent.items():
            for key in needs:
                if name in obj and key in obj and key not in required:
                    detail = f"{key!r} removed from {where}, though {name!r} requires it"
                    yield _fixed("missing-dependent", path, without(key), detail, key)
        if f.forbids_additional:
            name = next(n for n in (f"unexpected_{i}" for i in range(len(obj) + 1)) if n not in obj)
            detail = f"unknown property {name!r} added to {where}"
            yield _fixed("extra-property", path, {**obj, name: "x"}, detail, name)
        optional = [k for k in obj if k not in required]
        if 0 < f.min_props <= len(obj) and len(obj) - len(optional) < f.min_props:
            less = without(*optional[len(optional) - (len(obj) - f.min_props + 1) :])
            detail = f"{where} cut to {len(less)} properties (minProperties {f.min_props})"
            yield _fixed("too-few-properties", path, less, detail)
        if f.max_props is not None and len(obj) <= f.max_props < 1000:
            more = self._grow(f, dict(obj), f.max_props + 1, fill=False)
            if len(more) > f.max_props:
                detail = f"{where} grown to {len(more)} properties (maxProperties {f.max_props})"
                yield _fixed("too-many-properties", path, more, detail)
        for key, item in obj.items():
            yield from self.sites(f.value_conj(key), item, (*path, key))

    def confirm(self, value: Any, path: _Path, kind: str) -> bool:
        """Whether `value` fails on `path` only, for one of the keywords `kind` stands for."""
        errors = list(self.validator.iter_errors(value))
        expected = _KIND_KEYWORDS[kind]

        def on_path(error: Any) -> bool:
            return tuple(error.absolute_path) == path[: len(error.absolute_path)]

        def reports(error: Any) -> bool:
            inner = error.context or ()
            return error.validator in expected or any(reports(e) for e in inner if on_path(e))

        return (
            bool(errors)
            and all(on_path(e) and e.validator in expected | _WRAPPER_KEYWORDS for e in errors)
            and any(reports(e) for e in errors)
        )

    def mutate(
        self, base: Any, site: _Site, pick: _Pick, source: str = "boundary"
    ) -> Mutation | None:
        new, detail = site.make(pick)
        value = _replace(base, site.at, new)
        return (
            Mutation(value, site.kind, site.path, detail, source)
            if self.confirm(value, site.path, site.kind)
            else None
        )

    @cached_property
    def mutations(self) -> list[Mutation]:
        root = (self.root,)
        found = [self.simplest(root), self.simplest(root, fill=True)]
        bases = {_canonical(v): v for v in found if v is not _MISSING}
        # Every mistake at every place, once: grouped by kind, in the order places are met.
        taken: dict[str, list[Mutation]] = {}
        seen: set[str] = set()
        for base in bases.values():
            for site in self.sites(root, base, ()):
                chosen = taken.setdefault(site.kind, [])
                if any(m.path == site.path for m in chosen):
                    continue
                mutation = self.mutate(base, site, _first)
                if mutation is not None and _canonical(mutation.value) not in seen:
                    seen.add(_canonical(mutation.value))
                    chosen.append(mutation)
        return [m for chosen in taken.values() for m in chosen]

    def invalid(self, hints: Hints | None) -> st.SearchStrategy[Mutation]:
        """Generated mutations of valid values (with `hints` mixed in when given)."""
        if hints in self._invalid:
            return self._invalid[hints]
        examples = self.mutations
        if not examples:
            return st.nothing()
        root = (self.root,)
        valid = self.valid if hints is None else self.hinted(hints)[0]

        @st.composite
        def draw_mutation(draw: st.DrawFn) -> Mutation:
            base = draw(valid)
            source = "generated" if hints is None else self.source()
            sites: dict[str, list[_Site]] = {}
            for site in self.sites(root, base, ()):
                sites.setdefault(site.kind, []).append(site)
            if not sites:
                return draw(st.sampled_from(examples))
            # the kind first, so that mistakes found at every location do not crowd out the rest
            kinds = sorted(sites, key=list(_KIND_KEYWORDS).index)
            site = draw(st.sampled_from(sites[draw(st.sampled_from(kinds))]))
            mutation = self.mutate(
                base, site, lambda options: draw(st.sampled_from(options)), source
            )
            assume(mutation is not None)
            assert mutation is not None
            return mutation

        self._invalid[hints] = draw_mutation()
        return self._invalid[hints]


@dataclass(frozen=True)
class _Site:
    """A possible mutation: what it breaks, where, and how to make the replacement value."""

    kind: str
    path: _Path  # the location reported (a removed or added key included)
    at: _Path  # the location whose value is replaced
    make: Callable[[_Pick], tuple[Any, str]]


def _fixed(kind: str, at: _Path, new: Any, detail: str, key: str | None = None) -> _Site:
    """A mutation with one possible value; `key` names the property it removes or adds."""
    return _Site(kind, at if key is None else (*at, key), at, lambda _: (new, detail))


def _first(options: Sequence[Any]) -> Any:
    return options[0]


def _one_of(items: Sequence[_Strategy | _Empty]) -> _Strategy | _Empty:
    live = [item for item in items if not isinstance(item, _Empty)]
    if live:
        return live[0] if len(live) == 1 else st.one_of(live)
    return next(iter(items), _Empty("nothing is allowed"))


def _unique_by(unique: bool) -> Callable[[Any], str] | None:
    return _canonical if unique else None


# ---------------------------------------------------------------------------------------------
# Leaves


def _number(value: Fraction, kind: str) -> int | float:
    return int(value) if kind == "integer" else float(value)


def _grid(f: _Facts, step: Fraction) -> tuple[int | None, int | None]:
    """The range of k for which k * step lies within the bounds."""
    low = high = None
    if f.lower is not None:
        low = math.ceil(Fraction(f.lower.value) / step)
        low += f.lower.exclusive and low * step == Fraction(f.lower.value)
    if f.upper is not None:
        high = math.floor(Fraction(f.upper.value) / step)
        high -= f.upper.exclusive and high * step == Fraction(f.upper.value)
    return low, high


def _step(f: _Facts, kind: str) -> Fraction | None:
    """The spacing of valid values, or None for any float."""
    steps = [_fraction(m) for m in f.multiples]
    if kind == "integer":
        steps.append(Fraction(1))
    return _lcm(steps) if steps else None


def _float_multiples_ok(f: _Facts) -> _Check | None:
    # jsonschema divides in floating point for a float multipleOf, so some exact multiples of
    # 0.1 fail there: filter with its own verdict.
    floats = [m for m in f.multiples if isinstance(m, float)]
    if not floats:
        return None
    validator = Draft202012Validator({"allOf": [{"multipleOf": m} for m in floats]})
    return validator.is_valid


def _crossed(low: _Bound | None, high: _Bound | None) -> bool:
    """Whether no number lies between the bounds."""
    if low is None or high is None:
        return False
    return low.value > high.value or (low.value == high.value and (low.exclusive or high.exclusive))


def _numbers(f: _Facts, kind: str) -> _Strategy | _Empty:
    where = _pointer(f.pointer)
    step = _step(f, kind)
    if step is None:
        low, high = f.lower, f.upper
        if _crossed(low, high):
            return _Empty(f"no number fits the bounds at {where}")
        return st.floats(
            min_value=None if low is None else low.value,
            max_value=None if high is None else high.value,
            exclude_min=low is not None and low.exclusive,
            exclude_max=high is not None and high.exclusive,
            allow_nan=False,
            allow_infinity=False,
        ).map(lambda x: x + 0.0)  # -0.0 becomes 0.0
    k_low, k_high = _grid(f, step)
    if k_low is not None and k_high is not None and k_low > k_high:
        return _Empty(f"no {kind} fits the bounds and multipleOf at {where}")
    built = st.integers(k_low, k_high).map(lambda k: _number(k * step, kind))
    check = _float_multiples_ok(f)
    return built if check is None else built.filter(check)


def _closest(f: _Facts, kind: str, target: int | float) -> Any:
    """The valid number of `kind` nearest to `target`, or _MISSING."""
    step = _step(f, kind)
    if step is None:
        value = float(target)
        if f.lower is not None and value <= f.lower.value:
            bound = float(f.lower.value)
            value = math.nextafter(bound, math.inf) if f.lower.exclusive else bound
        if f.upper is not None and value >= f.upper.value:
            bound = float(f.upper.value)
            value = math.nextafter(bound, -math.inf) if f.upper.exclusive else bound
        return value
    k_low, k_high = _grid(f, step)
    if k_low is not None and k_high is not None and k_low > k_high:
        return _MISSING
    k = round(Fraction(target) / step)
    k = max(k, k_low) if k_low is not None else k
    k = min(k, k_high) if k_high is not None else k
    return _number(k * step, kind)


def _scalar_variations(f: _Facts, kind: str, where: str) -> list[tuple[Any, str]]:
    if kind == "null":
        return [(None, f"{where} = null")]
    if kind == "boolean":
        return [(False, f"{where} = false"), (True, f"{where} = true")]
    if kind == "string":
        return _string_variations(f, where)
    out = []
    for bound, keyword in ((f.lower, "minimum"), (f.upper, "maximum")):
        if bound is None or (value := _closest(f, kind, bound.value)) is _MISSING:
            continue
        name = f"exclusive{keyword.capitalize()}" if bound.exclusive else keyword
        what = f"{name} {bound.value}"
        what = what if value == bound.value else f"nearest valid to {what}"
        out.append((value, f"{where} = {_short(value)} ({what})"))
    for target, what in ((0, "zero"), (-1, "minus one"), (_LARGE_NEGATIVE, "large negative")):
        if _closest(f, kind, target) == target:
            out.append((target, f"{where} = {target} ({what})"))
    return out


def _simplest_string(f: _Facts) -> Any:
    if f.formats:
        return _FORMAT_EXAMPLES[f.formats[0]]
    return _text(f, f.min_length, math.inf if f.max_length is None else f.max_length)


def _text(f: _Facts, shortest: int, longest: int | float) -> Any:
    """Simple text with a length in [shortest, longest], matching the first pattern if any."""
    if not f.patterns:
        return "a" * shortest
    text = _pattern_text(f.patterns[0], shortest, int(min(longest, _LONG_LENGTH)))
    return _MISSING if text is None else text


def _string_variations(f: _Facts, where: str) -> list[tuple[Any, str]]:
    simplest = _simplest_string(f)
    if f.formats:  # format fields get format-conforming text only
        return [(simplest, f"{where} = {_short(simplest)} ({f.formats[0]})")]
    out = [] if simplest is _MISSING else [(simplest, f"{where} = {_short(simplest)}")]
    longest = _LONG_LENGTH if f.max_length is None else min(f.max_length, _LONG_LENGTH)
    out += [
        ("", f"{where} = '' (empty)"),
        (_text(f, f.min_length, f.min_length), f"{where}: {f.min_length} characters (minLength)"),
        (_NON_ASCII, f"{where}: non-ASCII text"),
        ("x" * longest, f"{where}: {longest} characters (long)"),
    ]
    if f.max_length is not None and f.max_length <= _LONG_LENGTH:
        text = _text(f, f.max_length, f.max_length)
        out.append((text, f"{where}: {f.max_length} characters (maxLength)"))
    if f.patterns:  # every repetition taken as often as it may be
        text = _regex_text(_sre.parse(f.patterns[0]), {}, _PATTERN_LENGTHS)
        out.append((text, f"{where}: {len(text)} characters (long match of the pattern)"))
    return [(text, label) for text, label in out if text is not _MISSING]


def _strings(f: _Facts) -> _Strategy | _Empty:
    if f.max_length is not None and f.min_length > f.max_length:
        return _Empty(f"minLength {f.min_length} exceeds maxLength at {_pointer(f.pointer)}")
    leaf: dict[str, Any] = {"type": "string", "minLength": f.min_length}
    if f.max_length is not None:
        leaf["maxLength"] = f.max_length
    if f.patterns:
        leaf["pattern"] = f.patterns[0]
    if f.formats:
        leaf["format"] = f.formats[0]
    # Imported on first use: importing hypothesis-jsonschema reads Hypothesis' Unicode tables,
    # which Hypothesis reports as slow work when it happens while pytest configures plugins.
    from hypothesis_jsonschema import from_schema

    built: _Strategy = from_schema(leaf, custom_formats=_CUSTOM_FORMATS)
    others = [re.compile(p) for p in f.patterns[1:]]
    formats = f.formats[1:]
    if not others and not formats:
        return built
    return built.filter(
        lambda s: (
            all(p.search(s) for p in others)
            and all(_FORMAT_CHECKER.conforms(s, fmt) for fmt in formats)
        )
    )


# ---------------------------------------------------------------------------------------------
# Mutation leaves


def _substitute(kind: str, value: Any) -> Any:
    """A value of `kind` close to `value`, the way a model gets a type wrong."""
    if kind == "string":
        return json.dumps(value) if isinstance(value, int | float) else "x"
    if kind == "array":
        return [value]
    if kind == "object":
        return {"value": value}
    return {"integer": 1, "number": 1.5, "boolean": True}[kind]


def _outsiders(listed: Sequence[Any]) -> list[Any]:
    """Values of the listed values' kinds that may not be listed (the caller checks)."""
    numbers = [v for v in listed if _kind_of(v) in ("integer", "number")]
    out: list[Any] = [not v for v in listed if isinstance(v, bool)]
    out += [max(numbers) + 1] if numbers else []
    return out + [t for v in listed if isinstance(v, str) for t in (f"{v}_other", v.upper(), "")]


def _enum_sites(f: _Facts, path: _Path, where: str) -> Iterator[_Site]:
    assert f.enum is not None
    listed = {_canonical(v) for v in f.enum}
    outside = [v for v in _outsiders(f.enum) if _canonical(v) not in listed]
    if outside:
        kind = "const-mismatch" if f.enum_keyword == "const" else "not-in-enum"
        allowed = f"{f.enum_keyword} {_short(list(f.enum))}"

        def relist(pick: _Pick) -> tuple[Any, str]:
            new = pick(outside)
            return new, f"{where} set to {_short(new)}, not in {allowed}"

        yield _Site(kind, path, path, relist)


def _number_sites(f: _Facts, value: int | float, path: _Path, where: str) -> Iterator[_Site]:
    kind = "number" if "number" in f.kinds else "integer"
    step = _step(f, kind) or Fraction(1)
    for bound, side in ((f.lower, -1), (f.upper, 1)):
        if bound is None:
            continue
        # the nearest value past the bound that is still on the multipleOf grid
        edge = Fraction(bound.value)
        k = math.floor(edge / step) if side < 0 else math.ceil(edge / step)
        if not bound.exclusive and k * step == edge:
            k += side
        new = _number(k * step, kind)
        name = ("exclusiveM" if bound.exclusive else "m") + ("inimum" if side < 0 else "aximum")
        detail = (
            f"{where} set to {_short(new)}, {'below' if side < 0 else 'above'} {name} {bound.value}"
        )
        yield _fixed("below-minimum" if side < 0 else "above-maximum", path, new, detail)
    if f.multiples and not (kind == "integer" and step == 1):
        # halfway between two multiples; an integer field has an integer step >= 2 here
        new = value + 1 if kind == "integer" else float(value + step / 2)
        detail = f"{where} set to {_short(new)}, not a multiple of {_short(list(f.multiples))}"
        yield _fixed("not-multiple-of", path, new, detail)


def _string_sites(f: _Facts, value: str, path: _Path, where: str) -> Iterator[_Site]:
    if f.min_length > 0:
        new = value[: f.min_length - 1]
        detail = f"{where} cut to {len(new)} characters (minLength {f.min_length})"
        yield _fixed("too-short", path, new, detail)
    if f.max_length is not None and f.max_length < 100_000:
        new = (value + (value or "a") * (f.max_length + 1))[: f.max_length + 1]
        detail = f"{where} grown to {len(new)} characters (maxLength {f.max_length})"
        yield _fixed("too-long", path, new, detail)
    size = max(len(value), 1)
    options = [
        t for t in (c * size for c in "!a0 A") if not all(re.search(p, t) for p in f.patterns)
    ]
    if f.patterns and options:

        def mismatch(pick: _Pick) -> tuple[Any, str]:
            new = pick(options)
            return new, f"{where} set to {_short(new)}, not matching {f.patterns[0]!r}"

        yield _Site("pattern-mismatch", path, path, mismatch)


# ---------------------------------------------------------------------------------------------
# Public API


@lru_cache(maxsize=256)
def _document_from(text: str) -> _Document:
    return _Document(json.loads(text))


def _document(schema: Any) -> _Document:
    try:
        text = _canonical(schema)
    except (TypeError, ValueError) as err:
        raise InvalidSchemaError(f"the schema is not JSON: {err}") from None
    return _document_from(text)


def discarded_count(schema: Any) -> int:
    """How many generated values `valid_inputs(schema)` has thrown away as invalid so far."""
    return _document(schema).discarded


def valid_inputs(schema: Any, hints: Hints | None = None) -> _Strategy:
    """A strategy of JSON values valid against `schema` (JSON Schema 2020-12).

    With `hints`, one value in 4 takes about half its strings and numbers from them (or from the
    values the schema names) where the schema allows it; text may get one spliced in.
    Raises InvalidSchemaError, UnsupportedSchemaError or UnsatisfiableSchemaError at once.
    """
    document = _document(schema)
    return document.valid if hints is None else document.hinted(hints)[0]


def generated_inputs(schema: Any, hints: Hints) -> st.SearchStrategy[Example]:
    """`valid_inputs(schema, hints)`, each value an Example whose source says what it drew on."""
    return _document(schema).hinted(hints)[1]


def hinted_inputs(schema: Any, hints: Hints, limit: int) -> list[Example]:
    """Deterministic valid inputs that each put one hint in one place (see `_Document.placed`),
    at most `limit`, none of them a boundary input."""
    return _document(schema).placed(hints, limit)


def boundary_inputs(schema: Any) -> list[Example]:
    """Deterministic valid edge cases: a minimal baseline, then one change at a time.

    The baseline holds the required properties only, each with its simplest value; each further
    example changes one property (nested ones included): every enum value, bounds, lengths, the
    empty string or array, non-ASCII and long text, zero and negatives, null, optional properties
    present one by one and all at once. Every example has been validated.
    """
    return list(_document(schema).boundaries)


def invalid_examples(schema: Any) -> list[Mutation]:
    """Deterministic invalid inputs: each kind of mistake at each place once (the simplest
    input's places, then those of the input with every optional property), each confirmed
    invalid."""
    return list(_document(schema).mutations)


def invalid_inputs(schema: Any, hints: Hints | None = None) -> st.SearchStrategy[Mutation]:
    """A strategy of valid inputs broken in one known way; empty when every value is valid.

    With `hints`, the valid inputs are drawn as `valid_inputs(schema, hints)` draws them.
    """
    return _document(schema).invalid(hints)
