"""How MCP judges a server's answer to an input that breaks a tool's schema: the protocol's
``Policy.judge_invalid``, which the kit's ``invalid-input-handled`` check defers to.

An input validation error is a tool execution error (an ``isError`` result the model reads) or
the JSON-RPC error "invalid params" (-32602); any other error response (an internal error, say)
fails, and is a warning where the version the server speaks lets invalid arguments be any
protocol error. A success is a warning: the server accepted what its schema refuses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from axm_conformance.protocols.base import Finding, Observation, SubjectInfo, failure, warning
from axm_conformance.protocols.mcp._versions import INVALID_PARAMS

__all__ = ["judge_invalid"]


def judge_invalid(subject: SubjectInfo, observation: Observation) -> Iterator[Finding]:
    """The findings of the answer to an input that breaks the schema."""
    result = observation.result
    assert result is not None
    # An answer that broke the wire (a stray line on stdout) breaks the client's session,
    # whatever the answer.
    for wrong in result.wire_errors:
        yield failure(wrong, kind="wire")
    if result.type_name == subject.result.error_type:
        error = result.fields.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        wrong_error: dict[str, Any] = {"kind": "wrong-error", "data": {"code": code}}
        if code != INVALID_PARAMS and subject.errors_refuse:
            yield warning(
                f"answered an invalid input with the {result.type_name} "
                f"{json.dumps(error)[:300]}, not invalid params ({INVALID_PARAMS}); "
                f"{subject.errors_refuse}, and a client gives the model either as the "
                "tool's error",
                **wrong_error,
            )
        elif code != INVALID_PARAMS:
            yield failure(
                f"answered an invalid input with the {result.type_name} "
                f"{json.dumps(error)[:300]}: an input that breaks the schema is refused "
                "with an error result (isError: true) or the error invalid params "
                f"({INVALID_PARAMS})",
                **wrong_error,
            )
    elif subject.result.succeeded(result):
        yield warning("accepted an invalid input and reported success", kind="accepted")
