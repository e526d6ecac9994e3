"""Shared fixtures of the project's own tests."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._checks import load_check_plugins
from axm_conformance._process.system import _platform, _sandbox, _trace

# The checks plugins register (the MCP protocol's), as every run of the kit registers them
# before it reads the registry: tests read it directly.
load_check_plugins()

REPO = Path(__file__).resolve().parents[1]
# The official JSON-Schema-Test-Suite, as the kit ships it (package data, with its licence): the
# tests that read it need nothing beside the repository.
SUITE = REPO / "src" / "axm_conformance" / "data" / "json-schema-test-suite"


@pytest.fixture
def make_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[str, dict[str, dict[str, str]], dict[str, str]], Path]:
    """Install a throw-away distribution with entry points and modules, visible on sys.path.

    ``entry_points`` maps a group to {name: "module:attr"}; ``modules`` maps a module file name to
    its source. importlib.metadata finds the ``.dist-info`` folder on sys.path.
    """
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name: str, entry_points: dict[str, dict[str, str]], modules: dict[str, str]) -> Path:
        info = tmp_path / f"{name.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        lines = []
        for group, entries in entry_points.items():
            lines.append(f"[{group}]")
            lines.extend(f"{key} = {value}" for key, value in entries.items())
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        for module, source in modules.items():
            (tmp_path / module).write_text(source)
        return tmp_path

    return make


FIXTURES = REPO / "fixtures"


@pytest.fixture
def fixtures_on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make the fixture tools importable in pytest subprocesses and their workers."""
    monkeypatch.setenv("PYTHONPATH", str(FIXTURES))
    return FIXTURES


# The ways the end-to-end layer certifies the zoo and the hostile tools: this platform's own, and
# the portable one (psutil, a polling file watch, spawned workers) that macOS takes.
WAYS = ("native", "portable")


@pytest.fixture
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The kit takes the way the test is parametrized with; its workers, and pytest runs in a
    subprocess, inherit it through the environment."""
    chosen: str = request.param
    if chosen == "portable":
        monkeypatch.setenv(_platform.PORTABLE_VARIABLE, "1")
    else:
        monkeypatch.delenv(_platform.PORTABLE_VARIABLE, raising=False)
    monkeypatch.setattr(_platform, "PLATFORM", _platform.detect())
    return chosen


def untraced() -> str:
    """Why a server's writes are not traced here ("" when they are): a sandbox, and strace in
    it."""
    return _sandbox.support() or _trace.support()


def unsupported(entry: dict[str, Any]) -> str | None:
    """Why a fixture cannot be held to its manifest entry here: what it ``needs`` (a flag of the
    platform record) that this platform lacks; None when nothing."""
    need = entry.get("needs")
    if need is None or getattr(_platform.PLATFORM, need):
        return None
    return f"not run: not supported on {_platform.PLATFORM.system} ({need})"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The detection table of the fixture zoo: expected, found, missed and extra per protocol."""
    rows: dict[str, list[int]] = {}
    for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get(
        "failed", []
    ):
        for name, value in getattr(report, "user_properties", ()):
            if name != "zoo" or report.when != "call":
                continue
            protocol, expected, found = value
            row = rows.setdefault(protocol, [0, 0, 0, 0, 0])
            row[0] += 1
            row[1] += len(expected)
            row[2] += len(set(expected) & set(found))
            row[3] += len(set(expected) - set(found))
            row[4] += len(set(found) - set(expected))
    if not rows:
        return
    terminalreporter.section("fixture zoo: detection table")
    terminalreporter.write_line(
        f"{'protocol':<10} {'tools':>5} {'expected':>8} {'found':>5} {'missed':>6} {'extra':>5}"
    )
    for protocol, (tools, expected, found, missed, extra) in sorted(rows.items()):
        terminalreporter.write_line(
            f"{protocol:<10} {tools:>5} {expected:>8} {found:>5} {missed:>6} {extra:>5}"
        )


def skip_unless_nobody() -> None:
    """Skip a test that runs a worker as the user nobody, where it cannot."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("running the worker as another user needs root")
    import pwd

    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user named nobody")
