"""The kit's side of the worker: load tools, describe them, call them and observe each call.

These functions run inside the worker process (see :mod:`axm_conformance._worker`), the only place
tool code ever runs. Everything they return is plain data from :mod:`axm_conformance._observation`.

A tool shares the worker process with this code, so :func:`invoke` assumes the worst of it: the
call may raise anything, return an object that raises or hangs when read, or leave the process
changed. Whatever happens, invoke returns an Observation, and it describes what the call left
behind (files written outside the working directory, processes and threads left running, closed
or replaced standard streams, a changed working directory, environment, ``sys.modules`` or event
loop) as ``side_effects``, one sentence each.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import functools
import inspect
import os
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from axm_conformance._inotify import open_events
from axm_conformance._literals import literals_of
from axm_conformance._observation import (
    ExceptionInfo,
    Observation,
    SubjectInfo,
    first_difference,
    jsonable,
)
from axm_conformance._origin import OwnCode, origin
from axm_conformance._refs import clean_up, load
from axm_conformance.protocols import Cleanups, ToolProtocol, protocol_for

__all__ = [
    "ToolState",
    "close_tool",
    "describe_all",
    "invoke",
    "open_tool",
    "open_tools",
]

_KIT_DIR = str(Path(__file__).resolve().parent)
_CAUSE_DEPTH = 8
# A traceback deeper than this (a runaway recursion) shows only its first and last frames.
_TRACEBACK_FRAMES = 1000
_TRACEBACK_HEAD = 50
_TRACEBACK_TAIL = 50
_MESSAGE_LIMIT = 10_000


def _distribution(obj: Any) -> tuple[str, str] | None:
    """The installed distribution that provides the module ``obj`` was defined in, if any."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    top = (module or "").partition(".")[0]
    for distribution in _providers().get(top, ()):
        name = distribution.metadata["Name"]
        if name:
            return name, distribution.version
    return None


@functools.cache
def _providers() -> Mapping[str, list[metadata.Distribution]]:
    """Which installed distributions provide each top-level module, read once per process.

    What ``importlib.metadata.packages_distributions`` tells, from the same files (the declared
    ``top_level.txt``, else the first part of each path in ``RECORD``), read as plain text: that
    function also parses every distribution's metadata and makes a path object of every file
    listed, about seven times slower, and a worker that inspects a tool waits for it.
    """
    found: dict[str, list[metadata.Distribution]] = {}
    for distribution in metadata.distributions():
        declared = distribution.read_text("top_level.txt")
        names: set[str | None]
        if declared is not None:
            names = set(declared.split())
        else:
            listed = (distribution.read_text("RECORD") or "").splitlines()
            names = {_top_level(line.partition(",")[0]) for line in listed}
        for name in names:
            if name and name.isidentifier():
                found.setdefault(name, []).append(distribution)
    return found


def _top_level(path: str) -> str | None:
    """The top-level module a file listed in RECORD belongs to (None: not a module's file)."""
    head, slash, _ = path.partition("/")
    return head if slash else inspect.getmodulename(head)


def _protocol(option: str, hint: str) -> str:
    return option if option != "auto" else hint


@dataclass
class ToolState:
    """One loaded tool in the worker, with the event loop all its calls run on."""

    adapter: ToolProtocol
    loop: asyncio.AbstractEventLoop
    size_limit: int
    # The project's files, to tell what a call wrote outside its working directory. Their first
    # snapshot is taken just before the first call, not at load: a worker may be started while
    # another tool is still being certified.
    files: FileWatch | None = field(default=None, repr=False)
    # What loading the tool left to do once it is no longer used (an Amplifier module's cleanups).
    cleanups: Cleanups = field(default_factory=list, repr=False)


def open_tools(refs: list[str], protocol: str, size_limit: int) -> ToolState | list[SubjectInfo]:
    """Setup of the inspecting worker: load every tool the references name.

    When they name exactly one, the state is that tool, ready to be called: the worker that
    inspected it can go on to certify it. Otherwise the state is their descriptions.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    cleanups: Cleanups = []
    adapters = [
        protocol_for(obj, sub_ref, _protocol(protocol, hint))
        for ref in refs
        for sub_ref, obj, hint in load(ref, loop.run_until_complete, cleanups)
    ]
    if len(adapters) == 1:
        return ToolState(adapters[0], loop, size_limit, cleanups=cleanups)
    clean_up(cleanups, loop.run_until_complete)
    loop.close()
    return [_described(adapter) for adapter in adapters]


def describe_all(state: ToolState | list[SubjectInfo]) -> list[SubjectInfo]:
    """Describe every tool the worker loaded (see open_tools)."""
    return [_described(state.adapter)] if isinstance(state, ToolState) else state


def _described(adapter: ToolProtocol) -> SubjectInfo:
    info = adapter.describe()
    literals = literals_of(adapter.obj, info.callable.name) if info.callable.present else ()
    return dataclasses.replace(info, distribution=_distribution(adapter.obj), literals=literals)


def open_tool(ref: str, protocol: str, size_limit: int) -> ToolState:
    """Load exactly one tool; the worker keeps the result as its state."""
    state = open_tools([ref], protocol, size_limit)
    if not isinstance(state, ToolState):
        raise ValueError(f"{ref!r} names {len(state)} tools, not one")
    return state


def close_tool(state: ToolState | list[SubjectInfo]) -> None:
    """Teardown of the worker: run what loading the tool left to do (see open_tools)."""
    if isinstance(state, ToolState):
        _renew_loop(state)
        clean_up(state.cleanups, state.loop.run_until_complete)


def invoke(state: ToolState, input: Any, invalid: bool = False) -> Observation:
    """Call the tool once with ``input`` and observe everything the checks judge.

    An ``invalid`` input goes the way the protocol's caller sends one: the adapter may refuse it
    as the orchestrator would (``rejected``) or route it through the protocol's own validation.
    Never raises: when even observing the call fails (the tool left the process unable to run
    the kit's code, say), the failure is reported as what the call raised.
    """
    try:
        return _invoke(state, input, invalid)
    except BaseException as exc:
        _release(exc)
        return Observation(
            status="raised",
            exception=_safe_exception_info(exc, note="raised while the kit observed the call"),
        )


def _invoke(state: ToolState, input: Any, invalid: bool) -> Observation:
    adapter = state.adapter
    before = jsonable(copy.deepcopy(input))[0]
    _renew_loop(state)
    if invalid:
        refusal = adapter.refuses(input)
        if refusal:
            return Observation(status="rejected", rejected_because=refusal)
    if state.files is None:
        state.files = FileWatch(project_roots())
    watch = Watch(state)
    adapter.handler_called = None
    started = time.perf_counter()
    try:
        value = adapter.call_invalid(input) if invalid else adapter.call(input)
        if inspect.isawaitable(value):
            value = state.loop.run_until_complete(asyncio.ensure_future(value, loop=state.loop))
    except BaseException as exc:
        duration = time.perf_counter() - started
        # The tool's frames keep its locals (a memory bomb's hoard) alive: free them first.
        _release(exc)
        observation = Observation(
            status="raised",
            exception=_safe_exception_info(exc, own=adapter.own_code),
            mutation=first_difference(before, jsonable(input)[0]),
            handler_called=adapter.handler_called,
            duration=duration,
        )
        return with_side_effects(observation, watch.changes())
    duration = time.perf_counter() - started
    try:
        result = adapter.facts(value, size_limit=state.size_limit)
    except BaseException as exc:
        # Reading the returned object raised what ordinary error handling lets through
        # (KeyboardInterrupt, SystemExit): for the caller that is what the call raised.
        _release(exc)
        note = f"raised while reading the {_type_name(value)} the call returned"
        observation = Observation(
            status="raised",
            exception=_safe_exception_info(exc, note=note, own=adapter.own_code),
            mutation=first_difference(before, jsonable(input)[0]),
            handler_called=adapter.handler_called,
            duration=duration,
        )
        return with_side_effects(observation, watch.changes())
    observation = Observation(
        status="returned",
        result=result,
        mutation=first_difference(before, jsonable(input)[0]),
        handler_called=adapter.handler_called,
        duration=duration,
    )
    return with_side_effects(observation, watch.changes())


def _renew_loop(state: ToolState) -> None:
    """Give the calls an event loop again when a tool closed the one they ran on.

    A loop a tool left running in a thread of its own is kept: the calls then fail as they
    would in the agent whose loop the tool took over.
    """
    if state.loop.is_closed():
        state.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(state.loop)


def _type_name(value: Any) -> str:
    return str.__str__(type(value).__name__)


def _release(exc: BaseException) -> None:
    """Clear the locals of the finished frames an exception and its causes hold on to."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _CAUSE_DEPTH:
        seen.add(id(current))
        with contextlib.suppress(Exception):
            traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__


def _safe_exception_info(
    exc: BaseException, note: str = "", own: OwnCode | None = None
) -> ExceptionInfo:
    """:func:`exception_info`, or the bare type when describing the exception fails too."""
    try:
        return exception_info(exc, note=note, own=own)
    except BaseException:
        cls = type(exc)
        name = _type_name(exc)
        return ExceptionInfo(
            type_name=name,
            qualified_name=f"{str.__str__(cls.__module__)}.{str.__str__(cls.__qualname__)}",
            ancestors=tuple(str.__str__(klass.__name__) for klass in cls.__mro__),
            message=note,
            traceback=f"{name}: <the traceback could not be formatted>\n",
            is_exception=isinstance(exc, Exception),
        )


def exception_info(
    exc: BaseException, depth: int = 0, note: str = "", own: OwnCode | None = None
) -> ExceptionInfo:
    """The exception as data, its traceback starting at the first frame outside the kit.

    ``note`` is added to the message, in parentheses. A message longer than 10,000 characters
    is cut, and so is a traceback deeper than 1,000 frames (to its first and last 50). Its
    origin, and its causes', is read from the traceback (see :mod:`axm_conformance._origin`),
    ``own`` being the tool's own code.
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_KIT_DIR):
        tb = tb.tb_next
    try:
        message = str.__str__(str(exc))
    except BaseException as read_error:
        message = f"<str() of the exception raised {type(read_error).__name__}>"
    if len(message) > _MESSAGE_LIMIT:
        message = f"{message[:_MESSAGE_LIMIT]}... ({len(message):,} characters)"
    if note:
        message = f"{message} ({note})" if message else note
    try:
        text = _format_traceback(exc, tb)
    except BaseException:
        text = f"{type(exc).__name__}: {message}\n"
    nested = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    cls: type[BaseException] = type(exc)
    found, where = origin(exc, own or OwnCode(), hidden=_KIT_DIR)
    return ExceptionInfo(
        type_name=str.__str__(cls.__name__),
        qualified_name=f"{cls.__module__}.{cls.__qualname__}",
        ancestors=tuple(str.__str__(klass.__name__) for klass in cls.__mro__),
        message=message,
        traceback=text,
        is_exception=isinstance(exc, Exception),
        cause=(
            exception_info(nested, depth + 1, own=own)
            if nested is not None and depth < _CAUSE_DEPTH
            else None
        ),
        origin=found,
        raised_in=where,
    )


def _format_traceback(exc: BaseException, tb: Any) -> str:
    """``traceback.format_exception``, cut to its first and last frames when it is very deep."""
    frames = 0
    cursor = tb
    while cursor is not None:
        frames += 1
        cursor = cursor.tb_next
    if frames <= _TRACEBACK_FRAMES:
        return "".join(traceback.format_exception(type(exc), exc, tb))
    head = traceback.format_list(traceback.extract_tb(tb, limit=_TRACEBACK_HEAD))
    tail_tb = tb
    for _ in range(frames - _TRACEBACK_TAIL):
        tail_tb = tail_tb.tb_next
    tail = traceback.format_exception(type(exc), exc, tail_tb, chain=False)
    omitted = frames - _TRACEBACK_HEAD - _TRACEBACK_TAIL
    return "".join([tail[0], *head, f"  [... {omitted:,} more frames ...]\n", *tail[1:]])


# What a call left behind.

# Directories never walked when watching the project: version control, virtual environments,
# caches of tools that run next to the kit. Their own entry is still watched.
_UNWATCHED = frozenset(
    {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules"}
    | {".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "site-packages"}
)
# A project larger than this many files and directories is not watched: a snapshot per call
# would cost more than the calls.
_WATCH_LIMIT = 3000
# At most this many paths, names or processes are listed per side effect.
_SHOWN = 5
_STREAMS = ("stdin", "stdout", "stderr")
_FD_NAMES = ("input", "output", "error")
# Threads the kit's own event loop starts for run_in_executor.
_LOOP_THREAD_PREFIX = "asyncio_"

# Each path's (mtime, size, inode, is a directory, is walked into).
Snapshot = dict[str, tuple[int, int, int, bool, bool]]


def with_side_effects(observation: Observation, effects: tuple[str, ...]) -> Observation:
    """The observation carrying ``effects`` as its ``side_effects``."""
    return dataclasses.replace(observation, side_effects=effects) if effects else observation


def project_roots() -> tuple[str, ...]:
    """The directories of the project under test: the import path outside the installation.

    The entries of ``sys.path`` that are not part of the Python installation or its
    site-packages, and neither contain nor lie inside the worker's working directory; nested
    entries are covered by the outermost.
    """
    workdir = os.path.realpath(os.getcwd())
    installed = {
        os.path.realpath(prefix)
        for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    roots: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        path = os.path.realpath(entry)
        parts = set(Path(path).parts)
        if (
            parts & _UNWATCHED
            or _within(path, workdir)
            or _within(workdir, path)
            or any(_within(path, prefix) for prefix in installed)
        ):
            continue
        roots.append(path)
    return tuple(
        root
        for root in dict.fromkeys(roots)
        if not any(other != root and _within(root, other) for other in roots)
    )


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class FileWatch:
    """The files under the project's roots, to tell which ones a call created, changed or
    removed. Each snapshot is the baseline of the next call. The walked directories are watched
    (inotify) where the system allows, and a call after which none changed is not walked again.
    Compiled bytecode (which other processes write as they import) is ignored."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.skipped = {
            os.path.realpath(path)
            for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.getcwd())
        }
        self.snapshot = self.take()
        self.events = open_events() if self.snapshot is not None else None
        self._watch()

    def descends(self, entry: os.DirEntry[str]) -> bool:
        """Whether the walk goes into this directory."""
        return entry.name not in _UNWATCHED and entry.path not in self.skipped

    def _watch(self) -> None:
        """Have every directory the last walk went into watched, or else walk every time."""
        if self.events is None or self.snapshot is None:
            return
        walked = [path for path, facts in self.snapshot.items() if facts[4]]
        if not self.events.watch([*self.roots, *walked]):
            self.events.close()
            self.events = None

    def take(self) -> Snapshot | None:
        """Each path's facts (see Snapshot), or None when there are too many."""
        found: Snapshot = {}
        pending = list(self.roots)
        while pending:
            directory = pending.pop()
            try:
                entries = os.scandir(directory)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        stat = entry.stat(follow_symlinks=False)
                        is_directory = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    descends = is_directory and self.descends(entry)
                    found[entry.path] = (
                        stat.st_mtime_ns,
                        stat.st_size,
                        stat.st_ino,
                        is_directory,
                        descends,
                    )
                    if len(found) > _WATCH_LIMIT:
                        return None
                    if descends:
                        pending.append(entry.path)
        return found

    def changes(self) -> str:
        """What changed since the last snapshot, as a sentence ("" when nothing did)."""
        before = self.snapshot
        if before is None or (self.events is not None and not self.events.changed(_bytecode)):
            return ""
        after = self.take()
        self.snapshot = after
        if after is None:
            return ""
        self._watch()
        created = _topmost(
            path
            for path in after
            if path not in before
            and os.path.basename(path) not in _UNWATCHED
            and not _compiled(path)
        )
        removed = _topmost(path for path in before if path not in after and not _compiled(path))
        modified = [
            path
            for path, facts in after.items()
            if path in before
            and not facts[3]
            and facts[:3] != before[path][:3]
            and not _compiled(path)
        ]
        others = _written_by_others({*created, *modified}) if created or modified else set()
        parts = [
            f"{verb} {_listed(sorted(path for path in paths if path not in others))}"
            for verb, paths in (("created", created), ("modified", modified), ("removed", removed))
            if any(path not in others for path in paths)
        ]
        if not parts:
            return ""
        return "wrote outside its working directory, in the project: " + "; ".join(parts)


def _written_by_others(paths: set[str]) -> set[str]:
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


def _topmost(paths: Any) -> list[str]:
    """The paths that are not inside another of them (a new directory stands for its files)."""
    chosen = sorted(paths)
    kept: list[str] = []
    for path in chosen:
        if not kept or not _within(path, kept[-1]):
            kept.append(path)
    return kept


def _bytecode(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith(".pyc") or ".pyc." in name


def _compiled(path: str) -> bool:
    """Bytecode, or a __pycache__ folder (what importing writes; other files in it count)."""
    return _bytecode(path) or os.path.basename(path) == "__pycache__"


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return f"{shown} and {len(items) - _SHOWN} more" if len(items) > _SHOWN else shown


class Watch:
    """The state of the worker process before a call, to say what the call changed in it."""

    def __init__(self, state: ToolState) -> None:
        self.state = state
        self.cwd = _cwd()
        self.streams = tuple(getattr(sys, name, None) for name in _STREAMS)
        self.descriptors = tuple(_descriptor(fd) for fd in range(3))
        self.stdout_size = _size(1)
        self.children = _children()
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
        for pid in sorted(_children() - self.children):
            name = _process_name(pid)
            if name is not None:
                left.append(f"{pid} ({name})")
        if not left:
            return []
        return [f"left {_count(len(left), 'process', 'processes')} running: {_listed(left)}"]

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
        return [f"left {_count(len(left), 'thread', 'threads')} running: {_listed(names)}"]

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
            f"{verb} {_listed(names)}"
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
            f"{verb} {_listed(names)} in sys.modules"
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


def _children() -> set[int]:
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


def _process_name(pid: int) -> str | None:
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


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _a(value: Any) -> str:
    return "None" if value is None else f"a {_type_name(value)}"
