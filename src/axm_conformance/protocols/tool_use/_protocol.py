"""tool_use entries: ``handler(input)`` with one validated dict, as the registry calls it.

A handler signals a domain error by raising (the registry reports FAILURE), so only a crash (an
exception neither the operating system's refusal nor raised on purpose) and BaseExceptions count
against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from axm_conformance.protocols.base import Missing, Policy, ToolProtocol, read

__all__ = ["ToolUseProtocol"]


@dataclass
class ToolUseProtocol(ToolProtocol):
    name = "tool_use"
    title = "tool_use"
    capabilities = frozenset({"in-process", "python-exceptions", "description", "output-schema"})
    detection_order = 20
    # A @tool function or an object with a handler and an output schema is an axio shape too.
    narrows = ("axio",)
    policy = Policy(exception="domain", invalid="refuse")
    call_snippet = "tool.handler({input})"
    hints = {
        "description-present": (
            "@tool takes the description from description=, else from the first paragraph of "
            "the function's docstring"
        ),
    }
    callable_name = "handler"

    def __post_init__(self) -> None:
        # A @tool-decorated function stands for the ToolEntry it carries.
        entry = read(self.obj, "tool_entry")
        if not isinstance(entry, Missing):
            self.obj = entry

    @classmethod
    def detects(cls, obj: Any) -> bool:
        if not isinstance(read(obj, "tool_entry"), Missing):
            return True
        return not isinstance(read(obj, "handler"), Missing) and not isinstance(
            read(obj, "output_schema"), Missing
        )

    def input_schema(self) -> tuple[Any, str, str]:
        schema, _, error = super().input_schema()
        if schema is None or schema == {}:
            error = "declares no input schema: the registry validates nothing"
        return schema, "declared", error

    def call(self, input: Any) -> Any:
        return self.obj.handler(input)

    def own_objects(self) -> tuple[Any, ...]:
        return (read(self.obj, "handler"),)

    def call_invalid(self, input: Any) -> Any:
        """Invoke through a reference ``ToolRegistry``, which validates before the handler runs.

        The verdict comes back as ``{"status", "errors"}``; ``handler_called`` records whether
        the tool's handler ran anyway.
        """
        from axm_runtime.tool_use import ToolEntry, ToolRegistry

        self.handler_called = False

        def recording(data: Any) -> Any:
            self.handler_called = True
            return self.obj.handler(data)

        registry = ToolRegistry()
        registry.register(
            ToolEntry(
                name="tool_under_test",
                description="",
                handler=recording,
                input_schema=self.obj.input_schema,
                output_schema=self.output_schema() or {},
            )
        )
        result = registry.invoke("tool_under_test", input)
        return {"status": result.status.value, "errors": list(result.errors)}
