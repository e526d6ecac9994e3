"""OpenAI Agents SDK tools: a ``FunctionTool`` (``@function_tool``, or built by hand), called as
the runner calls one: ``await tool.on_invoke_tool(ToolContext(...), arguments_json)``.
"""

from axm_conformance.protocols.openai_agents._protocol import OpenAIAgentsProtocol

__all__ = ["OpenAIAgentsProtocol"]
