"""The channel between the kit and a worker process: length-prefixed frames over a pair of pipes.

The kit sends the start message, then one call at a time; the worker answers the start with
ready (an empty body) or an error, and each call with a value or an error. Bodies are pickles; an
error's is the (type name, message, traceback) strings.
"""

from __future__ import annotations

import os
import signal
import struct
import sys
from collections.abc import Callable

__all__ = [
    "CALL",
    "ERROR",
    "HEADER",
    "READY",
    "STACK_SIGNAL",
    "START",
    "VALUE",
    "error_type",
    "read_exact",
    "read_frame",
    "write_frame",
]

# Frame header: body length, then a one-byte tag saying what the body is.
HEADER = struct.Struct(">Qc")
START, CALL, READY, VALUE, ERROR = b"S", b"C", b"R", b"V", b"E"
# Asks a hung worker for its stacks, which it writes to its stderr; Windows has no such signal.
if sys.platform == "win32":
    STACK_SIGNAL = None
else:
    STACK_SIGNAL = signal.SIGUSR1


def read_frame(fd: int, wait: Callable[[], None]) -> tuple[bytes, bytearray]:
    """Read one frame: its tag and body. ``wait`` is called whenever fd has nothing yet."""
    length, tag = HEADER.unpack(read_exact(fd, HEADER.size, wait))
    return tag, read_exact(fd, length, wait)


def write_frame(fd: int, tag: bytes, body: bytes, wait: Callable[[], None]) -> None:
    """Write one frame. ``wait`` is called whenever fd cannot take more yet."""
    _write_all(fd, [HEADER.pack(len(body), tag), body], wait)


def read_exact(fd: int, size: int, wait: Callable[[], None]) -> bytearray:
    """Read exactly size bytes, calling wait whenever fd has nothing yet; EOFError at EOF."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        try:
            count = _read_into(fd, view[done:])
        except BlockingIOError:
            wait()
            continue
        if count == 0:
            raise EOFError
        done += count
    return buffer


def _write_all(fd: int, parts: list[bytes], wait: Callable[[], None]) -> None:
    """Write all parts, calling wait whenever fd cannot take more yet."""
    views = [memoryview(part) for part in parts if part]
    while views:
        try:
            count = _write_some(fd, views)
        except BlockingIOError:
            wait()
            continue
        while views and count >= len(views[0]):
            count -= len(views[0])
            views.pop(0)
        if views:
            views[0] = views[0][count:]


def _read_into(fd: int, view: memoryview) -> int:
    """Read what fd has into view (its start); 0 at EOF."""
    if sys.platform == "win32":  # no readv: the bytes are copied once more
        chunk = os.read(fd, len(view))
        view[: len(chunk)] = chunk
        return len(chunk)
    return os.readv(fd, [view])


def _write_some(fd: int, views: list[memoryview]) -> int:
    """Write what fd takes of views, in order; how many bytes."""
    if sys.platform == "win32":  # no writev: one part at a time
        return os.write(fd, views[0])
    return os.writev(fd, views)


def error_type(exc: BaseException) -> str:
    """The type an error report names: qualified by its module, unless it is a builtin."""
    kind = type(exc)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"
