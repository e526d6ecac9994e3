"""What each published version of MCP has: the versions, oldest first, the members of a tool
and of its result each one has, the metadata of the 2026-07-28 era and the error codes the
kit's session and checks name."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CLIENT_INFO",
    "CURRENT",
    "INVALID_PARAMS",
    "LEGACY",
    "META",
    "STATEFUL",
    "UNSUPPORTED_VERSION",
    "VERSIONS",
    "current_meta",
    "has",
]

# Every published version, oldest first. The last is stateless (server/discover); the others are
# negotiated by initialize, where the client offers the newest of them (LEGACY).
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
CURRENT = VERSIONS[-1]
LEGACY = VERSIONS[-2]
STATEFUL = VERSIONS[:-1]
# The members of a tool and of its result that a version has, by the first version that does
# (each version's schema.json): a server speaking an older one is not judged by them.
_SINCE = {
    "annotations": "2025-03-26",
    "outputSchema": "2025-06-18",
    "structuredContent": "2025-06-18",
}
CLIENT_INFO = {"name": "axm-conformance", "version": "1"}
# How a well-known client names itself (Claude Desktop's clientInfo): a server that lists other
# tools to it than to the kit shows the kit something else than what it shows users.
WELL_KNOWN_CLIENT = {"name": "claude-ai", "version": "0.1.0"}
# The 2026-07-28 names of the metadata every request carries.
META = "io.modelcontextprotocol/"
# A modern server that does not speak the requested version says so with this code; a client
# must then not fall back to initialize (2026-07-28, stdio: backward compatibility).
UNSUPPORTED_VERSION = -32022
# JSON-RPC's error for a request whose parameters are not what the method takes: how a server
# may refuse an input that breaks a tool's schema, and an unknown tool.
INVALID_PARAMS = -32602


def has(version: str, member: str) -> bool:
    """Whether ``version`` has the tool or result member ``member`` (every version has those
    ``_SINCE`` does not name)."""
    first = _SINCE.get(member)
    if first is None or version not in VERSIONS:
        return True
    return VERSIONS.index(version) >= VERSIONS.index(first)


def current_meta(client: dict[str, str] = CLIENT_INFO) -> dict[str, Any]:
    return {
        f"{META}protocolVersion": CURRENT,
        f"{META}clientInfo": client,
        f"{META}clientCapabilities": {},
    }
