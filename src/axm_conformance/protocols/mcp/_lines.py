"""A line a server wrote on stdout, read as the stdio transport's text: a JSON value, or what
keeps it from being one a strict parser reads (bytes that are not UTF-8, a lone UTF-16
surrogate, a number no integer parser takes, nesting deeper than a parser reads). Whatever the
bytes, the result is a value, a stray line or a trouble kept, never an exception.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["UNREADABLE", "parse", "shortened"]

# Python refuses to turn more digits than this into an int (sys.int_info); JSON sets no bound.
_INT_DIGITS = 4000
# The most of a line kept for a report.
_KEPT = 500
UNREADABLE = object()
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# What json.loads leaves of an escaped surrogate no other completes. The kit's own pattern
# (_outcomes) is not imported: a protocol reaches the core only through its public modules.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def shortened(text: str) -> str:
    return text if len(text) <= _KEPT else f"{text[:_KEPT]}... ({len(text)} characters)"


def parse(line: bytes) -> tuple[Any, str, list[str]]:
    """A line of stdout read as a JSON value (None when it is no JSON, ``UNREADABLE`` when it
    is meant as a message that no parser reads), its text, and where it breaks the transport's
    text: bytes that are not UTF-8, a lone UTF-16 surrogate (not Unicode: strict parsers, the
    Python SDK's among them, refuse the whole message), a message nested past a parser's depth."""
    troubles: list[str] = []
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        troubles.append(
            f"wrote bytes that are not UTF-8 ({line[exc.start : exc.end]!r} at byte {exc.start});"
            " the stdio transport's messages are UTF-8"
        )
        text = line.decode("utf-8", "replace")
    text = text.rstrip("\r\n")
    meant = '"jsonrpc"' in text
    try:
        value = json.loads(text, parse_int=_integer, parse_constant=_no_constant)
    except RecursionError:
        troubles.append(
            "wrote a message nested deeper than Python's JSON parser reads (about 1,000 "
            "levels); parsers with a depth limit refuse it"
        )
        return UNREADABLE, text, troubles
    except ValueError:
        return (UNREADABLE if meant else None), text, troubles
    if _SURROGATE_ESCAPE.search(text):
        value, lone = _without_lone_surrogates(value)
        if lone:
            troubles.append(
                f"a string holds the lone UTF-16 surrogate {lone!r}, which is not Unicode text: "
                "strict JSON parsers refuse the whole message"
            )
    return value, text, troubles


def _integer(text: str) -> int | float:
    # More digits than an int takes is a number all the same: as a float (infinity, which the
    # result's own checks name).
    return int(text) if len(text) <= _INT_DIGITS else float(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _without_lone_surrogates(value: Any) -> tuple[Any, str]:
    """``value`` with every lone surrogate replaced by U+FFFD, and the first one found."""
    found: list[str] = []

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            lone = _LONE_SURROGATE.findall(item)
            found.extend(lone)
            return _LONE_SURROGATE.sub("\ufffd", item) if lone else item
        if isinstance(item, list):
            return [clean(x) for x in item]
        if isinstance(item, dict):
            return {clean(key): clean(x) for key, x in item.items()}
        return item

    cleaned = clean(value)
    return cleaned, (found[0] if found else "")
