"""Workers forked from a fork server that runs in a sandbox, each into a sandbox of its own: the
same walls as a worker spawned in one by bubblewrap (``test_sandbox``), made by the fork.

Skipped where no sandbox can be built; ``.ci/run`` installs bubblewrap.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from axm_conformance._process.parent._forkserver import Forked, ForkServer
from axm_conformance._process.parent._worker import Worker, WorkerConfig, fork_server
from axm_conformance._process.system import _sandbox, _tasks
from axm_conformance._process.system._sandbox import Sandbox

pytestmark = [
    pytest.mark.skipif(bool(_sandbox.support()), reason=f"no sandbox here: {_sandbox.support()}"),
    pytest.mark.skipif(sys.platform != "linux", reason="a fork server needs Linux"),
]

HERE = str(Path(__file__).parent)
T = "worker_targets"
OFFLINE = Sandbox(network=False)


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    started = fork_server(sandbox=OFFLINE).start()
    yield started
    started.close()


def config(server: ForkServer, **changes: object) -> WorkerConfig:
    fields: dict[str, object] = {
        "timeout": 2.0,
        "sys_path": (HERE,),
        "fork_server": server,
        "sandbox": OFFLINE,
        **changes,
    }
    return WorkerConfig(**fields)  # type: ignore[arg-type]


def forked(worker: Worker) -> Forked:
    process = worker._resources.process
    assert process is not None and isinstance(process.child, Forked), "the worker was spawned"
    return process.child


def test_each_worker_is_the_second_process_of_a_pid_namespace_of_its_own(
    server: ForkServer,
) -> None:
    with Worker(config(server)) as first, Worker(config(server)) as second:
        seen = [worker.call(f"{T}:namespace_of_pids").value for worker in (first, second)]
        for worker in (first, second):
            assert forked(worker).confined
            # The kit sees the worker below its monitor and the namespace's init.
            assert psutil.Process(forked(worker).worker_pid()).ppid() != worker.pid
    assert [pid for pid, _ in seen] == [2, 2]
    namespaces = {namespace for _, namespace in seen}
    assert len(namespaces) == 2 and os.readlink("/proc/self/ns/pid") not in namespaces


def test_a_worker_writes_only_its_working_directory_and_a_private_temporary_one(
    server: ForkServer,
) -> None:
    with Worker(config(server)) as first, Worker(config(server)) as second:
        first.start()
        second.start()
        places = {
            "own": str(first.workdir / "made"),
            "private": "/tmp/made-by-the-first",
            "neighbour's": str(second.workdir / "made"),
            "system's": f"{sys.prefix}/made",
        }
        written = first.call(f"{T}:try_writes", list(places.values())).value
        assert {name: written[path] for name, path in places.items()} == {
            "own": "written",
            "private": "written",
            "neighbour's": "ENOENT",  # under the machine's /tmp: not even seen
            "system's": "EROFS",
        }
        assert (first.workdir / "made").read_text() == "x"
        assert not (second.workdir / "made").exists()
        assert not Path("/tmp/made-by-the-first").exists()
        assert "made-by-the-first" not in second.call(f"{T}:listing", "/tmp").value


def test_a_module_in_the_machines_temporary_directory_is_read_not_written(
    server: ForkServer, tmp_path: Path
) -> None:
    source = "def answer(state):\n    return 42\n"
    (tmp_path / "made_in_tmp.py").write_text(source)
    with Worker(config(server, sys_path=(HERE, str(tmp_path)))) as worker:
        assert worker.call("made_in_tmp:answer").value == 42
        written = worker.call(f"{T}:try_writes", [str(tmp_path / "made_in_tmp.py")]).value
        assert list(written.values()) == ["EROFS"]
    assert (tmp_path / "made_in_tmp.py").read_text() == source


def test_a_worker_has_no_capability_and_no_network(server: ForkServer) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        with Worker(config(server)) as worker:
            sets = worker.call(f"{T}:capabilities").value
            refused = worker.call(f"{T}:connect", listener.getsockname()[1]).value
    finally:
        listener.close()
    assert {name: sets[name] for name in ("CapEff", "CapPrm", "CapBnd", "CapAmb")} == dict.fromkeys(
        ("CapEff", "CapPrm", "CapBnd", "CapAmb"), 0
    )
    assert refused == "ConnectionRefusedError"


def test_a_kill_of_every_process_ends_only_the_workers_namespace(server: ForkServer) -> None:
    sentinel = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        with Worker(config(server)) as killer, Worker(config(server)) as neighbour:
            neighbour.start()
            # kill(-1) spares the caller and its namespace's init, and ends its own child.
            assert killer.call(f"{T}:kill_every_process").value == -signal.SIGKILL
            assert neighbour.call(f"{T}:echo", 1).value == (1,)
            assert killer.call(f"{T}:echo", 2).value == (2,)
        assert sentinel.poll() is None and not server.died
    finally:
        sentinel.kill()
        sentinel.wait()


def test_a_worker_killed_by_a_signal_is_seen_killed_by_it(server: ForkServer) -> None:
    with Worker(config(server)) as worker:
        crash = worker.call(f"{T}:kill_self").crash
    assert crash is not None and crash.signal_name == "SIGKILL"


def test_nothing_a_worker_started_outlives_it(server: ForkServer) -> None:
    marker = f"{600 + os.getpid() % 1000}.{time.monotonic_ns() % 1000}"

    def sleepers() -> list[psutil.Process]:
        found = []
        for process in psutil.process_iter(["cmdline"]):
            if process.info["cmdline"] == ["sleep", marker]:
                found.append(process)
        return found

    with Worker(config(server)) as worker:
        worker.call(f"{T}:start_daemon", marker)
        running = sleepers()
        assert len(running) == 1, f"the daemon runs as {running} once started"
    deadline = time.monotonic() + 5
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = []
    for process in sleepers():
        with contextlib.suppress(psutil.NoSuchProcess):  # gone at last, as it should be
            left.append((process.pid, process.ppid(), process.status()))
    assert left == [], "(pid, parent, status) of the daemon 5 s after its worker stopped"


def test_a_worker_that_needs_the_network_is_spawned_in_a_sandbox_of_its_own(
    server: ForkServer,
) -> None:
    with Worker(config(server, sandbox=Sandbox(network=True))) as worker:
        assert worker.call(f"{T}:echo", 4).value == (4,)
        process = worker._resources.process
        assert process is not None and not isinstance(process.child, Forked)
        assert psutil.Process(worker.pid or 0).name() == "bwrap"


def test_a_server_whose_forks_cannot_make_namespaces_refuses_them_and_workers_spawn(
    server: ForkServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without capabilities in its sandbox (as bwrap gives a sandbox that is not capable), the
    server's first confined fork fails its probe: every worker is then spawned, none fails."""
    original = Sandbox.command

    def incapable(self: Sandbox, *args: object, **options: object) -> list[str]:
        options["capable"] = False
        return original(self, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(Sandbox, "command", incapable)
    weak = fork_server(sandbox=OFFLINE).start()
    try:
        with Worker(config(weak)) as worker:
            assert worker.call(f"{T}:echo", 3).value == (3,)
            process = worker._resources.process
            assert process is not None and not isinstance(process.child, Forked)
            assert weak.broken
    finally:
        weak.close()


@pytest.mark.skipif(bool(_tasks.support()), reason=f"no task groups here: {_tasks.support()}")
@pytest.mark.parametrize("way", ["forked", "spawned"])
def test_a_worker_holds_at_most_so_many_tasks(
    server: ForkServer, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound = 64  # the kit's is far higher; the groups are made by this process
    monkeypatch.setattr(_tasks, "TASKS_MAX", bound)
    settings = config(server) if way == "forked" else config(server, fork_server=None)
    with Worker(settings) as worker:
        forked_children = worker.call(f"{T}:fork_until_refused", bound + 100).value
        process = worker._resources.process
        assert process is not None and isinstance(process.child, Forked) == (way == "forked")
        group = process.child.tasks
        assert group is not None and Path(group.path).is_dir()
    # The worker, its init, and its monitor (or the sandbox's bwrap) count too.
    assert forked_children == bound - 3
    assert not Path(group.path).exists()
