"""What the kit's two pytest plugins share: reading settings, adding items, failing them.

The tools' module registers the validators' plugin, which takes these from here rather than from
the tools' module: the two plugin modules do not import each other.
"""

from __future__ import annotations

from typing import Any

import pytest

from axm_conformance._options import OPTIONS
from axm_conformance.errors import AxmConformanceError

__all__ = ["CheckFailed", "KitItem", "add_items", "flag", "read_setting", "selected"]


def read_setting(config: pytest.Config, ini: str) -> tuple[Any, str]:
    """The value of a setting and where it came from (option first, then ini).

    A relative path is resolved as pytest resolves its own: from the directory pytest was
    invoked in for an option, from the ini file's directory for an ini setting.
    """
    option = next(option for option in OPTIONS if option.ini == ini)
    value = config.getoption(ini)
    if value is not None:
        base, where = config.invocation_params.dir, option.flag
    else:
        value = config.getini(ini) or None
        base = config.inipath.parent if config.inipath else config.rootpath
        where = f"the {ini} ini setting"
    if option.path and value is not None:
        value = str(base / value)
    return value, where


def flag(config: pytest.Config, ini: str) -> bool:
    """An on/off setting: the option when given, else the ini setting."""
    given = config.getoption(ini)
    if given is not None:
        return bool(given)
    try:
        return bool(config.getini(ini))
    except (ValueError, pytest.UsageError) as exc:  # pytest's names the value, not the setting
        raise pytest.UsageError(f"the {ini} ini setting: {exc}; use true or false") from None


def selected(config: pytest.Config, switch: str, names: tuple[str, ...]) -> bool:
    """Whether this run is one the kit's items belong to.

    The command line asks for them with the ``switch`` or a name among ``names`` (``--axm-tool``,
    ``--axm-validator``). The ini switch alone turns the kit on for the project's whole runs:
    those given no path (pytest takes ``testpaths`` or the current directory), or a path that
    holds the ini file's directory, to which the items belong. ``pytest tests/test_x.py`` or
    ``pytest tests/test_x.py::test_y`` selects other tests, not the tools.
    """
    if config.getoption(switch) or any(config.getoption(name) for name in names):
        return True
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return True
    home = config.inipath.parent if config.inipath else config.rootpath
    for arg in config.args:
        path = (config.invocation_params.dir / arg.partition("::")[0]).resolve()
        if home == path or home.is_relative_to(path):
            return True
    return False


class CheckFailed(AxmConformanceError):
    """Raised by an item whose check failed; its text is the whole report of the failure."""


class KitItem(pytest.Item):
    """An item of the kit: its failure is shown as the kit's own report, not a traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)


def add_items(config: pytest.Config, items: list[pytest.Item], added: list[pytest.Item]) -> None:
    """Add the kit's items to the run, reported as collected: no file collects them, and pytest
    counts only what is reported."""
    items.extend(added)
    result: list[pytest.Item | pytest.Collector] = [*added]
    report = pytest.CollectReport("axm-conformance", "passed", None, result)
    config.hook.pytest_collectreport(report=report)
