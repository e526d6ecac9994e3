"""A tool's worker, as the engine calls it: a :class:`~._worker.Worker` whose setup loaded the
tool, with the verbs of the engine's caller (see axm_conformance._engine._caller) taking and
giving the door's records (:mod:`axm_conformance._process._records`): ``invoke`` calls the tool
(or a tool loaded beside it), ``probe`` makes one of its protocol's probes of an instrumented
copy, ``restart`` and ``close`` as every worker.
"""

from __future__ import annotations

from collections.abc import Mapping

from axm_conformance._process._records import Answer, Invocation, Probe, RemoteError
from axm_conformance._process.parent._entries import INVOKE
from axm_conformance._process.parent._worker import Worker, WorkerConfig

__all__ = ["ToolWorker"]


class ToolWorker(Worker):
    """A worker that serves one tool; ``probes`` are its protocol's, by name: the child's
    function that makes each (see ToolProtocol.probes)."""

    def __init__(self, config: WorkerConfig, probes: Mapping[str, str]) -> None:
        super().__init__(config)
        self.probes = dict(probes)

    def invoke(self, invocation: Invocation, *, timeout: float | None = None) -> Answer:
        """Call the tool (or the tool of its home ``invocation.tool`` names) once."""
        return self.call(
            INVOKE,
            invocation.input,
            invocation.invalid,
            invocation.condition,
            invocation.tool,
            timeout=timeout,
        )

    def probe(self, probe: Probe, *, timeout: float | None = None) -> Answer:
        """Make one of the protocol's probes; a probe it does not make is an error answered."""
        target = self.probes.get(probe.name)
        if target is None:
            error = RemoteError("LookupError", f"the protocol makes no {probe.name} probe", "")
            return Answer(error=error)
        return self.call(target, probe.payload, timeout=timeout)
