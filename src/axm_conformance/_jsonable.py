"""Values as JSON carries them: a strict rendering that lists what JSON cannot carry exactly, one
canonical text per value (to compare and fingerprint), and the first place two values differ.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from axm_conformance._outcomes import LONE_SURROGATE

__all__ = ["JsonPath", "canonical_json", "first_difference", "jsonable", "shown_path", "strings_in"]


def jsonable(value: Any, *, limit: int = 64) -> tuple[Any, list[str]]:
    """A strict-JSON rendering of ``value`` and the paths where it is not strict JSON.

    Values JSON cannot carry exactly (NaN, infinities, sets, bytes, dates, non-string keys, custom
    objects, cycles, strings holding a lone surrogate) are replaced by a description and listed
    as problems, so one bad value does not hide the rest. Tuples are accepted as arrays, as
    ``json.dumps`` writes them.
    """
    problems: list[str] = []

    def render(item: Any, path: str, depth: int, seen: frozenset[int]) -> Any:
        # isascii() reads a flag: a megabyte result is not scanned when it cannot hold one.
        lone = LONE_SURROGATE.search(item) if isinstance(item, str) and not item.isascii() else None
        if lone is not None:
            problems.append(
                f"{path}: holds the lone UTF-16 surrogate {lone.group()!r}, which is no Unicode "
                "text: UTF-8 encoders and pydantic's str refuse it"
            )
            return LONE_SURROGATE.sub("\ufffd", item)
        if item is None or isinstance(item, bool | str):
            return item
        if isinstance(item, int):
            return int(item)
        if isinstance(item, float):
            if math.isfinite(item):
                return float(item)
            problems.append(f"{path}: {item!r} is not a JSON number")
            return repr(item)
        if depth >= limit:
            problems.append(f"{path}: nested deeper than {limit} levels")
            return "<too deep>"
        if id(item) in seen:
            problems.append(f"{path}: contains itself")
            return "<cycle>"
        inner = seen | {id(item)}
        if isinstance(item, list | tuple):
            return [render(x, f"{path}[{i}]", depth + 1, inner) for i, x in enumerate(item)]
        if isinstance(item, dict):
            rendered: dict[str, Any] = {}
            for key, x in item.items():
                if not isinstance(key, str):
                    problems.append(f"{path}: key {key!r} is a {type(key).__name__}, not a string")
                rendered[str(key)] = render(x, f"{path}.{key}", depth + 1, inner)
            return rendered
        problems.append(f"{path}: {_describe(item)} is not a JSON value")
        return f"<{type(item).__name__}>"

    return render(value, "$", 0, frozenset()), problems


def _describe(item: Any) -> str:
    try:
        text = repr(item)
    except Exception:
        text = f"<{type(item).__name__}>"
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(item).__name__})"


def first_difference(before: Any, after: Any, path: str = "$") -> str:
    """The first place two JSON values differ, as a sentence; "" when they are equal."""
    if type(before) is not type(after):
        return f"{path} changed from {_short(before)} to {_short(after)}"
    if isinstance(before, dict):
        for key in before:
            if key not in after:
                return f"{path}.{key} was removed"
            found = first_difference(before[key], after[key], f"{path}.{key}")
            if found:
                return found
        added = [key for key in after if key not in before]
        return f"{path}.{added[0]} was added" if added else ""
    if isinstance(before, list):
        for index, (old, new) in enumerate(zip(before, after, strict=False)):
            found = first_difference(old, new, f"{path}[{index}]")
            if found:
                return found
        if len(before) != len(after):
            return f"{path} went from {len(before)} to {len(after)} items"
        return ""
    return "" if before == after else f"{path} changed from {_short(before)} to {_short(after)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def canonical_json(value: Any) -> str:
    """One text per JSON value: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# A place in a JSON value: property names and item indexes, from the top.
JsonPath = tuple[str | int, ...]


def strings_in(value: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, str]]:
    """Every string of a JSON value (keys aside), with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings_in(item, (*path, index))


def shown_path(path: JsonPath) -> str:
    """A path as a person reads it in Python: ``['hosts'][0]``."""
    return "".join(f"[{step!r}]" for step in path)
