"""axm-conformance: a conformance test kit for LLM-agent tools.

Run it from pytest (``pytest --axm-conformance --axm-tool=module:attr``) or from Python with
:func:`check_tool`. Every check it runs is described in the contract (``conformance/``). A
project adds checks of its own with :func:`check` (``conformance/custom-checks.md``).

The names below are imported on first use, so that importing the package (as the pytest plugin
and every worker process do) costs nothing until the kit is actually used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from axm_conformance._version import __version__

if TYPE_CHECKING:
    from axm_conformance._api import LoadError, check_tool, load_tool
    from axm_conformance._checks import CheckContext, check
    from axm_conformance._observation import Call, SubjectInfo
    from axm_conformance._outcomes import (
        Evidence,
        Finding,
        Severity,
        Status,
        Verdict,
        not_run,
        note,
        warning,
    )
    from axm_conformance._report import Outcome, Report, ToolReport
    from axm_conformance._settings import Settings, SettingsError
    from axm_conformance.errors import AxmConformanceError

__all__ = [
    "AxmConformanceError",
    "Call",
    "CheckContext",
    "Evidence",
    "Finding",
    "LoadError",
    "Outcome",
    "Report",
    "Settings",
    "SettingsError",
    "Severity",
    "Status",
    "SubjectInfo",
    "ToolReport",
    "Verdict",
    "__version__",
    "check",
    "check_tool",
    "load_tool",
    "not_run",
    "note",
    "warning",
]

_HOMES = {
    "AxmConformanceError": "errors",
    "LoadError": "_api",
    "check_tool": "_api",
    "load_tool": "_api",
    "CheckContext": "_checks",
    "check": "_checks",
    "Call": "_observation",
    "SubjectInfo": "_observation",
    "not_run": "_outcomes",
    "note": "_outcomes",
    "warning": "_outcomes",
    "Evidence": "_outcomes",
    "Finding": "_outcomes",
    "Severity": "_outcomes",
    "Status": "_outcomes",
    "Verdict": "_outcomes",
    "Outcome": "_report",
    "Report": "_report",
    "ToolReport": "_report",
    "Settings": "_settings",
    "SettingsError": "_settings",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'axm_conformance' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"axm_conformance.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
