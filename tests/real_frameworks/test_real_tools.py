"""Real published framework tools certified end to end: langchain-community's file-management
tools and smolagents' own tools, each to the verdict ``tools.toml`` gives (and
``conformance/frameworks.md`` explains, finding by finding).

Run by ``tox -e frameworks``, which installs langchain-community and sets AXM_REAL_FRAMEWORKS;
without it every test here is skipped, saying so.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from axm_conformance import check_tool
from axm_conformance._clients import CLIENTS
from axm_conformance._outcomes import Status
from tests.clients_table import rows, written
from tests.conftest import FIXTURES

HERE = Path(__file__).resolve().parent
TOOLS: list[dict[str, Any]] = tomllib.loads((HERE / "tools.toml").read_text())["tool"]


@pytest.mark.slow
@pytest.mark.parametrize("entry", TOOLS, ids=[entry["ref"].rpartition(":")[2] for entry in TOOLS])
def test_a_real_framework_tool_runs_to_the_verdict_listed(entry: dict[str, Any]) -> None:
    if not os.environ.get("AXM_REAL_FRAMEWORKS"):
        pytest.skip("the real framework tools are installed by tox -e frameworks")
    report = check_tool(
        entry["ref"],
        examples=30,
        seed=1,
        worker_files=str(FIXTURES / "worker_files") if entry.get("worker_files") else None,
    )
    (tool,) = report.tools
    failed = sorted(o.check_id for o in tool.outcomes if o.status is Status.FAILED)
    warned = sorted(o.check_id for o in tool.outcomes if o.status is Status.WARNING)
    details = [
        f"{o.check_id} ({o.status}): {o.messages}"
        for o in tool.outcomes
        if o.status in (Status.FAILED, Status.WARNING, Status.INCONCLUSIVE)
    ]
    verdict = tool.verdict.verdict
    if verdict == "certified" and warned:
        verdict = "certified with warnings"
    assert (verdict, failed, warned) == (
        entry["verdict"],
        sorted(entry["fails"]),
        sorted(entry["warns"]),
    ), "\n".join(details)


@pytest.mark.slow
def test_the_portability_table_of_the_real_framework_tools_is_the_one_written() -> None:
    """conformance/clients.md gives, per real framework tool, the first rule each client
    profile finds it breaking, as the kit computes it from the schema the framework sends."""
    if not os.environ.get("AXM_REAL_FRAMEWORKS"):
        pytest.skip("the real framework tools are installed by tox -e frameworks")
    homes = [entry["ref"].partition(".")[0] for entry in TOOLS]
    computed = [
        row
        for entry, home in zip(TOOLS, homes, strict=True)
        for row in rows(
            home, [check_tool(entry["ref"], checks=tuple(f"portable-to-{c}" for c in CLIENTS))]
        )
    ]
    assert computed == written("Published tools", homes), "\n".join(computed)
