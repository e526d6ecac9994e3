"""Feeds: which calls a per-call check judges, and how the worker makes them.

``valid`` and ``invalid`` inputs are generated from the schema and sent to the tool as its
protocol calls it; ``offline`` sends valid inputs it served again, under a condition the protocol
makes (see ToolProtocol.calling_under). The probes (``guards``, ``crashing-guard``,
``concurrency``) call an instrumented copy of the tool; a protocol that offers the capability a
probe needs names the worker function that makes it (see :attr:`ToolProtocol.probes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONCURRENCY",
    "CRASHING_GUARD",
    "FEEDS",
    "GUARDS",
    "INVALID",
    "OFFLINE",
    "VALID",
    "Feed",
]

# Where the generated inputs go in the worker: the protocol's call, made by the agent.
_INVOKE = "axm_conformance._process.child._agent:invoke"


@dataclass(frozen=True)
class Feed:
    """A source of calls. ``fuzzed``: its inputs are generated from the schema (they shrink, a
    person can make the same call, and their sources and keywords are counted). ``scale``: how
    many per-call timeouts one of its calls may take. ``arguments`` turns what the engine sends
    into the worker function's arguments."""

    name: str
    arguments: Callable[[Any], tuple[Any, ...]]
    fuzzed: bool = False
    scale: int = 1
    target: str = ""  # the worker function; "" where the protocol names it

    def __str__(self) -> str:
        return self.name


VALID = Feed("valid", lambda value: (value, False), fuzzed=True, target=_INVOKE)
INVALID = Feed("invalid", lambda value: (value, True), fuzzed=True, target=_INVOKE)
GUARDS = Feed("guards", lambda value: (value, False))
CRASHING_GUARD = Feed("crashing-guard", lambda value: (value, True))
# A valid and an invalid input, sent together.
CONCURRENCY = Feed("concurrency", tuple, scale=10)
# Valid inputs the tool served, sent again with the tool cut off from the network.
OFFLINE = Feed("offline", lambda value: (value, False, "offline"), target=_INVOKE, scale=2)

FEEDS: dict[str, Feed] = {
    feed.name: feed for feed in (VALID, INVALID, GUARDS, CRASHING_GUARD, CONCURRENCY, OFFLINE)
}
