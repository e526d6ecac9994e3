"""The authorization server of a server the kit starts as a protected resource
(``--axm-auth=local``): the server is pointed at it as ``{issuer}`` in its command or
environment, and the kit, its only client, holds the tokens it issues.

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
    """An authorization server on ``port`` of a sandbox's loopback (``issuer``), served from
    the Unix socket ``socket`` in ``directory``, with tokens minted by :meth:`token`."""

    def __init__(self, directory: str, port: int) -> None:
        self.issuer = f"http://127.0.0.1:{port}"
        self.port = port
        self.socket = os.path.join(directory, "authority")
        self._key = _signing_key()
        self._stranger = _signing_key()  # never published: what it signs is forged
        handler = type("_AskedOfThis", (_Asked,), {"authority": self})
        self._server = _served(self.socket, handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"{KIT_THREAD}authority", daemon=True
        )
        self._thread.start()

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
        return jwt.encode(header, claims, key)

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
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


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
            self._answer(200, self.authority.metadata())
        elif path == "/jwks":
            self._answer(200, self.authority.keys())
        else:
            self._answer(404, {"error": "not_found"})

    def do_POST(self) -> None:
        if urllib.parse.urlsplit(self.path).path != "/introspect":
            self._answer(404, {"error": "not_found"})
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        self._answer(200, self.authority.introspected(form.get("token", [""])[0]))

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)
