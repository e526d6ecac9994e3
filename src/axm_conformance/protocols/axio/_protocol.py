"""axio tools: ``await tool(**input)``; only GuardError and HandlerError may escape.

Covers both variants (an ``async def`` handler, a pydantic ``ToolHandler`` class), tools built on
the reference runtime and on published axio alike: only the shape is relied on.
"""

from __future__ import annotations

import base64
import dataclasses
import inspect
from collections.abc import Iterator, Mapping
from typing import Any

from axm_conformance.protocols.base import (
    CONTENT_BLOCKS,
    ENTRY_POINT_PREFIX,
    Missing,
    Policy,
    ResultModel,
    SubjectInfo,
    ToolProtocol,
    read,
)

__all__ = ["AxioProtocol"]

# The worker side of the guard and concurrency probes.
_PROBES = "axm_conformance.protocols.axio._probes"


class AxioProtocol(ToolProtocol):
    name = "axio"
    title = "axio"
    capabilities = frozenset(
        {
            "in-process",
            "python-exceptions",
            "description",
            "effects-declared",
            "guards",
            "concurrency-limit",
        }
    )
    entry_point_groups = ("axio.tools",)
    detection_order = 30
    result = ResultModel("str")
    policy = Policy(
        exception="wrapped",
        allowed_exceptions=("GuardError", "HandlerError"),
        invalid="raise",
        strips_unknown_keys=True,
        denial_exception="GuardError",
    )
    call_snippet = "asyncio.run(tool(**{input}))"
    hints = {
        "description-present": (
            "axio's Tool takes the description from description=, else from the handler's docstring"
        ),
    }
    probes = {
        "guards": f"{_PROBES}:probe_guards",
        "crashing-guard": f"{_PROBES}:probe_crashing_guard",
        "concurrency": f"{_PROBES}:probe_concurrency",
    }
    callable_name = "handler"
    expects_async = True
    call_style = "keywords"

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return not isinstance(read(obj, "handler"), Missing)

    @classmethod
    def tool_from(cls, ref: str, obj: Any) -> Any | None:
        """A bare ``async def`` handler, wrapped in a ``Tool`` as axio's loader wraps it."""
        if not inspect.iscoroutinefunction(obj):
            return None
        from axm_runtime.axio import Tool

        # A published handler is named by its entry point, as axio's loader names it.
        name = ref.rpartition(":")[2] if ref.startswith(ENTRY_POINT_PREFIX) else obj.__name__
        return Tool(name=name, handler=obj)

    def describe(self) -> SubjectInfo:
        info = super().describe()
        handler = read(self.obj, "handler")
        guards = read(self.obj, "guards")
        concurrency = read(self.obj, "concurrency")
        facts: dict[str, Any] = {}
        if isinstance(handler, type):
            # A ToolHandler class: its fields are the parameters, its __call__ the callable.
            facts["callable"] = dataclasses.replace(
                info.callable,
                is_async=inspect.iscoroutinefunction(read(handler, "__call__")),
                parameters=(),
                takes_var_keyword=False,
                has_signature=False,
            )
        return dataclasses.replace(
            info,
            variant="handler-class" if isinstance(handler, type) else "function",
            guards=len(guards) if isinstance(guards, list | tuple) else 0,
            concurrency=concurrency if isinstance(concurrency, int) else None,
            effects=_declared_effects(self.obj, handler),
            **facts,
        )

    def input_schema(self) -> tuple[Any, str, str]:
        schema = read(self.obj, "input_schema")
        if isinstance(schema, Missing):
            return None, "derived", schema.error or "has no input_schema"
        return schema, "derived", ""

    async def call(self, input: Any) -> Any:
        return await self.obj(**input)

    def own_objects(self) -> tuple[Any, ...]:
        # The Tool class is the runtime's (unless it is home-grown, in the handler's module).
        return (read(self.obj, "handler"),)

    def payload(self, value: Any) -> tuple[Any, str]:
        """A list of content blocks, which axio's agent passes on as it does a str, is judged as
        the blocks' fields, their bytes in base64 as a model is sent them."""
        if isinstance(value, list) and all(_is_content_block(item) for item in value):
            return [_block_fields(block) for block in value], CONTENT_BLOCKS
        return super().payload(value)

    def call_invalid(self, input: Any) -> Any:
        """Call a copy whose handler records whether it ran, so that a ``HandlerError`` raised by
        the runtime's own argument checks (published axio's is caused by a ``TypeError`` or
        ``ValueError``) is told from a handler that crashed; ``handler_called`` says which."""
        from axm_conformance.protocols.axio._probes import ProbeError, handler_recorded

        try:
            tool, recorder = handler_recorded(self.obj)
        except ProbeError:
            return self.call(input)

        async def recorded() -> Any:
            try:
                return await tool(**input)
            finally:
                self.handler_called = "handler" in recorder.events

        return recorded()


class _AnyArguments(Mapping[str, Any]):
    """Arguments in which every parameter is ".": enough for a declaration to say what it does."""

    def __getitem__(self, key: str) -> Any:
        return "."

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _declared_effects(tool: Any, handler: Any) -> tuple[str, ...]:
    """The operations of the accesses the tool declares (published axio's ``Tool.access``, else
    its handler's ``__axio_access__``); () when it declares none. A declaration that fails is
    read as axio's ``unknown`` operation: the tool may then do anything."""
    describe = read(tool, "access")
    if not callable(describe):
        describe = read(handler, "__axio_access__")
    if not callable(describe):
        return ()
    try:
        return tuple(sorted({str(access.operation) for access in describe(_AnyArguments())}))
    except Exception:
        return ("unknown",)


def _is_content_block(value: Any) -> bool:
    """An instance of a class named ContentBlock or derived from one, whichever runtime's
    (``axio.blocks``, ``axm_runtime.axio``): known by name, so that axio need not be imported."""
    return any(cls.__name__ == "ContentBlock" for cls in type(value).__mro__)


def _block_fields(block: Any) -> Any:
    """``{"TextBlock": {"text": ...}}``: a dataclass block's fields, bytes in base64."""
    if not dataclasses.is_dataclass(block):
        return block
    fields = {field.name: getattr(block, field.name) for field in dataclasses.fields(block)}
    return {
        type(block).__name__: {
            name: base64.b64encode(value).decode()
            if isinstance(value, bytes | bytearray)
            else value
            for name, value in fields.items()
        }
    }
