"""The platform record, and the fallback the kit takes where a Linux feature is missing.

macOS and Windows cannot be run here: their records are simulated, and each test asserts that
the kit takes the portable way, or says plainly that something is not supported.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from axm_conformance import _child, _filewatch, _platform, _proctable, _workers
from axm_conformance._platform import PORTABLE_VARIABLE, Platform, as_root, detect
from axm_conformance._refs import LoadError
from axm_conformance._settings import Settings
from axm_conformance._worker import _credentials, fork_server
from tests.conftest import FIXTURES, unsupported

FAST_PATHS = ("procfs", "inotify", "fork_server", "pidfd", "subreaper", "network_namespaces")


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


def test_windows_cannot_call_tools_and_says_so() -> None:
    windows = detect("win32", {})
    assert (windows.system, windows.posix, windows.memory_limit) == ("Windows", False, False)
    assert not any(fast_paths(windows).values())
    assert windows.missing() == ("tools cannot be called (no POSIX worker)", "no memory limit")


def test_without_rlimit_as_no_address_space_limit_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_limits: list[int] = []
    monkeypatch.setattr(_child.resource, "setrlimit", lambda which, _: set_limits.append(which))
    _child._limit_resources(1 << 30)
    assert set_limits == [_child.resource.RLIMIT_CORE, _child.resource.RLIMIT_AS]
    set_limits.clear()
    simulate(monkeypatch, memory_limit=False)
    _child._limit_resources(1 << 30)
    assert set_limits == [_child.resource.RLIMIT_CORE]


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


def test_without_posix_loading_a_tool_is_refused_with_a_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    simulate(monkeypatch, posix=False, system="Windows")
    with pytest.raises(LoadError, match="needs a POSIX system, and Windows is not one; run the"):
        _workers.inspect_tools(["zoo_axm:SlugTool"], Settings())


def test_without_posix_the_kit_is_never_root_nor_switches_users(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    simulate(monkeypatch, posix=False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert not as_root()
    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(ValueError, match="Windows has no user to switch to"):
        _credentials("nobody")


def test_a_fixture_whose_verdict_needs_the_memory_limit_is_not_run_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manifest = tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
    needing = [entry for entry in manifest if "needs" in entry]
    assert [entry["ref"] for entry in needing] == ["zoo_hostile:MemoryBombTool"]
    assert unsupported(needing[0]) is None
    simulate(monkeypatch, memory_limit=False, system="macOS")
    assert unsupported(needing[0]) == "not run: not supported on macOS (memory_limit)"


def test_the_kit_and_its_plugin_import_without_the_posix_only_modules() -> None:
    """What Windows lacks (psutil needs resource on Linux only, so it is imported first)."""
    code = (
        "import sys, psutil\n"
        "for name in ('fcntl', 'pwd', 'grp', 'resource', 'termios'):\n"
        "    sys.modules[name] = None\n"
        "import axm_conformance, _axm_conformance_pytestplugin, axm_conformance._pytest\n"
        "from axm_conformance import check_tool\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


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
