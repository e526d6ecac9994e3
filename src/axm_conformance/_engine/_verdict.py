"""The verdict of each per-call check: its first failure with its evidence, or a pass, or why it
could not judge (skipped, not run, inconclusive), by the status rules of _outcomes."""

from __future__ import annotations

import dataclasses

from axm_conformance._engine._runs import Run, any_severe
from axm_conformance._engine._session import Session
from axm_conformance._engine._state import CALL_KINDS, MAX_CRASHES, ended_in
from axm_conformance._failure import stderr_tail
from axm_conformance._feeds import (
    INVALID,
    OFFLINE,
    VALID,
    Feed,
)
from axm_conformance._observation import (
    Call,
    Observation,
)
from axm_conformance._outcomes import Evidence, Finding, Severity, Status, not_run, note
from axm_conformance._report import Outcome
from axm_conformance._settings import Settings
from axm_conformance._strategies import (
    SOURCES,
)

__all__ = ["outcome_of", "status_of", "what_happened"]

_STATUS_PHRASES = {
    frozenset({"returned"}): "returned a value",
    frozenset({"returned", "raised"}): "returned or raised",
}


def what_happened(observation: Observation) -> str:
    """What one call came to, in a few words."""
    if observation.exception is not None:
        return f"it raised {ended_in(observation.exception)[0]}"
    return observation.crash_detail or f"it {observation.status}"


# What lets the kit reach a tool's domain, said where every call ended in an error.
_REACH_HINT = (
    "To let the kit reach the tool's domain, give the input schema values the tool serves "
    "(`examples`, `default`, `enum`), the files it works on (--axm-worker-files) or, for a "
    "server, the environment it needs (--axm-server-env)"
)


def _unserved(session: Session) -> str:
    """Why a check of valid calls judged nothing: none was served; what they were answered
    most often, with counts."""
    tally = session.tally
    made = ", ".join(f"{tally[kind]} {kind}" for kind in CALL_KINDS[1:])
    answers = ", ".join(f"{said!r} in {n}" for said, n in session.refusals.most_common(3))
    answered = f"; the most frequent answers: {answers}" if answers else ""
    return (
        f"inconclusive: no valid call was served ({tally['valid']} valid calls: {made})"
        f"{answered}. {_REACH_HINT}"
    )


def _errors(session: Session, feed: Feed) -> str:
    """The three errors the feed's calls ended in most often, with their counts."""
    counted = session.errors.get(feed)
    if not counted:
        return ""
    ended = [
        f"{error} in {count} (e.g. {session.error_messages[error]!r})"
        if session.error_messages[error]
        else f"{error} in {count}"
        for error, count in counted.most_common(3)
    ]
    return "; they ended in " + ", ".join(ended)


def outcome_of(run: Run, session: Session, duration: float) -> Outcome:
    """The outcome of one per-call check, with the statistics of its inputs.

    A check of valid calls that found nothing is inconclusive when no valid call was served:
    it judged only refusals and errors, and a tool is certified only on what it serves.
    """
    outcome = _verdict(run, session, duration)
    tally = session.tally
    if outcome.status is Status.PASSED and run.check.feed is VALID and not tally["served"]:
        outcome = dataclasses.replace(
            outcome,
            status=Status.INCONCLUSIVE,
            findings=(not_run(_unserved(session), kind="unserved"),),
        )
    return dataclasses.replace(
        outcome,
        discarded=session.discarded if run.check.feed is VALID else 0,
        invalid_inputs=(
            sum(session.statuses.get(INVALID, {}).values()) if run.check.feed is INVALID else 0
        ),
        keywords=tuple(sorted(run.keywords)),
        sources=tuple((source, run.sources[source]) for source in SOURCES if source in run.sources),
    )


def status_of(violations: tuple[Finding, ...], settings: Settings) -> Status:
    """What a check's violations make of it: a failure, a warning (unless the run is strict),
    or, when it could only say it could not judge, not run."""
    severities = {violation.severity for violation in violations}
    if Severity.FAILURE in severities or (settings.strict and Severity.WARNING in severities):
        return Status.FAILED
    return Status.WARNING if Severity.WARNING in severities else Status.NOT_RUN


def _verdict(run: Run, session: Session, duration: float) -> Outcome:
    check = run.check
    if run.failure is None and check.feed not in session.finished:
        # Not the tool's failure: a call that hung has failed call-completes already.
        budget = (
            f"not run: the tool's time budget of {session.settings.tool_budget:g} s "
            "(--axm-tool-budget) ran out before this check could finish: slow is no defect "
            "(a call that hangs fails call-completes); give the tool a larger budget to judge it"
        )
        return Outcome(
            check.id,
            check.title,
            Status.NOT_RUN,
            (not_run(budget, kind="budget"),),
            examples=run.examples,
            duration=duration,
        )
    if run.failure is not None:
        call, violations = run.failure
        # A probe calls a modified copy of the tool: no person can make the same call.
        evidence = _evidence(
            call,
            callable_by_hand=check.feed.by_hand,
            in_process=session.subject.offers("in-process"),
        )
        return Outcome(
            check.id,
            check.title,
            status_of(violations, session.settings),
            tuple(dataclasses.replace(violation, evidence=evidence) for violation in violations),
            examples=run.examples,
            evidence=evidence,
            duration=duration,
        )
    if run.examples == 0:
        return _unjudged(run, session, duration)
    notes = tuple(dict.fromkeys(run.notes))
    return Outcome(
        check.id, check.title, Status.PASSED, notes, examples=run.examples, duration=duration
    )


def _evidence(call: Call, *, callable_by_hand: bool, in_process: bool = True) -> Evidence:
    """The call a check's findings were made on, with the tool's traceback or last words (for
    a tool in another process, what that process wrote to stderr)."""
    observation = call.observation
    traceback = ""
    if observation.exception is not None:
        traceback = observation.exception.traceback
    elif observation.stderr_tail:
        # A hung call's stacks list the innermost frame first: only stderr is cut to its end.
        heading, tail = (
            ("where it was when it was stopped:", observation.stderr_tail)
            if observation.crash_kind == "timeout" and in_process
            else ("what the process wrote to stderr last:", stderr_tail(observation.stderr_tail))
        )
        traceback = f"{heading}\n{tail}"
    before = tuple((step.ref, step.name, step.input) for step in call.before)
    return Evidence(call.input, call.label, traceback, callable_by_hand, before)


def _unjudged(run: Run, session: Session, duration: float) -> Outcome:
    """The outcome of a per-call check no call reached: why it could not run, or inconclusive."""
    check = run.check
    made = session.statuses.get(check.feed, {})
    seen = ", ".join(f"{count} {status}" for status, count in sorted(made.items()))
    # Only the checks judging the same calls can be why these reached nothing.
    culprits = [
        other.check.id
        for other in session.runs
        if other.failure is not None
        and other.check.feed is check.feed
        and (any_severe(other.failure[1]) or session.settings.strict)
    ]
    reason, kind = "", ""
    if check.feed is INVALID and session.crashes.get(check.feed, 0) < MAX_CRASHES:
        # Nothing to judge is not a defect, nor a doubt: no input breaks the schema, or every
        # one that does is refused by the caller before the tool sees it.
        nothing = (
            f"nothing to judge: every invalid input was refused before reaching the tool ({seen})"
            if made
            else "nothing to judge: no input breaks the schema in a way the tool could receive"
        )
        return Outcome(check.id, check.title, Status.SKIPPED, (note(nothing),), examples=0)
    if check.feed in session.unmade and not made:
        unmade = note(f"not judged: {session.unmade[check.feed]}")
        return Outcome(check.id, check.title, Status.SKIPPED, (unmade,), examples=0)
    if check.feed is OFFLINE and not made:
        nothing = "nothing to judge: the tool served no valid input to send again"
        return Outcome(check.id, check.title, Status.SKIPPED, (note(nothing),), examples=0)
    if session.crashes.get(check.feed, 0) >= MAX_CRASHES:
        reason, kind = (
            f"not run: the tool was not called again after {MAX_CRASHES} calls hung "
            f"or crashed; see {', '.join(culprits)}",
            "stopped",
        )
    wanted = _STATUS_PHRASES.get(check.considers, "could be judged")
    why = f"no call {wanted} ({sum(made.values())} calls: {seen or 'none made'})"
    # When another check failed on those calls, it is the finding; this one could not run
    # because of it. Otherwise the calls never reached what this check judges: inconclusive,
    # neither a pass nor a failure, and the tool is not certified.
    if not reason and culprits:
        reason, kind = f"not run: {why}; see {', '.join(culprits)}", "blocked"
    if reason:
        found = not_run(reason, kind=kind)
        return Outcome(check.id, check.title, Status.NOT_RUN, (found,), examples=0)
    inconclusive = f"inconclusive: {why}{_errors(session, check.feed)}. {_REACH_HINT}"
    return Outcome(
        check.id,
        check.title,
        Status.INCONCLUSIVE,
        (not_run(inconclusive, kind="unreached"),),
        examples=0,
        duration=duration,
    )
