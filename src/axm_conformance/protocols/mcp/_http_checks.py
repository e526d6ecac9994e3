"""The Streamable HTTP transport's checks, registered through the public check API by the entry
point ``mcp-http`` of the group ``axm_conformance.checks``.

Each judges a server served over HTTP by how it answered requests beside the probe's session
that break one rule of the transport pages (see ``_http_probe``), and cites the rule. What lets
an attacker in (a foreign Origin served, a session id that can be guessed) fails the server:
no client can make up for it. What only a wrong client would meet (a version header that is no
version served, a session served after its DELETE) is a warning that says so.
"""

from __future__ import annotations

import difflib
import itertools

from axm_conformance.checks import (
    CheckContext,
    Finding,
    Found,
    SubjectInfo,
    check,
    not_run,
    note,
    warning,
)
from axm_conformance.protocols.base import canonical_json
from axm_conformance.protocols.mcp._facts import ServerFacts
from axm_conformance.protocols.mcp._http import Answered
from axm_conformance.protocols.mcp._http_probe import (
    CLOSABLE,
    FOREIGN_ORIGIN,
    HELD,
    OVERSIZED,
    UNKNOWN_METHOD,
    HttpFacts,
    StreamFacts,
)
from axm_conformance.protocols.mcp._sse import answers
from axm_conformance.protocols.mcp._versions import CURRENT

__all__: list[str] = []

# Two ids given one after the other that differ in fewer characters than this were counted or
# timed, not drawn: the next one is guessed from the last.
_LEAST_DIFFERENT = 8
_VISIBLE = frozenset(chr(code) for code in range(0x21, 0x7F))
_HEADER_MISMATCH = -32020
_METHOD_NOT_FOUND = -32601


def _http(subject: SubjectInfo) -> HttpFacts:
    facts = subject.server
    assert isinstance(facts, ServerFacts) and facts.http is not None
    return facts.http


def _over_http(subject: SubjectInfo) -> str | Finding | None:
    facts = subject.server
    assert isinstance(facts, ServerFacts)
    if not facts.over_http:
        return "spoken to over stdio: it has no HTTP transport to judge"
    if facts.http is None:
        return "not run: the server did not answer the handshake (see server-handshake)"
    return None


def _streamable(subject: SubjectInfo) -> str | Finding | None:
    reason = _over_http(subject)
    if reason is None and _http(subject).legacy:
        return "spoken to over the deprecated HTTP+SSE transport, which has no such rule"
    return reason


def _stateful(subject: SubjectInfo) -> str | Finding | None:
    reason = _streamable(subject)
    if reason is None and not _http(subject).session_ids:
        version = _http(subject).version
        if version == CURRENT:
            return f"{version} has no sessions"
        return "the server assigns no session id: it keeps no session, as the transport allows"
    return reason


@check("http-transport-current", "server", applies=_over_http, subject="server")
def http_transport_current(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server speaks Streamable HTTP, not the deprecated HTTP+SSE transport."""
    if _http(subject).legacy:
        yield warning(
            "speaks the deprecated HTTP+SSE transport (2024-11-05): it refused the POST of a "
            "request, and a GET of its URL opened an event stream whose first event named "
            "where to POST; the kit spoke to it there, as the transport pages' backward "
            "compatibility says a client falls back, but a client without that fallback "
            "cannot connect (Streamable HTTP replaced it in 2025-03-26)"
        )


@check("http-endpoint-direct", "server", applies=_over_http, subject="server")
def http_endpoint_direct(subject: SubjectInfo, context: CheckContext) -> Found:
    """The MCP endpoint answers at its path, with no redirect."""
    redirected = _http(subject).redirected
    if redirected:
        yield warning(
            f"redirected its endpoint {redirected}: the server MUST provide a single HTTP "
            "endpoint path (transports, Streamable HTTP); the SDKs' HTTP clients follow the "
            "redirect, and the kit spoke to it there, but a client that does not follow it "
            "cannot connect"
        )


@check("http-origin-validated", "server", applies=_over_http, subject="server")
def http_origin_validated(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server answers a request from a foreign Origin 403 Forbidden (DNS rebinding)."""
    answer = _http(subject).foreign_origin
    rule = (
        "servers MUST validate the Origin header on all incoming connections to prevent DNS "
        "rebinding attacks; if it is present and invalid, MUST respond with HTTP 403 Forbidden "
        "(transports, Security Warning)"
    )
    if 200 <= answer.status < 300:
        served = "opened its event stream" if _http(subject).legacy else "served tools/list"
        yield (
            f"{served} to a request from Origin {FOREIGN_ORIGIN} ({answer.shown}): "
            f"a web page the user opens can call its tools through DNS rebinding; {rule}"
        )
    elif answer.status != 403:
        yield warning(
            f"refused a request from Origin {FOREIGN_ORIGIN} with {answer.shown}, not 403 "
            f"Forbidden: {rule}"
        )


@check("http-session-id", "server", applies=_stateful, subject="server")
def http_session_id(subject: SubjectInfo, context: CheckContext) -> Found:
    """Session ids are visible ASCII, never given twice, and cannot be guessed from the last."""
    ids = [item for item in _http(subject).session_ids if item]
    for session in ids:
        bad = sorted({char for char in session if char not in _VISIBLE})
        if bad:
            yield (
                f"gave the session id {session!r}, with {', '.join(map(repr, bad))}: a session "
                "id MUST only contain visible ASCII characters, 0x21 to 0x7E (transports, "
                "Session Management)"
            )
    if len(ids) < 2:
        yield note(
            "whether its ids can be guessed is not judged: it gave no second session an id "
            "(each initialize besides the probe's was refused)"
        )
        return
    if len(set(ids)) < len(ids):
        yield f"gave one session id to two sessions: {ids}"
        return
    for last, given in itertools.pairwise(ids):
        different = _different(last, given)
        if different < _LEAST_DIFFERENT:
            yield (
                f"gave the session ids {last!r} then {given!r}, {different} characters apart: "
                "whoever saw one guesses the next and takes over its session; servers MUST use "
                "secure, non-deterministic session IDs (security best practices, Session "
                "Hijacking)"
            )
            return


def _different(first: str, second: str) -> int:
    """How many characters of two strings are not in a run they share, in order."""
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks())
    return len(first) + len(second) - 2 * shared


def _version_header_since(subject: SubjectInfo) -> str | Finding | None:
    reason = _streamable(subject)
    if reason is None and _http(subject).bad_version is None:
        return f"{_http(subject).version} has no MCP-Protocol-Version header (since 2025-06-18)"
    return reason


@check("http-version-header", "server", applies=_version_header_since, subject="server")
def http_version_header(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server answers 400 a request whose MCP-Protocol-Version it does not support."""
    facts = _http(subject)
    bad = facts.bad_version
    assert bad is not None
    if 200 <= bad.status < 300:
        yield warning(
            f"served a request whose MCP-Protocol-Version is {facts.bad_version_value!r}, which "
            f"no version is ({bad.shown}): a server MUST respond 400 Bad Request to an invalid or "
            "unsupported one (transports, Protocol Version Header); a correct client never "
            "sends one, so none is harmed"
        )
    mismatched = facts.mismatched_method
    if mismatched is not None and (mismatched.status != 400 or mismatched.code != _HEADER_MISMATCH):
        yield warning(
            f"answered tools/list sent with the header Mcp-Method: tools/call with "
            f"{mismatched.shown}{_code(mismatched)}: a server MUST reject a request whose "
            f"headers do not match its body with 400 Bad Request and the JSON-RPC error "
            f"{_HEADER_MISMATCH} (HeaderMismatch; streamable-http, Server Validation): a "
            "balancer that routes on the header and a server that executes the body disagree"
        )


def _current(subject: SubjectInfo) -> str | Finding | None:
    reason = _streamable(subject)
    if reason is None and _http(subject).unknown_method is None:
        return (
            f"{_http(subject).version} answers an unknown method with the JSON-RPC error alone: "
            "the 404 is 2026-07-28's"
        )
    return reason


@check("http-unknown-method", "server", applies=_current, subject="server")
def http_unknown_method(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server answers a method it does not implement 404 Not Found with -32601."""
    answer = _http(subject).unknown_method
    assert answer is not None
    if answer.status != 404 or answer.code != _METHOD_NOT_FOUND:
        yield warning(
            f"answered the method {UNKNOWN_METHOD} with {answer.shown}{_code(answer)}: a "
            f"server that does not implement a method MUST respond with 404 Not Found and the "
            f"JSON-RPC error {_METHOD_NOT_FOUND} (streamable-http); a client that meets "
            "another answer may take the server for one of another era"
        )


def _code(answer: Answered) -> str:
    return "" if answer.code is None else f" (JSON-RPC error {answer.code})"


def _deleted(subject: SubjectInfo) -> str | Finding | None:
    reason = _stateful(subject)
    if reason is not None:
        return reason
    deletes = _http(subject).deletes
    if not deletes:
        return "not run: the server gave no second session to end"
    if all(deleted.status == 405 for deleted in deletes):
        return "the server does not let a client end a session (405 to DELETE), as it may"
    return None


@check("http-sessions-isolated", "server", applies=_deleted, subject="server")
def http_sessions_isolated(subject: SubjectInfo, context: CheckContext) -> Found:
    """Ending one session leaves the server serving the others."""
    survivor = _http(subject).survivor
    if survivor is not None and not 200 <= survivor.status < 300:
        yield (
            f"after DELETE ended other sessions, it answered tools/list in a session nobody "
            f"ended with {survivor.shown}: one client that ends its session breaks every "
            "other client's"
        )


@check("http-session-ended", "server", applies=_deleted, subject="server")
def http_session_ended(subject: SubjectInfo, context: CheckContext) -> Found:
    """After a DELETE it accepted, the server answers the session's requests 404 Not Found."""
    facts = _http(subject)
    deleted, after = facts.deletes[-1], facts.after_delete
    if after is None:
        yield warning(
            f"answered DELETE of a session with {deleted.shown}: a server that does not "
            "let a client end a session MAY respond 405 Method Not Allowed (transports, "
            "Session Management); a client cannot tell whether the session ended"
        )
    elif after.status != 404:
        yield warning(
            f"accepted DELETE of a session, then answered a request in it with "
            f"{after.shown}, not 404 Not Found: after it terminates a session a server "
            "MUST respond to requests containing that session ID with 404 (transports, "
            "Session Management); the session is not ended, which only a client that keeps "
            "using it would meet"
        )


# The version whose event streams are primed, and closed early with a retry (2025-11-25).
_PRIMED_SINCE = "2025-11-25"


def _streamed(subject: SubjectInfo) -> str | Finding | None:
    reason = _streamable(subject)
    if reason is not None:
        return reason
    streams = _http(subject).streams
    if streams is None:
        return f"{CURRENT} streams are not resumable, and it has no GET stream"
    if not streams.opened.served:
        return not_run(f"not run: the server did not serve tools/list ({streams.opened.shown})")
    if streams.posted is None:
        return "answered tools/list with one JSON object: no event stream to judge"
    return None


def _streams(subject: SubjectInfo) -> StreamFacts:
    streams = _http(subject).streams
    assert streams is not None
    return streams


@check("http-stream-resumable", "server", applies=_streamed, subject="server")
def http_stream_resumable(subject: SubjectInfo, context: CheckContext) -> Found:
    """A request's event stream carries its answer, or can be resumed until it does."""
    streams = _streams(subject)
    if not streams.whole:
        yield note(
            "not judged: the stream of tools/list was not read to its end within the timeout"
        )
        return
    posted = streams.posted or ()
    first = [event for event in posted if event.connection == 0]
    ids = [event.id for event in posted if event.id is not None]
    if not streams.answered:
        resumed = "" if not ids else f", and resuming it after {ids[-1]!r} brought none"
        yield (
            f"ended the event stream of tools/list before its answer{resumed}: the answer is "
            "lost and a client's request with it; the stream SHOULD eventually include the "
            "JSON-RPC response (transports, Sending Messages to the Server)"
            + ("" if ids else ", and with no event id the client cannot resume it")
        )
    if _http(subject).version < _PRIMED_SINCE or not ids:
        return
    if not (first and first[0].id is not None and not first[0].data):
        yield warning(
            "gave event ids, but did not start the stream of tools/list with an event of an "
            "id and empty data: a server SHOULD send one at once to prime the client to "
            "reconnect (transports, Sending Messages to the Server, 2025-11-25); a client cut "
            "off before the first id cannot resume, and loses the answer"
        )
    answered_first = any(answers(event.data, streams.request) for event in first)
    if not answered_first and not any(event.retry is not None for event in first):
        yield warning(
            "closed the connection of tools/list's stream before its answer with no retry "
            "field: a server that closes the connection before the stream ends SHOULD send "
            "an event with retry first (transports, Sending Messages to the Server, "
            "2025-11-25); the SDKs' clients then reconnect after a default of their own"
        )


@check("http-stream-own-messages", "server", applies=_streamed, subject="server")
def http_stream_own_messages(subject: SubjectInfo, context: CheckContext) -> Found:
    """Each message goes on one stream: none on the GET stream, none replayed on another."""
    streams = _streams(subject)
    absorbed = "the SDKs' clients drop a second answer to a request by its id"
    echoed = sorted(set(streams.echoed) & {streams.request, streams.other}, key=str)
    if echoed:
        yield warning(
            f"sent the answer to tools/list (id {echoed[0]}) on its own GET stream too: the "
            "server MUST NOT send a JSON-RPC response on that stream unless resuming, and "
            "MUST NOT broadcast a message across streams (transports, Listening for Messages "
            f"from the Server, Multiple Connections); {absorbed}"
        )
    if streams.replayed is not None and streams.other in streams.replayed:
        yield warning(
            f"asked to resume the stream of one tools/list after its first event id, replayed "
            f"the answer to another (id {streams.other}), sent on a stream of its own: the "
            "server MUST NOT replay messages that would have been delivered on a different "
            f"stream (transports, Resumability and Redelivery); {absorbed}"
        )


def _cancellable(subject: SubjectInfo) -> str | Finding | None:
    reason = _streamable(subject)
    if reason is not None:
        return reason
    facts = _http(subject)
    if facts.version != CURRENT:
        return (
            f"{facts.version}: closing a stream cancels nothing before {CURRENT} (a "
            "disconnection SHOULD NOT be taken for a cancellation; a client sends "
            "notifications/cancelled)"
        )
    if facts.cancelled is None:
        return "a server someone else runs: the kit does not see what its work changes"
    if not facts.cancelled:
        return (
            f"no tool's call with its simplest valid input took {CLOSABLE} s or more "
            "and changed a file, and was still working when the kit closed its response stream"
        )
    return None


@check("http-cancel-stops-work", "server", applies=_cancellable, subject="server")
def http_cancel_stops_work(subject: SubjectInfo, context: CheckContext) -> Found:
    """Closing a call's response stream stops its work: it changes no file after."""
    for call in _http(subject).cancelled or ():
        if call.went_on:
            yield warning(
                f"went on with the call of {call.tool} with {canonical_json(call.arguments)} "
                f"after the kit closed its response stream {call.closed_at:.2f} s in (read "
                f"whole, the call takes {call.took:.2f} s): later it still "
                f"{', '.join(call.went_on)}; "
                "a server MUST treat a closed response stream as the request's cancellation, "
                "and SHOULD stop work on it as soon as practical (streamable-http, "
                f"Cancellation, {CURRENT})"
            )


def _served_before(subject: SubjectInfo) -> str | Finding | None:
    reason = _streamable(subject)
    before = _http(subject).served_before if reason is None else None
    if before is not None and not 200 <= before.status < 300:
        return not_run(
            f"not run: the server no longer served tools/list before these were sent "
            f"({before.shown}; see http-sessions-isolated)"
        )
    return reason


@check("http-bounded", "server", applies=_served_before, subject="server")
def http_bounded(subject: SubjectInfo, context: CheckContext) -> Found:
    """A batch or an oversized body is refused, and the server goes on serving."""
    facts = _http(subject)
    after, batch, oversized = facts.served_after, facts.batch, facts.oversized
    assert after is not None and oversized is not None
    if not 200 <= after.status < 300:
        asked = "a JSON-RPC batch and " if batch is not None else ""
        yield (
            f"after {asked}a request of {OVERSIZED // 2**20} MiB, it no longer served "
            f"tools/list ({after.shown}): what any client can send ended or broke the server"
        )
        return
    if batch is not None and 200 <= batch.status < 300:
        yield warning(
            f"answered a JSON-RPC batch with {batch.shown}: the body of a POST MUST be a "
            "single JSON-RPC request, notification or response (transports, Sending Messages "
            "to the Server, since 2025-06-18); a correct client never sends one"
        )
    if oversized.status == 0:
        yield warning(
            f"gave no answer to a request of {OVERSIZED // 2**20} MiB ({oversized.said}), then "
            "served again: a client that sends one holds a connection of the server as long"
        )


@check("http-serves-while-held", "server", applies=_served_before, subject="server")
def http_serves_while_held(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server serves a request while a slow client and many open streams hold it."""
    held = _http(subject).served_held
    assert held is not None
    what = (
        f"while one client sent the body of its request a byte at a time and {HELD} more each "
        f"held a GET for an event stream open, it answered a correct tools/list with {held.shown}"
    )
    if held.status == 0:
        yield (
            f"{what}: one client that writes slowly, or opens streams, holds the server, and "
            "nobody else is served (a bounded refusal of what it cannot take, never a hang)"
        )
    elif not held.served:
        yield warning(
            f"{what}: it refused a correct request because of what another client holds; a "
            "client that backs off is served later, one that does not is refused"
        )
