"""The axio Tool, one test per promise: validation, guards, errors, context, concurrency."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import pytest

from axm_runtime.axio import (
    CONTEXT,
    AllowAllGuard,
    DenyAllGuard,
    Field,
    GuardError,
    HandlerError,
    Tool,
    ToolHandler,
)


def run(awaitable: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await awaitable

    return asyncio.run(main())


async def greet(
    name: str,
    greeting: Literal["hello", "hi"] = "hello",
    times: Annotated[int, Field(default=1, ge=1, le=3)] = 1,
) -> str:
    """Greet someone."""
    return " ".join([f"{greeting} {name}"] * times)


def test_defaults_are_injected() -> None:
    received: dict[str, Any] = {}

    async def handler(a: str, b: list[int] | None = None, c: int = 7) -> str:
        received.update(a=a, b=b, c=c)
        return "ok"

    run(Tool(name="t", handler=handler)(a="x"))
    assert received == {"a": "x", "b": None, "c": 7}


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"name": 3},
        {"name": True},
        {"name": "x", "greeting": "hey"},
        {"name": "x", "times": 0},
        {"name": "x", "times": 4},
        {"name": "x", "times": "2"},
        {"name": "x", "times": True},
    ],
    ids=["missing", "wrong-type", "bool", "literal", "below-ge", "above-le", "str-int", "bool-int"],
)
def test_invalid_arguments_raise_handler_error_before_the_handler(kwargs: dict[str, Any]) -> None:
    calls: list[Any] = []

    async def recorded(
        name: str,
        greeting: Literal["hello", "hi"] = "hello",
        times: Annotated[int, Field(default=1, ge=1, le=3)] = 1,
    ) -> str:
        calls.append(name)
        return "ran"

    tool = Tool(name="greet", handler=recorded)
    with pytest.raises(HandlerError) as raised:
        run(tool(**kwargs))
    assert isinstance(raised.value.__cause__, ValueError | TypeError)
    assert calls == []


def test_valid_arguments_reach_the_handler() -> None:
    tool = Tool(name="greet", handler=greet)
    assert run(tool(name="Ada", greeting="hi", times=2)) == "hi Ada hi Ada"


def test_stray_keys_are_stripped_unless_the_handler_takes_var_keyword() -> None:
    seen: dict[str, Any] = {}

    async def open_handler(query: str, **extra: Any) -> str:
        seen.update(extra)
        return "ok"

    assert run(Tool(name="greet", handler=greet)(name="x", _tool_call_id="abc")) == "hello x"
    run(Tool(name="open", handler=open_handler)(query="q", _tool_call_id="abc"))
    assert seen == {"_tool_call_id": "abc"}


def test_guards_run_in_order_and_may_rewrite() -> None:
    order: list[str] = []

    def tagging(label: str) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def guard(tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
            order.append(label)
            return {**kwargs, "name": kwargs["name"] + label}

        return guard

    tool = Tool(name="greet", handler=greet, guards=(tagging("1"), tagging("2")))
    assert run(tool(name="x")) == "hello x12"
    assert order == ["1", "2"]


def test_guard_denial_raises_guard_error_and_skips_the_handler() -> None:
    ran: list[bool] = []

    async def handler(name: str) -> str:
        ran.append(True)
        return name

    with pytest.raises(GuardError):
        run(Tool(name="t", handler=handler, guards=(DenyAllGuard(),))(name="x"))
    assert ran == []
    assert run(Tool(name="t", handler=handler, guards=(AllowAllGuard(),))(name="x")) == "x"


@pytest.mark.parametrize("crash", [RuntimeError("boom"), KeyError("k"), ValueError("v")])
def test_a_crashing_guard_denies(crash: Exception) -> None:
    ran: list[bool] = []

    async def handler(name: str) -> str:
        ran.append(True)
        return name

    async def crashing(tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        raise crash

    with pytest.raises(GuardError) as raised:
        run(Tool(name="t", handler=handler, guards=(crashing,))(name="x"))
    assert raised.value.__cause__ is crash
    assert ran == []


def test_a_guard_returning_no_kwargs_denies() -> None:
    async def forgetful(tool: Tool[Any], **kwargs: Any) -> None:
        return None

    with pytest.raises(GuardError):
        run(Tool(name="greet", handler=greet, guards=(forgetful,))(name="x"))


def test_handler_exceptions_are_wrapped_with_the_original_as_cause() -> None:
    original = FileNotFoundError("nope.txt")

    async def handler() -> str:
        raise original

    with pytest.raises(HandlerError) as raised:
        run(Tool(name="t", handler=handler)())
    assert raised.value.__cause__ is original


def test_context_is_set_during_the_call_only() -> None:
    async def handler() -> str:
        return str(CONTEXT.get())

    assert run(Tool(name="t", handler=handler, context={"db": 1})()) == "{'db': 1}"
    with pytest.raises(LookupError):
        CONTEXT.get()


def test_handler_must_be_async() -> None:
    def sync_handler() -> str:
        return ""

    with pytest.raises(TypeError, match="async def"):
        Tool(name="t", handler=sync_handler)  # type: ignore[arg-type]


def test_tool_is_frozen() -> None:
    tool = Tool(name="greet", handler=greet)
    with pytest.raises(AttributeError):
        tool.name = "other"  # type: ignore[misc]
    assert tool.description == "Greet someone."


class Page(ToolHandler):
    """A page of results."""

    page: int = 1
    size: int = 10

    async def __call__(self) -> str:
        return f"page {self.page} of size {self.size}"


def test_handler_variant_validates_with_the_model() -> None:
    tool = Tool(name="page", handler=Page)
    assert run(tool(page=2)) == "page 2 of size 10"
    with pytest.raises(HandlerError):
        run(tool(page="two"))


def test_handler_variant_guards_receive_and_return_the_instance() -> None:
    async def cap(tool: Tool[Any], handler: Page) -> Page:
        return handler.model_copy(update={"size": min(handler.size, 5)})

    async def deny_big_pages(tool: Tool[Any], handler: Page) -> Page:
        if handler.page > 100:
            raise GuardError("too far")
        return handler

    tool = Tool(name="page", handler=Page, guards=(cap, deny_big_pages))
    assert run(tool(size=50)) == "page 1 of size 5"
    with pytest.raises(GuardError):
        run(tool(page=101))


class Gauge:
    """Counts handlers in flight and remembers the peak."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0
        self.lock = threading.Lock()

    async def slow(self, delay: float = 0.02) -> str:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(delay)
        finally:
            with self.lock:
                self.now -= 1
        return "done"


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_concurrency_limit_holds_under_ten_concurrent_calls(limit: int) -> None:
    gauge = Gauge()

    async def handler() -> str:
        return await gauge.slow()

    tool = Tool(name="slow", handler=handler, concurrency=limit)

    async def main() -> list[str]:
        return await asyncio.gather(*(tool() for _ in range(10)))

    assert asyncio.run(main()) == ["done"] * 10
    assert gauge.peak == limit


def test_concurrency_limit_holds_across_threads_and_loops() -> None:
    gauge = Gauge()

    async def handler() -> str:
        return await gauge.slow()

    tool = Tool(name="slow", handler=handler, concurrency=2)

    async def burst() -> None:
        await asyncio.gather(*(tool() for _ in range(5)))

    threads = [threading.Thread(target=asyncio.run, args=(burst(),)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert gauge.peak <= 2


async def _fails(kind: str) -> str:
    if kind == "handler":
        raise RuntimeError("handler failed")
    await asyncio.sleep(10)
    return "late"


@pytest.mark.parametrize("failure", ["invalid", "denied", "handler", "cancelled"])
def test_no_permit_is_lost_after_failures(failure: str) -> None:
    async def deny_when_asked(tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        if kwargs["kind"] == "deny":
            raise GuardError("denied")
        return kwargs

    tool = Tool(name="f", handler=_fails, guards=(deny_when_asked,), concurrency=2)

    async def one_failure() -> None:
        if failure == "invalid":
            with pytest.raises(HandlerError):
                await tool(kind=5)
        elif failure == "denied":
            with pytest.raises(GuardError):
                await tool(kind="deny")
        elif failure == "handler":
            with pytest.raises(HandlerError):
                await tool(kind="handler")
        else:
            task = asyncio.ensure_future(tool(kind="sleep"))
            await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    async def main() -> None:
        for _ in range(3):  # limit + 1 failures
            await one_failure()
        with pytest.raises(HandlerError):
            await asyncio.wait_for(tool(kind="handler"), timeout=1)
        assert tool._limiter is not None and tool._limiter._in_use == 0

    asyncio.run(main())


def test_cancelled_waiter_passes_its_permit_on() -> None:
    gauge = Gauge()

    async def handler() -> str:
        return await gauge.slow(0.05)

    tool = Tool(name="slow", handler=handler, concurrency=1)

    async def main() -> None:
        holder = asyncio.ensure_future(tool())
        await asyncio.sleep(0)
        waiters = [asyncio.ensure_future(tool()) for _ in range(3)]
        await asyncio.sleep(0.01)
        waiters[0].cancel()
        assert await holder == "done"
        assert await asyncio.gather(*waiters[1:]) == ["done", "done"]
        assert waiters[0].cancelled()

    asyncio.run(main())
    assert gauge.peak == 1


def test_tool_works_from_a_second_event_loop() -> None:
    gauge = Gauge()

    async def handler() -> str:
        return await gauge.slow(0.01)

    tool = Tool(name="slow", handler=handler, concurrency=1)

    async def contend() -> list[str]:
        return await asyncio.gather(tool(), tool(), tool())

    assert asyncio.run(contend()) == ["done"] * 3
    assert asyncio.run(contend()) == ["done"] * 3
    assert gauge.peak == 1


@pytest.mark.parametrize("limit", [0, -1, 1.5])
def test_concurrency_must_be_positive(limit: Any) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        Tool(name="greet", handler=greet, concurrency=limit)
