"""Hint checks: what a tool declares about its behaviour holds for what its calls do.

MCP's tool annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``) are what
clients decide on: a read-only tool is called without asking, a non-destructive one is trusted
not to lose data, an idempotent one is retried. They are held to what each valid call changed in
the tool's working directory, compared by content (see :mod:`axm_conformance._workdir`).
``openWorldHint: false`` says the tool works in a closed world: inputs it served are sent again
to a server of its own, cut off from every network, and must be served as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._checks.behaviour import effects_unseen
from axm_conformance._checks.schema import input_unusable
from axm_conformance._feeds import OFFLINE
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Call, Reading, SubjectInfo
from axm_conformance._outcomes import Finding, not_run, warning
from axm_conformance._process.system._sandbox import can_cut_off
from axm_conformance._workdir import Change

__all__: list[str] = []

# The defaults MCP gives a hint the tool leaves out.
_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
# What loses data: a file rewritten with its old content kept ("extended") is an additive update;
# one rewritten beyond comparison ("rewrote": a workbook, a database) may or may not have lost any.
_DESTRUCTIVE = ("overwrote", "deleted")


def _hint(subject: SubjectInfo, name: str) -> bool:
    value = subject.annotations.get(name, _DEFAULTS[name])
    return value if isinstance(value, bool) else _DEFAULTS[name]


def _declares(name: str, value: bool) -> Callable[[SubjectInfo], str | Finding | None]:
    def applies(subject: SubjectInfo) -> str | Finding | None:
        unusable = input_unusable(subject)
        if unusable is not None:
            return unusable
        if _hint(subject, name) is not value:
            return f"the tool does not declare {name}: {str(value).lower()}"
        if name == "destructiveHint" and _hint(subject, "readOnlyHint"):
            return "the tool declares readOnlyHint, which read-only-honoured judges"
        return None

    return applies


def _changed(call: Call) -> tuple[Change, ...]:
    result = call.observation.result
    assert result is not None
    return result.changes


def _said(changes: Iterable[Change]) -> str:
    return ", ".join(str(change) for change in changes)


@check(
    "read-only-honoured",
    "behaviour",
    applies=_declares("readOnlyHint", True),
    considers=("returned",),
    requires=("behaviour-hints",),
    reads_world=True,
)
def read_only_honoured(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A tool that declares itself read-only changes no file, nor what other tools return.

    Its working directory, compared by content; and what the other read-only tools of its
    server return after the call made once and made again (see the engine's read_world)."""
    changes = _changed(call)
    if changes:
        yield f"declares readOnlyHint, yet the call {_said(changes)}"
    for reading in _changed_readings(call):
        yield (
            f"declares readOnlyHint, yet the same call made again changed what "
            f"{reading.observer} returns{_from_to(reading)}"
        )


def _non_destructive(subject: SubjectInfo) -> str | Finding | None:
    return _declares("destructiveHint", False)(subject) or effects_unseen(subject)


@check(
    "non-destructive-honoured",
    "behaviour",
    applies=_non_destructive,
    considers=("returned",),
    requires=("behaviour-hints",),
)
def non_destructive_honoured(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A tool that declares itself non-destructive deletes and overwrites no existing file.

    A file it writes anew with its old content kept (see :mod:`axm_conformance._workdir`) was
    extended, not overwritten; one whose content cannot be compared (binary, large) is only a
    warning: adding a sheet to a workbook writes the whole file anew, and loses nothing."""
    declared = "declares destructiveHint: false (additive updates only), yet the call"
    destroyed = [change for change in _changed(call) if change.kind in _DESTRUCTIVE]
    rewritten = [change for change in _changed(call) if change.kind == "rewrote"]
    if destroyed:
        yield f"{declared} {_said(destroyed)}"
    elif rewritten:
        yield warning(f"{declared} {_said(rewritten)}: whether it lost data is unknown")


@check(
    "idempotent-honoured",
    "behaviour",
    applies=_declares("idempotentHint", True),
    considers=("returned",),
    repeats=True,
    requires=("behaviour-hints",),
    reads_world=True,
)
def idempotent_honoured(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A tool that declares itself idempotent leaves the same state when a call is repeated.

    Its working directory, and what the read-only tools of its server return."""
    first = call.observation.result
    again = call.repeat.result if call.repeat is not None else None
    if again is not None and first is not None and again.state != first.state:
        changes = _said(again.changes) or "changed its working directory"
        yield f"declares idempotentHint, yet the same call made again {changes}"
    for reading in _changed_readings(call):
        yield (
            f"declares idempotentHint, yet the same call made again changed what "
            f"{reading.observer} returns{_from_to(reading)}"
        )


def _changed_readings(call: Call) -> list[Reading]:
    """The read-only tools that returned something else after the call made again (only those
    that returned the same twice after the call once: see the engine's read_world)."""
    return [reading for reading in call.world if reading.once != reading.twice]


def _from_to(reading: Reading) -> str:
    return f": {reading.once_preview} after the call once, {reading.twice_preview} after it twice"


def _closed_world(subject: SubjectInfo) -> str | Finding | None:
    declared = _declares("openWorldHint", False)(subject) or effects_unseen(subject)
    if declared is not None:
        return declared
    unable = can_cut_off()
    return not_run(f"not run: {unable}") if unable else None


@check(
    "closed-world-honoured",
    "behaviour",
    applies=_closed_world,
    considers=("returned", "crashed"),
    feed=OFFLINE,
    requires=("behaviour-hints",),
)
def closed_world_honoured(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A tool that declares a closed world serves, cut off from the network, what it served."""
    observation = call.observation
    if observation.status == "crashed":
        yield (
            f"declares openWorldHint: false, yet cut off from the network it did not answer an "
            f"input it served with the network: {observation.crash_detail}"
        )
    elif subject.result.refused(observation):
        assert observation.result is not None
        yield (
            "declares openWorldHint: false, yet cut off from the network it refused an input "
            f"it served with the network: {canonical_json(observation.result.fields)[:300]}"
        )
