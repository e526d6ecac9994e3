"""An MCP server's tools, each called on the session the tools of its reference share.

The server starts in the worker's throw-away working directory (where the run's worker files
are copied), as the worker's user, with an environment of ``PATH``, ``LANG``, the throw-away
``HOME`` and what the run adds (``--axm-server-env``): nothing else of the kit's environment
reaches it. The session starts again after the server died. Each call is one ``tools/call``,
with what the server wrote meanwhile that breaks the wire and what it changed in its working
directory (snapshots before and after, see :mod:`axm_conformance._workdir`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shlex
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from axm_conformance._process.system._platform import SYSTEM_VARIABLES, home_variables, read_tail
from axm_conformance.protocols.base import (
    CallCrashed,
    Change,
    LoadError,
    LoadOptions,
    Snapshot,
    canonical_json,
    snapshot,
)
from axm_conformance.protocols.mcp._handshake import Handshake, connect
from axm_conformance.protocols.mcp._http import STDIO, Transport
from axm_conformance.protocols.mcp._wire import Malformed, Session, WireError

__all__ = [
    "CLOSE_GRACE",
    "HTTP_PREFIX",
    "PREFIX",
    "REMOTE_PREFIXES",
    "Answer",
    "Connection",
    "McpServer",
    "McpTool",
    "StartMemo",
    "command_of",
    "listing",
    "server_env",
    "start_allowance",
    "stderr_tail",
    "transport_of",
]

PREFIX = "mcp:"
# A server started by the kit that serves Streamable HTTP on the port given as ``{port}``.
HTTP_PREFIX = "mcp-http:"
# A server someone else runs, at this URL after "mcp+".
REMOTE_PREFIXES = ("mcp+http://", "mcp+https://")
# A listing that still gives a next cursor after this many pages does not end.
_MAX_PAGES = 100
# How long a server whose input closed gets to finish before it is killed, where how it ends
# is not judged.
CLOSE_GRACE = 0.5
# A call is bounded by the worker's timeout, which kills the worker and its server: the session
# itself waits for as long as that allows.
_CALL_WAIT = 24 * 3600.0
# Error texts kept per tool, and the length of what they share that counts as their form.
_ERRORS_KEPT = 20
_MIN_FORM, _MAX_FORM = 6, 60
# The least time a server is given to start and answer initialize, in seconds (see
# start_allowance): npx and uvx fetch a package on a first start, and a runtime on a busy 2-core
# machine takes several times its idle start.
_START_ALLOWANCE = 30.0
_GROWTH = 4.0
# The worker's standard error, a log file whose end a crash report shows.
_WORKER_STDERR = 2


def start_allowance(timeout: float, slowest: float = 0.0) -> float:
    """How long a server may take to start and answer initialize: the call timeout, never less
    than a start that fetches its package or loads its runtime on a busy machine takes, and
    _GROWTH times the slowest start of the server seen in this run (``slowest``): a machine
    that made it slow once may make it slower."""
    return max(timeout, _START_ALLOWANCE, _GROWTH * slowest)


def command_of(ref: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The command line an ``mcp:`` or ``mcp-http:`` reference names (none for a remote
    server's); :class:`LoadError` when it names none, or when an HTTP server's, and the
    environment the run gives the server (``env``), name no ``{port}`` to serve on."""
    if ref.startswith(REMOTE_PREFIXES):
        return []
    prefix = HTTP_PREFIX if ref.startswith(HTTP_PREFIX) else PREFIX
    env = env or {}
    try:
        argv = shlex.split(ref[len(prefix) :])
    except ValueError as exc:
        raise LoadError(f"{ref!r}: the command line does not split ({exc})") from None
    if not argv:
        raise LoadError(f"{ref!r} names no command: use {prefix}COMMAND [ARGUMENTS...]")
    if prefix == HTTP_PREFIX and not any("{port}" in word for word in (*argv, *env.values())):
        raise LoadError(
            f"{ref!r} does not say where the server listens: put {{port}} where the command "
            "takes its port (mcp-http:my-server --port {port}), or in its environment "
            "(--axm-server-env=PORT={port}); the kit picks it"
        )
    return argv


def transport_of(ref: str, options: LoadOptions) -> Transport:
    """How the kit speaks to the server a reference names (see :class:`Transport`), the run's
    headers going with every HTTP request; :class:`LoadError` for a remote address that names
    no host, or a port that is no number, and with ``--axm-auth=local``, for a server the kit
    does not start, or one told nowhere where its ``{issuer}`` is."""
    local = options.auth == "local"
    if ref.startswith(HTTP_PREFIX):
        named = any("{issuer}" in word for word in (ref, *options.env.values()))
        if local and not named:
            raise LoadError(
                f"{ref!r} does not say where the server's authorization server is "
                "(--axm-auth=local): put {issuer} where the command takes its URL "
                "(mcp-http:my-server --issuer {issuer}), or in its environment "
                "(--axm-server-env=ISSUER={issuer}); the kit serves it"
            )
        return Transport(options.http_path, headers=options.headers, auth=local)
    if not ref.startswith(REMOTE_PREFIXES):
        return Transport()
    if local:
        raise LoadError(
            f"{ref!r} is a server someone else runs: --axm-auth=local points a server the kit "
            "starts (mcp-http:) at an authorization server the kit runs; give a remote "
            "server's token with --axm-server-token-env"
        )
    address = ref[len("mcp+") :]
    try:
        where = urllib.parse.urlsplit(address)
        where.port  # noqa: B018 (a port that is no number raises here)
    except ValueError as exc:
        raise LoadError(f"{ref!r}: {exc}: use mcp+http://HOST:PORT/PATH") from None
    if not where.hostname or where.query or where.fragment or where.username:
        raise LoadError(
            f"{ref!r} is not the address of an MCP endpoint: use mcp+http://HOST:PORT/PATH "
            "(or mcp+https://...), with no user, query or fragment (a token goes in the "
            "environment variable --axm-server-token-env names)"
        )
    return Transport(where.path or "/", f"{where.scheme}://{where.netloc}", headers=options.headers)


def server_named(command: list[str], transport: Transport) -> str:
    """A server as a report names it: its address, or its command line."""
    return transport.url() or shlex.join(command)


def server_env(options: LoadOptions) -> dict[str, str]:
    """A server's environment: the system's variables (PATH, the locale), the worker's
    throw-away home, and the run's own."""
    env = {name: os.environ[name] for name in SYSTEM_VARIABLES if name in os.environ}
    env.update(home_variables(os.environ.get("HOME", os.getcwd()), os.environ.get("TMPDIR")))
    env.update(options.env)
    return env


@dataclass(frozen=True)
class StartMemo:
    """What a run remembers of a server between its sessions, in a file of the run's memo
    directory: its first handshake, so that later sessions skip the version probe (which may
    cost a timeout, or a start, with a server that ignores it or breaks on it) and say what it
    met, and its slowest start, which the start allowance grows from. Cut off from the network
    or not, a server speaks the same version."""

    command: list[str]
    options: LoadOptions
    transport: Transport = STDIO

    def _file(self) -> str:
        if not self.options.memo:
            return ""
        served = [self.transport.path, self.transport.remote]
        key = canonical_json([self.command, dict(self.options.env), served])
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return os.path.join(self.options.memo, digest)

    def recall(self) -> tuple[Handshake | None, float]:
        """The server's first handshake (None when none is remembered), without its
        capabilities, and its slowest start, in seconds."""
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            with open(self._file(), encoding="utf-8") as memo:
                kept = json.load(memo)
            first = Handshake(kept["version"], {}, {}, kept["probe"], "", kept["ended_on_probe"])
            return first, float(kept["slowest"])
        return None, 0.0

    def remember(self, handshake: Handshake, took: float) -> None:
        """Remember the handshake and the start, ``took`` seconds, if the slowest."""
        kept = {
            "version": handshake.version,
            "probe": handshake.probe,
            "ended_on_probe": handshake.ended_on_probe,
            "slowest": max(self.recall()[1], took),
        }
        with contextlib.suppress(OSError), open(self._file(), "w", encoding="utf-8") as memo:
            json.dump(kept, memo)


@dataclass
class Connection:
    """The session the tools of one reference share, started again after the server died."""

    command: list[str]
    options: LoadOptions
    offline: bool = False  # the server cut off from the network (see _wire.cut_off)
    transport: Transport = STDIO
    session: Session | None = None
    handshake: Handshake | None = None
    # The working directory after the last call: what the next call's first look starts from.
    files: Snapshot | None = None
    # The files the server changed while no call ran, on its own (a log it keeps, a cache it
    # flushes): a change of one of them during a call is not the call's.
    changed_alone: set[str] = dataclasses.field(default_factory=set)
    # The texts the server's error path gave (isError results, error responses), to tell an
    # error reported as a success by its form, whichever of its tools gave them.
    error_texts: list[str] = dataclasses.field(default_factory=list)
    # The tools the server listed, by the key of their reference (see McpProtocol.load_ref).
    listed: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def open(self) -> Session:
        if self.session is None:
            session = self._unstarted()
            memo = StartMemo(self.command, self.options, self.transport)
            known, slowest = memo.recall()
            session.timeout = self.options.timeout
            session.start_allowance = start_allowance(self.options.timeout, slowest)
            started = time.monotonic()
            session.start()
            try:
                self.handshake = connect(session, known=known)
            except BaseException:
                session.close(grace=0.1)
                raise
            memo.remember(self.handshake, time.monotonic() - started)
            self.session = session
        return self.session

    def _unstarted(self) -> Session:
        # The server writes to the worker's stderr: what it said last is in a crash report.
        return Session(
            self.command,
            os.getcwd(),
            server_env(self.options),
            stderr_fd=_WORKER_STDERR,
            offline=self.offline,
            sandbox=self.options.sandbox,
            transport=self.transport,
        )

    def hidden(self, said: str) -> list[str]:
        """The paths the server's command or ``said`` name that its sandbox hides (see
        :meth:`Session.hidden`)."""
        return self._unstarted().hidden(said)

    def call(self, name: str, arguments: Any) -> Answer:
        """One ``tools/call``, and what the server wrote meanwhile that breaks the wire."""
        try:
            session = self.open()
        except WireError as exc:
            raise CallCrashed(f"the server did not start again: {exc}") from None
        problems, strays = len(session.problems), len(session.strays)
        params = {"name": name, "arguments": arguments}
        before = snapshot(session.cwd, self.files)
        if self.files is not None:
            self.changed_alone.update(change.path for change in self.files.changes(before))
        session.refused_writes()  # what it tried between calls is no call's
        session.canary_ran()
        temporary = session.private_temporary()
        try:
            response = session.request("tools/call", params, timeout=_CALL_WAIT)
        except Malformed as exc:
            self.close()
            raise CallCrashed(
                f"the answer could not be read: {exc}", stderr_tail(), kind="channel"
            ) from None
        except WireError as exc:
            self.close()
            raise CallCrashed(f"the server stopped serving: {exc}", stderr_tail()) from None
        after = self.files = snapshot(session.cwd, before)
        wire_errors = [*session.problems[problems:]]
        wrote = "sent data" if self.transport.over_http else "wrote a line to stdout"
        wire_errors += [
            f"{wrote} that is not a JSON-RPC message: {line!r}" for line in session.strays[strays:]
        ]
        return Answer(
            response,
            tuple(wire_errors),
            tuple(
                change for change in before.changes(after) if change.path not in self.changed_alone
            ),
            after.digest(),
            refused_writes=tuple(session.refused_writes()),
            left_temporary=tuple(sorted(session.private_temporary() - temporary)),
            canary_ran=session.canary_ran(),
        )

    def close(self) -> None:
        # How the server ends is judged by the server's own session (see probe): here it only
        # gets a moment to finish, then it is killed.
        if self.session is not None:
            self.session.close(grace=CLOSE_GRACE)
            self.session = None


def stderr_tail(size: int = 4096) -> str:
    """The end of the worker's stderr log, which the server writes to ("" when it is no
    file)."""
    try:
        return read_tail(_WORKER_STDERR, size)[1].decode("utf-8", "replace")
    except OSError:
        return ""


@dataclass(frozen=True)
class Answer:
    """A server's answer to one call: the JSON-RPC response, where the wire was broken, what
    the call changed in the server's working directory and the state it left there, the
    paths outside it whose write its sandbox refused, the files it left in its sandbox's
    private temporary directories, and the tokens the kit's canary program ran with there."""

    response: dict[str, Any]
    wire_errors: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    state: str = ""
    resembled_error: str = ""
    refused_writes: tuple[str, ...] = ()
    left_temporary: tuple[str, ...] = ()
    canary_ran: tuple[str, ...] = ()


class McpTool:
    """One tool a server lists, called through the session its reference shares.

    ``tool.call(arguments)`` sends ``tools/call`` and returns the response's ``result``, or its
    ``error``, as the server wrote it.
    """

    def __init__(self, connection: Connection, definition: dict[str, Any]) -> None:
        self._connection = connection
        self.definition = definition
        self._probed = False

    @property
    def name(self) -> Any:
        return self._member("name")

    @property
    def description(self) -> Any:
        return self._member("description")

    def _member(self, key: str) -> Any:
        # A member the definition lacks reads as missing, as an attribute an object lacks.
        if key not in self.definition:
            raise AttributeError(key)
        return self.definition[key]

    def call(self, arguments: Any) -> Any:
        """The result (or the JSON-RPC error) of one call, as the server wrote it."""
        response = self.answer(arguments).response
        return response.get("result", response.get("error"))

    @property
    def connection_options(self) -> LoadOptions:
        """How the server is started (its sandbox, its environment)."""
        return self._connection.options

    @property
    def transport(self) -> Transport:
        """How the server is spoken to."""
        return self._connection.transport

    @property
    def version(self) -> str:
        """The protocol version its server speaks ("" before it answered the handshake)."""
        handshake = self._connection.handshake
        return handshake.version if handshake is not None else ""

    @property
    def instructions(self) -> str:
        """What the server tells a client of all its tools ("" when nothing)."""
        handshake = self._connection.handshake
        return handshake.instructions if handshake is not None else ""

    def sibling(self, key: str) -> McpTool:
        """Another tool of the same listing, on the same session: ``key`` as in its reference
        (``mcp:COMMAND[KEY]``)."""
        return McpTool(self._connection, self._connection.listed[key])

    def answer(self, arguments: Any) -> Answer:
        return self._connection.call(self.definition.get("name", ""), arguments)

    @contextlib.contextmanager
    def offline(self) -> Iterator[None]:
        """Make the calls inside the block to a server of their own, started cut off from the
        network, and stopped after them."""
        shared = self._connection
        self._connection = Connection(
            shared.command,
            shared.options,
            offline=True,
            transport=shared.transport,
            error_texts=shared.error_texts,
        )
        try:
            yield
        finally:
            self._connection.close()
            self._connection = shared

    def connect(self) -> None:
        """Start the server again if it died; a server that does not start fails the call."""
        with contextlib.suppress(WireError):
            self._connection.open()

    def learn_errors(self) -> None:
        """Once, call the tool without its required arguments, a call known to fail, to learn
        the form of its error messages (not one of the calls the checks judge)."""
        schema = self.definition.get("inputSchema")
        required = schema.get("required") if isinstance(schema, dict) else None
        if self._probed or not required:
            return
        self._probed = True
        with contextlib.suppress(CallCrashed):
            self.remember(self.answer({}).response)

    def remember(self, response: dict[str, Any]) -> None:
        """Keep the text of an error answer (a few of them)."""
        text, kept = _error_text(response), self._connection.error_texts
        if text and text not in kept and len(kept) < _ERRORS_KEPT:
            kept.append(text)

    def resembled_error(self, response: dict[str, Any]) -> str:
        """The error text of the server whose form a success's only text takes, if any."""
        result = response.get("result")
        if not isinstance(result, dict) or result.get("isError") is True:
            return ""
        content = result.get("content")
        if not content or not all(
            isinstance(block, dict) and block.get("type") == "text" for block in content
        ):
            return ""
        text = "".join(str(block.get("text", "")) for block in content).strip()
        return next((error for error in self._connection.error_texts if _in_form(text, error)), "")

    def __repr__(self) -> str:
        return (
            f"<MCP tool {self.definition.get('name')!r} of "
            f"{server_named(self._connection.command, self._connection.transport)}>"
        )


def _error_text(response: dict[str, Any]) -> str:
    """The text of an answer that reports an error: an isError result's text, or an error
    response's message; "" for any other answer."""
    error = response.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "").strip()
    result = response.get("result")
    if not isinstance(result, dict) or result.get("isError") is not True:
        return ""
    blocks = result.get("content") or []
    return "".join(
        str(block.get("text", "")) for block in blocks if isinstance(block, dict)
    ).strip()


def _in_form(text: str, error: str) -> bool:
    """Whether ``text`` is the error message, or begins as it does: its text up to the first
    ': ' ("Error: ", "Error executing tool add: "), a lead its messages share."""
    lead, colon, _ = error.partition(": ")
    shared = lead + colon
    if colon and _MIN_FORM <= len(shared) <= _MAX_FORM:
        return text.startswith(shared)
    return text == error


@dataclass
class McpServer:
    """A server as a whole: described by a session of its own (see :func:`probe`)."""

    command: list[str]
    options: LoadOptions
    name: str = ""
    # Why its tools could not be listed at load ("" when they were).
    unreachable: str = ""
    transport: Transport = STDIO

    def __repr__(self) -> str:
        return f"<MCP server {server_named(self.command, self.transport)}>"


def listing(session: Session) -> tuple[list[dict[str, Any]], str]:
    """Every tool of a complete listing, and why it did not complete ("" when it did)."""
    tools: list[dict[str, Any]] = []
    cursor: Any = None
    for _ in range(_MAX_PAGES):
        reply = session.request("tools/list", {"cursor": cursor} if cursor is not None else {})
        result = reply.get("result")
        if not isinstance(result, dict):
            return tools, f"tools/list was answered with {canonical_json(reply.get('error'))}"
        listed = result.get("tools")
        if not isinstance(listed, list):
            return tools, f"tools/list answered {type(listed).__name__} tools, not a list"
        tools += [tool for tool in listed if isinstance(tool, dict)]
        cursor = result.get("nextCursor")
        if cursor is None:
            return tools, ""
    return (
        tools,
        f"tools/list still gave a next cursor after {_MAX_PAGES} pages: its pages end never",
    )
