"""Example AXM tools: synchronous, keyword-only ``execute``, results as :class:`ToolResult`."""

from __future__ import annotations

from typing import Annotated, Literal

from axm_runtime.axm import ToolResult, validated

__all__ = ["UnitConvertTool", "WordCountTool"]

_METRES_PER_UNIT = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048}
Unit = Literal["mm", "cm", "m", "km", "in", "ft"]


class WordCountTool:
    """Count the words, lines and characters of a text."""

    name = "word_count"
    agent_hint = "Count words, lines and characters in `text`."
    domain = "text"
    tags = frozenset({"text", "count"})

    @validated
    def execute(
        self,
        *,
        text: Annotated[str, "The text to count"],
        unique: Annotated[bool, "Also count distinct words, case-insensitively"] = False,
    ) -> ToolResult:
        words = text.split()
        data: dict[str, int] = {
            "words": len(words),
            "lines": len(text.splitlines()),
            "characters": len(text),
        }
        if unique:
            data["unique_words"] = len({word.casefold() for word in words})
        return ToolResult(success=True, data=data, text=f"{len(words)} words")


class UnitConvertTool:
    """Convert a length between metric and imperial units."""

    expose_directly = True
    domain = "units"

    @property
    def name(self) -> str:
        return "convert_length"

    @validated
    def execute(self, *, value: float, from_unit: Unit, to_unit: Unit = "m") -> ToolResult:
        try:
            converted = value * _METRES_PER_UNIT[from_unit] / _METRES_PER_UNIT[to_unit]
        except OverflowError:
            converted = float("inf")
        if abs(converted) == float("inf"):
            return ToolResult(
                success=False,
                error=f"{value} {from_unit} is too large to express in {to_unit}",
                hint="Use a smaller value or a larger unit.",
            )
        return ToolResult(success=True, data={"value": converted, "unit": to_unit})
