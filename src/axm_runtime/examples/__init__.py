"""Small, correct, realistic tools of every protocol, certified by the README's main job.

``TOOLS`` lists them all, so that ``--axm-tool=axm_runtime.examples:TOOLS`` certifies them at once.
"""

from __future__ import annotations

from axm_runtime.examples.amplifier_tools import CalculatorTool, TextStatsTool
from axm_runtime.examples.axio_tools import paginate, search_notes, slugify
from axm_runtime.examples.axm_tools import UnitConvertTool, WordCountTool
from axm_runtime.examples.tool_use_tools import json_pointer_lookup, temperature_convert

__all__ = [
    "TOOLS",
    "CalculatorTool",
    "TextStatsTool",
    "UnitConvertTool",
    "WordCountTool",
    "json_pointer_lookup",
    "paginate",
    "search_notes",
    "slugify",
    "temperature_convert",
]

TOOLS = [
    WordCountTool(),
    UnitConvertTool(),
    search_notes,
    slugify,
    paginate,
    json_pointer_lookup,
    temperature_convert,
    CalculatorTool(),
    TextStatsTool(),
]
