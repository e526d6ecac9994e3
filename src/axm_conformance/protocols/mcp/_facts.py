"""What the kit observed of an MCP server as a whole: the subject of the server checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from axm_conformance.protocols.mcp._http_probe import HttpFacts

__all__ = ["Relisting", "ServerFacts", "hidden_by_sandbox", "last_said"]


def last_said(stderr_tail: str) -> str:
    """What a server's report adds about its stderr: its last line, or nothing."""
    last = stderr_tail.strip().splitlines()[-1:]
    return f"; the last line it wrote to stderr: {last[0]!r}" if last else ""


def hidden_by_sandbox(paths: tuple[str, ...] | list[str]) -> str:
    """What a report adds when a server that could not be reached named paths its sandbox
    hides, and how to give them to it."""
    return (
        f"; it names {', '.join(paths)}, which this machine has but its sandbox hides (a "
        "private /tmp and /var/tmp): install the server elsewhere, copy what it reads into its "
        "working directory with --axm-worker-files, or run it with --axm-sandbox=off"
    )


@dataclass(frozen=True)
class Relisting:
    """The server's tools listed again after what must not change them (``by``: a new session
    under a well-known ``client``'s name or the ``kit``'s, or a ``call`` of a tool; ``after``
    says it in words), and what differed from the listing before it: tools added or gone,
    members of a tool changed."""

    by: Literal["client", "kit", "call"]
    after: str
    differences: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServerFacts:
    """A tool server as a whole, seen in a session of its own: how it answered the handshake,
    what it listed, what it wrote, and how it ended when its input closed.

    ``started`` is "" when the handshake succeeded, else why it did not. ``listings`` holds the
    tool names of each complete listing (two, when both completed), ``listing_error`` why one
    did not. ``unknown_tool`` says how it answered a call of a tool it does not list ("" when
    with the error invalid params). ``strays`` are the lines of stdout that are not JSON-RPC
    messages, and ``message_errors`` where a message breaks the official schema of its
    version. ``exited`` says whether the server exited within ``exit_grace`` seconds of its
    input closing (None when it never started), ``leftovers`` the processes it left running.

    Then it is started again and each tool it listed is called once; once it exited so, that
    session is closed the same way: ``called`` names the tools that answered,
    ``exited_after_calls`` and ``leftovers_after_calls`` say how it ended then (None and () when
    that session was not closed so), and ``calls_ended`` why that session ended before (a call
    that hung or killed the server, a handshake not answered again; "" when it did not); for a
    protected resource of the kit's authorization server, ``passed_through_on_calls`` the
    requests its upstream API got then that carried one of the kit's tokens.

    ``relistings`` are the listings that session made: as it began, under a well-known
    client's name (and, when that one differed, in a third session under the kit's), and after
    each call.

    ``ended_on_probe`` says the server ended when first asked ``server/discover`` (it was
    started again for ``initialize``); ``ping`` how it answered ``ping`` ("" with the empty
    result, None when not asked: the version has no ping, or the session ended first).

    ``started_alone`` names the processes (pid and command line) the server started after the
    handshake while no tool was called, before its input closed: its own.

    ``refused_writes`` names the paths outside its working and temporary directories whose write
    its sandbox refused while it started, listed its tools and ended (traced servers only).

    ``hidden`` names, when the handshake failed in a sandbox, the paths the server's command or
    its last words name that exist on this machine but that the sandbox hides (a private
    temporary directory): the kit's environment, not the server, may be why it failed.

    ``over_http`` says the server was spoken to over Streamable HTTP: its stdout is a log, not
    the wire, and it ends when its host stops it, not when its input closes.
    """

    started: str
    version: str = ""
    probe: str = ""
    seconds: float = 0.0
    capabilities: dict[str, Any] = field(default_factory=dict)
    listings: tuple[tuple[str, ...], ...] = ()
    listing_error: str = ""
    strays: tuple[str, ...] = ()
    message_errors: tuple[str, ...] = ()
    unknown_tool: str = ""  # how the server answered a call of a tool it does not list
    exit_grace: float = 2.0
    exited: bool | None = None
    leftovers: tuple[str, ...] = ()
    stderr_tail: str = ""
    called: tuple[str, ...] = ()
    exited_after_calls: bool | None = None
    leftovers_after_calls: tuple[str, ...] = ()
    calls_ended: str = ""
    passed_through_on_calls: tuple[str, ...] = ()
    relistings: tuple[Relisting, ...] = ()
    refused_writes: tuple[str, ...] = ()
    started_alone: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    ended_on_probe: bool = False
    ping: str | None = None
    over_http: bool = False  # served over Streamable HTTP, not stdio
    http: HttpFacts | None = None  # its transport, seen beside the session (see _http_probe)
