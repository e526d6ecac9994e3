"""The official MCP conformance suite (``@modelcontextprotocol/conformance server --url``, pinned
in servers.toml and installed from npm with the Node it needs) beside the kit.

The suite passes the kit's scenario server (``fixtures/mcp_servers/conformance_server.py``): every
scenario of its active suite, and the JSON Schema 2020-12 one. Against the kit's own HTTP
front-end (``http_server.py``), correct and with each of its defects in the era the suite speaks
(2025-11-25), it runs the scenarios that need no tool of its own; the table of
``conformance/official-suite.md`` is what each reported, and the kit misses nothing the suite
finds there.

Run by ``tox -e mcp``; without AXM_MCP_SERVERS, or without Node, every test here is skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from axm_conformance.protocols.mcp._http import free_port
from tests.kit.test_mcp_servers import MANIFEST, SERVERS
from tests.real_mcp.install import SUITE, suite_command

INSTALLED = os.environ.get("AXM_MCP_SERVERS", "")
TABLE = Path(__file__).resolve().parents[2] / "conformance" / "official-suite.md"
# The suite's scenarios that ask nothing of a server but the transport and the lifecycle: those
# it can run against a server with tools of its own.
TRANSPORT_SCENARIOS = (
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
)
# The suite's client speaks 2025-11-25: the front-end's entries of that era.
FRONT_ENDS = [
    entry
    for entry in MANIFEST
    if entry["script"] == "http_server.py" and entry["args"][:2] == ["--era", "legacy"]
]


def _suite() -> list[str]:
    if not INSTALLED:
        pytest.skip("the official suite is installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    command = suite_command(Path(INSTALLED))
    if command is None:
        pytest.skip(f"{SUITE['npm']} is not installed (no Node)")
    return command


@contextlib.contextmanager
def _serving(script: str, args: list[str]) -> Iterator[str]:
    """The URL of a fixture server of the kit's, started on a free loopback port (the kit's own
    code: it runs outside a sandbox, where the suite can reach it), until it is stopped."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / script), *args, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                urllib.request.urlopen(url, timeout=5)
                break
            except urllib.error.HTTPError:
                break  # it answers: 405 to a GET, or 400
            except OSError:
                assert process.poll() is None, f"{script} exited ({process.returncode})"
                assert time.monotonic() < deadline, f"{script} never answered at {url}"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def reported(url: str, scenario: str | None, folder: Path) -> dict[str, list[str]]:
    """What the suite reported, by scenario: the id and status of each check that did not
    succeed (empty for a scenario that passed)."""
    scenarios = ["--scenario", scenario] if scenario else []
    folder.mkdir(parents=True)
    subprocess.run(
        [*_suite(), "server", "--url", url, *scenarios, "--output-dir", "results"],
        cwd=folder,
        capture_output=True,
        timeout=600,
        check=False,
    )
    found: dict[str, list[str]] = {}
    for checks in sorted((folder / "results").glob("server-*/checks.json")):
        name = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", checks.parent.name)
        found.setdefault(name, [])
        for item in json.loads(checks.read_text()):
            if item["status"] in ("FAILURE", "WARNING"):
                found[name].append(f"{item['id']} {item['status']}")
    return found


@pytest.mark.slow
def test_the_official_suite_passes_the_kits_scenario_server(tmp_path: Path) -> None:
    _suite()
    with _serving("conformance_server.py", []) as url:
        active = reported(url, None, tmp_path / "active")
        schema = reported(url, "json-schema-2020-12", tmp_path / "schema")
        # A scenario the whole run failed counts where it fails again alone: with the machine
        # busy, tools-call-sampling once ran into the suite's own 60 s request timeout
        # ("MCP error -32001: Request timed out") and passed when asked alone.
        again = {
            name: reported(url, name, tmp_path / f"again-{name}").get(name, found)
            for name, found in active.items()
            if found
        }
    assert len(active) >= 30, sorted(active)
    assert not [(name, found) for name, found in {**again, **schema}.items() if found]


def _kit(entry: dict[str, Any]) -> str:
    server = [*entry.get("fails", {}).get("SERVER", []), *entry.get("warns", {}).get("SERVER", [])]
    return ", ".join(f"`{check}`" for check in sorted(server)) or "certified"


def _row(entry: dict[str, Any], found: dict[str, list[str]]) -> str:
    said = "; ".join(
        f"{name}: {', '.join(f'`{check}`' for check in checks)}"
        for name, checks in found.items()
        if checks
    )
    variant = " ".join(entry["args"][2:]) or "(correct)"
    return f"| `{variant}` | {said or 'passes'} | {_kit(entry)} |"


@pytest.mark.slow
def test_what_the_suite_finds_in_the_kits_front_end_the_kit_finds_too(tmp_path: Path) -> None:
    _suite()
    rows, missed = [], []
    for index, entry in enumerate(FRONT_ENDS):
        with _serving(entry["script"], entry["args"]) as url, ThreadPoolExecutor(5) as pool:
            found: dict[str, list[str]] = {}
            folders = [tmp_path / f"{index}-{scenario}" for scenario in TRANSPORT_SCENARIOS]
            for each in pool.map(reported, [url] * len(folders), TRANSPORT_SCENARIOS, folders):
                found.update(each)
        rows.append(_row(entry, found))
        if any(found.values()) and _kit(entry) == "certified":
            missed.append(rows[-1])
    assert not missed, "the suite finds what the kit does not:\n" + "\n".join(missed)
    text = TABLE.read_text()
    written = [line for line in text.splitlines() if line.startswith("| `")]
    assert written == rows, "\n".join(rows)
