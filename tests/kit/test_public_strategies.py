"""The public strategies, used the way a tool author uses them in their own ``@given`` tests."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import axm_conformance._strategies as private
import axm_conformance.strategies as public
from axm_conformance.strategies import (
    MUTATION_KINDS,
    Example,
    InvalidSchemaError,
    Mutation,
    UnsatisfiableSchemaError,
    UnsupportedSchemaError,
    boundary_inputs,
    invalid_inputs,
    valid_inputs,
)
from axm_runtime.tool_use import validate_input

FAST = settings(max_examples=40, deadline=None, database=None)

# A tool input that uses the 2020-12 keywords hypothesis-jsonschema does not generate:
# prefixItems, $defs with $ref, dependentRequired and dependentSchemas.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"name": {"type": "string", "minLength": 1, "maxLength": 20}},
    "properties": {
        "name": {"$ref": "#/$defs/name"},
        "point": {
            "type": "array",
            "prefixItems": [{"type": "number"}, {"type": "number"}],
            "items": False,
        },
        "unit": {"enum": ["m", "km"]},
        "scale": {"type": "integer", "minimum": 1, "maximum": 10},
        "card": {"type": "string", "pattern": "^[0-9]{4}$"},
        "billing": {"type": "string"},
    },
    "required": ["name"],
    "dependentRequired": {"card": ["billing"]},
    "dependentSchemas": {"scale": {"required": ["unit"]}},
    "additionalProperties": False,
}


def my_validator(value: Any, schema: Any) -> bool:
    """The validator under test in these examples: jsonschema's, as a tool author might use."""
    return bool(Draft202012Validator(schema).is_valid(value))


@FAST
@given(valid_inputs(SCHEMA))
def test_my_validator_accepts_valid_inputs(value: Any) -> None:
    assert my_validator(value, SCHEMA)


@FAST
@given(invalid_inputs(SCHEMA))
def test_my_validator_rejects_invalid_inputs(mutation: Mutation) -> None:
    assert mutation.kind in MUTATION_KINDS
    assert not my_validator(mutation.value, SCHEMA), f"{mutation.kind}: {mutation.detail}"


@FAST
@given(invalid_inputs(SCHEMA))
def test_the_reference_validator_rejects_invalid_inputs(mutation: Mutation) -> None:
    result = validate_input(mutation.value, SCHEMA)
    assert not result.valid, f"{mutation.kind} at {mutation.path}: {mutation.detail}"


def test_boundary_inputs_are_labelled_valid_examples() -> None:
    examples = boundary_inputs(SCHEMA)
    assert len(examples) > 5
    assert all(isinstance(example, Example) and example.label for example in examples)
    assert all(my_validator(example.value, SCHEMA) for example in examples)
    assert examples[0].value.keys() == {"name"}  # the baseline: required properties only


NEWER_KEYWORDS = {
    "prefixItems": {"type": "array", "prefixItems": [{"const": 1}, {"type": "string"}]},
    "$defs": {"$defs": {"n": {"type": "integer", "minimum": 5}}, "$ref": "#/$defs/n"},
    "$anchor": {"$defs": {"n": {"$anchor": "num", "type": "integer"}}, "$ref": "#num"},
    "dependentRequired": {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "dependentRequired": {"a": ["b"]},
        "minProperties": 1,
    },
    "dependentSchemas": {
        "type": "object",
        "dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}, "required": ["b"]}},
    },
    "if/then/else": {"if": {"type": "integer"}, "then": {"minimum": 3}, "else": {"type": "null"}},
    "contains": {"type": "array", "contains": {"const": 0}, "minContains": 2, "maxContains": 3},
}


@pytest.mark.parametrize("schema", NEWER_KEYWORDS.values(), ids=list(NEWER_KEYWORDS))
@FAST
@given(data=st.data())
def test_newer_keywords_are_generated_correctly(schema: Any, data: st.DataObject) -> None:
    value = data.draw(valid_inputs(schema))
    assert Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize(
    ("keyword", "schema"),
    [
        ("unevaluatedProperties", {"type": "object", "unevaluatedProperties": False}),
        ("unevaluatedItems", {"type": "array", "unevaluatedItems": {"type": "string"}}),
        ("$dynamicRef", {"$dynamicAnchor": "a", "items": {"$dynamicRef": "#a"}}),
        ("$ref", {"$ref": "https://example.com/remote.json"}),
        ("$schema", {"$schema": "https://example.com/my-dialect"}),
    ],
)
def test_an_unsupported_keyword_is_rejected_by_name(keyword: str, schema: Any) -> None:
    with pytest.raises(UnsupportedSchemaError, match=re.escape(f"unsupported keyword '{keyword}'")):
        valid_inputs(schema)


def test_nested_unsupported_keyword_says_where() -> None:
    schema = {"properties": {"a": {"unevaluatedProperties": False}}}
    with pytest.raises(UnsupportedSchemaError) as raised:
        valid_inputs(schema)
    assert str(raised.value).startswith(
        "unsupported keyword 'unevaluatedProperties' at #/properties/a:"
    )


def test_invalid_and_unsatisfiable_schemas_raise_when_the_strategy_is_made() -> None:
    with pytest.raises(InvalidSchemaError):
        valid_inputs({"type": "integr"})
    with pytest.raises(InvalidSchemaError):
        valid_inputs({"$ref": "#/$defs/missing"})
    with pytest.raises(UnsatisfiableSchemaError):
        valid_inputs({"type": "integer", "minimum": 5, "maximum": 1})
    for error in (InvalidSchemaError, UnsupportedSchemaError, UnsatisfiableSchemaError):
        assert issubclass(error, ValueError)


def test_the_public_module_is_the_private_one_documented() -> None:
    assert sorted(public.__all__) == sorted(
        [
            "valid_inputs",
            "invalid_inputs",
            "boundary_inputs",
            "simplest_input",
            "Mutation",
            "Example",
            "MUTATION_KINDS",
            "InvalidSchemaError",
            "UnsupportedSchemaError",
            "UnsatisfiableSchemaError",
        ]
    )
    for name in public.__all__:
        assert getattr(public, name) is getattr(private, name)
    assert public.__doc__ is not None and "@given(valid_inputs(SCHEMA))" in public.__doc__


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}},
        {"type": "array", "items": {"enum": ["x", "y"]}, "minItems": 2},
        {"$defs": {"p": {"type": "string", "minLength": 2}}, "$ref": "#/$defs/p"},
    ],
)
def test_the_simplest_input_is_the_first_boundary_input(schema: dict[str, Any]) -> None:
    assert public.simplest_input(schema) == public.boundary_inputs(schema)[0].value


def test_a_schema_no_value_satisfies_has_no_simplest_input() -> None:
    with pytest.raises(public.UnsatisfiableSchemaError):
        public.simplest_input({"type": "string", "enum": [1]})
