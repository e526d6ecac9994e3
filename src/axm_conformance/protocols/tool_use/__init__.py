"""tool_use entries: ``handler(input)`` with one validated dict, as the registry calls it."""

from axm_conformance.protocols.tool_use._protocol import ToolUseProtocol

__all__ = ["ToolUseProtocol"]
