"""The worker's state for one loaded tool: its adapter, its event loop and its file watch."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from axm_conformance._filewatch import FileWatch
from axm_conformance._refs import Cleanups

__all__ = ["ToolState"]

# The adapter's type is a parameter so that this module does not import the protocols' adapters:
# they import the probes, which import this module.
AdapterT = TypeVar("AdapterT")


@dataclass
class ToolState(Generic[AdapterT]):
    """One loaded tool in the worker, with the event loop all its calls run on."""

    adapter: AdapterT
    loop: asyncio.AbstractEventLoop
    size_limit: int
    # The project's files, to tell what a call wrote outside its working directory. Their first
    # snapshot is taken just before the first call, not at load: a worker may be started while
    # another tool is still being certified.
    files: FileWatch | None = field(default=None, repr=False)
    # What loading the tool left to do once it is no longer used (an Amplifier module's cleanups).
    cleanups: Cleanups = field(default_factory=list, repr=False)
