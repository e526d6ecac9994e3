"""Example Amplifier tools and the module ``mount`` that publishes them."""

from __future__ import annotations

import operator
from typing import Any

from axm_runtime.amplifier import Coordinator, ToolResult

__all__ = ["CalculatorTool", "TextStatsTool", "mount"]


_OPERATIONS = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
}


class CalculatorTool:
    """Arithmetic on two numbers; a division by zero is a failed result, not an exception."""

    name = "calculator"
    description = "Add, subtract, multiply or divide two numbers."
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "operation": {"enum": ["add", "subtract", "multiply", "divide"]},
            "a": {"type": "number"},
            "b": {"type": "number"},
        },
        "required": ["operation", "a", "b"],
    }

    async def execute(self, input: dict[str, Any]) -> ToolResult:
        if not isinstance(input, dict):
            return ToolResult(success=False, error="input must be an object")
        operation, a, b = input.get("operation"), input.get("a"), input.get("b")
        numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b))
        if not numbers or not isinstance(operation, str) or operation not in _OPERATIONS:
            return ToolResult(success=False, error="expected operation, a and b (numbers)")
        if operation == "divide" and b == 0:
            return ToolResult(success=False, error={"message": "division by zero"})
        try:
            result = _OPERATIONS[operation](a, b)
        except OverflowError:
            return ToolResult(success=False, error="the result is too large")
        if result != result or result in (float("inf"), float("-inf")):
            return ToolResult(success=False, error="the result is not a finite number")
        return ToolResult(success=True, output=result)


class TextStatsTool:
    """Character and word statistics of a text."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.max_words = int((config or {}).get("max_words", 10_000))

    name = "text_stats"
    description = "Count the characters and words of a text."
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    async def execute(self, input: dict[str, Any]) -> ToolResult:
        text = input.get("text") if isinstance(input, dict) else None
        if not isinstance(text, str):
            return ToolResult(success=False, error="'text' must be a string")
        words = text.split()
        return ToolResult(
            success=True,
            output={"characters": len(text), "words": min(len(words), self.max_words)},
            metadata={"truncated": len(words) > self.max_words},
        )


async def mount(coordinator: Coordinator, config: dict[str, Any] | None = None) -> None:
    """Mount this module's tools on the coordinator."""
    for tool in (CalculatorTool(), TextStatsTool(config)):
        await coordinator.mount("tools", tool, name=tool.name)
