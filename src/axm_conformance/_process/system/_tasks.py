"""A bound on how many tasks (processes and threads) a sandbox holds: a group of the cgroup
``pids`` controller, made per sandbox where the machine lets the kit make groups.

bubblewrap bounds no number of processes, and ``RLIMIT_NPROC`` does not bind root (the kernel
exempts its user whatever its capabilities) and counts a user's processes machine-wide. The pids
controller counts exactly a group's tasks: a fork bomb in a sandbox meets ``EAGAIN`` at
:data:`TASKS_MAX`, and the call's timeout ends it. A group is made in the kit's own group of the
pids hierarchy (cgroup v1), or of the unified one (v2) where the pids controller is enabled for
its children; elsewhere (a v2 group that is not delegated, no cgroups at all) there is no bound
but the call's timeout for root, and for other users ``RLIMIT_NPROC`` at :data:`TASKS_MAX` more
tasks than the user runs when the worker starts (:func:`rlimit_for`); :func:`support` says why
there is no group. A process is in its group before it runs anything (:meth:`TaskGroup.command`
and :meth:`TaskGroup.admit` for one executed, :meth:`TaskGroup.join` for a fork), so that all it
starts is in the group.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import itertools
import os
import subprocess
import sys
import time
from collections.abc import Sequence

__all__ = ["TASKS_MAX", "TaskGroup", "rlimit_for", "support"]

# Far above what a tool or a server needs (a JVM starts about 30 threads, Node about 10), far
# below what exhausts a machine's pids.
TASKS_MAX = 1024
_PREFIX = "axm-conformance-"
_REMOVAL_WAIT = 2.0
_POLL = 0.01
_NAMES = itertools.count()
# Groups not yet removed, removed at the latest when the kit exits.
_MADE: set[str] = set()


def support() -> str:
    """Why no task group can be made here ("" when one can)."""
    return _home()[1]


class TaskGroup:
    """A pids group of its own, holding at most :data:`TASKS_MAX` tasks; None from :meth:`make`
    where none can be made."""

    def __init__(self, path: str) -> None:
        self.path = path

    @staticmethod
    def home() -> str:
        """Where groups are made ("" where none can be)."""
        return _home()[0]

    @classmethod
    def make(cls) -> TaskGroup | None:
        home, _ = _home()
        if not home:
            return None
        path = os.path.join(home, f"{_PREFIX}{os.getpid()}-{next(_NAMES)}")
        try:
            os.mkdir(path)
            _write(os.path.join(path, "pids.max"), str(TASKS_MAX))
        except OSError:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            return None
        _MADE.add(path)
        return cls(path)

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run by a shell that waits, before it runs anything, until :meth:`admit` has
        moved it into the group and said so on its standard input (a pipe), which ``argv``
        then inherits.

        The kit moves it, not the process itself: it may run as another user
        (``--axm-worker-user``), who may not move a process into a group the kit made. A shell
        whose input ends before the word (the kit could not move it) exits with status 1.
        """
        return ["/bin/sh", "-c", 'read -r _ && exec "$@"', "axm-task-group", *argv]

    def admit(self, process: subprocess.Popen[bytes]) -> None:
        """Move ``process``, started as :meth:`command` said with its input a pipe, into the
        group, and let it run."""
        assert process.stdin is not None
        try:
            self.join(process.pid)
        except OSError:
            process.stdin.close()  # the shell exits, having run nothing
            raise
        # The shell reads its input a byte at a time, up to the line's end: what follows is
        # argv's.
        process.stdin.write(b"go\n")
        process.stdin.flush()

    def join(self, pid: int = 0) -> None:
        """Move ``pid`` (this process when 0) into the group."""
        _write(os.path.join(self.path, "cgroup.procs"), str(pid or os.getpid()))

    def remove(self) -> None:
        """Remove the group once its tasks are gone (they leave it as they exit)."""
        _remove(self.path)


def rlimit_for(uid: int) -> int | None:
    """The ``RLIMIT_NPROC`` for a worker of ``uid`` that no group bounds: :data:`TASKS_MAX` more
    tasks than that user runs now, counted in this process's view (the kernel counts a user's
    tasks machine-wide). None for root, which the kernel exempts, and off Linux."""
    if sys.platform != "linux" or uid == 0:
        return None
    running = 0
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    running += len(os.listdir(f"/proc/{entry.name}/task"))
    return running + TASKS_MAX


def _remove(path: str) -> None:
    deadline = time.monotonic() + _REMOVAL_WAIT
    while True:
        try:
            os.rmdir(path)
        except FileNotFoundError:
            break
        except OSError:
            if time.monotonic() > deadline:
                return  # left for the kit's exit
            time.sleep(_POLL)
            continue
        break
    _MADE.discard(path)


@atexit.register
def _remove_all() -> None:
    for path in list(_MADE):
        _remove(path)


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


@functools.cache
def _home() -> tuple[str, str]:
    """Where this process may make pids groups, and why not when it may not."""
    if sys.platform != "linux":
        return "", f"cgroups need Linux, and this is {sys.platform}"
    try:
        with open("/proc/self/cgroup") as file:
            own = dict(_membership(line) for line in file if line.strip())
        with open("/proc/self/mountinfo") as file:
            mounts = [line.split() for line in file]
    except OSError as exc:
        return "", f"the cgroups cannot be read ({exc})"
    for fields in mounts:
        separator = fields.index("-")
        kind, options = fields[separator + 1], fields[separator + 3].split(",")
        mountpoint = fields[4]
        if kind == "cgroup" and "pids" in options and "pids" in own:
            home = mountpoint + own["pids"]
        elif kind == "cgroup2" and "" in own:
            home = mountpoint + own[""]
            enabled = _read(os.path.join(home, "cgroup.subtree_control")).split()
            if "pids" not in enabled:
                continue
        else:
            continue
        home = home.rstrip("/") or "/"
        if _can_make_in(home):
            _remove_abandoned(home)
            return home, ""
    return "", (
        "no pids controller the kit may make groups in (cgroup v1 pids, or v2 with pids "
        "delegated to the kit's group)"
    )


def _remove_abandoned(home: str) -> None:
    """Remove the empty groups that processes gone without removing theirs left (a worker that
    was killed while a server it started ran, say)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(home):
            maker = name.removeprefix(_PREFIX).split("-", 1)[0]
            if name.startswith(_PREFIX) and maker.isdigit() and not _alive(int(maker)):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(home, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _membership(line: str) -> tuple[str, str]:
    """A line of /proc/self/cgroup as (controller, path): "" for the unified hierarchy."""
    _, controllers, path = line.rstrip("\n").split(":", 2)
    names = controllers.split(",")
    return ("pids" if "pids" in names else controllers), path


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return ""


def _can_make_in(home: str) -> bool:
    """Whether a group made here can be bounded (made, its pids.max written, removed)."""
    probe = os.path.join(home, f"{_PREFIX}probe-{os.getpid()}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        _write(os.path.join(probe, "pids.max"), str(TASKS_MAX))
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(probe)
    return True
