"""Process sweep: find every process a worker started, through Linux's /proc, and kill them all.

The kit sweeps after a worker it stops; a worker sweeps after itself when its parent closes the
channel or is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Mapping

__all__ = ["TOKEN_VARIABLE", "kill_strays", "live_descendants"]

# Every process the worker starts inherits this variable, whose value is unique to the worker.
TOKEN_VARIABLE = "AXM_WORKER_TOKEN"
# Killing strays is repeated until none is found, at most this many times (a fork bomb races).
_SWEEP_ROUNDS = 50
# Between rounds, killed processes get this long to die (they usually take microseconds).
_SWEEP_PAUSE = 0.01
_DEATH_POLL = 0.0005


def kill_strays(leader: int, token: str, *, spare: int | None = None) -> list[int]:
    """SIGKILL the worker ``leader`` and every process it started; return the pids killed.

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
        for number in (signal.SIGSTOP, signal.SIGKILL):
            for pid in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, number)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if spare is None:
                os.killpg(leader, signal.SIGKILL)
        killed.extend(found)
        _await_death(found, _SWEEP_PAUSE)
    return killed


def _await_death(pids: list[int], seconds: float) -> None:
    """Wait until the processes are dead (zombies or gone), for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(_DEATH_POLL)


def _running(pid: int) -> bool:
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] not in _DEAD


# Process states of /proc/PID/stat that are no longer running: zombie, dead.
_DEAD = (b"Z", b"X")


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and
    parentheses), starting with the state; none when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def _live() -> dict[int, list[bytes]]:
    """Every live process (zombies excluded) with its stat fields from the state on: parent,
    process group and session among them."""
    live: dict[int, list[bytes]] = {}
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            fields = _stat_fields(int(entry)) if entry.isdigit() else []
            if len(fields) >= 4 and fields[0] not in _DEAD:
                live[int(entry)] = fields
    return live


def live_descendants(root: int) -> dict[int, str]:
    """The live processes descending from ``root`` (zombies excluded), each with its command
    line: what a process left running (orphans are reparented to a subreaper ``root``)."""
    parents = {pid: int(fields[1]) for pid, fields in _live().items()}
    found: dict[int, str] = {}
    for pid in sorted(_descendants(root, parents)):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                found[pid] = file.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue  # gone meanwhile
    return found


def _members(leader: int, token: str) -> list[int]:
    """Live processes (zombies excluded) of the worker ``leader``: see :func:`kill_strays`."""
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    live = _live()
    live.pop(os.getpid(), None)
    parents = {pid: int(fields[1]) for pid, fields in live.items()}
    found: set[int] = set()
    for pid, fields in live.items():
        if leader in (pid, int(fields[2]), int(fields[3])):
            found.add(pid)
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as file:
                environ = file.read()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.add(pid)
    found.update(_descendants(leader, parents))
    return sorted(found)


def _descendants(root: int, parents: Mapping[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found
