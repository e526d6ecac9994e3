"""What a server's sandbox runs first: the server, then a look at what outlived it.

A sandbox ends with its first process: when the server exits, bubblewrap's init exits and the
kernel kills everything left in the sandbox's PID namespace. That is what keeps a server's
leftovers from surviving it, and also what would hide them: so the server is run by this
program, which waits for it to exit, gives what it started the moment that the check of an
unconfined server gives (they may be ending on their own), then writes what still runs, one
``pid command`` line each, to the descriptor it was given, and exits with the server's status.

It is run by path with the standard library alone (``python -I .../_sandbox_init.py FD
[--traced FD] -- ARGV``): a server's sandbox need not be able to import the kit. A traced
server's ARGV starts with strace's words (see ``_trace``), which write to the descriptor given:
strace makes itself a grandchild of this program, which tells it from what the server left by
the server's ``TracerPid``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

# As long as the check of an unconfined server waits for its children to end (the MCP
# probe's _left_behind).
_SETTLE = 0.5
_POLL = 0.05
# How long strace may take to attach to the server it starts (milliseconds, mostly).
_ATTACH_WAIT = 5.0


def main(argv: list[str]) -> int:
    report, *rest = argv
    # A traced server's trace goes to this descriptor, which strace is given.
    trace = int(rest[1]) if rest[:1] == ["--traced"] and len(rest) > 1 else None
    separator, *command = rest if trace is None else rest[2:]
    if separator != "--" or not command:
        sys.stderr.write("usage: _sandbox_init.py FD [--traced FD] -- COMMAND [ARGUMENTS...]\n")
        return 2
    # bwrap sets PWD in the sandbox; the server gets the environment its client gave, no more.
    environment = {name: value for name, value in os.environ.items() if name != "PWD"}
    try:
        server = subprocess.Popen(command, env=environment, pass_fds=(trace,) if trace else ())
    except OSError as exc:
        sys.stderr.write(f"cannot start {command[0]!r}: {exc.strerror or exc}\n")
        return 127
    tracer = _tracer_of(server) if trace is not None else None
    # The server's streams are its own: the client sees them close when the server exits, not
    # when this program does.
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    if sys.platform != "win32":  # a sandbox is Linux's; this keeps the type checker's Windows
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(number, lambda received, _: server.send_signal(received))
    status = server.wait()
    deadline = time.monotonic() + _SETTLE
    while (left := _running(tracer)) and time.monotonic() < deadline:
        time.sleep(_POLL)
    with os.fdopen(int(report), "w") as out:
        out.writelines(f"{pid} {command}\n" for pid, command in sorted(left.items()))
    return 128 - status if status < 0 else status


def _tracer_of(server: subprocess.Popen[bytes]) -> int | None:
    """The pid of the process that traces the server, once it does (None if it ended first)."""
    deadline = time.monotonic() + _ATTACH_WAIT
    while server.poll() is None and time.monotonic() < deadline:
        try:
            with open(f"/proc/{server.pid}/status") as status:
                for line in status:
                    if line.startswith("TracerPid:") and int(line.split()[1]):
                        return int(line.split()[1])
        except (OSError, ValueError):
            return None
        time.sleep(_POLL / 10)
    return None


def _running(tracer: int | None) -> dict[int, str]:
    """The other live processes of the sandbox (its init, this one and the server's tracer
    left out), each with its command line."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, os.getpid(), tracer):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                state = stat.read().rpartition(b")")[2].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                words = cmdline.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if state != b"Z":
            found[int(name)] = b" ".join(word for word in words if word).decode("utf-8", "replace")
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
