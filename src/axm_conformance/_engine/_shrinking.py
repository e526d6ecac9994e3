"""Shrinking, reproduction and blame: a check's failure made smaller from the input found, then
made again in a fresh worker, alone or after the calls it needs (a failure that happens again
neither way is not blamed on the tool), and blamed on a call before it that left the tool unable
to serve what it serves in a fresh worker (see reproduce and blame)."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from axm_conformance._engine._runs import Run, any_severe
from axm_conformance._engine._session import PAUSES, Session
from axm_conformance._engine._state import MAX_CRASHES
from axm_conformance._engine._verdict import what_happened
from axm_conformance._engine._world import breaks, make_steps
from axm_conformance._feeds import (
    INVALID,
    VALID,
)
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Call, Observation, Step
from axm_conformance._outcomes import Finding, Severity, failing, note
from axm_conformance._strategies import (
    shrink_size,
    smaller,
)

__all__ = ["blame", "confirm", "reproduce", "shrink"]

# Seconds spent shrinking one check's failure (each attempt is a real call of the tool).
_SHRINK_BUDGET = 15.0


def reproduce(session: Session, run: Run, found: tuple[Call, tuple[Finding, ...]]) -> None:
    """Reproduce the run's failure (see _made_again); when the input shrunk from the one
    found does not fail again, the input found, as it was found: shrunk in the world the calls
    before it left, an input may fail only there, where the one found fails after them too."""
    shrunk, notes = run.failure, len(run.notes)
    _made_again(session, run)
    if run.failure is not None or shrunk is found:
        return
    run.failure = found
    _made_again(session, run)
    if run.failure is not None:
        del run.notes[notes:]  # the shrunk input's dismissal: the input found failed again
    else:
        del run.notes[notes + 1 :]


def _made_again(session: Session, run: Run) -> None:
    """Make a failure's call again in a fresh worker (a fresh server, its working directory as
    first given), as its reproduction will, and blame it on the calls it needs.

    First alone (with the steps it was found after, if any): after a pause when the tool refused
    it, as pacing would. A failure that does not happen again alone is made again after every
    call the worker had made before it (the tool's own and other tools'); when it happens again
    there, and still when a pause parts them from it (what a burst of calls brings on passes),
    those calls are cut to the fewest it needs (fewer_steps), which become its steps. A failure
    with steps is then blamed (see blame). A failure that happens again neither alone nor after
    the calls before it is not the tool's: it is dropped with a note, a refusal as the server's
    pacing or noise, anything else as flaky. The verdict never turns on it.
    """
    assert run.failure is not None
    call, violations = run.failure
    if time.monotonic() > session.deadline:
        return
    observation = call.observation
    refusal = observation.result is not None and not session.subject.result.served(observation)
    session.restart()
    if refusal:
        time.sleep(PAUSES[0])
    alone = call_again(session, run, call.before)
    if alone is None:
        blame(session, run)
        return
    # A server that paces its calls would refuse the calls before it made again for their
    # speed: what they made is not told apart from their burst.
    earlier = () if session.pacing else call.prefix
    after = ""
    if len(earlier) > len(call.before) and time.monotonic() < session.deadline:
        session.restart()
        after = f"; after the {len(earlier)} calls made before it, "
        if call_again(session, run, earlier) is not None:
            after += "it did not fail either"
        elif _passes(session, run, earlier):
            after += "it failed again, but not when a pause parted it from them"
        else:
            deadline = min(time.monotonic() + _SHRINK_BUDGET, session.deadline)
            fewer_steps(session, run, deadline)
            blame(session, run)
            return
    happened, found = alone
    how = "alone" if not call.before else "after the same calls of other tools"
    run.failure = None
    session.unblamed["flaky"] += 1
    if refusal:
        run.notes.append(
            note(
                f"not blamed on an input: {violations[0]}; called again {how} in a fresh "
                f"worker after a pause, {happened}{after} (the server's pacing, or noise)"
            )
        )
        return
    run.notes.append(
        note(
            f"flaky, not blamed on the tool: {violations[0]}; called again {how} in a fresh "
            f"worker: {happened}; {found}{after}"
        )
    )


def _passes(session: Session, run: Run, earlier: tuple[Step, ...]) -> bool:
    """Whether a failure made again after the calls before it passes when time passes between
    them and it: in a fresh worker, those calls made again, a pause, then the same input. What
    the calls left in the tool's world stays; what their speed brought on (a rate limit that
    the calls made again in a burst reached) passes. A call that crashed has no world left to
    wait on."""
    assert run.failure is not None
    failing, _ = run.failure
    if failing.observation.status == "crashed":
        return False
    session.restart()
    if not make_steps(session, earlier):
        return False
    time.sleep(PAUSES[1])
    again = session.call(
        failing.input, failing.label, feed=run.check.feed, repeat=run.check.repeats
    )
    return not session.violations(run.check, again)


def blame(session: Session, run: Run) -> None:
    """A failure that needs the steps before it: the tool's own, unless a step left the tool
    unable to serve what it serves in a fresh worker.

    The control is the failure's input when the tool serves it with nothing before it, else
    the last input it served that changed nothing. Each step, the last first, is made alone in
    a fresh worker between two calls of the control (see _world.breaks): where the control is
    no longer served after it, the world is broken by that step, not by the call judged, which
    is then not judged (a note). When that step is a call of the tool itself, its breaking the
    tool is the failure of state-stays-usable.
    """
    assert run.failure is not None
    call, violations = run.failure
    if not call.before:
        return
    served = session.subject.result.served
    candidates = [call.input] if run.check.feed is VALID else []
    candidates += [value for value in reversed(session.repeatable) if value != call.input][:1]
    for control in candidates:
        if time.monotonic() > session.deadline:
            return
        session.restart()
        fresh = session.observe(control, VALID)[0]
        if served(fresh):
            break
    else:
        return
    for step in reversed(call.before):
        if time.monotonic() > session.deadline:
            return
        after = breaks(session, control, step)
        if after is None:
            continue
        run.failure = None
        session.unblamed["not_judged"] += 1
        run.notes.append(
            note(
                f"not judged after {step}: {violations[0]}; after that call the tool no longer "
                f"serves {canonical_json(control)[:200]}, which it serves in a fresh worker "
                f"(see state-stays-usable of {step.name})"
            )
        )
        if step.ref == session.subject.ref:
            _broken_state(session, Call(control, after, _BROKEN, before=(step,), fresh=fresh))
        return


# The label of a call made again after the call that left the tool unable to serve it.
_BROKEN = "served in a fresh worker, made again after the calls before it"


def _broken_state(session: Session, call: Call) -> None:
    """Let state-stays-usable judge a control made again after the call that broke it."""
    for run in session.runs:
        if run.check.id == "state-stays-usable":
            run.examples += 1
            session.record(run, call)


def happened(session: Session, observation: Observation) -> str:
    """What one call came to, in a few words, served or not."""
    if session.subject.result.served(observation):
        return "it was served"
    return what_happened(observation)


def call_again(session: Session, run: Run, before: tuple[Step, ...]) -> tuple[str, str] | None:
    """Make a failure's call again after ``before`` (made first): None when the failure
    happens again, the call then replacing the failure's; else what the call came to and what
    the check then found, in words."""
    assert run.failure is not None
    call, violations = run.failure
    again = session.call(
        call.input,
        call.label,
        feed=run.check.feed,
        repeat=run.check.repeats,
        vary=run.check.varies,
        before=before,
        again=True,
        world=bool(call.world),
    )
    found = session.violations(run.check, again)
    kind = failure_kind(session, call, violations)
    # An answer the server gave as its pacing is no failure made again (the calls before it
    # came fast enough for its rate limit).
    paced = session.answer(again.observation) in session.pacing
    if found and failure_kind(session, again, found) == kind and not paced:
        run.failure = (again, found)
        return None
    second = f"found only a warning: {found[0]}" if found else "found nothing"
    return happened(session, again.observation), f"this check then {second}"


def add_to_failure(session: Session, run: Run, text: str) -> None:
    """Add a sentence to a failure, as severe as the failure."""
    assert run.failure is not None
    call, violations = run.failure
    severity = Severity.FAILURE if any_severe(violations) else Severity.WARNING
    run.failure = (call, (*violations, Finding(text, severity)))


def confirm(session: Session, run: Run) -> None:
    """Call a failure's input once more: a failure that does not happen again is flaky,
    and is reported so, with both outcomes, never dropped.

    A call that hung or killed the process is not made again: it would cost a whole timeout,
    and the crash is a fact.
    """
    assert run.failure is not None
    if run.failure[0].observation.status == "crashed" or time.monotonic() > session.deadline:
        return
    again = call_again(session, run, run.failure[0].before)
    if again is not None:
        happened, found = again
        add_to_failure(
            session, run, f"flaky: called again with the same input: {happened}; {found}"
        )


def shrink(session: Session, run: Run) -> None:
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
        calls -= fewer_steps(session, run, deadline)
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
                or session.crashes.get(feed, 0) >= (2 * MAX_CRASHES)
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
                # What the worker had done before the failure was found, not before shrinking:
                # what a failure that needs earlier calls is made again after.
                call = dataclasses.replace(call, prefix=failing.prefix)
                run.failure, current = (call, found), candidate
                break
        else:
            return


def fewer_steps(session: Session, run: Run, deadline: float) -> int:
    """The fewest steps before a failure after which its input still fails the same way, each
    try made in a fresh worker: first none, then each step alone, the last first (most often one
    call made the world the failure needs), then the steps left out one at a time, the last
    first. Returns the calls made."""
    assert run.failure is not None
    made = 0
    steps = run.failure[0].before
    if steps and time.monotonic() < deadline:
        made += 1
        if _fails_after(session, run, ()):
            return made
    if len(steps) > 1:
        for step in reversed(steps):
            if time.monotonic() >= deadline:
                return made
            made += 2
            if _fails_after(session, run, (step,)):
                return made
    at = len(steps) - 1
    while at >= 0 and time.monotonic() < deadline:
        steps = run.failure[0].before
        fewer = steps[:at] + steps[at + 1 :]
        made += 1 + len(fewer)
        _fails_after(session, run, fewer)
        at -= 1
    return made


def _fails_after(session: Session, run: Run, before: tuple[Step, ...]) -> bool:
    """Whether the failure's input, made after ``before`` in a fresh worker, fails the same
    way; if so, that call becomes the failure's."""
    session.restart()
    return call_again(session, run, before) is None


def mistakes(session: Session, value: Any) -> frozenset[tuple[str, str]]:
    """Where and how ``value`` breaks the tool's input schema: what a shrunk input must keep
    (none, for a valid input; the same mistakes, for a mutation)."""
    validator = session.context.validator(session.subject.input_schema)
    return frozenset(
        (error.json_path, str(error.validator)) for error in validator.iter_errors(value)
    )


def failure_kind(
    session: Session, call: Call, violations: tuple[Finding, ...]
) -> tuple[bool, str, frozenset[str]]:
    """What a smaller input's failure must share with the one found: as severe, the same end
    of the call (the same exception raised, the same crash, a result), and findings of the
    same kinds (what a baseline knows the failure by)."""
    observation = call.observation
    end: str = observation.status
    if observation.exception is not None:
        end = f"raised {observation.exception.qualified_name}"
    elif observation.crash_kind:
        end = f"crashed {observation.crash_kind}"
    return any_severe(violations), end, frozenset(found.kind for found in failing(violations))
