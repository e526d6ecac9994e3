"""The report of a failure, as a person reads it: long values elided, kept whole elsewhere."""

from __future__ import annotations

import pytest

from axm_conformance._certificate import RecordError, certificate, item_record
from axm_conformance._failure import elided, format_failure
from axm_conformance._outcomes import Evidence, Finding, Status
from axm_conformance._report import Outcome, ToolReport
from axm_conformance._settings import Settings
from tests.unit.factories import subject

LONG = "A" * 4_000 + "the end"


def failed_on_a_long_input() -> tuple[ToolReport, Outcome]:
    """A failure whose input, message and traceback all carry a 4,000-character value."""
    evidence = Evidence(
        {"text": LONG}, "generated", f'  File "tools.py", line 3\nValueError: {LONG}'
    )
    outcome = Outcome(
        "no-unexpected-exception",
        "A valid input raises only what the protocol lets escape.",
        Status.FAILED,
        (Finding(f"raised ValueError: {LONG}", evidence=evidence),),
        examples=1,
        evidence=evidence,
    )
    return ToolReport(subject(), "word_count", (outcome,), seed=1), outcome


def test_a_long_text_keeps_its_start_and_its_end() -> None:
    shown = elided(LONG, 300)
    assert shown.startswith("A" * 200) and shown.endswith("the end")
    assert "(3,707 characters left out)" in shown
    assert elided("short", 300) == "short"


def test_every_line_of_a_report_is_elided_but_the_reproduction() -> None:
    tool, outcome = failed_on_a_long_input()
    report = format_failure(tool, outcome, Settings())
    reproduction = report.split("Reproduce with:")[1]
    for line in report.split("Reproduce with:")[0].splitlines():
        assert len(line) < 1_100, line[:80]
    assert report.count("characters left out") == 3  # input, message, traceback
    assert report.count("the end") == 3 + 1  # and whole in the reproduction's Python
    assert f"{{'text': '{LONG}'}}" in reproduction


def test_the_certificate_keeps_the_whole_value() -> None:
    tool, outcome = failed_on_a_long_input()
    failure = item_record(tool, outcome, Settings())["check"]["failure"]
    assert failure["input"] == {"text": LONG}
    assert failure["messages"] == [f"raised ValueError: {LONG}"]


@pytest.mark.parametrize(
    ("protocol", "check_id", "hint"),
    [
        ("axm", "invalid-input-handled", "decorate execute with axm_runtime.axm.validated"),
        ("axio", "description-present", "from description=, else from the handler's docstring"),
        ("tool_use", "description-present", "the first paragraph of the function's docstring"),
        ("amplifier", "description-present", "the tool's description property"),
    ],
)
def test_a_report_ends_its_account_with_the_protocols_hint(
    protocol: str, check_id: str, hint: str
) -> None:
    outcome = Outcome(check_id, "title", Status.FAILED, (Finding("found"),))
    tool = ToolReport(subject(protocol=protocol), "word_count", (outcome,), seed=1)
    report = format_failure(tool, outcome, Settings())
    (line,) = [line for line in report.splitlines() if line.startswith("  hint:")]
    assert hint in line
    other = Outcome("result-json", "title", Status.FAILED, (Finding("found"),))
    assert "hint:" not in format_failure(tool, other, Settings())


def test_a_record_of_another_version_is_not_assembled() -> None:
    """Records cross pytest-xdist's channel: one written by another version of the kit is
    refused, with a line that says why, rather than misread."""
    tool, outcome = failed_on_a_long_input()
    record = item_record(tool, outcome, Settings())
    assert certificate([record], Settings(), seed=1)["summary"]["failed"] == 1
    with pytest.raises(RecordError, match="every process of a run must use the same version"):
        certificate([{**record, "version": 1}], Settings(), seed=1)
