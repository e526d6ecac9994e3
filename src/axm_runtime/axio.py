"""axio: async tools wrapped in a frozen :class:`Tool`, with guards and a concurrency limit.

One :class:`Tool` serves both published variants: a plain ``async def`` handler (its parameters
are the input) and a pydantic :class:`ToolHandler` subclass (its fields are the input). A handler
returns the text the model reads: a ``str``, or a list of content blocks (:class:`TextBlock`,
:class:`ImageBlock`, :class:`AudioBlock`, :class:`VideoBlock`), which published axio's agent
passes on as they are.

Exception hierarchy::

    AxioError
    └── ToolError
        ├── GuardError    # a guard denied, or crashed (fail closed)
        └── HandlerError  # invalid arguments, or the handler raised
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import pydantic

from axm_runtime._signature import MISSING, Bounds, Parameter, parameters_of, schema_from_parameters
from axm_runtime.tool_use import validate_input

__all__ = [
    "CONTEXT",
    "AllowAllGuard",
    "AudioBlock",
    "AxioError",
    "ContentBlock",
    "DenyAllGuard",
    "Field",
    "FieldInfo",
    "GuardError",
    "HandlerError",
    "ImageBlock",
    "PermissionGuard",
    "TextBlock",
    "Tool",
    "ToolError",
    "ToolHandler",
    "ToolSelector",
    "VideoBlock",
]

T = TypeVar("T")

CONTEXT: ContextVar[Any] = ContextVar("axio_tool_context")
"""The running tool's ``context``, readable from the handler and anything it calls."""


class AxioError(Exception):
    """Base of every error the axio runtime raises."""


class ToolError(AxioError):
    """A tool call did not produce a result."""


class GuardError(ToolError):
    """A permission guard denied the call, or crashed while deciding."""


class HandlerError(ToolError):
    """The arguments were invalid, or the handler raised (the original is ``__cause__``)."""


class ContentBlock:
    """Base of the blocks a handler may return, in a list, instead of a ``str``."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class TextBlock(ContentBlock):
    text: str


@dataclass(frozen=True, slots=True)
class ImageBlock(ContentBlock):
    media_type: str  # "image/png", "image/jpeg", "image/gif" or "image/webp"
    data: bytes


@dataclass(frozen=True, slots=True)
class AudioBlock(ContentBlock):
    media_type: str  # "audio/wav", "audio/mpeg", ...
    data: bytes


@dataclass(frozen=True, slots=True)
class VideoBlock(ContentBlock):
    media_type: str  # "video/mp4", "video/webm", ...
    data: bytes


class FieldInfo(Bounds):
    """Description, default and bounds of one handler parameter, from :func:`Field`."""


def Field(
    default: Any = MISSING,
    *,
    description: str | None = None,
    ge: float | None = None,
    le: float | None = None,
    gt: float | None = None,
    lt: float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
) -> Any:
    """Attach a description, a default and bounds to a parameter through ``Annotated``."""
    return FieldInfo(
        default=default,
        description=description,
        ge=ge,
        le=le,
        gt=gt,
        lt=lt,
        min_length=min_length,
        max_length=max_length,
    )


class ToolHandler(pydantic.BaseModel):
    """A handler whose fields are the tool's input; subclasses implement ``__call__``."""

    async def __call__(self) -> str:
        raise NotImplementedError


@runtime_checkable
class PermissionGuard(Protocol):
    """Decides whether a call may proceed, and may rewrite it.

    For a function handler a guard is awaited as ``guard(tool, **kwargs)`` and returns the
    (possibly rewritten) kwargs; for a :class:`ToolHandler` it is awaited as
    ``guard(tool, handler)`` and returns the (possibly rewritten) handler instance. To deny, it
    raises :class:`GuardError`.
    """

    def __call__(self, tool: Any, *args: Any, **kwargs: Any) -> Awaitable[Any]: ...


class AllowAllGuard:
    """A guard that lets every call through unchanged."""

    async def __call__(self, tool: Any, *args: Any, **kwargs: Any) -> Any:
        return args[0] if args else kwargs


class DenyAllGuard:
    """A guard that denies every call."""

    async def __call__(self, tool: Any, *args: Any, **kwargs: Any) -> Any:
        raise GuardError(f"tool {tool.name!r} is not permitted")


@runtime_checkable
class ToolSelector(Protocol):
    """Filters or ranks the available tools before each model call."""

    async def select(
        self, messages: Iterable[Any], tools: Iterable[Tool[Any]]
    ) -> Iterable[Tool[Any]]:
        """Return the tools to offer for these messages."""
        ...


class _Waiter:
    """A call waiting for a permit, on its own event loop."""

    __slots__ = ("future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Limiter:
    """A counting semaphore that works from any event loop and any thread.

    ``asyncio.Semaphore`` binds itself to the first event loop that waits on it; published axio
    then fails with a bare ``RuntimeError`` when the same tool is used from a second loop. This one
    keeps its count under a thread lock and wakes each waiter on the waiter's own loop. A permit is
    handed directly to the next waiter, and a waiter cancelled after being granted passes it on,
    so no permit is ever lost.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._in_use = 0
        self._lock = threading.Lock()
        self._waiters: deque[_Waiter] = deque()

    async def acquire(self) -> None:
        with self._lock:
            if self._in_use < self._limit and not self._waiters:
                self._in_use += 1
                return
            waiter = _Waiter(asyncio.get_running_loop())
            self._waiters.append(waiter)
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                if waiter.granted:
                    self._release_locked()
                else:
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        with self._lock:
            self._release_locked()

    def _release_locked(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if waiter.loop.is_closed():
                continue  # its task can never resume; the permit goes to the next one
            waiter.granted = True
            waiter.loop.call_soon_threadsafe(_wake, waiter.future)
            return
        self._in_use -= 1


def _is_handler_class(handler: object) -> bool:
    return isinstance(handler, type) and issubclass(handler, ToolHandler)


@dataclass(frozen=True, slots=True)
class Tool(Generic[T]):
    """A named, guarded, optionally rate-limited async tool.

    ``await tool(**kwargs)``: wait for a permit (when ``concurrency`` is set); validate the
    arguments against :attr:`input_schema` and inject defaults; run the guards in order; set
    :data:`CONTEXT` to ``context``; await the handler. Invalid arguments and handler exceptions
    raise :class:`HandlerError`, a denial :class:`GuardError`; a guard that raises anything else
    denies too (fail closed). The permit is released on every path, cancellation included.
    """

    name: str
    handler: Callable[..., Awaitable[Any]] | type[ToolHandler]
    description: str = ""
    guards: tuple[PermissionGuard, ...] = ()
    concurrency: int | None = None
    context: T = field(default_factory=dict)  # type: ignore[assignment]
    _parameters: list[Parameter] = field(init=False, repr=False, compare=False)
    _takes_var_keyword: bool = field(init=False, repr=False, compare=False)
    _schema: dict[str, Any] = field(init=False, repr=False, compare=False)
    _limiter: _Limiter | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        handler = self.handler
        if _is_handler_class(handler):
            parameters: list[Parameter] = []
            takes_var_keyword = False
            schema = handler.model_json_schema()  # type: ignore[union-attr]
            doc = handler.__doc__
        elif inspect.iscoroutinefunction(handler):
            parameters, takes_var_keyword = parameters_of(handler)
            schema = schema_from_parameters(
                parameters,
                title=f"{self.name}_input",
                extra="allow" if takes_var_keyword else "ignore",
            )
            doc = handler.__doc__
        else:
            raise TypeError(
                f"the handler of tool {self.name!r} must be an async def function or a "
                f"ToolHandler subclass, not {handler!r}"
            )
        if self.concurrency is not None and (
            not isinstance(self.concurrency, int) or self.concurrency < 1
        ):
            raise ValueError(
                f"concurrency of tool {self.name!r} must be a positive int or None, "
                f"not {self.concurrency!r}"
            )
        if not self.description and doc:
            object.__setattr__(self, "description", inspect.cleandoc(doc))
        object.__setattr__(self, "guards", tuple(self.guards))
        object.__setattr__(self, "_parameters", parameters)
        object.__setattr__(self, "_takes_var_keyword", takes_var_keyword)
        object.__setattr__(self, "_schema", schema)
        limiter = _Limiter(self.concurrency) if self.concurrency is not None else None
        object.__setattr__(self, "_limiter", limiter)

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, derived from the handler (a fresh copy)."""
        return copy.deepcopy(self._schema)

    async def __call__(self, **kwargs: Any) -> Any:
        if self._limiter is None:
            return await self._run(kwargs)
        await self._limiter.acquire()
        try:
            return await self._run(kwargs)
        finally:
            self._limiter.release()

    async def _run(self, kwargs: dict[str, Any]) -> Any:
        validation = validate_input(kwargs, self._schema)
        if not validation.valid:
            message = f"invalid arguments for tool {self.name!r}: " + "; ".join(validation.errors)
            raise HandlerError(message) from ValueError(message)
        token = CONTEXT.set(self.context)
        try:
            if _is_handler_class(self.handler):
                return await self._run_handler_class(kwargs)
            return await self._run_function(kwargs)
        finally:
            CONTEXT.reset(token)

    async def _run_function(self, kwargs: dict[str, Any]) -> Any:
        arguments = {
            parameter.name: copy.deepcopy(parameter.default)
            for parameter in self._parameters
            if not parameter.required and parameter.name not in kwargs
        }
        accepted = {parameter.name for parameter in self._parameters}
        arguments.update(
            (key, value)
            for key, value in kwargs.items()
            if self._takes_var_keyword or key in accepted
        )
        for guard in self.guards:
            arguments = await self._guarded(guard, (), arguments)
            if not isinstance(arguments, dict):
                raise GuardError(
                    f"guard {guard!r} of tool {self.name!r} returned "
                    f"{type(arguments).__name__}, not the keyword arguments"
                )
        handler: Callable[..., Awaitable[Any]] = self.handler  # type: ignore[assignment]
        return await self._handled(lambda: handler(**arguments))

    async def _run_handler_class(self, kwargs: dict[str, Any]) -> Any:
        handler_class: type[ToolHandler] = self.handler  # type: ignore[assignment]
        try:
            instance = handler_class.model_validate(kwargs)
        except pydantic.ValidationError as exc:
            raise HandlerError(f"invalid arguments for tool {self.name!r}: {exc}") from exc
        for guard in self.guards:
            instance = await self._guarded(guard, (instance,), {})
            if not isinstance(instance, handler_class):
                raise GuardError(
                    f"guard {guard!r} of tool {self.name!r} returned "
                    f"{type(instance).__name__}, not a {handler_class.__name__}"
                )
        return await self._handled(instance.__call__)

    async def _guarded(self, guard: PermissionGuard, args: tuple[Any, ...], kwargs: Any) -> Any:
        try:
            return await guard(self, *args, **kwargs)
        except GuardError:
            raise
        except Exception as exc:
            raise GuardError(
                f"guard {guard!r} of tool {self.name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def _handled(self, start: Callable[[], Awaitable[Any]]) -> Any:
        # The call itself is inside the try: binding the arguments can raise before any await.
        try:
            return await start()
        except Exception as exc:
            raise HandlerError(f"tool {self.name!r} failed: {type(exc).__name__}: {exc}") from exc
