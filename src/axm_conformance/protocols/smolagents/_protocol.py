"""smolagents tools: a ``Tool`` subclass (``inputs``, ``output_type``, ``forward``) or a
``@tool`` function, called as its agents call one: the arguments checked by
``validate_tool_arguments``, then ``tool(**arguments, sanitize_inputs_outputs=True)``.

What the runtime absorbs: an agent turns arguments its validation refuses into an
``AgentToolCallError``, and any exception the tool raises into an ``AgentToolExecutionError``;
both are errors the model reads in its next step, and the run goes on.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from axm_conformance.protocols import base

__all__ = ["SmolagentsProtocol"]

# smolagents' input and output types as JSON Schema. Its own converter (get_tool_json_schema)
# keeps "image", "audio" and "nullable", which are not JSON Schema; "any" and the media types
# take any value.
_TYPES = {
    "string": "string",
    "boolean": "boolean",
    "integer": "integer",
    "number": "number",
    "array": "array",
    "object": "object",
    "null": "null",
}


def _parameters(function: Any) -> list[str]:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def _schema_of(declared: Any) -> dict[str, Any]:
    """One input or the output as JSON Schema, with its description."""
    schema: dict[str, Any] = {}
    if isinstance(declared, dict):
        kind = _TYPES.get(str(declared.get("type")))
        if kind is not None:
            schema["type"] = [kind, "null"] if declared.get("nullable") else kind
        if isinstance(declared.get("description"), str):
            schema["description"] = declared["description"]
        if isinstance(declared.get("enum"), list):
            schema["enum"] = declared["enum"]
    return schema


class SmolagentsProtocol(base.FrameworkProtocol):
    name = "smolagents"
    title = "smolagents"
    tool_class = ("smolagents", "Tool")
    capabilities = base.FrameworkProtocol.capabilities | {"output-schema"}
    detection_order = 16
    # An agent hands the model the value's text; a CodeAgent hands the value itself to the code
    # the model wrote, so the declared output_type is held to it.
    result = base.ResultModel("json")
    # Raising is how a smolagents tool reports an error: the agent turns the exception into
    # an AgentToolExecutionError the model reads in its next step. Only a crash fails.
    policy = base.framework_policy(
        "smolagents",
        # Whatever the tool raises on an input the validation lets through reaches the model.
        exception="domain",
        allowed_exceptions=("Exception",),
        invalid_absorber=(
            "smolagents' agent checks the arguments' names and types against the tool's inputs "
            "before the tool runs (validate_tool_arguments)"
        ),
    )
    call_snippet = "tool(**{input}, sanitize_inputs_outputs=True)"
    callable_name = "forward"  # where its tools differ, target() says, tool by tool

    def target(self) -> base.Target:
        """``forward``; a ``@tool`` function is kept as a function that takes ``self`` first,
        which the tool gives it."""
        forward = base.read(self.obj, "forward")
        if inspect.isfunction(forward) and next(iter(_parameters(forward)), "") == "self":
            forward = functools.partial(forward, self.obj)
        return base.Target("forward", forward, False)

    def input_schema(self) -> tuple[Any, str, str]:
        inputs = base.read(self.obj, "inputs")
        if not isinstance(inputs, dict):
            return None, "", f"its inputs are {type(inputs).__name__}, not a dict"
        properties = {str(name): _schema_of(declared) for name, declared in inputs.items()}
        required = [
            str(name)
            for name, declared in inputs.items()
            if not (isinstance(declared, dict) and declared.get("nullable"))
        ]
        schema = {"type": "object", "properties": properties, "required": required}
        # validate_tool_arguments refuses names the inputs do not list.
        return {**schema, "additionalProperties": False}, "declared", ""

    def output_schema(self) -> Any:
        schema = _schema_of({"type": base.read(self.obj, "output_type")})
        return schema or None

    def refuses(self, input: Any) -> str:
        """What the agent's validation refuses, before the tool sees it."""
        refusal = super().refuses(input)
        if refusal:
            return refusal
        from smolagents.agents import validate_tool_arguments

        try:
            validate_tool_arguments(self.obj, input)
        except (ValueError, TypeError) as exc:
            return f"smolagents' validate_tool_arguments refuses it: {exc}"
        return ""

    def own_objects(self) -> tuple[Any, ...]:
        forward = base.read(self.obj, "forward")
        # A @tool function's class is smolagents' SimpleTool: the function alone is the author's.
        if isinstance(forward, base.Missing) or type(self.obj).__module__ != "smolagents.tools":
            return (type(self.obj), forward)
        return (forward,)

    def call(self, input: Any) -> Any:
        return self.obj(**input, sanitize_inputs_outputs=True)
