"""What a run leaves behind: the JSON certificate, its Markdown summary, and the baseline file.

A certificate is assembled from one record per (tool, check). Records are plain, versioned JSON,
so the same assembly serves a single process, ``check_tool`` and a pytest-xdist run (where each
item's record travels back to the controller on its test report).
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from axm_conformance._checks import checks_for
from axm_conformance._failure import format_failure
from axm_conformance._jsonable import canonical_json, jsonable
from axm_conformance._outcomes import Finding, Severity, Status, failing, verdict, writable
from axm_conformance._version import __version__
from axm_conformance.errors import AxmConformanceError

if TYPE_CHECKING:
    from axm_conformance._report import Outcome, ToolReport
    from axm_conformance._settings import Settings

__all__ = [
    "SCHEMA_PATH",
    "BaselineError",
    "KnownFailure",
    "baseline_of",
    "call_terms",
    "calls_said",
    "certificate",
    "item_record",
    "read_baseline",
    "spoken",
    "summary_markdown",
    "unloadable_record",
    "verdict_line",
    "write_json",
]

SCHEMA_PATH = Path(__file__).parent / "data" / "certificate.schema.json"
FORMAT = "axm-conformance certificate 3"
# The version of one (tool, check) record; a record of another version is not assembled.
RECORD_VERSION = 5


class RecordError(AxmConformanceError, ValueError):
    """A record this version of the kit cannot read (from a worker running another version)."""


def _schema_digest(schema: Any) -> str | None:
    if schema is None:
        return None
    return hashlib.sha256(canonical_json(schema).encode()).hexdigest()


# Outcomes whose first message is the reason the check judged nothing.


def unloadable_record(ref: str, error: str) -> dict[str, Any]:
    """The record of a published tool that cannot be loaded, and why."""
    return {"version": RECORD_VERSION, "unloadable": {"ref": ref, "error": error}}


def finding_record(finding: Finding) -> dict[str, Any]:
    """One finding as plain JSON: its sentence, severity, kind, place and facts."""
    return {
        "text": finding.text,
        "severity": finding.severity.value,
        "kind": finding.kind,
        "at": finding.at,
        "data": jsonable(dict(finding.data))[0],
    }


def item_record(tool: ToolReport, outcome: Outcome, settings: Settings) -> dict[str, Any]:
    """The record of one check of one tool, as plain JSON."""
    subject = tool.subject
    messages = list(outcome.messages)
    failure = None
    if outcome.status.failing or outcome.status is Status.WARNING:
        failure = {
            "summary": messages[0] if messages else "",
            "input": outcome.input if outcome.has_input else None,
            "input_label": outcome.input_label,
            "before": [
                {"tool": ref, "name": name, "input": value} for ref, name, value in outcome.before
            ],
            "report": format_failure(tool, outcome, settings),
        }
    distribution = subject.distribution
    return {
        "version": RECORD_VERSION,
        "tool": {
            "key": tool.key,
            "ref": subject.ref,
            "name": subject.name,
            "protocol": subject.protocol,
            "protocol_version": subject.protocol_version or None,
            "kind": subject.kind,
            "distribution": (
                {"name": distribution[0], "version": distribution[1]} if distribution else None
            ),
            "input_schema_sha256": _schema_digest(subject.input_schema),
            "seed": tool.seed,
            "calls": dict(tool.calls) or None,
        },
        "check": {
            "id": outcome.check_id,
            "title": outcome.title,
            "outcome": outcome.status.value,
            "reason": messages[0] if outcome.status.unjudged else None,
            "notes": messages if outcome.status is Status.PASSED else [],
            "examples": outcome.examples,
            "invalid_inputs": outcome.invalid_inputs,
            "discarded": outcome.discarded,
            "keywords": list(outcome.keywords),
            "sources": dict(outcome.sources),
            "duration": round(outcome.duration, 6),
            # Each finding as typed data, whatever the outcome: what fails and what only warns,
            # why a check judged nothing, what kind it is, where, and its facts.
            "findings": [finding_record(finding) for finding in outcome.findings],
            "failure": failure,
        },
    }


def certificate(
    records: Iterable[dict[str, Any]], settings: Settings, seed: int | None
) -> dict[str, Any]:
    """The certificate of a run from its records (in any order, duplicates merged).

    A check of the registry with no record did not run (``-k``, ``--lf``, ``--axm-check``,
    deselection, a run stopped early): the tool's run is partial, and it is not certified.
    """
    tools: dict[str, dict[str, Any]] = {}
    unloadable: dict[str, dict[str, str]] = {}
    for record in records:
        if record.get("version") != RECORD_VERSION:
            raise RecordError(
                f"a record of version {record.get('version')!r}, not {RECORD_VERSION}: every "
                "process of a run must use the same version of axm-conformance"
            )
        if "unloadable" in record:
            unloadable[record["unloadable"]["ref"]] = record["unloadable"]
            continue
        tool = tools.setdefault(record["tool"]["key"], {**record["tool"], "checks": {}})
        tool["checks"][record["check"]["id"]] = record["check"]
    listed = []
    for key in sorted(tools):
        tool = tools[key]
        checks = sorted(tool.pop("checks").values(), key=lambda check: check["id"])
        registered = [check.id for check in checks_for(tool.get("kind", "tool"))]
        judged = verdict(((check["id"], check["outcome"]) for check in checks), registered)
        tool["verdict"] = judged.verdict
        tool["certified"] = judged.certified
        tool["partial"] = judged.partial
        tool["checks_not_run"] = list(judged.not_run)
        tool["checks"] = checks
        listed.append(tool)
    chosen = asdict(settings)
    chosen.pop("sys_path")
    chosen["seed"] = seed
    return {
        "format": FORMAT,
        "kit": {"name": "axm-conformance", "version": __version__},
        "python": platform.python_version(),
        "platform": platform.platform(),
        "seed": seed,
        "settings": json.loads(json.dumps(chosen)),
        "tools": listed,
        "unloadable": [unloadable[ref] for ref in sorted(unloadable)],
        "summary": {
            "tools": len(listed),
            "unloadable": len(unloadable),
            "certified": sum(tool["certified"] for tool in listed),
            "failed": sum(tool["verdict"] == "failed" for tool in listed),
            "inconclusive": sum(tool["verdict"] == "inconclusive" for tool in listed),
            "partial": sum(tool["partial"] for tool in listed),
            "failed_checks": sum(
                Status(check["outcome"]).failing for tool in listed for check in tool["checks"]
            ),
            "warnings": sum(
                check["outcome"] == "warning" for tool in listed for check in tool["checks"]
            ),
        },
    }


def spoken(tool: dict[str, Any]) -> str:
    """A tool's protocol as the summaries name it: with the version it was spoken to in, where
    the protocol has several (``mcp 2025-06-18``)."""
    version = tool.get("protocol_version")
    return f"{tool['protocol']} {version}" if version else str(tool["protocol"])


def verdict_line(tool: dict[str, Any]) -> str:
    """A tool's verdict as the summaries say it, with how much of its run was partial."""
    if tool["certified"]:
        return "certified"
    why = [] if tool["verdict"] == "certified" else [tool["verdict"]]
    if tool["partial"]:
        ran = len(tool["checks"])
        why.append(f"partial: {ran} of {ran + len(tool['checks_not_run'])} checks")
    return f"NOT certified ({'; '.join(why)})"


def calls_said(calls: dict[str, int | float] | None) -> str:
    """What became of a tool's valid calls, as its summary line says it ("" when none were
    made)."""
    if not calls:
        return ""
    made = ", ".join(f"{calls[kind]} {kind}" for kind in ("served", "refused", "errored"))
    paced = (
        f"; rate-limited: backed off {calls['backoffs']} times, {calls['paused']:g} s"
        if calls.get("backoffs")
        else ""
    )
    unblamed = "".join(
        f"; {calls[kind]} {'failure' if calls[kind] == 1 else 'failures'} {said}"
        for kind, said in _UNBLAMED.items()
        if calls.get(kind)
    )
    return f"; {calls['valid']} valid calls: {made}{paced}{unblamed}"


# How the summary line counts the failures the tool was not blamed for.
_UNBLAMED = {"flaky": "flaky", "not_judged": "not judged"}

# What each count of a summary line means (by its key in a tool's calls).
_CALL_TERMS = {
    "served": "a valid call answered with a success the checks judged",
    "refused": "a valid call answered with the tool's own error (a failed result, an error in "
    "disguise, a refusal raised on purpose): a defect only where a check says so",
    "errored": "a valid call that crashed, hung or got an error response",
    "flaky": "a failure that did not happen again, alone or after the calls before it: noted "
    "in its check, never failed",
    "not_judged": "a failure after a call that left the tool unable to serve what it serves "
    "afresh: blamed on that call (state-stays-usable), noted in its check",
}


def call_terms(tools: list[dict[str, Any]]) -> list[str]:
    """What the counts the tools' summary lines give mean, one line each, for those that some
    tool's line counts more than none of."""
    counted = {kind for tool in tools for kind, count in (tool.get("calls") or {}).items() if count}
    width = max(len(_UNBLAMED.get(kind, kind)) for kind in _CALL_TERMS)
    return [
        f"  {_UNBLAMED.get(kind, kind) + ':':<{width + 1}} {meaning}"
        for kind, meaning in _CALL_TERMS.items()
        if kind in counted
    ]


def summary_markdown(document: dict[str, Any]) -> str:
    """A Markdown table, one row per tool: its verdict and the checks that kept it from being
    certified, with their reasons."""
    summary = document["summary"]
    seed = document["seed"]
    lines = [
        "## axm-conformance",
        "",
        f"{summary['certified']} of {summary['tools']} tools certified, "
        + (f"seed {seed}" if seed is not None else "seeds derived per tool")
        + f", axm-conformance {document['kit']['version']}.",
        "",
        "| tool | protocol | verdict | valid calls served | findings |",
        "| --- | --- | --- | --- | --- |",
    ]
    for tool in document["tools"]:
        findings = [
            f"`{check['id']}`"
            + (f" ({check['outcome']})" if check["outcome"] != Status.FAILED else "")
            + f": {_cell(check['failure']['summary'] if check['failure'] else check['reason'])}"
            for check in tool["checks"]
            if Status(check["outcome"]).failing or Status(check["outcome"]).unsettled
        ]
        verdict = verdict_line(tool)
        if not tool["certified"]:
            verdict = f"**{verdict}**"
        calls = tool.get("calls")
        served = f"{calls['served']} of {calls['valid']}" if calls else ""
        lines.append(
            f"| `{_cell(tool['key'])}` | {spoken(tool)} | {verdict} | {served} | "
            + ("<br>".join(findings) or "none")
            + " |"
        )
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def write_json(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = writable(json.dumps(document, indent=2, ensure_ascii=False))
    path.write_text(text + "\n", encoding="utf-8")


class BaselineError(AxmConformanceError, ValueError):
    """A baseline file that cannot be read; the message says why."""


@dataclass(frozen=True)
class KnownFailure:
    """A failure a baseline knows, and why. With ``kind``, only a failure with a failing finding
    of that kind is this one; with ``finding``, only one with a failing finding whose sentence
    contains that text (for a check that tells its findings apart by no kind); with both, one
    finding must have both. A failure of the check otherwise is a new failure."""

    reason: str
    finding: str = ""
    kind: str = ""

    @property
    def wanted(self) -> str:
        """The finding it knows, as a sentence says it."""
        parts = [f"of kind {self.kind!r}" if self.kind else ""]
        parts.append(f"containing {self.finding!r}" if self.finding else "")
        return "a finding " + " and ".join(part for part in parts if part)

    def is_among(self, findings: Iterable[Finding]) -> bool:
        """Whether a failure with these findings is the one known."""
        return any(
            (not self.kind or found.kind == self.kind) and self.finding in found.text
            for found in failing(findings)
        )


def read_baseline(path: Path) -> dict[tuple[str, str], KnownFailure]:
    """Known failures from a baseline file: (tool key, check id) -> the failure known."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from None
    entries = document.get("known_failures") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise BaselineError(f"{path} has no 'known_failures' list")
    known: dict[tuple[str, str], KnownFailure] = {}
    for entry in entries:
        if not (
            isinstance(entry, dict)
            and all(isinstance(entry.get(key), str) for key in ("tool", "check", "reason"))
            and all(isinstance(entry.get(key, ""), str) for key in ("finding", "kind"))
        ):
            raise BaselineError(
                f"{path}: {entry!r} is not {{tool, check, reason[, kind][, finding]}}"
            )
        known[entry["tool"], entry["check"]] = KnownFailure(
            entry["reason"], entry.get("finding", ""), entry.get("kind", "")
        )
    return known


def baseline_of(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A baseline listing every failed check of these records, its summary as the reason and,
    where the findings that failed it are all of one kind, that kind: the failure known, not
    the check (a check failed by findings of several kinds is known as a whole, so that fixing
    one of them is never a new failure)."""
    failures = sorted(
        (
            (record["tool"]["key"], record["check"]["id"], record["check"])
            for record in records
            if "check" in record and Status(record["check"]["outcome"]).failing
        ),
        key=lambda failure: failure[:2],
    )
    return {"known_failures": [_known(tool, check, found) for tool, check, found in failures]}


def _known(tool: str, check_id: str, check: dict[str, Any]) -> dict[str, str]:
    entry = {"tool": tool, "check": check_id, "reason": check["failure"]["summary"]}
    findings = [
        Finding(found["text"], Severity(found["severity"]), kind=found["kind"])
        for found in check["findings"]
    ]
    kinds = {found.kind for found in failing(findings)}
    return entry | ({"kind": kinds.pop()} if len(kinds) == 1 and "" not in kinds else {})
