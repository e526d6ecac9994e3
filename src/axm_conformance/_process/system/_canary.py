"""The canary: a program no tool has reason to run, so that its run proves an input was run.

The payloads of ``no-injected-exec`` and ``no-option-injection`` name it (:func:`invocation`):
``sh SCRIPT TOKEN``, by absolute path, so that a tool that clears its PATH or its environment
still runs it. It appends its token to :data:`RECORD`, in the shared-memory directory of the
sandbox it runs in; the worker reads that after each call, in its own sandbox for a Python tool
and through ``/proc/PID/root`` of a server's (:func:`ran`). Every sandbox's ``/dev/shm`` is its
own, in memory, and writable (its ``/tmp`` is the machine's, read-only, where a worker is shown
a project under ``/tmp``): a neighbour's canary is never this tool's. Outside a sandbox no
payload is sent: one that ran would run on the machine, and its record would be every tool's.

The script is the package's data, run by ``sh`` rather than executed, so that an installation
that loses its mode bits (a wheel unpacked by hand) keeps a canary that runs.
"""

from __future__ import annotations

import os
import re

__all__ = ["RECORD", "SCRIPT", "invocation", "ran", "unusable"]

RECORD = "/dev/shm/.axm-conformance-canary"
SCRIPT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "data", "canary.sh"
)
# A path a shell reads as one word, unquoted: the payloads cannot quote it for every context.
_ONE_WORD = re.compile(r"^[A-Za-z0-9_./+-]+$")


def invocation(token: str) -> str:
    """The command line that runs the canary with ``token``."""
    return f"sh {SCRIPT} {token}"


def unusable() -> str:
    """Why the canary cannot be named in a payload here ("" when it can)."""
    if not os.path.isfile(SCRIPT):
        return f"the canary script {SCRIPT} is missing from the installation"
    if not _ONE_WORD.match(SCRIPT):
        return (
            f"the canary script's path {SCRIPT!r} holds characters a shell splits or expands; "
            "install the kit under a path of letters, digits and ./_+-"
        )
    return ""


def ran(root: str = "") -> tuple[str, ...]:
    """The tokens the canary was run with since this was last asked, in the sandbox whose root
    is ``root`` ("" for this process's own), and the record emptied."""
    path = root + RECORD
    try:
        with open(path, "rb") as record:
            said = record.read().decode("utf-8", "replace")
        os.remove(path)
    except OSError:
        return ()
    return tuple(dict.fromkeys(word for line in said.splitlines() for word in line.split()))
