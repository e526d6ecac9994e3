"""The records of the door to a tool's worker: what the kit asks of it (a call of a tool, an
:class:`Invocation`; a :class:`Probe` of an instrumented copy) and what it answered (an
:class:`Answer`: a value, the error the target raised, or how the process running it stopped, a
:class:`Crash`). The engine asks and reads these; the kit's side of the worker (see
parent._toolworker) turns them into the child's calls and what came back into answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Answer", "Crash", "CrashKind", "Invocation", "Probe", "RemoteError"]

CrashKind = Literal["timeout", "exited", "signalled", "memory", "channel"]


@dataclass(frozen=True)
class RemoteError:
    """An exception raised in the worker by the target or by the setup."""

    type_name: str
    message: str
    traceback: str


@dataclass(frozen=True)
class Crash:
    """The worker stopped serving a call: it timed out, died or broke the protocol."""

    kind: CrashKind
    detail: str
    stderr_tail: str = ""
    exit_code: int | None = None
    signal_name: str | None = None


@dataclass(frozen=True)
class Answer:
    """What a worker answered a call: a value, or else an error, or else a crash."""

    value: Any = None
    error: RemoteError | None = None
    crash: Crash | None = None

    def __post_init__(self) -> None:
        if self.error is not None and self.crash is not None:
            raise ValueError("an outcome is an error or a crash, not both")

    @property
    def ok(self) -> bool:
        """Whether the target returned a value."""
        return self.error is None and self.crash is None


@dataclass(frozen=True)
class Invocation:
    """A call of a tool in its worker: its input; whether the input breaks the schema (it is
    then sent the way the protocol's caller sends one); the condition the protocol makes the
    call under ("offline": cut off from the network; "" as always); and which of the tools
    loaded beside it to call ("": the tool certified)."""

    input: Any
    invalid: bool = False
    condition: str = ""
    tool: str = ""


@dataclass(frozen=True)
class Probe:
    """A probe of an instrumented copy of the tool, by the name its protocol gives it (see
    ToolProtocol.probes), with what it is given."""

    name: str
    payload: Any
