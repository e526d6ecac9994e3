"""Targets for the worker tests, imported inside the worker process through ``sys_path``.

Each target takes the worker's setup state first, as every worker target does.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import gc
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import types
from typing import Any

from axm_conformance._process._records import RemoteError


def echo(state: Any, *args: Any) -> tuple[Any, ...]:
    return args


def get_state(state: Any) -> Any:
    return state


def make_state(label: str) -> dict[str, Any]:
    """Setup: a state that records which process built it."""
    return {"label": label, "pid": os.getpid()}


def note_closed(state: dict[str, Any]) -> None:
    """Teardown: leave the state's label in a file named closed."""
    with open("closed", "w") as file:
        file.write(state["label"])


def wait_for(path: str) -> None:
    """Setup: wait until ``path`` exists."""
    while not os.path.exists(path):
        time.sleep(0.01)


def failing_setup(message: str) -> None:
    raise RuntimeError(message)


def pid(state: Any) -> int:
    return os.getpid()


def raise_value_error(state: Any, message: str) -> None:
    raise ValueError(message)


def raise_system_exit(state: Any, code: int) -> None:
    sys.exit(code)


def raise_keyboard_interrupt(state: Any) -> None:
    raise KeyboardInterrupt


def raise_cancelled(state: Any) -> None:
    raise asyncio.CancelledError("cancelled by the tool")


def spin(state: Any) -> None:
    while True:
        pass


def sleep(state: Any, seconds: float) -> None:
    time.sleep(seconds)


def hard_exit(state: Any, status: int) -> None:
    os._exit(status)


def kill_self(state: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def segfault(state: Any) -> None:
    ctypes.string_at(0)


def ignore_sigterm_and_spin(state: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        pass


def spawn_sleeper(state: Any) -> int:
    return subprocess.Popen(["sleep", "60"]).pid


def spawn_sleeper_and_spin(state: Any, pid_file: str) -> None:
    with open(pid_file, "w") as file:
        file.write(str(subprocess.Popen(["sleep", "60"]).pid))
    while True:
        pass


def fork_and_return(state: Any) -> str:
    os.fork()
    return "forked"


def print_to_stdout(state: Any) -> str:
    print("hello from the tool" * 1000)
    print("and to stderr", file=sys.stderr)
    return "printed"


def close_standard_fds(state: Any) -> str:
    os.close(1)
    os.close(2)
    return "closed"


def replace_standard_streams(state: Any) -> str:
    sys.stdout = None
    sys.stderr = None
    return "replaced"


def corrupt_channel(state: Any) -> None:
    """Write garbage into every pipe the process holds, the channel included."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"\xff" * 16)
        except OSError:
            pass


def big(state: Any, size: int) -> bytes:
    return b"x" * size


def allocate(state: Any, size: int) -> int:
    return len(bytearray(size))


def unpicklable(state: Any) -> Any:
    return threading.Lock()


def only_in_worker(state: Any) -> Any:
    """Return an object whose class lives in a module the parent cannot import."""
    module = types.ModuleType("module_only_in_worker")
    sys.modules[module.__name__] = module
    cls = type("Thing", (), {"__module__": module.__name__})
    module.Thing = cls  # type: ignore[attr-defined]
    return cls()


def where(state: Any) -> dict[str, Any]:
    return {
        "cwd": os.getcwd(),
        "home": os.environ.get("HOME"),
        "tmpdir": tempfile.gettempdir(),
        "hashseed": os.environ.get("PYTHONHASHSEED"),
        "environ": dict(os.environ),
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "core": resource.getrlimit(resource.RLIMIT_CORE),
        "address_space": resource.getrlimit(resource.RLIMIT_AS),
        "stdin": os.readlink("/proc/self/fd/0"),
        "parent": os.getppid(),
        "collects_garbage": gc.isenabled(),
        "session": os.getsid(0),
        "descriptors": [
            os.readlink(f"/proc/self/fd/{fd}")
            for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")
        ],
    }


def remove_workdir_and_exit(state: Any) -> None:
    shutil.rmtree(os.getcwd())
    os._exit(1)


def touch(state: Any, name: str) -> str:
    with open(name, "w") as file:
        file.write("written by the worker")
    return os.path.abspath(name)


def stderr_then_exit(state: Any, text: str, status: int) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
    os._exit(status)


class Thing:
    """A class of this module: the parent does not unpickle it unless this module is trusted."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thing) and other.label == self.label

    __hash__ = None  # type: ignore[assignment]


def thing(state: Any, label: str) -> Thing:
    return Thing(label)


class _RunsCode(str):
    """A str whose unpickling would run code in whatever process unpickles it."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, ("import os; os.environ['AXM_WORKER_TEST_PICKLE_RAN'] = 'yes'",))


class _Count(int):
    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, ("import os; os.environ['AXM_WORKER_TEST_PICKLE_RAN'] = 'yes'",))


class _Pair(tuple):  # type: ignore[type-arg]
    pass


class _Table(dict):  # type: ignore[type-arg]
    def keys(self) -> Any:
        raise RuntimeError("the parent must not need this")


def plain_subclasses(state: Any) -> dict[str, Any]:
    return {
        "text": _RunsCode("text"),
        "count": _Count(3),
        "pair": _Pair((_RunsCode("a"), 1)),
        "table": _Table(key=_RunsCode("value")),
        "list": [_RunsCode("item")],
        "flag": True,
    }


def spawn_escapees(state: Any) -> dict[str, int]:
    """Start a sleeper in a session of its own and a double-forked daemon; return their pids."""
    detached = subprocess.Popen(["sleep", "60"], start_new_session=True)
    read, write = os.pipe()
    intermediate = os.fork()
    if intermediate == 0:  # starts the daemon and exits at once
        try:
            os.setsid()
            daemon = subprocess.Popen(["sleep", "61"])
            os.write(write, str(daemon.pid).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        daemon_pid = int(pipe.read())
    os.waitpid(intermediate, 0)  # once reaped, its orphan has been re-parented
    return {"detached": detached.pid, "daemon": daemon_pid}


def spawn_escapee_and_exit(state: Any, pid_file: str) -> None:
    with open(pid_file, "w") as file:
        file.write(str(subprocess.Popen(["sleep", "60"], start_new_session=True).pid))
    os._exit(3)


def parent_of(state: Any, pid: int) -> int:
    with open(f"/proc/{pid}/stat") as file:
        return int(file.read().rpartition(")")[2].split()[1])


def wipe_modules(state: Any) -> Any:
    """Empty sys.modules, then return an instance of a kit class, which pickling looks up."""
    sys.modules.clear()
    return RemoteError("Wiped", "sys.modules is empty", "")


def nested(state: Any, depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def lower_recursion_limit_and_nest(state: Any, depth: int) -> Any:
    """Leave almost no stack above this frame, then return a value pickled recursively."""
    frames = 0
    frame = sys._getframe()
    while frame is not None:
        frames += 1
        frame = frame.f_back  # type: ignore[assignment]
    sys.setrecursionlimit(frames + 5)
    return nested(state, depth)


def close_stderr_and_spin(state: Any) -> None:
    os.close(2)
    while True:
        pass


def namespace_of_pids(state: Any) -> tuple[int, str]:
    """This process's pid and its PID namespace, as it sees them."""
    return os.getpid(), os.readlink("/proc/self/ns/pid")


def try_writes(state: Any, paths: list[str]) -> dict[str, str]:
    """Write a file at each path: "written", or the error's name."""
    found: dict[str, str] = {}
    for path in paths:
        try:
            with open(path, "w") as file:
                file.write("x")
            found[path] = "written"
        except OSError as exc:
            found[path] = type(exc).__name__ if exc.errno is None else errno.errorcode[exc.errno]
    return found


def listing(state: Any, directory: str) -> list[str]:
    return sorted(os.listdir(directory))


def capabilities(state: Any) -> dict[str, int]:
    """The capability sets of this process, from /proc, by name (CapEff, CapBnd, ...)."""
    with open("/proc/self/status") as status:
        return {
            name: int(value, 16)
            for name, _, value in (line.partition(":") for line in status)
            if name.startswith("Cap")
        }


def connect(state: Any, port: int) -> str:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as exc:
        return type(exc).__name__
    return "connected"


def kill_every_process(state: Any) -> int:
    """Start a child, then kill every process this one may signal: how the child ended."""
    child = subprocess.Popen(["sleep", "600"])
    os.kill(-1, signal.SIGKILL)
    return child.wait()


def start_daemon(state: Any, seconds: str) -> None:
    """A sleeper in a session of its own that the worker does not wait for."""
    subprocess.Popen(["sleep", seconds], start_new_session=True)


def fork_until_refused(state: Any, most: int) -> int:
    """Fork children that wait, until a fork fails or ``most`` run: how many were forked."""
    for count in range(most):
        try:
            pid = os.fork()
        except BlockingIOError:
            return count
        if pid == 0:
            time.sleep(60)
            os._exit(0)
    return most


def task_limit(state: Any) -> int:
    return resource.getrlimit(resource.RLIMIT_NPROC)[0]
