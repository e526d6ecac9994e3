"""The handshake: which version a server speaks, probed the way the 2026-07-28 stdio page says
(``server/discover``, then ``initialize`` on any other error or no answer), and what it says of
itself (capabilities, name, instructions).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from axm_conformance.protocols.mcp._versions import (
    CURRENT,
    LEGACY,
    META,
    STATEFUL,
    UNSUPPORTED_VERSION,
    VERSIONS,
    current_meta,
)
from axm_conformance.protocols.mcp._wire import Malformed, ServerGone, Session, WireError

__all__ = ["Handshake", "connect"]


@dataclass(frozen=True)
class Handshake:
    """How a server answered the version probe: the version it speaks, its capabilities, what it
    says it is, what the probe met (the discover result, or why the client fell back), and the
    instructions it gives a client for using its tools ("" when none)."""

    version: str
    capabilities: dict[str, Any]
    server_info: dict[str, Any]
    probe: str
    instructions: str = ""
    ended_on_probe: bool = False  # the server ended when probed with server/discover


def connect(session: Session, known: Handshake | None = None) -> Handshake:
    """Probe with ``server/discover``, fall back to ``initialize``; raises :class:`WireError`
    when the server speaks no published version. A server ``known`` to speak a version of
    ``initialize`` (by the handshake of its first session) is not probed again, as the
    versioning page lets a client cache a server's era: the probe may cost a timeout, or a
    start, for each session of a server that ignores or breaks on it. The handshake returned
    then says what the first probe met."""
    if known is not None and known.version in STATEFUL:
        spoken = _initialize(session, "")
        return dataclasses.replace(spoken, probe=known.probe, ended_on_probe=known.ended_on_probe)
    ended = ""
    try:
        answer: dict[str, Any] | None = session.request(
            "server/discover", {"_meta": current_meta(session.client)}
        )
    except ServerGone as exc:
        # A server of an older version may end on a method it does not know: it is started
        # again and spoken to as such a server, and the probe says what happened.
        ended = str(exc)
        answer = None
        session.restart()
    except Malformed:
        raise
    except WireError:
        answer = None  # no answer in time: a legacy server may ignore the unknown method
    if answer is not None and "result" in answer:
        result = answer["result"]
        supported = result.get("supportedVersions") if isinstance(result, dict) else None
        if not (isinstance(supported, list) and CURRENT in supported):
            raise WireError(f"server/discover offers {supported!r}, not {CURRENT}")
        session.version = CURRENT
        meta = result.get("_meta") or {}
        return Handshake(
            CURRENT,
            dict(result.get("capabilities") or {}),
            dict(meta.get(f"{META}serverInfo") or {}),
            "server/discover answered",
            _instructions(result),
        )
    error = (answer or {}).get("error") or {}
    if isinstance(error, dict) and error.get("code") == UNSUPPORTED_VERSION:
        supported = (error.get("data") or {}).get("supported")
        raise WireError(
            f"the server speaks {supported!r}, and the kit speaks {', '.join(VERSIONS)}"
        )
    if ended:
        probe = f"server/discover ended it ({ended}); started again"
    elif answer is None:
        probe = "no answer to server/discover"
    else:
        probe = f"server/discover answered error {error.get('code')!r}"
    try:
        return _initialize(session, probe, ended_on_probe=bool(ended))
    except ServerGone as exc:
        if ended:
            raise
        # The probe broke a server of an older version without ending it at once (an SDK's
        # reader failing on the unknown method): it ends on the next message. Started again,
        # it is spoken to as such a server, and the probe says what happened.
        session.restart()
        return _initialize(
            session, f"{probe}, and it ended at initialize ({exc}); started again", True
        )


def _initialize(session: Session, probe: str, ended_on_probe: bool = False) -> Handshake:
    """The handshake of the versions before 2026-07-28: ``initialize``, offering the newest of
    them, then ``notifications/initialized``."""
    offer = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": session.client}
    reply = session.request("initialize", offer, timeout=session.start_allowance)
    result = reply.get("result")
    if not isinstance(result, dict):
        raise WireError(f"initialize was answered with {json.dumps(reply.get('error'))}")
    chosen = result.get("protocolVersion")
    if chosen not in STATEFUL:
        raise WireError(
            f"initialize chose the protocol version {chosen!r}, which is no version negotiated "
            f"by initialize: offered {LEGACY}, it could have picked any of "
            f"{', '.join(STATEFUL)}"
        )
    session.version = chosen
    session.notify("notifications/initialized")
    return Handshake(
        chosen,
        dict(result.get("capabilities") or {}),
        dict(result.get("serverInfo") or {}),
        f"{probe}; initialize answered",
        _instructions(result),
        ended_on_probe=ended_on_probe,
    )


def _instructions(result: dict[str, Any]) -> str:
    instructions = result.get("instructions")
    return instructions if isinstance(instructions, str) else ""
