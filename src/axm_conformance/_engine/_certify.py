"""Certify one tool: the static checks, then the per-call checks over calls they share, phase by
phase (valid inputs, variations of refused ones, calls after other tools of its home, invalid
inputs, probes, shrinking and confirmation), and the verdict.

Each input (the boundary examples, then each hint put in each place, then the inputs Hypothesis
generates with the hints mixed in) is sent once to the tool's worker, and every per-call check
judges the observation. The hints are what may reach the tool's domain beyond the schema: the
literals of its source, the names of its worker files, the values its descriptions and schema
name. Generation is the expensive part of a run, so an input is drawn once per tool, not once
per check. Each check keeps its own first failure, which is then shrunk on its own, so one
defect never hides another.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import hypothesis
from hypothesis.strategies import SearchStrategy

from axm_conformance._checks import Check, CheckContext, checks_for
from axm_conformance._engine._caller import Caller, Callers
from axm_conformance._engine._hints import hints_for
from axm_conformance._engine._home import Together
from axm_conformance._engine._inputs import explore, judge_example, judge_mutation, replay, save
from axm_conformance._engine._payloads import payloads
from axm_conformance._engine._probes import offline, probe
from axm_conformance._engine._runs import NotRunnable, Run, Stop, charge
from axm_conformance._engine._session import Session
from axm_conformance._engine._shrinking import confirm, reproduce, shrink
from axm_conformance._engine._state import CALL_KINDS, Progress
from axm_conformance._engine._stateful import explore_together
from axm_conformance._engine._varying import vary_refused
from axm_conformance._engine._verdict import outcome_of, status_of
from axm_conformance._feeds import (
    INVALID,
    VALID,
)
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import SubjectInfo
from axm_conformance._outcomes import Severity, Status, not_run, note
from axm_conformance._process._containment import refusal
from axm_conformance._report import Outcome, ToolReport
from axm_conformance._settings import Settings, derived_seed
from axm_conformance._strategies import (
    Example,
    Mutation,
    boundary_inputs,
    discarded_count,
    generated_inputs,
    hinted_inputs,
    invalid_examples,
    invalid_inputs,
    without_local_constants,
)

__all__ = ["certify"]


def _not_objects() -> list[Mutation]:
    """Inputs that are not objects at all, for protocols whose input arrives as one value."""
    values: tuple[Any, ...] = (None, [], "text", 0)
    return [
        Mutation(value, "not-an-object", (), f"the input is {json.dumps(value)}, not an object")
        for value in values
    ]


def certify(
    subject: SubjectInfo,
    key: str,
    settings: Settings,
    seed: int | None,
    subjects: Iterable[SubjectInfo] = (),
    check_ids: Iterable[str] | None = None,
    *,
    callers: Callers,
    progress: Progress | None = None,
) -> ToolReport:
    """Run the selected checks (all by default) on one tool and return their outcomes.

    The tool is called through the caller ``callers`` give it (see _caller: the run's workers,
    or the fake the kit's tests give the engine). Without a
    ``seed``, the tool's is derived from its key and input schema (a derandomized run).
    ``progress`` is told, now and then while the tool is called, what is being done.
    """
    if seed is None:
        seed = derived_seed(key, canonical_json(subject.input_schema))
    chosen = checks_for(subject.kind, check_ids or settings.checks)
    context = CheckContext(settings=settings, subjects=tuple(subjects))
    outcomes: dict[str, Outcome] = {}
    calls: dict[str, int | float] = {}
    per_call: list[Check] = []
    why_not = refusal(settings, subject.effects)
    refused = None if why_not is None else not_run(why_not, kind="refused")
    # A server is observed when it is described, not by its checks, which only judge what was
    # seen: the first of them that runs is charged that time.
    unpaid = subject.described_in
    for check in chosen:
        exempt = settings.exemption(check.opt_out, subject.name)
        reason = (
            note(f"exempt by the axm_{check.opt_out} setting: {exempt}")
            if exempt is not None
            else check.skip_reason(subject)
        )
        if reason is None and check.per_call:
            reason = refused
        if reason is not None:
            status = Status.NOT_RUN if reason.severity is Severity.NOT_RUN else Status.SKIPPED
            outcomes[check.id] = Outcome(check.id, check.title, status, (reason,))
        elif check.per_call:
            per_call.append(check)
        else:
            started = time.perf_counter()
            found = check.findings(subject, None, context)
            violations = tuple(item for item in found if item.severity is not Severity.NOTE)
            outcomes[check.id] = Outcome(
                check.id,
                check.title,
                status_of(violations, settings) if violations else Status.PASSED,
                violations or found,
                duration=time.perf_counter() - started + unpaid,
            )
            unpaid = 0.0
    if per_call:
        caller = callers.take(subject)
        # Inputs come from the tool's side only (its schema, source, files), never from the
        # modules this process imported: see _strategies._constants.
        with without_local_constants():
            fuzzed, calls = _fuzz(
                subject, per_call, context, settings, seed, (caller, callers), progress
            )
        outcomes.update(fuzzed)
    ordered = tuple(outcomes[check.id] for check in chosen)
    together = tuple(
        other.ref
        for other in context.subjects
        if subject.shares_home(other) and refusal(settings, other.effects) is None
    )
    return ToolReport(subject, key, ordered, seed, calls, together)


def _fuzz(
    subject: SubjectInfo,
    checks: list[Check],
    context: CheckContext,
    settings: Settings,
    seed: int,
    callers: tuple[Caller, Callers],
    progress: Progress | None,
) -> tuple[dict[str, Outcome], dict[str, int | float]]:
    """The outcomes of the per-call checks, and what became of the valid calls (CALL_KINDS;
    with ``backoffs`` and ``paused`` seconds when the server's pacing made the kit back off)."""
    started = time.perf_counter()
    runs = [Run(check) for check in checks]
    worker, more = callers
    # The worker is closed whatever happens, also when the tool turns out not to be callable.
    with contextlib.closing(worker):
        try:
            inputs = _Inputs.of(subject, settings)
            session = Session(
                subject, runs, context, worker, more, settings, inputs.invalid, inputs.drawn
            )
            session.progress = progress
            session.together = Together.of(subject, context.subjects, settings)
            session.deadline = time.monotonic() + settings.tool_budget
            session.database = hypothesis.settings().database
            _call(session, inputs, seed)
            _shrink_failures(session)
            session.refusals_alike()
        except NotRunnable as exc:
            _share_the_rest(runs, time.perf_counter() - started)
            message = not_run(f"not run: {exc}", kind="not-callable")
            return {
                run.check.id: Outcome(
                    run.check.id, run.check.title, Status.ERROR, (message,), duration=run.seconds
                )
                for run in runs
            }, {}
    _share_the_rest(runs, time.perf_counter() - started)
    outcomes = {run.check.id: outcome_of(run, session, run.seconds) for run in runs}
    calls: dict[str, int | float] = {kind: session.tally[kind] for kind in CALL_KINDS}
    if session.backoffs:
        calls |= {"backoffs": session.backoffs, "paused": round(session.paused, 1)}
    calls |= {kind: count for kind, count in session.unblamed.items() if count}
    return outcomes, calls


@dataclass(frozen=True)
class _Inputs:
    """What a tool is called with, drawn from its input schema and hints."""

    boundary: list[Example]
    placed: list[Example]
    drawn: SearchStrategy[Example]
    invalid: SearchStrategy[Mutation]
    mutations: list[Mutation]
    schema: Any

    @classmethod
    def of(cls, subject: SubjectInfo, settings: Settings) -> _Inputs:
        """The tool's inputs; NotRunnable when its schema gives no valid one."""
        schema = subject.input_schema
        hints = hints_for(subject, settings)
        try:
            # The strings that break path and text handling probe a Python tool's own
            # handling; a server is not given them yet (see conformance/README.md).
            text_edges = "in-process" in subject.capabilities
            boundary = boundary_inputs(schema, text_edges=text_edges)
            invalid, mutations = invalid_inputs(schema, hints), invalid_examples(schema)
            drawn = generated_inputs(schema, hints)
            placed = hinted_inputs(schema, hints, settings.examples)
        except ValueError as exc:
            raise NotRunnable(
                f"no valid input can be generated from the input schema: {exc}"
            ) from None
        if subject.call_style == "dict":
            mutations = [*mutations, *_not_objects()]
        return cls(boundary, placed, drawn, invalid, mutations, schema)


def _call(session: Session, inputs: _Inputs, seed: int) -> None:
    """Make the tool's calls, phase after phase: valid inputs (and the variations of those it
    refused), after other tools of its home, invalid inputs, then the probes."""
    discarded_before = discarded_count(inputs.schema)
    with contextlib.suppress(Stop):
        session.phase = "valid inputs"
        try:
            replay(session, VALID)
            for example in inputs.boundary:
                judge_example(session, example, f"boundary example: {example.label}")
            for example in inputs.placed:
                judge_example(session, example, example.label)
            explore(session, seed, feed=VALID)
        finally:
            session.flush()
        # Before other tools change the world the refusals were made in.
        session.phase = "variations of refused inputs"
        vary_refused(session)
        session.phase = "after other tools of its home"
        try:
            explore_together(session, seed)
        finally:
            session.flush()
        session.phase = "variations of inputs refused after other tools"
        vary_refused(session)
    session.finish(VALID)
    session.discarded = discarded_count(inputs.schema) - discarded_before
    with contextlib.suppress(Stop):
        session.phase = "invalid inputs"
        replay(session, INVALID)
        for mutation in inputs.mutations:
            judge_mutation(session, mutation)
        explore(session, seed, feed=INVALID)
    session.finish(INVALID)
    session.phase = "probes"
    probe(session, [example.value for example in inputs.boundary], inputs.mutations)
    offline(session, [example.value for example in inputs.boundary])
    payloads(session, [example.value for example in inputs.boundary])


def _shrink_failures(session: Session) -> None:
    """Shrink each failure the fuzzed calls found, reproduce and confirm it, and save it."""
    for run in session.runs:
        # A state found broken by blame was made again already: it is its reproduction.
        blamed = run.failure is not None and run.failure[0].fresh is not None
        if run.failure is None or not run.check.feed.fuzzed or blamed:
            continue
        session.phase = f"shrinking {run.check.id}"
        shrinking = time.perf_counter()
        found = run.failure
        shrink(session, run)
        if not run.check.repeats:  # a check that repeats compares two calls itself
            reproduce(session, run, found)
            if run.failure is not None:
                confirm(session, run)
        save(session, run)
        charge([run], shrinking)


def _share_the_rest(runs: list[Run], total: float) -> None:
    """Share the tool's time that no call or shrinking accounts for (its worker's start, drawing
    the inputs) in proportion to what each check spent, so that the checks' times add up to the
    tool's."""
    spent = sum(run.seconds for run in runs)
    rest = max(total - spent, 0.0)
    for run in runs:
        run.seconds += rest * (run.seconds / spent if spent else 1 / len(runs))
