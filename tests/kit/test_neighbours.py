"""Each tool judged alone: a call that kills the kit's other workers of the run (the one started
ahead for the next tool, the fork server) changes nothing of the next tool's verdict. Without a
sandbox the damage is done and repaired; in one it cannot be done.

The tools are in ``fixtures/zoo_neighbours.py``: end_process, whose pid -1 kills those workers
and its own process group, and count_words, certified after it.
"""

from __future__ import annotations

import pytest

from axm_conformance import Report, check_tool
from axm_conformance._process.parent._worker import Worker

pytestmark = pytest.mark.slow

DAMAGING = "zoo_neighbours:EndProcessTool"
INNOCENT = "zoo_neighbours:WordCountTool"
SEED = 20261122
# As tests/kit/test_fixture_zoo.py: three seeds, and the portable way (spawned workers, no fork
# server, psutil) at the first.
RUNS = [*((seed, "native") for seed in (SEED, 7, 424242)), (SEED, "portable")]


def verdict(report: Report, ref: str) -> tuple[str, list[str]]:
    tool = next(tool for tool in report.tools if tool.subject.ref == ref)
    return tool.verdict.verdict, sorted(outcome.check_id for outcome in tool.failed)


@pytest.mark.parametrize(("seed", "way"), RUNS, indirect=["way"])
def test_a_tool_certified_after_one_whose_call_killed_its_worker_gets_its_verdict_alone(
    seed: int, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    replaced: list[bool] = []
    revive = Worker.revive

    def watched(worker: Worker) -> Worker:
        before = worker.pid
        revive(worker)
        replaced.append(before != worker.pid)
        return worker

    monkeypatch.setattr(Worker, "revive", watched)
    together = check_tool([DAMAGING, INNOCENT], examples=30, seed=seed, timeout=1.0, sandbox="off")
    # The damage was done: the worker started ahead for the innocent tool had been killed.
    assert replaced == [False, True]
    alone = check_tool(INNOCENT, examples=30, seed=seed, timeout=1.0, sandbox="off")
    assert verdict(together, DAMAGING) == ("failed", ["call-completes"])
    assert verdict(together, INNOCENT) == verdict(alone, INNOCENT) == ("certified", [])
