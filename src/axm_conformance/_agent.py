"""The kit's side of the worker: load tools, describe them, call them and observe each call.

These functions run inside the worker process (see :mod:`axm_conformance._worker`), the only place
tool code ever runs. Everything they return is plain data from :mod:`axm_conformance._observation`.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from axm_conformance._observation import (
    ExceptionInfo,
    Observation,
    SubjectInfo,
    first_difference,
    jsonable,
)
from axm_conformance._refs import load
from axm_conformance._subjects import Adapter, adapter_for

__all__ = ["ToolState", "describe", "inspect_refs", "invoke", "open_tool"]

_KIT_DIR = str(Path(__file__).resolve().parent)
_CAUSE_DEPTH = 8


def inspect_refs(state: None, refs: list[str], protocol: str) -> list[SubjectInfo]:
    """Describe every tool the references name (raises LoadError for a bad reference)."""
    subjects: list[SubjectInfo] = []
    for ref in refs:
        loop = asyncio.new_event_loop()
        try:
            for sub_ref, obj, hint in load(ref, loop.run_until_complete):
                subjects.append(adapter_for(obj, sub_ref, _protocol(protocol, hint)).describe())
        finally:
            loop.close()
    return subjects


def _protocol(option: str, hint: str) -> str:
    return option if option != "auto" else hint


@dataclass
class ToolState:
    """One loaded tool in the worker, with the event loop all its calls run on."""

    adapter: Adapter
    loop: asyncio.AbstractEventLoop
    size_limit: int


def open_tool(ref: str, protocol: str, size_limit: int) -> ToolState:
    """Load exactly one tool; the worker keeps the result as its state."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loaded = load(ref, loop.run_until_complete)
    if len(loaded) != 1:
        raise ValueError(f"{ref!r} names {len(loaded)} tools, not one")
    sub_ref, obj, hint = loaded[0]
    return ToolState(adapter_for(obj, sub_ref, _protocol(protocol, hint)), loop, size_limit)


def describe(state: ToolState) -> SubjectInfo:
    return state.adapter.describe()


def invoke(state: ToolState, input: Any, invalid: bool = False) -> Observation:
    """Call the tool once with ``input`` and observe everything the checks judge.

    An ``invalid`` input goes the way the protocol's caller sends one: the adapter may refuse it
    as the orchestrator would (``rejected``) or route it through the protocol's own validation.
    """
    adapter = state.adapter
    before = jsonable(copy.deepcopy(input))[0]
    if state.loop.is_closed():
        # A tool closed the loop it was given; later calls still need one.
        state.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(state.loop)
    if invalid:
        refusal = adapter.refuses(input)
        if refusal:
            return Observation(status="rejected", rejected_because=refusal)
    adapter.handler_called = None
    started = time.perf_counter()
    try:
        value = adapter.call_invalid(input) if invalid else adapter.call(input)
        if inspect.isawaitable(value):
            value = state.loop.run_until_complete(asyncio.ensure_future(value, loop=state.loop))
    except BaseException as exc:
        return Observation(
            status="raised",
            exception=exception_info(exc),
            mutation=first_difference(before, jsonable(input)[0]),
            handler_called=adapter.handler_called,
            duration=time.perf_counter() - started,
        )
    duration = time.perf_counter() - started
    return Observation(
        status="returned",
        result=adapter.facts(value, size_limit=state.size_limit),
        mutation=first_difference(before, jsonable(input)[0]),
        handler_called=adapter.handler_called,
        duration=duration,
    )


def exception_info(exc: BaseException, depth: int = 0) -> ExceptionInfo:
    """The exception as data, its traceback starting at the first frame outside the kit."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_KIT_DIR):
        tb = tb.tb_next
    try:
        message = str(exc)
    except Exception as read_error:
        message = f"<str() of the exception raised {type(read_error).__name__}>"
    try:
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except Exception:
        text = f"{type(exc).__name__}: {message}\n"
    nested = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    cls: type[BaseException] = type(exc)
    return ExceptionInfo(
        type_name=cls.__name__,
        qualified_name=f"{cls.__module__}.{cls.__qualname__}",
        ancestors=tuple(klass.__name__ for klass in cls.__mro__),
        message=message,
        traceback=text,
        is_exception=isinstance(exc, Exception),
        cause=(
            exception_info(nested, depth + 1)
            if nested is not None and depth < _CAUSE_DEPTH
            else None
        ),
    )
