"""What a call changed in a working directory, compared by content."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._workdir import Change, snapshot


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
    sub_mode = str(Path("sub", "mode.txt"))
    assert first.changes(second) == (
        Change("created", "new.txt"),
        Change("appended", "notes.txt"),
        Change("overwrote", sub_mode, 'line 1 ("on")'),
    )
    assert [str(change) for change in first.changes(second)] == [
        "created new.txt",
        "appended to notes.txt",
        f'overwrote {sub_mode}, losing line 1 ("on")',
    ]
    mode.unlink()
    third = snapshot(str(tmp_path), second)
    assert second.changes(third) == (Change("deleted", sub_mode),)
    assert str(second.changes(third)[0]) == f"deleted {sub_mode}"


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
    assert first.changes(second) == (Change("created", str(Path("repo", ".keep"))),)


def replace(path: Path, text: str) -> None:
    """Write ``path`` anew the way a file store does: a temporary file renamed over it."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def rewrite(tmp_path: Path, name: str, old: str, new: str) -> tuple[Change, ...]:
    """What writing ``new`` over a file that held ``old`` is said to have done."""
    replace(tmp_path / name, old)
    before = snapshot(str(tmp_path))
    replace(tmp_path / name, new)
    return before.changes(snapshot(str(tmp_path), before))


def rewrite_json(tmp_path: Path, old: Any, new: Any) -> tuple[Change, ...]:
    return rewrite(tmp_path, "notes.json", json.dumps(old), json.dumps(new, indent=2))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([{"text": "a"}], [{"text": "a"}, {"text": "b"}]),
        ({"notes": ["a"]}, {"notes": ["a", "b"], "count": 2}),
        ({"notes": ["a", "b", "c"]}, {"notes": ["c", "a", "b"]}),
        ([{"text": "a"}, {"text": "b"}], [{"text": "b", "tag": "x"}, {"text": "a"}]),
        ([1, 1, "1", True], [True, "1", 1, 1.0]),
    ],
    ids=["item-appended", "items-and-keys-gained", "reordered", "items-grew", "kinds-kept-apart"],
)
def test_a_json_file_rewritten_keeping_every_value_was_extended(
    tmp_path: Path, old: Any, new: Any
) -> None:
    changes = rewrite_json(tmp_path, old, new)
    assert changes == (Change("extended", "notes.json"),)
    assert str(changes[0]) == "rewrote notes.json keeping its content"


@pytest.mark.parametrize(
    ("old", "new", "lost"),
    [
        ([{"text": "a"}, {"text": "b"}], [{"text": "b"}, {"text": "c"}], '$[0] ({"text": "a"})'),
        ({"notes": ["a"], "next": 2}, {"notes": ["a"]}, "$.next (2)"),
        ({"count": 1}, {"count": 2}, "$.count (1)"),
        ({"notes": ["a", "a"]}, {"notes": ["a", "b"]}, '$.notes[1] ("a")'),
        ({"notes": [1]}, {"notes": [True]}, "$.notes[0] (1)"),
        ({"notes": ["a"]}, ["a"], '$ ({"notes": ["a"]})'),
        ([{"text": "a", "tags": ["x"]}], [{"text": "a"}], '$[0] ({"text": "a", "tags": ["x"]})'),
        (["x" * 100], ["y"], '$[0] ("' + "x" * 56 + "...)"),
    ],
    ids=[
        "item-dropped",
        "key-dropped",
        "value-changed",
        "duplicate-dropped",
        "number-became-boolean",
        "object-became-array",
        "nested-value-dropped",
        "shortened",
    ],
)
def test_a_json_file_rewritten_losing_a_value_was_overwritten_and_says_which(
    tmp_path: Path, old: Any, new: Any, lost: str
) -> None:
    changes = rewrite_json(tmp_path, old, new)
    assert changes == (Change("overwrote", "notes.json", lost),)
    assert str(changes[0]) == f"overwrote notes.json, losing {lost}"


def test_a_text_file_rewritten_keeping_its_lines_in_order_was_extended(tmp_path: Path) -> None:
    changes = rewrite(tmp_path, "notes.txt", "one\ntwo\n", "zero\none\none and a half\ntwo\n")
    assert changes == (Change("extended", "notes.txt"),)


@pytest.mark.parametrize(
    ("new", "lost"),
    [("one\nthree\n", 'line 2 ("two")'), ("two\none\n", 'line 2 ("two")'), ("", 'line 1 ("one")')],
    ids=["line-dropped", "lines-reordered", "emptied"],
)
def test_a_text_file_rewritten_losing_a_line_was_overwritten_and_says_which(
    tmp_path: Path, new: str, lost: str
) -> None:
    changes = rewrite(tmp_path, "notes.txt", "one\ntwo\n", new)
    assert changes == (Change("overwrote", "notes.txt", lost),)


def test_json_that_is_no_longer_json_is_compared_by_lines(tmp_path: Path) -> None:
    old = '[\n  "a",\n  "b"\n]'
    assert rewrite(tmp_path, "notes.json", old, "# notes\n" + old) == (
        Change("extended", "notes.json"),
    )
    assert rewrite(tmp_path, "notes.json", old, '[\n  "a",\n]') == (
        Change("overwrote", "notes.json", 'line 3 ("  \\"b\\"")'),
    )


def test_a_binary_file_written_anew_was_rewritten_beyond_comparison(tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\xff\x00")
    before = snapshot(str(tmp_path))
    blob.write_bytes(b"\xfe\xff\x00")
    changes = before.changes(snapshot(str(tmp_path), before))
    assert changes == (Change("rewrote", "blob.bin"),)
    assert str(changes[0]) == "rewrote blob.bin (binary or large: what it kept cannot be compared)"


def test_a_file_deleted_loses_everything_whatever_it_held(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text("[]")
    before = snapshot(str(tmp_path))
    (tmp_path / "notes.json").unlink()
    assert before.changes(snapshot(str(tmp_path), before)) == (Change("deleted", "notes.json"),)


def test_a_large_file_written_anew_is_rewritten_beyond_comparison_even_with_its_content_kept(
    tmp_path: Path,
) -> None:
    """Above 1 MiB the old content is not kept: a rewrite cannot be compared by meaning."""
    large = ["x" * (1024 * 1024)]
    assert rewrite_json(tmp_path, large, [*large, "y"]) == (Change("rewrote", "notes.json"),)
    small = ["x" * (1024 * 1024 - 100)]
    assert rewrite_json(tmp_path, small, [*small, "y"]) == (Change("extended", "notes.json"),)


def test_content_is_kept_up_to_a_bound_for_the_whole_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files are taken in order of their paths until the bound is reached; a later file written
    anew cannot be compared."""
    monkeypatch.setattr("axm_conformance._workdir._KEPT_IN_ALL", 20)
    for name in ("a", "b", "c"):
        replace(tmp_path / f"{name}.json", f'["{name}"]')
    before = snapshot(str(tmp_path))
    for name in ("a", "b", "c"):
        replace(tmp_path / f"{name}.json", f'["{name}", "d"]')
    assert before.changes(snapshot(str(tmp_path), before)) == (
        Change("extended", "a.json"),
        Change("extended", "b.json"),
        Change("rewrote", "c.json"),
    )


def test_an_unchanged_file_is_not_read_again_and_keeps_its_content(tmp_path: Path) -> None:
    """A file whose stat is unchanged keeps the entry of the snapshot before; its content is
    still there to compare a later rewrite with."""
    notes = tmp_path / "notes.json"
    notes.write_text('["a"]')
    first = snapshot(str(tmp_path))
    second = snapshot(str(tmp_path), first)
    assert second.files["notes.json"] is first.files["notes.json"]
    replace(notes, '["a", "b"]')
    assert second.changes(snapshot(str(tmp_path), second)) == (Change("extended", "notes.json"),)


def test_a_change_is_plain_data_that_crosses_processes() -> None:
    change = Change("overwrote", "notes.json", '$[0] ("a")')
    assert pickle.loads(pickle.dumps(change)) == change
