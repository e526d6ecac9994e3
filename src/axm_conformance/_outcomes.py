"""What a check concludes, typed: the status of an outcome, and the findings behind it.

A check yields findings; the runner gives each the evidence of the call it was found on and turns
a check's findings into one :class:`Status`. The verdict of a tool is read from its statuses in
one place, :func:`verdict`, which a report in process and a certificate assembled from records
(under pytest-xdist, from several processes) both use.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "LONE_SURROGATE",
    "Evidence",
    "Finding",
    "Severity",
    "Status",
    "Verdict",
    "failing",
    "failure",
    "listed",
    "not_run",
    "note",
    "verdict",
    "warning",
    "writable",
]


class Status(enum.StrEnum):
    """How one check of one tool ended.

    ``skipped``: the check does not apply to the tool (no guards to probe, no output schema).
    ``not-run``: it applies but could not run (what it needs failed first, the tool was refused
    as root, the calls stopped after crashes, the tool's time budget ran out): never a pass.
    ``inconclusive``: it ran, but no call reached what it judges. ``error``: the run could not
    finish it because of the tool (the tool could not be called at all): a failure.
    """

    PASSED = "passed"
    FAILED = "failed"
    WARNING = "warning"
    SKIPPED = "skipped"
    NOT_RUN = "not-run"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"

    @property
    def failing(self) -> bool:
        """A failure of the tool: failed, or an error the tool caused."""
        return self in (Status.FAILED, Status.ERROR)

    @property
    def unsettled(self) -> bool:
        """It applies, and judged nothing: the verdict cannot be a certification."""
        return self in (Status.NOT_RUN, Status.INCONCLUSIVE)

    @property
    def unjudged(self) -> bool:
        """Nothing was judged: it does not apply, or it is unsettled (a skip, in pytest)."""
        return self is Status.SKIPPED or self.unsettled


class Severity(enum.StrEnum):
    """What a finding means for the tool: a failure, a warning (a failure only in a strict run),
    a note (a fact about a check that passed), or that the check could not judge."""

    FAILURE = "failure"
    WARNING = "warning"
    NOTE = "note"
    NOT_RUN = "not-run"


@dataclass(frozen=True)
class Evidence:
    """The call a finding was made on: its input, what kind of input it was, the tool's own
    traceback, and whether a person can make the same call (not so for a probe of a copy)."""

    input: Any
    label: str = ""
    traceback: str = ""
    callable_by_hand: bool = True
    # The calls of other tools made before it, in order, that a reproduction makes first:
    # (reference, name, input) each.
    before: tuple[tuple[str, str, Any], ...] = ()


# A lone UTF-16 surrogate: what a Python string may hold (what a tool returned, what a server
# wrote as an escape) that no Unicode text does, and no UTF-8 output takes.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def writable(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud83d``), so that a
    report, a terminal or a file in UTF-8 takes it; inside a JSON string the escape is the same
    string."""
    return LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


@dataclass(frozen=True)
class Finding:
    """One sentence a check states about a tool, with its severity; the runner adds the
    evidence.

    What a program reads is typed beside the sentence: ``kind`` names what was found among the
    findings its check can make (a client rule's id, how a call crashed, what was raised), stable
    as a check id is, so that a baseline can know one finding and not another; ``at`` is a
    JSON Pointer to where it is in what the check judged (the input schema, an input, a result;
    ``""``: the whole, or nowhere in particular); ``data`` holds its facts as JSON values."""

    text: str
    severity: Severity = Severity.FAILURE
    evidence: Evidence | None = None
    kind: str = field(default="", kw_only=True)
    at: str = field(default="", kw_only=True)
    data: Mapping[str, Any] = field(default_factory=dict, kw_only=True, hash=False)

    def __post_init__(self) -> None:
        # A sentence quoting what a tool was given or gave may carry a lone surrogate, and so
        # may a place named after a property.
        object.__setattr__(self, "text", writable(self.text))
        object.__setattr__(self, "at", writable(self.at))

    @property
    def severe(self) -> bool:
        """Whether it fails a run whatever its settings."""
        return self.severity is Severity.FAILURE

    def __str__(self) -> str:
        return self.text


def failing(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that made a check fail: its failures, or its warnings where it has none
    (a strict run fails on them)."""
    found = list(findings)
    failures = [each for each in found if each.severity is Severity.FAILURE]
    return failures or [each for each in found if each.severity is Severity.WARNING]


# How many items of a list a finding names before saying how many more there are.
_SHOWN = 5


def listed(items: list[str]) -> str:
    """``items`` joined for a sentence: the first five, then how many more there are."""
    shown = ", ".join(items[:_SHOWN])
    return f"{shown} and {len(items) - _SHOWN} more" if len(items) > _SHOWN else shown


def failure(
    text: str, *, kind: str = "", at: str = "", data: Mapping[str, Any] | None = None
) -> Finding:
    """A violation that fails the tool."""
    return Finding(text, Severity.FAILURE, kind=kind, at=at, data=data or {})


def warning(
    text: str, *, kind: str = "", at: str = "", data: Mapping[str, Any] | None = None
) -> Finding:
    """A violation that is only a warning unless the run is strict (``--axm-strict``)."""
    return Finding(text, Severity.WARNING, kind=kind, at=at, data=data or {})


def note(
    text: str, *, kind: str = "", at: str = "", data: Mapping[str, Any] | None = None
) -> Finding:
    """Not a violation: a fact worth reporting about a check that passed (a peak seen)."""
    return Finding(text, Severity.NOTE, kind=kind, at=at, data=data or {})


def not_run(text: str, *, kind: str = "") -> Finding:
    """The check could not judge this call (a probe could not be set up): not a pass."""
    return Finding(text, Severity.NOT_RUN, kind=kind)


@dataclass(frozen=True)
class Verdict:
    """A tool's verdict, and the checks its run left out.

    ``failed`` when a check failed or ended in an error; ``inconclusive`` when none did but one
    could not run or judged nothing; ``certified`` otherwise. Certified means it only when every
    check ran: a partial run (``-k``, ``--lf``, ``--axm-check``, deselection) is never certified.
    """

    verdict: Literal["certified", "failed", "inconclusive"]
    not_run: tuple[str, ...]

    @property
    def partial(self) -> bool:
        return bool(self.not_run)

    @property
    def certified(self) -> bool:
        return self.verdict == "certified" and not self.partial


def verdict(statuses: Iterable[tuple[str, Status | str]], registered: Iterable[str]) -> Verdict:
    """The verdict from each check's (id, status), given the ids of every registered check."""
    ran = {check_id: Status(status) for check_id, status in statuses}
    ended = set(ran.values())
    return Verdict(
        verdict="failed"
        if any(status.failing for status in ended)
        else "inconclusive"
        if any(status.unsettled for status in ended)
        else "certified",
        not_run=tuple(check_id for check_id in registered if check_id not in ran),
    )
