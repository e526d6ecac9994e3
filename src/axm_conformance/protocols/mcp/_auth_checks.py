"""The authorization pages' checks of a server as a protected resource (2025-06-18 to
2026-07-28), registered through the public check API by the entry point ``mcp-auth`` of the
group ``axm_conformance.checks``.

They judge a server the kit started with ``--axm-auth=local``, pointed at the authorization
server the kit runs (see ``_authority``), by what a client with no token learned of it and how
it answered the session's own request with each kind of token an honest client never sends
(see ``_auth_probe``). A token served that should not be (none, another resource's, an expired
or forged one, one in the URL) fails the server: whoever holds it calls the server's tools. A
refusal with another status than the pages give is a warning: the client is refused either way,
but does not know what to do next.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable

from axm_conformance.checks import (
    CheckContext,
    Finding,
    Found,
    SubjectInfo,
    check,
    not_run,
    note,
    warning,
)
from axm_conformance.protocols.mcp._auth_probe import AuthFacts
from axm_conformance.protocols.mcp._authority import OTHER_AUDIENCE
from axm_conformance.protocols.mcp._facts import ServerFacts
from axm_conformance.protocols.mcp._http import Answered
from axm_conformance.protocols.mcp._versions import VERSIONS

__all__: list[str] = []

Applies = Callable[[SubjectInfo], "str | Finding | None"]

_TOKEN_HANDLING = "(authorization, Token Handling)"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
# The version that made a server a protected resource with metadata of its own (RFC 9728), and
# its tokens bound to it (RFC 8707).
_RESOURCES_SINCE = "2025-06-18"


def _auth(subject: SubjectInfo) -> AuthFacts:
    facts = subject.server
    assert isinstance(facts, ServerFacts) and facts.http is not None
    assert facts.http.auth is not None
    return facts.http.auth


def _protected(subject: SubjectInfo) -> str | Finding | None:
    facts = subject.server
    assert isinstance(facts, ServerFacts)
    if not facts.over_http:
        return "spoken to over stdio, which the authorization pages leave to the environment"
    if facts.http is None:
        return "not run: the server did not answer the handshake (see server-handshake)"
    if facts.http.auth is None:
        return (
            "not a protected resource of the kit's authorization server: --axm-auth=local "
            "starts it as one"
        )
    if facts.http.version == VERSIONS[0]:
        return f"{VERSIONS[0]} has no authorization (since 2025-03-26)"
    auth = facts.http.auth
    if not {auth.discovered.status, auth.no_token.status} & {401, 403}:
        return (
            f"it asks no token of any request (initialize without one: HTTP "
            f"{auth.discovered.status}, tools/list: {auth.no_token.shown}): it implements no "
            "authorization, which --axm-auth=local holds a server to"
        )
    return None


def _resource_indicated(subject: SubjectInfo) -> str | Finding | None:
    reason = _protected(subject)
    version = _auth_version(subject) if reason is None else ""
    if version and VERSIONS.index(version) < VERSIONS.index(_RESOURCES_SINCE):
        return (
            f"{version} has no protected resource metadata or resource indicators (RFC 9728, "
            f"RFC 8707: since {_RESOURCES_SINCE})"
        )
    return reason


def _auth_version(subject: SubjectInfo) -> str:
    facts = subject.server
    assert isinstance(facts, ServerFacts) and facts.http is not None
    return facts.http.version


def _token_asked(subject: SubjectInfo, applies: Applies = _protected) -> str | Finding | None:
    reason = applies(subject)
    if reason is None and _auth(subject).no_token.served:
        return not_run("not run: it serves requests with no token (see auth-token-required)")
    return reason


@check("auth-token-required", "server", applies=_protected, subject="server")
def auth_token_required(subject: SubjectInfo, context: CheckContext) -> Found:
    """A request with no token is answered 401 Unauthorized with a Bearer challenge."""
    auth = _auth(subject)
    answer = auth.no_token
    if answer.served:
        yield (
            f"refused initialize without a token (HTTP {auth.discovered.status}), then served "
            f"tools/list in the session with no token ({answer.shown}): whoever holds the "
            "session id calls its tools; MCP servers that implement authorization MUST verify "
            "all inbound requests, and MUST NOT treat possession of a session or state handle "
            "as authentication (security best practices, Session Hijacking, State Handle "
            "Hijacking)"
        )
    elif answer.status != 401:
        yield warning(
            f"refused a request with no token with {answer.shown}, not 401 Unauthorized "
            "(authorization, Error Handling): a client begins authorization on a 401"
        )
    elif not answer.challenge.strip().lower().startswith("bearer"):
        yield warning(
            f"answered 401 with the challenge {answer.challenge!r}, not a Bearer one: a 401 "
            "MUST carry a WWW-Authenticate challenge (RFC 9110 section 15.5.2), and an MCP "
            "server's names where its protected resource metadata is (RFC 9728 section 5.1); "
            "a client finds it then at the well-known address only"
        )


@check("auth-resource-metadata", "server", applies=_resource_indicated, subject="server")
def auth_resource_metadata(subject: SubjectInfo, context: CheckContext) -> Found:
    """The server serves its protected resource metadata, naming itself and its issuer."""
    auth = _auth(subject)
    found = auth.discovered
    if found.metadata is None:
        yield (
            f"serves no protected resource metadata ({found.said}): MCP servers MUST "
            "implement OAuth 2.0 Protected Resource Metadata (RFC 9728; authorization, "
            "Overview), where a client finds the authorization server that issues its tokens: "
            "no client gets one"
        )
        return
    named = found.challenged.get("resource_metadata", "")
    if named and named != found.metadata_url:
        yield warning(
            f"its challenge names its protected resource metadata at {named}, which gives none "
            f"({found.said}); it is served at {found.metadata_url}, where a client finds it "
            "only if it goes on to the well-known addresses (RFC 9728 section 5.1: the "
            "resource_metadata of a challenge is the URL of the metadata)"
        )
    resource = found.metadata.get("resource")
    if not (isinstance(resource, str) and _covers(resource, found.canonical)):
        yield (
            f"its metadata ({found.metadata_url}) names the resource {resource!r}, not "
            f"{found.canonical}, where it was reached: a client MUST NOT use metadata whose "
            "resource is not the one it asked for (RFC 9728 section 3.3), and the SDKs' "
            "clients refuse it"
        )
    servers = found.metadata.get("authorization_servers")
    issuers = (
        {item.rstrip("/") for item in servers if isinstance(item, str)}
        if isinstance(servers, list)
        else set()
    )
    if auth.issuer not in issuers:
        yield (
            f"its metadata ({found.metadata_url}) names the authorization servers "
            f"{servers!r}, not {auth.issuer}, which it was started with: a client asks "
            "another for its token, or none"
        )


def _covers(resource: str, canonical: str) -> bool:
    """Whether a token for ``resource`` is one for ``canonical``: the same URI (scheme and
    host in any case, a trailing slash aside, any name of loopback for the one the kit
    reached: a server it started cannot know which its client uses), or one its path is under,
    as the SDKs' clients accept it."""
    named, reached = urllib.parse.urlsplit(resource), urllib.parse.urlsplit(canonical)
    host = (named.hostname or "").lower()
    place = ("127.0.0.1" if host in _LOOPBACK else host, named.port)
    if (named.scheme.lower(), place) != (reached.scheme, (reached.hostname, reached.port)):
        return False
    prefix = named.path.rstrip("/")
    return reached.path.rstrip("/") == prefix or reached.path.startswith(f"{prefix}/")


def _refused(answer: Answered, token: str, rule: str) -> Found:
    if answer.served:
        yield f"served tools/list with {token} ({answer.shown}): {rule}"
    elif answer.status != 401:
        yield warning(
            f"refused {token} with {answer.shown}, not 401 Unauthorized: invalid or expired "
            f"tokens MUST receive a HTTP 401 response {_TOKEN_HANDLING}; a client that meets "
            "another status does not know to get a new token"
        )


def _audience_asked(subject: SubjectInfo) -> str | Finding | None:
    return _token_asked(subject, _resource_indicated)


@check("auth-audience-validated", "server", applies=_audience_asked, subject="server")
def auth_audience_validated(subject: SubjectInfo, context: CheckContext) -> Found:
    """A token its authorization server issued for another resource is refused."""
    yield from _refused(
        _auth(subject).other_audience,
        f"a token its authorization server issued for another resource ({OTHER_AUDIENCE})",
        "MCP servers MUST validate that access tokens were issued specifically for them as "
        f"the intended audience (RFC 8707) {_TOKEN_HANDLING}: a token a client was given for "
        "any other server opens this one",
    )


@check("auth-expiry-validated", "server", applies=_token_asked, subject="server")
def auth_expiry_validated(subject: SubjectInfo, context: CheckContext) -> Found:
    """An expired token is refused."""
    yield from _refused(
        _auth(subject).expired,
        "a token that expired an hour ago",
        f"invalid or expired tokens MUST receive a HTTP 401 response {_TOKEN_HANDLING}: a "
        "token that leaked never stops working",
    )


@check("auth-signature-validated", "server", applies=_token_asked, subject="server")
def auth_signature_validated(subject: SubjectInfo, context: CheckContext) -> Found:
    """A token signed with a key its authorization server never published is refused."""
    yield from _refused(
        _auth(subject).forged,
        "a token signed with a key its authorization server never published",
        "MCP servers MUST validate access tokens as OAuth 2.1 section 5.2 describes "
        f"{_TOKEN_HANDLING}: anyone forges a token it accepts",
    )


@check("auth-query-token-refused", "server", applies=_token_asked, subject="server")
def auth_query_token_refused(subject: SubjectInfo, context: CheckContext) -> Found:
    """A token in the URL's query string, not the Authorization header, is refused."""
    answer = _auth(subject).in_query
    if answer.served:
        yield (
            f"served tools/list to a request whose token was in its query string "
            f"(?access_token=...), with no Authorization header ({answer.shown}): access "
            f"tokens MUST NOT be included in the URI query string {_TOKEN_HANDLING}, and "
            "OAuth 2.1 has no such method; URLs are logged, and the token with them"
        )


def _scoped(subject: SubjectInfo) -> str | Finding | None:
    reason = _token_asked(subject)
    if reason is None and _auth(subject).no_scope is None:
        return "the server names no scope, in its challenge or its metadata"
    return reason


@check("auth-scope-enforced", "server", applies=_scoped, subject="server")
def auth_scope_enforced(subject: SubjectInfo, context: CheckContext) -> Found:
    """A token without the scopes the server asked for is answered 403 insufficient_scope."""
    auth = _auth(subject)
    answer = auth.no_scope
    assert answer is not None
    asked = " ".join(auth.scopes)
    if answer.served:
        if auth.discovered.scopes_challenged:
            yield (
                f"served tools/list to a token with no scope ({answer.shown}), though its own "
                f"challenge to that request asked for {asked!r}: the scope of a challenge is "
                "the one required to access the resource (RFC 6750 section 3), and a token "
                "granted less reaches it"
            )
        else:
            yield note(
                f"served tools/list to a token with none of the scopes its metadata lists "
                f"({asked}): listing its tools needs none of them"
            )
        return
    if answer.status != 403 or "insufficient_scope" not in answer.challenge:
        yield warning(
            f"refused a token without the scopes {asked!r} with {answer.shown} "
            f"(WWW-Authenticate: {answer.challenge!r}), not 403 with "
            'error="insufficient_scope": a server SHOULD answer so (authorization, Runtime '
            "Insufficient Scope Errors), which tells a client to ask for more scope rather "
            "than for a new token"
        )


def _upstream_given(subject: SubjectInfo) -> str | Finding | None:
    reason = _protected(subject)
    if reason is None and not _auth(subject).upstream:
        return "the server was given no upstream API ({upstream} in its command or environment)"
    return reason


@check("auth-no-passthrough", "server", applies=_upstream_given, subject="server")
def auth_no_passthrough(subject: SubjectInfo, context: CheckContext) -> Found:
    """The client's token never reaches the upstream API the server calls."""
    facts = subject.server
    assert isinstance(facts, ServerFacts)
    auth = _auth(subject)
    passed = (*auth.passed_through, *facts.passed_through_on_calls)
    if passed:
        calls = f", while it served a call of {', '.join(facts.called)}" if facts.called else ""
        yield (
            f"passed a token the client sent it on to the upstream API it was given "
            f"({auth.upstream}{calls}): {'; '.join(passed[:3])}; the MCP server MUST NOT pass "
            "through the token it received from the MCP client (authorization, Access Token "
            "Privilege Restriction): the upstream API trusts a token that was never issued "
            "for it, and the server's own controls are bypassed (security best practices, "
            "Token Passthrough)"
        )
    elif not facts.called:
        yield note(
            "no tool was called with the upstream API listening (the session that calls each "
            f"tool once did not run: {facts.calls_ended or 'the server did not exit'})"
        )
