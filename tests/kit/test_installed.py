"""Servers installed in a private temporary directory (``/tmp``, ``/var/tmp``) run in the sandbox
with their whole installation shown: a virtual environment, an npm install's ``node_modules``
and the links on the way. Each is certified with the verdicts it gets run from elsewhere."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from axm_conformance import check_tool
from axm_conformance._process.system import _sandbox
from axm_conformance._process.system._installed import installation
from tests.conftest import FIXTURES

SERVERS = FIXTURES / "mcp_servers"
PRIVATE = ("/tmp", "/var/tmp")

needs_sandbox = pytest.mark.skipif(
    bool(_sandbox.support()), reason=f"no sandbox here: {_sandbox.support()}"
)
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")


@pytest.fixture(params=PRIVATE)
def private_dir(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A fresh folder in each private temporary directory, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="axm-installed-", dir=request.param))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def make_venv(root: Path) -> Path:
    """A virtual environment at ``root`` holding word_server as an installed module with a
    console script, as pip installs one: the script's shebang names the venv's interpreter,
    and the module lies in its site-packages (what it imports comes through a .pth file)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = Path(
        subprocess.run(
            [
                str(root / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_path('purelib'))",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    shutil.copy(SERVERS / "word_server.py", site / "installed_word_server.py")
    (site / "kit-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    script = root / "bin" / "word-server"
    script.write_text(
        f"#!{root / 'bin' / 'python'}\nfrom installed_word_server import main\nmain()\n"
    )
    script.chmod(0o755)
    return script


def make_npm_install(root: Path) -> Path:
    """The node fixture server laid out as ``npm install`` lays it out under ``root``: the
    package in node_modules, its dependency beside it, and the command a link in
    node_modules/.bin."""
    modules = root / "node_modules"
    package = modules / "node-word-server"
    shutil.copytree(SERVERS / "node_server", package, ignore=shutil.ignore_patterns("word-casing"))
    shutil.copytree(SERVERS / "node_server" / "word-casing", modules / "word-casing")
    (root / "package.json").write_text('{"dependencies": {"node-word-server": "1.0.0"}}\n')
    (modules / ".bin").mkdir()
    link = modules / ".bin" / "node-word-server"
    link.symlink_to("../node-word-server/index.js")
    (package / "index.js").chmod(0o755)
    return link


def verdicts(report: Any) -> dict[str, tuple[str, list[str]]]:
    return {
        tool.subject.name: (tool.verdict.verdict, sorted(o.check_id for o in tool.failed))
        for tool in report.tools
    }


# What is shown -----------------------------------------------------------------------------------


def test_a_console_script_brings_its_virtual_environment(tmp_path: Path) -> None:
    script = make_venv(tmp_path / "venv")
    shown = installation([str(script)], PRIVATE)
    assert shown.paths == [str(tmp_path / "venv")]
    assert shown.links == []


def test_a_link_in_node_modules_bin_brings_the_node_modules_it_resolves_from(
    tmp_path: Path,
) -> None:
    link = make_npm_install(tmp_path)
    shown = installation([str(link)], PRIVATE)
    # The link lies in the node_modules shown: a link still, not made again.
    assert shown.paths == [str(tmp_path / "node_modules"), str(tmp_path / "package.json")]
    assert shown.links == []


def test_a_link_outside_what_is_shown_is_made_again_and_its_target_shown(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "run").symlink_to("../app/run.sh")
    shown = installation([str(tmp_path / "bin" / "run")], PRIVATE)
    assert shown.paths == [str(app / "run.sh")]
    assert shown.links == [(str(tmp_path / "bin" / "run"), "../app/run.sh")]


def test_paths_outside_the_private_directories_bring_nothing() -> None:
    assert installation([sys.executable, "/usr/lib", "relative/path"], PRIVATE).paths == []


def test_a_path_entry_in_a_virtual_environment_brings_it(tmp_path: Path) -> None:
    make_venv(tmp_path / "venv")
    read = _sandbox.read_by(["word-server"], {"PATH": f"{tmp_path / 'venv' / 'bin'}:/usr/bin"})
    assert installation(read, PRIVATE).paths == [str(tmp_path / "venv")]


# Certified in the sandbox ------------------------------------------------------------------------


@needs_sandbox
def test_a_server_that_needs_what_the_sandbox_hides_is_not_judged_and_told_how(
    private_dir: Path,
) -> None:
    config = private_dir / "config.json"
    config.write_text("{}")
    # The path lies inside a shell's command, where the sandbox does not look for what to show.
    command = f"cat {config} >/dev/null && exec {sys.executable} {SERVERS / 'word_server.py'}"
    ref = "mcp:" + shlex.join(["sh", "-c", command])
    [server] = check_tool(ref, examples=5, seed=1, timeout=2.0).tools
    assert server.verdict.verdict == "inconclusive"
    [handshake] = [o for o in server.outcomes if o.check_id == "server-handshake"]
    assert handshake.not_run
    [said] = handshake.messages
    assert str(config) in said
    assert "--axm-sandbox=off" in said
    # Where the path exists nowhere, the server's failure is its own.
    config.unlink()
    [server] = check_tool(ref, examples=5, seed=1, timeout=2.0).tools
    assert [o.check_id for o in server.failed] == ["server-handshake"]


@needs_sandbox
@pytest.mark.slow
def test_a_server_in_a_virtual_environment_in_a_private_directory_is_certified(
    private_dir: Path,
) -> None:
    script = make_venv(private_dir / "venv")
    elsewhere = check_tool(
        "mcp:" + shlex.join([sys.executable, str(SERVERS / "word_server.py")]),
        examples=10,
        seed=1,
        timeout=2.0,
    )
    installed = check_tool(f"mcp:{shlex.quote(str(script))}", examples=10, seed=1, timeout=2.0)
    assert verdicts(installed) == verdicts(elsewhere)
    assert all(verdict == "certified" for verdict, _ in verdicts(installed).values())


@needs_sandbox
@needs_node
@pytest.mark.slow
def test_a_server_installed_by_npm_in_a_private_directory_is_certified(private_dir: Path) -> None:
    outside = Path(tempfile.mkdtemp(prefix="axm-installed-", dir=os.path.expanduser("~")))
    try:
        elsewhere = check_tool(
            f"mcp:{shlex.quote(str(make_npm_install(outside)))}", examples=10, seed=1, timeout=2.0
        )
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    link = make_npm_install(private_dir)
    installed = check_tool(f"mcp:{shlex.quote(str(link))}", examples=10, seed=1, timeout=2.0)
    assert verdicts(installed) == verdicts(elsewhere)
    assert verdicts(installed)["shout"][0] == "certified"
