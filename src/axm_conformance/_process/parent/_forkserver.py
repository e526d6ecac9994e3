"""A fork server: a process that has done a worker's imports once and forks fresh workers.

A spawned worker pays for an interpreter start and for importing the kit's worker side, pydantic
included, before it loads its tool: about 0.1 s of CPU, the larger part of a small tool's whole
cost when a run certifies many tools. A fork of a process that has made those imports costs a few
milliseconds. The server imports only the modules it is told to preload (the kit's own), never a
tool's, starts no thread and holds no state a tool could have touched: a worker forked from it
starts as clean as a spawned one, then loads its tool itself. Each fork is set up the way
``subprocess.Popen`` sets up a spawned worker (new session, standard streams, user, working
directory, environment, only the passed descriptors open) before it runs its main function.

The server is the workers' parent, so it learns how each one ended; it writes the exit status to
a pipe per worker, whose other end the kit holds, and reaps the worker only when the kit asks,
after it has killed what the worker left: until then the worker's pid, process group and session
cannot be reused. The server exits when the kit closes the control channel or dies; its workers,
which watch their parent, follow. Linux only (pidfd).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Self

from axm_conformance._process.parent._spawn import WORKER_MODULE
from axm_conformance._process.system import _confine, _platform
from axm_conformance._process.system._confine import Confinement
from axm_conformance._process.system._proctable import below, table
from axm_conformance._process.system._sandbox import PRIVATE_TEMPORARY, Sandbox, exit_status
from axm_conformance._process.system._tasks import TaskGroup

__all__ = ["ForkServer", "Forked", "serve_forks"]

_FORK, _REAP, _PID, _FAILED = b"F", b"R", b"P", b"E"
_PID_FORMAT = struct.Struct(">i")
_STATUS = struct.Struct(">i")
_MAX_MESSAGE = 1 << 20
_ANSWER_TIMEOUT = 60.0
# stdout, stderr, then the descriptors passed to the worker's main function.
_MAX_FDS = 16
_NO_FORK = "Windows cannot fork"


@dataclass(frozen=True)
class ForkSpec:
    """How a fork is set up before its main function runs (what Popen would have been given);
    ``confinement``: the sandbox of its own it enters first, in a server that runs in one."""

    cwd: str
    env: Mapping[str, str]
    credentials: tuple[int, int] | None
    confinement: Confinement | None = None


class ForkServer:
    """The kit's end of a fork server: start it, fork workers from it, close it.

    ``preload`` names the modules the server imports before its first fork; ``env`` is the
    server's environment, which fixes what the interpreter reads at start (PYTHONHASHSEED,
    PYTHONPATH) for every worker it forks. With a ``sandbox``, the server runs in it (keeping
    its capabilities, for its own code alone) and each fork enters a sandbox of its own
    (:mod:`axm_conformance._process.system._confine`) made in the machine's temporary
    directories, the server's writable ``roots``. Thread-safe; one request at a time.
    """

    def __init__(
        self, preload: Sequence[str], env: Mapping[str, str], sandbox: Sandbox | None = None
    ) -> None:
        self._preload = tuple(preload)
        self._env = dict(env)
        self.sandbox = sandbox
        self.roots = _roots() if sandbox is not None else ()
        # Where the forks' task groups are made, which the server must be able to join them to.
        home = TaskGroup.home() if sandbox is not None else ""
        self.groups = (home,) if home else ()
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._forked = False
        self.broken = False

    @property
    def pid(self) -> int | None:
        """The server's process id, None until it is started."""
        return None if self._process is None else self._process.pid

    @property
    def available(self) -> bool:
        """Whether forks can be asked for (Linux with pidfds, the portable way not forced; the
        server has not failed)."""
        return _platform.PLATFORM.fork_server and not self.broken

    @property
    def died(self) -> bool:
        """Whether the server has died after forking workers, which follow it. Nothing of the
        kit's ends it before :meth:`close`: something else killed it, a tool's call, say. One
        that dies before its first fork is not counted: it cannot start, and workers spawn."""
        with self._lock:
            return self._forked and self._process is not None and self._process.poll() is not None

    def start(self) -> Self:
        """Start the server process, without waiting for its imports. A server that cannot
        start is broken: workers are then spawned."""
        with self._lock, contextlib.suppress(OSError):
            self._ensure()
        return self

    def _ensure(self) -> None:
        if self._process is None and self.available:
            self._spawn()

    def _spawn(self) -> None:
        if sys.platform == "win32":
            raise OSError(_NO_FORK)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [
            *(sys.executable, "-P", "-s", "-m", WORKER_MODULE),
            *("--fork-server", str(theirs.fileno()), *self._preload),
        ]
        if self.sandbox is not None:
            command = self.sandbox.command(command, (*self.roots, *self.groups), capable=True)
        try:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                cwd="/",
                env=self._env,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError:
            ours.close()
            self.broken = True
            raise
        finally:
            theirs.close()
        # The first fork waits for the server's imports; a server that never answers is broken.
        ours.settimeout(_ANSWER_TIMEOUT)
        self._control = ours

    def fork(self, spec: ForkSpec, stdout: int, stderr: int, passed: Sequence[int]) -> Forked:
        """Fork a worker whose main function gets ``passed`` (as its own descriptor numbers).

        Raises OSError when the server cannot fork (it is gone, or fork failed); the server is
        then not asked again.
        """
        with self._lock:
            self._ensure()
            if self._control is None or self.broken or sys.platform == "win32":
                raise OSError("the fork server is not running")
            try:
                message = _FORK + pickle.dumps(spec, pickle.HIGHEST_PROTOCOL)
                socket.send_fds(self._control, [message], [stdout, stderr, *passed])
                reply, fds, _, _ = socket.recv_fds(self._control, _MAX_MESSAGE, 2)
            except OSError:
                self.broken = True
                raise
            if reply[:1] != _PID or len(fds) != 2:
                for fd in fds:
                    os.close(fd)
                self.broken = True
                raise OSError(reply[1:].decode("utf-8", "replace") or "the fork server is gone")
            (known_as,) = _PID_FORMAT.unpack(reply[1:])
            status, pidfd = fds
            try:
                pid = _pid_of(pidfd)
            finally:
                os.close(pidfd)
            self._forked = True
            return Forked(pid, known_as, status, self, confined=spec.confinement is not None)

    def reap(self, pid: int) -> None:
        """Let the server reap a worker whose exit status was read."""
        with self._lock, contextlib.suppress(OSError):
            # A closed server has exited; the system reaps what it had not.
            if self._control is not None:
                self._control.send(_REAP + _PID_FORMAT.pack(pid))

    def close(self) -> None:
        """Stop the server; workers still running exit with it. It forks no more."""
        with self._lock:
            self.broken = True
            if self._control is not None:
                self._control.close()
                self._control = None
            if self._process is not None:
                try:
                    self._process.wait(5)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
                self._process = None


class Forked:
    """A worker forked by the server: as much of ``subprocess.Popen`` as the kit uses.

    ``pid`` is as the kit's PID namespace numbers it, ``known_as`` as the server's does (in a
    sandbox, its own). ``exit_fd`` becomes readable once the worker has exited (the server
    wrote its status).
    """

    def __init__(
        self, pid: int, known_as: int, status: int, server: ForkServer, confined: bool = False
    ) -> None:
        self.pid = pid
        self.known_as = known_as
        self.exit_fd = status
        self.returncode: int | None = None
        self.confined = confined
        self.tasks: TaskGroup | None = None
        self._server = server

    def worker_pid(self) -> int:
        """The worker's own process: this one, or in a sandbox of its own the one below this
        (its monitor) and the sandbox's init."""
        return below(self.pid, 2) if self.confined else self.pid

    def exited(self) -> bool:
        """Whether the worker has exited, without reaping it; also once the server has, for its
        workers follow it. The server writes the status a moment after the worker died; the
        process table shows a dead worker at once (unreaped, its pid is not reused)."""
        if self.returncode is not None:
            return True
        return bool(select.select([self.exit_fd], [], [], 0)[0]) or table().facts(self.pid) is None

    def wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the worker's exit, then have it reaped."""
        if self.returncode is not None:
            return
        if not select.select([self.exit_fd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(str(self.pid), timeout)
        data = os.read(self.exit_fd, _STATUS.size)
        os.close(self.exit_fd)
        # A server that died before reporting leaves the status unknown: treat it as killed.
        (status,) = _STATUS.unpack(data) if len(data) == _STATUS.size else (-9,)
        self.returncode = exit_status(status) if self.confined else status
        self._server.reap(self.known_as)

    def close(self) -> None:
        """Close the status pipe, unless reading the status closed it; remove the task group."""
        if self.returncode is None:
            with contextlib.suppress(OSError):
                os.close(self.exit_fd)
        if self.tasks is not None:
            self.tasks.remove()


def _pid_of(pidfd: int) -> int:
    """The pid of the process ``pidfd`` refers to, as this process's PID namespace numbers it: a
    server in a sandbox numbers its forks in its own."""
    with open(f"/proc/self/fdinfo/{pidfd}") as info:
        for line in info:
            name, _, value = line.partition(":")
            if name == "Pid":
                return int(value)
    raise OSError(f"no pid in the fdinfo of pidfd {pidfd}")


def _roots() -> tuple[str, ...]:
    """Where a sandboxed server's forks may be given working directories, and may read from the
    machine's temporary directories: those directories."""
    places = (tempfile.gettempdir(), *PRIVATE_TEMPORARY)
    return tuple(dict.fromkeys(os.path.realpath(place) for place in places if os.path.isdir(place)))


# Everything below runs in the fork server and its forks.


def serve_forks(control_fd: int, preload: Sequence[str], main: Callable[..., int]) -> int:
    """The server's loop; in a fork, returns what ``main(*passed, parent)`` returns.

    A fork asked to enter a sandbox of its own is refused, with the reason, where the first such
    fork could not: the kit then spawns its workers, each in a sandbox.
    """
    if sys.platform != "linux":  # see Platform.fork_server
        raise NotImplementedError("a fork server needs Linux")
    import gc
    import importlib

    # What the server allocates stays where it is, and the forks' collections never visit it:
    # otherwise each fork soon writes to, and so copies, most of the server's memory.
    gc.disable()
    for name in preload:
        importlib.import_module(name)
    gc.freeze()
    # Whether forks can enter sandboxes of their own: tried on the first that asks.
    unconfinable: str | None = None
    control = socket.socket(fileno=control_fd)
    poller = select.poll()
    poller.register(control, select.POLLIN)
    # Each running worker by its pidfd: its pid, and the write end of its status pipe.
    running: dict[int, tuple[int, int]] = {}
    while True:
        for fd, _ in poller.poll():
            if fd != control.fileno():
                pid, status = running.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                _report_exit(pid, status)
                continue
            try:
                message, fds, _, _ = socket.recv_fds(control, _MAX_MESSAGE, _MAX_FDS)
            except OSError:
                return 0
            if not message:
                return 0  # the kit closed the channel, or is gone
            if message[:1] == _REAP:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(_PID_FORMAT.unpack(message[1:])[0], 0)
                continue
            spec: ForkSpec = pickle.loads(message[1:])
            if spec.confinement is not None and unconfinable is None:
                unconfinable = _confine.probe(spec.confinement, spec.credentials)
            if unconfinable and spec.confinement is not None:
                for own in fds:
                    os.close(own)
                control.send(_FAILED + unconfinable.encode())
                continue
            read_end, write_end = os.pipe()
            try:
                pid = os.fork()
            except OSError as exc:
                for own in (*fds, read_end, write_end):
                    os.close(own)
                control.send(_FAILED + f"fork failed: {exc}".encode())
                continue
            if pid == 0:
                control.detach()  # closed below with every other descriptor but the worker's
                return _become(spec, fds, main)
            for own in fds:
                os.close(own)
            pidfd = os.pidfd_open(pid)
            running[pidfd] = (pid, write_end)
            poller.register(pidfd, select.POLLIN)
            socket.send_fds(control, [_PID + _PID_FORMAT.pack(pid)], [read_end, pidfd])
            os.close(read_end)


def _report_exit(pid: int, status_fd: int) -> None:
    """Write how the worker ended (Popen's returncode convention), without reaping it."""
    if sys.platform != "linux":
        raise NotImplementedError("waitid")
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    code = 0
    if info is not None:
        code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
    with contextlib.suppress(OSError):
        os.write(status_fd, _STATUS.pack(code))
    os.close(status_fd)


def _become(spec: ForkSpec, fds: list[int], main: Callable[..., int]) -> int:
    """Set the fork up as Popen would have set up a spawned worker, then run ``main``."""
    if sys.platform == "win32":
        raise OSError(_NO_FORK)
    import gc

    gc.enable()
    parent = os.getppid()
    credentials = spec.credentials
    if spec.confinement is not None:
        try:
            _confine.enter(spec.confinement, credentials)
        except OSError as exc:  # in the fork, its monitor or its init: the worker never starts
            os.write(fds[1], f"axm-conformance: the worker's sandbox: {exc}\n".encode())
            os._exit(1)
        # Set while the view was made; and the kit is out of sight: the sandbox ends with it.
        parent, credentials = 0, None
    stdout, stderr, *passed = fds
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((devnull, 0), (stdout, 1), (stderr, 2)):
        os.dup2(source, target)
    # Only the worker's own descriptors stay open: not the control channel, not the status
    # pipes of the other workers.
    keep = {0, 1, 2, *passed}
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in keep:
            with contextlib.suppress(OSError):
                os.close(int(name))
    if credentials is not None:
        uid, gid = credentials
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    os.chdir(spec.cwd)
    os.environ.clear()
    os.environ.update(spec.env)
    # Read from the environment on first use, which in a spawned worker comes after this.
    tempfile.tempdir = None
    return main(*passed, parent)
