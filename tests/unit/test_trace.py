"""Reading strace's lines: which writes of a server its sandbox refused, by path."""

# ruff: noqa: E501 - strace's lines are kept whole, as it writes them

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from axm_conformance._process.system import _sandbox, _trace

# Lines as strace 6 writes them with the kit's options (-f -y -x -s 4096, failed calls only).
LINES = r"""
2     openat(AT_FDCWD</srv/work>, "/usr/lib/pkg/memory.jsonl", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = -1 EROFS (Read-only file system)
2     openat(AT_FDCWD</srv/work>, "\x2f\x75\x73\x72\x2f\xc3\xa9\x22\x71", O_WRONLY|O_CREAT, 0666) = -1 EROFS (Read-only file system)
2     openat(AT_FDCWD</srv/work>, "/usr/a b\nc", O_RDWR|O_CREAT, 0666) = -1 EROFS (Read-only file system)
3     rename("/etc/a", "/etc/b")      = -1 EROFS (Read-only file system)
3     mkdirat(5</usr/share>, "cache", 0777)  = -1 EROFS (Read-only file system)
3     openat(AT_FDCWD</usr>, "relative.log", O_WRONLY|O_APPEND) = -1 EROFS (Read-only file system)
3     symlink("target", "/etc/link")  = -1 EROFS (Read-only file system)
3     mkdir("made", 0777)             = -1 EROFS (Read-only file system)
4     openat2(AT_FDCWD</srv/work>, "/opt/x", {flags=O_WRONLY|O_CREAT, mode=0644, resolve=0}, 24) = -1 EACCES (Permission denied)
4     openat(AT_FDCWD</srv/work>, "/etc/shadow", O_RDONLY|O_CLOEXEC) = -1 EACCES (Permission denied)
4     openat(AT_FDCWD</srv/work>, "/nowhere/x", O_WRONLY|O_CREAT, 0666) = -1 ENOENT (No such file or directory)
4     openat(AT_FDCWD</srv/work>, "own.txt", O_WRONLY|O_CREAT, 0600) = -1 EACCES (Permission denied)
4     openat(AT_FDCWD</srv/work>, "/proc/self/oom_score_adj", O_WRONLY) = -1 EACCES (Permission denied)
4     unlink("/usr/lib/pkg/memory.jsonl") = -1 EROFS (Read-only file system)
4     utimensat(3</usr/lib/pkg>, NULL, NULL, 0) = -1 EROFS (Read-only file system)
5     mkdir("/usr/lib/pkg/__pycache__", 0777) = -1 EROFS (Read-only file system)
5     openat(AT_FDCWD</srv/work>, "/usr/lib/pkg/__pycache__/mod.cpython-311.pyc.140242", O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = -1 EROFS (Read-only file system)
""".strip().splitlines()


def test_the_paths_of_refused_writes_are_read_exactly_and_in_order() -> None:
    assert _trace.refused_writes(LINES, ["/srv/work"], "/srv/work") == [
        "/usr/lib/pkg/memory.jsonl",
        '/usr/\u00e9"q',
        "/usr/a b\nc",
        "/etc/a",
        "/etc/b",
        "/usr/share/cache",
        "/usr/relative.log",
        "/etc/link",
        "/srv/work/made",
        "/opt/x",
        "/usr/lib/pkg",
    ]


def test_reads_missing_paths_permissions_inside_bytecode_and_the_kernels_files_do_not_count() -> (
    None
):
    ignored = [
        line
        for line in LINES
        if any(word in line for word in ("shadow", "nowhere", "own.txt", "oom_score", "__pyc"))
    ]
    assert len(ignored) == 6
    assert _trace.refused_writes(ignored, ["/srv/work"], "/srv/work") == []


def test_the_read_only_view_refuses_only_what_is_outside_so_each_of_its_refusals_counts() -> None:
    # A module shown read-only in the private /tmp lies in an allowed place, and was refused.
    line = (
        '7 openat(AT_FDCWD</srv/work>, "/tmp/project/mod.py", O_WRONLY|O_TRUNC) '
        "= -1 EROFS (Read-only file system)"
    )
    assert _trace.refused_writes([line], ["/srv/work", "/tmp"], "/srv/work") == [
        "/tmp/project/mod.py"
    ]


def test_lines_of_another_shape_are_left_alone() -> None:
    odd = [
        "",
        "+++ exited with 0 +++",
        '5 openat(AT_FDCWD</w>, "/usr/x", O_WRONLY <unfinished ...>',
        '5 write(1, "x", 1) = -1 EPIPE (Broken pipe)',
    ]
    assert _trace.refused_writes(odd, ["/w"], "/w") == []


needs_tracing = pytest.mark.skipif(
    bool(_sandbox.support() or _trace.support()),
    reason=f"no traced sandbox here: {_sandbox.support() or _trace.support()}",
)


@needs_tracing
@pytest.mark.skipif(sys.platform != "linux", reason="a sandbox is Linux's")
def test_a_program_traced_in_a_sandbox_has_its_refused_write_named(tmp_path: Path) -> None:
    """strace's own lines, from a program that writes to the read-only view and to its working
    directory: only the first is named."""
    trace = os.memfd_create("trace", 0)
    script = (
        "import contextlib\n"
        "with contextlib.suppress(OSError): open('/usr/axm-trace-test', 'w')\n"
        "open('inside.txt', 'w').write('x')\n"
    )
    argv = [*_trace.command(_trace.tracer(), trace), sys.executable, "-c", script]
    command = _sandbox.Sandbox().command(argv, [str(tmp_path)], _sandbox.read_by(argv, {}))
    done = subprocess.run(command, cwd=tmp_path, pass_fds=(trace,), timeout=60, check=False)
    assert done.returncode == 0
    lines = os.pread(trace, 1 << 20, 0).decode().splitlines()
    os.close(trace)
    assert _trace.refused_writes(lines, [str(tmp_path)], str(tmp_path)) == ["/usr/axm-trace-test"]
    assert (tmp_path / "inside.txt").read_text() == "x"


@needs_tracing
def test_where_strace_cannot_attach_the_probe_says_so() -> None:
    """Under another tracer strace cannot attach, yet runs its command and exits as it does:
    the probe holds out for the trace itself, and names strace's refusal."""
    probe = "from axm_conformance._process.system import _trace; print(_trace.support())"
    outer = [_trace.tracer(), "-f", "-qq", "-e", "trace=none", "-o", os.devnull]
    done = subprocess.run(
        [*outer, sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.startswith("strace cannot trace in a sandbox here (attach: ptrace"), done
