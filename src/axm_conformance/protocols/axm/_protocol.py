"""AXM tools: ``execute(**input)``, synchronous, returning a ToolResult; nothing should escape,
and what does is turned into a failed result by the MCP layer."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from axm_conformance.protocols.base import (
    ENTRY_POINT_PREFIX,
    Missing,
    Policy,
    ResultModel,
    SubjectInfo,
    ToolProtocol,
    read,
)

__all__ = ["AXMProtocol"]

_DISCOVERY_ATTRIBUTES = ("expose_directly", "domain", "tags", "agent_hint")


class AXMProtocol(ToolProtocol):
    name = "axm"
    title = "AXM"
    capabilities = frozenset(
        {"in-process", "python-exceptions", "output-schema", "discovery-metadata"}
    )
    entry_point_groups = ("axm.tools", "axm.tribunal.tools")
    detection_order = 50
    result = ResultModel(
        "tool-result",
        {
            "success": ("bool",),
            "data": ("dict",),
            "error": ("str", "NoneType"),
            "hint": ("str", "NoneType"),
            "text": ("str", "NoneType"),
        },
        structured_field="data",
    )
    policy = Policy(
        # axm's MCP layer (UPSTREAM) validates the arguments against the input schema, then
        # calls execute inside `except Exception`, which it answers with a failed result.
        exception_absorber=(
            "AXM's MCP layer turns an exception escaping execute into a failed result; "
            "return a failed ToolResult instead"
        ),
        invalid_absorber=(
            "AXM's MCP layer validates arguments against the input schema before execute"
        ),
        # The AXM interface: "the tool itself executes deterministically" (seed 000).
        promises_determinism=True,
    )
    call_snippet = "tool.execute(**{input})"
    hints = {
        "invalid-input-handled": (
            "decorate execute with axm_runtime.axm.validated: arguments that break the input "
            "schema then get a failed result naming the field, and the body never runs"
        ),
    }
    call_style = "keywords"

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return not isinstance(read(obj, "execute"), Missing)

    def describe(self) -> SubjectInfo:
        info = super().describe()
        metadata = {
            key: (type(value).__name__, _plain(value))
            for key in _DISCOVERY_ATTRIBUTES
            if not isinstance(value := read(self.obj, key), Missing)
        }
        return dataclasses.replace(
            info,
            call_style="keywords" if info.callable.has_signature else "none",
            metadata=metadata,
            shadowed_by=_tribunal_twin(self.ref),
        )

    def input_schema(self) -> tuple[Any, str, str]:
        from axm_runtime.axm import input_schema_for

        try:
            schema = input_schema_for(self.obj)
        except Exception as exc:
            return (
                None,
                "",
                f"cannot derive an input schema from execute: {type(exc).__name__}: {exc}",
            )
        declared = isinstance(read(self.obj, "input_schema"), dict)
        return schema, "declared" if declared else "derived", ""

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


def _tribunal_twin(ref: str) -> tuple[str, ...]:
    """axm resolves a name published in both axm.tools and axm.tribunal.tools to the tribunal
    one, and never loads the other."""
    legacy = f"{ENTRY_POINT_PREFIX}axm.tools:"
    if not ref.startswith(legacy):
        return ()
    return (f"{ENTRY_POINT_PREFIX}axm.tribunal.tools:{ref.removeprefix(legacy)}",)


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
