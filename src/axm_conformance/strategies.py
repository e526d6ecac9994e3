"""Hypothesis strategies for JSON Schema 2020-12: valid, invalid and boundary inputs.

The strategies the kit fuzzes tools with, for use in your own property tests::

    from hypothesis import given
    from axm_conformance.strategies import invalid_inputs, valid_inputs

    SCHEMA = {
        "type": "object",
        "properties": {"path": {"type": "string", "minLength": 1}, "limit": {"type": "integer"}},
        "required": ["path"],
        "additionalProperties": False,
    }

    @given(valid_inputs(SCHEMA))
    def test_accepts_valid_input(value):
        assert my_validator(value, SCHEMA)

    @given(invalid_inputs(SCHEMA))
    def test_rejects_invalid_input(mutation):
        # mutation.kind says what was broken ("missing-required", "extra-property", ...)
        assert not my_validator(mutation.value, SCHEMA), mutation.detail

- `valid_inputs(schema)`: a strategy of values that validate against `schema`;
- `invalid_inputs(schema)`: a strategy of `Mutation`: a valid value broken at one location in one
  known way, with its `kind` (one of `MUTATION_KINDS`), `path` and a `detail` sentence; every
  mutation is confirmed invalid by jsonschema's ``Draft202012Validator``;
- `boundary_inputs(schema)`: a deterministic list of `Example` (value and label): the simplest
  valid value, then one edge case at a time (bounds, lengths, enum values, optional properties);
  its `source` is "schema-example" for a value the schema's `examples` or `default` offer, else
  "boundary";
- `simplest_input(schema)`: the first of those, made without building any strategy.

The schema is read as JSON Schema 2020-12. Objects, arrays, ``$ref`` (``$defs``, ``$anchor``,
``$id``), ``prefixItems``, ``dependentRequired``, ``dependentSchemas``, ``allOf``/``anyOf``/
``oneOf``/``not`` and ``if``/``then``/``else`` are built by construction, and every generated value
is checked by jsonschema before it is returned: a "valid" input is never invalid. A schema that
cannot be honoured raises at once, when the strategy is made, never while drawing:

- `InvalidSchemaError`: not a valid 2020-12 schema, or a ``$ref`` to nowhere or in a loop;
- `UnsupportedSchemaError`: valid, but uses a keyword whose inputs cannot be generated correctly
  (``unevaluatedProperties``, ``unevaluatedItems``, ``$dynamicRef``, remote references, a custom
  ``$schema`` dialect); the message names the keyword and where it is, e.g.
  ``unsupported keyword 'unevaluatedProperties' at #: ...``;
- `UnsatisfiableSchemaError`: no value satisfies the schema.

All three are `ValueError`.
"""

from __future__ import annotations

from axm_conformance._strategies import (
    MUTATION_KINDS,
    Example,
    InvalidSchemaError,
    Mutation,
    UnsatisfiableSchemaError,
    UnsupportedSchemaError,
    boundary_inputs,
    invalid_inputs,
    simplest_input,
    valid_inputs,
)

__all__ = [
    "MUTATION_KINDS",
    "Example",
    "InvalidSchemaError",
    "Mutation",
    "UnsatisfiableSchemaError",
    "UnsupportedSchemaError",
    "boundary_inputs",
    "invalid_inputs",
    "simplest_input",
    "valid_inputs",
]
