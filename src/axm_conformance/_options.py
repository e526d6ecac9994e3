"""The kit's options: one table that the pytest plugin, the settings it reads and the reproduction
command all read, so that an option, its ini twin, its help text and its spelling in a command
cannot drift apart.

Importing this module imports nothing else of the kit: the pytest plugin reads it at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONFORMANCE",
    "LONG_LIVED_HELP",
    "NONDETERMINISTIC_HELP",
    "OPTIONS",
    "Option",
    "is_header",
    "parse_assignments",
]


@dataclass(frozen=True)
class Option:
    """One option and its ini twin.

    ``setting`` is the :class:`Settings` field it sets ("" when the plugin reads it itself),
    ``parse`` turns its text into the setting's value and ``expected`` says what the text must
    be. A ``switch`` is off unless the option or the ini says so; a ``repeatable`` option is
    given once per value (a line per value in the ini). ``reproduces``: it changes what a run
    finds, so a reproduction command repeats it.
    """

    flag: str
    ini: str
    help: str
    metavar: str = ""
    setting: str = ""
    parse: Callable[[Any], Any] = str  # the text, or the list of texts if repeatable
    expected: str = ""
    switch: bool = False
    repeatable: bool = False
    reproduces: bool = False
    path: bool = False  # a file or directory, relative to where it was given
    unparse: Callable[[Any], str] = str  # a value (an item, if repeatable) as its text

    def spelled(self, value: Any) -> list[str]:
        """The option with ``value``, as a command line gives it (once per item of a
        repeatable setting, each item rendered as ``unparse`` renders it)."""
        if self.switch:
            return [self.flag]
        if self.repeatable:
            return [f"{self.flag}={self.unparse(item)}" for item in value]
        # A memory limit of None (no limit) is given as 0.
        return [f"{self.flag}={0 if value is None else self.unparse(value)}"]


# An HTTP field's name is a token; its value visible ASCII, spaces and tabs (RFC 9110, 5.1, 5.5).
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")


def is_header(name: str, value: str) -> bool:
    """Whether (``name``, ``value``) can be sent as an HTTP header field."""
    return bool(_HEADER_NAME.fullmatch(name) and _HEADER_VALUE.fullmatch(value))


def parse_assignments(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` lines as (name, value) pairs; ValueError naming a line that is not one."""
    pairs = []
    for line in lines:
        name, equals, value = line.partition("=")
        if not equals or not name.strip() or not name.strip().isidentifier():
            raise ValueError(f"{line!r} is not NAME=VALUE")
        pairs.append((name.strip(), value))
    return tuple(pairs)


def parse_headers(lines: list[str]) -> tuple[tuple[str, str], ...]:
    """``NAME=VALUE`` lines as HTTP header fields; ValueError naming a line that is not one."""
    pairs = []
    for line in lines:
        name, equals, value = line.partition("=")
        if not equals or not is_header(name.strip(), value):
            raise ValueError(f"{line!r} is not NAME=VALUE with an HTTP header name")
        pairs.append((name.strip(), value))
    return tuple(pairs)


def parse_names(lines: list[str]) -> tuple[str, ...]:
    """Comma-separated names, one or more per line, as one tuple."""
    return tuple(name.strip() for line in lines for name in line.split(",") if name.strip())


CONFORMANCE = Option(
    "--axm-conformance",
    "axm_conformance",
    "Certify LLM-agent tools: one test item per (tool, check).",
    switch=True,
)

OPTIONS: tuple[Option, ...] = (
    Option(
        "--axm-tool",
        "axm_tools",
        "A tool to certify: module:attr (a tool, a class, an async def handler, a ToolEntry, "
        "a @tool function, or a list/dict of them), entry-point:GROUP[:NAME], mcp:COMMAND (an "
        "MCP server over stdio) or mcp-http:COMMAND (over Streamable HTTP, on the port given "
        "as {port}); REF[TOOL] picks one tool. Repeatable. "
        "Default: the tools the project under test publishes as entry points.",
        metavar="REF",
        repeatable=True,
    ),
    Option(
        "--axm-validator",
        "axm_validators",
        "A JSON Schema validator to certify: module:func taking (data, schema) and returning a "
        "ValidationResult, a bool or a list of errors. Repeatable. One item per (keyword, suite) "
        "and (keyword, differential).",
        metavar="REF",
        repeatable=True,
    ),
    Option(
        "--axm-validator-keywords",
        "axm_validator_keywords",
        "The keywords the validators claim: all (default), a comma-separated list, or "
        "module:attr naming a collection, or a draft's meta-schema URI (every keyword of "
        "that draft).",
        metavar="KEYWORDS",
    ),
    Option(
        "--axm-validator-draft",
        "axm_validator_draft",
        "The JSON Schema draft the validators implement: 4, 6, 7, 2019-09 or 2020-12. "
        "Default: the draft whose meta-schema --axm-validator-keywords names, else 2020-12.",
        metavar="DRAFT",
    ),
    Option(
        "--axm-protocol",
        "axm_protocol",
        "The protocol to certify against: auto (detect), or a registered protocol's name "
        "(axm, axio, tool_use, amplifier, and any a plugin registers). Default: auto.",
        metavar="NAME",
        setting="protocol",
        expected="a protocol name",
        reproduces=True,
    ),
    Option(
        "--axm-examples",
        "axm_examples",
        "Generated inputs per tool, on top of the boundary examples. Default: 100.",
        metavar="N",
        setting="examples",
        parse=int,
        expected="a whole number",
        reproduces=True,
    ),
    Option(
        "--axm-timeout",
        "axm_timeout",
        "Seconds one call of a tool may take before it counts as hung. Default: 5.",
        metavar="SECONDS",
        setting="timeout",
        parse=float,
        expected="a number of seconds",
        reproduces=True,
    ),
    Option(
        "--axm-seed",
        "axm_seed",
        "Seed for input generation, to reproduce a run; 'last' reuses the previous run's. "
        "Default: --hypothesis-seed if given, else a fresh random seed, printed in the header.",
        metavar="SEED",
    ),
    Option(
        "--axm-check",
        "axm_checks",
        "Run only this check id (repeatable). Default: every check.",
        metavar="ID",
        repeatable=True,
    ),
    Option(
        "--axm-tool-budget",
        "axm_tool_budget",
        "Seconds one tool may take over all its checks; checks still running when it runs out "
        "are not run, and the tool is inconclusive. Default: 600.",
        metavar="SECONDS",
        setting="tool_budget",
        parse=float,
        expected="a number of seconds",
        reproduces=True,
    ),
    Option(
        "--axm-pace",
        "axm_pace",
        "Seconds to wait between two calls of a tool at least: for a server whose rate limit "
        "is known (0.6 keeps under 100 calls a minute). Default: 0, and the kit backs off by "
        "itself when a server starts refusing after a burst of calls.",
        metavar="SECONDS",
        setting="pace",
        parse=float,
        expected="a number of seconds",
        reproduces=True,
    ),
    Option(
        "--axm-sandbox",
        "axm_sandbox",
        "Run every tool and server in a bubblewrap sandbox (a PID namespace, a read-only "
        "filesystem but its working and temporary directories, no network unless it needs "
        "one): auto (where one can be built), required (a usage error where it cannot), or "
        "off. Default: auto.",
        metavar="auto|required|off",
        setting="sandbox",
        expected="auto, required or off",
        reproduces=True,
    ),
    Option(
        "--axm-network",
        "axm_network",
        "A tool that reaches the network in its sandbox although it does not declare it needs "
        "one (openWorldHint not false, axio external access), or * for every tool. Repeatable "
        "(one per line in the ini).",
        metavar="TOOL",
        setting="network",
        parse=tuple,
        expected="a tool name",
        repeatable=True,
        reproduces=True,
    ),
    Option(
        "--axm-clients",
        "axm_clients",
        "LLM clients whose rules fail a tool that breaks them, comma-separated: openai, "
        "openai-strict, anthropic, anthropic-strict, gemini, gemini-parameters, mcp (otherwise "
        "warnings, and notes for the strict modes). Repeatable (one per line in the ini).",
        metavar="CLIENT[,CLIENT...]",
        setting="clients",
        parse=parse_names,
        expected="client names",
        repeatable=True,
        reproduces=True,
    ),
    Option(
        "--axm-worker-user",
        "axm_worker_user",
        "Run tool code as this unprivileged user (when pytest runs as root), in its throw-away "
        "directory: for tools that run commands or write files.",
        metavar="USER",
        setting="worker_user",
        expected="a user name",
        reproduces=True,
    ),
    Option(
        "--axm-worker-files",
        "axm_worker_files",
        "Copy the contents of this directory into each tool's throw-away working directory "
        "before its worker starts (owned by --axm-worker-user when given): files the tool "
        "reads or edits.",
        metavar="DIR",
        setting="worker_files",
        expected="a directory",
        reproduces=True,
        path=True,
    ),
    Option(
        "--axm-server-env",
        "axm_server_env",
        "NAME=VALUE: a variable the environment of a tool server (an MCP server) gets, which "
        "otherwise holds only PATH, LANG and the throw-away HOME. Repeatable (one per line in "
        "the ini).",
        metavar="NAME=VALUE",
        setting="server_env",
        parse=parse_assignments,
        expected="NAME=VALUE",
        repeatable=True,
        reproduces=True,
        unparse=lambda pair: f"{pair[0]}={pair[1]}",
    ),
    Option(
        "--axm-server-header",
        "axm_server_header",
        "NAME=VALUE: a header every HTTP request to an MCP server carries (mcp-http:, "
        "mcp+http://). Repeatable (one per line in the ini). A secret goes in the variable "
        "--axm-server-token-env names, never here.",
        metavar="NAME=VALUE",
        setting="server_headers",
        parse=parse_headers,
        expected="NAME=VALUE",
        repeatable=True,
        reproduces=True,
        unparse=lambda pair: f"{pair[0]}={pair[1]}",
    ),
    Option(
        "--axm-server-token-env",
        "axm_server_token_env",
        "The environment variable holding a bearer token for an MCP server over HTTP: every "
        "request carries it (Authorization: Bearer ...). Read where the run starts; the "
        "token is never on a command line, in a report or in a reproduction.",
        metavar="NAME",
        setting="server_token_env",
        expected="an environment variable's name",
        reproduces=True,
    ),
    Option(
        "--axm-http-path",
        "axm_http_path",
        "The path of the MCP endpoint of a server the kit starts over HTTP (mcp-http:): "
        "/mcp by default, as the SDKs serve it; /sse for a server of the deprecated HTTP+SSE "
        "transport that serves its stream there.",
        metavar="PATH",
        setting="http_path",
        expected="a path that starts with '/'",
        reproduces=True,
    ),
    Option(
        "--axm-auth",
        "axm_auth",
        "How a server the kit starts over HTTP (mcp-http:) is authorized: off (default), or "
        "local: the kit runs an OAuth authorization server for it on the sandbox's loopback, "
        "given to the server as {issuer} in its command or environment, holds the server to "
        "the authorization pages as a protected resource (auth-* checks) and calls it with "
        "tokens it issues.",
        metavar="off|local",
        setting="auth",
        expected="off or local",
        reproduces=True,
    ),
    Option(
        "--axm-report",
        "axm_report",
        "Write the JSON certificate of the run to this path.",
        metavar="PATH",
        path=True,
    ),
    Option(
        "--axm-summary",
        "axm_summary",
        "Write a Markdown summary (one row per tool) to this path; it is also appended to "
        "$GITHUB_STEP_SUMMARY when that is set.",
        metavar="PATH",
        path=True,
    ),
    Option(
        "--axm-baseline",
        "axm_baseline",
        "Known failures (JSON from --axm-baseline-write): they show as xfail with their reason; "
        "one that now passes fails the run as stale.",
        metavar="PATH",
        path=True,
    ),
    Option(
        "--axm-baseline-write",
        "axm_baseline_write",
        "Write the run's failures to this path as a baseline file.",
        metavar="PATH",
        path=True,
    ),
    Option(
        "--axm-name-pattern",
        "axm_name_pattern",
        "Regular expression every tool name must match. Default: ^[A-Za-z0-9_-]{1,64}$ "
        "(accepted by every major client).",
        metavar="REGEX",
        setting="name_pattern",
        expected="a regular expression",
        reproduces=True,
    ),
    Option(
        "--axm-max-result-bytes",
        "axm_max_result_bytes",
        "Largest serialised result a tool may return, in bytes. Default: 1048576 (1 MiB).",
        metavar="BYTES",
        setting="max_result_bytes",
        parse=int,
        expected="a whole number of bytes",
        reproduces=True,
    ),
    Option(
        "--axm-memory-limit",
        "axm_memory_limit",
        "Address-space limit of the process a tool runs in, in bytes; 0 for none. "
        "Default: 2147483648 (2 GiB).",
        metavar="BYTES",
        setting="memory_limit",
        parse=lambda text: int(text) or None,
        expected="a whole number of bytes",
        reproduces=True,
    ),
    Option(
        "--axm-strict",
        "axm_strict",
        "Turn every warning into a failure: findings the protocol's runtime absorbs fail the "
        "tool too.",
        setting="strict",
        switch=True,
        reproduces=True,
    ),
    Option(
        "--axm-require-certified",
        "axm_require_certified",
        "Fail the run (exit status 1) unless every tool is certified: an inconclusive tool, or a "
        "partial run (-k, --lf, --axm-check), then fails the gate too.",
        switch=True,
    ),
    Option(
        "--axm-stats",
        "axm_stats",
        "Print, per check, the examples run, inputs discarded and schema keywords exercised.",
        switch=True,
    ),
    Option(
        "--axm-allow-root",
        "axm_allow_root",
        "Call tools that declare write or execute access even as root without "
        "--axm-worker-user (by default their calls are not made, and they are not certified).",
        setting="allow_root",
        switch=True,
        reproduces=True,
    ),
)

LONG_LIVED_HELP = (
    "Tools whose job is to start a process that outlives the call, exempt from the check that "
    "a call leaves no process running, one 'TOOL NAME: reason' per line."
)

NONDETERMINISTIC_HELP = (
    "Tools exempt from the determinism check, one 'TOOL NAME: reason' per line; the reason is "
    "shown where the check would have run."
)
