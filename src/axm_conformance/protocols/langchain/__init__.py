"""LangChain tools: a ``BaseTool`` (``@tool``, ``StructuredTool.from_function``, a subclass)
called as an agent calls it, ``invoke`` (or ``ainvoke``) with a tool call, answered by a
``ToolMessage``.
"""

from axm_conformance.protocols.langchain._protocol import LangChainProtocol

__all__ = ["LangChainProtocol"]
