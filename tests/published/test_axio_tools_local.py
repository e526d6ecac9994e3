"""axio-tools-local, certified as a user would: ``pytest --axm-conformance`` on its entry points.

Its tools run shell commands and Python code and write files, and the kit fuzzes them with
arbitrary strings. So they run only as an unprivileged user (``--axm-worker-user``, default
``nobody``), in a throw-away directory, with a memory limit and a time budget per tool; when the
user switch is not possible here the whole module is skipped with the reason. After the run,
nothing may have been written outside the throw-away directory.

Every finding is written up in conformance/published-runtimes.md.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("axio")
pytest.importorskip("axio_tools_local")

from axm_conformance import check_tool
from axm_conformance._checks import checks_for
from tests.published.conftest import (
    PUBLISHED_FIXTURES,
    child_env,
    why_no_user_switch,
    worker_user,
)

SEED = 20261122
EXAMPLES = 50
TIMEOUT = 5
TOOL_BUDGET = 120
MEMORY_LIMIT = 1024**3
# The tools that declare write or execute access: axio does not promise determinism, so the kit
# does not judge theirs (shell stamps elapsed times, run_python names a fresh temporary file,
# patch_file refuses a second patch until read_file reads the file again).
WORLDLY = {
    "write_file": "write",
    "patch_file": "write",
    "shell": "execute",
    "run_python": "execute",
}
TOOLS = sorted(ep.name for ep in metadata.entry_points(group="axio.tools"))
# The file copied into every worker's directory (--axm-worker-files): the kit also calls the
# tools with its name in each string property.
WORKER_FILES = {"notes.txt": "".join(f"line {number}\n" for number in range(1, 201))}
# The filesystems a process can create files on, and what is never searched.
SEARCH_ROOTS = ("/", "/dev/shm", "/run", "/var/tmp", "/tmp")
PRUNED = ("/proc", "/sys")


@dataclass
class Run:
    """One pytest --axm-conformance run, as the tests judge it."""

    returncode: int
    stdout: str
    stderr: str
    cases: list[ElementTree.Element]
    certificate: dict[str, Any]
    throwaway: Path
    written_outside: list[str]
    seconds: float

    def tool(self, name: str) -> dict[str, Any]:
        return next(tool for tool in self.certificate["tools"] if tool["name"] == name)

    def failed(self, name: str) -> dict[str, str]:
        return {
            check["id"]: " / ".join(found["text"] for found in check["findings"])
            for check in self.tool(name)["checks"]
            if check["outcome"] == "failed"
        }


def _find(roots: tuple[str, ...], predicate: list[str], skip: Path) -> set[str]:
    """Paths under ``roots`` (one filesystem each) that match the ``find`` predicate."""
    prune: list[str] = []
    for path in (*PRUNED, str(skip)):
        prune += [*(["-o"] if prune else []), "-path", path]
    existing = sorted({os.path.realpath(root) for root in roots if os.path.isdir(root)})
    command = ["find", *existing, "-xdev", "(", *prune, ")", "-prune", "-o"]
    completed = subprocess.run(
        [*command, "(", *predicate, ")", "-print"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return set(completed.stdout.splitlines())


def written_by(user: str, since: Path, skip: Path, before: set[str]) -> list[str]:
    """What ``user`` created or changed outside ``skip`` since the marker file ``since``.

    Files it owns that were not there before, anything it owns changed since, and regular files
    it may write (world-writable, or group-writable for its group) changed since.
    """
    entry = pwd.getpwnam(user)
    uid, gid = str(entry.pw_uid), str(entry.pw_gid)
    owned = _find(SEARCH_ROOTS, ["-uid", uid], skip)
    changed = _find(
        SEARCH_ROOTS,
        [
            "(", "-uid", uid, "-o", "-type", "f", "-perm", "-0002",
            "-o", "-type", "f", "-gid", gid, "-perm", "-0020", ")",
            "-newer", str(since),
        ],
        skip,
    )  # fmt: skip
    return sorted((owned - before) | changed)


def owned_by(user: str, skip: Path) -> set[str]:
    return _find(SEARCH_ROOTS, ["-uid", str(pwd.getpwnam(user).pw_uid)], skip)


def _ini(user: str, files: Path) -> str:
    """The pytest.ini of the throw-away project the run happens in."""
    lines = [
        "[pytest]",
        "asyncio_default_fixture_loop_scope = function",
        "axm_conformance = true",
        "axm_tools = entry-point:axio.tools",
        f"axm_worker_user = {user}",
        f"axm_worker_files = {files}",
        f"axm_seed = {SEED}",
        f"axm_examples = {EXAMPLES}",
        f"axm_timeout = {TIMEOUT}",
        f"axm_tool_budget = {TOOL_BUDGET}",
        f"axm_memory_limit = {MEMORY_LIMIT}",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def run() -> Iterator[Run]:
    user = worker_user()
    reason = why_no_user_switch(user)
    if reason:
        pytest.skip(f"axio-tools-local is fuzzed only as an unprivileged user: {reason}")
    # Under /tmp, not pytest's tmp_path (mode 700 under /tmp/pytest-of-root): the worker, as
    # the unprivileged user, must be able to enter its own directory inside this one.
    throwaway = Path(tempfile.mkdtemp(prefix="axm-published-"))
    try:
        throwaway.chmod(0o755)
        project, workers = throwaway / "project", throwaway / "workers"
        project.mkdir()
        workers.mkdir(mode=0o755)
        workers.chmod(0o755)
        files = throwaway / "files"
        files.mkdir()
        for name, text in WORKER_FILES.items():
            (files / name).write_text(text)
        (project / "pytest.ini").write_text(_ini(user, files))
        before = owned_by(user, throwaway)
        marker = throwaway / "started"
        marker.touch()
        time.sleep(1.1)  # -newer compares whole seconds on some filesystems
        env = child_env(TMPDIR=str(workers))
        started = time.monotonic()
        completed = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfEs",
                f"--junitxml={throwaway / 'junit.xml'}",
                f"--axm-report={throwaway / 'certificate.json'}",
            ],
            cwd=project, env=env, capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        seconds = time.monotonic() - started
        outside = written_by(user, marker, throwaway, before)
        junit = throwaway / "junit.xml"
        report = throwaway / "certificate.json"
        yield Run(
            returncode=completed.returncode,
            stdout=completed.stdout,
            stderr=completed.stderr,
            cases=list(ElementTree.parse(junit).iter("testcase")) if junit.exists() else [],
            certificate=json.loads(report.read_text()) if report.exists() else {"tools": []},
            throwaway=throwaway,
            written_outside=outside,
            seconds=seconds,
        )
    finally:
        shutil.rmtree(throwaway, ignore_errors=True)


def _output(run: Run) -> str:
    return f"exit status {run.returncode}\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"


@pytest.mark.slow
def test_every_tool_runs_to_a_verdict_with_no_kit_error(run: Run) -> None:
    """No INTERNALERROR, no usage error; every item passed, failed, or skipped with a reason."""
    assert run.returncode in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), _output(run)
    assert "INTERNALERROR" not in run.stdout + run.stderr, _output(run)
    assert "ERROR:" not in run.stderr, _output(run)
    assert len(run.cases) == len(TOOLS) * len(checks_for("tool")), _output(run)
    problems = []
    for case in run.cases:
        item = f"{case.get('classname')}::{case.get('name')}"
        if case.find("error") is not None:
            problems.append(f"{item}: error {case.find('error').get('message')!r}")  # type: ignore[union-attr]
        skipped = case.find("skipped")
        if skipped is not None and not (skipped.get("message") or "").strip():
            problems.append(f"{item}: skipped without a reason")
    assert not problems, "\n".join(problems)
    names = sorted(tool["name"] for tool in run.certificate["tools"])
    assert names == TOOLS
    for tool in run.certificate["tools"]:
        outcomes = {check["outcome"] for check in tool["checks"]}
        assert outcomes <= {"passed", "failed", "skipped", "warning", "not-run", "inconclusive"}, (
            tool["name"]
        )


@pytest.mark.slow
def test_the_tools_ran_as_the_unprivileged_user(run: Run) -> None:
    assert run.certificate["settings"].get("worker_user") == worker_user()


@pytest.mark.slow
def test_nothing_was_written_outside_the_throwaway_directory(run: Run) -> None:
    assert run.written_outside == [], (
        f"the tools, running as {worker_user()!r}, wrote outside {run.throwaway}:\n"
        + "\n".join(run.written_outside)
    )


@pytest.mark.slow
def test_the_outside_write_detector_sees_a_write() -> None:
    """The check above is not vacuous: a file the user leaves in /var/tmp is found."""
    user = worker_user()
    if why_no_user_switch(user):
        pytest.skip(why_no_user_switch(user))
    with tempfile.TemporaryDirectory(prefix="axm-detector-") as scratch:
        skip = Path(scratch)
        before = owned_by(user, skip)
        marker = skip / "started"
        marker.touch()
        time.sleep(1.1)
        canary = Path("/var/tmp") / f"axm-canary-{os.getpid()}"
        entry = pwd.getpwnam(user)
        try:
            subprocess.run(
                ["touch", str(canary)],
                user=entry.pw_uid,
                group=entry.pw_gid,
                extra_groups=[],
                cwd="/",
                check=True,
            )
            assert str(canary) in written_by(user, marker, skip, before)
        finally:
            canary.unlink(missing_ok=True)


# tool -> the checks it fails: real defects of the published tool (see the page).
REAL_DEFECTS: dict[str, set[str]] = {
    "list_files": set(),
    "search_files": set(),
    "shell": set(),
    "run_python": set(),
    "write_file": set(),
    "read_file": set(),
    "patch_file": set(),
}
# tool -> its verdict and the checks that warn or are inconclusive (see the page). patch_file
# returns only for an input that names the worker file with from_line and to_line inside it;
# no input of this run does, so it serves none of its valid calls: every check of them is
# inconclusive. search_files answers a missing path or a bad regex with an "error: ..." text.
_SERVED_NONE = {
    "call-completes",
    "no-unexpected-exception",
    "result-type",
    "result-json",
    "result-size",
    "success-not-an-error",
    "input-not-mutated",
    "leaves-no-trace",
    "state-stays-usable",
    "no-process-left",
    "writes-confined",
}
VERDICTS: dict[str, tuple[str, set[str], set[str]]] = {
    "list_files": ("certified", set(), set()),
    "search_files": ("certified", {"success-not-an-error"}, set()),
    "shell": ("certified", {"success-not-an-error"}, set()),
    "run_python": ("certified", set(), set()),
    "write_file": ("certified", set(), set()),
    "read_file": ("certified", set(), set()),
    "patch_file": ("inconclusive", set(), _SERVED_NONE),
}


@pytest.mark.slow
@pytest.mark.parametrize("tool", sorted(REAL_DEFECTS))
def test_verdict(run: Run, tool: str) -> None:
    """Each tool fails exactly the checks its real defects explain, and gets the listed verdict."""
    assert tool in TOOLS, f"axio-tools-local no longer publishes {tool!r}"
    failed = run.failed(tool)
    assert set(failed) == REAL_DEFECTS[tool], "\n".join(
        f"{check}: {message}" for check, message in failed.items()
    )
    verdict, warned, inconclusive = VERDICTS[tool]
    checks = run.tool(tool)["checks"]
    found = {
        status: {check["id"] for check in checks if check["outcome"] == status}
        for status in ("warning", "inconclusive")
    }
    assert (run.tool(tool)["verdict"], found["warning"], found["inconclusive"]) == (
        verdict,
        warned,
        inconclusive,
    ), [check for check in checks if check["outcome"] in ("warning", "inconclusive")]


@pytest.mark.slow
@pytest.mark.parametrize(("tool", "access"), sorted(WORLDLY.items()))
def test_determinism_is_not_judged_for_tools_that_write_or_execute(
    run: Run, tool: str, access: str
) -> None:
    """Not even write_file's: with mode=0 the second of two identical calls is refused with
    PermissionError, the file system's answer to a changed world."""
    check = next(check for check in run.tool(tool)["checks"] if check["id"] == "deterministic")
    assert check["outcome"] == "skipped", check
    assert check["reason"].startswith(f"the tool declares {access} access"), check


@pytest.mark.slow
def test_the_declared_effects_are_read() -> None:
    """What refuses the file writers and command runners as root without a worker user."""
    report = check_tool("entry-point:axio.tools", checks=("name-valid",))
    assert {tool.subject.name: tool.subject.effects for tool in report.tools} == {
        "list_files": ("read",),
        "search_files": ("read",),
        "read_file": ("read",),
        "write_file": ("write",),
        "patch_file": ("write",),
        "shell": ("execute",),
        "run_python": ("execute",),
    }


def test_every_published_tool_has_a_verdict_here() -> None:
    assert set(TOOLS) == set(REAL_DEFECTS) == set(VERDICTS), (
        "update REAL_DEFECTS, VERDICTS and the page for the new tools"
    )


@pytest.mark.slow
def test_the_reproduction_command_keeps_the_user_switch(run: Run) -> None:
    """A finding made as the unprivileged user is reproduced as that user, with the same files.

    No tool of axio-tools-local fails or warns, so the finding comes from a published fixture
    with a real defect (pub_axio:word_count: null reaches its handler), certified with the same
    pytest.ini, user switch and worker files as the run.
    """
    workers = run.throwaway / "workers"
    env = child_env(TMPDIR=str(workers), PYTHONPATH=str(PUBLISHED_FIXTURES))
    completed = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
            "--axm-tool=pub_axio:word_count", "--axm-check=invalid-input-handled",
        ],
        cwd=run.throwaway / "project", env=env, capture_output=True, text=True, timeout=600,
        check=False,
    )  # fmt: skip
    output = f"exit status {completed.returncode}\n{completed.stdout[-6000:]}"
    assert completed.returncode == pytest.ExitCode.TESTS_FAILED, output
    commands = [
        line.strip()
        for line in completed.stdout.splitlines()
        if line.strip().startswith("pytest --axm-conformance")
    ]
    assert commands, output
    for command in commands:
        assert f"--axm-worker-user={worker_user()}" in command, command
        assert f"--axm-worker-files={run.throwaway / 'files'}" in command, command
