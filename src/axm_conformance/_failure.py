"""The text a person reads when a check fails: what, on which input, and how to reproduce it."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from axm_conformance._checks import CHECKS
from axm_conformance._options import OPTIONS
from axm_conformance._process._containment import contained

if TYPE_CHECKING:
    from axm_conformance._report import Outcome, ToolReport
    from axm_conformance._settings import Settings

__all__ = ["elided", "format_failure", "reproduction", "stderr_tail"]

_INDENT = "    "
# A line of a report longer than this shows its start and its end: the report stays readable,
# and the certificate and the reproduction keep the whole value.
_LONGEST = 1000
# What a process wrote to stderr shows its last lines, as many as fit in both of these: its last
# words come at the end, and what came before is most often more of the same.
_TAIL_LINES = 12
_TAIL_BYTES = 2 * _LONGEST
# How a Python process reports its own death: kept whole, up to these bounds.
_REPORTS = ("Traceback (most recent call last):", "Fatal Python error:")
_REPORT_LINES = 60
_REPORT_BYTES = 8 * _LONGEST


def elided(text: str, limit: int = _LONGEST) -> str:
    """``text`` with its middle left out when it is longer than ``limit``, saying how much."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]} ... ({len(text) - head - tail:,} characters left out) ... {text[-tail:]}"


def stderr_tail(text: str) -> str:
    """The end of what a process wrote to stderr: its last lines, at most ``_TAIL_LINES`` of
    them in ``_TAIL_BYTES`` (at least the last one, whatever its length), after a line saying
    what was left out before them. The process's last report of its own death (a Python
    traceback, or a fatal error's stacks, whose innermost frame comes first) is kept whole when
    it fits in ``_REPORT_LINES`` and ``_REPORT_BYTES``."""
    lines = text.rstrip().splitlines()
    kept = _fitting(lines, _TAIL_LINES, _TAIL_BYTES)
    report = next(
        (len(lines) - at for at in range(len(lines) - 1, -1, -1) if lines[at].startswith(_REPORTS)),
        0,
    )
    if kept < report <= _fitting(lines, _REPORT_LINES, _REPORT_BYTES):
        kept = report
    left = lines[: len(lines) - kept]
    if not left:
        return "\n".join(lines)
    count = f"{len(left)} earlier line{'s' if len(left) > 1 else ''}"
    dropped = sum(len(line.encode()) + 1 for line in left)
    shown = f"{dropped:,} bytes" if dropped < 1000 else f"{dropped / 1000:.1f} kB"
    return "\n".join([f"... {count} ({shown}) left out", *lines[-kept:]])


def _fitting(lines: list[str], most: int, size: int) -> int:
    """How many of the last ``lines`` fit in ``most`` lines and ``size`` bytes (at least one)."""
    kept, used = 0, 0
    for line in reversed(lines):
        used += len(line.encode()) + 1
        if kept and (kept == most or used > size):
            break
        kept += 1
    return kept


# What a call in the user's own process cannot give the tool as the run's worker did: another
# user, copies of the worker files, a server's added environment, and calls as root of a tool
# that writes files or runs commands (made in a throw-away directory, not the user's). A failure
# found with any of these is reproduced through the worker only.
_WORKER_ONLY = ("worker_user", "worker_files", "server_env", "allow_root")


def _reproduced(settings: Settings) -> dict[str, Any]:
    """The settings a reproduction repeats, by field, where they differ from the defaults: those
    whose option changes what a run finds (what the tool is given, the world it runs in, what
    is judged, and strictness, under which a warning is searched for and reported as a
    failure)."""
    changed = settings.non_defaults()
    return {
        option.setting: changed[option.setting]
        for option in OPTIONS
        if option.setting in changed and option.reproduces
    }


def reproduction(tool: ToolReport, outcome: Outcome, settings: Settings) -> list[str]:
    """A pytest command that re-runs exactly this check, then Python that does it again: the
    same call in this process when that is no less contained than the run was (but for the
    worker's time and memory limits, which a comment says are missing), else the same check
    through :func:`check_tool` and the kit's worker, with every setting the run had."""
    reproduced = _reproduced(settings)
    options = ["pytest", "--axm-conformance", f"--axm-tool={tool.subject.ref}"]
    evidence = outcome.evidence
    if evidence is not None and evidence.before:
        # The run's sequences are drawn among the same tools of its home.
        options += [f"--axm-tool={ref}" for ref in tool.together]
    # A check the others' failures reveal is found again only with them.
    check = CHECKS.get(outcome.check_id)
    alone = check is None or not check.revealed
    if alone:
        options.append(f"--axm-check={outcome.check_id}")
    options.append(f"--axm-seed={tool.seed}")
    options += [
        spelling
        for option in OPTIONS
        if option.setting in reproduced
        for spelling in option.spelled(reproduced[option.setting])
    ]
    lines = [_INDENT + shlex.join(options)]
    profile = tool.subject.profile
    if evidence is None or not profile.snippet("{}") or not evidence.callable_by_hand:
        return lines
    # The tools of a server called one after another share its session only in the kit's
    # worker: a load_tool each would start a server each.
    shared = bool(evidence.before) and not tool.subject.offers("in-process")
    if shared or any(name in reproduced for name in _WORKER_ONLY):
        refs = [tool.subject.ref, *(tool.together if evidence.before else ())]
        arguments = [repr(refs[0] if len(refs) == 1 else refs)]
        arguments += [f"checks={(outcome.check_id,)!r}"] if alone else []
        arguments.append(f"seed={tool.seed}")
        arguments += [f"{name}={value!r}" for name, value in reproduced.items()]
        worker = (
            ": it makes the calls before it on the same server"
            if shared
            else ", contained as the run was: a call in this process (load_tool) would not be"
        )
        snippet = [
            "from axm_conformance import check_tool",
            f"report = check_tool({', '.join(arguments)})",
            f"(found,) = [found for found in report.tools if found.key == {tool.key!r}]",
            f"outcome = found.outcome({outcome.check_id!r})",
            r"print(outcome.status, outcome.input, *outcome.messages, sep='\n')",
            f"# through the kit's worker{worker}",
        ]
    else:
        named = reproduced.get("protocol")
        chosen = f", protocol={named!r}" if named else ""
        imports = ["from axm_conformance import load_tool"]
        calls: list[str] = []
        # The tools of one module share its state in this process, as in the run's worker.
        for ref, value in [
            *((ref, value) for ref, _, value in evidence.before),
            (tool.subject.ref, evidence.input),
        ]:
            *before, last = profile.snippet(repr(value))
            imports += [line for line in before if line.startswith(("import ", "from "))]
            calls.append(f"tool = load_tool({ref!r}{chosen})")
            calls += [line for line in before if not line.startswith(("import ", "from "))]
            # Printed, so that the snippet shows the result when pasted into a script.
            calls.append(f"print({last})")
        uncontained = "outside the sandbox the run had, " if contained(settings) else ""
        snippet = [
            *sorted(dict.fromkeys(imports), key=lambda line: line.startswith("from ")),
            *calls,
            f"# uncontained, in this process: {uncontained}as you, in the current directory, "
            "with no timeout or memory limit; the pytest command runs it contained, as the run "
            "did",
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
    for number, (_, name, value) in enumerate(outcome.before, 1):
        shown = json.dumps(value, ensure_ascii=False, sort_keys=True)
        lead = "  after:   " if number == 1 else "           "
        lines.append(f"{lead} {number}. {elided(f'{name}({shown})')}")
    if outcome.has_input:
        shown = json.dumps(outcome.input, ensure_ascii=False, sort_keys=True)
        lines.append(f"  input:    {elided(shown)}")
        if outcome.input_label:
            lines.append(f"            ({outcome.input_label})")
    lines.append("  what happened:")
    lines.extend(f"    - {elided(message)}" for message in outcome.messages)
    hint = subject.profile.hints.get(outcome.check_id)
    if hint:
        lines.append(f"  hint:     {hint}")
    if outcome.evidence is not None and outcome.evidence.traceback:
        lines.append("  from the tool's process:")
        traceback = outcome.evidence.traceback.rstrip().splitlines()
        lines.extend("    " + elided(line) for line in traceback)
    lines.append("Reproduce with:")
    lines.extend(reproduction(tool, outcome, settings))
    return "\n".join(lines)
