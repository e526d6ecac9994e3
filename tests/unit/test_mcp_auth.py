"""The authorization server the kit runs for a protected resource (--axm-auth=local), what a
client with no token learns, and how a protected resource's metadata is read."""

from __future__ import annotations

import http.client
import json
import socket
import tempfile
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from axm_conformance._api import check_installed
from axm_conformance._settings import Settings, SettingsError
from axm_conformance.protocols.base import LoadError, LoadOptions
from axm_conformance.protocols.mcp._auth_checks import _covers
from axm_conformance.protocols.mcp._auth_probe import Discovered
from axm_conformance.protocols.mcp._authority import OTHER_AUDIENCE, Authority
from axm_conformance.protocols.mcp._server import transport_of


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost")
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


@pytest.fixture
def authority() -> Iterator[Authority]:
    with tempfile.TemporaryDirectory() as directory:
        served = Authority(directory, 41000, 41001)
        try:
            yield served
        finally:
            served.close()


def _asked(authority: Authority, verb: str, path: str, body: str | None = None) -> Any:
    connection = _UnixConnection(authority.sockets[0][1])
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if body else {}
    connection.request(verb, path, body, headers)
    answer = connection.getresponse()
    data = json.loads(answer.read())
    connection.close()
    return answer.status, data


def test_its_metadata_names_its_keys_and_they_verify_its_tokens_alone(
    authority: Authority,
) -> None:
    status, metadata = _asked(authority, "GET", "/.well-known/oauth-authorization-server")
    assert status == 200 and metadata["issuer"] == "http://127.0.0.1:41000"
    jwks_path = urllib.parse.urlsplit(metadata["jwks_uri"]).path
    _, keys = _asked(authority, "GET", jwks_path)
    assert all("d" not in key for key in keys["keys"])  # no private part is published
    published = KeySet.import_key_set(keys)
    claims = jwt.decode(authority.token("http://127.0.0.1:8000/mcp", ["a", "b"]), published).claims
    assert claims["aud"] == "http://127.0.0.1:8000/mcp" and claims["scope"] == "a b"
    assert claims["iss"] == authority.issuer
    with pytest.raises(JoseError):
        jwt.decode(authority.token(OTHER_AUDIENCE, forged=True), published)


@pytest.mark.parametrize(
    ("kind", "active"),
    [({}, True), ({"expired": True}, False), ({"forged": True}, False)],
)
def test_introspection_says_active_only_of_an_unexpired_token_it_signed(
    authority: Authority, kind: dict[str, bool], active: bool
) -> None:
    token = authority.token("http://127.0.0.1:8000/mcp", ["words:read"], **kind)
    status, said = _asked(
        authority, "POST", "/introspect", urllib.parse.urlencode({"token": token})
    )
    assert status == 200 and said["active"] is active
    if active:
        assert said["aud"] == "http://127.0.0.1:8000/mcp" and said["scope"] == "words:read"


def test_a_challenges_scope_comes_before_the_metadatas_and_its_resource_is_the_audience() -> None:
    challenged = Discovered(
        "http://127.0.0.1:9/mcp",
        401,
        'Bearer error="invalid_token", scope="files:read files:write", '
        'resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"',
        metadata={"resource": "http://127.0.0.1:9/", "scopes_supported": ["admin"]},
    )
    assert challenged.scopes == ("files:read", "files:write") and challenged.scopes_challenged
    assert challenged.challenged["resource_metadata"].endswith("/oauth-protected-resource/mcp")
    assert challenged.audience == "http://127.0.0.1:9/"
    listed = Discovered(
        "http://127.0.0.1:9/mcp", 401, "Bearer", metadata={"scopes_supported": ["a"]}
    )
    assert listed.scopes == ("a",) and not listed.scopes_challenged
    assert listed.audience == "http://127.0.0.1:9/mcp"
    assert Discovered("http://127.0.0.1:9/mcp", 401, 'Basic realm="x"').challenged == {}


@pytest.mark.parametrize(
    ("resource", "covers"),
    [
        ("http://127.0.0.1:9/mcp", True),
        ("HTTP://127.0.0.1:9/mcp/", True),
        ("http://127.0.0.1:9", True),
        ("http://127.0.0.1:9/", True),
        ("http://localhost:9/mcp", True),
        ("http://[::1]:9/mcp", True),
        ("http://example.com:9/mcp", False),
        ("http://127.0.0.1:9/mc", False),
        ("http://127.0.0.1:9/mcp/v2", False),
        ("http://127.0.0.1:10/mcp", False),
        ("https://127.0.0.1:9/mcp", False),
    ],
)
def test_a_resource_covers_the_endpoint_it_is_or_a_path_above_it(
    resource: str, covers: bool
) -> None:
    assert _covers(resource, "http://127.0.0.1:9/mcp") is covers


@pytest.mark.parametrize(
    ("ref", "env", "said"),
    [
        ("mcp-http:srv --port {port}", {}, "does not say where the server's authorization server"),
        ("mcp+http://127.0.0.1:9/mcp", {}, "is a server someone else runs"),
    ],
)
def test_a_local_authorization_server_needs_a_server_the_kit_starts_and_told_where(
    ref: str, env: dict[str, str], said: str
) -> None:
    with pytest.raises(LoadError, match=said):
        transport_of(ref, LoadOptions(env=env, auth="local"))
    told = transport_of(
        "mcp-http:srv --port {port}", LoadOptions(env={"ISSUER": "{issuer}"}, auth="local")
    )
    assert told.auth and told.over_http


def test_the_kits_tokens_and_a_token_of_ones_own_do_not_go_together() -> None:
    with pytest.raises(SettingsError, match="leave out server_token_env, or auth"):
        check_installed(Settings(auth="local", server_token_env="MY_TOKEN"))


def test_the_upstream_api_keeps_what_it_hears_and_names_a_request_carrying_a_token(
    authority: Authority,
) -> None:
    token = authority.token("http://127.0.0.1:8000/mcp", ["words:read"])
    for credential in ("Bearer its-own-key", f"Bearer {token}"):
        connection = _UnixConnection(authority.sockets[1][1])
        connection.request("GET", "/audit", headers={"Authorization": credential})
        assert connection.getresponse().status == 200
        connection.close()
    connection = _UnixConnection(authority.sockets[1][1])
    connection.request("POST", "/forward", body=f"token={token}".encode())
    connection.getresponse().read()
    connection.close()
    assert authority.passed_through() == ("GET /audit HTTP/1.1", "POST /forward HTTP/1.1")
