"""What keeps a worker user from a file the worker needs, told by the permission bits."""

from __future__ import annotations

import os
import pwd
import shutil
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._process.parent._pool import _blocked, _libpython

# A user and group that own nothing here, in no class of bits but the others'.
STRANGER = 54321
OWNER = pwd.getpwuid(os.geteuid()).pw_name


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory anyone can enter, on a way anyone can take (tmp_path's is its owner's)."""
    path = Path(tempfile.mkdtemp())
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def locked_python(open_dir: Path) -> Path:
    """An executable file in a directory only its owner can enter."""
    home = open_dir / "home"
    home.mkdir()
    python = home / "python"
    python.write_text("")
    python.chmod(0o755)
    home.chmod(0o700)
    return python


def test_a_file_in_a_directory_only_its_owner_enters_is_blocked_there(open_dir: Path) -> None:
    python = locked_python(open_dir)
    assert _blocked(str(python), STRANGER, STRANGER, os.X_OK) == (
        f"it cannot enter {python.parent} (drwx------, owned by {OWNER})"
    )
    assert _blocked(str(python), os.geteuid(), os.getegid(), os.X_OK) == ""


def test_each_symlink_on_the_way_is_followed(open_dir: Path) -> None:
    """A virtual environment's python, in a directory anyone reads, is a link to a link to the
    interpreter it was made from: it is blocked where that one is."""
    python = locked_python(open_dir)
    bin_dir = open_dir / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python3").symlink_to(os.path.relpath(python, bin_dir))
    (bin_dir / "python").symlink_to("python3")
    assert _blocked(str(bin_dir / "python"), STRANGER, STRANGER, os.X_OK) == (
        f"it cannot enter {python.parent} (drwx------, owned by {OWNER})"
    )


def test_the_group_class_applies_to_the_files_group(open_dir: Path) -> None:
    shared = open_dir / "shared"
    shared.mkdir()
    (shared / "lib.so").write_text("")
    shared.chmod(0o750)
    assert _blocked(str(shared / "lib.so"), STRANGER, os.getegid(), os.R_OK) == ""
    assert _blocked(str(shared / "lib.so"), STRANGER, STRANGER, os.R_OK).startswith(
        f"it cannot enter {shared} (drwxr-x---, "
    )


def test_a_file_the_user_may_not_read_is_named_with_its_mode(open_dir: Path) -> None:
    library = open_dir / "libpython.so"
    library.write_text("")
    library.chmod(0o600)
    assert _blocked(str(library), STRANGER, STRANGER, os.R_OK) == (
        f"its mode is -rw-------, owned by {OWNER}"
    )
    library.chmod(0o644)
    assert _blocked(str(library), STRANGER, STRANGER, os.R_OK) == ""
    assert _blocked(str(library), STRANGER, STRANGER, os.R_OK | os.X_OK).startswith("its mode")


def test_a_missing_file_blocks_nothing(open_dir: Path) -> None:
    assert _blocked(str(open_dir / "absent" / "python"), STRANGER, STRANGER, os.X_OK) == ""


@pytest.mark.skipif(
    not sysconfig.get_config_var("Py_ENABLE_SHARED") or not os.path.exists("/proc/self/maps"),
    reason="a shared build's library, seen in /proc/self/maps",
)
def test_the_interpreters_library_is_the_one_it_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of an interpreter made portable loads its own library, while its build settings
    still name the original's directory: the one judged is the one loaded."""
    loaded = _libpython()
    assert os.path.isabs(loaded) and any(
        line.endswith(loaded) for line in Path("/proc/self/maps").read_text().splitlines()
    )
    monkeypatch.setattr(sysconfig, "get_config_var", _moved_libdir(sysconfig.get_config_var))
    assert _libpython() == loaded


def _moved_libdir(original: Any) -> Any:
    return lambda name: "/nowhere/lib" if name == "LIBDIR" else original(name)
