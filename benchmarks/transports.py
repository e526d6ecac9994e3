"""Figure 13: what certifying an MCP server over Streamable HTTP costs against over stdio: the
same server (``fixtures/mcp_servers/sdk_server.py``, the Python SDK's, 2026-07-28), certified
whole in this process both ways, at ``EXAMPLES`` examples and seed ``BASE_SEED``, ``repeats``
times each way, alternating; the median wall time of each way and their ratio (the goal:
within 1.5), with the valid calls judged each way (the same, when the verdicts are).

Run by ``benchmarks/run.py --only http``, or alone (``python benchmarks/transports.py``). An
HTTP server is certified in the sandbox: where none can be built the figure says so.
"""

from __future__ import annotations

import shlex
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from axm_conformance import check_tool
from axm_conformance._process.system import _sandbox

SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_servers" / "sdk_server.py"
BASE_SEED = 20261122
EXAMPLES = 30
COMMAND = shlex.join([sys.executable, str(SERVER)])
WAYS = {"stdio": f"mcp:{COMMAND}", "http": f"mcp-http:{COMMAND} --http {{port}}"}


def certified(ref: str) -> tuple[float, int, dict[str, str]]:
    """Wall seconds, valid calls judged, and each subject's verdict, of one certification."""
    started = time.perf_counter()
    report = check_tool(ref, examples=EXAMPLES, seed=BASE_SEED)
    wall = time.perf_counter() - started
    valid = sum(int(tool.calls.get("valid", 0)) for tool in report.tools)
    verdicts = {str(tool.subject.name): tool.verdict.verdict for tool in report.tools}
    return wall, valid, verdicts


def measure(repeats: int) -> dict[str, Any]:
    unable = _sandbox.support()
    if unable:
        return {"skipped": f"no sandbox, where an HTTP server is certified: {unable}"}
    runs: dict[str, list[tuple[float, int, dict[str, str]]]] = {way: [] for way in WAYS}
    for _ in range(repeats):
        for way, ref in WAYS.items():
            runs[way].append(certified(ref))
    medians = {
        way: {
            "wall_s": round(statistics.median(run[0] for run in made), 2),
            "valid_calls": int(statistics.median(run[1] for run in made)),
        }
        for way, made in runs.items()
    }
    return {
        "repeats": repeats,
        "seed": BASE_SEED,
        "examples": EXAMPLES,
        **medians,
        "ratio": round(medians["http"]["wall_s"] / medians["stdio"]["wall_s"], 2),
        "same_verdicts": runs["http"][-1][2] == runs["stdio"][-1][2],
    }


def lines(results: dict[str, Any]) -> Iterator[str]:
    http = results.get("http")
    if not http:
        return
    yield ""
    yield "13. An MCP server over Streamable HTTP against over stdio (goal: within 1.5x)"
    if "skipped" in http:
        yield f"  {http['skipped']}"
        return
    yield (
        f"  sdk_server: http {http['http']['wall_s']} s, {http['http']['valid_calls']} valid "
        f"calls; stdio {http['stdio']['wall_s']} s, {http['stdio']['valid_calls']} valid calls; "
        f"http / stdio = {http['ratio']}; same verdicts: {http['same_verdicts']}"
    )


if __name__ == "__main__":
    import json

    outcome = {"http": measure(int(sys.argv[1]) if len(sys.argv) > 1 else 3)}
    print("\n".join(lines(outcome)))
    print(json.dumps(outcome["http"], indent=2))
