"""Starting a worker process: its command (in a sandbox, as another user), the environment it
starts from, and the kit's view of the process Popen started (:class:`Spawned`, seen as a forked
one is).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from axm_conformance._process.system import _platform
from axm_conformance._process.system._platform import PORTABLE_VARIABLE, SYSTEM_VARIABLES
from axm_conformance._process.system._proctable import below, table
from axm_conformance._process.system._sandbox import Sandbox, exit_status
from axm_conformance._process.system._tasks import TaskGroup

if sys.platform == "win32":
    import msvcrt

__all__ = ["WORKER_MODULE", "Jail", "Spawned", "base_env", "credentials", "spawn"]

# The module a worker process runs (``python -m``): its ``__main__`` serves the channel.
WORKER_MODULE = "axm_conformance._process.parent._worker"
# Tool code sees only what locale, PATH and imports need, never the parent's secrets.
_INHERITED_ENV = SYSTEM_VARIABLES | {"PYTHONPATH", PORTABLE_VARIABLE}


class Spawned:
    """A worker started with Popen, seen as the kit sees a forked one (:class:`Forked`).

    A ``sandboxed`` worker's process is bwrap's, which runs the sandbox's init, which runs the
    worker: killing it ends the sandbox, and its exit status is the worker's.
    """

    def __init__(self, popen: subprocess.Popen[bytes], sandboxed: bool = False) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.sandboxed = sandboxed
        self.tasks: TaskGroup | None = None
        # Readable once the worker has exited (None without pidfds).
        self.exit_fd: int | None = None
        if sys.platform == "linux" and _platform.PLATFORM.pidfd:
            with contextlib.suppress(OSError):
                self.exit_fd = os.pidfd_open(popen.pid)

    @property
    def returncode(self) -> int | None:
        status = self.popen.returncode
        return exit_status(status) if self.sandboxed and status is not None else status

    def worker_pid(self) -> int:
        """The worker's own process: in a sandbox, the one below bwrap and the sandbox's init."""
        return below(self.pid, 2) if self.sandboxed else self.pid

    def exited(self) -> bool:
        """Whether the worker has exited, without reaping it (its process group stays killable).

        Windows has no groups to keep, and keeps an exited process's id while Popen holds its
        handle: Popen is asked there.
        """
        if sys.platform == "win32":
            return self.popen.poll() is not None
        return table().exited(self.pid)

    def wait(self, timeout: float) -> None:
        self.popen.wait(timeout)

    def close(self) -> None:
        if self.exit_fd is not None:
            os.close(self.exit_fd)
        if self.tasks is not None:
            self.tasks.remove()


@dataclass(frozen=True)
class Jail:
    """A sandbox to spawn a worker in, with the paths it writes and those it reads, and the
    group that bounds its tasks (None where none can be made)."""

    sandbox: Sandbox
    writable: tuple[str, ...]
    readable: tuple[str, ...]
    tasks: TaskGroup | None = None


def spawn(
    passed: tuple[int, int],
    stdout: int,
    stderr: int,
    workdir: Path,
    env: dict[str, str],
    credentials: tuple[int, int] | None,
    jail: Jail | None = None,
) -> subprocess.Popen[bytes]:
    """Start a worker process in a session of its own, handing it the channel's ends
    ``passed`` (the one it reads, the one it writes), named on its command line; in ``jail``'s
    sandbox when there is one."""
    command = [sys.executable, "-P", "-m", WORKER_MODULE]
    streams: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": stdout, "stderr": stderr}
    if sys.platform == "win32":
        # Windows hands handles down, not descriptors: the worker opens descriptors on these,
        # the only handles it inherits besides its standard streams.
        handles = [msvcrt.get_osfhandle(fd) for fd in passed]
        for handle in handles:
            os.set_handle_inheritable(handle, True)
        base = getattr(sys, "_base_executable", sys.executable)
        if base != sys.executable:
            # A virtual environment's python.exe is a launcher that runs the base interpreter
            # as its child, which would make the worker's pid the launcher's: the base one is
            # run directly, told of the environment, as multiprocessing does (bpo-35797).
            command[0] = base
            env = {**env, "__PYVENV_LAUNCHER__": sys.executable}
        return subprocess.Popen(
            [*command, *map(str, handles), str(os.getpid())],
            **streams,
            cwd=workdir,
            env=env,
            close_fds=True,
            startupinfo=subprocess.STARTUPINFO(lpAttributeList={"handle_list": handles}),
            creationflags=subprocess.CREATE_NEW_PROCESS_GROUP,
        )
    uid, gid = credentials or (None, None)
    # A sandboxed worker cannot see the kit's process: the sandbox ends with the kit instead.
    parent = 0 if jail is not None else os.getpid()
    command = [*command, *map(str, passed), str(parent)]
    tasks = None if jail is None else jail.tasks
    if jail is not None:
        command = jail.sandbox.command(command, jail.writable, jail.readable, tasks=tasks)
    if tasks is not None:
        streams["stdin"] = subprocess.PIPE
    popen = subprocess.Popen(
        command,
        **streams,
        cwd=workdir,
        env=env,
        pass_fds=passed,
        start_new_session=True,
        user=uid,
        group=gid,
        extra_groups=None if uid is None else [],
    )
    if tasks is not None:
        assert popen.stdin is not None
        with popen.stdin:
            tasks.admit(popen)
    return popen


def credentials(user: str | None) -> tuple[int, int] | None:
    """The uid and gid to start the worker with, or None to keep the parent's."""
    if user is None:
        return None
    if sys.platform == "win32":
        raise ValueError(f"cannot run the worker as {user!r}: Windows has no user to switch to")
    import pwd

    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise ValueError(f"no such user: {user!r}") from None
    euid = os.geteuid()
    if euid == 0:
        return entry.pw_uid, entry.pw_gid
    if euid != entry.pw_uid:
        raise ValueError(
            f"cannot run the worker as {user!r}: that needs root, and this process runs as uid "
            f"{euid}"
        )
    return None


def base_env() -> dict[str, str]:
    """What every worker's environment starts from: locale, PATH and import path only."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name in _INHERITED_ENV or name.startswith("LC_")
    }
    env.setdefault("PATH", os.defpath)
    env["PYTHONHASHSEED"] = "0"
    return env
