"""Known quirks of the published packages do not break a certification run.

- amplifier-core registers a pytest plugin (``amplifier_module``) that imports pytest_asyncio
  without declaring it: without pytest-asyncio every pytest run stops at start-up, and
  ``-p no:amplifier_module`` is the way out.
- axm-config registers a pytest plugin (``axm_config``) that sets ``AXM_SANDBOX_*`` and removes
  ``AXM_PROFILE`` in ``os.environ`` for the whole session; ``-p no:axm_config`` turns it off,
  and the kit's workers never see those variables either way.
- published axio's semaphore binds to the first event loop that waits on it: the kit reports it
  (concurrency-limit), and the run goes on.

The flags are the names the plugins register under ``pytest11``, read here from the installed
metadata and documented on conformance/published-runtimes.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.published.conftest import child_env

pytest.importorskip("amplifier_core")
pytest.importorskip("axm_config")

PAGE = Path(__file__).resolve().parents[2] / "conformance" / "published-runtimes.md"
PLUGINS = {
    "amplifier_module": ("amplifier-core", "amplifier_core.pytest_plugin"),
    "axm_config": ("axm-config", "axm_config.pytest_plugin"),
    "asyncio": ("pytest-asyncio", "pytest_asyncio.plugin"),
}


def pytest_run(
    directory: Path, *args: str, pythonpath: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = child_env()
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([*pythonpath, env.get("PYTHONPATH", "")])
    (directory / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_plugins_are_registered_under_the_documented_names() -> None:
    registered = {
        ep.name: (ep.dist.name if ep.dist else "", ep.value)
        for ep in metadata.entry_points(group="pytest11")
    }
    for name, (distribution, module) in PLUGINS.items():
        assert registered.get(name) == (distribution, module), registered
    page = PAGE.read_text(encoding="utf-8")
    for name in ("amplifier_module", "axm_config"):
        assert f"-p no:{name}" in page, f"document -p no:{name} on {PAGE.name}"


@pytest.mark.slow
def test_without_pytest_asyncio_only_disabling_amplifier_module_lets_the_kit_run(
    tmp_path: Path, published_fixtures: Path
) -> None:
    """pytest-asyncio is simulated away: a stand-in package that cannot be imported."""
    shadow = tmp_path / "shadow" / "pytest_asyncio"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pytest_asyncio'\", name='pytest_asyncio')\n"
    )
    (shadow / "plugin.py").write_text("")
    project = tmp_path / "project"
    project.mkdir()
    kit = ["--axm-conformance", "--axm-tool=pub_amplifier:WordCountTool", "--axm-examples=5"]
    # "-p no:asyncio": pytest-asyncio's own plugin, which would not be installed either.
    paths = [str(tmp_path / "shadow"), str(published_fixtures)]
    broken = pytest_run(project, "-p", "no:asyncio", *kit, pythonpath=paths)
    assert broken.returncode == pytest.ExitCode.INTERNAL_ERROR, broken.stdout + broken.stderr
    assert "pytest_asyncio" in broken.stdout + broken.stderr
    fixed = pytest_run(
        project, "-p", "no:asyncio", "-p", "no:amplifier_module", *kit, pythonpath=paths
    )
    assert fixed.returncode == pytest.ExitCode.OK, fixed.stdout + fixed.stderr
    assert "amp_word_count (amplifier): certified" in fixed.stdout


@pytest.mark.slow
def test_axm_config_changes_the_environment_until_disabled(tmp_path: Path) -> None:
    (tmp_path / "test_env.py").write_text(
        "import os\n\n"
        "def test_env():\n"
        "    print('SANDBOX=' + os.environ.get('AXM_SANDBOX_ROOT', '<unset>'))\n"
    )
    env = child_env()
    on = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "-q", "test_env.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    off = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:axm_config",
         "-s", "-q", "test_env.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert on.returncode == 0 and off.returncode == 0, on.stdout + off.stdout
    assert "SANDBOX=/" in on.stdout, on.stdout
    assert "SANDBOX=<unset>" in off.stdout, off.stdout


@pytest.mark.slow
@pytest.mark.parametrize("flags", [(), ("-p", "no:axm_config")], ids=["axm_config on", "off"])
def test_the_kit_runs_with_axm_config_on_or_off(
    tmp_path: Path, published_fixtures: Path, flags: tuple[str, ...]
) -> None:
    result = pytest_run(
        tmp_path, *flags, "--axm-conformance", "--axm-tool=pub_axm:WordCountTool",
        "--axm-examples=5",
    )  # fmt: skip
    assert result.returncode == pytest.ExitCode.OK, result.stdout + result.stderr
    assert "axm_word_count (axm): certified" in result.stdout


@pytest.mark.slow
def test_the_axio_semaphore_quirk_is_a_verdict_not_a_broken_run(
    tmp_path: Path, published_fixtures: Path
) -> None:
    result = pytest_run(
        tmp_path, "--axm-conformance", "--axm-tool=pub_axio:word_count_limited",
        "--axm-examples=5", "--axm-check=concurrency-limit",
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "INTERNALERROR" not in output
    assert "bound to a different event loop" in result.stdout
    assert "1 failed" in result.stdout
