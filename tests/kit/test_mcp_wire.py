"""MCP over stdio on the wire: the version probe and its fallback, the messages kept and validated
against the official schemas, stray stdout lines, and the end of a session."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from axm_conformance.protocols.mcp._handshake import Handshake, connect
from axm_conformance.protocols.mcp._schema import schema_errors
from axm_conformance.protocols.mcp._versions import CURRENT, LEGACY, VERSIONS, has
from axm_conformance.protocols.mcp._wire import Malformed, ServerGone, Session, WireError

SERVER = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers" / "word_server.py"


def session(tmp_path: Path, *flags: str, timeout: float = 5.0) -> Session:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    argv = [sys.executable, str(SERVER), *flags]
    return Session(argv, str(tmp_path), env, timeout=timeout).start()


def tools_listed(wire: Session) -> list[dict[str, Any]]:
    tools, cursor = [], None
    for _ in range(10):
        page = wire.request("tools/list", {"cursor": cursor} if cursor else {})["result"]
        tools += page["tools"]
        cursor = page.get("nextCursor")
        if not cursor:
            return tools
    raise AssertionError("the pages did not end")


@pytest.mark.parametrize(
    ("era", "version", "probe"),
    [
        ("current", CURRENT, "server/discover answered"),
        ("legacy", LEGACY, "server/discover answered error -32601; initialize answered"),
        *(
            (version, version, "server/discover answered error -32601; initialize answered")
            for version in VERSIONS[:3]
        ),
    ],
)
def test_the_probe_finds_the_version_the_server_speaks(
    tmp_path: Path, era: str, version: str, probe: str
) -> None:
    wire = session(tmp_path, "--era", era)
    try:
        handshake = connect(wire)
        assert (handshake.version, handshake.probe) == (version, probe)
        assert handshake.capabilities == {"tools": {}}
        assert handshake.server_info["name"] == "word-server"
        assert [tool["name"] for tool in tools_listed(wire)][:3] == [
            "word_count",
            "shout",
            "word_stats",
        ]
        reply = wire.request("tools/call", {"name": "word_count", "arguments": {"text": "a b c"}})
        assert reply["result"]["content"] == [{"type": "text", "text": "3"}]
        # Every message the server wrote is one its version's official schema allows.
        assert wire.problems == []
        assert wire.strays == []
    finally:
        assert wire.close() == (True, 0)


def test_a_current_request_carries_the_version_in_its_meta(tmp_path: Path) -> None:
    wire = session(tmp_path, "--era", "current")
    try:
        connect(wire)
        sent: list[dict[str, Any]] = []
        send = wire.send
        wire.send = lambda message: (sent.append(message), send(message))[1]  # type: ignore[method-assign]
        wire.request("tools/list")
        assert sent[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == CURRENT
    finally:
        wire.close()


def test_a_result_that_breaks_the_schema_is_told(tmp_path: Path) -> None:
    """A 2026-07-28 list result without its caching fields, as a 2025-11-25 server sends it."""
    legacy_page = {"tools": [], "resultType": "complete"}
    assert schema_errors(LEGACY, "ListToolsResult", legacy_page) == []
    errors = schema_errors(CURRENT, "ListToolsResult", legacy_page)
    assert errors == [
        "$: 'cacheScope' is a required property",
        "$: 'ttlMs' is a required property",
    ]


def test_stray_lines_on_stdout_are_kept(tmp_path: Path) -> None:
    wire = session(tmp_path, "--noise")
    try:
        connect(wire)
        assert wire.strays == ["word-server starting"]
    finally:
        wire.close()


def test_a_server_that_stays_after_stdin_closes_is_killed(tmp_path: Path) -> None:
    wire = session(tmp_path, "--linger")
    connect(wire)
    exited, status = wire.close(grace=0.5)
    assert not exited and status is not None and status < 0


def test_a_server_that_does_not_start_or_answer_is_a_wire_error(tmp_path: Path) -> None:
    missing = Session(["no-such-mcp-server"], str(tmp_path), {"PATH": ""}).start
    with pytest.raises(WireError, match="cannot start 'no-such-mcp-server'"):
        missing()
    mute = Session([sys.executable, "-c", "import time; time.sleep(30)"], str(tmp_path), {})
    mute.timeout = 0.5
    mute.start()
    with pytest.raises(WireError, match=r"no answer to initialize within 0\.5 s"):
        connect(mute)
    mute.close(grace=0.1)
    # Gone before the probe is written or read, started again and gone again before initialize
    # is: whichever is said, with its status.
    dead = Session([sys.executable, "-c", "pass"], str(tmp_path), {}).start()
    gone = (
        r"the server closed (its stdin|stdout during (server/discover|initialize)) "
        r"\(it exited with status 0"
    )
    with pytest.raises(ServerGone, match=gone):
        connect(dead)


def test_every_published_version_is_spoken_and_its_schema_read_in_its_own_dialect() -> None:
    assert VERSIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
    for version in VERSIONS:
        answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}
        if version == CURRENT:
            answer["result"]["resultType"] = "complete"
        assert schema_errors(version, "JSONRPCResultResponse", answer) == []
        error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}
        assert schema_errors(version, "JSONRPCErrorResponse", error) == [
            "$.error: 'message' is a required property"
        ]
        # A text block without its text breaks every version.
        assert schema_errors(version, "CallToolResult", {"content": [{"type": "text"}]})


def test_what_a_version_has_of_a_tool_and_a_result() -> None:
    assert not has("2024-11-05", "annotations") and has("2025-03-26", "annotations")
    assert not has("2025-03-26", "outputSchema") and has("2025-06-18", "structuredContent")
    assert has("2024-11-05", "inputSchema")


def test_a_server_picking_no_published_version_fails_the_handshake_naming_those_it_could(
    tmp_path: Path,
) -> None:
    wire = session(tmp_path, "--defect", "unpublished-version")
    try:
        with pytest.raises(WireError, match=r"'2099-01-01'.*2024-11-05, 2025-03-26, 2025-06-18"):
            connect(wire)
    finally:
        wire.close()


def test_a_server_that_ends_on_the_probe_is_started_again_and_spoken_to(tmp_path: Path) -> None:
    wire = session(tmp_path, "--defect", "ends-on-discover")
    try:
        handshake = connect(wire)
        assert handshake.ended_on_probe and handshake.version == LEGACY
        assert handshake.probe.startswith("server/discover ended it")
        assert wire.request("ping") == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        wire.close()


@pytest.mark.parametrize(
    ("defect", "trouble"),
    [
        ("lone-surrogate", "a string holds the lone UTF-16 surrogate '\\ud83d'"),
        ("invalid-utf8", "wrote bytes that are not UTF-8 (b'\\xff' at byte"),
        ("huge-number", ""),
        ("duplicate-keys", ""),
        ("ten-megabytes", ""),
    ],
)
def test_any_bytes_a_server_answers_with_end_in_a_message_and_what_breaks_it(
    tmp_path: Path, defect: str, trouble: str
) -> None:
    wire = session(tmp_path, "--defect", defect)
    try:
        connect(wire)
        reply = wire.request("tools/call", {"name": "shout", "arguments": {"text": "ab"}})
        assert reply["result"]["content"][0]["text"].startswith("AB")
        assert [problem.startswith(trouble) for problem in wire.problems] == (
            [True] if trouble else []
        )
        # What the kit keeps is text it can write anywhere.
        repr(reply).encode("utf-8")
        str(reply).encode("utf-8")
    finally:
        wire.close()


@pytest.mark.parametrize("defect", ["raw-nul", "deep-answer"])
def test_an_answer_no_parser_reads_is_malformed_at_once_not_a_timeout(
    tmp_path: Path, defect: str
) -> None:
    wire = session(tmp_path, "--defect", defect, timeout=60.0)
    try:
        connect(wire)
        with pytest.raises(Malformed, match=r"answered tools/call with a message no JSON parser"):
            wire.request("tools/call", {"name": "shout", "arguments": {"text": "ab"}})
    finally:
        wire.close()


def test_a_server_known_from_its_first_session_is_not_probed_again(tmp_path: Path) -> None:
    """A later session of a server whose version is known speaks initialize at once: the probe
    that broke it (and cost a timeout) is not sent again, and the handshake says what the
    first probe met."""
    wire = session(tmp_path, "--defect", "breaks-on-discover", timeout=60.0)
    met = "no answer to server/discover, and it ended at initialize; initialize answered"
    first = Handshake(LEGACY, {}, {}, met, ended_on_probe=True)
    try:
        handshake = connect(wire, known=first)
        assert (handshake.version, handshake.probe, handshake.ended_on_probe) == (LEGACY, met, True)
        assert handshake.server_info["name"] == "word-server"
        assert wire.request("ping")["result"] == {}
    finally:
        wire.close()
