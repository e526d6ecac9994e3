"""The MCP protocol: servers over stdio or HTTP, in any language, certified on the wire.

A plugin like any other: the protocol is registered under the entry-point group
``axm_conformance.protocols`` (``mcp``), its checks under ``axm_conformance.checks`` (``mcp``),
through the same public interfaces a third party uses. Its parts:

- ``_versions``: what each published version has (its members, its metadata, its codes);
- ``_wire``: the session with one server, over its stdin and stdout or over HTTP, every
  message validated against the official schema of its version;
- ``_http``: the Streamable HTTP transport as a client speaks it (and the deprecated HTTP+SSE
  one it falls back to), for a server the kit starts or one someone else runs;
- ``_server``: the session a reference's tools share, and a tool called on it (with snapshots of
  the server's working directory around each call);
- ``_probe`` and ``_facts``: the server observed whole, in sessions of its own;
- ``_protocol``: the :class:`McpProtocol` the kit loads, describes and calls tools through;
- ``_checks``: the wire and server checks;
- ``_http_probe`` and ``_http_checks``: the HTTP transport's own rules, asked beside the probe's
  session, and their checks.

The core knows none of these: no check outside this package reads the wire.
"""

from axm_conformance.protocols.mcp._facts import Relisting, ServerFacts
from axm_conformance.protocols.mcp._protocol import McpProtocol

__all__ = ["McpProtocol", "Relisting", "ServerFacts"]
