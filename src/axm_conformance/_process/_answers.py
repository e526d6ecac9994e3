"""What a worker answers a call, as the kit's side records it: a value, the error the target
raised, or how the process running it stopped (a crash). The engine reads these records; the
worker (see parent._worker) makes them from what came over its channel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Answer", "Crash", "CrashKind", "RemoteError"]

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
