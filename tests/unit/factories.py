"""Hand-built records for unit tests of the checks: a tool description, a result, an exception,
a call.

Each factory gives a plain, correct default and takes keyword overrides, so a test states only
what its case is about, and a change of the records' fields is made here once.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from axm_conformance._jsonable import canonical_json, jsonable
from axm_conformance._observation import (
    Call,
    CallableInfo,
    ExceptionInfo,
    Observation,
    ParameterInfo,
    Policy,
    Profile,
    ResultFacts,
    ResultModel,
    SubjectInfo,
)
from axm_conformance.protocols import capabilities, registered
from axm_conformance.protocols.axio._probes import GuardTrace, LimitTrace

__all__ = [
    "AXIO_POLICY",
    "STR_RESULT",
    "TOOL_RESULT",
    "TOOL_USE_POLICY",
    "call",
    "callable_info",
    "exception",
    "guard_trace",
    "limit_trace",
    "parameter",
    "raised",
    "result",
    "returned",
    "subject",
    "value",
]

# A ToolResult: success, a dict of data (which an output schema describes), an error.
TOOL_RESULT = ResultModel(
    "tool-result",
    {"success": ("bool",), "data": ("dict",), "error": ("str", "NoneType")},
    structured_field="data",
)
STR_RESULT = ResultModel("str")
# axio's rule: only its own errors escape, a handler's wrapped in HandlerError, judged by cause.
AXIO_POLICY = Policy(
    exception="wrapped",
    allowed_exceptions=("GuardError", "HandlerError"),
    invalid="raise",
    denial_exception="GuardError",
)
# tool_use's rule: a raise is the domain error path; the registry refuses invalid input.
TOOL_USE_POLICY = Policy(exception="domain", invalid="refuse")


def parameter(name: str, kind: str = "KEYWORD_ONLY", *, required: bool = True) -> ParameterInfo:
    return ParameterInfo(name=name, kind=kind, required=required)


def callable_info(**overrides: Any) -> CallableInfo:
    """A synchronous ``execute(self, *, text: str)``, called synchronously."""
    facts: dict[str, Any] = {
        "name": "execute",
        "present": True,
        "is_callable": True,
        "is_async": False,
        "expects_async": False,
        "parameters": (parameter("text"),),
        "takes_var_keyword": False,
        "has_signature": True,
    }
    return CallableInfo(**{**facts, **overrides})


def subject(**overrides: Any) -> SubjectInfo:
    """A correct keyword-called tool ``word_count`` whose protocol offers every capability and
    absorbs nothing; override what the case is about."""
    facts: dict[str, Any] = {
        "ref": "tools:WordCountTool",
        "protocol": "axm",
        "protocol_title": "AXM",
        "capabilities": frozenset(capabilities()),
        "variant": "",
        "name": "word_count",
        "name_type": "str",
        "description": "Count the words of a text.",
        "description_type": "str",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "schema_source": "declared",
        "schema_error": "",
        "output_schema": None,
        "call_style": "keywords",
        "callable": callable_info(),
        "result": TOOL_RESULT,
        "policy": Policy(),
    }
    facts = {**facts, **overrides}
    # The profile its protocol gives the tools it describes (its hints, its snippet).
    known = registered().get(facts["protocol"])
    facts.setdefault("profile", known.profile() if known is not None else Profile())
    return SubjectInfo(**facts)


def result(type_name: str = "ToolResult", **fields: Any) -> ResultFacts:
    """What a call returned, reduced to facts: an object with these fields (a ToolResult)."""
    rendered, problems = jsonable(fields)
    encoded = canonical_json(rendered)
    return ResultFacts(
        type_name=type_name,
        is_mapping=False,
        fields=rendered,
        field_types={name: type(item).__name__ for name, item in fields.items()},
        read_errors={},
        problems=tuple(problems),
        size=len(encoded.encode()),
        truncated=False,
        fingerprint=encoded,
    )


def value(returned: Any, **overrides: Any) -> ResultFacts:
    """A bare returned value (a str, a dict, a number) as the result checks see it."""
    facts = result(type(returned).__name__, value=returned)
    return dataclasses.replace(facts, is_mapping=isinstance(returned, dict), **overrides)


def exception(
    name: str,
    origin: str = "other",
    *,
    bases: tuple[str, ...] = ("Exception",),
    message: str = "it went wrong",
    cause: ExceptionInfo | None = None,
) -> ExceptionInfo:
    """An exception of class ``name`` deriving from ``bases``, raised in ``tools.execute``."""
    return ExceptionInfo(
        type_name=name,
        qualified_name=f"builtins.{name}",
        ancestors=(name, *bases, "BaseException", "object"),
        message=message,
        traceback="",
        is_exception="Exception" in bases,
        cause=cause,
        origin=origin,  # type: ignore[arg-type]
        raised_in="tools.execute",
    )


def returned(facts: ResultFacts, **overrides: Any) -> Observation:
    return Observation(status="returned", result=facts, **overrides)


def raised(error: ExceptionInfo, **overrides: Any) -> Observation:
    return Observation(status="raised", exception=error, **overrides)


def call(observation: Observation, **overrides: Any) -> Call:
    """One call with the input ``{"text": "two words"}``."""
    facts: dict[str, Any] = {"input": {"text": "two words"}, "observation": observation}
    return Call(**{**facts, **overrides})


def guard_trace(*events: str, **overrides: Any) -> GuardTrace:
    """One probe of a guarded tool: the events in the order they happened (``guard 0``,
    ``handler``, ``guard 1 raised GuardError``...); by default the call returned "ok"."""
    facts: dict[str, Any] = {
        "events": events,
        "guard_outputs": (),
        "handler_inputs": (),
        "exception": None,
        "returned": "ok",
    }
    return GuardTrace(**{**facts, **overrides})


def limit_trace(**overrides: Any) -> LimitTrace:
    """The concurrency probe of a tool limited to 2: never more than 2 in flight out of 10."""
    facts: dict[str, Any] = {"limit": 2, "calls": 10, "peak": 2, "leaks": (), "second_loop": ""}
    return LimitTrace(**{**facts, **overrides})
