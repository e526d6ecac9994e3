"""Tests of the tool_use reference runtime: registry, decorator, chains and the validator."""

from __future__ import annotations

import json
import time
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axm_runtime.tool_use as tool_use
from axm_runtime.examples.tool_use_tools import json_pointer_lookup
from axm_runtime.tool_use import (
    SUPPORTED_KEYWORDS,
    ChainResult,
    ChainStep,
    Result,
    ResultStatus,
    ToolChain,
    ToolDefinition,
    ToolEntry,
    ToolRegistry,
    ValidationResult,
    tool,
    validate_input,
    validate_output,
)

GREET_SCHEMA = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}},
}


def greet(data: dict[str, Any]) -> dict[str, Any]:
    return {"message": f"Hello, {data['name']}!"}


def make_registry(*entries: ToolEntry) -> ToolRegistry:
    registry = ToolRegistry()
    for entry in entries:
        registry.register(entry)
    return registry


def entry(name: str, handler: Any = greet, **fields: Any) -> ToolEntry:
    return ToolEntry(name=name, description=f"the {name} tool", handler=handler, **fields)


def entry_of(fn: Any) -> ToolEntry:
    assert isinstance(fn.tool_entry, ToolEntry)
    return fn.tool_entry


def errors_of(data: Any, schema: Any) -> list[str]:
    return validate_input(data, schema).errors


def is_valid(data: Any, schema: Any) -> bool:
    return validate_input(data, schema).valid


# ---------------------------------------------------------------------------------------------
# Public surface
# ---------------------------------------------------------------------------------------------


def test_public_names() -> None:
    assert sorted(tool_use.__all__) == sorted(
        [
            "ValidationResult",
            "validate_input",
            "validate_output",
            "ToolEntry",
            "ToolRegistry",
            "tool",
            "ChainStep",
            "ChainResult",
            "ToolChain",
            "Result",
            "ResultStatus",
            "ToolDefinition",
        ]
    )


def test_supported_keywords_are_every_assertion_of_2020_12() -> None:
    seed = {"type", "required", "properties", "items", "enum", "minimum", "maximum"}
    seed |= {"minLength", "maxLength", "minItems", "maxItems", "additionalProperties"}
    later = {"unevaluatedProperties", "dependentSchemas", "if", "then", "$dynamicRef"}
    later |= {"contains", "minContains", "propertyNames", "prefixItems", "$ref"}
    assert seed | later <= SUPPORTED_KEYWORDS
    assert not {"$defs", "format", "title", "default"} & SUPPORTED_KEYWORDS


# ---------------------------------------------------------------------------------------------
# Result, ResultStatus, ToolDefinition
# ---------------------------------------------------------------------------------------------


def test_result_status_values() -> None:
    assert [status.value for status in ResultStatus] == [
        "success",
        "failure",
        "partial",
        "skipped",
        "timeout",
    ]


@pytest.mark.parametrize("status", list(ResultStatus))
def test_result_ok_only_on_success(status: ResultStatus) -> None:
    assert Result(status=status).ok is (status is ResultStatus.SUCCESS)


def test_result_defaults_and_to_dict() -> None:
    result = Result(status=ResultStatus.PARTIAL, data={"a": 1}, errors=["e"], duration_ms=2.5)
    assert (result.message, result.metadata) == ("", {})
    assert result.to_dict() == {
        "status": "partial",
        "data": {"a": 1},
        "message": "",
        "errors": ["e"],
        "duration_ms": 2.5,
        "metadata": {},
    }
    assert Result(status=ResultStatus.SUCCESS).duration_ms == 0.0


def test_tool_definition_to_dict() -> None:
    definition = ToolDefinition(name="t", description="d", module="m", tags=["x"])
    assert definition.to_dict() == {
        "name": "t",
        "description": "d",
        "input_schema": {},
        "output_schema": {},
        "module": "m",
        "tags": ["x"],
    }


# ---------------------------------------------------------------------------------------------
# ToolEntry
# ---------------------------------------------------------------------------------------------


def test_tool_entry_defaults() -> None:
    greet_entry = ToolEntry(name="greet", description="Say hello", handler=greet)
    assert (greet_entry.input_schema, greet_entry.output_schema, greet_entry.tags) == ({}, {}, [])


def test_tool_entry_to_tool_definition() -> None:
    greet_entry = entry("greet", input_schema=GREET_SCHEMA, tags=["social"])
    definition = greet_entry.to_tool_definition()
    assert definition == ToolDefinition(
        name="greet",
        description="the greet tool",
        input_schema=GREET_SCHEMA,
        output_schema={},
        module="tool_use",
        tags=["social"],
    )
    assert greet_entry.to_tool_definition(module="mcp").module == "mcp"


def test_tool_entry_to_dict_excludes_handler() -> None:
    assert entry("greet", tags=["a"]).to_dict() == {
        "name": "greet",
        "description": "the greet tool",
        "input_schema": {},
        "output_schema": {},
        "tags": ["a"],
    }


# ---------------------------------------------------------------------------------------------
# ToolRegistry: registration and lookup
# ---------------------------------------------------------------------------------------------


def test_register_get_contains_len() -> None:
    registry = ToolRegistry()
    assert len(registry) == 0
    greet_entry = entry("greet")
    registry.register(greet_entry)
    assert registry.get("greet") is greet_entry
    assert registry.get("missing") is None
    assert "greet" in registry
    assert "missing" not in registry
    assert len(registry) == 1


def test_register_duplicate_raises_value_error() -> None:
    registry = make_registry(entry("greet"))
    with pytest.raises(ValueError, match="'greet' is already registered"):
        registry.register(entry("greet"))


def test_unregister() -> None:
    registry = make_registry(entry("greet"))
    assert registry.unregister("greet") is True
    assert registry.unregister("greet") is False
    assert "greet" not in registry
    registry.register(entry("greet"))  # the name is free again


def test_list_and_list_names_are_sorted() -> None:
    registry = make_registry(entry("charlie"), entry("alpha"), entry("bravo"))
    assert [e.name for e in registry.list()] == ["alpha", "bravo", "charlie"]
    assert registry.list_names() == ["alpha", "bravo", "charlie"]


def test_repr() -> None:
    assert repr(make_registry(entry("b"), entry("a"))) == "ToolRegistry(tools=['a', 'b'])"


@pytest.fixture
def catalogue() -> ToolRegistry:
    return make_registry(
        entry("read_file", tags=["fs", "read"]),
        entry("write_file", tags=["fs", "write"]),
        entry("HTTP_Get", tags=["net", "read"]),
        entry("untagged"),
    )


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        ({}, ["HTTP_Get", "read_file", "untagged", "write_file"]),
        ({"name_contains": "FILE"}, ["read_file", "write_file"]),
        ({"name_contains": "http"}, ["HTTP_Get"]),
        ({"name_contains": "nothing"}, []),
        ({"tags": ["read", "write"]}, ["HTTP_Get", "read_file", "write_file"]),
        ({"tags": ["fs", "read"], "match_all_tags": True}, ["read_file"]),
        ({"tags": ["fs", "net"], "match_all_tags": True}, []),
        ({"tags": []}, ["HTTP_Get", "read_file", "untagged", "write_file"]),
        ({"name_contains": "get", "tags": ["read"]}, ["HTTP_Get"]),
        ({"name_contains": "write", "tags": ["read"]}, []),
    ],
)
def test_search(catalogue: ToolRegistry, criteria: dict[str, Any], expected: list[str]) -> None:
    assert [e.name for e in catalogue.search(**criteria)] == expected


# ---------------------------------------------------------------------------------------------
# ToolRegistry.invoke
# ---------------------------------------------------------------------------------------------


def test_invoke_success() -> None:
    registry = make_registry(entry("greet", input_schema=GREET_SCHEMA))
    result = registry.invoke("greet", {"name": "World"})
    assert result.ok
    assert result.status is ResultStatus.SUCCESS
    assert result.data == {"message": "Hello, World!"}
    assert result.errors == []


def test_invoke_passes_the_input_as_one_positional_argument() -> None:
    received: list[tuple[Any, ...]] = []

    def handler(*args: Any, **kwargs: Any) -> None:
        received.append((args, kwargs))

    payload = {"name": "World"}
    make_registry(entry("t", handler=handler)).invoke("t", payload)
    assert received == [((payload,), {})]
    assert received[0][0][0] is payload


def test_invoke_unknown_tool() -> None:
    result = ToolRegistry().invoke("nope", {})
    assert result.status is ResultStatus.FAILURE
    assert any("nope" in error for error in result.errors)
    assert "nope" in result.message


def test_invalid_input_fails_without_calling_the_handler() -> None:
    calls: list[Any] = []
    registry = make_registry(entry("greet", handler=calls.append, input_schema=GREET_SCHEMA))
    result = registry.invoke("greet", {"name": 42, "extra": True})
    assert result.status is ResultStatus.FAILURE
    assert result.errors == ["/name: 42 is not of type 'string'"]
    assert calls == []
    assert registry.invoke("greet", {}).errors == ["/: 'name' is a required property"]


def test_validate_false_skips_both_schemas() -> None:
    registry = make_registry(
        entry(
            "t", handler=lambda data: 5, input_schema=GREET_SCHEMA, output_schema={"type": "null"}
        )
    )
    result = registry.invoke("t", {"name": 1}, validate=False)
    assert result.status is ResultStatus.SUCCESS
    assert result.data == 5


def test_handler_exception_is_a_failure_naming_it() -> None:
    def broken(data: Any) -> None:
        raise ValueError("disk on fire")

    result = make_registry(entry("broken", handler=broken)).invoke("broken", {})
    assert result.status is ResultStatus.FAILURE
    assert result.errors == ["ValueError: disk on fire"]
    assert "ValueError" in result.message
    assert "disk on fire" in result.message
    assert result.duration_ms > 0


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
def test_base_exceptions_propagate(exception: type[BaseException]) -> None:
    def interrupted(data: Any) -> None:
        raise exception

    with pytest.raises(exception):
        make_registry(entry("t", handler=interrupted)).invoke("t", {})


def test_output_violating_its_schema_is_partial_and_keeps_the_data() -> None:
    output_schema = {"type": "object", "required": ["count"]}
    registry = make_registry(entry("greet", output_schema=output_schema))
    result = registry.invoke("greet", {"name": "World"})
    assert result.status is ResultStatus.PARTIAL
    assert not result.ok
    assert result.data == {"message": "Hello, World!"}
    assert result.errors == ["/: 'count' is a required property"]


def test_empty_schemas_are_not_checked() -> None:
    registry = make_registry(entry("echo", handler=lambda data: data))
    assert registry.invoke("echo", "not even a dict").ok


def test_duration_is_measured() -> None:
    def slow(data: Any) -> dict[str, Any]:
        time.sleep(0.01)
        return {}

    result = make_registry(entry("slow", handler=slow)).invoke("slow", {})
    assert result.ok
    assert 10 <= result.duration_ms < 10_000
    for failed in (
        ToolRegistry().invoke("x"),
        make_registry(entry("g", input_schema=GREET_SCHEMA)).invoke("g", {}),
    ):
        assert isinstance(failed.duration_ms, float)
        assert failed.duration_ms >= 0


# ---------------------------------------------------------------------------------------------
# @tool
# ---------------------------------------------------------------------------------------------


def test_tool_without_registry_returns_the_function_with_its_entry() -> None:
    def add(data: dict[str, Any]) -> dict[str, Any]:
        return {"sum": data["a"] + data["b"]}

    schema = {
        "type": "object",
        "required": ["a", "b"],
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    }
    decorated = tool(name="add", description="Add two numbers", input_schema=schema)(add)
    assert decorated is add
    assert add({"a": 1, "b": 2}) == {"sum": 3}
    tool_entry = entry_of(add)
    assert tool_entry == ToolEntry(
        name="add", description="Add two numbers", handler=add, input_schema=schema
    )

    my_registry = ToolRegistry()
    my_registry.register(tool_entry)  # deferred registration
    assert my_registry.invoke("add", {"a": 1, "b": 2.5}).data == {"sum": 3.5}
    assert my_registry.invoke("add", {"a": True, "b": 2}).status is ResultStatus.FAILURE


def test_tool_with_registry_registers() -> None:
    registry = ToolRegistry()

    @tool(name="shout", tags=["text"], output_schema={"type": "string"}, registry=registry)
    def shout(data: dict[str, Any]) -> str:
        """Upper-case a text.

        Longer explanation that is not part of the description.
        """
        return str(data["text"]).upper()

    assert registry.get("shout") is entry_of(shout)
    assert registry.invoke("shout", {"text": "hi"}).data == "HI"
    assert entry_of(shout).description == "Upper-case a text."
    assert entry_of(shout).tags == ["text"]
    with pytest.raises(ValueError):
        tool(name="shout", registry=registry)(shout)


def test_tool_description_from_docstring() -> None:
    def multi_line(data: Any) -> None:
        """Fetch a page
        over HTTP.

        Details.
        """

    def undocumented(data: Any) -> None:
        pass

    def documented(data: Any) -> None:
        """Ignored because a description is given."""

    assert entry_of(tool(name="a")(multi_line)).description == "Fetch a page over HTTP."
    assert entry_of(tool(name="b")(undocumented)).description == ""
    explicit = tool(name="c", description="explicit")(documented)
    assert entry_of(explicit).description == "explicit"


# ---------------------------------------------------------------------------------------------
# Chains
# ---------------------------------------------------------------------------------------------


def test_chain_step_and_result_to_dict() -> None:
    step = ChainStep(tool_name="parse", input_mapping={"content": "raw.body"}, output_key="parsed")
    assert step.to_dict() == {
        "tool_name": "parse",
        "input_mapping": {"content": "raw.body"},
        "output_key": "parsed",
    }
    assert ChainStep(tool_name="x").to_dict() == {
        "tool_name": "x",
        "input_mapping": {},
        "output_key": "",
    }
    outcome = ChainResult(step_results=[Result(status=ResultStatus.SUCCESS, data=1)])
    assert outcome.to_dict() == {
        "success": True,
        "context": {},
        "step_results": [Result(status=ResultStatus.SUCCESS, data=1).to_dict()],
        "errors": [],
        "duration_ms": 0.0,
    }


@pytest.fixture
def web() -> ToolRegistry:
    return make_registry(
        entry(
            "fetch",
            handler=lambda data: {"status": 200, "body": f"<p>{data['url']}</p>"},
            input_schema={"type": "object", "required": ["url"]},
        ),
        entry(
            "parse",
            handler=lambda data: {"text": data["content"].removeprefix("<p>").removesuffix("</p>")},
            input_schema={"properties": {"content": {"type": "string"}}, "required": ["content"]},
        ),
        entry("count", handler=lambda data: len(data["text"])),
        entry("fail", handler=lambda data: 1 / 0),
        entry("echo", handler=lambda data: dict(data)),
    )


def test_chain_fetch_then_parse(web: ToolRegistry) -> None:
    chain = ToolChain(registry=web)
    chain.add_step(ChainStep(tool_name="fetch", output_key="raw"))
    chain.add_step(
        ChainStep(tool_name="parse", input_mapping={"content": "raw.body"}, output_key="parsed")
    )
    initial = {"url": "https://example.com"}
    outcome = chain.execute(initial)
    assert outcome.success
    assert outcome.errors == []
    assert outcome.context == {
        "url": "https://example.com",
        "raw": {"status": 200, "body": "<p>https://example.com</p>"},
        "parsed": {"text": "https://example.com"},
    }
    assert [r.status for r in outcome.step_results] == [ResultStatus.SUCCESS] * 2
    assert initial == {"url": "https://example.com"}  # the caller's dict is not touched
    assert outcome.duration_ms >= 0


def test_chain_merges_dict_outputs_and_stores_others_under_the_tool_name(
    web: ToolRegistry,
) -> None:
    chain = ToolChain(web).add_step(ChainStep("parse")).add_step(ChainStep("count"))
    outcome = chain.execute({"content": "<p>abc</p>"})
    assert outcome.context == {"content": "<p>abc</p>", "text": "abc", "count": 3}


def test_chain_without_mapping_passes_the_whole_context(web: ToolRegistry) -> None:
    outcome = ToolChain(web).add_step(ChainStep("echo", output_key="seen")).execute({"a": 1})
    assert outcome.context == {"a": 1, "seen": {"a": 1}}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a", {"b": {"c": 3}}),
        ("a.b", {"c": 3}),
        ("a.b.c", 3),
        ("a.b.c.d", None),
        ("a.x.c", None),
        ("missing", None),
        ("list.0", None),
    ],
)
def test_chain_dot_notation(web: ToolRegistry, source: str, expected: Any) -> None:
    step = ChainStep("echo", input_mapping={"value": source}, output_key="out")
    outcome = ToolChain(web).add_step(step).execute({"a": {"b": {"c": 3}}, "list": [1]})
    assert outcome.context["out"] == {"value": expected}


def test_chain_stops_on_first_failure(web: ToolRegistry) -> None:
    chain = ToolChain(web)
    chain.add_step(ChainStep("fail")).add_step(ChainStep("echo", output_key="after"))
    outcome = chain.execute({"a": 1})
    assert not outcome.success
    assert len(outcome.step_results) == 1
    assert outcome.context == {"a": 1}
    assert outcome.errors[0] == "ZeroDivisionError: division by zero"
    assert "step 0 ('fail') failed" in outcome.errors[1]


def test_chain_continues_after_failure_when_asked(web: ToolRegistry) -> None:
    chain = ToolChain(web)
    chain.add_step(ChainStep("parse", output_key="parsed"))  # fails: no "content"
    chain.add_step(ChainStep("echo", output_key="after"))
    outcome = chain.execute({"a": 1}, stop_on_failure=False)
    assert not outcome.success
    assert [r.status for r in outcome.step_results] == [ResultStatus.FAILURE, ResultStatus.SUCCESS]
    assert outcome.context == {"a": 1, "after": {"a": 1}}
    assert "/: 'content' is a required property" in outcome.errors


def test_chain_with_partial_step_fails_and_does_not_store_it() -> None:
    registry = make_registry(entry("odd", handler=lambda data: 2, output_schema={"multipleOf": 3}))
    outcome = ToolChain(registry).add_step(ChainStep("odd", output_key="x")).execute()
    assert not outcome.success
    assert outcome.step_results[0].status is ResultStatus.PARTIAL
    assert outcome.context == {}


def test_chain_validate_lists_missing_tools(web: ToolRegistry) -> None:
    chain = ToolChain(web).add_step(ChainStep("fetch")).add_step(ChainStep("ghost"))
    checked = chain.validate()
    assert checked == ValidationResult(
        valid=False, errors=["step 1: tool 'ghost' is not registered"]
    )
    assert ToolChain(web).add_step(ChainStep("fetch")).validate() == ValidationResult()


def test_chain_with_missing_tool_runs_nothing(web: ToolRegistry) -> None:
    calls: list[Any] = []
    web.register(entry("record", handler=calls.append))
    chain = ToolChain(web).add_step(ChainStep("record")).add_step(ChainStep("ghost"))
    outcome = chain.execute({"a": 1})
    assert not outcome.success
    assert outcome.step_results == []
    assert outcome.errors == ["step 1: tool 'ghost' is not registered"]
    assert outcome.context == {"a": 1}
    assert calls == []


def test_chain_without_tool_validation_fails_at_the_missing_step(web: ToolRegistry) -> None:
    chain = ToolChain(web).add_step(ChainStep("echo", output_key="e")).add_step(ChainStep("ghost"))
    outcome = chain.execute({"a": 1}, validate_tools=False)
    assert not outcome.success
    assert [r.status for r in outcome.step_results] == [ResultStatus.SUCCESS, ResultStatus.FAILURE]
    assert outcome.context == {"a": 1, "e": {"a": 1}}
    assert any("ghost" in error for error in outcome.errors)


def test_empty_chain_succeeds_with_its_input(web: ToolRegistry) -> None:
    outcome = ToolChain(web).execute({"a": 1})
    assert outcome.success
    assert outcome.context == {"a": 1}


def test_chain_steps_len_repr_clear(web: ToolRegistry) -> None:
    chain = ToolChain(web)
    assert chain.add_step(ChainStep("fetch")) is chain
    chain.add_step(ChainStep("parse"))
    steps = chain.steps
    steps.clear()  # a copy: the chain keeps its steps
    assert [step.tool_name for step in chain.steps] == ["fetch", "parse"]
    assert len(chain) == 2
    assert repr(chain) == "ToolChain(steps=['fetch', 'parse'])"
    chain.clear()
    assert len(chain) == 0


# ---------------------------------------------------------------------------------------------
# ValidationResult
# ---------------------------------------------------------------------------------------------


def test_validation_result_merge_and_to_dict() -> None:
    ok = ValidationResult()
    bad = ValidationResult(valid=False, errors=["x"])
    worse = ValidationResult(valid=False, errors=["y"])
    assert ok.merge(ok) == ValidationResult(valid=True, errors=[])
    assert ok.merge(bad) == ValidationResult(valid=False, errors=["x"])
    assert bad.merge(worse) == ValidationResult(valid=False, errors=["x", "y"])
    assert bad.merge(worse) is not bad
    assert bad.errors == ["x"]  # merge does not modify either side
    assert bad.to_dict() == {"valid": False, "errors": ["x"]}
    assert ok.to_dict() == {"valid": True, "errors": []}


# ---------------------------------------------------------------------------------------------
# Validator: JSON semantics
# ---------------------------------------------------------------------------------------------


def test_seed_example_schema() -> None:
    schema = {
        "type": "object",
        "required": ["name", "count"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "count": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    assert validate_input({"name": "a", "count": 0, "tags": ["x"]}, schema) == ValidationResult()
    assert errors_of({"name": "", "count": -1, "tags": ["x", 2]}, schema) == [
        "/name: '' should be non-empty",
        "/count: -1 is less than the minimum of 0",
        "/tags/1: 2 is not of type 'string'",
    ]


@pytest.mark.parametrize("validate", [validate_input, validate_output])
def test_error_messages_name_the_location(validate: Any) -> None:
    schema = {
        "type": "object",
        "required": ["path"],
        "properties": {"limit": {"type": "integer", "minimum": 1}},
        "additionalProperties": False,
    }
    result = validate({"limit": 0, "a/b~c": 1}, schema)
    assert not result.valid
    assert result.errors == [
        "/: 'path' is a required property",
        "/limit: 0 is less than the minimum of 1",
        "/: additional properties ['a/b~c'] are not allowed",
    ]
    nested = validate(
        {"items": [{"n": "x"}]},
        {"properties": {"items": {"items": {"properties": {"n": {"type": "integer"}}}}}},
    )
    assert nested.errors == ["/items/0/n: 'x' is not of type 'integer'"]
    escaped = validate({"a/b~c": "x"}, {"additionalProperties": {"type": "integer"}})
    assert escaped.errors == ["/a~1b~0c: 'x' is not of type 'integer'"]


@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_numbers(value: bool) -> None:
    assert not is_valid(value, {"type": "integer"})
    assert not is_valid(value, {"type": "number"})
    assert is_valid(value, {"type": "boolean"})
    # Numeric keywords do not apply to a non-number.
    assert is_valid(value, {"minimum": 5, "maximum": -5, "multipleOf": 7})


@pytest.mark.parametrize(
    ("value", "integer"),
    [
        (1, True),
        (1.0, True),
        (-0.0, True),
        (1e308, True),
        (1.5, False),
        ("1", False),
        (None, False),
    ],
)
def test_integer_type(value: Any, integer: bool) -> None:
    assert is_valid(value, {"type": "integer"}) is integer


@pytest.mark.parametrize(
    ("value", "divisor", "multiple"),
    [
        (10, 5, True),
        (10, 3, False),
        (10**30, 10**10, True),
        (0.0075, 0.0001, True),
        (0.00751, 0.0001, False),
        (0.3, 0.1, True),
        (19.99, 0.01, True),
        (4.5, 1.5, True),
        (4, 1.5, False),
        (1e308, 0.123456789, False),
        (1e308, 1e-8, True),
        (12391239123, 1e-8, True),
        (7.0, 7, True),
    ],
)
def test_multiple_of(value: float, divisor: float, multiple: bool) -> None:
    assert is_valid(value, {"multipleOf": divisor}) is multiple


def test_multiple_of_rejects_non_finite_numbers() -> None:
    assert not is_valid(float("inf"), {"multipleOf": 2})
    assert not is_valid(float("nan"), {"multipleOf": 0.5})


def test_string_length_counts_code_points() -> None:
    assert is_valid("💩", {"maxLength": 1})
    assert is_valid("é", {"minLength": 1, "maxLength": 1})
    assert is_valid("e\u0301", {"minLength": 2})  # decomposed: two code points
    assert errors_of("日本語", {"maxLength": 2}) == ["/: '日本語' is too long"]


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, False, False),
        ([1, True], [1.0, True], True),
        ([True], [1], False),
        ({"a": 1.0}, {"a": 1}, True),
        ({"a": False}, {"a": 0}, False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1], {"0": 1}, False),
        ("1", 1, False),
    ],
)
def test_json_equality(a: Any, b: Any, equal: bool) -> None:
    assert is_valid(a, {"enum": [b]}) is equal
    assert is_valid(a, {"const": b}) is equal
    assert is_valid([a, b], {"uniqueItems": True}) is not equal


def test_empty_and_boolean_schemas() -> None:
    for data in (None, 0, "x", [1], {"a": 1}, True):
        assert validate_input(data, {}) == ValidationResult()
        assert validate_input(data, True) == ValidationResult()
        assert not is_valid(data, False)
    assert errors_of(3, False) == ["/: False schema does not allow 3"]
    assert is_valid({"a": 1}, {"properties": {"a": True, "b": False}})
    assert not is_valid({"b": 1}, {"properties": {"a": True, "b": False}})


def test_ignored_keywords() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/x",
        "title": "t",
        "description": "d",
        "default": 3,
        "examples": [1],
        "format": "email",
        "x-vendor": {"type": "integer"},
        "$defs": {"never": False},
    }
    assert is_valid("not an email", schema)


def test_prefix_items_and_items() -> None:
    schema = {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "null"}}
    assert is_valid(["a", 1, None, None], schema)
    assert is_valid(["a"], schema)
    assert errors_of([1, "a", 2], schema) == [
        "/0: 1 is not of type 'string'",
        "/1: 'a' is not of type 'integer'",
        "/2: 2 is not of type 'null'",
    ]
    assert errors_of(["a", 1, 2], {**schema, "items": False}) == [
        "/: Expected at most 2 items but found 1 extra: 2"
    ]


def test_pattern_properties_and_additional_properties() -> None:
    schema = {
        "properties": {"id": {"type": "integer"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": False,
    }
    assert is_valid({"id": 1, "x-a": "s"}, schema)
    assert errors_of({"id": 1, "x-a": 2, "other": 0}, schema) == [
        "/x-a: 2 is not of type 'string'",
        "/: additional properties ['other'] are not allowed",
    ]


def test_pattern_is_a_search_not_a_full_match() -> None:
    assert is_valid("xx42yy", {"pattern": "[0-9]+"})
    assert not is_valid("xx42yy", {"pattern": "^[0-9]+$"})
    assert errors_of("ab", {"pattern": "^a$"}) == ["/: 'ab' does not match '^a$'"]


def test_unicode_property_escapes() -> None:
    schema = {"pattern": "^\\p{Letter}+$"}
    assert is_valid("Grüße", schema)
    assert is_valid("π", schema)
    assert not is_valid("a1", schema)
    assert is_valid("12", {"pattern": "^\\P{L}+$"})
    assert is_valid("ab12", {"pattern": "^[\\p{Lu}\\p{Ll}0-9]+$"})
    assert is_valid("\\p{L}", {"pattern": "^\\\\p\\{L\\}$"})  # an escaped backslash stays literal


def test_combinators() -> None:
    one_of = {"oneOf": [{"type": "integer"}, {"minimum": 2}]}
    assert is_valid(1, one_of)
    assert is_valid(2.5, one_of)
    assert errors_of(3, one_of) == [
        "/: 3 is valid under each of {'minimum': 2}, {'type': 'integer'}"
    ]
    assert errors_of(1.5, one_of) == ["/: 1.5 is not valid under any of the given schemas"]
    any_of = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert is_valid(None, any_of)
    assert errors_of(1, any_of) == ["/: 1 is not valid under any of the given schemas"]
    assert errors_of([], {"not": {"type": "array"}}) == [
        "/: [] should not be valid under {'type': 'array'}"
    ]
    all_of = {"allOf": [{"minimum": 1}, {"maximum": 3}]}
    assert is_valid(2, all_of)
    assert errors_of(4, all_of) == ["/: 4 is greater than the maximum of 3"]


def test_object_and_array_counts() -> None:
    assert errors_of({"a": 1}, {"minProperties": 2}) == [
        "/: {'a': 1} does not have enough properties"
    ]
    assert not is_valid({"a": 1, "b": 2}, {"maxProperties": 1})
    assert errors_of([1], {"minItems": 2}) == ["/: [1] is too short"]
    assert errors_of([1, 2, 3], {"maxItems": 2}) == ["/: [1, 2, 3] is too long"]
    assert errors_of({"a": 1}, {"dependentRequired": {"a": ["b"]}}) == [
        "/: 'b' is a dependency of 'a'"
    ]
    assert is_valid({"b": 1}, {"dependentRequired": {"a": ["b"]}})


def test_exclusive_bounds() -> None:
    schema = {"exclusiveMinimum": 0, "exclusiveMaximum": 1}
    assert is_valid(0.5, schema)
    assert errors_of(0, schema) == ["/: 0 is less than or equal to the minimum of 0"]
    assert not is_valid(1, schema)


# ---------------------------------------------------------------------------------------------
# Validator: $ref
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"Foo": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/Foo"}}},
        {
            "definitions": {"Foo": {"type": "integer"}},
            "properties": {"a": {"$ref": "#/definitions/Foo"}},
        },
        {"$defs": {"t~f": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/t~0f"}}},
        {"$defs": {"s/f": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/s~1f"}}},
        {"$defs": {"p%f": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/p%25f"}}},
        {"$defs": {'q"f': {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/q%22f"}}},
        {
            "properties": {
                "a": {"$ref": "#/properties/b/anyOf/0"},
                "b": {"anyOf": [{"type": "integer"}]},
            }
        },
    ],
)
def test_ref_pointers(schema: dict[str, Any]) -> None:
    assert is_valid({"a": 1}, schema)
    assert errors_of({"a": "x"}, schema) == ["/a: 'x' is not of type 'integer'"]


def test_ref_to_root_recursion() -> None:
    tree = {
        "type": "object",
        "properties": {"value": {"type": "integer"}, "children": {"items": {"$ref": "#"}}},
    }
    assert is_valid({"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}, tree)
    assert errors_of({"value": 1, "children": [{"children": [{"value": "x"}]}]}, tree) == [
        "/children/0/children/0/value: 'x' is not of type 'integer'"
    ]


def test_ref_siblings_apply_too() -> None:
    schema = {"$defs": {"int": {"type": "integer"}}, "$ref": "#/$defs/int", "maximum": 5}
    assert is_valid(3, schema)
    assert not is_valid(6, schema)


@pytest.mark.parametrize(
    "ref",
    ["#/$defs/missing", "#/prefixItems/5", "other.json#/a", "#anchor", "https://example.com/s"],
)
def test_unresolvable_ref_is_an_error_naming_it(ref: str) -> None:
    (error,) = errors_of(1, {"prefixItems": [True], "$ref": ref})
    assert error.startswith("/: cannot resolve $ref")
    assert repr(ref) in error


def test_circular_ref_is_reported_not_looped() -> None:
    schema = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
        "$ref": "#/$defs/a",
    }
    loops = ["/: the data is nested too deeply, or the schema's references loop"]
    assert errors_of(1, schema) == loops
    assert errors_of(1, {"$ref": "#"}) == loops


# ---------------------------------------------------------------------------------------------
# Validator: robustness
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("schema", [[{"type": "integer"}], None, "object", 3])
def test_a_schema_that_is_not_an_object_or_boolean(schema: Any) -> None:
    assert errors_of({}, schema) == [
        f"/: invalid schema: {schema!r} is not of type 'object', 'boolean'"
    ]


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        ({"type": "str"}, "type"),
        ({"type": []}, "type"),
        ({"minLength": "3"}, "minLength"),
        ({"maxItems": -1}, "maxItems"),
        ({"minimum": None}, "minimum"),
        ({"multipleOf": 0}, "multipleOf"),
        ({"required": "name"}, "required"),
        ({"pattern": "("}, "pattern"),
        ({"pattern": "\\p{NoSuchProperty}"}, "pattern"),
        ({"patternProperties": {"[": {}}}, "patternProperties"),
        ({"enum": "abc"}, "enum"),
        ({"anyOf": []}, "anyOf"),
        ({"uniqueItems": "yes"}, "uniqueItems"),
        ({"dependentRequired": {"a": "b"}}, "dependentRequired"),
        ({"$ref": 5}, "$ref"),
        ({"properties": []}, "properties"),
    ],
)
def test_malformed_keyword_values_are_reported(schema: dict[str, Any], keyword: str) -> None:
    (error,) = errors_of({"name": "x"}, schema)
    assert error.startswith(f"/: invalid schema at /{keyword}")


def test_malformed_subschema_is_reported_where_used() -> None:
    assert errors_of({"a": 1}, {"properties": {"a": 5}}) == [
        "/: invalid schema at /properties/a: 5 is not of type 'object', 'boolean'"
    ]


def test_deeply_nested_data_does_not_crash() -> None:
    data: Any = 0
    for _ in range(5000):
        data = [data]
    result = validate_input(
        data, {"$ref": "#/$defs/n", "$defs": {"n": {"items": {"$ref": "#/$defs/n"}}}}
    )
    too_deep = ["/: the data is nested too deeply, or the schema's references loop"]
    assert result.valid or result.errors == too_deep
    # A message quotes the value at fault, which is nested too deeply to quote.
    assert errors_of(data, {"items": {"items": {"type": "string"}}}) == too_deep
    assert errors_of([[["x" * 1000]]], {"items": {"items": {"type": "string"}}}) == [
        f"/0/0: {str(['x' * 1000])[:297]}..."
    ]


def test_huge_numbers_do_not_crash() -> None:
    assert errors_of(10**5000, {"maximum": 1}) == [
        "/: a number of the data is too long to show in the error found for it"
    ]
    assert is_valid(10**400, {"multipleOf": 10**399, "type": "integer"})
    assert not is_valid(3, {"multipleOf": 10**400})


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "b", "name", "x-1", "é"]) | st.text(max_size=3),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)

schemas: st.SearchStrategy[Any] = st.recursive(
    st.booleans() | st.just({}),
    lambda children: st.dictionaries(
        st.sampled_from(sorted(SUPPORTED_KEYWORDS | {"$defs"})),
        json_values
        | children
        | st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "^x", "("]), children, max_size=3)
        | st.sampled_from(["#", "#/$defs/a", "#/properties/a", "#/allOf/0", "string"]),
        max_size=4,
    ),
    max_leaves=10,
)


@given(data=json_values, schema=schemas)
def test_never_raises_on_any_schema_and_data(data: Any, schema: Any) -> None:
    result = validate_input(data, schema)
    assert result.valid is (not result.errors)
    assert all(error.startswith("/") for error in result.errors)


# Schemas on which the validator must agree with python-jsonschema. multipleOf on floats is left
# out on purpose: this validator reads a float as its decimal literal, python-jsonschema as its
# binary value, and they differ for floats beyond 2**53.
DIFFERENTIAL_SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer"},
    {"type": ["number", "null"]},
    {"type": "boolean"},
    {"enum": [1, "a", None, [1], {"a": True}, False]},
    {"const": [0, {"a": 1.0}]},
    {"minimum": 0, "exclusiveMaximum": 10},
    {"maximum": 0, "exclusiveMinimum": -10.5},
    {"minLength": 2, "maxLength": 4, "pattern": "^[a-z]"},
    {"items": {"type": "integer"}, "minItems": 1, "maxItems": 3, "uniqueItems": True},
    {"uniqueItems": True},
    {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": {"type": "string"},
    },
    {
        "patternProperties": {"^x": {"type": "integer"}},
        "additionalProperties": False,
        "properties": {"a": {}},
    },
    {"minProperties": 1, "maxProperties": 2, "dependentRequired": {"a": ["b"]}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    {"not": {"type": "array"}},
    {"allOf": [{"type": "object"}, {"required": ["name"]}]},
    {
        "$defs": {"node": {"type": ["integer", "array"], "items": {"$ref": "#/$defs/node"}}},
        "$ref": "#/$defs/node",
    },
]


@pytest.mark.parametrize("schema", DIFFERENTIAL_SCHEMAS, ids=json.dumps)
@given(data=json_values)
def test_agrees_with_python_jsonschema(schema: dict[str, Any], data: Any) -> None:
    expected = jsonschema.Draft202012Validator(schema).is_valid(data)
    assert validate_input(data, schema).valid is expected


@pytest.mark.parametrize(
    ("pointer", "found"),
    [("/0", {"found": True, "value": "a"}), ("/1", {"found": True, "value": "b"})]
    + [(f"/{token}", {"found": False}) for token in ("¹", "٣", "01", "-1", "2", " 1")],
)
def test_the_pointer_example_reads_array_indices_as_rfc_6901_writes_them(
    pointer: str, found: dict[str, Any]
) -> None:
    """ASCII digits with no leading zero; "¹" is a digit to str.isdigit() that int() refuses."""
    entry = json_pointer_lookup.tool_entry  # type: ignore[attr-defined]
    assert entry.handler({"document": ["a", "b"], "pointer": pointer}) == found
