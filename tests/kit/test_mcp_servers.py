"""The kit on every fixture MCP server: each subject (SERVER, each tool) must fail exactly the
checks ``fixtures/mcp_servers/manifest.toml`` lists, and warn on exactly those it lists.

Every check the kit runs on MCP servers has a defective server here that fails it and only it
(one defect, behind ``--defect``), and the correct servers (one written against the wire in both
protocol versions, two written with the official SDK) fail nothing.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shlex
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import chdir
from pathlib import Path
from typing import Any

import pytest

from axm_conformance import check_tool
from axm_conformance._certificate import spoken
from axm_conformance._checks import checks_for
from axm_conformance._process.system import _sandbox
from axm_conformance.protocols.base import LoadOptions
from axm_conformance.protocols.mcp import McpProtocol
from axm_conformance.protocols.mcp._http import free_port
from axm_conformance.protocols.mcp._server import Connection
from axm_conformance.protocols.mcp._versions import CURRENT, VERSIONS
from tests.conftest import FIXTURES, untraced
from tests.kit.test_fixture_zoo import EVERY_RUN, SEEDS

SERVERS = FIXTURES / "mcp_servers"
MANIFEST: list[dict[str, Any]] = tomllib.loads((SERVERS / "manifest.toml").read_text())["server"]


def ref(entry: dict[str, Any]) -> str:
    """How the kit starts an entry's server: over stdio, or over HTTP (``http``) on the port
    the kit picks, told where its authorization server is when the kit runs one (``auth``)."""
    command = [sys.executable, str(SERVERS / entry["script"]), *entry.get("args", [])]
    if entry.get("http"):
        issuer = ["--issuer", "{issuer}"] if entry.get("auth") else []
        return "mcp-http:" + shlex.join([*command, "--http", "{port}", *issuer])
    return "mcp:" + shlex.join(command)


def entry_id(entry: dict[str, Any]) -> str:
    served = ["--http", *(["--issuer"] if entry.get("auth") else [])] if entry.get("http") else []
    return " ".join([entry["script"], *served, *entry.get("args", [])])


# Checks that apply to MCP servers yet have no defective fixture server here, and why.
UNPROVEN_HERE = {
    "protocol-shape": "a tool a server lists always has the shape: its definition",
    "leaves-no-trace": "a server works in its throw-away directory, outside the watched project",
}


def test_every_check_of_an_mcp_server_has_a_fixture_that_fails_or_warns_on_it() -> None:
    """A check the kit runs on MCP servers is proven by a defective server it catches."""
    proven = {
        check
        for entry in MANIFEST
        for found in (entry.get("fails", {}), entry.get("warns", {}))
        for checks in found.values()
        for check in checks
    }
    offered = McpProtocol.capabilities
    applies = {
        check.id
        for kind in ("tool", "server")
        for check in checks_for(kind)
        if set(check.requires) <= offered and check.opt_out != "nondeterministic"
    }
    assert applies - proven == set(UNPROVEN_HERE)


@pytest.mark.slow
def test_a_server_gets_path_lang_home_and_what_the_run_adds_from_the_ini(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ini names the server (``axm_tools``) and adds to its environment (``axm_server_env``);
    nothing else of the kit's environment reaches it."""
    monkeypatch.setenv("KIT_SECRET", "do not leak")
    monkeypatch.setenv("LANG", "C.UTF-8")
    command = shlex.join([sys.executable, str(SERVERS / "word_server.py"), "--name-with-env"])
    pytester.makeini(
        f"[pytest]\naxm_tools =\n    mcp:{command}\naxm_server_env =\n    GREETING=hello world\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--axm-conformance", "--axm-examples=5", "--axm-report=cert.json"
    )
    assert result.ret == 0, result.stdout.str()
    tools = json.loads((pytester.path / "cert.json").read_text())["tools"]
    server = next(tool for tool in tools if tool["key"] == "SERVER")
    assert server["name"] == "word-server[GREETING,HOME,LANG,PATH,TMPDIR]"
    assert {tool["key"] for tool in tools} >= {"SERVER", "word_count", "set_mode"}


def test_a_server_env_line_that_is_not_an_assignment_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--axm-conformance",
        "--axm-tool=mcp:true",
        "--axm-server-env=NOPE",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--axm-server-env: 'NOPE' is not NAME=VALUE*"])


def test_a_command_that_cannot_run_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--axm-conformance", "--axm-tool=mcp:no-such-mcp-server --x"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--axm-tool 'mcp:no-such-mcp-server --x': cannot start 'no-such-mcp-server'*"]
    )


@pytest.mark.slow
def test_a_servers_checks_are_charged_the_time_it_took_to_observe() -> None:
    """A server is observed when it is loaded (its handshake, listings, how it ends), not by
    the checks that judge what was seen: their durations add up to at least that time."""
    report = check_tool(ref({"script": "word_server.py"}), checks=("server-stdout-clean",))
    (server,) = [tool for tool in report.tools if tool.subject.kind == "server"]
    facts, seconds = server.subject.server, server.subject.described_in
    assert facts is not None and seconds > facts.seconds > 0
    assert sum(outcome.duration for outcome in server.outcomes) >= seconds


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_the_version_spoken_is_on_the_server_and_each_of_its_tools(version: str) -> None:
    """The server's version is each subject's, and the summaries name it with the protocol; a
    correct server of any version leaves no server check unsettled (ping, where the version has
    none, does not apply)."""
    era = {"script": "word_server.py", "args": ["--era", version]}
    checks = ("server-handshake", "server-ping", "call-completes")
    report = check_tool(ref(era), checks=checks, examples=3)
    assert {tool.subject.protocol_version for tool in report.tools} == {version}
    (server,) = [tool for tool in report.tools if tool.subject.kind == "server"]
    statuses = {outcome.check_id: outcome.status for outcome in server.outcomes}
    assert statuses == {
        "server-handshake": "passed",
        "server-ping": "skipped" if version == CURRENT else "passed",
    }
    assert spoken({"protocol": "mcp", "protocol_version": version}) == f"mcp {version}"
    assert spoken({"protocol": "axm", "protocol_version": None}) == "axm"


def _judged(ref: str, **settings: Any) -> dict[str, tuple[str, list[str], list[str]]]:
    """Each subject's verdict, failed checks and warned checks, by its name."""
    report = check_tool(ref, examples=10, seed=SEEDS[0], **settings)
    return {
        str(tool.subject.name if tool.subject.kind == "tool" else "SERVER"): (
            tool.verdict.verdict,
            sorted(outcome.check_id for outcome in tool.failed),
            sorted(o.check_id for o in tool.outcomes if o.status == "warning"),
        )
        for tool in report.tools
    }


@pytest.mark.slow
@pytest.mark.skipif(bool(_sandbox.support()), reason="an HTTP server is certified in the sandbox")
def test_a_server_over_http_gets_the_listing_and_the_verdicts_it_gets_over_stdio() -> None:
    """The same server, spoken to over Streamable HTTP (mcp-http:, the port given as {port})
    and over stdio: the same tools, and for each the same verdict, failures and warnings."""
    command = shlex.join([sys.executable, str(SERVERS / "sdk_server.py")])
    over_stdio = _judged(f"mcp:{command}")
    over_http = _judged(f"mcp-http:{command} --http {{port}}")
    assert set(over_http) == set(over_stdio) == {"SERVER", "word_stats", "repeat", "divide"}
    assert over_http == over_stdio


@contextlib.contextmanager
def _serving(*required: str) -> Iterator[str]:
    """The SDK fixture server serving HTTP on a loopback port, as someone else runs it (not
    sandboxed: it is the kit's own), wanting each ``NAME=VALUE`` header; its address."""
    port = free_port()
    wants = [word for header in required for word in ("--require-header", header)]
    command = [sys.executable, str(SERVERS / "sdk_server.py"), "--http", str(port), *wants]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while server.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.1)
        yield f"mcp+http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait()


@pytest.mark.slow
def test_a_remote_server_gets_the_verdicts_it_gets_over_stdio_and_its_token_stays_secret(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server someone else runs (mcp+http://), behind a header and a bearer token: the same
    tools and verdicts as over stdio; what the kit cannot see there is not applicable, saying
    why; the token is in no output and no certificate; without it, a usage error that says
    what the server asked for."""
    token = f"axm-{secrets.token_hex(12)}"
    monkeypatch.setenv("AXM_TEST_TOKEN", token)
    over_stdio = _judged(f"mcp:{shlex.join([sys.executable, str(SERVERS / 'sdk_server.py')])}")
    with _serving("X-Tenant=blue", f"Authorization=Bearer {token}") as remote:
        tenant = (("X-Tenant", "blue"),)
        assert _judged(remote, server_headers=tenant, server_token_env="AXM_TEST_TOKEN") == (
            over_stdio
        )
        certified = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--axm-conformance", f"--axm-tool={remote}[divide]",
            "--axm-server-header=X-Tenant=blue", "--axm-server-token-env=AXM_TEST_TOKEN",
            "--axm-examples=5", f"--axm-seed={SEEDS[0]}", "--axm-report=cert.json", "-rs",
        )  # fmt: skip
        monkeypatch.delenv("AXM_TEST_TOKEN")
        refused = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--axm-conformance", f"--axm-tool={remote}",
            "--axm-server-header=X-Tenant=blue",
        )  # fmt: skip
    said = certified.stdout.str() + certified.stderr.str()
    assert certified.ret == 0, said
    assert token not in said + (pytester.path / "cert.json").read_text()
    certified.stdout.fnmatch_lines(
        ["*no-process-left*the server runs elsewhere (http://127.0.0.1:*"]
    )
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(
        ["*answered initialize with HTTP 401 Unauthorized*give the server the credentials*"]
    )


def test_an_http_server_that_names_no_port_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--axm-conformance", "--axm-tool=mcp-http:my-server --port 80"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*does not say where the server listens: put {port}*"])


RATE_LIMITED = {"script": "word_server.py", "args": ["--era", "current", "--rate-limit", "10/2"]}


@pytest.mark.slow
def test_a_rate_limit_is_backed_off_recorded_and_blames_no_input(
    pytester: pytest.Pytester,
) -> None:
    """Refusals that begin after a burst of calls and end after a pause are the server's
    pacing: the kit backs off, serves every valid input, and says so on the tool's line and
    in its certificate."""
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--axm-conformance",
        f"--axm-tool={ref(RATE_LIMITED)}[word_count]", "--axm-examples=20", "--axm-timeout=1",
        "--axm-report=cert.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    line = (
        r"word_count \(mcp 2026-07-28\): certified "
        r"\(.*; (\d+) valid calls: \1 served, 0 refused, 0 errored"
    )
    # A refusal the pacing brought on that happened again neither alone nor after the calls
    # before it is counted as a flaky failure, noted, never failed.
    paced = r"; rate-limited: backed off \d+ times, \d+ s(; \d+ failures? flaky)?\)"
    result.stdout.re_match_lines([line + paced])
    (record,) = [t for t in json.loads((pytester.path / "cert.json").read_text())["tools"]
                 if t["key"] == "word_count"]  # fmt: skip
    calls = record["calls"]
    assert calls["served"] == calls["valid"] > 20 and calls["backoffs"] >= 1
    assert calls["paused"] >= 1.0


@pytest.mark.slow
def test_calls_paced_as_asked_stay_under_a_known_limit() -> None:
    """--axm-pace leaves that many seconds between two calls: a server whose limit it keeps
    is never made to refuse, and the kit never has to back off."""
    report = check_tool(ref(RATE_LIMITED) + "[word_count]", examples=5, timeout=1.0, pace=0.25)
    (tool,) = [tool for tool in report.tools if tool.subject.kind == "tool"]
    assert tool.certified
    assert tool.calls["served"] == tool.calls["valid"] and "backoffs" not in tool.calls


# Every server is certified this platform's way at the first seed; with AXM_TEST_EVERY_RUN=1,
# those with `every_seed` at each of the fixture zoo's other seeds too (each costs a whole server
# certification, and CI's time is bounded); those that fail server-exits, whose processes the kit
# must find after they exit, the portable way (as on macOS) too.
SEEDED = [entry for entry in MANIFEST if entry.get("every_seed")]


RUNS = [
    *((entry, "native", SEEDS[0]) for entry in MANIFEST),
    *((entry, "native", seed) for entry in SEEDED for seed in (SEEDS[1:] if EVERY_RUN else ())),
    *(
        (entry, "portable", SEEDS[0])
        for entry in MANIFEST
        if "server-exits" in entry.get("fails", {}).get("SERVER", [])
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "way", "seed"),
    RUNS,
    ids=[f"{entry_id(entry)}-{way}-{seed}" for entry, way, seed in RUNS],
    indirect=["way"],
)
def test_kit_fails_exactly_the_listed_checks_of_each_fixture_server(
    entry: dict[str, Any], way: str, seed: int
) -> None:
    if entry.get("traced") and untraced():
        pytest.skip(f"not run: its writes are traced in a sandbox only: {untraced()}")
    if entry.get("http") and _sandbox.support():
        pytest.skip(f"not run: a server over HTTP is certified in a sandbox: {_sandbox.support()}")
    before = sorted(SERVERS.iterdir())
    only = tuple(entry.get("checks", ()))
    timeout = entry.get("timeout", 1.0)
    auth = "local" if entry.get("auth") else "off"
    examples = entry.get("examples", 20)
    report = check_tool(
        ref(entry), examples=examples, seed=seed, timeout=timeout, checks=only, auth=auth
    )
    # What a server writes beside its own script, the sandbox refused.
    assert sorted(SERVERS.iterdir()) == before
    keys = {
        "SERVER" if tool.subject.kind == "server" else tool.subject.name for tool in report.tools
    }
    listed = (
        set(entry.get("fails", {})) | set(entry.get("warns", {})) | set(entry.get("verdicts", {}))
    )
    assert listed <= keys, f"subjects {sorted(listed - keys)} were not certified"
    problems = []
    for tool in report.tools:
        key = "SERVER" if tool.subject.kind == "server" else tool.subject.name
        # Only a check that judged nothing served: one this platform cannot run is not run.
        inconclusive = any(outcome.status == "inconclusive" for outcome in tool.outcomes)
        if inconclusive != (entry.get("verdicts", {}).get(key) == "inconclusive"):
            problems.append(f"{key}: {tool.verdict.verdict}, served {tool.calls}")
        failed = sorted(outcome.check_id for outcome in tool.failed)
        warned = {outcome.check_id for outcome in tool.outcomes if outcome.status == "warning"}
        warned.discard("leaves-no-trace")  # another process may write in the project meanwhile
        if failed != sorted(entry.get("fails", {}).get(key, [])):
            problems.append(f"{key}: failed {failed}")
        if sorted(warned) != sorted(entry.get("warns", {}).get(key, [])):
            problems.append(f"{key}: warned {sorted(warned)}")
    assert not problems, f"{entry_id(entry)}: " + "; ".join(problems)


def test_a_servers_start_allowance_grows_from_its_slowest_start_in_the_run(tmp_path: Path) -> None:
    """Each worker remembers, in the run's memo, the slowest start of the server it saw: a
    later start is given four times that (at least 30 s), so that a server a busy machine
    started slowly once is not failed for starting slowly again."""
    command = ["sh", "-c", f"sleep 0.3; exec {shlex.quote(sys.executable)} word_server.py"]
    options = LoadOptions(timeout=1.0, memo=str(tmp_path))
    first = Connection(command, options)
    try:
        with chdir(SERVERS):
            first.open()
    finally:
        first.close()
    [memo] = tmp_path.iterdir()
    kept = json.loads(memo.read_text())
    assert kept["version"] == "2025-11-25" and kept["slowest"] >= 0.3
    memo.write_text(json.dumps({**kept, "slowest": 12.5}))  # a start a loaded machine made slow
    second = Connection(command, options)
    try:
        with chdir(SERVERS):
            assert second.open().start_allowance == 50.0
    finally:
        second.close()
    assert json.loads(memo.read_text()) == {**kept, "slowest": 12.5}
