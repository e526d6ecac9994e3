"""The two process tables, /proc and psutil, tell the same of the same processes; the sweep and a
call's new processes, read through psutil, find what they find through /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from axm_conformance._process.system import _sweep
from axm_conformance._process.system._proctable import ProcessTable, ProcFS, Psutil

TABLES = {"procfs": ProcFS(), "psutil": Psutil()}


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A child in a session of its own, carrying a marker in its environment."""
    env = {**os.environ, "AXM_TEST_MARKER": "here"}
    process = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    # Just after exec, /proc may show the new program's environment empty for a moment.
    deadline = time.monotonic() + 5
    while b"AXM_TEST_MARKER=here" not in (ProcFS().environ(process.pid) or []):
        assert time.monotonic() < deadline, "the child never showed its environment"
        time.sleep(0.01)
    yield process
    process.kill()
    process.wait()


def test_both_tables_tell_the_same_of_a_process(sleeper: subprocess.Popen[bytes]) -> None:
    told = {}
    for name, table in TABLES.items():
        facts = table.facts(sleeper.pid)
        assert facts is not None, name
        assert sleeper.pid in table.pids()
        assert table.live()[sleeper.pid][:3] == facts[:3], name
        assert b"AXM_TEST_MARKER=here" in (table.environ(sleeper.pid) or []), name
        told[name] = (facts[:3], table.command(sleeper.pid), table.name(sleeper.pid))
    assert told["procfs"] == told["psutil"]
    assert told["psutil"] == ((os.getpid(), sleeper.pid, sleeper.pid), "sleep 60", "sleep")


def test_both_tables_tell_the_same_descendants_zombies_left_out(tmp_path: Path) -> None:
    """A process with a shell that runs a grandchild, and a child that exited unreaped."""
    ready = tmp_path / "zombie"
    program = (
        "import subprocess, sys, time\n"
        "subprocess.Popen(['sh', '-c', 'sleep 60; :'])\n"
        "zombie = subprocess.Popen(['true'])\n"
        "time.sleep(0.5)\n"
        "open(sys.argv[1], 'w').write(str(zombie.pid))\n"
        "time.sleep(60)\n"
    )
    tree = subprocess.Popen([sys.executable, "-c", program, str(ready)])
    try:
        deadline = time.monotonic() + 10
        while not ready.exists() or not ready.read_text():
            assert time.monotonic() < deadline, "the tree never started"
            time.sleep(0.01)
        zombie = int(ready.read_text())
        told = {name: table.descendants(tree.pid) for name, table in TABLES.items()}
        assert told["procfs"] == told["psutil"]
        assert sorted(ProcFS().command(pid) or "" for pid in told["procfs"]) == [
            "sh -c sleep 60; :",
            "sleep 60",
        ]
        assert zombie not in told["procfs"] and ProcFS().facts(zombie) is None
    finally:
        ProcFS().kill(sorted(ProcFS().descendants(tree.pid)))
        tree.kill()
        tree.wait()


@pytest.mark.parametrize("name", TABLES)
def test_a_killed_process_is_gone_from_both_tables(
    name: str, sleeper: subprocess.Popen[bytes]
) -> None:
    table: ProcessTable = TABLES[name]
    assert not table.exited(sleeper.pid)
    table.kill([sleeper.pid])
    deadline = time.monotonic() + 5
    while table.facts(sleeper.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    # A zombie until reaped: dead to both tables, and seen to have exited without a wait.
    assert table.facts(sleeper.pid) is None
    assert table.name(sleeper.pid) is None
    assert table.exited(sleeper.pid)
    assert sleeper.poll() == -9


@pytest.mark.parametrize("system", ["linux", "win32"])
@pytest.mark.parametrize("way", ["portable"], indirect=True)
def test_the_sweep_through_psutil_kills_a_worker_and_what_left_its_session(
    way: str, system: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By its token, an orphan in a session of its own: also where there are no sessions nor
    groups to find it by, nor a group to kill (Windows' rules)."""
    monkeypatch.setattr(sys, "platform", system)
    token = uuid.uuid4().hex
    leader = subprocess.Popen(
        ["sh", "-c", "(setsid sleep 301 &); sleep 300"],
        env={**os.environ, _sweep.TOKEN_VARIABLE: token},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 5
        while len(_sweep._members(leader.pid, token)) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        members = _sweep._members(leader.pid, token)
        assert len(members) == 3, members
        assert set(_sweep.kill_strays(leader.pid, token)) == set(members)
        assert _sweep._members(leader.pid, token) == []
    finally:
        leader.kill()
        leader.wait()


@pytest.mark.parametrize("way", ["portable"], indirect=True)
def test_a_calls_new_processes_are_told_without_a_subreaper(way: str) -> None:
    started = _sweep.Started()
    assert not started.subreaper
    # Not this process's: an orphan in a session of its own, started meanwhile.
    shell = ["sh", "-c", "setsid sleep 61 >/dev/null 2>&1 & echo $!"]
    stranger = int(subprocess.run(shell, capture_output=True, check=True).stdout)
    child = subprocess.Popen(["sleep", "60"])
    try:
        deadline = time.monotonic() + 5
        while child.pid not in started.since() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.since() == {child.pid}
    finally:
        os.kill(stranger, signal.SIGKILL)
        child.kill()
        child.wait()
    assert started.since() == set()
