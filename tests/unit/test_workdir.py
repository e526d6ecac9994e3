"""What a call changed in a working directory, compared by content."""

from __future__ import annotations

from pathlib import Path

from axm_conformance._workdir import snapshot


def test_an_append_an_overwrite_a_creation_and_a_deletion_are_told_apart(tmp_path: Path) -> None:
    notes, mode = tmp_path / "notes.txt", tmp_path / "sub" / "mode.txt"
    notes.write_text("one\n")
    mode.parent.mkdir()
    mode.write_text("on\n")
    first = snapshot(str(tmp_path))
    notes.write_text("one\ntwo\n")
    mode.write_text("off\n")
    (tmp_path / "new.txt").write_text("")
    second = snapshot(str(tmp_path), first)
    assert first.changes(second) == (
        "created new.txt",
        "appended to notes.txt",
        f"overwrote {Path('sub', 'mode.txt')}",
    )
    mode.unlink()
    third = snapshot(str(tmp_path), second)
    assert second.changes(third) == (f"deleted {Path('sub', 'mode.txt')}",)


def test_the_same_bytes_written_again_change_nothing(tmp_path: Path) -> None:
    mode = tmp_path / "mode.txt"
    mode.write_text("on\n")
    first = snapshot(str(tmp_path))
    mode.write_text("on\n")
    second = snapshot(str(tmp_path), first)
    assert first.changes(second) == ()
    assert first.digest() == second.digest()


def test_the_homes_dot_entries_are_left_out(tmp_path: Path) -> None:
    """A program's cache and configuration in its home (the working directory) are not the
    tool's effects; a dot file deeper down is."""
    first = snapshot(str(tmp_path))
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "index").write_text("x")
    (tmp_path / ".npmrc").write_text("x")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".keep").write_text("")
    second = snapshot(str(tmp_path), first)
    assert first.changes(second) == (f"created {Path('repo', '.keep')}",)
