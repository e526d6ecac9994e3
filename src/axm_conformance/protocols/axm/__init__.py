"""AXM tools: ``execute(**input)``, synchronous, returning a ToolResult; nothing should escape,
and what does is turned into a failed result by the MCP layer.
"""

from axm_conformance.protocols.axm._protocol import AXMProtocol

__all__ = ["AXMProtocol"]
