"""The child's entry points, in one table: what a worker runs at start, what it is asked to do,
and what a fork server imports once for all its workers. The kit's side names the child's
functions here alone, as ``module:function`` (the worker imports what it is asked to run; the
kit's process never imports the child side).
"""

from __future__ import annotations

__all__ = ["CLOSE_TOOL", "DESCRIBE_ALL", "INVOKE", "OPEN_TOOL", "OPEN_TOOLS", "PRELOAD"]

_AGENT = "axm_conformance._process.child._agent"

# A tool's worker: loads the tool (and the tools of its home beside it) at start, calls it, and
# lets it go at the end.
OPEN_TOOL = f"{_AGENT}:open_tool"
INVOKE = f"{_AGENT}:invoke"
CLOSE_TOOL = f"{_AGENT}:close_tool"
# The inspecting worker: loads the references it is given at start, and describes every tool.
OPEN_TOOLS = f"{_AGENT}:open_tools"
DESCRIBE_ALL = f"{_AGENT}:describe_all"
# What a fork server imports for its workers: the kit's worker side and its reference runtime
# (pydantic with it), which tools written against the seeds import.
PRELOAD = (
    _AGENT,
    "axm_runtime.amplifier",
    "axm_runtime.axio",
    "axm_runtime.axm",
    "axm_runtime.tool_use",
)
