"""The report of a failure, as a person reads it: long values elided, kept whole elsewhere."""

from __future__ import annotations

import ast
import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._certificate import (
    BaselineError,
    KnownFailure,
    RecordError,
    baseline_of,
    certificate,
    item_record,
    read_baseline,
    unloadable_record,
    write_json,
)
from axm_conformance._failure import elided, format_failure, stderr_tail
from axm_conformance._jsonable import jsonable
from axm_conformance._options import OPTIONS
from axm_conformance._outcomes import Evidence, Finding, Status, failure, warning
from axm_conformance._process.system import _sandbox
from axm_conformance._report import Outcome, ToolReport
from axm_conformance._settings import Settings
from axm_conformance.protocols import capabilities
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


def test_a_long_stderr_tail_keeps_its_last_lines_saying_what_was_left_out() -> None:
    """66 lines of 150 bytes: the last 12, under a line that counts the 54 before them."""
    written = "\n".join(f"{n:02} " + "w" * 147 for n in range(1, 67)) + "\n"
    shown = stderr_tail(written).splitlines()
    assert shown[0] == "... 54 earlier lines (8.2 kB) left out"
    assert shown[1:] == written.splitlines()[-12:]


def test_a_stderr_tail_is_cut_to_its_bytes_keeping_at_least_its_last_line() -> None:
    wide = ["x" * 900, "y" * 900, "z" * 900]
    assert stderr_tail("\n".join(wide)).splitlines() == [
        "... 1 earlier line (901 bytes) left out",
        *wide[1:],
    ]
    assert stderr_tail("\n".join(["a", "b" * 5_000])).splitlines() == [
        "... 1 earlier line (2 bytes) left out",
        "b" * 5_000,
    ]


def test_a_short_stderr_tail_is_shown_whole() -> None:
    assert stderr_tail("Traceback:\n  boom\nValueError: x\n\n") == (
        "Traceback:\n  boom\nValueError: x"
    )
    assert stderr_tail("") == ""


def test_the_certificate_keeps_the_whole_value() -> None:
    tool, outcome = failed_on_a_long_input()
    check = item_record(tool, outcome, Settings())["check"]
    assert check["failure"]["input"] == {"text": LONG}
    assert check["findings"] == [
        {
            "text": f"raised ValueError: {LONG}",
            "severity": "failure",
            "kind": "",
            "at": "",
            "data": {},
        }
    ]


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


def reproduced(settings: Settings) -> tuple[list[str], str]:
    """The pytest command's arguments and the Python code of a failure found with ``settings``."""
    tool, outcome = failed_on_a_long_input()
    lines = format_failure(tool, outcome, settings).split("Reproduce with:\n")[1].splitlines()
    assert lines[1] == "or in Python:"
    return shlex.split(lines[0]), "\n".join(line.removeprefix("    ") for line in lines[2:])


def called(code: str, function: str) -> tuple[list[Any], dict[str, Any]]:
    """The literal arguments of the one call of ``function`` in ``code``."""
    (call,) = [
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function
    ]
    positional = [ast.literal_eval(argument) for argument in call.args]
    return positional, {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}


def settings_of(arguments: list[str]) -> Settings:
    """The settings a pytest command gives, read through the options table as the plugin
    reads it."""
    given: dict[str, list[str]] = {}
    for argument in arguments:
        flag, _, text = argument.partition("=")
        given.setdefault(flag, []).append(text)
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if option.setting and option.flag in given:
            texts = given[option.flag]
            values[option.setting] = (
                True if option.switch else option.parse(texts if option.repeatable else texts[0])
            )
    return Settings(**values)


# Every setting of a run away from its default, but those a reproduction leaves out: the check
# and the seed (it gives the failure's own), ``sys_path`` (where this process imports from),
# ``nondeterministic`` and ``long_lived`` (exemptions by name, which apply to no failure and
# name other tools).
EVERY_SETTING: dict[str, Any] = {
    "examples": 7,
    "timeout": 2.5,
    "protocol": "axm",
    "name_pattern": "^[a-z_]+$",
    "max_result_bytes": 4096,
    "memory_limit": None,
    "strict": True,
    "tool_budget": 60.0,
    "worker_user": "nobody",
    "allow_root": True,
    "server_env": (("TOKEN", "a b"), ("MODE", "x=1")),
    "server_headers": (("X-Tenant", "blue sky"), ("X-Mode", "a=b")),
    "server_token_env": "EXAMPLE_TOKEN",
    "http_path": "/sse",
    "auth": "local",
    "pace": 0.5,
    "sandbox": "off",
    "network": ("shout",),
    "clients": ("openai", "gemini-parameters"),
}
LEFT_OUT = {"checks", "seed", "sys_path", "nondeterministic", "long_lived"}


def test_a_reproduction_is_decided_for_every_setting() -> None:
    """A new setting fails here until it is carried (below) or left out (with why)."""
    named = {field.name for field in dataclasses.fields(Settings)}
    assert named == {*EVERY_SETTING, "worker_files", *LEFT_OUT}


def test_both_reproductions_carry_every_setting_that_changes_what_the_run_finds(
    tmp_path: Path,
) -> None:
    """Read back, the pytest command and the check_tool call give the run's settings, with
    the failing check and the tool's seed."""
    run = Settings(**EVERY_SETTING, worker_files=str(tmp_path))
    command, code = reproduced(run)
    assert command[:2] == ["pytest", "--axm-conformance"]
    assert "--axm-check=no-unexpected-exception" in command and "--axm-seed=1" in command
    assert settings_of(command) == run
    (ref,), keywords = called(code, "check_tool")
    assert ref == "tools:WordCountTool"
    assert keywords.pop("checks") == ("no-unexpected-exception",)
    assert keywords.pop("seed") == 1
    assert Settings(**keywords) == run


def test_the_settings_of_a_contained_run_reach_both_reproductions(tmp_path: Path) -> None:
    files = tmp_path / "notes files"
    files.mkdir()
    run = Settings(
        worker_user="nobody",
        worker_files=str(files),
        server_env=(("API_TOKEN", "t0k en"),),
        timeout=2.0,
        protocol="axm",
    )
    command, code = reproduced(run)
    for option in [
        "--axm-worker-user=nobody",
        f"--axm-worker-files={files}",
        "--axm-server-env=API_TOKEN=t0k en",
        "--axm-timeout=2.0",
        "--axm-protocol=axm",
    ]:
        assert option in command
    _, keywords = called(code, "check_tool")
    assert keywords == {
        "checks": ("no-unexpected-exception",),
        "seed": 1,
        "worker_user": "nobody",
        "worker_files": str(files),
        "server_env": (("API_TOKEN", "t0k en"),),
        "timeout": 2.0,
        "protocol": "axm",
    }


@pytest.mark.parametrize(
    "setting",
    [
        {"worker_user": "nobody"},
        {"worker_files": "."},
        {"server_env": (("A", "1"),)},
        {"allow_root": True},
    ],
    ids=lambda setting: next(iter(setting)),
)
def test_a_run_contained_beyond_this_process_is_not_reproduced_by_a_bare_call(
    setting: dict[str, Any],
) -> None:
    """As another user, on copies of files, in an added environment or calling as root what
    writes files: the Python goes through check_tool and the worker, never load_tool."""
    _, code = reproduced(Settings(**setting))
    called(code, "check_tool")
    assert "load_tool(" not in code.split("#")[0] and "tool.execute" not in code
    assert code.splitlines()[-1].startswith("# through the kit's worker, contained as the run was")


def test_defaults_are_left_out_of_both_reproductions() -> None:
    command, code = reproduced(Settings())
    assert command == [
        "pytest",
        "--axm-conformance",
        "--axm-tool=tools:WordCountTool",
        "--axm-check=no-unexpected-exception",
        "--axm-seed=1",
    ]
    assert called(code, "load_tool") == (["tools:WordCountTool"], {})


def test_a_call_in_this_process_says_it_is_not_contained_and_keeps_the_protocol() -> None:
    """A forced protocol loads the tool as the run did; the worker's limits, which a call here
    lacks, stay with the pytest command."""
    command, code = reproduced(Settings(protocol="axm", timeout=2.0, sandbox="off"))
    assert "--axm-protocol=axm" in command and "--axm-timeout=2.0" in command
    assert called(code, "load_tool") == (["tools:WordCountTool"], {"protocol": "axm"})
    assert code.splitlines()[-1] == (
        "# uncontained, in this process: as you, in the current directory, with no timeout or "
        "memory limit; the pytest command runs it contained, as the run did"
    )


def test_a_call_in_this_process_says_it_leaves_the_sandbox_the_run_had(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_sandbox, "support", lambda: "")
    command, code = reproduced(Settings())
    assert not any(word.startswith("--axm-sandbox") for word in command)
    assert code.splitlines()[-1].startswith(
        "# uncontained, in this process: outside the sandbox the run had, as you"
    )


def test_a_stderr_tail_keeps_the_processs_last_report_of_its_death_whole() -> None:
    """A fatal error's stacks list the innermost frame first: cut to its last lines, the report
    would lose what killed the process and where."""
    noise = [f"log line {n}" for n in range(30)]
    report = [
        "Fatal Python error: Segmentation fault",
        "",
        "Current thread 0x7f (most recent call first):",
        *(f'  File "tool.py", line {n} in execute' for n in range(20)),
    ]
    tail = stderr_tail("\n".join([*noise, *report]))
    assert tail.splitlines() == ["... 30 earlier lines (350 bytes) left out", *report]
    # A report too long to keep whole is cut as any tail is.
    long = ["Traceback (most recent call last):", *(f"  frame {n}" for n in range(100))]
    assert len(stderr_tail("\n".join(long)).splitlines()) == 13


def failed_after_steps(**overrides: Any) -> tuple[ToolReport, Outcome]:
    """A failure of ``get_record`` found after ``create_record`` made the record it reads."""
    evidence = Evidence(
        {"id": 1001},
        "after create_record",
        before=(("tools:CreateRecordTool", "create_record", {"title": ""}),),
    )
    outcome = Outcome(
        "no-unexpected-exception",
        "A valid input raises only what the protocol lets escape.",
        Status.FAILED,
        (Finding("raised IndexError", evidence=evidence),),
        examples=1,
        evidence=evidence,
    )
    tool = subject(ref="tools:GetRecordTool", name="get_record", **overrides)
    together = ("tools:CreateRecordTool", "tools:ListRecordsTool")
    return ToolReport(tool, "get_record", (outcome,), seed=1, together=together), outcome


def test_a_failure_after_other_tools_shows_their_calls_first_and_makes_them_in_python() -> None:
    tool, outcome = failed_after_steps()
    report = format_failure(tool, outcome, Settings(sandbox="off"))
    assert '  after:    1. create_record({"title": ""})' in report.splitlines()
    # The pytest command certifies the tool with the same tools of its home, among which its
    # sequences are drawn again from the same seed.
    command = shlex.split(report.split("Reproduce with:\n")[1].splitlines()[0])
    assert [word for word in command if word.startswith("--axm-tool=")] == [
        "--axm-tool=tools:GetRecordTool",
        "--axm-tool=tools:CreateRecordTool",
        "--axm-tool=tools:ListRecordsTool",
    ]
    assert report.index("after:") < report.index("input:")
    code = "\n".join(
        line.removeprefix("    ") for line in report.split("or in Python:\n")[1].splitlines()
    )
    lines = code.splitlines()
    loads = [line for line in lines if line.startswith("tool = load_tool(")]
    assert loads == [
        "tool = load_tool('tools:CreateRecordTool')",
        "tool = load_tool('tools:GetRecordTool')",
    ]
    # The steps' call comes before the failure's, each on the tool loaded just before it.
    assert lines.index("print(tool.execute(**{'title': ''}))") < lines.index(
        "print(tool.execute(**{'id': 1001}))"
    )
    record = item_record(tool, outcome, Settings(sandbox="off"))
    assert record["check"]["failure"]["before"] == [
        {"tool": "tools:CreateRecordTool", "name": "create_record", "input": {"title": ""}}
    ]


def test_a_failure_after_other_tools_of_a_server_is_reproduced_through_the_worker() -> None:
    """A load_tool per tool of a server would start a server each: the calls before the
    failure would not reach its world."""
    served = frozenset(capabilities()) - {"in-process"}
    tool, outcome = failed_after_steps(protocol="mcp", capabilities=served)
    report = format_failure(tool, outcome, Settings(sandbox="off"))
    code = report.split("or in Python:\n")[1]
    assert "check_tool(" in code and "load_tool(" not in code
    lines = [line.removeprefix("    ") for line in code.splitlines()]
    assert called("\n".join(lines), "check_tool")[0] == [
        ["tools:GetRecordTool", "tools:CreateRecordTool", "tools:ListRecordsTool"]
    ]
    assert "makes the calls before it on the same server" in code


def test_a_lone_surrogate_in_a_finding_or_a_certificate_is_written_as_its_escape(
    tmp_path: Path,
) -> None:
    """What a tool returned or a server wrote may hold a lone surrogate: every report takes it
    as an escape, which inside a JSON string is the same string."""
    assert failure("echoed 'x\ud83dy'").text == "echoed 'x\\ud83dy'"
    path = tmp_path / "certificate.json"
    write_json(path, {"input": "x\ud83dy", "name": "Zürich"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"input": "x\ud83dy", "name": "Zürich"}


def test_a_result_holding_a_lone_surrogate_is_not_strict_json() -> None:
    rendered, problems = jsonable({"text": "half an emoji \ud83d"})
    assert rendered == {"text": "half an emoji \ufffd"}
    assert problems == [
        "$.text: holds the lone UTF-16 surrogate '\\ud83d', which is no Unicode text: UTF-8 "
        "encoders and pydantic's str refuse it"
    ]


def test_a_finding_keeps_its_kind_place_and_facts_and_a_baseline_knows_it_by_kind() -> None:
    """What a finding is, where and with what facts is data in the certificate; a baseline
    written from it knows the failure by the kind of the findings that failed the check, and a
    failure of another kind is new."""
    tool, outcome = failed_on_a_long_input()
    typed = failure("raised ValueError", kind="crash", at="/text", data={"exception": "E"})
    kinded = dataclasses.replace(outcome, findings=(warning("and this", kind="absorbed"), typed))
    record = item_record(tool, kinded, Settings())
    assert record["check"]["findings"][1] == {
        "text": "raised ValueError",
        "severity": "failure",
        "kind": "crash",
        "at": "/text",
        "data": {"exception": "E"},
    }
    # The warning came first, but the failure is what failed the check.
    (entry,) = baseline_of([record, unloadable_record("gone:tool", "boom")])["known_failures"]
    assert entry == {
        "tool": "word_count",
        "check": "no-unexpected-exception",
        "reason": "and this",
        "kind": "crash",
    }
    known = KnownFailure(entry["reason"], kind=entry["kind"])
    assert known.is_among(kinded.findings)
    assert not known.is_among((failure("raised ValueError", kind="not-allowed"),))
    # A kind only a warning has is not what failed a check that has failures.
    assert not KnownFailure("", kind="absorbed").is_among(kinded.findings)
    assert not KnownFailure("", kind="crash", finding="and this").is_among(kinded.findings)
    assert known.wanted == "a finding of kind 'crash'"
    # Failed by findings of two kinds, a check is known as a whole: fixing one is no new failure.
    two = dataclasses.replace(outcome, findings=(typed, failure("also", kind="not-allowed")))
    (whole,) = baseline_of([item_record(tool, two, Settings())])["known_failures"]
    assert "kind" not in whole


def test_a_baseline_entry_of_the_wrong_shape_is_named(tmp_path: Path) -> None:
    baseline = tmp_path / "known.json"
    entry = {"tool": "t", "check": "c", "reason": "r", "kind": 3}
    baseline.write_text(json.dumps({"known_failures": [entry]}))
    with pytest.raises(BaselineError, match=r"is not \{tool, check, reason\[, kind\]"):
        read_baseline(baseline)
    baseline.write_text(json.dumps({"known_failures": [{**entry, "kind": "timeout"}]}))
    assert read_baseline(baseline)[("t", "c")] == KnownFailure("r", kind="timeout")


def test_the_certificate_keeps_each_findings_severity() -> None:
    """What fails and what only warns is data in the certificate, not words to read back."""
    tool, outcome = failed_on_a_long_input()
    mixed = dataclasses.replace(
        outcome, findings=(*outcome.findings, warning("also this, a warning"))
    )
    check = item_record(tool, mixed, Settings())["check"]
    assert [found["severity"] for found in check["findings"]] == ["failure", "warning"]
