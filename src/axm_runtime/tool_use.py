"""Reference runtime of the tool_use protocol: registry, validation and chains.

A tool is a :class:`ToolEntry`: a name, a description, a handler called as ``handler(input_data)``
with one positional dict, and JSON Schemas for its input and output. A :class:`ToolRegistry` holds
tools and invokes them, validating input before the call and output after it, and wraps every
outcome in a :class:`Result`. A :class:`ToolChain` runs registered tools one after another over a
shared context dict.

Validation is JSON Schema draft 2020-12, by jsonschema, with two departures from its defaults
that follow the specification: regular expressions are ECMA-262 (:mod:`axm_runtime.schema`), and
``multipleOf`` is judged on the decimal a float was written as (``0.0075`` is 75 times
``0.0001``), not on the quotient of two doubles. Unknown keywords are ignored and ``format`` is
an annotation. JSON semantics hold throughout: booleans are not numbers, ``1.0`` is an integer,
and ``1 == 1.0`` but ``True != 1`` in ``enum``, ``const`` and ``uniqueItems``. ``$ref`` resolves
inside the schema itself (``#/$defs/Name``, anchors, ``$id``); one that leaves it is not
fetched. Validation never raises: a schema that breaks the meta-schema, a reference that cannot
be resolved and data nested too deeply are reported in the result, each error as ``/POINTER:
message``.
"""

from __future__ import annotations

import builtins
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

from jsonschema import Draft202012Validator

from axm_runtime._validator import errors_of

__all__ = [
    "ChainResult",
    "ChainStep",
    "Result",
    "ResultStatus",
    "ToolChain",
    "ToolDefinition",
    "ToolEntry",
    "ToolRegistry",
    "ValidationResult",
    "tool",
    "validate_input",
    "validate_output",
]


# ---------------------------------------------------------------------------------------------
# Shared result and definition types
# ---------------------------------------------------------------------------------------------


class ResultStatus(Enum):
    """Status of an operation's :class:`Result`."""

    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"


@dataclass
class Result:
    """Outcome of an operation: a status, the data produced and what went wrong."""

    status: ResultStatus
    data: Any = None
    message: str = ""
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the operation fully succeeded."""
        return self.status is ResultStatus.SUCCESS

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary, the status as its string value."""
        return {
            "status": self.status.value,
            "data": self.data,
            "message": self.message,
            "errors": list(self.errors),
            "duration_ms": self.duration_ms,
            "metadata": dict(self.metadata),
        }


@dataclass
class ToolDefinition:
    """Definition of a tool as exposed to clients (MCP, CLI): everything but the handler."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] = field(default_factory=dict)
    module: str = ""
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "module": self.module,
            "tags": list(self.tags),
        }


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


@dataclass
class ValidationResult:
    """Result of a validation: whether the data passed, and why not."""

    valid: bool = True
    errors: list[str] = field(default_factory=list)

    def merge(self, other: ValidationResult) -> ValidationResult:
        """Return a new result, valid only if both are, with the errors of both."""
        return ValidationResult(valid=self.valid and other.valid, errors=self.errors + other.errors)

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary."""
        return {"valid": self.valid, "errors": list(self.errors)}


def validate_input(data: Any, schema: dict[str, Any] | bool) -> ValidationResult:
    """Validate a tool's input against a JSON Schema.

    Never raises: an invalid schema is reported as an error of the result.
    """
    return _validate(data, schema)


def validate_output(data: Any, schema: dict[str, Any] | bool) -> ValidationResult:
    """Validate a tool's output against a JSON Schema.

    Same rules as :func:`validate_input`; kept apart so callers say which side they check.
    """
    return _validate(data, schema)


def _validate(data: Any, schema: Any) -> ValidationResult:
    errors = errors_of(data, schema)
    return ValidationResult(valid=not errors, errors=errors)


# jsonschema checks then and else under if, minContains and maxContains under contains; the
# identifiers are what references inside the schema resolve by.
SUPPORTED_KEYWORDS: frozenset[str] = (
    frozenset(Draft202012Validator.VALIDATORS)
    | {"then", "else", "minContains", "maxContains", "$id", "$anchor", "$dynamicAnchor"}
) - {"format"}
"""The JSON Schema keywords the validator enforces, or resolves references by: every keyword of
draft 2020-12 that can make an instance invalid (``format`` is an annotation); every other
keyword is ignored."""


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


@dataclass
class ToolEntry:
    """A tool: its name, description, handler and the schemas of its input and output."""

    name: str
    description: str
    handler: Callable[..., Any]
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)

    def to_tool_definition(self, module: str = "tool_use") -> ToolDefinition:
        """Return the shared :class:`ToolDefinition` of this tool."""
        return ToolDefinition(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            module=module,
            tags=list(self.tags),
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary, without the handler."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "tags": list(self.tags),
        }


def _elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


class ToolRegistry:
    """Tools by name: registration, lookup, search, and validated invocation."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}

    def register(self, entry: ToolEntry) -> None:
        """Add a tool; raise ValueError if one with the same name is registered."""
        if entry.name in self._tools:
            raise ValueError(
                f"tool {entry.name!r} is already registered; unregister it first or rename it"
            )
        self._tools[entry.name] = entry

    def unregister(self, name: str) -> bool:
        """Remove a tool by name; return whether it was registered."""
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> ToolEntry | None:
        """Return the tool of exactly this name, or None."""
        return self._tools.get(name)

    def list(self) -> builtins.list[ToolEntry]:
        """Return every tool, sorted by name."""
        return [self._tools[name] for name in self.list_names()]

    def list_names(self) -> builtins.list[str]:
        """Return every tool name, sorted."""
        return sorted(self._tools)

    def search(
        self,
        *,
        name_contains: str | None = None,
        tags: builtins.list[str] | None = None,
        match_all_tags: bool = False,
    ) -> builtins.list[ToolEntry]:
        """Return the tools, sorted by name, whose name contains ``name_contains``
        (ignoring case) and which have any (or, with ``match_all_tags``, all) of ``tags``.

        A criterion left out (None, or no tags) does not filter.
        """
        wanted = set(tags or ())
        found = []
        for entry in self.list():
            if name_contains is not None and name_contains.lower() not in entry.name.lower():
                continue
            if wanted:
                present = wanted & set(entry.tags)
                if not present or (match_all_tags and present != wanted):
                    continue
            found.append(entry)
        return found

    def invoke(self, name: str, input_data: Any = None, *, validate: bool = True) -> Result:
        """Call the tool ``name`` with ``input_data`` and wrap the outcome in a :class:`Result`.

        Unknown tool, invalid input (the handler is then not called) or an exception from the
        handler: FAILURE. Output violating the output schema: PARTIAL, the data kept. Schemas are
        checked only with ``validate`` and when not empty.
        """
        start = time.perf_counter()
        entry = self._tools.get(name)
        if entry is None:
            return Result(
                status=ResultStatus.FAILURE,
                message=f"Tool {name!r} is not registered.",
                errors=[f"unknown tool: {name!r}"],
                duration_ms=_elapsed_ms(start),
            )
        if validate and entry.input_schema:
            checked = validate_input(input_data, entry.input_schema)
            if not checked.valid:
                return Result(
                    status=ResultStatus.FAILURE,
                    message=f"Input validation failed for tool {name!r}.",
                    errors=checked.errors,
                    duration_ms=_elapsed_ms(start),
                )
        try:
            output = entry.handler(input_data)
        except Exception as exc:  # a tool signals a domain error by raising
            error = f"{type(exc).__name__}: {exc}"
            return Result(
                status=ResultStatus.FAILURE,
                message=f"Tool {name!r} raised {error}",
                errors=[error],
                duration_ms=_elapsed_ms(start),
            )
        if validate and entry.output_schema:
            checked = validate_output(output, entry.output_schema)
            if not checked.valid:
                return Result(
                    status=ResultStatus.PARTIAL,
                    data=output,
                    message=f"Output validation failed for tool {name!r}.",
                    errors=checked.errors,
                    duration_ms=_elapsed_ms(start),
                )
        return Result(
            status=ResultStatus.SUCCESS,
            data=output,
            message=f"Tool {name!r} executed successfully.",
            duration_ms=_elapsed_ms(start),
        )

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"ToolRegistry(tools={self.list_names()})"


_F = TypeVar("_F", bound=Callable[..., Any])


def _first_paragraph(doc: str | None) -> str:
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def tool(
    name: str,
    description: str = "",
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    tags: list[str] | None = None,
    registry: ToolRegistry | None = None,
) -> Callable[[_F], _F]:
    """Mark a function as a tool, and register it if ``registry`` is given.

    The function is returned unchanged, with a ``tool_entry`` attribute holding its
    :class:`ToolEntry` for registering later. The description defaults to the first paragraph
    of the function's docstring.
    """

    def decorate(fn: _F) -> _F:
        entry = ToolEntry(
            name=name,
            description=description or _first_paragraph(inspect.getdoc(fn)),
            handler=fn,
            input_schema=input_schema or {},
            output_schema=output_schema or {},
            tags=list(tags or ()),
        )
        fn.tool_entry = entry  # type: ignore[attr-defined]  # functions take attributes
        if registry is not None:
            registry.register(entry)
        return fn

    return decorate


# ---------------------------------------------------------------------------------------------
# Chains
# ---------------------------------------------------------------------------------------------


@dataclass
class ChainStep:
    """One step of a :class:`ToolChain`.

    ``input_mapping`` maps each input key of the tool to a context key, dot-separated for nested
    dicts (``"raw.body"`` is ``context["raw"]["body"]``); a missing key gives None. Without a
    mapping the tool gets the whole context. The output is stored under ``output_key``; without
    one, a dict output is merged into the context and any other output is stored under the tool
    name.
    """

    tool_name: str
    input_mapping: dict[str, str] = field(default_factory=dict)
    output_key: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary."""
        return {
            "tool_name": self.tool_name,
            "input_mapping": dict(self.input_mapping),
            "output_key": self.output_key,
        }


@dataclass
class ChainResult:
    """Outcome of a :class:`ToolChain` run."""

    success: bool = True
    context: dict[str, Any] = field(default_factory=dict)
    step_results: list[Result] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary, step results included as dictionaries."""
        return {
            "success": self.success,
            "context": self.context,
            "step_results": [result.to_dict() for result in self.step_results],
            "errors": list(self.errors),
            "duration_ms": self.duration_ms,
        }


def _lookup(context: dict[str, Any], dotted_key: str) -> Any:
    value: Any = context
    for key in dotted_key.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class ToolChain:
    """Registered tools run one after another over a shared context dict."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._steps: list[ChainStep] = []

    @property
    def steps(self) -> list[ChainStep]:
        """A copy of the steps, in order."""
        return list(self._steps)

    def add_step(self, step: ChainStep) -> ToolChain:
        """Append a step; return the chain, so calls can be chained."""
        self._steps.append(step)
        return self

    def clear(self) -> None:
        """Remove every step."""
        self._steps.clear()

    def validate(self) -> ValidationResult:
        """Check that every tool the steps name is registered."""
        errors = [
            f"step {index}: tool {step.tool_name!r} is not registered"
            for index, step in enumerate(self._steps)
            if step.tool_name not in self._registry
        ]
        return ValidationResult(valid=not errors, errors=errors)

    def execute(
        self,
        initial_input: dict[str, Any] | None = None,
        *,
        stop_on_failure: bool = True,
        validate_tools: bool = True,
    ) -> ChainResult:
        """Run the steps in order, starting from a copy of ``initial_input`` as the context.

        A step whose result is not SUCCESS fails the chain and its output is not stored; the
        chain then stops, unless ``stop_on_failure`` is False. With ``validate_tools``, nothing
        runs if a step names an unregistered tool.
        """
        start = time.perf_counter()
        context = dict(initial_input or {})
        if validate_tools:
            checked = self.validate()
            if not checked.valid:
                return ChainResult(
                    success=False,
                    context=context,
                    errors=checked.errors,
                    duration_ms=_elapsed_ms(start),
                )
        outcome = ChainResult(context=context)
        for index, step in enumerate(self._steps):
            if step.input_mapping:
                step_input = {
                    key: _lookup(context, source) for key, source in step.input_mapping.items()
                }
            else:
                step_input = dict(context)
            result = self._registry.invoke(step.tool_name, step_input)
            outcome.step_results.append(result)
            if not result.ok:
                outcome.success = False
                outcome.errors.extend(result.errors)
                outcome.errors.append(f"step {index} ({step.tool_name!r}) failed: {result.message}")
                if stop_on_failure:
                    break
                continue
            if step.output_key:
                context[step.output_key] = result.data
            elif isinstance(result.data, dict):
                context.update(result.data)
            else:
                context[step.tool_name] = result.data
        outcome.duration_ms = _elapsed_ms(start)
        return outcome

    def __len__(self) -> int:
        return len(self._steps)

    def __repr__(self) -> str:
        return f"ToolChain(steps={[step.tool_name for step in self._steps]})"
