"""A worker's own sandbox, entered by a fork of a fork server that runs in a sandbox.

bubblewrap builds a sandbox around a program it executes; a fork server's forks execute nothing
(that is what makes them cheap: the worker's imports are already done). So the fork server runs
in a bwrap sandbox that keeps its capabilities for the kit's code alone (:meth:`Sandbox.command`
with ``capable``), and each fork makes for itself the view bwrap gives a spawned worker, then
gives up every capability before a tool's code runs:

- mount, PID, IPC and UTS namespaces of its own: a kill of -1 reaches only its namespace, whose
  first process (an init, as bwrap's) ends it, and all it holds, when the worker exits;
- fresh ``/tmp``, ``/var/tmp`` and ``/dev/shm`` in memory, with the paths the worker reads from
  there shown again read-only and its working directory writable; the rest read-only, as in the
  server's sandbox, whose writable places are made read-only again;
- a ``/proc`` of its own PID namespace;
- no capabilities (the bounding and ambient sets emptied too) and, from bwrap, no new
  privileges; as ``credentials`` when given, set after the view is made;
- a task group of its own (:mod:`axm_conformance._process.system._tasks`), joined first.

The network is the server's: one that reaches none (a worker that needs one is spawned). Only
the syscalls bwrap makes are made here, in the order it makes them; Linux only.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from axm_conformance._process.system._tasks import TaskGroup

__all__ = ["Confinement", "enter", "probe", "under"]

# From <sched.h> and <sys/mount.h>.
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
# What Linux's statvfs says of a mount (ST_NOSUID, ST_NODEV, ST_NOEXEC, ST_NOATIME,
# ST_NODIRATIME, ST_RELATIME), as the flags a remount must repeat (a user namespace locks them).
_KEPT_FLAGS = {2: _MS_NOSUID, 4: _MS_NODEV, 8: _MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}
# From <linux/prctl.h> and <linux/capability.h>.
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
_NAMESPACES = _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWUTS
_SHARED_MEMORY = "/dev/shm"
_LINUX_ONLY = "namespaces need Linux"


@dataclass(frozen=True)
class Confinement:
    """What a fork's sandbox shows: ``writable`` (its working directory), ``readable`` (paths in
    a private temporary directory shown again, read-only), the ``private`` temporary directories
    made afresh with at most ``size`` bytes each, the fork server's writable ``roots`` (made
    read-only), and the task group the fork joins first (``tasks``, a directory of it)."""

    writable: tuple[str, ...]
    readable: tuple[str, ...]
    private: tuple[str, ...]
    roots: tuple[str, ...]
    size: int
    tasks: str | None = None


def probe(confinement: Confinement, credentials: tuple[int, int] | None) -> str:
    """Why a fork cannot enter ``confinement`` here ("" when it can): one is made and left."""
    if sys.platform == "win32":
        raise OSError(_LINUX_ONLY)
    pid = os.fork()
    if pid == 0:
        try:
            enter(confinement, credentials)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return "a fork of the fork server cannot make a sandbox of its own in the server's"
    return ""


def enter(confinement: Confinement, credentials: tuple[int, int] | None) -> None:
    """Enter a sandbox of its own; returns in the worker, the second process of its namespace.

    The calling fork stays outside as the worker's monitor, and its init inside: neither
    returns. Each exits as the worker did, with 128 + N for a worker killed by signal N (as
    bwrap does, see :func:`exit_status`), and each dies with its parent.
    """
    if sys.platform == "win32":
        raise OSError(_LINUX_ONLY)
    _die_with_parent()
    if confinement.tasks is not None:
        TaskGroup(confinement.tasks).join()
    _unshare(_NAMESPACES)
    # Mounts made from here on stay in this namespace, never reach the server's.
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    init = os.fork()
    if init:
        _mirror(init)
    _die_with_parent()
    _make_view(confinement)
    _drop_privileges(credentials)
    worker = os.fork()
    if worker:
        _mirror(worker, reap_all=True)


def _mirror(child: int, *, reap_all: bool = False) -> NoReturn:
    """Wait for ``child`` (an init reaps every orphan meanwhile), then exit as it did."""
    os.closerange(3, _open_max())
    while True:
        try:
            pid, status = os.waitpid(-1 if reap_all else child, 0)
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)


def _make_view(confinement: Confinement) -> None:
    """The mounts of a spawned worker's bwrap sandbox, made in this mount namespace."""
    if sys.platform != "linux":
        raise OSError(_LINUX_ONLY)
    # Held open before they are hidden, to be mounted again from there.
    shown = [
        (path, os.open(path, os.O_PATH), path in confinement.writable)
        for path in (*confinement.readable, *confinement.writable)
        if os.path.exists(path)
    ]
    for directory in confinement.private:
        if os.path.isdir(directory):
            _mount("tmpfs", directory, "tmpfs", _MS_NOSUID | _MS_NODEV, _sized(confinement.size))
    if os.path.isdir(_SHARED_MEMORY):
        _mount("tmpfs", _SHARED_MEMORY, "tmpfs", _MS_NOSUID | _MS_NODEV, _sized(confinement.size))
    for root in confinement.roots:
        if not under(root, confinement.private) and os.path.isdir(root):
            _remount_read_only(root)
    for path, fd, writable in shown:
        _mount_point(path, fd)
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC)
        if not writable:
            _remount_read_only(path)
        os.close(fd)
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)


def _drop_privileges(credentials: tuple[int, int] | None) -> None:
    if sys.platform == "win32":
        raise OSError(_LINUX_ONLY)
    with open("/proc/sys/kernel/cap_last_cap") as last:
        last_capability = int(last.read())
    for capability in range(last_capability + 1):
        _prctl(_PR_CAPBSET_DROP, capability)
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    if credentials is not None:
        uid, gid = credentials
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable; twice (64 bits)
    if _libc().capset(header, data) != 0:
        _raise("capset")


def _mount_point(path: str, fd: int) -> None:
    """Make ``path`` exist as what ``fd`` is (a directory or a file), to be mounted on."""
    if os.path.isdir(f"/proc/self/fd/{fd}"):
        os.makedirs(path, exist_ok=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


def _remount_read_only(path: str) -> None:
    if sys.platform == "win32":
        raise OSError(_LINUX_ONLY)
    kept = os.statvfs(path).f_flag
    flags = sum(flag for known, flag in _KEPT_FLAGS.items() if kept & known)
    _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags)


def under(path: str, directories: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``directories`` or lies in one."""
    return any(path == top or path.startswith(top.rstrip("/") + "/") for top in directories)


def _sized(size: int) -> str:
    return f"size={size},mode=1777"


def _die_with_parent() -> None:
    if sys.platform == "win32":
        raise OSError(_LINUX_ONLY)
    parent = os.getppid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    # A parent outside this PID namespace is seen as 0: it was alive when the fork was made.
    if parent not in (0, os.getppid()):
        os._exit(1)


def _open_max() -> int:
    return os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024


def _unshare(flags: int) -> None:
    if _libc().unshare(flags) != 0:
        _raise("unshare")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    done = _libc().mount(
        _bytes(source), target.encode(), _bytes(kind), ctypes.c_ulong(flags), _bytes(data or None)
    )
    if done != 0:
        _raise(f"mount {target}")


def _prctl(option: int, argument: int = 0) -> None:
    if _libc().prctl(option, ctypes.c_ulong(argument), 0, 0, 0) != 0:
        _raise(f"prctl {option}")


def _raise(what: str) -> NoReturn:
    errno = ctypes.get_errno()
    raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


@functools.cache
def _libc() -> ctypes.CDLL:
    if sys.platform != "linux":
        raise OSError(_LINUX_ONLY)
    return ctypes.CDLL(None, use_errno=True)
