"""File watch: which files in the project under test a call created, modified or removed.

The worker's working directory is the tool's to write in; the project's own files (the import
path outside the Python installation) are not.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from axm_conformance._outcomes import listed
from axm_conformance._process.child._inotify import open_events
from axm_conformance._process.system import _platform, _sandbox
from axm_conformance._process.system._proctable import table

__all__ = ["FileWatch", "project_roots"]

# Directories never walked when watching the project: version control, virtual environments,
# caches of tools that run next to the kit. Their own entry is still watched.
_UNWATCHED = frozenset(
    {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules"}
    | {".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "site-packages"}
)
# A project larger than this many files and directories is not watched: a snapshot per call
# would cost more than the calls.
_WATCH_LIMIT = 3000

# Each path's (mtime, size, inode, is a directory, is walked into).
PathFacts = dict[str, tuple[int, int, int, bool, bool]]


def project_roots() -> tuple[str, ...]:
    """The directories of the project under test: the import path outside the installation.

    The entries of ``sys.path`` that are not part of the Python installation or its
    site-packages, and neither contain nor lie inside the worker's working directory; nested
    entries are covered by the outermost. In a sandbox, an entry its view shows read-only is
    left out: what changes there is another process's doing (the kit's own output, say).
    """
    workdir = os.path.realpath(os.getcwd())
    installed = {
        os.path.realpath(prefix)
        for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    roots: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        path = os.path.realpath(entry)
        parts = set(Path(path).parts)
        if (
            parts & _UNWATCHED
            or _within(path, workdir)
            or _within(workdir, path)
            or any(_within(path, prefix) for prefix in installed)
            or (_sandbox.inside() and _read_only(path))
        ):
            continue
        roots.append(path)
    return tuple(
        root
        for root in dict.fromkeys(roots)
        if not any(other != root and _within(root, other) for other in roots)
    )


def _read_only(path: str) -> bool:
    if sys.platform == "win32":
        return False
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


class FileWatch:
    """The files under the project's roots, to tell which ones a call created, changed or
    removed. Each snapshot is the baseline of the next call. The walked directories are watched
    (inotify) where the system allows, and a call after which none changed is not walked again;
    elsewhere the project is walked after every call.
    Compiled bytecode (which other processes write as they import) is ignored."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.skipped = {
            os.path.realpath(path)
            for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.getcwd())
        }
        self.snapshot = self.take()
        self.events = (
            open_events() if self.snapshot is not None and _platform.PLATFORM.inotify else None
        )
        self._watch()

    def descends(self, entry: os.DirEntry[str]) -> bool:
        """Whether the walk goes into this directory."""
        return entry.name not in _UNWATCHED and entry.path not in self.skipped

    def _watch(self) -> None:
        """Have every directory the last walk went into watched, or else walk every time."""
        if self.events is None or self.snapshot is None:
            return
        walked = [path for path, facts in self.snapshot.items() if facts[4]]
        if not self.events.watch([*self.roots, *walked]):
            self.events.close()
            self.events = None

    def take(self) -> PathFacts | None:
        """Each path's facts (see PathFacts), or None when there are too many."""
        found: PathFacts = {}
        pending = list(self.roots)
        while pending:
            directory = pending.pop()
            try:
                entries = os.scandir(directory)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        stat = entry.stat(follow_symlinks=False)
                        is_directory = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    descends = is_directory and self.descends(entry)
                    found[entry.path] = (
                        stat.st_mtime_ns,
                        stat.st_size,
                        stat.st_ino,
                        is_directory,
                        descends,
                    )
                    if len(found) > _WATCH_LIMIT:
                        return None
                    if descends:
                        pending.append(entry.path)
        return found

    def changes(self) -> str:
        """What changed since the last snapshot, as a sentence ("" when nothing did)."""
        before = self.snapshot
        if before is None or (self.events is not None and not self.events.changed(_bytecode)):
            return ""
        after = self.take()
        self.snapshot = after
        if after is None:
            return ""
        self._watch()
        created = _topmost(
            path
            for path in after
            if path not in before
            and os.path.basename(path) not in _UNWATCHED
            and not _compiled(path)
        )
        removed = _topmost(path for path in before if path not in after and not _compiled(path))
        modified = [
            path
            for path, facts in after.items()
            if path in before
            and not facts[3]
            and facts[:3] != before[path][:3]
            and not _compiled(path)
        ]
        others = table().written_by_others({*created, *modified}) if created or modified else set()
        parts = [
            f"{verb} {listed(sorted(path for path in paths if path not in others))}"
            for verb, paths in (("created", created), ("modified", modified), ("removed", removed))
            if any(path not in others for path in paths)
        ]
        if not parts:
            return ""
        return "wrote outside its working directory, in the project: " + "; ".join(parts)


def _topmost(paths: Any) -> list[str]:
    """The paths that are not inside another of them (a new directory stands for its files)."""
    chosen = sorted(paths)
    kept: list[str] = []
    for path in chosen:
        if not kept or not _within(path, kept[-1]):
            kept.append(path)
    return kept


def _bytecode(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith(".pyc") or ".pyc." in name


def _compiled(path: str) -> bool:
    """Bytecode, or a __pycache__ folder (what importing writes; other files in it count)."""
    return _bytecode(path) or os.path.basename(path) == "__pycache__"
