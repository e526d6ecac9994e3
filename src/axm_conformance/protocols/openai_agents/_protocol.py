"""OpenAI Agents SDK tools: a ``FunctionTool`` (``@function_tool``, or built by hand), called as
the runner calls one: ``await tool.on_invoke_tool(ToolContext(...), arguments_json)``.

What the runtime absorbs: a tool's ``failure_error_function`` (by default one that tells the
model "An error occurred while running the tool. Please try again.") turns any exception of the
call, arguments the SDK's validation refuses included, into the text the model reads. A tool
whose failure_error_function is None lets the exception end the run.

The SDK has no public way to see the exception its failure function absorbs, nor the function
a ``@function_tool`` wraps; both are read through its own helpers
(``set_function_tool_failure_error_function``, the invoker's ``_get_wrapped_callable``), and
where they are missing the tool is called as it is, its failure text judged as a refusal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from axm_conformance.protocols import base

__all__ = ["OpenAIAgentsProtocol"]

_CALL_ID = "axm-conformance"


class OpenAIAgentsProtocol(base.FrameworkProtocol):
    name = "openai_agents"
    title = "OpenAI Agents SDK"
    tool_class = ("agents", "FunctionTool")
    detection_order = 17
    # The runner gives the model str(output) of whatever the function returned.
    result = base.ResultModel("json")
    # ModelBehaviorError: raised by the SDK's own parsing and validation of the arguments,
    # before the function.
    policy = base.framework_policy("the Agents SDK", allowed_exceptions=("ModelBehaviorError",))
    call_snippet = (
        "asyncio.run(tool.on_invoke_tool(ToolContext(context=None, tool_name=tool.name, "
        'tool_call_id="call", tool_arguments=json.dumps({input})), json.dumps({input})))'
    )
    snippet_setup = ("import json", "from agents.tool_context import ToolContext")
    hints = {
        "no-unexpected-exception": (
            "the tool's failure_error_function decides what the model reads of an exception; "
            "with failure_error_function=None the exception ends the run"
        ),
    }
    callable_name = "on_invoke_tool"  # where its tools differ, target() says, tool by tool

    def _wrapped(self) -> Any:
        """The function a @function_tool wraps; None for a tool built by hand."""
        invoker = base.read(self.obj, "on_invoke_tool")
        wrapped = base.read(invoker, "_get_wrapped_callable")
        if not callable(wrapped):
            return None
        try:
            function = wrapped()
        except Exception:
            return None
        return function if callable(function) else None

    def target(self) -> base.Target:
        function = self._wrapped()
        if function is not None:
            # The SDK runs a sync function in a thread and awaits a coroutine function.
            return base.Target(function.__name__, function, base.is_async_callable(function))
        return base.Target("on_invoke_tool", base.read(self.obj, "on_invoke_tool"), True)

    def tool_policy(self) -> base.Policy:
        """Where the tool's failure function absorbs what the call raised, it says so."""
        try:
            from agents.tool import resolve_function_tool_failure_error_function

            absorbs = resolve_function_tool_failure_error_function(self.obj) is not None
        except Exception:
            absorbs = False
        if not absorbs:
            return self.policy
        absorber = (
            "the tool's failure_error_function turns it into the text the model reads "
            "(by default 'An error occurred while running the tool. Please try again.')"
        )
        return dataclasses.replace(
            self.policy, exception_absorber=absorber, invalid_absorber=absorber
        )

    def input_schema(self) -> tuple[Any, str, str]:
        return base.read(self.obj, "params_json_schema"), "declared", ""

    def payload(self, value: Any) -> tuple[Any, str]:
        """What the model reads: the runner sends a str as it is and any other value as its
        ``str()``."""
        return (value if isinstance(value, str) else str(value)), type(value).__name__

    def output_schema(self) -> Any:
        return None

    def coerces(self, input: Any) -> str:
        """An input the SDK's validation (pydantic's, of the wrapped function's parameters)
        accepts once coerced reaches the function as a valid one: not an invalid input."""
        function = self._wrapped()
        if function is None:
            return ""
        try:
            from agents.function_schema import function_schema

            function_schema(function).params_pydantic_model.model_validate(input)
        except Exception:
            return ""
        return "the Agents SDK's validation coerces it into an input the schema allows"

    def own_objects(self) -> tuple[Any, ...]:
        function = self._wrapped()
        if function is not None:
            return (function,)
        return (type(self.obj), base.read(self.obj, "on_invoke_tool"))

    @contextlib.contextmanager
    def _raising(self) -> Iterator[None]:
        """The call with the tool's failure function set aside, so that what it would absorb
        is seen as raised (its policy says what absorbs it)."""
        try:
            from agents.tool import set_function_tool_failure_error_function
        except ImportError:
            yield
            return
        saved = {
            key: value
            for key in ("_use_default_failure_error_function", "_failure_error_function")
            if not isinstance(value := base.read(self.obj, key), base.Missing)
        }
        set_function_tool_failure_error_function(self.obj, None)
        try:
            yield
        finally:
            for key, value in saved.items():
                setattr(self.obj, key, value)

    async def call(self, input: Any) -> Any:
        from agents.tool_context import ToolContext

        arguments = json.dumps(input)
        context = ToolContext(
            context=None,
            tool_name=base.read(self.obj, "name"),
            tool_call_id=_CALL_ID,
            tool_arguments=arguments,
        )
        with self._raising():
            return await self.obj.on_invoke_tool(context, arguments)
