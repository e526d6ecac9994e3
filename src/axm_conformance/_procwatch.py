"""Process watch: the worker's children and who else writes a file, read from Linux's /proc.

What a call left running is told from the worker's children before and after the call; a file
that changed during the call is not the tool's doing when a process outside the worker's session
holds it open for writing.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["children", "process_name", "written_by_others"]


def children() -> set[int]:
    """The worker's child processes (it adopts orphans, so daemons are among them)."""
    found: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as file:
                found.update(int(pid) for pid in file.read().split())
        except (OSError, ValueError):
            continue
    return found


def process_name(pid: int) -> str | None:
    """The command name of a live process; None for one that has exited."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    name, _, rest = stat.partition(b" (")[2].rpartition(b") ")
    if rest[:1] in (b"Z", b"X"):
        return None
    return name.decode("utf-8", "replace")


def written_by_others(paths: set[str]) -> set[str]:
    """Those of ``paths`` that a process outside the worker's session holds open for writing.

    Such a file is someone else's (the log of the test run itself, redirected into the project,
    say): it changed during the call, but not through the tool. The worker leads its session,
    and the tool's processes stay in it unless they leave on purpose.
    """
    found: set[str] = set()
    session = os.getsid(0)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == session:
                continue
            descriptors = os.listdir(f"{entry.path}/fd")
        except OSError:  # gone, or another user's
            continue
        for fd in descriptors:
            with contextlib.suppress(OSError, ValueError):
                target = os.readlink(f"{entry.path}/fd/{fd}")
                if target in paths and _open_for_writing(f"{entry.path}/fdinfo/{fd}"):
                    found.add(target)
    return found


def _open_for_writing(fdinfo: str) -> bool:
    with open(fdinfo) as file:
        for line in file:
            if line.startswith("flags:"):
                return int(line.split()[1], 8) & (os.O_WRONLY | os.O_RDWR) != 0
    return False
