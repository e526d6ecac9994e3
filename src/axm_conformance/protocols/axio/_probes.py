"""Probes of guards and concurrency limits, run in the worker on instrumented copies of a tool.

A probe never changes the tool under test: it builds a copy (``dataclasses.replace``) whose
handler and guards are wrapped in recorders, so the kit can see what ran, in which order, with
which arguments, and how many handlers were in flight at once. The copy keeps the tool's class,
so it is that class's guard and limit logic that is judged.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from axm_conformance.errors import AxmConformanceError
from axm_conformance.protocols.base import ExceptionInfo, ToolState, exception_info, jsonable

__all__ = [
    "GuardTrace",
    "LimitTrace",
    "handler_recorded",
    "probe_concurrency",
    "probe_crashing_guard",
    "probe_guards",
]

# How long an instrumented handler holds its permit while the concurrency probe measures: calls
# started together all enter (or wait) within one turn of the event loop, far shorter.
_HOLD = 0.02
# How long a call may wait for a permit before the probe calls the permit lost.
_PERMIT_WAIT = 2.0


class ProbeError(AxmConformanceError):
    """The tool cannot be instrumented for a probe; the message says why."""


@dataclass
class _Recorder:
    """What the instrumented handler and guards saw, in order."""

    events: list[str] = field(default_factory=list)
    guard_outputs: list[Any] = field(default_factory=list)
    handler_inputs: list[Any] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    mode: str = "pass"  # "pass", "hold", "raise", "deny" or "hang": what the copy does next


@dataclass(frozen=True)
class GuardTrace:
    """One call through the instrumented guard chain."""

    events: tuple[str, ...]
    guard_outputs: tuple[Any, ...]  # what each guard that returned gave back (JSON-rendered)
    handler_inputs: tuple[Any, ...]  # what the handler received, per run (JSON-rendered)
    exception: ExceptionInfo | None
    returned: Any  # what the call returned, JSON-rendered, when it returned
    problem: str = ""  # why the probe could not run


@dataclass(frozen=True)
class LimitTrace:
    """What the concurrency probe saw."""

    limit: int
    calls: int
    peak: int
    leaks: tuple[str, ...]  # failure kinds after which a valid call could not get a permit
    second_loop: str  # "" when a contended call from a second event loop worked, else what failed
    problem: str = ""  # why the probe could not run


def _rendered(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    return jsonable(value)[0]


async def _enter(recorder: _Recorder, received: Any) -> None:
    """A recorded handler starts: count it, then act as the probe's mode says."""
    recorder.events.append("handler")
    recorder.handler_inputs.append(_rendered(received))
    recorder.in_flight += 1
    recorder.peak = max(recorder.peak, recorder.in_flight)
    if recorder.mode == "raise":
        raise RuntimeError("raised by the probe")
    if recorder.mode in ("hold", "hang"):
        await asyncio.sleep(3600 if recorder.mode == "hang" else _HOLD)


# A ToolHandler is a pydantic model, and building a model class takes about a millisecond: the
# recording subclass of a handler class is made once, and told which recorder to use (the worker
# makes one call at a time).
_RECORDING_CLASSES: dict[type, type] = {}
_RECORDER_OF: dict[type, _Recorder] = {}


def _record_handler(handler: Any, recorder: _Recorder) -> Any:
    """The handler, wrapped so that every run is recorded (an ``async def`` or a ToolHandler)."""
    if isinstance(handler, type):
        recording = _RECORDING_CLASSES.get(handler)
        if recording is None:

            async def call_instance(self: Any) -> Any:
                current = _RECORDER_OF[type(self)]
                try:
                    await _enter(current, self)
                    return await handler.__call__(self)
                finally:
                    current.in_flight -= 1

            namespace = {"__call__": call_instance, "__doc__": handler.__doc__}
            recording = _RECORDING_CLASSES[handler] = type(handler.__name__, (handler,), namespace)
        _RECORDER_OF[recording] = recorder
        return recording

    @functools.wraps(handler)
    async def call_function(*args: Any, **kwargs: Any) -> Any:
        try:
            await _enter(recorder, kwargs)
            return await handler(*args, **kwargs)
        finally:
            recorder.in_flight -= 1

    return call_function


def _record_guard(index: int, guard: Any, recorder: _Recorder) -> Callable[..., Awaitable[Any]]:
    async def recorded(tool: Any, *args: Any, **kwargs: Any) -> Any:
        recorder.events.append(f"guard {index}")
        try:
            decision = guard(tool, *args, **kwargs)
            if inspect.isawaitable(decision):
                decision = await decision
        except BaseException as exc:
            recorder.events.append(f"guard {index} raised {type(exc).__name__}")
            raise
        recorder.guard_outputs.append(_rendered(decision))
        return decision

    return recorded


def _instrumented(
    tool: Any, recorder: _Recorder, *, extra_guard: Callable[..., Any] | None = None
) -> Any:
    # ``tool`` is Any: it is a stranger's object, checked for the shape a probe needs here.
    """A copy of ``tool`` with recorded handler and guards (and ``extra_guard`` first)."""
    if isinstance(tool, type) or not dataclasses.is_dataclass(type(tool)):
        raise ProbeError(f"a {type(tool).__name__} is not a dataclass, so it cannot be copied")
    guards = [_record_guard(i, g, recorder) for i, g in enumerate(getattr(tool, "guards", ()))]
    if extra_guard is not None:
        guards.insert(0, extra_guard)
    try:
        handler = _record_handler(tool.handler, recorder)
        return dataclasses.replace(tool, handler=handler, guards=tuple(guards))
    except Exception as exc:
        raise ProbeError(f"copying the tool failed: {type(exc).__name__}: {exc}") from exc


def handler_recorded(tool: Any) -> tuple[Any, _Recorder]:
    """A shallow copy of ``tool`` whose handler records its runs; everything else is the tool's.

    Not re-initialised like the probes' copies: published axio keeps the schema it derived from
    the handler in an init field, which a new ``__init__`` takes for an explicit schema, and then
    drops the handler's own argument checks (``Field`` bounds), the very checks judged here.
    """
    handler = getattr(tool, "handler", None)
    if not (isinstance(handler, type) or inspect.iscoroutinefunction(handler)):
        raise ProbeError("the handler is neither an async def function nor a class")
    recorder = _Recorder()
    try:
        recorded = copy.copy(tool)
        object.__setattr__(recorded, "handler", _record_handler(handler, recorder))
    except Exception as exc:
        raise ProbeError(f"copying the tool failed: {type(exc).__name__}: {exc}") from exc
    return recorded, recorder


def probe_guards(
    state: ToolState[Any], input: dict[str, Any], crash_first: bool = False
) -> GuardTrace:
    """Call an instrumented copy once with ``input``; with ``crash_first`` a guard that raises
    RuntimeError is put in front of the tool's own guards."""
    recorder = _Recorder()

    async def crashing(tool: Any, *args: Any, **kwargs: Any) -> Any:
        recorder.events.append("injected guard raised RuntimeError")
        raise RuntimeError("a guard crashed (injected by the probe)")

    try:
        tool = _instrumented(
            state.protocol.obj, recorder, extra_guard=crashing if crash_first else None
        )
    except ProbeError as exc:
        return GuardTrace((), (), (), None, None, problem=str(exc))
    exception = None
    returned = None
    try:
        returned = _rendered(state.loop.run_until_complete(tool(**copy.deepcopy(input))))
    except BaseException as exc:
        exception = exception_info(exc)
    return GuardTrace(
        events=tuple(recorder.events),
        guard_outputs=tuple(recorder.guard_outputs),
        handler_inputs=tuple(recorder.handler_inputs),
        exception=exception,
        returned=returned,
    )


def probe_crashing_guard(state: ToolState[Any], input: dict[str, Any]) -> GuardTrace:
    """Call an instrumented copy once with ``input``, a guard that raises RuntimeError put in
    front of the tool's own guards (see probe_guards)."""
    return probe_guards(state, input, crash_first=True)


def probe_concurrency(state: ToolState[Any], inputs: tuple[dict[str, Any], Any]) -> LimitTrace:
    """Judge a tool's concurrency limit on an instrumented copy, in two event loops, with
    ``inputs``: a valid input and an invalid one.

    First 3 x limit concurrent calls with a slowed handler (the peak in flight must not pass the
    limit); then limit + 1 failures of each kind (invalid arguments, guard denial, handler
    exception, and cancellation of as many concurrent calls), each kind followed by a valid call
    that must still get a permit; then
    contended calls from a second event loop, after the first is closed.
    """
    valid, invalid = inputs
    limit = state.protocol.obj.concurrency
    recorder = _Recorder()

    async def switch(tool: Any, *args: Any, **kwargs: Any) -> Any:
        if recorder.mode == "deny":
            raise _guard_error(state.protocol.obj)("denied by the probe")
        return args[0] if args else kwargs

    try:
        tool = _instrumented(state.protocol.obj, recorder, extra_guard=switch)
    except ProbeError as exc:
        return LimitTrace(limit, 0, 0, (), "", problem=str(exc))
    calls = _LimitCalls(tool, recorder, valid, invalid, limit)
    loop = asyncio.new_event_loop()
    try:
        leaks = loop.run_until_complete(calls.failures_leave_permits())
    finally:
        loop.close()
    return LimitTrace(
        limit=limit,
        calls=3 * limit,
        peak=recorder.peak,
        leaks=tuple(leaks),
        second_loop=calls.in_a_second_loop(),
    )


@dataclass
class _LimitCalls:
    """The calls that judge a concurrency limit, on a tool instrumented by ``recorder``."""

    tool: Any
    recorder: _Recorder
    valid: dict[str, Any]
    invalid: Any
    limit: int

    async def one(self, mode: str, arguments: Any) -> bool:
        """Make one call; False when it waited too long for a permit."""
        self.recorder.mode = mode
        try:
            await asyncio.wait_for(self.tool(**copy.deepcopy(arguments)), _PERMIT_WAIT)
        except TimeoutError:
            return False
        except Exception:
            pass
        return True

    async def burst(self, count: int) -> list[BaseException]:
        """Fire ``count`` concurrent valid calls; the exceptions the runtime itself raised."""
        self.recorder.mode = "hold"
        calls = (self.tool(**copy.deepcopy(self.valid)) for _ in range(count))
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        # A tool's own errors (GuardError, HandlerError) may answer a valid input; anything
        # else came from the runtime (a semaphore bound to another event loop, say).
        return [
            outcome
            for outcome in outcomes
            if isinstance(outcome, BaseException)
            and not {"GuardError", "HandlerError"} & {k.__name__ for k in type(outcome).__mro__}
        ]

    async def cancel(self, count: int) -> None:
        """Cancel ``count`` concurrent calls: those holding a permit and one waiting for it."""
        self.recorder.mode = "hang"
        tasks = [
            asyncio.ensure_future(self.tool(**copy.deepcopy(self.valid))) for _ in range(count)
        ]
        await asyncio.sleep(_HOLD)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def failures_leave_permits(self) -> list[str]:
        """A burst, then each kind of failure limit + 1 times, each followed by a valid call:
        the first kind after which no permit was left (none when every kind left them)."""
        await self.burst(3 * self.limit)
        failures = {
            "invalid arguments": ("pass", self.invalid),
            "guard denial": ("deny", self.valid),
            "handler exception": ("raise", self.valid),
        }
        for kind in (*failures, "cancellation"):
            if kind == "cancellation":
                await self.cancel(self.limit + 1)
            else:
                for _ in range(self.limit + 1):
                    if not await self.one(*failures[kind]):
                        return [kind]  # a failing call already waited for a permit in vain
            if not await self.one("pass", self.valid):
                return [kind]  # the permits are gone: later kinds cannot be told apart
        return []

    def in_a_second_loop(self) -> str:
        """What contended calls from a second event loop met ("" when they were served)."""
        limit = self.limit
        started = time.monotonic()
        try:
            errors = asyncio.run(
                asyncio.wait_for(self.burst(2 * limit), _PERMIT_WAIT + 2 * limit * _HOLD)
            )
        except TimeoutError:
            waited = time.monotonic() - started
            return f"contended calls from a second event loop did not finish in {waited:.1f} s"
        except Exception as exc:
            return f"contended calls from a second event loop raised {type(exc).__name__}: {exc}"
        if errors:
            return (
                f"{len(errors)} of {2 * limit} contended calls from a second event loop raised "
                f"{type(errors[0]).__name__}: {errors[0]}"
            )
        return ""


def _guard_error(tool: Any) -> type[Exception]:
    """The GuardError class of the runtime the tool is built on."""
    module = inspect.getmodule(type(tool))
    error = getattr(module, "GuardError", None)
    if isinstance(error, type) and issubclass(error, Exception):
        return error
    from axm_runtime.axio import GuardError

    return GuardError
