"""A fake of the engine's caller (axm_conformance._engine._caller): it answers each call from a
Python function of the input, in this process, so that a unit test runs every phase of the
engine, on a tool described by the factories, in about a second, with no process started."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from axm_conformance._observation import Observation, SubjectInfo
from axm_conformance._process._records import Answer, Invocation, Probe, RemoteError
from axm_conformance._settings import Settings
from tests.unit.factories import result, returned

__all__ = ["FakeCaller", "refused", "served"]

Behaviour = Callable[[Any], Observation]


def served(**data: Any) -> Observation:
    return returned(result(success=True, data=data, error=None))


def refused(error: str) -> Observation:
    return returned(result(success=False, data={}, error=error))


@dataclass
class FakeCaller:
    """Calls ``tool`` for the tool certified, ``together[ref]`` for a tool loaded beside it,
    ``invalid`` for an input that breaks the schema, ``probes`` for the protocol's probes.
    ``reset`` runs at each restart, as a fresh worker forgets the world; every call is kept, in
    order, as (the reference called, "" for the tool certified, and its input)."""

    tool: Behaviour
    together: dict[str, Behaviour] = field(default_factory=dict)
    # How the tool answers an input that breaks its schema (None: the caller refuses it).
    invalid: Behaviour | None = None
    reset: Callable[[], None] = lambda: None
    # How each probe's trace is made from what it is given, by the probe's name.
    probes: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    probed: list[tuple[str, Any]] = field(default_factory=list)
    restarts: int = 0
    closed: bool = False

    def invoke(self, invocation: Invocation, *, timeout: float | None = None) -> Answer:
        self.calls.append((invocation.tool, invocation.input))
        if invocation.invalid and self.invalid is not None:
            return Answer(value=self.invalid(invocation.input))
        if invocation.invalid:
            return Answer(value=Observation(status="rejected", rejected_because="invalid"))
        tool = self.together[invocation.tool] if invocation.tool else self.tool
        return Answer(value=tool(invocation.input))

    def probe(self, probe: Probe, *, timeout: float | None = None) -> Answer:
        self.probed.append((probe.name, probe.payload))
        make = self.probes.get(probe.name)
        if make is None:
            return Answer(error=RemoteError("LookupError", f"the fake makes no {probe.name}", ""))
        return Answer(value=make(probe.payload))

    def restart(self) -> None:
        self.restarts += 1
        self.reset()

    def close(self) -> None:
        self.closed = True

    # The engine's callers: this fake, whatever it is asked for.
    def take(self, subject: SubjectInfo) -> FakeCaller:
        return self

    def fresh(self, subject: SubjectInfo, settings: Settings) -> FakeCaller:
        return self
