"""The tool's world, as the calls of other tools of its home make it and their readings show it.

A step is a call of another tool of the home (or of the tool itself) made to prepare the tool's
world; a failure's steps are made again before it is reproduced. After a served call, what the
read-only tools of the home return tells whether the call changed the world (see read_world);
a step after which the tool no longer serves what it served broke its world (see breaks).
"""

from __future__ import annotations

import time
from typing import Any, TypeGuard

from axm_conformance._engine._state import SessionState
from axm_conformance._feeds import VALID
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Observation, Reading, Step, SubjectInfo
from axm_conformance._process._records import Invocation
from axm_conformance._strategies import boundary_inputs

__all__ = ["breaks", "call_step", "make_steps", "read_world"]

# The pause over which a reader whose answer changed must return the same: longer than the
# finest clock a result shows (seconds).
_SETTLE = 1.1
_PREVIEW = 120
# Seconds a step may take: one that takes longer is stopped, and its tool prepares no more.
_LONGEST_STEP = 5.0


def call_step(session: SessionState, step: Step) -> Observation | None:
    """Make a step: call another tool of the home, or the tool itself; None when the call
    crashed or hung, which drops the other tool from those that prepare (the damage is its,
    not the tool certified's). A step is stopped after _LONGEST_STEP seconds (the run's timeout
    when shorter), as a hang: preparing the world is the tool certified's cost, not its
    judgement."""
    session.paced()
    timeout = min(session.settings.timeout, _LONGEST_STEP)
    tool = "" if step.ref == session.subject.ref else step.ref
    answer = session.worker.invoke(Invocation(step.input, step.invalid, tool=tool), timeout=timeout)
    observation = answer.value if answer.crash is None and answer.error is None else None
    if not isinstance(observation, Observation) or observation.status == "crashed":
        if session.together is not None:
            session.together.tools.pop(step.ref, None)
        session.remember(step, None)
        return None
    session.remember(step, observation)
    return observation


def make_steps(session: SessionState, steps: tuple[Step, ...]) -> bool:
    """Make a failure's steps again, in order: whether each was made (none crashed)."""
    return all(call_step(session, step) is not None for step in steps)


def read_world(session: SessionState, value: Any) -> tuple[Reading, ...]:
    """What each read-only tool of the home returns after the call just made, and after the
    same call once more. A reader is kept only when it served, and returned the same, twice
    after the first call: what changes by itself (a clock, a counter of its own calls) says
    nothing of the tool, nor does a reading the reader refused (a server's rate limit answers
    any call). Costs the tool's call, and three calls of each reader (a reading that changed:
    a pause, the call and three more; see _changed_by_the_call)."""
    together = session.together
    assert together is not None
    together.readings -= 1
    steady: dict[str, tuple[SubjectInfo, Step, Observation]] = {}
    for reader in together.readers(session.subject):
        step = _reading_step(session, reader)
        if step is None:
            continue
        first, second = call_step(session, step), call_step(session, step)
        if _read(first, reader) and _read(second, reader) and _seen(first) == _seen(second):
            steady[reader.ref] = (reader, step, second)
    if not steady:
        return ()
    session.observe(value, VALID)
    readings = []
    for observer, step, once in steady.values():
        twice = call_step(session, step)
        if _read(twice, observer) and (
            _seen(once) == _seen(twice) or _changed_by_the_call(session, value, observer, step)
        ):
            readings.append(
                Reading(step, _seen(once), _seen(twice), _preview(once), _preview(twice))
            )
    return tuple(readings)


def breaks(session: SessionState, control: Any, step: Step) -> Observation | None:
    """What ``control`` came to right after ``step``, in a fresh worker, when the tool
    serves it there before the step and not after it: the step broke the tool's world (a
    server it killed, a store it left unreadable). None otherwise, and when the answer
    after it is one the server gave as its pacing: three calls are no burst a rate limit
    refuses, but a limit already reached may still hold."""
    model = session.subject.result
    session.restart()
    if not model.served(session.observe(control, VALID)[0]):
        return None
    call_step(session, step)
    after = session.observe(control, VALID)[0]
    if model.served(after) or session.answer(after) in session.pacing:
        return None
    return after


def _changed_by_the_call(
    session: SessionState, value: Any, reader: SubjectInfo, step: Step
) -> bool:
    """Whether what ``reader`` returned, changed after the call made again, changes with the
    call only: it stays the same over a pause (a clock to the second, such as a resource
    "created at 2:49:50 AM", changes by itself between two readings now and then), and the call
    made once more changes it again."""
    before = call_step(session, step)
    time.sleep(_SETTLE)
    after = call_step(session, step)
    if not (_read(before, reader) and _read(after, reader)) or _seen(before) != _seen(after):
        return False
    session.observe(value, VALID)
    again = call_step(session, step)
    return _read(again, reader) and _seen(again) != _seen(after)


def _read(observation: Observation | None, reader: SubjectInfo) -> TypeGuard[Observation]:
    return observation is not None and reader.result.served(observation)


def _reading_step(session: SessionState, reader: SubjectInfo) -> Step | None:
    """A call that reads the world through ``reader``: an input it served, else its simplest
    input when it serves that."""
    together = session.together
    assert together is not None
    if reader.ref not in together.served:
        try:
            simplest = boundary_inputs(reader.input_schema)[0].value
        except (ValueError, IndexError):
            return None
        observation = call_step(session, Step(reader.ref, str(reader.name), simplest))
        if observation is None or not reader.result.served(observation):
            return None
        together.served[reader.ref] = simplest
    return Step(reader.ref, str(reader.name), together.served[reader.ref])


def _seen(observation: Observation) -> str:
    if observation.result is not None:
        return observation.result.fingerprint
    return canonical_json(
        [observation.status, observation.exception and observation.exception.summary()]
    )


def _preview(observation: Observation) -> str:
    if observation.result is None:
        return observation.status
    shown = canonical_json(observation.result.fields)
    return shown if len(shown) <= _PREVIEW else f"{shown[:_PREVIEW]}..."
