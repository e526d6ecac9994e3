"""What a call changed in a working directory: files created, appended to, rewritten keeping
their content, rewritten beyond comparison, overwritten, deleted.

A tool served from another process works in the worker's throw-away directory; its declared
behaviour (read-only, additive only, idempotent) is held to what a call does there. Files are
compared by content, so a file written again with the same bytes has not changed, and a file
whose old content is the start of its new content was appended to, not overwritten. A small file
written anew is compared by meaning: it was extended when its old content survives in the new
(its JSON values, or else its lines: see :func:`_lost`), and overwritten when some is gone. A
file written anew whose content cannot be compared so (it is not UTF-8 text, such as a workbook
or a database, or it is too large to keep) was rewritten: whether it lost anything is unknown.
Entries at the top whose name starts with a dot are left out: the kit's own logs, and what
programs keep in their home (caches, configuration), which the directory also is.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Change", "Snapshot", "snapshot"]

# Larger files are compared by size and modification time only.
_HASHED = 4 * 1024 * 1024
# The content of files up to this size is kept, up to the second bound for a whole snapshot, so
# that a rewrite can be compared by meaning; a larger file written anew counts as overwritten.
_KEPT = 1024 * 1024
_KEPT_IN_ALL = 32 * _KEPT

ChangeKind = Literal["created", "appended", "extended", "rewrote", "overwrote", "deleted"]


@dataclass(frozen=True)
class Change:
    """What a call did to one file. ``kind`` is ``extended`` for a file written anew that kept
    its old content, ``rewrote`` for one whose old and new content cannot be compared (a large
    or binary file); ``lost`` is, for an overwrite, the first old value or line the new content
    lacks."""

    kind: ChangeKind
    path: str
    lost: str = ""

    def __str__(self) -> str:
        if self.kind == "appended":
            return f"appended to {self.path}"
        if self.kind == "extended":
            return f"rewrote {self.path} keeping its content"
        if self.kind == "rewrote":
            return f"rewrote {self.path} (binary or large: what it kept cannot be compared)"
        if self.lost:
            return f"{self.kind} {self.path}, losing {self.lost}"
        return f"{self.kind} {self.path}"


@dataclass(frozen=True)
class _File:
    size: int
    digest: str
    # What stat says of the file: when it is unchanged, so is the digest (not read again).
    # Not compared: a file rewritten with the same bytes has not changed.
    stamp: tuple[int, int, int] = field(default=(0, 0, 0), compare=False)
    content: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Snapshot:
    """The files under a directory, by path relative to it."""

    root: str
    files: dict[str, _File]

    def digest(self) -> str:
        """One digest of every file's path and content."""
        text = "\n".join(f"{path}\0{entry.digest}" for path, entry in sorted(self.files.items()))
        return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()

    def changes(self, after: Snapshot) -> tuple[Change, ...]:
        """What happened between this snapshot and ``after``, one change per file."""
        found = []
        for path in sorted(self.files.keys() | after.files.keys()):
            old, new = self.files.get(path), after.files.get(path)
            if old == new:
                continue
            if old is None:
                found.append(Change("created", path))
            elif new is None:
                found.append(Change("deleted", path))
            else:
                found.append(_rewritten(after.root, path, old, new))
        return tuple(found)


def snapshot(root: str, previous: Snapshot | None = None) -> Snapshot:
    """The files under ``root`` now (top-level dot entries left out). A file whose size,
    modification time and inode are those ``previous`` saw keeps its digest (and content)
    unread."""
    known = previous.files if previous is not None and previous.root == root else {}
    files: dict[str, _File] = {}
    room = _KEPT_IN_ALL
    for directory, names, filenames in os.walk(root):
        if directory == root:
            names[:] = [name for name in names if not name.startswith(".")]
            filenames = [name for name in filenames if not name.startswith(".")]
        # In order, so that which files' content fits in the bound does not vary by file system.
        names.sort()
        for name in sorted(filenames):
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, root)
            entry = _entry(path, known.get(relative), room)
            if entry is not None:
                files[relative] = entry
                room -= len(entry.content or b"")
    return Snapshot(root, files)


def _entry(path: str, known: _File | None, room: int) -> _File | None:
    try:
        status = os.stat(path, follow_symlinks=False)
        stamp = (status.st_size, status.st_mtime_ns, status.st_ino)
        if known is not None and known.stamp == stamp:
            return known
        if status.st_size > _HASHED or not stat.S_ISREG(status.st_mode):
            return _File(status.st_size, f"{status.st_size}:{status.st_mtime_ns}", stamp)
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None  # gone meanwhile, or unreadable: not a file the kit can judge
    kept = data if len(data) <= min(_KEPT, room) else None
    return _File(status.st_size, hashlib.sha256(data).hexdigest(), stamp, kept)


def _rewritten(root: str, path: str, old: _File, new: _File) -> Change:
    if new.size > old.size and _prefix_digest(root, path, old.size) == old.digest:
        return Change("appended", path)
    if old.content is None or new.content is None:
        return Change("rewrote", path)
    try:
        gone = _lost(old.content, new.content)
    except RecursionError:  # nested deeper than the comparison can follow
        gone = ""
    if gone is None:
        return Change("extended", path)
    return Change("overwrote", path, gone) if gone else Change("rewrote", path)


def _prefix_digest(root: str, path: str, size: int) -> str:
    """The digest of the first ``size`` bytes of a file, as its whole was digested."""
    try:
        with open(os.path.join(root, path), "rb") as file:
            return hashlib.sha256(file.read(size)).hexdigest()
    except OSError:
        return ""


def _lost(old: bytes, new: bytes) -> str | None:
    """What of a file's ``old`` content its ``new`` content lacks: None when nothing, else the
    first value or line gone ("" when it cannot be told: either is not UTF-8 text).

    When both are JSON, every old value must still be there: an object's at the same key, an
    array's item anywhere in the same array (each new item stands for one old item), and nested
    values by the same rule, so an array may gain items or be reordered and an object gain keys.
    Otherwise the old lines must all be among the new ones, in their order.
    """
    try:
        old_text, new_text = old.decode(), new.decode()
    except UnicodeDecodeError:
        return ""
    try:
        before, after = json.loads(old_text), json.loads(new_text)
    except (ValueError, RecursionError):
        return _lost_line(old_text.splitlines(), new_text.splitlines())
    return _lost_value(before, after, "$")


def _lost_line(old: list[str], new: list[str]) -> str | None:
    remaining = iter(new)
    for number, line in enumerate(old, 1):
        # Consumes the new lines up to the match: the next old line is looked for after it.
        if not any(line == other for other in remaining):
            return f"line {number} ({_short(line)})"
    return None


def _lost_value(old: Any, new: Any, place: str) -> str | None:
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return _said(place, old)
        for key, value in old.items():
            if key not in new:
                return _said(f"{place}.{key}", value)
            gone = _lost_value(value, new[key], f"{place}.{key}")
            if gone is not None:
                return gone
        return None
    if isinstance(old, list):
        return _lost_item(old, new, place) if isinstance(new, list) else _said(place, old)
    return None if _same(old, new) else _said(place, old)


def _lost_item(old: list[Any], new: list[Any], place: str) -> str | None:
    unused = set(range(len(new)))
    # Equal items first, wherever they are now: a reordered array keeps them all.
    equal: dict[str, list[int]] = {}
    for index in reversed(range(len(new))):
        equal.setdefault(_canonical(new[index]), []).append(index)
    changed = []
    for index, item in enumerate(old):
        same = equal.get(_canonical(item))
        if same:
            unused.discard(same.pop())
        else:
            changed.append(index)
    # Then items that grew: the one at the same place first, then any other left.
    for index in changed:
        places = _places(index, unused)
        keeper = next((other for other in places if _kept(old[index], new[other])), None)
        if keeper is None:
            return _said(f"{place}[{index}]", old[index])
        unused.discard(keeper)
    return None


def _kept(old: Any, new: Any) -> bool:
    return _lost_value(old, new, "$") is None


def _places(index: int, unused: set[int]) -> Iterator[int]:
    if index in unused:
        yield index
    yield from sorted(unused - {index})


def _same(old: Any, new: Any) -> bool:
    # JSON tells true from 1, which Python's == does not.
    if isinstance(old, bool) or isinstance(new, bool):
        return old is new
    return bool(old == new)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _said(place: str, value: Any) -> str:
    return f"{place} ({_short(value)})"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
