"""Real MCP servers, from PyPI and npm, certified end to end: each runs to a verdict with no kit
error, and the verdict of every subject is the one ``servers.toml`` gives (and
``conformance/mcp-servers.md`` explains, finding by finding).

Run by ``tox -e mcp``, which installs the servers (``install.py``) and sets AXM_MCP_SERVERS to
where; without it every test here is skipped, saying so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from axm_conformance import check_tool
from axm_conformance._checks import checks_for
from axm_conformance._clients import CLIENTS
from axm_conformance._process.system import _sandbox
from tests.clients_table import rows, written
from tests.conftest import untraced
from tests.kit.test_fixture_zoo import SEEDS
from tests.real_mcp.install import FIXTURES, OVER_HTTP, SDKS, SERVERS, TEMPORARY

HERE = Path(__file__).resolve().parent
INSTALLED = os.environ.get("AXM_MCP_SERVERS", "")
CLIENT_CHECKS = tuple(f"portable-to-{client}" for client in CLIENTS)


def command(server: dict[str, Any], root: Path) -> str:
    own = "npm_with" in server  # an npm server in a folder of its own, with its pins
    return server["command"].format(
        bin=root / server["name"] / "bin",
        node_modules=root / server["name"] / "node_modules" if own else root / "node_modules",
    )


def installed(server: dict[str, Any], root: Path) -> Path:
    """Where the server's package is, which exists once it is installed."""
    if "pip" in server:
        return root / server["name"]
    if "npm_with" in server:
        return root / server["name"] / "node_modules" / server["npm"]
    return root / "node_modules" / server.get("npm", "")


def certified(server: dict[str, Any], root: Path, files: str | None) -> dict[str, Any]:
    """The verdict of each subject, its findings and its calls, as the test compares them."""
    report = check_tool(
        f"mcp:{command(server, root)}",
        examples=30,
        seed=1,
        worker_files=files,
        **server.get("options", {}),
    )
    found, findings, tool_calls = {}, {}, {}
    for tool in report.tools:
        key = "SERVER" if tool.subject.kind == "server" else str(tool.subject.name)
        verdict = tool.verdict.verdict
        # A leaves-no-trace warning can come from another process writing into the project
        # while a call runs (an editor, a build): it is not the server's.
        warned = [
            outcome.check_id
            for outcome in tool.outcomes
            if outcome.status == "warning" and outcome.check_id != "leaves-no-trace"
        ]
        found[key] = f"{verdict} with warnings" if verdict == "certified" and warned else verdict
        findings[key] = [o.check_id for o in tool.failed] + warned
        tool_calls[key] = tool.calls
    versions = {tool.subject.protocol_version for tool in report.tools}
    return {"verdicts": found, "findings": findings, "calls": tool_calls, "versions": versions}


def allowed(expected: str | list[str]) -> list[str]:
    """The verdicts a tool may come to: one, or (for a finding that depends on the clock of
    what the server writes) each listed."""
    return [expected] if isinstance(expected, str) else expected


@pytest.mark.slow
@pytest.mark.parametrize("server", SERVERS, ids=[server["name"] for server in SERVERS])
def test_a_real_server_runs_to_the_verdicts_listed(server: dict[str, Any]) -> None:
    if not INSTALLED:
        pytest.skip("the real servers are installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    root = Path(INSTALLED)
    if not installed(server, root).exists():
        pytest.skip(f"{server['name']} is not installed (for npm servers: no Node)")
    if server.get("every_run_only") and os.environ.get("AXM_TEST_EVERY_RUN") != "1":
        pytest.skip(f"{server['name']} takes ten minutes of a core: AXM_TEST_EVERY_RUN=1 runs it")
    files = str(root / server["worker_files"]) if "worker_files" in server else None
    assert_listed(server, certified(server, root, files))


def assert_listed(server: dict[str, Any], seen: dict[str, Any]) -> None:
    """The server came to the verdicts servers.toml lists, in the version it lists."""
    found, expected = seen["verdicts"], server.get("verdicts", {})
    others = expected.get("*", "certified")  # the tools not named
    wrong = {
        key: (verdict, seen["findings"][key], seen["calls"][key])
        for key, verdict in found.items()
        if verdict not in allowed(expected.get(key, "certified" if key == "SERVER" else others))
    }
    assert "SERVER" in found and len(found) > 1, found
    assert not wrong, f"{server['name']}: verdicts {wrong}, expected {expected}"
    # Every subject was spoken to in the version the server picks, which servers.toml gives.
    assert seen["versions"] == {server["speaks"]}


def sdk_command(sdk: dict[str, Any], root: Path) -> tuple[Path, str]:
    """What runs the fixture server on its pinned SDK, which exists once it is installed, and
    its start command: a Python script run by the interpreter of the SDK's environment, a Node
    one copied beside the SDK's node_modules."""
    if sdk["script"].endswith(".py"):
        python = root / sdk["within"] / "bin" / "python"
        return python, f"{python} {FIXTURES / sdk['script']}"
    script = root / sdk["within"] / sdk["script"]
    return script, f"node {script}"


# Each release certifies the fixture correct at one of the zoo's seeds and defective at the next:
# the seeds turn over the releases, so each is met, correct and defective, by several releases
# (what a seed changes is the fixture's inputs, held at every seed over stdio in the MCP fixture
# tests; what a release changes is its answers, held here).
SDK_RUNS = [
    (sdk, defective, SEEDS[(index + defective) % len(SEEDS)])
    for index, sdk in enumerate(SDKS)
    for defective in (False, True)
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sdk", "defective", "seed"),
    SDK_RUNS,
    ids=[
        f"{sdk['script'].partition('.')[0]}-{sdk['speaks']}-"
        f"{'defective' if defective else 'correct'}-{seed}"
        for sdk, defective, seed in SDK_RUNS
    ],
)
def test_a_fixture_server_on_a_pinned_sdk_fails_exactly_what_its_version_lets_it_break(
    sdk: dict[str, Any], defective: bool, seed: int
) -> None:
    """The same server, written with an official SDK, under the SDK's releases of each
    version: correct, it is certified in every one; defective, each tool fails exactly the
    checks of the defects its version lets it have."""
    if not INSTALLED:
        pytest.skip("the SDKs are installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    root = Path(INSTALLED)
    runner, command = sdk_command(sdk, root)
    if not runner.exists():
        pytest.skip(f"{sdk['within']} is not installed (for npm servers: no Node)")
    flag = " --defect" if defective else ""
    report = check_tool(f"mcp:{command}{flag}", examples=15, seed=seed)
    expected_fails = sdk["defective_fails"] if defective else {}
    fails, warns = {}, {}
    for tool in report.tools:
        key = "SERVER" if tool.subject.kind == "server" else str(tool.subject.name)
        fails[key] = sorted(outcome.check_id for outcome in tool.failed)
        warns[key] = sorted(
            outcome.check_id
            for outcome in tool.outcomes
            if outcome.status == "warning" and outcome.check_id != "leaves-no-trace"
        )
    assert sorted(fails) == ["SERVER", "add_note", "word_stats"], fails
    assert fails == {key: sorted(expected_fails.get(key, [])) for key in fails}
    assert warns == {key: sorted(sdk.get("warns", {}).get(key, [])) for key in warns}
    assert {tool.subject.protocol_version for tool in report.tools} == {sdk["speaks"]}


@pytest.mark.slow
@pytest.mark.parametrize("server", OVER_HTTP, ids=[server["name"] for server in OVER_HTTP])
def test_a_real_server_over_http_fails_and_warns_exactly_the_server_checks_listed(
    server: dict[str, Any],
) -> None:
    """Started by the kit over HTTP, the server as a whole (the transport's own checks among
    its checks) fails and warns exactly as listed, in the version listed."""
    if not INSTALLED:
        pytest.skip("the real servers are installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    if _sandbox.support():
        pytest.skip(f"a server over HTTP is certified in a sandbox: {_sandbox.support()}")
    root = Path(INSTALLED)
    within = root / server.get("within", "")
    installed = root / "node_modules" / server.get("npm", "")
    if not (within / "bin" if "within" in server else installed).exists():
        pytest.skip(f"{server['name']} is not installed (for npm servers: no Node)")
    command = server["command"].format(
        bin=within / "bin",
        fixtures=FIXTURES,
        node_modules=root / "node_modules",
        port="{port}",
        issuer="{issuer}",
    )
    report = check_tool(
        f"mcp-http:{command}",
        examples=5,
        seed=1,
        timeout=15.0,
        checks=tuple(check.id for check in checks_for("server")),
        server_env=tuple(server.get("env", {}).items()),
        http_path=server.get("http_path", "/mcp"),
        auth="local" if server.get("auth") else "off",
    )
    (whole,) = [tool for tool in report.tools if tool.subject.kind == "server"]
    assert whole.subject.protocol_version == server["speaks"]
    assert sorted(outcome.check_id for outcome in whole.failed) == sorted(server.get("fails", []))
    warned = [outcome.check_id for outcome in whole.outcomes if outcome.status == "warning"]
    assert sorted(warned) == sorted(server.get("warns", []))


IN_TEMPORARY = [server for server in SERVERS if server.get("in_temporary")]


@pytest.mark.slow
@pytest.mark.parametrize("server", IN_TEMPORARY, ids=[server["name"] for server in IN_TEMPORARY])
def test_a_real_server_installed_in_tmp_gets_the_verdicts_it_gets_elsewhere(
    server: dict[str, Any],
) -> None:
    """The same server installed a second time in /tmp (a virtual environment, an npm install),
    which the sandbox hides behind a private /tmp and shows again with the installation: the
    verdicts listed, which test_a_real_server_runs_to_the_verdicts_listed holds elsewhere."""
    if not INSTALLED:
        pytest.skip("the real servers are installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    if not installed(server, TEMPORARY).exists():
        pytest.skip(f"{server['name']} is not installed (for npm servers: no Node)")
    assert_listed(server, certified(server, TEMPORARY, None))


@pytest.mark.slow
def test_the_portability_table_of_the_real_servers_is_the_one_written() -> None:
    """conformance/clients.md gives, per tool of every server installed, the first rule each
    client profile finds it breaking, as the kit computes it from the tools' listings."""
    if not INSTALLED:
        pytest.skip("the real servers are installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    root = Path(INSTALLED)
    computed: list[str] = []
    listed: set[str] = set()
    for server in SERVERS:
        if not installed(server, root).exists():
            continue
        listed.add(server["name"])
        report = check_tool(
            f"mcp:{command(server, root)}",
            checks=CLIENT_CHECKS,
            worker_files=str(root / server["worker_files"]) if "worker_files" in server else None,
            **server.get("options", {}),
        )
        computed += rows(server["name"], [report])
    assert computed == written("Real MCP servers", listed), "\n".join(computed)


@pytest.mark.slow
def test_the_memory_server_in_its_default_setup_is_named_writing_beside_its_own_code() -> None:
    """Without MEMORY_FILE_PATH the npm memory server keeps its graph in its own package: every
    tool that saves the graph tries to write there, which the sandbox refuses and its trace
    names; the tools that only read pass, and the package is left as it was."""
    if not INSTALLED:
        pytest.skip("the real servers are installed by tox -e mcp (AXM_MCP_SERVERS is unset)")
    if untraced():
        pytest.skip(f"a server's writes are traced in a sandbox only: {untraced()}")
    (server,) = [server for server in SERVERS if server["name"] == "server-memory"]
    package = Path(INSTALLED) / "node_modules" / server["npm"]
    if not package.exists():
        pytest.skip("server-memory is not installed (no Node)")
    before = sorted(package.rglob("*"))
    report = check_tool(
        f"mcp:{command(server, Path(INSTALLED))}",
        checks=("writes-confined", "server-writes-confined"),
        examples=5,
        seed=1,
    )
    named = {
        str(tool.subject.name): [str(finding) for o in tool.failed for finding in o.findings]
        for tool in report.tools
        if tool.subject.kind == "tool"
    }
    saving = {name for name, found in named.items() if found}
    assert saving == {
        "create_entities", "create_relations", "add_observations",
        "delete_entities", "delete_observations", "delete_relations",
    }, named  # fmt: skip
    store = str(package / "dist" / "memory.jsonl")
    assert all(store in found[0] for name, found in named.items() if name in saving), named
    assert sorted(package.rglob("*")) == before
