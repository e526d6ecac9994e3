"""Wire checks: what a tool served over JSON-RPC answers a valid input (an MCP server's tool).

A schema-valid input gets a result, never an error response; every answer is a well-formed
message of the protocol, with nothing else written meanwhile; and a structured result is also
given as text, for clients that read only the content.
"""

from __future__ import annotations

import json
from typing import Any

from axm_conformance._checks._registry import Context, Found, check, first_few
from axm_conformance._checks.invalid import INVALID_PARAMS
from axm_conformance._checks.schema import input_unusable
from axm_conformance._observation import Call, SubjectInfo
from axm_conformance._outcomes import warning

__all__: list[str] = []


@check(
    "no-error-response",
    "calls",
    applies=input_unusable,
    considers=("returned",),
    requires=("json-rpc",),
)
def no_error_response(subject: SubjectInfo, call: Call, context: Context) -> Found:
    """A valid input gets a result, never a JSON-RPC error."""
    result = call.observation.result
    assert result is not None
    if result.type_name != subject.result.error_type:
        return
    error = result.fields.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    shown = json.dumps(error, ensure_ascii=False)[:300]
    if code == INVALID_PARAMS:
        yield (
            f"refused a schema-valid input as invalid params: {shown}; the input schema "
            "promises what the tool does not accept"
        )
    else:
        yield f"answered a schema-valid input with the JSON-RPC error {shown}"


@check(
    "result-well-formed",
    "results",
    applies=input_unusable,
    considers=("returned",),
    requires=("json-rpc",),
)
def result_well_formed(subject: SubjectInfo, call: Call, context: Context) -> Found:
    """The answer is a valid message of its version (content blocks included), alone on stdout."""
    result = call.observation.result
    assert result is not None
    yield from first_few(result.wire_errors, "places where the answer breaks the wire")


def _mirrored(subject: SubjectInfo) -> str | None:
    if subject.output_schema is None:
        return "the tool declares no output schema"
    return None


@check(
    "structured-content-mirrored",
    "results",
    applies=lambda s: input_unusable(s) or _mirrored(s),
    considers=("returned",),
    requires=("json-rpc", "output-schema"),
)
def structured_content_mirrored(subject: SubjectInfo, call: Call, context: Context) -> Found:
    """A structured result also appears as JSON in a text block of the content."""
    result = call.observation.result
    assert result is not None
    field = subject.result.structured_field
    if result.truncated or not subject.result.succeeded(result) or field not in result.fields:
        return
    texts = [
        block.get("text")
        for block in result.fields.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    if not any(_carries(text, result.fields[field]) for text in texts):
        yield warning(
            f"the {field} appears in no text block as its JSON: a client that reads only the "
            "content does not see it"
        )


def _carries(text: Any, structured: Any) -> bool:
    """Whether a text block gives what the structured content holds: its JSON, or, for content
    that wraps one value (``{"result": 4}``, as SDKs wrap a function's plain return value),
    that value, as JSON or, for a string, as the text itself."""
    values = [structured]
    if isinstance(structured, dict) and len(structured) == 1:
        values += list(structured.values())
    if not isinstance(text, str):
        return False
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = _UNPARSED
    return any(value in (parsed, text) for value in values)


_UNPARSED = object()
