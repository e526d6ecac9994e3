"""Exception capture: what a call raised, as data the kit can read (an ExceptionInfo).

A tool's exception is read defensively: its ``str()`` may raise, its traceback may be a runaway
recursion, and its frames may hold on to whatever the tool allocated.
"""

from __future__ import annotations

import contextlib
import traceback
from pathlib import Path
from typing import Any

from axm_conformance._observation import ExceptionInfo
from axm_conformance._process.child._origin import OwnCode, origin

__all__ = ["exception_info", "release", "safe_exception_info", "type_name"]

_KIT_DIR = str(Path(__file__).resolve().parent)
_CAUSE_DEPTH = 8
# A traceback deeper than this (a runaway recursion) shows only its first and last frames.
_TRACEBACK_FRAMES = 1000
_TRACEBACK_HEAD = 50
_TRACEBACK_TAIL = 50
_MESSAGE_LIMIT = 10_000


def type_name(value: Any) -> str:
    """The name of ``value``'s type, as a plain str whatever the class made its name."""
    return str.__str__(type(value).__name__)


def release(exc: BaseException) -> None:
    """Clear the locals of the finished frames an exception and its causes hold on to."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _CAUSE_DEPTH:
        seen.add(id(current))
        with contextlib.suppress(Exception):
            traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__


def safe_exception_info(
    exc: BaseException, note: str = "", own: OwnCode | None = None
) -> ExceptionInfo:
    """:func:`exception_info`, or the bare type when describing the exception fails too."""
    try:
        return exception_info(exc, note=note, own=own)
    except BaseException:
        cls = type(exc)
        name = type_name(exc)
        return ExceptionInfo(
            type_name=name,
            qualified_name=f"{str.__str__(cls.__module__)}.{str.__str__(cls.__qualname__)}",
            ancestors=tuple(str.__str__(klass.__name__) for klass in cls.__mro__),
            message=note,
            traceback=f"{name}: <the traceback could not be formatted>\n",
            is_exception=isinstance(exc, Exception),
        )


def exception_info(
    exc: BaseException, depth: int = 0, note: str = "", own: OwnCode | None = None
) -> ExceptionInfo:
    """The exception as data, its traceback starting at the first frame outside the kit.

    ``note`` is added to the message, in parentheses. A message longer than 10,000 characters
    is cut, and so is a traceback deeper than 1,000 frames (to its first and last 50). Its
    origin, and its causes', is read from the traceback (see
    :mod:`axm_conformance._process.child._origin`), ``own`` being the tool's own code.
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_KIT_DIR):
        tb = tb.tb_next
    try:
        message = str.__str__(str(exc))
    except BaseException as read_error:
        message = f"<str() of the exception raised {type(read_error).__name__}>"
    if len(message) > _MESSAGE_LIMIT:
        message = f"{message[:_MESSAGE_LIMIT]}... ({len(message):,} characters)"
    if note:
        message = f"{message} ({note})" if message else note
    try:
        text = _format_traceback(exc, tb)
    except BaseException:
        text = f"{type(exc).__name__}: {message}\n"
    nested = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    cls: type[BaseException] = type(exc)
    found, where = origin(exc, own or OwnCode(), hidden=_KIT_DIR)
    return ExceptionInfo(
        type_name=str.__str__(cls.__name__),
        qualified_name=f"{cls.__module__}.{cls.__qualname__}",
        ancestors=tuple(str.__str__(klass.__name__) for klass in cls.__mro__),
        message=message,
        traceback=text,
        is_exception=isinstance(exc, Exception),
        cause=(
            exception_info(nested, depth + 1, own=own)
            if nested is not None and depth < _CAUSE_DEPTH
            else None
        ),
        origin=found,
        raised_in=where,
    )


def _format_traceback(exc: BaseException, tb: Any) -> str:
    """``traceback.format_exception``, cut to its first and last frames when it is very deep."""
    frames = 0
    cursor = tb
    while cursor is not None:
        frames += 1
        cursor = cursor.tb_next
    if frames <= _TRACEBACK_FRAMES:
        return "".join(traceback.format_exception(type(exc), exc, tb))
    head = traceback.format_list(traceback.extract_tb(tb, limit=_TRACEBACK_HEAD))
    tail_tb = tb
    for _ in range(frames - _TRACEBACK_TAIL):
        tail_tb = tail_tb.tb_next
    tail = traceback.format_exception(type(exc), exc, tail_tb, chain=False)
    omitted = frames - _TRACEBACK_HEAD - _TRACEBACK_TAIL
    return "".join([tail[0], *head, f"  [... {omitted:,} more frames ...]\n", *tail[1:]])
