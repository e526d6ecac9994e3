"""Examples per second of the input strategies, next to hypothesis-jsonschema's `from_schema`.

Run with ``python benchmarks/strategies_speed.py [examples]``. Each row draws the given number of
examples through Hypothesis' own engine (generate phase only, no database), which is what a
certification run pays; the first, building, call is timed apart. `hinted` is what the kit
draws: valid inputs with hints mixed in (the literals of the benchmark tools' module, two worker
files), and `placed ms` the time to make the deterministic inputs that put each hint in each
place (up to 100). `from_schema` is measured where it can draw: with current Hypothesis it fails
on every object.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from axm_conformance._process.child._literals import literals_of
from axm_conformance._strategies import (
    Hints,
    generated_inputs,
    hinted_inputs,
    invalid_inputs,
    valid_inputs,
)

# The object schemas are those of the benchmark's tools (fixtures/bench_tools.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from bench_tools import ORDER_INPUT, PLAN_INPUT, SEARCH_INPUT, EchoTool

HINTS = Hints.of(
    {
        "worker-file": ["notes.txt", "data/todo.md"],
        "source-literal": literals_of([EchoTool, EchoTool.execute]),
    }
)

SCALARS: dict[str, Any] = {
    "string with pattern": {"type": "string", "pattern": r"^[a-z]{2,8}-\d{1,4}$"},
    "bounded integer": {"type": "integer", "minimum": -50, "maximum": 50, "multipleOf": 5},
    "array of strings": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
    "enum": {"enum": ["red", "green", "blue", None]},
}


def rate(strategy: st.SearchStrategy[Any], examples: int) -> float:
    """Examples per second drawn by Hypothesis' engine."""
    count = 0

    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate])
    @given(strategy)
    def draw(_: Any) -> None:
        nonlocal count
        count += 1

    start = time.perf_counter()
    draw()
    return count / (time.perf_counter() - start)


def timed(build: Callable[[], st.SearchStrategy[Any]], examples: int) -> str:
    try:
        return f"{rate(build(), examples):>10,.0f}"
    except Exception as err:  # from_schema's failure on objects is a result, not a crash
        return f"{'fails: ' + type(err).__name__:>10}"


def main(examples: int) -> None:
    rows: list[tuple[str, dict[str, Any], bool]] = [
        ("small object (3 properties)", SEARCH_INPUT, True),
        ("nested (objects in arrays)", ORDER_INPUT, True),
        ("wide object (30 properties)", PLAN_INPUT, True),
        *((name, schema, False) for name, schema in SCALARS.items()),
    ]
    print(f"{examples} examples per row, examples/second; {len(HINTS.values)} hints")
    header = (
        f"{'schema':<30} {'build ms':>9} {'valid':>10} {'invalid':>10} {'placed ms':>10} "
        f"{'hinted':>10} {'from_schema':>12}"
    )
    print(header)
    print("-" * len(header))
    for name, schema, is_object in rows:
        start = time.perf_counter()
        valid_inputs(schema)
        build = (time.perf_counter() - start) * 1000
        ours = timed(partial(valid_inputs, schema), examples)
        broken = timed(partial(invalid_inputs, schema), examples) if is_object else "-"
        start = time.perf_counter()
        hinted_inputs(schema, HINTS, 100)
        placed = (time.perf_counter() - start) * 1000
        hinted = timed(partial(generated_inputs, schema, HINTS), examples)
        theirs = timed(partial(from_schema, schema), examples)
        print(
            f"{name:<30} {build:>9.1f} {ours:>10} {broken:>10} {placed:>10.1f} {hinted:>10} "
            f"{theirs:>12}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
