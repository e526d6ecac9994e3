"""The pytest plugin, run the way users run it: pytest in a subprocess, output and exit status."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import zoo_axm
from axm_conformance import LoadError, SettingsError, check_tool
from axm_conformance._checks import checks_for
from tests.conftest import FIXTURES

DYING_SERVER = FIXTURES / "mcp_servers" / "word_server.py"

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fixtures_on_path")]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--axm-conformance", *args)


def test_examples_are_certified(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--axm-tool=axm_runtime.examples:TOOLS", "--axm-examples=10")
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] + outcomes["skipped"] == 9 * len(checks_for("tool"))
    assert "failed" not in outcomes
    result.stdout.fnmatch_lines_random(
        [
            "axm-conformance *: 9 tools, *seed*",
            "word_count (axm): certified (* passed, * skipped*)",
            "calculator (amplifier): certified*",
            "What each check requires and why: *conformance*README.md",
        ]
    )
    assert result.ret == 0


@pytest.mark.parametrize(
    ("ref", "counted"),
    [
        ("zoo_axm:SlugTool", "1 tool"),
        (f"mcp:{shlex.join([sys.executable, str(DYING_SERVER)])}", "1 server, 6 tools"),
    ],
)
def test_the_header_counts_a_server_apart_from_its_tools(
    pytester: pytest.Pytester, ref: str, counted: str
) -> None:
    result = run(pytester, f"--axm-tool={ref}", "--co")
    result.stdout.fnmatch_lines([f"axm-conformance *: {counted}, *seed*"])


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_such_module:Tool", "*'no_such_module:Tool': no module named 'no_such_module'*"),
        ("zoo_axm:NoSuchTool", "*'zoo_axm:NoSuchTool': 'zoo_axm' has no attribute 'NoSuchTool'*"),
        ("zoo_axm", "*'zoo_axm' is not a tool reference: use module:attribute*"),
        (
            "broken_import:Tool",
            "*'broken_import:Tool': importing 'broken_import' raised "
            "RuntimeError: missing API key*",
        ),
        ("entry-point:no.such.group", "*unknown entry-point group 'no.such.group'*"),
        ("entry-point:axm.tools:absent", "*no entry point named 'absent' in group 'axm.tools'*"),
        (
            "axm_runtime.examples:TOOLS[nope]",
            "*has no tool 'nope' (its tools are [[]0], [[]1], *)",
        ),
        # Objects with no mark of a tool: what was found, and what a tool has.
        (
            "not_tools:NUMBER",
            "'not_tools:NUMBER' is an int (42), not a tool: a tool has a `name` and a member "
            "an input reaches: `invoke` (LangChain) or * or `handler` (*) or `execute` (*)",
        ),
        ("not_tools:PAIR", "'not_tools:PAIR[[]0]' is a str ('a'), not a tool: *"),
        # A server that dies at start: why it gave no tools, with what it said.
        (
            f"mcp:{shlex.join([sys.executable, str(DYING_SERVER), '--defect', 'exit-at-start'])}"
            "[word_count]",
            "*has no tool 'word_count' (it could not be asked for its tools: the server closed "
            "stdout during initialize (it exited with status 1); the last line it wrote "
            "to stderr: \"ModuleNotFoundError: No module named 'wordlib'\")",
        ),
        (
            "not_tools:add",
            "'not_tools:add' is a synchronous function (add), which no protocol calls: decorate "
            "it with axm_runtime.tool_use's @tool, or make it an `async def` handler (axio)",
        ),
    ],
)
def test_a_bad_reference_is_a_one_line_usage_error(
    pytester: pytest.Pytester, ref: str, message: str
) -> None:
    pytester.makepyfile(broken_import="raise RuntimeError('missing API key')\n")
    pytester.makepyfile(
        not_tools="NUMBER = 42\nPAIR = ['a', 'b']\n\ndef add(a: int, b: int) -> int:\n"
        "    return a + b\n"
    )
    result = run(pytester, f"--axm-tool={ref}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --axm-tool {message}"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert len(result.stderr.lines) <= 2


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            "--axm-protocol=openapi",
            "ERROR: --axm-protocol: protocol must be one of *, not 'openapi'",
        ),
        ("--axm-examples=many", "ERROR: --axm-examples: 'many' is not a whole number"),
        (
            "--axm-examples=0",
            "ERROR: --axm-examples: examples must be a whole number of at least 1*",
        ),
        ("--axm-timeout=-1", "ERROR: --axm-timeout: timeout must be a positive number*"),
        ("--axm-check=no-such-check", "ERROR: --axm-check: unknown check id 'no-such-check'*"),
        ("--axm-name-pattern=(", "ERROR: --axm-name-pattern: name_pattern '(' is not a regex*"),
        (
            "--axm-worker-files=no-such-dir",
            "ERROR: --axm-worker-files: worker_files '*no-such-dir' is not a directory",
        ),
        (
            "--axm-server-header=X Tenant=blue",
            "ERROR: --axm-server-header: 'X Tenant=blue' is not NAME=VALUE with an HTTP header*",
        ),
        (
            "--axm-server-header=X-Tenant=line\nbreak",
            "ERROR: --axm-server-header: *is not NAME=VALUE with an HTTP header name",
        ),
        (
            "--axm-server-token-env=AXM_NO_SUCH_TOKEN",
            "ERROR: --axm-server-token-env: server_token_env names AXM_NO_SUCH_TOKEN, which this "
            "environment does not set: export the server's bearer token as AXM_NO_SUCH_TOKEN",
        ),
        (
            "--axm-http-path=mcp",
            "ERROR: --axm-http-path: http_path is a path that starts with '/', not 'mcp'",
        ),
        (
            "--axm-server-token-env=not a name",
            "ERROR: --axm-server-token-env: server_token_env names an environment variable, "
            "not 'not a name'",
        ),
        ("--axm-auth=oauth", "ERROR: --axm-auth: auth is one of off, local, not 'oauth'"),
    ],
)
def test_a_bad_setting_is_a_one_line_usage_error(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    result = run(pytester, "--axm-tool=zoo_axm:SlugTool", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def test_a_bad_ini_setting_names_the_ini_setting(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naxm_tools = zoo_axm:SlugTool\naxm_timeout = soon\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: the axm_timeout ini setting: 'soon' is not a number*"])


def test_ini_settings_configure_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\naxm_tools =\n    zoo_axm:SlugTool\n    zoo_axm:FileSizeTool\n"
        "axm_examples = 5\naxm_checks = name-valid\n"
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*5 examples per tool*", "FAILED zoo_axm:FileSizeTool::name-valid*"]
    )


def test_no_tools_found_is_an_error_saying_what_was_looked_for(pytester: pytest.Pytester) -> None:
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: axm-conformance found no tools to certify: it looked for entry points in the "
            "groups amplifier.modules, axio.tools, axm.tools, axm.tribunal.tools of *"
        ]
    )


def _publish(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, entry_points: str) -> Path:
    """Install, as the project under test, a distribution with these entry points; the folder
    it is installed in, which is on the path."""
    pytester.makepyprojecttoml('[project]\nname = "demo-tools"\nversion = "1.0"\n')
    site = pytester.mkdir("site")
    info = site / "demo_tools-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-tools\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    monkeypatch.setenv("PYTHONPATH", f"{site}:{FIXTURES}")
    return site


def test_published_entry_points_are_certified_by_default(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _publish(
        pytester,
        monkeypatch,
        "[axm.tools]\nslug = zoo_axm:SlugTool\n"
        "[amplifier.modules]\nexamples = axm_runtime.examples.amplifier_tools:mount\n",
    )
    result = run(pytester, "--axm-examples=5", "--co", "-q")
    result.stdout.fnmatch_lines_random(
        ["make_slug::name-valid", "calculator::name-valid", "text_stats::result-size"]
    )
    assert result.ret == 0


def test_a_broken_published_entry_point_fails_only_its_own_item(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody named it: the run goes on, the other tools are certified, the certificate says
    which one could not be loaded, and the gate counts it."""
    site = _publish(
        pytester, monkeypatch, "[axm.tools]\nslug = zoo_axm:SlugTool\nbroken = broken_tools:Tool\n"
    )
    (site / "broken_tools.py").write_text("raise RuntimeError('missing API key')\n")
    for spread in ((), ("-n", "2")):
        result = run(
            pytester,
            "--axm-check=name-valid",
            "--axm-report=certificate.json",
            "--axm-require-certified",
            *spread,
        )
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines_random(
            [
                "*entry-point:axm.tools:broken::load*",
                "*cannot load the published tool 'entry-point:axm.tools:broken': loading "
                "'broken_tools:Tool' raised RuntimeError: missing API key*",
                "*2 tools not certified (make_slug, entry-point:axm.tools:broken)*",
            ]
        )
        document = json.loads((pytester.path / "certificate.json").read_text())
        assert [tool["key"] for tool in document["tools"]] == ["make_slug"]
        assert document["summary"]["unloadable"] == 1
        assert document["unloadable"][0]["ref"] == "entry-point:axm.tools:broken"
        assert "missing API key" in document["unloadable"][0]["error"]


def test_durations_charge_each_check_its_own_time_and_the_summary_the_tools(
    pytester: pytest.Pytester,
) -> None:
    """The tool is certified on its first item; --durations still shows what each check
    spent, and the summary line the tool's total, which the checks' times add up to."""
    result = run(
        pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-examples=30", "--durations=0", "-vv"
    )
    durations = {
        line.split()[-1].partition("::")[2]: float(line.split()[0].rstrip("s"))
        for line in result.stdout.lines
        if re.match(r"^\d+\.\d+s call +make_slug::", line)
    }
    assert set(durations) == {check.id for check in checks_for("tool")}
    summary = r", (\d+\.\d+) s; (\d+) valid calls: (\d+) served, 0 refused, 0 errored\)$"
    ((total, valid, served),) = [
        (float(m[1]), int(m[2]), int(m[3]))
        for line in result.stdout.lines
        if (m := re.search(summary, line))
    ]
    assert valid == served > 30  # every valid input of a correct tool is served
    assert durations["protocol-shape"] < 0.05 * total  # the first item, read without a call
    assert max(durations.values()) < 0.75 * total
    # --durations prints hundredths of a second, as the summary does.
    assert sum(durations.values()) == pytest.approx(total, abs=0.005 * (len(durations) + 1))


_SLOW_TOOL = """
import time
from axm_runtime.axm import ToolResult


class SlowTool:
    name = "slow"

    def execute(self, *, text: str) -> ToolResult:
        time.sleep(0.01)
        return ToolResult(success=True, data={"length": len(text)})
"""


def _on_a_terminal(pytester: pytest.Pytester, *args: str) -> str:
    """What pytest writes to a terminal (a pseudo-terminal here), as text."""
    import pty

    ours, theirs = pty.openpty()
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--axm-conformance"]
    with subprocess.Popen(
        [*command, *args], cwd=pytester.path, stdin=theirs, stdout=theirs, stderr=theirs
    ) as process:
        os.close(theirs)
        written = bytearray()
        with contextlib.suppress(OSError):  # the end of the output, on Linux
            while chunk := os.read(ours, 65536):
                written += chunk
        process.wait()
    os.close(ours)
    return written.decode("utf-8", "replace")


def test_a_terminal_shows_what_a_slow_tools_certification_is_doing(
    pytester: pytest.Pytester,
) -> None:
    """Calls made and the phase, on the line pytest is writing, taken back when done; nothing
    under -q, and nothing when the output is not a terminal."""
    pytester.makepyfile(slow_tools=_SLOW_TOOL)
    args = ("--axm-tool=slow_tools:SlowTool", "--axm-examples=60", "-p", "no:randomly")
    shown = _on_a_terminal(pytester, *args)
    phases = re.findall(r"\[(valid inputs|invalid inputs|probes), (\d+) calls\]", shown)
    assert len(phases) >= 3, shown
    counts = [int(calls) for _, calls in phases]
    assert counts == sorted(counts) and counts[-1] > counts[0]
    assert "slow (axm): certified" in shown
    # The line is given back: what follows the taken-back progress is pytest's own output.
    assert re.search(r"\r\S.* \r\S[^\r\n]*\.", shown), shown
    assert "calls]" not in _on_a_terminal(pytester, *args, "-q")
    assert "calls]" not in run(pytester, *args).stdout.str()


def test_item_ids_select_single_checks(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--axm-tool=zoo_axm:FileSizeTool", "--co", "-q")
    result.stdout.fnmatch_lines(
        ["zoo_axm:FileSizeTool::protocol-shape", "zoo_axm:FileSizeTool::result-size"]
    )
    result = run(pytester, "--axm-tool=zoo_axm:SlugTool", "-k", "make_slug::name-valid")
    result.assert_outcomes(passed=1)


def test_hostile_tools_fail_with_the_input_and_the_run_completes(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        "--axm-tool=zoo_hostile:SpinTool",
        "--axm-tool=zoo_hostile:SleepyTool",
        "--axm-tool=zoo_hostile:QuitterTool",
        "--axm-tool=zoo_hostile:HardExitTool",
        "--axm-tool=zoo_hostile:FloodTool",
        "--axm-tool=zoo_axm:SlugTool",
        "--axm-timeout=1",
        "--axm-examples=5",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            "FAILED spin::call-completes*",
            "FAILED sleepy::call-completes*",
            "FAILED quitter::no-unexpected-exception*",
            "FAILED hard_exit::call-completes*",
            "FAILED flood::result-size*",
            "*the call did not return within 1 s (--axm-timeout)*",
            "*raised SystemExit: 3, a BaseException*",
            "*the process running the tool exited with status 7*",
            "*the serialised result is at least 52,428,8* bytes, over the 1,048,576-byte limit*",
            "*in execute*",
            "make_slug (axm): certified*",
        ]
    )
    # The other checks of a hostile tool still ran: its name and schema were judged.
    assert (
        "spin::name-valid PASSED"
        in run(
            pytester, "--axm-tool=zoo_hostile:SpinTool", "--axm-timeout=1", "-v", "-k", "name-valid"
        ).stdout.str()
    )
    # Only the failure reports: with CI set, pytest repeats whole messages in the summary.
    reports = result.stdout.str().split("short test summary info")[0]
    assert reports.count("  input:    {}") == 5
    assert "Traceback" not in reports.split("the tool's process")[0]


def test_reproduce_with_reruns_exactly_the_failing_check(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--axm-tool=zoo_axio:to_fahrenheit", "--axm-examples=20")
    assert result.parseoutcomes()["failed"] == 1
    lines = result.stdout.lines
    command = lines[lines.index("Reproduce with:") + 1].split()
    assert command[:2] == ["pytest", "--axm-conformance"]
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider", *command[1:])
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*'scale': 'rankine'*", "FAILED to_fahrenheit::no-unexpected-*"])
    snippet = lines[lines.index("or in Python:") + 1 :][:4]
    code = textwrap.dedent("\n".join(line for line in snippet if line.startswith("    ")))
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert "KeyError: 'rankine'" in completed.stderr


def test_worker_files_reach_the_tool_and_its_reproduction(pytester: pytest.Pytester) -> None:
    """With its notes copied in, read_note_file is certified; a failure's command keeps them,
    and --axm-allow-root."""
    notes = FIXTURES / "worker_files"
    result = run(
        pytester,
        "--axm-tool=zoo_tricky:read_note_file",
        "--axm-examples=5",
        f"--axm-worker-files={notes}",
    )
    result.stdout.fnmatch_lines(["read_note_file (axio): certified*"])
    failing = run(
        pytester,
        "--axm-tool=zoo_axio:word_count",
        "--axm-check=result-type",
        "--axm-examples=5",
        f"--axm-worker-files={notes}",
        "--axm-allow-root",
    )
    failing.stdout.fnmatch_lines(
        [f"    pytest --axm-conformance * --axm-worker-files={notes} --axm-allow-root"]
    )


def test_without_the_flag_the_plugin_does_nothing_and_imports_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_imports=(
            "import sys\n"
            "def test_nothing_heavy_imported():\n"
            "    heavy = {'jsonschema', 'hypothesis_jsonschema', 'pydantic'}\n"
            "    assert not heavy & set(sys.modules)\n"
            "    kit = {name for name in sys.modules if name.startswith('axm_')}\n"
            "    # The table of options, which the plugin declares, and how it reads a switch.\n"
            "    assert kit <= {'axm_conformance', 'axm_conformance._version',\n"
            "                   'axm_conformance._options', 'axm_conformance.errors',\n"
            "                   'axm_conformance._pytest_shared'}, kit\n"
        )
    )
    # The kit's plugin alone: another installed plugin (langsmith's, which langchain-core
    # brings) may import what it likes.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "_axm_conformance_pytestplugin", "--axm-tool=zoo_axm:X"
    )
    result.assert_outcomes(passed=1)


def test_check_tool_takes_an_instance_and_says_what_it_cannot_send(tmp_path: Path) -> None:
    """An instance made on the spot travels to the worker pickled; what cannot travel (an
    object pickle refuses, a class defined in __main__) is a LoadError that says so."""
    report = check_tool(zoo_axm.SlugTool(), examples=5, seed=1)
    (tool,) = report.tools
    assert tool.subject.ref.startswith("pickle:") and tool.subject.name == "make_slug"
    assert tool.certified, [(o.check_id, o.messages) for o in tool.failed]
    locked = zoo_axm.SlugTool()
    locked.lock = threading.Lock()  # type: ignore[attr-defined]
    with pytest.raises(LoadError, match=r"cannot be sent to the kit's worker process: .* pickl"):
        check_tool(locked)
    with pytest.raises(LoadError, match=r"^42 is an int \(42\), not a tool: a tool has a `name`"):
        check_tool(42)
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            from axm_conformance import LoadError, check_tool

            class Echo:
                name = "echo"
                def execute(self, text: str):
                    return text

            try:
                check_tool(Echo())
            except LoadError as error:
                print(error)
            """
        )
    )
    completed = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True
    )
    assert "is defined in __main__ (a script or a notebook)" in completed.stdout


def test_the_engine_runs_without_pytest(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from axm_conformance import check_tool\n"
        "report = check_tool('zoo_axm:MeanTool', examples=10, seed=1)\n"
        "assert [o.check_id for o in report.tools[0].failed] == ['result-json']\n"
        "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_accepting_invalid_input_warns_and_fails_only_when_strict(
    pytester: pytest.Pytester,
) -> None:
    args = ("--axm-tool=zoo_guards:shout", "--axm-check=invalid-input-handled", "--axm-examples=5")
    lenient = run(pytester, *args)
    lenient.assert_outcomes(passed=1, warnings=1)
    lenient.stdout.fnmatch_lines(
        ["*ConformanceWarning: invalid-input-handled*", "*accepted an invalid input*"]
    )
    strict = run(pytester, *args, "--axm-strict")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["*invalid input, *", "*accepted an invalid input*"])


def test_nondeterministic_tools_are_exempted_with_the_reason(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naxm_nondeterministic =\n    roll_dice: rolls dice on purpose\n")
    result = run(
        pytester, "--axm-tool=zoo_behaviour:DiceRollTool", "--axm-check=deterministic", "-rs"
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*exempt by the axm_nondeterministic setting: rolls dice on purpose*"]
    )
    broken = pytester.makeini("[pytest]\naxm_nondeterministic = roll_dice\n")
    assert broken.exists()
    result = run(pytester, "--axm-tool=zoo_behaviour:DiceRollTool")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: the axm_nondeterministic ini setting: 'roll_dice' is not 'TOOL NAME: reason'*"]
    )


def test_an_exemption_naming_no_tool_under_test_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    """A misspelt name would exempt nothing, silently."""
    pytester.makeini("[pytest]\naxm_nondeterministic =\n    roll_die: rolls dice on purpose\n")
    result = run(pytester, "--axm-tool=zoo_behaviour:DiceRollTool")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: the axm_nondeterministic ini setting: 'roll_die' names no tool under test "
            "(tools: roll_dice); fix the name or remove the exemption"
        ]
    )
    with pytest.raises(SettingsError, match="'roll_die' names no tool under test"):
        check_tool("zoo_behaviour:DiceRollTool", nondeterministic=(("roll_die", "dice"),))


@pytest.mark.parametrize("setting", ["axm_strict", "axm_conformance"])
def test_a_switch_that_is_neither_true_nor_false_names_the_setting(
    pytester: pytest.Pytester, setting: str
) -> None:
    switched_on = () if setting == "axm_conformance" else ("--axm-conformance",)
    result = pytester.runpytest_subprocess(
        *switched_on, "--axm-tool=zoo_axm:SlugTool", "-o", f"{setting}=maybe"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: the {setting} ini setting: invalid truth value 'maybe'; use true or false"]
    )


def test_relative_paths_in_the_ini_are_read_from_the_ini_files_directory(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As pytest reads its own path settings: running from a subdirectory finds the same files.
    On the command line, a path is relative to where pytest runs."""
    pytester.makeini("[pytest]\naxm_worker_files = workspace\naxm_report = out/certificate.json\n")
    pytester.mkdir("workspace")
    (pytester.path / "workspace" / "notes.txt").write_text("a note\n")
    monkeypatch.chdir(pytester.mkdir("sub"))
    result = run(pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-check=name-valid")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "out" / "certificate.json").is_file()
    result = run(pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-worker-files=workspace")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--axm-worker-files: worker_files '*/sub/workspace' is not a*"])


def test_selecting_other_tests_by_path_leaves_the_tools_out(pytester: pytest.Pytester) -> None:
    """With the ini switch, the tools belong to the ini file's directory: a path or node id
    below it selects only its tests; no path, or the directory itself, certifies the tools too;
    a tool named on the command line is certified whatever the paths."""
    pytester.makeini("[pytest]\naxm_conformance = true\naxm_tools = zoo_axm:SlugTool\n")
    pytester.makepyfile(test_unit="def test_x():\n    assert True\n")
    pytester.mkdir("other")
    (pytester.path / "other" / "conftest.py").write_text("")
    plain = ("-p", "no:cacheprovider", "--axm-check=name-valid")
    only_tests = pytester.runpytest_subprocess(*plain, "test_unit.py::test_x")
    only_tests.assert_outcomes(passed=1)
    only_tests.stdout.no_fnmatch_line("*make_slug*")
    for paths in ((), (".",)):
        whole = pytester.runpytest_subprocess(*plain, *paths)
        whole.assert_outcomes(passed=2)
        whole.stdout.fnmatch_lines(["*make_slug (axm): NOT certified (partial*"])
    named = pytester.runpytest_subprocess(*plain, "--axm-tool=zoo_axm:SlugTool", "test_unit.py")
    named.assert_outcomes(passed=2)


def test_the_tools_run_beside_conftest_files_that_do_not_apply_to_them(
    pytester: pytest.Pytester,
) -> None:
    """pytest narrows its hooks per directory; the kit's plugins must survive that."""
    pytester.makepyfile(test_unit="def test_x():\n    assert True\n")
    pytester.mkdir("other")
    (pytester.path / "other" / "conftest.py").write_text("def pytest_runtest_setup(item): pass\n")
    result = run(pytester, "--axm-tool=zoo_axm:SlugTool", "--axm-check=name-valid", ".")
    result.assert_outcomes(passed=2)


def test_last_failed_and_xdist_work_per_check(pytester: pytest.Pytester) -> None:
    args = ("--axm-conformance", "--axm-tool=zoo_axm:MeanTool", "--axm-tool=zoo_axm:SlugTool")
    first = pytester.runpytest_subprocess(*args, "--axm-examples=10", "--axm-seed=3")
    again = pytester.runpytest_subprocess(*args, "--axm-examples=10", "--axm-seed=3", "--lf")
    counts = first.parseoutcomes()
    total = sum(counts.get(outcome, 0) for outcome in ("passed", "failed", "skipped"))
    again.assert_outcomes(failed=1, deselected=total - 1)
    again.stdout.fnmatch_lines(["FAILED mean::result-json*"])
    spread = pytester.runpytest_subprocess(
        *args, "--axm-examples=10", "--axm-seed=3", "-n", "2", "-p", "no:cacheprovider"
    )
    assert _tests(spread) == _tests(first)


def test_a_tool_budget_leaves_the_checks_it_cut_short_unjudged(pytester: pytest.Pytester) -> None:
    """A budget spent on calls that were served fails nothing: the slow tool is inconclusive,
    never certified on the checks it did not reach; a hang still fails where it happened."""
    result = run(
        pytester,
        "--axm-tool=zoo_hostile:SleepyTool",
        "--axm-tool=zoo_axm:PatientTool",
        "--axm-timeout=1",
        # 20 examples take the patient tool 4 s or more (0.2 s a call), past its 2 s budget.
        "--axm-tool-budget=2",
        "--axm-examples=20",
        "-rfs",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            "FAILED sleepy::call-completes*",
            "*not run: the tool's time budget of 2 s (--axm-tool-budget) ran out*",
            "patient_echo (axm): NOT certified (inconclusive)*",
        ]
    )
    summary = result.stdout.str().split("short test summary")[1]
    assert "FAILED patient_echo::" not in summary
    assert "FAILED sleepy::result-type" not in summary

    # A baseline's known failure of a check the budget cut short is neither known nor stale.
    entry = {"tool": "patient_echo", "check": "result-json", "reason": "known"}
    (pytester.path / "known.json").write_text(json.dumps({"known_failures": [entry]}))
    again = run(
        pytester,
        "--axm-tool=zoo_axm:PatientTool",
        "--axm-tool-budget=2",
        "--axm-examples=20",
        "--axm-baseline=known.json",
        "-rs",
    )
    assert again.ret == pytest.ExitCode.OK
    again.stdout.fnmatch_lines(
        ["*result-json: not run: *the baseline's known failure (known) was not judged in this run"]
    )


def test_validators_are_certified_per_keyword(pytester: pytest.Pytester) -> None:
    keywords = "--axm-validator-keywords=type,maxLength,additionalProperties,required"
    reference = run(pytester, "--axm-validator=axm_runtime.tool_use:validate_input", keywords)
    assert reference.ret == 0
    reference.stdout.fnmatch_lines_random(["*total*0*0*", "axm_runtime.tool_use:validate_input"])
    wrong = run(pytester, "--axm-validator=zoo_validators:max_length_in_bytes", keywords)
    assert wrong.ret == pytest.ExitCode.TESTS_FAILED
    wrong.stdout.fnmatch_lines_random(
        [
            "FAILED zoo_validators:max_length_in_bytes[[]maxLength[]]::suite*",
            "FAILED zoo_validators:max_length_in_bytes[[]maxLength[]]::differential*",
            # Shrunk within a time budget: how far depends on the machine's load.
            '  schema:     {"maxLength": 1*',
            "Reproduce with:",
        ]
    )
    assert "[type]::" not in wrong.stdout.str().split("short test summary")[1]
    bad = run(pytester, "--axm-validator=no_such_module:validate")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["ERROR: --axm-validator: *no_such_module*"])


def test_validator_tables_are_built_from_what_the_xdist_workers_found(
    pytester: pytest.Pytester,
) -> None:
    args = (
        "--axm-validator=zoo_validators:max_length_in_bytes",
        "--axm-validator-keywords=type,maxLength",
        "--axm-examples=30",
        "--axm-seed=1",
    )

    def table(result: pytest.RunResult) -> list[str]:
        lines = result.stdout.lines
        start = next(i for i, line in enumerate(lines) if "axm-conformance validators" in line)
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("="))
        return lines[start + 1 : end]

    maxlength = ["maxLength", "2020-12", "6", "1", "0", "0", "0", "0", "30", "1", "<-"]
    serial = run(pytester, *args)
    spread = run(pytester, *args, "-n", "2")
    assert _tests(spread) == _tests(serial) == {"failed": 2, "passed": 5}
    assert table(spread) == table(serial)
    assert any(line.split() == maxlength for line in table(serial))


def test_a_validator_draft_is_checked_and_shown(pytester: pytest.Pytester) -> None:
    args = ("--axm-validator=zoo_validators:max_length_in_bytes", "--axm-validator-keywords")
    unknown = run(pytester, *args, "type", "--axm-validator-draft=8")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(
        ["ERROR: --axm-validator-draft: unknown JSON Schema draft '8': use one of 4, 6, 7, *"]
    )
    draft7 = "http://json-schema.org/draft-07/schema#"
    contradicted = run(pytester, *args, draft7, "--axm-validator-draft=4")
    assert contradicted.ret == pytest.ExitCode.USAGE_ERROR
    contradicted.stderr.fnmatch_lines(["ERROR: --axm-validator-draft: draft 4, but *draft 7*"])
    named = run(pytester, *args, draft7, "--collect-only", "-q")
    named.stdout.fnmatch_lines_random(["*[[]dependencies[]]::suite", "*[[]if-then-else[]]::*"])
    assert "prefixItems" not in named.stdout.str()
    shown = run(pytester, *args, "type", "--axm-validator-draft=6", "--axm-examples=10")
    shown.stdout.fnmatch_lines(["type  *6  *"])


def _tests(result: pytest.RunResult) -> dict[str, int]:
    """The outcome counts of the items, without pytest's count of warnings."""
    return {key: value for key, value in result.parseoutcomes().items() if key != "warnings"}


def test_a_validator_that_hangs_costs_one_pair(pytester: pytest.Pytester) -> None:
    hangs = "--axm-validator=zoo_validators:hangs_on_contains"
    claim = "--axm-validator-keywords=contains,type"
    result = run(
        pytester, hangs, claim, "--axm-timeout=1", "--axm-examples=20", "-k", "differential"
    )
    outcomes = _tests(result)
    assert (outcomes["failed"], outcomes["passed"]) == (1, 1)  # contains, then type
    result.stdout.fnmatch_lines_random(
        [
            "FAILED zoo_validators:hangs_on_contains[[]contains[]]::differential*",
            "*: contains: crashed timeout: *did not return within 1*",
            '  schema:     {"contains": *',
            "  instance:   *",
            "contains  *2020-12*20  1  <-",
        ]
    )
