"""The valid and invalid inputs: the failures earlier runs saved (replayed first), the examples
given (boundary inputs, hints placed, one-mistake mutations), then those Hypothesis generates;
and a failure's minimal input saved in the example database, to be replayed by the next run.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity

from axm_conformance._checks import Check
from axm_conformance._engine._runs import Run, Stop
from axm_conformance._engine._session import Session
from axm_conformance._engine._world import make_steps
from axm_conformance._feeds import INVALID, VALID, Feed
from axm_conformance._observation import Step, SubjectInfo
from axm_conformance._settings import Settings
from axm_conformance._strategies import Example, Mutation

__all__ = ["explore", "judge_example", "judge_mutation", "replay", "save"]


def judge_example(session: Session, example: Example, label: str) -> None:
    session.judge(example.value, label, source=example.source)


def judge_mutation(session: Session, mutation: Mutation) -> None:
    label = _mutation_label(mutation)
    session.judge(mutation.value, label, feed=INVALID, source=mutation.source)


def explore(session: Session, seed: int, *, feed: Feed) -> None:
    """Judge the inputs Hypothesis generates, valid ones or one-mistake mutations."""
    if not session.feeds(feed):
        return
    invalid = feed is INVALID

    # Settings not given here come from the active Hypothesis profile (the "ci" one when CI
    # is set): derandomize, print_blob and the example database are the user's to choose.
    @hypothesis.seed(seed)
    @hypothesis.settings(
        max_examples=_invalid_count(session.settings) if invalid else session.settings.examples,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @hypothesis.given(session.invalid if invalid else session.drawn)
    def generated(case: Any) -> None:
        if invalid:
            judge_mutation(session, case)
        else:
            judge_example(session, case, "")

    with contextlib.suppress(Stop):
        generated()


def replay(session: Session, feed: Feed) -> None:
    """Judge first the failing inputs that earlier runs saved in the example database.

    An entry is dropped when the schema no longer classes its input as this feed's (valid,
    or breaking the schema), and when it does not fail again: the tool was fixed. (A
    failure that does not reproduce within one run is reported as flaky: see confirm.)
    """
    if session.database is None:
        return
    validator = session.context.validator(session.subject.input_schema)
    for run in session.runs:
        if run.check.feed is not feed:
            continue
        key = _failure_key(session.subject, run.check)
        for entry in list(session.database.fetch(key)):
            try:
                saved = json.loads(entry)
                value, label = saved["input"], f"{saved['label']} {_REPLAYED}".lstrip()
                before = tuple(Step(*step) for step in saved.get("before", ()))
                replayable = validator.is_valid(value) is (feed is VALID)
            except (ValueError, KeyError, TypeError):
                replayable = False
            if not replayable or not _prepared(session, before):
                session.database.delete(key, entry)
                continue
            session.judge(value, label, feed=feed, before=before)
            session.replayed.add((feed, repr(value)))
            if run.failure is None or run.failure[0].input != value:
                session.database.delete(key, entry)


def _prepared(session: Session, before: tuple[Step, ...]) -> bool:
    """Make the steps of a saved failure again: whether they could be (their tools are
    still beside the tool, and none crashed)."""
    together = session.together
    if not before:
        return True
    own = session.subject.ref
    if together is None or any(step.ref not in (own, *together.tools) for step in before):
        return False
    return make_steps(session, before)


def save(session: Session, run: Run) -> None:
    """Keep a failure's (minimal) input in the example database, to be replayed first by the
    next run, whatever its seed."""
    if session.database is None or run.failure is None:
        return
    call = run.failure[0]
    label = call.label.removesuffix(_REPLAYED).rstrip()
    saved = {"input": call.input, "label": label}
    if call.before:
        saved["before"] = [
            [step.ref, step.name, step.input, *([True] if step.invalid else [])]
            for step in call.before
        ]
    entry = json.dumps(saved, sort_keys=True)
    session.database.save(_failure_key(session.subject, run.check), entry.encode())


def _mutation_label(mutation: Mutation) -> str:
    return f"invalid input, {mutation.kind}: {mutation.detail}"


# Said of an input an earlier run saved as failing, when this run replays it.
_REPLAYED = "(replayed: it failed in an earlier run)"


def _failure_key(subject: SubjectInfo, check: Check) -> bytes:
    """Where a check's failing inputs of a tool are kept in the example database."""
    return f"axm-conformance failure {subject.ref} {check.id}".encode()


def _invalid_count(settings: Settings) -> int:
    """How many generated invalid inputs a tool gets: half the valid ones, at least ten."""
    return max(10, settings.examples // 2)
