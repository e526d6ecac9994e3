"""Shrinking and confirmation: a check's failure made smaller from the input found, then called
again in a fresh worker (a failure that does not happen again there is not blamed on its input,
or is reported flaky), with the calls of other tools made before it made again first."""

from __future__ import annotations

import time
from typing import Any

from axm_conformance._engine._runs import _Run, _severe
from axm_conformance._engine._session import _MAX_CRASHES, _PAUSES, _Session
from axm_conformance._engine._stateful import shares_value
from axm_conformance._engine._verdict import what_happened
from axm_conformance._feeds import (
    INVALID,
)
from axm_conformance._observation import (
    Call,
    Observation,
    Step,
    canonical_json,
)
from axm_conformance._outcomes import Finding, Severity, note
from axm_conformance._strategies import (
    shrink_size,
    smaller,
)

__all__ = ["confirm", "reproduce", "shrink"]

# Seconds spent shrinking one check's failure (each attempt is a real call of the tool).
_SHRINK_BUDGET = 15.0


def reproduce(session: _Session, run: _Run) -> None:
    """Call a failure's input once more, alone, in a fresh worker (a fresh server), as its
    reproduction will: after a pause when the tool refused it, as pacing would.

    A refusal that does not happen again is not blamed on the input: it came from the
    server's pacing or from what earlier calls left, and the failure is dropped with a note.
    Any other failure that does not happen again is kept, saying so. A call that hung or
    killed the process is not made again: it would cost a whole timeout, and the crash is
    a fact.
    """
    assert run.failure is not None
    call, violations = run.failure
    observation = call.observation
    if observation.status == "crashed" or time.monotonic() > session.deadline:
        return
    refusal = observation.result is not None and not session.subject.result.served(observation)
    session.worker.restart()
    if refusal:
        time.sleep(_PAUSES[0])
    again = call_again(session, run)
    if again is None:
        return
    happened, found = again
    how = "alone" if not call.before else "after the same calls of other tools"
    if refusal:
        run.failure = None
        run.notes.append(
            note(
                f"not blamed on an input: {violations[0]}; called again {how} in a fresh "
                f"worker after a pause, {happened} (the server's pacing, or what earlier "
                "calls left)"
            )
        )
        return
    add_to_failure(
        session,
        run,
        f"called again {how} in a fresh worker: {happened}; {found}: the failure depends "
        "on the calls made before it",
    )


def happened(session: _Session, observation: Observation) -> str:
    """What one call came to, in a few words, served or not."""
    if session.subject.result.served(observation):
        return "it was served"
    return what_happened(observation)


def call_again(session: _Session, run: _Run) -> tuple[str, str] | None:
    """Call a failure's input once more: None when the failure happens again, else what the
    call came to and what the check then found, in words."""
    assert run.failure is not None
    call, violations = run.failure
    again = session.call(
        call.input,
        call.label,
        feed=run.check.feed,
        repeat=False,
        vary=run.check.varies,
        before=call.before,
        again=True,
        world=bool(call.world),
    )
    found = session.violations(run.check, again)
    if found and _severe(found) == _severe(violations):
        return None
    second = f"found only a warning: {found[0]}" if found else "found nothing"
    return happened(session, again.observation), f"this check then {second}"


def add_to_failure(session: _Session, run: _Run, text: str) -> None:
    """Add a sentence to a failure, as severe as the failure."""
    assert run.failure is not None
    call, violations = run.failure
    severity = Severity.FAILURE if _severe(violations) else Severity.WARNING
    run.failure = (call, (*violations, Finding(text, severity)))


def confirm(session: _Session, run: _Run) -> None:
    """Call a failure's input once more: a failure that does not happen again is flaky,
    and is reported so, with both outcomes, never dropped.

    A call that hung or killed the process is not made again: it would cost a whole timeout,
    and the crash is a fact.
    """
    assert run.failure is not None
    if run.failure[0].observation.status == "crashed" or time.monotonic() > session.deadline:
        return
    again = call_again(session, run)
    if again is not None:
        happened, found = again
        add_to_failure(
            session, run, f"flaky: called again with the same input: {happened}; {found}"
        )


def shrink(session: _Session, run: _Run) -> None:
    """Replace the run's failure by a smaller input that still fails the same way, shrunk
    from it (see _strategies.smaller): one that the schema classes as before (valid, or
    breaking it in the same places), whose call fails the check as severely and comes to
    the same kind of end (the same exception, the same crash). At most as many calls as
    the run had examples (20 at least), within the shrinking budget.
    """
    assert run.failure is not None
    feed = run.check.feed
    deadline = min(time.monotonic() + _SHRINK_BUDGET, session.deadline)
    calls = max(session.settings.examples, 20)
    failing, violations = run.failure
    kind = failure_kind(session, failing, violations)
    if failing.before:
        calls -= fewer_steps(session, run, kind, deadline)
        failing, violations = run.failure
    made_mistakes = mistakes(session, failing.input)
    tried = {canonical_json(failing.input)}
    current = failing.input
    # A mutation's label names its mistake, which a shrunk input keeps; a valid input's
    # names what it exercised, which it may not.
    label = (
        failing.label if feed is INVALID or not failing.label else (f"shrunk from: {failing.label}")
    )
    while True:
        for candidate in smaller(current):
            text = canonical_json(candidate)
            if text in tried or shrink_size(candidate) >= shrink_size(current):
                continue
            tried.add(text)
            if mistakes(session, candidate) != made_mistakes:
                continue
            if (
                not calls
                or time.monotonic() > deadline
                or session.crashes.get(feed, 0) >= (2 * _MAX_CRASHES)
            ):
                return
            calls -= 1
            call = session.call(
                candidate, label, feed=feed, repeat=run.check.repeats,
                vary=run.check.varies, before=failing.before, again=True,
                world=bool(failing.world),
            )  # fmt: skip
            found = session.violations(run.check, call)
            if found and failure_kind(session, call, found) == kind:
                run.failure, current = (call, found), candidate
                break
        else:
            return


def fewer_steps(session: _Session, run: _Run, kind: tuple[bool, str], deadline: float) -> int:
    """Leave out the steps before a failure one at a time, each time in a fresh worker,
    keeping each leaving-out after which the input still fails the same way: the shortest
    sequence found that fails. A step that may write (it does not declare itself read-only)
    and was given a value the input holds is kept: what it wrote may outlive a fresh worker
    (a file stays in the working directory), so that leaving it out would seem to change
    nothing here and would in a reproduction elsewhere. Returns the calls made."""
    assert run.failure is not None
    made = 0
    failing = run.failure[0]
    at = len(failing.before) - 1
    while at >= 0 and time.monotonic() < deadline:
        fewer = failing.before[:at] + failing.before[at + 1 :]
        if _may_have_made(session, failing.before[at], failing.input):
            at -= 1
            continue
        session.worker.restart()
        made += 1 + len(fewer)
        call = session.call(
            failing.input,
            failing.label,
            feed=run.check.feed,
            repeat=run.check.repeats,
            vary=run.check.varies,
            before=fewer,
            again=True,
            world=bool(failing.world),
        )
        found = session.violations(run.check, call)
        if found and failure_kind(session, call, found) == kind:
            run.failure = (call, found)
            failing = call
        at -= 1
    return made


def _may_have_made(session: _Session, step: Step, value: Any) -> bool:
    """Whether ``step`` may have made what ``value`` names: it was given a value ``value``
    holds, and its tool does not declare itself read-only."""
    together = session.together
    tool = together.tools.get(step.ref) if together is not None else None
    read_only = tool is not None and tool.annotations.get("readOnlyHint") is True
    return not read_only and shares_value(step.input, value)


def mistakes(session: _Session, value: Any) -> frozenset[tuple[str, str]]:
    """Where and how ``value`` breaks the tool's input schema: what a shrunk input must keep
    (none, for a valid input; the same mistakes, for a mutation)."""
    validator = session.context.validator(session.subject.input_schema)
    return frozenset(
        (error.json_path, str(error.validator)) for error in validator.iter_errors(value)
    )


def failure_kind(
    session: _Session, call: Call, violations: tuple[Finding, ...]
) -> tuple[bool, str]:
    """What a smaller input's failure must share with the one found: as severe, and the
    same end of the call (the same exception raised, the same crash, a result)."""
    observation = call.observation
    end: str = observation.status
    if observation.exception is not None:
        end = f"raised {observation.exception.qualified_name}"
    elif observation.crash_kind:
        end = f"crashed {observation.crash_kind}"
    return _severe(violations), end
