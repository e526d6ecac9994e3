"""A framework's protocol written from conformance/protocols.md alone, certified end to end.

The framework here ("forge") exists only in this test, and has what the frameworks tool authors
use have and the kit's own protocols do not: schemas declared as pydantic model classes, a
result whose success is a ``status`` field, a sync function or a coroutine behind one tool
class (so the member an input reaches differs tool by tool), validation errors raised by one
tool and returned to the model by another, and an exception the framework tells the model as
the tool's refusal. The protocol uses only the members the page documents; the kit is not
changed. Correct tools are certified, and each defective one fails the check its defect breaks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

FRAMEWORK = '''
"""forge: tools are a function or a coroutine with a pydantic model of their arguments."""

import dataclasses
from typing import Any

import pydantic


class ForgeRetry(Exception):
    """Raised by a tool that refuses its input: forge tells the model the message, to retry."""


@dataclasses.dataclass
class Reply:
    status: str  # "success" or "error"
    output: Any = None
    error: str | None = None


@dataclasses.dataclass
class ForgeTool:
    name: str
    description: str
    args_model: type[pydantic.BaseModel]
    func: Any = None
    coroutine: Any = None
    handle_validation_error: bool = False

    def _arguments(self, args: dict) -> dict | Reply:
        try:
            return dict(self.args_model.model_validate(args))
        except pydantic.ValidationError as exc:
            if self.handle_validation_error:
                return Reply("error", error=str(exc))
            raise

    @staticmethod
    def _reply(value: Any) -> Reply:
        return value if isinstance(value, Reply) else Reply("success", output=value)

    def invoke(self, args: dict) -> Reply:
        arguments = self._arguments(args)
        return arguments if isinstance(arguments, Reply) else self._reply(self.func(**arguments))

    async def ainvoke(self, args: dict) -> Reply:
        arguments = self._arguments(args)
        if isinstance(arguments, Reply):
            return arguments
        return self._reply(await self.coroutine(**arguments))


def tool(args_model, *, handle_validation_error=False):
    """Make a ForgeTool of a function or a coroutine."""

    def make(function):
        import inspect

        member = "coroutine" if inspect.iscoroutinefunction(function) else "func"
        return ForgeTool(
            name=function.__name__,
            description=function.__doc__ or "",
            args_model=args_model,
            handle_validation_error=handle_validation_error,
            **{member: function},
        )

    return make
'''

# Written from conformance/protocols.md alone.
PROTOCOL = """
import dataclasses
from typing import Any

from axm_conformance.protocols import Missing, Policy, ResultModel, Target, ToolProtocol, read


class ForgeProtocol(ToolProtocol):
    name = "forge"
    title = "forge"
    capabilities = frozenset({"in-process", "python-exceptions", "description"})
    detection_order = 5
    result = ResultModel(
        "tool-result",
        {"status": ("str",), "output": (), "error": ("str", "NoneType")},
        structured_field="output",
        success=("status", "success"),
    )
    # forge lets a tool's exceptions escape; a validation error is raised unless the tool
    # returns it to the model.
    policy = Policy(invalid="raise", allowed_exceptions=("ValidationError",))
    call_snippet = "tool.invoke({input})"

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return not isinstance(read(obj, "args_model"), Missing) and callable(read(obj, "invoke"))

    def target(self) -> Target:
        coroutine = read(self.obj, "coroutine")
        if callable(coroutine):
            return Target("coroutine", coroutine, awaits=True)
        return Target("func", read(self.obj, "func"), awaits=False)

    def tool_policy(self) -> Policy:
        if read(self.obj, "handle_validation_error") is True:
            return dataclasses.replace(self.policy, invalid="result")
        return self.policy

    def refusal(self, exc: BaseException) -> str:
        return str(exc) if type(exc).__name__ == "ForgeRetry" else ""

    def input_schema(self) -> tuple[Any, str, str]:
        return read(self.obj, "args_model"), "declared", ""

    def own_objects(self) -> tuple[Any, ...]:
        return (self.target().function,)

    def call(self, input: Any) -> Any:
        if self.target().awaits:
            return self.obj.ainvoke(input)
        return self.obj.invoke(input)
"""

TOOLS = '''
import pydantic

from forge import ForgeRetry, Reply, tool


class Text(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    text: str


class WordAt(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    text: str
    index: int = pydantic.Field(ge=0, le=20)


@tool(Text)
async def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@tool(WordAt, handle_validation_error=True)
def word_at(text: str, index: int) -> str:
    """The word at an index of a text."""
    words = text.split()
    if index >= len(words):
        raise ForgeRetry(f"the text has {len(words)} words: give an index below that")
    return words[index]


@tool(Text)
def first_word(text: str) -> str:
    """The first word of a text."""
    return text.split()[0]  # an empty text has none


@tool(Text)
def count_vowels(text: str) -> Reply:
    """How many vowels a text has."""
    if not text:
        return Reply("error")  # a failure that does not say what went wrong
    return Reply("success", output=sum(letter in "aeiou" for letter in text.lower()))


@tool(Text)
def initials(text: str) -> str:
    """The initials of the words of a text."""
    try:
        return "".join(word[0] for word in text.split(" "))
    except IndexError as exc:  # two spaces in a row: an empty word
        raise ForgeRetry(f"could not read the text: {exc}") from exc


@tool(Text)
def reverse(text: str) -> str:
    """The text reversed."""
    return text[::-1]


# The framework took it for a function: forge will call it and never await what it gives.
reverse.func, reverse.coroutine = None, None


async def _reverse(text: str) -> str:
    return text[::-1]


reverse.func = _reverse
'''


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    """One run certifies every tool: the framework, its protocol (registered by entry point,
    as a distribution registers one) and its tools in a project of their own."""
    project = tmp_path_factory.mktemp("forge")
    for module, source in (
        ("forge", FRAMEWORK),
        ("forge_protocol", PROTOCOL),
        ("forge_tools", TOOLS),
    ):
        (project / f"{module}.py").write_text(source)
    metadata = project / "forge_protocol-1.0.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: forge-protocol\nVersion: 1.0\n"
    )
    (metadata / "entry_points.txt").write_text(
        "[axm_conformance.protocols]\nforge = forge_protocol:ForgeProtocol\n"
    )
    names = ("shout", "word_at", "first_word", "count_vowels", "initials", "reverse")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--axm-conformance",
            *(f"--axm-tool=forge_tools:{name}" for name in names),
            "--axm-examples=30",
            "--axm-seed=3",
            "--axm-report=certificate.json",
            "-p",
            "no:cacheprovider",
        ],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
        capture_output=True,
        text=True,
        check=False,
    )
    report = project / "certificate.json"
    assert report.exists(), run.stdout + run.stderr
    return run.stdout, json.loads(report.read_text())


def tool(document: dict, name: str) -> dict:
    (found,) = [tool for tool in document["tools"] if tool["name"] == name]
    assert found["protocol"] == "forge"
    return found


def outcomes(found: dict) -> dict[str, str]:
    return {check["id"]: check["outcome"] for check in found["checks"]}


@pytest.mark.parametrize("name", ["shout", "word_at"])
def test_correct_tools_of_a_framework_are_certified(certificate: tuple, name: str) -> None:
    """A coroutine and a function; a pydantic schema; a status field; a refusal by exception
    (word_at refuses an index past the text's last word); validation errors raised by one,
    returned to the model by the other."""
    stdout, document = certificate
    found = tool(document, name)
    assert found["verdict"] == "certified", stdout
    judged = outcomes(found)
    for check in ("result-type", "result-consistent", "no-unexpected-exception"):
        assert judged[check] == "passed", (check, judged)
    assert judged["invalid-input-handled"] == "passed"
    # Served, and judged on what forge's runtime does: word_at's refusals (ForgeRetry) are
    # counted as refusals, not as errors.
    calls = found["calls"]
    assert calls["served"] > 0 and calls["errored"] == 0
    if name == "word_at":
        assert calls["refused"] > 0


@pytest.mark.parametrize(
    ("name", "check", "says"),
    [
        ("first_word", "no-unexpected-exception", "raised IndexError: list index out of range"),
        (
            "count_vowels",
            "result-consistent",
            'status is "error" but error is None: a failure must say what went wrong',
        ),
        ("initials", "no-unexpected-exception", "raised ForgeRetry caused by IndexError"),
        ("reverse", "callable-shape", "func"),
    ],
)
def test_each_defective_tool_fails_the_check_its_defect_breaks(
    certificate: tuple, name: str, check: str, says: str
) -> None:
    _, document = certificate
    found = tool(document, name)
    assert found["verdict"] == "failed"
    (failed,) = [item for item in found["checks"] if item["id"] == check]
    assert failed["outcome"] == "failed"
    assert says in failed["failure"]["summary"]


def test_a_failure_is_reproduced_with_the_protocols_own_call(certificate: tuple) -> None:
    _, document = certificate
    (crashed,) = [
        item
        for item in tool(document, "first_word")["checks"]
        if item["id"] == "no-unexpected-exception"
    ]
    report = crashed["failure"]["report"]
    assert "tool = load_tool('forge_tools:first_word')" in report
    assert f"print(tool.invoke({crashed['failure']['input']!r}))" in report
