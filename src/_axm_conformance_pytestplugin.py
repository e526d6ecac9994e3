"""pytest entry point of axm-conformance.

Kept outside the package, like Hypothesis' plugin, so that pytest can load it without importing
the kit: it only declares the options (from the kit's one table of them, which imports nothing
else). Nothing else is imported unless ``--axm-conformance`` (or the ``axm_conformance`` ini
setting) turns the kit on.
"""

from __future__ import annotations

from typing import Any

from axm_conformance._options import CONFORMANCE, NONDETERMINISTIC_HELP, OPTIONS

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


def pytest_configure(config: Any) -> None:
    enabled = config.getoption(CONFORMANCE.ini)
    if enabled is None:
        import pytest  # loaded already: pytest is running this

        try:
            enabled = config.getini(CONFORMANCE.ini)
        except (ValueError, pytest.UsageError) as exc:
            raise pytest.UsageError(
                f"the {CONFORMANCE.ini} ini setting: {exc}; use true or false"
            ) from None
    if not enabled:
        return
    from axm_conformance._pytest import register

    register(config)
