"""Where the kit's time goes for one tool: cProfile of one ``check_tool`` call.

Run with ``python benchmarks/profile_one.py [REF] [EXAMPLES]``; the default tool is
``bench_tools:AxmSearchTool`` at 100 examples.

1. The kit's process: one ``check_tool`` call under cProfile (top entries by cumulative and by
   own time). Time spent waiting for the tool's worker process shows up as ``select.poll`` in
   the worker's pipe reads; the wall / CPU / children-CPU split printed first says how much of
   the call is the kit's own work and how much is its worker processes'.
2. The worker's side, in this process: the calls the worker makes for the valid inputs (the
   boundary examples and as many generated inputs, each called twice as for the determinism
   check) through ``axm_conformance._process.child._agent.invoke``, under cProfile. The worker
   itself cannot be profiled in place: it is killed, not shut down, when the run ends.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import resource
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
SEED = 20_240


def _top(profile: cProfile.Profile, order: str, count: int) -> str:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats(order).print_stats(count)
    text = out.getvalue()
    return text[text.index("   ncalls") :] if "   ncalls" in text else text


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def profile_kit(ref: str, examples: int, count: int) -> None:
    import hypothesis  # noqa: F401  (the import is not what this profile is about)

    from axm_conformance import (
        _engine,  # noqa: F401
        check_tool,
    )

    profile = cProfile.Profile()
    children, cpu, wall = _children_cpu(), time.process_time(), time.perf_counter()
    profile.enable()
    report = check_tool(ref, examples=examples, seed=SEED)
    profile.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    worker = _children_cpu() - children
    (tool,) = report.tools
    print(f"{ref} at {examples} examples: {'certified' if tool.certified else 'NOT certified'}")
    print(
        f"wall {wall:.2f} s; kit process CPU {cpu:.2f} s; worker processes CPU {worker:.2f} s "
        "(cProfile overhead included in the kit's figures)"
    )
    judged = {outcome.check_id: outcome.examples for outcome in tool.outcomes if outcome.examples}
    print(f"calls judged per check: {judged}")
    print(f"\nkit process, by cumulative time:\n{_top(profile, 'cumulative', count)}")
    print(f"kit process, by own time:\n{_top(profile, 'tottime', count)}")


def profile_worker_side(ref: str, examples: int, count: int) -> None:
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from axm_conformance._process.child._agent import invoke, open_tool
    from axm_conformance._strategies import boundary_inputs, valid_inputs

    state = open_tool(ref, "auto", 1024 * 1024)
    schema = state.protocol.describe().input_schema
    values: list[Any] = [example.value for example in boundary_inputs(schema)]

    @seed(SEED)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @given(valid_inputs(schema))
    def collect(value: Any) -> None:
        values.append(value)

    collect()
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    for value in values:
        invoke(state, value)
        invoke(state, value)
    profile.disable()
    took = time.perf_counter() - started
    print(
        f"worker side, in process: {2 * len(values)} calls of invoke() in {took:.3f} s "
        f"({took / (2 * len(values)) * 1e3:.2f} ms per call, cProfile overhead included)"
    )
    print(_top(profile, "cumulative", count))


def main(argv: list[str]) -> None:
    ref = argv[0] if argv else "bench_tools:AxmSearchTool"
    examples = int(argv[1]) if len(argv) > 1 else 100
    sys.path.insert(0, str(FIXTURES))
    profile_kit(ref, examples, 25)
    profile_worker_side(ref, examples, 15)


if __name__ == "__main__":
    main(sys.argv[1:])
