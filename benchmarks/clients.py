"""Figure 12: what the client checks (``portable-to-*``) cost a run: the time they took against
the time of the run they were part of, in the same run.

Run by ``benchmarks/run.py --only clients``, or alone (``python benchmarks/clients.py``): every
fixture zoo tool that is not hostile is certified in this process at ``--axm-examples=30`` and
seed ``BASE_SEED``, every check included; the client checks' own durations (the engine times
each check) are summed and set against the sum of every check's, and against the run's wall
time. They read the schema only: the goal is a share too small to measure (under 1%).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from axm_conformance import check_tool
from axm_conformance._checks import CHECKS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLES = 30
BASE_SEED = 20261122


def measure(refs: Sequence[str], repeats: int) -> dict[str, Any]:
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    runs: list[tuple[float, float, float, int]] = []
    for _ in range(repeats):
        clients = checks = 0.0
        judged = 0
        started = time.perf_counter()
        for ref in refs:
            report = check_tool(ref, examples=EXAMPLES, seed=BASE_SEED, timeout=2.0)
            for tool in report.tools:
                for outcome in tool.outcomes:
                    checks += outcome.duration
                    if CHECKS[outcome.check_id].group == "clients":
                        clients += outcome.duration
                        judged += 1
        runs.append((time.perf_counter() - started, checks, clients, judged))
    wall = statistics.median(run[0] for run in runs)
    checks = statistics.median(run[1] for run in runs)
    clients = statistics.median(run[2] for run in runs)
    return {
        "repeats": repeats,
        "seed": BASE_SEED,
        "tools": len(refs),
        "client_checks_judged": runs[0][3],
        "wall_s": round(wall, 2),
        "checks_s": round(checks, 2),
        "client_checks_s": round(clients, 4),
        "share_of_checks": round(clients / checks, 5) if checks else 0.0,
        "share_of_wall": round(clients / wall, 5) if wall else 0.0,
    }


def lines(results: dict[str, Any]) -> Iterator[str]:
    figure = results.get("clients")
    if not figure:
        return
    yield ""
    yield "12. The client checks' share of a run (goal: under 1%, too small to measure)"
    yield (
        f"  {figure['tools']} tools, {figure['client_checks_judged']} client checks: "
        f"{figure['client_checks_s']} s of {figure['checks_s']} s of checks "
        f"({figure['share_of_checks']:.3%}), of {figure['wall_s']} s wall "
        f"({figure['share_of_wall']:.3%})"
    )


if __name__ == "__main__":
    import json

    import run

    outcome = {"clients": measure(run.zoo_refs(), int(sys.argv[1]) if len(sys.argv) > 1 else 1)}
    print("\n".join(lines(outcome)))
    print(json.dumps(outcome["clients"], indent=2))
