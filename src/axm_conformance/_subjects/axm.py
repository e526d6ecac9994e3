"""AXM tools: ``execute(**input)``, synchronous, returning a ToolResult; nothing should escape,
and what does is turned into a failed result by the MCP layer."""

from __future__ import annotations

import inspect
from typing import Any

from axm_conformance._observation import SubjectInfo
from axm_conformance._subjects._base import (
    Adapter,
    Missing,
    is_async_callable,
    read,
    signature_facts,
)

__all__ = ["AXMAdapter"]

_DISCOVERY_ATTRIBUTES = ("expose_directly", "domain", "tags", "agent_hint")


class AXMAdapter(Adapter):
    protocol = "axm"
    returns = "tool-result"
    result_fields = {
        "success": ("bool",),
        "data": ("dict",),
        "error": ("str", "NoneType"),
        "hint": ("str", "NoneType"),
        "text": ("str", "NoneType"),
    }
    structured_field = "data"
    keyword_call = True
    # axm's MCP layer (UPSTREAM) validates the arguments against the input schema, then calls
    # execute inside `except Exception`, which it answers with a failed result.
    exception_absorber = (
        "AXM's MCP layer turns an exception escaping execute into a failed result; "
        "return a failed ToolResult instead"
    )
    invalid_absorber = "AXM's MCP layer validates arguments against the input schema before execute"
    # The AXM interface: "the tool itself executes deterministically" (seed 000).
    promises_determinism = True

    def describe(self) -> SubjectInfo:
        from axm_runtime.axm import input_schema_for

        execute = read(self.obj, "execute")
        present = not isinstance(execute, Missing)
        parameters, takes_var_keyword, has_signature = signature_facts(execute)
        schema: Any = None
        source, error = "", ""
        declared = read(self.obj, "input_schema")
        try:
            schema = input_schema_for(self.obj)
            source = "declared" if isinstance(declared, dict) else "derived"
        except Exception as exc:
            error = f"cannot derive an input schema from execute: {type(exc).__name__}: {exc}"
        metadata = {
            key: (type(value).__name__, _plain(value))
            for key in _DISCOVERY_ATTRIBUTES
            if not isinstance(value := read(self.obj, key), Missing)
        }
        return self._info(
            variant="",
            has_description=False,
            input_schema=schema,
            schema_source=source,
            schema_error=error,
            output_schema=_declared_output_schema(self.obj),
            call_style="keywords" if has_signature else "none",
            callable_name="execute",
            callable_present=present,
            callable_is_callable=callable(execute),
            callable_is_async=is_async_callable(execute),
            expects_async=False,
            parameters=parameters,
            takes_var_keyword=takes_var_keyword,
            has_signature=has_signature,
            metadata=metadata,
        )

    def refuses(self, input: Any) -> str:
        # The orchestrator binds arguments before the tool runs: a call that cannot bind (a
        # required keyword missing, an unknown one without **kwargs) never reaches the tool.
        refusal = super().refuses(input)
        if refusal:
            return refusal
        try:
            inspect.signature(self.obj.execute).bind(**input)
        except TypeError as exc:
            return f"the arguments do not bind to execute: {exc}"
        return ""

    def call(self, input: Any) -> Any:
        result = self.obj.execute(**input)
        if inspect.iscoroutine(result):
            # A coroutine is the wrong result type for AXM; close it so it is not left pending.
            result.close()
            return coroutine()
        return result


class coroutine:
    """Stands for the coroutine an ``async def execute`` returned instead of a ToolResult."""

    def __repr__(self) -> str:
        return "<coroutine: execute is async def>"


def _plain(value: Any) -> Any:
    """A picklable rendering of a metadata value that keeps its container type visible."""
    if isinstance(value, set | frozenset | list | tuple):
        return [_scalar(item) for item in value]
    return _scalar(value)


def _scalar(value: Any) -> Any:
    # Anything but a plain scalar is shown by type, so a check can never mistake it for a str.
    if isinstance(value, str | bool | int | float | type(None)):
        return value
    return {"object of type": type(value).__name__}


def _declared_output_schema(obj: Any) -> Any:
    schema = read(obj, "output_schema")
    return None if isinstance(schema, Missing) or schema in ({}, None) else schema
