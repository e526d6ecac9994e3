"""Gemini's profiles: its function declarations as ``parametersJsonSchema`` (JSON Schema, with a
$ref standing alone), and as ``parameters`` (the OpenAPI subset of its Schema type), which older
SDKs and the Live API still send.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from axm_conformance._clients._rules import Breach, Rule, name_breach, root_object
from axm_conformance._clients._walk import nodes, place

__all__ = ["gemini", "gemini_parameters"]

_GEMINI_DECLARATION = (
    "https://ai.google.dev/api/caching#FunctionDeclaration (read 2026-11-28 through "
    "google-ai-generativelanguage 0.12.1 types/content.py, the same text)"
)
_GEMINI_SCHEMA = (
    "https://ai.google.dev/api/caching#Schema (read 2026-11-28 through "
    "google-ai-generativelanguage 0.12.1 types/content.py, Schema)"
)

GEMINI_NAME = Rule(
    "gemini-name",
    "a function name starts with a letter or _, then a-z, A-Z, 0-9, _, ., : or -, at most 64",
    f"{_GEMINI_DECLARATION}; the API's error 'Invalid function name. Must start with a letter "
    "or an underscore' (github.com/kaitranntt/ccs/issues/219)",
    "rename the tool: start it with a letter, replace other characters with _, keep it to 64",
)
GEMINI_ROOT = Rule(
    "gemini-root-object",
    "parametersJsonSchema describes an object whose properties are the parameters",
    _GEMINI_DECLARATION,
    "wrap the input in an object with one property",
)
GEMINI_REF_SIBLINGS = Rule(
    "gemini-ref-alone",
    "a subschema with $ref carries nothing else but description, default and $ keywords",
    "https://ai.google.dev/api/generate-content#v1beta.GenerationConfig (responseJsonSchema, "
    "read 2026-11-28); the API's error '$ref was set alongside unsupported fields' "
    "(github.com/anomalyco/opencode/issues/12295)",
    "move the other keywords into the referenced definition, or wrap the $ref in an allOf",
)
GEMINI_PARAMETERS_KEYWORDS = Rule(
    "gemini-parameters-keywords",
    "only the fields of Gemini's Schema: type, format, title, description, nullable, enum, "
    "items, minItems, maxItems, properties, required, minProperties, maxProperties, minimum, "
    "maximum, minLength, maxLength, pattern, example, anyOf, propertyOrdering, default",
    f"{_GEMINI_SCHEMA}; the API's error 'Unknown name ... Cannot find field' "
    "(github.com/zed-extensions/mcp-server-brave-search/issues/12)",
    "drop the keyword (inline a $ref, use a one-value enum for const, nullable for a null type)",
)
GEMINI_PARAMETERS_TYPES = Rule(
    "gemini-parameters-types",
    "type is one name, not a list; enum values are strings; an array says its items",
    f"{_GEMINI_SCHEMA}; the API's errors 'Proto field is not repeating' "
    "(github.com/voocel/litellm/issues/9) and 'items: missing field' "
    "(github.com/cline/cline/issues/7339)",
    'give one type (with "nullable": true for null), string enum values, and items',
)
_GEMINI_SCHEMA_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
    }
)
# Keywords a subschema with $ref may carry besides it.
_BESIDE_REF = ("description", "default")


def gemini(name: Any, schema: Any) -> Iterator[Breach]:
    yield from name_breach(GEMINI_NAME, r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}", name)
    yield from root_object(GEMINI_ROOT, schema, combinators=())
    for node in nodes(schema):
        if "$ref" not in node.schema:
            continue
        others = sorted(
            key
            for key in node.schema
            if key != "$ref" and key not in _BESIDE_REF and not key.startswith("$")
        )
        if others:
            yield Breach(GEMINI_REF_SIBLINGS, node.place, f"$ref beside {', '.join(others)}")


def gemini_parameters(name: Any, schema: Any) -> Iterator[Breach]:
    for node in nodes(schema):
        for key in node.schema:
            if key not in _GEMINI_SCHEMA_FIELDS:
                yield Breach(GEMINI_PARAMETERS_KEYWORDS, place(node.place, key), f"uses {key}")
        kind = node.schema.get("type")
        if isinstance(kind, list):
            yield Breach(GEMINI_PARAMETERS_TYPES, place(node.place, "type"), f"the types {kind}")
        enum = node.schema.get("enum")
        if isinstance(enum, list) and not all(isinstance(value, str) for value in enum):
            yield Breach(
                GEMINI_PARAMETERS_TYPES,
                place(node.place, "enum"),
                "enum values that are not strings",
            )
        if kind == "array" and "items" not in node.schema:
            yield Breach(GEMINI_PARAMETERS_TYPES, node.place, "an array without items")
