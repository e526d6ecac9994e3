"""Feeds: which calls a per-call check judges, and how the worker makes them.

``valid`` and ``invalid`` inputs are generated from the schema and sent to the tool as its
protocol calls it; ``offline`` sends valid inputs it served again, under a condition the protocol
makes (see ToolProtocol.calling_under); ``payloads``, valid inputs it was given with payloads
that run the kit's canary program put into their strings (see the engine's _payloads). The
probes (``guards``, ``crashing-guard``, ``concurrency``) call an instrumented copy of the tool;
a protocol that offers the capability a probe needs names the worker function that makes it
(see :attr:`ToolProtocol.probes`). What a feed asks of the tool's worker is one of the door's
records (see the engine's SessionState.observe).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CONCURRENCY",
    "CRASHING_GUARD",
    "FEEDS",
    "GUARDS",
    "INVALID",
    "OFFLINE",
    "OPTION_TOKEN",
    "PAYLOADS",
    "SHELL_TOKEN",
    "VALID",
    "Feed",
]


@dataclass(frozen=True)
class Feed:
    """A source of calls. ``fuzzed``: its inputs are generated from the schema (they shrink, a
    person can make the same call, and their sources and keywords are counted). ``scale``: how
    many per-call timeouts one of its calls may take. A feed either calls the tool, its inputs
    ``invalid`` or not and made under its protocol's ``condition`` ("" as always), or makes the
    protocol's ``probe`` of that name with what the engine sends."""

    name: str
    fuzzed: bool = False
    scale: int = 1
    invalid: bool = False
    condition: str = ""
    probe: bool = False

    def __str__(self) -> str:
        return self.name

    @property
    def by_hand(self) -> bool:
        """Whether a person can make its calls as the kit made them: the tool itself, called as
        its protocol calls it, under no condition of the kit's."""
        return not self.probe and not self.condition


VALID = Feed("valid", fuzzed=True)
INVALID = Feed("invalid", fuzzed=True, invalid=True)
GUARDS = Feed("guards", probe=True)
CRASHING_GUARD = Feed("crashing-guard", probe=True)
# A valid and an invalid input, sent together.
CONCURRENCY = Feed("concurrency", probe=True, scale=10)
# Valid inputs the tool served, sent again with the tool cut off from the network.
OFFLINE = Feed("offline", condition="offline", scale=2)
# Inputs it was given with payloads put into their strings, in a sandbox alone; each payload's
# token starts with what it tests: a string leaving its words for a shell, or read as an option.
PAYLOADS = Feed("payloads")
SHELL_TOKEN = "axm-shell"
OPTION_TOKEN = "axm-option"

FEEDS: dict[str, Feed] = {
    feed.name: feed
    for feed in (VALID, INVALID, GUARDS, CRASHING_GUARD, CONCURRENCY, OFFLINE, PAYLOADS)
}
