"""Process sweep: find every process a worker started, through the process table, and kill them
all.

The kit sweeps after a worker it stops; a worker sweeps after itself when its parent closes the
channel or is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable

from axm_conformance._process.system import _platform, _sandbox
from axm_conformance._process.system._proctable import ancestors, children, descendants_in, table

__all__ = ["TOKEN_VARIABLE", "Started", "await_death", "kill_strays", "live_descendants"]

# Every process the worker starts inherits this variable, whose value is unique to the worker.
TOKEN_VARIABLE = "AXM_WORKER_TOKEN"
# This process's token, read before any tool could change the environment (in a worker).
_OWN_TOKEN = os.environ.get(TOKEN_VARIABLE, "")
# Killing strays is repeated until none is found, at most this many times (a fork bomb races).
_SWEEP_ROUNDS = 50
# Between rounds, killed processes get this long to die (they usually take microseconds).
_SWEEP_PAUSE = 0.01
_DEATH_POLL = 0.0005


def kill_strays(leader: int, token: str, *, spare: int | None = None) -> list[int]:
    """Kill the worker ``leader`` and every process it started; return the pids killed.

    A process belongs to the worker when it is in the worker's process group or session, when
    it descends from the worker, or when its environment carries the worker's ``token``. Each
    round stops the processes it finds before killing them, so that none forks in between,
    and rounds repeat until one finds nothing left. ``spare`` is never signalled (the worker
    itself, when it cleans up after its parent died).
    """
    killed: list[int] = []
    for _ in range(_SWEEP_ROUNDS):
        found = [pid for pid in _members(leader, token) if pid != spare]
        if not found:
            break
        table().kill(found)
        if spare is None and sys.platform != "win32":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(leader, signal.SIGKILL)
        killed.extend(found)
        await_death(found, _SWEEP_PAUSE)
    return killed


def await_death(pids: list[int], seconds: float) -> list[int]:
    """Wait until the processes are dead (zombies or gone), for at most ``seconds``; return
    those still alive."""
    deadline = time.monotonic() + seconds
    alive = [pid for pid in pids if table().facts(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(_DEATH_POLL)
        alive = [pid for pid in alive if table().facts(pid)]
    return alive


class Started:
    """The processes this worker starts from now on: :meth:`since` tells those still running.

    In a sandbox every new process is: its PID namespace holds only the worker and what it
    started, a daemon that left the worker's session and cleared its environment included.
    Elsewhere a subreaper's new children are: it adopts what its tool orphans; and, when
    ``deep`` (a worker that runs a server, whose own children are the tool's), every new
    descendant. Without a subreaper an orphan is adopted by init or launchd, and the worker's
    token, group and session tell its own among the new pids (reading only those is what keeps
    this cheap: a call starts few or none).
    """

    def __init__(self, deep: bool = False) -> None:
        self.sandboxed = _sandbox.inside()
        self.subreaper = _platform.PLATFORM.subreaper and not self.sandboxed
        self.deep = deep and self.subreaper
        if self.deep:
            self.before = set(live_descendants(os.getpid()))
        else:
            self.before = children() if self.subreaper else table().pids()

    def since(self) -> set[int]:
        if self.sandboxed:
            return set(table().live()) - self.before - {os.getpid()}
        if self.deep:
            return set(live_descendants(os.getpid())) - self.before
        if self.subreaper:
            return children() - self.before
        return self.own(table().pids() - self.before)

    def own(self, pids: set[int]) -> set[int]:
        """Those of ``pids`` (of this view) that are this worker's: all, but where the view
        lists every process of the machine."""
        if self.sandboxed or self.deep or self.subreaper:
            return pids - {os.getpid()}
        return {pid for pid in pids if _belongs(pid, os.getpid())}


def _belongs(pid: int, leader: int) -> bool:
    """Whether the live process ``pid`` is one of the worker ``leader``'s (this worker, whose
    token is read at start): see :func:`kill_strays`."""
    facts = table().facts(pid)
    if facts is None:
        return False
    if leader in (facts.group, facts.session):
        return True
    environ = table().environ(pid)
    if environ is not None and f"{TOKEN_VARIABLE}={_OWN_TOKEN}".encode() in environ:
        return True
    return leader in ancestors(pid)


def live_descendants(root: int, also: Iterable[int] = ()) -> dict[int, str]:
    """The live processes descending from ``root`` (zombies excluded), and those of ``also``
    still alive, each with its command line: what a process left running.

    Orphans are reparented to a subreaper ``root``; without one (macOS) they leave the tree,
    and only those seen in it before (``also``) are found.
    """
    found: dict[int, str] = {}
    alive = {pid for pid in also if table().facts(pid) is not None}
    for pid in sorted(table().descendants(root) | alive):
        command = table().command(pid)
        if command is not None:  # else gone meanwhile
            found[pid] = command
    return found


def _members(leader: int, token: str) -> list[int]:
    """Live processes (zombies excluded) of the worker ``leader``, this one left out: see
    :func:`kill_strays`."""
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    live = table().live()
    # A process older than the leader cannot carry its token: its environment is not read.
    born = live[leader].born if leader in live else 0.0
    live.pop(os.getpid(), None)
    parents = {pid: facts.parent for pid, facts in live.items()}
    found: set[int] = set()
    for pid, facts in live.items():
        if leader in (pid, facts.group, facts.session):
            found.add(pid)
        elif not (born and facts.born and facts.born < born):
            environ = table().environ(pid)
            if environ is not None and marker in environ:
                found.add(pid)
    found.update(descendants_in(leader, parents))
    return sorted(found)
