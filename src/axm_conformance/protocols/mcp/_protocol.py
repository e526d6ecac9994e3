"""The MCP protocol: servers over stdio, ``mcp:COMMAND``, in any language, spoken to on the wire.

A reference ``mcp:COMMAND`` (split with :mod:`shlex`) names a server and every tool it lists;
``mcp:COMMAND[TOOL]`` one of them. The server as a whole is a subject too, described by
:func:`~axm_conformance.protocols.mcp._probe.probe`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from axm_conformance.protocols.base import (
    CallableInfo,
    Cleanups,
    Loaded,
    LoadError,
    LoadOptions,
    Policy,
    ResultFacts,
    ResultModel,
    SideEffect,
    SubjectInfo,
    ToolProtocol,
    canary_ran,
    left_in_temporary,
    result_facts,
    written_outside,
)
from axm_conformance.protocols.mcp._facts import ServerFacts, hidden_by_sandbox, last_said
from axm_conformance.protocols.mcp._http import Transport
from axm_conformance.protocols.mcp._probe import probe
from axm_conformance.protocols.mcp._refusals import judge_invalid
from axm_conformance.protocols.mcp._server import (
    HTTP_PREFIX,
    PREFIX,
    REMOTE_PREFIXES,
    Answer,
    Connection,
    McpServer,
    McpTool,
    command_of,
    listing,
    server_named,
    stderr_tail,
    transport_of,
)
from axm_conformance.protocols.mcp._versions import has
from axm_conformance.protocols.mcp._wire import CannotStart, NotAuthorized, WireError

__all__ = ["JSON_RPC_ERROR", "McpProtocol"]

# The type name of an answer that is a JSON-RPC error response instead of a result.
JSON_RPC_ERROR = "JSON-RPC error"


class McpProtocol(ToolProtocol):
    name = "mcp"
    title = "MCP"
    # writes-traced where a server runs in a sandbox under strace; see _subject_capabilities.
    capabilities = frozenset(
        {"description", "output-schema", "json-rpc", "behaviour-hints", "writes-traced"}
    )
    defines = {
        "json-rpc": "JSON-RPC messages, each validated against the protocol's official schema"
    }
    # The server as a whole is judged first: its tools are reached through it.
    groups = ("server",)
    ref_prefix = (PREFIX, HTTP_PREFIX, *REMOTE_PREFIXES)
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
        judge_invalid=judge_invalid,
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
        command, transport = command_of(ref, options.env), transport_of(ref, options)
        server = McpServer(command, options, transport=transport)
        connection = Connection(command, options, transport=transport)
        if cleanups is not None:
            cleanups.append(connection.close)
        try:
            session = connection.open()
            tools, _ = listing(session)
        except CannotStart as exc:
            raise LoadError(f"{ref!r}: {exc}") from None
        except NotAuthorized as exc:
            if transport.auth:
                # Refused a token issued as a client asks for it: a server no client can use.
                server.unreachable = str(exc)
                return [(ref, server, cls.name)]
            raise LoadError(
                f"{ref!r}: {exc}: give the server the credentials it asks for "
                "(--axm-server-header=NAME=VALUE, or a bearer token in the environment "
                "variable --axm-server-token-env names)"
            ) from None
        except WireError as exc:
            said = f"{exc}{last_said(stderr_tail())}"
            hidden = connection.hidden(said)
            server.unreachable = f"{said}{hidden_by_sandbox(hidden)}" if hidden else said
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
            facts = dataclasses.replace(probe(self.obj), over_http=self.obj.transport.over_http)
            return self._described_server(facts, time.perf_counter() - started)
        definition: dict[str, Any] = self.obj.definition
        schema = definition.get("inputSchema")
        # A member its server's version does not have is nothing a client of that version reads.
        version = self.obj.version
        info = self._info(
            variant="",
            input_schema=schema,
            schema_source="declared" if "inputSchema" in definition else "",
            schema_error="" if "inputSchema" in definition else "the tool has no inputSchema",
            output_schema=self.output_schema(),
            call_style="dict",
            callable=_TOOLS_CALL,
            annotations=dict(definition.get("annotations") or {})
            if has(version, "annotations")
            else {},
            instructions=self.obj.instructions,
        )
        return dataclasses.replace(
            info,
            capabilities=self._subject_capabilities(
                self.obj.connection_options, self.obj.transport
            ),
            remote=self.obj.transport.url(),
            protocol_version=version,
            errors_refuse=_ERRORS_REFUSE.format(version=version)
            if version in _ARGUMENTS_AS_PROTOCOL_ERRORS
            else "",
        )

    def _subject_capabilities(self, options: LoadOptions, transport: Transport) -> frozenset[str]:
        """The protocol's capabilities as this server offers them: its writes are traced only
        in a sandbox under strace, never a remote server's."""
        sandbox = options.sandbox
        if sandbox is not None and sandbox.tracer and not transport.remote:
            return self.capabilities
        return self.capabilities - {"writes-traced"}

    def _described_server(self, facts: ServerFacts, seconds: float) -> SubjectInfo:
        return SubjectInfo(
            ref=self.ref,
            protocol=self.name,
            protocol_title=self.title,
            capabilities=self._subject_capabilities(self.obj.options, self.obj.transport),
            remote=self.obj.transport.url(),
            variant="server",
            name=self.obj.name or server_named(self.obj.command, self.obj.transport),
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
            profile=self.profile(),
            server=facts,
            described_in=seconds,
            protocol_version=facts.version,
        )

    def output_schema(self) -> Any:
        if not has(self.obj.version, "outputSchema"):
            return None
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

    def side_effects(self, value: Any) -> tuple[SideEffect, ...]:
        assert isinstance(value, Answer)
        return (
            *written_outside(value.refused_writes, refused=True),
            *left_in_temporary(value.left_temporary),
            *canary_ran(value.canary_ran),
        )

    def facts(self, value: Any, *, size_limit: int) -> ResultFacts:
        """A response reduced to the facts the checks judge: the members of its result, or its
        error as ``error``; where it broke the wire, as ``wire_errors``."""
        assert isinstance(value, Answer)
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


# The versions whose tools page lists invalid arguments among the protocol errors, a JSON-RPC
# error of no set code; from 2025-11-25 input validation errors are tool execution errors.
_ARGUMENTS_AS_PROTOCOL_ERRORS = ("2024-11-05", "2025-03-26", "2025-06-18")
_ERRORS_REFUSE = (
    '{version} allows the form (its tools page, Error Handling: "Protocol Errors: Standard '
    'JSON-RPC errors for issues like: ... Invalid arguments")'
)

_TOOLS_CALL = CallableInfo(
    name="tools/call", present=True, is_callable=True, is_async=False, expects_async=False
)
