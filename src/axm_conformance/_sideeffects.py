"""Side effects: what a call left changed in the worker process, one sentence each.

Files written in the project, processes and threads left running, a closed or left-running event
loop, closed or replaced standard streams, output written to stdout, and a changed working
directory, environment, ``sys.modules`` or recursion limit.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

from axm_conformance._exceptions import type_name
from axm_conformance._filewatch import listed
from axm_conformance._proctable import table
from axm_conformance._sweep import Started
from axm_conformance._toolstate import ToolState

__all__ = ["Watch"]

_STREAMS = ("stdin", "stdout", "stderr")
_FD_NAMES = ("input", "output", "error")
# Threads the kit's own event loop starts for run_in_executor.
_LOOP_THREAD_PREFIX = "asyncio_"


class Watch:
    """The state of the worker process before a call, to say what the call changed in it."""

    def __init__(self, state: ToolState[Any]) -> None:
        self.state = state
        self.cwd = _cwd()
        self.streams = tuple(getattr(sys, name, None) for name in _STREAMS)
        self.descriptors = tuple(_descriptor(fd) for fd in range(3))
        self.stdout_size = _size(1)
        self.started = Started()
        self.recursion_limit = sys.getrecursionlimit()
        # An earlier call may have replaced these by something that cannot be copied.
        self.environ: dict[Any, Any] = _or(_environment, {})
        self.modules: dict[str, Any] = _or(lambda: dict(sys.modules), {})
        self.threads: set[threading.Thread] = _or(lambda: set(threading.enumerate()), set())

    def changes(self) -> tuple[str, ...]:
        """One sentence per thing the call left changed; never raises."""
        effects: list[str] = []
        for check in (
            self._files,
            self._processes,
            self._threads,
            self._loop,
            self._descriptors,
            self._streams,
            self._stdout,
            self._cwd,
            self._environ,
            self._modules,
            self._recursion_limit,
        ):
            try:
                effects.extend(check())
            except Exception as exc:
                effects.append(f"<the kit could not tell: {type(exc).__name__}: {exc}>")
        return tuple(effects)

    def _files(self) -> list[str]:
        watch = self.state.files
        found = watch.changes() if watch is not None else ""
        return [found] if found else []

    def _processes(self) -> list[str]:
        left = []
        for pid in sorted(self.started.since()):
            name = table().name(pid)
            if name is not None:
                left.append(f"{pid} ({name})")
        if not left:
            return []
        return [f"left {_count(len(left), 'process', 'processes')} running: {listed(left)}"]

    def _threads(self) -> list[str]:
        left = [
            thread
            for thread in threading.enumerate()
            if thread not in self.threads
            and thread.is_alive()
            and not thread.name.startswith(_LOOP_THREAD_PREFIX)
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
            f"replaced sys.{name} by {_a(getattr(sys, name, None))}"
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


def _or(read: Any, default: Any) -> Any:
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


def _a(value: Any) -> str:
    return "None" if value is None else f"a {type_name(value)}"
