"""Amplifier: tools with ``async execute(input: dict) -> ToolResult``, mounted on a coordinator.

The protocol follows the Amplifier tool contract; the result type, the coordinator, module loading
and the events the orchestrator emits around each call follow the published ``amplifier-core``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from importlib import metadata
from typing import Any, Protocol, runtime_checkable

import pydantic

__all__ = ["Coordinator", "HookRegistry", "Tool", "ToolResult", "call_tool", "load_modules"]

TOOLS = "tools"

HookHandler = Callable[[str, dict[str, Any]], Any]


@runtime_checkable
class Tool(Protocol):
    """An Amplifier tool. ``input_schema`` is customary but not a protocol member."""

    @property
    def name(self) -> str:
        """Unique tool identifier."""
        ...

    @property
    def description(self) -> str:
        """Human-readable description for the LLM."""
        ...

    async def execute(self, input: dict[str, Any]) -> ToolResult:
        """Execute the tool."""
        ...


class ToolResult(pydantic.BaseModel):
    """The outcome of one tool call.

    ``error`` is a string in the Amplifier contract and a dict with a ``message`` in
    amplifier-core; both are in use, so both are accepted and :attr:`error_message` reads either.
    """

    success: bool = True
    output: Any = None
    error: str | dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None

    @pydantic.field_validator("error")
    @classmethod
    def _error_dict_has_message(
        cls, error: str | dict[str, Any] | None
    ) -> str | dict[str, Any] | None:
        if isinstance(error, dict) and not isinstance(error.get("message"), str):
            raise ValueError("an error dict needs a 'message' string")
        return error

    @property
    def error_message(self) -> str | None:
        """The error text, whichever form ``error`` takes."""
        if isinstance(self.error, dict):
            return str(self.error["message"])
        return self.error


class HookRegistry:
    """Event handlers by event name, called in priority order (lower first)."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[tuple[int, int, HookHandler]]] = {}
        self._registered = 0

    def register(
        self, event: str, handler: HookHandler, *, priority: int = 0
    ) -> Callable[[], None]:
        """Call ``handler(event, data)`` on every ``emit`` of ``event``; returns an unregister."""
        self._registered += 1
        entry = (priority, self._registered, handler)
        handlers = self._handlers.setdefault(event, [])
        handlers.append(entry)
        handlers.sort(key=lambda item: item[:2])
        return lambda: handlers.remove(entry) if entry in handlers else None

    async def emit(self, event: str, data: dict[str, Any]) -> None:
        """Call every handler of ``event``; async handlers are awaited."""
        for _, _, handler in list(self._handlers.get(event, ())):
            outcome = handler(event, data)
            if inspect.isawaitable(outcome):
                await outcome


class Coordinator:
    """What a module's ``mount`` is given: mounted modules by mount point (``"tools"``, ...), the
    hook registry, capabilities shared between modules, cleanups, the session's id and config."""

    def __init__(self, session_id: str = "session", config: Mapping[str, Any] | None = None):
        self.hooks = HookRegistry()
        self.session_id = session_id
        self.config: dict[str, Any] = dict(config or {})
        self.mount_points: dict[str, dict[str, Any]] = {}
        self._capabilities: dict[str, Any] = {}
        self._cleanups: list[Callable[[], Any]] = []

    async def mount(self, mount_point: str, module: Any, name: str | None = None) -> None:
        """Mount ``module`` under ``name`` (default: its ``name`` attribute)."""
        key = name if name is not None else getattr(module, "name", None)
        if not isinstance(key, str) or not key:
            raise ValueError(f"cannot mount {module!r} at {mount_point!r}: it has no name")
        self.mount_points.setdefault(mount_point, {})[key] = module

    async def unmount(self, mount_point: str, name: str) -> None:
        """Remove a mounted module; unknown names are ignored."""
        self.mount_points.get(mount_point, {}).pop(name, None)

    def get(self, mount_point: str, name: str | None = None) -> Any:
        """One mounted module by name (``None`` when absent), or all of a mount point as a dict."""
        mounted = self.mount_points.get(mount_point, {})
        if name is None:
            return dict(mounted)
        return mounted.get(name)

    def register_capability(self, name: str, value: Any) -> None:
        """Offer ``value`` to the other modules under ``name``."""
        self._capabilities[name] = value

    def get_capability(self, name: str) -> Any:
        """The value registered under ``name``, or ``None``."""
        return self._capabilities.get(name)

    def register_cleanup(self, cleanup: Callable[[], Any]) -> None:
        """Have :meth:`cleanup` call ``cleanup`` (a function, sync or async)."""
        self._cleanups.append(cleanup)

    async def cleanup(self) -> None:
        """Call the registered cleanups, the last registered first, each once.

        A cleanup that raises does not stop the others; the first error is raised at the end.
        """
        cleanups, self._cleanups = self._cleanups, []
        errors: list[Exception] = []
        for cleanup in reversed(cleanups):
            try:
                outcome = cleanup()
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise errors[0]


def _as_result(value: Any) -> ToolResult:
    """Read what a tool returned as a :class:`ToolResult` (a dict or any result-shaped object)."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, Mapping):
        return ToolResult.model_validate(dict(value))
    if hasattr(value, "success"):
        fields = ("success", "output", "error", "metadata")
        return ToolResult.model_validate(
            {key: getattr(value, key) for key in fields if hasattr(value, key)}
        )
    raise TypeError(f"expected a ToolResult, got {type(value).__name__}")


async def call_tool(coordinator: Coordinator, name: str, input: dict[str, Any]) -> ToolResult:
    """Run one tool call the way the orchestrator does, emitting its events.

    Emits ``tool:pre`` {tool_name, tool_input}, then ``tool:post`` {tool_name, tool_input, result}
    when the tool returns, or ``tool:error`` {tool_name, error: {type, msg}} when it raises, is
    missing, or returns something that is not a result; the last three give a failed result.
    """
    tool = coordinator.get(TOOLS, name)
    await coordinator.hooks.emit("tool:pre", {"tool_name": name, "tool_input": input})
    try:
        if tool is None:
            raise LookupError(f"no tool named {name!r} is mounted")
        result = _as_result(await tool.execute(input))
    except Exception as exc:
        error = {"type": type(exc).__name__, "msg": str(exc)}
        await coordinator.hooks.emit("tool:error", {"tool_name": name, "error": error})
        return ToolResult(success=False, error=f"{error['type']}: {error['msg']}")
    await coordinator.hooks.emit(
        "tool:post", {"tool_name": name, "tool_input": input, "result": result}
    )
    return result


MountFunction = Callable[[Coordinator, Any], Awaitable[Any]]


async def load_modules(
    coordinator: Coordinator,
    group: str = "amplifier.modules",
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Mount every module published in ``group``; returns each module's cleanup by entry name.

    ``config`` maps an entry-point name to the configuration its ``mount`` receives. A module that
    fails to load or mount is an error naming its entry point.
    """
    config = config or {}
    cleanups: dict[str, Any] = {}
    for entry_point in metadata.entry_points(group=group):
        try:
            mount: MountFunction = entry_point.load()
            cleanups[entry_point.name] = await mount(coordinator, config.get(entry_point.name))
        except Exception as exc:
            raise RuntimeError(
                f"module {entry_point.name!r} ({entry_point.value}) of {group!r} failed to "
                f"mount: {type(exc).__name__}: {exc}"
            ) from exc
    return cleanups
