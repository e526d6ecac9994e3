"""MCP servers over stdio: ``mcp:COMMAND``, in any language, spoken to on the wire.

A reference ``mcp:COMMAND`` (split with :mod:`shlex`) names a server and every tool it lists;
``mcp:COMMAND[TOOL]`` one of them. The server starts in the worker's throw-away working directory
(where the run's worker files are copied), as the worker's user, with an environment of
``PATH``, ``LANG``, the throw-away ``HOME`` and what the run adds (``--axm-mcp-env``): nothing
else of the kit's environment reaches it.

The tools of one reference share one session, which starts again after the server died. The
server as a whole is described by a session of its own (:func:`probe`): its handshake, two
listings, what it wrote, and how it ended when its input closed; then, started again, how it ends
after one call of each of its tools. That description is the subject of the server-level checks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from axm_conformance._observation import (
    CallableInfo,
    Policy,
    ResultFacts,
    ResultModel,
    ServerFacts,
    SubjectInfo,
    canonical_json,
    last_said,
)
from axm_conformance._process.parent._channel import read_tail
from axm_conformance._process.system._platform import SYSTEM_VARIABLES, home_variables
from axm_conformance._process.system._proctable import table
from axm_conformance._process.system._sweep import live_descendants
from axm_conformance._workdir import Change, Snapshot, snapshot
from axm_conformance.protocols._base import (
    CallCrashed,
    Cleanups,
    Loaded,
    LoadError,
    LoadOptions,
    ToolProtocol,
    result_facts,
)
from axm_conformance.protocols._mcp_wire import (
    CannotStart,
    Handshake,
    Session,
    WireError,
    connect,
)

__all__ = ["McpProtocol", "McpServer", "McpTool", "probe"]

PREFIX = "mcp:"
# The kit's own variables a server may see: where programs are, and the locale.
# A listing that still gives a next cursor after this many pages does not end.
_MAX_PAGES = 100
# The stdio transport's grace for a server whose input closed (the spec's "reasonable time").
_EXIT_GRACE = 2.0
_CLOSE_GRACE = 0.5
# A call is bounded by the worker's timeout, which kills the worker and its server: the session
# itself waits for as long as that allows.
_CALL_WAIT = 24 * 3600.0
# The JSON-RPC error for a request whose parameters are not what the method takes.
_INVALID_PARAMS = -32602
# Error texts kept per tool, and the length of what they share that counts as their form.
_ERRORS_KEPT = 20
_MIN_FORM, _MAX_FORM = 6, 60
# The worker's standard error, a log file whose end a crash report shows.
_WORKER_STDERR = 2
# The type name of an answer that is a JSON-RPC error response instead of a result.
JSON_RPC_ERROR = "JSON-RPC error"


def command_of(ref: str) -> list[str]:
    """The command line an ``mcp:`` reference names; :class:`LoadError` when it names none."""
    try:
        argv = shlex.split(ref[len(PREFIX) :])
    except ValueError as exc:
        raise LoadError(f"{ref!r}: the command line does not split ({exc})") from None
    if not argv:
        raise LoadError(f"{ref!r} names no command: use mcp:COMMAND [ARGUMENTS...]")
    return argv


def server_env(options: LoadOptions) -> dict[str, str]:
    """A server's environment: the system's variables (PATH, the locale), the worker's
    throw-away home, and the run's own."""
    env = {name: os.environ[name] for name in SYSTEM_VARIABLES if name in os.environ}
    env.update(home_variables(os.environ.get("HOME", os.getcwd()), os.environ.get("TMPDIR")))
    env.update(options.env)
    return env


@dataclass
class _Connection:
    """The session the tools of one reference share, started again after the server died."""

    command: list[str]
    options: LoadOptions
    offline: bool = False  # the server cut off from the network (see _mcp_wire.cut_off)
    session: Session | None = None
    handshake: Handshake | None = None
    # The working directory after the last call: what the next call's first look starts from.
    files: Snapshot | None = None
    # The texts the server's error path gave (isError results, error responses), to tell an
    # error reported as a success by its form, whichever of its tools gave them.
    error_texts: list[str] = dataclasses.field(default_factory=list)
    # The tools the server listed, by the key of their reference (see McpProtocol.load_ref).
    listed: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    def open(self) -> Session:
        if self.session is None:
            # The server writes to the worker's stderr: what it said last is in a crash report.
            session = Session(
                self.command,
                os.getcwd(),
                server_env(self.options),
                stderr_fd=_WORKER_STDERR,
                offline=self.offline,
                sandbox=self.options.sandbox,
            )
            session.timeout = self.options.timeout
            session.start()
            try:
                self.handshake = connect(session)
            except BaseException:
                session.close(grace=0.1)
                raise
            self.session = session
        return self.session

    def call(self, name: str, arguments: Any) -> _Answer:
        """One ``tools/call``, and what the server wrote meanwhile that breaks the wire."""
        try:
            session = self.open()
        except WireError as exc:
            raise CallCrashed(f"the server did not start again: {exc}") from None
        problems, strays = len(session.problems), len(session.strays)
        params = {"name": name, "arguments": arguments}
        before = snapshot(session.cwd, self.files)
        try:
            response = session.request("tools/call", params, timeout=_CALL_WAIT)
        except WireError as exc:
            self.close()
            raise CallCrashed(f"the server stopped serving: {exc}", _stderr_tail()) from None
        after = self.files = snapshot(session.cwd, before)
        wire_errors = [*session.problems[problems:]]
        wire_errors += [
            f"wrote a line to stdout that is not a JSON-RPC message: {line!r}"
            for line in session.strays[strays:]
        ]
        return _Answer(response, tuple(wire_errors), before.changes(after), after.digest())

    def close(self) -> None:
        # How the server ends is judged by the server's own session (see probe): here it only
        # gets a moment to finish, then it is killed.
        if self.session is not None:
            self.session.close(grace=_CLOSE_GRACE)
            self.session = None


def _stderr_tail(size: int = 4096) -> str:
    """The end of the worker's stderr log, which the server writes to ("" when it is no
    file)."""
    try:
        return read_tail(_WORKER_STDERR, size)[1].decode("utf-8", "replace")
    except OSError:
        return ""


@dataclass(frozen=True)
class _Answer:
    """A server's answer to one call: the JSON-RPC response, where the wire was broken, what
    the call changed in the server's working directory and the state it left there."""

    response: dict[str, Any]
    wire_errors: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    state: str = ""
    resembled_error: str = ""


class McpTool:
    """One tool a server lists, called through the session its reference shares.

    ``tool.call(arguments)`` sends ``tools/call`` and returns the response's ``result``, or its
    ``error``, as the server wrote it.
    """

    def __init__(self, connection: _Connection, definition: dict[str, Any]) -> None:
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
    def instructions(self) -> str:
        """What the server tells a client of all its tools ("" when nothing)."""
        handshake = self._connection.handshake
        return handshake.instructions if handshake is not None else ""

    def sibling(self, key: str) -> McpTool:
        """Another tool of the same listing, on the same session: ``key`` as in its reference
        (``mcp:COMMAND[KEY]``)."""
        return McpTool(self._connection, self._connection.listed[key])

    def answer(self, arguments: Any) -> _Answer:
        return self._connection.call(self.definition.get("name", ""), arguments)

    @contextlib.contextmanager
    def offline(self) -> Iterator[None]:
        """Make the calls inside the block to a server of their own, started cut off from the
        network, and stopped after them."""
        shared = self._connection
        self._connection = _Connection(
            shared.command, shared.options, offline=True, error_texts=shared.error_texts
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
            f"<MCP tool {self.definition.get('name')!r} of {shlex.join(self._connection.command)}>"
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

    def __repr__(self) -> str:
        return f"<MCP server {shlex.join(self.command)}>"


def _listing(session: Session) -> tuple[list[dict[str, Any]], str]:
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


def _unknown_tool_answer(session: Session, listed: set[str]) -> str:
    """How the server answers a call of a tool it does not list: "" for the error the spec
    gives it (invalid params), else what it answered."""
    name = next(
        f"no-such-tool-{n}" for n in range(len(listed) + 1) if f"no-such-tool-{n}" not in listed
    )
    try:
        reply = session.request("tools/call", {"name": name, "arguments": {}})
    except WireError as exc:
        return f"a call of the unlisted tool {name!r} was not answered: {exc}"
    error = reply.get("error")
    if isinstance(error, dict) and error.get("code") == _INVALID_PARAMS:
        return ""
    result = reply.get("result")
    if error is not None:
        what = f"the error {canonical_json(error)[:200]}"
    else:
        # What a client reads of a result: whether it failed, and its content.
        if isinstance(result, dict):
            result = {key: result[key] for key in ("isError", "content") if key in result}
        what = f"the result {canonical_json(result)[:200]}"
    return f"a call of the unlisted tool {name!r} was answered with {what}"


def probe(server: McpServer) -> ServerFacts:
    """Start the server in a session of its own and observe it whole: the handshake, two
    listings, every line it wrote, and how it ended when its input closed; then, if it exited,
    how it ends after one call of each tool it listed (see :func:`_closed_after_calls`)."""
    before = set(live_descendants(os.getpid()))
    session = Session(
        server.command,
        os.getcwd(),
        server_env(server.options),
        sandbox=server.options.sandbox,
    )
    session.timeout = server.options.timeout
    try:
        session.start()
    except WireError as exc:
        return ServerFacts(started=str(exc))
    started = time.monotonic()
    handshake: Handshake | None = None
    unknown_tool = ""
    listings: list[tuple[str, ...]] = []
    listing_error = ""
    tools: list[dict[str, Any]] = []
    try:
        handshake = connect(session)
        seconds = time.monotonic() - started
        for _ in range(2):
            tools, listing_error = _listing(session)
            if listing_error:
                break
            listings.append(tuple(str(tool.get("name")) for tool in tools))
        unknown_tool = _unknown_tool_answer(session, {str(tool.get("name")) for tool in tools})
    except WireError as exc:
        seconds = time.monotonic() - started
        if handshake is not None:
            listing_error = f"listing the tools: {exc}"
        failure = str(exc)
    else:
        failure = ""
    # The server's children, while they are still its own (see live_descendants).
    running = set(live_descendants(os.getpid())) - before
    exited, _ = session.close(grace=_EXIT_GRACE)
    left = {**_left_behind(before, running), **session.survivors}
    # A server that already lingers fresh would only cost another grace to say so again.
    after = _AfterCalls()
    if exited and tools:
        after = _closed_after_calls(server, tools, named=set(left.values()))
    return ServerFacts(
        started=failure if handshake is None else "",
        version=handshake.version if handshake else "",
        probe=handshake.probe if handshake else "",
        seconds=seconds,
        capabilities=handshake.capabilities if handshake else {},
        listings=tuple(listings),
        listing_error=listing_error,
        unknown_tool=unknown_tool,
        strays=tuple(session.strays),
        message_errors=tuple(session.problems),
        exit_grace=_EXIT_GRACE,
        exited=exited,
        leftovers=_said(left),
        stderr_tail="\n".join(session.stderr[-20:]),
        called=after.called,
        exited_after_calls=after.exited,
        leftovers_after_calls=after.leftovers,
        calls_ended=after.ended,
    )


@dataclass(frozen=True)
class _AfterCalls:
    """How a server ended when closed after one call of each tool: see :class:`ServerFacts`."""

    called: tuple[str, ...] = ()
    exited: bool | None = None
    leftovers: tuple[str, ...] = ()
    ended: str = ""


def _closed_after_calls(
    server: McpServer, tools: list[dict[str, Any]], named: set[str]
) -> _AfterCalls:
    """Start the server again, call each tool once with a valid input, and close its stdin: a
    tool may leave running what keeps the server from exiting (a thread, a child). A process
    left behind whose command line is ``named`` already (left by a fresh session) is not said
    again.

    Each call is bounded by the server's timeout; one that is not answered, or that ends the
    server, ends the session, which is then not judged by how it ends."""
    inputs: dict[str, Any] = {}
    for tool in tools:
        inputs.setdefault(str(tool.get("name")), _valid_input(tool.get("inputSchema")))
    before = set(live_descendants(os.getpid()))
    session = Session(
        server.command,
        os.getcwd(),
        server_env(server.options),
        sandbox=server.options.sandbox,
    )
    session.timeout = server.options.timeout
    called: list[str] = []
    ended = ""
    try:
        session.start()
        connect(session)
    except WireError as exc:
        ended = f"the server did not answer the handshake again: {exc}"
    else:
        for name, arguments in inputs.items():
            try:
                session.request("tools/call", {"name": name, "arguments": arguments})
            except WireError as exc:
                shown = canonical_json(arguments)[:200]
                ended = f"calling {name} with {shown} ended the session: {exc}"
                break
            called.append(name)
    running = set(live_descendants(os.getpid())) - before
    exited, _ = session.close(grace=_CLOSE_GRACE if ended else _EXIT_GRACE)
    # Whatever it left is ended either way; a server killed on a hung call is not to blame.
    left = {**_left_behind(before, running), **session.survivors}
    if ended:
        return _AfterCalls(tuple(called), ended=ended)
    new = {pid: line for pid, line in left.items() if line not in named}
    return _AfterCalls(tuple(called), exited, _said(new))


def _valid_input(schema: Any) -> dict[str, Any]:
    """The first of the kit's boundary inputs of ``schema`` (its required properties, each with
    its simplest value); {} when it gives no object."""
    # Not boundary_inputs, which also builds the schema's Hypothesis strategies: in the worker's
    # fresh directory, with no Hypothesis cache, that takes seconds. Imported here, so that only
    # a worker that probes a server with tools imports Hypothesis: the one that describes, which
    # then has more than one subject and certifies none of them.
    from axm_conformance._strategies._boundaries import Boundaries
    from axm_conformance._strategies._document import Document

    try:
        examples = Boundaries(Document(schema)).examples
    except ValueError:  # an invalid or unsatisfiable schema, which its own checks report
        return {}
    first = examples[0].value if examples else {}
    return first if isinstance(first, dict) else {}


def _left_behind(before: set[int], running: set[int]) -> dict[int, str]:
    """The processes started since ``before`` that still run once the server is gone (those
    ``running`` before it was closed among them), each with its command line: each is
    killed."""
    # What a server's children do on its exit takes a moment; a child that exits on its own
    # meanwhile was not left behind.
    deadline = time.monotonic() + 0.5
    while True:
        left = {
            pid: line
            for pid, line in live_descendants(os.getpid(), running).items()
            if pid not in before
        }
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    table().kill(list(left))
    return left


def _said(left: dict[int, str]) -> tuple[str, ...]:
    """Processes left behind, each as its pid and command line."""
    return tuple(f"pid {pid}: {line}" for pid, line in left.items())


class McpProtocol(ToolProtocol):
    name = "mcp"
    title = "MCP"
    capabilities = frozenset({"description", "output-schema", "json-rpc", "behaviour-hints"})
    ref_prefix = PREFIX
    detection_order = 60
    result = ResultModel(
        "tool-result",
        {"content": ("list",), "structuredContent": ("dict",), "isError": ("bool",)},
        structured_field="structuredContent",
        success=("isError", False),
        error_type=JSON_RPC_ERROR,
    )
    # Input validation errors are tool execution errors (an isError result the model reads, in
    # both versions), or the JSON-RPC error "invalid params"; an exception in a server stays in
    # its process, so there is no exception rule.
    policy = Policy(
        exception="domain",
        invalid="json-rpc",
        name_rule=r"[A-Za-z0-9._-]{1,128}",
        description_required=False,
        no_determinism=(
            "determinism is not part of MCP: a server's tools answer from a world that may "
            "change between two calls"
        ),
    )
    call_snippet = "tool.call({input})"
    hints = {
        "no-error-response": (
            "report a failure as a result with isError: true, whose content says what went "
            "wrong: the model reads it, while a JSON-RPC error reaches only the client"
        ),
        "structured-content-mirrored": (
            "also return the structured content serialised as JSON in a text block, for "
            "clients that read only the content"
        ),
    }
    callable_name = "tools/call"

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return isinstance(obj, McpTool | McpServer)

    @classmethod
    def load_ref(cls, ref: str, options: LoadOptions, cleanups: Cleanups | None) -> Loaded:
        """The server and every tool it lists; a server that cannot be spoken to is only the
        server (whose checks say why). A command that cannot be run is a :class:`LoadError`."""
        command = command_of(ref)
        server = McpServer(command, options)
        connection = _Connection(command, options)
        if cleanups is not None:
            cleanups.append(connection.close)
        try:
            session = connection.open()
            tools, _ = _listing(session)
        except CannotStart as exc:
            raise LoadError(f"{ref!r}: {exc}") from None
        except WireError as exc:
            server.unreachable = f"{exc}{last_said(_stderr_tail())}"
            return [(ref, server, cls.name)]
        handshake = connection.handshake
        assert handshake is not None
        server.name = str(handshake.server_info.get("name") or "")
        loaded: Loaded = [(ref, server, cls.name)]
        seen: dict[str, int] = {}
        for tool in tools:
            # Two tools of one name (a defect name-unique reports) each keep a reference.
            name = str(tool.get("name"))
            seen[name] = seen.get(name, 0) + 1
            key = name if seen[name] == 1 else f"{name}#{seen[name]}"
            connection.listed[key] = tool
            loaded.append((f"{ref}[{key}]", McpTool(connection, tool), cls.name))
        return loaded

    @classmethod
    def unlisted(cls, obj: Any) -> str:
        if isinstance(obj, McpServer) and obj.unreachable:
            return f"it could not be asked for its tools: {obj.unreachable}"
        return ""

    def describe(self) -> SubjectInfo:
        if isinstance(self.obj, McpServer):
            started = time.perf_counter()
            facts = probe(self.obj)
            return self._described_server(
                dataclasses.replace(facts, duration=time.perf_counter() - started)
            )
        definition: dict[str, Any] = self.obj.definition
        schema = definition.get("inputSchema")
        return self._info(
            variant="",
            input_schema=schema,
            schema_source="declared" if "inputSchema" in definition else "",
            schema_error="" if "inputSchema" in definition else "the tool has no inputSchema",
            output_schema=definition.get("outputSchema"),
            call_style="dict",
            callable=_TOOLS_CALL,
            annotations=dict(definition.get("annotations") or {}),
            instructions=self.obj.instructions,
        )

    def _described_server(self, facts: ServerFacts) -> SubjectInfo:
        return SubjectInfo(
            ref=self.ref,
            protocol=self.name,
            protocol_title=self.title,
            capabilities=self.capabilities,
            variant="server",
            name=self.obj.name or shlex.join(self.obj.command),
            name_type="str",
            description=None,
            description_type="missing",
            input_schema=None,
            schema_source="",
            schema_error="",
            output_schema=None,
            call_style="none",
            callable=_TOOLS_CALL,
            result=self.result,
            policy=self.policy,
            server=facts,
        )

    def output_schema(self) -> Any:
        return self.obj.definition.get("outputSchema")

    def refuses(self, input: Any) -> str:
        if not isinstance(input, dict):
            return "the input is not an object: tools/call carries the arguments as an object"
        return ""

    def prepare(self) -> None:
        self.obj.connect()
        self.obj.learn_errors()

    def calling_under(self, condition: str) -> contextlib.AbstractContextManager[None]:
        if condition == "offline":
            return self.obj.offline()  # type: ignore[no-any-return]
        return super().calling_under(condition)

    def call(self, input: Any) -> Any:
        answer = self.obj.answer(input)
        resembled = self.obj.resembled_error(answer.response)
        self.obj.remember(answer.response)
        return dataclasses.replace(answer, resembled_error=resembled)

    def own_objects(self) -> tuple[Any, ...]:
        return ()  # the tool's code runs in its server, not here

    def facts(self, value: Any, *, size_limit: int) -> ResultFacts:
        """A response reduced to the facts the checks judge: the members of its result, or its
        error as ``error``; where it broke the wire, as ``wire_errors``."""
        assert isinstance(value, _Answer)
        response = value.response
        if "error" in response:
            fields: dict[str, Any] = {"error": response["error"]}
            type_name = JSON_RPC_ERROR
        else:
            result = response.get("result")
            fields = dict(result) if isinstance(result, Mapping) else {"result": result}
            type_name = "CallToolResult"
        return result_facts(
            fields,
            size_limit=size_limit,
            type_name=type_name,
            is_mapping=True,
            field_types={key: type(item).__name__ for key, item in fields.items()},
            read_errors={},
            wire_errors=value.wire_errors,
            changes=value.changes,
            state=value.state,
            resembled_error=value.resembled_error,
        )


_TOOLS_CALL = CallableInfo(
    name="tools/call", present=True, is_callable=True, is_async=False, expects_async=False
)
