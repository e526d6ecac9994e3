"""Outcomes of a certification: of one check, of one tool, and of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from axm_conformance._checks import checks_for
from axm_conformance._observation import SubjectInfo
from axm_conformance._outcomes import Evidence, Finding, Status, Verdict, verdict
from axm_conformance._settings import Settings

__all__ = ["Outcome", "Report", "ToolReport"]


@dataclass(frozen=True)
class Outcome:
    """What one check concluded about one tool.

    ``findings`` are the violations (failed, or warning: found, but only a warning unless the
    run is strict), the notes of a check that passed, or the reason it was skipped, did not run,
    or was inconclusive (the calls never reached what the check judges, and which errors they
    ended in). Per-call checks also give the number of ``examples`` (calls) they judged, and,
    when they found something, the ``evidence``: the minimal input that shows it, what kind of
    input it was, and the tool's own traceback.
    """

    check_id: str
    title: str
    status: Status
    findings: tuple[Finding, ...] = ()
    examples: int | None = None
    evidence: Evidence | None = None
    duration: float = 0.0
    # Statistics of the inputs behind a per-call check: how many generated inputs the valid-input
    # strategy threw away as invalid, how many invalid inputs the tool was given, which schema
    # keywords the judged inputs exercised, and how many of the examples came from each source
    # (boundary, worker-file, source-literal, description, schema-example, generated: see the
    # contract).
    discarded: int = 0
    invalid_inputs: int = 0
    keywords: tuple[str, ...] = ()
    sources: tuple[tuple[str, int], ...] = ()

    @property
    def messages(self) -> tuple[str, ...]:
        return tuple(finding.text for finding in self.findings)

    @property
    def not_run(self) -> bool:
        """An applicable check that could not run (as opposed to one not applying)."""
        return self.status is Status.NOT_RUN

    @property
    def has_input(self) -> bool:
        return self.evidence is not None

    @property
    def input(self) -> Any:
        return None if self.evidence is None else self.evidence.input

    @property
    def input_label(self) -> str:
        return "" if self.evidence is None else self.evidence.label

    @property
    def before(self) -> tuple[tuple[str, str, Any], ...]:
        """The calls of other tools made before the input's, in order: (reference, name,
        input) each."""
        return () if self.evidence is None else self.evidence.before


@dataclass(frozen=True)
class ToolReport:
    """Every outcome for one tool, the seed its inputs were generated from, and what became of
    its valid calls: how many were made, served, refused and errored (empty when no per-call
    check ran); and the other tools of its home that were explored with it (see the engine's
    _stateful), which a reproduction of a failure found after them certifies with it."""

    subject: SubjectInfo
    key: str
    outcomes: tuple[Outcome, ...]
    seed: int
    calls: dict[str, int | float] = field(default_factory=dict)
    together: tuple[str, ...] = ()

    @property
    def verdict(self) -> Verdict:
        registered = [check.id for check in checks_for(self.subject.kind)]
        return verdict(((o.check_id, o.status) for o in self.outcomes), registered)

    @property
    def certified(self) -> bool:
        return self.verdict.certified

    def outcome(self, check_id: str) -> Outcome:
        for outcome in self.outcomes:
            if outcome.check_id == check_id:
                return outcome
        raise KeyError(check_id)

    @property
    def failed(self) -> tuple[Outcome, ...]:
        return tuple(outcome for outcome in self.outcomes if outcome.status is Status.FAILED)


@dataclass(frozen=True)
class Report:
    """A certification of one or more tools."""

    tools: tuple[ToolReport, ...]
    settings: Settings
    # The run's seed; None when each tool's was derived from its key and input schema.
    seed: int | None = None

    @property
    def certified(self) -> bool:
        return all(tool.certified for tool in self.tools)
