"""Figure 10: the calls shrinking makes, shrinking from the failure found (the kit) against a
fresh Hypothesis search for a failing input (the baseline, the kit's way before), both on the
same failing checks in the same run.

Run by ``benchmarks/run.py --only shrink``, or alone (``python benchmarks/shrinking.py``): every
fixture zoo tool that is not hostile is certified in this process at ``--axm-examples=30`` and
seed ``BASE_SEED``, once each way; for each failing per-call check, the calls its shrinking
made, the size of the input reported, and whether the reported failure ended as the one found
(the same exception or crash). Ratios are of the totals, kit over baseline.
"""

from __future__ import annotations

import contextlib
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Verbosity
from hypothesis.errors import HypothesisException

from axm_conformance import check_tool
from axm_conformance._engine import _certify, _shrinking, hints_for
from axm_conformance._engine import _session as _engine
from axm_conformance._strategies import shrink_size, valid_inputs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXAMPLES = 30
BASE_SEED = 20261122


def fresh_search(session: Any, run: Any) -> None:
    """The baseline: ``hypothesis.find`` from the tool's valid (or invalid) inputs for one that
    fails the check as severely, up to max(examples, 20) examples and the shrinking budget; the
    failure replaced when what it found is no larger."""
    feed = run.check.feed
    deadline = time.monotonic() + _shrinking._SHRINK_BUDGET
    severe = _engine.any_severe(run.failure[1])
    found: list[Any] = []
    tried: dict[str, Any] = {repr(run.failure[0].input): run.failure}

    def fails(case: Any) -> bool:
        invalid = feed is _engine.INVALID
        value, label = (case.value, _engine._mutation_label(case)) if invalid else (case, "")
        key = repr(value)
        if key not in tried:
            if time.monotonic() > min(deadline, session.deadline):
                return False
            call = session.call(
                value, label, feed=feed, repeat=run.check.repeats, vary=run.check.varies
            )
            violations = session.violations(run.check, call)
            matches = bool(violations) and (_engine.any_severe(violations) or not severe)
            tried[key] = (call, violations) if matches else None
        if tried[key] is not None:
            found.append(tried[key])
        return tried[key] is not None

    strategy = (
        session.invalid
        if feed is _engine.INVALID
        else valid_inputs(
            session.subject.input_schema, hints_for(session.subject, session.settings)
        )
    )
    chosen = hypothesis.settings(
        max_examples=max(session.settings.examples, 20),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        database=None,
    )
    with contextlib.suppress(HypothesisException):
        hypothesis.find(strategy, fails, settings=chosen, random=random.Random(BASE_SEED))
    if found and shrink_size(found[-1][0].input) <= shrink_size(run.failure[0].input):
        run.failure = found[-1]


@contextlib.contextmanager
def counted(shrink: Callable[..., None], records: list[dict[str, Any]]) -> Iterator[None]:
    """Shrink with ``shrink``, recording for each failing check its calls and what it reported."""
    original = _certify.shrink

    def measured(session: Any, run: Any, *rest: Any) -> None:
        before, first = session.calls, run.failure
        kind = _shrinking.failure_kind(session, *first)
        shrink(session, run)
        records.append(
            {
                "tool": session.subject.ref,
                "check": run.check.id,
                "calls": session.calls - before,
                "size": shrink_size(run.failure[0].input)[0],
                "same_kind": _shrinking.failure_kind(session, *run.failure) == kind,
            }
        )

    _certify.shrink = measured
    try:
        yield
    finally:
        _certify.shrink = original


def measure(refs: list[str]) -> dict[str, Any]:
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    ways = {"kit": _shrinking.shrink, "fresh search": fresh_search}
    records: dict[str, list[dict[str, Any]]] = {}
    for way, shrink in ways.items():
        records[way] = []
        with counted(shrink, records[way]):
            for ref in refs:
                with contextlib.suppress(Exception):
                    check_tool(ref, examples=EXAMPLES, seed=BASE_SEED, timeout=2.0)
    totals = {
        way: {
            "failing_checks": len(rows),
            "calls": sum(row["calls"] for row in rows),
            "reported_size": sum(row["size"] for row in rows),
            "another_kind": sum(not row["same_kind"] for row in rows),
        }
        for way, rows in records.items()
    }
    kit, base = totals["kit"], totals["fresh search"]
    return {
        "examples": EXAMPLES,
        "tools": len(refs),
        "totals": totals,
        "ratio_calls": round(kit["calls"] / base["calls"], 3) if base["calls"] else None,
        "ratio_reported_size": round(kit["reported_size"] / base["reported_size"], 3)
        if base["reported_size"]
        else None,
        "rows": records,
    }


def lines(results: dict[str, Any]) -> Iterator[str]:
    shrink = results.get("shrinking")
    if not shrink:
        return
    kit, base = shrink["totals"]["kit"], shrink["totals"]["fresh search"]
    yield ""
    yield "10. Shrinking from the failure found against a fresh Hypothesis search"
    for way, row in (("kit", kit), ("fresh search", base)):
        yield (
            f"  {way}: {row['failing_checks']} failing checks, {row['calls']} calls, "
            f"reported inputs {row['reported_size']} characters in all, "
            f"{row['another_kind']} ended another way than the failure found"
        )
    yield (
        f"  kit / fresh search = {shrink['ratio_calls']} calls, "
        f"{shrink['ratio_reported_size']} reported size"
    )


if __name__ == "__main__":
    import json

    from run import zoo_refs  # beside this file, on the path as the script's directory

    outcome = {"shrinking": measure(zoo_refs())}
    print("\n".join(lines(outcome)))
    print(json.dumps(outcome["shrinking"]["totals"], indent=2))
