"""Guard and concurrency checks, judged on probes of an instrumented copy of the tool.

The copy records when each guard and the handler run and with what (see ``_probes``), so the
checks can hold the tool's class to its protocol's promises: guards run in order before the
handler, a denial (or a crashing guard) stops the call with the protocol's denial exception
(``Policy.denial_exception``), and the limit holds on every path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._checks.schema import input_unusable
from axm_conformance._feeds import CONCURRENCY, CRASHING_GUARD, GUARDS
from axm_conformance._observation import Call, SubjectInfo
from axm_conformance._outcomes import Finding, not_run, note

__all__: list[str] = []


def _has_guards(subject: SubjectInfo) -> str | Finding | None:
    return "the tool has no guards" if not subject.guards else input_unusable(subject)


def _has_limit(subject: SubjectInfo) -> str | Finding | None:
    if subject.concurrency is None:
        return "the tool has no concurrency limit"
    return input_unusable(subject)


def _stopped(subject: SubjectInfo, trace: Any, denial: str) -> Iterator[str]:
    """How a call that a guard denied failed to stop: the handler ran, or the denial exception
    did not come."""
    if "handler" in trace.events:
        yield f"the handler ran although {denial}"
    expected = subject.policy.denial_exception
    if trace.exception is None:
        yield f"{denial}, but the call returned an ordinary result: {trace.returned!r}"
    elif expected and not trace.exception.is_a(expected):
        yield f"{denial}, and the call raised {trace.exception.summary()}, not {expected}"


def _denial(events: tuple[str, ...]) -> str:
    """The event in which a guard (or the injected one) raised, if any."""
    return next((event for event in events if " raised " in event), "")


@check(
    "guards-enforced",
    "guards",
    applies=_has_guards,
    considers=("returned",),
    feed=GUARDS,
    requires=("guards",),
)
def guards_enforced(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """Guards run in order before the handler; a denial stops the call with its exception."""
    trace = call.trace
    if trace.problem:
        yield not_run(f"not run: {trace.problem}")
        return
    events = trace.events
    denial = _denial(events)
    if denial:
        yield from _stopped(subject, trace, denial)
        return
    consulted = {event for event in events if event.startswith("guard ")}
    missing = [index for index in range(subject.guards) if f"guard {index}" not in consulted]
    if "handler" not in events:
        return  # refused before the guards (e.g. its own validation); nothing to judge
    if missing:
        yield f"the handler ran but guard {missing[0]} was never consulted"
        return
    if events.index("handler") < max(events.index(f"guard {i}") for i in range(subject.guards)):
        yield "the handler ran before the last guard had decided"
    if trace.handler_inputs and trace.guard_outputs:
        received, allowed = trace.handler_inputs[0], trace.guard_outputs[-1]
        if (
            isinstance(allowed, dict)
            and not subject.callable.takes_var_keyword
            and subject.callable.has_signature
        ):
            # Keys the handler does not take may be dropped after the guards (published axio).
            accepted = {parameter.name for parameter in subject.callable.parameters}
            allowed = {key: value for key, value in allowed.items() if key in accepted}
        if received != allowed:
            yield (
                f"the handler received {received!r}, not what the last guard returned: {allowed!r}"
            )


@check(
    "guards-fail-closed",
    "guards",
    applies=_has_guards,
    considers=("returned",),
    feed=CRASHING_GUARD,
    requires=("guards",),
)
def guards_fail_closed(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A guard that crashes denies the call, and the handler never runs."""
    trace = call.trace
    if trace.problem:
        yield not_run(f"not run: {trace.problem}")
        return
    yield from _stopped(subject, trace, "a guard in front of it crashed (RuntimeError)")


@check(
    "concurrency-limit",
    "concurrency",
    applies=_has_limit,
    considers=("returned",),
    feed=CONCURRENCY,
    requires=("concurrency-limit",),
)
def concurrency_limit(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The concurrency limit holds under load, survives every kind of failure and event loop."""
    trace = call.trace
    if trace.problem:
        yield not_run(f"not run: {trace.problem}")
        return
    if trace.peak > trace.limit:
        yield (
            f"{trace.peak} handlers ran at once under {trace.calls} concurrent calls; "
            f"the limit is {trace.limit}"
        )
    for kind in trace.leaks:
        yield (
            f"after {trace.limit + 1} calls ending in {kind}, a valid call could not get a "
            "permit within 2 s: a permit leaked"
        )
    if trace.second_loop:
        yield trace.second_loop
    yield note(f"peak of {trace.peak} handlers in flight under {trace.calls} concurrent calls")
