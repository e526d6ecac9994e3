"""How many tasks a worker may hold: a cgroup pids group of its own where one can be made
(``test_confine`` proves the bound on workers), else RLIMIT_NPROC for a user the kernel does not
exempt."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from axm_conformance._process.parent import _worker
from axm_conformance._process.parent._worker import Worker, WorkerConfig
from axm_conformance._process.system import _tasks
from axm_conformance._process.system._tasks import TASKS_MAX, TaskGroup, rlimit_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="cgroups and /proc are Linux's")

HERE = str(Path(__file__).parent)


@pytest.mark.skipif(bool(_tasks.support()), reason=f"no task groups here: {_tasks.support()}")
def test_a_group_is_bounded_and_removed_once_empty() -> None:
    group = TaskGroup.make()
    assert group is not None
    assert Path(group.path, "pids.max").read_text().strip() == str(TASKS_MAX)
    group.remove()
    assert not Path(group.path).exists()


@pytest.mark.skipif(bool(_tasks.support()), reason=f"no task groups here: {_tasks.support()}")
@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs a process as another user")
def test_a_process_run_as_another_user_is_in_the_group_before_it_runs() -> None:
    """The user a worker runs as (--axm-worker-user) may not move itself into a group the kit
    made: the kit moves it, and it runs only then."""
    group = TaskGroup.make()
    assert group is not None
    nobody = pwd.getpwnam("nobody")
    process = subprocess.Popen(
        group.command(["cat", "/proc/self/cgroup"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        user=nobody.pw_uid,
        group=nobody.pw_gid,
        extra_groups=[],
    )
    assert process.stdin is not None and process.stdout is not None
    with process.stdin:
        group.admit(process)
    seen = process.stdout.read()
    assert process.wait(timeout=30) == 0
    group.remove()
    relative = os.path.basename(group.path)
    assert any(
        "pids" in line.split(":")[1] and line.endswith(relative)
        for line in seen.decode().splitlines()
    ), seen


@pytest.mark.skipif(bool(_tasks.support()), reason=f"no task groups here: {_tasks.support()}")
def test_a_process_the_kit_does_not_admit_runs_nothing(tmp_path: Path) -> None:
    group = TaskGroup.make()
    assert group is not None
    made = tmp_path / "made"
    process = subprocess.Popen(group.command(["touch", str(made)]), stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=30) == 1
    group.remove()
    assert not made.exists()


@pytest.mark.skipif(bool(_tasks.support()), reason=f"no task groups here: {_tasks.support()}")
def test_groups_left_by_processes_that_are_gone_are_removed() -> None:
    home = TaskGroup.home()
    gone = os.path.join(home, "axm-conformance-999998-3")  # no process has that pid here
    os.mkdir(gone)
    _tasks._home.cache_clear()
    try:
        assert not _tasks.support()
        assert not os.path.exists(gone)
    finally:
        if os.path.exists(gone):
            os.rmdir(gone)


def test_root_gets_no_task_rlimit_and_another_user_one_above_its_tasks() -> None:
    assert rlimit_for(0) is None
    nobodys = sum(
        len(os.listdir(f"/proc/{pid}/task"))
        for pid in os.listdir("/proc")
        if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == 65534
    )
    assert rlimit_for(65534) in range(TASKS_MAX + nobodys - 5, TASKS_MAX + nobodys + 5)


def test_a_worker_no_group_bounds_gets_the_task_rlimit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_worker, "rlimit_for", lambda uid: 4242)
    with Worker(WorkerConfig(sys_path=(HERE,))) as worker:
        assert worker.call("worker_targets:task_limit").value == 4242
