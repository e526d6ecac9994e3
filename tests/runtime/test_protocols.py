"""Every concrete runtime class satisfies its protocol, at run time and under mypy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from axm_runtime import amplifier, axio, axm, examples

TYPING_CHECKS = """
from typing import Any
from axm_runtime import amplifier, axio, axm
from axm_runtime.examples import axm_tools, amplifier_tools

def as_axm(tool: axm.AXMTool) -> None: ...
def as_amplifier(tool: amplifier.Tool) -> None: ...
def as_guard(guard: axio.PermissionGuard) -> None: ...

as_axm(axm_tools.WordCountTool())
as_axm(axm_tools.UnitConvertTool())
as_amplifier(amplifier_tools.CalculatorTool())
as_amplifier(amplifier_tools.TextStatsTool())
as_guard(axio.AllowAllGuard())
as_guard(axio.DenyAllGuard())
"""


def test_runtime_classes_satisfy_runtime_checkable_protocols() -> None:
    assert isinstance(examples.WordCountTool(), axm.AXMTool)
    assert isinstance(examples.UnitConvertTool(), axm.AXMTool)
    assert isinstance(examples.CalculatorTool(), amplifier.Tool)
    assert isinstance(examples.TextStatsTool(), amplifier.Tool)
    assert isinstance(axio.AllowAllGuard(), axio.PermissionGuard)
    assert isinstance(axio.DenyAllGuard(), axio.PermissionGuard)


def test_runtime_classes_satisfy_protocols_under_mypy(tmp_path: Path) -> None:
    module = tmp_path / "typing_checks.py"
    module.write_text(TYPING_CHECKS)
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(module)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_public_names() -> None:
    assert set(axm.__all__) == {
        "AXMTool",
        "ToolResult",
        "ToolMetadata",
        "tool_metadata",
        "discover_tools",
        "input_schema_for",
        "run_tool",
        "validated",
    }
    assert set(axio.__all__) == {
        "Tool",
        "Field",
        "FieldInfo",
        "CONTEXT",
        "PermissionGuard",
        "AllowAllGuard",
        "DenyAllGuard",
        "ToolHandler",
        "ToolSelector",
        "AxioError",
        "ToolError",
        "GuardError",
        "HandlerError",
        "ContentBlock",
        "TextBlock",
        "ImageBlock",
        "AudioBlock",
        "VideoBlock",
    }
    assert set(amplifier.__all__) >= {
        "Tool",
        "ToolResult",
        "Coordinator",
        "call_tool",
        "load_modules",
    }
    for module in (axm, axio, amplifier, examples):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_runtime_imports_neither_pytest_nor_hypothesis() -> None:
    code = (
        "import sys, axm_runtime.axm, axm_runtime.axio, axm_runtime.tool_use, "
        "axm_runtime.amplifier, axm_runtime.examples\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in {'pytest', '_pytest', 'hypothesis'}]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
