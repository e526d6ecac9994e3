"""Tests of the isolated RPC worker: every way a tool can misbehave ends in an Answer."""

from __future__ import annotations

import dataclasses
import json
import os
import pwd
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import axm_conformance
from axm_conformance._process._records import Answer, Crash, RemoteError
from axm_conformance._process.parent._forkserver import ForkServer
from axm_conformance._process.parent._worker import Worker, WorkerConfig, fork_server
from axm_conformance._process.system import _platform
from tests.conftest import skip_unless_nobody

pytestmark = pytest.mark.slow

HERE = str(Path(__file__).parent)
T = "worker_targets"
DEFAULTS: dict[str, object] = {"timeout": 1.0, "sys_path": (HERE,)}


def config(**changes: object) -> WorkerConfig:
    return WorkerConfig(**{**DEFAULTS, **changes})  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=["spawned", "forked", "threaded"])
def server(request: pytest.FixtureRequest) -> Iterator[ForkServer | None]:
    """Every test runs against a spawned worker, against one forked by a fork server, and
    against a spawned one whose pipes the kit waits on with a thread each (the portable way,
    which Windows takes) instead of poll()."""
    if request.param != "forked":
        yield None
        return
    started = fork_server().start()
    yield started
    started.close()


@pytest.fixture(autouse=True)
def launched(
    server: ForkServer | None, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(DEFAULTS, "fork_server", server)
    if request.node.callspec.params["server"] == "threaded":
        threaded = dataclasses.replace(_platform.PLATFORM, poll_pipes=False)
        monkeypatch.setattr(_platform, "PLATFORM", threaded)


def launcher() -> int | None:
    """The process whose child a worker started now is: the kit, or the fork server."""
    server = DEFAULTS["fork_server"]
    return server.pid if isinstance(server, ForkServer) else os.getpid()


@pytest.fixture
def worker() -> Iterator[Worker]:
    with Worker(config()) as started:
        yield started


def error_of(outcome: Answer) -> RemoteError:
    assert outcome.error is not None, outcome
    assert outcome.crash is None
    return outcome.error


def crash_of(outcome: Answer) -> Crash:
    assert outcome.crash is not None, outcome
    assert outcome.error is None
    return outcome.crash


def alive(pid: int) -> bool:
    """Whether pid runs (a zombie waiting for a reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone, or being reaped while read (ESRCH)
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_values_round_trip(worker: Worker) -> None:
    value = {"text": "é", "numbers": [1, 2.5, None], "nested": ({"a": b"\x00"},)}
    outcome = worker.call(f"{T}:echo", value, 3)
    assert outcome == Answer(value=(value, 3))
    assert outcome.ok


@pytest.mark.parametrize(
    ("target", "args", "type_name", "message"),
    [
        ("raise_value_error", ("bad input",), "ValueError", "bad input"),
        ("raise_system_exit", (3,), "SystemExit", "3"),
        ("raise_keyboard_interrupt", (), "KeyboardInterrupt", ""),
        ("raise_cancelled", (), "asyncio.exceptions.CancelledError", "cancelled by the tool"),
    ],
)
def test_exceptions_are_reported_and_the_worker_survives(
    worker: Worker, target: str, args: tuple[object, ...], type_name: str, message: str
) -> None:
    before = worker.call(f"{T}:pid").value
    error = error_of(worker.call(f"{T}:{target}", *args))
    assert (error.type_name, error.message) == (type_name, message)
    assert error.traceback.startswith("Traceback (most recent call last):")
    assert f"in {target}" in error.traceback
    assert "_loop.py" not in error.traceback
    assert worker.call(f"{T}:pid").value == before == worker.pid


def test_missing_target_is_an_error(worker: Worker) -> None:
    assert error_of(worker.call(f"{T}:no_such_function")).type_name == "AttributeError"
    assert error_of(worker.call("no_such_module:f")).type_name == "ModuleNotFoundError"


@pytest.mark.parametrize(("target", "args"), [("spin", ()), ("sleep", (60,))])
def test_a_hanging_call_times_out_and_the_next_call_gets_a_new_worker(
    worker: Worker, target: str, args: tuple[object, ...]
) -> None:
    first = worker.call(f"{T}:pid").value
    started = time.monotonic()
    crash = crash_of(worker.call(f"{T}:{target}", *args, timeout=0.5))
    elapsed = time.monotonic() - started
    assert crash.kind == "timeout"
    assert crash.detail == (
        f"the call to {T}:{target} did not return within 0.5 s; the worker was killed"
    )
    assert 0.5 <= elapsed < 0.5 + 2
    assert worker.pid is None
    assert not alive(first)
    second = worker.call(f"{T}:pid").value
    assert second != first


def test_a_sigterm_ignoring_target_is_still_killed(worker: Worker) -> None:
    started = time.monotonic()
    crash = crash_of(worker.call(f"{T}:ignore_sigterm_and_spin", timeout=0.5))
    assert crash.kind == "timeout"
    assert time.monotonic() - started < 0.5 + 2
    assert worker.call(f"{T}:echo", 1).value == (1,)


def test_os_exit_is_an_exited_crash(worker: Worker) -> None:
    crash = crash_of(worker.call(f"{T}:hard_exit", 7))
    assert crash.kind == "exited"
    assert crash.exit_code == 7
    assert crash.detail == "the worker process exited with status 7 during the call"
    assert worker.call(f"{T}:echo", 1).value == (1,)


@pytest.mark.parametrize(("target", "name"), [("kill_self", "SIGKILL"), ("segfault", "SIGSEGV")])
def test_death_by_signal_is_a_signalled_crash(worker: Worker, target: str, name: str) -> None:
    crash = crash_of(worker.call(f"{T}:{target}"))
    assert crash.kind == "signalled"
    assert crash.signal_name == name
    assert crash.detail == f"the worker process was killed by {name} during the call"
    assert worker.call(f"{T}:echo", 1).value == (1,)


def test_a_segfault_leaves_a_python_traceback_in_the_stderr_tail(worker: Worker) -> None:
    crash = crash_of(worker.call(f"{T}:segfault"))
    assert "Fatal Python error: Segmentation fault" in crash.stderr_tail
    assert "segfault" in crash.stderr_tail


def test_the_stderr_tail_is_bounded(worker: Worker) -> None:
    text = "start" + "x" * 100_000 + "the end"
    crash = crash_of(worker.call(f"{T}:stderr_then_exit", text, 1))
    assert crash.kind == "exited"
    assert crash.stderr_tail.endswith("the end")
    assert len(crash.stderr_tail) == 4096


def test_running_out_of_memory_is_a_memory_crash(worker: Worker) -> None:
    crash = crash_of(worker.call(f"{T}:stderr_then_exit", "MemoryError\n", 1))
    assert crash.kind == "memory"
    assert crash.exit_code == 1
    assert "apparently out of memory" in crash.detail


def test_memory_complaints_of_an_earlier_call_do_not_count(worker: Worker) -> None:
    assert worker.call(f"{T}:print_to_stdout").ok
    crash_of(worker.call(f"{T}:stderr_then_exit", "", 0))
    worker.call(f"{T}:echo")
    error_of(worker.call(f"{T}:raise_value_error", "MemoryError"))
    assert crash_of(worker.call(f"{T}:hard_exit", 2)).kind == "exited"


def test_children_of_a_timed_out_call_are_killed(worker: Worker) -> None:
    pid_file = worker.workdir / "sleeper.pid"
    crash = crash_of(worker.call(f"{T}:spawn_sleeper_and_spin", str(pid_file), timeout=0.5))
    assert crash.kind == "timeout"
    assert wait_dead(int(pid_file.read_text()))


def test_processes_that_left_the_group_are_killed_on_close() -> None:
    with Worker(config()) as worker:
        escapees = worker.call(f"{T}:spawn_escapees").value
        assert all(alive(pid) for pid in escapees.values())
        # The daemon's parent exited: the worker, a child subreaper, adopted it.
        assert worker.call(f"{T}:parent_of", escapees["daemon"]).value == worker.pid
    assert all(wait_dead(pid) for pid in escapees.values())


def test_a_process_that_left_the_group_dies_with_a_crashed_worker(worker: Worker) -> None:
    pid_file = worker.workdir / "escapee.pid"
    assert crash_of(worker.call(f"{T}:spawn_escapee_and_exit", str(pid_file))).exit_code == 3
    assert wait_dead(int(pid_file.read_text()))


def test_children_are_killed_on_close() -> None:
    with Worker(config()) as worker:
        sleeper = worker.call(f"{T}:spawn_sleeper").value
        assert alive(sleeper)
    assert wait_dead(sleeper)


@pytest.mark.parametrize(
    ("target", "value"),
    [
        ("print_to_stdout", "printed"),
        ("close_standard_fds", "closed"),
        ("replace_standard_streams", "replaced"),
    ],
)
def test_standard_streams_do_not_touch_the_channel(worker: Worker, target: str, value: str) -> None:
    before = worker.call(f"{T}:pid").value
    assert worker.call(f"{T}:{target}").value == value
    assert worker.call(f"{T}:echo", "still here").value == ("still here",)
    assert worker.pid == before


def test_a_fork_returning_from_the_target_does_not_answer(worker: Worker) -> None:
    before = worker.call(f"{T}:pid").value
    assert worker.call(f"{T}:fork_and_return").value == "forked"
    for number in range(20):
        assert worker.call(f"{T}:echo", number).value == (number,)
    assert worker.pid == before


def test_output_goes_to_files_in_the_workdir(worker: Worker) -> None:
    worker.call(f"{T}:print_to_stdout")
    crash_of(worker.call(f"{T}:stderr_then_exit", "", 0))
    assert "hello from the tool" in (worker.workdir / ".axm-worker.stdout").read_text()
    assert worker.call(f"{T}:where").value["stdin"] == "/dev/null"


def test_garbage_on_the_channel_is_a_channel_crash(worker: Worker) -> None:
    crash = crash_of(worker.call(f"{T}:corrupt_channel"))
    assert crash.kind == "channel"
    assert worker.call(f"{T}:echo", 1).value == (1,)


def test_a_50_mib_result_arrives(worker: Worker) -> None:
    size = 50 * 1024 * 1024
    outcome = worker.call(f"{T}:big", size, timeout=20)
    assert outcome.ok
    assert len(outcome.value) == size


def test_an_emptied_sys_modules_does_not_break_the_reply(worker: Worker) -> None:
    assert worker.call(f"{T}:wipe_modules").value == RemoteError(
        "Wiped", "sys.modules is empty", ""
    )
    assert worker.call(f"{T}:echo", 1).value == (1,)


def test_a_lowered_recursion_limit_does_not_break_the_reply(worker: Worker) -> None:
    depth = 200
    value = worker.call(f"{T}:lower_recursion_limit_and_nest", depth).value
    assert value == worker.call(f"{T}:nested", depth).value
    assert worker.call(f"{T}:echo", 1).value == (1,)


def test_stacks_are_dumped_even_after_the_target_closed_stderr(worker: Worker) -> None:
    crash = crash_of(worker.call(f"{T}:close_stderr_and_spin", timeout=0.5))
    assert crash.kind == "timeout"
    assert "in close_stderr_and_spin" in crash.stderr_tail


def test_the_memory_limit_turns_a_big_allocation_into_a_memory_error() -> None:
    with Worker(config(memory_limit=200 * 1024**2)) as worker:
        limits = worker.call(f"{T}:where").value["address_space"]
        assert limits == (200 * 1024**2, 200 * 1024**2)
        outcome = worker.call(f"{T}:allocate", 1024**3)
        if outcome.error is not None:
            assert outcome.error.type_name == "MemoryError"
        else:
            assert crash_of(outcome).kind in ("memory", "signalled", "exited")
        assert worker.call(f"{T}:allocate", 1024).value == 1024


def test_no_memory_limit_when_none() -> None:
    with Worker(config(memory_limit=None)) as worker:
        assert worker.call(f"{T}:where").value["address_space"][0] == -1


def test_core_dumps_are_off(worker: Worker) -> None:
    assert worker.call(f"{T}:where").value["core"] == (0, 0)


def test_setup_state_is_passed_and_recreated_after_a_restart() -> None:
    setup = config(setup=f"{T}:make_state", setup_args=("tool-a",))
    with Worker(setup) as worker:
        state = worker.call(f"{T}:get_state").value
        assert state == {"label": "tool-a", "pid": worker.pid}
        crash_of(worker.call(f"{T}:hard_exit", 1))
        again = worker.call(f"{T}:get_state").value
        assert again == {"label": "tool-a", "pid": worker.pid}
        assert again["pid"] != state["pid"]
        worker.restart()
        assert worker.pid is None
        assert worker.call(f"{T}:get_state").value["pid"] not in (None, again["pid"])


def test_a_failing_setup_is_reported_on_each_call() -> None:
    with Worker(config(setup=f"{T}:failing_setup", setup_args=("no tool here",))) as worker:
        for _ in range(2):
            error = error_of(worker.call(f"{T}:echo"))
            assert (error.type_name, error.message) == ("RuntimeError", "no tool here")
            assert "failing_setup" in error.traceback
            assert worker.pid is None


def test_a_hanging_setup_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("axm_conformance._process.parent._worker._MIN_SETUP_TIMEOUT", 0.5)
    with Worker(config(timeout=0.5, setup=f"{T}:sleep", setup_args=(None, 60))) as worker:
        crash = crash_of(worker.call(f"{T}:echo"))
        assert crash.kind == "timeout"
        assert crash.detail.startswith("the worker did not finish starting within 0.5 s")


def test_a_setup_timeout_overrides_the_default() -> None:
    hanging = config(timeout=5.0, setup=f"{T}:sleep", setup_args=(None, 60), setup_timeout=0.5)
    with Worker(hanging) as worker:
        crash = crash_of(worker.call(f"{T}:echo"))
        assert crash.detail.startswith("the worker did not finish starting within 0.5 s")


def test_start_returns_before_the_setup_ends_and_the_first_call_waits_for_it(
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    with Worker(config(setup=f"{T}:wait_for", setup_args=(str(go),))) as worker:
        # The setup waits for a file that only this test writes, after start(): a start() that
        # waited for the setup would never return.
        assert worker.start() is worker
        started_pid = worker.pid
        assert started_pid is not None
        go.touch()
        assert worker.call(f"{T}:pid").value == started_pid
        assert worker.start().pid == started_pid  # a running worker is not started again


def test_a_setup_that_fails_after_start_is_reported_by_the_first_call() -> None:
    setup = config(setup=f"{T}:failing_setup", setup_args=("no tool here",))
    with Worker(setup).start() as worker:
        assert error_of(worker.call(f"{T}:echo")).message == "no tool here"


def test_an_unpicklable_return_value_is_an_error(worker: Worker) -> None:
    error = error_of(worker.call(f"{T}:unpicklable"))
    assert error.type_name == "TypeError"
    assert error.message.startswith(f"the return value of {T}:unpicklable cannot be pickled: ")
    assert "lock" in error.message
    assert worker.call(f"{T}:echo", 1).value == (1,)


def test_a_value_the_parent_cannot_unpickle_is_an_error() -> None:
    with Worker(config(trusted_modules=("module_only_in_worker",))) as worker:
        error = error_of(worker.call(f"{T}:only_in_worker"))
        assert error.type_name == "ModuleNotFoundError"
        assert "could not be unpickled by the parent" in error.message
        assert worker.call(f"{T}:echo", 1).value == (1,)


def test_the_parent_unpickles_only_classes_of_trusted_modules(
    worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(HERE)
    error = error_of(worker.call(f"{T}:thing", "a"))
    assert error.type_name == "_pickle.UnpicklingError"
    assert f"refused to load {T}.Thing" in error.message
    assert "could not be unpickled by the parent" in error.message
    with Worker(config(trusted_modules=(T,))) as trusting:
        assert type(trusting.call(f"{T}:thing", "a").value).__name__ == "Thing"


def test_subclasses_of_plain_types_arrive_as_plain_types_and_run_nothing(
    worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AXM_WORKER_TEST_PICKLE_RAN", raising=False)
    value = worker.call(f"{T}:plain_subclasses").value
    assert value == {
        "text": "text",
        "count": 3,
        "pair": ("a", 1),
        "table": {"key": "value"},
        "list": ["item"],
        "flag": True,
    }
    assert [type(item) for item in value.values()] == [str, int, tuple, dict, list, bool]
    assert type(value["pair"][0]) is str and type(value["table"]["key"]) is str
    assert "AXM_WORKER_TEST_PICKLE_RAN" not in os.environ


def test_the_workdir_is_cwd_and_home_and_is_removed_on_close() -> None:
    with Worker(config(env={"AXM_EXTRA": "yes"})) as worker:
        seen = worker.call(f"{T}:where").value
        workdir = worker.workdir
        assert seen["cwd"] == seen["home"] == str(workdir)
        assert seen["tmpdir"] == str(workdir / "tmp")
        assert seen["hashseed"] == "0"
        assert seen["environ"]["AXM_EXTRA"] == "yes"
        assert Path(worker.call(f"{T}:touch", "out.txt").value) == workdir / "out.txt"
    assert not workdir.exists()


def test_the_parent_environment_is_not_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AXM_SECRET_TOKEN", "do not leak")
    with Worker(config()) as worker:
        assert "AXM_SECRET_TOKEN" not in worker.call(f"{T}:where").value["environ"]


def test_a_deleted_workdir_is_recreated_at_restart() -> None:
    with Worker(config()) as worker:
        crash_of(worker.call(f"{T}:remove_workdir_and_exit"))
        assert worker.call(f"{T}:where").value["cwd"] == str(worker.workdir)
        assert (worker.workdir / "tmp").is_dir()


def test_a_given_workdir_is_kept(tmp_path: Path) -> None:
    with Worker(config(workdir=tmp_path / "work")) as worker:
        assert worker.call(f"{T}:where").value["cwd"] == str(tmp_path / "work")
        worker.call(f"{T}:touch", "kept.txt")
        worker.restart()
        assert worker.call(f"{T}:echo").ok
        assert (tmp_path / "work" / "kept.txt").exists()
    assert (tmp_path / "work" / "kept.txt").exists()


def test_a_restart_empties_the_workdir_the_worker_made() -> None:
    """A fresh worker meets the world a new run would: what earlier calls wrote is gone."""
    with Worker(config()) as worker:
        assert worker.call(f"{T}:touch", "written.txt").ok
        assert (worker.workdir / "written.txt").exists()
        worker.restart()
        assert worker.call(f"{T}:echo").ok
        assert not (worker.workdir / "written.txt").exists()
        assert (worker.workdir / "tmp").is_dir()


def test_close_is_idempotent_and_leaks_nothing() -> None:
    before = open_fds()
    worker = Worker(config())
    worker.call(f"{T}:echo")
    pid = worker.pid
    assert pid is not None
    crash_of(worker.call(f"{T}:hard_exit", 1))
    worker.call(f"{T}:echo")
    worker.close()
    worker.close()
    assert open_fds() == before
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    with pytest.raises(RuntimeError, match="closed"):
        worker.call(f"{T}:echo")


def test_misuse_raises(worker: Worker) -> None:
    with pytest.raises(ValueError, match="module:qualname"):
        worker.call("no_colon")
    with pytest.raises(ValueError, match="timeout"):
        worker.call(f"{T}:echo", timeout=0)
    with pytest.raises(TypeError, match="cannot be pickled"):
        worker.call(f"{T}:echo", lambda: None)
    with pytest.raises(ValueError, match="setup"):
        Worker(config(setup="nothing"))


def orphaning(tmp_path: Path, server: ForkServer | None) -> str:
    """The start of a script whose worker is orphaned when the test kills the script."""
    # The killed parent cannot clean up, so its workdir is one pytest removes.
    return textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from axm_conformance._process.parent._worker import Worker, WorkerConfig, fork_server
        worker = Worker(
            WorkerConfig(
                sys_path=({HERE!r},),
                workdir=Path({str(tmp_path)!r}),
                fork_server=fork_server() if {server is not None} else None,
            )
        )
        """
    )


def test_an_orphaned_worker_kills_itself(tmp_path: Path, server: ForkServer | None) -> None:
    parent = orphaning(tmp_path, server) + textwrap.dedent(
        f"""
        print(worker.call("{T}:pid").value, flush=True)
        worker.call("{T}:spin", timeout=60)
        """
    )
    with subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        pid = int(process.stdout.readline())
        process.kill()
    assert wait_dead(pid, 5.0)


def test_an_orphaned_worker_kills_the_processes_that_left_its_group(
    tmp_path: Path, server: ForkServer | None
) -> None:
    parent = orphaning(tmp_path, server) + textwrap.dedent(
        f"""
        print(json.dumps(worker.call("{T}:spawn_escapees").value), flush=True)
        worker.call("{T}:spin", timeout=60)
        """
    )
    with subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        escapees = json.loads(process.stdout.readline())
        process.kill()
    assert all(wait_dead(pid, 5.0) for pid in escapees.values())


def test_a_worker_holds_only_its_channel_its_logs_and_dev_null(worker: Worker) -> None:
    seen = worker.call(f"{T}:where").value
    assert seen["session"] == worker.pid
    # Two pipes (the channel); else only its log files and /dev/null: not a fork server's
    # control channel, pidfds or status pipes, nor anything of the kit's.
    held = seen["descriptors"]
    assert sum(target.startswith("pipe:") for target in held) == 2, held
    others = [target for target in held if not target.startswith("pipe:")]
    assert all(t == os.devnull or t.startswith(f"{worker.workdir}/") for t in others), held


def test_a_worker_collects_garbage(worker: Worker) -> None:
    # A fork server freezes what it imported and does not collect; its forks must.
    assert worker.call(f"{T}:where").value["collects_garbage"] is True


def test_a_forked_worker_is_the_servers_child_a_spawned_one_the_kits(
    server: ForkServer | None,
) -> None:
    with Worker(config()) as worker:
        parent = worker.call(f"{T}:where").value["parent"]
    assert parent == (os.getpid() if server is None else server.pid)


def test_a_worker_is_spawned_when_the_server_is_gone_or_would_change_the_interpreter() -> None:
    server = fork_server().start()
    try:
        # PYTHON* variables act when an interpreter starts: only a spawned one sees them.
        with Worker(config(fork_server=server, env={"PYTHONOPTIMIZE": "1"})) as worker:
            assert worker.call(f"{T}:where").value["parent"] == os.getpid()
        with Worker(config(fork_server=server)) as worker:
            assert worker.call(f"{T}:where").value["parent"] == server.pid
            assert server.pid is not None
            os.kill(server.pid, signal.SIGKILL)
            # The server's workers follow it; the next start is a spawn.
            assert crash_of(worker.call(f"{T}:spin", timeout=5)).kind in ("signalled", "exited")
            assert worker.call(f"{T}:where").value["parent"] == os.getpid()
    finally:
        server.close()


def test_one_process_serves_every_call(worker: Worker) -> None:
    # What keeps a call cheap: it goes to the running worker. How cheap is a benchmark figure.
    pids = {worker.call(f"{T}:pid").value for _ in range(200)}
    assert pids == {worker.pid}


def test_an_unknown_user_is_refused() -> None:
    with pytest.raises(ValueError, match="no-such-user-here"):
        Worker(config(user="no-such-user-here"))


def test_another_user_needs_root(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user named nobody")
    monkeypatch.setattr(os, "geteuid", lambda: 12345)
    with pytest.raises(ValueError, match="needs root"):
        Worker(config(user="nobody"))


@pytest.fixture
def nobody_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Environment for a worker run as nobody, with an interpreter that nobody can run (for a
    forked worker, its fork server's)."""
    skip_unless_nobody()
    env = {"PYTHONPATH": str(Path(axm_conformance.__file__).parents[1])}
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for interpreter in (sys.executable, f"/usr/bin/python{version}"):
        try:
            check = subprocess.run(
                [interpreter, "-c", "import axm_conformance._process.parent._worker"],
                user="nobody",
                env=env,
                cwd="/",
                capture_output=True,
                timeout=30,
            )
        except OSError:
            continue
        if check.returncode == 0:
            monkeypatch.setattr(sys, "executable", interpreter)
            if DEFAULTS["fork_server"] is None:
                yield env
                return
            # The server's environment is read when its interpreter starts.
            monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
            server = fork_server().start()
            monkeypatch.setitem(DEFAULTS, "fork_server", server)
            yield {}
            server.close()
            return
    pytest.skip("no Python interpreter that nobody can run")


def test_the_worker_runs_as_the_given_user(nobody_env: dict[str, str]) -> None:
    entry = pwd.getpwnam("nobody")
    with Worker(config(user="nobody", env=nobody_env)) as worker:
        seen = worker.call(f"{T}:where").value
        assert seen["parent"] == launcher()
        assert (seen["uid"], seen["gid"]) == (entry.pw_uid, entry.pw_gid)
        assert seen["groups"] in ([], [entry.pw_gid])
        assert worker.workdir.stat().st_uid == entry.pw_uid
        assert worker.call(f"{T}:touch", "mine.txt").ok
        assert crash_of(worker.call(f"{T}:kill_self")).signal_name == "SIGKILL"
        sleeper = worker.call(f"{T}:spawn_sleeper").value
        workdir = worker.workdir
    assert wait_dead(sleeper)
    assert not workdir.exists()


def test_signal_names_cover_real_time_signals(worker: Worker) -> None:
    pid = worker.call(f"{T}:pid").value
    os.kill(pid, signal.SIGRTMIN + 1)
    crash = crash_of(worker.call(f"{T}:echo"))
    assert crash.kind == "signalled"
    assert crash.signal_name is not None


def make_files(root: Path) -> Path:
    """A directory to copy into the workdir: notes/todo.txt."""
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "todo.txt").write_text("buy milk")
    return root


def test_files_are_copied_afresh_before_each_start(tmp_path: Path) -> None:
    with Worker(config(files=str(make_files(tmp_path / "files")))) as worker:
        assert worker.call(f"{T}:touch", "notes/todo.txt").ok
        copy = worker.workdir / "notes" / "todo.txt"
        assert copy.read_text() == "written by the worker"
        worker.restart()
        assert worker.call(f"{T}:echo").ok
        assert copy.read_text() == "buy milk"
    assert (tmp_path / "files" / "notes" / "todo.txt").read_text() == "buy milk"


def test_files_belong_to_the_worker_user(nobody_env: dict[str, str], tmp_path: Path) -> None:
    files = str(make_files(tmp_path / "files"))
    with Worker(config(user="nobody", env=nobody_env, files=files)) as worker:
        assert worker.call(f"{T}:touch", "notes/todo.txt").ok
        copied = (worker.workdir / "notes", worker.workdir / "notes" / "todo.txt")
        assert {path.stat().st_uid for path in copied} == {pwd.getpwnam("nobody").pw_uid}


def test_the_teardown_runs_when_a_worker_whose_setup_ran_closes(tmp_path: Path) -> None:
    options = {"setup": f"{T}:make_state", "setup_args": ("mine",), "teardown": f"{T}:note_closed"}
    with Worker(config(workdir=tmp_path / "used", **options)) as worker:
        assert worker.call(f"{T}:echo").ok
    assert (tmp_path / "used" / "closed").read_text() == "mine"
    with Worker(config(workdir=tmp_path / "unused", **options)):
        pass
    assert not (tmp_path / "unused" / "closed").exists()
