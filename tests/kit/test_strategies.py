"""Tests for the input strategies: valid, boundary and invalid inputs from JSON schemas."""

from __future__ import annotations

import collections
import copy
import json
import math
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field, TypeAdapter

from axm_conformance._strategies import (
    MUTATION_KINDS,
    SOURCES,
    Cap,
    Hints,
    InvalidSchemaError,
    Served,
    UnsatisfiableSchemaError,
    UnsupportedSchemaError,
    boundary_inputs,
    described_values,
    generated_inputs,
    hinted_inputs,
    invalid_examples,
    invalid_inputs,
    keywords_of,
    structured_strings,
    told_of,
    valid_inputs,
    variations,
)
from tests.conftest import SUITE

# The engine draws with every health check suppressed: a strategy that filters a lot on one
# schema is slow there, not wrong, and these tests judge what is drawn.
FAST = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.filter_too_much],
)
REJECTIONS = (UnsupportedSchemaError, UnsatisfiableSchemaError, InvalidSchemaError)


def validator(schema: Any) -> Any:
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def assert_plain_json(value: Any) -> None:
    """Only dict/list/str/int/float/bool/None, string keys, finite numbers."""
    if isinstance(value, dict):
        assert all(isinstance(key, str) for key in value)
        for item in value.values():
            assert_plain_json(item)
    elif isinstance(value, list):
        for item in value:
            assert_plain_json(item)
    elif isinstance(value, float):
        assert math.isfinite(value)
    else:
        assert value is None or isinstance(value, str | int | bool)


# --- a catalogue of realistic tool schemas ------------------------------------------------------


class Address(BaseModel):
    street: str
    city: str = Field(min_length=1, max_length=80)
    zip_code: str | None = Field(default=None, pattern=r"^\d{5}$")


class CreateOrder(BaseModel):
    customer: str = Field(min_length=1)
    quantity: int = Field(ge=1, le=1000)
    priority: Literal["low", "normal", "high"] = "normal"
    note: str | None = None
    shipping: Address
    billing: Address | None = None
    sku_ids: list[int] = Field(default_factory=list, max_length=20)
    counts: dict[str, int] = Field(default_factory=dict)


class Node(BaseModel):
    name: str
    children: list[Node] = Field(default_factory=list)


PAGINATION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 200},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
        "offset": {"type": "integer", "minimum": 0},
        "mode": {"type": ["string", "null"], "enum": ["fast", "exact", None]},
        "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
    },
    "required": ["query"],
    "additionalProperties": False,
}

CATALOGUE: dict[str, Any] = {
    "pagination": PAGINATION,
    "nullable enum": {
        "type": "object",
        "properties": {"mode": {"type": ["string", "null"], "enum": ["a", "b", None]}},
        "required": ["mode"],
    },
    "nested optional objects": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "options": {
                "type": "object",
                "properties": {
                    "verbose": {"type": "boolean"},
                    "retry": {
                        "type": "object",
                        "properties": {"times": {"type": "integer", "minimum": 0, "maximum": 5}},
                    },
                },
                "additionalProperties": False,
            },
        },
        "required": ["id"],
    },
    "array of objects": {
        "type": "object",
        "properties": {
            "lines": {
                "type": "array",
                "minItems": 1,
                "maxItems": 5,
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"},
                        "qty": {"type": "integer", "minimum": 1},
                    },
                    "required": ["sku", "qty"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["lines"],
    },
    "patternProperties": {
        "type": "object",
        "properties": {
            "env": {
                "type": "object",
                "patternProperties": {"^[A-Z_][A-Z0-9_]*$": {"type": "string"}},
                "additionalProperties": False,
            }
        },
    },
    "additionalProperties schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "additionalProperties": {"type": "string", "maxLength": 63},
        "maxProperties": 6,
    },
    "prefixItems": {
        "type": "object",
        "properties": {
            "point": {
                "type": "array",
                "prefixItems": [{"type": "number"}, {"type": "number"}, {"enum": ["wgs84"]}],
                "items": False,
                "minItems": 2,
            }
        },
        "required": ["point"],
    },
    "$defs and recursive $ref": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "label": {"type": "string", "maxLength": 10},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["label"],
            }
        },
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}},
        "required": ["root"],
    },
    "anyOf and oneOf": {
        "type": "object",
        "properties": {
            "target": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "url"}, "url": {"type": "string"}},
                        "required": ["kind", "url"],
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "file"}, "path": {"type": "string"}},
                        "required": ["kind", "path"],
                    },
                ]
            },
            "timeout": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        },
        "required": ["target"],
    },
    "dependentRequired": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "credit_card": {"type": "string", "pattern": r"^\d{16}$"},
            "billing_address": {"type": "string"},
        },
        "required": ["name"],
        "dependentRequired": {"credit_card": ["billing_address"]},
    },
    "if/then/else and not": {
        "type": "object",
        "properties": {
            "unit": {"enum": ["c", "f"]},
            "value": {"type": "number"},
            "user": {"type": "string", "not": {"enum": ["root", "admin"]}},
        },
        "required": ["unit", "value"],
        "if": {"properties": {"unit": {"const": "c"}}},
        "then": {"properties": {"value": {"minimum": -273.15}}},
        "else": {"properties": {"value": {"minimum": -459.67}}},
    },
    "multipleOf and exclusive bounds": {
        "type": "object",
        "properties": {
            "price": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01},
            "batch": {"type": "integer", "multipleOf": 5, "exclusiveMaximum": 100},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["price", "batch"],
    },
    "propertyNames, uniqueItems, contains": {
        "type": "object",
        "properties": {
            "flags": {
                "type": "object",
                "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 8},
                "additionalProperties": {"type": "boolean"},
                "minProperties": 1,
                "maxProperties": 4,
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "maxLength": 10},
                "uniqueItems": True,
                "contains": {"const": "main"},
                "maxItems": 5,
            },
        },
        "required": ["flags", "tags"],
    },
    "allOf merge": {
        "$defs": {
            "base": {
                "type": "object",
                "properties": {"id": {"type": "integer", "minimum": 1}},
                "required": ["id"],
            }
        },
        "allOf": [
            {"$ref": "#/$defs/base"},
            {"properties": {"extra": {"type": "boolean"}}, "required": ["extra"]},
        ],
    },
    "draft-07 declared (zod style)": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"q": {"type": "string"}, "k": {"type": "number", "maximum": 5}},
        "required": ["q"],
        "additionalProperties": False,
    },
    "pydantic model": CreateOrder.model_json_schema(),
    "pydantic recursive model": Node.model_json_schema(),
    "pydantic TypeAdapter": TypeAdapter(dict[str, list[int] | None]).json_schema(),
}


@pytest.mark.parametrize("name", CATALOGUE)
@FAST
@given(data=st.data())
def test_valid_inputs_validate(name: str, data: st.DataObject) -> None:
    schema = CATALOGUE[name]
    value = data.draw(valid_inputs(schema))
    assert_plain_json(value)
    assert validator(schema).is_valid(value), value


# Hints of every kind, many of which no place of the catalogue allows: they must never make an
# input invalid.
HINTS = Hints.of(
    {
        "worker-file": ["notes.txt", "sub/dir/todo.md"],
        "source-literal": ["--", "fast", "x", "a" * 20, "\x00", -7, 0, 3, 100, 0.5, 1e300, -2.5],
    }
)


@pytest.mark.parametrize("name", CATALOGUE)
@FAST
@given(data=st.data())
def test_inputs_with_hints_validate(name: str, data: st.DataObject) -> None:
    schema = CATALOGUE[name]
    value = data.draw(valid_inputs(schema, HINTS))
    assert_plain_json(value)
    assert validator(schema).is_valid(value), value
    example = data.draw(generated_inputs(schema, HINTS))
    assert validator(schema).is_valid(example.value), example
    assert example.source in SOURCES and example.source != "boundary"
    mutation = data.draw(invalid_inputs(schema, HINTS))
    assert not validator(schema).is_valid(mutation.value), mutation


def test_hints_are_mixed_into_generated_values() -> None:
    """Whole, spliced into text, as a number or its neighbour, as a key; each named by source."""
    schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
            "options": {"type": "object", "additionalProperties": {"type": "boolean"}},
        },
        "required": ["text", "count", "options"],
    }
    hints = Hints.of({"source-literal": ["--", 4096], "worker-file": ["notes.txt"]})
    drawn = generated_inputs(schema, hints)

    def found(wanted: Any) -> Any:
        # Derandomized: each property is found at a fixed draw, on a busy machine too.
        chosen = settings(max_examples=2000, database=None, derandomize=True)
        return find(drawn, wanted, settings=chosen)

    assert found(lambda e: e.value["text"] == "notes.txt").source == "worker-file"
    spliced = found(lambda e: "--" in e.value["text"] and e.value["text"] != "--")
    assert spliced.source == "source-literal"
    assert found(lambda e: e.value["count"] == 4097).source == "source-literal"
    assert found(lambda e: "notes.txt" in e.value["options"]).source == "worker-file"
    assert found(lambda e: e.source == "generated").value["text"] != "notes.txt"


def test_hinted_inputs_put_each_hint_in_each_place_it_fits() -> None:
    examples = hinted_inputs(PAGINATION, HINTS, limit=1000)
    check = validator(PAGINATION)
    assert all(check.is_valid(e.value) and e.label for e in examples)
    boundaries = {json.dumps(e.value, sort_keys=True) for e in boundary_inputs(PAGINATION)}
    texts = [json.dumps(e.value, sort_keys=True) for e in examples]
    assert len(set(texts)) == len(texts) and not boundaries & set(texts)
    assert examples[0].source == "worker-file"  # the files first, then the literals
    labels = {e.label: e for e in examples}
    assert labels['query = "notes.txt" (a file in the working directory)'].value == {
        "query": "notes.txt"
    }
    assert labels['tags[0] = "sub/dir/todo.md" (a file in the working directory)']
    assert labels["""query = "--" (a literal in the tool's source)"""].source == "source-literal"
    assert labels["offset = 3 (a literal in the tool's source)"].value["offset"] == 3
    assert "limit = 100 (a literal in the tool's source)" not in labels  # a boundary already
    assert "limit = 99 (next to 100, a literal in the tool's source)" in labels
    assert "limit = 101 (next to 100, a literal in the tool's source)" not in labels  # maximum
    assert not [label for label in labels if "-7" in label.split("(")[0]]  # minimum 0
    # numbers that are whole go to integer places as ints, as integers are drawn
    assert all(isinstance(e.value.get("offset", 0), int) for e in examples)
    assert any(e.value.get("offset") == int(1e300) for e in examples)
    assert len(hinted_inputs(PAGINATION, HINTS, limit=5)) == 5


def test_the_schema_own_words_are_not_hints() -> None:
    """A tool that declares its schema in its source has the schema's words among its literals:
    property names, keywords and types are not put anywhere."""
    words = Hints.of({"source-literal": ["query", "maxLength", "string", "limit", "zebra"]})
    placed = {e.value.get("query") for e in hinted_inputs(PAGINATION, words, 100)}
    assert "zebra" in placed and not placed & {"query", "maxLength", "string", "limit"}


def test_values_the_schema_names_are_hints_too() -> None:
    """Without any given hints, the examples, defaults and enum values of the schema are used
    elsewhere in it, and a location's own examples are drawn there."""
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "examples": ["todo.txt"]},
            "other": {"type": "string"},
            "mode": {"enum": ["fast", "exact"]},
            "shape": {"type": "object", "examples": [{"w": 2, "h": 3}]},
        },
        "required": ["path", "other", "shape"],
    }
    drawn = generated_inputs(schema, Hints())
    chosen = settings(max_examples=2000, database=None)
    assert find(drawn, lambda e: e.value["other"] == "exact", settings=chosen).source == (
        "schema-example"
    )
    assert find(drawn, lambda e: e.value["shape"] == {"w": 2, "h": 3}, settings=chosen)
    placed = hinted_inputs(schema, Hints(), limit=100)
    assert {"source": "schema-example", "other": "todo.txt"} in [
        {"source": e.source, "other": e.value["other"]} for e in placed
    ]
    named = [e for e in boundary_inputs(schema) if e.source == "schema-example"]
    assert [(e.value["path"], e.value["shape"]) for e in named] == [
        ("todo.txt", {}),
        ("", {"w": 2, "h": 3}),
    ]
    assert all(e.label.endswith("(from examples)") for e in named)


def test_strategies_are_cached_per_schema() -> None:
    assert valid_inputs(PAGINATION) is valid_inputs(copy.deepcopy(PAGINATION))


def test_strings_are_sometimes_non_ascii() -> None:
    text = find(valid_inputs({"type": "string"}), lambda s: any(ord(c) > 127 for c in s))
    assert any(ord(c) > 127 for c in text)


@FAST
@given(value=valid_inputs({"type": "object", "properties": {"n": {"type": "integer"}}}))
def test_integers_are_python_ints(value: dict[str, Any]) -> None:
    if "n" in value:
        assert type(value["n"]) is int


@FAST
@given(value=valid_inputs({"type": "number", "multipleOf": 0.1, "minimum": -1, "maximum": 1}))
def test_float_multiples_validate(value: float) -> None:
    assert validator({"multipleOf": 0.1}).is_valid(value)


# --- the official JSON-Schema-Test-Suite --------------------------------------------------------


def suite_schemas() -> list[tuple[str, Any]]:
    folder = SUITE / "draft2020-12"
    return [
        (f"{path.stem}: {case['description']}", case["schema"])
        for path in sorted(folder.glob("*.json"))
        for case in json.loads(path.read_text())
    ]


SUITE_SCHEMAS = suite_schemas()


@pytest.mark.parametrize("schema", [s for _, s in SUITE_SCHEMAS], ids=[n for n, _ in SUITE_SCHEMAS])
# Some suite schemas are built to be pathological for `not` and `oneOf`, which are enforced by
# filters: what is tested here is that values are valid, not how fast they come.
@settings(
    max_examples=10,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_suite_schema_is_rejected_or_generates_valid_values(
    schema: Any, data: st.DataObject
) -> None:
    try:
        strategy = valid_inputs(schema)
    except REJECTIONS:
        return
    value = data.draw(strategy)
    assert_plain_json(value)
    assert validator(schema).is_valid(value)


def test_suite_schemas_are_mostly_supported(capsys: pytest.CaptureFixture[str]) -> None:
    outcome: collections.Counter[str] = collections.Counter()
    for _, schema in SUITE_SCHEMAS:
        try:
            valid_inputs(schema)
            outcome["supported"] += 1
        except REJECTIONS as err:
            outcome[type(err).__name__] += 1
    with capsys.disabled():
        print(f"\nJSON-Schema-Test-Suite draft 2020-12: {dict(outcome)}")
    # the unsupported ones are unevaluated*, $dynamicRef, remote $ref and custom vocabularies
    assert outcome["supported"] >= 255


# --- boundary inputs -----------------------------------------------------------------------------


def test_boundary_inputs_are_valid_and_distinct() -> None:
    for name, schema in CATALOGUE.items():
        examples = boundary_inputs(schema)
        assert examples, name
        texts = [json.dumps(e.value, sort_keys=True) for e in examples]
        assert len(texts) == len(set(texts)), name
        check = validator(schema)
        assert all(check.is_valid(e.value) and e.label for e in examples), name


def test_boundary_inputs_cover_the_edges() -> None:
    examples = boundary_inputs(PAGINATION)
    values = [e.value for e in examples]
    assert examples[0].value == {"query": "a"}  # the baseline: required properties only
    limits = {v["limit"] for v in values if "limit" in v}
    assert {1, 100} <= limits
    assert {v["mode"] for v in values if "mode" in v} == {"fast", "exact", None}
    queries = {len(v["query"]) for v in values}
    assert {1, 200} <= queries
    assert any(v["query"] == "Zürich — 東京 🚀" for v in values)
    assert {0, 1, 5} - {len(v["tags"]) for v in values if "tags" in v} == {0}  # 0 is not allowed
    assert any(v.get("offset") == 0 for v in values)
    assert any(set(v) == set(PAGINATION["properties"]) for v in values)  # all optional present
    assert any("tags" not in v for v in values) and any("tags" in v for v in values)


def test_boundary_inputs_reach_nested_optional_properties() -> None:
    values = [e.value for e in boundary_inputs(CATALOGUE["nested optional objects"])]
    assert any("options" not in v for v in values)
    assert any(v.get("options") == {} for v in values)
    times = {v["options"]["retry"].get("times") for v in values if "retry" in v.get("options", {})}
    assert {0, 5} <= times


# --- invalid inputs ------------------------------------------------------------------------------

EVERY_KIND: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2},
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "maxItems": 3,
            "uniqueItems": True,
        },
        "mode": {"enum": ["a", "b"]},
        "kind": {"const": "x"},
        "props": {
            "type": "object",
            "additionalProperties": {"type": "integer"},
            "minProperties": 1,
            "maxProperties": 2,
        },
        "a": {"type": "boolean"},
        "b": {"type": "boolean"},
    },
    "required": ["name", "count", "tags", "mode", "kind", "props"],
    "dependentRequired": {"a": ["b"]},
    "additionalProperties": False,
}


def test_invalid_examples_cover_every_kind() -> None:
    mutations = invalid_examples(EVERY_KIND)
    check = validator(EVERY_KIND)
    assert all(not check.is_valid(m.value) for m in mutations)
    assert {m.kind for m in mutations} == MUTATION_KINDS
    assert all(m.detail and m.kind in MUTATION_KINDS for m in mutations)
    by_kind = {(m.kind, m.path): m for m in mutations}
    assert by_kind["above-maximum", ("count",)].value["count"] == 12
    assert by_kind["missing-required", ("name",)].value.keys() == set(EVERY_KIND["required"]) - {
        "name"
    }


def test_invalid_examples_are_invalid_across_the_catalogue() -> None:
    for name, schema in CATALOGUE.items():
        check = validator(schema)
        mutations = invalid_examples(schema)
        assert mutations, name
        assert all(not check.is_valid(m.value) for m in mutations), name
        # each kind of mistake at each place once
        assert len({(m.kind, m.path) for m in mutations}) == len(mutations), name


def test_invalid_examples_break_every_property() -> None:
    """Every property, the optional ones too, gets each mistake its place allows."""
    schema = CATALOGUE["pydantic model"]
    places = {(m.kind, m.path) for m in invalid_examples(schema)}
    for name in schema["properties"]:
        assert ("null-not-allowed", (name,)) in places or name in ("note", "billing"), name
        assert ("wrong-type", (name,)) in places, name


def test_unconstrained_object_only_has_root_type_mutations() -> None:
    mutations = invalid_examples({"type": "object", "additionalProperties": True})
    assert {m.kind for m in mutations} == {"wrong-type", "null-not-allowed"}
    assert all(m.path == () for m in mutations)


def test_a_schema_that_accepts_everything_has_no_invalid_inputs() -> None:
    assert invalid_examples({}) == []


@pytest.mark.parametrize("name", [*CATALOGUE, "every kind"])
@FAST
@given(data=st.data())
def test_invalid_inputs_are_invalid(name: str, data: st.DataObject) -> None:
    schema = EVERY_KIND if name == "every kind" else CATALOGUE[name]
    mutation = data.draw(invalid_inputs(schema))
    assert mutation.kind in MUTATION_KINDS
    assert not validator(schema).is_valid(mutation.value)


# --- schemas that cannot be used ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "error", "words"),
    [
        (
            {"properties": {"a": {"type": "object", "unevaluatedProperties": False}}},
            UnsupportedSchemaError,
            ["unevaluatedProperties", "#/properties/a"],
        ),
        ({"items": {"$dynamicRef": "#x"}}, UnsupportedSchemaError, ["$dynamicRef", "#/items"]),
        ({"$ref": "https://example.com/other.json"}, UnsupportedSchemaError, ["$ref", "remote"]),
        ({"dependencies": {"a": ["b"]}}, UnsupportedSchemaError, ["dependencies"]),
        ({"type": "object", "minProperties": "2"}, InvalidSchemaError, ["minProperties"]),
        ({"$ref": "#/$defs/missing"}, InvalidSchemaError, ["#/$defs/missing"]),
        ({"$schema": "https://example.com/dialect"}, UnsupportedSchemaError, ["$schema"]),
        ({"properties": {"a": {"$ref": "#/properties/a"}}}, InvalidSchemaError, ["loops"]),
        ({"enum": []}, UnsatisfiableSchemaError, ["enum"]),
        ({"not": {}}, UnsatisfiableSchemaError, ["no type"]),
        (
            {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 3},
            UnsatisfiableSchemaError,
            ["3 items"],
        ),
        ({"type": "integer", "minimum": 5, "maximum": 3}, UnsatisfiableSchemaError, ["bounds"]),
        (
            {"type": "object", "required": ["x"], "additionalProperties": False},
            UnsatisfiableSchemaError,
            ["'x'"],
        ),
    ],
)
def test_unusable_schemas_are_rejected_by_name(
    schema: Any, error: type[ValueError], words: list[str]
) -> None:
    with pytest.raises(error) as raised:
        valid_inputs(schema)
    assert all(word in str(raised.value) for word in words), str(raised.value)


def test_keywords_of_skips_property_names() -> None:
    schema = {
        "type": "object",
        "properties": {"minimum": {"type": "integer", "minimum": 0}, "enum": {"enum": [1]}},
        "$defs": {"x": {"pattern": "a"}},
    }
    assert keywords_of(schema) == {"type", "properties", "minimum", "enum", "$defs", "pattern"}


_VARIED = {
    "type": "object",
    "properties": {
        "unit": {"enum": ["cm", "in", "ft"]},
        "count": {"type": "integer", "minimum": 1, "maximum": 5},
        "label": {"type": "string"},
        "exact": {"type": "boolean"},
    },
    "required": ["unit", "count"],
}


def _served(*inputs: dict[str, Any]) -> Served:
    served = Served()
    for value in inputs:
        served.add(value)
    return served


def _plan(schema: Any, value: Any, served: Served) -> dict[str, tuple[Any, list[Any]]]:
    return {
        variation.kind: (variation.value, list(variation.confirmations))
        for variation in variations(schema, value, served)
    }


def test_a_variation_changes_one_declared_thing_and_is_confirmed_in_other_served_inputs() -> None:
    """The bound's inside neighbour, a served member of the enum, and an undeclared property
    left out, each with the same value put into the served inputs that differ most from it."""
    near = {"unit": "in", "count": 2, "label": "b"}
    far = {"unit": "cm", "count": 3, "label": "x", "exact": False}
    value = {"unit": "ft", "count": 5, "label": "b", "extra": 1}
    plan = _plan(_VARIED, value, _served(near, far))
    assert plan["bound"] == ({**value, "count": 4}, [{**far, "count": 5}, {**near, "count": 5}])
    assert plan["enum"] == (
        {**value, "unit": "cm"},
        [{**far, "unit": "ft"}, {**near, "unit": "ft"}],
    )
    assert plan["extra"] == (
        {k: v for k, v in value.items() if k != "extra"},
        [
            {**far, "extra": 1},
            {**near, "extra": 1},
        ],
    )
    # Where the bound's neighbour is refused too: a bisection from the nearest value served.
    assert plan["cap"] == ({**value, "count": 3}, [{**far, "count": 5}, {**near, "count": 5}])
    assert set(plan) == {"bound", "enum", "extra", "cap"}  # 'label' is served: not optional


def test_what_the_tool_served_at_a_place_is_not_varied() -> None:
    """A value served elsewhere is servable: its refusal here is about the rest of the input."""
    value = {"unit": "ft", "count": 5, "extra": 1}
    served = _served({"unit": "ft", "count": 5, "extra": 2}, {"unit": "cm", "count": 1})
    assert _plan(_VARIED, value, served) == {}


def test_an_optional_property_is_confirmed_with_the_values_its_schema_names() -> None:
    """Both booleans: the other one in the refused input, the first in a served one; a
    property with no named value (a free string) is not judged."""
    value = {"unit": "cm", "count": 2, "exact": True, "label": "tomorrow"}
    context = {"unit": "in", "count": 3}
    plan = _plan(_VARIED, value, _served(context))
    without = {k: v for k, v in value.items() if k != "exact"}
    assert plan["optional"] == (without, [{**value, "exact": False}, {**context, "exact": True}])
    labels = [v for v in variations(_VARIED, value, _served(context)) if "label" in v.said]
    assert labels == []


def test_a_refusal_with_nothing_to_confirm_it_is_not_varied() -> None:
    """No served input to put the value into: nothing tells the value from the rest."""
    closed = {**_VARIED, "additionalProperties": False}
    assert variations(closed, {"unit": "cm", "count": 5}, Served()) == []


def _bisect(cap: Cap, served: Any, refused: Any, serves: Any) -> tuple[Any, Any, int]:
    """Bisect as the engine does, with ``serves`` as the tool: the last value served, the first
    refused past it, and the calls made."""
    calls = 0
    while (middle := cap.between(served, refused)) is not None:
        calls += 1
        served, refused = (middle, refused) if serves(middle) else (served, middle)
    return served, cap.past(served), calls


_CAPPED = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 100}}}


def _cap(declared: dict[str, Any], item: Any, *served: Any) -> Cap:
    cap = Cap.of("n", declared, item, _served(*({"n": value} for value in served)))
    assert cap is not None
    return cap


def test_an_integer_bound_is_found_exactly_in_logarithmic_calls() -> None:
    cap = _cap({"type": "integer", "maximum": 100}, 100, 3)
    assert _bisect(cap, 3, 100, lambda n: n <= 50) == (50, 51, 7)
    assert cap.said(50) == "refuses above 50" and cap.declared == "maximum 100"


def test_a_minimum_is_bisected_from_above() -> None:
    cap = _cap({"type": "integer", "minimum": -1000}, -1000, 0)
    served, past, _ = _bisect(cap, 0, -1000, lambda n: n >= -7)
    assert (served, past, cap.said(served)) == (-7, -8, "refuses below -7")


def test_a_number_without_a_step_is_found_to_a_tolerance() -> None:
    cap = _cap({"type": "number", "maximum": 10.0}, 10.0, 0.5)
    served, past, calls = _bisect(cap, 0.5, 10.0, lambda n: n <= math.pi)
    assert served <= math.pi < past and past - served <= 10.0 * 1e-3 and calls <= 16


def test_a_step_other_than_one_keeps_values_on_it() -> None:
    cap = _cap({"type": "number", "maximum": 10, "multipleOf": 0.5}, 10, 1)
    served, past, _ = _bisect(cap, 1, 10, lambda n: n <= 4)
    assert (served, past) == (4, 4.5)


def test_a_maximum_length_is_bisected_keeping_the_refused_strings_start() -> None:
    declared = {"type": "string", "maxLength": 64}
    refused = "abcdefghij" * 6
    cap = _cap(declared, refused, "xy")
    assert cap.inside({"n": refused}, _served({"n": "xy"})) == [{"n": "ab"}]
    served, past, _ = _bisect(cap, "ab", refused, lambda text: len(text) <= 20)
    assert (served, past) == (refused[:20], refused[:21])
    assert cap.said(served) == "refuses more than 20 characters"


def test_a_minimum_left_undeclared_is_bisected_from_the_refused_value() -> None:
    """A page size refused at 0 and below, served at 2000: "refuses below 1", though the schema
    declares no minimum."""
    cap = _cap({"type": "integer"}, -1000, 2000)
    served, past, _ = _bisect(cap, 2000, -1000, lambda n: n >= 1)
    assert (served, past, cap.said(served)) == (1, 0, "refuses below 1")
    assert cap.declared == "no minimum"


def test_no_cap_is_looked_for_without_a_served_value_inside_or_a_declared_bound() -> None:
    # 60 lies among values served: no bound lies between it and them.
    served = _served({"n": 3}, {"n": 70})
    assert Cap.of("n", {"type": "integer", "maximum": 100}, 60, served) is None
    # No maximum declared: what a tool serves ends where its world does (the ids it holds).
    assert Cap.of("n", {"type": "integer"}, 60, _served({"n": 7})) is None
    assert Cap.of("n", {"type": "integer", "exclusiveMinimum": -5}, -3, _served({"n": 7})) is None
    assert Cap.of("n", {"type": "string"}, "long", _served({"n": "s"})) is None
    assert Cap.of("n", {"type": "boolean"}, True, _served({"n": False})) is None


def test_the_start_is_the_served_value_nearest_the_refused_one() -> None:
    served = _served({"n": 3}, {"n": 40}, {"n": 60})
    cap = Cap.of("n", _CAPPED["properties"]["n"], 80, served)
    assert cap is not None
    assert cap.inside({"n": 80}, served) == [{"n": 60}, {"n": 40}]
    assert cap.lies_between(70, 60, 80) and not cap.lies_between(85, 60, 80)
    assert cap.within(50, 2) == [49, 48] and cap.past(50) == 51


def test_a_value_past_the_refused_one_served_rules_a_cap_out() -> None:
    """A tool that knows the codes 200, 404 and 500 refuses 450 for its domain, not a cap."""
    served = _served({"n": 200}, {"n": 404}, {"n": 500})
    assert Cap.of("n", {"type": "integer", "maximum": 599}, 450, served) is None
    assert Cap.of("n", {"type": "integer", "maximum": 599}, 550, served) is not None


@pytest.mark.parametrize(
    ("description", "named"),
    [
        ("Run a command. Allowed commands: echo, cat, ls.", ["echo", "cat", "ls"]),
        ('The unit, e.g. `cm` or "in". Don\'t guess.', ["cm", "in"]),
        ("Mode: one of fast|slow|auto", ["fast", "slow", "auto"]),
        ("Fetch a URL such as https://example.com/a.txt.", ["https://example.com/a.txt"]),
        ("How many, for example 10 or 2.5.", [10, 2.5]),
        ("Supported formats are png and jpeg; others fail.", ["png", "jpeg"]),
        ("The user's items; it is optional to give the store's name.", []),
        ("Any text, as long as the model likes: a long sentence it writes itself", []),
    ],
)
def test_the_values_a_description_names_are_found(description: str, named: list[Any]) -> None:
    assert described_values(description, None) == named


def test_the_descriptions_of_the_schema_count_too_each_value_once() -> None:
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "description": "One of: cm, in."},
            "label": {"type": "string", "description": "Shown as `cm` in the margin."},
        },
    }
    assert described_values("Measure, e.g. 'in'.", schema) == ["in", "cm"]


def test_the_servers_instructions_count_after_the_tools_own_descriptions() -> None:
    instructions = "Workbooks live here; use relative paths, such as 'reports/q1.xlsx' or `cm`."
    schema = {"type": "object", "properties": {"unit": {"description": "e.g. `cm`"}}}
    assert described_values("Read a range.", schema, instructions) == ["cm", "reports/q1.xlsx"]


def test_of_a_servers_instructions_only_what_names_the_tool_or_its_properties_counts() -> None:
    instructions = (
        "Workbooks live in /srv; use paths relative to it, such as 'reports/q1.xlsx'.\n"
        "Set `EXCEL_MAX_MB` to limit sizes. Call describe_workbook first, e.g. 'a.xlsx'."
    )
    path = {"type": "object", "properties": {"path": {"type": "string"}}}
    assert told_of(instructions, "create_workbook", path).splitlines() == [
        "Workbooks live in /srv; use paths relative to it, such as 'reports/q1.xlsx'."
    ]
    told = told_of(instructions, "describe_workbook", {"type": "object"})
    assert described_values("", None, told) == ["a.xlsx"]
    assert told_of(instructions, "list_sheets", {"type": "object"}) == ""


def test_a_described_value_is_placed_as_a_hint_of_its_source() -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    hints = Hints.of({"description": described_values("Allowed commands: echo, cat.", schema)})
    placed = [e for e in hinted_inputs(schema, hints, 10) if e.source == "description"]
    assert [e.value for e in placed] == [{"command": "echo"}, {"command": "cat"}]
    assert "a value the tool's descriptions (or its server's instructions) name" in placed[0].label


def test_strings_are_built_of_a_tools_separators_and_words() -> None:
    """A parser of key=value;... meets a chunk with two '=' and the other awkward shapes."""
    built = structured_strings([";", "=", "mode", "fast", 3])
    assert {"mode=fast;a=mode=fast", "mode=fast=a", "mode=;=fast", "mode=fast;", ";;mode="} <= set(
        built
    )
    assert all(";" in text or "=" in text for text in built)
    assert len(built) == len(set(built)) <= 48


def test_separators_inside_a_literal_or_a_described_value_count_and_words_come_from_it() -> None:
    built = structured_strings(["unit=cm;scale=2"])
    assert "unit=cm;scale=unit=cm" in built


def test_no_string_is_built_without_a_separator() -> None:
    assert structured_strings(["hello", "world", 42]) == []


def test_strings_that_break_path_and_text_handling_come_last_among_the_boundaries() -> None:
    """A NUL, the parent directory, a trailing slash and one past a file name's 255 characters,
    after every other change of every property; never a lone surrogate, which is no Unicode
    text."""
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["path"],
    }
    examples = boundary_inputs(schema)
    paths = [example.value.get("path") for example in examples]
    assert paths[-4:] == ["\x00", "..", "a/", "a" * 256]
    assert all("count" not in example.value for example in examples[-4:])
    assert not any(
        isinstance(path, str) and any("\ud800" <= char <= "\udfff" for char in path)
        for path in paths
    )
    # A schema that forbids them keeps only those it allows.
    narrow = {**schema, "properties": {"path": {"type": "string", "minLength": 2}}}
    edges = [example.value["path"] for example in boundary_inputs(narrow)][-3:]
    assert edges == ["..", "a/", "a" * 256]
