"""The files of a worker's working directory: copied in afresh, given to the user the worker runs
as, emptied and removed, whatever the worker made read-only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

__all__ = ["copy_files", "empty", "give", "remove_tree"]


def copy_files(source: Path, workdir: Path, owner: tuple[int, int] | None) -> None:
    """Copy the contents of ``source`` into ``workdir`` afresh, owned by ``owner`` when given.

    What a previous worker made of the copies is removed first: each start sees the originals.
    """
    for name in os.listdir(source):
        target = workdir / name
        if target.is_dir() and not target.is_symlink():
            remove_tree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    shutil.copytree(source, workdir, dirs_exist_ok=True)
    if owner is not None:
        for name in os.listdir(source):
            top = workdir / name
            for path in (top, *(top.rglob("*") if top.is_dir() else ())):
                give(path, owner)


def give(path: Path | int, owner: tuple[int, int] | None) -> None:
    """Give a path, or the file open at a descriptor, to ``owner`` when there is one: the user
    the worker runs as (never on Windows, which cannot switch users)."""
    if owner is None or sys.platform == "win32":
        return
    if isinstance(path, int):
        os.fchown(path, *owner)
    else:
        os.chown(path, *owner)


def empty(directory: Path) -> None:
    """Remove what a directory holds, keeping the directory itself: a sandbox started before
    (a fork server's) has it mounted, and would not see one made anew at the same path."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.is_dir(follow_symlinks=False):
                remove_tree(Path(entry.path))
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def remove_tree(path: Path) -> None:
    """Remove a directory tree, including directories the worker made read-only."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    for root, directories, _ in os.walk(path):
        for name in directories:
            directory = os.path.join(root, name)
            # chmod follows symlinks; only real directories inside the tree are touched.
            if not os.path.islink(directory):
                with contextlib.suppress(OSError):
                    os.chmod(directory, 0o700)
    shutil.rmtree(path, ignore_errors=True)
