"""The same verdict on every run: failures replayed from the example database, flaky failures
reported with both outcomes, and seeds derived from the tool under a derandomizing profile."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import pytest
from hypothesis.database import DirectoryBasedExampleDatabase

from axm_conformance import check_tool
from axm_conformance._jsonable import canonical_json
from axm_conformance._settings import derived_seed

pytestmark = pytest.mark.slow

REPLAYED = "(replayed: it failed in an earlier run)"


@contextlib.contextmanager
def _use_profile(name: str, **options: object) -> Iterator[None]:
    previous = hypothesis.settings._current_profile or "default"
    hypothesis.settings.register_profile(name, hypothesis.settings(**options))  # type: ignore[arg-type]
    hypothesis.settings.load_profile(name)
    try:
        yield
    finally:
        hypothesis.settings.load_profile(previous)


@pytest.fixture
def database(tmp_path: Path) -> Iterator[DirectoryBasedExampleDatabase]:
    """An example database of the test's own, as the profile's (the ci profile keeps none)."""
    found = DirectoryBasedExampleDatabase(tmp_path / "examples")
    with _use_profile("axm-test-database", database=found):
        yield found


def test_a_failure_found_at_one_seed_is_replayed_first_at_another(
    database: DirectoryBasedExampleDatabase,
) -> None:
    first = check_tool("zoo_axm:MeanTool", examples=10, seed=1, checks=("result-json",))
    found = first.tools[0].outcome("result-json")
    assert found.status == "failed" and not found.input_label.endswith(REPLAYED)
    again = check_tool("zoo_axm:MeanTool", examples=10, seed=2, checks=("result-json",))
    replayed = again.tools[0].outcome("result-json")
    assert replayed.status == "failed"
    assert replayed.input == found.input
    assert replayed.input_label == f"{found.input_label} {REPLAYED}"


def test_a_saved_input_that_no_longer_fails_or_no_longer_fits_the_schema_is_dropped(
    database: DirectoryBasedExampleDatabase,
) -> None:
    """A tool that was fixed keeps no stale entries; an input the schema now refuses is never
    sent as a valid one."""
    key = b"axm-conformance failure zoo_axm:SlugTool result-json"
    passes = json.dumps({"input": {"text": "A b"}, "label": ""}).encode()
    invalid = json.dumps({"input": {"text": 3}, "label": ""}).encode()
    garbled = b"not json"
    for entry in (passes, invalid, garbled):
        database.save(key, entry)
    report = check_tool("zoo_axm:SlugTool", examples=5, seed=1, checks=("result-json",))
    assert report.tools[0].outcome("result-json").status == "passed"
    assert list(database.fetch(key)) == []


def test_a_failure_that_does_not_happen_again_is_reported_as_flaky() -> None:
    report = check_tool("zoo_behaviour:WarmUpTool", examples=5, seed=1, timeout=2.0)
    outcome = report.tools[0].outcome("no-unexpected-exception")
    assert outcome.status == "failed"
    assert outcome.messages[0].startswith("raised KeyError")
    assert outcome.messages[-1] == (
        "flaky: called again with the same input: it was served; this check then found nothing"
    )


def test_a_derandomized_run_derives_each_tools_seed_from_its_key_and_schema() -> None:
    """Under a profile that derandomizes (Hypothesis' ci one), no seed is drawn: unchanged tools
    get the same inputs, and the same findings, every run."""
    refs = ["zoo_axm:MeanTool", "zoo_axm:SlugTool"]
    with _use_profile("axm-test-derandomized", derandomize=True, database=None):
        reports = [check_tool(refs, examples=5) for _ in range(2)]
    one, two = reports
    assert one.seed is None
    for tool in one.tools:
        assert tool.seed == derived_seed(tool.key, canonical_json(tool.subject.input_schema))
    outcomes = [
        [(o.check_id, o.status, o.messages, o.input) for t in r.tools for o in t.outcomes]
        for r in reports
    ]
    assert outcomes[0] == outcomes[1]
    assert [t.seed for t in two.tools] == [t.seed for t in one.tools]
