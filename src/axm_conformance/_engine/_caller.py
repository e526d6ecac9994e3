"""How the engine calls a tool: through a :class:`Caller`, the one seam between the engine and
the process the tool runs in.

The kit's worker (:class:`axm_conformance._process.parent._worker.Worker`) is the caller of every
run: each call runs a target of the worker's child side (``module:qualname``) with the loaded
tool as its state, and answers a value, a remote error or a crash. Anything with the same three
operations calls tools for the engine: the kit's own unit tests give it a fake that answers from
a Python function, and run every phase of the engine without a process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from axm_conformance._process._answers import Answer

if TYPE_CHECKING:
    from axm_conformance._observation import SubjectInfo
    from axm_conformance._settings import Settings

__all__ = ["Caller", "Callers"]


class Caller(Protocol):
    """Calls one tool (and the tools loaded beside it) for the engine."""

    def call(self, target: str, *args: Any, timeout: float | None = None) -> Answer:
        """Run ``target(state, *args)`` where the tool is loaded: its value, else the error it
        raised, else how the process running it ended (a crash, a timeout)."""
        ...

    def restart(self) -> None:
        """Start afresh: the next call meets the tool as it was loaded (a fresh server)."""
        ...

    def close(self) -> None:
        """Stop: no call is made after this."""
        ...


# What makes the caller of a tool, given the run's settings (for a second caller of the same
# tool that reaches the network, the settings say so).
Callers = Callable[["SubjectInfo", "Settings"], Caller]
