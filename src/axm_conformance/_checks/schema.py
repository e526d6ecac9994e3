"""Schema checks: the input schema is valid, describes an object, can be satisfied, and agrees with
the signature of the code that receives it; a declared output schema is valid."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator, SchemaError
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable
from referencing.jsonschema import DRAFT202012

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._observation import SubjectInfo
from axm_conformance._outcomes import Finding, not_run
from axm_conformance._schema_keywords import subschemas

__all__ = ["contradictions", "dangling_refs", "input_unusable", "schema_problem"]

_BOUND_PAIRS = (
    ("minimum", "maximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
    ("minContains", "maxContains"),
)


# Checking a schema against its meta-schema takes milliseconds for a wide schema, and every
# check that needs a usable input schema asks: the answer is kept per schema object.
_PROBLEMS: dict[int, tuple[Any, str | None]] = {}
_PROBLEMS_KEPT = 256


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema of its draft (2020-12 unless ``$schema`` says)."""
    known = _PROBLEMS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    if len(_PROBLEMS) >= _PROBLEMS_KEPT:
        _PROBLEMS.clear()
    problem = _problem(schema)
    _PROBLEMS[id(schema)] = (schema, problem)  # the schema is kept: its id stays its own
    return problem


def _problem(schema: Any) -> str | None:
    if not isinstance(schema, dict | bool):
        return f"the schema is a {type(schema).__name__}, not a JSON Schema object"
    try:
        validator = validator_for(schema, default=Draft202012Validator)
        validator.check_schema(schema)  # type: ignore[arg-type]  # booleans are schemas too
    except SchemaError as error:
        return f"not a valid JSON Schema: {error.message} (at {error.json_path})"
    return None


@check(
    "input-schema-valid",
    "schema",
    applies=lambda s: "the object matches no tool protocol" if s.call_style == "none" else None,
)
def input_schema_valid(subject: SubjectInfo, context: CheckContext | None) -> Found:
    """The input schema is a valid JSON Schema whose root is an object, its $refs resolving."""
    if subject.schema_error:
        yield subject.schema_error
        return
    problem = schema_problem(subject.input_schema)
    if problem:
        yield problem
        return
    schema = subject.input_schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        root = schema.get("type") if isinstance(schema, dict) else schema
        yield f'the root "type" is {root!r}: a tool\'s input is a JSON object ("type": "object")'
        return
    yield from dangling_refs(schema)


def dangling_refs(schema: dict[str, Any]) -> Iterator[str]:
    """The ``$ref`` s of ``schema`` that point to nothing in it.

    A reference to another document (remote) is not judged here, nor one beneath a nested
    ``$id``, which changes the base it resolves against.
    """
    uri = str(schema.get("$id") or "urn:axm-conformance:input-schema")
    resource = DRAFT202012.create_resource(schema)
    resolver = Registry().with_resource(uri, resource).crawl().resolver(uri)
    nodes = list(subschemas(schema))
    scoped = [keys for keys, node in nodes if keys and isinstance(node, dict) and "$id" in node]
    for keys, node in nodes:
        if not isinstance(node, dict) or not isinstance(node.get("$ref"), str):
            continue
        if any(keys[: len(scope)] == scope for scope in scoped):
            continue
        try:
            resolver.lookup(node["$ref"])
        except (PointerToNowhere, NoSuchAnchor):
            where = "#" + "".join(f"/{key}" for key in keys)
            yield f"the $ref {node['$ref']!r} at {where} points to nothing in the schema"
        except Unresolvable:
            continue


def contradictions(schema: Any) -> Iterator[str]:
    """Keywords of ``schema`` that contradict each other, so that no value can satisfy it."""
    for keys, node in subschemas(schema):
        if not isinstance(node, dict):
            continue
        path = "#" + "".join(f"/{key}" for key in keys)
        for low, high in _BOUND_PAIRS:
            if _number(node.get(low)) and _number(node.get(high)) and node[low] > node[high]:
                yield f"{path}: {low} {node[low]} is above {high} {node[high]}"
        for low in ("minimum", "exclusiveMinimum"):
            for high in ("maximum", "exclusiveMaximum"):
                exclusive = "exclusive" in low + high
                if (
                    exclusive
                    and _number(node.get(low))
                    and _number(node.get(high))
                    and (node[low] >= node[high])
                ):
                    yield f"{path}: {low} {node[low]} leaves nothing below {high} {node[high]}"
        if node.get("enum") == []:
            yield f"{path}: enum is empty, so no value is allowed"
        if node.get("type") == []:
            yield f"{path}: type is an empty list, so no value is allowed"
        if (
            "const" in node
            and isinstance(node.get("enum"), list)
            and not any(_same(node["const"], item) for item in node["enum"])
        ):
            yield f"{path}: const {node['const']!r} is not in enum {node['enum']!r}"
        yield from _forbidden_required(path, node)


def _schema_unusable(subject: SubjectInfo) -> str | Finding | None:
    if subject.call_style == "none":
        return "the object matches no tool protocol"
    if next(input_schema_valid(subject, None), None) is not None:
        return not_run("not run: the input schema is not valid (see input-schema-valid)")
    return None


def input_unusable(subject: SubjectInfo) -> str | Finding | None:
    """Why no valid input can be made for the tool, when a schema check explains it."""
    reason = _schema_unusable(subject)
    if reason is None and next(contradictions(subject.input_schema), None) is not None:
        reason = not_run(
            "not run: no input satisfies the input schema (see input-schema-satisfiable)"
        )
    return reason


@check("input-schema-satisfiable", "schema", applies=_schema_unusable)
def input_schema_satisfiable(subject: SubjectInfo, context: CheckContext) -> Found:
    """Some input satisfies the input schema (no contradictory keywords)."""
    yield from contradictions(subject.input_schema)


def _forbidden_required(path: str, schema: dict[str, Any]) -> Iterator[str]:
    properties: dict[str, Any] = (
        schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    )
    patterns = schema.get("patternProperties") or {}
    closed = schema.get("additionalProperties") is False
    for name in schema.get("required") or ():
        if properties.get(name) is False:
            yield f"{path}: {name!r} is required but its schema is false"
        elif closed and name not in properties and not patterns:
            yield (
                f"{path}: {name!r} is required but additionalProperties is false and "
                "properties does not list it"
            )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (_number(a) and _number(b) and a == b)


@check(
    "input-schema-matches-signature",
    "schema",
    applies=lambda s: (
        None
        if s.callable.has_signature
        and s.call_style == "keywords"
        and isinstance(s.input_schema, dict)
        else "the input does not arrive as keyword arguments of a Python signature"
    ),
    requires=("in-process",),
)
def input_schema_matches_signature(subject: SubjectInfo, context: CheckContext) -> Found:
    """Every schema property is a parameter, and every parameter without a default is required."""
    schema = subject.input_schema
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or ())
    target = subject.callable
    keyword_names = {p.name for p in target.parameters if p.kind != "POSITIONAL_ONLY"}
    positional_only = {p.name for p in target.parameters if p.kind == "POSITIONAL_ONLY"}
    if not target.takes_var_keyword:
        for name in properties:
            if name in positional_only:
                yield (
                    f"the schema has property {name!r}, but that parameter of "
                    f"{target.name} is positional-only"
                )
            elif name not in keyword_names:
                yield (
                    f"the schema has property {name!r}, but {target.name} has no such "
                    "keyword parameter"
                )
        if (
            not subject.policy.strips_unknown_keys
            and schema.get("additionalProperties") is not False
        ):
            yield (
                "the schema lets a caller send properties it does not list "
                f"(additionalProperties is not false), but {target.name} takes no "
                "**kwargs: such a call fails to bind"
            )
    for parameter in target.parameters:
        if (
            parameter.required
            and parameter.kind != "POSITIONAL_ONLY"
            and parameter.name not in required
        ):
            yield (
                f"parameter {parameter.name!r} has no default, but the schema does not require it"
            )


@check(
    "output-schema-valid",
    "schema",
    applies=lambda s: None if s.output_schema is not None else "the tool declares no output schema",
    requires=("output-schema",),
)
def output_schema_valid(subject: SubjectInfo, context: CheckContext) -> Found:
    """A declared output schema is a valid JSON Schema."""
    problem = schema_problem(subject.output_schema)
    if problem:
        yield problem
