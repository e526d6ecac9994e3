"""tool_use entries: ``handler(input)`` with one validated dict, as the registry calls it.

A handler signals a domain error by raising (the registry reports FAILURE), so only a crash (an
exception neither the operating system's refusal nor raised on purpose) and BaseExceptions count
against it.
"""

from __future__ import annotations

from typing import Any

from axm_conformance._observation import SubjectInfo
from axm_conformance._subjects._base import (
    Adapter,
    Missing,
    is_async_callable,
    read,
    signature_facts,
)
from axm_conformance._subjects.axm import _declared_output_schema

__all__ = ["ToolUseAdapter", "entry_of"]


def entry_of(obj: Any) -> Any:
    """The ToolEntry behind a ``@tool``-decorated function, or the object itself."""
    entry = read(obj, "tool_entry")
    return obj if isinstance(entry, Missing) else entry


class ToolUseAdapter(Adapter):
    protocol = "tool_use"
    returns = "json"
    exception_policy = "domain"
    invalid_policy = "refuse"

    def describe(self) -> SubjectInfo:
        handler = read(self.obj, "handler")
        parameters, takes_var_keyword, has_signature = signature_facts(handler)
        schema = read(self.obj, "input_schema")
        error = ""
        if isinstance(schema, Missing) or schema == {}:
            error = "declares no input schema: the registry validates nothing"
        return self._info(
            variant="",
            has_description=True,
            input_schema=None if isinstance(schema, Missing) else schema,
            schema_source="declared",
            schema_error=error,
            output_schema=_declared_output_schema(self.obj),
            call_style="dict",
            callable_name="handler",
            callable_present=not isinstance(handler, Missing),
            callable_is_callable=callable(handler),
            callable_is_async=is_async_callable(handler),
            expects_async=False,
            parameters=parameters,
            takes_var_keyword=takes_var_keyword,
            has_signature=has_signature,
        )

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
                output_schema=_declared_output_schema(self.obj) or {},
            )
        )
        result = registry.invoke("tool_under_test", input)
        return {"status": result.status.value, "errors": list(result.errors)}
