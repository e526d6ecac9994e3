"""What a certification run leaves behind: reproduction, certificate, summary, baseline, stats,
xdist equivalence and Hypothesis integration, each through pytest in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from axm_conformance._certificate import SCHEMA_PATH
from axm_conformance._checks import checks_for
from axm_conformance._jsonable import canonical_json
from axm_conformance._settings import derived_seed
from tests.kit.runs import reproduction

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fixtures_on_path")]

CERTIFICATE_SCHEMA = json.loads(SCHEMA_PATH.read_text())


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--axm-conformance", *args)


def without_timings(document: Any) -> Any:
    if isinstance(document, dict):
        return {k: without_timings(v) for k, v in document.items() if k != "duration"}
    if isinstance(document, list):
        return [without_timings(item) for item in document]
    return document


@pytest.mark.parametrize(
    ("ref", "check", "expected", "hangs"),
    [
        ("zoo_axio:to_fahrenheit", "no-unexpected-exception", "KeyError: 'rankine'", False),
        # A missing width (KeyError) or a width of 0 (ZeroDivisionError), by the seed.
        ("zoo_invalid:ResizeImageTool", "invalid-input-handled", "Error", False),
        ("zoo_hostile:SleepyTool", "call-completes", "", True),
    ],
)
def test_reproduce_with_reproduces_ten_times_out_of_ten(
    pytester: pytest.Pytester, ref: str, check: str, expected: str, hangs: bool
) -> None:
    first = run(pytester, f"--axm-tool={ref}", f"--axm-check={check}", "--axm-timeout=1")
    first.assert_outcomes(failed=1)
    command, code = reproduction(first)

    def again(_: int) -> tuple[int, str]:
        completed = subprocess.run(
            [sys.executable, "-m", *command, "-p", "no:cacheprovider"],
            capture_output=True,
            text=True,
            cwd=pytester.path,
            check=False,
        )
        return completed.returncode, completed.stdout

    def snippet(_: int) -> str:
        """What the Python snippet wrote to stderr; "" when it still ran after 3 s."""
        try:
            completed = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                timeout=3 if hangs else 60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ""
        return completed.stderr

    with ThreadPoolExecutor(4) as pool:
        reruns = list(pool.map(again, range(10)))
        said = list(pool.map(snippet, range(10)))
    assert all(code == 1 and "FAILED " in out and check in out for code, out in reruns)
    if hangs:
        assert said == [""] * 10, said
    else:
        assert all(expected and expected in stderr for stderr in said), said


def test_the_python_snippet_prints_the_result_and_only_calls_make_one(
    pytester: pytest.Pytester,
) -> None:
    """Pasted into a script, the snippet shows what the call returned (MeanTool's NaN); a check
    that never calls the tool gets the pytest command alone."""
    result = run(pytester, "--axm-tool=zoo_axm:MeanTool", "--axm-check=result-json")
    result.assert_outcomes(failed=1)
    _, code = reproduction(result)
    assert code.splitlines()[-2] == "print(tool.execute(**{'values': []}))"
    assert code.splitlines()[-1].startswith("# uncontained, in this process: ")
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "nan" in completed.stdout, completed
    static = run(pytester, "--axm-tool=zoo_plain:Calculator", "--axm-check=protocol-shape")
    static.assert_outcomes(failed=1)
    command, code = reproduction(static)
    assert "--axm-check=protocol-shape" in command
    assert code == ""


def test_a_reproduction_carries_the_worker_files_and_timeout_of_the_run(
    pytester: pytest.Pytester,
) -> None:
    """A tool that fails only beside its worker files: the printed command carries the files
    (absolute) and the timeout, and fails again, where it would pass without the files; the
    Python goes through check_tool and the worker, and fails too."""
    pytester.makepyfile(
        lookup=textwrap.dedent(
            '''
            import os

            from axm_runtime.axio import Tool

            async def _lookup(key: str) -> str:
                """Look a key up in the table of the working directory."""
                if os.path.exists("table.txt"):
                    return {}[key]
                return "no table"

            lookup = Tool(name="lookup", handler=_lookup)
            '''
        )
    )
    pytester.mkdir("files").joinpath("table.txt").write_text("a 1\n")
    check = "--axm-check=no-unexpected-exception"
    found = run(
        pytester, "--axm-tool=lookup:lookup", check, "--axm-worker-files=files", "--axm-timeout=3"
    )
    found.assert_outcomes(failed=1)
    command, code = reproduction(found)
    (files,) = [arg for arg in command if arg.startswith("--axm-worker-files=")]
    assert Path(files.partition("=")[2]) == (pytester.path / "files").resolve()
    assert "--axm-timeout=3.0" in command and check in command

    def again(arguments: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", *arguments, "-p", "no:cacheprovider"],
            capture_output=True,
            text=True,
            cwd=pytester.path,
            check=False,
        )

    assert again(command).returncode == 1
    assert again([arg for arg in command if arg != files]).returncode == 0
    assert "check_tool('lookup:lookup', checks=('no-unexpected-exception',)" in code
    assert "worker_files=" in code and "timeout=3.0" in code
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=pytester.path,
        timeout=120,
        check=False,
    )
    assert completed.stdout.splitlines()[0] == "failed", completed


def test_two_ci_runs_without_a_seed_write_the_same_certificate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With CI set, Hypothesis' ci profile derandomizes: each tool's seed is derived from its key
    and input schema, so unchanged tools get the same certificate on every CI run."""
    monkeypatch.setenv("CI", "true")
    args = (
        "--axm-tool=zoo_axm:MeanTool",
        "--axm-tool=zoo_guards:read_note",
        "--axm-tool=zoo_plain:Calculator",
        "--axm-examples=10",
    )
    first = run(pytester, *args, "--axm-report=one.json")
    run(pytester, *args, "--axm-report=two.json")
    one = json.loads((pytester.path / "one.json").read_text())
    two = json.loads((pytester.path / "two.json").read_text())
    Draft202012Validator(CERTIFICATE_SCHEMA).validate(one)
    assert without_timings(one) == without_timings(two)
    tools = {tool["key"]: tool for tool in one["tools"]}
    assert one["seed"] is None and one["settings"]["examples"] == 10
    for key, tool in tools.items():
        schema = canonical_json(None if key == "calculator" else _schema_of(tool["ref"]))
        assert tool["seed"] == derived_seed(key, schema)
        first.stdout.fnmatch_lines([f"{key} (*): *seed {tool['seed']}, * s*"])
    assert tools["read_note"]["certified"] and not tools["mean"]["certified"]
    assert [tools[key]["verdict"] for key in ("read_note", "mean", "calculator")] == [
        "certified",
        "failed",
        "failed",
    ]
    assert tools["read_note"]["input_schema_sha256"] is not None
    assert tools["calculator"]["protocol"] == "unknown"
    mean = {check["id"]: check for check in tools["mean"]["checks"]}
    assert mean["result-json"]["outcome"] == "failed"
    assert mean["result-json"]["failure"]["input"] == {"values": []}
    assert mean["result-json"]["examples"] > 10
    assert mean["name-valid"]["examples"] is None
    assert mean["guards-enforced"]["outcome"] == "skipped"
    assert mean["guards-enforced"]["reason"] == (
        "the AXM protocol does not offer permission guards in front of the tool (guards)"
    )
    assert mean["invalid-input-handled"]["invalid_inputs"] > 0


def _schema_of(ref: str) -> Any:
    from axm_conformance import check_tool

    return check_tool(ref, checks=("name-valid",)).tools[0].subject.input_schema


@pytest.mark.parametrize(
    "selection",
    [("--axm-check=result-json",), ("-k", "result-json"), ("--deselect", "make_slug::name-valid")],
    ids=["axm-check", "k", "deselect"],
)
def test_a_partial_run_is_never_certified(
    pytester: pytest.Pytester, selection: tuple[str, ...]
) -> None:
    """A run that leaves out some checks of a tool says so, and certifies nothing."""
    result = run(
        pytester,
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-examples=5",
        "--axm-report=c.json",
        *selection,
    )
    (tool,) = json.loads((pytester.path / "c.json").read_text())["tools"]
    ran = len(tool["checks"])
    assert (tool["certified"], tool["partial"], tool["verdict"]) == (False, True, "certified")
    assert ran + len(tool["checks_not_run"]) == len(checks_for("tool"))
    assert not {check["id"] for check in tool["checks"]} & set(tool["checks_not_run"])
    result.stdout.fnmatch_lines(
        [f"make_slug (axm): NOT certified (partial: {ran} of {len(checks_for('tool'))} checks)*"]
    )
    assert result.ret == 0


def test_the_certificate_names_the_distribution_a_tool_comes_from(
    pytester: pytest.Pytester,
) -> None:
    from importlib import metadata

    run(
        pytester,
        "--axm-tool=axm_runtime.examples.axm_tools:WordCountTool",
        "--axm-tool=zoo_axm:MeanTool",  # on the path, installed by no distribution
        "--axm-examples=1",
        "--axm-report=certificate.json",
    )
    tools = json.loads((pytester.path / "certificate.json").read_text())["tools"]
    provided = {tool["key"]: tool["distribution"] for tool in tools}
    assert provided == {
        "word_count": {"name": "axm-conformance", "version": metadata.version("axm-conformance")},
        "mean": None,
    }


@pytest.mark.parametrize("gate", [False, True], ids=["no-gate", "require-certified"])
def test_a_tool_whose_calls_all_end_in_domain_errors_is_inconclusive(
    pytester: pytest.Pytester, gate: bool
) -> None:
    """Its result checks judged nothing: skipped as inconclusive, naming the errors the calls
    ended in and what would reach the tool's domain; the exit status is the gate's to set."""
    pytester.makepyfile(
        domain_only=textwrap.dedent(
            '''
            from axm_runtime.axio import Tool

            async def _read(path: str) -> str:
                """Read a file."""
                raise FileNotFoundError(path)

            read = Tool(name="read", handler=_read)
            '''
        )
    )
    pytester.syspathinsert()
    options = ["--axm-require-certified"] if gate else []
    result = run(pytester, "--axm-tool=domain_only:read", "--axm-report=c.json", *options)
    result.stdout.fnmatch_lines(
        [
            "*read (axio): NOT certified (inconclusive)*",
            *(["*1 of 1 tools not certified (read), and --axm-require-certified*"] if gate else []),
        ]
    )
    (tool,) = json.loads((pytester.path / "c.json").read_text())["tools"]
    assert (tool["certified"], tool["verdict"]) == (False, "inconclusive")
    checks = {check["id"]: check for check in tool["checks"]}
    reason = checks["result-type"]["reason"]
    assert checks["result-type"]["outcome"] == "inconclusive"
    assert reason.startswith("inconclusive: no call returned a value")
    assert "FileNotFoundError (raised through HandlerError) in " in reason
    assert "`examples`, `default`, `enum`" in reason and "--axm-worker-files" in reason
    assert result.parseoutcomes().get("failed", 0) == 0
    assert result.ret == (1 if gate else 0)


def test_summary_and_github_step_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = pytester.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    run(
        pytester,
        "--axm-tool=zoo_axm:MeanTool",
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-examples=5",
        "--axm-summary=summary.md",
    )
    summary = (pytester.path / "summary.md").read_text()
    assert re.search(r"\| `make_slug` \| axm \| certified \| (\d+) of \1 \| none \|", summary)
    assert re.search(
        r"\| `mean` \| axm \| \*\*NOT certified \(failed\)\*\* \| \d+ of \d+ \| "
        r"`result-json`: \$\.data\.mean: nan is not",
        summary,
    )
    assert step.read_text() == summary


def test_baseline_turns_known_failures_into_xfail_and_catches_stale_entries(
    pytester: pytest.Pytester,
) -> None:
    args = ("--axm-tool=zoo_axm:MeanTool", "--axm-tool=zoo_axm:SlugTool", "--axm-examples=5")
    run(pytester, *args, "--axm-baseline-write=known.json")
    known = json.loads((pytester.path / "known.json").read_text())
    assert known["known_failures"] == [
        {"tool": "mean", "check": "result-json", "reason": "$.data.mean: nan is not a JSON number"}
    ]
    result = run(pytester, *args, "--axm-baseline=known.json", "-rx")
    assert result.ret == 0
    outcomes = result.parseoutcomes()
    assert outcomes["xfailed"] == 1 and "failed" not in outcomes
    result.stdout.fnmatch_lines(["*known failure (baseline): $.data.mean: nan is not*"])

    # An entry naming its finding knows that failure alone: another failure of the check is new.
    named = {**known["known_failures"][0], "finding": "nan is not a JSON number"}
    (pytester.path / "named.json").write_text(json.dumps({"known_failures": [named]}))
    result = run(pytester, *args, "--axm-baseline=named.json")
    assert result.ret == 0 and result.parseoutcomes()["xfailed"] == 1
    other = {**named, "finding": "inf is not a JSON number"}
    (pytester.path / "other.json").write_text(json.dumps({"known_failures": [other]}))
    result = run(pytester, *args, "--axm-baseline=other.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*Not the failure the baseline knows of this check (a finding containing 'inf is*new one"]
    )

    known["known_failures"].append({"tool": "make_slug", "check": "name-valid", "reason": "x"})
    (pytester.path / "stale.json").write_text(json.dumps(known))
    result = run(pytester, *args, "--axm-baseline=stale.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*stale baseline entry*now passed; remove the entry*"])

    known["known_failures"].append({"tool": "gone", "check": "name-valid", "reason": "x"})
    (pytester.path / "unknown.json").write_text(json.dumps(known))
    result = run(pytester, *args, "--axm-baseline=unknown.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --axm-baseline: the baseline lists tool 'gone'*"])


def test_stats_report_examples_sources_discards_and_keywords(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--axm-tool=zoo_guards:read_note", "--axm-examples=10", "--axm-stats")
    # The keywords most checks' inputs exercised are listed once; a check whose inputs
    # exercised others (the probes', none) lists its own.
    result.stdout.fnmatch_lines(
        [
            "read_note (axio): certified*",
            "    keywords exercised: *maxLength*",
            "    call-completes: * examples (* boundary, * source-literal, *generated), "
            "0 invalid inputs, * discarded",
            "    guards-enforced: * examples, 0 invalid inputs, 0 discarded; keywords: none",
            "    invalid-input-handled: * examples (* boundary, *), * invalid inputs, 0 discarded*",
            "    no-injected-exec: * examples, 0 invalid inputs, 0 discarded; keywords: none",
        ]
    )
    # The probes (guards and limit) and the payloads (no-injected-exec, no-option-injection).
    assert result.stdout.str().count("keywords: none") == 5


def test_xdist_gives_the_same_outcomes_and_one_certificate(pytester: pytest.Pytester) -> None:
    args = (
        "--axm-tool=zoo_axm:MeanTool",
        "--axm-tool=zoo_guards:read_note",
        "--axm-tool=zoo_axio:head",
        "--axm-examples=10",
        "--axm-seed=11",
    )
    serial = run(pytester, *args, "--axm-report=serial.json")
    spread = run(pytester, *args, "-n", "2", "--axm-report=spread.json", "--junitxml=j.xml")
    tests = ("passed", "failed", "skipped", "xfailed")
    assert {key: spread.parseoutcomes().get(key) for key in tests} == {
        key: serial.parseoutcomes().get(key) for key in tests
    }
    one = json.loads((pytester.path / "serial.json").read_text())
    two = json.loads((pytester.path / "spread.json").read_text())
    Draft202012Validator(CERTIFICATE_SCHEMA).validate(two)

    def verdicts(document: Any) -> dict[tuple[str, str], tuple[str, Any]]:
        return {
            (tool["key"], check["id"]): (check["outcome"], (check["failure"] or {}).get("input"))
            for tool in document["tools"]
            for check in tool["checks"]
        }

    assert verdicts(one) == verdicts(two)
    assert [tool["certified"] for tool in one["tools"]] == [t["certified"] for t in two["tools"]]
    # Where the inputs came from travels back from the xdist workers, and adds up.
    calls = {(tool["key"], check["id"]): check for tool in two["tools"] for check in tool["checks"]}
    judged = calls["read_note", "no-unexpected-exception"]
    assert judged["sources"]["boundary"] > 0 and judged["sources"]["generated"] > 0
    assert sum(judged["sources"].values()) == judged["examples"]
    assert calls["read_note", "guards-enforced"]["sources"] == {}  # probes are not counted
    junit = (pytester.path / "j.xml").read_text()
    assert '<property name="axm_tool" value="read_note" />' in junit
    assert '<property name="axm_check" value="result-type" />' in junit
    assert '<property name="axm_seed" value="11" />' in junit


def test_xdist_workers_take_the_tools_as_the_controller_described_them(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        counted=textwrap.dedent(
            """
            from pathlib import Path

            with open(Path(__file__).with_name("imports.log"), "a") as log:
                log.write("imported\\n")


            async def shout(text: str) -> str:
                \"\"\"Upper-case a text.\"\"\"
                return text.upper()
            """
        )
    )
    # The module counts its imports in a file beside it, which a sandbox shows read-only.
    result = run(
        pytester, "--axm-tool=counted:shout", "--axm-examples=5", "-n", "2", "--axm-sandbox=off"
    )
    result.assert_outcomes(passed=26, skipped=17)
    # Loaded once to be described (by the controller), once to be certified: the xdist workers
    # do not load every tool again to describe it.
    assert (pytester.path / "imports.log").read_text().count("imported") == 2


def test_seeds_from_last_run_and_from_hypothesis(pytester: pytest.Pytester) -> None:
    # A profile that does not derandomize (with CI set, Hypothesis loads its ci profile, which
    # does): the run draws a fresh seed, and remembers it.
    first = run(
        pytester,
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-check=name-valid",
        "--hypothesis-profile=default",
    )
    seed = first.stdout.str().split("--axm-seed=")[1].split(" ")[0].rstrip(")")
    last = run(pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-check=name-valid", "--axm-seed=last")
    last.stdout.fnmatch_lines([f"axm-conformance *seed {seed} *"])
    hypothesis = run(
        pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-check=name-valid", "--hypothesis-seed=42"
    )
    hypothesis.stdout.fnmatch_lines(["axm-conformance *seed 42 *"])
    fresh = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--axm-conformance",
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-seed=last",
    )
    assert fresh.ret == pytest.ExitCode.USAGE_ERROR
    fresh.stderr.fnmatch_lines(["ERROR: --axm-seed: 'last' needs a previous run*"])


def test_hypothesis_profile_and_example_database_are_honoured(pytester: pytest.Pytester) -> None:
    database = pytester.path / "examples-db"
    pytester.makeconftest(
        "from hypothesis import settings\n"
        "from hypothesis.database import DirectoryBasedExampleDatabase\n"
        f"settings.register_profile('team', database=DirectoryBasedExampleDatabase("
        f"{str(database)!r}))\n"
        "settings.load_profile('team')\n"
    )
    result = run(pytester, "--axm-tool=zoo_axm:MeanTool", "--axm-check=result-json")
    result.assert_outcomes(failed=1)
    assert any(path.is_file() for path in Path(database).rglob("*"))


def test_the_summary_ends_with_the_portability_table_when_a_client_check_ran(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        "--axm-tool=zoo_axm:FileSizeTool",
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-check=portable-to-openai",
        "--axm-check=portable-to-mcp",
    )
    profiles = "openai openai-strict anthropic anthropic-strict gemini gemini-parameters mcp"
    broken = "openai-name openai-name anthropic-name anthropic-name gemini-name gemini-name"
    result.stdout.re_match_lines(
        [
            r"portability to LLM clients \(the first rule each breaks: conformance/clients.md\):",
            "tool +" + profiles.replace(" ", " +"),
            "zoo_axm:FileSizeTool +" + broken.replace(" ", " +") + " +mcp-name",
            "make_slug +ok +openai-strict-all-required +ok +ok +ok +gemini-parameters-keywords +ok",
        ]
    )
    without = run(pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-check=name-valid")
    assert "portability to LLM clients" not in without.stdout.str()
