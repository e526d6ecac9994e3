"""The variations of refused valid inputs: a valid input the tool refused is called again one
change away (another member of an enum, the value next to a declared bound, an optional property
left out), and, for each variation served, with the inputs that confirm what the refusal is
about; a value served further inside a declared bound starts a bisection for the bound the tool
really serves. The calls made alone are varied once every valid input was called, those after
other tools once every sequence was made (vary_refused).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from typing import Any

from axm_conformance._engine._runs import Stop, charge
from axm_conformance._engine._state import SessionState
from axm_conformance._feeds import VALID
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Observation, Varied
from axm_conformance._strategies import Cap, is_valid_input, variations

__all__ = ["MOST_VARIED", "call_variations", "vary_refused"]

# The variations of at most this many refused valid inputs are called, per tool and phase (the
# calls made alone, those made after other tools prepared their world): a tool that refuses most
# inputs would otherwise cost several calls for each.
MOST_VARIED = 25
# Calls a bisection for the bound a tool serves may make: enough for integers up to 2**24 apart;
# and the other inputs it served that must refuse the value past it.
_MOST_BISECTIONS = 24
# The values inside a bound found that must be served too for it to be a cap.
_CAP_RANGE = 2
_CONFIRMATIONS = 2


def call_variations(session: SessionState, value: Any) -> tuple[Varied, ...]:
    """Call the variations of a refused valid input, and, for each one served, the inputs
    that confirm the refusal, until one of them is served (see _strategies.variations); or,
    for a value served further inside a declared bound, look for the bound the tool serves
    (_find_cap)."""
    found: list[Varied] = []
    for variation in variations(session.subject.input_schema, value, session.served):
        if variation.cap is not None and any(
            varied.kind == "bound" and session.subject.result.served(varied.observation)
            for varied in found
        ):
            continue  # the bound's neighbour served: the bound is off by one, not capped
        observation = session.observe(variation.value, VALID)[0]
        confirmations: list[Observation] = []
        if session.subject.result.served(observation):
            session.served.add(variation.value)
            if variation.cap is not None:
                capped = _find_cap(session, value, variation.value, observation, variation.cap)
                found += [] if capped is None else [capped]
                continue
            confirmations = _confirm_refused(session, variation.confirmations)
        found.append(
            Varied(
                variation.kind,
                variation.said,
                observation,
                variation.confirming,
                tuple(confirmations),
            )
        )
    return tuple(found)


def _confirm_refused(session: SessionState, inputs: Iterable[dict[str, Any]]) -> list[Observation]:
    """Call the inputs that confirm a refusal until one of them is served."""
    confirmations: list[Observation] = []
    for confirmation in inputs:
        confirmations.append(session.observe(confirmation, VALID)[0])
        if session.subject.result.served(confirmations[-1]):
            session.served.add(confirmation)
            break
    return confirmations


def _find_cap(
    session: SessionState,
    refused: dict[str, Any],
    inside: dict[str, Any],
    served: Observation,
    cap: Cap,
) -> Varied | None:
    """The bound the tool serves, when it refuses ``refused`` and serves it with ``cap``'s
    property set to a value further ``inside``: found by bisection between the two; then
    the first value past it is put into other inputs it served, which must be refused too.
    None when the bound is not found within the calls allowed, or does not end a range of
    values served."""
    schema = session.subject.input_schema
    calls = 0
    good, bad = inside[cap.name], refused[cap.name]
    # A bound found before is tried first: found again, it costs two calls.
    known = list(session.capped.get(cap.name, ()))
    while (middle := cap.between(good, bad)) is not None:
        guesses = [guess for guess in known if cap.lies_between(guess, good, bad)]
        middle = guesses[0] if guesses else middle
        probe = {**refused, cap.name: middle}
        if calls == _MOST_BISECTIONS or not is_valid_input(schema, probe):
            return None
        calls += 1
        answer = session.observe(probe, VALID)[0]
        if session.subject.result.served(answer):
            session.served.add(probe)
            good, served = middle, answer
        else:
            bad = middle
    # A bound that ends a range served, not a value served among refused ones (a status
    # code the tool knows among the codes it does not).
    for inner in cap.within(good, _CAP_RANGE):
        probe = {**refused, cap.name: inner}
        if not is_valid_input(schema, probe):
            continue  # past the schema's other bound: the range is all there is
        calls += 1
        if not session.subject.result.served(session.observe(probe, VALID)[0]):
            return None
    past = cap.past(good)
    session.capped[cap.name] = (good, past)
    here = {**refused, cap.name: good}
    others = [
        {**context, cap.name: past}
        for context in reversed(session.served.inputs)
        if context != here and context.get(cap.name) != past
    ]
    others = [other for other in others if is_valid_input(schema, other)][:_CONFIRMATIONS]
    found = f" (found by bisection, {calls} calls)" if calls else ""
    said = (
        f"{cap.name!r} set to {canonical_json(good)}: it {cap.said(good)}{found}, though "
        f"its schema declares {cap.declared}"
    )
    confirming = f"{cap.name!r} = {canonical_json(past)} in other inputs it served"
    confirmations = tuple(_confirm_refused(session, others))
    bound = tuple(len(value) if isinstance(value, str | list) else value for value in (good, past))
    return Varied("cap", said, served, confirming, confirmations, bound)


def vary_refused(session: SessionState) -> None:
    """Judge the refused valid inputs of a phase by their variations, once every input of the
    phase has been called: what the tool serves is then known best (for the calls made after
    other tools, in the world they made: the steps stay with a call and its reproduction)."""
    runs = [run for run in session.runs if run.check.varies]
    calls, session.varied = session.refused[session.varied :], len(session.refused)
    for refused in calls:
        if time.monotonic() > session.deadline:
            session.exhausted = True
            raise Stop
        started = time.perf_counter()
        call = dataclasses.replace(refused, variations=call_variations(session, refused.input))
        for run in runs:
            session.record(run, call)
        charge(runs, started)
