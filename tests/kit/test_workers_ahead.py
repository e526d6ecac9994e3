"""Workers started ahead of use: each tool's worker starts before the engine needs it."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from axm_conformance._settings import Settings
from axm_conformance._workers import WorkersAhead, inspect_tools
from tests.conftest import FIXTURES

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


SETTINGS = Settings(sys_path=(str(FIXTURES),))
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
        assert second.call("axm_conformance._agent:describe_all").value[0].ref == SECOND.ref
        # The first one is spawned; the next ones are forked from the fork server.
        assert workers.forks is not None and workers.forks.pid is not None
        assert parent_of(first.pid) == os.getpid()
        assert parent_of(second.pid) == workers.forks.pid
        first.close()
        second.close()
    finally:
        workers.close()


def test_a_tool_out_of_the_order_gets_a_worker_started_when_taken() -> None:
    workers = WorkersAhead(SETTINGS)
    with workers.take(OTHER) as worker:
        assert worker.call("axm_conformance._agent:describe_all").value[0].ref == OTHER.ref
    assert workers.forks is None  # one tool: no fork server


def test_a_fork_server_starts_only_where_several_tools_are_expected() -> None:
    workers = WorkersAhead(SETTINGS)
    workers.expect(1)
    assert workers.forks is None
    workers.expect(2)
    assert workers.forks is not None
    server = workers.forks.pid
    with workers.take(OTHER) as worker:
        assert worker.call("axm_conformance._agent:describe_all").value[0].ref == OTHER.ref
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
            outcome = worker.call("axm_conformance._agent:invoke", {"text": "Hello, World"})
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
