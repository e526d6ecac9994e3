"""axio tools: ``await tool(**input)``; only GuardError and HandlerError may escape."""

from axm_conformance.protocols.axio._protocol import AxioProtocol

__all__ = ["AxioProtocol"]
