"""The worker's state for one loaded tool: its protocol, its event loop, its file watch, and the
tools loaded beside it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from axm_conformance._process.child._filewatch import FileWatch

__all__ = ["ToolState"]

# The protocol's type is a parameter, and the cleanups' type is written out, so that this module
# does not import the protocols: they import the probes, which import this module.
ProtocolT = TypeVar("ProtocolT")


@dataclass
class ToolState(Generic[ProtocolT]):
    """One loaded tool in the worker, with the event loop all its calls run on."""

    protocol: ProtocolT
    loop: asyncio.AbstractEventLoop
    size_limit: int
    # The project's files, to tell what a call wrote outside its working directory. Their first
    # snapshot is taken just before the first call, not at load: a worker may be started while
    # another tool is still being certified.
    files: FileWatch | None = field(default=None, repr=False)
    # The tool's working directory, as the worker gave it before the first call: a tool may
    # move elsewhere (os.chdir), and what it changes is still looked for here.
    home: str = ""
    # What loading the tool left to do once it is no longer used (an Amplifier module's cleanups).
    cleanups: list[Callable[[], Any]] = field(default_factory=list, repr=False)
    # The other tools of its server or package, by reference, loaded beside it to prepare its
    # world (an MCP server's tools share its session; a module's tools, its state).
    together: dict[str, ProtocolT] = field(default_factory=dict, repr=False)
