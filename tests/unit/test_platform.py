"""The platform record, and the fallback the kit takes where a Linux feature is missing.

macOS and Windows cannot be run here: their records are simulated, and each test asserts that
the kit takes the portable way, or says plainly that something is not supported. The code that
only Windows runs is run here too, with ``sys.platform`` saying win32, wherever it calls nothing
that only Windows has.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._process._channel import VALUE, read_frame, write_frame
from axm_conformance._process.child import _filewatch, _loop
from axm_conformance._process.parent import _spawn
from axm_conformance._process.parent._ends import never
from axm_conformance._process.parent._spawn import credentials
from axm_conformance._process.parent._worker import fork_server
from axm_conformance._process.system import _platform, _proctable
from axm_conformance._process.system._platform import (
    PORTABLE_VARIABLE,
    Platform,
    as_root,
    detect,
    home_variables,
    read_tail,
)
from tests.conftest import FIXTURES, unsupported

FAST_PATHS = (
    "poll_pipes",
    "procfs",
    "inotify",
    "fork_server",
    "pidfd",
    "subreaper",
    "network_namespaces",
)


def fast_paths(platform: Platform) -> dict[str, bool]:
    return {name: getattr(platform, name) for name in FAST_PATHS}


def simulate(monkeypatch: pytest.MonkeyPatch, **changes: bool | str) -> Platform:
    chosen = dataclasses.replace(_platform.PLATFORM, **changes)
    monkeypatch.setattr(_platform, "PLATFORM", chosen)
    return chosen


def test_linux_takes_its_fast_paths_unless_the_portable_way_is_forced() -> None:
    native = detect("linux", {})
    assert (native.system, native.portable, native.posix, native.memory_limit) == (
        "Linux",
        False,
        True,
        True,
    )
    assert native.procfs and native.inotify and native.subreaper
    assert native.fork_server is native.pidfd is hasattr(os, "pidfd_open")
    assert native.missing() == ()
    assert detect("linux", {PORTABLE_VARIABLE: "0"}) == native
    forced = detect("linux", {PORTABLE_VARIABLE: "1"})
    assert forced.portable
    assert not any(fast_paths(forced).values())
    # The memory limit stays: without it a memory bomb takes the machine.
    assert forced.memory_limit and forced.missing() == ()


def test_macos_takes_the_portable_way_without_a_memory_limit() -> None:
    mac = detect("darwin", {})
    assert (mac.system, mac.portable, mac.posix) == ("macOS", True, True)
    assert not any(fast_paths(mac).values())
    assert mac.missing() == ("no memory limit",)


def test_windows_takes_the_portable_way_without_a_memory_limit_or_stacks() -> None:
    windows = detect("win32", {})
    assert (windows.system, windows.posix, windows.memory_limit) == ("Windows", False, False)
    assert not any(fast_paths(windows).values())
    assert windows.missing() == ("no memory limit", "no stacks from a hung call")


def test_without_rlimit_as_no_address_space_limit_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_limits: list[int] = []
    monkeypatch.setattr(_loop.resource, "setrlimit", lambda which, _: set_limits.append(which))
    _loop._limit_resources(1 << 30, None)
    assert set_limits == [_loop.resource.RLIMIT_CORE, _loop.resource.RLIMIT_AS]
    set_limits.clear()
    simulate(monkeypatch, memory_limit=False)
    _loop._limit_resources(1 << 30, None)
    assert set_limits == [_loop.resource.RLIMIT_CORE]
    set_limits.clear()
    _loop._limit_resources(None, 2048)  # a task bound binds whatever the memory limit
    assert set_limits == [_loop.resource.RLIMIT_CORE, _loop.resource.RLIMIT_NPROC]


def test_without_fork_workers_are_spawned(monkeypatch: pytest.MonkeyPatch) -> None:
    simulate(monkeypatch, fork_server=False)
    server = fork_server().start()
    try:
        assert not server.available
        assert server.pid is None  # no server process was started
    finally:
        server.close()


def test_without_inotify_the_project_is_walked_after_every_call(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    simulate(monkeypatch, inotify=False)
    watch = _filewatch.FileWatch((str(tmp_path),))
    assert watch.events is None
    (tmp_path / "new.txt").write_text("new")
    assert watch.changes().endswith(f"created {tmp_path / 'new.txt'}")


def test_without_proc_processes_are_read_through_psutil(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(_proctable.table(), _proctable.ProcFS) is _platform.PLATFORM.procfs
    simulate(monkeypatch, procfs=False)
    table = _proctable.table()
    assert isinstance(table, _proctable.Psutil)
    me = table.facts(os.getpid())
    assert me is not None
    assert (me.parent, me.group, me.session) == (os.getppid(), os.getpgid(0), os.getsid(0))


def test_on_windows_the_kit_is_never_root_nor_switches_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert as_root()
    monkeypatch.setattr(sys, "platform", "win32")
    assert not as_root()
    with pytest.raises(ValueError, match="Windows has no user to switch to"):
        credentials("nobody")


def test_a_fixture_whose_verdict_needs_the_memory_limit_is_not_run_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manifest = tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
    needing = [entry for entry in manifest if entry.get("needs") == "memory_limit"]
    assert [entry["ref"] for entry in needing] == ["zoo_hostile:MemoryBombTool"]
    assert unsupported(needing[0]) is None
    simulate(monkeypatch, memory_limit=False, system="macOS")
    assert unsupported(needing[0]) == "not run: not supported on macOS (memory_limit)"


def test_the_kit_its_plugin_and_its_worker_import_as_on_windows() -> None:
    """Nothing POSIX alone has is imported or read at import time on Windows.

    The standard library and the dependencies are imported first, as this system's (they pick
    their Windows halves at import, which are not here); then the POSIX-only modules are
    blocked, ``sys.platform`` says win32 and msvcrt is a stand-in.
    """
    code = (
        "import sys, types, subprocess, select, socket, signal, psutil, asyncio, tempfile\n"
        "import pytest, hypothesis, jsonschema, pydantic\n"
        "for name in ('fcntl', 'pwd', 'grp', 'resource', 'termios'):\n"
        "    sys.modules[name] = None\n"
        "sys.modules['msvcrt'] = types.ModuleType('msvcrt')\n"
        "sys.platform = 'win32'\n"
        "import axm_conformance, _axm_conformance_pytestplugin, axm_conformance._pytest\n"
        "from axm_conformance import check_tool\n"
        "from axm_conformance._process import _channel\n"
        "from axm_conformance._process.parent import _ends, _files, _forkserver, _spawn, _worker\n"
        "from axm_conformance._process.child import _loop\n"
        "from axm_conformance._process.system._platform import PLATFORM\n"
        "assert _channel.STACK_SIGNAL is None\n"
        "assert PLATFORM.system == 'Windows'\n"
        "assert not (PLATFORM.poll_pipes or PLATFORM.posix)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_on_windows_frames_cross_a_pipe_without_readv_or_writev(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A frame larger than a pipe holds, written and read in parts with os.write and os.read."""
    monkeypatch.setattr(sys, "platform", "win32")
    for posix_only in ("readv", "writev", "pread"):
        monkeypatch.delattr(os, posix_only)
    read_end, write_end = os.pipe()
    body = os.urandom(3 << 20)
    writer = threading.Thread(target=write_frame, args=(write_end, VALUE, body, never))
    writer.start()
    try:
        tag, received = read_frame(read_end, never)
    finally:
        writer.join()
        os.close(read_end)
        os.close(write_end)
    assert (tag, bytes(received)) == (VALUE, body)


def test_on_windows_the_stderr_tail_is_read_by_seeking(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delattr(os, "pread")
    fd = os.open(tmp_path / "log", os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, b"early " * 100 + b"the end")
        assert read_tail(fd, 7) == (600, b"the end")
        assert read_tail(fd, 1 << 20) == (0, b"early " * 100 + b"the end")
        # A writer sharing the offset goes on at the end.
        os.write(fd, b"!")
        assert read_tail(fd, 4) == (604, b"end!")
    finally:
        os.close(fd)


def test_on_windows_the_channel_stays_put_and_is_not_handed_to_what_a_tool_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, True)
    try:
        assert _loop._relocate(read_end) == read_end
        assert not os.get_inheritable(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize(
    ("system", "names"),
    [
        ("linux", {"HOME": "/h", "TMPDIR": "/t"}),
        ("win32", {"HOME": "/h", "USERPROFILE": "/h", "TMPDIR": "/t", "TEMP": "/t", "TMP": "/t"}),
    ],
)
def test_a_home_and_a_temporary_directory_go_by_every_name_the_system_reads(
    monkeypatch: pytest.MonkeyPatch, system: str, names: dict[str, str]
) -> None:
    monkeypatch.setattr(sys, "platform", system)
    assert home_variables("/h", "/t") == names
    assert home_variables("/h") == {name: "/h" for name in names if names[name] == "/h"}


def test_on_windows_a_worker_sees_its_parent_go_by_looking_it_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows leaves an orphan's parent id as it was: the parent process is looked up."""
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delattr(os, "getppid")
    parent = subprocess.Popen(["sleep", "60"])
    try:
        here = _loop._parent_watch(parent.pid)
        assert here()
    finally:
        parent.kill()
        parent.wait()
    assert not here()
    # One that cannot be looked up is never taken for gone (the channel's end tells instead).
    assert _loop._parent_watch(parent.pid)()


def test_on_windows_a_worker_gets_its_channel_as_handles_and_the_base_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The channel's handles, and only they besides the standard streams, are inherited; a
    virtual environment's launcher is bypassed so that the worker's pid is the worker's."""
    started: list[tuple[list[str], dict[str, Any]]] = []
    inheritable: list[int] = []
    msvcrt = types.SimpleNamespace(get_osfhandle=lambda fd: 1000 + fd)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(sys, "_base_executable", "/base/python.exe", raising=False)
    monkeypatch.setattr(_spawn, "msvcrt", msvcrt, raising=False)
    monkeypatch.setattr(os, "set_handle_inheritable", lambda h, _: inheritable.append(h), False)
    monkeypatch.setattr(subprocess, "STARTUPINFO", dict, raising=False)
    monkeypatch.setattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200, raising=False)
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **kw: started.append((argv, kw)))
    _spawn.spawn((7, 8), 1, 2, tmp_path, {"PATH": "/bin"}, None)
    [(argv, options)] = started
    assert argv == [
        "/base/python.exe",
        *("-P", "-m", "axm_conformance._process.parent._worker", "1007", "1008", str(os.getpid())),
    ]
    assert inheritable == [1007, 1008]
    assert options["startupinfo"] == {"lpAttributeList": {"handle_list": [1007, 1008]}}
    assert options["close_fds"] and options["creationflags"] == 0x200
    assert options["env"] == {"PATH": "/bin", "__PYVENV_LAUNCHER__": sys.executable}
    assert not {"pass_fds", "start_new_session", "user", "group"} & options.keys()


def test_without_network_namespaces_a_closed_world_is_not_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a pass, not a failure: not run, saying the platform cannot cut a server off."""
    from axm_conformance._checks import CHECKS
    from axm_conformance._outcomes import Severity
    from tests.unit.test_checks import CLOSED_WORLD

    check = CHECKS["closed-world-honoured"]
    if shutil.which("unshare") is not None:
        assert check.skip_reason(CLOSED_WORLD) is None
    simulate(monkeypatch, network_namespaces=False, system="macOS")
    reason = check.skip_reason(CLOSED_WORLD)
    assert reason is not None and reason.severity is Severity.NOT_RUN
    assert reason.text.startswith("not run: not supported on this platform (macOS)")
