"""The text a person reads when a check fails: what, on which input, and how to reproduce it."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

from axm_conformance._options import option_arguments
from axm_conformance.protocols import protocol_named

if TYPE_CHECKING:
    from axm_conformance._report import Outcome, ToolReport
    from axm_conformance._settings import Settings

__all__ = ["elided", "format_failure", "reproduction"]

_INDENT = "    "
# A line of a report longer than this shows its start and its end: the report stays readable,
# and the certificate and the reproduction keep the whole value.
_LONGEST = 1000


def elided(text: str, limit: int = _LONGEST) -> str:
    """``text`` with its middle left out when it is longer than ``limit``, saying how much."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]} ... ({len(text) - head - tail:,} characters left out) ... {text[-tail:]}"


def reproduction(tool: ToolReport, outcome: Outcome, settings: Settings) -> list[str]:
    """A pytest command that re-runs exactly this check, then Python that makes the same call."""
    options = ["pytest", "--axm-conformance", f"--axm-tool={tool.subject.ref}"]
    options.append(f"--axm-check={outcome.check_id}")
    options.append(f"--axm-seed={tool.seed}")
    options += option_arguments(settings)
    lines = [_INDENT + shlex.join(options)]
    call = protocol_named(tool.subject.protocol).call_snippet
    evidence = outcome.evidence
    if evidence is not None and call and evidence.callable_by_hand:
        # Printed, so that the snippet shows the result when pasted into a script.
        statement = f"print({call.format(input=repr(evidence.input))})"
        snippet = ["import asyncio"] if "asyncio." in call else []
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
        lines.append(f"  input:    {elided(shown)}")
        if outcome.input_label:
            lines.append(f"            ({outcome.input_label})")
    lines.append("  what happened:")
    lines.extend(f"    - {elided(message)}" for message in outcome.messages)
    hint = protocol_named(subject.protocol).hints.get(outcome.check_id)
    if hint:
        lines.append(f"  hint:     {hint}")
    if outcome.evidence is not None and outcome.evidence.traceback:
        lines.append("  from the tool's process:")
        traceback = outcome.evidence.traceback.rstrip().splitlines()
        lines.extend("    " + elided(line) for line in traceback)
    lines.append("Reproduce with:")
    lines.extend(reproduction(tool, outcome, settings))
    return "\n".join(lines)
