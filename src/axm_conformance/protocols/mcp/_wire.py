"""MCP over stdio, on the wire: one server process, newline-delimited JSON-RPC, every spec version.

The kit speaks the protocol itself rather than through an SDK client, which would validate and
normalise what it receives (a non-JSON line on stdout handed to a log, a malformed tool dropping
the whole list): a conformance kit must see every byte the server writes. Every message the
server sends is validated against the official JSON Schema of the version the server speaks
(bundled, with its licence, under ``data/mcp``), an answer against the result of the method it
answers; the lines of stdout that are not JSON-RPC at all are kept.

Every published version is spoken. 2026-07-28 (the current one) is stateless:
``server/discover``, and the protocol version in every request's ``_meta``. The versions before
it are stateful: ``initialize``, then ``notifications/initialized``. Following the 2026-07-28
stdio page, the client probes with ``server/discover`` and falls back to ``initialize`` on any
other error or no answer, offering 2025-11-25 and accepting whichever published version the
server picks (the lifecycle page lets it answer with another version it supports).

Whatever bytes a server writes end in a message, a stray line or a problem kept, never in an
exception of the kit: a line that is not UTF-8, a string holding a lone UTF-16 surrogate, a
number no integer parser takes, a message nested deeper than a parser reads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from axm_conformance._process.system import _canary, _trace
from axm_conformance._process.system._platform import KIT_THREAD
from axm_conformance._process.system._sandbox import (
    PRIVATE_TEMPORARY,
    SANDBOX_INIT,
    Sandbox,
    can_cut_off,
    exit_status,
    read_by,
    stop,
    unseen,
    why_not_runnable,
)
from axm_conformance._process.system._tasks import TaskGroup
from axm_conformance.errors import AxmConformanceError
from axm_conformance.protocols.mcp._auth_probe import Discovered, discover
from axm_conformance.protocols.mcp._authority import Authority
from axm_conformance.protocols.mcp._http import (
    STDIO,
    Endpoint,
    Failed,
    HttpWire,
    Spoken,
    Transport,
    free_port,
)
from axm_conformance.protocols.mcp._lines import UNREADABLE, parse, shortened
from axm_conformance.protocols.mcp._schema import schema_errors
from axm_conformance.protocols.mcp._versions import (
    CLIENT_INFO,
    CURRENT,
    LEGACY,
    STATEFUL,
    current_meta,
)

__all__ = [
    "CannotStart",
    "Malformed",
    "NotAuthorized",
    "ServerGone",
    "Session",
    "WireError",
    "cut_off",
]

_METHOD_NOT_FOUND = -32601


class WireError(AxmConformanceError):
    """The server broke the transport: it died, hung, or wrote what is not a response."""


class ServerGone(WireError):
    """The server closed its stdin or stdout: it exited, or will answer nothing more."""


class NotAuthorized(WireError):
    """The server refused the kit's credentials: HTTP 401 or 403."""


class CannotStart(WireError):
    """The command cannot be run at all: no such program, or not an executable."""


class Malformed(WireError):
    """The server wrote a line meant as a message that no JSON parser reads: the answer awaited
    may be that line, so waiting on would only end in a timeout."""


# The result each method is answered with, by the official schemas' names.
_RESULTS = {
    "server/discover": "DiscoverResult",
    "initialize": "InitializeResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "ping": "EmptyResult",
}


def cut_off(argv: Sequence[str]) -> list[str]:
    """``argv`` run in a network namespace of its own, where no network, not even loopback, is
    up: through util-linux's ``unshare``, which a user without privileges may run in a user
    namespace of its own that maps only that user (so the server runs as the same user)."""
    why = can_cut_off()
    if why:
        raise CannotStart(why)
    alone = ["--user", "--map-current-user", "--net"]
    if sys.platform != "win32" and os.geteuid() == 0:
        alone = ["--net"]
    return ["unshare", *alone, "--", *argv]


@dataclass
class Session:
    """One running server, spoken to over its stdin and stdout, or over Streamable HTTP.

    ``problems`` says where a message the server wrote breaks the official schema of its
    version, ``strays`` keeps every line of stdout that is not a JSON-RPC message (a print, a
    log line, a banner). ``stderr`` keeps the end of what it wrote there, for reports.

    Over HTTP (see ``transport``), the server serves HTTP on loopback instead, at a port the
    kit picks and gives it as ``{port}`` in its command and environment; its sandbox's network
    is its own, reached through a relay (see ``_sandbox_init``); its stdout is a log, not the
    wire. A remote server is not started: the session only speaks to it.
    """

    argv: Sequence[str]
    cwd: str
    env: Mapping[str, str]
    timeout: float = 5.0
    # How long the server may take to start and answer initialize (None: ``timeout``): a first
    # start may fetch a package (npx, uvx) or load a runtime on a busy machine, which is no
    # failure to serve.
    start_allowance: float | None = None
    # Where the server's stderr goes: kept here (None: its last lines in ``stderr``), or a file
    # descriptor it writes to directly (the worker's own stderr, which a crash report shows).
    stderr_fd: int | None = None
    # Started in a network namespace of its own, where no network is reachable (see cut_off).
    offline: bool = False
    # The sandbox the server runs in (None: unconfined), cut off from the network when offline,
    # and what still ran in it when the server had exited (pid: command line, its own pids).
    sandbox: Sandbox | None = None
    survivors: dict[int, str] = field(default_factory=dict)
    _survivors_fd: int | None = None
    # Where a traced server's strace writes (a file in memory), and how far it was read.
    _trace_fd: int | None = None
    _trace_read: int = 0
    _refused_when_closed: list[str] = field(default_factory=list)
    _tasks: TaskGroup | None = None
    transport: Transport = STDIO
    # Who the kit says it is, at initialize and in each request's _meta (2026-07-28).
    client: dict[str, str] = field(default_factory=lambda: dict(CLIENT_INFO))
    _http: HttpWire | None = None
    _relay_dir: str = ""
    # A protected resource's authorization server (``{issuer}``), and what a client with no
    # token learned of the server (see _auth_probe): the session's token is minted from it.
    authority: Authority | None = None
    discovered: Discovered | None = None
    version: str = ""  # the protocol version spoken, once connected
    problems: list[str] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    _process: subprocess.Popen[bytes] | None = None
    _lines: queue.Queue[bytes | Failed | None] = field(default_factory=queue.Queue)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def start(self) -> Session:
        """Start the server, in its own session so that everything it starts can be ended (a
        remote server, already serving: connect to it)."""
        if self.transport.remote:
            self._connect(self.transport.endpoint())
            return self
        argv, env, endpoint = self._served_over()
        try:
            self._process = self._launched(argv, env, endpoint)
        except BaseException:
            self._forget_relay()  # no server came to use it
            raise
        # Over HTTP, stdout is a log: kept with stderr, for reports.
        reader = self._drain if endpoint is not None else self._read
        readers = [(reader, self._process.stdout), (self._drain, self._process.stderr)]
        for read, stream in readers:
            if stream is not None:
                name = f"{KIT_THREAD}server-{read.__name__.strip('_')}"
                threading.Thread(target=read, args=(stream,), name=name, daemon=True).start()
        if endpoint is not None:
            self._connect(endpoint)
        return self

    def _launched(
        self, argv: list[str], env: dict[str, str], endpoint: Endpoint | None
    ) -> subprocess.Popen[bytes]:
        """The server's process, started confined as the run asks."""
        passed: tuple[int, ...] = ()
        if self.sandbox is not None:
            argv, passed = self._sandboxed(argv, env, endpoint)
        elif self.offline:
            argv = cut_off(argv)
        if sys.platform == "win32":
            # CreateProcess looks for NAME.exe alone: `npx` is npx.cmd there, found by PATHEXT.
            argv[0] = shutil.which(argv[0]) or argv[0]
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if self.stderr_fd is None else self.stderr_fd,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
                pass_fds=passed,
            )
            if self._tasks is not None:
                self._tasks.admit(process)
        except OSError as exc:
            raise CannotStart(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        finally:
            for fd in passed:
                if fd != self._trace_fd:
                    os.close(fd)
        return process

    def _served_over(self) -> tuple[list[str], dict[str, str], Endpoint | None]:
        """The command and environment the server starts with, and the endpoint it serves over
        HTTP (None over stdio): the port picked given as ``{port}``, the relay's socket in a
        directory of its own, which the sandbox lets it write."""
        argv, env = list(self.argv), dict(self.env)
        if not self.transport.over_http:
            return argv, env, None
        if self.sandbox is None:
            raise CannotStart(
                "a server served over HTTP is certified in the sandbox (bubblewrap), which "
                "cuts it off from the network and still reaches it: this run has none"
            )
        port = free_port()
        given = {"{port}": str(port)}
        self._relay_dir = tempfile.mkdtemp(prefix="axm-http-")
        relay = os.path.join(self._relay_dir, "relay")
        if self.transport.auth:
            # Ports of the sandbox's own loopback: any but the server's.
            issuer = free_port(port)
            self.authority = Authority(self._relay_dir, issuer, free_port(port, issuer))
            self.authority.upstream_given = any("{upstream}" in w for w in [*argv, *env.values()])
            given |= {"{issuer}": self.authority.issuer, "{upstream}": self.authority.upstream}
        argv = _given(argv, given)
        env = dict(zip(env, _given(list(env.values()), given), strict=True))
        return argv, env, self.transport.endpoint(port, relay)

    def _sandboxed(
        self, argv: list[str], env: dict[str, str], endpoint: Endpoint | None
    ) -> tuple[list[str], tuple[int, ...]]:
        """``argv`` run in the server's sandbox, under its first process (which says what
        outlived the server, passes the trace on and relays HTTP), and the descriptors to pass."""
        assert self.sandbox is not None
        sandbox = dataclasses.replace(self.sandbox, network=False) if self.offline else self.sandbox
        # Inside, a command that cannot run would be a server that exits at once: it is
        # refused here, as Popen refuses it unconfined.
        unrunnable = why_not_runnable(argv[0], self.cwd, env)
        if unrunnable:
            raise CannotStart(f"cannot start {argv[0]!r}: {unrunnable}")
        self._survivors_fd, told = os.pipe()
        passed: tuple[int, ...] = (told,)
        options: list[str] = []
        tracing: list[str] = []
        if sandbox.tracer and sys.platform == "linux":
            # Read by the kit at its own pace: strace never waits for it, as on a pipe.
            self._trace_fd = os.memfd_create("axm-conformance-trace", 0)
            passed += (self._trace_fd,)
            options += ["--traced", str(self._trace_fd)]
            tracing = _trace.command(sandbox.tracer, self._trace_fd)
        if endpoint is not None:
            options += ["--relay", endpoint.relay, str(endpoint.port)]
        for port, path in self.authority.sockets if self.authority is not None else ():
            options += ["--serve", str(port), path]
        argv = [sys.executable, "-I", SANDBOX_INIT, str(told), *options, "--", *tracing, *argv]
        self._tasks = TaskGroup.make()
        writable = [self.cwd, *([self._relay_dir] if self._relay_dir else [])]
        return sandbox.command(
            argv, writable, read_by(argv, env), tasks=self._tasks, marked=False
        ), passed

    def _forget_relay(self) -> None:
        if self.authority is not None:
            self.authority.close()
            self.authority = None
        if self._relay_dir:
            shutil.rmtree(self._relay_dir, ignore_errors=True)
            self._relay_dir = ""

    def _connect(self, endpoint: Endpoint) -> None:
        """Speak HTTP to the server once its endpoint answers, within its start allowance."""
        self._http = HttpWire(endpoint, self._lines.put, self._ended, problems=self.problems)
        allowance = self.timeout if self.start_allowance is None else self.start_allowance
        unanswered = self._http.answers(time.monotonic() + allowance)
        if unanswered:
            self.close(grace=0.1)
            raise CannotStart(f"{self.transport.url() or shlex.join(self.argv)}: {unanswered}")
        if self.authority is not None:
            # As a client does: asked without a token, then with one for the resource and the
            # scopes the server named.
            self.discovered = discover(self._http.endpoint, self.timeout)
            token = self.authority.token(self.discovered.audience, self.discovered.scopes)
            endpoint = self._http.endpoint
            headers = (*endpoint.headers, ("Authorization", f"Bearer {token}"))
            self._http.endpoint = dataclasses.replace(endpoint, headers=headers)

    def _token_said(self) -> str:
        """What the token a refused request carried was, when the kit's authorization server
        issued it ("" otherwise)."""
        if self.discovered is None:
            return ""
        scopes = " ".join(self.discovered.scopes) or "none"
        named = (
            ""
            if self.discovered.scopes
            else (
                ", as it names none in its challenge or its protected resource metadata "
                "(scopes_supported), where a client finds which to ask for (authorization, Scope "
                "Selection Strategy)"
            )
        )
        return (
            f"; the token was its authorization server's (--axm-auth=local), for "
            f"{self.discovered.audience}, with the scopes {scopes}{named}"
        )

    def spoken_over(self) -> Spoken | None:
        """How the session speaks HTTP; None over stdio or before it connected."""
        return None if self._http is None else self._http.spoken()

    def _ended(self) -> str | None:
        """How the server ended (" (it exited with status N)", "" when unknown), or None while
        it runs."""
        if self._process is None or self._process.poll() is None:
            return None
        return self._exit_note()

    def _read(self, stream: Any) -> None:
        for line in iter(stream.readline, b""):
            self._lines.put(line)
        self._lines.put(None)  # end of stdout: the server closed it or died

    def _drain(self, stream: Any) -> None:
        for line in iter(stream.readline, b""):
            self.stderr.append(shortened(line.decode("utf-8", "replace").rstrip("\n")))
            del self.stderr[:-40]

    def restart(self) -> None:
        """Start the server again, after it ended: what it wrote before is kept."""
        self.close(grace=0.1)
        self._lines = queue.Queue()
        self.start()

    def send(self, message: dict[str, Any]) -> None:
        try:
            data = (json.dumps(message, ensure_ascii=False) + "\n").encode()
        except UnicodeEncodeError:
            # A lone surrogate in an input is no UTF-8: JSON carries it as an escape.
            data = (json.dumps(message) + "\n").encode()
        if self._http is not None:
            self._http.version = self.version
            self._http.send(message, data)
            return
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(data)
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError):
            assert self._process is not None
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(1.0)
            raise ServerGone(f"the server closed its stdin{self._exit_note()}") from None

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request and return its response message (with ``result`` or ``error``).

        Requests of the 2026-07-28 era carry the protocol version in ``_meta``. Whatever else
        arrives meanwhile is kept; a request from the server is answered (``ping`` with an
        empty result, anything else as an unknown method).
        """
        request_id = next(self._ids)
        params = dict(params or {})
        if self.version == CURRENT:
            params["_meta"] = {**params.get("_meta", {}), **current_meta(self.client)}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        # The probe is written in the current version, whatever the server turns out to speak.
        version = CURRENT if method == "server/discover" else self.version or LEGACY
        while True:
            message = self._next(deadline, method, request_id, wait)
            if message.get("id") == request_id and "method" not in message:
                if method == "initialize":
                    version = _chosen(message)  # its answer is written in the version it picks
                self._validate(version, method, message)
                return message
            if "method" in message:
                kind = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
                self._validate(version, message["method"], message, kind)
                if "id" in message:
                    self._answer(message)
            elif not _answers_a_request(message.get("id"), request_id):
                self.problems.append(
                    f"wrote a response to no request during {method} (id "
                    f"{json.dumps(message.get('id'))}): a notification gets none (JSON-RPC 2.0: "
                    '"The Server MUST NOT reply to a Notification")'
                )
            else:
                self._validate(version, method, message, "JSONRPCResponse")

    def _validate(self, version: str, method: Any, message: dict[str, Any], kind: str = "") -> None:
        """Keep where ``message`` breaks the schema: as an answer to ``method`` (a result of
        its kind, or an error response), or else as a message of the ``kind`` given."""
        if kind:
            where, errors = f"a {kind} during {method}", schema_errors(version, kind, message)
        elif "error" in message:
            where, errors = (
                f"the error answering {method}",
                schema_errors(version, "JSONRPCErrorResponse", message),
            )
        else:
            where = f"the answer to {method}"
            errors = schema_errors(version, "JSONRPCResultResponse", message)
            if method in _RESULTS and isinstance(message.get("result"), dict):
                errors += [
                    error.replace("$", "$.result", 1)
                    for error in schema_errors(version, _RESULTS[method], message["result"])
                ]
        self.problems.extend(f"{where} breaks the {version} schema: {e}" for e in errors)

    def _next(self, deadline: float, method: str, awaited: int, wait: float) -> dict[str, Any]:
        """The next JSON-RPC message the server writes; stray lines are kept on the way.

        A line meant as a message that no parser reads is the answer awaited when it names its
        id; one that names none may be it: the wait then shortens to a grace, after which that
        line, not silence, is what the server is blamed for."""
        unreadable = ""
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                if unreadable:
                    raise Malformed(
                        f"the server wrote a message no JSON parser reads during {method}, "
                        f"and nothing after it: {unreadable!r}"
                    ) from None
                raise WireError(
                    f"no answer to {method} within {wait:g} s{self._exit_note()}"
                ) from None
            if isinstance(line, Failed):
                if line.ended:
                    raise ServerGone(line.text)
                if line.status in (401, 403):
                    raise NotAuthorized(line.text + self._token_said())
                raise WireError(line.text)
            if line is None:
                self._lines.put(None)  # stays at the end for the next reader
                assert self._process is not None
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(1.0)  # closing stdout is how a process ends, mostly
                raise ServerGone(f"the server closed stdout during {method}{self._exit_note()}")
            message, text, troubles = parse(line)
            self.problems.extend(f"{trouble} (during {method})" for trouble in troubles)
            # A message of another JSON-RPC version is still the server's message, which the
            # schema then finds wrong.
            if isinstance(message, dict) and "jsonrpc" in message:
                return message
            if message is UNREADABLE:
                unreadable = shortened(text)
                if re.search(rf'"id"\s*:\s*{awaited}\b', text):
                    raise Malformed(
                        f"the server answered {method} with a message no JSON parser reads: "
                        f"{unreadable!r}"
                    )
                grace = max(_UNREADABLE_GRACE, self.timeout / 2)
                deadline = min(deadline, time.monotonic() + grace)
            if text.strip():
                self.strays.append(shortened(text))

    def _answer(self, request: dict[str, Any]) -> None:
        if request.get("method") == "ping":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        else:
            error = {"code": _METHOD_NOT_FOUND, "message": "the kit offers no client features"}
            self.send({"jsonrpc": "2.0", "id": request["id"], "error": error})

    def _exit_note(self) -> str:
        code = None if self._process is None else self._exit_status(self._process.poll())
        return "" if code is None else f" (it exited with status {code})"

    def close(self, grace: float = 2.0) -> tuple[bool, int | None]:
        """Close stdin, as the stdio transport ends a session: whether the server exited within
        ``grace`` seconds, and its exit status. One that did not is killed, with its group."""
        process = self._process
        if self._http is not None:
            # Over HTTP a session ends with DELETE, and a server the kit started when it is
            # told to stop.
            self._http.close()
            self._http = None
            if process is not None:
                stop(process)
            self._forget_relay()
        if process is None:
            return True, None
        with contextlib.suppress(OSError, ValueError):
            assert process.stdin is not None
            process.stdin.close()
        try:
            return True, self._exit_status(process.wait(grace))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                process.kill()
            process.wait()
            return False, self._exit_status(process.returncode)
        finally:
            self._read_survivors()
            if self._tasks is not None:
                self._tasks.remove()
            if self._trace_fd is not None:
                self._refused_when_closed = self.refused_writes()
                os.close(self._trace_fd)
                self._trace_fd = None

    def hidden(self, *said: str) -> list[str]:
        """The paths its command, or what it ``said`` (a failure, its stderr), name that exist
        on this machine but that its sandbox hides (none unconfined): see :func:`unseen`."""
        if self.sandbox is None:
            return []
        return unseen((*self.argv, *said), [self.cwd, *read_by(self.argv, self.env)])

    def private_temporary(self) -> set[str]:
        """The entries of the sandbox's private temporary directories now, by the path the
        server sees (none unconfined): read through the root of the sandbox's first process,
        which the worker outside can see."""
        root = self._sandbox_root()
        found: set[str] = set()
        for directory in PRIVATE_TEMPORARY if root else ():
            with contextlib.suppress(OSError):
                found.update(os.path.join(directory, name) for name in os.listdir(root + directory))
        return found

    def canary_ran(self) -> tuple[str, ...]:
        """The tokens the kit's canary program ran with in the server's sandbox since this was
        last asked (none unconfined: see _canary)."""
        root = self._sandbox_root()
        return _canary.ran(root) if root else ()

    def _sandbox_root(self) -> str:
        """``/proc/PID/root`` of the sandbox's first process ("" unconfined, or once it ended)."""
        if self.sandbox is None or self._process is None or self._process.poll() is not None:
            return ""
        pid = self._process.pid
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                first = children.read().split()[:1]
        except OSError:
            return ""
        return f"/proc/{first[0]}/root" if first else ""

    def refused_writes(self) -> list[str]:
        """The paths outside its working and temporary directories whose write the sandbox
        refused the server since this was last asked (none when it is not traced)."""
        if self._trace_fd is None or sys.platform == "win32":  # a sandbox is Linux's
            found, self._refused_when_closed = self._refused_when_closed, []
            return found
        written = os.fstat(self._trace_fd).st_size
        data = os.pread(self._trace_fd, written - self._trace_read, self._trace_read)
        complete = data[: data.rfind(b"\n") + 1]
        self._trace_read += len(complete)
        lines = complete.decode("utf-8", "replace").splitlines()
        allowed = [self.cwd, *PRIVATE_TEMPORARY]
        allowed += [self.env[name] for name in ("HOME", "TMPDIR") if self.env.get(name)]
        return _trace.refused_writes(lines, allowed, self.cwd)

    def _read_survivors(self) -> None:
        """What the sandbox's init said still ran when the server had exited (nothing when the
        sandbox was killed first)."""
        if self._survivors_fd is None:
            return
        with os.fdopen(self._survivors_fd, "rb") as told:
            self._survivors_fd = None
            for line in told.read().decode("utf-8", "replace").splitlines():
                pid, _, command = line.partition(" ")
                if pid.isdigit():
                    self.survivors[int(pid)] = command

    def _exit_status(self, status: int | None) -> int | None:
        """The server's exit status as its own process would give it (see exit_status)."""
        if status is None or self.sandbox is None:
            return status
        return exit_status(status)


# How long an answer may still come after a line meant as a message that no parser reads.
_UNREADABLE_GRACE = 0.5


def _given(words: list[str], given: dict[str, str]) -> list[str]:
    """``words`` with each placeholder of ``given`` replaced by its value."""
    for placeholder, value in given.items():
        words = [word.replace(placeholder, value) for word in words]
    return words


def _answers_a_request(answered: Any, last: int) -> bool:
    """Whether a response's id is one of a request the kit sent (numbered 1 to ``last``): a
    late answer to an earlier one is, an id of null or of nothing sent is not."""
    return type(answered) is int and 1 <= answered <= last


def _chosen(message: dict[str, Any]) -> str:
    """The version an initialize answer picks, where it is a published one (else LEGACY)."""
    result = message.get("result")
    chosen = result.get("protocolVersion") if isinstance(result, dict) else None
    return chosen if chosen in STATEFUL else LEGACY
