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

from axm_conformance._observation import CONTENT_BLOCKS, ParameterInfo, SubjectInfo
from axm_conformance._subjects._base import (
    Adapter,
    Missing,
    is_async_callable,
    read,
    signature_facts,
)

__all__ = ["AxioAdapter"]


class AxioAdapter(Adapter):
    protocol = "axio"
    returns = "str"
    exception_policy = "wrapped"
    allowed_exceptions = ("GuardError", "HandlerError")
    invalid_policy = "raise"
    keyword_call = True
    strips_unknown_keys = True

    def describe(self) -> SubjectInfo:
        handler = read(self.obj, "handler")
        is_class = isinstance(handler, type)
        parameters: tuple[ParameterInfo, ...] = ()
        if is_class:
            takes_var_keyword, has_signature = False, False
            is_async = inspect.iscoroutinefunction(read(handler, "__call__"))
        else:
            parameters, takes_var_keyword, has_signature = signature_facts(handler)
            is_async = is_async_callable(handler)
        schema = read(self.obj, "input_schema")
        guards = read(self.obj, "guards")
        concurrency = read(self.obj, "concurrency")
        return self._info(
            variant="handler-class" if is_class else "function",
            has_description=True,
            input_schema=None if isinstance(schema, Missing) else schema,
            schema_source="derived",
            schema_error=schema.error or "has no input_schema"
            if isinstance(schema, Missing)
            else "",
            output_schema=None,
            call_style="keywords",
            callable_name="handler",
            callable_present=not isinstance(handler, Missing),
            callable_is_callable=callable(handler),
            callable_is_async=is_async,
            expects_async=True,
            parameters=parameters,
            takes_var_keyword=takes_var_keyword,
            has_signature=has_signature,
            guards=len(guards) if isinstance(guards, list | tuple) else 0,
            concurrency=concurrency if isinstance(concurrency, int) else None,
            effects=_declared_effects(self.obj, handler),
        )

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
        from axm_conformance._probes import ProbeError, handler_recorded  # imports the agent

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
