"""The AXM runtime: the seed's example, discovery, schema derivation and the orchestrator step."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

import pytest

from axm_runtime.axm import (
    AXMTool,
    ToolMetadata,
    ToolResult,
    discover_tools,
    input_schema_for,
    run_tool,
    tool_metadata,
)


class MyTool(AXMTool):
    agent_hint = "Frobnicate widgets — use width param."
    expose_directly = True  # hot path (read via tool_metadata)
    domain = "widget"
    tags = frozenset({"frobnicate"})

    @property
    def name(self) -> str:
        return "my-tool"

    def execute(self, *, value: int = 0) -> ToolResult:
        return ToolResult(success=True, data={"result": value})


def test_seed_example_runs() -> None:
    tool = MyTool()
    assert isinstance(tool, AXMTool)
    assert tool.name == "my-tool"
    assert tool.execute(value=3) == ToolResult(success=True, data={"result": 3})
    assert tool_metadata(tool) == ToolMetadata(
        expose_directly=True, domain="widget", tags=frozenset({"frobnicate"})
    )


def test_tool_result_defaults_and_immutability() -> None:
    result = ToolResult(success=False)
    assert (result.data, result.error, result.hint, result.text) == ({}, None, None, None)
    with pytest.raises(AttributeError):
        result.success = True  # type: ignore[misc]


def test_tool_metadata_of_structural_tool_and_plain_callable() -> None:
    class Structural:
        name = "s"
        tags = ["a", "b", "a"]

        def execute(self, **kwargs: Any) -> ToolResult:
            return ToolResult(success=True)

    assert isinstance(Structural(), AXMTool)
    assert tool_metadata(Structural()) == ToolMetadata(tags=frozenset({"a", "b"}))
    assert tool_metadata(len) == ToolMetadata()


def test_protocol_rejects_objects_without_execute() -> None:
    class NoExecute:
        name = "x"

    assert not isinstance(NoExecute(), AXMTool)


class Documented:
    name = "documented"

    def execute(
        self,
        *,
        path: Annotated[str, "File to read"],
        mode: Literal["text", "bytes"] = "text",
        limit: Optional[int] = None,  # noqa: UP045 - the Optional spelling is under test
        encodings: list[str] | None = None,
        options: dict[str, Any] | None = None,
    ) -> ToolResult:
        return ToolResult(success=True)


def test_input_schema_derived_from_signature() -> None:
    schema = input_schema_for(Documented())
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["path"] == {"type": "string", "description": "File to read"}
    assert properties["mode"] == {"enum": ["text", "bytes"], "type": "string", "default": "text"}
    assert {"type": "null"} in properties["limit"]["anyOf"]
    assert {"type": "integer"} in properties["limit"]["anyOf"]
    assert {"type": "array", "items": {"type": "string"}} in properties["encodings"]["anyOf"]
    assert properties["options"]["default"] is None


def test_input_schema_of_var_keyword_execute_allows_extra_keys() -> None:
    class Open:
        name = "open"

        def execute(self, *, query: str, **kwargs: Any) -> ToolResult:
            return ToolResult(success=True)

    assert input_schema_for(Open())["additionalProperties"] is True


def test_explicit_input_schema_wins() -> None:
    class Explicit:
        name = "explicit"
        input_schema = {"type": "object", "properties": {"q": {"type": "string"}}}

        def execute(self, **kwargs: Any) -> ToolResult:
            return ToolResult(success=True, data=kwargs)

    assert input_schema_for(Explicit()) == Explicit.input_schema


def test_postponed_annotations_are_resolved() -> None:
    namespace: dict[str, Any] = {}
    exec(
        "from __future__ import annotations\n"
        "from axm_runtime.axm import ToolResult\n"
        "class Late:\n"
        "    name = 'late'\n"
        "    def execute(self, *, count: int, ratio: float = 0.5) -> ToolResult:\n"
        "        return ToolResult(success=True)\n",
        namespace,
    )
    properties = input_schema_for(namespace["Late"]())["properties"]
    assert properties["count"] == {"type": "integer"}
    assert properties["ratio"] == {"type": "number", "default": 0.5}


def test_run_tool_rejects_invalid_arguments_without_calling_execute() -> None:
    calls: list[dict[str, Any]] = []

    class Recorder:
        name = "recorder"

        def execute(self, *, count: int) -> ToolResult:
            calls.append({"count": count})
            return ToolResult(success=True)

    missing = run_tool(Recorder())
    wrong_type = run_tool(Recorder(), count="three")
    boolean = run_tool(Recorder(), count=True)
    unknown = run_tool(Recorder(), count=1, colour="red")
    for result in (missing, wrong_type, boolean):
        assert not result.success
        assert "count" in (result.error or "")
    assert not unknown.success and "colour" in (unknown.error or "")
    assert calls == []
    assert run_tool(Recorder(), count=2).success
    assert calls == [{"count": 2}]


def test_run_tool_turns_exceptions_into_failed_results() -> None:
    class Broken:
        name = "broken"

        def execute(self, *, path: str) -> ToolResult:
            raise FileNotFoundError(f"no such file: {path}")

    result = run_tool(Broken(), path="missing.txt")
    assert result.success is False
    assert result.error == "FileNotFoundError: no such file: missing.txt"


def test_run_tool_rejects_a_non_result_return() -> None:
    class ReturnsDict:
        name = "returns_dict"

        def execute(self) -> Any:
            return {"success": True}

    result = run_tool(ReturnsDict())
    assert not result.success and "dict" in (result.error or "")


def _tool_module(name: str) -> str:
    return (
        "from axm_runtime.axm import ToolResult\n"
        f"class Tool:\n    name = {name!r}\n"
        "    def execute(self, **kwargs):\n        return ToolResult(success=True)\n"
        "instance = Tool()\n"
    )


def test_discover_tools_instantiates_classes_and_keeps_instances(make_distribution: Any) -> None:
    make_distribution(
        "demo-tools",
        {
            "axm.tools": {"alpha": "demo_alpha:Tool"},
            "axm.tribunal.tools": {"beta": "demo_beta:instance"},
        },
        {"demo_alpha.py": _tool_module("alpha"), "demo_beta.py": _tool_module("beta")},
    )
    tools = discover_tools()
    assert set(tools) >= {"alpha", "beta"}
    assert all(isinstance(tool, AXMTool) for tool in tools.values())
    assert set(discover_tools(groups=("axm.tribunal.tools",))) >= {"beta"}


def test_discover_tools_rejects_a_duplicate_name_naming_both(make_distribution: Any) -> None:
    make_distribution(
        "dup-tools",
        {"axm.tools": {"first": "dup_one:Tool", "second": "dup_two:Tool"}},
        {"dup_one.py": _tool_module("same"), "dup_two.py": _tool_module("same")},
    )
    with pytest.raises(ValueError, match="same") as raised:
        discover_tools(groups=("axm.tools",))
    assert "dup_one:Tool" in str(raised.value) and "dup_two:Tool" in str(raised.value)
