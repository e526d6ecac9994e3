"""Pydantic AI tools: a ``Tool``, the tools of a ``FunctionToolset``, or a plain function named
with ``--axm-protocol=pydantic_ai`` (as an agent's ``tools=[...]`` takes one), called as its tool
manager calls one: the arguments validated by the tool's own validator, then the function,
given a ``RunContext`` where it takes one.
"""

from axm_conformance.protocols.pydantic_ai._protocol import PydanticAIProtocol

__all__ = ["PydanticAIProtocol"]
