"""Tests of tools built on the published runtimes (axio, amplifier-core, axm); Python 3.12+.

They run in the ``published`` tox environment (``tox -e published``), which installs those
packages. Where they are missing (the project's own Python 3.11 run) this folder is not
collected at all; each module also guards itself with ``pytest.importorskip``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PUBLISHED_FIXTURES = REPO / "fixtures" / "published"
PACKAGES = ("axio", "axio_tools_local", "amplifier_core", "axm")

if not all(importlib.util.find_spec(name) for name in PACKAGES):
    collect_ignore_glob = ["test_*.py"]


def child_env(**extra: str) -> dict[str, str]:
    """This environment for a child pytest: without the variables of this run's own pytest."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "AXM_SANDBOX_"))
    }
    env.update(extra)
    return env


def worker_user() -> str:
    """The unprivileged account tool code runs as (``AXM_PUBLISHED_USER``, default nobody)."""
    return os.environ.get("AXM_PUBLISHED_USER", "nobody")


def why_no_user_switch(user: str) -> str:
    """Why the kit cannot run this interpreter's workers as ``user``, or "" when it can."""
    import pwd

    if os.geteuid() != 0:
        return f"switching the worker to {user!r} needs root; this runs as uid {os.geteuid()}"
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return f"there is no user {user!r}"
    advice = (
        "make the environment from an interpreter that user can read: "
        "tests/published/portable_python.py, as .ci/run does"
    )
    try:
        probe = subprocess.run(
            [
                sys.executable,
                "-P",
                "-c",
                "import axm_conformance._process.parent._worker, axio_tools_local",
            ],
            user=entry.pw_uid,
            group=entry.pw_gid,
            extra_groups=[],
            cwd="/",
            env={"PATH": os.defpath, "PYTHONPATH": os.pathsep.join(sys.path)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except OSError as exc:
        return f"{user!r} cannot run {sys.executable} ({exc.strerror}); {advice}"
    if probe.returncode == 0:
        return ""
    last = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
    return (
        f"{user!r} cannot run {sys.executable} with this environment's packages ({last}); {advice}"
    )


@pytest.fixture
def published_fixtures(monkeypatch: pytest.MonkeyPatch) -> Path:
    """fixtures/published on sys.path (for check_tool) and PYTHONPATH (for pytest subprocesses)."""
    monkeypatch.syspath_prepend(str(PUBLISHED_FIXTURES))
    current = os.environ.get("PYTHONPATH")
    paths = [str(PUBLISHED_FIXTURES), *([current] if current else [])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    return PUBLISHED_FIXTURES


@pytest.fixture
def entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, published_fixtures: Path
) -> Callable[[dict[str, dict[str, str]]], Path]:
    """Publish fixtures/published tools in entry-point groups, through a throw-away dist-info."""

    def make(groups: dict[str, dict[str, str]]) -> Path:
        site = tmp_path / "site"
        info = site / "published_fixtures-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: published-fixtures\nVersion: 1.0\n"
        )
        lines = []
        for group, entries in groups.items():
            lines.append(f"[{group}]")
            lines.extend(f"{name} = {target}" for name, target in entries.items())
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
        monkeypatch.syspath_prepend(str(site))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ["PYTHONPATH"]]))
        return site

    return make
