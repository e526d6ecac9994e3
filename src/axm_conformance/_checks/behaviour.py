"""Behaviour checks: the same input gives the same result, the caller's input is left alone, and
no call leaves the tool unable to serve what it served."""

from __future__ import annotations

import os
from typing import Any

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._checks.schema import input_unusable
from axm_conformance._observation import Call, Observation, SubjectInfo
from axm_conformance._outcomes import Finding, listed, warning

__all__: list[str] = []


# Declared accesses that make an answer depend on a world that may change between two calls.
_WORLDLY = ("write", "execute", "external", "unknown")


def _judged_for_determinism(subject: SubjectInfo) -> str | Finding | None:
    """Why determinism is not judged: the protocol does not promise it, and the tool declares
    it acts on the world (a command's timings, a temporary name, a file it wrote)."""
    reason = input_unusable(subject) or subject.policy.no_determinism or None
    if reason is not None or subject.policy.promises_determinism:
        return reason
    declared = [access for access in _WORLDLY if access in subject.effects]
    if not declared:
        return None
    return (
        f"the tool declares {' and '.join(declared)} access, so the same input may meet a "
        f"changed world, and the {subject.protocol_title} protocol does not promise "
        "determinism"
    )


def effects_unseen(subject: SubjectInfo) -> str | Finding | None:
    """Why what a call does where the tool runs is not judged: the tool runs where the kit
    cannot watch it (a remote server), or no valid input can be made for it."""
    if subject.remote:
        return (
            f"what a call does is not seen: the server runs elsewhere ({subject.remote}); "
            "certify it started by the kit (mcp-http:COMMAND, mcp:COMMAND) to see its writes "
            "and processes in the sandbox"
        )
    return input_unusable(subject)


@check(
    "deterministic",
    "behaviour",
    applies=_judged_for_determinism,
    considers=("returned", "raised"),
    repeats=True,
    opt_out="nondeterministic",
)
def deterministic(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The same input, given twice, gives the same result."""
    again = call.repeat
    if again is None or again.status == "crashed":
        return
    first = call.observation
    if first.world_changed or (first.result is not None and first.result.changes):
        return  # the second call met the world the first one changed: not the same input
    if first.signature() != again.signature():
        yield f"the same input gave different outcomes: first {_said(call.observation)}, " + (
            f"then {_said(again)}"
        )


def _said(observation: Observation) -> str:
    if observation.result is not None:
        shown = repr(observation.result.fields)
        return f"returned {shown if len(shown) <= 200 else shown[:197] + '...'}"
    assert observation.exception is not None
    return f"raised {observation.exception.summary()}"


@check(
    "input-not-mutated",
    "behaviour",
    applies=input_unusable,
    considers=("returned", "raised"),
    requires=("in-process",),
)
def input_not_mutated(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The call leaves the caller's input, and everything nested in it, unchanged."""
    if call.observation.mutation:
        yield f"the call changed its input: {call.observation.mutation}"


@check("leaves-no-trace", "behaviour", applies=effects_unseen, considers=("returned", "raised"))
def leaves_no_trace(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The call leaves no files in the project or its temporary directory, and no changed state."""
    # Warnings, each: a file changed in the project may be another process's work (an editor,
    # a build, a parallel test run), a temporary file is removed with the sandbox or the
    # worker's directory, and the worker's own state is the tool's to keep.
    for effect in call.observation.side_effects:
        if effect.kind in ("project", "temporary", "state"):
            yield warning(effect.text)


@check(
    "state-stays-usable",
    "behaviour",
    applies=input_unusable,
    considers=("returned", "raised"),
    revealed=True,
)
def state_stays_usable(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """No call the tool serves leaves it unable to serve what it serves in a fresh worker.

    Judged where a failure needed the calls before it (see the engine's blame): an input the
    tool serves with nothing before it, made again after each of those calls, stops being
    served after one of the tool's own; that call broke the tool's world (a server it kills, a
    store it leaves unreadable), and every call after it fails for it. The calls it is given
    are those that returned or raised; the one made again after the breaking call, whatever
    it came to (a crash too), the engine gives it (see _shrinking.blame)."""
    fresh, culprit = call.fresh, call.before[-1] if call.before else None
    if fresh is None or culprit is None or subject.result.served(call.observation):
        return
    observation = call.observation
    if observation.status == "crashed":
        now = observation.crash_detail
    elif observation.result is not None:
        now = f"it answered {subject.result.says(observation.result)[:200]!r}"
    else:
        assert observation.exception is not None
        now = f"it raised {observation.exception.summary()[:200]}"
    yield (
        f"after {culprit}, which it served, the tool no longer serves this input, which it "
        f"serves in a fresh worker: {now}"
    )


@check(
    "no-process-left",
    "behaviour",
    applies=effects_unseen,
    considers=("returned", "raised"),
    opt_out="long_lived",
)
def no_process_left(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The call leaves no process running once it has answered."""
    for effect in call.observation.side_effects:
        if effect.kind == "process":
            yield effect.text


def _writes_unseen(subject: SubjectInfo) -> str | Finding | None:
    """Why the tool's writes are not seen: its code runs in no process the kit watches."""
    if subject.remote or subject.offers("in-process") or subject.offers("writes-traced"):
        return effects_unseen(subject)
    return (
        "its writes are not seen: its code runs in a process that is not traced (a server is "
        "traced in its sandbox where strace is installed; see the run's header)"
    )


@check(
    "writes-confined",
    "behaviour",
    applies=_writes_unseen,
    considers=("returned", "raised"),
)
def writes_confined(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The call writes only in its working and temporary directories, or where its input says."""
    named = _names_in(call.input)
    for effect in call.observation.side_effects:
        if effect.kind != "outside":
            continue
        # A path the input names is the tool's job to write (a file tool given "/etc/x"); the
        # sandbox refuses it, and the refusal is the tool's answer.
        unasked = [path for path in effect.paths if os.path.basename(path) not in named]
        if unasked:
            yield (
                f"tried to write {listed(unasked)}, outside its working and temporary "
                "directories, where no input asked it to"
            )


def _names_in(value: Any) -> set[str]:
    """The last path component of every string in a JSON value: what it may name a file by."""
    if isinstance(value, str):
        return {os.path.basename(os.path.normpath(value))} if value else set()
    if isinstance(value, dict):
        return set().union(*map(_names_in, value.keys()), *map(_names_in, value.values()))
    if isinstance(value, list):
        return set().union(*map(_names_in, value))
    return set()
