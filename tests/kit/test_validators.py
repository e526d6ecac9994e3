"""Validator certification: the test suite and differential fuzzing, on right and wrong validators.

The reference validator (``axm_runtime.tool_use.validate_input``) must pass every selected suite
case and show no disagreement with the oracle; each validator of ``fixtures/zoo_validators.py``
carries one mistake, which both engines must find, the differential one as a minimal pair and at
every seed.

Differential examples per keyword: 1,000 for the keywords of ``CORE`` (the three the wrong
validators get wrong, plus ``required`` and ``properties``), ``OTHERS`` (150) for the rest: about
a minute of CPU in all, so well under 90 s on two cores with ``-n 2``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from axm_conformance._refs import LoadError
from axm_conformance._validation import (
    FUZZED_KEYWORDS,
    DifferentialReport,
    Disagreement,
    _adapters,
    differential,
    differential_keywords,
    fastjsonschema_validate,
    format_disagreement,
    format_failures,
    format_table,
    jsonschema_rs_validate,
    jsonschema_validate,
    load_keywords,
    load_validator,
    run_suite,
    schemas_using,
    suite_cases,
    verdict,
)
from axm_conformance._validation._suite import NON_CONSTRAINING
from axm_runtime.tool_use import SUPPORTED_KEYWORDS, ValidationResult, validate_input

REFERENCE = "axm_runtime.tool_use:validate_input"
# A claim of part of what the reference enforces (its SUPPORTED_KEYWORDS are all of 2020-12):
# the keywords of the seed and the common ones after it, without identifiers. The selection and
# the differential rows below are made for it.
CLAIM = frozenset(
    {"type", "required", "properties", "items", "enum", "minimum", "maximum", "minLength"}
    | {"maxLength", "minItems", "maxItems", "additionalProperties", "const", "pattern"}
    | {"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "minProperties"}
    | {"maxProperties", "allOf", "anyOf", "oneOf", "not", "prefixItems", "patternProperties"}
    | {"dependentRequired", "$ref"}
)
CORE = {"type", "required", "properties", "additionalProperties", "maxLength"}
OTHERS = 150
SEED = 0

# The wrong validators, the suite file and differential keyword where each mistake shows.
BOOLEANS = "zoo_validators:integer_accepts_booleans"
BYTES = "zoo_validators:max_length_in_bytes"
ADDITIONAL = "zoo_validators:additional_properties_ignored"
WRONG = {BOOLEANS: "type", BYTES: "maxLength", ADDITIONAL: "additionalProperties"}


def snippet_of(text: str) -> str:
    """The Python after "Reproduce with:" (the end of the text)."""
    _, marker, tail = text.partition("Reproduce with:\n")
    assert marker, text
    return textwrap.dedent(tail)


def replay(text: str) -> dict[str, Any]:
    """Run the snippet of a failure text; its names (validate, schema, instance) are returned."""
    namespace: dict[str, Any] = {}
    exec(snippet_of(text), namespace)
    return namespace


def size(value: Any) -> int:
    return len(json.dumps(value))


# --- loading and verdicts -----------------------------------------------------------------------


def test_load_validator_returns_the_function() -> None:
    assert load_validator(REFERENCE) is validate_input


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("validate_input", "not a validator reference"),
        ("no_such_module_here:f", "no module named 'no_such_module_here'"),
        ("axm_runtime.tool_use:nothing", "has no attribute 'nothing'"),
        ("axm_runtime.tool_use:SUPPORTED_KEYWORDS", "not a function"),
    ],
)
def test_load_validator_errors_name_the_reference(ref: str, message: str) -> None:
    with pytest.raises(LoadError, match=message) as raised:
        load_validator(ref)
    assert ref in str(raised.value) and "\n" not in str(raised.value)


def test_a_claim_is_read_from_an_option() -> None:
    assert load_keywords("all") is None
    assert load_keywords("type, required $ref") == {"type", "required", "$ref"}
    assert load_keywords("axm_runtime.tool_use:SUPPORTED_KEYWORDS") == SUPPORTED_KEYWORDS
    with pytest.raises(LoadError, match="cannot load the keywords"):
        load_keywords("axm_runtime.tool_use:NOTHING")


def test_every_verdict_form_is_read() -> None:
    assert verdict(lambda data, schema: True, 1, {}) is True
    assert verdict(lambda data, schema: ValidationResult(valid=False), 1, {}) is False
    assert verdict(lambda data, schema: [], 1, {}) is True
    assert verdict(lambda data, schema: ["/: wrong"], 1, {}) is False
    assert verdict(lambda data, schema: iter(["wrong"]), 1, {}) is False
    with pytest.raises(TypeError, match="returns a bool"):
        verdict(lambda data, schema: None, 1, {})


def test_a_validator_that_raises_or_answers_nonsense_errors() -> None:
    def raises(data: Any, schema: Any) -> bool:
        raise RuntimeError("boom")

    report = run_suite(raises, ["type"], only=["type"])
    assert {result.status for result in report.results} == {"errored"}
    assert report.results[0].detail == "RuntimeError: boom"
    found = differential(raises, "type", examples=20, seed=SEED, keywords=["type"])
    assert [d.what for d in found.disagreements] == ["raised RuntimeError: boom"]


# --- the suite ----------------------------------------------------------------------------------


def test_the_suite_ships_with_its_licence() -> None:
    folder = resources.files("axm_conformance").joinpath("data", "json-schema-test-suite")
    assert "Julian Berman" in folder.joinpath("LICENSE").read_text(encoding="utf-8")
    assert "44401e0c" in folder.joinpath("SOURCE").read_text(encoding="utf-8")
    names = [entry.name for entry in folder.joinpath("draft2020-12").iterdir()]
    assert len(names) >= 45 and all(name.endswith(".json") for name in names)


def keywords_in(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for keyword, value in schema.items():
            yield keyword
            if keyword in ("enum", "const", "required", "dependentRequired"):
                continue
            children = value.values() if keyword in ("properties", "$defs") else [value]
            for child in children:
                for item in child if isinstance(child, list) else [child]:
                    yield from keywords_in(item)


def test_cases_use_only_claimed_keywords() -> None:
    cases = suite_cases(["type", "minimum"])
    assert {case.keyword for case in cases} >= {"type", "minimum"}
    used = set().union(*(keywords_in(case.schema) for case in cases))
    assert used - {"type", "minimum"} <= NON_CONSTRAINING
    assert not any(case.keyword == "maxLength" for case in cases)


def test_identifiers_and_remote_references_need_claiming() -> None:
    everything = suite_cases()
    local = suite_cases(CLAIM)
    with_ids = suite_cases([*CLAIM, "$id", "$anchor"])
    assert len(local) < len(with_ids) < len(everything)
    assert not any("$id" in json.dumps(case.schema) for case in local)
    assert not any(case.remote for case in local)
    assert any(case.keyword == "refRemote" and case.remote for case in everything)
    assert len(local) >= 738
    # The reference claims every keyword: only remote documents leave cases out.
    assert len(local) < len(suite_cases(SUPPORTED_KEYWORDS)) < len(everything)


def test_the_reference_validator_passes_every_suite_case() -> None:
    report = run_suite(REFERENCE, SUPPORTED_KEYWORDS)
    print(format_table(report))
    assert report.ok, format_failures(report)
    rows = {row.keyword: row for row in report.rows()}
    assert rows["maxLength"].passed == 7 and rows["type"].passed == 80
    assert rows["unevaluatedProperties"].passed > 0
    assert rows["refRemote"].passed == 0 and rows["refRemote"].skipped > 0
    claimed = {row.keyword: row for row in run_suite(REFERENCE, CLAIM).rows()}
    assert claimed["unevaluatedProperties"].passed == 0
    assert claimed["unevaluatedProperties"].skipped > 0


# --- differential: the reference -------------------------------------------------------------


@pytest.mark.parametrize("keyword", differential_keywords(CLAIM))
def test_the_reference_validator_agrees_with_the_oracle(keyword: str) -> None:
    examples = 1000 if keyword in CORE else OTHERS
    report = differential(REFERENCE, keyword, examples, SEED, keywords=CLAIM)
    assert report.ok, "\n\n".join(format_disagreement(d) for d in report.disagreements)
    assert report.judged >= examples * 0.8  # few schemas rejected as unsatisfiable


def test_the_rows_fuzzed_follow_the_claim() -> None:
    assert len(differential_keywords(CLAIM)) == len(CLAIM)
    assert "ref" in differential_keywords(CLAIM)
    assert "if-then-else" not in differential_keywords(CLAIM)
    assert "if-then-else" in differential_keywords(SUPPORTED_KEYWORDS)
    assert differential_keywords(["maxLength"]) == ["maxLength"]
    assert set(differential_keywords()) == FUZZED_KEYWORDS
    with pytest.raises(ValueError, match="no schema generator for keyword 'unevaluatedItems'"):
        schemas_using("unevaluatedItems")


def test_generated_schemas_use_only_claimed_keywords() -> None:
    from hypothesis import given, settings

    claim = ["maxLength", "type", "properties"]

    @settings(max_examples=60, database=None, deadline=None)
    @given(schemas_using("maxLength", claim))
    def check(schema: Any) -> None:
        assert set(keywords_in(schema)) <= set(claim)
        assert "maxLength" in keywords_in(schema)

    check()


# --- the wrong validators -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def wrong_runs() -> dict[str, DifferentialReport]:
    """The differential run of each wrong validator on the keyword of its mistake."""
    return {ref: differential(ref, keyword, 1000, SEED) for ref, keyword in WRONG.items()}


@pytest.fixture(scope="module")
def wrong_reports(wrong_runs: dict[str, DifferentialReport]) -> dict[str, Disagreement]:
    """The one disagreement found on each wrong validator."""
    for ref, report in wrong_runs.items():
        assert len(report.disagreements) == 1, f"{ref}: {report.disagreements}"
    return {ref: report.disagreements[0] for ref, report in wrong_runs.items()}


def test_booleans_as_integers_is_found_as_a_minimal_pair(
    wrong_reports: dict[str, Disagreement],
) -> None:
    found = wrong_reports[BOOLEANS]
    text = format_disagreement(found)
    print(text)
    assert found.what == "accepted an invalid instance"
    assert isinstance(found.instance, bool)
    assert jsonschema_validate(1, found.schema)  # the boolean is the only problem
    assert size(found.schema) <= len('{"type": "integer"}')
    names = replay(text)
    assert verdict(names["validate"], names["instance"], names["schema"]) is True
    assert jsonschema_validate(names["instance"], names["schema"]) is False


def test_max_length_in_bytes_is_found_as_a_minimal_pair(
    wrong_reports: dict[str, Disagreement],
) -> None:
    found = wrong_reports[BYTES]
    text = format_disagreement(found)
    print(text)
    assert found.what == "rejected a valid instance"
    limit, instance = found.schema["maxLength"], found.instance
    assert isinstance(instance, str)
    assert len(instance) <= limit < len(instance.encode("utf-8"))
    assert limit <= 2 and size(found.schema) < 40
    names = replay(text)
    assert verdict(names["validate"], names["instance"], names["schema"]) is False


def without_additional(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: without_additional(v) for k, v in schema.items() if k != "additionalProperties"}
    return schema


def test_ignored_additional_properties_is_found_as_a_minimal_pair(
    wrong_reports: dict[str, Disagreement],
) -> None:
    found = wrong_reports[ADDITIONAL]
    text = format_disagreement(found)
    print(text)
    assert found.what == "accepted an invalid instance"
    assert "additionalProperties" in json.dumps(found.schema)
    assert jsonschema_validate(found.instance, without_additional(found.schema))
    assert size(found.schema) < 100 and size(found.instance) < 30
    names = replay(text)
    assert verdict(names["validate"], names["instance"], names["schema"]) is True


@pytest.mark.parametrize(("ref", "keyword"), WRONG.items(), ids=list(WRONG.values()))
def test_each_wrong_validator_fails_the_suite_where_its_mistake_is(ref: str, keyword: str) -> None:
    report = run_suite(ref)
    failed = {result.case.keyword for result in report.results if result.status == "failed"}
    assert keyword in failed
    text = format_failures(report, keyword)
    names = replay(text)
    first = next(r.case for r in report.for_keyword(keyword) if r.status == "failed")
    assert names["schema"] == first.schema and names["instance"] == first.data
    assert verdict(names["validate"], first.data, first.schema) is not first.valid


@pytest.mark.parametrize("seed", range(1, 11))
@pytest.mark.parametrize(("ref", "keyword"), WRONG.items(), ids=list(WRONG.values()))
def test_each_wrong_validator_is_caught_at_every_seed(ref: str, keyword: str, seed: int) -> None:
    report = differential(ref, keyword, seed=seed)  # the plugin's default of 100 examples
    assert report.disagreements, f"{ref} passed {report.judged} pairs at seed {seed}"


@pytest.mark.parametrize("keyword", sorted(set(WRONG.values())))
def test_the_correct_validator_shows_no_disagreement(keyword: str) -> None:
    assert differential("zoo_validators:correct", keyword, examples=200, seed=SEED).ok


def test_the_table_reads_like_bowtie(wrong_runs: dict[str, DifferentialReport]) -> None:
    table = format_table(run_suite(BOOLEANS), [wrong_runs[BOOLEANS]])
    print(table)
    lines = table.splitlines()
    assert lines[0] == f"validator: {BOOLEANS}"
    assert lines[1].split() == [
        "keyword", "draft", "passed", "failed", "errored", "skipped", "ambiguous", "oracle",
        "fuzzed", "disagreements"
    ]  # fmt: skip
    type_row = next(line.split() for line in lines if line.startswith("type "))
    assert type_row[1] == "2020-12" and type_row[3] != "0"
    assert type_row[6:] == ["0", "0", "1000", "1", "<-"]
    assert lines[-1].startswith("total")


# --- peers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("adapter", "module", "distribution"),
    [
        (jsonschema_rs_validate, "jsonschema_rs", "jsonschema-rs"),
        (fastjsonschema_validate, "fastjsonschema", "fastjsonschema"),
    ],
)
def test_an_absent_peer_is_named(
    adapter: Any, module: str, distribution: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    _adapters._rs_validator.cache_clear()
    _adapters._fast_validator.cache_clear()
    with pytest.raises(ImportError, match=f"pip install {distribution}"):
        adapter(1, {"type": "integer"})


@pytest.mark.parametrize(
    ("ref", "module"),
    [
        ("axm_conformance._validation:jsonschema_rs_validate", "jsonschema_rs"),
        ("axm_conformance._validation:fastjsonschema_validate", "fastjsonschema"),
    ],
)
def test_a_peer_can_be_certified_when_installed(ref: str, module: str) -> None:
    pytest.importorskip(module, reason=f"{module} is not installed (optional peer)")
    claim = ["type", "minLength", "maxLength", "required"]
    report = run_suite(ref, claim)
    print(format_table(report))
    rows = {row.keyword: row for row in report.rows()}
    # only the claimed keywords' own files: fastjsonschema asserts contentEncoding and
    # contentMediaType, which 2020-12 makes annotations (the "content" row)
    assert all(rows[keyword].ok and rows[keyword].passed for keyword in claim)
    assert differential(ref, "maxLength", examples=100, seed=SEED, keywords=claim).ok
