"""Isolated RPC worker: run functions in a disposable subprocess and report what happened.

Tool code may hang, exit, crash, close its standard streams or spawn children that outlive it, so
it only ever runs in a worker process started with
``python -m axm_conformance._process.parent._worker``. The parent talks to it over a private pair
of pipes (see :mod:`axm_conformance._process._channel`), enforces every timeout itself and
kills the worker and all it started when anything goes wrong. Whatever the worker does,
:meth:`Worker.call` answers with an :class:`Answer`: a value, a :class:`RemoteError` or a
:class:`Crash`. What runs inside the worker process is :mod:`axm_conformance._process.child._loop`.

Tool code is also assumed hostile. Every process it starts is found and killed with the worker
(see :mod:`axm_conformance._process.system._sweep`), so a double-forked daemon in a session of
its own does not survive either; in a sandbox (:mod:`axm_conformance._process.system._sandbox`)
nothing it starts can outlive the sandbox. What the worker sends back is unpickled by the parent
with only the trusted modules' classes allowed, and the worker sends subclasses of str, int, dict
and the like as their plain base types: a value cannot make the parent import, let alone run,
the target's code.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from axm_conformance._process._channel import (
    CALL,
    ERROR,
    READY,
    STACK_SIGNAL,
    START,
    VALUE,
)
from axm_conformance._process._records import Answer, Crash, CrashKind, RemoteError
from axm_conformance._process.parent._ends import Ends, Lost, open_ends
from axm_conformance._process.parent._files import copy_files, empty, give, remove_tree
from axm_conformance._process.parent._forkserver import Forked, ForkServer, ForkSpec, serve_forks
from axm_conformance._process.parent._spawn import (
    WORKER_MODULE,
    Jail,
    Spawned,
    base_env,
    credentials,
    spawn,
)
from axm_conformance._process.parent._unpickle import loads, unpickle_value
from axm_conformance._process.system._confine import Confinement, under
from axm_conformance._process.system._platform import (
    home_variables,
    read_tail,
)
from axm_conformance._process.system._sandbox import (
    INSIDE_VARIABLE,
    PRIVATE_TEMPORARY,
    TEMPORARY_SIZE,
    Sandbox,
    hidden,
    read_by,
)
from axm_conformance._process.system._sweep import TOKEN_VARIABLE, kill_strays
from axm_conformance._process.system._tasks import TaskGroup, rlimit_for

if sys.platform == "win32":
    import msvcrt

__all__ = [
    "Answer",
    "Crash",
    "CrashKind",
    "RemoteError",
    "Worker",
    "WorkerConfig",
    "fork_server",
]

_STDERR_TAIL = 4096
# How long a worker whose channel closed gets to finish exiting before it counts as rogue.
_EXIT_GRACE = 0.5
# The least a worker's setup is given: a server's start allowance (30 s, see the MCP protocol's
# start_allowance) after its version probe, and its listing.
_MIN_SETUP_TIMEOUT = 75.0
# A SIGKILLed process exits at once unless stuck in the kernel; don't hang on one that is.
_REAP_TIMEOUT = 5.0
_PIPE_SIZE = 1 << 20
# A hung worker asked for its stacks has this long to write them.
_STACK_GRACE = 0.1
_MEMORY_HINTS = (b"MemoryError", b"Cannot allocate memory", b"out of memory", b"bad_alloc")
_STDOUT_NAME = ".axm-worker.stdout"
_STDERR_NAME = ".axm-worker.stderr"


@dataclass(frozen=True)
class WorkerConfig:
    """How to start a worker: limits, import path, environment and per-process setup.

    ``timeout`` is the default per-call timeout in seconds; ``setup_timeout`` the setup's (by
    default the larger of ``timeout`` and 75 s).
    ``sys_path`` is prepended to the worker's ``sys.path``. ``workdir`` is the worker's cwd and
    HOME; when None a temporary one is created, emptied at each restart and removed on close.
    ``memory_limit`` is the worker's RLIMIT_AS in bytes (None: unlimited). ``user`` runs the
    worker as that user, which needs root. ``files`` names a directory whose contents are copied
    into the workdir (owned by ``user``) before each start. ``env`` adds environment variables.
    ``setup`` ("module:qualname") is called with ``setup_args`` at every worker start; what it
    returns is the ``state`` passed to targets. ``teardown`` ("module:qualname") is called with
    the state when the worker is closed, if its setup has run.
    ``trusted_modules`` names the packages and modules whose classes and functions a reply may
    refer to; the parent refuses to unpickle any other global (besides plain builtin types).
    ``fork_server`` (see :func:`fork_server`) forks the worker instead of spawning it, unless
    ``env`` sets a variable the interpreter reads at start (PYTHON*). ``stacks``: a worker that
    timed out writes where its threads were to its stderr before it is killed (not worth it for
    one that only waits on another process: its stacks are the kit's own). ``sandbox``: the
    worker, and all it starts, runs in that sandbox (spawned, or forked from a fork server in
    the same sandbox into one of its own).
    """

    timeout: float = 5.0
    sys_path: tuple[str, ...] = ()
    workdir: Path | None = None
    memory_limit: int | None = 2 * 1024**3
    user: str | None = None
    files: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    setup: str | None = None
    setup_args: tuple[Any, ...] = ()
    setup_timeout: float | None = None
    teardown: str | None = None
    trusted_modules: tuple[str, ...] = ("axm_conformance",)
    fork_server: ForkServer | None = field(default=None, compare=False)
    stacks: bool = True
    sandbox: Sandbox | None = None


def fork_server(*preload: str, sandbox: Sandbox | None = None) -> ForkServer:
    """A fork server for workers, not yet started; ``preload`` names the modules (typically
    those of the workers' setup) it imports once for all of them. With a ``sandbox`` it forks
    the workers configured with that sandbox, each into a sandbox of its own."""
    return ForkServer((WORKER_MODULE, *preload), base_env(), sandbox)


class Worker:
    """A worker process that runs ``module:qualname`` targets in isolation.

    The process starts on the first call, and again on the next call after a crash or
    :meth:`restart`. A worker serves one call at a time; it is not thread-safe.
    """

    def __init__(self, config: WorkerConfig) -> None:
        _check_positive(config.timeout, "timeout")
        if config.memory_limit is not None:
            _check_positive(config.memory_limit, "memory_limit")
        for name in ("setup", "teardown"):
            if getattr(config, name) is not None:
                _check_reference(getattr(config, name), name)
        if config.setup_timeout is not None:
            _check_positive(config.setup_timeout, "setup_timeout")
        self._config = config
        self.credentials = credentials(config.user)
        start = {
            "sys_path": list(config.sys_path),
            "memory_limit": config.memory_limit,
            "setup": config.setup,
            "setup_args": config.setup_args,
            "trusted_modules": config.trusted_modules,
        }
        try:
            pickle.dumps(start, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise TypeError(f"the setup arguments cannot be pickled: {exc}") from exc
        self._start_fields = start
        if config.workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="axm-worker-"))
            created: Path | None = self._workdir
        else:
            self._workdir = Path(config.workdir).absolute()
            self._workdir.mkdir(parents=True, exist_ok=True)
            created = None
        self._resources = _Resources(created)
        # Runs at close(), or at garbage collection or interpreter exit if close() was forgotten.
        self._finalizer = weakref.finalize(self, self._resources.release)
        self._env = base_env()
        self._env.update(home_variables(str(self._workdir), str(self._workdir / "tmp")))
        self._env.update(config.env)

    @property
    def workdir(self) -> Path:
        """The worker's working directory (also its HOME)."""
        return self._workdir

    @property
    def pid(self) -> int | None:
        """The process id of the running worker, or None when none is running."""
        process = self._resources.process
        return None if process is None else process.child.pid

    def call(self, target: str, *args: Any, timeout: float | None = None) -> Answer:
        """Run ``target(state, *args)`` in the worker and report its outcome.

        Raises only for misuse: a closed worker, a malformed target, a bad timeout or arguments
        that cannot be pickled.
        """
        self._check_open()
        _check_reference(target, "target")
        seconds = self._config.timeout if timeout is None else timeout
        _check_positive(seconds, "timeout")
        try:
            request = pickle.dumps((target, args), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise TypeError(f"the arguments of {target} cannot be pickled: {exc}") from exc
        process = self._resources.process or self._start()
        if not process.ready:
            failed = self._await_setup(process)
            if failed is not None:
                return failed
        process.begin_call()
        deadline = time.monotonic() + seconds
        try:
            process.ends.send(CALL, request, deadline)
            tag, body = process.ends.receive(deadline)
        except Lost as lost:
            late = f"the call to {target} did not return within {seconds} s"
            return Answer(crash=self._crash(lost, late, "during the call"))
        if tag == VALUE:
            return unpickle_value(target, body, self._config.trusted_modules)
        return self._error_or_crash(tag, body, "during the call")

    def start(self) -> Self:
        """Start the worker process now, without waiting for its setup to finish.

        The interpreter's start, the imports and the setup then run while the caller does
        something else; the first call waits for them. Errors are reported by that call.
        """
        self._check_open()
        if self._resources.process is None:
            with contextlib.suppress(OSError):
                self._start()
        return self

    def restart(self) -> None:
        """Stop the worker process; the next call starts a fresh one and runs the setup again,
        in a working directory as it was first given: one the worker made is emptied (``files``
        are copied in again at start), so that what earlier calls wrote there is gone, as in a
        new run; a directory given as ``workdir`` is kept as it is."""
        self._check_open()
        self._resources.stop_process()
        if self._resources.created_workdir is not None:
            empty(self._resources.created_workdir)

    def revive(self) -> Self:
        """Start the worker process now (as :meth:`start` does), replacing one that has ended
        unasked: killed from outside, by another tool's call or with the fork server it came
        from. The next call then meets a running worker, not a crash that is not its own.
        """
        self._check_open()
        process = self._resources.process
        if process is not None and process.child.exited():
            self._resources.stop_process()
        return self.start()

    def close(self) -> None:
        """Run the teardown, then kill the worker's process group and remove the workdir if it
        was created here."""
        process = self._resources.process
        if self._config.teardown is not None and process is not None and process.ready:
            self.call(self._config.teardown)
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if not self._finalizer.alive:
            raise RuntimeError("the worker is closed")

    def _start(self) -> _Process:
        """Start a worker process and send it its setup (see _await_setup)."""
        fds: list[int] = []
        jail: Jail | None = None
        try:
            # A previous worker may have deleted its workdir.
            for directory in (self._workdir, self._workdir / "tmp"):
                directory.mkdir(exist_ok=True)
                give(directory, self.credentials)
            if self._config.files is not None:
                copy_files(Path(self._config.files), self._workdir, self.credentials)
            fds.append(self._open_log(_STDOUT_NAME))
            fds.append(self._open_log(_STDERR_NAME))
            fds.extend(os.pipe())
            fds.extend(os.pipe())
            stdout, stderr, to_worker_r, to_worker_w, from_worker_r, from_worker_w = fds
            if sys.platform == "win32":  # the C runtime's text mode would rewrite line ends
                for fd in fds:
                    msvcrt.setmode(fd, os.O_BINARY)
            if sys.platform == "linux":
                import fcntl

                with contextlib.suppress(OSError):
                    fcntl.fcntl(from_worker_r, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
            token = os.urandom(16).hex()
            env = {**self._env, TOKEN_VARIABLE: token}
            passed = (to_worker_r, from_worker_w)
            jail = self._jail()
            child = self._fork(env, stdout, stderr, passed, jail) or Spawned(
                spawn(passed, stdout, stderr, self._workdir, env, self.credentials, jail),
                sandboxed=jail is not None,
            )
        except BaseException:
            for fd in fds:
                os.close(fd)
            if jail is not None and jail.tasks is not None:
                jail.tasks.remove()
            raise
        child.tasks = None if jail is None else jail.tasks
        for fd in (to_worker_r, from_worker_w, stdout):
            os.close(fd)
        process = _Process(child, open_ends(child, to_worker_w, from_worker_r), stderr, token)
        self._resources.process = process
        process.setup_deadline = time.monotonic() + self._setup_seconds()
        # Unless the setup arguments are large, the pipe holds the frame until the worker reads
        # it: no waiting here.
        # A worker no task group bounds is bounded by RLIMIT_NPROC where that binds (see _tasks).
        task_limit = None
        if sys.platform != "win32" and child.tasks is None:
            task_limit = rlimit_for(self.credentials[0] if self.credentials else os.getuid())
        message = pickle.dumps(
            {**self._start_fields, "task_limit": task_limit}, pickle.HIGHEST_PROTOCOL
        )
        with contextlib.suppress(Lost):
            process.ends.send(START, message, process.setup_deadline)
        return process

    def _fork(
        self,
        env: dict[str, str],
        stdout: int,
        stderr: int,
        passed: tuple[int, int],
        jail: Jail | None,
    ) -> Forked | None:
        """The worker forked from the configured fork server, or None to spawn it.

        A worker in a sandbox is forked only from a server in the same sandbox, and only when
        its working directory lies where that server's forks may be given one.
        """
        server = self._config.fork_server
        if (
            server is None
            or server.sandbox != self._config.sandbox
            or not server.available
            or any(name.startswith("PYTHON") for name in self._config.env)
        ):
            return None
        confinement = None
        if jail is not None:
            workdir = os.path.realpath(self._workdir)
            if not under(workdir, server.roots):
                return None
            confinement = Confinement(
                writable=(workdir,),
                readable=tuple(hidden(jail.readable)),
                private=PRIVATE_TEMPORARY,
                roots=(*server.roots, *server.groups),
                size=TEMPORARY_SIZE,
                tasks=None if jail.tasks is None else jail.tasks.path,
            )
            env = {**env, INSIDE_VARIABLE: "1"}
        spec = ForkSpec(str(self._workdir), env, self.credentials, confinement)
        try:
            return server.fork(spec, stdout, stderr, passed)
        except OSError:
            return None  # the server is gone: spawned workers do the same job, only slower

    def _jail(self) -> Jail | None:
        """How the worker's command is wrapped in its sandbox, when it has one."""
        sandbox = self._config.sandbox
        if sandbox is None:
            return None
        files = [self._config.files] if self._config.files else []
        readable = read_by([], self._env, *self._config.sys_path, os.getcwd(), *files)
        return Jail(sandbox, (str(self._workdir),), tuple(readable), TaskGroup.make())

    def _setup_seconds(self) -> float:
        if self._config.setup_timeout is not None:
            return self._config.setup_timeout
        return max(self._config.timeout, _MIN_SETUP_TIMEOUT)

    def _await_setup(self, process: _Process) -> Answer | None:
        """Wait until the worker's setup has run: None, or the Answer saying why it did not."""
        try:
            tag, body = process.ends.receive(process.setup_deadline)
        except Lost as lost:
            late = f"the worker did not finish starting within {self._setup_seconds()} s"
            return Answer(crash=self._crash(lost, late, "during start-up"))
        if tag == READY:
            process.ready = True
            return None
        outcome = self._error_or_crash(tag, body, "during start-up")
        # A worker whose setup failed has no state to serve calls with.
        self._resources.stop_process()
        return outcome

    def _open_log(self, name: str) -> int:
        fd = os.open(self._workdir / name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        give(fd, self.credentials)
        return fd

    def _error_or_crash(self, tag: bytes, body: bytearray, during: str) -> Answer:
        """Decode an error reply; anything else is a protocol violation."""
        if tag == ERROR:
            with contextlib.suppress(Exception):
                fields = loads(body, self._config.trusted_modules)
                if (
                    isinstance(fields, tuple)
                    and len(fields) == 3
                    and all(isinstance(item, str) for item in fields)
                ):
                    return Answer(error=RemoteError(*fields))
            lost = Lost("protocol", f"the worker sent a malformed error report {during}")
        else:
            lost = Lost("protocol", f"the worker sent an unexpected {tag!r} frame {during}")
        return Answer(crash=self._crash(lost, "", during))

    def _crash(self, lost: Lost, late: str, during: str) -> Crash:
        """Stop the worker after it failed to answer, and describe why it did not."""
        process = self._resources.process
        assert process is not None
        self._resources.process = None
        exited = lost.reason in ("closed", "exited") and process.ends.exited_within(_EXIT_GRACE)
        if lost.reason == "timeout" and self._config.stacks:
            process.dump_stacks()
        tail, out_of_memory = process.stop()
        if lost.reason == "timeout":
            return Crash("timeout", f"{late}; the worker was killed", tail)
        if lost.reason == "protocol":
            return Crash("channel", f"{lost.detail}; the worker was killed", tail)
        if not exited:
            detail = f"the worker closed its end of the channel {during} but kept running"
            return Crash("channel", f"{detail}; it was killed", tail)
        status = process.child.returncode
        assert status is not None
        kind: CrashKind
        if status < 0:
            name = _signal_name(-status)
            kind, detail, code, signal_name = "signalled", f"was killed by {name}", None, name
        else:
            kind, detail, code, signal_name = "exited", f"exited with status {status}", status, None
        if out_of_memory:
            kind = "memory"
            detail += ", apparently out of memory"
            if self._config.memory_limit is not None:
                detail += f" (memory limit {self._config.memory_limit} bytes)"
        return Crash(kind, f"the worker process {detail} {during}", tail, code, signal_name)


class _Process:
    """One running worker process: its channel, its stderr log and how to stop it."""

    def __init__(self, child: Spawned | Forked, ends: Ends, stderr: int, token: str):
        self.child = child
        self.ends = ends
        self.token = token
        self.stderr = stderr
        self.call_start = 0
        self.stopped = False
        # Set when the process starts; ready once its setup has run.
        self.setup_deadline = math.inf
        self.ready = False

    def begin_call(self) -> None:
        """Remember where the stderr log stood, to tell this call's output from earlier output."""
        self.call_start = os.fstat(self.stderr).st_size

    def dump_stacks(self) -> None:
        """Have a hung worker write where every thread is to its stderr, before it is killed.

        faulthandler answers the signal from C, so even a loop that never returns to the
        interpreter's signal handling shows its stack. Windows has no signal to ask with.
        """
        if sys.platform == "win32":
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.child.worker_pid(), STACK_SIGNAL)
            time.sleep(_STACK_GRACE)

    def stop(self) -> tuple[str, bool]:
        """Kill the worker and all it started, reap it and close everything; idempotent.

        Returns the tail of the worker's stderr, and whether what it wrote there during the last
        call says it ran out of memory.
        """
        if self.stopped:
            return "", False
        self.stopped = True
        # Until the worker is reaped its pid, group and session ids cannot be reused, so every
        # process found by them is one of its own.
        kill_strays(self.child.pid, self.token)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.child.wait(_REAP_TIMEOUT)
        start, tail = read_tail(self.stderr, _STDERR_TAIL)
        recent = tail[max(0, self.call_start - start) :]
        self.ends.close()
        os.close(self.stderr)
        self.child.close()
        out_of_memory = any(hint in recent for hint in _MEMORY_HINTS)
        return tail.decode("utf-8", "replace"), out_of_memory


class _Resources:
    """What a Worker must release: its running process and the workdir it created."""

    def __init__(self, created_workdir: Path | None) -> None:
        self.process: _Process | None = None
        self.created_workdir = created_workdir

    def stop_process(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None

    def release(self) -> None:
        self.stop_process()
        if self.created_workdir is not None:
            remove_tree(self.created_workdir)


def _check_positive(number: float, name: str) -> None:
    if not (number > 0 and math.isfinite(number)):
        raise ValueError(f"{name} must be a positive number, not {number!r}")


def _check_reference(reference: str, name: str) -> None:
    module, colon, qualname = reference.partition(":")
    if not (module and colon and qualname):
        raise ValueError(f"{name} must look like 'module:qualname', not {reference!r}")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


if __name__ == "__main__":
    # Only a worker process runs the loop: the kit's process does not import it.
    from axm_conformance._process.child._loop import serve

    if sys.argv[1] == "--fork-server":
        sys.exit(serve_forks(int(sys.argv[2]), sys.argv[3:], serve))
    channel_in, channel_out, parent = map(int, sys.argv[1:4])
    if sys.platform == "win32":  # handles, see spawn; binary, as the kit's ends are
        channel_in = msvcrt.open_osfhandle(channel_in, os.O_RDONLY | os.O_BINARY)
        channel_out = msvcrt.open_osfhandle(channel_out, os.O_WRONLY | os.O_BINARY)
    sys.exit(serve(channel_in, channel_out, parent))
