"""Outcomes of a certification and the text a person reads when a check fails."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from axm_conformance._checks import CHECKS
from axm_conformance._observation import SubjectInfo
from axm_conformance._settings import Settings

__all__ = [
    "Outcome",
    "Report",
    "ToolReport",
    "Verdict",
    "format_failure",
    "reproduction",
    "verdict",
]

Status = Literal["passed", "failed", "skipped", "warning", "inconclusive"]

# The command-line spelling of each setting that changes what a run finds.
_OPTIONS = {
    "examples": "--axm-examples",
    "timeout": "--axm-timeout",
    "tool_budget": "--axm-tool-budget",
    "worker_user": "--axm-worker-user",
    "worker_files": "--axm-worker-files",
    "allow_root": "--axm-allow-root",
    "protocol": "--axm-protocol",
    "name_pattern": "--axm-name-pattern",
    "max_result_bytes": "--axm-max-result-bytes",
    "memory_limit": "--axm-memory-limit",
}

# How each protocol calls a tool, as a person would type it.
_CALLS = {
    "axm": "tool.execute(**{input})",
    "axio": "asyncio.run(tool(**{input}))",
    "tool_use": "tool.handler({input})",
    "amplifier": "asyncio.run(tool.execute({input}))",
}
_INDENT = "    "


@dataclass(frozen=True)
class Outcome:
    """What one check concluded about one tool.

    ``messages`` are the violations (failed, or warning: found, but only a warning unless the
    run is strict) or the reason (skipped, or inconclusive: the calls never reached what the
    check judges, and which errors they ended in). Per-call checks also give
    the number of ``examples`` (calls) they judged, and, when they failed, the minimal ``input``
    that shows the failure, what kind of input it was, and the tool's own traceback.
    """

    check_id: str
    title: str
    status: Status
    messages: tuple[str, ...] = ()
    examples: int | None = None
    input: Any = None
    has_input: bool = False
    input_label: str = ""
    traceback: str = ""
    duration: float = 0.0
    # Statistics of the inputs behind a per-call check: how many generated inputs the valid-input
    # strategy threw away as invalid, how many invalid inputs the tool was given, which schema
    # keywords the judged inputs exercised, and how many of the examples came from each source
    # (boundary, worker-file, source-literal, schema-example, generated: see the contract).
    discarded: int = 0
    invalid_inputs: int = 0
    keywords: tuple[str, ...] = ()
    sources: tuple[tuple[str, int], ...] = ()
    # Whether the failing call can be made by hand (not so for a probe of a modified copy).
    callable_by_hand: bool = True

    @property
    def not_run(self) -> bool:
        """A skip of an applicable check that could not run (as opposed to one not applying)."""
        return self.status == "skipped" and any(m.startswith("not run") for m in self.messages)


@dataclass(frozen=True)
class Verdict:
    """A tool's verdict, and the checks its run left out.

    ``failed`` when a check failed; ``inconclusive`` when none failed but one judged nothing or
    could not run; ``certified`` otherwise. Certified means it only when every check ran: a
    partial run (``-k``, ``--lf``, ``--axm-check``, deselection) is never certified.
    """

    verdict: Literal["certified", "failed", "inconclusive"]
    not_run: tuple[str, ...]

    @property
    def partial(self) -> bool:
        return bool(self.not_run)

    @property
    def certified(self) -> bool:
        return self.verdict == "certified" and not self.partial


def verdict(outcomes: Iterable[tuple[str, str, bool]]) -> Verdict:
    """The verdict from each check's (id, status, whether it could not run): the one place it
    is decided, for a report in process and for a certificate assembled from records."""
    ran: dict[str, tuple[str, bool]] = {check_id: (s, n) for check_id, s, n in outcomes}
    statuses = [status for status, _ in ran.values()]
    unsettled = any(status == "inconclusive" or not_run for status, not_run in ran.values())
    return Verdict(
        verdict="failed" if "failed" in statuses else "inconclusive" if unsettled else "certified",
        not_run=tuple(check_id for check_id in CHECKS if check_id not in ran),
    )


@dataclass(frozen=True)
class ToolReport:
    """Every outcome for one tool, and the seed its inputs were generated from."""

    subject: SubjectInfo
    key: str
    outcomes: tuple[Outcome, ...]
    seed: int

    @property
    def verdict(self) -> Verdict:
        return verdict((o.check_id, o.status, o.not_run) for o in self.outcomes)

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
        return tuple(outcome for outcome in self.outcomes if outcome.status == "failed")


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

    def certificate(self) -> dict[str, Any]:
        """The JSON certificate of this report (see ``certificate.schema.json``)."""
        from axm_conformance._certificate import certificate, item_record

        records = [
            item_record(tool, outcome, self.settings)
            for tool in self.tools
            for outcome in tool.outcomes
        ]
        return certificate(records, self.settings, self.seed)


def reproduction(tool: ToolReport, outcome: Outcome, settings: Settings) -> list[str]:
    """A pytest command that re-runs exactly this check, then Python that makes the same call."""
    options = ["pytest", "--axm-conformance", f"--axm-tool={tool.subject.ref}"]
    options.append(f"--axm-check={outcome.check_id}")
    options.append(f"--axm-seed={tool.seed}")
    for name, value in settings.non_defaults().items():
        if name in _OPTIONS:
            options.append(_OPTIONS[name] if value is True else f"{_OPTIONS[name]}={value}")
    lines = [_INDENT + shlex.join(options)]
    call = _CALLS.get(tool.subject.protocol)
    if outcome.has_input and call and outcome.callable_by_hand:
        statement = call.format(input=repr(outcome.input))
        snippet = ["import asyncio"] if statement.startswith("asyncio.") else []
        snippet += [
            "from axm_conformance import load_tool",
            f"tool = load_tool({tool.subject.ref!r})",
            statement,
        ]
        lines.append("or in Python:")
        lines.extend(_INDENT + line for line in snippet)
    return lines


def format_failure(tool: ToolReport, outcome: Outcome, settings: Settings) -> str:
    """The full account of a failed check: what, on which input, and how to reproduce it."""
    subject = tool.subject
    lines = [
        f"{outcome.check_id}: {outcome.title}",
        f"  tool:     {subject.name!r} ({subject.protocol}) from {subject.ref}",
    ]
    if outcome.has_input:
        shown = json.dumps(outcome.input, ensure_ascii=False, sort_keys=True)
        if len(shown) > 2000:
            shown = shown[:2000] + f"... ({len(shown):,} characters)"
        lines.append(f"  input:    {shown}")
        if outcome.input_label:
            lines.append(f"            ({outcome.input_label})")
    lines.append("  what happened:")
    lines.extend(f"    - {message}" for message in outcome.messages)
    if outcome.traceback:
        lines.append("  from the tool's process:")
        lines.extend("    " + line for line in outcome.traceback.rstrip().splitlines())
    lines.append("Reproduce with:")
    lines.extend(reproduction(tool, outcome, settings))
    return "\n".join(lines)
