"""What a session keeps of each per-call check (its tally over the shared calls), and how a
session stops: the tool cannot be called at all, or is not to be called again."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from axm_conformance._checks import Check
from axm_conformance._observation import Call
from axm_conformance._outcomes import Finding

__all__ = ["NotRunnable", "Run", "Stop", "any_severe", "charge"]


class NotRunnable(Exception):
    """The tool cannot be called at all (its schema gives no inputs, or it does not load)."""


class Stop(Exception):
    """Ends a Hypothesis run early without it counting as a failure of anything."""


@dataclass
class Run:
    """One per-call check's tally over the shared calls."""

    check: Check
    examples: int = 0
    failure: tuple[Call, tuple[Finding, ...]] | None = None
    notes: list[Finding] = field(default_factory=list)
    keywords: set[str] = field(default_factory=set)
    # The examples judged, by where their values came from (see _strategies.SOURCES).
    sources: dict[str, int] = field(default_factory=dict)
    # The time spent on this check: its share of each call it judged, its shrinking.
    seconds: float = 0.0


def any_severe(violations: tuple[Finding, ...]) -> bool:
    """Whether a finding fails a run whatever its settings (not only a warning)."""
    return any(violation.severe for violation in violations)


def charge(runs: list[Run], started: float) -> None:
    """Share the time since ``started`` (time.perf_counter) among ``runs``."""
    share = (time.perf_counter() - started) / len(runs)
    for run in runs:
        run.seconds += share
