"""The registry of checks, one module per group; importing this registers them all."""

from axm_conformance._checks import behaviour, guards, invalid, results, schema, structure
from axm_conformance._checks._registry import CHECKS, GROUPS, Check, Context, check

__all__ = ["CHECKS", "GROUPS", "Check", "Context", "check"]

del behaviour, guards, invalid, results, schema, structure

# Import order is alphabetical; list the checks in group order (stable within a group).
_ordered = sorted(CHECKS.values(), key=lambda registered: GROUPS.index(registered.group))
CHECKS.clear()
CHECKS.update((registered.id, registered) for registered in _ordered)
