"""Real JSON Schema validators certified side by side, as a validator's author would: jsonschema
against itself (the control) and jsonschema-rs on draft 2020-12, fastjsonschema on drafts 4, 6
and 7, each through its adapter in a worker process, on the draft's whole suite and at one seed of
differential fuzzing (five, the tables' run, with AXM_TEST_EVERY_RUN=1).

Every failure must be one of `KNOWN`: the disagreements ``conformance/validators.md`` lists, each
confirmed by hand as a bug of that validator, with its reproduction. No pair may be left to the
oracle alone (a third validator agreeing with the one under test): that would be a deviation of
the oracle, to be fixed in the kit. The tables are printed (``-rP`` shows them).

Run by ``tox -e validators``, which sets AXM_REAL_VALIDATORS; without it every test here is
skipped, saying so.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from axm_conformance._settings import Settings
from axm_conformance._validation import (
    IsolatedValidator,
    differential,
    differential_keywords,
    format_disagreement,
    format_table,
    run_suite,
)

# One seed in CI: the whole suite and 25 examples per keyword, where fewer examples can only miss
# a disagreement, never make one; the five of the tables in conformance/validators.md (125
# examples per keyword) on demand.
SEEDS = range(1, 6) if os.environ.get("AXM_TEST_EVERY_RUN") == "1" else range(1, 2)
EXAMPLES = 25  # per keyword and seed
JSONSCHEMA = "axm_conformance._validation:jsonschema_validate"
RUST = "axm_conformance._validation:jsonschema_rs_validate"
FAST = "axm_conformance._validation:fastjsonschema_validate"
SUBJECTS = [(JSONSCHEMA, "2020-12"), (RUST, "2020-12"), (FAST, "4"), (FAST, "6"), (FAST, "7")]


def _strings(value: Any) -> list[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for item in value.values() for s in _strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _patterns(schema: Any) -> list[str]:
    """Every regular expression of a schema: pattern values and patternProperties names."""
    if isinstance(schema, list):
        return [p for item in schema for p in _patterns(item)]
    if not isinstance(schema, dict):
        return []
    found = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
    found += list(schema.get("patternProperties", {}))
    return found + [p for value in schema.values() for p in _patterns(value)]


def _dollar_before_newline(schema: Any, instance: Any) -> bool:
    ends = any(pattern.endswith("$") for pattern in _patterns(schema))
    return ends and any(s.endswith("\n") for s in _strings(instance))


def _property_escape(schema: Any, instance: Any) -> bool:
    return any("\\p{" in pattern for pattern in _patterns(schema))


def _id_in_definitions_or_if(schema: Any, instance: Any) -> bool:
    text = json.dumps(schema)
    return '"$id"' in text and ('"definitions"' in text or "/ref/" in text)


@dataclass(frozen=True)
class Known:
    """A bug of a validator, confirmed by hand: where it shows, and how to recognise a pair."""

    validator: str
    rows: frozenset[str]
    shows: Callable[[Any, Any], bool]
    bug: str  # its heading in conformance/validators.md


KNOWN = (
    Known(
        JSONSCHEMA,
        frozenset({"pattern", "patternProperties", "additionalProperties", "propertyNames"}),
        _dollar_before_newline,
        "jsonschema matches with Python's re: $ matches before a final newline",
    ),
    Known(
        JSONSCHEMA,
        frozenset({"pattern", "patternProperties"}),
        _property_escape,
        "jsonschema matches with Python's re: no Unicode property escapes",
    ),
    Known(
        FAST,
        frozenset({"patternProperties", "additionalProperties"}),
        _dollar_before_newline,
        "fastjsonschema: patternProperties with Python's re ($ before a final newline)",
    ),
    Known(
        FAST,
        frozenset({"ref"}),
        _id_in_definitions_or_if,
        "fastjsonschema: $id in definitions and in if/then/else is not resolved",
    ),
)


def known(validator: str, row: str, schema: Any, instance: Any) -> bool:
    return any(
        bug.validator == validator and row in bug.rows and bug.shows(schema, instance)
        for bug in KNOWN
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ref", "draft"), SUBJECTS, ids=[f"{r.partition(':')[2]}-{d}" for r, d in SUBJECTS]
)
def test_a_real_validator_fails_only_where_it_is_known_to(ref: str, draft: str) -> None:
    if not os.environ.get("AXM_REAL_VALIDATORS"):
        pytest.skip("the real validators are certified by tox -e validators")
    validator = IsolatedValidator(ref, Settings(sys_path=tuple(sys.path)))
    try:
        suite = run_suite(validator, draft=draft)
        runs = [
            differential(validator, keyword, EXAMPLES, seed, draft=draft)
            for seed in SEEDS
            for keyword in differential_keywords(draft=draft)
        ]
    finally:
        validator.close()
    print(format_table(suite, runs))
    unknown = [
        f"suite: {result.case.id}: {result.status}, {result.detail}"
        for result in suite.failures
        if not known(ref, result.case.keyword, result.case.schema, result.case.data)
    ]
    unknown += [
        format_disagreement(found)
        for run in runs
        for found in run.disagreements
        if not known(ref, run.keyword, found.schema, found.instance)
    ]
    left_to_the_oracle = [
        format_disagreement(found)
        for run in runs
        for found in run.allowed
        if found.status == "oracle"
    ]
    assert not unknown, "\n\n".join(unknown)
    assert not left_to_the_oracle, "\n\n".join(left_to_the_oracle)
