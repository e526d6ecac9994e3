"""A fake of the engine's caller (axm_conformance._engine._caller): it answers each call from a
Python function of the input, in this process, so that a unit test runs every phase of the
engine, on a tool described by the factories, in about a second, with no process started."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from axm_conformance._feeds import VALID
from axm_conformance._observation import Observation, SubjectInfo
from axm_conformance._process._answers import Answer, RemoteError
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
    ``invalid`` for an input that breaks the schema.
    ``reset`` runs at each restart, as a fresh worker forgets the world; every call is kept, in
    order, as (the reference called, "" for the tool certified, and its input)."""

    tool: Behaviour
    together: dict[str, Behaviour] = field(default_factory=dict)
    # How the tool answers an input that breaks its schema (None: the caller refuses it).
    invalid: Behaviour | None = None
    reset: Callable[[], None] = lambda: None
    calls: list[tuple[str, Any]] = field(default_factory=list)
    restarts: int = 0
    closed: bool = False

    def call(self, target: str, *args: Any, timeout: float | None = None) -> Answer:
        if target != VALID.target:  # a probe of an instrumented copy: not faked
            return Answer(error=RemoteError("LookupError", f"the fake makes no {target}", ""))
        value, invalid, *rest = args
        ref = rest[1] if len(rest) > 1 else ""
        self.calls.append((ref, value))
        if invalid and self.invalid is not None:
            return Answer(value=self.invalid(value))
        if invalid:
            return Answer(value=Observation(status="rejected", rejected_because="invalid"))
        return Answer(value=(self.together[ref] if ref else self.tool)(value))

    def restart(self) -> None:
        self.restarts += 1
        self.reset()

    def close(self) -> None:
        self.closed = True

    def callers(self, subject: SubjectInfo, settings: Settings) -> FakeCaller:
        """The engine's ``callers``: this fake, whatever it is asked for."""
        return self
