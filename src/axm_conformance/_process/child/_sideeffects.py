"""Side effects: what a call left changed, each a :class:`SideEffect` of its kind.

Processes left running (those the call is charged with: see
:mod:`axm_conformance._process.child._lineage`), writes outside the tool's working and temporary
directories, files left in a temporary directory, files written in the project, and the worker
process's own state: threads left running, a closed or left-running event loop, closed or
replaced standard streams, output written to stdout, a changed working directory, environment,
``sys.modules`` or recursion limit.

Writes are seen where Python makes them, through an audit hook (PEP 578) that the worker adds
before it loads a tool: every path the tool opens for writing, creates, renames, removes or
changes, whether or not the operating system lets it. In a sandbox, where everything but the
working and temporary directories is read-only, the system refuses such a write; the hook is
what names the path. A program the tool starts is not seen writing (its refusal is its own
error); a process it leaves is.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from axm_conformance._observation import SideEffect
from axm_conformance._outcomes import listed
from axm_conformance._process.child._exceptions import type_name
from axm_conformance._process.child._lineage import LINEAGE
from axm_conformance._process.child._toolstate import ToolState
from axm_conformance._process.system import _canary, _sandbox
from axm_conformance._process.system._platform import KIT_THREAD
from axm_conformance._process.system._proctable import table
from axm_conformance._process.system._sweep import Started
from axm_conformance._process.system._trace import bytecode_cache

__all__ = ["Watch", "canary_ran", "left_in_temporary", "watch_writes", "written_outside"]

_STREAMS = ("stdin", "stdout", "stderr")
_FD_NAMES = ("input", "output", "error")
# Threads the kit's own event loop starts for run_in_executor.
_LOOP_THREAD_PREFIX = "asyncio_"
# How many paths written outside are kept per call: enough to name them, not a log.
_MOST_PATHS = 20
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Audit events that write to their path arguments: the event, and which of its arguments are
# paths written (os.rename's source is removed, its destination written).
_WRITING_EVENTS: dict[str, tuple[int, ...]] = {
    "os.mkdir": (0,),
    "os.rmdir": (0,),
    "os.remove": (0,),
    "os.rename": (0, 1),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "shutil.rmtree": (0,),
    "sqlite3.connect": (0,),
}


class Watch:
    """The state of the worker process before a call, to say what the call changed in it."""

    def __init__(self, state: ToolState[Any]) -> None:
        self.state = state
        _WRITES.clear()
        _WRITES.recording = True
        self.temporary = {directory: _entries(directory) for directory in _TEMPORARY}
        self.cwd = _cwd()
        self.streams = tuple(getattr(sys, name, None) for name in _STREAMS)
        self.descriptors = tuple(_descriptor(fd) for fd in range(3))
        self.stdout_size = _size(1)
        # A server's children are the tool's: every new descendant counts.
        capabilities = getattr(state.protocol, "capabilities", frozenset({"in-process"}))
        self.started = Started(deep="in-process" not in capabilities)
        LINEAGE.between_calls(self.started)
        self.recursion_limit = sys.getrecursionlimit()
        # An earlier call may have replaced these by something that cannot be copied.
        self.environ: dict[Any, Any] = _read_or(_environment, {})
        self.modules: dict[str, Any] = _read_or(lambda: dict(sys.modules), {})
        self.threads: set[threading.Thread] = _read_or(lambda: set(threading.enumerate()), set())

    def changes(self) -> tuple[SideEffect, ...]:
        """What the call left changed; never raises."""
        _WRITES.recording = False
        effects: list[SideEffect] = []
        typed: tuple[Callable[[], list[SideEffect]], ...] = (
            self._files,
            self._processes,
            self._outside,
            self._temporary,
            self._executed,
        )
        of_state: tuple[Callable[[], list[str]], ...] = (
            self._threads,
            self._loop,
            self._descriptors,
            self._streams,
            self._stdout,
            self._cwd,
            self._environ,
            self._modules,
            self._recursion_limit,
        )
        looks: list[Callable[[], list[SideEffect]]] = [
            *typed,
            *(functools.partial(_of_state, told) for told in of_state),
        ]
        for check in looks:
            try:
                effects.extend(check())
            except Exception as exc:
                said = f"<the kit could not tell: {type(exc).__name__}: {exc}>"
                effects.append(SideEffect("state", said))
        return tuple(effects)

    def _files(self) -> list[SideEffect]:
        watch = self.state.files
        found = watch.changes() if watch is not None else ""
        return [SideEffect("project", found)] if found else []

    def _processes(self) -> list[SideEffect]:
        left = []
        for pid in LINEAGE.charge(self.started):
            name = table().name(pid)
            if name is not None:
                left.append(f"{pid} ({name})")
        if not left:
            return []
        said = f"left {_count(len(left), 'process', 'processes')} running: {listed(left)}"
        return [SideEffect("process", said)]

    def _outside(self) -> list[SideEffect]:
        # In a temporary directory only what is read-only (in a sandbox, a module made in the
        # machine's /tmp and shown again, say) is outside.
        shown = [path for path in _WRITES.in_temporary if _read_only(path)]
        paths = list(dict.fromkeys([*_WRITES, *shown]))
        return written_outside(paths, refused=_sandbox.inside())

    def _temporary(self) -> list[SideEffect]:
        effects = []
        for directory, before in self.temporary.items():
            left = sorted(_entries(directory) - before)
            effects += left_in_temporary([os.path.join(directory, name) for name in left])
        return effects

    def _executed(self) -> list[SideEffect]:
        # Outside a sandbox /dev/shm is the machine's, and the record anyone's (see _canary).
        return canary_ran(_canary.ran()) if _sandbox.inside() else []

    def _threads(self) -> list[str]:
        left = [
            thread
            for thread in threading.enumerate()
            if thread not in self.threads
            and thread.is_alive()
            and not thread.name.startswith((_LOOP_THREAD_PREFIX, KIT_THREAD))
        ]
        if not left:
            return []
        names = [f"{thread.name}{' (daemon)' if thread.daemon else ''}" for thread in left]
        return [f"left {_count(len(left), 'thread', 'threads')} running: {listed(names)}"]

    def _loop(self) -> list[str]:
        loop = self.state.loop
        if loop.is_closed():
            return ["closed the event loop it was called on"]
        if loop.is_running():
            return ["left the event loop it was called on running, in another thread"]
        return []

    def _descriptors(self) -> list[str]:
        return [
            f"closed its standard {name} (file descriptor {fd})"
            for fd, (name, before) in enumerate(zip(_FD_NAMES, self.descriptors, strict=True))
            if before is not None and _descriptor(fd) is None
        ]

    def _streams(self) -> list[str]:
        return [
            f"replaced sys.{name} by {_described(getattr(sys, name, None))}"
            for name, before in zip(_STREAMS, self.streams, strict=True)
            if getattr(sys, name, None) is not before
        ]

    def _stdout(self) -> list[str]:
        stdout = sys.stdout
        if stdout is self.streams[1] and stdout is sys.__stdout__ and stdout is not None:
            # Output still buffered in sys.stdout counts too. A replaced stdout is not touched:
            # its flush is the tool's code.
            with contextlib.suppress(Exception):
                stdout.flush()
        after = _size(1)
        if self.stdout_size is None or after is None or after <= self.stdout_size:
            return []
        return [f"wrote {after - self.stdout_size:,} bytes to its standard output"]

    def _cwd(self) -> list[str]:
        now = _cwd()
        if now == self.cwd:
            return []
        if now is None:
            return ["removed its working directory"]
        return [f"changed the working directory to {now}"]

    def _environ(self) -> list[str]:
        now = _environment()
        if now == self.environ:
            return []
        changed = sorted(_text(name) for name in now if self.environ.get(name) != now[name])
        removed = sorted(_text(name) for name in self.environ if name not in now)
        parts = [
            f"{verb} {listed(names)}"
            for verb, names in (("set", changed), ("removed", removed))
            if names
        ]
        return [f"changed the environment: {'; '.join(parts)}"] if parts else []

    def _modules(self) -> list[str]:
        now = sys.modules
        if now.items() >= self.modules.items():  # nothing removed or replaced (the usual case)
            return []
        removed = sorted(name for name in self.modules if name not in now)
        replaced = sorted(
            name for name, module in self.modules.items() if name in now and now[name] is not module
        )
        return [
            f"{verb} {listed(names)} in sys.modules"
            for verb, names in (("removed", removed), ("replaced", replaced))
            if names
        ]

    def _recursion_limit(self) -> list[str]:
        now = sys.getrecursionlimit()
        if now == self.recursion_limit:
            return []
        return [f"changed the recursion limit from {self.recursion_limit} to {now}"]


def _environment() -> dict[Any, Any]:
    """The environment as os.environ stores it (not decoded, which makes it cheap to compare),
    or a copy of whatever a tool replaced os.environ with."""
    stored = getattr(os.environ, "_data", None)
    return dict(stored) if isinstance(stored, dict) else dict(os.environ)


def _text(name: Any) -> str:
    return os.fsdecode(name) if isinstance(name, bytes) else str(name)


def _read_or(read: Any, default: Any) -> Any:
    try:
        return read()
    except Exception:
        return default


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


def _descriptor(fd: int) -> tuple[int, int] | None:
    try:
        stat = os.fstat(fd)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _size(fd: int) -> int | None:
    """The size of the regular file behind ``fd`` (the worker's output log), else None."""
    try:
        stat = os.fstat(fd)
    except OSError:
        return None
    return stat.st_size if stat.st_mode & 0o170000 == 0o100000 else None


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _described(value: Any) -> str:
    return "None" if value is None else f"a {type_name(value)}"


def left_in_temporary(paths: Sequence[str]) -> list[SideEffect]:
    """The side effect of files left at ``paths``, in a temporary directory (none without
    paths)."""
    if not paths:
        return []
    files = _count(len(paths), "file", "files")
    return [SideEffect("temporary", f"left {files} in its temporary directory: {listed([*paths])}")]


def written_outside(paths: Sequence[str], refused: bool) -> list[SideEffect]:
    """The side effect of writes to ``paths``, outside the working and temporary directories
    (none without paths); ``refused`` says the sandbox refused them."""
    if not paths:
        return []
    where = "the sandbox refused" if refused else "it was let"
    said = (
        f"tried to write {listed(list(paths))}, outside its working and temporary directories "
        f"({where})"
    )
    return [SideEffect("outside", said, tuple(paths))]


def canary_ran(tokens: Sequence[str]) -> list[SideEffect]:
    """The side effect of the kit's canary program run with ``tokens`` (none without)."""
    if not tokens:
        return []
    said = f"ran the kit's canary program, which only the kit's payloads name ({listed([*tokens])})"
    return [SideEffect("executed", said, tokens=tuple(tokens))]


def _of_state(told: Callable[[], list[str]]) -> list[SideEffect]:
    """What a look at the worker process's own state found, as side effects of that kind."""
    return [SideEffect("state", said) for said in told()]


def _entries(directory: str) -> set[str]:
    """The names in a directory (none when it cannot be listed)."""
    try:
        return set(os.listdir(directory))
    except OSError:
        return set()


class _Writes(list[str]):
    """The paths written outside the allowed places during the current call, and those written
    in a temporary directory (see _read_only)."""

    recording = False
    hooked = False
    in_temporary: list[str] = []

    def clear(self) -> None:
        super().clear()
        self.in_temporary.clear()


_WRITES = _Writes()
# The temporary directories a call may leave files in, set by watch_writes: the worker's own
# (TMPDIR, read before a tool could change it) and, in a sandbox, the private /tmp and /var/tmp.
_TEMPORARY: list[str] = []


def watch_writes() -> None:
    """Have every write this process makes through Python, outside its working directory (its
    HOME), its temporary directories and the devices, recorded for the call that makes it.

    Called once in a worker, before any tool is loaded: an audit hook cannot be removed, which
    is also why a tool cannot remove it.
    """
    if _WRITES.hooked:
        return
    _WRITES.hooked = True
    _TEMPORARY.extend(
        dict.fromkeys(
            [
                *([os.environ["TMPDIR"]] if os.environ.get("TMPDIR") else []),
                *(_sandbox.PRIVATE_TEMPORARY if _sandbox.inside() else ()),
            ]
        )
    )
    own = [os.getcwd(), os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/dev"]
    allowed = tuple(os.path.realpath(place) + os.sep for place in own if place)
    # The system's temporary directories are a tool's to write in, sandbox or not (where they
    # are the machine's, what a tool leaves there is not watched: others write there too).
    temporary = tuple(os.path.realpath(place) + os.sep for place in _sandbox.PRIVATE_TEMPORARY)
    # ... but for what is imported from there (a project, a module made in /tmp): outside.
    imported = tuple(
        real + os.sep
        for real in (os.path.realpath(entry) for entry in sys.path if os.path.isabs(entry))
        if (real + os.sep).startswith(temporary)
    )
    sys.addaudithook(_hook(allowed, temporary, imported))


def _hook(
    allowed: tuple[str, ...], temporary: tuple[str, ...], imported: tuple[str, ...]
) -> Callable[[str, tuple[Any, ...]], None]:
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not _WRITES.recording or len(_WRITES) >= _MOST_PATHS:
            return
        if event == "open":
            written = _opened_for_writing(args)
        elif event in _WRITING_EVENTS:
            written = [args[index] for index in _WRITING_EVENTS[event] if index < len(args)]
        else:
            return
        for path in _paths(written):
            here = path + os.sep
            if here.startswith(allowed) or bytecode_cache(path):
                continue
            if here.startswith(temporary) and not here.startswith(imported):
                _WRITES.in_temporary.append(path)
            else:
                _WRITES.append(path)

    return hook


def _opened_for_writing(args: tuple[Any, ...]) -> list[Any]:
    """The path of an ``open`` event that opens it for writing: by its mode (open()) or its
    flags (os.open)."""
    path, mode, flags = (*args, None, None, None)[:3]
    writes = (
        any(letter in mode for letter in "wax+")
        if isinstance(mode, str)
        else isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
    )
    return [path] if writes else []


def _paths(values: list[Any]) -> Iterator[str]:
    """The absolute, resolved paths among an event's arguments (descriptors left out)."""
    for value in values:
        if isinstance(value, bytes):
            value = os.fsdecode(value)
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value or value == ":memory:":
            continue
        with contextlib.suppress(OSError, ValueError):
            yield os.path.realpath(value)


def _read_only(path: str) -> bool:
    """Whether the filesystem the path is (or would be) on is mounted read-only (asked in a
    sandbox only: Windows has none)."""
    if sys.platform == "win32":
        return False
    while True:
        try:
            return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
        except FileNotFoundError:
            parent = os.path.dirname(path)
            if parent == path:
                return False
            path = parent
        except OSError:
            return False
