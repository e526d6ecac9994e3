"""A protocol the kit has never seen, added by a third party: one module and one entry point.

The protocol here exists only in this test: tools with a synchronous ``run(input: dict) -> dict``.
It is registered the way a distribution registers one (an ``entry_points.txt`` in the
``axm_conformance.protocols`` group of an installed distribution's metadata) and certified end to
end, through pytest and the workers, with no change to the kit.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.kit.runs import certified

pytestmark = pytest.mark.slow

PROTOCOL = '''
"""Tools with a synchronous run(input: dict) -> dict that raise ValueError on a bad input."""

from typing import Any

from axm_conformance.protocols import Policy, ResultModel, ToolProtocol, read


class RunProtocol(ToolProtocol):
    name = "run"
    title = "run(dict)"
    capabilities = frozenset({"in-process", "python-exceptions", "description"})
    detection_order = 5
    result = ResultModel("json")
    # A tool refuses a bad input by raising ValueError, which its caller reports to the model.
    policy = Policy(exception="domain", invalid="raise", allowed_exceptions=("ValueError",))
    call_snippet = "tool.run({input})"
    callable_name = "run"

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return callable(read(obj, "run"))

    def call(self, input: Any) -> Any:
        return self.obj.run(input)
'''

TOOLS = """
SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


def text_of(input):
    if not isinstance(input, dict) or set(input) != {"text"} or not isinstance(input["text"], str):
        raise ValueError("the input is one string, text")
    return input["text"]


class WordCount:
    name = "word_count"
    description = "Count the words of a text."
    input_schema = SCHEMA

    def run(self, input):
        return {"words": len(text_of(input).split())}


class FirstWord:
    name = "first_word"
    description = "The first word of a text."
    input_schema = SCHEMA

    def run(self, input):
        return {"word": text_of(input).split()[0]}  # an empty text has none
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(demo_protocol=PROTOCOL, demo_tools=TOOLS)
    metadata = pytester.mkdir("demo_protocol-1.0.dist-info")
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-protocol\nVersion: 1.0\n")
    (metadata / "entry_points.txt").write_text(
        "[axm_conformance.protocols]\nrun = demo_protocol:RunProtocol\n"
    )
    return pytester


def test_a_correct_tool_of_a_plugin_protocol_is_certified(project: pytest.Pytester) -> None:
    result, document = certified(project, "demo_tools:WordCount")
    (tool,) = document["tools"]
    assert tool["protocol"] == "run"
    assert tool["verdict"] == "certified", result.stdout.str()
    outcomes = {check["id"]: check["outcome"] for check in tool["checks"]}
    # Judged: the protocol offers what these need.
    assert outcomes["no-unexpected-exception"] == "passed"
    assert outcomes["invalid-input-handled"] == "passed"
    assert outcomes["input-not-mutated"] == "passed"
    # Skipped, saying which capability the protocol does not offer.
    guards = next(check for check in tool["checks"] if check["id"] == "guards-enforced")
    assert guards["outcome"] == "skipped"
    assert guards["reason"] == (
        "the run(dict) protocol does not offer permission guards in front of the tool (guards)"
    )


def test_a_defective_tool_of_a_plugin_protocol_fails_with_its_reproduction(
    project: pytest.Pytester,
) -> None:
    result, document = certified(project, "demo_tools:FirstWord", "--axm-protocol=run")
    (tool,) = document["tools"]
    assert tool["verdict"] == "failed"
    crashed = next(check for check in tool["checks"] if check["id"] == "no-unexpected-exception")
    assert crashed["outcome"] == "failed"
    assert crashed["failure"]["input"] == {"text": ""}
    assert crashed["failure"]["summary"].startswith("raised IndexError: list index out of range")
    report = crashed["failure"]["report"]
    assert "tool = load_tool('demo_tools:FirstWord', protocol='run')" in report
    assert "print(tool.run({'text': ''}))" in report
    assert "--axm-protocol=run" in report
    result.stdout.fnmatch_lines(
        ["*first_word (run): NOT certified (failed*no-unexpected-exception*"]
    )


def test_the_plugin_protocol_is_a_choice_of_the_protocol_setting(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_subprocess(
        "--axm-conformance", "--axm-tool=demo_tools:WordCount", "--axm-protocol=walk"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--axm-protocol: protocol must be one of auto, run, langchain, smolagents, "
            "openai_agents, pydantic_ai, tool_use, axio, amplifier, axm, "
            "mcp, not 'walk'"
        ]
    )


def test_a_broken_protocol_entry_point_is_a_one_line_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(demo_protocol="RunProtocol = 42\n", demo_tools=TOOLS)
    metadata = pytester.mkdir("demo_protocol-1.0.dist-info")
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-protocol\nVersion: 1.0\n")
    (metadata / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [axm_conformance.protocols]
            run = demo_protocol:RunProtocol
            """
        )
    )
    result = pytester.runpytest_subprocess("--axm-conformance", "--axm-tool=demo_tools:WordCount")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*protocol entry point 'run' (demo_protocol:RunProtocol) is not a subclass of "
            "axm_conformance.protocols.ToolProtocol*"
        ]
    )
    assert "Traceback" not in result.stderr.str()
