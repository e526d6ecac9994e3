"""The kit beside LangChain's own standard tool tests (langchain-tests' ``ToolsUnitTests`` and
``ToolsIntegrationTests``), on the same tools: the zoo's LangChain tools, correct and defective,
and langchain-community's file-management tools. Each standard test class is given the example
a tool's author writes (``tool_invoke_params_example``), as their documentation asks.

What each catches, and the time each took, is the table of ``conformance/frameworks.md``: the
test computes it again and holds the page to it (the times are measured, not compared).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from axm_conformance import check_tool
from tests.conftest import FIXTURES

PAGE = Path(__file__).resolve().parents[2] / "conformance" / "frameworks.md"
MANIFEST = {
    entry["ref"]: entry
    for entry in tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
    if entry["protocol"] == "langchain"
}
COMMUNITY = "langchain_community.tools.file_management"
# Each tool with the example its author would give the standard tests.
EXAMPLES: dict[str, dict[str, Any]] = {
    "zoo_langchain:word_count": {"text": "hello world"},
    "zoo_langchain:capital_of": {"country": "France"},
    "zoo_langchain:ToFahrenheit": {"celsius": 20},
    "zoo_langchain:repeat": {"text": "hi", "times": 2},
    "zoo_langchain:TextToolkit[1]": {"text": "hello"},
    "zoo_langchain:first_word": {"text": "hello world"},
    "zoo_langchain:shout": {"text": "hi"},
    "zoo_langchain:vowel_count": {"text": "hello"},
    "zoo_langchain:percent_of": {"value": 10, "total": 100},
    "zoo_langchain:read_setting": {"key": "theme"},
    "zoo_langchain:dedupe": {"items": [1, 2, 2]},
    "zoo_langchain:lookup_user": {"user_id": 1},
    "zoo_langchain:note_size": {"name": "todo.txt"},
    "zoo_langchain:note_size_checked": {"name": "todo.txt"},
    f"{COMMUNITY}:ReadFileTool": {"file_path": "ideas.txt"},
    f"{COMMUNITY}:WriteFileTool": {"file_path": "new.txt", "text": "hello"},
    f"{COMMUNITY}:ListDirectoryTool": {"dir_path": "."},
    f"{COMMUNITY}:CopyFileTool": {"source_path": "ideas.txt", "destination_path": "copy.txt"},
    f"{COMMUNITY}:MoveFileTool": {"source_path": "todo.txt", "destination_path": "moved.txt"},
    f"{COMMUNITY}:DeleteFileTool": {"file_path": "ideas.txt"},
    f"{COMMUNITY}:FileSearchTool": {"dir_path": ".", "pattern": "*.txt"},
}


def _standard_module() -> str:
    """A test module with one pair of standard test classes per tool."""
    lines = [
        "import importlib",
        "from langchain_tests.integration_tests import ToolsIntegrationTests",
        "from langchain_tests.unit_tests import ToolsUnitTests",
        "",
        "def _load(ref):",
        "    module, _, attribute = ref.partition(':')",
        "    name, _, index = attribute.partition('[')",
        "    obj = getattr(importlib.import_module(module), name)",
        "    obj = obj() if isinstance(obj, type) else obj",
        "    return obj.get_tools()[int(index[:-1])] if index else obj",
    ]
    for number, (ref, example) in enumerate(EXAMPLES.items()):
        for base in ("ToolsUnitTests", "ToolsIntegrationTests"):
            lines += [
                "",
                f"class Test{base}{number}({base}):",
                "    @property",
                "    def tool_constructor(self):",
                f"        return _load({ref!r})",
                "    @property",
                "    def tool_invoke_params_example(self):",
                f"        return {example!r}",
            ]
    return "\n".join(lines) + "\n"


def _standard_failures(where: Path) -> tuple[dict[str, list[str]], float]:
    """The standard tests that failed, per tool, and the seconds the run took."""
    for name in ("ideas.txt", "todo.txt"):
        shutil.copy(FIXTURES / "worker_files" / name, where / name)
    (where / "test_standard.py").write_text(_standard_module())
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=auto",
            "--junitxml=out.xml",
        ],
        cwd=where,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), str(where)])},
        capture_output=True,
        check=False,
    )
    took = time.perf_counter() - started
    failed: dict[str, list[str]] = {ref: [] for ref in EXAMPLES}
    refs = list(EXAMPLES)
    for case in ElementTree.parse(where / "out.xml").iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            number = int("".join(ch for ch in case.get("classname", "") if ch.isdigit()))
            failed[refs[number]].append(case.get("name", ""))
    return failed, took


def _kit_verdicts() -> tuple[dict[str, str], float]:
    started = time.perf_counter()
    verdicts = {}
    for ref in EXAMPLES:
        files = str(FIXTURES / "worker_files") if ref.startswith(COMMUNITY) else None
        (tool,) = check_tool(ref, examples=30, seed=1, worker_files=files).tools
        failed = sorted(o.check_id for o in tool.outcomes if o.status == "failed")
        warned = sorted(o.check_id for o in tool.outcomes if o.status == "warning")
        verdict = tool.verdict.verdict
        if failed:
            verdict = f"{verdict}: {', '.join(failed)}"
        elif verdict == "certified" and warned:
            verdict = f"certified with warnings: {', '.join(warned)}"
        verdicts[ref] = verdict
    return verdicts, time.perf_counter() - started


def _page_rows() -> dict[str, tuple[str, str]]:
    """The table of the page: by tool, what the standard tests and the kit found."""
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4 and cells[0] in EXAMPLES:
            rows[cells[0]] = (cells[2], cells[3])
    return rows


@pytest.mark.slow
def test_the_kit_and_langchain_tests_side_by_side_are_as_the_page_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not os.environ.get("AXM_REAL_FRAMEWORKS"):
        pytest.skip("langchain-tests and langchain-community are installed by tox -e frameworks")
    standard, standard_took = _standard_failures(tmp_path)
    kit, kit_took = _kit_verdicts()
    found = {
        ref: (
            f"failed: {', '.join(sorted(set(standard[ref])))}" if standard[ref] else "passed",
            kit[ref],
        )
        for ref in EXAMPLES
    }
    with capsys.disabled():
        print(f"\nlangchain-tests: {standard_took:.1f} s; the kit: {kit_took:.1f} s")
        for ref, (said, verdict) in found.items():
            print(f"  {ref}: langchain-tests {said}; the kit {verdict}")
    assert _page_rows() == found
    # Every defective zoo tool is caught by the kit.
    for ref, entry in MANIFEST.items():
        if entry["fails"]:
            assert kit[ref].startswith("failed"), ref
