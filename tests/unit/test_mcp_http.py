"""The Streamable HTTP transport's client side, against a server of the standard library's that
answers as the 2025-11-25 transport page says (a session id at initialize, an SSE stream for a
request, 202 for a notification) and, where asked, as no server should."""

from __future__ import annotations

import itertools
import json
import os
import queue
import secrets
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._process.system._sandbox import Sandbox
from axm_conformance.protocols.base import LoadError, LoadOptions
from axm_conformance.protocols.mcp._http import (
    Endpoint,
    Failed,
    HttpWire,
    Transport,
    _header_value,
    events,
)
from axm_conformance.protocols.mcp._http_checks import _LEAST_DIFFERENT, _different
from axm_conformance.protocols.mcp._server import command_of, transport_of
from axm_conformance.protocols.mcp._sse import Event, answer_stream, read_events
from axm_conformance.protocols.mcp._wire import CannotStart, Session


def test_an_event_streams_data_lines_make_one_message_and_other_fields_none() -> None:
    stream = [
        b": a comment\n",
        b"id: 1\n",
        b"data:\n",  # a priming event: an id, and empty data
        b"\n",
        b"retry: 1000\n",
        b"\r\n",
        b'data: {"a":\r\n',
        b"data:1}\n",
        b"\n",
        b"data: last",
    ]
    assert list(events(iter(stream))) == [b'{"a":\n1}', b"last"]


def test_an_event_keeps_its_id_and_retry_and_a_priming_event_is_one() -> None:
    stream = [b"id: s-0\n", b"data:\n", b"\n", b"retry: 20\n", b"\n", b"id: s-1\n", b"data: x\n"]
    assert list(read_events(iter(stream))) == [
        Event(b"message", b"", "s-0"),
        Event(b"message", b"", None, 20),
        Event(b"message", b"x", "s-1"),
    ]


def _answer(request_id: int) -> bytes:
    return f"data: {json.dumps({'jsonrpc': '2.0', 'id': request_id, 'result': {}})}\n".encode()


def test_a_stream_closed_before_its_answer_is_resumed_after_its_last_id_until_it_comes() -> None:
    asked: list[str] = []
    resumptions = iter([[b"retry: 0\n", b"\n"], [b"id: s-2\n", _answer(7)]])

    def resume(last_id: str) -> Iterator[bytes]:
        asked.append(last_id)
        return iter(next(resumptions))

    closed_early = [b"id: s-0\n", b"data:\n", b"\n", b"retry: 0\n", b"\n"]
    read = list(answer_stream(iter(closed_early), 7, resume))
    assert asked == ["s-0", "s-0"]  # the first resumption brought a retry, no new id
    assert [event.connection for event in read] == [0, 0, 1, 2]
    assert json.loads(read[-1].data)["id"] == 7


def test_a_stream_that_ends_with_no_id_or_brings_nothing_when_resumed_is_not_resumed_again() -> (
    None
):
    def never(last_id: str) -> Iterator[bytes]:
        raise AssertionError("a stream with no id cannot be resumed")

    assert list(answer_stream(iter([b"data: {}\n"]), 1, never)) == [Event(b"message", b"{}")]
    asked: list[str] = []

    def empty(last_id: str) -> Iterator[bytes]:
        asked.append(last_id)
        return iter([])

    list(answer_stream(iter([b"id: a\n", b"data:\n"]), 1, empty))
    assert asked == ["a"]


@pytest.mark.parametrize(
    ("value", "header"),
    [
        # The examples of the 2026-07-28 streamable-http page, Value Encoding.
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_a_name_goes_in_a_header_plain_or_in_the_base64_sentinel_form(
    value: str, header: str
) -> None:
    assert _header_value(value) == header


def _lower(headers: Any) -> dict[str, str]:
    """Header names are case-insensitive: compared in lower case."""
    return {name.lower(): value for name, value in headers.items()}


class _Server(BaseHTTPRequestHandler):
    """Answers initialize with JSON and a session id, tools/list with an SSE stream carrying a
    notification first, a notification with 202; ``broken`` answers requests with a page of
    that status (0: not broken)."""

    seen: list[tuple[str, dict[str, str], Any]] = []
    broken = 0

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(("POST", _lower(self.headers), body))
        if "id" not in body:
            self.send_response(202)
            self.end_headers()
        elif self.broken:
            self._send(self.broken, "text/html", b"<h1>Internal Server Error</h1>")
        elif body["method"] == "initialize":
            answer = {"jsonrpc": "2.0", "id": body["id"], "result": {"protocolVersion": "x"}}
            self._send(200, "application/json", json.dumps(answer).encode(), session="s-1")
        else:
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
            answer = {"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}}
            stream = f"id: 7\ndata:\n\ndata: {json.dumps(note)}\n\ndata: {json.dumps(answer)}\n\n"
            self._send(200, "text/event-stream", stream.encode())

    def do_GET(self) -> None:
        self.seen.append(("GET", _lower(self.headers), None))
        self.send_response(405)
        self.end_headers()

    def do_DELETE(self) -> None:
        self.seen.append(("DELETE", _lower(self.headers), None))
        self.send_response(200)
        self.end_headers()

    def _send(self, status: int, kind: str, data: bytes, session: str = "") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        if session:
            self.send_header("Mcp-Session-Id", session)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def wire() -> Iterator[tuple[HttpWire, queue.Queue[bytes | Failed]]]:
    _Server.seen, _Server.broken = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    delivered: queue.Queue[bytes | Failed] = queue.Queue()
    endpoint = Endpoint(server.server_address[1], "/mcp")
    yield HttpWire(endpoint, delivered.put, lambda: None), delivered
    server.shutdown()
    server.server_close()


def _send(wire: HttpWire, message: dict[str, Any]) -> None:
    wire.send(message, json.dumps(message).encode())


def test_a_session_is_spoken_to_as_the_transport_page_says(
    wire: tuple[HttpWire, queue.Queue[bytes | Failed]],
) -> None:
    client, delivered = wire
    assert client.answers(time.monotonic() + 5) == ""
    _send(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert json.loads(delivered.get(timeout=5))["result"] == {"protocolVersion": "x"}
    client.version = "2025-11-25"
    _send(client, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(client, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    streamed = [json.loads(delivered.get(timeout=5)) for _ in range(2)]
    assert [message.get("method", message.get("id")) for message in streamed] == [
        "notifications/message",
        2,
    ]
    client.close()
    posts = [(headers, body) for verb, headers, body in _Server.seen if verb == "POST"]
    first, *later = posts
    assert "mcp-session-id" not in first[0] and "mcp-protocol-version" not in first[0]
    assert "text/event-stream" in first[0]["accept"] and "application/json" in first[0]["accept"]
    for headers, _ in later:
        assert headers["mcp-session-id"] == "s-1"
        assert headers["mcp-protocol-version"] == "2025-11-25"
    assert ("DELETE", "s-1") in [(verb, h.get("mcp-session-id")) for verb, h, _ in _Server.seen]
    assert client.problems == []


def test_a_current_request_mirrors_its_version_method_and_name_in_headers(
    wire: tuple[HttpWire, queue.Queue[bytes | Failed]],
) -> None:
    client, delivered = wire
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    params = {"name": "get weather", "arguments": {}, "_meta": meta}
    _send(client, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
    delivered.get(timeout=5)
    ((_, headers, _),) = _Server.seen
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert (headers["mcp-method"], headers["mcp-name"]) == ("tools/call", "get weather")


@pytest.mark.parametrize(
    ("status", "said"), [(500, "500 Internal Server Error"), (401, "401 Unauthorized")]
)
def test_an_answer_that_is_no_message_is_a_failure_naming_the_status(
    wire: tuple[HttpWire, queue.Queue[bytes | Failed]], status: int, said: str
) -> None:
    """Its status is kept: a server that refuses the kit's credentials is told apart."""
    client, delivered = wire
    _Server.broken = status
    _send(client, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    failed = delivered.get(timeout=5)
    assert isinstance(failed, Failed) and not failed.ended and failed.status == status
    assert f"answered tools/list with HTTP {said} (text/html)" in failed.text


def test_a_server_that_cannot_start_over_http_leaves_no_relay_behind(tmp_path: Path) -> None:
    """The relay's directory is made before the server starts: a start that fails removes it."""
    tempfile.tempdir = str(tmp_path)
    try:
        session = Session(
            ["no-such-mcp-server", "--port", "{port}"],
            str(tmp_path),
            {"PATH": os.defpath},
            sandbox=Sandbox(network=False),
            transport=Transport("/mcp"),
        )
        with pytest.raises(CannotStart, match="cannot start 'no-such-mcp-server'"):
            session.start()
    finally:
        tempfile.tempdir = None
    assert list(tmp_path.iterdir()) == []


def test_the_runs_headers_go_with_every_request_and_stay_out_of_reprs() -> None:
    _Server.seen, _Server.broken = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    headers = (("X-Tenant", "blue"), ("Authorization", "Bearer s3cret"))
    transport = transport_of(
        f"mcp+http://127.0.0.1:{server.server_address[1]}/mcp", LoadOptions(headers=headers)
    )
    delivered: queue.Queue[bytes | Failed] = queue.Queue()
    client = HttpWire(transport.endpoint(), delivered.put, lambda: None)
    try:
        assert client.answers(time.monotonic() + 5) == ""
        _send(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        delivered.get(timeout=5)
        client.close()
    finally:
        server.shutdown()
        server.server_close()
    assert {verb for verb, _, _ in _Server.seen} == {"GET", "POST", "DELETE"}
    for _, seen, _ in _Server.seen:
        assert (seen["x-tenant"], seen["authorization"]) == ("blue", "Bearer s3cret")
    assert "s3cret" not in repr(transport) + repr(transport.endpoint()) + repr(client)
    assert "s3cret" not in repr(LoadOptions(headers=headers))


@pytest.mark.parametrize(
    ("ref", "path", "remote", "where"),
    [
        ("mcp+http://127.0.0.1:8000/mcp", "/mcp", "http://127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("mcp+https://mcp.example.com/v1/mcp", "/v1/mcp", "https://mcp.example.com", None),
        ("mcp+http://[::1]:9/", "/", "http://[::1]:9", ("::1", 9)),
        ("mcp+http://example.org", "/", "http://example.org", ("example.org", 80)),
    ],
)
def test_a_remote_reference_names_its_endpoint(
    ref: str, path: str, remote: str, where: tuple[str, int] | None
) -> None:
    transport = transport_of(ref, LoadOptions())
    assert (transport.path, transport.remote, transport.url()) == (path, remote, remote + path)
    assert command_of(ref) == []
    endpoint = transport.endpoint()
    assert endpoint.secure is ref.startswith("mcp+https")
    assert (endpoint.host, endpoint.port) == (where or ("mcp.example.com", 443))


@pytest.mark.parametrize(
    "ref",
    [
        "mcp+http://",
        "mcp+http://host:port/mcp",
        "mcp+http://user:pw@host/mcp",
        "mcp+https://host/mcp?token=abc",
    ],
)
def test_a_remote_reference_that_names_no_endpoint_is_a_load_error(ref: str) -> None:
    with pytest.raises(LoadError, match="use mcp\\+http://HOST:PORT/PATH"):
        transport_of(ref, LoadOptions())


@pytest.mark.parametrize(
    ("make", "guessed"),
    [
        (lambda n: str(uuid.uuid4()), False),
        (lambda n: secrets.token_urlsafe(24), False),
        (lambda n: uuid.uuid4().hex, False),
        # A JWT: its header and most of its claims repeat; its signature does not.
        (lambda n: f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ{n}In0.{secrets.token_urlsafe(32)}", False),
        (lambda n: f"session-{n}", True),
        (lambda n: str(1_765_000_000_000 + 37 * n), True),
        (lambda n: f"{n:032x}", True),
    ],
)
def test_a_session_id_is_guessed_when_the_next_differs_little_from_the_last(
    make: Any, guessed: bool
) -> None:
    """Two ids given one after the other: drawn ones differ in dozens of characters, counted or
    timed ones in a few, whatever their length."""
    ids = [make(n) for n in range(1, 6)]
    apart = [_different(last, given) for last, given in itertools.pairwise(ids)]
    assert (min(apart) < _LEAST_DIFFERENT) is guessed, apart


class _OldServer(BaseHTTPRequestHandler):
    """The deprecated HTTP+SSE transport: a GET of /sse opens a stream whose first event names
    where to POST; each request POSTed there is answered on the stream."""

    stream: Any = None
    ready = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"event: endpoint\ndata: /messages/?session_id=abc\n\n")
        self.wfile.flush()
        _OldServer.stream = self.wfile
        _OldServer.ready.set()
        threading.Event().wait(5)

    def do_POST(self) -> None:
        if self.path != "/messages/?session_id=abc":
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()
        answer = {"jsonrpc": "2.0", "id": body["id"], "result": {"ok": True}}
        _OldServer.ready.wait(5)
        _OldServer.stream.write(f"event: message\ndata: {json.dumps(answer)}\n\n".encode())
        _OldServer.stream.flush()


def test_a_server_on_the_deprecated_transport_is_found_and_spoken_to_over_it() -> None:
    """Its POST refused 405, the URL's event stream names where to POST: the request goes
    there, and its answer comes on the stream."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OldServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    delivered: queue.Queue[bytes | Failed] = queue.Queue()
    client = HttpWire(Endpoint(server.server_address[1], "/sse"), delivered.put, lambda: None)
    try:
        _send(client, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        answer = delivered.get(timeout=5)
    finally:
        client.close()
        server.shutdown()
        server.server_close()
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}
    assert client.spoken().legacy
