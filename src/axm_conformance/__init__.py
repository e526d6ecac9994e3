"""axm-conformance: a conformance test kit for LLM-agent tools.

Run it from pytest (``pytest --axm-conformance --axm-tool=module:attr``) or from Python with
:func:`check_tool`. Every check it runs is described in the contract (``conformance/``).
"""

from axm_conformance._api import LoadError, check_tool, load_tool
from axm_conformance._report import Outcome, Report, ToolReport
from axm_conformance._settings import Settings, SettingsError
from axm_conformance._version import __version__

__all__ = [
    "LoadError",
    "Outcome",
    "Report",
    "Settings",
    "SettingsError",
    "ToolReport",
    "__version__",
    "check_tool",
    "load_tool",
]
