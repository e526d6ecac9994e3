"""What a pytest run asks of the kit, read from its configuration: the settings its options and
ini file give, its seed, the tools its project publishes (or the xdist controller described),
and the known failures of its baseline. A bad value is a one-line usage error.
"""

from __future__ import annotations

import base64
import json
import pickle
import sys
import zlib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._api import LoadError, check_installed, import_engine
from axm_conformance._certificate import BaselineError, KnownFailure, read_baseline
from axm_conformance._checks import CHECKS
from axm_conformance._observation import SubjectInfo
from axm_conformance._options import OPTIONS
from axm_conformance._process.parent._pool import WorkersAhead, inspect_tools
from axm_conformance._pytest_shared import flag, read_setting
from axm_conformance._settings import Settings, SettingsError, new_seed, parse_exemptions, run_seed
from axm_conformance.protocols import ENTRY_POINT_PREFIX, entry_point_groups

__all__ = [
    "SEED_INPUT",
    "SUBJECTS_INPUT",
    "baseline_of_run",
    "inspect_published",
    "inspected_by_controller",
    "published_refs",
    "settings_from_config",
]


def settings_from_config(config: pytest.Config) -> Settings:
    """Settings from the command line and ini file; a bad value is a one-line usage error."""
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for option in OPTIONS:
        if not option.setting:
            continue
        if option.switch:
            values[option.setting] = flag(config, option.ini)
            continue
        raw, where = read_setting(config, option.ini)
        if raw is None:
            continue
        try:
            values[option.setting] = option.parse(raw)
        except ValueError as exc:
            wrong = exc if option.repeatable else f"{raw!r} is not {option.expected}"
            raise pytest.UsageError(f"{where}: {wrong}") from None
        origin[option.setting] = where
    checks, where = read_setting(config, "axm_checks")
    if checks:
        values["checks"] = tuple(checks)
        origin["checks"] = where
    exemptions = {name: config.getini(f"axm_{name}") for name in ("nondeterministic", "long_lived")}
    for name, lines in exemptions.items():
        if lines:
            origin[name] = f"the axm_{name} ini setting"
    values["seed"] = _seed(config)
    invocation = str(config.invocation_params.dir)
    values["sys_path"] = (*sys.path, invocation)
    try:
        for name, lines in exemptions.items():
            values[name] = parse_exemptions(lines, name)
        settings = Settings(**values)
        check_installed(settings)
        return settings
    except SettingsError as exc:
        raise pytest.UsageError(f"{origin.get(exc.setting, 'axm-conformance')}: {exc}") from None


_SEED_KEY = "axm_conformance/seed"
# How an xdist controller hands its workers what it knows: the seed, the inspected tools.
SEED_INPUT = "axm_seed"
SUBJECTS_INPUT = "axm_subjects"


def inspect_published(
    refs: list[str], settings: Settings, workers: WorkersAhead | None
) -> tuple[list[SubjectInfo], dict[str, str]]:
    """The tools the project publishes, and the entry points that cannot be loaded, with why.

    Nobody named these references: one that is broken fails its own item, and the rest are
    certified. They are loaded together first, and one by one only when that fails.
    """
    try:
        return inspect_tools(refs, settings, workers, meanwhile=import_engine), {}
    except LoadError:
        pass
    subjects: list[SubjectInfo] = []
    unloadable: dict[str, str] = {}
    for ref in refs:
        try:
            subjects += inspect_tools([ref], settings)
        except LoadError as exc:
            unloadable[ref] = str(exc)
    return subjects, unloadable


def inspected_by_controller(
    config: pytest.Config,
) -> tuple[list[SubjectInfo], dict[str, str]] | None:
    """The tools as the xdist controller described them, so that no worker loads them all again.

    The controller and its workers are one test run on one machine: the description travels
    pickled, as text, the way xdist passes its workers their input.
    """
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or SUBJECTS_INPUT not in workerinput:
        return None
    described: tuple[list[SubjectInfo], dict[str, str]] = pickle.loads(
        base64.b64decode(workerinput[SUBJECTS_INPUT])
    )
    return described


def _seed(config: pytest.Config) -> int | None:
    """The run's seed: --axm-seed (a number, or 'last'), the controller's under xdist,
    --hypothesis-seed, or a fresh one; remembered in the cache for --axm-seed=last.

    None when none is given and the Hypothesis profile derandomizes (its ``ci`` profile, which
    Hypothesis loads when ``CI`` is set): each tool's seed is then derived from its key and its
    input schema, so that unchanged tools get the same inputs, and the same verdict, every run.
    """
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and SEED_INPUT in workerinput:
        given = workerinput[SEED_INPUT]
        return None if given is None else int(given)
    raw, where = read_setting(config, "axm_seed")
    cache = getattr(config, "cache", None)  # absent under -p no:cacheprovider
    if raw == "last":
        last = cache.get(_SEED_KEY, None) if cache is not None else None
        if not isinstance(last, int):
            raise pytest.UsageError(
                f"{where}: 'last' needs a previous run, and none is recorded in pytest's cache"
            )
        seed = last
    elif raw is not None:
        try:
            seed = int(raw)
        except ValueError:
            raise pytest.UsageError(f"{where}: {raw!r} is not a whole number or 'last'") from None
    else:
        hypothesis_seed = config.getoption("hypothesis_seed", None)
        if hypothesis_seed is not None:
            text = str(hypothesis_seed)
            seed = int(text) if text.isdigit() else zlib.crc32(text.encode())
        else:
            from hypothesis.errors import InvalidArgument

            try:
                drawn = run_seed(None, config.getoption("hypothesis_profile", None))
            except InvalidArgument:  # an unknown profile, which Hypothesis' own plugin reports
                drawn = new_seed()
            if drawn is None:
                return None
            seed = drawn
    if cache is not None:
        cache.set(_SEED_KEY, seed)
    return seed


def published_refs(rootdir: Path) -> tuple[list[str], str]:
    """Entry-point references of the distributions installed from ``rootdir``, and what was
    looked for (for the error when there are none)."""
    names = {_project_name(rootdir)} - {None}
    refs: list[str] = []
    found: list[str] = []
    groups = entry_point_groups()
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if name not in names and not _installed_from(distribution, rootdir):
            continue
        found.append(name)
        for entry_point in distribution.entry_points:
            if entry_point.group in groups:
                refs.append(f"{ENTRY_POINT_PREFIX}{entry_point.group}:{entry_point.name}")
    where = (
        f"distribution {', '.join(sorted(set(found)))} installed from {rootdir}"
        if found
        else f"any distribution installed from {rootdir} (none is installed)"
    )
    return sorted(set(refs)), f"entry points in the groups {', '.join(groups)} of {where}"


def _project_name(rootdir: Path) -> str | None:
    import tomllib

    try:
        project = tomllib.loads((rootdir / "pyproject.toml").read_text()).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    name = project.get("name")
    return name if isinstance(name, str) else None


def _installed_from(distribution: metadata.Distribution, rootdir: Path) -> bool:
    text = distribution.read_text("direct_url.json")
    if not text:
        return False
    try:
        url = json.loads(text).get("url", "")
    except json.JSONDecodeError:
        return False
    return (
        isinstance(url, str)
        and url.startswith("file://")
        and (Path(url[len("file://") :]).resolve() == rootdir.resolve())
    )


def baseline_of_run(config: pytest.Config, keys: list[str]) -> dict[tuple[str, str], KnownFailure]:
    """Known failures from --axm-baseline; an entry naming no tool or check is an error."""
    path, where = read_setting(config, "axm_baseline")
    if not path:
        return {}
    try:
        known = read_baseline(config.invocation_params.dir / path)
    except BaselineError as exc:
        raise pytest.UsageError(f"{where}: {exc}") from None
    for tool, check in known:
        if tool not in keys:
            raise pytest.UsageError(
                f"{where}: the baseline lists tool {tool!r}, which is not under test "
                f"(tools: {', '.join(keys)}); remove the entry"
            )
        if check not in CHECKS:
            raise pytest.UsageError(
                f"{where}: the baseline lists check {check!r}, which does not exist; "
                "remove the entry"
            )
    return known
