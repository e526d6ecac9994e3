"""The sandbox every worker runs in (bubblewrap): what it keeps in, what it lets through, and how a
run says which way it took.

The tests that build a sandbox are skipped where none can be built (no bwrap, no user
namespaces); ``.ci/run`` installs bubblewrap, so CI runs them all.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from axm_conformance import _api, _checks, check_tool, protocols
from axm_conformance._api import check_installed
from axm_conformance._checks import _registry as _check_registry
from axm_conformance._process._containment import contained, containment, refusal
from axm_conformance._process.system import _sandbox, _trace
from axm_conformance._process.system._sandbox import Sandbox, exit_status
from axm_conformance._settings import Settings, SettingsError
from axm_conformance.protocols import _registry as _protocol_registry
from tests.conftest import FIXTURES

SEED = 20261122
MCP_SERVERS = FIXTURES / "mcp_servers"

needs_sandbox = pytest.mark.skipif(
    bool(_sandbox.support()), reason=f"no sandbox here: {_sandbox.support()}"
)


def verdicts(report: Any) -> dict[str, tuple[str, list[str]]]:
    return {
        tool.subject.name: (tool.verdict.verdict, sorted(o.check_id for o in tool.failed))
        for tool in report.tools
    }


# The command -----------------------------------------------------------------------------------


def test_the_command_mounts_the_root_read_only_then_the_private_and_the_writable_places(
    tmp_path: Path,
) -> None:
    module = tmp_path / "module"
    module.mkdir()
    command = Sandbox(network=False).command(["python", "-c", "1"], ["/srv/work"], [str(module)])
    # Later mounts land on earlier ones: the root first, the places inside it after.
    order = [
        command.index("--ro-bind"),
        command.index("/tmp"),
        command.index(str(module)),
        command.index("/srv/work"),
    ]
    assert order == sorted(order), command
    assert "--unshare-pid" in command and "--die-with-parent" in command
    assert "--unshare-net" in command
    assert "--unshare-net" not in Sandbox(network=True).command(["true"], ["/srv/work"])
    assert command[-4:] == ["--", "python", "-c", "1"]
    if os.geteuid() == 0:
        assert command[command.index("--cap-drop") + 1] == "ALL"


def test_only_paths_a_private_temporary_directory_hides_are_shown_again(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    command = Sandbox().command(
        ["true"], ["/srv"], [str(tmp_path / "a"), str(inner), "/usr/lib", "/tmp/no-such-path"]
    )
    shown = [command[i + 1] for i, word in enumerate(command) if word == "--ro-bind"][1:]
    assert shown == [os.path.realpath(tmp_path / "a")]


def test_a_script_is_shown_with_its_directory_but_a_private_temporary_directory_never(
    tmp_path: Path,
) -> None:
    """A server's script in /tmp is shown with its folder (its modules; a write beside it is
    refused, not absorbed by the private /tmp); one directly in /tmp alone."""
    script = tmp_path / "server.py"
    script.write_text("")
    read = _sandbox.read_by(["python", str(script), "/tmp/x.py"], {})
    assert str(script) in read and os.path.realpath(tmp_path) in read
    assert "/tmp/x.py" in read and "/tmp" not in read


def test_an_exit_status_of_128_plus_a_signal_is_read_as_that_signal() -> None:
    assert exit_status(128 + signal.SIGKILL) == -signal.SIGKILL
    assert exit_status(139) == -signal.SIGSEGV
    assert exit_status(3) == 3
    assert exit_status(0) == 0


# Settings --------------------------------------------------------------------------------------


def test_a_sandbox_that_is_required_where_none_can_be_built_is_a_settings_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_sandbox, "support", lambda: "bwrap is not on PATH: install bubblewrap")
    required = Settings(sandbox="required")  # a record: it asks nothing of the machine
    with pytest.raises(SettingsError) as raised:
        check_installed(required)
    assert raised.value.setting == "sandbox"
    assert str(raised.value) == (
        "a sandbox is required, and none can be built: bwrap is not on PATH: install bubblewrap"
    )
    assert not contained(Settings(sandbox="auto"))
    assert containment(Settings(sandbox="auto")).startswith("none: bwrap is not on PATH")
    with pytest.raises(SettingsError, match="sandbox must be one of auto, required, off"):
        Settings(sandbox="on")


def test_settings_are_a_record_and_what_they_name_is_checked_once_against_the_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making settings loads no plugin and probes no sandbox; the run's start does, and names
    what is not installed."""

    def forbidden(*args: object) -> None:
        raise AssertionError("settings read the machine")

    # Where each is defined, and every door it is taken through.
    for module, name in [
        (_sandbox, "support"),
        (_sandbox, "_support"),
        (_check_registry, "load_check_plugins"),
        (_checks, "load_check_plugins"),
        (_api, "load_check_plugins"),
        (_protocol_registry, "registered"),
        (_protocol_registry, "profiles"),
        (protocols, "registered"),
        (protocols, "profiles"),
        (_api, "profiles"),
    ]:
        monkeypatch.setattr(module, name, forbidden)
    asked = Settings(protocol="openapi", checks=("no-such-check",), sandbox="required")
    monkeypatch.undo()
    with pytest.raises(SettingsError, match=r"protocol must be one of auto, .*, not 'openapi'"):
        check_installed(asked)
    with pytest.raises(SettingsError, match="unknown check id 'no-such-check'; known: "):
        check_installed(dataclasses.replace(asked, protocol="auto"))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_as_root_a_tool_that_writes_is_called_in_a_sandbox_and_not_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_sandbox, "support", lambda: "")
    assert refusal(Settings(), ("write",)) is None
    refused = refusal(Settings(sandbox="off"), ("write", "execute"))
    assert refused is not None and "install bubblewrap (the sandbox)" in refused


def test_the_network_is_given_to_tools_that_declare_it_and_to_those_named() -> None:
    settings = Settings(network=("fetch",))
    assert settings.reaches_network("fetch", declared=False)
    assert settings.reaches_network("other", declared=True)
    assert not settings.reaches_network("other", declared=False)
    assert Settings(network=("*",)).reaches_network("any", declared=False)


def test_bad_sandbox_options_are_one_line_usage_errors(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FIXTURES))
    result = pytester.runpytest_subprocess(
        "--axm-conformance", "--axm-tool=zoo_axm:SlugTool", "--axm-sandbox=on"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --axm-sandbox: sandbox must be one of auto, required, off, not 'on'"]
    )
    assert "Traceback" not in result.stderr.str()
    result = pytester.runpytest_subprocess(
        "--axm-conformance", "--axm-tool=zoo_axm:SlugTool", "--axm-network=no_such_tool"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --axm-network: 'no_such_tool' names no tool under test*"])


# What the sandbox keeps in ---------------------------------------------------------------------


@pytest.fixture
def sentinel() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the same user outside any sandbox, which nothing a tool does may reach."""
    process = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


@needs_sandbox
@pytest.mark.slow
def test_the_header_says_which_sandbox_is_in_force(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FIXTURES))
    for given, said in (
        ((), "axm-conformance sandbox: bubblewrap *: a PID namespace, a read-only filesystem*"),
        (("--axm-sandbox=off",), "axm-conformance sandbox: off (--axm-sandbox=off)*"),
    ):
        result = pytester.runpytest_subprocess(
            "--axm-conformance", "--axm-tool=zoo_axm:SlugTool", "--axm-examples=1", *given
        )
        result.stdout.fnmatch_lines([said])
        if not given and not _trace.support():
            traced = "axm-conformance sandbox: *, servers' writes outside named (strace)"
            result.stdout.fnmatch_lines([traced])


@needs_sandbox
@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_kill_of_every_process_reaches_only_the_sandbox(
    sentinel: subprocess.Popen[bytes],
) -> None:
    report = check_tool("zoo_sandbox:EndEveryProcessTool", examples=10, seed=SEED, timeout=1.0)
    assert verdicts(report) == {"end_every_process": ("failed", ["call-completes"])}
    assert sentinel.poll() is None


@needs_sandbox
@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_server_that_kills_every_process_reaches_only_its_sandbox(
    sentinel: subprocess.Popen[bytes],
) -> None:
    ref = f"mcp:{sys.executable} {MCP_SERVERS / 'group_server.py'}"
    report = check_tool(ref, examples=10, seed=SEED, timeout=2.0)
    found = verdicts(report)
    assert found["crash_group"] == ("failed", ["call-completes"])
    assert found["echo"] == ("certified", [])
    assert sentinel.poll() is None


@needs_sandbox
@pytest.mark.slow
def test_a_log_written_beside_the_source_fails_and_the_source_folder_stays_as_it_was(
    tmp_path: Path,
) -> None:
    package = tmp_path / "logging_tool"
    package.mkdir()
    (package / "tool.py").write_text(
        textwrap.dedent(
            """
            from pathlib import Path
            from axm_runtime.axm import ToolResult

            class UsageLogTool:
                name = "usage_logged"

                def execute(self, *, text: str = "") -> ToolResult:
                    with open(Path(__file__).with_name("usage-log.txt"), "a") as log:
                        log.write(text + "\\n")
                    return ToolResult(success=True, text=text.upper())
            """
        )
    )
    before = sorted(path.name for path in package.iterdir())
    report = check_tool("tool:UsageLogTool", examples=10, seed=SEED, sys_path=(str(package),))
    (tool,) = report.tools
    assert "writes-confined" in {outcome.check_id for outcome in tool.failed}
    (message,) = tool.outcome("writes-confined").messages
    assert f"tried to write {package / 'usage-log.txt'}, outside its working" in message
    assert sorted(path.name for path in package.iterdir()) == before


@needs_sandbox
@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX sessions")
def test_a_daemon_that_left_the_session_and_cleared_its_environment_does_not_survive() -> None:
    def sleepers() -> set[int]:
        return {
            process.pid
            for process in psutil.process_iter(["cmdline"])
            if process.info["cmdline"] == ["sleep", "120"]
        }

    before = sleepers()
    report = check_tool("zoo_sandbox:SetsidDaemonTool", examples=10, seed=SEED, timeout=1.0)
    assert verdicts(report) == {"start_daemon": ("failed", ["no-process-left"])}
    deadline = time.monotonic() + 5
    while sleepers() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sleepers() - before == set()


@needs_sandbox
@pytest.mark.slow
def test_a_tool_reaches_the_network_only_when_it_needs_one(tmp_path: Path) -> None:
    """A listener on this machine's loopback: a tool that does not declare it needs the network
    cannot reach even that, unless the run names it."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    (tmp_path / "pinging.py").write_text(
        textwrap.dedent(
            f"""
            import socket
            from axm_runtime.axm import ToolResult

            class PingTool:
                name = "ping"

                def execute(self, *, text: str = "") -> ToolResult:
                    with socket.create_connection(("127.0.0.1", {port}), timeout=2) as link:
                        return ToolResult(success=True, text=link.recv(4).decode())
            """
        )
    )
    try:
        common: dict[str, Any] = {
            "examples": 5,
            "seed": SEED,
            "sys_path": (str(tmp_path),),
            "checks": ("result-type",),
        }
        offline = check_tool("pinging:PingTool", **common)
        online = check_tool("pinging:PingTool", network=("ping",), **common)
    finally:
        stop.set()
        thread.join()
        listener.close()
    (cut_off,) = offline.tools
    (reached,) = online.tools
    assert cut_off.calls["served"] == 0 and cut_off.verdict.verdict == "inconclusive"
    assert reached.calls["served"] == reached.calls["valid"] > 0
    assert reached.verdict.verdict == "certified"


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_scratch_file_in_the_systems_temporary_directory_is_the_tools_to_write(
    tmp_path: Path, sandbox: str
) -> None:
    """A tool that writes and removes /tmp/NAME (not TMPDIR) writes where it may, either way."""
    (tmp_path / "scratching.py").write_text(
        textwrap.dedent(
            """
            import os
            from axm_runtime.axm import ToolResult

            class ScratchTool:
                name = "scratch"

                def execute(self, *, text: str = "") -> ToolResult:
                    path = f"/tmp/axm-scratch-{os.getpid()}.txt"
                    with open(path, "w") as scratch:
                        scratch.write(text)
                    os.remove(path)
                    return ToolResult(success=True, text=text)
            """
        )
    )
    report = check_tool(
        "scratching:ScratchTool",
        examples=5,
        seed=SEED,
        sys_path=(str(tmp_path),),
        sandbox=sandbox,
        checks=("writes-confined", "leaves-no-trace"),
    )
    (tool,) = report.tools
    assert {o.check_id: o.status for o in tool.outcomes} == {
        "writes-confined": "passed",
        "leaves-no-trace": "passed",
    }


@needs_sandbox
@pytest.mark.slow
def test_a_file_a_server_leaves_in_its_private_temporary_directory_is_named() -> None:
    """The server's /tmp is its sandbox's own: what a call leaves there is read through the
    sandbox's root and named, for that call's tool alone."""
    ref = f"mcp:{sys.executable} {MCP_SERVERS / 'word_server.py'} --defect temporary-per-call"
    report = check_tool(ref, examples=5, seed=SEED, timeout=2.0, checks=("leaves-no-trace",))
    warned = {
        tool.subject.name: [
            str(f) for o in tool.outcomes for f in o.findings if o.status == "warning"
        ]
        for tool in report.tools
        if tool.subject.kind == "tool"
    }
    assert warned.pop("word_count")[0].startswith(
        "left 1 file in its temporary directory: /tmp/word-count-"
    )
    assert not any(warned.values()), warned


@needs_sandbox
@pytest.mark.slow
def test_where_a_server_cannot_be_traced_its_writes_are_not_judged_and_the_run_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without strace the sandbox still refuses the log beside the server's code, unnamed: the
    writes checks are skipped saying why, never passed."""
    monkeypatch.setattr(_trace, "tracer", lambda: "")
    ref = f"mcp:{sys.executable} {MCP_SERVERS / 'word_server.py'} --defect log-beside-source"
    checks = ("writes-confined", "server-writes-confined")
    report = check_tool(ref, examples=3, seed=SEED, timeout=2.0, checks=checks)
    outcomes = [outcome for tool in report.tools for outcome in tool.outcomes]
    assert {outcome.check_id for outcome in outcomes} == set(checks)
    assert all(outcome.status == "skipped" for outcome in outcomes)
    said = {str(finding) for outcome in outcomes for finding in outcome.findings}
    assert any("not traced" in text for text in said), said
    assert any("writes-traced" in text for text in said), said
    assert not (MCP_SERVERS / "word_server.log").exists()
