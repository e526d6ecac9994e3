"""The sandbox every worker, and so every tool and server, runs in: bubblewrap's, on Linux.

A worker is started as ``bwrap ... -- python -m axm_conformance._process.parent._worker`` (a
server, as ``bwrap ... -- SERVER``), or forked from a fork server in a sandbox into one of its
own with the same walls (:mod:`axm_conformance._process.system._confine`), which gives it:

- a PID namespace of its own: a kill of -1 or of its process group reaches only the sandbox,
  and when the worker ends (or the kit, whose death bwrap follows) every process it started
  ends with it;
- its own view of the filesystem: everything read-only but its working directory (its HOME
  and TMPDIR) and a private ``/tmp`` and ``/var/tmp``, fresh and in memory;
- no network unless the tool needs one (a network namespace with nothing up, not even
  loopback);
- no capabilities, even when the kit runs as root: root in the sandbox cannot remount the
  read-only view, nor signal or trace what is outside it;
- for a server, a tracer (``tracer``: strace, see ``_trace``) that names the writes the
  read-only view refused it, which a Python worker's audit hook names for its tool.

bubblewrap is the sandbox Flatpak builds on: unprivileged through user namespaces, and as root.
It is used rather than namespaces made by hand because it gets the order of mounts, the
dropping of capabilities and the death of the sandbox with its parent right, and is kept so;
only a fork, which executes nothing bwrap could wrap, makes its walls itself, inside bwrap's.
Where it is missing or cannot build a sandbox (user namespaces turned off, a container that
forbids them), :func:`support` says why, and the run says so in its header.

Exit statuses pass through bwrap as a shell's do: a worker killed by signal N is seen as exiting
with 128 + N (:func:`exit_status`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import psutil

from axm_conformance._process.system import _platform
from axm_conformance._process.system._installed import installation, within
from axm_conformance._process.system._tasks import TaskGroup

__all__ = [
    "INSIDE_VARIABLE",
    "MODES",
    "PRIVATE_TEMPORARY",
    "SANDBOX_INIT",
    "TEMPORARY_SIZE",
    "Sandbox",
    "SandboxMode",
    "can_cut_off",
    "exit_status",
    "hidden",
    "inside",
    "read_by",
    "stop",
    "support",
    "unseen",
    "version",
    "why_not_runnable",
]

SandboxMode = Literal["auto", "required", "off"]
MODES: tuple[SandboxMode, ...] = ("auto", "required", "off")
# What a server's sandbox runs first, by path (see _sandbox_init).
SANDBOX_INIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sandbox_init.py")
# Set in every sandbox, read by the worker at start (a tool clearing it changes nothing).
INSIDE_VARIABLE = "AXM_CONFORMANCE_SANDBOX"
# The temporary directories every program of the system knows, private to each sandbox.
PRIVATE_TEMPORARY = ("/tmp", "/var/tmp")
# Each private temporary directory lives in memory: at most this much, so that a tool filling it
# fills a sandbox, not the machine's memory.
TEMPORARY_SIZE = 256 * 1024 * 1024
_PROBE_TIMEOUT = 30.0
_INSTALL = (
    "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap)"
)


@dataclass(frozen=True)
class Sandbox:
    """A sandbox to start a process in: ``network`` says whether it reaches any network;
    ``tracer``, strace's path, that a server started in it is traced (see ``_trace``)."""

    network: bool = False
    tracer: str = ""

    def command(
        self,
        argv: Sequence[str],
        writable: Sequence[str],
        readable: Sequence[str] = (),
        marked: bool = True,
        capable: bool = False,
        tasks: TaskGroup | None = None,
    ) -> list[str]:
        """``argv`` run in this sandbox, where only the directories ``writable`` (absolute,
        existing) and the private temporary directories can be written.

        The private temporary directories hide the machine's: the paths ``readable`` that lie
        in one (an interpreter, a module, a server's script made in a temporary directory) are
        made visible again, read-only. A ``marked`` sandbox tells the process it runs that it
        is in one (a worker asks); a server's environment is left as it was given. A
        ``capable`` sandbox keeps its capabilities (in a user namespace of its own unless the kit
        runs as root): a fork server's, whose forks make sandboxes of their own and give up every
        capability before a tool's code runs (see ``_confine``). With ``tasks`` the sandbox,
        bwrap and all, runs in that group, which bounds how many tasks it holds.
        """
        # Later mounts land on earlier ones: the read-only root first, the writable places last,
        # so that a working directory under /tmp is the real one, not the private /tmp's.
        options = [
            "--die-with-parent",
            # A session of its own: a kill of its process group reaches only the sandbox.
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
        ]  # fmt: skip
        for directory in PRIVATE_TEMPORARY:
            options += ["--size", str(TEMPORARY_SIZE), "--tmpfs", directory]
        shown = installation(readable, PRIVATE_TEMPORARY)
        for path in shown.paths:
            options += ["--ro-bind", path, path]
        for link, target in shown.links:
            options += ["--symlink", target, link]
        for directory in writable:
            options += ["--bind", directory, directory]
        if not self.network:
            options.append("--unshare-net")
        if capable and not _as_root():
            options += ["--unshare-user", "--cap-add", "ALL"]
        elif not capable and _as_root():
            # Root keeps every capability in a bwrap sandbox unless told otherwise, and with
            # CAP_SYS_ADMIN could remount the read-only view.
            options += ["--cap-drop", "ALL"]
        if marked:
            options += ["--setenv", INSIDE_VARIABLE, "1"]
        command = [_bwrap(), *options, "--", *argv]
        return command if tasks is None else tasks.command(command)


def can_cut_off() -> str:
    """Why a process cannot be started cut off from the network here ("": it can), through
    util-linux's ``unshare`` where no sandbox is in force."""
    if not _platform.PLATFORM.network_namespaces:
        return (
            f"not supported on this platform ({_platform.PLATFORM.system}): cutting a server "
            "off the network needs Linux network namespaces"
        )
    if shutil.which("unshare") is None:
        return "cutting a server off the network needs util-linux's unshare command"
    return ""


def read_by(argv: Sequence[str], env: Mapping[str, str], *more: str) -> list[str]:
    """What a process started as ``argv`` with ``env`` reads besides the system, which its
    sandbox must show: the paths its command names (a file with its directory: a script's
    modules, and where it would write beside itself, which must be refused as anywhere
    outside), the directories of its PATH and PYTHONPATH, the interpreter running the kit (a
    worker's, and that of servers written in Python), and ``more``."""
    listed = [env.get(name, "").split(os.pathsep) for name in ("PATH", "PYTHONPATH")]
    private = {os.path.realpath(directory) for directory in PRIVATE_TEMPORARY}
    named = [word for word in argv if os.path.isabs(word)]
    return [
        *named,
        *(
            directory
            for directory in (os.path.dirname(os.path.realpath(word)) for word in named)
            # A private temporary directory itself is never shown: the sandbox's own would go.
            if directory not in private
        ),
        *(entry for entries in listed for entry in entries),
        sys.prefix,
        sys.base_prefix,
        os.path.dirname(sys.executable),
        *more,
    ]


def hidden(paths: Sequence[str]) -> list[str]:
    """The existing paths among ``paths`` that a private temporary directory would hide, each
    with the installation it brings (see :func:`installation`), none inside another."""
    return installation(paths, PRIVATE_TEMPORARY).paths


# An absolute path in a command's words or a message: up to a space, a quote or a bracket.
_NAMED_PATH = re.compile(r"(?<![\w.~-])/[^\s'\"`,;:()<>\[\]{}|]+")


def unseen(texts: Iterable[str], shown: Sequence[str]) -> list[str]:
    """The absolute paths ``texts`` name (a command's words, what a server wrote as it failed)
    that exist on this machine but that a sandbox showing ``shown`` hides: in a private
    temporary directory (not the directory itself) and not within a path ``shown`` or the
    installation it brings; in order, each once."""
    private = [os.path.realpath(directory) for directory in PRIVATE_TEMPORARY]
    seen = [os.path.realpath(path) for path in (*shown, *hidden(list(shown)))]
    found: dict[str, None] = {}
    for text in texts:
        for named in _NAMED_PATH.findall(text):
            path = named.rstrip(".")
            real = os.path.realpath(path)
            if (
                os.path.exists(path)
                and any(within(real, directory) and real != directory for directory in private)
                and not any(within(real, place) for place in seen)
            ):
                found[path] = None
    return list(found)


def why_not_runnable(program: str, cwd: str, env: Mapping[str, str]) -> str:
    """Why ``program`` cannot be started, as starting it would say ("" when it can): not found
    (on the PATH of ``env``, or by its path from ``cwd``), or not executable. Inside a sandbox
    such a program would be a process that exits at once, not a refusal to start."""
    if os.sep in program:
        path = os.path.join(cwd, program)
        if not os.path.exists(path):
            return "No such file or directory"
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            return "Permission denied"
        return ""
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        return "No such file or directory"
    return ""


def stop(process: subprocess.Popen[bytes]) -> None:
    """Ask a server started in a sandbox to stop (SIGTERM), as a service is stopped: the
    sandbox's first process passes it on to the server, then says what outlived it (see
    ``_sandbox_init``); a process started without one is asked itself."""
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(process.pid).children(recursive=True):
            if SANDBOX_INIT in child.cmdline():
                child.terminate()
                return
    with contextlib.suppress(OSError):
        process.terminate()


def support() -> str:
    """Why no sandbox can be built here ("" when one can): asked once per process, by building
    one and running ``true`` in it."""
    return _support()


@functools.cache
def _support() -> str:
    if sys.platform != "linux":
        return f"bubblewrap needs Linux, and this is {sys.platform}"
    if shutil.which("bwrap") is None:
        return f"bubblewrap's bwrap is not on PATH: {_INSTALL}"
    probe = Sandbox().command(["true"], [os.getcwd()])
    try:
        done = subprocess.run(
            probe,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        return (
            f"bwrap cannot build a sandbox here ({reason}); user namespaces may be turned off "
            "(sysctl kernel.unprivileged_userns_clone=1) or forbidden by a container"
        )
    return ""


@functools.cache
def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


def version() -> str:
    """bubblewrap's version, as ``bwrap --version`` says it ("" when it does not)."""
    try:
        done = subprocess.run(
            [_bwrap(), "--version"], capture_output=True, timeout=_PROBE_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode("utf-8", "replace").strip()


def _as_root() -> bool:
    return sys.platform != "win32" and os.geteuid() == 0


def exit_status(status: int) -> int:
    """A sandboxed process's exit status as Popen gives a process's own: bwrap exits with
    128 + N when what it ran was killed by signal N, which is read back as -N.

    A process that exits with such a status on purpose is taken for one signalled: statuses
    above 128 are what shells and bwrap use for signals, and are rare otherwise.
    """
    if status > 128:
        with_signal = status - 128
        if with_signal in signal.valid_signals():
            return -with_signal
    return status


def inside() -> bool:
    """Whether this process runs in a sandbox the kit made (a worker's own question, answered
    from its environment as it was at start: a tool clearing it changes nothing)."""
    return _INSIDE


_INSIDE = os.environ.get(INSIDE_VARIABLE) == "1"
