"""The kit's ends of a worker's pipes: frames sent and received within a deadline, and the
worker's exit noticed while waiting. Where poll() takes pipes they are waited on with it (and the
worker's pidfd); on Windows each end is served by a thread of its own.
"""

from __future__ import annotations

import math
import os
import queue
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import Literal, Protocol, TypeVar

from axm_conformance._process._channel import HEADER, read_exact, write_frame
from axm_conformance._process.system._platform import PLATFORM

__all__ = ["Ends", "Lost", "never", "open_ends"]


class _Child(Protocol):
    """The worker process as the ends wait on it: spawned or forked."""

    @property
    def exit_fd(self) -> int | None:
        """Readable once the worker has exited (None without pidfds)."""

    def exited(self) -> bool: ...


# A reply longer than this is treated as a broken channel rather than allocated.
_MAX_FRAME = 1 << 30
# Without a pidfd the parent checks the worker's liveness this often while waiting.
_LIVENESS_INTERVAL = 0.05
# How long the threads serving a stopped worker's pipes get to see them close.
_THREAD_GRACE = 5.0


class Lost(Exception):
    """The worker did not answer: why, as one of timeout, closed, exited, protocol."""

    def __init__(
        self, reason: Literal["timeout", "closed", "exited", "protocol"], detail: str = ""
    ):
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


if sys.platform != "win32":  # poll() takes sockets only on Windows

    class PolledEnds:
        """The kit's ends of a worker's pipes, non-blocking and waited on with poll(), along with
        the worker's pidfd when there is one.

        Each method raises :class:`Lost` when the worker exits, closes its end or runs out of
        time.
        """

        def __init__(self, child: _Child, to_worker: int, from_worker: int) -> None:
            self.child = child
            self.to_worker = to_worker
            self.from_worker = from_worker
            # Non-blocking ends, so that every wait goes through poll() and its deadline.
            os.set_blocking(to_worker, False)
            os.set_blocking(from_worker, False)
            # Readable once the worker has exited; without one, liveness is polled.
            self.exit_fd = child.exit_fd

        def send(self, tag: bytes, body: bytes, deadline: float) -> None:
            """Write one frame to the worker."""
            try:
                write_frame(
                    self.to_worker,
                    tag,
                    body,
                    lambda: self._wait(self.to_worker, select.POLLOUT, deadline),
                )
            except BrokenPipeError:
                raise Lost("closed") from None

        def receive(self, deadline: float) -> tuple[bytes, bytearray]:
            """Read one frame from the worker."""

            def wait() -> None:
                self._wait(self.from_worker, select.POLLIN, deadline)

            try:
                return _read_reply(self.from_worker, wait)
            except EOFError:
                raise Lost("closed") from None

        def exited_within(self, seconds: float) -> bool:
            """Wait up to seconds for the worker to exit; tell whether it did."""
            try:
                return not self._ready(None, 0, time.monotonic() + seconds)
            except Lost:
                return False

        def close(self) -> None:
            os.close(self.to_worker)
            os.close(self.from_worker)

        def _wait(self, fd: int, events: int, deadline: float) -> None:
            """Wait until fd is ready for events; Lost when the worker exits or time is up."""
            if not self._ready(fd, events, deadline):
                raise Lost("exited")

        def _ready(self, fd: int | None, events: int, deadline: float) -> bool:
            """Wait until fd is ready for events (True) or the worker has exited (False).

            Raises Lost("timeout") at the deadline.
            """
            poller = select.poll()
            if fd is not None:
                poller.register(fd, events)
            if self.exit_fd is not None:
                poller.register(self.exit_fd, select.POLLIN)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Lost("timeout")
                if self.exit_fd is None:
                    remaining = min(remaining, _LIVENESS_INTERVAL)
                ready = [ready_fd for ready_fd, _ in poller.poll(math.ceil(remaining * 1000))]
                # Data already written is read before the worker's exit is noticed.
                if fd in ready:
                    return True
                if self.child.exited():
                    return False


_Item = TypeVar("_Item")


class ThreadedEnds:
    """The kit's ends of a worker's pipes, blocking, each served by a thread of its own: the
    portable way, for Windows cannot poll() a pipe.

    The reader thread reads frame after frame into a queue until the pipe closes; the writer
    thread writes each frame it is handed and says how that went. The caller waits on their
    queues with its deadline, asking every ``_LIVENESS_INTERVAL`` whether the worker has exited.
    Each method raises :class:`Lost` as :class:`PolledEnds`' do.
    """

    def __init__(self, child: _Child, to_worker: int, from_worker: int) -> None:
        self.child = child
        self.to_worker = to_worker
        self.from_worker = from_worker
        self.replies: queue.SimpleQueue[tuple[bytes, bytearray] | Lost] = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue[tuple[bytes, bytes] | None] = queue.SimpleQueue()
        self.written: queue.SimpleQueue[OSError | None] = queue.SimpleQueue()
        self.threads = [
            threading.Thread(target=self._read, name="axm-worker-reader", daemon=True),
            threading.Thread(target=self._write, name="axm-worker-writer", daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def send(self, tag: bytes, body: bytes, deadline: float) -> None:
        """Write one frame to the worker."""
        self.outbox.put((tag, body))
        if self._next(self.written, deadline) is not None:
            raise Lost("closed")

    def receive(self, deadline: float) -> tuple[bytes, bytearray]:
        """Read one frame from the worker."""
        reply = self._next(self.replies, deadline)
        if isinstance(reply, Lost):
            raise reply
        return reply

    def exited_within(self, seconds: float) -> bool:
        """Wait up to seconds for the worker to exit; tell whether it did."""
        deadline = time.monotonic() + seconds
        while not self.child.exited():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_LIVENESS_INTERVAL)
        return True

    def close(self) -> None:
        """End the threads, then close the ends (the worker and all it started are dead by
        now, so the reader sees its pipe close). An end whose thread still blocks on it stays
        open: closing it could let the thread read or write a file opened later in its place.
        """
        self.outbox.put(None)
        for thread, fd in zip(self.threads, (self.from_worker, self.to_worker), strict=True):
            thread.join(_THREAD_GRACE)
            if not thread.is_alive():
                os.close(fd)

    def _next(self, items: queue.SimpleQueue[_Item], deadline: float) -> _Item:
        """The next item a thread gives, waiting until the deadline or the worker's exit."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Lost("timeout")
            try:
                return items.get(timeout=min(remaining, _LIVENESS_INTERVAL))
            except queue.Empty:
                if not self.child.exited():
                    continue
            # Data already written is read before the worker's exit is noticed.
            try:
                return items.get(timeout=_LIVENESS_INTERVAL)
            except queue.Empty:
                raise Lost("exited") from None

    def _read(self) -> None:
        while True:
            try:
                reply = _read_reply(self.from_worker, never)
            except (EOFError, OSError):
                self.replies.put(Lost("closed"))
                return
            except Lost as lost:
                self.replies.put(lost)
                return
            self.replies.put(reply)

    def _write(self) -> None:
        while (frame := self.outbox.get()) is not None:
            try:
                write_frame(self.to_worker, *frame, never)
            except OSError as exc:
                self.written.put(exc)
            else:
                self.written.put(None)


if sys.platform == "win32":
    Ends = ThreadedEnds
else:
    Ends = PolledEnds | ThreadedEnds


def _read_reply(fd: int, wait: Callable[[], None]) -> tuple[bytes, bytearray]:
    """Read one frame from the worker, refusing one too large to be a reply."""
    length, tag = HEADER.unpack(read_exact(fd, HEADER.size, wait))
    if length > _MAX_FRAME:
        detail = f"the worker announced a {length}-byte frame, over the {_MAX_FRAME} limit"
        raise Lost("protocol", detail)
    return tag, read_exact(fd, length, wait)


def never() -> None:
    """The wait of a blocking descriptor, which never has to wait."""
    raise AssertionError("a blocking descriptor would block")


def open_ends(child: _Child, to_worker: int, from_worker: int) -> Ends:
    """The kit's ends of a new worker's pipes: polled where poll() takes pipes, else served by
    threads."""
    if sys.platform != "win32" and PLATFORM.poll_pipes:
        return PolledEnds(child, to_worker, from_worker)
    return ThreadedEnds(child, to_worker, from_worker)
