"""MCP over stdio on the wire: the version probe and its fallback, the messages kept and validated
against the official schemas, stray stdout lines, and the end of a session."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from axm_conformance.protocols.mcp._wire import (
    CURRENT,
    LEGACY,
    ServerGone,
    Session,
    WireError,
    connect,
    schema_errors,
)

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
    # Gone before the probe is written, or before it is read: either is said, with its status.
    dead = Session([sys.executable, "-c", "pass"], str(tmp_path), {}).start()
    gone = r"the server closed (its stdin|stdout during server/discover) \(it exited with status 0"
    with pytest.raises(ServerGone, match=gone):
        connect(dead)
