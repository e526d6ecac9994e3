"""Server checks: a tool server as a whole, seen in a session of its own (an MCP server's).

It answers the handshake in time and declares its tools, writes nothing but protocol messages
and only valid ones, lists its tools the same way twice through pages that end, refuses a call of
a tool it does not list as the spec says, and exits when its input closes, leaving no process
behind, fresh and after one call of each of its tools.
"""

from __future__ import annotations

from axm_conformance._checks._registry import Context, Found, check, first_few
from axm_conformance._observation import ServerFacts, SubjectInfo, last_said
from axm_conformance._outcomes import Finding, not_run, note, warning

__all__: list[str] = []


def _facts(subject: SubjectInfo) -> ServerFacts:
    assert subject.server is not None
    return subject.server


def _answered(subject: SubjectInfo) -> str | Finding | None:
    if _facts(subject).started:
        return not_run("not run: the server did not answer the handshake (see server-handshake)")
    return None


@check("server-handshake", "server", subject="server")
def server_handshake(subject: SubjectInfo, context: Context) -> Found:
    """The server starts and answers the version probe or the handshake within the timeout."""
    facts = _facts(subject)
    if facts.started:
        yield f"{facts.started}{last_said(facts.stderr_tail)}"
    else:
        yield note(f"speaks {facts.version} ({facts.probe}), answering in {facts.seconds:.2f} s")


@check("server-tools-capability", "server", applies=_answered, subject="server")
def server_tools_capability(subject: SubjectInfo, context: Context) -> Found:
    """The server declares the tools capability."""
    capabilities = _facts(subject).capabilities
    if "tools" not in capabilities:
        yield f"the server declares the capabilities {sorted(capabilities)}, without tools"


@check("server-stdout-clean", "server", subject="server")
def server_stdout_clean(subject: SubjectInfo, context: Context) -> Found:
    """The server's stdout carries only JSON-RPC messages."""
    lines = [
        f"wrote a line to stdout that is not a JSON-RPC message: {line!r}"
        for line in _facts(subject).strays
    ]
    yield from first_few(lines, "such lines")


@check("server-messages-valid", "server", subject="server")
def server_messages_valid(subject: SubjectInfo, context: Context) -> Found:
    """Every message the server writes is valid under the official schema of its version."""
    yield from first_few(_facts(subject).message_errors, "places where a message breaks it")


@check("tools-list-stable", "server", applies=_answered, subject="server")
def tools_list_stable(subject: SubjectInfo, context: Context) -> Found:
    """tools/list pages end, and two listings give the same tools in the same order."""
    facts = _facts(subject)
    if facts.listing_error:
        yield facts.listing_error
    elif len(facts.listings) == 2 and facts.listings[0] != facts.listings[1]:
        first, second = (list(listing) for listing in facts.listings)
        yield f"two listings differ: first {first}, then {second}"


@check("unknown-tool-refused", "server", applies=_answered, subject="server")
def unknown_tool_refused(subject: SubjectInfo, context: Context) -> Found:
    """A call of a tool the server does not list is answered with the error invalid params."""
    answer = _facts(subject).unknown_tool
    if answer:
        yield warning(
            f"{answer}; the spec gives an unknown tool the error -32602 (invalid params), which "
            "a client tells from a failure of the tool"
        )


@check(
    "server-exits",
    "server",
    applies=lambda s: "the server never started" if _facts(s).exited is None else None,
    subject="server",
)
def server_exits(subject: SubjectInfo, context: Context) -> Found:
    """The server exits within 2 s of its stdin closing, and leaves no process behind."""
    facts = _facts(subject)
    if not facts.exited:
        yield (
            f"the server still ran {facts.exit_grace:g} s after its stdin closed, as the stdio "
            "transport ends a session; it was killed"
        )
    for leftover in facts.leftovers:
        yield f"left a process running after it exited: {leftover}"
    # Closed again after one call of each tool: what a call starts may keep the server running.
    after = f"after one call of each of its tools ({', '.join(facts.called)})"
    if facts.exited_after_calls is False:
        yield (
            f"the server exits when its stdin closes in a fresh session, but {after} it still "
            f"ran {facts.exit_grace:g} s after its stdin closed; it was killed"
        )
    for leftover in facts.leftovers_after_calls:
        yield f"{after}, left a process running after it exited: {leftover}"
    if facts.calls_ended:
        yield note(f"how it ends after calls of its tools is not judged: {facts.calls_ended}")
