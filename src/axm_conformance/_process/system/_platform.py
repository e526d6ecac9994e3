"""What this platform offers the worker's isolation and observation, decided once per process.

Linux has fast paths the other systems lack: /proc for the process table, inotify for file
changes, a fork server (fork is unsafe on macOS and absent on Windows), pidfds, poll() on the
worker's pipes, a subreaper and RLIMIT_AS. Elsewhere the kit takes the portable way: psutil for
processes, a snapshot of the project's files after every call, workers spawned afresh, a thread
waiting on each of the worker's pipes. ``AXM_CONFORMANCE_PORTABLE=1`` makes it take the portable
way on Linux as well, so that it is tested there; workers inherit the variable. The memory limit
stays enforced then: without it a memory bomb would take the machine.

The modules with two ways choose from :data:`PLATFORM`. Only where a call exists on POSIX alone
(signals, groups, users, rlimits) is ``sys.platform`` asked as well, so that the type checker
sees which way Windows takes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "KIT_THREAD",
    "PLATFORM",
    "PORTABLE_VARIABLE",
    "SYSTEM_VARIABLES",
    "Platform",
    "as_root",
    "detect",
    "home_variables",
    "read_tail",
]

PORTABLE_VARIABLE = "AXM_CONFORMANCE_PORTABLE"
# How the threads the kit starts in a worker for a tool's transport are named, so that what
# watches a call does not take them for the tool's.
KIT_THREAD = "axm-conformance-"
# What a process the kit starts takes from its environment besides what it is given: the path,
# the locale, and what Windows cannot start a process without (an interpreter missing
# SYSTEMROOT cannot even seed its random numbers there).
SYSTEM_VARIABLES = frozenset(
    {"PATH", "LANG", "LANGUAGE", "TZ", "SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT"}
)
_SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


@dataclass(frozen=True)
class Platform:
    """What the kit can rely on here; each flag names the Linux feature a fast path uses.

    ``posix``: signals (a hung worker is asked for its stacks), process groups and sessions (the
    sweep finds a worker's processes by them as well as by descent and token) and user
    switching; Windows has none of them. ``poll_pipes``: poll() waits on the worker's pipes
    (else a thread blocks on each). ``procfs``: the process table read from /proc (else psutil).
    ``inotify``: directory events that spare a walk of the project after most calls (else the
    walk is made every time). ``fork_server``: workers forked from a process that made their
    imports once (else each is spawned). ``pidfd``: a descriptor that tells when a worker exits
    (else its liveness is polled). ``subreaper``: the worker adopts what its tool orphans, so
    its children are what the tool left running (else the processes carrying the worker's token,
    group or session are). ``memory_limit``: RLIMIT_AS is enforced (macOS accepts it and ignores
    it). ``network_namespaces``: a server can be started cut off from every network (else
    ``closed-world-honoured`` is not run).
    """

    system: str
    portable: bool
    posix: bool
    poll_pipes: bool
    procfs: bool
    inotify: bool
    fork_server: bool
    pidfd: bool
    subreaper: bool
    memory_limit: bool
    network_namespaces: bool

    def missing(self) -> tuple[str, ...]:
        """What is not enforced or observed here, for the run's header (nothing on Linux)."""
        return tuple(
            what
            for what, has in (
                ("no memory limit", self.memory_limit),
                ("no stacks from a hung call", self.posix),
            )
            if not has
        )


def detect(platform: str = sys.platform, environ: Mapping[str, str] = os.environ) -> Platform:
    """The capabilities of ``platform`` (a ``sys.platform`` value), with the portable way forced
    when ``environ`` sets the variable to anything but "" or "0"."""
    linux = platform.startswith("linux")
    portable = environ.get(PORTABLE_VARIABLE, "") not in ("", "0")
    fast = linux and not portable
    pidfd = fast and hasattr(os, "pidfd_open")
    return Platform(
        system=_SYSTEMS.get("linux" if linux else platform, platform),
        portable=portable or not linux,
        posix=platform != "win32",
        poll_pipes=fast,
        procfs=fast,
        inotify=fast,
        fork_server=pidfd,
        pidfd=pidfd,
        subreaper=fast,
        memory_limit=linux,
        network_namespaces=fast,
    )


# Read by the modules at each use, so that a test can choose the portable way (see conftest).
PLATFORM = detect()


def home_variables(home: str, tmp: str | None = None) -> dict[str, str]:
    """A process's home (and temporary directory, when ``tmp`` is given) under every name this
    system's programs read: HOME and TMPDIR; on Windows USERPROFILE, TEMP and TMP as well."""
    windows = sys.platform == "win32"
    found = dict.fromkeys(("HOME", "USERPROFILE") if windows else ("HOME",), home)
    if tmp is not None:
        found.update(dict.fromkeys(("TMPDIR", "TEMP", "TMP") if windows else ("TMPDIR",), tmp))
    return found


def as_root() -> bool:
    """Whether the kit runs as root (Windows has no such user, nor a way to switch users)."""
    return sys.platform != "win32" and os.geteuid() == 0


def read_tail(fd: int, size: int) -> tuple[int, bytes]:
    """The last size bytes of the file open at fd, with the offset they start at, read without
    moving the file's offset where POSIX allows (Windows has no pread: it seeks, then leaves
    the offset at the end, where a writer sharing it appends)."""
    length = os.fstat(fd).st_size
    start = max(0, length - size)
    if sys.platform == "win32":
        os.lseek(fd, start, os.SEEK_SET)
        return start, os.read(fd, length - start)
    return start, os.pread(fd, length - start, start)
