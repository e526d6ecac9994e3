"""What a call changed in a working directory: files created, appended to, overwritten, deleted.

A tool served from another process works in the worker's throw-away directory; its declared
behaviour (read-only, additive only, idempotent) is held to what a call does there. Files are
compared by content, so a file written again with the same bytes has not changed, and a file
whose old content is the start of its new content was appended to, not overwritten. Entries at
the top whose name starts with a dot are left out: the kit's own logs, and what programs keep in
their home (caches, configuration), which the directory also is.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field

__all__ = ["Snapshot", "snapshot"]

# Larger files are compared by size and modification time only.
_HASHED = 4 * 1024 * 1024


@dataclass(frozen=True)
class _File:
    size: int
    digest: str
    # What stat says of the file: when it is unchanged, so is the digest (not read again).
    # Not compared: a file rewritten with the same bytes has not changed.
    stamp: tuple[int, int, int] = field(default=(0, 0, 0), compare=False)


@dataclass(frozen=True)
class Snapshot:
    """The files under a directory, by path relative to it."""

    root: str
    files: dict[str, _File]

    def digest(self) -> str:
        """One digest of every file's path and content."""
        text = "\n".join(f"{path}\0{entry.digest}" for path, entry in sorted(self.files.items()))
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()

    def changes(self, after: Snapshot) -> tuple[str, ...]:
        """What happened between this snapshot and ``after``, one phrase per file."""
        found = []
        for path in sorted(self.files.keys() | after.files.keys()):
            old, new = self.files.get(path), after.files.get(path)
            if old == new:
                continue
            if old is None:
                found.append(f"created {path}")
            elif new is None:
                found.append(f"deleted {path}")
            elif new.size > old.size and _prefix_digest(after.root, path, old.size) == old.digest:
                found.append(f"appended to {path}")
            else:
                found.append(f"overwrote {path}")
        return tuple(found)


def snapshot(root: str, previous: Snapshot | None = None) -> Snapshot:
    """The files under ``root`` now (top-level dot entries left out). A file whose size,
    modification time and inode are those ``previous`` saw keeps its digest unread."""
    known = previous.files if previous is not None and previous.root == root else {}
    files: dict[str, _File] = {}
    for directory, names, filenames in os.walk(root):
        if directory == root:
            names[:] = [name for name in names if not name.startswith(".")]
            filenames = [name for name in filenames if not name.startswith(".")]
        for name in filenames:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            entry = _entry(path, known.get(relative))
            if entry is not None:
                files[relative] = entry
    return Snapshot(root, files)


def _entry(path: str, known: _File | None) -> _File | None:
    try:
        status = os.stat(path, follow_symlinks=False)
        stamp = (status.st_size, status.st_mtime_ns, status.st_ino)
        if known is not None and known.stamp == stamp:
            return known
        if status.st_size > _HASHED or not stat.S_ISREG(status.st_mode):
            return _File(status.st_size, f"{status.st_size}:{status.st_mtime_ns}", stamp)
        with open(path, "rb") as file:
            return _File(status.st_size, hashlib.sha256(file.read()).hexdigest(), stamp)
    except OSError:
        return None  # gone meanwhile, or unreadable: not a file the kit can judge


def _prefix_digest(root: str, path: str, size: int) -> str:
    """The digest of the first ``size`` bytes of a file, as its whole was digested."""
    try:
        with open(os.path.join(root, path), "rb") as file:
            return hashlib.sha256(file.read(size)).hexdigest()
    except OSError:
        return ""
