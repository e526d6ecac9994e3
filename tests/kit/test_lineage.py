"""A process left running is charged to the call during which it started, unless it descends
from one an earlier call was charged with, or the server starts the same command on its own."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from axm_conformance._process.child._lineage import Lineage
from axm_conformance._process.system._sweep import Started

# A job that keeps starting children, as a daemon a tool leaves does.
_JOB = "while :; do sleep 5 & sleep 0.02; done"


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The processes a test starts, each in a session of its own: ended with all they started."""
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


_LINUX = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _start(processes: list[subprocess.Popen[bytes]], *argv: str) -> int:
    process = subprocess.Popen(argv, start_new_session=True)
    processes.append(process)
    return process.pid


def _children_of(pid: int, count: int) -> None:
    """Wait until ``pid`` has started ``count`` children (it keeps starting them)."""
    deadline = time.monotonic() + 10
    while len(_children(pid)) < count:
        assert time.monotonic() < deadline, f"{pid} started too few children"
        time.sleep(0.01)


def _children(pid: int) -> set[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    with open(path) as file:
        return {int(child) for child in file.read().split()}


def _call(lineage: Lineage, during: Callable[[], object]) -> list[int]:
    """A call as the worker makes it: the processes it is charged with."""
    view = Started(deep=True)
    lineage.between_calls(view)
    during()
    return lineage.charge(view)


@pytest.mark.skipif(not _LINUX, reason="reads Linux's lists of children")
def test_a_daemons_children_are_charged_to_the_call_that_left_it_not_to_later_ones(
    started: list[subprocess.Popen[bytes]],
) -> None:
    lineage = Lineage()
    job: list[int] = []

    def leave_a_job() -> None:
        job.append(_start(started, "sh", "-c", _JOB))
        _children_of(job[0], 1)

    first = _call(lineage, leave_a_job)
    assert job[0] in first, "the call that left the job is charged with it"
    # The job starts children during every later call: none of them is that call's.
    later = _call(lineage, lambda: _children_of(job[0], 3))
    assert later == []
    # A call that starts a process of its own is still charged with it.
    own: list[int] = []
    charged = _call(lineage, lambda: own.append(_start(started, "sleep", "7")))
    assert charged == own


@pytest.mark.skipif(not _LINUX, reason="reads Linux's lists of children")
def test_a_command_started_while_no_call_ran_is_not_charged_when_it_starts_during_one(
    started: list[subprocess.Popen[bytes]],
) -> None:
    lineage = Lineage()
    assert _call(lineage, lambda: None) == []
    _start(started, "sleep", "5.5")  # between calls: the server's own
    other: list[int] = []

    def poll_and_start() -> None:
        _start(started, "sleep", "5.5")
        other.append(_start(started, "sleep", "6.5"))

    assert _call(lineage, poll_and_start) == other


@pytest.mark.skipif(not _LINUX, reason="reads Linux's lists of children")
def test_a_process_that_ends_a_moment_after_the_call_is_not_left_running(
    started: list[subprocess.Popen[bytes]],
) -> None:
    lineage = Lineage()
    # A server's bookkeeping after it answers (a version probe, telemetry) ends on its own.
    assert _call(lineage, lambda: _start(started, "sleep", "0.05")) == []
    lasting: list[int] = []
    assert _call(lineage, lambda: lasting.append(_start(started, "sleep", "8"))) == lasting
    # What outlived the settling time once is not waited for again, and is still charged.
    assert lineage.lasting == {"sleep 8"}
    again: list[int] = []
    assert _call(lineage, lambda: again.append(_start(started, "sleep", "8"))) == again
