"""Amplifier tools: ``await execute(input)`` with one input dict, returning a ToolResult."""

from axm_conformance.protocols.amplifier._protocol import AmplifierProtocol

__all__ = ["AmplifierProtocol"]
