"""The Streamable HTTP transport as a client speaks it: every message one POST to the MCP
endpoint, answered with one JSON object, an SSE stream of messages, or 202 Accepted for a
notification or a response (2025-03-26 to 2026-07-28, ``transports``/``streamable-http``).

What the server answers is handed on as the lines of a stdio server are, so that a session
reads both transports alike: each message's bytes, or a :class:`WireError` where the answer is
no message (an HTTP error without a JSON-RPC answer, a connection refused), a :class:`Failed`. The
session id a
server assigns at ``initialize`` (``MCP-Session-Id``) goes with every later request, and so does
the negotiated ``MCP-Protocol-Version``; in the 2026-07-28 era, also ``Mcp-Method`` and
``Mcp-Name``, as its page requires.

Written on the standard library's ``http.client`` rather than an HTTP client library: the kit
judges the wire, so it must see each status, header and byte as the server sent them, which a
library that follows redirects, retries, decompresses or reassembles would hide. The event
stream is read as the WHATWG rules say (``data`` lines joined by newlines, an event ended by a
blank line, comments and other fields skipped).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import http.client
import json
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from axm_conformance._process.system._platform import KIT_THREAD
from axm_conformance.protocols.mcp._sse import answer_stream, read_events

__all__ = [
    "STDIO",
    "Answered",
    "Endpoint",
    "Failed",
    "HttpWire",
    "Spoken",
    "Transport",
    "content_type",
    "events",
    "exchange",
    "free_port",
    "request_headers",
]

# How often the kit asks whether a starting server answers yet.
_POLL = 0.1
# What an answer says in a session of the 2026-07-28 era (see _headers).
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
# How much of an answer's body is read, and how much a report shows.
_READ = 64 * 1024
_SHOWN = 200
# A header value is plain when it is visible ASCII and spaces, not at either end.
_PLAIN = frozenset(chr(code) for code in range(0x20, 0x7F))


def free_port(*besides: int) -> int:
    """A port of the loopback interface nothing listens on now, none of ``besides``."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in besides:
            return port


@dataclass(frozen=True)
class Endpoint:
    """Where a server's MCP endpoint is: ``host`` and ``port``, its ``path``, over TLS when
    ``secure``; for a server the kit started, on loopback, reached through ``relay`` (a Unix
    socket whose other end, in the server's sandbox, connects to that port: the sandbox's
    network is its own). ``headers`` go with every request (kept out of its repr: one may
    carry a token)."""

    port: int
    path: str
    relay: str = ""
    host: str = "127.0.0.1"
    secure: bool = False
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def connection(self, timeout: float | None) -> http.client.HTTPConnection:
        if self.relay:
            return _RelayedConnection(self.relay, self.port, timeout)
        if self.secure:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


@dataclass(frozen=True)
class Transport:
    """How the kit speaks to a server: over its stdin and stdout (``path`` None), or over
    Streamable HTTP at ``path``, on a loopback port the kit picks for a server it starts, or
    at ``remote`` (``http://HOST:PORT`` or ``https://...``), a server someone else runs and the
    kit only speaks to. ``headers`` go with every HTTP request. With ``auth``, a server the
    kit starts is a protected resource of an authorization server the kit runs for it (see
    ``_authority``), whose tokens the session carries."""

    path: str | None = None
    remote: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    auth: bool = False

    @property
    def over_http(self) -> bool:
        return self.path is not None

    def endpoint(self, port: int = 0, relay: str = "") -> Endpoint:
        """The endpoint of a server the kit started on ``port`` (reached through ``relay``),
        or, for a remote server, the one its address names."""
        assert self.path is not None
        if not self.remote:
            return Endpoint(port, self.path, relay, headers=self.headers)
        where = urllib.parse.urlsplit(self.remote)
        secure = where.scheme == "https"
        return Endpoint(
            where.port or (443 if secure else 80),
            self.path,
            host=where.hostname or "",
            secure=secure,
            headers=self.headers,
        )

    def url(self) -> str:
        """The remote endpoint's address ("" for a server the kit starts)."""
        return f"{self.remote}{self.path}" if self.remote else ""


# A server spoken to over its stdin and stdout.
STDIO = Transport()


class _RelayedConnection(http.client.HTTPConnection):
    """An HTTP connection over a Unix socket, its ``Host`` the loopback port behind it."""

    def __init__(self, relay: str, port: int, timeout: float | None) -> None:
        super().__init__("127.0.0.1", port, timeout=timeout)
        self._relay = relay

    def connect(self) -> None:
        if sys.platform == "win32":
            raise OSError("a relay is a sandbox's, and a sandbox is Linux's")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._relay)
        self.sock = sock


def _header_value(value: str) -> str:
    """A value as an ``Mcp-Name`` header carries it: plain, or in the Base64 sentinel form
    where it is not header-safe or looks like the sentinel itself (2026-07-28, Value
    Encoding)."""
    plain = (
        value
        and set(value) <= _PLAIN
        and value == value.strip()
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8', 'surrogatepass')).decode()}?="


def stream_events(lines: Iterator[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """The type and the data of each event of an event stream whose lines are given, in
    order; an event with no data (a priming event, a ``retry``) gives none."""
    for event in read_events(lines):
        if event.data:
            yield event.kind, event.data


def events(lines: Iterator[bytes]) -> Iterator[bytes]:
    """The data of each event of an event stream whose lines are given, in order."""
    for _, data in stream_events(lines):
        yield data


@dataclass(frozen=True)
class Failed:
    """An answer that is no message: why, whether the server had ended, and the HTTP status
    that carried it (0 when none did)."""

    text: str
    ended: bool = False
    status: int = 0


Deliver = Callable[[bytes | Failed], None]


@dataclass
class HttpWire:
    """Sends a session's messages to one endpoint and hands what comes back to ``deliver``.

    A request's answer is read in a thread of its own (its stream may carry other messages
    first, and last as long as the call); a notification or a response is sent and its status
    read before the next message goes, so that the server sees them in order. ``gone`` says,
    when a connection fails, whether the server exited and how (None while it runs).
    """

    endpoint: Endpoint
    deliver: Deliver
    gone: Callable[[], str | None]
    session_id: str = ""
    version: str = ""
    redirected: str = ""  # how the endpoint's path moved, where it redirected (see answers)
    # Spoken to over the deprecated HTTP+SSE transport, its messages POSTed to ``_post_path``
    # (see _fell_back).
    legacy: bool = False
    problems: list[str] = field(default_factory=list)
    _post_path: str = ""
    _tried_legacy: bool = False
    _closing: bool = False
    _open: list[http.client.HTTPConnection] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answers(self, deadline: float) -> str:
        """Wait until the endpoint answers any HTTP request; "" once it does, else why not
        (the server exited, or the deadline passed). An endpoint that redirects to another
        path of the same server (``/mcp`` to ``/mcp/``) is spoken to there, as the SDKs' HTTP
        clients follow it, and ``redirected`` says so."""
        while True:
            connection = self.endpoint.connection(timeout=max(0.1, deadline - time.monotonic()))
            try:
                connection.request(
                    "GET",
                    self.endpoint.path,
                    headers={**dict(self.endpoint.headers), "Accept": "text/event-stream"},
                )
                response = connection.getresponse()
                response.close()
                moved = _moved_to(response, self.endpoint)
                if moved and not self.redirected:
                    self.redirected = (
                        f"{self.endpoint.path} to {moved} ({response.status} {response.reason})"
                    )
                    self.endpoint = dataclasses.replace(self.endpoint, path=moved)
                    continue
                return ""
            except (OSError, http.client.HTTPException) as exc:
                ended = self.gone()
                if ended is not None:
                    return f"the server exited{ended} before its endpoint answered"
                if time.monotonic() >= deadline:
                    return f"its endpoint did not answer ({exc})"
            finally:
                connection.close()
            time.sleep(_POLL)

    def spoken(self) -> Spoken:
        return Spoken(self.endpoint, self.session_id, self.redirected, self.legacy)

    def send(self, message: dict[str, Any], body: bytes) -> None:
        """POST one message: a request's answer is delivered as it comes."""
        if "id" in message and "method" in message:
            name = f"{KIT_THREAD}http-{message.get('method')}"
            threading.Thread(
                target=self._post, args=(message, body), name=name, daemon=True
            ).start()
        else:
            self._post(message, body)

    def _post(self, message: dict[str, Any], body: bytes) -> None:
        connection = self.endpoint.connection(timeout=None)
        with self._lock:
            self._open.append(connection)
        method = str(message.get("method", ""))
        try:
            path = self._post_path or self.endpoint.path
            connection.request("POST", path, body, self._headers(message))
            response = connection.getresponse()
            if method == "initialize":
                self.session_id = response.getheader("mcp-session-id") or ""
            if self.legacy:
                self._accepted(response, message)
            elif not self._fell_back(response, message, body):
                self._read(response, message)
        except (OSError, http.client.HTTPException) as exc:
            ended = self.gone()
            self.deliver(
                Failed(f"the server exited{ended} during {method or 'a reply'}", ended=True)
                if ended is not None
                else Failed(f"the HTTP request for {method or 'a reply'} failed: {exc}")
            )
        finally:
            connection.close()
            with self._lock, contextlib.suppress(ValueError):
                self._open.remove(connection)

    def _fell_back(
        self, response: http.client.HTTPResponse, message: dict[str, Any], body: bytes
    ) -> bool:
        """Whether a request refused 400, 404 or 405 with no JSON-RPC answer was sent again
        over the deprecated HTTP+SSE transport, found where the transport pages' backward
        compatibility says a client looks for it (see _legacy_stream)."""
        if response.status not in (400, 404, 405) or "id" not in message:
            return False
        said = response.read()
        answer = _message(said)
        if (isinstance(answer, dict) and "jsonrpc" in answer) or not self._legacy_stream():
            self._failed(response, message, said)
            return True
        self._post(message, body)
        return True

    def _legacy_stream(self) -> bool:
        """Open the deprecated transport's event stream, once: a GET of the endpoint whose
        first event, ``endpoint``, names where messages are POSTed (2024-11-05, HTTP with
        SSE); the server's messages then come as the stream's ``message`` events."""
        with self._lock:
            if self._tried_legacy:
                return self.legacy
            self._tried_legacy = True
        connection = self.endpoint.connection(timeout=None)
        try:
            headers = {**dict(self.endpoint.headers), "Accept": "text/event-stream"}
            connection.request("GET", self.endpoint.path, headers=headers)
            response = connection.getresponse()
            stream = stream_events(iter(response.readline, b""))
            first = next(stream, None) if response.status == 200 else None
        except (OSError, http.client.HTTPException):
            first = None
        target = urllib.parse.urlsplit(first[1].decode("utf-8", "replace")) if first else None
        if first is None or first[0] != b"endpoint" or target is None or target.netloc:
            connection.close()
            return False
        path = urllib.parse.urljoin(self.endpoint.path, target.path)
        self._post_path = f"{path}?{target.query}" if target.query else path
        self.legacy = True
        with self._lock:
            self._open.append(connection)
        name = f"{KIT_THREAD}http-sse-stream"
        threading.Thread(target=self._listen, args=(stream,), name=name, daemon=True).start()
        return True

    def _listen(self, stream: Iterator[tuple[bytes, bytes]]) -> None:
        # Closed by close(), in another thread, the response reads from no file (AttributeError).
        with contextlib.suppress(OSError, http.client.HTTPException, ValueError, AttributeError):
            for kind, data in stream:
                if kind == b"message":
                    self.deliver(data)
        if not self._closing:
            ended = self.gone()
            self.deliver(Failed(f"the server ended its event stream{ended or ''}", ended=True))

    def _accepted(self, response: http.client.HTTPResponse, message: dict[str, Any]) -> None:
        """A message POSTed over the deprecated transport: accepted, its answer to come on
        the stream."""
        said = response.read()
        if not 200 <= response.status < 300:
            if "id" in message and "method" in message:
                self._failed(response, message, said)
            else:
                what = str(message.get("method") or "a reply")
                self.problems.append(f"answered {what} with HTTP {response.status}{_said(said)}")

    def _read(self, response: http.client.HTTPResponse, message: dict[str, Any]) -> None:
        kind = content_type(response)
        what = str(message.get("method") or "a reply")
        if "method" not in message or "id" not in message:
            left = response.read()
            if response.status != 202:
                self.problems.append(
                    f"answered {what} (a notification or a response) with HTTP "
                    f"{response.status}, not 202 Accepted{_said(left)}"
                )
            elif left:
                self.problems.append(f"answered {what} with 202 Accepted and a body{_said(left)}")
            return
        if 200 <= response.status < 300 and kind == "text/event-stream":
            lines = iter(response.readline, b"")
            for event in answer_stream(lines, message["id"], self._resumed):
                if event.data:
                    self.deliver(event.data)
            return
        body = response.read()
        if 200 <= response.status < 300 and kind == "application/json":
            self.deliver(body)
            return
        self._failed(response, message, body)

    def _resumed(self, last_id: str) -> Iterator[bytes] | None:
        """The lines of the GET that resumes a request's stream after ``last_id`` (None where
        the server opens none, or the session is closing)."""
        if self._closing:
            return None
        connection = self.endpoint.connection(timeout=None)
        with self._lock:
            self._open.append(connection)
        headers = {
            name: value
            for name, value in self._headers({}).items()
            if name not in ("Content-Type", "Accept")
        }
        headers.update({"Accept": "text/event-stream", "Last-Event-ID": last_id})
        try:
            connection.request("GET", self.endpoint.path, headers=headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException):
            return None
        kind = content_type(response)
        if response.status != 200 or kind != "text/event-stream":
            response.close()
            return None
        return iter(response.readline, b"")

    def _failed(
        self, response: http.client.HTTPResponse, message: dict[str, Any], body: bytes
    ) -> None:
        """A request answered otherwise than with a message: a JSON-RPC answer that names it
        stands whatever the status that carried it; anything else fails it, naming the
        status."""
        answer = _message(body)
        if isinstance(answer, dict) and answer.get("id") == message.get("id"):
            self.deliver(body)
            return
        kind = content_type(response)
        what = str(message.get("method") or "a reply")
        self.deliver(
            Failed(
                f"the server answered {what} with HTTP {response.status} "
                f"{response.reason}{f' ({kind})' if kind else ''}{_said(body)}",
                status=response.status,
            )
        )

    def _headers(self, message: dict[str, Any]) -> dict[str, str]:
        return request_headers(message, self.endpoint, self.version, self.session_id)

    def close(self) -> None:
        """End the session (DELETE, where the server assigned one) and every open request."""
        self._closing = True
        with self._lock:
            for connection in self._open:
                connection.close()
        if not self.session_id:
            return
        connection = self.endpoint.connection(timeout=2.0)
        headers = {**dict(self.endpoint.headers), "MCP-Session-Id": self.session_id}
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection.request("DELETE", self.endpoint.path, headers=headers)
            connection.getresponse().read()
        connection.close()


@dataclass(frozen=True)
class Answered:
    """An HTTP answer: its status (0 when none came: ``said`` says why), its body's
    JSON-RPC error code, where it has one, and its WWW-Authenticate header (``challenge``)."""

    status: int
    said: str = ""
    code: int | None = None
    challenge: str = ""

    @property
    def served(self) -> bool:
        return 200 <= self.status < 300

    @property
    def shown(self) -> str:
        """The answer as a report shows it: ``HTTP 401: 'its body'``, or why none came."""
        said = f": {self.said!r}" if self.said else ""
        return f"HTTP {self.status}{said}" if self.status else self.said


def exchange(
    endpoint: Endpoint,
    verb: str,
    path: str,
    body: bytes | None,
    headers: dict[str, str],
    timeout: float,
) -> tuple[Answered, str, bytes]:
    """One request of its own connection, read whole within ``timeout``: how the server
    answered, the session id it gave ("" for none), and the first bytes of its body (of an
    event stream, its first message: the server may keep it open after)."""
    connection = endpoint.connection(timeout)
    try:
        connection.request(verb, path, body, headers)
        response = connection.getresponse()
    except (OSError, http.client.HTTPException) as exc:
        connection.close()
        return Answered(0, f"no answer: {exc}"), "", b""
    kind = content_type(response)
    data = b""
    with contextlib.suppress(OSError, http.client.HTTPException):
        if kind == "text/event-stream":
            data = next(events(iter(response.readline, b"")), b"")
        else:
            data = response.read(_READ)
    connection.close()
    shown = data.decode("utf-8", "replace").strip()[:_SHOWN]
    challenge = response.getheader("www-authenticate") or ""
    answered = Answered(response.status, shown, _error_code(data), challenge)
    return answered, response.getheader("mcp-session-id") or "", data


def content_type(response: http.client.HTTPResponse) -> str:
    """An answer's media type, without its parameters, in lower case ("" for none)."""
    return (response.getheader("content-type") or "").split(";")[0].strip().lower()


def _error_code(data: bytes) -> int | None:
    """The JSON-RPC error code of a message, where it is an error response."""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        code = json.loads(data).get("error", {}).get("code")
        return code if isinstance(code, int) else None
    return None


@dataclass(frozen=True)
class Spoken:
    """How a session speaks HTTP: its ``endpoint``, the ``session`` id the server gave ("" for
    none), how the endpoint ``redirected`` ("" where it did not), and whether over the
    deprecated HTTP+SSE transport (``legacy``)."""

    endpoint: Endpoint
    session: str = ""
    redirected: str = ""
    legacy: bool = False


def request_headers(message: Any, endpoint: Endpoint, version: str, session: str) -> dict[str, str]:
    """The headers a client sends ``message`` with, to ``endpoint`` in ``session`` ("" for
    none) of ``version`` (a 2026-07-28 message's own version first)."""
    headers = {
        **dict(endpoint.headers),
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    said = meta.get(_META_VERSION) if isinstance(meta, dict) else None
    version = said if isinstance(said, str) else version
    method = message.get("method") if isinstance(message, dict) else None
    if version and method != "initialize":
        headers["MCP-Protocol-Version"] = version
    if session:
        headers["MCP-Session-Id"] = session
    if isinstance(meta, dict) and _META_VERSION in meta and method is not None:
        # The 2026-07-28 era mirrors the method, and a call's name, in headers.
        headers["Mcp-Method"] = str(method)
        name = params.get("name") if isinstance(params, dict) else None
        if method == "tools/call" and isinstance(name, str):
            headers["Mcp-Name"] = _header_value(name)
    return headers


def _moved_to(response: http.client.HTTPResponse, endpoint: Endpoint) -> str:
    """The path a 307 or 308 answer moves the endpoint to, on the same server ("" for none:
    another answer, or another server)."""
    location = response.getheader("location") or ""
    if response.status not in (307, 308) or not location:
        return ""
    where = urllib.parse.urlsplit(location)
    same = not where.netloc or (where.hostname, where.port or 80) in (
        (endpoint.host, endpoint.port),
        ("localhost", endpoint.port),
    )
    return where.path if same and where.path and where.path != endpoint.path else ""


def _message(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _said(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    return f": {text[:200]!r}" if text else ""
