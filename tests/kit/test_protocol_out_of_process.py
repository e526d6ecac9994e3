"""A protocol whose tools live in another process, with a check of its own, added by a third party.

The protocol exists only in this test: a server that speaks one JSON object a line (it lists its
tools when it starts, then answers each call with ``{"ok": ..., "result" | "error": ...}``),
loaded from references ``lines:COMMAND``. It is one package, importing the kit only through
``axm_conformance.protocols.base`` and ``axm_conformance.checks`` as the architecture test asks
of the kit's own; it and its check are registered the way a distribution registers them (an
``entry_points.txt`` in an installed distribution's metadata), and a server of it is certified
end to end (verdicts, a shrunk failure of its own check, a reproduction that runs, the
certificate), with no change to the kit.
"""

from __future__ import annotations

import ast
import json
import shlex
import subprocess
import sys
from typing import Any

import pytest

from tests.kit.runs import certified, reproduction
from tests.kit.test_architecture import PROTOCOL_DOORS

pytestmark = pytest.mark.slow

PROTOCOL = '''
"""Tools served by a process that speaks one JSON object a line."""

import json
import shlex
import subprocess
import types
from typing import Any

from axm_conformance.protocols.base import (
    CallCrashed,
    Cleanups,
    Loaded,
    LoadError,
    LoadOptions,
    Policy,
    ResultModel,
    ToolProtocol,
)

PREFIX = "lines:"


class Server:
    """One server process, started again when it has died."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.process: Any = None
        self.tools: list[dict[str, Any]] = []

    def start(self) -> None:
        try:
            self.process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        except OSError as exc:
            raise LoadError(f"cannot start {self.argv[0]!r}: {exc}") from None
        self.tools = json.loads(self.process.stdout.readline())["tools"]

    def ask(self, name: str, input: Any) -> Any:
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(json.dumps({"tool": name, "input": input}) + "\\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise CallCrashed(f"the server exited with status {self.process.wait()}")
        return json.loads(line)

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()


class LineTool:
    def __init__(self, server: Server, listed: dict[str, Any]) -> None:
        self.server = server
        self.name = listed["name"]
        self.description = listed["description"]
        self.input_schema = listed["input_schema"]

    def call(self, input: Any) -> Any:
        return self.server.ask(self.name, input)


class LinesProtocol(ToolProtocol):
    name = "lines"
    title = "line-JSON servers"
    capabilities = frozenset({"description", "line-json"})
    defines = {"line-json": "answers read from a server process, one JSON object a line"}
    ref_prefix = PREFIX
    result = ResultModel(
        "tool-result",
        {"ok": ("bool",), "result": (), "error": ("str",)},
        structured_field="result",
        success=("ok", True),
        error_field="error",
    )
    policy = Policy(invalid="result")
    call_snippet = "tool.call({input})"
    callable_name = "call"

    @classmethod
    def load_ref(cls, ref: str, options: LoadOptions, cleanups: Cleanups | None) -> Loaded:
        argv = shlex.split(ref[len(PREFIX) :])
        if not argv:
            raise LoadError(f"{ref!r} names no command: use lines:COMMAND")
        server = Server(argv)
        if cleanups is not None:
            cleanups.append(server.close)
        server.start()
        return [
            (f"{ref}[{tool['name']}]", LineTool(server, tool), cls.name) for tool in server.tools
        ]

    def call(self, input: Any) -> Any:
        # An answer object is the protocol's tool-result: its members are the result's fields.
        answer = self.obj.call(input)
        return types.SimpleNamespace(**answer) if isinstance(answer, dict) else answer
'''

DOOR = '''
"""The line-JSON protocol."""

from demo_lines._protocol import LinesProtocol

__all__ = ["LinesProtocol"]
'''

CHECKS = '''
"""The line-JSON protocol's own check."""

from axm_conformance.checks import Call, CheckContext, Found, SubjectInfo, check


@check(
    "lines-success-carries-result", "results", considers=("returned",), requires=("line-json",)
)
def success_carries_result(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """A success answer carries its result."""
    result = call.observation.result
    if result is not None and result.fields.get("ok") is True and "result" not in result.fields:
        yield "answered a success that carries no result"
'''

SERVER = """
import json
import sys

SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
TOOLS = [
    {"name": "shout", "description": "The text in capitals.", "input_schema": SCHEMA},
    {"name": "split_words", "description": "The words of a text.", "input_schema": SCHEMA},
]


def answer(request):
    input = request.get("input")
    if not (isinstance(input, dict) and set(input) == {"text"} and isinstance(input["text"], str)):
        return {"ok": False, "error": "the input is one string, text"}
    text = input["text"]
    if request.get("tool") == "shout":
        return {"ok": True, "result": {"text": text.upper()}}
    if not text:
        return {"ok": True}  # a success without its result
    return {"ok": True, "result": {"words": text.split()}}


print(json.dumps({"tools": TOOLS}), flush=True)
for line in sys.stdin:
    print(json.dumps(answer(json.loads(line))), flush=True)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    package = pytester.mkpydir("demo_lines")
    (package / "__init__.py").write_text(DOOR)
    (package / "_protocol.py").write_text(PROTOCOL)
    (package / "_checks.py").write_text(CHECKS)
    pytester.makepyfile(lines_server=SERVER)
    metadata = pytester.mkdir("demo_lines-1.0.dist-info")
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-lines\nVersion: 1.0\n")
    (metadata / "entry_points.txt").write_text(
        "[axm_conformance.protocols]\nlines = demo_lines:LinesProtocol\n\n"
        "[axm_conformance.checks]\nlines = demo_lines._checks\n"
    )
    return pytester


def imported_kit_modules(source: str) -> set[str]:
    tree = ast.parse(source)
    return {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("axm_conformance")
    }


def test_a_server_of_an_out_of_process_plugin_protocol_is_certified_end_to_end(
    project: pytest.Pytester,
) -> None:
    # Written as a third party writes one: through the doors the kit's own protocols must use.
    assert imported_kit_modules(PROTOCOL) | imported_kit_modules(CHECKS) == {
        "axm_conformance.protocols.base",
        "axm_conformance.checks",
    }
    assert all(name.startswith(PROTOCOL_DOORS) for name in imported_kit_modules(PROTOCOL))
    server = project.path / "lines_server.py"
    ref = f"lines:{shlex.join([sys.executable, str(server)])}"
    result, document = certified(project, ref)
    tools = {tool["name"]: tool for tool in document["tools"]}
    assert {tool["protocol"] for tool in tools.values()} == {"lines"}
    assert tools["shout"]["verdict"] == "certified", result.stdout.str()
    checks = {check["id"]: check for check in tools["split_words"]["checks"]}
    assert tools["split_words"]["verdict"] == "failed"
    assert [i for i, check in checks.items() if check["outcome"] == "failed"] == [
        "lines-success-carries-result"
    ]
    own = checks["lines-success-carries-result"]
    assert own["failure"]["input"] == {"text": ""}
    assert checks["invalid-input-handled"]["outcome"] == "passed"
    shout = {check["id"]: check["outcome"] for check in tools["shout"]["checks"]}
    assert shout["lines-success-carries-result"] == "passed"
    result.stdout.fnmatch_lines(["*split_words (lines): NOT certified (failed*lines-success*"])

    # The reproduction it prints loads the server again and makes the one call that fails.
    command, code = reproduction(result)
    assert "--axm-check=lines-success-carries-result" in command
    assert code, "the report prints a Python reproduction"
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=project.path,
        env={"PYTHONPATH": str(project.path), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().endswith("{'ok': True}"), completed.stdout


def answered(project: pytest.Pytester, request: dict[str, Any]) -> Any:
    """What the fixture server answers one request: the protocol's wire, as the test wrote it."""
    completed = subprocess.run(
        [sys.executable, str(project.path / "lines_server.py")],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.splitlines()[1])


def test_the_fixture_server_is_correct_but_for_its_one_defect(project: pytest.Pytester) -> None:
    assert answered(project, {"tool": "shout", "input": {"text": "a b"}}) == {
        "ok": True,
        "result": {"text": "A B"},
    }
    assert answered(project, {"tool": "split_words", "input": {"text": "a b"}}) == {
        "ok": True,
        "result": {"words": ["a", "b"]},
    }
    assert answered(project, {"tool": "split_words", "input": {"text": ""}}) == {"ok": True}
    assert answered(project, {"tool": "shout", "input": {"text": 1}})["ok"] is False
