"""pytest entry point of axm-conformance.

Kept outside the package, like Hypothesis' plugin, so that pytest can load it without importing
the kit: it declares the options (from the kit's one table of them, which imports nothing else)
and reads the switch that turns the kit on. Nothing else is imported unless ``--axm-conformance``
(or the ``axm_conformance`` ini setting, in a run that selects the tools) turns the kit on.
"""

from __future__ import annotations

from typing import Any

from axm_conformance._options import CONFORMANCE, LONG_LIVED_HELP, NONDETERMINISTIC_HELP, OPTIONS

__all__ = ["pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("axm-conformance", "axm-conformance: certify LLM-agent tools")
    for option in (CONFORMANCE, *OPTIONS):
        if option.switch:
            group.addoption(
                option.flag, action="store_true", default=None, dest=option.ini, help=option.help
            )
            parser.addini(option.ini, option.help, type="bool", default=False)
        else:
            group.addoption(
                option.flag,
                dest=option.ini,
                default=None,
                help=option.help,
                metavar=option.metavar,
                **({"action": "append"} if option.repeatable else {}),
            )
            parser.addini(
                option.ini, option.help, type="linelist" if option.repeatable else "string"
            )
    parser.addini("axm_nondeterministic", NONDETERMINISTIC_HELP, type="linelist")
    parser.addini("axm_long_lived", LONG_LIVED_HELP, type="linelist")


def pytest_configure(config: Any) -> None:
    # Reading a switch needs pytest's own types, and pytest is running this: no cost.
    from axm_conformance._pytest_shared import flag, selected

    if not flag(config, CONFORMANCE.ini):
        return
    if not selected(config, CONFORMANCE.ini, ("axm_tools", "axm_validators")):
        return
    from axm_conformance._pytest import register

    register(config)
