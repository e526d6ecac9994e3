"""AXM: deterministic tools with a synchronous ``execute(**kwargs) -> ToolResult``.

The protocol, result and metadata types follow the AXM seed; discovery, schema derivation and the
orchestrator step (:func:`run_tool`) follow the published ``axm`` package and its MCP layer.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Protocol, runtime_checkable

from axm_runtime._signature import parameters_of, schema_from_parameters
from axm_runtime.tool_use import validate_input

__all__ = [
    "AXMTool",
    "ToolMetadata",
    "ToolResult",
    "discover_tools",
    "input_schema_for",
    "run_tool",
    "tool_metadata",
    "validated",
]

DEFAULT_GROUPS = ("axm.tools", "axm.tribunal.tools")


@dataclass(frozen=True)
class ToolResult:
    """Immutable result of a tool execution.

    Attributes:
        success: Whether the tool execution succeeded.
        data: Structured output data (backend-specific).
        error: Human-readable error message, if any.
        hint: Optional next-step suggestion for the agent.
        text: Optional pre-rendered text representation (e.g. Markdown).
    """

    success: bool
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    hint: str | None = None
    text: str | None = None


@runtime_checkable
class AXMTool(Protocol):
    """Structural protocol for AXM deterministic tools.

    Implementors provide ``name`` (a property or a plain attribute) and ``execute`` with explicit,
    keyword-passable parameters. The discovery attributes (``agent_hint``, ``expose_directly``,
    ``domain``, ``tags``) are deliberately not protocol members: a runtime-checkable protocol
    would then require them, and most tools satisfy this one structurally without them. Read them
    through :func:`tool_metadata`.
    """

    @property
    def name(self) -> str:
        """Unique tool identifier (e.g., 'esbmc', 'dafny', 'pytest')."""
        ...

    @property
    def execute(self) -> Callable[..., ToolResult]:
        """Execute the tool with the given keyword arguments.

        The seed spells this ``def execute(self, **kwargs: Any) -> ToolResult``, "the structural
        minimum". At run time any method does; under a type checker, though, an explicit
        ``execute(self, *, path: str)`` is narrower than ``**kwargs: Any`` and would not satisfy
        it. A read-only callable member expresses what the seed means for both.
        """
        ...


@dataclass(frozen=True)
class ToolMetadata:
    """Facade/CLI discovery metadata for a tool, with safe defaults."""

    expose_directly: bool = False
    domain: str | None = None
    tags: frozenset[str] = frozenset()


def tool_metadata(tool: object) -> ToolMetadata:
    """Read a tool's optional discovery attributes into a :class:`ToolMetadata`.

    Anything missing falls back to the default; ``tags`` is coerced to a ``frozenset``.
    """
    raw_tags = getattr(tool, "tags", None) or ()
    return ToolMetadata(
        expose_directly=bool(getattr(tool, "expose_directly", False)),
        domain=getattr(tool, "domain", None),
        tags=frozenset(raw_tags),
    )


def discover_tools(groups: Iterable[str] = DEFAULT_GROUPS) -> dict[str, AXMTool]:
    """Load the tools published in the given entry-point groups, keyed by tool name.

    A class entry is instantiated with no arguments, as axm's loader does. Two entries that give
    the same tool name are an error naming both entry points, because a registry keyed by name
    would otherwise silently keep only one of them.
    """
    tools: dict[str, AXMTool] = {}
    origins: dict[str, str] = {}
    for group in groups:
        for entry_point in metadata.entry_points(group=group):
            loaded = entry_point.load()
            tool = loaded() if isinstance(loaded, type) else loaded
            origin = f"{group}:{entry_point.name} = {entry_point.value}"
            name = tool.name
            if name in tools:
                raise ValueError(
                    f"two entry points publish the tool name {name!r}: {origins[name]} and {origin}"
                )
            tools[name] = tool
            origins[name] = origin
    return tools


def input_schema_for(tool: object) -> dict[str, Any]:
    """The tool's JSON input schema: its own ``input_schema``, else one derived from ``execute``.

    The derived schema (JSON Schema 2020-12) is what axm's MCP layer advertises: one property per
    keyword parameter, parameters without a default required, and additional properties
    forbidden unless ``execute`` takes ``**kwargs`` (an unknown keyword could not bind).
    """
    declared = getattr(tool, "input_schema", None)
    if isinstance(declared, dict):
        return declared
    execute = tool.execute  # type: ignore[attr-defined]
    return copy.deepcopy(_derived_schema(getattr(execute, "__func__", execute)))


@functools.lru_cache(maxsize=256)
def _derived_schema(function: Callable[..., Any]) -> dict[str, Any]:
    """The schema of an ``execute`` function, derived once (pydantic model building is slow)."""
    parameters, takes_var_keyword = parameters_of(function)
    if parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    return schema_from_parameters(
        parameters,
        title=f"{function.__qualname__.replace('.', '_')}_input",
        extra="allow" if takes_var_keyword else "forbid",
    )


def validated(execute: Callable[..., ToolResult]) -> Callable[..., ToolResult]:
    """Decorate ``execute`` so that arguments breaking the input schema give a failed result.

    AXM leaves validation to the orchestrator, but a tool called directly (by another tool, a
    script, a test) then sees whatever it is given; with this decorator it answers invalid
    arguments the way :func:`run_tool` does, naming the field, without running its body.
    """

    @functools.wraps(execute)
    def checked(self: Any, **kwargs: Any) -> ToolResult:
        return _refusal(self, kwargs) or execute(self, **kwargs)

    return checked


def _refusal(tool: Any, kwargs: dict[str, Any]) -> ToolResult | None:
    """A failed result naming the fields when ``kwargs`` break the tool's input schema."""
    validation = validate_input(kwargs, input_schema_for(tool))
    if validation.valid:
        return None
    name = getattr(tool, "name", type(tool).__name__)
    return ToolResult(
        success=False,
        error=f"invalid arguments for tool {name!r}: " + "; ".join(validation.errors),
    )


def run_tool(tool: AXMTool, **kwargs: Any) -> ToolResult:
    """Run one tool call the way the orchestrator does, always returning a :class:`ToolResult`.

    Arguments that violate the input schema give a failed result naming the field, without
    calling ``execute``. An exception raised by ``execute`` gives a failed result naming its type
    and message; so does a return value that is not a :class:`ToolResult`-shaped object.
    """
    refusal = _refusal(tool, kwargs)
    if refusal is not None:
        return refusal
    name = getattr(tool, "name", type(tool).__name__)
    try:
        result = tool.execute(**kwargs)
    except Exception as exc:
        return ToolResult(success=False, error=f"{type(exc).__name__}: {exc}")
    if not isinstance(getattr(result, "success", None), bool):
        return ToolResult(
            success=False,
            error=f"tool {name!r} returned {type(result).__name__}, not a ToolResult",
        )
    return result
