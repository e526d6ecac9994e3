"""What this machine makes of a run's settings: whether tools run contained, and which tools
are not called here.

:class:`~axm_conformance._settings.Settings` is a plain record of what was asked; this is where
it meets the machine. The sandbox probe behind :func:`contained` runs once per process (see
``_sandbox.support``); what the settings name among what is installed is checked once by
whoever starts a run (``axm_conformance._api.check_installed``).
"""

from __future__ import annotations

import os

from axm_conformance._process.system import _canary, _sandbox, _tasks, _trace
from axm_conformance._process.system._platform import as_root
from axm_conformance._settings import Settings

__all__ = ["canary", "contained", "containment", "payloads_refused", "refusal"]


def contained(settings: Settings) -> bool:
    """Whether tools run in a sandbox in this run (see
    :mod:`axm_conformance._process.system._sandbox`)."""
    return settings.sandbox != "off" and not _sandbox.support()


def payloads_refused(settings: Settings) -> str:
    """Why no payload that runs the kit's canary program is sent in this run ("" when they
    are): outside a sandbox one that ran would run on this machine (see ``_canary``)."""
    if not contained(settings):
        return (
            "payloads are sent only in a sandbox: one that ran would run on this machine (this "
            "run has none; see its header)"
        )
    return _canary.unusable()


def canary(token: str) -> str:
    """The command line that runs the kit's canary program with ``token``."""
    return _canary.invocation(token)


def containment(settings: Settings) -> str:
    """Which sandbox is in force and why, for the run's header."""
    if settings.sandbox == "off":
        return "off (--axm-sandbox=off): tools run in throw-away directories, unconfined"
    why = _sandbox.support()
    if why:
        return f"none: {why}; tools run in throw-away directories, unconfined"
    network = (
        "every tool reaches the network"
        if "*" in settings.network
        else "the network only for tools that declare they need it"
        + (f" and {', '.join(settings.network)}" if settings.network else "")
    )
    without = _tasks.support()
    root = not settings.worker_user and hasattr(os, "geteuid") and os.geteuid() == 0
    if not without:
        tasks = f"at most {_tasks.TASKS_MAX} tasks each (cgroup pids)"
    elif root:
        tasks = f"no bound on tasks but the call's timeout ({without})"
    else:
        tasks = (
            f"at most {_tasks.TASKS_MAX} tasks more than the user runs (RLIMIT_NPROC: {without})"
        )
    untraced = _trace.support()
    writes = (
        f"servers' writes outside not named ({untraced})"
        if untraced
        else "servers' writes outside named (strace)"
    )
    return (
        f"{_sandbox.version() or 'bubblewrap'}: a PID namespace, a read-only filesystem "
        f"but the working and temporary directories, {network}, {tasks}, {writes}"
    )


def refusal(settings: Settings, effects: tuple[str, ...]) -> str | None:
    """Why a tool declaring these effects is not called in this run, if it is not: one that
    writes files or runs commands is fuzzed with arbitrary paths and commands, never as root
    unless told to."""
    # Access of an unknown kind (axio's own word, and how a failing declaration is read)
    # may be either.
    risky = [effect for effect in ("write", "execute", "unknown") if effect in effects]
    if (
        not risky
        or contained(settings)
        or settings.worker_user is not None
        or settings.allow_root
        or not as_root()
    ):
        return None
    return (
        f"not run: the tool declares {' and '.join(risky)} access and the kit runs as root "
        "without a sandbox or --axm-worker-user; a skip is never a pass, and the tool is not "
        "certified: install bubblewrap (the sandbox), run it as an unprivileged user "
        "(--axm-worker-user=nobody), or give --axm-allow-root to fuzz it as root"
    )
