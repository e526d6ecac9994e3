"""How the engine calls a tool: through a :class:`Caller`, the one seam between the engine and
the process the tool runs in, whose verbs take and give the door's records
(:mod:`axm_conformance._process._records`).

The kit's tool worker (``_process.parent._toolworker.ToolWorker``) is the caller of every run:
``invoke`` calls the tool, ``probe`` makes one of its protocol's probes of an instrumented copy,
each answering a value, a remote error or a crash. The run's :class:`Callers` give the tool its
caller (started ahead of it where they can) and another one when a probe needs other settings
(the tool with the network). The kit's own unit tests give the engine a fake of both, which
answers from Python functions, and run every phase of the engine without a process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from axm_conformance._process._records import Answer, Invocation, Probe

if TYPE_CHECKING:
    from axm_conformance._observation import SubjectInfo
    from axm_conformance._settings import Settings

__all__ = ["Caller", "Callers"]


class Caller(Protocol):
    """Calls one tool (and the tools loaded beside it) for the engine."""

    def invoke(self, invocation: Invocation, *, timeout: float | None = None) -> Answer:
        """Call the tool: the observation of the call, else the error the worker raised, else
        how the process running it ended (a crash, a timeout)."""
        ...

    def probe(self, probe: Probe, *, timeout: float | None = None) -> Answer:
        """Make one of the protocol's probes: its trace, an error, or a crash."""
        ...

    def restart(self) -> None:
        """Start afresh: the next call meets the tool as it was loaded (a fresh server)."""
        ...

    def close(self) -> None:
        """Stop: no call is made after this."""
        ...


class Callers(Protocol):
    """Where a run's callers come from."""

    def take(self, subject: SubjectInfo) -> Caller:
        """The tool's caller, ready to call it."""
        ...

    def fresh(self, subject: SubjectInfo, settings: Settings) -> Caller:
        """Another caller of the tool, as ``settings`` ask (one that reaches the network)."""
        ...
