"""The JSON-Schema-Test-Suite's remote documents, served on the loopback interface.

The suite's ``refRemote`` tests (and a few others) refer to documents at
``http://localhost:1234/``, which the suite's own harness serves from its ``remotes/`` folder.
The kit ships that folder and serves it the same way, from a thread of the process that runs the
suite, so that any validator (one that fetches with urllib, reqwest, ...) finds the documents
without the network. Processes that run the suite side by side (pytest-xdist workers) share the
first one's server.
"""

from __future__ import annotations

import functools
import json
import threading
import urllib.request
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any, Final

__all__ = ["REMOTE_BASE", "is_remote", "remote_document", "serve_remotes"]

REMOTE_BASE: Final = "http://localhost:1234/"
_ADDRESS: Final = ("127.0.0.1", 1234)
_CHECKED: Final = "integer.json"  # what tells the suite's server from another one


def _folder() -> Traversable:
    return resources.files("axm_conformance").joinpath("data", "json-schema-test-suite", "remotes")


def _document(path: str) -> Traversable | None:
    """The shipped document at a path under `REMOTE_BASE`, None when there is none."""
    parts = [part for part in path.split("/") if part]
    if not parts or any(part in (".", "..") for part in parts):
        return None
    found = _folder().joinpath(*parts)
    return found if found.is_file() else None


def is_remote(uri: str) -> bool:
    """Whether ``uri`` (without its fragment) is a document the kit serves."""
    return uri.startswith(REMOTE_BASE) and _document(uri.removeprefix(REMOTE_BASE)) is not None


def remote_document(uri: str) -> Any:
    """The shipped document ``uri`` names (its fragment dropped), read as JSON; `LookupError`
    when the kit has none."""
    document = _document(uri.split("#")[0].removeprefix(REMOTE_BASE))
    if not uri.startswith(REMOTE_BASE) or document is None:
        raise LookupError(f"no remote document {uri}")
    return json.loads(document.read_text(encoding="utf-8"))


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        document = _document(self.path.split("?")[0])
        if document is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        body = document.read_bytes()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # a validator's fetches are not the run's output


@functools.cache
def serve_remotes() -> str:
    """Serve the remote documents on localhost:1234 for the rest of the process, once.

    Returns "" when they are served (here, or by another process running the suite), else why
    not: a case that needs them is then reported errored with that reason.
    """
    try:
        server = ThreadingHTTPServer(_ADDRESS, _Handler)
    except OSError as exc:
        try:
            with urllib.request.urlopen(REMOTE_BASE + _CHECKED, timeout=5) as response:
                served = response.read()
        except OSError:
            served = b""
        expected = _folder().joinpath(_CHECKED).read_bytes()
        if served == expected:
            return ""
        return f"the suite's remote documents cannot be served on localhost:1234: {exc}"
    threading.Thread(target=server.serve_forever, name="axm-remotes", daemon=True).start()
    return ""
