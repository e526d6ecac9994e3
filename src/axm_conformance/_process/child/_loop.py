"""The worker process's loop: run the setup, then answer calls until the parent goes.

Each call names a ``module:qualname`` target, run as ``target(state, *args)`` with what the setup
returned. A target may break what answering needs (the channel's descriptors, ``sys.modules``,
the recursion limit): the loop keeps its channel out of reach and restores the rest. Once the
parent is gone, the worker kills every process it started, then itself.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import importlib
import io
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import IO, Any, NoReturn

from axm_conformance._process._channel import (
    ERROR,
    READY,
    STACK_SIGNAL,
    VALUE,
    error_type,
    read_frame,
    write_frame,
)
from axm_conformance._process.system import _platform
from axm_conformance._process.system._proctable import table
from axm_conformance._process.system._sweep import TOKEN_VARIABLE, kill_strays

if sys.platform != "win32":
    import fcntl
    import resource

__all__ = ["serve"]

_CHANNEL_FD_FLOOR = 200
_ORPHAN_CHECK_INTERVAL = 1.0
_PR_SET_CHILD_SUBREAPER = 36
# The worker's exit status when a target broke its channel (EX_SOFTWARE).
_CHANNEL_LOST = 70
# The worker's exit status when it ends itself because the kit is gone.
_PARENT_GONE = 1
# Windows' select() takes sockets only: a channel a target made non-blocking is retried this often.
_RETRY_PAUSE = 0.001


def serve(channel_in: int, channel_out: int, parent: int) -> int:
    """Run setup, then answer call frames until the parent closes the channel."""
    channel_in, channel_out = _relocate(channel_in), _relocate(channel_out)
    # Stack dumps go to a private copy of the stderr log, which a target closing fd 2 keeps.
    _KEPT.append(stacks := open(_relocate(os.dup(2)), "w"))  # noqa: SIM115 - lives as long
    faulthandler.enable(stacks)
    if sys.platform != "win32":
        faulthandler.register(STACK_SIGNAL, stacks, all_threads=True)
    token = os.environ.get(TOKEN_VARIABLE, "")
    # A sandboxed worker (parent 0) cannot see the kit: its sandbox ends with the kit instead.
    if parent:
        threading.Thread(target=_die_with_parent, args=(parent, token), daemon=True).start()
    if _platform.PLATFORM.subreaper:
        _become_subreaper()
    readable, writable = _waiting(channel_in, False), _waiting(channel_out, True)
    _, body = read_frame(channel_in, readable)
    start = pickle.loads(body)
    _limit_resources(start["memory_limit"], start["task_limit"])
    sys.path[:0] = start["sys_path"]
    guard = _Guard(tuple(start["trusted_modules"]))
    state = None
    if start["setup"] is not None:
        try:
            state = _resolve(start["setup"])(*start["setup_args"])
        except BaseException as exc:
            write_frame(channel_out, ERROR, _describe(exc), writable)
            return 1
    guard.remember()
    write_frame(channel_out, READY, b"", writable)
    pid = os.getpid()
    while True:
        try:
            _, body = read_frame(channel_in, readable)
        except EOFError:
            # The parent closed the channel or died: nothing the worker started may outlive it.
            kill_strays(pid, token, spare=pid)
            return 0
        except OSError as exc:
            _channel_lost(stacks, exc)
        reply = _run(body, state, guard)
        if os.getpid() != pid:
            # A fork made by the target returned here: only the worker itself may answer.
            os._exit(0)
        try:
            write_frame(channel_out, *reply, writable)
        except OSError as exc:
            _channel_lost(stacks, exc)


def _channel_lost(log: IO[str], exc: OSError) -> NoReturn:
    """Exit after a target closed or broke the channel, saying so in the stderr log."""
    message = (
        f"axm-conformance worker: the channel to the kit is gone ({exc}); the code it ran "
        "closed or replaced the worker's file descriptors\n"
    ).encode()
    # The private copy of stderr may be closed as well; fd 2 may still be the log.
    for fd in (log.fileno(), 2):
        try:
            os.write(fd, message)
            break
        except OSError:
            continue
    os._exit(_CHANNEL_LOST)


def _waiting(fd: int, writing: bool) -> Callable[[], None]:
    """How to wait until fd is ready, should a target have made it non-blocking."""
    if sys.platform == "win32":
        return functools.partial(time.sleep, _RETRY_PAUSE)
    readable, writable = ([], [fd]) if writing else ([fd], [])

    def wait() -> None:
        select.select(readable, writable, [])

    return wait


def _relocate(fd: int) -> int:
    """Move a channel fd out of the way of fds the tool may close or reuse, and off exec.

    On Windows it stays where it is (there is no fcntl to move it with), and only stops being
    inheritable: the kit made its handle so to hand it down, and what a tool starts with
    inherited handles (``os.system`` does) must not get it.
    """
    if sys.platform == "win32":
        os.set_inheritable(fd, False)
        return fd
    else:  # a block of its own: mypy --platform win32 must not read the POSIX-only names
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        floor = _CHANNEL_FD_FLOOR
        if soft != resource.RLIM_INFINITY:
            floor = min(_CHANNEL_FD_FLOOR, soft - 4)
        moved: int = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, max(floor, 3))
        os.close(fd)
        return moved


def _die_with_parent(parent: int, token: str) -> None:
    """Kill the worker and every process it started once the parent is gone, even mid-call."""
    here = _parent_watch(parent)
    while here():
        time.sleep(_ORPHAN_CHECK_INTERVAL)
    kill_strays(os.getpid(), token, spare=os.getpid())
    if sys.platform != "win32":
        os.killpg(0, signal.SIGKILL)
    os._exit(_PARENT_GONE)


def _parent_watch(parent: int) -> Callable[[], bool]:
    """A test of whether the kit that started this worker still runs.

    On Windows an orphan's parent id stays the dead parent's, so the process of that id is
    looked up instead, and must be the one that was there at the start. A kit that cannot be
    looked up is never taken for gone: the worker then ends when the kit's end of the channel
    closes, between calls.
    """
    if sys.platform != "win32":
        return lambda: os.getppid() == parent
    first = table().facts(parent)
    if first is None:
        return lambda: True

    def here() -> bool:
        now = table().facts(parent)
        return now is not None and now.born == first.born

    return here


def _become_subreaper() -> None:
    """Adopt the orphaned descendants of the worker, so that they stay findable and killable.

    Without this a double-forked daemon is re-parented to init and escapes the worker's tree.
    """
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


# Objects the worker keeps for its whole life (the stack-dump file).
_KEPT: list[Any] = []


class _Guard:
    """What the worker needs intact to answer, restored after a target tampered with it.

    A target may empty ``sys.modules`` (pickling then re-imports the kit's modules and finds
    different classes, and importing anything anew fails without the interpreter's built-in
    and frozen modules) or lower the recursion limit below what pickling a reply needs. The
    trusted modules and the interpreter's own are put back; other modules are the target's
    business.
    """

    def __init__(self, trusted: tuple[str, ...]) -> None:
        self.trusted = trusted
        self.modules: dict[str, types.ModuleType] = {}
        self.targets: set[str] = set()
        self.recursion_limit = sys.getrecursionlimit()

    def remember(self) -> None:
        """Record the trusted modules loaded so far (a target's first call may import more),
        with the packages they belong to: a package imported afresh lacks the kept submodules
        as attributes (Python 3.13 freezes collections.abc, not collections)."""
        loaded = dict(sys.modules)
        for name, module in loaded.items():
            if name in self.modules or not self._trusted(name):
                continue
            self.modules[name] = module
            package = name.rpartition(".")[0]
            while package in loaded and package not in self.modules:
                self.modules[package] = loaded[package]
                package = package.rpartition(".")[0]

    def restore(self) -> None:
        if sys.getrecursionlimit() < self.recursion_limit:
            sys.setrecursionlimit(self.recursion_limit)
        modules = sys.modules
        for name, module in self.modules.items():
            if modules.get(name) is not module:
                modules[name] = module

    def _trusted(self, name: str) -> bool:
        if name in sys.builtin_module_names or name.startswith("_frozen_importlib"):
            return True
        if any(name == prefix or name.startswith(prefix + ".") for prefix in self.trusted):
            return True
        origin = getattr(getattr(sys.modules.get(name), "__spec__", None), "origin", None)
        return origin in ("built-in", "frozen")


def _limit_resources(memory_limit: int | None, task_limit: int | None) -> None:
    # Windows has no rlimits, and macOS takes RLIMIT_AS and ignores it: the platform matrix
    # says so.
    if sys.platform != "win32":
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if task_limit is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
            if hard != resource.RLIM_INFINITY:
                task_limit = min(task_limit, hard)
            resource.setrlimit(resource.RLIMIT_NPROC, (task_limit, task_limit))
        if memory_limit is not None and _platform.PLATFORM.memory_limit:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                memory_limit = min(memory_limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))


def _run(body: bytearray, state: Any, guard: _Guard) -> tuple[bytes, bytes]:
    """Run one call; return the reply's tag and body."""
    try:
        target, args = pickle.loads(body)
        function = _resolve(target)
        if target not in guard.targets:
            guard.targets.add(target)
            guard.remember()
        result = function(state, *args)
    except BaseException as exc:
        guard.restore()
        return ERROR, _describe(exc)
    guard.restore()
    try:
        return VALUE, _dumps(result)
    except BaseException as exc:
        return ERROR, _describe(exc, f"the return value of {target} cannot be pickled: ")


class _Pickler(pickle.Pickler):
    """Sends subclasses of plain types as their base type, so the parent never needs the class.

    The copies are made with the base type's own methods, never the subclass's overrides.
    """

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        for base, plain in _PLAIN:
            if kind is not base and isinstance(obj, base):
                return base, (plain(obj),)
        return NotImplemented


_PLAIN: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (str, str.__str__),
    (bytes, lambda value: bytes.__getitem__(value, slice(None))),
    (bytearray, lambda value: bytearray(memoryview(value))),
    (int, int.__index__),
    (float, float.__float__),
    (complex, complex.__complex__),
    (tuple, lambda value: tuple.__getitem__(value, slice(None))),
    (list, list.copy),
    (dict, dict.copy),
    (frozenset, frozenset.copy),
    (set, set.copy),
)


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


@functools.cache
def _resolve(reference: str) -> Callable[..., Any]:
    module_name, _, qualname = reference.partition(":")
    found: Any = importlib.import_module(module_name)
    for name in qualname.split("."):
        found = getattr(found, name)
    if not callable(found):
        raise TypeError(f"{reference} is not callable")
    function: Callable[..., Any] = found
    return function


def _describe(exc: BaseException, prefix: str = "") -> bytes:
    """Pickle an exception as (type name, message, traceback) strings."""
    try:
        message = str.__str__(str(exc))
    except BaseException:
        message = f"<str() of the {type(exc).__name__} failed>"
    # The worker's own frame is noise in a report about the target.
    try:
        shown = exc.with_traceback(exc.__traceback__.tb_next) if exc.__traceback__ else exc
        text = "".join(traceback.format_exception(shown))
    except BaseException:
        text = f"{error_type(exc)}: {message}\n"
    return _dumps((str.__str__(error_type(exc)), prefix + message, text))
