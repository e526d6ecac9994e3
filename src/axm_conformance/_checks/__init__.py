"""The registry of checks, one module per subject; importing this registers them all."""

from axm_conformance._checks import (
    behaviour,
    guards,
    hints,
    invalid,
    results,
    schema,
    server,
    structure,
    wire,
)
from axm_conformance._checks._registry import CHECKS, GROUPS, Check, Context, check, checks_for

__all__ = ["CHECKS", "GROUPS", "Check", "Context", "check", "checks_for"]

del behaviour, guards, hints, invalid, results, schema, server, structure, wire

# Import order is alphabetical; list the checks in group order (stable within a group).
_ordered = sorted(CHECKS.values(), key=lambda registered: GROUPS.index(registered.group))
CHECKS.clear()
CHECKS.update((registered.id, registered) for registered in _ordered)
