"""Errors dressed as successes: a result that reports success while its payload is an error.

A tool that answers "Database error: no such table" or ``{"status": "error"}`` and marks the
answer a success misleads the client, which retries nothing and tells the user it worked, and it
misleads the kit, which would count the call as served. A success is an error in disguise when
its text or payload takes one of the forms errors take:

- a leading error label: ``Error:``, ``**Error:**``, ``<Word> error:`` (``Database error:``),
  ``<Name>Error:`` or ``<Name>Exception:`` (``sqlite3.OperationalError:``);
- a Python exception's own text: a traceback, a message Python's built-in errors give
  (``'NoneType' object has no attribute 'x'``, ``[Errno 2] ...``), or, as the whole text, an
  exception's repr (``KeyError('nope')``, what ``repr(exc)`` or an f-string's ``!r`` gives);
- a JSON payload whose status says error: ``"result": "error"``, ``"status": "error"``,
  ``"success": false``, a non-empty ``error`` field, or a content block annotated ``error``;
  a tool result wrapped in the payload (its ``isError``, its ``content``) is read the same way;
- the form of an error the same tool or server gave in this run (learnt where the tool runs:
  ``ResultFacts.resembled_error``).

Only the start of a text is read: a served answer that mentions an error further on (a log
search, a diff) is not one.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["error_form"]

# An error label at the start: "Error:", "**Error:**", "Parser Error:", "FATAL ERROR -".
_LABEL = re.compile(
    r"[\s*_#>`\[]*(?!no\b)(?:[A-Za-z][\w-]*\s)?(?:error|exception)\b[\s*_`\]]*[:\-–—]",
    re.IGNORECASE,
)
# An exception class's name and a colon: "ValueError:", "sqlite3.OperationalError:".
_EXCEPTION_NAME = re.compile(r"[\s*_`]*(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)[\s*_`]*:")
# The messages of Python's own errors, which a tool that returns str(exc) passes on unlabelled.
_PYTHON_MESSAGE = re.compile(
    r"\s*(?:Traceback \(most recent call last\)"
    r"|'\w+' object (?:has no attribute|is not (?:subscriptable|callable|iterable))"
    r"|unsupported operand type\(s\)"
    r"|\w+\(\) (?:takes \d+|missing \d+ required|got an unexpected keyword)"
    r"|(?:list|string|tuple) index out of range"
    r"|(?:integer |float )?division (?:or modulo )?by zero"
    r"|\[Errno \d+\])"
)
# An exception's repr as the whole text: "KeyError('nope')", "json.JSONDecodeError(...)".
_EXCEPTION_REPR = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\(.*\)", re.DOTALL)
_ERROR_STATUS = ("result", "status")
# A text longer than this is not parsed as JSON to read its status: a payload that large is
# data, and reading it on every call would cost more than the rest of the judgement.
_PARSED = 64 * 1024


def error_form(payload: Any) -> str:
    """Why ``payload`` (a success's text, JSON value or content blocks) has the form of an
    error, in a few words; "" when it does not."""
    if isinstance(payload, str):
        return _text_form(payload)
    if isinstance(payload, dict):
        return _mapping_form(payload)
    if isinstance(payload, list):
        blocks = [block for block in payload if isinstance(block, dict)]
        for block in blocks:
            annotations = block.get("annotations")
            if isinstance(annotations, dict) and _present(annotations.get("error")):
                return "a content block annotated as an error"
        texts = [block.get("text") for block in blocks if block.get("type") == "text"]
        return _text_form("".join(text for text in texts if isinstance(text, str)))
    return ""


def _text_form(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return ""
    if stripped[0] == "{" and len(stripped) <= _PARSED:
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return _mapping_form(parsed)
    if _EXCEPTION_NAME.match(stripped):
        return "it begins with an exception's name"
    if _LABEL.match(stripped):
        return "it begins with an error label"
    if _PYTHON_MESSAGE.match(stripped):
        return "it is a Python exception's message"
    if _EXCEPTION_REPR.fullmatch(stripped):
        return "it is an exception's repr"
    return ""


def _mapping_form(payload: dict[str, Any]) -> str:
    # A tool result wrapped in the payload, as servers that pass on their own results do.
    if payload.get("isError") is True:
        return 'its "isError" is true'
    content = payload.get("content")
    if isinstance(content, list):
        found = error_form(content)
        if found:
            return found
    for key in _ERROR_STATUS:
        value = payload.get(key)
        if isinstance(value, str) and value.strip().lower() == "error":
            return f'its "{key}" is "error"'
    if payload.get("success") is False:
        return 'its "success" is false'
    if _present(payload.get("error")):
        return 'it has an "error"'
    return ""


def _present(value: Any) -> bool:
    """Whether an ``error`` member says there was one (not null, false, "" or empty)."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, bool):
        return value
    return isinstance(value, dict | list) and bool(value)
