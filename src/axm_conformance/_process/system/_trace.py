"""The writes a server tries outside its working and temporary directories, named: strace's.

In a sandbox everything but a server's working and temporary directories is read-only, so such
a write is refused, and the server's error (if it reports one) is all that says so. A Python
tool's writes are seen by the worker's audit hook; a server may be written in any language, so
its sandbox runs it under strace (``strace -D -f``: the tracer is a grandchild of the sandbox's
first process, the server stays its child), which writes every failed call of the filesystem
calls that write to a descriptor the kit reads (:func:`command`). :func:`refused_writes` reads
the paths those lines name whose write the system refused (read-only, or not permitted): what
the server tried to change outside the places it was given.

strace is used rather than a seccomp supervisor of the kit's own because it decodes every
call's arguments, on every architecture, and is kept so; ``--seccomp-bpf`` stops only the calls
traced, and only failed ones are written. Where strace is missing or cannot trace in a sandbox
(a container that forbids ptrace), :func:`support` says why and a server's writes are not named.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence

from axm_conformance._process.system._sandbox import Sandbox

__all__ = ["bytecode_cache", "command", "refused_writes", "support", "tracer"]

# The filesystem calls that write, each with where its written paths are: (the position of the
# directory descriptor the path is relative to, or None, the position of the path).
_WRITING_CALLS: dict[str, tuple[tuple[int | None, int], ...]] = {
    "open": ((None, 0),),
    "creat": ((None, 0),),
    "openat": ((0, 1),),
    "openat2": ((0, 1),),
    "mkdir": ((None, 0),),
    "mkdirat": ((0, 1),),
    "mknod": ((None, 0),),
    "mknodat": ((0, 1),),
    "rmdir": ((None, 0),),
    "unlink": ((None, 0),),
    "unlinkat": ((0, 1),),
    "rename": ((None, 0), (None, 1)),
    "renameat": ((0, 1), (2, 3)),
    "renameat2": ((0, 1), (2, 3)),
    "link": ((None, 1),),
    "linkat": ((2, 3),),
    "symlink": ((None, 1),),
    "symlinkat": ((1, 2),),
    "truncate": ((None, 0),),
    "chmod": ((None, 0),),
    "fchmodat": ((0, 1),),
    "chown": ((None, 0),),
    "lchown": ((None, 0),),
    "fchownat": ((0, 1),),
    "utimes": ((None, 0),),
    "utimensat": ((0, 1),),
    "futimesat": ((0, 1),),
    "setxattr": ((None, 0),),
    "lsetxattr": ((None, 0),),
    "removexattr": ((None, 0),),
    "lremovexattr": ((None, 0),),
}
# The open calls write only with one of these flags (an open to read is no write).
_OPENS = ("open", "openat", "openat2")
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
# The refusals of a write: the read-only view's, and the permissions'.
_REFUSALS = ("EROFS", "EACCES", "EPERM")
# Kernel interfaces a runtime writes to on its own (its OOM score, a terminal): not the tool's.
_SYSTEM = ("/proc/", "/sys/", "/dev/")
# Long enough for any path (PATH_MAX).
_STRING_LIMIT = 4096
_PROBE_TIMEOUT = 30.0
_INSTALL = "install strace (Debian and Ubuntu: apt-get install strace; Fedora: dnf install strace)"
_LINE = re.compile(r"^\d+\s+(?P<call>\w+)\((?P<arguments>.*)\)\s+= -1 (?P<errno>E[A-Z0-9]+) ")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DESCRIPTOR = re.compile(r"^(?:AT_FDCWD|-?\d+)<(?P<path>.*)>$")


def tracer() -> str:
    """strace's path where a server's writes can be traced in a sandbox here, else ""."""
    return "" if support() else shutil.which("strace") or ""


def support() -> str:
    """Why a server's writes cannot be traced here ("" when they can): asked once per process,
    by tracing ``mkdir /`` in a sandbox, whose refusal the trace must say. (Where strace cannot
    attach, as under another tracer, it may still run its command and exit as it does.)"""
    return _support()


@functools.cache
def _support() -> str:
    found = shutil.which("strace")
    if found is None:
        return f"strace is not on PATH: {_INSTALL}"
    probe = Sandbox().command([*command(found, 1), "mkdir", "/"], [os.getcwd()])
    try:
        done = subprocess.run(
            probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"strace could not be run in a sandbox: {exc}"
    if b"mkdir" not in done.stdout:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        # strace's own words, not mkdir's
        own = [line.removeprefix(f"{found}: ") for line in said if line.startswith(found)]
        reason = (own or said or [f"exit status {done.returncode}"])[-1]
        return f"strace cannot trace in a sandbox here ({reason}); ptrace may be forbidden"
    return ""


def command(strace: str, fd: int) -> list[str]:
    """The words that run a command under ``strace``, which writes each failed writing call
    to the descriptor ``fd``: put before the command."""
    return [
        strace,
        "-D",  # the tracer a grandchild: the command keeps its place among processes
        "-f",
        "-qq",
        "--seccomp-bpf",
        "-y",  # descriptors as the paths they are open on (AT_FDCWD as the working directory)
        "-x",  # strings with anything but ASCII in hexadecimal escapes, read back exactly
        "-s", str(_STRING_LIMIT),
        "-e", "trace=" + ",".join(_WRITING_CALLS),
        "-e", "status=failed",
        "-e", "signal=none",
        "-o", f"/dev/fd/{fd}",
        "--",
    ]  # fmt: skip


def refused_writes(lines: Sequence[str], allowed: Sequence[str], cwd: str) -> list[str]:
    """The absolute paths whose write the lines of a trace say the system refused, but those
    the kernel's interfaces, and a permission refused in the directories ``allowed``; in
    order, each once.

    A relative path is taken from its directory descriptor's path, which strace gives; the
    calls without one (``open``, ``mkdir``, ...) from ``cwd``, the server's working directory
    when it started (a server that changes it and writes relative paths is named less exactly).
    """
    places = tuple(os.path.join(os.path.normpath(place), "") for place in allowed)
    found: dict[str, None] = {}
    for line in lines:
        for path, errno in _refused(line, cwd):
            within = os.path.join(path, "")
            # The read-only view refuses only what lies outside; a permission, anywhere.
            if (
                not within.startswith(_SYSTEM)
                and not bytecode_cache(path)
                and (errno == "EROFS" or not within.startswith(places))
            ):
                found[path] = None
    return list(found)


def bytecode_cache(path: str) -> bool:
    """Whether the path is a cache of compiled Python bytecode (its ``__pycache__`` directory,
    a file in it, or the temporary file written first), which Python writes, or where it cannot
    skips, for any import: never the tool's own doing, in a worker or a server."""
    directory, name = os.path.split(path)
    compiled = name.endswith(".pyc") or ".pyc." in name
    return name == "__pycache__" or (compiled and os.path.basename(directory) == "__pycache__")


def _refused(line: str, cwd: str) -> Iterator[tuple[str, str]]:
    """The paths one line of the trace says a write to was refused, each with the refusal."""
    match = _LINE.match(line)
    if match is None or match["errno"] not in _REFUSALS:
        return
    call, arguments = match["call"], _split(match["arguments"])
    places = _WRITING_CALLS.get(call, ())
    if call in _OPENS:
        flags = arguments[places[0][1] + 1] if len(arguments) > places[0][1] + 1 else ""
        if not any(flag in flags for flag in _WRITE_FLAGS):
            return
    for directory_at, path_at in places:
        path = _string(arguments[path_at]) if path_at < len(arguments) else None
        base = cwd
        if directory_at is not None and directory_at < len(arguments):
            descriptor = _DESCRIPTOR.match(arguments[directory_at])
            base = (_string(f'"{descriptor["path"]}"') or cwd) if descriptor else cwd
            # No path (utimensat's NULL): the call writes to what the descriptor is open on.
            if path is None and descriptor and arguments[path_at] == "NULL":
                path = base
        if path is not None:
            yield os.path.normpath(os.path.join(base, path)), match["errno"]


def _split(text: str) -> list[str]:
    """A call's arguments as strace writes them, split at the commas between them (not those
    in a string, a structure or a descriptor's path)."""
    arguments, depth, start, quoted, escaped = [], 0, 0, False, False
    for index, character in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                quoted = False
        elif character == '"':
            quoted = True
        elif character in "{[<":
            depth += 1
        elif character in "}]>":
            depth -= 1
        elif character == "," and depth == 0:
            arguments.append(text[start:index].strip())
            start = index + 1
    arguments.append(text[start:].strip())
    return arguments


def _string(argument: str) -> str | None:
    """The path a string argument holds (strace's escapes read back), or None for another
    kind of argument."""
    match = _STRING.fullmatch(argument.removesuffix("..."))
    if match is None:
        return None
    try:
        raw = ast.literal_eval(f'b"{match[1]}"')
    except (SyntaxError, ValueError):
        return None
    return os.fsdecode(raw)
