"""The validators' oracle, their drafts and their isolation.

The oracle must never accuse a correct validator: each case where jsonschema strays from the
specification is a regression test here, with jsonschema-rs (correct on it) passing and a validator
that strays as jsonschema does caught, or let off as ``ambiguous`` where the specification leaves
room. Each draft's suite and schemas are the draft's own, and a validator that hangs costs one pair.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from axm_conformance._settings import Settings
from axm_conformance._validation import (
    DRAFTS,
    Disagreement,
    IsolatedValidator,
    Oracle,
    differential,
    differential_keywords,
    format_disagreement,
    jsonschema_rs_validate,
    jsonschema_validate,
    judge_pair,
    run_suite,
    schemas_using,
    suite_cases,
)
from axm_conformance._validation._load import Crashed

pytest.importorskip("jsonschema_rs", reason="jsonschema-rs is the validator the oracle agrees with")

# The two pairs on which jsonschema-rs was accused of jsonschema's deviations.
DOLLAR = ({"additionalProperties": False, "patternProperties": {"^[0-9]+$": True}}, {"0\n": None})
QUARTERS = ({"multipleOf": 0.25, "type": "number"}, 562949953421312.2)


def disagreement(validator: Any, pair: tuple[Any, Any], draft: str = "2020-12") -> Disagreement:
    found = judge_pair(validator, *pair, draft=draft)
    assert found is not None, f"{validator} gave the oracle's verdict on {pair}"
    print(format_disagreement(found))
    return found


# --- the two oracle cases -----------------------------------------------------------------------


def test_dollar_does_not_match_before_a_final_newline() -> None:
    schema, instance = DOLLAR
    assert Oracle().verdict(json.dumps(instance), json.dumps(schema)) is False
    assert judge_pair(jsonschema_rs_validate, schema, instance) is None
    # jsonschema's own verdict (Python's re) is a failure: ECMA-262 leaves no room here
    found = disagreement(jsonschema_validate, DOLLAR)
    assert (found.status, found.what, found.third) == (
        "failed",
        "accepted an invalid instance",
        False,
    )


def test_a_number_is_judged_as_its_json_text() -> None:
    schema, instance = QUARTERS
    assert json.dumps(instance) == "562949953421312.2"  # not a multiple of 0.25...
    assert (instance / 0.25).is_integer()  # ...although its nearest double is
    assert Oracle().verdict(json.dumps(instance), json.dumps(schema)) is False
    assert judge_pair(jsonschema_rs_validate, schema, instance) is None
    # computing on the double is what the specification leaves to the implementation
    found = disagreement(jsonschema_validate, QUARTERS)
    assert found.status == "ambiguous" and "nearest doubles" in found.reason
    assert "ambiguous, not a failure" in format_disagreement(found)


def test_a_number_exactly_a_double_leaves_no_room() -> None:
    def on_floats(data: Any, schema: Any) -> bool:
        return isinstance(data, float) and data % schema["multipleOf"] == 0

    # 0.75 is exactly a double: a validator that gets it wrong is not let off
    assert judge_pair(on_floats, {"multipleOf": 0.25}, 0.75) is None
    found = disagreement(on_floats, ({"multipleOf": 0.25}, 1))
    assert found.status == "failed"


def test_format_asserted_is_ambiguous() -> None:
    def asserts_format(data: Any, schema: Any) -> bool:
        return Draft202012Validator(schema, format_checker=FormatChecker()).is_valid(data)

    found = disagreement(asserts_format, ({"format": "ipv4"}, "not an address"))
    assert found.status == "ambiguous" and "format asserted" in found.reason
    # format regex is ECMA-262: a lookbehind-free Python-only construct is no regex there
    assert Oracle().room('"(?P<name>a)"', '{"format": "regex"}', False)


def test_where_the_oracle_alone_disagrees_the_validator_is_not_blamed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def rust(data: Any, schema: Any) -> bool:
        return jsonschema_rs_validate(data, schema)

    monkeypatch.setattr(Oracle, "verdict", lambda self, instance, schema: False)
    monkeypatch.setattr(Oracle, "room", lambda self, instance, schema, answer: "")
    found = disagreement(rust, ({"type": "integer"}, 1))
    assert (found.status, found.third) == ("oracle", True)
    assert "the oracle's deviation, not the validator's" in format_disagreement(found)


@pytest.mark.parametrize("keyword", ["pattern", "patternProperties", "multipleOf"])
def test_jsonschema_rs_is_not_accused_where_jsonschema_strays(keyword: str) -> None:
    report = differential(jsonschema_rs_validate, keyword, examples=300, seed=0)
    assert report.ok, "\n\n".join(map(format_disagreement, report.disagreements))
    assert report.passed > 0


# --- drafts -------------------------------------------------------------------------------------


@pytest.mark.parametrize("draft", DRAFTS)
def test_each_draft_ships_its_suite_and_remotes(draft: str) -> None:
    folder = resources.files("axm_conformance").joinpath("data", "json-schema-test-suite")
    assert folder.joinpath(f"draft{draft}", "type.json").is_file()
    assert folder.joinpath("remotes", "integer.json").is_file()
    assert suite_cases(["type"], draft)


def test_each_draft_has_its_own_keywords() -> None:
    assert {case.keyword for case in suite_cases(draft="7")} >= {"dependencies", "additionalItems"}
    assert "dependencies" not in {case.keyword for case in suite_cases()}
    assert "const" not in differential_keywords(draft="4")
    assert "exclusiveMinimum" not in differential_keywords(draft="4")
    assert "if-then-else" in differential_keywords(draft="7")
    assert "prefixItems" not in differential_keywords(draft="2019-09")


def test_draft_4_knows_no_integer_with_a_fraction_part() -> None:
    assert Oracle("4").verdict("1.0", '{"type": "integer"}') is False
    assert Oracle("6").verdict("1.0", '{"type": "integer"}') is True


def test_a_draft_4_schema_uses_only_draft_4() -> None:
    from hypothesis import given, settings

    @settings(max_examples=80, database=None, deadline=None)
    @given(schemas_using("ref", draft="4"))
    def check(schema: Any) -> None:
        text = json.dumps(schema)
        assert "$defs" not in text and "const" not in text
        assert "true" not in text and "false" not in text  # no boolean schemas in draft 4

    check()


def test_a_draft_before_2020_12_is_declared_to_the_validator() -> None:
    seen: list[Any] = []

    def spy(data: Any, schema: Any) -> bool:
        seen.append(schema)
        return jsonschema_validate(data, schema)

    report = run_suite(spy, ["type"], only=["type"], draft="7")
    assert report.ok and report.rows()[0].draft == "7"
    assert {s["$schema"] for s in seen if isinstance(s, dict)} == {
        "http://json-schema.org/draft-07/schema#"
    }


# --- isolation ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_validator_that_hangs_on_one_schema_errors_there_and_the_run_goes_on() -> None:
    settings = Settings(timeout=1.0, sys_path=tuple(sys.path))  # the fixtures' folder with it
    hanging = IsolatedValidator("zoo_validators:hangs_on_contains", settings)
    try:
        with pytest.raises(Crashed, match="timeout"):
            hanging.judge([1], {"contains": {"type": "integer"}})
        assert hanging.judge(1, {"type": "integer"}) is True  # a fresh worker
        report = differential(hanging, "contains", examples=30, seed=0, keywords=["contains"])
        (found,) = report.disagreements
        assert found.status == "errored" and "contains" in json.dumps(found.schema)
        assert "crashed timeout" in format_disagreement(found)
        assert differential(hanging, "type", examples=30, seed=0).ok
    finally:
        hanging.close()
