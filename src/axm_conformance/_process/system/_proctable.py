"""The process table: which processes run, whose child each is, its group, session, environment
and open files; read from Linux's /proc, or through psutil (see
:mod:`axm_conformance._process.system._platform`).

psutil reads /proc on Linux too, but builds an object per process and per question: the sweep
and the file watch ask about every process of the machine, so Linux keeps its own reading.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple, ParamSpec, Protocol, TypeVar

import psutil

from axm_conformance._process.system import _platform

__all__ = [
    "Facts",
    "ProcFS",
    "ProcessTable",
    "Psutil",
    "ancestors",
    "below",
    "children",
    "descendants_in",
    "table",
]


class Facts(NamedTuple):
    """A live process: its parent, process group and session (None where there are none), and
    when it started, in seconds since the epoch (0.0 when not known)."""

    parent: int
    group: int | None
    session: int | None
    born: float


class ProcessTable(Protocol):
    def live(self) -> dict[int, Facts]:
        """Every live process (zombies excluded)."""
        ...

    def pids(self) -> set[int]:
        """The pids of every process, zombies included (a cheap listing)."""
        ...

    def facts(self, pid: int) -> Facts | None:
        """One live process's facts; None for a zombie or a process that is gone."""
        ...

    def environ(self, pid: int) -> list[bytes] | None:
        """The process's environment as NAME=value entries; None when it cannot be read."""
        ...

    def command(self, pid: int) -> str | None:
        """The process's command line, None when it is gone."""
        ...

    def name(self, pid: int) -> str | None:
        """The process's command name, None when it is gone or a zombie."""
        ...

    def descendants(self, root: int) -> set[int]:
        """The live processes descending from ``root`` (zombies excluded)."""
        ...

    def exited(self, pid: int) -> bool:
        """Whether a child of this process has exited, without reaping it."""
        ...

    def kill(self, pids: list[int]) -> None:
        """Stop each process, then kill it: none forks in between."""
        ...

    def written_by_others(self, paths: set[str]) -> set[str]:
        """Those of ``paths`` that a process outside this process's session holds open for
        writing.

        Such a file is someone else's (the log of the test run itself, redirected into the
        project, say): it changed during the call, but not through the tool. The worker leads
        its session, and the tool's processes stay in it unless they leave on purpose.
        """
        ...


# Process states of /proc/PID/stat that are no longer running: zombie, dead.
_DEAD = (b"Z", b"X")


class ProcFS:
    """The table read from Linux's /proc."""

    def live(self) -> dict[int, Facts]:
        live: dict[int, Facts] = {}
        with contextlib.suppress(OSError):
            for entry in os.listdir("/proc"):
                fields = _stat_fields(int(entry)) if entry.isdigit() else []
                if len(fields) >= 4 and fields[0] not in _DEAD:
                    live[int(entry)] = _facts(fields)
        return live

    def pids(self) -> set[int]:
        return {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}

    def facts(self, pid: int) -> Facts | None:
        fields = _stat_fields(pid)
        return _facts(fields) if len(fields) >= 4 and fields[0] not in _DEAD else None

    def environ(self, pid: int) -> list[bytes] | None:
        try:
            with open(f"/proc/{pid}/environ", "rb") as file:
                return file.read().split(b"\0")
        except OSError:
            return None

    def command(self, pid: int) -> str | None:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                return file.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            return None

    def name(self, pid: int) -> str | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            return None
        name, _, rest = stat.partition(b" (")[2].rpartition(b") ")
        if rest[:1] in _DEAD:
            return None
        return name.decode("utf-8", "replace")

    def descendants(self, root: int) -> set[int]:
        """Walked down the kernel's lists of children, so that it reads as many processes as
        the tree holds, not the machine (a worker asks before and after every call); the
        whole table where the kernel keeps no such list (CONFIG_PROC_CHILDREN)."""
        if not _LISTS_CHILDREN:
            return descendants_in(root, {pid: facts.parent for pid, facts in self.live().items()})
        found: set[int] = set()
        pending = [root]
        while pending:
            for child in children(pending.pop()) - found:
                found.add(child)
                pending.append(child)
        return {pid for pid in found if self.facts(pid) is not None}

    def exited(self, pid: int) -> bool:
        if sys.platform != "linux":  # as is all of /proc; macOS has no waitid
            raise NotImplementedError("waitid")
        flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
        try:
            return os.waitid(os.P_PID, pid, flags) is not None
        except ChildProcessError:
            return True

    def kill(self, pids: list[int]) -> None:
        if sys.platform == "win32":
            raise NotImplementedError("no /proc on Windows")
        for number in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, number)

    def written_by_others(self, paths: set[str]) -> set[str]:
        if sys.platform == "win32":
            raise NotImplementedError("no /proc on Windows")
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


def below(pid: int, levels: int) -> int:
    """The process ``levels`` generations below ``pid``, each the first child of the one above
    (a sandbox's worker, under its monitor and its init); the lowest found when the line ends
    earlier."""
    live = table().live()
    for _ in range(levels):
        found = sorted(child for child, facts in live.items() if facts.parent == pid)
        if not found:
            break
        pid = found[0]
    return pid


def children(pid: int | None = None) -> set[int]:
    """The children of ``pid``, of this process by default (a subreaper's: see
    ``_sweep.started``), from Linux's /proc."""
    found: set[int] = set()
    process = "self" if pid is None else str(pid)
    try:
        tasks = os.listdir(f"/proc/{process}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{process}/task/{task}/children") as file:
                found.update(int(pid) for pid in file.read().split())
        except (OSError, ValueError):
            continue
    return found


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and
    parentheses), starting with the state; none when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def _facts(fields: list[bytes]) -> Facts:
    return Facts(int(fields[1]), int(fields[2]), int(fields[3]), 0.0)


def _open_for_writing(fdinfo: str) -> bool:
    with open(fdinfo) as file:
        for line in file:
            if line.startswith("flags:"):
                return int(line.split()[1], 8) & (os.O_WRONLY | os.O_RDWR) != 0
    return False


# Zombies still hold their pid, group and session, but run no more.
_GONE = (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
# psutil's open modes (Linux only) that write.
_WRITING = frozenset({"w", "a", "r+", "a+"})


_P = ParamSpec("_P")
_R = TypeVar("_R")
# psutil looks itself up in sys.modules (its /proc path, on Linux), which a tool may have emptied.
_PSUTIL_MODULES = {
    name: module
    for name, module in sys.modules.items()
    if name == "psutil" or name.startswith("psutil.")
}


def _own_modules(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``method`` with psutil's modules in sys.modules, then leave sys.modules as it was: what
    a call did to it is told afterwards (see ``_sideeffects``)."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        modules = sys.modules
        replaced = {
            name: modules.get(name)
            for name, module in _PSUTIL_MODULES.items()
            if modules.get(name) is not module
        }
        modules.update({name: _PSUTIL_MODULES[name] for name in replaced})
        try:
            return method(*args, **kwargs)
        finally:
            for name, before in replaced.items():
                if before is None:
                    modules.pop(name, None)
                else:
                    modules[name] = before

    return wrapper


class Psutil:
    """The table through psutil: macOS, Windows, and Linux when the portable way is forced.

    Groups and sessions are read with ``os.getpgid`` and ``os.getsid`` (POSIX; Windows has
    neither). Killing is psutil's: SIGKILL on POSIX, ``TerminateProcess`` on Windows.
    """

    @_own_modules
    def live(self) -> dict[int, Facts]:
        live: dict[int, Facts] = {}
        for process in psutil.process_iter(["ppid", "status", "create_time"]):
            info = process.info
            if info["status"] in _GONE or info["ppid"] is None:
                continue
            group, session = _group_and_session(process.pid)
            live[process.pid] = Facts(info["ppid"], group, session, info["create_time"] or 0.0)
        return live

    @_own_modules
    def pids(self) -> set[int]:
        return set(psutil.pids())

    @_own_modules
    def facts(self, pid: int) -> Facts | None:
        try:
            process = psutil.Process(pid)
            with process.oneshot():
                if process.status() in _GONE:
                    return None
                parent, born = process.ppid(), process.create_time()
        except psutil.Error:
            return None
        return Facts(parent, *_group_and_session(pid), born)

    @_own_modules
    def environ(self, pid: int) -> list[bytes] | None:
        try:
            environ = psutil.Process(pid).environ()
        except psutil.Error:
            return None
        return [f"{name}={value}".encode() for name, value in environ.items()]

    @_own_modules
    def command(self, pid: int) -> str | None:
        try:
            return " ".join(psutil.Process(pid).cmdline())
        except psutil.Error:
            return None

    @_own_modules
    def name(self, pid: int) -> str | None:
        try:
            process = psutil.Process(pid)
            return None if process.status() in _GONE else process.name()
        except psutil.Error:
            return None

    @_own_modules
    def descendants(self, root: int) -> set[int]:
        return descendants_in(root, {pid: facts.parent for pid, facts in self.live().items()})

    @_own_modules
    def exited(self, pid: int) -> bool:
        return self.facts(pid) is None

    @_own_modules
    def kill(self, pids: list[int]) -> None:
        processes = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                processes.append(psutil.Process(pid))
        for step in (psutil.Process.suspend, psutil.Process.kill):
            for process in processes:
                with contextlib.suppress(psutil.Error):
                    step(process)

    @_own_modules
    def written_by_others(self, paths: set[str]) -> set[str]:
        found: set[str] = set()
        session = _group_and_session(os.getpid())[1]
        for process in psutil.process_iter():
            if session is not None and _group_and_session(process.pid)[1] == session:
                continue
            try:
                files = process.open_files()
            except psutil.Error:  # gone, or another user's
                continue
            for file in files:
                # Where psutil cannot tell the mode, a file held open counts as written: a
                # change someone else may have made is not blamed on the tool.
                mode = getattr(file, "mode", None)
                if file.path in paths and (mode is None or mode in _WRITING):
                    found.add(file.path)
        return found


def _group_and_session(pid: int) -> tuple[int | None, int | None]:
    """The process group and session of ``pid``; each None when it cannot be read (gone, or
    a session macOS does not show to another one)."""
    if sys.platform == "win32":
        return None, None
    found: list[int | None] = []
    for read in (os.getpgid, os.getsid):
        try:
            found.append(read(pid))
        except OSError:
            found.append(None)
    return found[0], found[1]


_PROCFS, _PSUTIL = ProcFS(), Psutil()


def table() -> ProcessTable:
    """The process table this platform is read through."""
    return _PROCFS if _platform.PLATFORM.procfs else _PSUTIL


# How many ancestors are walked above a process (a chain is short; a loop of reused pids ends).
_MAX_DEPTH = 64


def ancestors(pid: int) -> Iterator[int]:
    """The processes above the live process ``pid``, its parent first, up to init or one gone
    meanwhile."""
    facts = table().facts(pid)
    for _ in range(_MAX_DEPTH):
        if facts is None or facts.parent < 1:
            return
        yield facts.parent
        if facts.parent == 1:
            return
        facts = table().facts(facts.parent)


def descendants_in(root: int, parents: Mapping[int, int]) -> set[int]:
    """The processes descending from ``root`` in a table of each process's parent."""
    below: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        below.setdefault(parent, []).append(pid)
    found: set[int] = set()
    pending = [root]
    while pending:
        for child in below.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


# Whether this kernel lists each task's children (CONFIG_PROC_CHILDREN): /proc/self/task/*/children.
_LISTS_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
