"""What a server's sandbox runs first: the server, then a look at what outlived it.

A sandbox ends with its first process: when the server exits, bubblewrap's init exits and the
kernel kills everything left in the sandbox's PID namespace. That is what keeps a server's
leftovers from surviving it, and also what would hide them: so the server is run by this
program, which waits for it to exit, gives what it started the moment that the check of an
unconfined server gives (they may be ending on their own), then writes what still runs, one
``pid command`` line each, to the descriptor it was given, and exits with the server's status.

It is run by path with the standard library alone (``python -I .../_sandbox_init.py FD
[--traced FD] [--relay SOCKET PORT] [--serve PORT SOCKET] -- ARGV``): a server's sandbox need
not be able to import
the kit. A traced server's ARGV starts with strace's words (see ``_trace``), which write to the
descriptor given: strace makes itself a grandchild of this program, which tells it from what
the server left by the server's ``TracerPid``. With ``--relay``, a server that serves HTTP on
loopback is reached from outside the sandbox's network namespace: each connection to the Unix
socket SOCKET (a path, which the namespace does not separate) is joined to a connection to
PORT on the sandbox's own loopback. With ``--serve`` (repeatable), the other way: each
connection to PORT on the sandbox's loopback is joined to one to the Unix socket SOCKET, where
the kit serves what the server is pointed at (an authorization server, an upstream API).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

# As long as the check of an unconfined server waits for its children to end (the MCP
# probe's _left_behind).
_SETTLE = 0.5
_POLL = 0.05
# How long strace may take to attach to the server it starts (milliseconds, mostly).
_ATTACH_WAIT = 5.0


_USAGE = (
    "usage: _sandbox_init.py FD [--traced FD] [--relay SOCKET PORT] [--serve PORT SOCKET] "
    "-- COMMAND [ARGS...]\n"
)
# The options, each with how many words follow it.
_WORDS = {"--traced": 1, "--relay": 2, "--serve": 2}


def main(argv: list[str]) -> int:
    report, *rest = argv
    options: dict[str, list[list[str]]] = {}
    while rest and rest[0] in _WORDS:
        count = _WORDS[rest[0]]
        options.setdefault(rest[0], []).append(rest[1 : 1 + count])
        rest = rest[1 + count :]
    separator, *command = rest or [""]
    given = [(flag, words) for flag, each in options.items() for words in each]
    if separator != "--" or not command or any(len(w) != _WORDS[f] for f, w in given):
        sys.stderr.write(_USAGE)
        return 2
    # A traced server's trace goes to this descriptor, which strace is given.
    trace = int(options["--traced"][0][0]) if "--traced" in options else None
    for path, port in options.get("--relay", []):
        _relay(path, int(port))
    for port, path in options.get("--serve", []):
        _serve(int(port), path)
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


def _relay(path: str, port: int) -> None:
    """Join each connection to the Unix socket at ``path`` to one to ``port`` on loopback, in
    threads of this program, for as long as it runs."""
    if sys.platform == "win32":
        raise OSError("a sandbox is Linux's")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    # A client may open many connections at once (the kit's transport checks do): a short
    # queue would refuse some, and blame the server for the relay.
    listener.listen(socket.SOMAXCONN)

    def serve() -> None:
        while True:
            outside, _ = listener.accept()
            threading.Thread(target=_join, args=(outside, port), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def _serve(port: int, path: str) -> None:
    """Join each connection to ``port`` on loopback to one to the Unix socket at ``path``, in
    threads of this program, for as long as it runs."""
    if sys.platform == "win32":
        raise OSError("a sandbox is Linux's")
    listener = socket.create_server(("127.0.0.1", port), backlog=socket.SOMAXCONN)

    def connected() -> socket.socket:
        outside = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        outside.connect(path)
        return outside

    def serve() -> None:
        while True:
            inside, _ = listener.accept()
            threading.Thread(target=_join, args=(inside, connected), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def _join(outside: socket.socket, to: int | Callable[[], socket.socket]) -> None:
    """Join ``outside`` to a new connection: to port ``to`` on loopback, or the one it makes."""
    try:
        inside = socket.create_connection(("127.0.0.1", to)) if isinstance(to, int) else to()
    except OSError:
        outside.close()  # not listening yet: the client asks again
        return
    back = threading.Thread(target=_pump, args=(inside, outside), daemon=True)
    back.start()
    _pump(outside, inside)
    back.join()
    inside.close()
    outside.close()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copy one direction until it ends, then end it on the other side too."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


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
