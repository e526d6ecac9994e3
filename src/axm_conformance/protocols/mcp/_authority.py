"""The authorization server of a server the kit starts as a protected resource
(``--axm-auth=local``): the server is pointed at it as ``{issuer}`` in its command or
environment, and the kit, its only client, holds the tokens it issues. Beside it, an upstream
API the server may be pointed at as ``{upstream}``, which answers every request and records it:
a token the kit issued that reaches it was passed through.

The kit mints its tokens itself rather than through a grant: its checks need tokens no honest
authorization server issues (for another audience, expired, signed with a key it never
published, without the scopes the server asks for), beside a valid one for the server's own
resource. joserfc signs them (RFC 9068 access tokens, ES256) and writes the key set; what a
resource server reads of its authorization server (RFC 8414 metadata, the JWKS, RFC 7662
introspection) is served here on the standard library's HTTP server, over a Unix socket that
the server's sandbox joins to a port of its own loopback (see ``_sandbox_init``): the sandbox's
network is its own.
"""

from __future__ import annotations

import json
import os
import secrets
import socketserver
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet

from axm_conformance._process.system._platform import KIT_THREAD

__all__ = ["OTHER_AUDIENCE", "Authority"]

# How long a valid token lives: longer than any certification.
_LIFETIME = 24 * 3600
# An audience no server is: the resource another server's token is for.
OTHER_AUDIENCE = "https://another-resource.invalid/mcp"
_CLIENT = "axm-conformance"


class Authority:
    """An authorization server on ``port`` of a sandbox's loopback (``issuer``), with tokens
    minted by :meth:`token`, and an upstream API on ``upstream_port`` (``upstream``), each
    served from a Unix socket in ``directory`` (``sockets``: port and path)."""

    def __init__(self, directory: str, port: int, upstream_port: int) -> None:
        self.issuer = f"http://127.0.0.1:{port}"
        self.upstream = f"http://127.0.0.1:{upstream_port}"
        self.upstream_given = False  # whether the server was told where the upstream API is
        self.sockets = (
            (port, os.path.join(directory, "authority")),
            (upstream_port, os.path.join(directory, "upstream")),
        )
        self._key = _signing_key()
        self._stranger = _signing_key()  # never published: what it signs is forged
        self._minted: set[str] = set()
        self._heard: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        handlers = (
            type("_AskedOfThis", (_Asked,), {"authority": self}),
            type("_HeardByThis", (_Heard,), {"authority": self}),
        )
        self._servers = [
            _served(path, handler)
            for (_, path), handler in zip(self.sockets, handlers, strict=True)
        ]
        for server in self._servers:
            name = f"{KIT_THREAD}authority"
            threading.Thread(target=server.serve_forever, name=name, daemon=True).start()

    def token(
        self,
        audience: str,
        scopes: Iterable[str] = (),
        *,
        expired: bool = False,
        forged: bool = False,
    ) -> str:
        """An access token of this issuer for ``audience`` with ``scopes``: expired an hour
        ago when ``expired``, signed with a key the issuer never published when ``forged``."""
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": _CLIENT,
            "client_id": _CLIENT,
            "aud": audience,
            "iat": now - (7200 if expired else 0),
            "exp": now - 3600 if expired else now + _LIFETIME,
            "jti": secrets.token_hex(8),
            "scope": " ".join(scopes),
        }
        key = self._stranger if forged else self._key
        header = {"alg": "ES256", "kid": key.kid, "typ": "at+jwt"}
        token = jwt.encode(header, claims, key)
        with self._lock:
            self._minted.add(token)
        return token

    def heard(self, request: str, data: bytes) -> None:
        """Keep a request the upstream API got: its first line and all it carried."""
        with self._lock:
            self._heard.append((request, data))

    def passed_through(self) -> tuple[str, ...]:
        """The requests the upstream API got that carried a token this issuer minted."""
        with self._lock:
            return tuple(
                request
                for request, data in self._heard
                if any(token.encode() in data for token in self._minted)
            )

    def metadata(self) -> dict[str, Any]:
        """Its RFC 8414 metadata: where its keys are and where a token is introspected."""
        return {
            "issuer": self.issuer,
            "jwks_uri": f"{self.issuer}/jwks",
            "introspection_endpoint": f"{self.issuer}/introspect",
            "response_types_supported": [],
        }

    def keys(self) -> dict[str, Any]:
        return dict(KeySet([self._key]).as_dict(private=False))

    def introspected(self, token: str) -> dict[str, Any]:
        """What RFC 7662 says of ``token``: active, with its claims, only if this issuer
        signed it and it has not expired."""
        try:
            claims = jwt.decode(token, self._key).claims
        except (JoseError, ValueError):
            return {"active": False}
        if not isinstance(claims.get("exp"), int) or claims["exp"] <= time.time():
            return {"active": False}
        return {"active": True, "token_type": "Bearer", **claims}

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()


def _signing_key() -> ECKey:
    return ECKey.generate_key(
        "P-256", parameters={"kid": secrets.token_hex(4), "alg": "ES256", "use": "sig"}
    )


def _served(path: str, handler: type[BaseHTTPRequestHandler]) -> socketserver.BaseServer:
    """An HTTP server on a new Unix socket at ``path``, each request in a thread of its own."""
    if sys.platform == "win32":
        raise OSError("a sandbox, and a Unix socket into it, is Linux's")
    server = socketserver.ThreadingUnixStreamServer(path, handler)
    server.daemon_threads = True
    return server


class _Asked(BaseHTTPRequestHandler):
    """What a resource server asks of its authorization server."""

    authority: Authority

    def log_message(self, *args: Any) -> None:
        pass  # a resource server's requests are the server's business, not the report's

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        if path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            _answer(self, 200, self.authority.metadata())
        elif path == "/jwks":
            _answer(self, 200, self.authority.keys())
        else:
            _answer(self, 404, {"error": "not_found"})

    def do_POST(self) -> None:
        if urllib.parse.urlsplit(self.path).path != "/introspect":
            _answer(self, 404, {"error": "not_found"})
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        _answer(self, 200, self.authority.introspected(form.get("token", [""])[0]))


class _Heard(BaseHTTPRequestHandler):
    """What an upstream API hears from the server: every request, kept whole and answered
    200 with an empty object."""

    authority: Authority

    def log_message(self, *args: Any) -> None:
        pass

    def handle_one_request(self) -> None:
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline or not self.parse_request():
            self.close_connection = True
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        request = self.requestline
        self.authority.heard(request, f"{request}\r\n{self.headers}".encode() + body)
        _answer(self, 200, {})
        self.wfile.flush()


def _answer(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("Cache-Control", "no-store")
    handler.end_headers()
    handler.wfile.write(data)
