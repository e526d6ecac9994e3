"""The MCP protocol's checks, registered through the public check API (``axm_conformance.check``)
by the entry point ``mcp`` of the group ``axm_conformance.checks``.

Wire checks judge what a tool served over JSON-RPC answers a valid input: a result, never an
error response; a well-formed message of the protocol, with nothing else written meanwhile; a
structured result also given as text, for clients that read only the content.

Server checks judge a server as a whole, seen in a session of its own: it answers the handshake
in time and declares its tools, writes nothing but protocol messages and only valid ones, lists
its tools the same way twice through pages that end, refuses a call of a tool it does not list as
the spec says, starts no process while no tool is called, writes nothing outside its working and
temporary directories on its own, and exits when its input closes, leaving no process behind,
fresh and after one call of each of its tools.
"""

from __future__ import annotations

import json
from typing import Any

from axm_conformance.checks import (
    Call,
    CheckContext,
    Finding,
    Found,
    SubjectInfo,
    check,
    first_few,
    input_unusable,
    listed,
    not_run,
    note,
    warning,
)
from axm_conformance.protocols.mcp._facts import ServerFacts, hidden_by_sandbox, last_said
from axm_conformance.protocols.mcp._versions import CURRENT, INVALID_PARAMS

__all__: list[str] = []


@check(
    "no-error-response",
    "calls",
    applies=input_unusable,
    considers=("returned",),
    requires=("json-rpc",),
)
def no_error_response(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A valid input gets a result, never a JSON-RPC error."""
    result = call.observation.result
    assert result is not None
    if result.type_name != subject.result.error_type:
        return
    error = result.fields.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    shown = json.dumps(error, ensure_ascii=False)[:300]
    if code == INVALID_PARAMS and subject.errors_refuse:
        yield warning(
            f"refused a schema-valid input as invalid params: {shown}; "
            f"{subject.errors_refuse}, and 2025-11-25 makes it a tool execution error the "
            "model reads (isError: true); whether the refusal is right is "
            "schema-tells-truth's to judge"
        )
    elif code == INVALID_PARAMS:
        yield (
            f"refused a schema-valid input as invalid params: {shown}; the input schema "
            "promises what the tool does not accept"
        )
    else:
        yield f"answered a schema-valid input with the JSON-RPC error {shown}"


@check(
    "result-well-formed",
    "results",
    applies=input_unusable,
    considers=("returned",),
    requires=("json-rpc",),
)
def result_well_formed(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """The answer is a valid message of its version (content blocks included), alone on stdout."""
    result = call.observation.result
    assert result is not None
    yield from first_few(result.wire_errors, "places where the answer breaks the wire")


def _mirrored(subject: SubjectInfo) -> str | None:
    if subject.output_schema is None:
        return "the tool declares no output schema"
    return None


@check(
    "structured-content-mirrored",
    "results",
    applies=lambda s: input_unusable(s) or _mirrored(s),
    considers=("returned",),
    requires=("json-rpc", "output-schema"),
)
def structured_content_mirrored(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A structured result also appears as JSON in a text block of the content."""
    result = call.observation.result
    assert result is not None
    field = subject.result.structured_field
    if result.truncated or not subject.result.succeeded(result) or field not in result.fields:
        return
    texts = [
        block.get("text")
        for block in result.fields.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    if not any(_carries(text, result.fields[field]) for text in texts):
        yield warning(
            f"the {field} appears in no text block as its JSON: a client that reads only the "
            "content does not see it"
        )


def _carries(text: Any, structured: Any) -> bool:
    """Whether a text block gives what the structured content holds: its JSON, or, for content
    that wraps one value (``{"result": 4}``, as SDKs wrap a function's plain return value),
    that value, as JSON or, for a string, as the text itself."""
    values = [structured]
    if isinstance(structured, dict) and len(structured) == 1:
        values += list(structured.values())
    if not isinstance(text, str):
        return False
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = _UNPARSED
    return any(value in (parsed, text) for value in values)


_UNPARSED = object()


def _facts(subject: SubjectInfo) -> ServerFacts:
    assert isinstance(subject.server, ServerFacts)
    return subject.server


def _answered(subject: SubjectInfo) -> str | Finding | None:
    if _facts(subject).started:
        return not_run("not run: the server did not answer the handshake (see server-handshake)")
    return None


@check("server-handshake", "server", subject="server")
def server_handshake(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server starts and answers the version probe or the handshake within the timeout."""
    facts = _facts(subject)
    if facts.started:
        said = f"{facts.started}{last_said(facts.stderr_tail)}"
        # What the sandbox hid is the kit's environment, not the server's failure.
        yield (
            not_run(f"not judged: {said}{hidden_by_sandbox(facts.hidden)}")
            if facts.hidden
            else said
        )
        return
    yield note(f"speaks {facts.version} ({facts.probe}), answering in {facts.seconds:.2f} s")
    if facts.ended_on_probe:
        yield warning(
            "ended when asked server/discover (at once, or at the next message), which a "
            "client of 2026-07-28 sends first; the "
            'stdio page has it fall back to initialize on "any other error, or does not respond '
            'within a reasonable timeout", not on a server that is gone: such a client must '
            "start it again to reach it"
        )


def _pinged(subject: SubjectInfo) -> str | Finding | None:
    facts = _facts(subject)
    if facts.ping is not None:
        return None
    if facts.version == CURRENT:
        return f"{CURRENT} has no ping (its changelog, item 5)"
    return not_run("not run: the session ended before ping was asked (see tools-list-stable)")


@check(
    "server-ping",
    "server",
    applies=lambda s: _answered(s) or _pinged(s),
    subject="server",
)
def server_ping(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server answers ping with an empty result, as every version that has ping requires."""
    answer = _facts(subject).ping
    if answer:
        yield (
            f'{answer}; the {_facts(subject).version} ping page: "The receiver MUST respond '
            'promptly with an empty response"'
        )


@check("server-tools-capability", "server", applies=_answered, subject="server")
def server_tools_capability(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server declares the tools capability."""
    capabilities = _facts(subject).capabilities
    if "tools" not in capabilities:
        yield f"the server declares the capabilities {sorted(capabilities)}, without tools"


def _over_stdio(subject: SubjectInfo) -> str | None:
    """Applies to a server spoken to over stdio, whose stdout is the wire and whose session
    ends when its input closes."""
    if _facts(subject).over_http:
        return (
            "served over HTTP: its stdout is a log, not the wire, and it ends when its host "
            "stops it, not when a client's input closes"
        )
    return None


@check("server-stdout-clean", "server", applies=_over_stdio, subject="server")
def server_stdout_clean(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server's stdout carries only JSON-RPC messages."""
    lines = [
        f"wrote a line to stdout that is not a JSON-RPC message: {line!r}"
        for line in _facts(subject).strays
    ]
    yield from first_few(lines, "such lines")


@check("server-messages-valid", "server", subject="server")
def server_messages_valid(subject: SubjectInfo, context: CheckContext) -> Found:
    """Every message the server writes is valid under the official schema of its version."""
    yield from first_few(_facts(subject).message_errors, "places where a message breaks it")


@check("tools-list-stable", "server", applies=_answered, subject="server")
def tools_list_stable(subject: SubjectInfo, context: CheckContext) -> Found:
    """tools/list pages end, and two listings give the same tools in the same order."""
    facts = _facts(subject)
    if facts.listing_error:
        yield facts.listing_error
    elif len(facts.listings) == 2 and facts.listings[0] != facts.listings[1]:
        first, second = (list(listing) for listing in facts.listings)
        yield f"two listings differ: first {first}, then {second}"


def _listed_again(subject: SubjectInfo) -> str | Finding | None:
    """Why the tools were not listed again: no handshake, no tools, or no second session."""
    facts = _facts(subject)
    if facts.started or facts.relistings:
        return _answered(subject)
    if facts.listing_error or not any(facts.listings):
        return "the server listed no tools to list again"
    why = facts.calls_ended or "it was not started again"
    return not_run(f"not run: the server's tools were not listed again: {why}")


@check("listing-unconditional", "server", applies=_listed_again, subject="server")
def listing_unconditional(subject: SubjectInfo, context: CheckContext) -> Found:
    """The tools listed are the same for every client, after every call, in every session."""
    facts = _facts(subject)
    relistings = list(facts.relistings)
    # Listed to a well-known client first; when that differed, to the kit in a session of its
    # own: the same as the first, the client's name changed the listing; different too, any
    # new session does, which the kit's says.
    kit = [relisting for relisting in relistings if relisting.by == "kit"]
    if kit:
        client = next(relisting for relisting in relistings if relisting.by == "client")
        relistings.remove(client)
    if kit and not kit[0].differences:
        relistings.remove(kit[0])
        yield (
            f"the tools listed {client.after.removeprefix('in a new session, ')} differ from "
            f"those listed to the kit, in a new session as in the first: "
            f"{'; '.join(client.differences)}; a client sees tools the kit did not certify"
        )
    declared = (facts.capabilities.get("tools") or {}).get("listChanged") is True
    for relisting in relistings:
        if not relisting.differences:
            continue
        said = f"the tools listed changed {relisting.after}: {'; '.join(relisting.differences)}"
        if relisting.by == "call" and declared:
            # MCP lets such a server change its tools (and say so); what a person approved may
            # then do something else.
            yield warning(
                f"{said}; it declares tools.listChanged, which lets a server change its tools, "
                "but what a person approved may now do something else"
            )
        else:
            yield said


@check("unknown-tool-refused", "server", applies=_answered, subject="server")
def unknown_tool_refused(subject: SubjectInfo, context: CheckContext) -> Found:
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
    applies=lambda s: (
        _over_stdio(s) or ("the server never started" if _facts(s).exited is None else None)
    ),
    subject="server",
)
def server_exits(subject: SubjectInfo, context: CheckContext) -> Found:
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


def _processes_seen(subject: SubjectInfo) -> str | Finding | None:
    if subject.remote:
        return f"the server runs elsewhere ({subject.remote}): what it starts is not seen"
    return _answered(subject)


@check("server-idle-quiet", "server", applies=_processes_seen, subject="server")
def server_idle_quiet(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server starts no process while no tool is called."""
    started = _facts(subject).started_alone
    if started:
        yield warning(
            f"started {listed(list(started))} after the handshake while no tool was called: "
            "processes of its own, which no call is charged with (nor a process of the same "
            "command line that starts during a call); not a failure: the protocol leaves a "
            "server's own processes to it, and server-exits judges whether it ends them"
        )


@check("server-writes-confined", "server", requires=("writes-traced",), subject="server")
def server_writes_confined(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server writes nothing outside its working and temporary directories on its own."""
    refused = _facts(subject).refused_writes
    if refused:
        yield (
            f"tried to write {listed(list(refused))} as it started, listed its tools or ended, "
            "outside its working and temporary directories (the sandbox refused)"
        )
