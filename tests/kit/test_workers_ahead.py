"""Workers started ahead of use: each tool's worker starts before the engine needs it."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from axm_conformance._process._containment import contained
from axm_conformance._process.parent._forkserver import Forked
from axm_conformance._process.parent._pool import WorkersAhead, inspect_tools
from axm_conformance._process.system._sandbox import Sandbox
from axm_conformance._settings import Settings, SettingsError
from tests.conftest import FIXTURES, skip_unless_nobody

INVOKE = "axm_conformance._process.child._agent:invoke"
DESCRIBE_ALL = "axm_conformance._process.child._agent:describe_all"

pytestmark = pytest.mark.slow


def running(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:  # gone, or being reaped while read (ESRCH)
        return False
    return state not in ("Z", "X")


def parent_of(pid: int | None) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def gone(pid: int | None) -> bool:
    deadline = time.monotonic() + 3
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(pid)


# Without a sandbox: workers forked from a fork server are what most of these tests are about.
SETTINGS = Settings(sys_path=(str(FIXTURES),), sandbox="off")
FIRST, SECOND, OTHER = inspect_tools(
    ["zoo_axm:SlugTool", "zoo_axm:MedianTool", "zoo_axm:SafeDivideTool"], SETTINGS
)


def test_the_first_worker_starts_at_once_and_each_next_one_when_the_one_before_is_taken() -> None:
    workers = WorkersAhead(SETTINGS)
    workers.plan([FIRST, SECOND])
    try:
        first = workers.started[FIRST.ref]
        assert running(first.pid) and SECOND.ref not in workers.started
        assert workers.take(FIRST) is first
        second = workers.started[SECOND.ref]
        assert running(second.pid)
        assert workers.take(SECOND) is second and workers.started == {}
        # The worker serves the tool it was started for.
        assert second.call(DESCRIBE_ALL).value[0].ref == SECOND.ref
        # The first one is spawned; the next ones are forked from the fork server.
        assert workers.forks is not None and workers.forks.pid is not None
        assert parent_of(first.pid) == os.getpid()
        assert parent_of(second.pid) == workers.forks.pid
        first.close()
        second.close()
    finally:
        workers.close()


def test_a_worker_started_ahead_and_killed_meanwhile_is_replaced_when_taken() -> None:
    """As a call of the tool before may kill it (kill(-1) as the workers' user): the next tool's
    first call must meet a running worker, not a crash that is not its own."""
    workers = WorkersAhead(SETTINGS)
    workers.plan([FIRST, SECOND])
    try:
        with workers.take(FIRST):
            ahead = workers.started[SECOND.ref]
            killed = ahead.pid
            assert killed is not None
            os.kill(killed, signal.SIGKILL)
            assert gone(killed)
        with workers.take(SECOND) as worker:
            assert worker is ahead and running(worker.pid) and worker.pid != killed
            assert worker.call(DESCRIBE_ALL).value[0].ref == SECOND.ref
    finally:
        workers.close()


def test_a_fork_server_killed_meanwhile_is_replaced_and_its_workers_too() -> None:
    workers = WorkersAhead(SETTINGS)
    workers.plan([FIRST, SECOND, OTHER])
    try:
        with workers.take(FIRST):
            assert workers.forks is not None and workers.forks.pid is not None
            killed = workers.forks.pid
            ahead = workers.started[SECOND.ref].pid
            os.kill(killed, signal.SIGKILL)
            assert gone(killed)
        # The worker it forked followed it: the one taken now is spawned, the next one forked
        # from a new server.
        with workers.take(SECOND) as second:
            assert second.pid != ahead and parent_of(second.pid) == os.getpid()
            assert second.call(DESCRIBE_ALL).value[0].ref == SECOND.ref
        assert workers.forks is not None and workers.forks.pid not in (None, killed)
        with workers.take(OTHER) as other:
            assert parent_of(other.pid) == workers.forks.pid
            assert other.call(DESCRIBE_ALL).value[0].ref == OTHER.ref
    finally:
        workers.close()


def test_a_tool_out_of_the_order_gets_a_worker_started_when_taken() -> None:
    workers = WorkersAhead(SETTINGS)
    with workers.take(OTHER) as worker:
        assert worker.call(DESCRIBE_ALL).value[0].ref == OTHER.ref
    assert workers.forks is None  # one tool: no fork server


def test_a_fork_server_starts_only_where_several_tools_are_expected() -> None:
    workers = WorkersAhead(SETTINGS)
    workers.expect(1)
    assert workers.forks is None
    workers.expect(2)
    assert workers.forks is not None
    server = workers.forks.pid
    with workers.take(OTHER) as worker:
        assert worker.call(DESCRIBE_ALL).value[0].ref == OTHER.ref
        assert parent_of(worker.pid) == server
    workers.close()
    assert workers.forks is None and gone(server)


def test_the_worker_that_inspected_a_sole_tool_is_kept_to_certify_it() -> None:
    workers = WorkersAhead(SETTINGS)
    try:
        (subject,) = inspect_tools(["zoo_axm:SlugTool"], SETTINGS, workers)
        kept = workers.started[subject.ref]
        inspected_by = kept.pid
        workers.plan([subject])  # already there: nothing else starts
        assert list(workers.started) == [subject.ref]
        with workers.take(subject) as worker:
            outcome = worker.call(INVOKE, {"text": "Hello, World"})
            assert outcome.value.status == "returned"
            assert worker.pid == inspected_by
    finally:
        workers.close()


def test_the_worker_that_inspected_several_tools_is_not_kept() -> None:
    workers = WorkersAhead(SETTINGS)
    inspect_tools(["zoo_axm:SlugTool", "zoo_axm:MedianTool"], SETTINGS, workers)
    assert workers.started == {}


def test_close_stops_the_workers_nobody_took() -> None:
    workers = WorkersAhead(SETTINGS)
    workers.plan([FIRST, SECOND])
    pid = workers.started[FIRST.ref].pid
    workers.close()
    assert gone(pid) and workers.started == {}


def test_a_tool_the_run_refuses_to_call_gets_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # As root without --axm-worker-user, a tool that writes files is not called at all.
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    writer = dataclasses.replace(FIRST, effects=("write",))
    workers = WorkersAhead(SETTINGS)
    try:
        workers.plan([writer, SECOND])
        assert list(workers.started) == [SECOND.ref]
    finally:
        workers.close()


def test_a_worker_user_that_cannot_run_the_interpreter_is_told_where_it_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A virtual environment anyone can read, made from an interpreter in a directory only
    root enters: the message names that directory, not the environment, and says what to do."""
    skip_unless_nobody()
    real = os.path.realpath(sys.executable)
    root = Path(tempfile.mkdtemp())
    try:
        root.chmod(0o755)
        home = root / "home"
        home.mkdir()
        (home / "python").symlink_to(real)
        home.chmod(0o700)
        python = root / "venv" / "python"
        python.parent.mkdir()
        python.symlink_to(home / "python")
        monkeypatch.setattr(sys, "executable", str(python))
        with pytest.raises(SettingsError) as raised:
            inspect_tools(["zoo_axm:SlugTool"], dataclasses.replace(SETTINGS, worker_user="nobody"))
    finally:
        shutil.rmtree(root)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    message = str(raised.value)
    assert message.startswith(
        f"user 'nobody' cannot run the interpreter {python} (that is, {real}): "
        f"it cannot enter {home} (drwx------, owned by root); "
        f"make the virtual environment from a Python {version} that user can read"
    )
    assert "\n" not in message and "/root" not in message.partition("; make")[2]


CONTAINED = dataclasses.replace(SETTINGS, sandbox="auto")


@pytest.mark.skipif(not contained(CONTAINED), reason="no sandbox can be built here")
def test_in_a_sandbox_workers_are_forked_from_a_server_in_one_each_into_one_of_its_own() -> None:
    workers = WorkersAhead(CONTAINED)
    workers.expect(3)
    assert workers.forks is not None and workers.forks.sandbox == Sandbox(network=False)
    try:
        with workers.take(FIRST) as first, workers.take(SECOND) as second:
            namespaces = set()
            for worker, subject in ((first, FIRST), (second, SECOND)):
                assert worker.call(DESCRIBE_ALL).value[0].ref == subject.ref
                process = worker._resources.process
                assert process is not None and isinstance(process.child, Forked)
                own = psutil.Process(process.child.worker_pid())
                namespaces.add(os.readlink(f"/proc/{own.pid}/ns/pid"))
                assert psutil.Process(workers.forks.pid or 0).name() == "bwrap"
            assert len(namespaces) == 2
    finally:
        workers.close()


@pytest.mark.skipif(not contained(CONTAINED), reason="no sandbox can be built here")
def test_in_a_sandbox_the_inspecting_worker_is_kept_for_a_tool_cut_off_as_it_is() -> None:
    """The worker that loaded a Python tool reaches no network, nor does the tool's: kept."""
    workers = WorkersAhead(CONTAINED)
    try:
        (subject,) = inspect_tools(["zoo_axm:SlugTool"], CONTAINED, workers)
        assert not subject.needs_network
        assert list(workers.started) == [subject.ref]
    finally:
        workers.close()
