"""A check of a project's own, registered through the public check API as
``conformance/custom-checks.md`` shows it: the page's example, copied as a user would, catches a
tool that breaks its invariant and passes one that keeps it, with the kit's reports."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from axm_conformance import check
from axm_conformance._checks import CHECKS
from axm_conformance.protocols import groups

PAGE = Path(__file__).resolve().parents[2] / "conformance" / "custom-checks.md"

TOOLS = """
from axm_runtime.axm import ToolResult, validated


class LeakyReportTool:
    name = "leaky_report"

    @validated
    def execute(self, *, topic: str) -> ToolResult:
        key = "sk-" + "a1" * 12
        return ToolResult(success=True, data={"report": f"{topic}: done", "auth": key})


class ReportTool:
    name = "report"

    @validated
    def execute(self, *, topic: str) -> ToolResult:
        return ToolResult(success=True, data={"report": f"{topic}: done"})
"""


def example() -> str:
    """The first Python block of the page, as a user copies it into a conftest.py."""
    found = re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert found is not None, "custom-checks.md has no Python example"
    return found.group(1)


@pytest.mark.slow
def test_the_documented_check_fails_the_tool_that_breaks_it_and_passes_the_other(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(example())
    pytester.makepyfile(report_tools=TOOLS)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--axm-conformance",
        "--axm-tool=report_tools:LeakyReportTool",
        "--axm-tool=report_tools:ReportTool",
        "--axm-check=no-api-key-in-results",
        "--axm-examples=10",
        "--axm-report=cert.json",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*returned what looks like an API key (sk-a1...) to the model*"])
    tools = {
        tool["name"]: tool
        for tool in json.loads((pytester.path / "cert.json").read_text())["tools"]
    }
    verdicts = {
        name: {check["id"]: check["outcome"] for check in tool["checks"]}
        for name, tool in tools.items()
    }
    assert verdicts == {
        "leaky_report": {"no-api-key-in-results": "failed"},
        "report": {"no-api-key-in-results": "passed"},
    }


def test_a_check_is_listed_with_its_group_whenever_it_is_registered() -> None:
    @check("test-name-is-short", "structure")
    def name_is_short(subject: object, context: object) -> Iterator[str]:
        """The name is short."""
        yield from ()

    try:
        registered = list(CHECKS.values())
        order = [groups().index(each.group) for each in registered]
        assert order == sorted(order)
        assert CHECKS["test-name-is-short"].title == "The name is short."
    finally:
        del CHECKS["test-name-is-short"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"group": "nowhere"}, "an unknown group 'nowhere' (known: server, structure, "),
        ({"considers": ("served",)}, "an unknown status 'served' to consider (known: returned, "),
        ({"feed": "everything"}, "an unknown feed 'everything' (known: valid, invalid, "),
        ({"requires": ("telepathy",)}, "an unknown capability 'telepathy' (known: "),
        ({"id": "call-completes"}, "id 'call-completes' is registered twice"),
    ],
)
def test_a_registration_that_names_anything_unknown_says_what_is_known(
    arguments: dict[str, object], message: str
) -> None:
    given: dict[str, object] = {"id": "test-unknown", "group": "results", **arguments}
    with pytest.raises(ValueError, match=re.escape(message)):
        check(**given)  # type: ignore[arg-type]
    assert "test-unknown" not in CHECKS
