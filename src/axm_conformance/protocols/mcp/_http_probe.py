"""What the kit observes of a server's Streamable HTTP transport itself: requests beside the
probe's session, each breaking one rule of the transport pages the way a client, a web page or
an attacker could, and how the server answered them. The subject of the ``http-*`` checks.

Each request is its own connection, read whole within the run's timeout, with the run's
headers (``--axm-server-header``, the token): what differs from a correct request is only what
is asked about.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import itertools
import json
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from axm_conformance.protocols.base import snapshot
from axm_conformance.protocols.mcp._auth_probe import AuthFacts, Discovered, observe_auth
from axm_conformance.protocols.mcp._authority import Authority
from axm_conformance.protocols.mcp._http import (
    Answered,
    Endpoint,
    Spoken,
    content_type,
    exchange,
    request_headers,
)
from axm_conformance.protocols.mcp._sse import Event, answer_stream, answers, read_events
from axm_conformance.protocols.mcp._versions import (
    CLIENT_INFO,
    CURRENT,
    META,
    VERSIONS,
    current_meta,
)

__all__ = [
    "CLOSABLE",
    "FOREIGN_ORIGIN",
    "HELD",
    "NO_VERSION",
    "OVERSIZED",
    "SESSIONS",
    "UNKNOWN_METHOD",
    "Cancelled",
    "HttpFacts",
    "StreamFacts",
    "observe_http",
]

# An origin no server serves: what a page reached through DNS rebinding sends.
FOREIGN_ORIGIN = "http://dns-rebinding.invalid"
# A protocol version header no published version has.
NO_VERSION = "1999-01-01"
# A method no server implements.
UNKNOWN_METHOD = "axm-conformance/no-such-method"
# How many sessions are opened, besides the probe's, to see how their ids are made.
SESSIONS = 4
# How many GETs for an event stream are held open beside a slow client (see _held).
HELD = 16
# A body larger than any request a client sends: the SDKs refuse more than 4 MiB.
OVERSIZED = 8 * 1024 * 1024
# The version that made a POST's body a single message, no batch (2025-06-18 transports).
_NO_BATCH_SINCE = "2025-06-18"
# The version that first required the MCP-Protocol-Version header (2025-06-18 transports).
_HEADER_SINCE = "2025-06-18"
# How many header values Hypothesis tries before shrinking one the server serves.
_HEADER_EXAMPLES = 25
# How long a stream that may carry no more is read for what it still carries: what is not there
# by then is not judged (a slow machine misses a finding, it never makes one).
_LINGER = 0.5


# An open event stream: its connection, its lines, and its socket (an HTTP/1.0 answer's
# connection hands the socket to the response, which reads it).
_Opened = tuple[http.client.HTTPConnection, Iterator[bytes], socket.socket]


@dataclass(frozen=True)
class StreamFacts:
    """How a server's event streams went (2025-03-26 to 2025-11-25): ``opened``, how a
    request was answered, ``posted``, the events of the stream it was answered with (None where
    it was not: one JSON object, or a refusal), read as the kit's client reads it, resumed where
    the server closed it before the answer, ``answered``, whether its
    answer came, and ``whole``, whether it was read to its end or its answer within the
    timeout (what was cut short is not judged); ``listening``, how a GET for the server's own
    stream was answered, and
    ``echoed``, the ids of the requests whose answers came on that stream too; ``replayed``,
    the ids of the answers a GET with the first event id of the request's stream replayed
    (None where the stream gave no id); ``request``, the request's id, and ``other``, the id of
    a request answered on another stream after it."""

    opened: Answered
    posted: tuple[Event, ...] | None
    whole: bool
    listening: Answered
    echoed: tuple[Any, ...] = ()
    replayed: tuple[Any, ...] | None = None
    request: Any = None
    other: Any = None

    @property
    def answered(self) -> bool:
        return any(answers(event.data, self.request) for event in self.posted or ())


# A call that took less than this, read whole, is over before a closed stream could stop it.
CLOSABLE = 0.5
# How long a server is given to notice that a stream closed and stop: what it changes later, its
# work went on doing.
_NOTICE = 0.25
# The calls cancelled, at most: each costs as long as the call read whole, and more.
_CANCELLED = 2


@dataclass(frozen=True)
class Cancelled:
    """A call of ``tool`` with ``arguments`` whose event stream the kit closed ``closed_at``
    seconds after sending it, where the same call read whole took ``took`` seconds:
    ``went_on``, the changes to the files that call changed in the server's working directory
    made later than _NOTICE after the close, by the time the whole call would have ended."""

    tool: str
    arguments: Any
    took: float
    closed_at: float
    went_on: tuple[str, ...]


@dataclass(frozen=True)
class HttpFacts:
    """``version`` spoken; ``foreign_origin``, how a request from a foreign Origin was
    answered; ``bad_version``, how a request with an MCP-Protocol-Version header that is no
    version was answered (None where the version has no such header), the header being
    ``bad_version_value`` (see :func:`_unsupported_version`), and in the 2026-07-28
    era ``mismatched_method``, one whose ``Mcp-Method`` header names another method than its
    body, and ``unknown_method``, a request of a method no server has;
    ``session_ids``, the ids of the probe's session and of SESSIONS more, in order (none for a
    server without sessions); ``deletes``, how a DELETE of each of those SESSIONS was
    answered, ``after_delete`` how a request in the last was then, and ``survivor`` one in the
    probe's own session, which nobody ended, after them (None when not asked); ``redirected``, how
    the endpoint's path redirected the first request ("" where it did not); ``legacy``, that
    the server speaks the deprecated HTTP+SSE transport; ``batch``, how a JSON-RPC batch was
    answered (None before 2025-06-18, which allowed them), ``oversized`` a request of OVERSIZED
    bytes, and ``served_before`` and ``served_after`` a correct request sent before and after
    both; ``served_held``, one sent while other connections were held open (see _held);
    ``streams``, how its event streams went (see StreamFacts; None in the 2026-07-28 era);
    ``auth``, how it answered tokens, for a protected resource of the kit's authorization
    server (see ``_auth_probe``; None for another server); in the 2026-07-28 era, for a server
    whose files the kit sees, ``cancelled``, the calls whose stream it closed (see
    :func:`_cancelling`; None otherwise)."""

    version: str
    foreign_origin: Answered
    bad_version: Answered | None = None
    bad_version_value: str = NO_VERSION
    mismatched_method: Answered | None = None
    unknown_method: Answered | None = None
    session_ids: tuple[str, ...] = ()
    deletes: tuple[Answered, ...] = ()
    after_delete: Answered | None = None
    survivor: Answered | None = None
    redirected: str = ""
    legacy: bool = False
    batch: Answered | None = None
    oversized: Answered | None = None
    served_before: Answered | None = None
    served_held: Answered | None = None
    served_after: Answered | None = None
    streams: StreamFacts | None = None
    auth: AuthFacts | None = None
    cancelled: tuple[Cancelled, ...] | None = None


def observe_http(
    spoken: Spoken,
    version: str,
    timeout: float,
    authority: Authority | None = None,
    discovered: Discovered | None = None,
    inputs: dict[str, Any] | None = None,
    workdir: str = "",
) -> HttpFacts:
    """The transport's facts, from requests beside a session of ``version`` spoken as
    ``spoken`` says, and for a protected resource of ``authority``, what a client with no
    token ``discovered`` and how tokens are answered; in the 2026-07-28 era, for a server
    working in ``workdir`` (where the kit sees it), what closing the stream of a call of each
    tool with its valid input (``inputs``, by name) stopped. Over the deprecated HTTP+SSE
    transport only a foreign Origin is asked about (its rules are not the Streamable HTTP
    transport's)."""
    endpoint, session = spoken.endpoint, spoken.session
    ids = itertools.count(9_000)
    asking = _Asking(endpoint, version, session, timeout)
    if spoken.legacy:
        headers = {**dict(endpoint.headers), "Accept": "text/event-stream"}
        foreign, _ = asking.send("GET", None, {**headers, "Origin": FOREIGN_ORIGIN})
        return HttpFacts(version, foreign, redirected=spoken.redirected, legacy=True)
    # Before the sessions the transport's checks end: ending one may break the server.
    streams = _streams(asking, ids) if version != CURRENT else None
    observed = _observed(asking, ids)
    auth = None
    if authority is not None and discovered is not None:

        def send(extra: dict[str, str], path: str) -> Answered:
            return asking.post(_request(next(ids), "tools/list", version), extra, path)

        auth = observe_auth(send, endpoint.path, authority, discovered)
    cancelled = None
    if version == CURRENT and workdir:
        cancelled = _cancelling(asking, ids, inputs or {}, workdir)
    # Last: what it is asked here may end the server.
    before = asking.post(_request(next(ids), "tools/list", asking.version), {})
    held = _held(asking, ids)
    batch, oversized, after = _bounded(asking, ids)
    return dataclasses.replace(
        observed,
        redirected=spoken.redirected,
        batch=batch,
        oversized=oversized,
        served_before=before,
        served_held=held,
        served_after=after,
        streams=streams,
        auth=auth,
        cancelled=cancelled,
    )


def _cancelling(
    asking: _Asking, ids: Iterator[int], inputs: dict[str, Any], workdir: str
) -> tuple[Cancelled, ...]:
    """Each tool called with its valid input, read whole; one whose call took CLOSABLE or more
    and changed files of ``workdir`` is called again, and its response stream closed as soon
    as it opens, or a quarter of the whole call's time in if it has not (2026-07-28: closing
    it cancels the request). What the server then changes later than _NOTICE after the close,
    until the whole call would have ended and half as long again, it did though the call was
    cancelled. A call answered whole before that tells nothing, and is left out; so is every
    call after _CANCELLED were judged."""
    found: list[Cancelled] = []
    for tool, arguments in inputs.items():
        if len(found) == _CANCELLED:
            break
        params = {"name": tool, "arguments": arguments, "_meta": current_meta()}
        message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": params}
        before = snapshot(workdir)
        started = time.monotonic()
        answered, _, whole = asking.stream(message)
        took = time.monotonic() - started
        after = snapshot(workdir, before)
        changed = before.changes(after)
        if not (answered.served and whole and changed) or took < CLOSABLE:
            continue
        started = time.monotonic()
        closed_at = asking.cancelled({**message, "id": next(ids)}, took / 4)
        if closed_at is None:
            continue
        time.sleep(max(0.0, started + closed_at + _NOTICE - time.monotonic()))
        noticed = snapshot(workdir, after)
        time.sleep(max(0.0, started + 1.5 * took + _NOTICE - time.monotonic()))
        paths = {change.path for change in changed}
        later = noticed.changes(snapshot(workdir, noticed))
        went_on = tuple(str(change) for change in later if change.path in paths)
        found.append(Cancelled(tool, arguments, took, closed_at, went_on))
    return tuple(found)


def _held(asking: _Asking, ids: Iterator[int]) -> Answered:
    """How a correct request was answered while a slow client held a connection (the first
    byte of its request's body sent, the rest never) and HELD more each held a GET for an
    event stream, unread: what one client that reads or writes slowly, or opens many streams,
    does to a server that serves one connection at a time."""
    held: list[http.client.HTTPConnection] = []
    message = _request(next(ids), "tools/list", asking.version)
    body = json.dumps(message).encode()
    try:
        slow = asking.endpoint.connection(asking.timeout)
        held.append(slow)
        slow.putrequest("POST", asking.endpoint.path, skip_accept_encoding=True)
        for name, value in asking.headers(message, {"Content-Length": str(len(body))}).items():
            slow.putheader(name, value)
        slow.endheaders(body[:1])
        for _ in range(HELD):
            listening = asking.endpoint.connection(asking.timeout)
            held.append(listening)
            listening.putrequest("GET", asking.endpoint.path, skip_accept_encoding=True)
            for name, value in asking.headers(None, asking.resuming("")).items():
                listening.putheader(name, value)
            listening.endheaders()
    except (OSError, http.client.HTTPException):
        pass  # a server that takes no more connections: what it holds is held
    try:
        return asking.post(_request(next(ids), "tools/list", asking.version), {})
    finally:
        for connection in held:
            connection.close()


def _bounded(asking: _Asking, ids: Iterator[int]) -> tuple[Answered | None, Answered, Answered]:
    """How the server answered a batch and an oversized body, and then a correct request."""
    version = asking.version
    batch = None
    if VERSIONS.index(version) >= VERSIONS.index(_NO_BATCH_SINCE):
        requests = [_request(next(ids), "tools/list", version) for _ in range(2)]
        batch = asking.send("POST", json.dumps(requests).encode(), asking.headers(requests, {}))[0]
    padded = _request(next(ids), "tools/list", version)
    padded["params"]["padding"] = "x" * OVERSIZED
    oversized = asking.post(padded, {})
    served_after = asking.post(_request(next(ids), "tools/list", version), {})
    return batch, oversized, served_after


def _observed(asking: _Asking, ids: Iterator[int]) -> HttpFacts:
    """The Streamable HTTP transport's facts, asked as ``asking`` asks."""
    version, session = asking.version, asking.session

    def listing(**headers: str) -> Answered:
        return asking.post(_request(next(ids), "tools/list", version), headers)

    foreign = listing(Origin=FOREIGN_ORIGIN)
    if version == CURRENT:
        unsupported = _request(next(ids), "tools/list", version)
        unsupported["params"]["_meta"][f"{META}protocolVersion"] = NO_VERSION
        return HttpFacts(
            version,
            foreign,
            bad_version=asking.post(unsupported, {"MCP-Protocol-Version": NO_VERSION}),
            mismatched_method=listing(**{"Mcp-Method": "tools/call"}),
            unknown_method=asking.post(_request(next(ids), UNKNOWN_METHOD, version), {}),
        )
    bad, value = None, NO_VERSION
    if VERSIONS.index(version) >= VERSIONS.index(_HEADER_SINCE):
        bad, value = _unsupported_version(listing)
    if not session:
        return HttpFacts(version, foreign, bad_version=bad, bad_version_value=value)
    opened = [asking.initialized(next(ids)) for _ in range(SESSIONS)]
    made = [item for item in opened if item]
    deletes = tuple(dataclasses.replace(asking, session=item).delete() for item in made)
    after = survivor = None
    if deletes and 200 <= deletes[-1].status < 300:
        last = dataclasses.replace(asking, session=made[-1])
        after = last.post(_request(next(ids), "tools/list", version), {})
    if any(200 <= deleted.status < 300 for deleted in deletes):
        survivor = asking.post(_request(next(ids), "tools/list", version), {})
    return HttpFacts(
        version,
        foreign,
        bad_version=bad,
        bad_version_value=value,
        session_ids=(session, *opened),
        deletes=deletes,
        after_delete=after,
        survivor=survivor,
    )


def _streams(asking: _Asking, ids: Iterator[int]) -> StreamFacts:
    """How the server's event streams go: a GET opens its own stream, then two requests are
    answered, each on a stream of its own, and the first stream is resumed from its first
    event id (where it was answered with a stream)."""
    listening, listened = asking.open("GET", None, asking.resuming(""))
    try:
        first, second = next(ids), next(ids)
        opened, posted, whole = asking.stream(_request(first, "tools/list", asking.version))
        if posted is None:
            return StreamFacts(opened, None, whole, listening)
        asking.stream(_request(second, "tools/list", asking.version))
        echoed = _answered_ids(listened, _LINGER) if listened is not None else ()
    finally:
        asking.close(listened)
    replayed = None
    first_id = next((event.id for event in posted if event.id is not None), None)
    if first_id is not None:
        _, resumed = asking.open("GET", None, asking.resuming(first_id))
        try:
            replayed = _answered_ids(resumed, asking.timeout, until=first) if resumed else ()
        finally:
            asking.close(resumed)
    return StreamFacts(opened, posted, whole, listening, echoed, replayed, first, second)


def _answered_ids(opened: _Opened, wait: float, until: Any = None) -> tuple[Any, ...]:
    """The ids of the answers an open stream carries within ``wait``, or, once it carried the
    answer to ``until`` (where given), within _LINGER more."""
    _, lines, sock = opened
    deadline = [time.monotonic() + wait]
    sock.settimeout(wait)
    until_deadline = itertools.takewhile(lambda _: time.monotonic() < deadline[0], lines)
    found: list[Any] = []
    with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
        for event in read_events(until_deadline):
            message = _parsed(event.data)
            if isinstance(message, dict) and ("result" in message or "error" in message):
                found.append(message.get("id"))
                if until is not None and message.get("id") == until:
                    deadline[0] = min(deadline[0], time.monotonic() + _LINGER)
                    sock.settimeout(_LINGER)
    return tuple(found)


def _parsed(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _unsupported_version(listing: Callable[..., Answered]) -> tuple[Answered, str]:
    """How the server answered a listing whose MCP-Protocol-Version header is no version, and
    that header: NO_VERSION where it refused that; else the shortest value Hypothesis finds
    that it serves, among visible ASCII and versions cut short or run on (what a parser that
    reads only a prefix, or a year, lets through), shrunk; NO_VERSION's refusal where it
    serves none of them. Derandomized, so that a run asks what the last asked."""
    from hypothesis import HealthCheck, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample

    answers = {NO_VERSION: listing(**{"MCP-Protocol-Version": NO_VERSION})}
    if answers[NO_VERSION].served:
        return answers[NO_VERSION], NO_VERSION

    def served(value: str) -> bool:
        answers[value] = listing(**{"MCP-Protocol-Version": value})
        return answers[value].served

    visible = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
    near = st.builds(
        lambda known, cut, tail: known[:cut] + tail,
        st.sampled_from(VERSIONS),
        st.integers(0, 10),
        st.text(visible, max_size=4),
    )
    values = st.one_of(near, st.text(visible, min_size=1, max_size=12)).filter(
        lambda value: bool(value) and value not in VERSIONS
    )
    searched = settings(
        max_examples=_HEADER_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    try:
        found = find(values, served, settings=searched)
    except NoSuchExample:
        return answers[NO_VERSION], NO_VERSION
    return answers[found], found


@dataclass(frozen=True)
class _Asking:
    """Requests to ``endpoint`` as a client of ``version`` in ``session`` sends them."""

    endpoint: Endpoint
    version: str
    session: str
    timeout: float

    def headers(self, message: Any, extra: dict[str, str]) -> dict[str, str]:
        """The headers a client sends ``message`` with, ``extra`` in place of its own (one
        given as "" left out)."""
        own = request_headers(message, self.endpoint, self.version, self.session)
        return {name: value for name, value in {**own, **extra}.items() if value}

    def post(self, message: dict[str, Any], extra: dict[str, str], path: str = "") -> Answered:
        """``message`` as a client sends it, with the ``extra`` headers instead of its own, to
        ``path`` (the endpoint's when "")."""
        data = json.dumps(message).encode()
        return self.send("POST", data, self.headers(message, extra), path)[0]

    def delete(self) -> Answered:
        return self.send("DELETE", None, self.headers(None, {}))[0]

    def open(
        self, verb: str, body: bytes | None, extra: dict[str, str]
    ) -> tuple[Answered, _Opened | None]:
        """How the server answered a request with the ``extra`` headers, and where it opened
        an event stream, the connection and the stream's lines (the caller closes it)."""
        connection = self.endpoint.connection(self.timeout)
        try:
            connection.request(verb, self.endpoint.path, body, self.headers(None, extra))
            sock = connection.sock
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            return Answered(0, f"no answer: {exc}"), None
        kind = content_type(response)
        answered = Answered(response.status)
        if response.status == 200 and kind == "text/event-stream" and sock is not None:
            return answered, (connection, iter(response.readline, b""), sock)
        connection.close()
        return answered, None

    def close(self, opened: _Opened | None) -> None:
        """Close a stream's connection (see _shut)."""
        if opened is not None:
            _shut(opened[0], opened[2])

    def cancelled(self, message: dict[str, Any], within: float) -> float | None:
        """The seconds after sending ``message`` at which its response stream was closed: as
        soon as an event stream opens, or ``within`` if no answer has begun by then (a POST's
        response is its request's stream whatever it carries: the official SDK drops a call
        whose connection closes before its JSON answer). None when it was answered whole
        first, or not at all."""
        connection = self.endpoint.connection(self.timeout)
        sock: socket.socket | None = None
        started = time.monotonic()
        try:
            data = json.dumps(message).encode()
            connection.request("POST", self.endpoint.path, data, self.headers(message, {}))
            sock = connection.sock
            assert sock is not None
            sock.settimeout(within)
            try:
                response = connection.getresponse()
            except TimeoutError:
                return time.monotonic() - started
            if response.status != 200 or content_type(response) != "text/event-stream":
                return None
            return time.monotonic() - started
        except (OSError, http.client.HTTPException):
            return None
        finally:
            _shut(connection, sock)

    def resuming(self, last_id: str) -> dict[str, str]:
        """The headers of a GET for an event stream: the server's own, or, after ``last_id``
        (where not ""), the rest of the stream that event was on."""
        return {"Accept": "text/event-stream", "Content-Type": "", "Last-Event-ID": last_id}

    def stream(self, message: dict[str, Any]) -> tuple[Answered, tuple[Event, ...] | None, bool]:
        """How a request was answered, the events of the stream it was answered with (None
        where it was answered otherwise), resumed as the kit's client resumes it, and whether
        that was read to its end, or to the answer, within the timeout."""
        data = json.dumps(message).encode()
        answered, opened = self.open("POST", data, self.headers(message, {}))
        if opened is None:
            return answered, None, True
        resumptions = [opened]

        def resume(last_id: str) -> Iterator[bytes] | None:
            _, resumed = self.open("GET", None, self.resuming(last_id))
            if resumed is None:
                return None
            resumptions.append(resumed)
            return resumed[1]

        read: list[Event] = []
        try:
            for event in answer_stream(opened[1], message["id"], resume):
                read.append(event)
        except (OSError, http.client.HTTPException, ValueError):
            return answered, tuple(read), False
        finally:
            for each in resumptions:
                self.close(each)
        return answered, tuple(read), True

    def initialized(self, request_id: int) -> str:
        """A new session's id, initialized as a client of the version does ("" when the
        server assigned none)."""
        offer = {"protocolVersion": self.version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": offer}
        headers = dataclasses.replace(self, session="").headers(message, {})
        answered, session = self.send("POST", json.dumps(message).encode(), headers)
        if session and 200 <= answered.status < 300:
            opened = dataclasses.replace(self, session=session)
            opened.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
        return session

    def send(
        self, verb: str, body: bytes | None, headers: dict[str, str], path: str = ""
    ) -> tuple[Answered, str]:
        """How the server answered, at ``path`` (the endpoint's when ""), and the session id it
        gave ("" for none) (see :func:`exchange`)."""
        path = path or self.endpoint.path
        answered, session, _ = exchange(self.endpoint, verb, path, body, headers, self.timeout)
        return answered, session


def _shut(connection: http.client.HTTPConnection, sock: socket.socket | None) -> None:
    """Close ``connection`` and shut its socket down: an HTTP/1.0 answer's reader still holds
    the socket open, and the server is to see the connection closed now."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    connection.close()


def _request(request_id: int, method: str, version: str) -> dict[str, Any]:
    params = {"_meta": current_meta()} if version == CURRENT else {}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
