"""An MCP server observed whole, in sessions of its own: the subject of the server checks.

The first session gives the handshake, two listings, a call of a tool it does not list, the
processes it started on its own meanwhile, every line it wrote, and how it ended when its input
closed; then, started again, how it ends after one call of each of its tools.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from axm_conformance._process.system._proctable import ancestors, table
from axm_conformance._process.system._sweep import live_descendants
from axm_conformance.protocols.base import canonical_json
from axm_conformance.protocols.mcp._facts import Relisting, ServerFacts
from axm_conformance.protocols.mcp._handshake import Handshake, connect
from axm_conformance.protocols.mcp._http_probe import HttpFacts, observe_http
from axm_conformance.protocols.mcp._server import (
    CLOSE_GRACE,
    McpServer,
    StartMemo,
    listing,
    server_env,
    start_allowance,
)
from axm_conformance.protocols.mcp._versions import CURRENT, INVALID_PARAMS, WELL_KNOWN_CLIENT
from axm_conformance.protocols.mcp._wire import Session, WireError

__all__ = ["probe"]

# The stdio transport's grace for a server whose input closed (the spec's "reasonable time").
_EXIT_GRACE = 2.0
# How long a started server is left alone before it is closed: what it starts meanwhile (a
# poller's children) is its own; long enough for a poll every tenth of a second to show.
_IDLE = 0.2


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
    if isinstance(error, dict) and error.get("code") == INVALID_PARAMS:
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


def _ping_answer(session: Session) -> str:
    """How the server answers ``ping``: "" for the empty result the spec gives it, else what it
    answered (a version of 2026-07-28 has no ping: see probe)."""
    try:
        reply = session.request("ping")
    except WireError as exc:
        return f"ping was not answered: {exc}"
    if reply.get("result") == {} or (
        isinstance(reply.get("result"), dict) and set(reply["result"]) <= {"_meta"}
    ):
        return ""
    if "error" in reply:
        return f"ping was answered with the error {canonical_json(reply['error'])[:200]}"
    return f"ping was answered with {canonical_json(reply.get('result'))[:200]}"


def _own_session(server: McpServer, slowest: float = 0.0) -> Session:
    """A session of the probe's own with the server, not started yet, given the start
    allowance of a server whose ``slowest`` start in the run took that many seconds."""
    session = Session(
        server.command,
        os.getcwd(),
        server_env(server.options),
        sandbox=server.options.sandbox,
        transport=server.transport,
    )
    session.timeout = server.options.timeout
    session.start_allowance = start_allowance(server.options.timeout, slowest)
    return session


def probe(server: McpServer) -> ServerFacts:
    """Start the server in a session of its own and observe it whole: the handshake, two
    listings, every line it wrote, and how it ended when its input closed; then, if it exited,
    how it ends after one call of each tool it listed (see :func:`_closed_after_calls`)."""
    before = set(live_descendants(os.getpid()))
    memo = StartMemo(server.command, server.options, server.transport)
    session = _own_session(server, memo.recall()[1])
    try:
        session.start()
    except WireError as exc:
        return ServerFacts(started=str(exc), hidden=tuple(session.hidden(str(exc))))
    started = time.monotonic()
    handshake: Handshake | None = None
    unknown_tool = ""
    ping: str | None = None
    listings: list[tuple[str, ...]] = []
    listing_error = ""
    tools: list[dict[str, Any]] = []
    at_handshake: set[int] = set()
    http: HttpFacts | None = None
    try:
        # Probed afresh whatever the run knows of it: the server checks judge what this very
        # exchange carried (stray lines, messages that break the schema), not only its outcome.
        handshake = connect(session)
        seconds = time.monotonic() - started
        memo.remember(handshake, seconds)
        at_handshake = set(_started_since(before))
        for _ in range(2):
            tools, listing_error = listing(session)
            if listing_error:
                break
            listings.append(tuple(str(tool.get("name")) for tool in tools))
        unknown_tool = _unknown_tool_answer(session, {str(tool.get("name")) for tool in tools})
        if handshake.version != CURRENT:  # 2026-07-28 removed ping (its changelog, item 5)
            ping = _ping_answer(session)
        spoken = session.spoken_over()
        if spoken is not None:
            # Closing a call's stream cancels it from 2026-07-28 on; what that stops, the kit
            # sees in the files of a server it runs.
            cancels = handshake.version == CURRENT and not session.transport.remote
            http = observe_http(
                spoken,
                handshake.version,
                session.timeout,
                session.authority,
                session.discovered,
                inputs=_valid_inputs(tools) if cancels else None,
                workdir=session.cwd if cancels else "",
            )
    except WireError as exc:
        seconds = time.monotonic() - started
        if handshake is not None:
            listing_error = f"listing the tools: {exc}"
        failure = str(exc)
    else:
        failure = ""
    if handshake is not None and not failure:
        time.sleep(_IDLE)
    # The server's children, while they are still its own (see live_descendants).
    now = _started_since(before)
    running = set(now)
    alone = {pid: now[pid] for pid in sorted(running - at_handshake)} if at_handshake else {}
    exited, _ = session.close(grace=_EXIT_GRACE)
    left = {**_left_behind(before, running), **session.survivors}
    after = _AfterCalls()
    # Its tools are called once more, listed again as they are; how it then exits is judged
    # where it exited fresh (one that already lingers fresh would only cost another grace to
    # say so again), or where an upstream API it was given listens for a token it passes on.
    upstream = http is not None and http.auth is not None and bool(http.auth.upstream)
    if tools and handshake is not None and not listing_error:
        judged = bool(exited or upstream)
        after = _closed_after_calls(server, tools, set(left.values()), handshake, judged)
    return ServerFacts(
        started=failure if handshake is None else "",
        version=handshake.version if handshake else "",
        probe=handshake.probe if handshake else "",
        ended_on_probe=handshake.ended_on_probe if handshake else False,
        ping=ping,
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
        passed_through_on_calls=after.passed_through,
        relistings=after.relistings,
        refused_writes=tuple(session.refused_writes()),
        started_alone=_said(alone),
        hidden=tuple(session.hidden(failure, *session.stderr)) if handshake is None else (),
        http=http,
    )


@dataclass(frozen=True)
class _AfterCalls:
    """How a server ended when closed after one call of each tool: see :class:`ServerFacts`."""

    called: tuple[str, ...] = ()
    exited: bool | None = None
    leftovers: tuple[str, ...] = ()
    ended: str = ""
    passed_through: tuple[str, ...] = ()
    relistings: tuple[Relisting, ...] = ()


def _closed_after_calls(
    server: McpServer,
    tools: list[dict[str, Any]],
    named: set[str],
    handshake: Handshake,
    judged: bool,
) -> _AfterCalls:
    """Start the server again as a well-known client, list its tools, call each once with a
    valid input, listing them again after each call, and close its stdin: a tool may leave
    running what keeps the server from exiting (a thread, a child). Where how it ends is not
    ``judged``, it is given no grace. A process left behind whose command line is ``named``
    already (left by a fresh session) is not said again.

    Each call is bounded by the server's timeout; one that is not answered, or that ends the
    server, ends the session, which is then not judged by how it ends. The server is spoken to
    in the version of its first ``handshake``, without the probe."""
    inputs = _valid_inputs(tools)
    before = set(live_descendants(os.getpid()))
    session = _own_session(server)
    session.client = dict(WELL_KNOWN_CLIENT)
    called: list[str] = []
    relistings: list[Relisting] = []
    ended = ""
    try:
        session.start()
        connect(session, known=handshake)
        client = f"in a new session, as the client {WELL_KNOWN_CLIENT['name']!r}"
        listed = _relisted(session, tools, "client", client, relistings)
        if relistings[-1].differences:
            # Another client's name, or any new session: a session as the kit tells which.
            relistings.append(_as_the_kit(server, tools, handshake))
        for name, arguments in inputs.items():
            try:
                session.request("tools/call", {"name": name, "arguments": arguments})
            except WireError as exc:
                shown = canonical_json(arguments)[:200]
                ended = f"calling {name} with {shown} ended the session: {exc}"
                break
            called.append(name)
            shown = canonical_json(arguments)[:200]
            after = f"after a call of {name} with {shown}"
            listed = _relisted(session, listed, "call", after, relistings)
    except WireError as exc:
        ended = ended or f"the server did not answer the handshake or a listing again: {exc}"
    running = set(_started_since(before))
    passed = session.authority.passed_through() if session.authority is not None else ()
    exited, _ = session.close(grace=_EXIT_GRACE if judged and not ended else CLOSE_GRACE)
    # Whatever it left is ended either way; a server killed on a hung call is not to blame.
    left = {**_left_behind(before, running), **session.survivors}
    if ended or not judged:
        return _AfterCalls(
            tuple(called), ended=ended, passed_through=passed, relistings=tuple(relistings)
        )
    new = {pid: line for pid, line in left.items() if line not in named}
    return _AfterCalls(
        tuple(called), exited, _said(new), passed_through=passed, relistings=tuple(relistings)
    )


def _relisted(
    session: Session,
    before: list[dict[str, Any]],
    by: Literal["client", "call"],
    after: str,
    relistings: list[Relisting],
) -> list[dict[str, Any]]:
    """List the tools again (``by`` and ``after`` say after what) and keep how they differ from
    ``before``; the tools listed (those before, when the listing did not complete)."""
    tools, error = listing(session)
    if error:
        return before
    relistings.append(Relisting(by, after, _differences(before, tools)))
    return tools


def _as_the_kit(server: McpServer, tools: list[dict[str, Any]], handshake: Handshake) -> Relisting:
    """The tools listed in a session of their own under the kit's name, against ``tools``."""
    session = _own_session(server)
    try:
        session.start()
        connect(session, known=handshake)
        again, error = listing(session)
    except WireError as exc:
        again, error = tools, str(exc)
    finally:
        session.close(grace=CLOSE_GRACE)
    differences = () if error else _differences(tools, again)
    return Relisting("kit", "in a new session, as the kit", differences)


def _differences(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[str, ...]:
    """How the tools ``after`` differ from those ``before``: each tool gone or added, and the
    members (its description, its schemas, its annotations, ...) changed of each other; its
    ``_meta``, which is for clients rather than the model, aside."""
    first, then = _by_name(before), _by_name(after)
    gone = [f"{name} gone" for name in first if name not in then]
    added = [f"{name} added" for name in then if name not in first]
    changed = [
        f"{name}'s {', '.join(members)} changed"
        for name in first.keys() & then.keys()
        if (
            members := sorted(
                key
                for key in first[name].keys() | then[name].keys()
                if key != "_meta" and first[name].get(key) != then[name].get(key)
            )
        )
    ]
    return (*gone, *added, *sorted(changed))


def _by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(tool.get("name")): tool for tool in tools}


def _valid_inputs(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A valid input of each tool listed, by its name."""
    inputs: dict[str, dict[str, Any]] = {}
    for tool in tools:
        inputs.setdefault(str(tool.get("name")), _valid_input(tool.get("inputSchema")))
    return inputs


def _valid_input(schema: Any) -> dict[str, Any]:
    """The first of the kit's boundary inputs of ``schema`` (its required properties, each with
    its simplest value); {} when it gives no object."""
    # Not boundary_inputs, which also builds the schema's Hypothesis strategies: in the worker's
    # fresh directory, with no Hypothesis cache, that takes seconds. Imported here, so that only
    # a worker that probes a server with tools imports Hypothesis: the one that describes, which
    # then has more than one subject and certifies none of them.
    from axm_conformance.strategies import simplest_input

    try:
        first = simplest_input(schema)
    except ValueError:  # an invalid or unsatisfiable schema, which its own checks report
        return {}
    return first if isinstance(first, dict) else {}


def _left_behind(before: set[int], running: set[int]) -> dict[int, str]:
    """The processes started since ``before`` that still run once the server is gone (those
    ``running`` before it was closed among them), each with its command line: each is
    killed."""
    # What a server's children do on its exit takes a moment; a child that exits on its own
    # meanwhile was not left behind.
    deadline = time.monotonic() + 0.5
    while True:
        left = _started_since(before, running)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    table().kill(list(left))
    return left


def _started_since(before: set[int], also: Iterable[int] = ()) -> dict[int, str]:
    """The worker's processes started since ``before`` that do not descend from one of those
    (the worker's other session with the same server, which may start processes meanwhile),
    and those of ``also`` still alive, each with its command line (see live_descendants)."""
    found = {
        pid: line for pid, line in live_descendants(os.getpid(), also).items() if pid not in before
    }
    others = before - {os.getpid()}
    return {pid: line for pid, line in found.items() if others.isdisjoint(ancestors(pid))}


def _said(left: dict[int, str]) -> tuple[str, ...]:
    """Processes left behind, each as its pid and command line."""
    return tuple(f"pid {pid}: {line}" for pid, line in left.items())
