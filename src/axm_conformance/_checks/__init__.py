"""The registry of checks, one module per subject; importing this registers the kit's own.

Checks of plugins (the MCP protocol's among them) are registered by :func:`load_check_plugins`.
"""

from axm_conformance._checks import (
    behaviour,
    clients,
    guards,
    hints,
    invalid,
    results,
    schema,
    security,
    structure,
)
from axm_conformance._checks._registry import (
    CHECKS,
    ENTRY_POINT_GROUP,
    Check,
    CheckContext,
    check,
    checks_for,
    load_check_plugins,
)

__all__ = [
    "CHECKS",
    "ENTRY_POINT_GROUP",
    "Check",
    "CheckContext",
    "check",
    "checks_for",
    "load_check_plugins",
]

del behaviour, clients, guards, hints, invalid, results, schema, security, structure
