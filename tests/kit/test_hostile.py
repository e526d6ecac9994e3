"""Hostile tools: each gets a verdict that names what happened and the input, and a run over all
of them finishes, kills every process they start and leaves the other tools alone.

The tools are in ``fixtures/zoo_hostile.py``; the manifest marks them ``hostile = true`` and lists
the checks each fails (``test_fixture_zoo`` holds the kit to that set) and, under ``effects``,
what the worker reports a call left behind (``side_effects`` of the observation), which
``leaves-no-trace`` judges.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from axm_conformance import check_tool
from axm_conformance._checks import CHECKS
from axm_conformance._observation import Observation
from axm_conformance._process.parent._worker import Worker, WorkerConfig
from tests.conftest import FIXTURES, WAYS, unsupported

INVOKE = "axm_conformance._process.child._agent:invoke"

MANIFEST: list[dict[str, Any]] = tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
HOSTILE = {entry["ref"]: entry for entry in MANIFEST if entry.get("hostile")}
WITH_EFFECTS = [entry for entry in HOSTILE.values() if "effects" in entry]

TIMEOUT = "the call did not return within 1 s (--axm-timeout); the process running it was killed"
# Each hostile tool: its item key, and what its failure reports must say (the manifest says
# which checks fail). A tool the kit certifies has no report; what it left behind is a warning.
REPORTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "zoo_hostile:SpinTool": ("spin", (TIMEOUT, "where it was when it was stopped", "in execute")),
    "zoo_hostile:SleepyTool": ("sleepy", (TIMEOUT, "in execute")),
    "zoo_hostile:QuitterTool": ("quitter", ("raised SystemExit: 3, a BaseException",)),
    "zoo_hostile:HardExitTool": (
        "hard_exit",
        ("the process running the tool exited with status 7",),
    ),
    "zoo_hostile:FloodTool": ("flood", ("over the 1,048,576-byte limit",)),
    "zoo_hostile:SegfaultTool": (
        "segfault",
        ("killed by SIGSEGV", "Fatal Python error: Segmentation fault", "in execute"),
    ),
    "zoo_hostile:SelfKillTool": (
        "self_kill",
        ("the process running the tool was killed by SIGKILL",),
    ),
    "zoo_hostile:StubbornTool": ("stubborn", (TIMEOUT, "in execute")),
    "zoo_hostile:MemoryBombTool": (
        "memory_bomb",
        ("raised MemoryError, a crash in bytes", "bytes(1 << 30)"),
    ),
    "zoo_hostile:RecursionBombTool": (
        "recursion_bomb",
        ("raised RecursionError: maximum recursion depth exceeded", "in down"),
    ),
    "zoo_hostile:DeepRecursionTool": ("deep_recursion", ("killed by SIGSEGV", "in down")),
    "zoo_hostile:ForkBombTool": ("fork_bomb", (TIMEOUT, "in execute")),
    "zoo_hostile:OrphanTool": ("orphans", ("left 3 processes running",)),
    "zoo_hostile:LoudTool": ("loud", ()),
    "zoo_hostile:MuteTool": ("mute", ("then raised OSError: [Errno 9] Bad file descriptor",)),
    "zoo_hostile:BrokenStdoutTool": (
        "broken_stdout",
        ("then raised RuntimeError: this stream accepts no output",),
    ),
    "zoo_hostile:DescriptorCloserTool": (
        "descriptor_closer",
        ("exited with status 70", "the channel to the kit is gone"),
    ),
    "zoo_hostile:WandererTool": ("wanderer", ("the same input gave different outcomes", "'cwd'")),
    "zoo_hostile:EnvironmentMutatorTool": (
        "environment_mutator",
        ("the same input gave different outcomes", "'calls'"),
    ),
    "zoo_hostile:ModuleSwapTool": ("module_swap", ("then returned", "'text': '{}'")),
    "zoo_hostile:ModuleWipeTool": ("module_wipe", ()),
    "zoo_hostile:GlobalStateTool": ("global_state", ("the same input gave different outcomes",)),
    "zoo_hostile:ThreadLeakTool": ("thread_leak", ("the same input gave different outcomes",)),
    "zoo_hostile:LoopCloserTool": ("loop_closer", ()),
    "zoo_hostile:LoopRunnerTool": ("loop_runner", ("This event loop is already running",)),
    "zoo_hostile:OutsideWriterTool": (
        "outside_writer",
        ("tried to write", "axm-hostile-outside-writer.txt", "where no input asked it to"),
    ),
    "zoo_sandbox:EndEveryProcessTool": ("end_every_process", ("killed by SIGKILL",)),
    "zoo_hostile:BoobyTrappedResultTool": (
        "booby_trapped_result",
        ("reading .success raised RuntimeError: __getattr__('success') is booby-trapped",),
    ),
    "zoo_hostile:SinkholeResultTool": ("sinkhole_result", (TIMEOUT, "in __getattr__")),
    "zoo_hostile:TripwireResultTool": (
        "tripwire_result",
        (
            "raised KeyboardInterrupt: reading 'success' (raised while reading the _Tripwire the "
            "call returned), a BaseException",
        ),
    ),
    "zoo_hostile:PicklePayloadTool": (
        "zoo_hostile:PicklePayloadTool",
        ("the name is _Payload, not a str", "text is _Payload, expected a str or None"),
    ),
}
# The whole run (31 tools, two pytest-xdist workers) takes 45 to 130 s on two cores, by the
# machine: five tools hang on every call, each costing about six 1 s timeouts, and each failure
# is called again in a fresh worker; a hang anywhere (a tool's budget is 600 s) would blow this.
RUN_BOUND = 300.0


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A path on PYTHONPATH that only this test's processes carry in their environment."""
    path = str(tmp_path / f"axm-hostile-{uuid.uuid4().hex}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(FIXTURES), path]))
    return path


def processes_with(text: str) -> list[str]:
    """Live processes whose environment contains ``text``, as "pid command" lines."""
    found = []
    for process in psutil.process_iter(["name", "status", "environ"]):
        environ = process.info["environ"] or {}
        running = process.info["status"] not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
        if running and any(text in f"{name}={value}" for name, value in environ.items()):
            found.append(f"{process.pid} {process.info['name']}")
    return found


def none_left(text: str, seconds: float = 5.0) -> list[str]:
    """Wait until no process carries ``text``; return those still there at the deadline."""
    deadline = time.monotonic() + seconds
    while (left := processes_with(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def sections(output: str) -> Iterator[tuple[str, str, str]]:
    """(reference, check id, text) of every failure report in a pytest run's output."""
    reports = output.split("short test summary info")[0]
    for match in re.finditer(
        r"^_{3,} (\S+)::(\S+) _{3,}$(.*?)(?=^_{3,} |\Z)", reports, re.M | re.S
    ):
        body = match[3]
        ref = re.search(r"^  tool: .* from (\S+)$", body, re.M)
        assert ref is not None, body
        yield ref[1], match[2], body


def test_the_table_covers_every_hostile_fixture() -> None:
    assert set(REPORTS) == set(HOSTILE)
    for ref, (_, says) in REPORTS.items():
        assert bool(says) == bool(HOSTILE[ref]["fails"]), ref


# Each hostile tool is certified alone in the default sandbox by the fixture zoo, and a run of
# several of them so by test_plugin's: a whole run is made here without the sandbox, and the
# portable way (as on macOS) with AXM_TEST_EVERY_RUN=1 (four minutes of whole timeouts; the
# portable way's killing of what a tool leaves is held every time by the test below).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("way", "sandbox"),
    [
        ("native", "off"),
        pytest.param(
            "portable",
            "auto",
            marks=pytest.mark.skipif(
                os.environ.get("AXM_TEST_EVERY_RUN") != "1",
                reason="a whole hostile run the portable way: AXM_TEST_EVERY_RUN=1 makes it",
            ),
        ),
    ],
    indirect=["way"],
)
def test_a_run_over_every_hostile_tool_finishes_names_each_failure_and_kills_every_process(
    pytester: pytest.Pytester, marker: str, way: str, sandbox: str
) -> None:
    """Without the sandbox, and with it the portable way (the tools' verdicts are the same
    either way)."""
    # A tool whose verdict rests on what this platform lacks is left out (see unsupported).
    run = {ref: said for ref, said in REPORTS.items() if not unsupported(HOSTILE[ref])}
    tools = [f"--axm-tool={ref}" for ref in run]
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--axm-conformance",
        *tools,
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-timeout=1",
        "--axm-examples=5",
        "-n",
        "2",
        # One xdist worker per tool, so that each tool is certified once (and its hangs paid
        # once): item ids are TOOL::CHECK, and loadscope groups them by TOOL.
        "--dist=loadscope",
        "--axm-report=certificate.json",
        f"--axm-sandbox={sandbox}",
        timeout=RUN_BOUND,
    )
    elapsed = time.monotonic() - started
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output[-3000:]
    assert elapsed < RUN_BOUND
    assert ("axm-conformance platform: " in output) is (way == "portable")
    # Every process any of the tools started is gone: group, session, daemons, fork bomb.
    assert none_left(marker) == []

    found: dict[str, dict[str, str]] = {}
    for ref, check_id, body in sections(output):
        found.setdefault(ref, {})[check_id] = body
    problems = []
    for ref, (key, says) in run.items():
        failed = found.get(ref, {})
        if set(failed) != set(HOSTILE[ref]["fails"]):
            problems.append(f"{ref}: failed {sorted(failed)}, not {HOSTILE[ref]['fails']}")
        text = "\n".join(failed.values())
        problems.extend(f"{ref}: no report says {what!r}" for what in says if what not in text)
        # Each report names the input it failed on.
        problems.extend(
            f"{ref}::{check_id}: no input"
            for check_id, body in failed.items()
            if CHECKS[check_id].per_call and "  input:  " not in body
        )
        verdict = "NOT certified" if failed else "certified"
        if not re.search(rf"^{re.escape(key)} \(axm\): {verdict} \(", output, re.M):
            problems.append(f"{ref}: no line '{key} (axm): {verdict}'")
    assert not problems, "\n".join(problems)
    # The correct tool in the same run is unaffected.
    result.stdout.fnmatch_lines_random(["make_slug (axm): certified (* passed, * skipped*)"])
    assert "make_slug::" not in output.split("short test summary info")[1]
    failed_count = sum(len(HOSTILE[ref]["fails"]) for ref in run)
    assert result.parseoutcomes()["failed"] == failed_count
    # The certificate is written, and holds every tool of the run.
    certificate = json.loads((pytester.path / "certificate.json").read_text())
    assert len(certificate["tools"]) == len(run) + 1
    assert certificate["summary"]["certified"] == 1 + sum(not HOSTILE[ref]["fails"] for ref in run)


@pytest.mark.slow
@pytest.mark.parametrize("way", WAYS, indirect=True)
@pytest.mark.parametrize("entry", WITH_EFFECTS, ids=[entry["ref"] for entry in WITH_EFFECTS])
def test_what_a_hostile_call_leaves_behind_is_reported(
    entry: dict[str, Any], marker: str, way: str
) -> None:
    observation = invoke_once(entry["ref"])
    effects = "\n".join(map(str, observation.side_effects))
    missing = [fragment for fragment in entry["effects"] if fragment not in effects]
    assert not missing, f"side effects: {effects!r}"
    assert none_left(marker) == []


@pytest.mark.slow
def test_a_correct_tool_leaves_nothing_behind() -> None:
    effects = invoke_once("zoo_axm:SlugTool", {"text": "Hello, World"}).side_effects
    # Other processes may edit the project meanwhile (the hostile tools' tests, run beside this
    # one, write in it): only the tool's own effects count.
    assert [effect for effect in effects if effect.kind != "project"] == []


def invoke_once(ref: str, input: Any = None) -> Observation:
    """One call of the tool through the worker, as the engine makes it."""
    config = WorkerConfig(
        timeout=5.0,
        sys_path=(str(FIXTURES),),
        setup="axm_conformance._process.child._agent:open_tool",
        setup_args=(ref, "auto", 1 << 20),
    )
    with Worker(config) as worker:
        outcome = worker.call(INVOKE, {} if input is None else input)
    assert isinstance(outcome.value, Observation), outcome
    return outcome.value


@pytest.mark.slow
def test_writes_into_the_project_are_reported_with_their_paths(tmp_path: Path) -> None:
    """A throw-away project whose tool writes, rewrites and deletes files next to its source."""
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "old.txt").write_text("old")
    (project / "leaky.py").write_text(
        textwrap.dedent(
            """
            from pathlib import Path
            from axm_runtime.axm import ToolResult

            HERE = Path(__file__).resolve().parent

            class LeakyTool:
                name = "leaky"

                def execute(self, *, label: str = "") -> ToolResult:
                    (HERE / "data" / "cache.json").write_text("{}")
                    (HERE / "data" / "old.txt").unlink(missing_ok=True)
                    return ToolResult(success=True)
            """
        )
    )
    config = WorkerConfig(
        sys_path=(str(project),),
        setup="axm_conformance._process.child._agent:open_tool",
        setup_args=("leaky:LeakyTool", "axm", 1 << 20),
    )
    with Worker(config) as worker:
        first, second = (worker.call(INVOKE, {}).value for _ in "12")
        workdir = worker.workdir
    data = project / "data"
    assert [(effect.kind, effect.text) for effect in first.side_effects] == [
        (
            "project",
            "wrote outside its working directory, in the project: "
            f"created {data / 'cache.json'}; removed {data / 'old.txt'}",
        ),
        (
            "outside",
            f"tried to write {data / 'cache.json'}, {data / 'old.txt'}, outside its working "
            "and temporary directories (it was let)",
        ),
    ]
    # The second call removes old.txt again, which is gone: it still tried.
    assert [(effect.kind, effect.paths) for effect in second.side_effects] == [
        ("project", ()),
        ("outside", (str(data / "cache.json"), str(data / "old.txt"))),
    ]
    assert not workdir.exists()


@pytest.mark.slow
def test_a_pickled_payload_never_runs_in_the_kit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AXM_HOSTILE_PICKLE_RAN", raising=False)
    report = check_tool("zoo_hostile:PicklePayloadTool", examples=5, seed=1)
    assert sorted(outcome.check_id for outcome in report.tools[0].failed) == [
        "name-valid",
        "result-consistent",
    ]
    assert report.tools[0].subject.name == "pickle_payload"
    assert type(report.tools[0].subject.name) is str
    assert "AXM_HOSTILE_PICKLE_RAN" not in os.environ


@pytest.mark.slow
@pytest.mark.parametrize("way", WAYS, indirect=True)
def test_processes_left_by_a_tool_are_killed_with_its_worker(marker: str, way: str) -> None:
    report = check_tool("zoo_hostile:OrphanTool", examples=5, seed=1, timeout=1.0)
    assert [outcome.check_id for outcome in report.tools[0].failed] == ["no-process-left"]
    assert none_left(marker) == []


@pytest.mark.slow
def test_shrinking_a_hang_calls_no_input_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call that hangs costs a whole timeout: an input already seen to hang is not retried
    (Hypothesis draws small values again and replays the minimal one at the end), but for the
    one reported, made again once in a fresh worker: a hang that does not recur is not blamed."""
    from axm_conformance._engine import _session as _engine

    calls: list[tuple[str, str]] = []
    call = _engine.Session.call

    def counted(self: Any, value: Any, label: str, **options: Any) -> Any:
        made = call(self, value, label, **options)
        calls.append((repr(value), made.observation.crash_kind or ""))
        return made

    monkeypatch.setattr(_engine.Session, "call", counted)
    report = check_tool("zoo_axm:CollatzStepsTool", timeout=0.5, examples=10, seed=3)
    (tool,) = report.tools
    assert tool.outcome("call-completes").status == "failed"
    hung = [value for value, crash in calls if crash == "timeout"]
    assert hung, calls
    reported = repr(tool.outcome("call-completes").input)
    assert [value for value in set(hung) if hung.count(value) > 1] == [reported], hung
    assert hung.count(reported) == 2, hung
