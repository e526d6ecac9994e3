"""Install the real MCP servers of ``servers.toml`` under DEST, for ``tox -e mcp``.

Usage: ``python tests/real_mcp/install.py DEST``. Each pip server gets a virtual environment
``DEST/NAME``; the npm servers share ``DEST/node_modules``, installed with ``npm`` where Node
exists (without it, says so, and their tests are skipped). A git repository with one commit is
made in ``DEST/git-repository``. What is already installed is kept: a second run is offline.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

SERVERS = tomllib.loads((Path(__file__).with_name("servers.toml")).read_text())["server"]


def main(dest: Path) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    for server in SERVERS:
        if "pip" in server:
            install_pip(dest / server["name"], server["pip"])
    packages = [server["npm"] for server in SERVERS if "npm" in server]
    npm = [f"{server['npm']}@{server['version']}" for server in SERVERS if "npm" in server]
    if shutil.which("npm") and shutil.which("node"):
        if not all((dest / "node_modules" / package).is_dir() for package in packages):
            (dest / "package.json").write_text('{"private": true}\n')
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", *npm], cwd=dest, check=True
            )
    else:
        print(f"install.py: no Node (node and npm) on PATH: {', '.join(npm)} are not installed")
    make_repository(dest / "git-repository")
    return 0


def install_pip(environment: Path, requirements: list[str]) -> None:
    python = environment / "bin" / "python"
    if python.exists():
        return
    venv.create(environment, with_pip=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)


def make_repository(path: Path) -> None:
    if (path / ".git").is_dir():
        return
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text("A repository for mcp-server-git to read.\n")
    git = ["git", "-c", "user.name=kit", "-c", "user.email=kit@example.com"]
    for command in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, *command], cwd=path, check=True)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
