"""What a call wrote in the project: the worker's FileWatch, with inotify, by walking alone, and
as on macOS (walking, and the process table read through psutil)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._process.child import _filewatch
from axm_conformance._process.child._inotify import open_events
from axm_conformance._process.system import _platform


@pytest.fixture(params=["inotify", "walk", "macos"])
def watch(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    if request.param == "walk":
        monkeypatch.setattr(_filewatch, "open_events", lambda: None)
    elif request.param == "macos":
        monkeypatch.setattr(_platform, "PLATFORM", _platform.detect("darwin", {}))
    elif open_events() is None or not _platform.PLATFORM.inotify:
        pytest.skip("this system has no inotify: only the walk can be tested here")
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "module.py").write_text("x = 1\n")
    watch = _filewatch.FileWatch((str(tmp_path),))
    assert (watch.events is None) == (request.param != "inotify")
    return watch


def test_a_call_that_writes_nothing_changes_nothing(watch: Any) -> None:
    assert watch.changes() == ""
    assert watch.changes() == ""


def test_created_modified_and_removed_files_are_named(watch: Any) -> None:
    root = Path(watch.roots[0])
    (root / "new.txt").write_text("new")
    assert (
        watch.changes()
        == f"wrote outside its working directory, in the project: created {root / 'new.txt'}"
    )
    (root / "package" / "module.py").write_text("x = 2  # longer\n")
    assert watch.changes().endswith(f"modified {root / 'package' / 'module.py'}")
    (root / "new.txt").unlink()
    assert watch.changes().endswith(f"removed {root / 'new.txt'}")
    assert watch.changes() == ""


def test_a_file_written_later_in_a_new_directory_is_seen(watch: Any) -> None:
    root = Path(watch.roots[0])
    (root / "made").mkdir()
    assert watch.changes().endswith(f"created {root / 'made'}")
    (root / "made" / "later.txt").write_text("later")
    assert watch.changes().endswith(f"created {root / 'made' / 'later.txt'}")


def test_bytecode_is_not_a_trace(watch: Any) -> None:
    cache = Path(watch.roots[0]) / "package" / "__pycache__"
    cache.mkdir()
    watch.changes()
    (cache / "module.cpython-311.pyc").write_bytes(b"\0" * 16)
    assert watch.changes() == ""


def test_other_files_in_a_new_bytecode_folder_are_a_trace(watch: Any) -> None:
    cache = Path(watch.roots[0]) / "package" / "__pycache__"
    cache.mkdir()
    (cache / "module.cpython-311.pyc").write_bytes(b"\0" * 16)
    (cache / "notes.txt").write_text("not bytecode")
    assert watch.changes().endswith(f"created {cache / 'notes.txt'}")


def test_a_file_another_process_is_writing_is_not_the_calls_trace(watch: Any) -> None:
    root = Path(watch.roots[0])
    log = root / "run.log"
    log.write_text("")
    watch.changes()
    # The test run's own log, say: written all along by a process of another session.
    writer = subprocess.Popen([sys.executable, "-c", _APPENDER, str(log)], start_new_session=True)
    try:
        deadline = time.monotonic() + 5
        while log.stat().st_size == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert log.stat().st_size > 0, "the other process never wrote"
        (root / "mine.txt").write_text("written by the call")
        assert watch.changes() == (
            f"wrote outside its working directory, in the project: created {root / 'mine.txt'}"
        )
    finally:
        writer.kill()
        writer.wait()


_APPENDER = """
import sys, time
with open(sys.argv[1], "a") as log:
    while True:
        log.write("x")
        log.flush()
        time.sleep(0.005)
"""
