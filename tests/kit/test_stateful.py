"""Defects that only a call after another tool's shows, in a server's tools and in a module's:
each found at the fixture zoo's three seeds at the default examples, reported with the calls
before it, and no correct twin accused."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from axm_conformance import check_tool
from axm_conformance._failure import format_failure
from axm_conformance._report import ToolReport
from axm_conformance._settings import Settings
from tests.conftest import FIXTURES
from tests.kit.test_fixture_zoo import SEEDS

SERVER = shlex.join([sys.executable, str(FIXTURES / "mcp_servers" / "state_server.py")])


def tools_of(command: str, *names: str) -> list[str]:
    return [f"mcp:{command}[{name}]" for name in names]


# (the tools certified, the first of them the one judged; the defect that makes it fail, as
# the argument of the server or the defective twin's reference; the check it fails; the tool
# whose call must come before the failure, "" when the value alone suffices)
DEFECTS: list[tuple[str, list[str], list[str], str, str]] = [
    (
        "server-reader-bound",
        tools_of(f"{SERVER} --defect reader-bound", "read_sheet", "write_sheet"),
        tools_of(SERVER, "read_sheet", "write_sheet"),
        "schema-tells-truth",
        "write_sheet",
    ),
    (
        "server-lookup-writes",
        tools_of(f"{SERVER} --defect lookup-writes", "lookup_term", "list_terms", "recent_lookups"),
        tools_of(SERVER, "lookup_term", "list_terms", "recent_lookups"),
        "read-only-honoured",
        "",
    ),
    (
        "server-lookup-logs",
        tools_of(f"{SERVER} --defect lookup-logs", "lookup_term", "list_terms"),
        tools_of(SERVER, "lookup_term", "list_terms"),
        "read-only-honoured",
        "",
    ),
    (
        "server-getter-crashes",
        tools_of(f"{SERVER} --defect getter-crashes", "get_record", "create_record"),
        tools_of(SERVER, "get_record", "create_record"),
        "no-error-response",
        "create_record",
    ),
    (
        "module-reader-bound",
        ["zoo_together:ReadSheetTool", "zoo_together:WriteSheetTool"],
        ["zoo_together:ReadCellsTool", "zoo_together:WriteSheetTool"],
        "schema-tells-truth",
        "write_sheet",
    ),
    (
        "module-getter-crashes",
        ["zoo_together:GetRecordTool", "zoo_together:CreateRecordTool"],
        ["zoo_together:FetchRecordTool", "zoo_together:CreateRecordTool"],
        "no-unexpected-exception",
        "create_record",
    ),
]
RUNS = [(defect, seed) for defect in DEFECTS for seed in SEEDS]


def judged(refs: list[str], check: str, seed: int) -> ToolReport:
    report = check_tool(refs, checks=(check,), seed=seed, timeout=2.0)
    return next(tool for tool in report.tools if tool.subject.ref == refs[0])


@pytest.mark.slow
@pytest.mark.parametrize(("defect", "seed"), RUNS, ids=[f"{d[0]}-{s}" for d, s in RUNS])
def test_a_defect_behind_another_tool_is_found_with_the_calls_before_it(
    defect: tuple[str, list[str], list[str], str, str], seed: int
) -> None:
    _, defective, _, check, before = defect
    tool = judged(defective, check, seed)
    (outcome,) = tool.outcomes
    assert outcome.status == "failed", outcome.messages
    names = [name for _, name, _ in outcome.before]
    assert names == ([before] if before else [])
    report = format_failure(tool, outcome, Settings())
    if before:
        assert f"  after:    1. {before}(" in report


# The correct twins are certified at the three seeds, with every check, by the fixture zoo
# (fixtures/manifest.toml) and the fixture servers' test (the correct state_server); here they
# are held to the defect's check at the default examples once.
@pytest.mark.slow
@pytest.mark.parametrize("defect", DEFECTS, ids=[defect[0] for defect in DEFECTS])
def test_the_correct_twin_of_a_defect_behind_another_tool_passes(
    defect: tuple[str, list[str], list[str], str, str],
) -> None:
    _, _, correct, check, _ = defect
    twin = judged(correct, check, SEEDS[0])
    assert [item.status for item in twin.outcomes] == ["passed"], twin.outcomes[0].messages


@pytest.mark.slow
def test_a_sequence_failure_is_reproduced_by_its_pytest_command(pytester: pytest.Pytester) -> None:
    """The reproduction a report gives re-runs the check on the tools of the run: the calls
    before the failure are made again, and it fails the same way."""
    _, defective, _, check, before = next(d for d in DEFECTS if d[0] == "server-getter-crashes")
    tool = judged(defective, check, SEEDS[0])
    (outcome,) = tool.outcomes
    command = format_failure(tool, outcome, Settings()).split("Reproduce with:\n")[1]
    arguments = shlex.split(command.splitlines()[0])[1:]
    assert [word for word in arguments if word.startswith("--axm-tool=")] == [
        f"--axm-tool={ref}" for ref in defective
    ]
    result = pytester.runpytest_subprocess(*arguments, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    assert f"after:    1. {before}(" in result.stdout.str()


def test_every_defect_has_a_correct_twin_of_the_same_tools() -> None:
    for name, defective, correct, _, _ in DEFECTS:
        assert len(defective) == len(correct) and defective != correct, name


GROUP = shlex.join([sys.executable, str(FIXTURES / "mcp_servers" / "group_server.py")])


def reproduced(pytester: pytest.Pytester, tool: ToolReport, check: str) -> pytest.RunResult:
    """The reproduction a report prints for ``tool``'s failure of ``check``, run as printed."""
    outcome = tool.outcome(check)
    command = format_failure(tool, outcome, Settings()).split("Reproduce with:\n")[1]
    arguments = shlex.split(command.splitlines()[0])[1:]
    return pytester.runpytest_subprocess(*arguments, "-p", "no:cacheprovider")


@pytest.mark.slow
def test_the_call_that_kills_the_server_is_blamed_not_the_next(
    pytester: pytest.Pytester,
) -> None:
    """crash_group's count 0 answers, and the server dies at the next message: the call after
    it, whichever tool's, crashes. Only crash_group fails (state-stays-usable, after its count
    0); echo's crash after it is not judged, and its reproduction, run as printed, fails again.
    (The fixture servers' manifest holds the verdicts at each of the three seeds.)"""
    refs = tools_of(f"{GROUP} --defect dies-after-answering", "crash_group", "echo")
    report = check_tool(refs, seed=SEEDS[0], timeout=2.0)
    crash_group, echo = (
        next(tool for tool in report.tools if tool.subject.name == name)
        for name in ("crash_group", "echo")
    )
    assert [outcome.check_id for outcome in crash_group.failed] == ["state-stays-usable"]
    outcome = crash_group.outcome("state-stays-usable")
    assert [(name, value) for _, name, value in outcome.before] == [("crash_group", {"count": 0})]
    assert echo.verdict.verdict == "certified", [o.messages for o in echo.failed]
    again = reproduced(pytester, crash_group, "state-stays-usable")
    assert "FAILED crash_group::state-stays-usable" in again.stdout.str(), again.stdout.str()
    assert "after:    1. crash_group(" in again.stdout.str()


@pytest.mark.slow
@pytest.mark.usefixtures("fixtures_on_path")
def test_the_call_that_breaks_the_store_is_blamed_with_a_reproduction_that_fails_again(
    pytester: pytest.Pytester,
) -> None:
    """add_todo({"text": ""}) leaves the store unreadable: add_todo fails state-stays-usable
    with that call as its one step; the pytest command it prints finds it again, and the
    Python it prints, run in a directory of its own, shows the store broken."""
    report = check_tool(["zoo_store:AddTodoTool"], seed=SEEDS[0])
    (tool,) = report.tools
    assert [outcome.check_id for outcome in tool.failed] == ["state-stays-usable"]
    again = reproduced(pytester, tool, "state-stays-usable")
    assert "FAILED add_todo::state-stays-usable" in again.stdout.str(), again.stdout.str()
    code = format_failure(tool, tool.outcome("state-stays-usable"), Settings())
    snippet = code.split("or in Python:\n")[1]
    lines = [line[4:] for line in snippet.splitlines() if line.startswith("    ")]
    completed = subprocess.run(
        [sys.executable, "-c", "\n".join(lines)],
        capture_output=True,
        text=True,
        cwd=pytester.path,
        timeout=60,
        check=False,
    )
    assert "Failed to load todos" in completed.stdout, completed
