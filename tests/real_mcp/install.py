"""Install the real MCP servers of ``servers.toml`` under DEST, for ``tox -e mcp``.

Usage: ``python tests/real_mcp/install.py DEST``. Each pip server gets a virtual environment
``DEST/NAME``; the npm servers (and those certified over HTTP alone) share
``DEST/node_modules``, installed with ``npm`` where Node
exists (without it, says so, and their tests are skipped), except those pinned to an older SDK
(``npm_with``), each installed with its pins in ``DEST/NAME/node_modules`` of its own. A server
marked ``in_temporary`` is installed a second time the same way under ``TEMPORARY`` (in
``/tmp``, which the sandbox replaces with a private one: the test proves it is shown). The
fixture servers written with the TypeScript SDK (``sdk``) are copied beside the node_modules of
the pinned SDK they run on. The official conformance suite (``suite``) is installed in
``DEST/official-suite`` with the Node it needs. A git repository with one commit is made in
``DEST/git-repository``.
What is already installed is kept: a second run is offline.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

LISTED = tomllib.loads((Path(__file__).with_name("servers.toml")).read_text())
SERVERS, SDKS, OVER_HTTP = LISTED["server"], LISTED["sdk"], LISTED["http"]
SUITE = LISTED["suite"]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers"
# Where the servers marked in_temporary are installed again: in /tmp, hidden by every sandbox.
TEMPORARY = Path("/tmp/axm-conformance-real-mcp")


def main(dest: Path) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    node = bool(shutil.which("npm") and shutil.which("node"))
    shared = [
        server for server in [*SERVERS, *OVER_HTTP] if "npm" in server and "npm_with" not in server
    ]
    installs: list[Callable[[], None]] = []
    for server in SERVERS:
        for root in (dest, TEMPORARY) if server.get("in_temporary") else (dest,):
            if "pip" in server:
                installs.append(partial(install_pip, root / server["name"], server["pip"]))
            elif "npm_with" in server and node:
                packages = [own_package(server), *server["npm_with"]]
                installs.append(partial(install_npm, root / server["name"], packages))
    if node:
        installs.append(partial(install_npm, dest, [own_package(server) for server in shared]))
        suite = [own_package(SUITE), f"{SUITE['node']}@{SUITE['node_version']}"]
        installs.append(partial(install_npm, dest / "official-suite", suite))
    else:
        named = ", ".join(own_package(server) for server in shared)
        print(f"install.py: no Node (node and npm) on PATH: {named} are not installed")
    # Each installation has a folder of its own, and most of the time of each is the network's.
    with ThreadPoolExecutor(4) as pool:
        for done in [pool.submit(install) for install in installs]:
            done.result()
    if node:
        for sdk in SDKS:
            if sdk["script"].endswith(".mjs"):
                shutil.copyfile(FIXTURES / sdk["script"], dest / sdk["within"] / sdk["script"])
    make_repository(dest / "git-repository")
    return 0


def suite_command(dest: Path) -> list[str] | None:
    """How the official suite installed under ``dest`` runs (None where it is not)."""
    modules = dest / "official-suite" / "node_modules"
    node = modules / SUITE["node"] / "bin" / "node"
    script = modules / SUITE["npm"] / "dist" / "index.js"
    return [str(node), str(script)] if node.exists() and script.exists() else None


def own_package(server: dict[str, str]) -> str:
    return f"{server['npm']}@{server['version']}"


def install_npm(folder: Path, packages: list[str]) -> None:
    """``packages`` (NAME@VERSION) in ``folder/node_modules``, pinned together: an older server
    asks for its SDK with a range, which the SDK named beside it settles."""
    names = [package.rpartition("@")[0] for package in packages]
    if all((folder / "node_modules" / name).is_dir() for name in names):
        return
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true}\n')
    run_shown(["npm", "install", "--no-audit", "--no-fund", *packages], cwd=folder)


def install_pip(environment: Path, requirements: list[str]) -> None:
    """``requirements`` in a virtual environment of their own at ``environment``; one whose
    installation did not finish is made again."""
    finished = environment / ".installed"
    if finished.exists():
        return
    shutil.rmtree(environment, ignore_errors=True)
    python = environment / "bin" / "python"
    run_shown([sys.executable, "-m", "venv", str(environment)])
    run_shown([str(python), "-m", "pip", "install", "-q", *requirements])
    finished.touch()


def run_shown(command: list[str], cwd: Path | None = None) -> None:
    """Run ``command``; where it fails, once more (a CI machine's installs fail now and then for
    a reason of the moment: memory, the network), and where it fails again, stop with the
    command and what it printed, not a traceback of the thread that ran it."""
    for attempt in (1, 2):
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        if done.returncode == 0:
            return
        said = " ".join(command)
        print(f"install.py: {said} failed (exit {done.returncode}, attempt {attempt}):")
        print(done.stdout + done.stderr)
    raise SystemExit(f"install.py: could not run {' '.join(command)}; see above")


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
