"""Whether anything changed in some directories since last asked: Linux inotify, through libc.

The worker walks the project's files after every call to tell what the call wrote there. Most
calls write nothing, and a walk costs far more than a small tool's call; watching the walked
directories tells, for the price of one non-blocking read, that nothing changed, so the walk is
made only when something did. The standard library has no inotify binding, hence ctypes. Where
libc has none (not Linux) or a watch cannot be added (the user's inotify limits), the caller is
told so and walks every time.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from collections.abc import Callable, Iterable

__all__ = ["DirectoryEvents", "open_events"]

# From <sys/inotify.h>: what changes a directory's entries or an entry's (mtime, size, inode).
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
# struct inotify_event: wd, mask, cookie, len, then len bytes of NUL-padded name.
_EVENT = struct.Struct("iIII")
_READ_SIZE = 64 * 1024


class DirectoryEvents:
    """An inotify instance watching directories (not their subdirectories: add each)."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd
        self._watched: set[str] = set()

    def watch(self, directories: Iterable[str]) -> bool:
        """Watch the directories not watched yet; False when one could not be watched."""
        for directory in directories:
            if directory in self._watched:
                continue
            if self._libc.inotify_add_watch(self._fd, os.fsencode(directory), _MASK) < 0:
                # A directory removed since it was listed is no loss; anything else is.
                if ctypes.get_errno() != 2:  # ENOENT
                    return False
                continue
            self._watched.add(directory)
        return True

    def changed(self, ignored: Callable[[str], bool]) -> bool:
        """Whether an event whose name is not ``ignored`` arrived since the last call.

        Events without a name (a watched directory itself removed or moved, the queue
        overflowing) always count.
        """
        changed = False
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return changed
            offset = 0
            while offset < len(data):
                _, _, _, length = _EVENT.unpack_from(data, offset)
                start = offset + _EVENT.size
                name = data[start : start + length].rstrip(b"\0")
                offset = start + length
                changed = changed or not name or not ignored(os.fsdecode(name))

    def close(self) -> None:
        os.close(self._fd)


def open_events() -> DirectoryEvents | None:
    """A new inotify instance, or None where there is none to be had."""
    if sys.platform == "win32":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    return DirectoryEvents(libc, fd) if fd >= 0 else None
