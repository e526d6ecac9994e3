"""Per-call checks: every call completes, raises only what the protocol allows, and returns a
result of the protocol's type, consistent, strict JSON, within the output schema and size limit.

An exception escaping a valid call fails the tool when it is a crash (its origin, read from the
traceback, is neither the operating system's refusal nor a ``raise`` in the tool's own code):
the tool cannot serve the input. Otherwise it fails only where the protocol's runtime does not
absorb it, and is a warning naming what absorbs it where it does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from axm_conformance._checks._registry import Applies, CheckContext, Found, check, first_few
from axm_conformance._checks.schema import input_unusable, schema_problem
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import (
    CONTENT_BLOCKS,
    PROGRAMMING_ERRORS,
    Call,
    ExceptionInfo,
    Observation,
    ResultFacts,
    SubjectInfo,
    Varied,
)
from axm_conformance._outcomes import Finding, failure, warning

__all__ = ["crash", "is_programming_error", "not_a_tool_result", "provenance"]

_CALLABLE = ("returned", "raised")


def _with_outcome(otherwise: str) -> Applies:
    """Applies to a tool whose result tells a success from a failure (a tool-result); else
    skipped, saying ``otherwise``."""
    return lambda subject: (
        input_unusable(subject) or (None if subject.result.returns == "tool-result" else otherwise)
    )


def is_programming_error(exception: ExceptionInfo) -> bool:
    return any(exception.is_a(name) for name in PROGRAMMING_ERRORS)


def provenance(exception: ExceptionInfo) -> str:
    """Where an exception came from, as a report says it."""
    place = f" in {exception.raised_in}" if exception.raised_in else ""
    if exception.origin == "os":
        return f"a refusal of the operating system interface{place}"
    if exception.origin == "raise":
        return f"raised on purpose by the tool's own code{place}"
    return (
        f"a crash{place}, neither a refusal of the operating system interface nor raised on "
        "purpose by the tool's own code"
    )


def crash(summary: str, exception: ExceptionInfo) -> Finding:
    """The finding for an exception that shows the tool cannot serve a valid input: whatever
    the runtime then makes of it, the request the schema promised to serve was not served."""
    cannot = "the tool cannot serve an input its schema allows"
    return failure(
        f"raised {summary}, {provenance(exception)}: {cannot}",
        kind="crash",
        data={"exception": exception.type_name},
    )


@check(
    "call-completes", "calls", applies=input_unusable, considers=("returned", "raised", "crashed")
)
def call_completes(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """Every call returns within the timeout and leaves the process running."""
    observation = call.observation
    if observation.status == "crashed":
        # The kinds: timeout, exited, signalled, memory, channel (the answer was unreadable).
        yield failure(observation.crash_detail, kind=observation.crash_kind)


# What a refused input's served variation shows, when the confirmations were refused too, by
# the variation's kind. What the schema states (a bound, a member, a declared property) the tool
# must serve: a failure. A property the schema leaves open, refused, is a warning: many servers
# are strict. So is a bound found far inside the declared one: it has two readings, a limit the
# schema does not state, or the extent of what the tool's world holds (the lines of the one file
# it was given), which the kit cannot tell apart.
_TRUTH = {
    "bound": "the declared bound is off by one",
    "enum": "its enum lists a member the tool does not serve",
    "optional": "its schema declares a property the tool refuses",
    "extra": "the schema does not forbid it: declare additionalProperties: false",
    "cap": (
        "the tool serves less than its schema declares: declare the bound it serves, unless "
        "what it refuses beyond is absent from its world rather than out of its bounds"
    ),
}
_WARNED = ("extra", "cap")


def _tells_refusals(subject: SubjectInfo) -> str | Finding | None:
    """Applies to a tool whose answer can tell a refusal: a tool-result, or an exception its
    protocol's runtime tells the model as the tool's refusal."""
    if subject.offers("refusal-exceptions"):
        return input_unusable(subject)
    return _with_outcome("the result tells no refusal")(subject)


@check(
    "schema-tells-truth",
    "calls",
    applies=_tells_refusals,
    considers=("returned", "raised"),
    varies=True,
)
def schema_tells_truth(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A valid input refused is refused for its values, not for what its schema allows."""
    refused = subject.result.refused
    if not refused(call.observation):
        return
    for varied in call.variations:
        if not subject.result.served(varied.observation):
            continue
        if not varied.confirmations or not all(map(refused, varied.confirmations)):
            continue
        finding = (
            f"refused this input, yet served it with {varied.said}; it refused "
            f"{varied.confirming} too ({len(varied.confirmations)} calls): {_TRUTH[varied.kind]}"
        )
        stated = _stated_bound(subject, call, varied)
        if stated:
            yield (
                f"refused this input, yet served it with {varied.said}; its refusals state "
                f"that bound ({stated}), which the schema does not: declare it"
            )
        else:
            yield warning(finding) if varied.kind in _WARNED else finding


# A number in a refusal's text: not part of a longer number, a word or a version.
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w]|\.\d)")


def _stated_bound(subject: SubjectInfo, call: Call, varied: Varied) -> str:
    """The refusal's text, when it names the bound a bisection found (the last value served)
    and that number is not in the input it refused: the tool states its limit, so its schema's
    bound is not the extent of its world but a wrong declaration. The refusals that confirmed
    the bound must name it too. The first value refused is not taken as stated: it is also
    what a refusal counts of the input ("the text has 1 words", for an index of 1), the
    extent of its world. "" otherwise."""
    if not varied.bound:
        return ""
    said, limit = _refusal_text(subject, call.observation), varied.bound[0]
    if limit not in _numbers(said) or limit in _numbers(canonical_json(call.input)):
        return ""
    if not all(
        limit in _numbers(_refusal_text(subject, confirmation))
        for confirmation in varied.confirmations
    ):
        return ""
    return said if len(said) <= 120 else said[:117] + "..."


def _refusal_text(subject: SubjectInfo, observation: Observation) -> str:
    if observation.result is not None:
        return subject.result.says(observation.result)
    return observation.exception.summary() if observation.exception is not None else ""


def _numbers(text: str) -> list[float]:
    return [float(token) for token in _NUMBER.findall(text)]


@check(
    "no-unexpected-exception",
    "calls",
    applies=input_unusable,
    considers=_CALLABLE,
    requires=("python-exceptions",),
)
def no_unexpected_exception(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A valid input raises only what the protocol lets escape."""
    exception = call.observation.exception
    if exception is None:
        return
    if exception.refusal:
        # The runtime tells the model the refusal: the tool's answer, judged as one, unless
        # what the tool refused with was a crash it caught.
        cause = exception.cause
        if cause is not None and cause.origin == "other":
            yield crash(f"{exception.type_name} caused by {cause.summary()}", cause)
        return
    raised = {"exception": exception.type_name}
    if not exception.is_exception:
        yield failure(
            f"raised {exception.summary()}, a BaseException that would take down the agent "
            "running the tool",
            kind="base-exception",
            data=raised,
        )
    elif subject.policy.exception == "wrapped":
        allowed = subject.policy.allowed_exceptions
        cause = exception.cause
        if not any(exception.is_a(name) for name in allowed):
            yield failure(
                f"raised {exception.summary()}; only {' and '.join(allowed)} may escape",
                kind="not-allowed",
                data=raised,
            )
        elif cause is not None and cause.origin == "other":
            yield crash(f"{exception.type_name} caused by {cause.summary()}", cause)
    elif exception.origin == "other":
        yield crash(exception.summary(), exception)
    elif subject.policy.exception == "result":
        if subject.policy.exception_absorber:
            yield warning(
                f"raised {exception.summary()} ({provenance(exception)}); "
                f"{subject.policy.exception_absorber}",
                kind="absorbed",
                data=raised,
            )
        else:
            yield failure(
                f"raised {exception.summary()}; nothing in the {subject.protocol_title} runtime "
                "turns it into an error the model reads, so the agent's run ends: the protocol "
                "wants every error, domain errors included, reported its own way",
                kind="escapes",
                data=raised,
            )


@check(
    "result-type",
    "results",
    applies=lambda s: (
        input_unusable(s)
        or ("any JSON value is a valid result" if s.result.returns == "json" else None)
    ),
    considers=("returned",),
    requires=("in-process",),
)
def result_type(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The result has the protocol's type: its tool-result, or a str or content blocks."""
    result = call.observation.result
    assert result is not None
    if subject.result.returns == "str":
        if result.field_types.get("value") not in ("str", CONTENT_BLOCKS):
            yield f"returned {result.type_name}, not a str or a list of content blocks"
        return
    yield from not_a_tool_result(subject, result)


def not_a_tool_result(subject: SubjectInfo, result: ResultFacts) -> Iterator[str]:
    """Why a returned value is not the protocol's tool-result: a bare value, a coroutine, or an
    object without the field that tells a success from a failure."""
    field = subject.result.success[0]
    expected = f"the protocol's tool-result (with a {field!r} field)"
    if result.type_name in ("NoneType", "str", "coroutine") or result.is_mapping:
        what = (
            f"a coroutine ({subject.callable.name} is async def)"
            if result.type_name == "coroutine"
            else f"a {result.type_name}"
        )
        yield f"returned {what}, not {expected}"
    elif field not in result.field_types:
        reason = result.read_errors.get(field, f"it has no {field} attribute")
        yield f"returned a {result.type_name}, not {expected}: {reason}"


@check(
    "result-consistent",
    "results",
    applies=_with_outcome("the result has no success and error fields"),
    considers=("returned",),
    requires=("in-process",),
)
def result_consistent(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A failure says what went wrong, a success carries no error; fields have their types."""
    result = call.observation.result
    assert result is not None
    model = subject.result
    field = model.success[0]
    if field not in result.field_types:
        return
    error = result.fields.get(model.error_field)
    for name, types in model.fields.items():
        kind = result.field_types.get(name)
        if kind is not None and types and kind not in types:
            # The success field's value is shown: a truthy "false" is the trap it sets.
            shown = f"{kind} {result.fields.get(name)!r}" if name == field else kind
            yield f"{name} is {shown}, expected " + " or ".join(
                _TYPE_NAMES.get(t, t) for t in types
            )
            if name == field:
                return
    if not model.succeeded(result) and not model.error_text(result):
        yield (
            f"{field} is {json.dumps(result.fields[field])} but {model.error_field} is "
            f"{error!r}: a failure must say what went wrong"
        )
    elif (
        model.succeeded(result)
        and model.error_text(result)
        # Where a failure's text goes in the field a success carries its payload in (a
        # LangChain ToolMessage's content), a success's text there is no error.
        and model.error_field != model.structured_field
    ):
        yield (
            f"{field} is {json.dumps(result.fields[field])} but {model.error_field} is set: "
            f"{model.error_text(result)!r}"
        )
    if isinstance(error, dict) and not isinstance(error.get("message"), str):
        yield f"{model.error_field} is a dict without a 'message' string: {error!r}"


_TYPE_NAMES = {"NoneType": "None", "dict": "a dict", "str": "a str", "bool": "a bool"}


@check(
    "result-json",
    "results",
    applies=input_unusable,
    considers=("returned",),
    requires=("in-process",),
)
def result_json(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """Every payload in the result is strict JSON."""
    result = call.observation.result
    assert result is not None
    yield from first_few(result.problems, "values that are not strict JSON")


@check(
    "output-schema",
    "results",
    applies=lambda s: (
        input_unusable(s)
        or (
            "the tool declares no output schema"
            if s.output_schema is None
            else ("the output schema is not valid" if schema_problem(s.output_schema) else None)
        )
    ),
    considers=("returned",),
    requires=("output-schema",),
)
def output_schema(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A successful result's structured output satisfies the declared output schema."""
    result = call.observation.result
    assert result is not None
    if result.truncated or not subject.result.succeeded(result):
        return  # a failed result carries an error, not the structured output
    field = subject.result.structured_field or "value"
    if field not in result.fields:
        yield f"the result has no {field}, which the output schema describes"
        return
    validator = context.validator(subject.output_schema)
    for error in sorted(validator.iter_errors(result.fields[field]), key=str)[:3]:
        yield f"{field}{error.json_path[1:]}: {error.message}"


@check("result-size", "results", applies=input_unusable, considers=("returned",))
def result_size(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The serialised result is under the size limit."""
    result = call.observation.result
    assert result is not None
    limit = context.settings.max_result_bytes
    if result.size > limit:
        measure = "at least " if result.truncated else ""
        yield (
            f"the serialised result is {measure}{result.size:,} bytes, "
            f"over the {limit:,}-byte limit (--axm-max-result-bytes)"
        )


@check("success-not-an-error", "results", applies=input_unusable, considers=("returned",))
def success_not_an_error(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A success does not carry an error: its text or payload has no form of one."""
    result = call.observation.result
    assert result is not None
    form = subject.result.disguised(result)
    alike = call.alike
    if not form and alike is not None:
        form = (
            f"it answered {alike.inputs} distinct inputs so, {alike.calls} calls in all, the "
            "same words once the strings they echo and the digits are taken out, and the "
            f"values other tools made otherwise, such as {alike.otherwise!r}: what it says when "
            "it has nothing for the input"
        )
    if form:
        counted = "those calls" if alike is not None else "it"
        yield warning(
            f"reported success with {subject.result.says(result)!r}, an error in disguise "
            f"({form}), where {_failure_way(subject)} tells the client and the model that the "
            f"call failed; the kit does not count {counted} as served"
        )


def _failure_way(subject: SubjectInfo) -> str:
    """How the tool's protocol reports a failure, as a fact (a note quotes it where no advice
    belongs)."""
    if subject.result.returns != "tool-result":
        return "raising the error"
    field, success = subject.result.success
    if isinstance(success, bool):
        return f"a failure ({field}: {json.dumps(not success)})"
    return f"a failure ({field} other than {json.dumps(success)})"
