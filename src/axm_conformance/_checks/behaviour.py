"""Behaviour checks: the same input gives the same result, and the caller's input is left alone."""

from __future__ import annotations

from axm_conformance._checks._registry import Context, Found, check
from axm_conformance._checks.schema import input_unusable
from axm_conformance._observation import Call, Observation, SubjectInfo
from axm_conformance._outcomes import Finding, warning

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


@check(
    "deterministic",
    "behaviour",
    applies=_judged_for_determinism,
    considers=("returned", "raised"),
    repeats=True,
    opt_out="nondeterministic",
)
def deterministic(subject: SubjectInfo, call: Call, context: Context) -> Found:
    """The same input, given twice, gives the same result."""
    again = call.repeat
    if again is None or again.status == "crashed":
        return
    first, second = call.observation.signature(), again.signature()
    if first != second:
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
def input_not_mutated(subject: SubjectInfo, call: Call, context: Context) -> Found:
    """The call leaves the caller's input, and everything nested in it, unchanged."""
    if call.observation.mutation:
        yield f"the call changed its input: {call.observation.mutation}"


# What a call may not leave behind at all: processes are attributed to the tool for certain.
# Anything else is a warning: a file change in the project, say, may be another process's work
# (an editor, a build, a parallel test run) that happened during the call.
_FORBIDDEN = ("processes running",)


@check("leaves-no-trace", "behaviour", applies=input_unusable, considers=("returned", "raised"))
def leaves_no_trace(subject: SubjectInfo, call: Call, context: Context) -> Found:
    """The call leaves nothing behind: no files in the project, no processes, no changed state."""
    for effect in call.observation.side_effects:
        yield effect if any(part in effect for part in _FORBIDDEN) else warning(effect)
