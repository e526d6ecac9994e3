"""The clients' profiles: what OpenAI, Anthropic, Gemini and MCP clients accept of a tool.

Each rule cites its source; conformance/clients.md lists them and says how they are kept
current. A profile judges the tool's name and its input schema as the client receives them. A
profile that is a mode the author opts into (a strict mode, a legacy schema dialect) is
``optional``: what it cannot take is a note unless the run names it (``--axm-clients``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from axm_conformance._clients._gemini import gemini, gemini_parameters
from axm_conformance._clients._rules import (
    Breach,
    Rule,
    closed_objects,
    enum_values,
    every_property_required,
    formats_outside,
    keywords,
    name_breach,
    nesting_and_size,
    pattern_features,
    refs,
    root_object,
)
from axm_conformance._clients._walk import nodes, place

__all__ = ["CLIENTS", "PROFILES", "Profile"]

_OPENAI_GUIDE = (
    "https://platform.openai.com/docs/guides/function-calling (stored copy, read 2026-11-28)"
)
_OPENAI_STRICT = (
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas "
    "(stored copy, read 2026-11-28)"
)
_PYDANTIC_AI_OPENAI = (
    "pydantic_ai/profiles/openai.py, OpenAIJsonSchemaTransformer (pydantic-ai-slim 2.68), "
    "where the OpenAI page is silent"
)
_ANTHROPIC_TOOLS = (
    "https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use "
    "(stored copy, read 2026-11-28)"
)
_ANTHROPIC_STRICT = (
    "https://docs.claude.com/en/docs/agents-and-tools/tool-use/strict-tool-use (stored copy of "
    "2026-07-13, read 2026-11-28)"
)
_MCP_TOOLS = "MCP specification 2025-11-25, server/tools, Tool names; schema.json Tool.inputSchema"


@dataclass(frozen=True)
class Profile:
    """What one client, in one mode, accepts of a tool: ``judge(name, schema)`` gives each
    breach. ``client`` is the family its check is named after (``portable-to-openai``);
    ``beyond`` the profile whose breaches this one adds to (a strict mode adds to its plain
    mode), ``loses`` what a tool this mode cannot take loses in the other."""

    id: str
    client: str
    title: str
    judge: Callable[[Any, Any], Iterator[Breach]]
    optional: bool = False
    beyond: str = ""
    loses: str = ""


def _rule(id: str, requires: str, source: str, fix: str) -> Rule:
    return Rule(id, requires, source, fix)


# OpenAI function calling.
OPENAI_NAME = _rule(
    "openai-name",
    "a function name is 1 to 64 of a-z, A-Z, 0-9, _ and -",
    "openai-python src/openai/types/shared_params/function_definition.py, "
    "FunctionDefinition.name; " + _OPENAI_GUIDE,
    "rename the tool: replace other characters with _ and keep it to 64 characters",
)
OPENAI_ROOT = _rule(
    "openai-root-object",
    "parameters is an object schema, with no oneOf, anyOf, allOf, enum, not or const at "
    "the top level",
    "the API's error 'schema must have type object and not have oneOf/anyOf/allOf/enum/"
    "const/not at the top level' (github.com/nspady/google-calendar-mcp/issues/39)",
    "wrap the input in an object with one property, or move the alternatives into a property",
)
OPENAI_PROPERTIES = _rule(
    "openai-root-properties",
    "the parameters object lists its properties (an empty properties for none)",
    "openai-agents src/agents/mcp/util.py: 'MCP spec doesn't require the inputSchema to have "
    "properties, but OpenAI spec does'; the API's error 'object schema missing properties'",
    'add "properties": {} to the input schema',
)
OPENAI_STRICT_CLOSED = _rule(
    "openai-strict-closed-objects",
    "additionalProperties: false on every object",
    _OPENAI_STRICT,
    'set "additionalProperties": false on the object',
)
OPENAI_STRICT_REQUIRED = _rule(
    "openai-strict-all-required",
    "every object lists its properties and requires all of them (an optional one as a "
    "union with null)",
    _OPENAI_STRICT,
    'require the property and give it "type": [..., "null"], the way strict mode says optional',
)
OPENAI_STRICT_ROOT = _rule(
    "openai-strict-root",
    "the root is an object, not an anyOf",
    _OPENAI_STRICT,
    "make the root an object schema",
)
OPENAI_STRICT_KEYWORDS = _rule(
    "openai-strict-keywords",
    "no allOf, not, dependentRequired, dependentSchemas, if, then, else (the page); no oneOf "
    "(the Agents SDK rewrites it as anyOf); no default, patternProperties, propertyNames, "
    "minProperties, maxProperties, uniqueItems, contains, minContains, maxContains, "
    "unevaluatedProperties, unevaluatedItems (Pydantic AI)",
    f"{_OPENAI_STRICT}; openai-agents src/agents/strict_schema.py; {_PYDANTIC_AI_OPENAI}",
    "drop the keyword, or say it in the description",
)
OPENAI_STRICT_FORMATS = _rule(
    "openai-strict-formats",
    "format is one of date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid",
    _OPENAI_STRICT,
    "drop the format, or use a pattern",
)
OPENAI_STRICT_PATTERN = _rule(
    "openai-strict-pattern",
    "a pattern uses no lookahead or lookbehind",
    _PYDANTIC_AI_OPENAI,
    "rewrite the pattern without lookaround",
)
OPENAI_STRICT_ITEMS = _rule(
    "openai-strict-typed-items",
    "an array says the type of its items",
    f"{_PYDANTIC_AI_OPENAI} (github.com/pydantic/pydantic-ai/issues/4425)",
    "give the array items a type",
)
OPENAI_STRICT_REFS = _rule(
    "openai-strict-refs",
    "a $ref is # or names a definition (#/$defs/NAME, #/definitions/NAME), and carries no "
    "keyword beside it but description, title, examples and $comment",
    f"{_PYDANTIC_AI_OPENAI}; openai-agents src/agents/strict_schema.py ('a $ref with "
    "incompatible sibling keyword(s)')",
    "move the referenced schema into $defs, with what the $ref carried, and refer to it there",
)
OPENAI_STRICT_SIZE = _rule(
    "openai-strict-size",
    "at most 10 levels of nested objects and 5000 object properties, 1000 enum values, "
    "120,000 characters of property names, definition names, enum and const values",
    _OPENAI_STRICT,
    "split the tool, or flatten the schema",
)

_OPENAI_STRICT_FORBIDDEN = (
    "allOf",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "oneOf",
    "default",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_OPENAI_FORMATS = (
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
)
_LOOKAROUND = {r"\(\?<?[=!]": "lookaround"}
# What a $ref may carry beside it in strict mode: annotations, and itself.
_BESIDE_OPENAI_REF = frozenset({"$ref", "description", "title", "examples", "$comment"})
# Keywords that say what type a subschema is: an array whose items have none is untyped.
_TYPE_BEARING = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const")


def _openai(name: Any, schema: Any) -> Iterator[Breach]:
    yield from name_breach(OPENAI_NAME, r"[a-zA-Z0-9_-]{1,64}", name)
    yield from root_object(OPENAI_ROOT, schema)
    if isinstance(schema, dict) and schema.get("type") == "object" and "properties" not in schema:
        yield Breach(OPENAI_PROPERTIES, "$", "an object that lists no properties")


def _openai_strict(name: Any, schema: Any) -> Iterator[Breach]:
    if isinstance(schema, dict) and "anyOf" in schema:
        yield Breach(OPENAI_STRICT_ROOT, place("$", "anyOf"), "anyOf at the root")
    yield from closed_objects(OPENAI_STRICT_CLOSED, schema)
    yield from every_property_required(OPENAI_STRICT_REQUIRED, schema)
    yield from keywords(OPENAI_STRICT_KEYWORDS, schema, _OPENAI_STRICT_FORBIDDEN)
    yield from formats_outside(OPENAI_STRICT_FORMATS, schema, _OPENAI_FORMATS)
    yield from pattern_features(OPENAI_STRICT_PATTERN, schema, _LOOKAROUND)
    for node in nodes(schema):
        items = node.schema.get("items")
        typed = isinstance(items, dict) and any(key in items for key in _TYPE_BEARING)
        if node.schema.get("type") == "array" and not typed:
            yield Breach(OPENAI_STRICT_ITEMS, node.place, "an array whose items have no type")
    yield from refs(OPENAI_STRICT_REFS, schema, r"#|#/(\$defs|definitions)/[^/]+")
    for node in nodes(schema):
        beside = sorted(set(node.schema) - _BESIDE_OPENAI_REF) if "$ref" in node.schema else ()
        if beside:
            yield Breach(OPENAI_STRICT_REFS, node.place, f"$ref beside {', '.join(beside)}")
    yield from _openai_sizes(schema)


def _openai_sizes(schema: Any) -> Iterator[Breach]:
    if not isinstance(schema, dict):
        return
    parts = [{k: v for k, v in schema.items() if k not in ("$defs", "definitions")}]
    for key in ("$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            parts += list(schema[key].values())
    for part in parts:
        yield from nesting_and_size(OPENAI_STRICT_SIZE, part, depth=10, properties=5000)
    enums = enum_values(schema)
    count = sum(len(values) for _, values in enums)
    if count > 1000:
        yield Breach(OPENAI_STRICT_SIZE, "$", f"{count} enum values in all")
    names = [name for node in nodes(schema) for name in node.schema.get("properties") or {}]
    names += [name for key in ("$defs", "definitions") for name in schema.get(key) or {}]
    values = [value for _, found in enums for value in found]
    values += [node.schema["const"] for node in nodes(schema) if "const" in node.schema]
    length = sum(
        len(text if isinstance(text, str) else json.dumps(text)) for text in names + values
    )
    if length > 120_000:
        yield Breach(OPENAI_STRICT_SIZE, "$", f"{length} characters of names and values")


# Anthropic tool use.
ANTHROPIC_NAME = _rule(
    "anthropic-name",
    "a tool name matches ^[a-zA-Z0-9_-]{1,64}$",
    _ANTHROPIC_TOOLS,
    "rename the tool: replace other characters with _ and keep it to 64 characters",
)
ANTHROPIC_ROOT = _rule(
    "anthropic-root-object",
    'input_schema has "type": "object", and no oneOf, allOf or anyOf at the top level',
    "anthropic-sdk-python src/anthropic/types/tool_param.py, InputSchemaTyped.type; the API's "
    "error 'input_schema does not support oneOf, allOf, or anyOf at the top level'",
    "wrap the input in an object with one property, or move the alternatives into a property",
)
ANTHROPIC_DRAFT = _rule(
    "anthropic-draft-2020-12",
    "input_schema is a valid JSON Schema of draft 2020-12",
    f"{_ANTHROPIC_TOOLS}; the API's error 'JSON schema is invalid. It must match JSON Schema "
    "draft 2020-12' (github.com/anthropics/claude-code/issues/7365)",
    "make the schema valid under draft 2020-12 (see input-schema-valid)",
)
ANTHROPIC_STRICT_CLOSED = _rule(
    "anthropic-strict-closed-objects",
    "additionalProperties is false on every object",
    _ANTHROPIC_STRICT,
    'set "additionalProperties": false on the object',
)
ANTHROPIC_STRICT_KEYWORDS = _rule(
    "anthropic-strict-keywords",
    "no numerical constraints (minimum, maximum, exclusiveMinimum, exclusiveMaximum, "
    "multipleOf), no string constraints (minLength, maxLength), no array constraints beyond "
    "minItems of 0 or 1",
    _ANTHROPIC_STRICT,
    "drop the constraint, or say it in the description",
)
ANTHROPIC_STRICT_FORMATS = _rule(
    "anthropic-strict-formats",
    "format is one of date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid",
    _ANTHROPIC_STRICT,
    "drop the format, or use a pattern",
)
ANTHROPIC_STRICT_PATTERN = _rule(
    "anthropic-strict-pattern",
    "a pattern uses no backreferences, lookaround or word boundaries",
    _ANTHROPIC_STRICT,
    "rewrite the pattern without them",
)
ANTHROPIC_STRICT_REFS = _rule(
    "anthropic-strict-refs",
    "no recursive schema, no external $ref, no allOf with a $ref, enum values are scalars",
    _ANTHROPIC_STRICT,
    "inline or flatten the referenced schema",
)
ANTHROPIC_STRICT_LIMITS = _rule(
    "anthropic-strict-limits",
    "at most 24 optional parameters and 16 parameters with union types across a request's "
    "strict tools",
    _ANTHROPIC_STRICT,
    "require more parameters, or split the tool",
)
_ANTHROPIC_FORBIDDEN = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minContains",
    "maxContains",
)
_ANTHROPIC_FORMATS = (*_OPENAI_FORMATS, "uri")
_ANTHROPIC_PATTERN = {
    r"\\[1-9]|\\k<": "a backreference",
    r"\(\?<?[=!]": "lookaround",
    r"\\[bB]": "a word boundary",
}


def _anthropic(name: Any, schema: Any) -> Iterator[Breach]:
    yield from name_breach(ANTHROPIC_NAME, r"[a-zA-Z0-9_-]{1,64}", name)
    yield from root_object(ANTHROPIC_ROOT, schema, ("oneOf", "allOf", "anyOf"))
    # A schema invalid under its own draft is input-schema-valid's to report.
    if isinstance(schema, dict) and _valid_as_declared(schema):
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = place("$", *exc.absolute_path) if exc.absolute_path else "$"
            yield Breach(ANTHROPIC_DRAFT, where, exc.message[:200])


def _valid_as_declared(schema: dict[str, Any]) -> bool:
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError:
        return False
    return True


def _anthropic_strict(name: Any, schema: Any) -> Iterator[Breach]:
    yield from closed_objects(ANTHROPIC_STRICT_CLOSED, schema)
    yield from keywords(ANTHROPIC_STRICT_KEYWORDS, schema, _ANTHROPIC_FORBIDDEN)
    for node in nodes(schema):
        least = node.schema.get("minItems")
        if isinstance(least, int) and least > 1:
            yield Breach(
                ANTHROPIC_STRICT_KEYWORDS, place(node.place, "minItems"), f"minItems {least}"
            )
    yield from formats_outside(ANTHROPIC_STRICT_FORMATS, schema, _ANTHROPIC_FORMATS)
    yield from pattern_features(ANTHROPIC_STRICT_PATTERN, schema, _ANTHROPIC_PATTERN)
    yield from _anthropic_refs(schema)
    yield from _anthropic_limits(schema)


def _anthropic_refs(schema: Any) -> Iterator[Breach]:
    rule = ANTHROPIC_STRICT_REFS
    for node in nodes(schema):
        ref = node.schema.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            yield Breach(rule, place(node.place, "$ref"), f"the external reference {ref!r}")
        for index, part in enumerate(node.schema.get("allOf") or []):
            if isinstance(part, dict) and "$ref" in part:
                yield Breach(rule, place(node.place, "allOf", index), "an allOf with a $ref")
        for value in node.schema.get("enum") or []:
            if isinstance(value, dict | list):
                yield Breach(rule, place(node.place, "enum"), "an enum value that is not a scalar")
                break
    cycle = _recursion(schema)
    if cycle:
        yield Breach(rule, "$", f"a recursive schema ({cycle})")


def _recursion(schema: Any) -> str:
    """A chain of local references that comes back to where it started, as text ("" when
    the schema has none)."""
    if not isinstance(schema, dict):
        return ""
    targets: dict[str, set[str]] = {}
    for key in ("$defs", "definitions"):
        for name, part in (schema.get(key) or {}).items():
            targets[f"#/{key}/{name}"] = {
                node.schema["$ref"]
                for node in nodes(part)
                if isinstance(node.schema.get("$ref"), str)
            }
    targets["#"] = {
        node.schema["$ref"]
        for node in nodes({k: v for k, v in schema.items() if k not in ("$defs", "definitions")})
        if isinstance(node.schema.get("$ref"), str)
    }

    def back(start: str, at: str, seen: tuple[str, ...]) -> str:
        for target in sorted(targets.get(at, ())):
            if target == start:
                return " -> ".join((*seen, target))
            if target not in seen:
                found = back(start, target, (*seen, target))
                if found:
                    return found
        return ""

    return next((found for start in sorted(targets) if (found := back(start, start, (start,)))), "")


def _anthropic_limits(schema: Any) -> Iterator[Breach]:
    """The request limits, as one tool alone reaches them: counted on the properties reached
    without following a $ref, a union being an anyOf or a list of types (Pydantic AI's
    ``_anthropic_schema_limits``, as the API was observed to count)."""
    optional = unions = 0
    for node in nodes(
        {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
        if isinstance(schema, dict)
        else schema
    ):
        properties = node.schema.get("properties")
        if not isinstance(properties, dict):
            continue
        required = node.schema.get("required") or []
        optional += sum(1 for name in properties if name not in required)
        unions += sum(
            1
            for value in properties.values()
            if isinstance(value, dict) and ("anyOf" in value or isinstance(value.get("type"), list))
        )
    if optional > 24:
        yield Breach(ANTHROPIC_STRICT_LIMITS, "$", f"{optional} optional parameters")
    if unions > 16:
        yield Breach(ANTHROPIC_STRICT_LIMITS, "$", f"{unions} parameters with union types")


# MCP clients.
MCP_NAME = _rule(
    "mcp-name",
    "a tool name is 1 to 128 of A-Z, a-z, 0-9, _, - and .",
    _MCP_TOOLS,
    "rename the tool: replace other characters with _ and keep it to 128 characters",
)
MCP_SCHEMA = _rule(
    "mcp-input-schema-object",
    'inputSchema is an object schema ("type": "object")',
    _MCP_TOOLS,
    "wrap the input in an object with one property",
)


def _mcp(name: Any, schema: Any) -> Iterator[Breach]:
    yield from name_breach(MCP_NAME, r"[A-Za-z0-9_.-]{1,128}", name)
    yield from root_object(MCP_SCHEMA, schema, combinators=())


PROFILES: dict[str, Profile] = {
    profile.id: profile
    for profile in (
        Profile("openai", "openai", "OpenAI function calling", _openai),
        Profile(
            "openai-strict",
            "openai",
            "OpenAI function calling, strict",
            _openai_strict,
            optional=True,
            beyond="openai",
            loses="without strict: true, the model's arguments are not held to the schema",
        ),
        Profile("anthropic", "anthropic", "Anthropic tool use", _anthropic),
        Profile(
            "anthropic-strict",
            "anthropic",
            "Anthropic tool use, strict",
            _anthropic_strict,
            optional=True,
            beyond="anthropic",
            loses="without strict: true, Claude's arguments are not guaranteed to match the schema",
        ),
        Profile("gemini", "gemini", "Gemini function declarations", gemini),
        Profile(
            "gemini-parameters",
            "gemini",
            "Gemini function declarations, as parameters (the OpenAPI subset)",
            gemini_parameters,
            optional=True,
            beyond="gemini",
            loses=(
                "a client that sends it as parameters (older SDKs, the Live API) is refused; "
                "as parametersJsonSchema it is taken"
            ),
        ),
        Profile("mcp", "mcp", "MCP clients", _mcp),
    )
}
# The clients a check is named after, each with the title of its plain mode.
CLIENTS: dict[str, str] = {
    profile.client: profile.title for profile in PROFILES.values() if not profile.beyond
}
