"""The client profiles: every rule caught on its defective fixture and passed on its corrected
twin (``fixtures/client_rules.py``), and the verdicts held to the vendors' and frameworks' own
code where it encodes a rule: the OpenAI Agents SDK's strict-schema conversion and Pydantic AI's
per-provider schema transformers and limits."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from axm_conformance._checks import CHECKS, CheckContext
from axm_conformance._clients import (
    PROFILES,
    Rule,
    _gemini,
    _profiles,
    breaches,
    portability,
    portability_table,
)
from axm_conformance._clients._walk import place, pointer
from axm_conformance._outcomes import Severity
from axm_conformance._settings import Settings, SettingsError
from client_rules import CASES, OBJECT
from tests.unit.factories import subject

# Every rule of every profile's module.
RULES = {
    value.id: value
    for module in (_profiles, _gemini)
    for value in vars(module).values()
    if isinstance(value, Rule)
}
SCHEMAS = [schema for _, _, schema, _ in CASES]


def found(name: str, schema: Any) -> set[str]:
    return {b.rule.id for profile in PROFILES.values() for b in breaches(profile, name, schema)}


@pytest.mark.parametrize(("rule", "name", "schema", "broken"), CASES, ids=lambda v: str(v)[:30])
def test_each_rule_catches_its_defective_fixture_and_passes_its_twin(
    rule: str, name: str, schema: Any, broken: bool
) -> None:
    assert (rule in found(name, schema)) is broken


def test_every_rule_has_a_defective_fixture_and_a_correct_one_and_a_source() -> None:
    for rule in RULES.values():
        verdicts = {broken for id_, _, _, broken in CASES if id_ == rule.id}
        assert verdicts == {True, False}, rule.id
        assert rule.source and rule.fix and rule.requires, rule.id


def test_a_breach_names_the_rule_the_place_and_the_fix() -> None:
    schema = {**OBJECT, "properties": {"when": {"anyOf": [{"type": "string"}], "default": "x"}}}
    (breach,) = [
        b
        for b in breaches(PROFILES["openai-strict"], "f", schema)
        if b.rule.id == "openai-strict-keywords"
    ]
    assert str(breach) == (
        "$.properties.when.default: uses default (rule openai-strict-keywords: "
        f"{breach.rule.requires}); drop the keyword, or say it in the description"
    )


@given(
    st.lists(
        st.one_of(st.integers(min_value=0, max_value=99), st.text(max_size=8)),
        max_size=6,
    )
)
def test_a_place_is_the_json_pointer_of_the_same_steps(steps: list[int | str]) -> None:
    escaped = [str(step).replace("~", "~0").replace("/", "~1") for step in steps]
    assert pointer(place("$", *steps)) == "".join(f"/{token}" for token in escaped)


def test_a_client_finding_is_typed_by_its_rule_place_and_profile() -> None:
    """A baseline can know one breach: the rule is the finding's kind, its place a pointer."""
    schema = {**OBJECT, "properties": {"a/b": {"type": "string", "not": {"const": "x"}}}}
    tool = subject(name="f", input_schema=schema)
    findings = CHECKS["portable-to-openai"].findings(tool, None, CheckContext(settings=Settings()))
    (strict,) = [found for found in findings if found.kind == "openai-strict-keywords"]
    assert (strict.at, dict(strict.data)) == (
        "/properties/a~1b/not",
        {"profile": "openai-strict"},
    )


def test_the_table_gives_the_first_rule_each_profile_breaks_a_strict_mode_after_its_plain() -> None:
    table = portability("get.weather", {"type": "object"})
    assert table["openai"] is not None and table["openai"].rule.id == "openai-name"
    # The strict mode breaks what its plain mode breaks first.
    assert table["openai-strict"] is table["openai"]
    assert table["gemini"] is None and table["mcp"] is None
    lines = portability_table([["get.weather", *("ok" for _ in PROFILES)]])
    assert lines[1].split() == ["tool", *PROFILES]
    assert lines[2].split() == ["get.weather", *("ok" for _ in PROFILES)]


# What Pydantic AI's OpenAI transformer does not check, and so may pass where a rule does: it
# fills a missing additionalProperties in, does not look at the composition keywords OpenAI's
# page lists as unsupported nor at a oneOf below the root (which the Agents SDK rewrites), lets an
# external $ref and one with siblings through (the Agents SDK refuses both), and counts neither
# enum values nor characters.
_ORACLE_SILENT = {
    "openai-strict-closed-objects": ("absent",),
    "openai-strict-keywords": ("allOf", "not", "dependent", "if", "then", "else", "oneOf"),
    "openai-strict-refs": ("'http", "beside"),
    "openai-strict-size": ("enum values", "characters"),
}


def _silent_to_the_oracle(breach: Any) -> bool:
    return any(word in breach.what for word in _ORACLE_SILENT.get(breach.rule.id, ()))


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_openai_strict_agrees_with_pydantic_ai(schema: Any) -> None:
    """Pydantic AI's transformer for OpenAI's strict mode (the one its OpenAI provider picks)
    calls a schema strict-compatible exactly where the profile finds nothing, except for what
    the transformer does not look at."""
    from pydantic_ai.profiles.openai import _OpenAIJsonSchemaTransformer

    if not isinstance(schema, dict) or schema.get("type") != "object" or "anyOf" in schema:
        pytest.skip("Pydantic AI checks the root apart (check_object_json_schema)")
    transformer = _OpenAIJsonSchemaTransformer(copy.deepcopy(schema), strict=None)
    transformer.walk()
    ours = list(breaches(PROFILES["openai-strict"], "f", schema))
    if transformer.is_strict_compatible:
        assert all(_silent_to_the_oracle(breach) for breach in ours), [str(b) for b in ours]
    else:
        assert ours, "the oracle finds the schema strict-incompatible; the profile does not"


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_openai_strict_agrees_with_the_agents_sdk(schema: Any) -> None:
    """The Agents SDK refuses what strict mode cannot take (an open object, a root anyOf, a
    $ref with siblings), and leaves a schema the profile passes as it is (but for the $refs it
    inlines)."""
    from agents.exceptions import UserError
    from agents.strict_schema import ensure_strict_json_schema

    ours = [b.rule.id for b in breaches(PROFILES["openai-strict"], "f", schema)]
    try:
        converted = ensure_strict_json_schema(copy.deepcopy(schema))
    except (UserError, ValueError):
        assert ours, "the Agents SDK refuses the schema; the profile passes it"
        return
    if not ours and "$ref" not in json.dumps(schema):
        assert converted == schema


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_gemini_parameters_agrees_with_pydantic_ai(schema: Any) -> None:
    """Pydantic AI's transformer to Gemini's OpenAPI schema leaves a schema the profile passes
    as it is, and one it must rewrite or refuses breaks the profile."""
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.profiles.google import GoogleOpenAPISchemaTransformer

    ours = list(breaches(PROFILES["gemini-parameters"], "f", schema))
    try:
        converted = GoogleOpenAPISchemaTransformer(copy.deepcopy(schema), strict=None).walk()
    except UserError:
        assert ours
        return
    if not ours:
        assert converted == schema
    elif converted == schema:
        # What the transformer leaves to Gemini's own refusal: composition keywords, a list of
        # types, an array without items.
        silent = ("uses allOf", "uses not", "uses oneOf", "the types", "without items")
        assert all(any(word in b.what for word in silent) for b in ours)


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_anthropic_strict_limits_agree_with_pydantic_ai(schema: Any) -> None:
    """Pydantic AI's count of Anthropic's strict-tool limits (and its refusal of a recursive
    schema), for one tool alone."""
    from pydantic_ai.models._anthropic_schema_limits import exceeded_limit

    if not isinstance(schema, dict):
        pytest.skip("not an object schema")
    ours = [
        b
        for b in breaches(PROFILES["anthropic-strict"], "f", schema)
        if b.rule.id == "anthropic-strict-limits" or "recursive" in b.what
    ]
    assert bool(ours) is (exceeded_limit([schema], None) is not None)


def test_a_client_check_warns_notes_a_strict_mode_and_fails_what_the_run_names() -> None:
    tool = subject(name="get.weather", input_schema={**OBJECT, "required": []})
    check = CHECKS["portable-to-openai"]
    plain = check.findings(tool, None, CheckContext(settings=Settings()))
    assert [f.severity for f in plain] == [Severity.WARNING, Severity.NOTE]
    assert "without strict: true" in plain[1].text
    named = check.findings(tool, None, CheckContext(settings=Settings(clients=("openai-strict",))))
    assert [f.severity for f in named] == [Severity.WARNING, Severity.FAILURE]


def test_an_unknown_client_is_a_settings_error_naming_the_known() -> None:
    with pytest.raises(
        SettingsError, match="unknown client 'openia'; known: openai, openai-strict"
    ):
        Settings(clients=("openia",))


def test_the_rules_table_of_the_contract_is_the_code() -> None:
    """conformance/clients.md gives every rule, what it requires and its source, as the code
    has them."""
    from tests.conftest import REPO

    page = (REPO / "conformance" / "clients.md").read_text(encoding="utf-8")
    section = page.split("## Rules and their sources")[1].split("\n## ")[0]
    rows = {
        cells[0].strip(" `"): (cells[1].strip(), cells[2].strip())
        for line in section.splitlines()
        if line.startswith("| `") and len(cells := line.strip("|").split(" | ")) == 3
    }
    assert rows == {rule.id: (rule.requires, rule.source) for rule in RULES.values()}
