"""The official JSON-Schema-Test-Suite (draft 2020-12) against the tool_use validator.

Cases are selected from the suite files, not by hand: a test group runs when every keyword its
schema uses is one the validator enforces (``SUPPORTED_KEYWORDS``) or one that never constrains
(annotations and ``$defs`` containers). The only groups left out are those that need something the
validator does not claim: another keyword, or a ``$ref`` that leaves the schema document.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from axm_runtime.tool_use import SUPPORTED_KEYWORDS, validate_input
from tests.conftest import SUITE

DRAFT_DIR = SUITE / "draft2020-12"

# Keywords whose value is one subschema, an array of subschemas, or a map of name -> subschema:
# the walk descends through them, so that property names are never taken for keywords.
SUBSCHEMA = {
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
}
SUBSCHEMA_ARRAY = {"allOf", "anyOf", "oneOf", "prefixItems"}
SUBSCHEMA_MAP = {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}

# Keywords that never make an instance invalid in 2020-12: the meta-data, format-annotation and
# content vocabularies are annotations, and $defs/definitions only hold schemas for $ref.
NON_CONSTRAINING = {
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$defs",
    "definitions",
}
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

SEED_KEYWORDS = [
    "type",
    "required",
    "properties",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "additionalProperties",
]


def unsupported(schema: Any) -> Iterator[str]:
    """Yield what ``schema`` needs beyond the validator: keywords, remote refs, meta-schemas."""
    if not isinstance(schema, dict):
        return  # boolean schemas
    for keyword, value in schema.items():
        if keyword not in SUPPORTED_KEYWORDS | NON_CONSTRAINING:
            # $id, $anchor and $dynamic* change how $ref resolves, so they are unsupported too.
            yield keyword
        elif keyword == "$ref" and not value.startswith("#"):
            yield "$ref outside the document"
        elif keyword == "$schema" and value != DRAFT_2020_12:
            yield "custom $schema"
        if keyword in SUBSCHEMA:
            subschemas = value if isinstance(value, list) else [value]
        elif keyword in SUBSCHEMA_ARRAY:
            subschemas = value
        elif keyword in SUBSCHEMA_MAP:
            subschemas = list(value.values())
        else:
            continue  # a value such as enum's or const's is data, not schema
        for subschema in subschemas:
            yield from unsupported(subschema)


class Case(NamedTuple):
    file: str
    group: str
    description: str
    schema: Any
    data: Any
    valid: bool


def load() -> tuple[list[Case], dict[str, set[str]]]:
    """Return the selected cases and, for each group left out, what it needs."""
    cases: list[Case] = []
    excluded: dict[str, set[str]] = {}
    for path in sorted(DRAFT_DIR.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            needs = set(unsupported(group["schema"]))
            if needs:
                excluded[f"{path.stem}: {group['description']}"] = needs
                continue
            cases.extend(
                Case(
                    path.stem,
                    group["description"],
                    test["description"],
                    group["schema"],
                    test["data"],
                    test["valid"],
                )
                for test in group["tests"]
            )
    return cases, excluded


CASES, EXCLUDED = load()
# 820 cases are selected from the suite as stored; the floor (90%) catches a selection that
# silently shrinks.
MINIMUM_SELECTED = 738


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.file}: {c.group}: {c.description}" for c in CASES]
)
def test_suite_case(case: Case) -> None:
    result = validate_input(case.data, case.schema)
    assert result.valid is case.valid, (
        f"expected {'valid' if case.valid else 'invalid'}; errors: {result.errors}\n"
        f"schema: {json.dumps(case.schema)}\ndata: {json.dumps(case.data)}"
    )
    assert bool(result.errors) is not case.valid


def test_every_seed_keyword_is_covered() -> None:
    per_file = Counter(case.file for case in CASES)
    for name, count in sorted(per_file.items()):
        print(f"{name}: {count} cases")
    print(f"total: {len(CASES)} cases selected")
    for group, needs in sorted(EXCLUDED.items()):
        print(f"left out {group!r}: needs {', '.join(sorted(needs))}")
    assert {keyword: per_file[keyword] for keyword in SEED_KEYWORDS if not per_file[keyword]} == {}
    assert len(CASES) >= MINIMUM_SELECTED
