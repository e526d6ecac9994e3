"""Example tool_use entries, declared with the :func:`tool` decorator."""

from __future__ import annotations

import re
from typing import Any

from axm_runtime.tool_use import tool

__all__ = ["json_pointer_lookup", "temperature_convert"]

# An array index in a JSON pointer (RFC 6901): ASCII digits, no leading zero. str.isdigit()
# would also take "¹", which int() refuses.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")


@tool(
    name="json_pointer_lookup",
    description="Look up a value in a JSON document by RFC 6901 JSON pointer.",
    input_schema={
        "type": "object",
        "properties": {
            "document": {"description": "Any JSON value"},
            "pointer": {"type": "string", "pattern": "^(/.*)?$"},
        },
        "required": ["document", "pointer"],
        "additionalProperties": False,
    },
    output_schema={"type": "object", "required": ["found"]},
    tags=["json"],
)
def json_pointer_lookup(input_data: dict[str, Any]) -> dict[str, Any]:
    node = input_data["document"]
    if input_data["pointer"] == "":
        return {"found": True, "value": node}
    for token in input_data["pointer"][1:].split("/"):
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and _ARRAY_INDEX.fullmatch(key) and int(key) < len(node):
            node = node[int(key)]
        else:
            return {"found": False}
    return {"found": True, "value": node}


@tool(
    name="temperature_convert",
    description="Convert a temperature between Celsius, Fahrenheit and Kelvin.",
    input_schema={
        "type": "object",
        "properties": {
            "value": {"type": "number", "minimum": -1e6, "maximum": 1e6},
            "from_scale": {"enum": ["C", "F", "K"]},
            "to_scale": {"enum": ["C", "F", "K"]},
        },
        "required": ["value", "from_scale", "to_scale"],
    },
    output_schema={"type": "object", "properties": {"value": {"type": "number"}}},
)
def temperature_convert(input_data: dict[str, Any]) -> dict[str, float]:
    kelvin = {
        "C": lambda v: v + 273.15,
        "F": lambda v: (v - 32) * 5 / 9 + 273.15,
        "K": lambda v: v,
    }[input_data["from_scale"]](input_data["value"])
    if kelvin < 0:
        raise ValueError(f"{input_data['value']} {input_data['from_scale']} is below absolute zero")
    value = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}
    return {"value": round(value[input_data["to_scale"]], 6)}
