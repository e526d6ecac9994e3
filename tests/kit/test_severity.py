"""The severity rule, judged in process on hand-built calls: a finding fails a tool only where
the protocol's runtime does not absorb it, or where it shows the tool cannot serve a valid input;
what the runtime absorbs is a warning that names what absorbs it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import zoo_amplifier
import zoo_axio
import zoo_axm
import zoo_tool_use
from axm_conformance._checks import CHECKS, CheckContext
from axm_conformance._observation import (
    Call,
    ExceptionInfo,
    Observation,
    ResultFacts,
    SubjectInfo,
)
from axm_conformance._outcomes import Finding, Severity
from axm_conformance.protocols import protocol_for

SUBJECTS: dict[str, SubjectInfo] = {
    "axm": protocol_for(zoo_axm.SlugTool(), "zoo_axm:SlugTool").describe(),
    "amplifier": protocol_for(zoo_amplifier.TodoTool(), "zoo_amplifier:TodoTool").describe(),
    "axio": protocol_for(zoo_axio.convert_length, "zoo_axio:convert_length").describe(),
    "tool_use": protocol_for(
        zoo_tool_use.celsius_to_kelvin, "zoo_tool_use:celsius_to_kelvin"
    ).describe(),
}
ABSORBERS = {
    "axm": "AXM's MCP layer turns an exception escaping execute into a failed result",
    "amplifier": "Amplifier's orchestrator turns an exception escaping execute into an error",
}
VALIDATION = "AXM's MCP layer validates arguments against the input schema before execute"


def exception(
    name: str, origin: str, *, bases: tuple[str, ...] = ("Exception",), **more: Any
) -> ExceptionInfo:
    return ExceptionInfo(
        type_name=name,
        qualified_name=f"builtins.{name}",
        ancestors=(name, *bases, "BaseException", "object"),
        message="it went wrong",
        traceback="",
        is_exception="Exception" in bases,
        origin=origin,  # type: ignore[arg-type]
        raised_in="tools.execute",
        **more,
    )


def raised(protocol: str, error: ExceptionInfo, *, invalid: bool = False) -> Call:
    """A call of ``protocol``'s tool that raised ``error``: for axio, wrapped in HandlerError."""
    if protocol == "axio" and error.is_exception:
        error = exception("HandlerError", "other", bases=("ToolError", "Exception"), cause=error)
    return Call({"x": 1}, Observation(status="raised", exception=error), invalid=invalid)


def judge(check_id: str, protocol: str, call: Call) -> list[Finding]:
    check = CHECKS[check_id]
    return list(check.findings(SUBJECTS[protocol], call, CheckContext(settings=None)))


def verdict(findings: list[Finding]) -> str:
    if not findings:
        return "passes"
    warns = all(finding.severity is Severity.WARNING for finding in findings)
    return "warns" if warns else "fails"


# An exception escaping a valid call, by origin and protocol.
VALID = {
    "os": {"axm": "warns", "amplifier": "warns", "axio": "passes", "tool_use": "passes"},
    "raise": {"axm": "warns", "amplifier": "warns", "axio": "passes", "tool_use": "passes"},
    "other": {"axm": "fails", "amplifier": "fails", "axio": "fails", "tool_use": "fails"},
}


@pytest.mark.parametrize("protocol", list(SUBJECTS))
@pytest.mark.parametrize("origin", list(VALID))
def test_an_exception_on_a_valid_input_is_judged_by_its_origin(origin: str, protocol: str) -> None:
    findings = judge(
        "no-unexpected-exception", protocol, raised(protocol, exception("ValueError", origin))
    )
    assert verdict(findings) == VALID[origin][protocol], findings
    if verdict(findings) == "warns":
        assert ABSORBERS[protocol] in findings[0].text
        assert "return a failed ToolResult instead" in findings[0].text
    if origin == "other":
        assert "a crash in tools.execute" in findings[0].text
        assert "the tool cannot serve an input its schema allows" in findings[0].text


@pytest.mark.parametrize("protocol", list(SUBJECTS))
def test_a_base_exception_always_fails(protocol: str) -> None:
    quit = exception("SystemExit", "raise", bases=())
    assert verdict(judge("no-unexpected-exception", protocol, raised(protocol, quit))) == "fails"


def test_the_warning_says_where_the_exception_came_from() -> None:
    (refused,) = judge("no-unexpected-exception", "axm", raised("axm", exception("OSError", "os")))
    assert refused.text.startswith(
        "raised OSError: it went wrong (a refusal of the operating system interface in "
        "tools.execute); AXM's MCP layer"
    )
    (deliberate,) = judge(
        "no-unexpected-exception", "amplifier", raised("amplifier", exception("KeyError", "raise"))
    )
    assert "(raised on purpose by the tool's own code in tools.execute)" in deliberate.text


def test_axio_judges_the_handlers_exception_by_its_cause() -> None:
    unwrapped = judge(
        "no-unexpected-exception",
        "axio",
        Call({}, Observation(status="raised", exception=exception("ValueError", "raise"))),
    )
    assert [finding.text for finding in unwrapped] == [
        "raised ValueError: it went wrong; only GuardError and HandlerError may escape"
    ]
    (crashed,) = judge(
        "no-unexpected-exception", "axio", raised("axio", exception("KeyError", "other"))
    )
    assert crashed.text.startswith(
        "raised HandlerError caused by KeyError: it went wrong, a crash in"
    )


# An exception escaping a call with an input that breaks the schema, by origin and protocol:
# AXM's runtime never lets the input reach execute; Amplifier's does, and absorbs only what is
# not a crash; axio and tool_use keep their own rules.
INVALID = {
    "os": {"axm": "warns", "amplifier": "warns", "tool_use": "fails"},
    "raise": {"axm": "warns", "amplifier": "warns", "tool_use": "fails"},
    "other": {"axm": "warns", "amplifier": "fails", "tool_use": "fails"},
}


@pytest.mark.parametrize("protocol", ["axm", "amplifier", "tool_use"])
@pytest.mark.parametrize("origin", list(INVALID))
def test_an_exception_on_an_invalid_input_is_judged_by_what_the_runtime_does(
    origin: str, protocol: str
) -> None:
    call = raised(protocol, exception("TypeError", origin), invalid=True)
    findings = judge("invalid-input-handled", protocol, call)
    assert verdict(findings) == INVALID[origin][protocol], findings
    if protocol == "axm":
        assert all(finding.text.endswith(VALIDATION) for finding in findings)


def test_axm_answers_to_an_invalid_input_are_all_warnings() -> None:
    crashed = Observation(status="crashed", crash_detail="the call did not return")
    quit = raised("axm", exception("SystemExit", "other", bases=()), invalid=True)
    for call in (Call({}, crashed, invalid=True), quit):
        findings = judge("invalid-input-handled", "axm", call)
        assert verdict(findings) == "warns", findings
    # Amplifier validates nothing: the same fail there.
    assert verdict(judge("invalid-input-handled", "amplifier", quit)) == "fails"


def test_an_axio_handler_that_crashed_on_an_invalid_input_still_fails() -> None:
    call = raised("axio", exception("AttributeError", "other"), invalid=True)
    findings = judge("invalid-input-handled", "axio", call)
    assert verdict(findings) == "fails"
    assert findings[0].text.startswith("the handler crashed on an invalid input: AttributeError")


def facts(**fields: Any) -> ResultFacts:
    return ResultFacts(
        type_name="ToolResult",
        is_mapping=False,
        fields=fields,
        field_types={name: type(value).__name__ for name, value in fields.items()},
        read_errors={},
        problems=(),
        size=10,
        truncated=False,
        fingerprint="",
    )


def test_accepting_an_invalid_input_is_a_warning_everywhere() -> None:
    accepted = Call(
        {}, Observation(status="returned", result=facts(success=True, output=1)), invalid=True
    )
    for protocol in ("axm", "amplifier"):
        assert verdict(judge("invalid-input-handled", protocol, accepted)) == "warns"


def test_a_subject_without_absorbers_fails_what_it_would_otherwise_warn() -> None:
    axm = SUBJECTS["axm"]
    policy = dataclasses.replace(axm.policy, exception_absorber="", invalid_absorber="")
    bare = dataclasses.replace(axm, policy=policy)
    call = raised("axm", exception("OSError", "os"))
    findings = list(
        CHECKS["no-unexpected-exception"].findings(bare, call, CheckContext(settings=None))
    )
    assert verdict(findings) == "fails"
    assert "nothing in the AXM runtime turns it into an error the model reads" in findings[0].text


@pytest.mark.parametrize(
    ("protocol", "effects", "judged"),
    [
        ("axio", (), True),
        ("axio", ("read",), True),
        ("axio", ("execute",), False),
        ("axio", ("read", "write"), False),
        ("axio", ("external",), False),
        ("axio", ("unknown",), False),
        # AXM promises determinism: whatever a tool declares, it is held to it.
        ("axm", ("write",), True),
    ],
)
def test_determinism_is_judged_where_promised_or_where_the_tool_declares_no_effects(
    protocol: str, effects: tuple[str, ...], judged: bool
) -> None:
    subject = dataclasses.replace(SUBJECTS[protocol], effects=effects)
    reason = CHECKS["deterministic"].skip_reason(subject)
    assert (reason is None) is judged, reason
    if not judged:
        assert reason is not None and reason.severity is Severity.NOTE
        assert reason.text.startswith(f"the tool declares {effects[-1]} access")
        assert reason.text.endswith("the axio protocol does not promise determinism")
