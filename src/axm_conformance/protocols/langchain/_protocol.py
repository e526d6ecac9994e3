"""LangChain tools: a ``BaseTool`` (``@tool``, ``StructuredTool.from_function``, a subclass)
called as an agent calls it, ``invoke`` (or ``ainvoke``) with a tool call, answered by a
``ToolMessage``.

What the runtime absorbs is LangGraph's ``ToolNode``'s default, which LangChain's agents use: a
tool's arguments that break its schema are returned to the model (``ToolInvocationError``), and
every exception the tool raises stops the agent's run, unless the tool's own
``handle_tool_error`` turns a ``ToolException`` into a ``ToolMessage`` with status "error".
LangChain is never imported here: a tool is recognised by its classes' names and modules.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from axm_conformance.protocols import base

__all__ = ["LangChainProtocol"]

_CALL_ID = "axm-conformance"


def _overrides(obj: Any, member: str) -> bool:
    """Whether the tool's own class, not LangChain's ``BaseTool``, defines ``member``."""
    for klass in type(obj).__mro__:
        if member in vars(klass):
            return not klass.__module__.startswith("langchain_core.")
    return False


class LangChainProtocol(base.FrameworkProtocol):
    name = "langchain"
    title = "LangChain"
    tool_class = ("langchain_core", "BaseTool")
    detection_order = 15
    # What the model reads: the ToolMessage's content; its status says whether the call failed,
    # and a failure's text is its content. The artifact goes to the application, not the model.
    result = base.ResultModel(
        "tool-result",
        {"content": ("str", "list"), "status": ("str",)},
        structured_field="content",
        success=("status", "success"),
        error_field="content",
    )
    # ValidationError: raised by LangChain's own validation of a pydantic args_schema, before
    # the tool runs; ToolNode returns it to the model.
    policy = base.framework_policy("LangChain", allowed_exceptions=("ValidationError",))
    call_snippet = (
        'tool.invoke({{"name": tool.name, "args": {input}, "id": "call", "type": "tool_call"}})'
    )
    hints = {
        "no-unexpected-exception": (
            "LangGraph's ToolNode returns only argument errors to the model and re-raises "
            "every other exception, ending the agent's run: raise ToolException and set the "
            "tool's handle_tool_error=True, so that the model reads the error"
        ),
        "description-present": "@tool takes the description from the function's docstring",
    }
    callable_name = "invoke"  # where its tools differ, target() says, tool by tool

    @classmethod
    def tool_from(cls, ref: str, obj: Any) -> Any | None:
        """A toolkit's tools (``BaseToolkit.get_tools()``)."""
        if not base.derives_from(obj, "langchain_core", "BaseToolkit"):
            return None
        return list(obj.get_tools())

    def target(self) -> base.Target:
        """A decorated function or coroutine (``func``, ``coroutine``), or the subclass's own
        ``_run`` or ``_arun``; LangChain awaits what it is given to await, so each is judged
        as what it is."""
        for member, awaits in (("func", False), ("coroutine", True)):
            function = base.read(self.obj, member)
            if callable(function):
                return base.Target(member, function, awaits)
        if _overrides(self.obj, "_run") or not _overrides(self.obj, "_arun"):
            return base.Target("_run", base.read(self.obj, "_run"), False)
        return base.Target("_arun", base.read(self.obj, "_arun"), True)

    def tool_policy(self) -> base.Policy:
        """Validation errors are returned to the model by the tool itself where it sets
        handle_validation_error; a JSON Schema dict is not validated at all, and its
        unknown keys reach the function."""
        policy = self.policy
        if base.read(self.obj, "handle_validation_error") not in (None, False):
            policy = dataclasses.replace(policy, invalid="result")
        return dataclasses.replace(
            policy, strips_unknown_keys=isinstance(base.read(self.obj, "args_schema"), type)
        )

    def coerces(self, input: Any) -> str:
        """An input its pydantic ``args_schema`` accepts, once coerced as pydantic coerces
        (``"3"`` for an integer; unknown keys dropped), reaches the tool as a valid one: it
        is not an invalid input under LangChain."""
        validate = base.read(base.read(self.obj, "args_schema"), "model_validate")
        if not callable(validate):
            return ""
        try:
            validate(input)
        except Exception:
            return ""
        return (
            "LangChain's validation of the args_schema coerces it into an input the schema allows"
        )

    def input_schema(self) -> tuple[Any, str, str]:
        """What the model is shown: ``tool_call_schema`` (the arguments without the injected
        ones), derived from the signature unless ``args_schema`` was given."""
        schema = base.read(self.obj, "tool_call_schema")
        if isinstance(schema, base.Missing):
            return None, "", schema.error or "has no tool_call_schema"
        declared = not isinstance(base.read(self.obj, "args_schema"), base.Missing | type(None))
        return schema, "declared" if declared else "derived", ""

    def output_schema(self) -> Any:
        return None

    def own_objects(self) -> tuple[Any, ...]:
        function = self.target().function
        if self.target().name in ("func", "coroutine"):
            return (function,)
        return (type(self.obj), function)

    def call(self, input: Any) -> Any:
        call = {
            "name": base.read(self.obj, "name"),
            "args": input,
            "id": _CALL_ID,
            "type": "tool_call",
        }
        if self.target().awaits:
            return self.obj.ainvoke(call)
        return self.obj.invoke(call)
