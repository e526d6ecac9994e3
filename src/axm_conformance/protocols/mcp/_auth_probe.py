"""What the kit observes of a server that is a protected resource of the authorization server
the kit runs (``--axm-auth=local``, see ``_authority``): how it challenges a client with no
token, the protected resource metadata it serves (RFC 9728), and how it answers tokens an
honest client never sends. The subject of the ``auth-*`` checks.

Before the handshake, :func:`discover` asks what a client asks first (a request with no token,
then the metadata its challenge or the well-known address names) and the session's token is
minted from it: for the resource the metadata names, with the scopes the challenge asks for
(else those the metadata lists), as the authorization page's scope selection says. After the
handshake, :func:`observe_auth` sends the session's own request again, each time with one thing
wrong about its token.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from axm_conformance.protocols.mcp._authority import OTHER_AUDIENCE, Authority
from axm_conformance.protocols.mcp._http import Answered, Endpoint, exchange

__all__ = ["AuthFacts", "Discovered", "discover", "observe_auth"]

_WELL_KNOWN = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class Discovered:
    """What a client with no token learns: how a request of its was answered (``status``, 0
    with ``said`` for none, and its ``challenge``, the WWW-Authenticate header), where the
    protected resource metadata is (``metadata_url``, "" for nowhere) and the ``metadata``
    found there (None when none was); ``said``, why each address asked before it (or all of
    them) gave none; ``canonical``, the server's canonical URI as the kit reached it."""

    canonical: str
    status: int
    challenge: str = ""
    metadata_url: str = ""
    metadata: dict[str, Any] | None = None
    said: str = ""

    @property
    def challenged(self) -> dict[str, str]:
        """The parameters of the challenge's Bearer scheme (RFC 6750 section 3)."""
        scheme, _, rest = self.challenge.strip().partition(" ")
        if scheme.lower() != "bearer":
            return {}
        return urllib.request.parse_keqv_list(
            [item for item in urllib.request.parse_http_list(rest) if "=" in item]
        )

    @property
    def audience(self) -> str:
        """The resource a token is asked for: the one the metadata names, else the URI the
        kit reached."""
        named = (self.metadata or {}).get("resource")
        return named if isinstance(named, str) and named else self.canonical

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes a token is asked with: those the challenge names, else those the
        metadata lists (none: the server names none)."""
        challenged = self.challenged.get("scope", "").split()
        if challenged:
            return tuple(challenged)
        listed = (self.metadata or {}).get("scopes_supported")
        if isinstance(listed, list):
            return tuple(scope for scope in listed if isinstance(scope, str))
        return ()

    @property
    def scopes_challenged(self) -> bool:
        """Whether the server's own challenge named the scopes (rather than its metadata)."""
        return bool(self.challenged.get("scope", "").split())


@dataclass(frozen=True)
class AuthFacts:
    """What the server answered: ``discovered`` before the handshake; the session's request
    with ``no_token``, with a token for ``other_audience``, an ``expired`` one, a ``forged``
    one (signed with a key the issuer never published), one with ``no_scope`` (None when the
    server names no scope), and the session's own token in the query string instead of its
    header (``in_query``); ``issuer``, the authorization server the server was pointed at, and
    ``scopes``, those the session's token carried; ``upstream``, the upstream API the server
    was pointed at ("" for none), and the requests it got that carried one of the kit's tokens
    (``passed_through``), meanwhile."""

    discovered: Discovered
    issuer: str
    scopes: tuple[str, ...]
    no_token: Answered
    other_audience: Answered
    expired: Answered
    forged: Answered
    in_query: Answered
    no_scope: Answered | None = None
    upstream: str = ""
    passed_through: tuple[str, ...] = ()


# How the probe sends the session's request: with these headers in place of the session's, at
# this path (the endpoint's, or it with a query), how it was answered.
Send = Callable[[dict[str, str], str], Answered]


def discover(endpoint: Endpoint, timeout: float) -> Discovered:
    """What a client with no token learns of the server at ``endpoint``: its challenge to a
    request (an ``initialize``, which a server of every version reads as a first request),
    then the metadata the challenge names, else (or where that gives none) the one at the
    well-known addresses (RFC 9728 section 3.1: the endpoint's path after it, then none)."""
    canonical = f"http://127.0.0.1:{endpoint.port}{endpoint.path}"
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).encode()
    headers = {
        **{name: value for name, value in endpoint.headers if name.lower() != "authorization"},
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    asked, _, _ = exchange(endpoint, "POST", endpoint.path, body, headers, timeout)
    found = Discovered(canonical, asked.status, asked.challenge)
    named = found.challenged.get("resource_metadata", "")
    # The challenge's address first, then the well-known ones, as the SDKs' clients look.
    places = [*([named] if named else []), f"{_WELL_KNOWN}{endpoint.path}", _WELL_KNOWN]
    reasons: list[str] = []
    for place in places:
        where = urllib.parse.urlsplit(place)
        if where.netloc and where.netloc != f"127.0.0.1:{endpoint.port}":
            reasons.append(f"{place} is on another server than the one it protects")
            continue
        path = urllib.parse.urlunsplit(("", "", where.path, where.query, ""))
        got, _, data = exchange(endpoint, "GET", path, None, {}, timeout)
        document = _json(data)
        url = place if where.netloc else f"http://127.0.0.1:{endpoint.port}{place}"
        if got.served and isinstance(document, dict):
            said = "; ".join(reasons)
            return dataclasses.replace(found, metadata_url=url, metadata=document, said=said)
        reasons.append(f"{url}: {got.shown if not got.status else f'HTTP {got.status}'}")
    return dataclasses.replace(found, said="; ".join(reasons))


def observe_auth(send: Send, path: str, authority: Authority, found: Discovered) -> AuthFacts:
    """How the server answered the session's request, sent as ``send`` sends it to ``path``,
    with each kind of token an honest client never sends."""
    audience, scopes = found.audience, found.scopes

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    valid = authority.token(audience, scopes)
    query = urllib.parse.urlencode({"access_token": valid})
    return AuthFacts(
        found,
        authority.issuer,
        scopes,
        no_token=send({"Authorization": ""}, path),
        other_audience=send(bearer(authority.token(OTHER_AUDIENCE, scopes)), path),
        expired=send(bearer(authority.token(audience, scopes, expired=True)), path),
        forged=send(bearer(authority.token(audience, scopes, forged=True)), path),
        in_query=send({"Authorization": ""}, f"{path}?{query}"),
        no_scope=send(bearer(authority.token(audience)), path) if scopes else None,
        upstream=authority.upstream if authority.upstream_given else "",
        passed_through=authority.passed_through(),
    )


def _json(data: bytes) -> Any:
    with contextlib.suppress(ValueError):
        return json.loads(data)
    return None
