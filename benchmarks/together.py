"""Figure 11: what exploring a tool after the other tools of its home costs, per server or
package: its certification with those sequences (the kit) against the same certification with
each tool called alone (the kit's way before), in the same run.

Run by ``benchmarks/run.py --only together``, or alone (``python benchmarks/together.py``): each
home of ``HOMES`` (the fixture MCP servers and module whose tools share a world, and a server
whose tools share none) is certified whole in this process at the default ``--axm-examples``
(100) and seed ``BASE_SEED``, ``repeats`` times each way, alternating; the median wall time of
each way, their ratio (the goal: within 1.5), and the valid calls judged each way. The calls
the sequences add are counted by the worker's calls (the steps included). Where ``tox -e mcp``
installed the real servers (``AXM_MCP_SERVERS`` names where), those of ``REAL`` are measured
too, as that run certifies them (its examples, seed and options).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import statistics
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from axm_conformance import check_tool
from axm_conformance._engine import _certify
from axm_conformance._process.parent._worker import Worker

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL_SERVERS = Path(__file__).resolve().parents[1] / "tests" / "real_mcp" / "servers.toml"
BASE_SEED = 20261122
SERVERS = FIXTURES / "mcp_servers"


def _server(script: str) -> str:
    return f"mcp:{shlex.join([sys.executable, str(SERVERS / script)])}"


HOMES: dict[str, list[str] | str] = {
    "state_server (7 tools)": _server("state_server.py"),
    "zoo_together (6 tools)": [
        f"zoo_together:{name}"
        for name in (
            "WriteSheetTool",
            "ReadSheetTool",
            "ReadCellsTool",
            "CreateRecordTool",
            "GetRecordTool",
            "FetchRecordTool",
        )
    ],
    "word_server (3 tools)": _server("word_server.py"),
}
# Real servers whose tools share a world: a workbook the others need (46 tools), a directory.
REAL = ("excel-mcp-server", "server-filesystem")
# As tox -e mcp certifies them.
REAL_SETTINGS = {"examples": 30, "seed": 1}


def real_homes() -> dict[str, tuple[str, dict[str, Any]]]:
    """The servers of REAL that tox -e mcp installed: a reference each, and its settings."""
    installed = os.environ.get("AXM_MCP_SERVERS", "")
    if not installed:
        return {}
    root = Path(installed)
    homes = {}
    for server in tomllib.loads(REAL_SERVERS.read_text())["server"]:
        if server["name"] not in REAL:
            continue
        command = server["command"].format(
            bin=root / server["name"] / "bin", node_modules=root / "node_modules"
        )
        settings = {**REAL_SETTINGS, **server.get("options", {})}
        if "worker_files" in server:
            settings["worker_files"] = str(root / server["worker_files"])
        homes[f"{server['name']} (real)"] = (f"mcp:{command}", settings)
    return homes


@contextlib.contextmanager
def alone() -> Iterator[None]:
    """Each tool called alone: the phase of sequences skipped."""
    original = _certify.explore_together
    _certify.explore_together = lambda session, seed: None  # type: ignore[assignment]
    try:
        yield
    finally:
        _certify.explore_together = original


@contextlib.contextmanager
def counting(counter: list[int]) -> Iterator[None]:
    """Count every call the engine makes through a worker (the tool's, the steps')."""
    original = Worker.call

    def call(self: Worker, target: str, *args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return original(self, target, *args, **kwargs)

    Worker.call = call  # type: ignore[method-assign]
    try:
        yield
    finally:
        Worker.call = original  # type: ignore[method-assign]


def certified(refs: list[str] | str, settings: dict[str, Any]) -> tuple[float, int, int]:
    """Wall seconds, worker calls, and valid calls judged, of one certification."""
    counter = [0]
    started = time.perf_counter()
    with counting(counter):
        report = check_tool(refs, **settings)
    wall = time.perf_counter() - started
    valid = sum(int(tool.calls.get("valid", 0)) for tool in report.tools)
    return wall, counter[0], valid


def measure(repeats: int) -> dict[str, Any]:
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    rows: dict[str, Any] = {}
    homes = {name: (refs, {"seed": BASE_SEED}) for name, refs in HOMES.items()} | real_homes()
    for name, (refs, settings) in homes.items():
        runs: dict[str, list[tuple[float, int, int]]] = {"together": [], "alone": []}
        for _ in range(repeats):
            runs["together"].append(certified(refs, settings))
            with alone():
                runs["alone"].append(certified(refs, settings))
        medians = {
            way: {
                "wall_s": round(statistics.median(run[0] for run in made), 2),
                "calls": int(statistics.median(run[1] for run in made)),
                "valid_calls": int(statistics.median(run[2] for run in made)),
            }
            for way, made in runs.items()
        }
        rows[name] = {
            **medians,
            "ratio": round(medians["together"]["wall_s"] / medians["alone"]["wall_s"], 2),
        }
    return {"repeats": repeats, "seed": BASE_SEED, "homes": rows}


def lines(results: dict[str, Any]) -> Iterator[str]:
    together = results.get("together")
    if not together:
        return
    yield ""
    yield "11. A home's tools explored together against each tool alone (goal: within 1.5x)"
    for name, row in together["homes"].items():
        yield (
            f"  {name}: together {row['together']['wall_s']} s, {row['together']['calls']} "
            f"calls; alone {row['alone']['wall_s']} s, {row['alone']['calls']} calls; "
            f"together / alone = {row['ratio']}"
        )


if __name__ == "__main__":
    import json

    outcome = {"together": measure(int(sys.argv[1]) if len(sys.argv) > 1 else 3)}
    print("\n".join(lines(outcome)))
    print(json.dumps(outcome["together"], indent=2))
