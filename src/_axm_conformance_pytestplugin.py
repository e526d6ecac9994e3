"""pytest entry point of axm-conformance.

Kept outside the package, like Hypothesis' plugin, so that pytest can load it without importing
the kit: it only declares options. Nothing else is imported unless ``--axm-conformance`` (or the
``axm_conformance`` ini setting) turns the kit on.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FLAGS", "OPTIONS", "pytest_addoption", "pytest_configure"]

CONFORMANCE_OPTION = "--axm-conformance"
CONFORMANCE_HELP = "Certify LLM-agent tools: one test item per (tool, check)."

# (option, ini name, help, argparse keywords): each help text is shared by the option and its ini
# twin, so the two cannot drift apart.
OPTIONS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    (
        "--axm-tool",
        "axm_tools",
        "A tool to certify: module:attr (a tool, a class, an async def handler, a ToolEntry, "
        "a @tool function, or a list/dict of them) or entry-point:GROUP[:NAME]. Repeatable. "
        "Default: the tools the project under test publishes as entry points.",
        {"action": "append", "metavar": "REF"},
    ),
    (
        "--axm-validator",
        "axm_validators",
        "A JSON Schema validator to certify: module:func taking (data, schema) and returning a "
        "ValidationResult, a bool or a list of errors. Repeatable. One item per (keyword, suite) "
        "and (keyword, differential).",
        {"action": "append", "metavar": "REF"},
    ),
    (
        "--axm-validator-keywords",
        "axm_validator_keywords",
        "The keywords the validators claim: all (default), a comma-separated list, or "
        "module:attr naming a collection.",
        {"metavar": "KEYWORDS"},
    ),
    (
        "--axm-protocol",
        "axm_protocol",
        "The protocol to certify against: auto (detect), axm, axio, tool_use or amplifier. "
        "Default: auto.",
        {"metavar": "NAME"},
    ),
    (
        "--axm-examples",
        "axm_examples",
        "Generated inputs per tool, on top of the boundary examples. Default: 100.",
        {"metavar": "N"},
    ),
    (
        "--axm-timeout",
        "axm_timeout",
        "Seconds one call of a tool may take before it counts as hung. Default: 5.",
        {"metavar": "SECONDS"},
    ),
    (
        "--axm-seed",
        "axm_seed",
        "Seed for input generation, to reproduce a run; 'last' reuses the previous run's. "
        "Default: --hypothesis-seed if given, else a fresh random seed, printed in the header.",
        {"metavar": "SEED"},
    ),
    (
        "--axm-check",
        "axm_checks",
        "Run only this check id (repeatable). Default: every check.",
        {"action": "append", "metavar": "ID"},
    ),
    (
        "--axm-tool-budget",
        "axm_tool_budget",
        "Seconds one tool may take over all its checks; checks still running when it runs out "
        "fail as not run. Default: 600.",
        {"metavar": "SECONDS"},
    ),
    (
        "--axm-worker-user",
        "axm_worker_user",
        "Run tool code as this unprivileged user (when pytest runs as root), in its throw-away "
        "directory: for tools that run commands or write files.",
        {"metavar": "USER"},
    ),
    (
        "--axm-worker-files",
        "axm_worker_files",
        "Copy the contents of this directory into each tool's throw-away working directory "
        "before its worker starts (owned by --axm-worker-user when given): files the tool "
        "reads or edits.",
        {"metavar": "DIR"},
    ),
    (
        "--axm-report",
        "axm_report",
        "Write the JSON certificate of the run to this path.",
        {"metavar": "PATH"},
    ),
    (
        "--axm-summary",
        "axm_summary",
        "Write a Markdown summary (one row per tool) to this path; it is also appended to "
        "$GITHUB_STEP_SUMMARY when that is set.",
        {"metavar": "PATH"},
    ),
    (
        "--axm-baseline",
        "axm_baseline",
        "Known failures (JSON from --axm-baseline-write): they show as xfail with their reason; "
        "one that now passes fails the run as stale.",
        {"metavar": "PATH"},
    ),
    (
        "--axm-baseline-write",
        "axm_baseline_write",
        "Write the run's failures to this path as a baseline file.",
        {"metavar": "PATH"},
    ),
    (
        "--axm-name-pattern",
        "axm_name_pattern",
        "Regular expression every tool name must match. Default: ^[A-Za-z0-9_-]{1,64}$ "
        "(accepted by every major client).",
        {"metavar": "REGEX"},
    ),
    (
        "--axm-max-result-bytes",
        "axm_max_result_bytes",
        "Largest serialised result a tool may return, in bytes. Default: 1048576 (1 MiB).",
        {"metavar": "BYTES"},
    ),
    (
        "--axm-memory-limit",
        "axm_memory_limit",
        "Address-space limit of the process a tool runs in, in bytes; 0 for none. "
        "Default: 2147483648 (2 GiB).",
        {"metavar": "BYTES"},
    ),
)
_LIST_INIS = {"axm_tools", "axm_checks", "axm_validators"}
# On/off settings: (option, ini name, help). Each is off unless the option or the ini says so.
FLAGS: tuple[tuple[str, str, str], ...] = (
    (
        "--axm-strict",
        "axm_strict",
        "Turn every warning into a failure: findings the protocol's runtime absorbs fail the "
        "tool too.",
    ),
    (
        "--axm-require-certified",
        "axm_require_certified",
        "Fail the run (exit status 1) unless every tool is certified: an inconclusive tool, or a "
        "partial run (-k, --lf, --axm-check), then fails the gate too.",
    ),
    (
        "--axm-stats",
        "axm_stats",
        "Print, per check, the examples run, inputs discarded and schema keywords exercised.",
    ),
    (
        "--axm-allow-root",
        "axm_allow_root",
        "Call tools that declare write or execute access even as root without "
        "--axm-worker-user (by default their calls are not made, and they are not certified).",
    ),
)
NONDETERMINISTIC_HELP = (
    "Tools exempt from the determinism check, one 'TOOL NAME: reason' per line; the reason is "
    "shown where the check would have run."
)


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("axm-conformance", "axm-conformance: certify LLM-agent tools")
    group.addoption(
        CONFORMANCE_OPTION,
        action="store_true",
        default=None,
        dest="axm_conformance",
        help=CONFORMANCE_HELP,
    )
    parser.addini("axm_conformance", CONFORMANCE_HELP, type="bool", default=False)
    for option, ini, help_text, keywords in OPTIONS:
        group.addoption(option, dest=ini, default=None, help=help_text, **keywords)
        parser.addini(ini, help_text, type="linelist" if ini in _LIST_INIS else "string")
    for option, ini, help_text in FLAGS:
        group.addoption(option, action="store_true", default=None, dest=ini, help=help_text)
        parser.addini(ini, help_text, type="bool", default=False)
    parser.addini("axm_nondeterministic", NONDETERMINISTIC_HELP, type="linelist")


def pytest_configure(config: Any) -> None:
    enabled = config.getoption("axm_conformance")
    if enabled is None:
        enabled = config.getini("axm_conformance")
    if not enabled:
        return
    from axm_conformance._pytest import register

    register(config)
