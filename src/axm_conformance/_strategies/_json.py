"""JSON values as the strategies read them: canonical text, kinds, and paths in labels."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from hypothesis import strategies as st

__all__ = [
    "KINDS",
    "MISSING",
    "TYPE_KINDS",
    "Check",
    "Path",
    "Strategy",
    "canonical",
    "escape",
    "fragment",
    "kind_of",
    "place",
    "replaced",
    "short",
]

Strategy = st.SearchStrategy[Any]
Path = tuple[str | int, ...]
Check = Callable[[Any], bool]

# JSON kinds, in the order simplest values are tried: "number" is a non-integer number here,
# since the JSON Schema type "number" admits integers too (see TYPE_KINDS).
KINDS: Final = ("string", "integer", "number", "boolean", "object", "array", "null")
TYPE_KINDS: Final[dict[str, frozenset[str]]] = {
    **{name: frozenset({name}) for name in KINDS},
    "number": frozenset({"integer", "number"}),
}
MISSING: Final[Any] = object()  # "no simplest value here"


def _normalized(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _normalized(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value


def canonical(value: Any) -> str:
    """Canonical JSON text: equal texts for values JSON Schema calls equal (1 == 1.0, true != 1)."""
    return json.dumps(
        _normalized(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def kind_of(value: Any) -> str:
    """The kind of a JSON value (one of `KINDS`): a float that is a whole number is an integer."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def short(value: Any) -> str:
    """A value as JSON text, cut to 40 characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else f"{text[:37]}..."


def place(path: Path) -> str:
    """How a label names a location in an input: ``input``, ``a.b[0]``."""
    if not path:
        return "input"
    text = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)
    return text.removeprefix(".")


def fragment(pointer: str) -> str:
    """A JSON pointer as a URI fragment, the way errors name a place in the schema."""
    return f"#{pointer}"


def escape(key: str | int) -> str:
    """A key as a JSON pointer token."""
    return str(key).replace("~", "~0").replace("/", "~1")


def replaced(value: Any, path: Path, new: Any) -> Any:
    """A copy of `value` with the location at `path` replaced; only the path itself is copied."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = replaced(value[head], rest, new)  # type: ignore[index]
    return copy
