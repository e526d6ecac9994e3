"""Invalid-input checks: an input that breaks the schema is refused the protocol's way.

Each input breaks the schema in exactly one known way (its mutation kind is in every report).
AXM calls that cannot bind to ``execute`` are refused by the orchestrator and never judged. Where
the protocol's runtime validates the arguments before the tool runs, every finding is a warning
naming that validation; where it does not, a crash fails, and an exception that is not a crash is
a warning where the runtime turns it into an error the model sees. A protocol whose refusals
follow rules of its own (MCP's JSON-RPC errors) judges them with its ``Policy.judge_invalid``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._checks.results import is_programming_error, not_a_tool_result, provenance
from axm_conformance._checks.schema import input_unusable
from axm_conformance._feeds import INVALID
from axm_conformance._observation import Call, Observation, SubjectInfo
from axm_conformance._outcomes import Finding, Severity, failure, warning

__all__: list[str] = []


@check(
    "invalid-input-handled",
    "invalid",
    applies=input_unusable,
    considers=("returned", "raised", "crashed"),
    feed=INVALID,
)
def invalid_input_handled(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """An input that breaks the schema is refused the protocol's way, never crashed on."""
    findings = _findings(subject, call.observation)
    absorber = subject.policy.invalid_absorber
    if absorber:
        # The runtime never lets such an input reach the tool: whatever the tool does with it
        # is a warning.
        for finding in findings:
            yield dataclasses.replace(
                finding, text=f"{finding.text}; {absorber}", severity=Severity.WARNING
            )
    else:
        yield from findings


def _findings(subject: SubjectInfo, observation: Observation) -> Iterator[Finding]:
    if observation.status == "crashed":
        yield failure(observation.crash_detail, kind=observation.crash_kind)
        return
    exception = observation.exception
    if exception is not None and not exception.is_exception:
        yield failure(
            f"raised {exception.summary()}, a BaseException, on an invalid input",
            kind="base-exception",
        )
        return
    if exception is not None and exception.refusal:
        cause = exception.cause
        if cause is not None and cause.origin == "other":
            yield failure(
                f"crashed on an invalid input, and refused it with: {cause.summary()}",
                kind="crash",
            )
        return  # refused, as the protocol's runtime tells the model
    policy = subject.policy
    if policy.judge_invalid is not None:
        for found in policy.judge_invalid(subject, observation):
            yield found if isinstance(found, Finding) else failure(found)
        return
    if policy.invalid == "result":
        yield from _against_a_failed_result(subject, observation)
    elif policy.invalid == "raise":
        yield from _against_a_raise(subject, observation)
    else:
        yield from _against_the_callers_refusal(observation)


def _against_a_failed_result(subject: SubjectInfo, observation: Observation) -> Iterator[Finding]:
    """A protocol that wants a failed result for an input it cannot serve."""
    policy, exception = subject.policy, observation.exception
    if exception is not None:
        if exception.origin == "other" or not policy.exception_absorber:
            yield failure(
                f"raised {exception.summary()} on an invalid input; the "
                f"{subject.protocol_title} protocol wants a failed result",
                kind="raised",
            )
        else:
            # Not a crash: a refusal the runtime turns into an error the model sees.
            yield warning(
                f"raised {exception.summary()} on an invalid input "
                f"({provenance(exception)}); {policy.exception_absorber}",
                kind="absorbed",
            )
        return
    result = observation.result
    assert result is not None
    wrong = next(not_a_tool_result(subject, result), "")
    if wrong:
        yield failure(f"answered an invalid input: {wrong}", kind="not-a-result")
    elif subject.result.succeeded(result):
        yield warning("accepted an invalid input and reported success", kind="accepted")


def _against_a_raise(subject: SubjectInfo, observation: Observation) -> Iterator[Finding]:
    """A protocol whose runtime raises one of its exceptions for an input it refuses."""
    policy, exception = subject.policy, observation.exception
    if exception is None:
        # A result that reports a failure refuses the input as well as raising would.
        if not subject.result.refused(observation):
            yield warning("accepted an invalid input and returned normally", kind="accepted")
    elif not any(exception.is_a(name) for name in policy.allowed_exceptions):
        yield failure(
            f"raised {exception.summary()} on an invalid input; only "
            f"{' and '.join(policy.allowed_exceptions)} may escape",
            kind="not-allowed",
        )
    elif (
        exception.cause is not None
        and is_programming_error(exception.cause)
        # A runtime may refuse the arguments with a TypeError before the handler runs, as
        # published axio does; only a handler that ran with them has crashed.
        and observation.handler_called is not False
    ):
        yield failure(
            f"the handler crashed on an invalid input: {exception.cause.summary()}; "
            "the arguments should have been refused before it ran",
            kind="crash",
        )


def _against_the_callers_refusal(observation: Observation) -> Iterator[Finding]:
    """A protocol whose caller (a registry that validates first) refuses the input with a
    failure before the handler runs."""
    exception = observation.exception
    if observation.handler_called:
        yield failure("the handler ran although the input breaks the schema", kind="ran")
    if exception is not None:
        yield failure(
            f"the registry raised {exception.summary()} instead of reporting a failure",
            kind="raised",
        )
        return
    result = observation.result
    assert result is not None
    verdict = result.fields.get("value") or {}
    if verdict.get("status") != "failure" or not verdict.get("errors"):
        yield failure(
            f"the registry answered {verdict.get('status')!r}, not a failure with errors",
            kind="not-a-refusal",
        )
