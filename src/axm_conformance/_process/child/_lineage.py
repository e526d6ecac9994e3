"""Whose a process left running is: the call's during which it was started, unless it descends
from a process already running that an earlier call was charged with, or the server starts the
same command on its own.

Appearing during a call does not make a process the call's. A daemon an earlier call left starts
children later, during whatever call runs then; a server may start processes on its own (a
watcher, a poller), between calls and during them alike. The worker remembers, for its life, the
processes a call was charged with (and what they started since), and the command lines of the
processes that appeared while no call ran: no call started those, so the server (or the tool's
module) did. A process that appears during a call is charged to that call unless its first
ancestor not started during the call is one of the former, or its command line is one of the
latter.

Nor is a process that ends on its own a moment after the call answered (a server's bookkeeping
after its answer: a version probe, telemetry, an index refresh): left running means outliving
the call, not being caught alive at the instant of its answer.
"""

from __future__ import annotations

from axm_conformance._process.system._proctable import ancestors, table
from axm_conformance._process.system._sweep import Started, await_death

__all__ = ["LINEAGE", "Lineage"]

# Seconds a process charged to a call has to end on its own before it counts as left running:
# enough for a short command under load, paid only by calls that leave one.
_SETTLE = 0.5


class Lineage:
    """What the worker knows of whose its running processes are (see the module)."""

    def __init__(self) -> None:
        # Processes a call was charged with, and the processes they started since.
        self.charged: set[int] = set()
        # Command lines of processes that appeared while no call ran.
        self.alone: set[str] = set()
        # Command lines of processes charged to a call that outlived the settling time.
        self.lasting: set[str] = set()
        # The processes counted when the last call ended; none before the first, so that what
        # a server started before its first call (a poller's first children) is its own too.
        self.seen: set[int] = set()

    def between_calls(self, started: Started) -> None:
        """Learn from what appeared since the last call ended, as a call begins (``started``
        its view of the processes before it)."""
        appeared = started.own(started.before - self.seen)
        for pid in appeared:
            if _origin(pid, appeared) in self.charged:
                self.charged.add(pid)
            else:
                command = table().command(pid)
                if command:
                    self.alone.add(command)

    def charge(self, started: Started) -> list[int]:
        """The processes started during the call that are the call's and still run a moment
        after it (see the module), in pid order; the call is charged with them."""
        appeared = started.since()
        charged: dict[int, str | None] = {}
        for pid in sorted(appeared):
            if _origin(pid, appeared) in self.charged:
                self.charged.add(pid)
            elif (command := table().command(pid)) not in self.alone:
                charged[pid] = command
        # A command seen to outlive the settling time is not waited for again: a tool that
        # leaves a helper per call pays the wait once, not at every call.
        waited = [pid for pid, command in charged.items() if command not in self.lasting]
        alive = set(await_death(waited, _SETTLE))
        self.lasting.update(str(charged[pid]) for pid in alive if charged[pid])
        left = [pid for pid in charged if pid in alive or pid not in waited]
        counted = started.before | appeared
        self.charged = (self.charged | set(left)) & counted
        self.seen = counted
        return left


def _origin(pid: int, appeared: set[int]) -> int | None:
    """The first ancestor of ``pid`` that is not among ``appeared``; None when the chain cannot
    be read (a process gone meanwhile)."""
    return next((above for above in ancestors(pid) if above not in appeared), None)


# One per worker process: a worker restarted fresh knows nothing of the processes before it.
LINEAGE = Lineage()
