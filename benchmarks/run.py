"""How long certification takes, against what a user would otherwise pay, measured in one run.

Run with the project's interpreter::

    python benchmarks/run.py            # the full run (about 9 minutes on 2 cores)
    python benchmarks/run.py --quick    # a smoke run: one repeat, fewer tools, small sizes

Options: ``--repeats N``;
``--only floor|xdist|startup|scaling|mcp|portable|sandbox|shrink|together|clients|http``
(repeatable);
``--loadscope`` (also time the zoo with ``-n 2 --dist loadscope``); ``--settle SECONDS`` (on a
shared machine, wait up to SECONDS before each timed run for other processes to go quiet);
``--output FILE``.
Every timed run also records its CPU time and how many cores other processes kept busy
meanwhile ("other load"): wall-time figures taken under other load are not worth much, the CPU
figures less affected.

Every figure is a ratio against a baseline measured in the same run, on this machine; each
measurement is repeated (3 times by default, ``--repeats``) and the median kept. Nothing here is
a test: no figure is asserted, it is printed (a table) and written to ``benchmarks/results.json``
(``results-quick.json`` for ``--quick``) with the machine it ran on.

1. **Floor**: for 15 tools, each protocol (AXM, axio function, axio ToolHandler, tool_use,
   Amplifier) times each input-schema shape (small: 3 properties; nested: objects in arrays in
   objects; wide: 30 properties), all in ``fixtures/bench_tools.py``: what a user would write by
   hand. One plain ``@given(st_for(schema))`` test per per-call check group of the kit (no
   crash, result type, result consistency, JSON payload, size, output schema, determinism; the
   ones that apply to the protocol, as the kit skips the others), each calling the tool in
   process with ``max_examples=100``. The strategy is ``axm_conformance._strategies.valid_inputs``,
   the kit's own valid-input strategy: ``hypothesis_jsonschema.from_schema`` cannot draw a
   single object with current Hypothesis (see ``benchmarks/strategies_speed.py``), so a user
   would need something like it. The tests are a module (``FLOOR_MODULE``) that each repeat
   writes and runs with ``pytest -p no:cacheprovider`` in a directory of its own, wall time from
   process start to exit: the floor is timed exactly as the kit is.
2. **Kit**: ``pytest --axm-conformance --axm-tool=<the tool> --axm-examples=100
   -p no:cacheprovider`` in a subprocess, wall time (interpreter, pytest, worker and every check,
   static ones, invalid inputs and probes included), from an empty directory.
3. **Ratio** kit / floor per tool, and their geometric mean. The kit runs more than the floor
   (about 15-19 checks against 5-7, plus the invalid-input mutations and the process
   isolation): the ratio is the price of using the kit instead of writing the loop by hand.
4. **xdist**: the whole fixture zoo (``fixtures/manifest.toml``, ``hostile = true`` entries left
   out) with ``-n 2`` against ``-n 0``, both ``--axm-timeout=2 --axm-examples=30``.
5. **Startup**: the kit on one trivial tool at ``--axm-examples=1`` against an empty pytest run
   (an empty test directory); and plain pytest with the plugin installed but off (no
   ``--axm-conformance``) against ``pytest -p no:axm_conformance``, i.e. the plugin's cost
   when off (also given in milliseconds from ``python -X importtime``).
7. **MCP**: the kit on ``word_count`` of ``fixtures/mcp_servers/word_server.py``, an MCP server
   over stdio (its own session for the server checks, a server per worker, every call a JSON-RPC
   round trip), against its AXM twin ``bench_tools:WordCountTool`` certified in process, both
   at ``--axm-examples=100``: the price of certifying a tool through its server.
6. **Scaling**: the kit on 10, 50 and 200 copies of one small tool (``bench_tools:COPIES_<N>``)
   at ``--axm-examples=10``, and on one copy for the fixed cost of a run; time per tool (wall /
   N, which at small N still carries that fixed cost), time per tool after the fixed cost
   ((wall(N) - wall(1)) / (N - 1)), the marginal time per added tool, and whether each stays
   flat within 20 % (the largest N against the smallest; the last step against the first).
8. **Portable way**: the zoo of figure 4 at ``-n 2`` with ``AXM_CONFORMANCE_PORTABLE=1`` against
   Linux's own paths; and one call's round trip through a worker's channel, the kit waiting on
   the pipes with poll() against a thread per pipe (``measure_channel``).
9. **Sandbox**: the kit with its sandbox (the default where bubblewrap can build one) against
   ``--axm-sandbox=off``, on the tools of figure 2 (the geometric mean of the ratios), on the zoo
   of figure 4 at ``-n 2`` and on the MCP tool of figure 7: what containing every tool costs.

The script is importable (``import run`` from ``benchmarks/``): nothing runs on import.
10. **Shrinking** (``shrinking.py``): the calls shrinking makes on every failing per-call check
    of the zoo of figure 4, shrinking from the failure found (the kit) against a fresh
    Hypothesis search for a failing input (its way before), in this process, at
    ``--axm-examples=30``; with the size of the inputs reported and how many ended another way
    than the failure found. Counted, not timed: repeats do not apply.
11. **Together** (``together.py``): a server's or a package's tools certified whole with the
    sequences that call other tools of their home first (the kit) against each tool alone (its
    way before), in this process, at ``--axm-examples=100``: wall time (the goal: within 1.5x)
    and the calls made through the workers, steps included.
12. **Clients** (``clients.py``): the client checks' own time against every check's and the
    run's wall time, on the zoo of figure 4 in this process (the goal: under 1%).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime
import importlib
import json
import math
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import clients
import shrinking
import together
import transports

# The figures a run can be limited to (--only).
FIGURES = (
    "floor",
    "xdist",
    "startup",
    "scaling",
    "mcp",
    "portable",
    "sandbox",
    "shrink",
    "together",
    "clients",
    "http",
)

__all__ = [
    "BENCH_TOOLS",
    "BenchTool",
    "floor_tests",
    "kit_command",
    "machine_facts",
    "main",
    "zoo_refs",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURES = REPO / "fixtures"
MANIFEST = FIXTURES / "manifest.toml"

KIT_EXAMPLES = 100
ZOO_OPTIONS = ("--axm-timeout=2", "--axm-examples=30")
SCALING_EXAMPLES = 10
FLAT_WITHIN = 0.20
BASE_SEED = 20_240
PACKAGES = (
    "axm-conformance",
    "hypothesis",
    "hypothesis-jsonschema",
    "pytest",
    "pytest-xdist",
    "pydantic",
    "pydantic-core",
    "jsonschema",
)


@dataclass(frozen=True)
class BenchTool:
    """One tool of the floor/kit comparison."""

    protocol: str  # "axm", "axio", "axio-handler", "tool_use", "amplifier"
    shape: str  # "small", "nested", "wide"
    ref: str

    @property
    def label(self) -> str:
        return f"{self.protocol}/{self.shape}"


_REFS = {
    "axm": ("AxmSearchTool", "AxmOrderTool", "AxmPlanTool"),
    "axio": ("axio_search", "axio_order", "axio_plan"),
    "axio-handler": ("handler_search", "handler_order", "handler_plan"),
    "tool_use": ("tool_use_search", "tool_use_order", "tool_use_plan"),
    "amplifier": ("AmplifierSearchTool", "AmplifierOrderTool", "AmplifierPlanTool"),
}
SHAPES = ("small", "nested", "wide")
BENCH_TOOLS: tuple[BenchTool, ...] = tuple(
    BenchTool(protocol, shape, f"bench_tools:{attr}")
    for protocol, attrs in _REFS.items()
    for shape, attr in zip(SHAPES, attrs, strict=True)
)
TRIVIAL_TOOL = "bench_tools:EchoTool"


# ---------------------------------------------------------------------------------------------
# The floor: hand-written Hypothesis tests, calling the tool in process
# ---------------------------------------------------------------------------------------------


@dataclass
class _Harness:
    """How a user calls one tool of a protocol in process, and reads its result."""

    schema: dict[str, Any]
    call: Callable[[Any], Any]  # one call: the value, or the tool's exception
    allowed: Callable[[BaseException], bool]  # exceptions the protocol lets escape
    result_type: type | None  # None: any JSON value is a valid result
    has_success: bool  # the result has success/error fields
    payload: Callable[[Any], Any]  # the result as the JSON the caller serialises
    structured: Callable[[Any], Any]  # what the output schema describes (on success)
    output_schema: dict[str, Any] | None
    close: Callable[[], None] = lambda: None


def _on_path() -> None:
    for entry in (str(FIXTURES), str(REPO / "src")):
        if entry not in sys.path:
            sys.path.insert(0, entry)


def _load(ref: str) -> Any:
    _on_path()
    module, _, attr = ref.partition(":")
    obj = getattr(importlib.import_module(module), attr)
    return obj() if isinstance(obj, type) else obj


def _harness(ref: str, protocol: str) -> _Harness:
    from axm_conformance._observation import PROGRAMMING_ERRORS
    from axm_runtime import amplifier, axio, axm

    obj = _load(ref)

    def no_exception(exc: BaseException) -> bool:
        return False

    if protocol == "axm":
        return _Harness(
            schema=obj.input_schema,
            call=lambda value: obj.execute(**value),
            allowed=no_exception,
            result_type=axm.ToolResult,
            has_success=True,
            payload=dataclasses.asdict,
            structured=lambda result: result.data,
            output_schema=getattr(obj, "output_schema", None),
        )
    if protocol in ("axio", "axio-handler"):
        runner = asyncio.Runner()

        def wrapped(exc: BaseException) -> bool:
            # axio lets ToolError out; its cause must not be a programming error of the tool.
            cause = exc.__cause__
            return isinstance(exc, axio.ToolError) and (
                cause is None or type(cause).__name__ not in PROGRAMMING_ERRORS
            )

        return _Harness(
            schema=obj.input_schema,
            call=lambda value: runner.run(obj(**value)),
            allowed=wrapped,
            result_type=str,
            has_success=False,
            payload=lambda result: result,
            structured=lambda result: result,
            output_schema=None,
            close=runner.close,
        )
    if protocol == "tool_use":
        entry = obj.tool_entry

        def domain(exc: BaseException) -> bool:
            return isinstance(exc, Exception) and type(exc).__name__ not in PROGRAMMING_ERRORS

        return _Harness(
            schema=entry.input_schema,
            call=entry.handler,
            allowed=domain,
            result_type=None,
            has_success=False,
            payload=lambda result: result,
            structured=lambda result: result,
            output_schema=entry.output_schema or None,
        )
    if protocol == "amplifier":
        runner = asyncio.Runner()
        return _Harness(
            schema=obj.input_schema,
            call=lambda value: runner.run(obj.execute(value)),
            allowed=no_exception,
            result_type=amplifier.ToolResult,
            has_success=True,
            payload=lambda result: result.model_dump(),
            structured=lambda result: result.output,
            output_schema=getattr(obj, "output_schema", None),
            close=runner.close,
        )
    raise ValueError(f"unknown protocol {protocol!r}")


def _floor_tests(
    harness: _Harness, seed: int, examples: int, counts: dict[str, int]
) -> list[tuple[str, Callable[[], None]]]:
    """The tests a user would write by hand: one ``@given`` test per check group."""
    import jsonschema
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded

    from axm_conformance._strategies import valid_inputs as st_for

    schema = harness.schema
    plain = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )

    def counted(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    def outcome(value: Any) -> tuple[Any, BaseException | None]:
        try:
            return harness.call(value), None
        except Exception as exc:
            if harness.allowed(exc):
                return None, exc
            raise

    tests: list[tuple[str, Callable[[], None]]] = []

    @seeded(seed)
    @plain
    @given(st_for(schema))
    def test_no_crash(value: Any) -> None:
        counted("no crash")
        outcome(value)

    tests.append(("no crash", test_no_crash))

    if harness.result_type is not None:
        expected = harness.result_type

        @seeded(seed)
        @plain
        @given(st_for(schema))
        def test_result_type(value: Any) -> None:
            counted("result type")
            result, raised = outcome(value)
            if raised is None:
                assert isinstance(result, expected), f"{type(result).__name__} returned"

        tests.append(("result type", test_result_type))

    if harness.has_success:

        @seeded(seed)
        @plain
        @given(st_for(schema))
        def test_result_consistent(value: Any) -> None:
            counted("result consistency")
            result, raised = outcome(value)
            if raised is None:
                assert isinstance(result.success, bool)
                if result.success:
                    assert result.error is None, "a success with an error"
                else:
                    assert result.error, "a failure without an error"

        tests.append(("result consistency", test_result_consistent))

    @seeded(seed)
    @plain
    @given(st_for(schema))
    def test_json_payload(value: Any) -> None:
        counted("JSON payload")
        result, raised = outcome(value)
        if raised is None:
            json.dumps(harness.payload(result), allow_nan=False)

    tests.append(("JSON payload", test_json_payload))

    @seeded(seed)
    @plain
    @given(st_for(schema))
    def test_size(value: Any) -> None:
        counted("size")
        result, raised = outcome(value)
        if raised is None:
            size = len(json.dumps(harness.payload(result), ensure_ascii=False).encode())
            assert size <= 1024 * 1024, f"{size} bytes"

    tests.append(("size", test_size))

    if harness.output_schema is not None:
        validator = jsonschema.Draft202012Validator(harness.output_schema)

        @seeded(seed)
        @plain
        @given(st_for(schema))
        def test_output_schema(value: Any) -> None:
            counted("output schema")
            result, raised = outcome(value)
            if raised is None and (not harness.has_success or result.success):
                validator.validate(harness.structured(result))

        tests.append(("output schema", test_output_schema))

    def fingerprint(value: Any) -> str:
        result, raised = outcome(value)
        if raised is not None:
            return f"raised {type(raised).__qualname__}: {raised}"
        return json.dumps(harness.payload(result), sort_keys=True, allow_nan=True)

    @seeded(seed)
    @plain
    @given(st_for(schema))
    def test_deterministic(value: Any) -> None:
        counted("determinism")
        assert fingerprint(value) == fingerprint(value)

    tests.append(("determinism", test_deterministic))
    return tests


FLOOR_MODULE = '''\
"""The floor for {ref}: one hand-written @given test per check group (written by run.py)."""

import json
import sys

sys.path.insert(0, {here!r})
import run  # noqa: E402

COUNTS: dict[str, int] = {{}}
HARNESS = run._harness({ref!r}, {protocol!r})
globals().update(run.floor_tests(HARNESS, {seed}, {examples}, COUNTS))


def teardown_module() -> None:
    HARNESS.close()
    with open("counts.json", "w") as file:
        json.dump(COUNTS, file)
'''


def floor_tests(
    harness: _Harness, seed: int, examples: int, counts: dict[str, int]
) -> dict[str, Callable[[], None]]:
    """The floor's tests by the names pytest collects them under."""
    tests = _floor_tests(harness, seed, examples, counts)
    return {f"test_{name.replace(' ', '_')}": test for name, test in tests}


# ---------------------------------------------------------------------------------------------
# Subprocesses
# ---------------------------------------------------------------------------------------------


@dataclass
class Timed:
    """One timed run: wall seconds, CPU seconds, and how busy the rest of the machine was."""

    seconds: float
    returncode: int
    summary: str  # pytest's last line, or the child's JSON
    cpu: float = math.nan  # user + system seconds of the run's processes
    foreign: float = math.nan  # cores kept busy by other processes meanwhile (0: a quiet machine)
    tail: list[str] = field(default_factory=list)  # pytest's verdict lines


def _busy_jiffies() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat (None elsewhere)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])
    return total - idle, total


# Waiting for a quiet machine before each timed run (``--settle``): the limit, and the total.
_SETTLE: dict[str, float] = {"limit": 0.0, "waited": 0.0, "runs": 0.0, "unsettled": 0.0}
QUIET_CORES = 0.5


def _settle() -> None:
    """Wait until other processes keep under QUIET_CORES busy for half a second (bounded)."""
    limit = _SETTLE["limit"]
    if limit <= 0 or _busy_jiffies() is None:
        return
    hertz = os.sysconf("SC_CLK_TCK")
    started = time.perf_counter()
    while True:
        before = _busy_jiffies()
        time.sleep(0.5)
        after = _busy_jiffies()
        assert before is not None and after is not None
        if (after[0] - before[0]) / hertz / 0.5 < QUIET_CORES:
            break
        if time.perf_counter() - started >= limit:
            _SETTLE["unsettled"] += 1
            break
    _SETTLE["waited"] += time.perf_counter() - started
    _SETTLE["runs"] += 1


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def _watch() -> Iterator[dict[str, float]]:
    """Measure wall time, the CPU of finished children, and the CPU used by everything else."""
    found: dict[str, float] = {}
    cpu, ticks, started = _children_cpu(), _busy_jiffies(), time.perf_counter()
    yield found
    found["seconds"] = time.perf_counter() - started
    found["cpu"] = _children_cpu() - cpu
    after = _busy_jiffies()
    if ticks is not None and after is not None:
        hertz = os.sysconf("SC_CLK_TCK")
        busy = (after[0] - ticks[0]) / hertz
        found["foreign"] = max(0.0, busy - found["cpu"]) / found["seconds"]


# Where the measured interpreters keep their bytecode (set by main): a user's installed kit has
# .pyc files, so the runs get them too, without writing __pycache__ folders into the repository.
# (The kit's own worker processes do not inherit this: like any Python process without it, they
# read and write the __pycache__ folders next to the sources.)
_PYCACHE: dict[str, str] = {}


def _env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {**os.environ, **extra}
    parts = [str(FIXTURES), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_AUTO_NUM_WORKERS", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    if "prefix" in _PYCACHE:
        env["PYTHONPYCACHEPREFIX"] = _PYCACHE["prefix"]
    return env


def _timed(args: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> Timed:
    """One run of ``args`` in ``cwd``, with ``env`` added to the environment, without the
    example database an earlier run left there: a run that replays the failures another found
    skips their search and shrinking, and would look faster than it is."""
    shutil.rmtree(cwd / ".hypothesis", ignore_errors=True)
    _settle()
    with _watch() as found:
        done = subprocess.run(
            list(args), cwd=cwd, env=_env(env or {}), capture_output=True, text=True, check=False
        )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else done.stderr.strip()[-300:]
    timed = Timed(
        found["seconds"],
        done.returncode,
        summary,
        found["cpu"],
        found.get("foreign", math.nan),
    )
    # What a failing run said: the verdict lines, for the runs that should not have failed.
    timed.tail = [line for line in lines if "certified" in line or line.startswith("FAILED")][-12:]
    return timed


def pytest_command(*options: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *options]


def kit_command(refs: Sequence[str], *options: str) -> list[str]:
    return pytest_command("--axm-conformance", *(f"--axm-tool={ref}" for ref in refs), *options)


def zoo_refs() -> list[str]:
    """Every tool of the manifest but the hostile ones and those that are tools only of the
    protocol named for them (a run of many protocols names none), with the tools certified
    alongside."""
    manifest = tomllib.loads(MANIFEST.read_text())
    refs: list[str] = []
    for entry in manifest["tool"]:
        if entry.get("hostile") or entry.get("named"):
            continue
        refs.extend(ref for ref in (entry["ref"], *entry.get("with", ())) if ref not in refs)
    return refs


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def geomean(values: Sequence[float]) -> float:
    return math.exp(statistics.fmean(math.log(value) for value in values))


@dataclass
class Series:
    """Repeated timings of one measurement."""

    runs: list[Timed] = field(default_factory=list)

    @property
    def seconds(self) -> list[float]:
        return [run.seconds for run in self.runs]

    @property
    def median(self) -> float:
        return median(self.seconds)

    @property
    def cpu(self) -> float:
        return median([run.cpu for run in self.runs])

    @property
    def foreign(self) -> float:
        return median([run.foreign for run in self.runs])

    def as_json(self) -> dict[str, Any]:
        return {
            "median_s": round(self.median, 4),
            "runs_s": [round(value, 4) for value in self.seconds],
            "cpu_median_s": _rounded(self.cpu),
            "other_load_cores": _rounded(self.foreign, 2),
            "exit_codes": sorted({run.returncode for run in self.runs}),
            "summary": self.runs[-1].summary if self.runs else "",
        }


def _rounded(value: float, digits: int = 4) -> float | None:
    return None if math.isnan(value) else round(value, digits)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure_floor_and_kit(
    tools: Sequence[BenchTool], repeats: int, workdir: Path
) -> dict[str, Any]:
    floor = {tool.label: Series() for tool in tools}
    kit = {tool.label: Series() for tool in tools}
    counts: dict[str, dict[str, int]] = {}
    failures: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="axm-bench-floor-") as floor_dir:
        # Not counted: writes the bytecode of run.py and of what the floor imports.
        _timed(_floor_command(tools[0], BASE_SEED, Path(floor_dir))[0], Path(floor_dir))
        for repeat in range(repeats):
            seed = BASE_SEED + repeat
            for tool in tools:
                for side, series, (command, cwd) in (
                    ("floor", floor, _floor_command(tool, seed, Path(floor_dir))),
                    ("kit", kit, (_kit_command(tool, seed), workdir)),
                ):
                    run = _timed(command, cwd)
                    series[tool.label].runs.append(run)
                    if run.returncode != 0:
                        # Every bench tool is correct: a failure (a timeout under load, a kit
                        # change mid-run) includes shrinking and distorts the time. Kept, shown.
                        failures.append(
                            {"tool": tool.label, "seed": seed, "side": side, "output": run.tail}
                        )
                        _log(f"  {tool.label} {side} FAILED, seed {seed}: " + " | ".join(run.tail))
                counts[tool.label] = json.loads((Path(floor_dir) / "counts.json").read_text())
                _log(
                    f"  [{repeat + 1}/{repeats}] {tool.label:<20} floor "
                    f"{floor[tool.label].runs[-1].seconds:6.2f} s   kit "
                    f"{kit[tool.label].runs[-1].seconds:6.2f} s"
                )
    rows: list[dict[str, Any]] = []
    for tool in tools:
        mine, theirs = floor[tool.label], kit[tool.label]
        rows.append(
            {
                "tool": tool.label,
                "ref": tool.ref,
                "floor": {**mine.as_json(), "examples": counts[tool.label]},
                "kit": theirs.as_json(),
                "ratio": round(theirs.median / mine.median, 3),
                "cpu_ratio": round(theirs.cpu / mine.cpu, 3),
            }
        )
    everything = [run.foreign for series in (*floor.values(), *kit.values()) for run in series.runs]
    return {
        "examples": KIT_EXAMPLES,
        "tools": rows,
        "geomean_ratio": round(geomean([row["ratio"] for row in rows]), 3),
        "geomean_cpu_ratio": round(geomean([row["cpu_ratio"] for row in rows]), 3),
        "other_load_cores": _rounded(median(everything), 2),
        "failures": failures,
    }


def _floor_command(tool: BenchTool, seed: int, directory: Path) -> tuple[list[str], Path]:
    """pytest on the floor's test module for the tool, written into ``directory``."""
    module = FLOOR_MODULE.format(
        here=str(HERE), ref=tool.ref, protocol=tool.protocol, seed=seed, examples=KIT_EXAMPLES
    )
    (directory / "test_floor.py").write_text(module)
    return pytest_command("test_floor.py"), directory


def _kit_command(tool: BenchTool, seed: int) -> list[str]:
    return kit_command([tool.ref], f"--axm-examples={KIT_EXAMPLES}", f"--axm-seed={seed}")


def measure_xdist(
    refs: Sequence[str], repeats: int, workdir: Path, loadscope: bool = False
) -> dict[str, Any]:
    variants: dict[str, tuple[str, ...]] = {"n0": ("-n", "0"), "n2": ("-n", "2")}
    if loadscope:
        variants["n2_loadscope"] = ("-n", "2", "--dist", "loadscope")
    series = {name: Series() for name in variants}
    for repeat in range(repeats):
        seed = f"--axm-seed={BASE_SEED + repeat}"
        for name, options in variants.items():
            series[name].runs.append(
                _timed(kit_command(refs, *ZOO_OPTIONS, seed, *options), workdir)
            )
            _log(
                f"  [{repeat + 1}/{repeats}] zoo {' '.join(options)}: "
                f"{series[name].runs[-1].seconds:6.2f} s"
            )
    serial, parallel = series["n0"], series["n2"]
    found: dict[str, Any] = {
        "tools": len(refs),
        "options": list(ZOO_OPTIONS),
        **{name: runs.as_json() for name, runs in series.items()},
        "ratio_n2_over_n0": round(parallel.median / serial.median, 3),
        "speedup": round(serial.median / parallel.median, 3),
        "cpu_ratio_n2_over_n0": round(parallel.cpu / serial.cpu, 3),
    }
    if loadscope:
        found["ratio_n2_loadscope_over_n0"] = round(
            series["n2_loadscope"].median / serial.median, 3
        )
    return found


def measure_portable(refs: Sequence[str], repeats: int, workdir: Path) -> dict[str, Any]:
    """The zoo the portable way (AXM_CONFORMANCE_PORTABLE=1: psutil, a walk after every call,
    spawned workers) against Linux's own (/proc, inotify, a fork server), both ``-n 2``."""
    variants = {"native": {}, "portable": {"AXM_CONFORMANCE_PORTABLE": "1"}}
    series = {name: Series() for name in variants}
    for repeat in range(repeats):
        seed = f"--axm-seed={BASE_SEED + repeat}"
        for name, env in variants.items():
            command = kit_command(refs, *ZOO_OPTIONS, seed, "-n", "2")
            series[name].runs.append(_timed(command, workdir, env))
            _log(f"  [{repeat + 1}/{repeats}] zoo {name}: {series[name].runs[-1].seconds:6.2f} s")
    native, portable = series["native"], series["portable"]
    return {
        "tools": len(refs),
        "options": [*ZOO_OPTIONS, "-n", "2"],
        **{name: runs.as_json() for name, runs in series.items()},
        "ratio_portable_over_native": round(portable.median / native.median, 3),
        "cpu_ratio_portable_over_native": round(portable.cpu / native.cpu, 3),
        "channel": measure_channel(repeats),
    }


CHANNEL_CALLS = 3000


def measure_channel(repeats: int) -> dict[str, float]:
    """One call's round trip through a worker's channel, in microseconds of wall and of this
    process's CPU, the kit waiting on the pipes with poll() and with a thread per pipe (the
    portable way, Windows' only one): the median of ``repeats`` series of CHANNEL_CALLS calls
    of a target that does nothing, after one call that starts the worker."""
    from axm_conformance import _platform
    from axm_conformance._process.parent._worker import Worker, WorkerConfig

    native = _platform.PLATFORM
    found: dict[str, list[tuple[float, float]]] = {"poll": [], "threads": []}
    try:
        for _ in range(repeats):
            for way, per_call in found.items():
                _platform.PLATFORM = dataclasses.replace(native, poll_pipes=way == "poll")
                with Worker(WorkerConfig()) as worker:
                    worker.call("operator:truth")
                    wall, cpu = time.perf_counter(), time.process_time()
                    for _ in range(CHANNEL_CALLS):
                        worker.call("operator:truth")
                    per_call.append(
                        (
                            (time.perf_counter() - wall) / CHANNEL_CALLS * 1e6,
                            (time.process_time() - cpu) / CHANNEL_CALLS * 1e6,
                        )
                    )
    finally:
        _platform.PLATFORM = native
    result = {
        f"{way}_{what}_us": round(median([pair[index] for pair in pairs]), 1)
        for way, pairs in found.items()
        for index, what in enumerate(("wall", "cpu"))
    }
    result["ratio_threads_over_poll"] = round(result["threads_wall_us"] / result["poll_wall_us"], 3)
    result["cpu_ratio_threads_over_poll"] = round(
        result["threads_cpu_us"] / result["poll_cpu_us"], 3
    )
    return result


def plugin_import_ms() -> float | None:
    """What importing the plugin module adds once pytest is imported (``-X importtime``)."""
    code = "import pytest; import _axm_conformance_pytestplugin"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stderr.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) == 3 and parts[2] == "_axm_conformance_pytestplugin":
            return int(parts[1]) / 1000
    return None


PAIRS_PER_REPEAT = 3


def measure_startup(repeats: int, workdir: Path) -> dict[str, Any]:
    kit, empty, disabled = Series(), Series(), Series()
    for repeat in range(repeats):
        kit.runs.append(
            _timed(kit_command([TRIVIAL_TOOL], "--axm-examples=1", "--axm-seed=1"), workdir)
        )
        # The plugin's cost when off is a few milliseconds against ~0.3 s runs: more samples,
        # in alternating order so that a drift favours neither.
        for pair in range(PAIRS_PER_REPEAT):
            plain = (empty, pytest_command())
            off = (disabled, pytest_command("-p", "no:axm_conformance"))
            for series, command in (plain, off) if pair % 2 == 0 else (off, plain):
                series.runs.append(_timed(command, workdir))
        _log(
            f"  [{repeat + 1}/{repeats}] kit on one tool {kit.runs[-1].seconds:5.2f} s, "
            f"empty {empty.runs[-1].seconds:5.2f} s, "
            f"plugin disabled {disabled.runs[-1].seconds:5.2f} s"
        )
    imports = [plugin_import_ms() for _ in range(max(repeats, 5))]
    known = [value for value in imports if value is not None]
    return {
        "kit_one_tool": kit.as_json(),
        "empty_pytest": empty.as_json(),
        "plugin_disabled": disabled.as_json(),
        "ratio_kit_over_empty": round(kit.median / empty.median, 3),
        "kit_extra_s": round(kit.median - empty.median, 4),
        "ratio_off_over_disabled": round(empty.median / disabled.median, 3),
        "off_extra_ms": round((empty.median - disabled.median) * 1000, 1),
        # Run-to-run spread of those plain runs: a difference below it is noise.
        "plain_run_stdev_ms": round(
            statistics.stdev([*empty.seconds, *disabled.seconds]) * 1000, 1
        ),
        "plugin_import_ms": round(median(known), 2) if known else None,
    }


MCP_TOOL = f"mcp:{sys.executable} {FIXTURES / 'mcp_servers' / 'word_server.py'}[word_count]"
MCP_TWIN = "bench_tools:WordCountTool"


def measure_mcp(repeats: int, workdir: Path) -> dict[str, Any]:
    served, twin = Series(), Series()
    for repeat in range(repeats):
        seed = f"--axm-seed={BASE_SEED + repeat}"
        for series, ref in ((served, MCP_TOOL), (twin, MCP_TWIN)):
            series.runs.append(
                _timed(kit_command([ref], f"--axm-examples={KIT_EXAMPLES}", seed), workdir)
            )
        _log(
            f"  [{repeat + 1}/{repeats}] over MCP {served.runs[-1].seconds:5.2f} s, "
            f"in process {twin.runs[-1].seconds:5.2f} s"
        )
    return {
        "examples": KIT_EXAMPLES,
        "over_mcp": served.as_json(),
        "in_process_twin": twin.as_json(),
        "ratio_mcp_over_in_process": round(served.median / twin.median, 3),
    }


def measure_sandbox(
    tools: Sequence[BenchTool], refs: Sequence[str], repeats: int, workdir: Path
) -> dict[str, Any]:
    """The kit in its sandbox against --axm-sandbox=off: per bench tool, on the zoo at -n 2 and
    on the MCP tool; interleaved, the same seed for both in each repeat."""
    cases: dict[str, tuple[list[str], ...]] = {
        **{tool.label: ([tool.ref], f"--axm-examples={KIT_EXAMPLES}") for tool in tools},
        "zoo -n 2": (list(refs), *ZOO_OPTIONS, "-n", "2"),
        "mcp word_count": ([MCP_TOOL], f"--axm-examples={KIT_EXAMPLES}"),
    }
    series = {(case, way): Series() for case in cases for way in ("sandbox", "off")}
    for repeat in range(repeats):
        seed = f"--axm-seed={BASE_SEED + repeat}"
        for case, (case_refs, *options) in cases.items():
            for way, extra in (("sandbox", ()), ("off", ("--axm-sandbox=off",))):
                command = kit_command(case_refs, *options, seed, *extra)
                series[case, way].runs.append(_timed(command, workdir))
            _log(
                f"  [{repeat + 1}/{repeats}] {case:<20} sandbox "
                f"{series[case, 'sandbox'].runs[-1].seconds:6.2f} s   off "
                f"{series[case, 'off'].runs[-1].seconds:6.2f} s"
            )
    rows = {
        case: {
            "sandbox": series[case, "sandbox"].as_json(),
            "off": series[case, "off"].as_json(),
            "ratio": round(series[case, "sandbox"].median / series[case, "off"].median, 3),
            "cpu_ratio": round(series[case, "sandbox"].cpu / series[case, "off"].cpu, 3),
        }
        for case in cases
    }
    labels = [tool.label for tool in tools]
    return {
        "cases": rows,
        "tools_geomean_ratio": round(geomean([rows[label]["ratio"] for label in labels]), 3),
        "tools_geomean_cpu_ratio": round(
            geomean([rows[label]["cpu_ratio"] for label in labels]), 3
        ),
        "zoo_tools": len(refs),
    }


def measure_scaling(sizes: Sequence[int], repeats: int, workdir: Path) -> dict[str, Any]:
    series = {size: Series() for size in (1, *sizes)}
    for repeat in range(repeats):
        for size in series:
            command = kit_command(
                [f"bench_tools:COPIES_{size}"],
                f"--axm-examples={SCALING_EXAMPLES}",
                f"--axm-seed={BASE_SEED + repeat}",
            )
            series[size].runs.append(_timed(command, workdir))
            _log(f"  [{repeat + 1}/{repeats}] {size} tools: {series[size].runs[-1].seconds:6.2f} s")
    fixed = series[1].median
    rows = []
    previous: tuple[int, float] | None = None
    for size in sizes:
        wall = series[size].median
        marginal = None
        if previous is not None:
            marginal = (wall - previous[1]) / (size - previous[0])
        rows.append(
            {
                "tools": size,
                **series[size].as_json(),
                "per_tool_s": round(wall / size, 4),
                "per_tool_after_fixed_s": round((wall - fixed) / (size - 1), 4),
                "marginal_per_tool_s": None if marginal is None else round(marginal, 4),
            }
        )
        previous = (size, wall)
    per_tool = [row["per_tool_s"] for row in rows]
    after_fixed = [row["per_tool_after_fixed_s"] for row in rows]
    marginals = [row["marginal_per_tool_s"] for row in rows if row["marginal_per_tool_s"]]
    growth = per_tool[-1] / per_tool[0]
    net_growth = after_fixed[-1] / after_fixed[0]
    marginal_growth = marginals[-1] / marginals[0] if len(marginals) >= 2 else None
    return {
        "examples": SCALING_EXAMPLES,
        "one_tool": series[1].as_json(),
        "sizes": rows,
        "per_tool_ratio_largest_over_smallest": round(growth, 3),
        "flat_within_20pct": abs(growth - 1) <= FLAT_WITHIN,
        "after_fixed_ratio_largest_over_smallest": round(net_growth, 3),
        "after_fixed_flat_within_20pct": abs(net_growth - 1) <= FLAT_WITHIN,
        "marginal_ratio_last_over_first": (
            None if marginal_growth is None else round(marginal_growth, 3)
        ),
        "marginal_flat_within_20pct": (
            None if marginal_growth is None else abs(marginal_growth - 1) <= FLAT_WITHIN
        ),
    }


# ---------------------------------------------------------------------------------------------
# The machine, the table
# ---------------------------------------------------------------------------------------------


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def machine_facts() -> dict[str, Any]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    dirty = [line[3:] for line in _git("status", "--porcelain").splitlines() if line]
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": versions,
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty_files": len(dirty),
    }


def _load_note(cores: float | None) -> str:
    if cores is None:
        return ""
    return f" [other processes: {cores:.2f} cores busy]"


def _failure_lines(failures: Sequence[dict[str, Any]]) -> Iterator[str]:
    """One line per failed run, with pytest's verdict lines."""
    for failure in failures:
        detail = " | ".join(failure["output"])
        yield f"  ! {failure['tool']}, {failure['side']}, seed {failure['seed']}: {detail}"[:300]


def _lines(results: dict[str, Any]) -> Iterator[str]:
    machine = results["machine"]
    yield (
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['python']}, "
        f"{machine['platform']}"
    )
    yield "Packages: " + ", ".join(f"{k} {v}" for k, v in machine["packages"].items() if v)
    yield (
        f"Mode: {results['mode']}, median of {results['repeats']} repeats, "
        f"commit {machine['git_commit']} + {machine['git_dirty_files']} changed files, "
        f"{results['duration_s']:.0f} s in all"
    )
    settle = results.get("settle") or {}
    if settle.get("limit_s"):
        yield (
            f"Settle: waited {settle['waited_s']:.0f} s in all for a quiet machine "
            f"(up to {settle['limit_s']:g} s per run); {settle['runs_not_settled']} of "
            f"{settle['runs']} runs started while other processes were busy"
        )
    fk = results.get("floor_vs_kit")
    if fk:
        yield ""
        yield (
            "1-3. Floor (hand-written @given tests under pytest) vs kit (--axm-conformance), "
            f"{fk['examples']} examples{_load_note(fk['other_load_cores'])}"
        )
        yield (
            f"  {'tool':<20}{'checks':>7}{'floor s':>9}{'kit s':>8}{'kit/floor':>11}"
            f"{'floor CPU':>11}{'kit CPU':>9}{'CPU ratio':>11}"
        )
        for row in fk["tools"]:
            floor, kit = row["floor"], row["kit"]
            mark = "!" if kit["exit_codes"] != [0] or floor["exit_codes"] != [0] else " "
            yield (
                f" {mark}{row['tool']:<20}{len(floor['examples']):>7}"
                f"{floor['median_s']:>9.2f}{kit['median_s']:>8.2f}{row['ratio']:>10.2f}x"
                f"{floor['cpu_median_s']:>11.2f}{kit['cpu_median_s']:>9.2f}"
                f"{row['cpu_ratio']:>10.2f}x"
            )
        yield (
            f"  {'geometric mean':<44}{fk['geomean_ratio']:>10.2f}x"
            f"{'':>20}{fk['geomean_cpu_ratio']:>10.2f}x"
        )
        yield from _failure_lines(fk.get("failures", ()))
    xd = results.get("xdist")
    if xd:
        yield ""
        load = median([xd["n0"]["other_load_cores"] or 0, xd["n2"]["other_load_cores"] or 0])
        yield (f"4. Fixture zoo, {xd['tools']} tools, {' '.join(xd['options'])}{_load_note(load)}")
        yield (
            f"  -n 0: {xd['n0']['median_s']:.1f} s ({xd['n0']['cpu_median_s']:.0f} s CPU)   "
            f"-n 2: {xd['n2']['median_s']:.1f} s ({xd['n2']['cpu_median_s']:.0f} s CPU)"
        )
        yield (
            f"  -n 2 / -n 0 = {xd['ratio_n2_over_n0']:.2f} wall (speed-up "
            f"{xd['speedup']:.2f}x), {xd['cpu_ratio_n2_over_n0']:.2f} CPU"
        )
        if "n2_loadscope" in xd:
            scoped = xd["n2_loadscope"]
            yield (
                f"  -n 2 --dist loadscope: {scoped['median_s']:.1f} s "
                f"({scoped['cpu_median_s']:.0f} s CPU), "
                f"/ -n 0 = {xd['ratio_n2_loadscope_over_n0']:.2f} wall"
            )
    su = results.get("startup")
    if su:
        yield ""
        yield f"5. Startup{_load_note(su['empty_pytest']['other_load_cores'])}"
        yield (
            f"  kit, one trivial tool, --axm-examples=1: {su['kit_one_tool']['median_s']:.2f} s"
            f" vs empty pytest run {su['empty_pytest']['median_s']:.2f} s: "
            f"{su['ratio_kit_over_empty']:.2f}x (+{su['kit_extra_s']:.2f} s)"
        )
        yield (
            f"  plugin installed but off: {su['empty_pytest']['median_s']:.3f} s vs "
            f"-p no:axm_conformance {su['plugin_disabled']['median_s']:.3f} s: "
            f"{su['ratio_off_over_disabled']:.3f}x ({su['off_extra_ms']:+.0f} ms; "
            f"runs vary by {su['plain_run_stdev_ms']:.0f} ms (stdev)"
            + (
                ", so: no measurable cost)"
                if abs(su["off_extra_ms"]) < su["plain_run_stdev_ms"]
                else ")"
            )
        )
        yield (
            f"  importing the plugin module after pytest (-X importtime): "
            f"{su['plugin_import_ms']} ms"
        )
    sc = results.get("scaling")
    if sc:
        yield ""
        load = median([row["other_load_cores"] or 0 for row in sc["sizes"]])
        yield (
            f"6. Scaling, N copies of one small tool, --axm-examples={sc['examples']}"
            f"{_load_note(load)}"
        )
        yield f"  1 tool (the fixed cost of a run): {sc['one_tool']['median_s']:.2f} s"
        yield (
            f"  {'tools':>7}{'wall s':>10}{'s/tool':>10}{'after fixed':>14}{'marginal s/tool':>18}"
        )
        for row in sc["sizes"]:
            marginal = row["marginal_per_tool_s"]
            yield (
                f"  {row['tools']:>7}{row['median_s']:>10.2f}{row['per_tool_s']:>10.3f}"
                f"{row['per_tool_after_fixed_s']:>14.3f}"
                + (f"{marginal:>18.3f}" if marginal is not None else f"{'-':>18}")
            )
        first, last = sc["sizes"][0]["tools"], sc["sizes"][-1]["tools"]
        verdict = "flat" if sc["flat_within_20pct"] else "NOT flat"
        yield (
            f"  s/tool at {last} / at {first}: {sc['per_tool_ratio_largest_over_smallest']:.2f}"
            f" -> {verdict} within 20 % (the fixed cost is shared by more tools)"
        )
        verdict = "flat" if sc["after_fixed_flat_within_20pct"] else "NOT flat"
        yield (
            f"  s/tool after the fixed cost, at {last} / at {first}: "
            f"{sc['after_fixed_ratio_largest_over_smallest']:.2f} -> {verdict} within 20 %"
        )
        if sc["marginal_ratio_last_over_first"] is not None:
            verdict = "flat" if sc["marginal_flat_within_20pct"] else "NOT flat"
            yield (
                f"  marginal s/tool, last step / first step: "
                f"{sc['marginal_ratio_last_over_first']:.2f} -> {verdict} within 20 %"
            )

    mc = results.get("mcp")
    if mc:
        yield ""
        yield (
            f"7. MCP: word_count over stdio against its AXM twin in process, "
            f"--axm-examples={mc['examples']}{_load_note(mc['over_mcp']['other_load_cores'])}"
        )
        yield (
            f"  over MCP {mc['over_mcp']['median_s']:.2f} s, in process "
            f"{mc['in_process_twin']['median_s']:.2f} s: ratio "
            f"{mc['ratio_mcp_over_in_process']:.2f}"
        )


def _portable_lines(results: dict[str, Any]) -> Iterator[str]:
    po = results.get("portable")
    if not po:
        return
    native, portable = po["native"], po["portable"]
    load = median([native["other_load_cores"] or 0, portable["other_load_cores"] or 0])
    yield ""
    yield (
        f"8. Portable way, fixture zoo, {po['tools']} tools, {' '.join(po['options'])}"
        f"{_load_note(load)}"
    )
    yield (
        f"  native: {native['median_s']:.1f} s ({native['cpu_median_s']:.0f} s CPU)   "
        f"portable: {portable['median_s']:.1f} s ({portable['cpu_median_s']:.0f} s CPU)"
    )
    yield (
        f"  portable / native = {po['ratio_portable_over_native']:.2f} wall, "
        f"{po['cpu_ratio_portable_over_native']:.2f} CPU"
    )
    channel = po.get("channel")
    if channel:
        yield (
            f"  a call through the channel: poll() {channel['poll_wall_us']:.0f} us "
            f"({channel['poll_cpu_us']:.0f} us CPU), a thread per pipe "
            f"{channel['threads_wall_us']:.0f} us ({channel['threads_cpu_us']:.0f} us CPU); "
            f"threads / poll = {channel['ratio_threads_over_poll']:.2f} wall, "
            f"{channel['cpu_ratio_threads_over_poll']:.2f} CPU"
        )


def _sandbox_lines(results: dict[str, Any]) -> Iterator[str]:
    sb = results.get("sandbox")
    if not sb:
        return
    yield ""
    yield "9. Sandbox (bubblewrap) against --axm-sandbox=off"
    yield (
        f"  bench tools, geometric mean: sandbox / off = {sb['tools_geomean_ratio']:.2f} wall, "
        f"{sb['tools_geomean_cpu_ratio']:.2f} CPU"
    )
    for case in ("zoo -n 2", "mcp word_count"):
        row = sb["cases"][case]
        yield (f"  {case} ({sb['zoo_tools']} tools)" if case.startswith("zoo") else f"  {case}") + (
            f": sandbox {row['sandbox']['median_s']:.1f} s, off {row['off']['median_s']:.1f} s; "
            f"sandbox / off = {row['ratio']:.2f} wall, {row['cpu_ratio']:.2f} CPU"
        )


def table(results: dict[str, Any]) -> str:
    return "\n".join(
        [
            *_lines(results),
            *_portable_lines(results),
            *_sandbox_lines(results),
            *shrinking.lines(results),
            *together.lines(results),
            *clients.lines(results),
            *transports.lines(results),
        ]
    )


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer repeats and tools")
    parser.add_argument("--repeats", type=int, help="repeats per measurement (default 3; 1 quick)")
    parser.add_argument("--output", type=Path, help="JSON file to write")
    parser.add_argument(
        "--only",
        action="append",
        choices=FIGURES,
        help="measure only these figures (repeatable)",
    )
    parser.add_argument(
        "--loadscope",
        action="store_true",
        help="also time the zoo with -n 2 --dist loadscope (one xdist worker per tool)",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each timed run, wait up to SECONDS for the rest of the machine to be quiet "
        f"(under {QUIET_CORES} busy cores); for shared machines (default 0: do not wait)",
    )
    parser.add_argument(
        "--table",
        nargs="?",
        const=HERE / "results.json",
        type=Path,
        metavar="FILE",
        help="only print the table of an earlier run (default: benchmarks/results.json)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    if args.table:
        print(table(json.loads(args.table.read_text())))
        return 0
    repeats = args.repeats or (1 if args.quick else 3)
    wanted = set(args.only or FIGURES)
    if args.quick:
        tools = [tool for tool in BENCH_TOOLS if tool.shape == "small"]
        refs = zoo_refs()[::4]
        sizes = (2, 5, 10)
        startup_repeats = max(repeats, 3)
    else:
        tools, refs, sizes = list(BENCH_TOOLS), zoo_refs(), (10, 50, 200)
        startup_repeats = max(repeats, 5)
    output = args.output or HERE / ("results-quick.json" if args.quick else "results.json")
    _SETTLE["limit"] = args.settle
    # A plain kill (SIGTERM) unwinds like Ctrl-C: the running child is killed, temp dirs removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "repeats": repeats,
        "machine": machine_facts(),
    }
    with (
        tempfile.TemporaryDirectory(prefix="axm-bench-") as empty,
        tempfile.TemporaryDirectory(prefix="axm-bench-pycache-") as pycache,
    ):
        workdir = Path(empty)  # an empty test directory: pytest collects nothing of its own
        _PYCACHE["prefix"] = pycache
        # Warm up the file cache and the bytecode caches; these runs are not counted.
        _timed(kit_command([TRIVIAL_TOOL], "--axm-examples=1"), workdir)
        _timed(pytest_command(), workdir)
        if "startup" in wanted:
            _log("5. startup")
            results["startup"] = measure_startup(startup_repeats, workdir)
        if "floor" in wanted:
            _log(f"1-3. floor vs kit on {len(tools)} tools")
            results["floor_vs_kit"] = measure_floor_and_kit(tools, repeats, workdir)
        if "xdist" in wanted:
            _log(f"4. fixture zoo, {len(refs)} tools, -n 0 / -n 2")
            results["xdist"] = measure_xdist(refs, repeats, workdir, args.loadscope)
        if "scaling" in wanted:
            _log(f"6. scaling {sizes}")
            results["scaling"] = measure_scaling(sizes, repeats, workdir)
        if "mcp" in wanted:
            _log("7. MCP against an in-process twin")
            results["mcp"] = measure_mcp(repeats, workdir)
        if "portable" in wanted:
            _log(f"8. fixture zoo, {len(refs)} tools, portable / native")
            results["portable"] = measure_portable(refs, repeats, workdir)
        if "sandbox" in wanted:
            _log(f"9. sandbox / off: {len(tools)} tools, the zoo, MCP")
            results["sandbox"] = measure_sandbox(tools, refs, repeats, workdir)
        if "shrink" in wanted:
            _log(f"10. shrinking from the failure found / a fresh search: {len(refs)} tools")
            results["shrinking"] = shrinking.measure(refs)
        if "together" in wanted:
            _log(f"11. a home's tools together / alone: {len(together.HOMES)} homes")
            results["together"] = together.measure(repeats)
        if "clients" in wanted:
            _log(f"12. the client checks' share of a run: {len(refs)} tools")
            # A share within one run: further repeats would only cost minutes.
            results["clients"] = clients.measure(refs, 1)
        if "http" in wanted:
            _log("13. an MCP server over HTTP / over stdio")
            results["http"] = transports.measure(repeats)
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["settle"] = {
        "limit_s": args.settle,
        "waited_s": round(_SETTLE["waited"], 1),
        "runs_not_settled": int(_SETTLE["unsettled"]),
        "runs": int(_SETTLE["runs"]),
    }
    output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(table(results))
    print(f"\n(written to {output})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
