"""Pydantic AI tools: a ``Tool``, the tools of a ``FunctionToolset``, or a plain function named
with ``--axm-protocol=pydantic_ai`` (as an agent's ``tools=[...]`` takes one), called as its tool
manager calls one: the arguments validated by the tool's own validator, then the function,
given a ``RunContext`` where it takes one.

What the runtime absorbs: arguments its validation refuses, and a ``ModelRetry`` the function
raises, go back to the model as a retry prompt: the tool's refusal. Any other exception ends
the agent's run.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from axm_conformance.protocols import base

__all__ = ["PydanticAIProtocol"]


class PydanticAIProtocol(base.FrameworkProtocol):
    name = "pydantic_ai"
    title = "Pydantic AI"
    tool_class = ("pydantic_ai", "Tool")
    capabilities = base.FrameworkProtocol.capabilities | {"refusal-exceptions", "output-schema"}
    detection_order = 18
    # The tool manager hands the model the value, serialised.
    result = base.ResultModel("json")
    policy = base.framework_policy(
        "Pydantic AI",
        # What each model profile does with a tool's schema before sending it (read from
        # pydantic_ai: profiles/openai.py, models/__init__.py, models/google.py).
        schema_adapters=(
            (
                "openai-root-properties",
                "Pydantic AI's OpenAIJsonSchemaTransformer adds the empty properties",
            ),
            (
                "openai-strict",
                "Pydantic AI sends a tool strict only when its schema is strict-compatible",
            ),
            ("anthropic-strict", "Pydantic AI sends a tool strict only when it is asked to"),
            ("gemini-parameters", "Pydantic AI sends the schema as parametersJsonSchema"),
        ),
    )
    call_snippet = "asyncio.run(tool.function_schema.call({input}, context))"
    snippet_setup = (
        "from pydantic_ai import RunContext",
        "from pydantic_ai.models.test import TestModel",
        "from pydantic_ai.usage import RunUsage",
        "context = RunContext(deps=None, model=TestModel(), usage=RunUsage())",
    )
    hints = {
        "no-unexpected-exception": (
            "raise ModelRetry with what the model should correct: Pydantic AI sends it back as "
            "a retry prompt, and any other exception ends the agent's run"
        ),
    }
    callable_name = "function"  # where its tools differ, target() says, tool by tool
    # The exception that refused the arguments of the last call, before the function ran.
    refused_arguments: BaseException | None = None

    @classmethod
    def tool_from(cls, ref: str, obj: Any) -> Any | None:
        """The tools of a FunctionToolset."""
        if base.derives_from(obj, "pydantic_ai", "FunctionToolset"):
            return list(obj.tools.values())
        return None

    @classmethod
    def tool_named(cls, ref: str, obj: Any) -> Any | None:
        """A plain function, sync or async, with or without a RunContext first: a tool as an
        agent's ``tools=[...]`` makes one."""
        if callable(obj) and not isinstance(obj, type) and not cls.detects(obj):
            from pydantic_ai import Tool

            return Tool(obj)
        return cls.tool_from(ref, obj)

    def target(self) -> base.Target:
        """The function, its RunContext given where it takes one: the model sends the rest."""
        function = base.read(self.obj, "function")
        name = base.read(function, "__name__")
        shown = name if isinstance(name, str) else "function"
        takes_context = base.read(self.obj, "takes_ctx") is True
        reached = functools.partial(function, None) if takes_context else function
        return base.Target(shown, reached, base.is_async_callable(function))

    def input_schema(self) -> tuple[Any, str, str]:
        definition = base.read(self.obj, "tool_def")
        return base.read(definition, "parameters_json_schema"), "derived", ""

    def output_schema(self) -> Any:
        """The return schema, where the tool sends it to the model (``include_return_schema``:
        from its return annotation): the model is told what the result is."""
        definition = base.read(self.obj, "tool_def")
        if base.read(definition, "include_return_schema") is not True:
            return None
        schema = base.read(definition, "return_schema")
        return None if isinstance(schema, base.Missing) else schema

    def payload(self, value: Any) -> tuple[Any, str]:
        """What the model reads: the value as pydantic serialises it (a set as a list, an
        infinity as null); a value it cannot serialise raises, as the run would."""
        import pydantic_core

        return pydantic_core.to_jsonable_python(value), type(value).__name__

    def own_objects(self) -> tuple[Any, ...]:
        return (base.read(self.obj, "function"),)

    def coerces(self, input: Any) -> str:
        """An input the tool's validator accepts once coerced reaches the function as a valid
        one: not an invalid input under Pydantic AI."""
        try:
            self.obj.function_schema.validator.validate_python(input)
        except Exception:
            return ""
        return (
            "Pydantic AI's validation of the arguments coerces it into an input the schema allows"
        )

    def refusal(self, exc: BaseException) -> str:
        if exc is self.refused_arguments or base.derives_from(exc, "pydantic_ai", "ModelRetry"):
            return str(exc)
        return ""

    async def call(self, input: Any) -> Any:
        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        schema = self.obj.function_schema
        self.refused_arguments = None
        try:
            arguments = schema.validator.validate_python(input)
        except Exception as exc:  # sent back to the model as a retry prompt
            self.refused_arguments = exc
            raise
        context = RunContext(
            deps=None, model=TestModel(), usage=RunUsage(), tool_name=base.read(self.obj, "name")
        )
        call_args = base.read(schema, "_call_args")
        if schema.is_async or not callable(call_args):
            return await schema.call(arguments, context)
        # Pydantic AI runs a plain function in a thread of anyio's pool, which outlives the
        # call: leaves-no-trace would blame it on the tool. It is called here, in the thread
        # the kit watches, with the same arguments.
        args, kwargs = call_args(arguments, context)
        return await _awaited(schema.function(*args, **kwargs))


async def _awaited(value: Any) -> Any:
    """A plain function may still return an awaitable, which Pydantic AI awaits."""
    return await value if inspect.isawaitable(value) else value
