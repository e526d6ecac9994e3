"""smolagents tools: a ``Tool`` subclass (``inputs``, ``output_type``, ``forward``) or a
``@tool`` function, called as its agents call one: the arguments checked by
``validate_tool_arguments``, then ``tool(**arguments, sanitize_inputs_outputs=True)``.
"""

from axm_conformance.protocols.smolagents._protocol import SmolagentsProtocol

__all__ = ["SmolagentsProtocol"]
