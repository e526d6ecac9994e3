"""An event stream as the kit's client reads it, and a request's stream resumed where the server
closed it before the answer.

The stream is read as the WHATWG rules say: ``data`` lines joined by newlines, an event ended by
a blank line, ``id`` and ``retry`` kept, comments and other fields skipped. A request's stream
may end before its answer: a server of 2025-11-25 may close the connection once it sent an event
with an id, and the client then asks for the rest with a GET carrying ``Last-Event-ID``, after
waiting the ``retry`` the server set (transports, Sending Messages to the Server and
Resumability and Redelivery). The kit's client does so, or a correct server that polls would
lose every answer.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "answer_stream", "answers", "read_events"]

# The longest wait between a stream's end and its resumption the kit honours: a server's
# ``retry`` beyond it is cut to it, so that no call outlives its timeout waiting.
_LONGEST_RETRY = 5.0


@dataclass(frozen=True)
class Event:
    """One event: its type (``message`` unless named), its data (empty for a priming event or
    a ``retry`` alone), the id it set (None where it set none), the ``retry`` it set in
    milliseconds (None where none), and ``connection``, which of the request's connections
    carried it (0 the POST's, then each resumption's)."""

    kind: bytes
    data: bytes
    id: str | None = None
    retry: int | None = None
    connection: int = 0


def read_events(lines: Iterator[bytes]) -> Iterator[Event]:
    """Every event of a stream whose lines are given, in order: each block that set a field,
    whether or not it has data."""
    data: list[bytes] = []
    kind = b""
    event_id: str | None = None
    retry: int | None = None
    seen = False
    # A stream ends its last event as a blank line would.
    for raw in itertools.chain(lines, [b""]):
        line = raw.rstrip(b"\r\n")
        if not line:
            if seen:
                yield Event(kind or b"message", b"\n".join(data), event_id, retry)
            data, kind, event_id, retry, seen = [], b"", None, None, False
            continue
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if not name:
            continue  # a comment
        seen = True
        if name == b"data":
            data.append(value)
        elif name == b"event":
            kind = value
        elif name == b"id" and b"\0" not in value:
            event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            retry = int(value)


def answers(data: bytes, request_id: Any) -> bool:
    """Whether a message is the answer (a result or an error) to the request ``request_id``."""
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return (
        isinstance(message, dict)
        and message.get("id") == request_id
        and ("result" in message or "error" in message)
    )


def answer_stream(
    lines: Iterator[bytes],
    request_id: Any,
    resume: Callable[[str], Iterator[bytes] | None],
) -> Iterator[Event]:
    """Every event of the stream that answers ``request_id``, whose lines are given: where it
    ends before the answer, after an event with an id, resumed with ``resume(last id)`` (the
    lines of the GET that asks for the rest, None where there is none) once the server's
    ``retry`` has passed, for as long as each resumption brings an event."""
    last_id: str | None = None
    retry = 0
    for connection in itertools.count():
        answered = brought = False
        for event in read_events(lines):
            brought = True
            last_id = event.id if event.id is not None else last_id
            retry = event.retry if event.retry is not None else retry
            yield dataclasses.replace(event, connection=connection)
            answered = answered or answers(event.data, request_id)
        if answered or last_id is None or (connection and not brought):
            return
        time.sleep(min(retry / 1000, _LONGEST_RETRY))
        resumed = resume(last_id)
        if resumed is None:
            return
        lines = resumed
